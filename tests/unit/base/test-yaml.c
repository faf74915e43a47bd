/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML to JSON values: go-yaml v2 scalar resolution, quoting, keys, multi-document streams,
 * aliases and their budget, JSON input, nesting without recursion, and each error with its position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/yaml.h"
#include "plugintest.h"

static adm_arena_t *arena;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

/* Parses text and returns its documents as one JSON array text. */
static const char *as_json(const char *text, int *rc, char *err, size_t err_len)
{
    yyjson_val **docs;
    size_t n;
    yyjson_mut_doc *out;
    yyjson_mut_val *arr;
    yyjson_alc alc;

    adm_arena_reset(arena);
    *rc = adm_yaml_parse(arena, text, strlen(text), &docs, &n, err, err_len);
    if (*rc != 0) {
        return NULL;
    }
    adm_json_alc_init(&alc, arena);
    out = yyjson_mut_doc_new(&alc);
    arr = yyjson_mut_arr(out);
    for (size_t i = 0; i < n; i++) {
        yyjson_mut_arr_append(arr, yyjson_val_mut_copy(out, docs[i]));
    }
    yyjson_mut_doc_set_root(out, arr);
    return yyjson_mut_write_opts(out, YYJSON_WRITE_INF_AND_NAN_AS_NULL, &alc, NULL, NULL);
}

static void expect(const char *yaml, const char *json)
{
    char err[256] = "";
    int rc;
    const char *got = as_json(yaml, &rc, err, sizeof(err));

    if (rc != 0) {
        fail_msg("YAML did not parse: %s\n%s", err, yaml);
    }
    assert_json_equal(got, json);
}

static void expect_error(const char *yaml, const char *message)
{
    char err[256] = "";
    int rc;

    as_json(yaml, &rc, err, sizeof(err));
    assert_int_equal(rc, ADM_EPARSE);
    if (strstr(err, message) == NULL) {
        fail_msg("error %s does not contain %s", err, message);
    }
}

static void test_scalars(void **state)
{
    expect("a: 1\nb: -2\nc: 0x1f\nd: 0o17\ne: 017\nf: 1_000\ng: 0b101\n",
           "[{\"a\":1,\"b\":-2,\"c\":31,\"d\":15,\"e\":15,\"f\":1000,\"g\":5}]");
    expect("a: 1.5\nb: -2e3\nc: .5\nd: 1.\n", "[{\"a\":1.5,\"b\":-2000.0,\"c\":0.5,\"d\":1.0}]");
    expect("a: true\nb: False\nc: yes\nd: off\ne: On\nf: N\n",
           "[{\"a\":true,\"b\":false,\"c\":true,\"d\":false,\"e\":true,\"f\":false}]");
    expect("a: ~\nb: null\nc:\nd: NULL\n", "[{\"a\":null,\"b\":null,\"c\":null,\"d\":null}]");
    expect("a: \"1\"\nb: 'true'\nc: !!str 5\nd: |\n  x\n  y\ne: >-\n  p\n  q\n",
           "[{\"a\":\"1\",\"b\":\"true\",\"c\":\"5\",\"d\":\"x\\ny\\n\",\"e\":\"p q\"}]");
    expect("a: 1.2.3\nb: 12abc\nc: +\nd: 0x\ne: -x\n",
           "[{\"a\":\"1.2.3\",\"b\":\"12abc\",\"c\":\"+\",\"d\":\"0x\",\"e\":\"-x\"}]");
    expect("a: 18446744073709551615\nb: 99999999999999999999\n", "[{\"a\":18446744073709551615,\"b\":1e20}]");
    expect("a: .inf\nb: -.Inf\nc: .nan\n", "[{\"a\":null,\"b\":null,\"c\":null}]");
}

static void test_keys_and_structure(void **state)
{
    expect("1: a\ntrue: b\nnull: c\n", "[{\"1\":\"a\",\"true\":\"b\",\"null\":\"c\"}]");
    expect("list:\n- a\n- {x: 1}\n- [1, 2]\nempty: []\nobj: {}\n",
           "[{\"list\":[\"a\",{\"x\":1},[1,2]],\"empty\":[],\"obj\":{}}]");
    expect("- 1\n- 2\n", "[[1,2]]");
    expect("plain string\n", "[\"plain string\"]");
    expect_error("? [a, b]\n: c\n", "mapping key must be a scalar");
    expect_error("<<: {a: 1}\n", "merge keys");
}

static void test_documents(void **state)
{
    expect("a: 1\n---\nb: 2\n", "[{\"a\":1},{\"b\":2}]");
    expect("---\n# only a comment\n---\na: 1\n---\n", "[{\"a\":1}]");
    expect("", "[]");
    expect("# nothing\n", "[]");
    expect("  {\"a\": [1, {\"b\": null}]}", "[{\"a\":[1,{\"b\":null}]}]");
    expect_error("{\"a\": }", "not valid JSON");
}

static void test_aliases(void **state)
{
    char *bomb;
    size_t off = 0;

    expect("base: &b {x: 1, y: [1, 2]}\ncopy: *b\nname: &n hello\nother: *n\n*n : k\n",
           "[{\"base\":{\"x\":1,\"y\":[1,2]},\"copy\":{\"x\":1,\"y\":[1,2]},\"name\":\"hello\",\"other\":"
           "\"hello\","
           "\"hello\":\"k\"}]");
    expect_error("a: *missing\n", "alias names no anchor");
    /* A "billion laughs": each level doubles ten times over; refused, not expanded. */
    bomb = malloc(4096);
    assert_non_null(bomb);
    off += (size_t)snprintf(bomb + off, 4096 - off, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 9; i++) {
        off += (size_t)snprintf(bomb + off, 4096 - off,
                                "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i,
                                i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    }
    expect_error(bomb, "1000000 nodes");
    free(bomb);
}

static void test_errors_and_depth(void **state)
{
    size_t depth = 20000;
    char *deep = malloc(depth * 2 + 8);
    size_t n = 0;

    expect_error("a: [1, 2\n", "line 2 column 1");
    expect_error("a: b: c\n", "line 1 column");
    expect_error("a:\n\t- x\n", "line 2");
    assert_non_null(deep);
    for (size_t i = 0; i < depth; i++) {
        deep[n++] = '[';
    }
    for (size_t i = 0; i < depth; i++) {
        deep[n++] = ']';
    }
    deep[n] = '\0';
    expect_error(deep, "10000 levels"); /* JSON path */
    deep[0] = ' ';
    memcpy(deep, "x: ", 3); /* YAML flow sequences, parsed by libyaml events */
    expect_error(deep, "10000 levels");
    free(deep);
}

/* An alias copies its anchor where it stands: the copy's depth adds to where it is placed. */
static void test_alias_depth(void **state)
{
    size_t cap = 64 * 1024;
    char *yaml = malloc(cap);
    size_t n = 0;

    assert_non_null(yaml);
    for (int placed = 4000; placed <= 4001; placed++) {
        n = (size_t)snprintf(yaml, cap, "a: &x ");
        /* the anchor nests 6,000 levels below a; the alias lands inside `placed` levels under b */
        for (int i = 0; i < 6000; i++) {
            yaml[n++] = '[';
        }
        for (int i = 0; i < 6000; i++) {
            yaml[n++] = ']';
        }
        n += (size_t)snprintf(yaml + n, cap - n, "\nb: ");
        for (int i = 0; i < placed - 1; i++) {
            yaml[n++] = '[';
        }
        n += (size_t)snprintf(yaml + n, cap - n, "*x");
        for (int i = 0; i < placed - 1; i++) {
            yaml[n++] = ']';
        }
        yaml[n++] = '\n';
        yaml[n] = '\0';
        /* 1 (the document) + 4,000 - 1 + 6,000 = 10,000 levels fit; one more does not */
        if (placed == 4000) {
            char err[256] = "";
            int rc;

            as_json(yaml, &rc, err, sizeof(err));
            assert_int_equal(rc, 0);
        } else {
            expect_error(yaml, "nested deeper than 10000 levels (through an alias)");
        }
    }
    free(yaml);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),          cmocka_unit_test(test_keys_and_structure),
        cmocka_unit_test(test_documents),        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_errors_and_depth), cmocka_unit_test(test_alias_depth),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

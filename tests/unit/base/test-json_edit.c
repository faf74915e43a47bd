/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adm_json_splice and adm_json_lineage_compose. Every case is differential: the same edits made
 * with yyjson's mutable API on adm_json_mut_share's copy and laid out by adm_json_view must give
 * the same flat array (tags, lengths, sizes, numbers, strings by content) and the same text as the
 * splice; and the splice's lineage must be valid (each run a byte copy of the request's object).
 * Cases: each op at the root and deep, on objects and arrays, empty containers, duplicate keys,
 * several edits in one batch on one target and on nested ones, strings not NUL-terminated, the
 * errors, chained splices (lineage composed), every container of the fixtures' objects, and the
 * realistic pod's five changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../support/json_edit_check.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/json_edit.h"

typedef struct fixture_s {
    adm_arena_t *a;
    yyjson_alc alc;
    yyjson_mut_doc *values; /* the edits' new values */
} fixture_t;

static fixture_t *fx_new(void)
{
    fixture_t *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->a = adm_arena_create(4096);
    assert_non_null(f->a);
    adm_json_alc_init(&f->alc, f->a);
    f->values = yyjson_mut_doc_new(&f->alc);
    assert_non_null(f->values);
    return f;
}

static void fx_free(fixture_t *f)
{
    adm_arena_destroy(f->a);
    free(f);
}

static yyjson_val *parse(fixture_t *f, const char *text)
{
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(f->a, text, strlen(text), &err);

    assert_non_null(doc);
    return yyjson_doc_get_root(doc);
}

/* A new value from its JSON text, in the values' document. */
static yyjson_mut_val *val(fixture_t *f, const char *text)
{
    yyjson_mut_val *v = yyjson_val_mut_copy(f->values, parse(f, text));

    assert_non_null(v);
    return v;
}

/* The value of root's layout at a JSON pointer (the first member of a repeated key). */
static yyjson_val *at(yyjson_val *root, const char *ptr)
{
    yyjson_val *v = yyjson_ptr_get(root, ptr);

    assert_non_null(v);
    return v;
}

static adm_edit_t edit(adm_edit_op_t op, yyjson_val *target, const char *key, yyjson_mut_val *value)
{
    adm_edit_t e = {op, target, key, key != NULL ? strlen(key) : 0, value};

    return e;
}

/*
 * Splices root (whose lineage in is, NULL: root is the origin) with e[0..n), checks it against
 * the mutable API's result, and checks the lineage against origin. Returns the splice's root.
 */
static yyjson_val *check(fixture_t *f, yyjson_val *root, const adm_json_lineage_t *in, yyjson_val *origin,
                         const adm_edit_t *e, size_t n, adm_json_lineage_t *lin)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(&f->alc);
    yyjson_mut_val *m;
    yyjson_val *out = NULL, *view;
    const char *why;

    assert_non_null(doc);
    assert_int_equal(adm_json_splice(&f->alc, root, in, e, n, &out, lin), 0);
    assert_non_null(out);
    m = adm_json_mut_share(doc, root);
    assert_non_null(m);
    assert_true(edit_check_apply(doc, m, root, e, n));
    view = adm_json_view(&f->alc, m);
    assert_non_null(view);
    why = edit_check_same(out, view);
    if (why != NULL) {
        print_error("splice: %s\nmutable: %s\n", yyjson_val_write(out, 0, NULL),
                    yyjson_mut_val_write(m, 0, NULL));
        fail_msg("splice and mutable API differ: %s", why);
    }
    why = edit_check_text(out, m);
    if (why != NULL) {
        fail_msg("%s", why);
    }
    why = edit_check_lineage(lin, out, origin);
    if (why != NULL) {
        fail_msg("lineage: %s", why);
    }
    return out;
}

static yyjson_val *check1(fixture_t *f, yyjson_val *root, const adm_edit_t *e, size_t n)
{
    adm_json_lineage_t lin;

    return check(f, root, NULL, root, e, n, &lin);
}

/* True when l maps value b of the layout whose root is root onto a, a value of l->origin. */
static bool maps(const adm_json_lineage_t *l, const yyjson_val *root, const yyjson_val *b,
                 const yyjson_val *a)
{
    size_t ib = (size_t)(b - root), ia = (size_t)(a - l->origin);

    for (size_t i = 0; i < l->nruns; i++) {
        if (ib >= l->runs[i].to && ib < (size_t)l->runs[i].to + l->runs[i].n) {
            return ia == l->runs[i].from + (ib - l->runs[i].to);
        }
    }
    return false;
}

/* The number of values lineage l says nothing of: what the splice did not copy in a run. */
static size_t uncovered(const adm_json_lineage_t *l, const yyjson_val *root)
{
    size_t n = edit_check_size(root);

    for (size_t i = 0; i < l->nruns; i++) {
        n -= l->runs[i].n;
    }
    return n;
}

static const char *const flat =
    "{\"a\":1,\"b\":[1,2,{\"c\":\"d\"}],\"e\":{\"f\":true,\"g\":null},\"h\":\"i\"}";

static void test_each_op_at_the_root(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, flat), *out;
    adm_edit_t e;
    adm_json_lineage_t lin;

    (void)state;
    e = edit(ADM_EDIT_ADD, r, "z", val(f, "{\"y\":[1,2.5,-3]}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_ADD, r, "b", val(f, "\"moved to the end\""));
    out = check1(f, r, &e, 1);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(out, "b")), "moved to the end");
    assert_string_equal(yyjson_get_str(out + 11), "b"); /* the last member now */
    assert_string_equal(yyjson_get_str(out + 12), "moved to the end");
    e = edit(ADM_EDIT_SET, r, "b", val(f, "[true]"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_SET, r, "new", val(f, "null"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REMOVE, r, "e", NULL);
    out = check(f, r, NULL, r, &e, 1, &lin);
    assert_null(yyjson_obj_get(out, "e"));
    assert_int_equal(yyjson_obj_size(out), 3);
    e = edit(ADM_EDIT_REMOVE, r, "absent", NULL);
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/e"), NULL, val(f, "{\"deep\":[1,{\"x\":[]}]}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/a"), NULL, val(f, "[]"));
    check1(f, r, &e, 1);

    /* the root an array */
    r = parse(f, "[1,{\"k\":\"v\"},[2,3],\"s\"]");
    e = edit(ADM_EDIT_APPEND, r, NULL, val(f, "{\"k\":\"w\"}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/3"), NULL, val(f, "{}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/0"), NULL, val(f, "[[[]]]"));
    check1(f, r, &e, 1);

    /* no edits: one run, the whole layout */
    out = check(f, r, NULL, r, NULL, 0, &lin);
    assert_int_equal(lin.nruns, 1);
    assert_int_equal(uncovered(&lin, out), 0);
    fx_free(f);
}

static const char *const deep =
    "{\"m\":{\"n\":{\"o\":[1,2,{\"p\":3,\"q\":[4]}],\"r\":\"s\"},\"t\":[{},{\"u\":1}]},"
    "\"v\":{\"w\":[\"x\",\"y\"]},\"z\":0}";

static void test_each_op_deep(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, deep), *out;
    adm_edit_t e;
    adm_json_lineage_t lin;

    (void)state;
    e = edit(ADM_EDIT_ADD, at(r, "/m/n"), "added", val(f, "{\"a\":[1]}"));
    out = check(f, r, NULL, r, &e, 1, &lin);
    /* walked: the root, m and n (their own values); new: the added member's five */
    assert_int_equal(uncovered(&lin, out), 3 + 5);
    e = edit(ADM_EDIT_ADD, at(r, "/m/n"), "r", val(f, "1"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_SET, at(r, "/m/n/o/2"), "p", val(f, "[\"four\"]"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_SET, at(r, "/m/n/o/2"), "new", val(f, "[]"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_APPEND, at(r, "/m/n/o"), NULL, val(f, "5"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_APPEND, at(r, "/m/n/o/2/q"), NULL, val(f, "{\"five\":5}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o/1"), NULL, val(f, "{\"two\":2}"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o/2/q/0"), NULL, val(f, "-4"));
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REMOVE, at(r, "/m/n"), "o", NULL);
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REMOVE, at(r, "/v"), "w", NULL);
    check1(f, r, &e, 1);
    e = edit(ADM_EDIT_REPLACE, at(r, "/v/w/1"), NULL, val(f, "\"last\""));
    check1(f, r, &e, 1);
    fx_free(f);
}

static void test_empty_containers(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, "{\"e\":{},\"a\":[],\"n\":{\"e\":{},\"a\":[]}}");
    adm_edit_t e[4];

    (void)state;
    e[0] = edit(ADM_EDIT_ADD, at(r, "/e"), "k", val(f, "{}"));
    check1(f, r, e, 1);
    e[0] = edit(ADM_EDIT_SET, at(r, "/n/e"), "k", val(f, "[]"));
    check1(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REMOVE, at(r, "/n/e"), "k", NULL);
    check1(f, r, e, 1);
    e[0] = edit(ADM_EDIT_APPEND, at(r, "/a"), NULL, val(f, "[]"));
    e[1] = edit(ADM_EDIT_APPEND, at(r, "/n/a"), NULL, val(f, "{}"));
    e[2] = edit(ADM_EDIT_REPLACE, at(r, "/n/e"), NULL, val(f, "[{}]"));
    e[3] = edit(ADM_EDIT_ADD, r, "x", val(f, "{}"));
    check1(f, r, e, 4);
    r = parse(f, "{}");
    e[0] = edit(ADM_EDIT_SET, r, "only", val(f, "1"));
    check1(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REMOVE, r, "only", NULL);
    check1(f, r, e, 1);
    r = parse(f, "[]");
    e[0] = edit(ADM_EDIT_APPEND, r, NULL, val(f, "[]"));
    check1(f, r, e, 1);
    fx_free(f);
}

static void test_duplicate_keys(void **state)
{
    fixture_t *f = fx_new();
    /* the flat array: 0 root, 1 "a", 2 1, 3 "b", 4 2, 5 "a", 6 {, 7 "x", 8 1, 9 "a", 10 3 */
    yyjson_val *r = parse(f, "{\"a\":1,\"b\":2,\"a\":{\"x\":1},\"a\":3}"), *out;
    adm_edit_t e[3];

    (void)state;
    e[0] = edit(ADM_EDIT_ADD, r, "a", val(f, "9"));
    out = check1(f, r, e, 1);
    assert_int_equal(yyjson_obj_size(out), 2);
    e[0] = edit(ADM_EDIT_REMOVE, r, "a", NULL);
    out = check1(f, r, e, 1);
    assert_int_equal(yyjson_obj_size(out), 1);
    e[0] = edit(ADM_EDIT_SET, r, "a", val(f, "\"first\""));
    out = check1(f, r, e, 1);
    assert_int_equal(yyjson_obj_size(out), 4);
    assert_string_equal(yyjson_get_str(out + 2), "first");
    /* the second "a" itself: replaced, or edited inside */
    e[0] = edit(ADM_EDIT_REPLACE, r + 6, NULL, val(f, "\"second\""));
    check1(f, r, e, 1);
    e[0] = edit(ADM_EDIT_ADD, r + 6, "y", val(f, "2"));
    e[1] = edit(ADM_EDIT_SET, r, "a", val(f, "0"));
    check1(f, r, e, 2);
    /* an edit inside a member that a later ADD removes: gone with it */
    e[0] = edit(ADM_EDIT_ADD, r + 6, "y", val(f, "2"));
    e[1] = edit(ADM_EDIT_ADD, r, "a", val(f, "0"));
    check1(f, r, e, 2);
    fx_free(f);
}

static void test_batches(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, deep);
    adm_edit_t e[8];

    (void)state;
    /* one target: a key added twice (the first one removed), then set, removed, set again */
    e[0] = edit(ADM_EDIT_ADD, at(r, "/m"), "k", val(f, "1"));
    e[1] = edit(ADM_EDIT_ADD, at(r, "/m"), "k", val(f, "2"));
    e[2] = edit(ADM_EDIT_SET, at(r, "/m"), "k", val(f, "3"));
    e[3] = edit(ADM_EDIT_SET, at(r, "/m"), "l", val(f, "4"));
    e[4] = edit(ADM_EDIT_REMOVE, at(r, "/m"), "n", NULL);
    e[5] = edit(ADM_EDIT_SET, at(r, "/m"), "n", val(f, "\"back\""));
    e[6] = edit(ADM_EDIT_REMOVE, at(r, "/m"), "l", NULL);
    e[7] = edit(ADM_EDIT_SET, at(r, "/m"), "t", val(f, "{\"t\":0}"));
    check1(f, r, e, 8);
    /* nested targets, in any order of the layout */
    e[0] = edit(ADM_EDIT_APPEND, at(r, "/v/w"), NULL, val(f, "\"z\""));
    e[1] = edit(ADM_EDIT_ADD, at(r, "/m/n/o/2"), "added", val(f, "[1,[2]]"));
    e[2] = edit(ADM_EDIT_APPEND, at(r, "/m/n/o"), NULL, val(f, "6"));
    e[3] = edit(ADM_EDIT_SET, at(r, "/m/t/1"), "u", val(f, "2"));
    e[4] = edit(ADM_EDIT_ADD, at(r, "/m/t/0"), "first", val(f, "true"));
    e[5] = edit(ADM_EDIT_REPLACE, at(r, "/z"), NULL, val(f, "{\"z\":[]}"));
    e[6] = edit(ADM_EDIT_ADD, r, "end", val(f, "0"));
    e[7] = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o/0"), NULL, val(f, "0.5"));
    check1(f, r, e, 8);
    /* an edit inside a value, then the value replaced: the later wins, as on a mutable copy */
    e[0] = edit(ADM_EDIT_ADD, at(r, "/m/n"), "lost", val(f, "1"));
    e[1] = edit(ADM_EDIT_REPLACE, at(r, "/m/n"), NULL, val(f, "\"n\""));
    e[2] = edit(ADM_EDIT_SET, at(r, "/m"), "t", val(f, "[]"));
    check1(f, r, e, 3);
    /* a replaced value replaced again through its key */
    e[0] = edit(ADM_EDIT_REPLACE, at(r, "/v"), NULL, val(f, "1"));
    e[1] = edit(ADM_EDIT_SET, r, "v", val(f, "2"));
    check1(f, r, e, 2);
    fx_free(f);
}

static void test_strings_not_terminated(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, flat), *out;
    static const char text[] = "keyXYZvalueXYZ";
    yyjson_mut_val *obj = yyjson_mut_obj(f->values);
    adm_edit_t e[2];

    (void)state;
    assert_true(yyjson_mut_obj_add(obj, yyjson_mut_strn(f->values, text, 3),
                                   yyjson_mut_strn(f->values, text + 6, 5)));
    e[0] = (adm_edit_t){ADM_EDIT_ADD, r, text, 3, yyjson_mut_strn(f->values, text + 6, 5)};
    e[1] = edit(ADM_EDIT_APPEND, at(r, "/b"), NULL, obj);
    out = check1(f, r, e, 2);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(out, "key")), "value");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_arr_get(yyjson_obj_get(out, "b"), 3), "key")),
                        "value");
    fx_free(f);
}

static void expect_einval(fixture_t *f, yyjson_val *r, const adm_edit_t *e, size_t n)
{
    yyjson_val *out = r;
    adm_json_lineage_t lin;

    assert_int_equal(adm_json_splice(&f->alc, r, NULL, e, n, &out, &lin), ADM_EINVAL);
    assert_null(out);
}

static void test_errors(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *r = parse(f, deep), *other = parse(f, deep);
    yyjson_mut_val *one = val(f, "1");
    adm_edit_t e[2];

    (void)state;
    /* wrong type for the op */
    e[0] = edit(ADM_EDIT_ADD, at(r, "/v/w"), "k", one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_SET, at(r, "/z"), "k", one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REMOVE, at(r, "/v/w/0"), "k", NULL);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_APPEND, at(r, "/v"), NULL, one);
    expect_einval(f, r, e, 1);
    /* the root replaced; no value; no key; an unknown op */
    e[0] = edit(ADM_EDIT_REPLACE, r, NULL, one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_ADD, r, "k", NULL);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_SET, r, NULL, one);
    expect_einval(f, r, e, 1);
    e[0] = edit((adm_edit_op_t)42, r, "k", one);
    expect_einval(f, r, e, 1);
    /* outside root's layout: another document, past the end, not at a value, a key */
    e[0] = edit(ADM_EDIT_ADD, other, "k", one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REPLACE, r + edit_check_size(r), NULL, one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REPLACE, (yyjson_val *)((char *)at(r, "/z") + 1), NULL, one);
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REPLACE, r + 1, NULL, one); /* "m", the first key */
    expect_einval(f, r, e, 1);
    e[0] = edit(ADM_EDIT_REPLACE, at(r, "/m/n") - 1, NULL, one); /* "n" */
    expect_einval(f, r, e, 1);
    /* a subtree of r's that is not the whole layout */
    e[0] = edit(ADM_EDIT_ADD, at(r, "/m"), "k", one);
    expect_einval(f, at(r, "/v"), e, 1);
    /* gone: removed or replaced by an earlier edit of the batch, or under one that was */
    e[0] = edit(ADM_EDIT_REMOVE, r, "m", NULL);
    e[1] = edit(ADM_EDIT_ADD, at(r, "/m/n"), "k", one);
    expect_einval(f, r, e, 2);
    e[1] = edit(ADM_EDIT_REPLACE, at(r, "/m"), NULL, one);
    expect_einval(f, r, e, 2);
    e[0] = edit(ADM_EDIT_ADD, r, "m", one);
    e[1] = edit(ADM_EDIT_APPEND, at(r, "/m/n/o"), NULL, one);
    expect_einval(f, r, e, 2);
    e[0] = edit(ADM_EDIT_SET, r, "m", one);
    e[1] = edit(ADM_EDIT_SET, at(r, "/m"), "k", one);
    expect_einval(f, r, e, 2);
    e[0] = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o"), NULL, one);
    e[1] = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o/2/q/0"), NULL, one);
    expect_einval(f, r, e, 2);
    e[1] = edit(ADM_EDIT_REPLACE, at(r, "/m/n/o"), NULL, one);
    expect_einval(f, r, e, 2);
    /* a scalar root takes no edit */
    e[0] = edit(ADM_EDIT_REPLACE, parse(f, "1"), NULL, one);
    expect_einval(f, e[0].target, e, 1);
    fx_free(f);
}

static void test_chained(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *origin = parse(f, deep), *one, *two, *three;
    adm_json_lineage_t l1, l2, l3;
    adm_edit_t e[2];

    (void)state;
    e[0] = edit(ADM_EDIT_ADD, at(origin, "/m/n"), "k", val(f, "{\"x\":1}"));
    e[1] = edit(ADM_EDIT_APPEND, at(origin, "/v/w"), NULL, val(f, "\"z\""));
    one = check(f, origin, NULL, origin, e, 2, &l1);
    /* the second splice edits the first's layout: its lineage relative to the origin still */
    e[0] = edit(ADM_EDIT_REPLACE, at(one, "/m/n/o/2/q"), NULL, val(f, "[]"));
    e[1] = edit(ADM_EDIT_SET, at(one, "/m/n/k"), "x", val(f, "2"));
    two = check(f, one, &l1, origin, e, 2, &l2);
    assert_true(l2.nruns > 0);
    /* untouched by either: v's w array was rewritten by the first, z by neither */
    assert_true(maps(&l2, two, at(two, "/z"), at(origin, "/z")));
    assert_false(maps(&l2, two, at(two, "/v/w"), at(origin, "/v/w")));
    assert_true(maps(&l2, two, at(two, "/m/t"), at(origin, "/m/t")));
    assert_true(maps(&l2, two, at(two, "/v/w/0"), at(origin, "/v/w/0")));
    /* a third, and no edits at all: the lineage passes through */
    three = check(f, two, &l2, origin, NULL, 0, &l3);
    assert_int_equal(l3.nruns, l2.nruns);
    assert_memory_equal(l3.runs, l2.runs, l2.nruns * sizeof(*l2.runs));
    (void)three;
    fx_free(f);
}

static void test_compose(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *origin = parse(f, "[1]");
    adm_json_run_t inner_runs[] = {{0, 100, 10}, {20, 200, 10}, {40, 300, 5}};
    adm_json_run_t outer_runs[] = {{0, 5, 20}, {30, 42, 2}, {40, 0, 3}, {50, 22, 2}};
    adm_json_run_t want[] = {{0, 105, 5}, {15, 200, 5}, {30, 302, 2}, {40, 100, 3}, {50, 202, 2}};
    adm_json_lineage_t inner = {origin, inner_runs, 3}, outer = {(yyjson_val *)inner_runs, outer_runs, 4},
                       out;

    (void)state;
    /* outer's sources out of order send the cursor back: runs cut to overlaps, mapped through */
    assert_int_equal(adm_json_lineage_compose(&f->alc, &outer, &inner, &out), 0);
    assert_ptr_equal(out.origin, origin);
    assert_int_equal(out.nruns, 5);
    assert_memory_equal(out.runs, want, sizeof(want));
    /* no inner lineage: outer as it is */
    inner.origin = NULL;
    assert_int_equal(adm_json_lineage_compose(&f->alc, &outer, &inner, &out), 0);
    assert_ptr_equal(out.runs, outer_runs);
    fx_free(f);
}

/* An allocator that fails once it has given `left` blocks (realloc counting as one). */
typedef struct failing_s {
    adm_arena_t *a;
    int left;
} failing_t;

static void *failing_malloc(void *ctx, size_t size)
{
    failing_t *fa = ctx;

    return fa->left-- > 0 ? adm_arena_alloc(fa->a, size) : NULL;
}

static void *failing_realloc(void *ctx, void *ptr, size_t old_size, size_t size)
{
    failing_t *fa = ctx;

    return fa->left-- > 0 ? adm_arena_realloc(fa->a, ptr, old_size, size) : NULL;
}

static void failing_free(void *ctx, void *ptr)
{
    (void)ctx;
    (void)ptr;
}

static void test_out_of_memory(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *origin = parse(f, deep), *one;
    static const char text[] = "keyXYZ";
    failing_t fa = {f->a, 0};
    yyjson_alc alc = {failing_malloc, failing_realloc, failing_free, &fa};
    adm_json_lineage_t l1, l2;
    adm_edit_t e[4];
    int ok = 0;

    (void)state;
    e[0] = edit(ADM_EDIT_ADD, at(origin, "/m/n"), "k", val(f, "{\"x\":[1,[2,[3]]]}"));
    e[1] = (adm_edit_t){ADM_EDIT_ADD, origin, text, 3, yyjson_mut_strn(f->values, text, 3)};
    e[2] = edit(ADM_EDIT_REMOVE, at(origin, "/v"), "w", NULL);
    e[3] = edit(ADM_EDIT_APPEND, at(origin, "/m/t"), NULL, val(f, "[]"));
    one = check(f, origin, NULL, origin, e, 4, &l1);
    /* every allocation failing in turn: ADM_ENOMEM and nothing out, or the whole result */
    for (int k = 0; k < 40; k++) {
        yyjson_val *out = origin;
        int rc;

        fa.left = k;
        rc = adm_json_splice(&alc, origin, NULL, e, 4, &out, &l2);
        if (rc == 0) {
            assert_null(edit_check_same(out, one));
            ok++;
            continue;
        }
        assert_int_equal(rc, ADM_ENOMEM);
        assert_null(out);
        assert_int_equal(l2.nruns, 0);
        /* and composing onto a lineage */
        fa.left = k;
        rc = adm_json_splice(&alc, one, &l1, e + 3, 0, &out, &l2);
        assert_true(rc == 0 || rc == ADM_ENOMEM);
    }
    assert_true(ok > 0);
    fx_free(f);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;

    if (fp == NULL) {
        fail_msg("cannot open %s", path);
    }
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    n = ftell(fp);
    assert_true(n >= 0);
    rewind(fp);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

/* The request's object of an AdmissionReview file under the fixtures' directory. */
static yyjson_val *review_object(fixture_t *f, const char *rel)
{
    const char *dir = getenv("ADM_FIXTURES_DIR");
    char path[1024];
    size_t len;
    char *text, *copy;
    yyjson_val *obj;

    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    text = slurp(path, &len);
    copy = adm_arena_strndup(f->a, text, len);
    free(text);
    obj = yyjson_ptr_get(parse(f, copy), "/request/object");
    assert_non_null(obj);
    return obj;
}

/* True when value i of root's layout is an object's key: found by descending from the root. */
static bool is_key(yyjson_val *root, size_t i)
{
    size_t c = 0;

    while (c != i) {
        bool obj = yyjson_is_obj(root + c);
        size_t j = c + 1;

        for (;;) {
            size_t v = obj ? j + 1 : j, vend = v + edit_check_size(root + v);

            if (i < v) {
                return true;
            }
            if (i < vend) {
                c = v;
                break;
            }
            j = vend;
        }
    }
    return false;
}

/* Every container of every fixture's object edited alone, by each op its type takes. */
static void test_every_container_of_the_fixtures(void **state)
{
    static const char *const files[] = {"pod-create.v1.review.json", "pod-update.v1.review.json",
                                        "configmap-delete.v1.review.json", "csr-create.v1.review.json",
                                        "../../bench/reviews/pod-create-untolerated.v1.json"};

    (void)state;
    for (size_t fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
        fixture_t *f = fx_new();
        yyjson_val *r = review_object(f, files[fi]);
        size_t n = edit_check_size(r);

        for (size_t i = 0; i < n; i++) {
            yyjson_val *t = r + i;
            adm_edit_t e;

            if (yyjson_is_obj(t)) {
                yyjson_val *first = yyjson_get_len(t) > 0 ? t + 1 : NULL; /* its first key */

                e = edit(ADM_EDIT_ADD, t, "added", val(f, "{\"a\":[1]}"));
                check1(f, r, &e, 1);
                if (first != NULL) {
                    e = (adm_edit_t){ADM_EDIT_SET, t, yyjson_get_str(first), yyjson_get_len(first),
                                     val(f, "0")};
                    check1(f, r, &e, 1);
                    e.op = ADM_EDIT_REMOVE;
                    check1(f, r, &e, 1);
                }
            } else if (yyjson_is_arr(t)) {
                e = edit(ADM_EDIT_APPEND, t, NULL, val(f, "[]"));
                check1(f, r, &e, 1);
            }
            if (i > 0 && !is_key(r, i)) {
                e = edit(ADM_EDIT_REPLACE, t, NULL, val(f, "{\"r\":\"s\"}"));
                check1(f, r, &e, 1);
            }
        }
        fx_free(f);
    }
}

/* The realistic pod's five changes, as the chain makes them (tolerations, service account, limits). */
static const char *const mount = "[{\"name\":\"kube-api-access-7x2lq\",\"readOnly\":true,"
                                 "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}]";
static const char *const tolerations =
    "[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
    "\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]";

static size_t pod_edits(fixture_t *f, yyjson_val *pod, adm_edit_t *e)
{
    e[0] = edit(ADM_EDIT_ADD, at(pod, "/metadata/annotations"), "kubernetes.io/limit-ranger",
                val(f, "\"LimitRanger plugin set: cpu, memory limit for container sidecar\""));
    e[1] = edit(ADM_EDIT_ADD, at(pod, "/spec/initContainers/0"), "volumeMounts", val(f, mount));
    e[2] = edit(ADM_EDIT_ADD, at(pod, "/spec/containers/1"), "volumeMounts", val(f, mount));
    e[3] = edit(ADM_EDIT_ADD, at(pod, "/spec/containers/1/resources"), "limits",
                val(f, "{\"cpu\":\"500m\",\"memory\":\"512Mi\"}"));
    e[4] = edit(ADM_EDIT_ADD, at(pod, "/spec"), "tolerations", val(f, tolerations));
    return 5;
}

static void test_realistic_pod(void **state)
{
    fixture_t *f = fx_new();
    yyjson_val *pod = review_object(f, "../../bench/reviews/pod-create-untolerated.v1.json"), *out;
    adm_edit_t e[5];
    adm_json_lineage_t lin;
    size_t n = pod_edits(f, pod, e);

    (void)state;
    out = check(f, pod, NULL, pod, e, n, &lin);
    /* only the containers on the way and the new values are outside the runs */
    assert_true(uncovered(&lin, out) < 60);
    assert_true(maps(&lin, out, at(out, "/spec/containers/0"), at(pod, "/spec/containers/0")));
    assert_false(maps(&lin, out, at(out, "/spec/containers/1"), at(pod, "/spec/containers/1")));
    /* the same five one by one, each splice on the previous: the lineage composed to the pod */
    out = pod;
    lin.origin = NULL;
    for (size_t i = 0; i < n; i++) {
        yyjson_val *target = at(out, i == 0   ? "/metadata/annotations"
                                     : i == 1 ? "/spec/initContainers/0"
                                     : i == 2 ? "/spec/containers/1"
                                     : i == 3 ? "/spec/containers/1/resources"
                                              : "/spec");

        e[i].target = target;
        /* the lineage updated in place (in and out the same) after the first */
        out = check(f, out, lin.origin != NULL ? &lin : NULL, pod, &e[i], 1, &lin);
    }
    assert_true(maps(&lin, out, at(out, "/spec/containers/0"), at(pod, "/spec/containers/0")));
    fx_free(f);
}

/*
 * The cost of the realistic pod's five changes, for callgrind (not run by ctest): `--measure N`
 * makes them N times each way, arena reset between: measure_splice splices the parsed object;
 * measure_mutable does what the chain does today (adm_json_mut_share_kept, the same changes with
 * yyjson's mutable API, adm_json_view_from); measure_chain splices them in three steps, as three
 * plugins would (its targets in the later layouts found by yyjson_ptr_get, which it counts).
 * Targets and values are otherwise found and built once, so the counts are of making the layout. With
 * --toggle-collect=measure_splice (or measure_mutable), callgrind's Collected / N is the instructions one
 * costs.
 */
static __attribute__((noinline)) yyjson_val *measure_splice(const yyjson_alc *alc, yyjson_val *pod,
                                                            const adm_edit_t *e, size_t n)
{
    yyjson_val *out;
    adm_json_lineage_t lin;

    return adm_json_splice(alc, pod, NULL, e, n, &out, &lin) == 0 ? out : NULL;
}

static __attribute__((noinline)) yyjson_val *measure_mutable(const yyjson_alc *alc, yyjson_val *pod,
                                                             const adm_edit_t *e, size_t n)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(alc);
    adm_json_origin_t o;
    yyjson_mut_val *m = doc != NULL ? adm_json_mut_share_kept(doc, pod, &o) : NULL;

    if (m == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) { /* all ADDs */
        yyjson_mut_val *obj = m + (e[i].target - pod);

        yyjson_mut_obj_remove_keyn(obj, e[i].key, e[i].key_len);
        if (!yyjson_mut_obj_add(obj, yyjson_mut_strn(doc, e[i].key, e[i].key_len), e[i].value)) {
            return NULL;
        }
    }
    return adm_json_view_from(alc, m, &o);
}

/* The same five as three splices in a row (the annotation and tolerations; the two mounts; the
   limits), each relative to the previous layout and its lineage composed: one per plugin. */
static __attribute__((noinline)) yyjson_val *measure_chain(const yyjson_alc *alc, yyjson_val *pod,
                                                           const adm_edit_t *e, size_t n)
{
    adm_edit_t step[2];
    yyjson_val *out;
    adm_json_lineage_t lin;

    (void)n;
    step[0] = e[0];
    step[1] = e[4];
    if (adm_json_splice(alc, pod, NULL, step, 2, &out, &lin) != 0) {
        return NULL;
    }
    step[0] = e[1];
    step[0].target = yyjson_ptr_get(out, "/spec/initContainers/0");
    step[1] = e[2];
    step[1].target = yyjson_ptr_get(out, "/spec/containers/1");
    if (adm_json_splice(alc, out, &lin, step, 2, &out, &lin) != 0) {
        return NULL;
    }
    step[0] = e[3];
    step[0].target = yyjson_ptr_get(out, "/spec/containers/1/resources");
    return adm_json_splice(alc, out, &lin, step, 1, &out, &lin) == 0 ? out : NULL;
}

static int measure(long iterations)
{
    fixture_t *f = fx_new();
    adm_arena_t *work = adm_arena_create(64 * 1024);
    yyjson_val *pod = review_object(f, "../../bench/reviews/pod-create-untolerated.v1.json");
    adm_edit_t e[5];
    size_t n = pod_edits(f, pod, e);
    yyjson_alc alc;

    assert_non_null(work);
    adm_json_alc_init(&alc, work);
    for (long i = 0; i < iterations; i++) {
        if (measure_splice(&alc, pod, e, n) == NULL) {
            return 1;
        }
        adm_arena_reset(work);
        if (measure_mutable(&alc, pod, e, n) == NULL) {
            return 1;
        }
        adm_arena_reset(work);
        if (measure_chain(&alc, pod, e, n) == NULL) {
            return 1;
        }
        adm_arena_reset(work);
    }
    printf("%ld iterations of the pod's %zu changes each way\n", iterations, n);
    adm_arena_destroy(work);
    fx_free(f);
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_op_at_the_root),
        cmocka_unit_test(test_each_op_deep),
        cmocka_unit_test(test_empty_containers),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_strings_not_terminated),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_chained),
        cmocka_unit_test(test_compose),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_every_container_of_the_fixtures),
        cmocka_unit_test(test_realistic_pod),
    };

    if (argc == 3 && strcmp(argv[1], "--measure") == 0) {
        return measure(strtol(argv[2], NULL, 10));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

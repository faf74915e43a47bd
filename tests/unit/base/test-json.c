/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yyjson glue: the arena allocator (yyjson parses and builds documents in it, realloc keeps the
 * bytes, free is harmless) and the depth guard (table of nesting cases, strings and escapes that
 * must not count, the 10000/10001 boundary, unbalanced input, and a comparison against a plain
 * byte-at-a-time reference on random text to cover the eight-byte string skipping), adm_json_read
 * and Go's wording of its errors, the walkers (share, copy, depth, view) 200,000 levels deep at the
 * default stack size, the shared copy and the immutable view against yyjson's own copies (same
 * values, same text, before and after changes), and the words and texts of values that messages
 * quote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/json.h"

static void test_alc_parse_and_build(void **state)
{
    adm_arena_t *a = adm_arena_create(1024);
    yyjson_alc alc;
    yyjson_doc *doc;
    yyjson_mut_doc *mdoc;
    yyjson_mut_val *arr;
    const char *text = "{\"a\":[1,2,3],\"b\":\"c\"}";
    size_t used;
    char *out;
    size_t len;

    assert_non_null(a);
    adm_json_alc_init(&alc, a);
    doc = yyjson_read_opts((char *)text, strlen(text), 0, &alc, NULL);
    assert_non_null(doc);
    assert_int_equal(yyjson_get_int(yyjson_ptr_get(yyjson_doc_get_root(doc), "/a/2")), 3);
    used = adm_arena_used(a);
    assert_true(used > 0);
    yyjson_doc_free(doc); /* goes to the no-op free; the arena still owns the bytes */
    assert_int_equal(adm_arena_used(a), used);

    /* A mutable document big enough that yyjson grows its pools and its output buffer. */
    mdoc = yyjson_mut_doc_new(&alc);
    assert_non_null(mdoc);
    arr = yyjson_mut_arr(mdoc);
    yyjson_mut_doc_set_root(mdoc, arr);
    for (int i = 0; i < 20000; i++) {
        assert_true(yyjson_mut_arr_add_int(mdoc, arr, i));
    }
    out = yyjson_mut_write_opts(mdoc, 0, &alc, &len, NULL);
    assert_non_null(out);
    doc = yyjson_read(out, len, 0);
    assert_non_null(doc);
    assert_int_equal(yyjson_arr_size(yyjson_doc_get_root(doc)), 20000);
    assert_int_equal(yyjson_get_int(yyjson_arr_get(yyjson_doc_get_root(doc), 19999)), 19999);
    yyjson_doc_free(doc);
    adm_arena_destroy(a);
}

static void test_alc_realloc_keeps_bytes(void **state)
{
    adm_arena_t *a = adm_arena_create(256);
    yyjson_alc alc;
    char *p;
    char *q;

    adm_json_alc_init(&alc, a);
    p = alc.malloc(alc.ctx, 100);
    assert_non_null(p);
    memset(p, 'x', 100);
    (void)alc.malloc(alc.ctx, 8); /* p is no longer the last allocation: realloc must copy */
    q = alc.realloc(alc.ctx, p, 100, 5000);
    assert_non_null(q);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(q[i], 'x');
    }
    alc.free(alc.ctx, q);
    adm_arena_destroy(a);
}

static void test_too_deep_table(void **state)
{
    static const struct {
        const char *text;
        size_t max;
        bool deep;
    } cases[] = {
        {"[[]]", 2, false},
        {"[[[]]]", 2, true},
        {"{\"a\":{\"b\":[1]}}", 3, false},
        {"{\"a\":{\"b\":[1]}}", 2, true},
        {"[1,[2],[3],[4],[5]]", 2, false}, /* siblings do not add up */
        {"[\"[[[[[[\"]", 1, false},
        {"[\"{{{{{{\"]", 1, false},
        {"[\"\\\"[[[[[[\"]", 1, false}, /* escaped quote does not end the string */
        {"[\"\\\\\",[[]]]", 2, true},   /* escaped backslash: the next quote ends it */
        {"[\"\\\\\",[]]", 2, false},
        {"[\"a\\u005b[[[[[[[[[[[[[[\"]", 1, false}, /* \u escape, then brackets in the string */
        {"[\"[[[[[[[[[[[[[[[[[[[[[[[[", 1, false},  /* unterminated string */
        {"[\"abc\\", 0, true},                      /* one level over 0 before the string */
        {"[\"abcdefghijklmnop\\", 1, false},        /* ends on a backslash */
        {"]]]]]][[[", 2, true},                     /* closers never go below zero */
        {"]]]]]][[", 2, false},
        {"[\"\xc3\xa9\xe2\x82\xac[[[[[[[[[[\",[[]]]", 2, true}, /* UTF-8 in the string */
        {"{\"k\":\"a string of more than eight bytes [[[[ {{{{\",\"x\":[[1]]}", 3, false},
        {"{\"k\":\"a string of more than eight bytes [[[[ {{{{\",\"x\":[[[1]]]}", 3, true},
        {"x[[[[", 3, true}, /* malformed text is the parser's problem, nesting still counts */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool got = adm_json_too_deep(cases[i].text, strlen(cases[i].text), cases[i].max, NULL);

        if (got != cases[i].deep) {
            fail_msg("case %zu (%s, max %zu): got %d", i, cases[i].text, cases[i].max, got);
        }
    }
    assert_false(adm_json_too_deep(NULL, 0, ADM_JSON_MAX_DEPTH, NULL));
    assert_false(adm_json_too_deep("", 0, 0, NULL));
}

/* n levels of "[" then n of "]", optionally as objects {"a":...}. */
static char *nest(size_t n, bool objects, size_t *len)
{
    const char *open = objects ? "{\"a\":" : "[";
    const char *close = objects ? "}" : "]";
    size_t no = strlen(open);
    char *s = malloc(n * (no + 1) + 2);
    char *w = s;

    for (size_t i = 0; i < n; i++) {
        memcpy(w, open, no);
        w += no;
    }
    if (objects) {
        *w++ = '1';
    }
    for (size_t i = 0; i < n; i++) {
        *w++ = *close;
    }
    *len = (size_t)(w - s);
    return s;
}

static void test_too_deep_boundary(void **state)
{
    for (int objects = 0; objects < 2; objects++) {
        size_t len;
        char *ok = nest(ADM_JSON_MAX_DEPTH, objects, &len);

        assert_false(adm_json_too_deep(ok, len, ADM_JSON_MAX_DEPTH, NULL));
        free(ok);
        ok = nest(ADM_JSON_MAX_DEPTH + 1, objects, &len);
        assert_true(adm_json_too_deep(ok, len, ADM_JSON_MAX_DEPTH, NULL));
        free(ok);
    }
}

static void test_too_deep_unbalanced(void **state)
{
    size_t n = 100000;
    char *s = malloc(n);

    memset(s, '[', n);
    assert_true(adm_json_too_deep(s, n, ADM_JSON_MAX_DEPTH, NULL));
    assert_false(adm_json_too_deep(s, ADM_JSON_MAX_DEPTH, ADM_JSON_MAX_DEPTH, NULL));
    memset(s, ']', n);
    assert_false(adm_json_too_deep(s, n, ADM_JSON_MAX_DEPTH, NULL));
    /* 100k brackets inside one string: not nesting at all */
    memset(s, '[', n);
    s[0] = '"';
    assert_false(adm_json_too_deep(s, n, ADM_JSON_MAX_DEPTH, NULL));
    free(s);
}

/* The definition the fast scan must agree with, one byte at a time. */
static bool reference_too_deep(const char *text, size_t len, size_t max)
{
    size_t depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = text[i];

        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            depth++;
            if (depth > max) {
                return true;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return false;
}

/* Random text over alphabet; lengths below max_len, limits below max_limit. */
static void compare_random(const char *alphabet, size_t max_len, size_t max_limit, int rounds)
{
    size_t nalpha = strlen(alphabet);
    char *text = malloc(max_len);
    uint32_t seed = 12345;

    for (int round = 0; round < rounds; round++) {
        size_t len;
        size_t max;

        seed = seed * 1103515245u + 12345u;
        len = (seed >> 8) % max_len;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = alphabet[(seed >> 16) % nalpha];
        }
        seed = seed * 1103515245u + 12345u;
        max = (seed >> 16) % max_limit;
        if (adm_json_too_deep(text, len, max, NULL) != reference_too_deep(text, len, max)) {
            fail_msg("round %d: len %zu max %zu: %.*s", round, len, max, (int)len, text);
        }
    }
    free(text);
}

static void test_too_deep_matches_reference(void **state)
{
    /* Short texts, small limits: specials land at every offset within a word. */
    compare_random("[[]]{}\"\\aaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9", 256, 6, 200000);
    /* Long texts that drift deeper (more openers than closers), rare backslashes, and limits
       on both sides of the depth reached: covers the 64-byte blocks, settled or walked. */
    compare_random("[[[{{]}\"\"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,:1", 3000, 120, 50000);
    compare_random("[[[{{]}\"\"\"\\aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 3000, 120, 50000);
    /* Balanced-ish text: the depth stays low, so blocks meet the zero floor. */
    compare_random("[]{}[]{}\"aaaaaaaaaaaaaaaaaaaaaaaa", 3000, 8, 50000);
}

static void test_read_depth_error(void **state)
{
    adm_arena_t *a = adm_arena_create(65536);
    yyjson_read_err err;
    size_t len;
    char *deep = nest(ADM_JSON_MAX_DEPTH + 1, false, &len);
    char *ok = nest(ADM_JSON_MAX_DEPTH, true, &len);

    assert_non_null(a);
    /* exactly the limit: a document */
    assert_non_null(adm_json_read(a, ok, len, &err));
    free(ok);
    /* one more: refused where the 10001st bracket opens, worded as Go's decoder words it */
    len = 2 * (ADM_JSON_MAX_DEPTH + 1);
    assert_null(adm_json_read(a, deep, len, &err));
    assert_int_equal(err.code, ADM_JSON_READ_ERROR_DEPTH);
    assert_int_equal(err.pos, ADM_JSON_MAX_DEPTH);
    assert_string_equal(adm_json_go_error(a, deep, len, &err), "invalid character '[' exceeded max depth");
    /* a syntax error before the deep part comes first, as Go checks the text in order */
    deep[3] = 'x';
    assert_null(adm_json_read(a, deep, len, &err));
    assert_int_not_equal(err.code, ADM_JSON_READ_ERROR_DEPTH);
    assert_string_equal(adm_json_go_error(a, deep, len, &err),
                        "invalid character 'x' looking for beginning of value");
    /* one after it does not */
    deep[3] = '[';
    deep[len - 1] = 'x';
    assert_null(adm_json_read(a, deep, len, &err));
    assert_int_equal(err.code, ADM_JSON_READ_ERROR_DEPTH);
    free(deep);
    /* objects: the character is the opening brace */
    deep = nest(ADM_JSON_MAX_DEPTH + 5, true, &len);
    assert_null(adm_json_read(a, deep, len, &err));
    assert_string_equal(adm_json_go_error(a, deep, len, &err), "invalid character '{' exceeded max depth");
    free(deep);
    /* without an arena: yyjson's allocator, the caller frees */
    yyjson_doc_free(adm_json_read(NULL, "[1]", 3, &err));
    assert_string_equal(
        adm_json_go_error(a, "[1", 2, &(yyjson_read_err){YYJSON_READ_ERROR_UNEXPECTED_END, "", 2}),
        "unexpected end of JSON input");
    adm_arena_destroy(a);
}

/* Far past the limit, parsed by yyjson directly (its reader is iterative): walkers must not recurse. */
#define VERY_DEEP 200000

static void test_walkers_use_no_stack(void **state)
{
    adm_arena_t *a = adm_arena_create(65536);
    yyjson_alc alc;
    size_t len;
    char *text = nest(VERY_DEEP, true, &len);
    yyjson_doc *doc = yyjson_read(text, len, 0);
    yyjson_mut_doc *m;
    yyjson_mut_val *shared, *copy, *at = NULL;
    char *back;

    assert_non_null(a);
    assert_non_null(doc);
    adm_json_alc_init(&alc, a);
    m = yyjson_mut_doc_new(&alc);
    shared = adm_json_mut_share(m, yyjson_doc_get_root(doc));
    assert_non_null(shared);
    copy = adm_json_mut_copy(m, shared);
    assert_non_null(copy);
    assert_int_equal(adm_json_mut_depth(m, shared), VERY_DEEP);
    assert_int_equal(adm_json_mut_depth(m, copy), VERY_DEEP);
    assert_int_equal(adm_json_mut_too_deep(m, copy, ADM_JSON_MAX_DEPTH, &at), 0);
    assert_non_null(at);
    assert_true(yyjson_mut_is_obj(at));
    /* the copy is the same text (the writer is iterative too) */
    back = yyjson_mut_val_write(copy, 0, NULL);
    assert_non_null(back);
    assert_memory_equal(back, text, len);
    free(back);
    /* and so is the immutable view of the shared copy */
    back = yyjson_val_write(adm_json_view(&alc, shared), 0, NULL);
    assert_non_null(back);
    assert_memory_equal(back, text, len);
    free(back);
    yyjson_doc_free(doc);
    free(text);
    adm_arena_destroy(a);
}

static void test_depth_and_first_too_deep(void **state)
{
    static const struct {
        const char *json;
        size_t depth;
        size_t max;
        int at; /* 0: none, '[' or '{': the type of the first container past max */
    } cases[] = {
        {"1", 0, 0, 0},
        {"[]", 1, 0, '['},
        {"[]", 1, 1, 0},
        {"[[1],[{\"k\":[2]}]]", 4, 2, '{'},
        {"[[1],[[[2]]],{\"a\":{}}]", 4, 3, '['},
        {"{\"a\":[[]],\"b\":{\"c\":{\"d\":{}}}}", 4, 3, '{'},
        {"{\"a\":[[]],\"b\":{\"c\":{\"d\":{}}}}", 4, 4, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        yyjson_doc *doc = yyjson_read(cases[i].json, strlen(cases[i].json), 0);
        yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);
        yyjson_mut_val *at = NULL;

        assert_int_equal(adm_json_mut_depth(m, yyjson_mut_doc_get_root(m)), cases[i].depth);
        assert_int_equal(adm_json_mut_too_deep(m, yyjson_mut_doc_get_root(m), cases[i].max, &at), 0);
        if (cases[i].at == 0) {
            assert_null(at);
        } else {
            assert_non_null(at);
            assert_int_equal(yyjson_mut_is_arr(at) ? '[' : '{', cases[i].at);
        }
        yyjson_mut_doc_free(m);
        yyjson_doc_free(doc);
    }
}

/* The one table of Go's JSON type words, and the one text of a value for messages. */
static void test_go_type_and_text(void **state)
{
    static const struct {
        const char *json;
        const char *type;
        const char *text;
    } cases[] = {
        {"{\"a\": [1, 2.5]}", "object", "{\"a\":[1,2.5]}"},
        {"[ ]", "array", "[]"},
        {"\"x\\u00e9\\n\"", "string", "\"x\xc3\xa9\\n\""},
        {"-3", "number", "-3"},
        {"1e400", "number", "null"},
        {"false", "bool", "false"},
        {"null", "null", "null"},
    };
    adm_arena_t *a = adm_arena_create(1024);

    assert_non_null(a);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        yyjson_doc *doc = yyjson_read_opts((char *)cases[i].json, strlen(cases[i].json),
                                           YYJSON_READ_ALLOW_INF_AND_NAN, NULL, NULL);

        assert_non_null(doc);
        assert_string_equal(adm_json_go_type(yyjson_doc_get_root(doc)), cases[i].type);
        assert_string_equal(adm_json_text(a, yyjson_doc_get_root(doc)), cases[i].text);
        yyjson_doc_free(doc);
    }
    assert_string_equal(adm_json_go_type(NULL), "null");
    {
        /* Invalid UTF-8 (only a document read leniently holds it) is printed as Go would: as is. */
        yyjson_doc *doc =
            yyjson_read_opts((char *)"\"a\xff\"", 4, YYJSON_READ_ALLOW_INVALID_UNICODE, NULL, NULL);

        assert_non_null(doc);
        assert_string_equal(adm_json_text(a, yyjson_doc_get_root(doc)), "\"a\xff\"");
        yyjson_doc_free(doc);
    }
    adm_arena_destroy(a);
}

/* Writes v (mutable or not) compactly into the arena. */
static const char *text_of(adm_arena_t *a, yyjson_val *v, yyjson_mut_val *mv)
{
    yyjson_alc alc;
    const char *s;

    adm_json_alc_init(&alc, a);
    s = v != NULL ? yyjson_val_write_opts(v, 0, &alc, NULL, NULL)
                  : yyjson_mut_val_write_opts(mv, 0, &alc, NULL, NULL);
    assert_non_null(s);
    return s;
}

/*
 * adm_json_mut_share and adm_json_view against yyjson's own copies: the shared copy equals
 * yyjson_val_mut_copy's, the view of it (and of it changed: members added, replaced, removed,
 * containers emptied) equals yyjson_mut_val_imut_copy's, as values and as text, and every
 * reader works on the view (lookups by key and index, iteration, sizes). Documents past the
 * view's first guesses (512 values, 32 open containers) too.
 */
static void test_share_and_view_match_yyjson(void **state)
{
    static const char *const texts[] = {
        "{}",
        "[]",
        "\"just a string\"",
        "-12",
        "null",
        "{\"a\":[1,-2,3.5,true,false,null,\"x\\n\\u00e9\"],\"b\":{},\"c\":[],\"d\":{\"e\":{\"f\":[[],[{}]]}}"
        "}",
        "[{\"k\":\"v\"},[1,[2,[3,[4,[5]]]]],{\"empty\":{\"x\":[]}},18446744073709551615,-"
        "9223372036854775808]",
        ("{\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":"
         "\"c\","
         "\"image\":\"nginx\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}],\"volumes\":[]}}"),
    };
    adm_arena_t *a = adm_arena_create(4096);
    yyjson_alc alc;
    char big[40000];
    size_t n = 0;

    assert_non_null(a);
    adm_json_alc_init(&alc, a);
    /* 1,500 members, and 40 arrays deep */
    n += (size_t)snprintf(big + n, sizeof(big) - n, "{");
    for (int i = 0; i < 1500; i++) {
        n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"k%d\":%d", i > 0 ? "," : "", i, i);
    }
    n += (size_t)snprintf(big + n, sizeof(big) - n, ",\"deep\":");
    for (int i = 0; i < 40; i++) {
        n += (size_t)snprintf(big + n, sizeof(big) - n, "[%d,", i);
    }
    n += (size_t)snprintf(big + n, sizeof(big) - n, "{\"end\":true}");
    for (int i = 0; i < 40; i++) {
        n += (size_t)snprintf(big + n, sizeof(big) - n, "]");
    }
    n += (size_t)snprintf(big + n, sizeof(big) - n, "}");
    assert_true(n < sizeof(big) - 1);
    for (size_t t = 0; t <= sizeof(texts) / sizeof(texts[0]); t++) {
        const char *text = t < sizeof(texts) / sizeof(texts[0]) ? texts[t] : big;
        yyjson_doc *doc = adm_json_read(a, text, strlen(text), &(yyjson_read_err){0});
        yyjson_mut_doc *m = yyjson_mut_doc_new(&alc);
        yyjson_mut_val *shared, *copied, *root;
        yyjson_val *view;

        assert_non_null(doc);
        assert_non_null(m);
        shared = adm_json_mut_share(m, yyjson_doc_get_root(doc));
        copied = yyjson_val_mut_copy(m, yyjson_doc_get_root(doc));
        assert_non_null(shared);
        assert_true(yyjson_mut_equals(shared, copied));
        assert_string_equal(text_of(a, NULL, shared), text_of(a, yyjson_doc_get_root(doc), NULL));
        view = adm_json_view(&alc, shared);
        assert_non_null(view);
        assert_true(yyjson_equals(view, yyjson_doc_get_root(doc)));
        assert_string_equal(text_of(a, view, NULL), text_of(a, yyjson_doc_get_root(doc), NULL));

        /* change it as plugins do, then compare the view with yyjson's */
        root = shared;
        if (yyjson_mut_is_obj(root)) {
            yyjson_mut_val *arr = yyjson_mut_arr(m);

            assert_true(yyjson_mut_arr_add_str(m, arr, "added"));
            assert_true(yyjson_mut_arr_add_uint(m, arr, 7));
            assert_true(yyjson_mut_obj_add_val(m, root, "zz", arr));
            assert_true(yyjson_mut_obj_add_val(m, root, "empty", yyjson_mut_obj(m)));
            yyjson_mut_obj_remove_key(root, "a");
            yyjson_mut_obj_remove_key(root, "k7");
            /* a string not NUL-terminated where its length ends: the view must stop at its length */
            assert_true(yyjson_mut_obj_add_val(m, root, "cut", yyjson_mut_strn(m, "abcdef", 3)));
        } else if (yyjson_mut_is_arr(root)) {
            yyjson_mut_val *obj = yyjson_mut_obj(m);

            assert_true(yyjson_mut_obj_add_str(m, obj, "name", "v"));
            assert_true(yyjson_mut_arr_insert(root, obj, 0));
            assert_true(yyjson_mut_arr_append(root, yyjson_mut_strn(m, "abcdef", 3)));
            assert_non_null(yyjson_mut_arr_remove_last(root));
        }
        view = adm_json_view(&alc, root);
        assert_non_null(view);
        {
            yyjson_doc *theirs = yyjson_mut_val_imut_copy(root, &alc);

            assert_non_null(theirs);
            assert_true(yyjson_equals(view, yyjson_doc_get_root(theirs)));
            assert_string_equal(text_of(a, view, NULL), text_of(a, yyjson_doc_get_root(theirs), NULL));
            assert_string_equal(text_of(a, view, NULL), text_of(a, NULL, root));
            assert_int_equal(yyjson_get_len(view), yyjson_get_len(yyjson_doc_get_root(theirs)));
        }
        if (yyjson_is_obj(view)) {
            assert_string_equal(yyjson_get_str(yyjson_arr_get(yyjson_obj_get(view, "zz"), 0)), "added");
            assert_int_equal(yyjson_get_uint(yyjson_arr_get(yyjson_obj_get(view, "zz"), 1)), 7);
            assert_string_equal(yyjson_get_str(yyjson_obj_get(view, "cut")), "abc");
            assert_null(yyjson_obj_get(view, "a"));
            assert_int_equal(yyjson_obj_size(yyjson_obj_get(view, "empty")), 0);
        } else if (yyjson_is_arr(view)) {
            assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_arr_get(view, 0), "name")), "v");
        }
    }
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alc_parse_and_build),
        cmocka_unit_test(test_alc_realloc_keeps_bytes),
        cmocka_unit_test(test_too_deep_table),
        cmocka_unit_test(test_too_deep_boundary),
        cmocka_unit_test(test_too_deep_unbalanced),
        cmocka_unit_test(test_too_deep_matches_reference),
        cmocka_unit_test(test_read_depth_error),
        cmocka_unit_test(test_walkers_use_no_stack),
        cmocka_unit_test(test_depth_and_first_too_deep),
        cmocka_unit_test(test_go_type_and_text),
        cmocka_unit_test(test_share_and_view_match_yyjson),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON string writer and the growing writer: the same text as yyjson's writer for every valid
 * string (each byte below 0x80 alone and in runs that cross the eight-byte path, multibyte
 * characters at every offset), U+FFFD for each byte of invalid or cut UTF-8, NUL as \u0000, never
 * a read past n (inputs sit in buffers of exactly n bytes, so ASan sees one), the bound, and a
 * round trip of random text through yyjson's reader. And adm_jsonw_mut_value against
 * yyjson_mut_val_write_opts with YYJSON_WRITE_NOFLAG, byte for byte, failing together: every value
 * of the JSON Patch conformance suite, the fixtures and the bench reviews (as read, with strings
 * marked NOESC, and again with the mark cleared so every string takes the escaping path), tricky
 * strings, integers, reals, raw text, nested and deeply nested containers. Each value's view
 * (adm_json_view) through adm_jsonw_value too: the same bytes, failing together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>

#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

/* s (n bytes) through adm_jsonw_put_string, from a buffer of exactly n bytes; NUL-terminated, malloc'd. */
static char *put(const char *s, size_t n)
{
    char *in = malloc(n > 0 ? n : 1);
    char *out = malloc(ADM_JSONW_STRING_MAX(n) + 1);
    char *end;

    assert_non_null(in);
    assert_non_null(out);
    memcpy(in, s, n);
    end = adm_jsonw_put_string(out, in, n);
    assert_true((size_t)(end - out) <= ADM_JSONW_STRING_MAX(n));
    *end = '\0';
    free(in);
    return out;
}

/* What yyjson's writer makes of the same valid string (malloc'd). */
static char *yyjson_text(const char *s, size_t n)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    char *text;

    yyjson_mut_doc_set_root(doc, yyjson_mut_strn(doc, s, n));
    text = yyjson_mut_write(doc, 0, NULL);
    yyjson_mut_doc_free(doc);
    assert_non_null(text);
    return text;
}

/* yyjson writes \u001F where Go (and admitd) write \u001f: hex digits compare without case. */
static void expect_like_yyjson(const char *s, size_t n)
{
    char *ours = put(s, n);
    char *theirs = yyjson_text(s, n);

    for (char *p = theirs; *p != '\0'; p++) {
        if (p[0] == '\\' && p[1] == 'u') {
            for (int k = 2; k < 6; k++) {
                p[k] = p[k] >= 'A' && p[k] <= 'F' ? (char)(p[k] - 'A' + 'a') : p[k];
            }
            p += 5;
        } else if (p[0] == '\\') {
            p++;
        }
    }
    assert_string_equal(ours, theirs);
    free(ours);
    free(theirs);
}

static void test_same_as_yyjson(void **state)
{
    static const char *const multibyte[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf",
                                            "\xf4\x8f\xbf\xbf"};
    char buf[64];

    for (int c = 0; c < 0x80; c++) {
        for (size_t run = 1; run <= 20; run++) {
            memset(buf, 'a', sizeof(buf));
            buf[run - 1] = (char)c;
            expect_like_yyjson(buf, run);
            memset(buf, c, run);
            expect_like_yyjson(buf, run);
        }
    }
    for (size_t m = 0; m < sizeof(multibyte) / sizeof(multibyte[0]); m++) {
        size_t len = strlen(multibyte[m]);

        for (size_t at = 0; at + len <= 24; at++) {
            memset(buf, 'x', sizeof(buf));
            memcpy(buf + at, multibyte[m], len);
            expect_like_yyjson(buf, 24);
        }
    }
    expect_like_yyjson("", 0);
}

static void test_exact(void **state)
{
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        {"plain text, long enough for the fast path", 0, "\"plain text, long enough for the fast path\""},
        {"q\"b\\s/", 0, "\"q\\\"b\\\\s/\""},
        {"\b\f\n\r\t\x01\x1f\x7f", 8, "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\""},
        {"a\0b", 3, "\"a\\u0000b\""},
        /* invalid: a lone continuation, an overlong form, a surrogate, past U+10FFFF, 0xff */
        {"\x80", 1, "\"\xef\xbf\xbd\""},
        {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"ok\xff", 3, "\"ok\xef\xbf\xbd\""},
        /* a sequence cut by n is invalid even when the bytes after n would complete it */
        {"\xc3\xa9", 1, "\"\xef\xbf\xbd\""},
        {"\xe2\x82\xac", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"0123456789\xf0\x9f\x98\x80", 13, "\"0123456789\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = put(cases[i].in, cases[i].n != 0 ? cases[i].n : strlen(cases[i].in));

        assert_string_equal(out, cases[i].out);
        free(out);
    }
}

/* Random bytes: the output is always JSON, and valid UTF-8 comes back byte for byte. */
static void test_round_trip(void **state)
{
    uint32_t seed = 12345;
    char buf[300];

    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(round % 300);
        bool ascii = round % 3 != 0;
        char *out;
        yyjson_doc *doc;

        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(ascii ? (seed >> 16) % 0x80 : (seed >> 16) & 0xff);
        }
        out = put(buf, n);
        doc = yyjson_read(out, strlen(out), 0);
        assert_non_null(doc);
        if (ascii) {
            assert_int_equal(yyjson_get_len(yyjson_doc_get_root(doc)), n);
            assert_memory_equal(yyjson_get_str(yyjson_doc_get_root(doc)), buf, n);
        }
        yyjson_doc_free(doc);
        free(out);
    }
}

static void test_growing_writer(void **state)
{
    adm_arena_t *a = adm_arena_create(256);
    adm_jsonw_t w;

    assert_non_null(a);
    adm_jsonw_init(&w, a);
    ADM_JSONW_LIT(&w, "[");
    for (int i = 0; i < 1000; i++) {
        if (i > 0) {
            ADM_JSONW_LIT(&w, ",");
        }
        adm_jsonw_string(&w, "/a~1b\n", 6);
    }
    ADM_JSONW_LIT(&w, "]");
    assert_false(w.failed);
    assert_int_equal(w.len, 2 + 999 + 1000 * 9);
    assert_memory_equal(w.data, "[\"/a~1b\\n\",\"/a~1b\\n\"", 20);
    adm_arena_destroy(a);
}

/* ---- adm_jsonw_mut_value against yyjson's writer ---- */

static int mut_values_checked;

/* v through both writers, after some text already in the growing writer: the same bytes, or both fail. */
static void expect_mut_like_yyjson(yyjson_mut_val *v)
{
    adm_arena_t *a = adm_arena_create(64);
    adm_jsonw_t w;
    size_t n = 0;
    char *theirs = yyjson_mut_val_write_opts(v, YYJSON_WRITE_NOFLAG, NULL, &n, NULL);

    assert_non_null(a);
    adm_jsonw_init(&w, a);
    ADM_JSONW_LIT(&w, "[");
    adm_jsonw_mut_value(&w, v);
    if (theirs == NULL) {
        if (!w.failed) {
            fail_msg("yyjson fails, adm_jsonw_mut_value wrote %.*s", (int)w.len, w.data);
        }
    } else {
        if (w.failed) {
            fail_msg("adm_jsonw_mut_value failed where yyjson wrote %s", theirs);
        }
        if (w.len != n + 1 || memcmp(w.data + 1, theirs, n) != 0) {
            fail_msg("adm_jsonw_mut_value wrote %.*s, yyjson %s", (int)w.len - 1, w.data + 1, theirs);
        }
    }
    /* and its flat layout (a view) through adm_jsonw_value: the same bytes, or it fails too */
    if (v != NULL) {
        yyjson_alc alc;
        yyjson_val *view;

        adm_json_alc_init(&alc, a);
        view = adm_json_view(&alc, v);
        assert_non_null(view);
        adm_jsonw_init(&w, a);
        ADM_JSONW_LIT(&w, "[");
        adm_jsonw_value(&w, view);
        if (theirs == NULL ? !w.failed : w.failed || w.len != n + 1 || memcmp(w.data + 1, theirs, n) != 0) {
            fail_msg("adm_jsonw_value wrote %.*s, yyjson %s", w.failed ? 6 : (int)w.len - 1,
                     w.failed ? "failed" : w.data + 1, theirs != NULL ? theirs : "failed");
        }
    }
    free(theirs);
    adm_arena_destroy(a);
    mut_values_checked++;
}

/* Every value in v (v, its keys, its values, theirs...), walked with an explicit list. */
static void expect_all_like_yyjson(yyjson_mut_val *root, bool clear_noesc)
{
    size_t cap = 64, n = 0;
    yyjson_mut_val **pending = malloc(cap * sizeof(*pending));

    assert_non_null(pending);
    pending[n++] = root;
    while (n > 0) {
        yyjson_mut_val *v = pending[--n];
        yyjson_mut_val *child;
        yyjson_mut_arr_iter it;
        yyjson_mut_obj_iter oit;

        if (clear_noesc && yyjson_mut_is_str(v)) {
            v->tag &= ~(uint64_t)YYJSON_SUBTYPE_MASK;
        }
        if (yyjson_mut_is_arr(v)) {
            yyjson_mut_arr_iter_init(v, &it);
            for (child = yyjson_mut_arr_iter_next(&it); child != NULL;
                 child = yyjson_mut_arr_iter_next(&it)) {
                if (n == cap) {
                    cap *= 2;
                    pending = realloc(pending, cap * sizeof(*pending));
                    assert_non_null(pending);
                }
                pending[n++] = child;
            }
        } else if (yyjson_mut_is_obj(v)) {
            yyjson_mut_obj_iter_init(v, &oit);
            for (child = yyjson_mut_obj_iter_next(&oit); child != NULL;
                 child = yyjson_mut_obj_iter_next(&oit)) {
                if (n + 2 > cap) {
                    cap *= 2;
                    pending = realloc(pending, cap * sizeof(*pending));
                    assert_non_null(pending);
                }
                pending[n++] = child;
                pending[n++] = yyjson_mut_obj_iter_get_val(child);
            }
        }
        /* children were queued (and their NOESC cleared later) before v is written: write after */
        expect_mut_like_yyjson(v);
    }
    free(pending);
}

/* The JSON file at path, every value of it, as read and with NOESC cleared; false if unreadable. */
static bool expect_file_like_yyjson(const char *path)
{
    yyjson_doc *doc = yyjson_read_file(path, 0, NULL, NULL);

    if (doc == NULL) {
        return false;
    }
    for (int pass = 0; pass < 2; pass++) {
        yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);

        assert_non_null(m);
        expect_all_like_yyjson(yyjson_mut_doc_get_root(m), pass == 1);
        if (pass == 1) {
            /* the root again, now that every string in it is unmarked */
            expect_mut_like_yyjson(yyjson_mut_doc_get_root(m));
        }
        yyjson_mut_doc_free(m);
    }
    yyjson_doc_free(doc);
    return true;
}

/* Every *.json file in dir; how many. */
static int expect_dir_like_yyjson(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;

    if (d == NULL) {
        return 0;
    }
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        char path[1024];

        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            assert_true(expect_file_like_yyjson(path));
            files++;
        }
    }
    closedir(d);
    return files;
}

static void test_mut_value_corpora(void **state)
{
    const char *conformance = getenv("ADM_CONFORMANCE_DIR");
    const char *fixtures = getenv("ADM_FIXTURES_DIR");
    const char *ci = getenv("CI");
    char path[1024];
    int files;

    if (conformance == NULL || conformance[0] == '\0') {
        conformance = getenv("ADM_CONFORMANCE_DEFAULT");
    }
    snprintf(path, sizeof(path), "%s/jsonpatch", conformance != NULL ? conformance : "../shared/conformance");
    files = expect_dir_like_yyjson(path);
    if (files == 0) {
        if (ci != NULL && strcmp(ci, "true") == 0) {
            fail_msg("conformance corpus %s not found (CI=true: it must be there)", path);
        }
        print_message("conformance corpus %s not found (set ADM_CONFORMANCE_DIR): not compared\n", path);
    }
    if (fixtures == NULL) {
        fixtures = "tests/fixtures";
    }
    assert_true(expect_dir_like_yyjson(fixtures) > 0);
    snprintf(path, sizeof(path), "%s/../../bench/reviews", fixtures);
    assert_true(expect_dir_like_yyjson(path) > 0);
    print_message("%d values compared with yyjson's writer\n", mut_values_checked);
}

/* s (n bytes) as a string value, an array element and an object key, marked NOESC or not. */
static void expect_string_like_yyjson(const char *s, size_t n)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    /* a buffer longer than n, so a writer reading up to a NUL instead of n bytes shows */
    char *in = malloc(n + 8);
    yyjson_mut_val *str, *arr, *obj;

    assert_non_null(in);
    memcpy(in, s, n);
    memcpy(in + n, "\"tail\\\x01", 8);
    str = yyjson_mut_strn(doc, in, n);
    arr = yyjson_mut_arr(doc);
    obj = yyjson_mut_obj(doc);
    assert_true(yyjson_mut_arr_append(arr, str));
    assert_true(yyjson_mut_obj_put(obj, yyjson_mut_strn(doc, in, n), yyjson_mut_strn(doc, in, n)));
    expect_mut_like_yyjson(str);
    expect_mut_like_yyjson(arr);
    expect_mut_like_yyjson(obj);
    /* yyjson_mut_strncpy copies without marking; yyjson_mut_str marks printable ASCII NOESC */
    expect_mut_like_yyjson(yyjson_mut_strncpy(doc, in, n));
    if (memchr(s, '\0', n) == NULL) {
        char *z = malloc(n + 1);

        assert_non_null(z);
        memcpy(z, s, n);
        z[n] = '\0';
        expect_mut_like_yyjson(yyjson_mut_strcpy(doc, z));
        free(z);
    }
    yyjson_mut_doc_free(doc);
    free(in);
}

static void test_mut_value_strings(void **state)
{
    static const char *const tricky[] = {
        "/", "a/b", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xc3\xa9t\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
        "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\x7f", "q\"b\\s",
        /* invalid: lone continuation, overlong, surrogate, past U+10FFFF, 0xff, F5, cut sequences */
        "\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf0\x80\x80\xaf",
        "\xf4\x90\x80\x80", "\xff", "\xf5\x80\x80\x80", "ok\xc3", "ok\xe2\x82",
        "0123456789abcdef\xf0\x9f\x98"};
    char buf[64];
    uint32_t seed = 777;

    for (int c = 0; c < 256; c++) {
        buf[0] = (char)c;
        expect_string_like_yyjson(buf, 1);
        for (size_t run = 2; run <= 20; run += 3) {
            memset(buf, 'a', sizeof(buf));
            buf[run - 1] = (char)c;
            expect_string_like_yyjson(buf, run);
        }
    }
    for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
        expect_string_like_yyjson(tricky[i], strlen(tricky[i]));
        snprintf(buf, sizeof(buf), "long enough for the fast path %s.", tricky[i]);
        expect_string_like_yyjson(buf, strlen(buf));
    }
    expect_string_like_yyjson("", 0);
    expect_string_like_yyjson("a\0b", 3);
    expect_string_like_yyjson("\0", 1);
    for (int round = 0; round < 5000; round++) {
        size_t n = (size_t)(round % 40);

        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(round % 2 != 0 ? (seed >> 16) & 0xff : 0x60 + (seed >> 16) % 0x30);
        }
        expect_string_like_yyjson(buf, n);
    }
}

static void test_mut_value_numbers(void **state)
{
    static const uint64_t uints[] = {0,
                                     1,
                                     9,
                                     10,
                                     99,
                                     100,
                                     12345678,
                                     99999999,
                                     100000000,
                                     4294967295u,
                                     4294967296u,
                                     9007199254740991u,
                                     9007199254740993u,
                                     999999999999999999u,
                                     1000000000000000000u,
                                     9223372036854775807u,
                                     9223372036854775808u,
                                     18446744073709551615u};
    static const int64_t sints[] = {
        0, 1, -1, -9, -10, 42, -100000000, INT32_MIN, INT64_MAX, INT64_MIN + 1, INT64_MIN};
    static const double reals[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   2.0,
                                   10.0,
                                   123456789.0,
                                   0.5,
                                   0.1,
                                   -1.5,
                                   1e-7,
                                   1e21,
                                   1e22,
                                   1e300,
                                   -1e300,
                                   5e-324,
                                   2.2250738585072014e-308,
                                   9007199254740991.0,
                                   9007199254740992.0,
                                   9007199254740994.0,
                                   -9007199254740991.0,
                                   1.7976931348623157e308,
                                   3.14159,
                                   100.25,
                                   0.999999999999,
                                   1e15,
                                   1e16,
                                   1e17,
                                   1234567.0e10};
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *arr = yyjson_mut_arr(doc);
    uint64_t seed = 99;

    for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
        expect_mut_like_yyjson(yyjson_mut_uint(doc, uints[i]));
        assert_true(yyjson_mut_arr_add_uint(doc, arr, uints[i]));
        /* a uint read back as a sint (the bits of a negative value as uint are still a uint) */
        expect_mut_like_yyjson(yyjson_mut_sint(doc, (int64_t)uints[i]));
    }
    for (size_t i = 0; i < sizeof(sints) / sizeof(sints[0]); i++) {
        expect_mut_like_yyjson(yyjson_mut_sint(doc, sints[i]));
        assert_true(yyjson_mut_arr_add_sint(doc, arr, sints[i]));
    }
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
        expect_mut_like_yyjson(yyjson_mut_real(doc, reals[i]));
        expect_mut_like_yyjson(yyjson_mut_real(doc, -reals[i]));
        assert_true(yyjson_mut_arr_add_real(doc, arr, reals[i]));
    }
    for (int i = 0; i < 20000; i++) {
        double d;

        seed = seed * 6364136223846793005u + 1442695040888963407u;
        memcpy(&d, &seed, sizeof(d));
        expect_mut_like_yyjson(yyjson_mut_real(doc, d)); /* NaN and infinities among them: both fail */
        d = (double)(int64_t)(seed >> (seed % 64)) * (i % 2 != 0 ? 1 : -1);
        expect_mut_like_yyjson(yyjson_mut_real(doc, d));
    }
    expect_mut_like_yyjson(arr);
    /* NaN and infinities fail, alone and deep inside a container */
    expect_mut_like_yyjson(yyjson_mut_real(doc, NAN));
    expect_mut_like_yyjson(yyjson_mut_real(doc, INFINITY));
    expect_mut_like_yyjson(yyjson_mut_real(doc, -INFINITY));
    assert_true(yyjson_mut_arr_add_real(doc, arr, NAN));
    expect_mut_like_yyjson(arr);
    yyjson_mut_doc_free(doc);
}

static void test_mut_value_containers(void **state)
{
    static const char *const texts[] = {"[]",
                                        "{}",
                                        "[[]]",
                                        "[{}]",
                                        "{\"a\":{}}",
                                        "{\"a\":[]}",
                                        "[[],{},[[]],{\"b\":[{}]}]",
                                        "[true,false,null,0,-1,1.5,\"s\"]",
                                        "{\"k\":true,\"l\":null,\"m\":[1,[2,[3,{}]]],\"n\":\"\"}",
                                        "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
                                        "{\"\":\"\",\"\\u0000\":\"\\u001f\"}"};
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *v;
    adm_arena_t *a = adm_arena_create(64);
    adm_jsonw_t w;

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        yyjson_doc *d = yyjson_read(texts[i], strlen(texts[i]), 0);

        assert_non_null(d);
        for (int pass = 0; pass < 2; pass++) {
            yyjson_mut_doc *m = yyjson_doc_mut_copy(d, NULL);

            expect_all_like_yyjson(yyjson_mut_doc_get_root(m), pass == 1);
            expect_mut_like_yyjson(yyjson_mut_doc_get_root(m));
            yyjson_mut_doc_free(m);
        }
        yyjson_doc_free(d);
    }
    /* nesting around the writer's own stack (64) and far past it, arrays and objects */
    for (int depth = 1; depth <= 200; depth += depth < 70 ? 1 : 43) {
        yyjson_mut_val *arr = yyjson_mut_uint(doc, 7);
        yyjson_mut_val *obj = yyjson_mut_str(doc, "x");

        for (int i = 0; i < depth; i++) {
            yyjson_mut_val *outer = yyjson_mut_arr(doc);
            yyjson_mut_val *o = yyjson_mut_obj(doc);

            assert_true(yyjson_mut_arr_append(outer, arr));
            assert_true(yyjson_mut_arr_add_null(doc, outer));
            arr = outer;
            assert_true(yyjson_mut_obj_put(o, yyjson_mut_str(doc, "k"), obj));
            obj = o;
        }
        expect_mut_like_yyjson(arr);
        expect_mut_like_yyjson(obj);
    }
    /* raw text goes as it is; a value of no type fails as yyjson fails */
    v = yyjson_mut_arr(doc);
    assert_true(yyjson_mut_arr_append(v, yyjson_mut_raw(doc, "12.50")));
    assert_true(yyjson_mut_arr_append(v, yyjson_mut_rawn(doc, "{\"x\":1}trailing", 7)));
    expect_mut_like_yyjson(v);
    expect_mut_like_yyjson(yyjson_mut_raw(doc, "anything"));
    expect_mut_like_yyjson(yyjson_mut_null(doc));
    expect_mut_like_yyjson(yyjson_mut_true(doc));
    expect_mut_like_yyjson(yyjson_mut_false(doc));
    v = yyjson_mut_null(doc);
    v->tag = YYJSON_TYPE_NONE;
    expect_mut_like_yyjson(v);
    expect_mut_like_yyjson(NULL);
    /* an invalid string in a key fails the whole value; a failed writer stays failed */
    v = yyjson_mut_obj(doc);
    assert_true(yyjson_mut_obj_put(v, yyjson_mut_strn(doc, "k\xff", 2), yyjson_mut_uint(doc, 1)));
    expect_mut_like_yyjson(v);
    adm_jsonw_init(&w, a);
    adm_jsonw_mut_value(&w, v);
    assert_true(w.failed);
    adm_jsonw_mut_value(&w, yyjson_mut_uint(doc, 1));
    assert_true(w.failed);
    adm_arena_destroy(a);
    yyjson_mut_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_yyjson),    cmocka_unit_test(test_exact),
        cmocka_unit_test(test_round_trip),        cmocka_unit_test(test_growing_writer),
        cmocka_unit_test(test_mut_value_corpora), cmocka_unit_test(test_mut_value_strings),
        cmocka_unit_test(test_mut_value_numbers), cmocka_unit_test(test_mut_value_containers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

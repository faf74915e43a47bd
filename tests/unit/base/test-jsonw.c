/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON string writer and the growing writer: the same text as yyjson's writer for every valid
 * string (each byte below 0x80 alone and in runs that cross the eight-byte path, multibyte
 * characters at every offset), U+FFFD for each byte of invalid or cut UTF-8, NUL as \u0000, never
 * a read past n (inputs sit in buffers of exactly n bytes, so ASan sees one), the bound, and a
 * round trip of random text through yyjson's reader.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_yyjson),
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_growing_writer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warnings an answer carries (adm_attrs_add_warning), held to kube-apiserver's recorder:
 * empty, repeated, malformed-UTF-8 and control-character texts dropped; past 4,096 runes in all,
 * every warning (earlier ones too) cut to 256 runes; past 4,096 runes of those, the rest dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/admission.h"
#include "adm/base/arena.h"

static adm_arena_t *arena;
static adm_review_request_t req;
static adm_attrs_t attrs;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    if (arena == NULL) {
        return -1;
    }
    adm_attrs_init(&attrs, &req, arena);
    return 0;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

/* n copies of the two-byte rune "é" after a distinguishing prefix letter (arena memory). */
static const char *text_of(char prefix, size_t n)
{
    char *s = adm_arena_alloc(arena, 2 * n + 2);
    char *w = s;

    *w++ = prefix;
    for (size_t i = 1; i < n; i++) {
        memcpy(w, "\xc3\xa9", 2);
        w += 2;
    }
    *w = '\0';
    return s;
}

static size_t runes(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++) {
        n += ((unsigned char)*s & 0xc0) != 0x80;
    }
    return n;
}

static void test_dropped_texts(void **state)
{
    static const char *const dropped[] = {
        "",
        "tab\tinside",
        "del\x7f",
        "c1 \xc2\x85 next line", /* U+0085, a C1 control */
        "bad \xff byte",
        "overlong \xc0\x80",
        "surrogate \xed\xa0\x80",
        "truncated \xe2\x82",
    };

    for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
        adm_attrs_add_warning(&attrs, dropped[i]);
    }
    adm_attrs_add_warning(&attrs, "first");
    adm_attrs_add_warning(&attrs, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* é € 😀: valid */
    adm_attrs_add_warning(&attrs, "first");
    assert_int_equal(attrs.nwarnings, 2);
    assert_string_equal(attrs.warnings[0], "first");
    assert_string_equal(attrs.warnings[1], "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

static void test_total_and_item_limits(void **state)
{
    /* four texts of 1,000 runes: 4,000 of 4,096, all whole */
    for (char c = 'a'; c < 'e'; c++) {
        adm_attrs_add_warning(&attrs, text_of(c, 1000));
    }
    assert_int_equal(attrs.nwarnings, 4);
    assert_int_equal(runes(attrs.warnings[3]), 1000);
    /* a fifth passes 4,096: all five are shown again, cut to 256 runes (on a rune boundary) */
    adm_attrs_add_warning(&attrs, text_of('e', 1000));
    assert_int_equal(attrs.nwarnings, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(runes(attrs.warnings[i]), 256);
        assert_int_equal(strlen(attrs.warnings[i]), 1 + 2 * 255);
        assert_int_equal(attrs.warnings[i][0], 'a' + (int)i);
    }
    /* from now on each is cut as it comes: 5 x 256 + 11 x 256 = 4,096 */
    for (char c = 'f'; c < 'f' + 11; c++) {
        adm_attrs_add_warning(&attrs, text_of(c, 300));
    }
    assert_int_equal(attrs.nwarnings, 16);
    assert_int_equal(runes(attrs.warnings[15]), 256);
    /* at 4,096 runes, further warnings are dropped, short or not */
    adm_attrs_add_warning(&attrs, "short");
    assert_int_equal(attrs.nwarnings, 16);
}

static void test_short_after_truncation(void **state)
{
    /* passing 4,096 with few warnings leaves room: later ones are shown, cut when long */
    adm_attrs_add_warning(&attrs, text_of('a', 5000));
    assert_int_equal(attrs.nwarnings, 1);
    assert_int_equal(runes(attrs.warnings[0]), 256);
    adm_attrs_add_warning(&attrs, "short");
    assert_int_equal(attrs.nwarnings, 2);
    assert_string_equal(attrs.warnings[1], "short");
    /* Go cuts through []rune, which turns malformed bytes into U+FFFD: a malformed text longer than
       256 runes is shown once cut, while a short one stays dropped */
    adm_attrs_add_warning(&attrs, "\xff short");
    assert_int_equal(attrs.nwarnings, 2);
    {
        char *long_bad = adm_arena_alloc(arena, 302);

        long_bad[0] = '\xff';
        memset(long_bad + 1, 'b', 300);
        long_bad[301] = '\0';
        adm_attrs_add_warning(&attrs, long_bad);
    }
    assert_int_equal(attrs.nwarnings, 3);
    assert_int_equal(memcmp(attrs.warnings[2],
                            "\xef\xbf\xbd"
                            "bbb",
                            6),
                     0);
    assert_int_equal(runes(attrs.warnings[2]), 256);
}

/* Many repeats stay cheap: the recorder looks texts up in a hash set. */
static void test_many_repeats(void **state)
{
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) {
            char buf[32];
            char *copy;

            snprintf(buf, sizeof(buf), "\x01%d", i); /* never shown: a control character */
            copy = adm_arena_alloc(arena, strlen(buf) + 1);
            memcpy(copy, buf, strlen(buf) + 1);
            adm_attrs_add_warning(&attrs, copy);
        }
    }
    adm_attrs_add_warning(&attrs, "shown");
    assert_int_equal(attrs.nwarnings, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dropped_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_total_and_item_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_after_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_repeats, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

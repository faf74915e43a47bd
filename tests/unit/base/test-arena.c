/* SPDX-License-Identifier: Apache-2.0 */
/* Arena: alignment, growth across chunks, in-place realloc, cleanups, reset reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/buf.h"

static void test_alignment_and_growth(void **state)
{
    adm_arena_t *a = adm_arena_create(256);
    void *prev = NULL;

    assert_non_null(a);
    for (size_t i = 1; i < 2000; i++) {
        unsigned char *p = adm_arena_alloc(a, i % 97 + 1);

        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 0xab, i % 97 + 1); /* ASan catches overlaps and overruns */
        assert_ptr_not_equal(p, prev);
        prev = p;
    }
    /* A block far larger than a chunk gets one of its own. */
    assert_non_null(adm_arena_alloc(a, 10 * 1024 * 1024));
    adm_arena_destroy(a);
}

static void test_realloc_in_place_and_copy(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    char *p = adm_arena_alloc(a, 16);
    char *q;
    char *r;

    memcpy(p, "0123456789abcdef", 16);
    q = adm_arena_realloc(a, p, 16, 64);
    assert_ptr_equal(p, q); /* last allocation grows in place */
    assert_memory_equal(q, "0123456789abcdef", 16);
    r = adm_arena_alloc(a, 8);
    assert_non_null(r);
    q = adm_arena_realloc(a, p, 64, 128); /* no longer last: copied */
    assert_ptr_not_equal(p, q);
    assert_memory_equal(q, "0123456789abcdef", 16);
    q = adm_arena_realloc(a, q, 128, 100000); /* beyond the chunk */
    assert_non_null(q);
    assert_memory_equal(q, "0123456789abcdef", 16);
    assert_null(adm_arena_calloc(a, SIZE_MAX / 2, 4)); /* overflow refused */
    adm_arena_destroy(a);
}

static int cleanup_order[4];
static int cleanup_count;

static void record_cleanup(void *arg)
{
    cleanup_order[cleanup_count++] = (int)(intptr_t)arg;
}

static void test_cleanups_and_reset(void **state)
{
    adm_arena_t *a = adm_arena_create(1024);
    char *first;
    char *again;

    cleanup_count = 0;
    first = adm_arena_alloc(a, 32);
    assert_int_equal(adm_arena_on_free(a, record_cleanup, (void *)1), 0);
    assert_int_equal(adm_arena_on_free(a, record_cleanup, (void *)2), 0);
    for (int i = 0; i < 100; i++) {
        assert_non_null(adm_arena_alloc(a, 1000)); /* spill into more chunks */
    }
    assert_true(adm_arena_used(a) >= 100000);
    adm_arena_reset(a);
    assert_int_equal(cleanup_count, 2);
    assert_int_equal(cleanup_order[0], 2); /* last registered runs first */
    assert_int_equal(cleanup_order[1], 1);
    assert_int_equal(adm_arena_used(a), 0);
    again = adm_arena_alloc(a, 32);
    assert_ptr_equal(first, again); /* the first chunk is reused */
    assert_int_equal(adm_arena_on_free(a, record_cleanup, (void *)3), 0);
    adm_arena_destroy(a);
    assert_int_equal(cleanup_count, 3);
}

static void test_strndup(void **state)
{
    adm_arena_t *a = adm_arena_create(0);
    char *s = adm_arena_strndup(a, "hello world", 5);

    assert_string_equal(s, "hello");
    adm_arena_destroy(a);
}

static void test_buf(void **state)
{
    adm_buf_t b = ADM_BUF_INIT;
    adm_buf_t other = ADM_BUF_INIT;

    assert_int_equal(adm_buf_append_str(&b, "abc"), 0);
    assert_int_equal(adm_buf_appendf(&b, "-%d-%s", 42, "x"), 0);
    assert_int_equal(b.len, 8);
    assert_memory_equal(b.data, "abc-42-x", 8);
    adm_buf_consume(&b, 4);
    assert_memory_equal(b.data, "42-x", 4);
    adm_buf_swap(&b, &other);
    assert_int_equal(b.len, 0);
    assert_int_equal(other.len, 4);
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(adm_buf_append(&b, "0123456789", 10), 0);
    }
    assert_int_equal(b.len, 1000000);
    adm_buf_shrink(&b, 4096);
    assert_null(b.data);
    adm_buf_free(&b);
    adm_buf_free(&other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_growth),
        cmocka_unit_test(test_realloc_in_place_and_copy),
        cmocka_unit_test(test_cleanups_and_reset),
        cmocka_unit_test(test_strndup),
        cmocka_unit_test(test_buf),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

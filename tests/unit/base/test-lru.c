/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LRU cache: hits keep their value and become most recent, a full cache forgets the least
 * recent key, values of new keys are zeroed (also in a recycled slot), keys are compared by their
 * bytes (NUL included, long keys), the slots grow from the first allocation up to max with every
 * key still found, a cache of one, and a random workload checked against a plain model. Peek finds
 * without touching recency or inserting; oldest names the value a new key would replace, once full.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/lru.h"

typedef struct value_s {
    double d;
    uint64_t n;
    char tag;
} value_t;

static const uint64_t seed[2] = {UINT64_C(0x0123456789abcdef), UINT64_C(0xfedcba9876543210)};

static value_t *get(adm_lru_t *l, const char *key)
{
    value_t *v = adm_lru_get(l, key, strlen(key));

    assert_non_null(v);
    assert_int_equal((uintptr_t)v % sizeof(double), 0);
    return v;
}

static void test_hits_and_eviction(void **state)
{
    adm_lru_t l;
    value_t *v;

    assert_int_equal(adm_lru_init(&l, 3, sizeof(value_t), seed), 0);
    get(&l, "a")->n = 1;
    get(&l, "b")->n = 2;
    get(&l, "c")->n = 3;
    assert_int_equal(adm_lru_count(&l), 3);
    assert_int_equal(get(&l, "a")->n, 1); /* a is now the most recent: b is the least */
    v = get(&l, "d");                     /* takes b's slot, zeroed */
    assert_int_equal(v->n, 0);
    assert_true(v->d == 0 && v->tag == 0);
    v->n = 4;
    assert_int_equal(adm_lru_count(&l), 3);
    assert_int_equal(get(&l, "c")->n, 3);
    assert_int_equal(get(&l, "a")->n, 1);
    assert_int_equal(get(&l, "d")->n, 4);
    assert_int_equal(get(&l, "b")->n, 0); /* forgotten; now it pushes out c */
    assert_int_equal(get(&l, "a")->n, 1);
    assert_int_equal(get(&l, "c")->n, 0);
    adm_lru_dispose(&l);
}

static void test_keys_are_bytes(void **state)
{
    adm_lru_t l;
    char long_key[5000];
    value_t *v;

    assert_int_equal(adm_lru_init(&l, 10, sizeof(value_t), seed), 0);
    v = adm_lru_get(&l, "a\0b", 3);
    v->n = 1;
    v = adm_lru_get(&l, "a\0c", 3);
    assert_int_equal(v->n, 0);
    v = adm_lru_get(&l, "a", 1);
    assert_int_equal(v->n, 0);
    v = adm_lru_get(&l, "", 0);
    v->n = 7;
    assert_int_equal(((value_t *)adm_lru_get(&l, "a\0b", 3))->n, 1);
    assert_int_equal(((value_t *)adm_lru_get(&l, "", 0))->n, 7);
    memset(long_key, 'k', sizeof(long_key));
    v = adm_lru_get(&l, long_key, sizeof(long_key));
    v->n = 9;
    assert_int_equal(((value_t *)adm_lru_get(&l, long_key, sizeof(long_key)))->n, 9);
    assert_int_equal(((value_t *)adm_lru_get(&l, long_key, sizeof(long_key) - 1))->n, 0);
    adm_lru_dispose(&l);
}

/* Past the first allocation the slots double up to max; every key stays found. */
static void test_growth(void **state)
{
    const uint32_t max = 3 * ADM_LRU_PREALLOC + 5;
    adm_lru_t l;
    char key[32];

    assert_int_equal(adm_lru_init(&l, max, sizeof(value_t), seed), 0);
    assert_int_equal(l.alloc, ADM_LRU_PREALLOC);
    for (uint32_t i = 0; i < max; i++) {
        snprintf(key, sizeof(key), "key-%u", i);
        get(&l, key)->n = i + 1;
    }
    assert_int_equal(adm_lru_count(&l), max);
    assert_int_equal(l.alloc, max);
    for (uint32_t i = 0; i < max; i++) {
        snprintf(key, sizeof(key), "key-%u", i);
        assert_int_equal(get(&l, key)->n, i + 1);
    }
    /* full: a new key takes key-0's slot (touched longest ago) and nothing grows */
    get(&l, "new")->n = 1;
    assert_int_equal(l.alloc, max);
    assert_int_equal(get(&l, "key-0")->n, 0);
    adm_lru_dispose(&l);
}

static void test_one_slot(void **state)
{
    adm_lru_t l;

    assert_int_equal(adm_lru_init(&l, 1, sizeof(value_t), seed), 0);
    get(&l, "x")->n = 5;
    assert_int_equal(get(&l, "x")->n, 5);
    assert_int_equal(get(&l, "y")->n, 0);
    assert_int_equal(get(&l, "x")->n, 0);
    assert_int_equal(adm_lru_count(&l), 1);
    adm_lru_dispose(&l);
}

/* A random workload against a model: an array of keys ordered from most to least recent. */
static void test_against_model(void **state)
{
    enum { MAX = 50, KEYS = 120, STEPS = 100000 };
    uint32_t model[MAX];
    uint64_t values[KEYS] = {0};
    size_t n = 0;
    uint32_t rnd = 7;
    adm_lru_t l;
    char key[16];

    assert_int_equal(adm_lru_init(&l, MAX, sizeof(value_t), seed), 0);
    for (int step = 0; step < STEPS; step++) {
        uint32_t k;
        size_t at = n;
        value_t *v;

        rnd = rnd * 1664525u + 1013904223u;
        k = (rnd >> 8) % KEYS;
        for (size_t i = 0; i < n; i++) {
            if (model[i] == k) {
                at = i;
                break;
            }
        }
        if (at == n) {
            values[k] = 0; /* new to the cache: a zeroed value */
            if (n == MAX) {
                at = n - 1; /* the least recent key goes */
            } else {
                n++;
            }
        }
        memmove(model + 1, model, at * sizeof(model[0]));
        model[0] = k;
        snprintf(key, sizeof(key), "k%u", k);
        v = get(&l, key);
        assert_int_equal(v->n, values[k]);
        values[k] = (uint64_t)step + 1;
        v->n = values[k];
        assert_int_equal(adm_lru_count(&l), n);
    }
    adm_lru_dispose(&l);
}

static void test_peek_and_oldest(void **state)
{
    adm_lru_t l;

    (void)state;
    assert_int_equal(adm_lru_init(&l, 2, sizeof(value_t), seed), 0);
    assert_null(adm_lru_peek(&l, "a", 1));
    assert_int_equal(adm_lru_count(&l), 0);
    get(&l, "a")->tag = 'a';
    assert_null(adm_lru_oldest(&l)); /* a free slot is left */
    get(&l, "b")->tag = 'b';
    assert_int_equal(((value_t *)adm_lru_oldest(&l))->tag, 'a');
    assert_int_equal(((value_t *)adm_lru_peek(&l, "a", 1))->tag, 'a');
    assert_int_equal(((value_t *)adm_lru_oldest(&l))->tag, 'a'); /* peek left a the least recent */
    get(&l, "a");
    assert_int_equal(((value_t *)adm_lru_oldest(&l))->tag, 'b');
    get(&l, "c")->tag = 'c'; /* takes b's slot, as oldest said */
    assert_null(adm_lru_peek(&l, "b", 1));
    assert_int_equal(((value_t *)adm_lru_oldest(&l))->tag, 'a');
    adm_lru_dispose(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hits_and_eviction),
        cmocka_unit_test(test_keys_are_bytes),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_one_slot),
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_peek_and_oldest),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

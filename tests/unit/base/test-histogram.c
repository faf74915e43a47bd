/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The latency histogram: bucket boundaries tile the range with no gap or overlap, quantiles of
 * random samples stay within 1% of the exact order statistics over 1 us .. 60 s, min/max/mean are
 * exact, merging equals recording everything in one, and values past 60 s are counted as overflow.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/histogram.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* log-uniform between lo and hi nanoseconds */
static uint64_t log_uniform(double lo, double hi)
{
    double u = (double)(next() >> 11) / 9007199254740992.0;

    return (uint64_t)exp(log(lo) + u * (log(hi) - log(lo)));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void test_buckets_tile_the_range(void **state)
{
    for (size_t i = 0; i < ADM_HIST_BUCKETS; i++) {
        uint64_t lo = adm_hist_bucket_low(i), hi = adm_hist_bucket_high(i);

        assert_true(lo <= hi);
        assert_int_equal(adm_hist_bucket_of(lo), i);
        assert_int_equal(adm_hist_bucket_of(hi), i);
        if (i > 0) {
            assert_int_equal(adm_hist_bucket_high(i - 1) + 1, lo);
        }
        /* relative width: exact below 256 ns, then under 1% */
        if (lo >= 256) {
            assert_true((double)(hi - lo + 1) / (double)lo <= 1.0 / 128 + 1e-12);
        }
    }
    assert_true(adm_hist_bucket_high(ADM_HIST_BUCKETS - 1) >= ADM_HIST_MAX_NS);
    assert_int_equal(adm_hist_bucket_of(UINT64_MAX), ADM_HIST_BUCKETS - 1);
}

static void test_quantiles_within_one_percent(void **state)
{
    enum { N = 200000 };
    static const double qs[] = {0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999};
    uint64_t *v = malloc(N * sizeof(*v));
    adm_hist_t *h = malloc(sizeof(*h));
    long double sum = 0;

    assert_non_null(v);
    assert_non_null(h);
    for (int round = 0; round < 3; round++) {
        adm_hist_init(h);
        sum = 0;
        for (int i = 0; i < N; i++) {
            /* round 0: 1 us .. 60 s; round 1: a tight 200-300 us band; round 2: bimodal */
            v[i] = round == 0   ? log_uniform(1e3, 6e10)
                   : round == 1 ? 200000 + next() % 100000
                                : (next() % 100 < 95 ? 500000 + next() % 1000 : 150000000 + next() % 100000);
            adm_hist_record(h, v[i]);
            sum += v[i];
        }
        qsort(v, N, sizeof(*v), cmp_u64);
        assert_int_equal(h->total, N);
        assert_int_equal(h->min_ns, v[0]);
        assert_int_equal(h->max_ns, v[N - 1]);
        assert_true(fabsl(h->sum_ns - sum) < 1);
        for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
            size_t rank = (size_t)ceil(qs[k] * N);
            uint64_t exact = v[rank - 1];
            uint64_t got = adm_hist_quantile(h, qs[k]);
            double err = fabs((double)got - (double)exact) / (double)exact;

            if (err > 0.01) {
                fail_msg("round %d q %.4f: got %llu, exact %llu (%.3f%%)", round, qs[k],
                         (unsigned long long)got, (unsigned long long)exact, err * 100);
            }
        }
        assert_int_equal(adm_hist_quantile(h, 0), v[0]);
        assert_int_equal(adm_hist_quantile(h, 1), v[N - 1]);
    }
    free(v);
    free(h);
}

static void test_merge_and_overflow(void **state)
{
    adm_hist_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));

    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(all);
    adm_hist_init(a);
    adm_hist_init(b);
    adm_hist_init(all);
    assert_int_equal(adm_hist_quantile(a, 0.5), 0);
    for (int i = 0; i < 10000; i++) {
        uint64_t x = log_uniform(1e3, 1e9);

        adm_hist_record(i % 2 ? a : b, x);
        adm_hist_record(all, x);
    }
    adm_hist_record(a, 120ull * 1000 * 1000 * 1000); /* two minutes */
    adm_hist_record(all, 120ull * 1000 * 1000 * 1000);
    adm_hist_merge(a, b);
    assert_memory_equal(a->counts, all->counts, sizeof(a->counts));
    assert_int_equal(a->total, all->total);
    assert_int_equal(a->min_ns, all->min_ns);
    assert_int_equal(a->max_ns, all->max_ns);
    assert_int_equal(a->overflow, 1);
    assert_int_equal(adm_hist_quantile(a, 1), 120ull * 1000 * 1000 * 1000);
    free(a);
    free(b);
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_tile_the_range),
        cmocka_unit_test(test_quantiles_within_one_percent),
        cmocka_unit_test(test_merge_and_overflow),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

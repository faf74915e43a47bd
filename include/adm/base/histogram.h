/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A log-linear latency histogram in fixed memory (~30 KiB): values in nanoseconds, exact below
 * 256 ns, then 128 buckets per power of two, so any recorded value is known within 0.78% (a
 * percentile is reported as its bucket's midpoint: within 0.4%). It covers 1 ns to 60 s; larger
 * values are counted in the last bucket and as overflow. No allocation, no floating point on the
 * recording path: cheap enough to record every request of a load generator.
 */
#ifndef ADM_HISTOGRAM_H
#define ADM_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define ADM_HIST_MAX_NS (60ull * 1000 * 1000 * 1000)
#define ADM_HIST_BUCKETS 3840

typedef struct adm_hist_s {
    uint64_t counts[ADM_HIST_BUCKETS];
    uint64_t total;          /* values recorded */
    uint64_t overflow;       /* values above ADM_HIST_MAX_NS (counted in the last bucket too) */
    uint64_t min_ns, max_ns; /* exact, as recorded */
    long double sum_ns;      /* for the mean */
} adm_hist_t;

void adm_hist_init(adm_hist_t *h);

/** Records one value. */
void adm_hist_record(adm_hist_t *h, uint64_t ns);

/** Adds from's counts into into (same layout: histograms of separate runs or threads). */
void adm_hist_merge(adm_hist_t *into, const adm_hist_t *from);

/**
 * The value at or below which fraction q (0..1) of the values lie, as the midpoint of its bucket
 * (clamped to the exact min and max); 0 for an empty histogram.
 */
uint64_t adm_hist_quantile(const adm_hist_t *h, double q);

/** The bucket a value falls in, and a bucket's range [low, high] in nanoseconds. */
size_t adm_hist_bucket_of(uint64_t ns);
uint64_t adm_hist_bucket_low(size_t index);
uint64_t adm_hist_bucket_high(size_t index);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The log-linear latency histogram (histogram.h): recording is an index computation and an
 * increment, with no allocation and no floating point; percentiles are read from cumulative counts.
 */
#include "adm/base/histogram.h"

#include <string.h>

/*
 * Index layout: 0..255 hold the values 0..255 exactly. A larger value with its top bit at position
 * e (8 <= e) keeps its 8 top bits: shift = e - 7, the top bits are 128..255, and the index is
 * 256 + (shift - 1) * 128 + (top - 128). 60 s (2^35.8 ns) ends at index 3839.
 */
#define EXACT 256u
#define PER_OCTAVE 128u

size_t adm_hist_bucket_of(uint64_t ns)
{
    unsigned e, shift;
    size_t index;

    if (ns < EXACT) {
        return (size_t)ns;
    }
    e = 63u - (unsigned)__builtin_clzll(ns);
    shift = e - 7u;
    index = EXACT + (size_t)(shift - 1u) * PER_OCTAVE + (size_t)((ns >> shift) - PER_OCTAVE);
    return index < ADM_HIST_BUCKETS ? index : ADM_HIST_BUCKETS - 1;
}

uint64_t adm_hist_bucket_low(size_t index)
{
    size_t shift;

    if (index < EXACT) {
        return index;
    }
    shift = (index - EXACT) / PER_OCTAVE + 1;
    return (uint64_t)(PER_OCTAVE + (index - EXACT) % PER_OCTAVE) << shift;
}

uint64_t adm_hist_bucket_high(size_t index)
{
    size_t shift;

    if (index < EXACT) {
        return index;
    }
    shift = (index - EXACT) / PER_OCTAVE + 1;
    return adm_hist_bucket_low(index) + ((uint64_t)1 << shift) - 1;
}

void adm_hist_init(adm_hist_t *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

void adm_hist_record(adm_hist_t *h, uint64_t ns)
{
    h->counts[adm_hist_bucket_of(ns)]++;
    h->total++;
    h->overflow += ns > ADM_HIST_MAX_NS;
    h->sum_ns += ns;
    if (ns < h->min_ns) {
        h->min_ns = ns;
    }
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

void adm_hist_merge(adm_hist_t *into, const adm_hist_t *from)
{
    for (size_t i = 0; i < ADM_HIST_BUCKETS; i++) {
        into->counts[i] += from->counts[i];
    }
    into->total += from->total;
    into->overflow += from->overflow;
    into->sum_ns += from->sum_ns;
    if (from->min_ns < into->min_ns) {
        into->min_ns = from->min_ns;
    }
    if (from->max_ns > into->max_ns) {
        into->max_ns = from->max_ns;
    }
}

uint64_t adm_hist_quantile(const adm_hist_t *h, double q)
{
    uint64_t rank, seen = 0;

    if (h->total == 0) {
        return 0;
    }
    if (q <= 0) {
        return h->min_ns;
    }
    if (q >= 1) {
        return h->max_ns;
    }
    /* the smallest value with at least ceil(q * total) values at or below it */
    rank = (uint64_t)(q * (double)h->total);
    if ((double)rank < q * (double)h->total) {
        rank++;
    }
    for (size_t i = 0; i < ADM_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t mid = adm_hist_bucket_low(i) + (adm_hist_bucket_high(i) - adm_hist_bucket_low(i)) / 2;

            return mid < h->min_ns ? h->min_ns : mid > h->max_ns ? h->max_ns : mid;
        }
    }
    return h->max_ns;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one admitd-bench loop counts during a run (its outcomes, HTTP statuses and latency
 * histogram) and its own CPU, and how the loops' tallies add up into the run's: sums, and a
 * histogram merge that gives the same percentiles as one histogram over every sample.
 */
#ifndef ADM_BENCH_TALLY_H
#define ADM_BENCH_TALLY_H

#include "adm/base/histogram.h"

#include <stdint.h>

/* Outcomes a request can have, counted separately. */
typedef enum outcome_e {
    OUT_ALLOWED,
    OUT_DENIED,
    OUT_HTTP_ERROR,   /* an HTTP status other than 200 */
    OUT_MALFORMED,    /* 200 but not an AdmissionReview answer */
    OUT_UID_MISMATCH, /* an answer for another request */
    OUT_TIMEOUT,
    OUT_CONNECT, /* DNS or TCP connect */
    OUT_TLS,
    OUT_IO,       /* reset or closed mid-answer */
    OUT_PROTOCOL, /* malformed HTTP */
    OUT_COUNT,
} outcome_t;

#define TALLY_HTTP_STATUSES 600

typedef struct tally_s {
    uint64_t sent; /* measured requests sent (after warmup) */
    uint64_t outcomes[OUT_COUNT];
    uint64_t http_status[TALLY_HTTP_STATUSES]; /* OUT_HTTP_ERROR by status */
    uint64_t completed_in_window;
    uint64_t unfinished; /* still unanswered when the run gave up waiting */
    adm_hist_t hist;     /* answered requests (any HTTP answer) */
} tally_t;

/* One loop's own CPU (user + system of its thread) and the wall time it was measured over. */
typedef struct thread_usage_s {
    uint64_t cpu_ns, wall_ns;
} thread_usage_t;

/* Above this share of its wall time on the CPU, a loop, not the server, sets the pace. */
#define THREAD_BUSY_LIMIT 0.90

/** The outcome's name in the reports ("allowed", "http_error", ...). */
const char *outcome_name(outcome_t o);

void tally_init(tally_t *t);

/** Adds from into into: every count summed, the histograms merged. */
void tally_merge(tally_t *into, const tally_t *from);

/** Requests that were neither allowed nor denied. */
uint64_t tally_errors(const tally_t *t);

/** The share (0..) of its wall time a thread was on the CPU; 0 when no time was measured. */
double thread_busy(const thread_usage_t *u);

#endif

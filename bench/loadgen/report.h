/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What admitd-bench prints and writes after a run: the text summary, the JSON document (with the
 * full histogram) and the self-contained HTML page with a latency-by-percentile plot.
 */
#ifndef ADM_BENCH_REPORT_H
#define ADM_BENCH_REPORT_H

#include "tally.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One loop's share of the run. */
typedef struct thread_report_s {
    uint64_t sent, answered;
    thread_usage_t usage;
} thread_report_t;

typedef struct report_s {
    const char *url;
    bool closed;
    double rate;
    uint64_t connections;
    double duration_s, warmup_s;
    const char *reviews;
    size_t nreviews;
    const tally_t *tally; /* every thread's, summed */
    size_t nthreads;
    const thread_report_t *threads;
    double throughput;  /* answers per second inside the measured window */
    double cpu_percent; /* admitd-bench's own CPU, user + system, of one core */
} report_t;

void report_text(const report_t *r, FILE *out);

/**
 * Writes the JSON or HTML report to f (opened before the run, so an unwritable path is found at
 * once) and closes it; returns 0 or -1 (errno set).
 */
int report_json(const report_t *r, FILE *f);
int report_html(const report_t *r, FILE *f);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What admitd-bench prints and writes after a run: the text summary, the JSON document (with the
 * full histogram) and the self-contained HTML page with a latency-by-percentile plot.
 */
#ifndef ADM_BENCH_REPORT_H
#define ADM_BENCH_REPORT_H

#include "adm/base/histogram.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

typedef struct report_s {
    const char *url;
    bool closed;
    double rate;
    uint64_t connections;
    double duration_s, warmup_s;
    const char *reviews;
    size_t nreviews;
    uint64_t sent; /* measured requests sent (after warmup) */
    uint64_t outcomes[OUT_COUNT];
    uint64_t http_status[600]; /* OUT_HTTP_ERROR by status */
    uint64_t completed_in_window;
    uint64_t unfinished;    /* still unanswered when the run gave up waiting */
    double throughput;      /* answers per second inside the measured window */
    double cpu_percent;     /* admitd-bench's own CPU, user + system, of one core */
    const adm_hist_t *hist; /* answered requests (any HTTP answer) */
} report_t;

const char *outcome_name(outcome_t o);

void report_text(const report_t *r, FILE *out);

/**
 * Writes the JSON or HTML report to f (opened before the run, so an unwritable path is found at
 * once) and closes it; returns 0 or -1 (errno set).
 */
int report_json(const report_t *r, FILE *f);
int report_html(const report_t *r, FILE *f);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prometheus metrics for the server core, rendered in the text exposition format:
 *   admitd_requests_total{endpoint,code}            counter
 *   admitd_request_duration_seconds{endpoint}       histogram, first byte of a request to its answer
 *   admitd_connections{side="server"}              gauge
 * Names and labels are those of ../shared/INTERFACE.md. Every HTTP status code (100-599) is counted
 * under its own code label, in a fixed slot per code, so the number of series is bounded by the
 * codes HTTP has, not by what a request can provoke; a status outside that range (none is sent
 * today) is counted under code="other". Recording is a few array updates: no allocation and no
 * locking (one loop per process).
 *
 * The endpoint labels are not known here: each route the server serves brings its own
 * (adm_metrics_endpoint, once at start-up), and a request that reaches no route counts under
 * endpoint="other", the last slot.
 */
#ifndef ADM_METRICS_H
#define ADM_METRICS_H

#include "adm/base/buf.h"

#include <stddef.h>
#include <stdint.h>

#define ADM_METRICS_BUCKETS 16
#define ADM_METRICS_CODE_MIN 100
#define ADM_METRICS_CODE_MAX 599
/* One slot per valid HTTP status code (slot code - 100), then one for code="other". */
#define ADM_METRICS_CODE_OTHER (ADM_METRICS_CODE_MAX - ADM_METRICS_CODE_MIN + 1)
#define ADM_METRICS_CODE_SLOTS (ADM_METRICS_CODE_OTHER + 1)

/* Endpoint label slots: one for each route a server can have (ADM_ROUTES_MAX), and "other". */
#define ADM_METRICS_ENDPOINTS 17
/* The slot of endpoint="other": unknown paths and requests refused before a route was chosen. */
#define ADM_METRICS_OTHER (ADM_METRICS_ENDPOINTS - 1)

/* All zero is an empty set of metrics with no label but "other". */
typedef struct adm_metrics_s {
    const char *endpoints[ADM_METRICS_ENDPOINTS]; /* label of each slot in the order added; NULL: free */
    uint64_t codes[ADM_METRICS_ENDPOINTS][ADM_METRICS_CODE_SLOTS]; /* requests answered, by code slot */
    uint64_t buckets[ADM_METRICS_ENDPOINTS][ADM_METRICS_BUCKETS];  /* non-cumulative counts per bucket */
    uint64_t over[ADM_METRICS_ENDPOINTS];                          /* above the last bound */
    uint64_t count[ADM_METRICS_ENDPOINTS];
    double sum_seconds[ADM_METRICS_ENDPOINTS];
    int64_t server_connections;
} adm_metrics_t;

/**
 * The slot of an endpoint label, added after the others when new; NULL and "other" are
 * ADM_METRICS_OTHER. The label is kept, not copied: it must outlive m. A label is written as it is,
 * so it takes letters, digits, '_' and '-' only. Returns the slot, ADM_EINVAL for a label with
 * other characters or ADM_ETOOBIG when every slot is taken.
 */
int adm_metrics_endpoint(adm_metrics_t *m, const char *label);

/** Counts one answered request: its endpoint slot (ep), HTTP status and duration in nanoseconds. */
void adm_metrics_observe(adm_metrics_t *m, unsigned ep, int code, uint64_t duration_ns);

/**
 * Adds m's counts into sum, endpoint by endpoint label (labels sum lacks are added to it), and its
 * open connections: the workers' sum that a scrape renders under --workers (D12).
 */
void adm_metrics_add(adm_metrics_t *sum, const adm_metrics_t *m);

/**
 * Appends the text exposition: endpoints in the order their labels were added, "other" last.
 * Returns 0 or ADM_ENOMEM.
 */
int adm_metrics_render(const adm_metrics_t *m, adm_buf_t *out);

#endif

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
 */
#ifndef ADM_METRICS_H
#define ADM_METRICS_H

#include "adm/base/buf.h"

#include <stddef.h>
#include <stdint.h>

typedef enum adm_endpoint_e {
    ADM_EP_MUTATE,
    ADM_EP_VALIDATE,
    ADM_EP_ADMIT,
    ADM_EP_HEALTHZ,
    ADM_EP_LIVEZ,
    ADM_EP_READYZ,
    ADM_EP_METRICS,
    ADM_EP_OTHER, /* unknown paths and requests refused before routing */
    ADM_EP_COUNT,
} adm_endpoint_t;

#define ADM_METRICS_BUCKETS 16
#define ADM_METRICS_CODE_MIN 100
#define ADM_METRICS_CODE_MAX 599
/* One slot per valid HTTP status code (slot code - 100), then one for code="other". */
#define ADM_METRICS_CODE_OTHER (ADM_METRICS_CODE_MAX - ADM_METRICS_CODE_MIN + 1)
#define ADM_METRICS_CODE_SLOTS (ADM_METRICS_CODE_OTHER + 1)

typedef struct adm_metrics_s {
    uint64_t codes[ADM_EP_COUNT][ADM_METRICS_CODE_SLOTS]; /* requests answered, by status code slot */
    uint64_t buckets[ADM_EP_COUNT][ADM_METRICS_BUCKETS]; /* non-cumulative counts per bucket */
    uint64_t over[ADM_EP_COUNT];                         /* above the last bound */
    uint64_t count[ADM_EP_COUNT];
    double sum_seconds[ADM_EP_COUNT];
    int64_t server_connections;
} adm_metrics_t;

/** Label value of an endpoint ("validate", ..., "other"). */
const char *adm_endpoint_name(adm_endpoint_t ep);

/** Counts one answered request: its endpoint, HTTP status and duration in nanoseconds. */
void adm_metrics_observe(adm_metrics_t *m, adm_endpoint_t ep, int code, uint64_t duration_ns);

/** Appends the text exposition. Returns 0 or ADM_ENOMEM. */
int adm_metrics_render(const adm_metrics_t *m, adm_buf_t *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Counters and histograms of the server core, and their Prometheus text rendering. */
#include "adm/server/metrics.h"

#include "adm/base/error.h"

#include <stdbool.h>
#include <string.h>

/* Upper bounds in seconds: 100 µs to 10 s, where admission latencies live (kube-apiserver's own
   webhook histogram spans 5 ms to 2.5 s; admitd's answers are mostly far below 5 ms). */
static const double bucket_bounds[ADM_METRICS_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
};

/* Label values are written without escaping: keep them to characters that never need it. */
static bool is_plain_label(const char *label)
{
    if (*label == '\0') {
        return false;
    }
    for (const char *p = label; *p != '\0'; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                  *p == '_' || *p == '-';

        if (!ok) {
            return false;
        }
    }
    return true;
}

int adm_metrics_endpoint(adm_metrics_t *m, const char *label)
{
    int slot;

    if (label == NULL || strcmp(label, "other") == 0) {
        return ADM_METRICS_OTHER;
    }
    if (!is_plain_label(label)) {
        return ADM_EINVAL;
    }
    for (slot = 0; slot < ADM_METRICS_OTHER && m->endpoints[slot] != NULL; slot++) {
        if (strcmp(m->endpoints[slot], label) == 0) {
            return slot;
        }
    }
    if (slot == ADM_METRICS_OTHER) {
        return ADM_ETOOBIG;
    }
    m->endpoints[slot] = label;
    return slot;
}

static const char *endpoint_name(const adm_metrics_t *m, int ep)
{
    return ep == ADM_METRICS_OTHER ? "other" : m->endpoints[ep];
}

void adm_metrics_observe(adm_metrics_t *m, unsigned ep, int code, uint64_t duration_ns)
{
    double seconds = (double)duration_ns / 1e9;
    int i;

    if (ep >= ADM_METRICS_ENDPOINTS || endpoint_name(m, (int)ep) == NULL) {
        ep = ADM_METRICS_OTHER;
    }
    if (code >= ADM_METRICS_CODE_MIN && code <= ADM_METRICS_CODE_MAX) {
        m->codes[ep][code - ADM_METRICS_CODE_MIN]++;
    } else {
        m->codes[ep][ADM_METRICS_CODE_OTHER]++;
    }

    for (i = 0; i < ADM_METRICS_BUCKETS; i++) {
        if (seconds <= bucket_bounds[i]) {
            m->buckets[ep][i]++;
            break;
        }
    }
    if (i == ADM_METRICS_BUCKETS) {
        m->over[ep]++;
    }
    m->count[ep]++;
    m->sum_seconds[ep] += seconds;
}

int adm_metrics_render(const adm_metrics_t *m, adm_buf_t *out)
{
    int err = 0;

    err |= adm_buf_append_str(
        out, "# HELP admitd_requests_total HTTP requests answered, by endpoint and status code.\n"
             "# TYPE admitd_requests_total counter\n");
    /* Only codes seen are written: a scrape lists a handful of series, not 500 zeros per endpoint. */
    for (int ep = 0; ep < ADM_METRICS_ENDPOINTS; ep++) {
        const char *name = endpoint_name(m, ep);

        if (name == NULL) {
            continue;
        }
        for (int i = 0; i < ADM_METRICS_CODE_OTHER; i++) {
            if (m->codes[ep][i] != 0) {
                err |= adm_buf_appendf(out, "admitd_requests_total{endpoint=\"%s\",code=\"%d\"} %llu\n", name,
                                       i + ADM_METRICS_CODE_MIN, (unsigned long long)m->codes[ep][i]);
            }
        }
        if (m->codes[ep][ADM_METRICS_CODE_OTHER] != 0) {
            err |= adm_buf_appendf(out, "admitd_requests_total{endpoint=\"%s\",code=\"other\"} %llu\n", name,
                                   (unsigned long long)m->codes[ep][ADM_METRICS_CODE_OTHER]);
        }
    }
    err |= adm_buf_append_str(
        out, "# HELP admitd_request_duration_seconds Time from a request's first byte to its answer.\n"
             "# TYPE admitd_request_duration_seconds histogram\n");
    for (int ep = 0; ep < ADM_METRICS_ENDPOINTS; ep++) {
        const char *name = endpoint_name(m, ep);
        uint64_t cumulative = 0;

        if (m->count[ep] == 0) {
            continue;
        }
        for (int i = 0; i < ADM_METRICS_BUCKETS; i++) {
            cumulative += m->buckets[ep][i];
            err |= adm_buf_appendf(out,
                                   "admitd_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
                                   name, bucket_bounds[i], (unsigned long long)cumulative);
        }
        err |= adm_buf_appendf(out,
                               "admitd_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n"
                               "admitd_request_duration_seconds_sum{endpoint=\"%s\"} %.9g\n"
                               "admitd_request_duration_seconds_count{endpoint=\"%s\"} %llu\n",
                               name, (unsigned long long)m->count[ep], name, m->sum_seconds[ep], name,
                               (unsigned long long)m->count[ep]);
    }
    err |= adm_buf_appendf(out,
                           "# HELP admitd_connections Open connections.\n"
                           "# TYPE admitd_connections gauge\n"
                           "admitd_connections{side=\"server\"} %lld\n",
                           (long long)m->server_connections);
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_metrics_add(adm_metrics_t *sum, const adm_metrics_t *m)
{
    for (int ep = 0; ep < ADM_METRICS_ENDPOINTS; ep++) {
        const char *name = endpoint_name(m, ep);
        int to = name != NULL ? adm_metrics_endpoint(sum, name) : ADM_EINVAL;

        if (to < 0) {
            continue;
        }
        for (int i = 0; i < ADM_METRICS_CODE_SLOTS; i++) {
            sum->codes[to][i] += m->codes[ep][i];
        }
        for (int i = 0; i < ADM_METRICS_BUCKETS; i++) {
            sum->buckets[to][i] += m->buckets[ep][i];
        }
        sum->over[to] += m->over[ep];
        sum->count[to] += m->count[ep];
        sum->sum_seconds[to] += m->sum_seconds[ep];
    }
    sum->server_connections += m->server_connections;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metric families of what admitd adds to kube-apiserver's webhook dispatch (webhooks.h
 * adm_webhooks_proxy_metrics): each webhook's circuit breaker, each shadow webhook's outcomes,
 * patches and latency, and the calls of each address of an upstream spread over several. Rendered from state
 * the calls keep anyway, at scrape time; registered with the server by main.c, so the server's own metrics
 * module needs to know nothing of webhooks.
 */
#include "adm/base/error.h"
#include "webhooks_internal.h"

#include <stdio.h>

static const char *const types[2] = {"admit", "validating"};

static int family_head(adm_buf_t *out, const char *name, const char *type, const char *help)
{
    return adm_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int breaker_families(adm_webhooks_t *w, adm_buf_t *out, const adm_webhook_t *const lists[2],
                            const size_t counts[2])
{
    static const char *const families[3][3] = {
        {"admitd_webhook_circuit_state", "gauge",
         "Circuit breaker of a downstream webhook: 0 closed, 1 open, 2 half-open."},
        {"admitd_webhook_circuit_opened_total", "counter", "Times the webhook's circuit opened."},
        {"admitd_webhook_circuit_refused_total", "counter",
         "Calls failed at once while the circuit was open."},
    };
    bool any = false;
    int err = 0;

    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            any = any || w->clients[t][i].breaker.threshold > 0;
        }
    }
    for (int f = 0; any && f < 3; f++) {
        err |= family_head(out, families[f][0], families[f][1], families[f][2]);
        for (int t = 0; t < 2; t++) {
            for (size_t i = 0; i < counts[t]; i++) {
                const adm_breaker_t *b = &w->clients[t][i].breaker;
                uint64_t v = f == 0 ? (uint64_t)b->state : f == 1 ? b->opened : b->refused;

                if (b->threshold > 0) {
                    err |= adm_buf_appendf(out, "%s{name=\"%s\",type=\"%s\"} %llu\n", families[f][0],
                                           lists[t][i].name, types[t], (unsigned long long)v);
                }
            }
        }
    }
    return err;
}

static int shadow_families(adm_webhooks_t *w, adm_buf_t *out, const adm_webhook_t *const lists[2],
                           const size_t counts[2])
{
    static const char *const outcomes[4] = {"allowed", "denied", "failed", "refused"};
    bool any = false;
    int err = 0;

    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            any = any || lists[t][i].shadow;
        }
    }
    if (!any) {
        return 0;
    }
    err |= family_head(out, "admitd_webhook_shadow_calls_total", "counter",
                       "Results of shadow webhooks (called, never deciding), by outcome.");
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            for (int o = 0; lists[t][i].shadow && o < 4; o++) {
                err |= adm_buf_appendf(
                    out, "admitd_webhook_shadow_calls_total{name=\"%s\",type=\"%s\",outcome=\"%s\"} %llu\n",
                    lists[t][i].name, types[t], outcomes[o],
                    (unsigned long long)w->clients[t][i].stats.outcomes[o]);
            }
        }
    }
    err |= family_head(out, "admitd_webhook_shadow_patches_total", "counter",
                       "Patches from shadow webhooks, recorded and not applied.");
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            if (lists[t][i].shadow) {
                err |= adm_buf_appendf(
                    out, "admitd_webhook_shadow_patches_total{name=\"%s\",type=\"%s\"} %llu\n",
                    lists[t][i].name, types[t], (unsigned long long)w->clients[t][i].stats.shadow_patches);
            }
        }
    }
    err |= family_head(out, "admitd_webhook_shadow_latency_seconds", "summary",
                       "Latency of shadow webhook calls since start.");
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            const adm_hook_stats_t *st = &w->clients[t][i].stats;

            if (!lists[t][i].shadow) {
                continue;
            }
            err |= adm_buf_appendf(
                out,
                "admitd_webhook_shadow_latency_seconds{name=\"%s\",type=\"%s\",quantile=\"0.5\"} %.6f\n"
                "admitd_webhook_shadow_latency_seconds{name=\"%s\",type=\"%s\",quantile=\"0.99\"} %.6f\n"
                "admitd_webhook_shadow_latency_seconds_count{name=\"%s\",type=\"%s\"} %llu\n",
                lists[t][i].name, types[t], (double)adm_hist_quantile(&st->latency, 0.5) / 1e9,
                lists[t][i].name, types[t], (double)adm_hist_quantile(&st->latency, 0.99) / 1e9,
                lists[t][i].name, types[t], (unsigned long long)st->calls);
        }
    }
    return err;
}

/* Upstreams spread over several addresses, or over a Service's endpoints: calls sent to each, and
   those outstanding now. */
static int endpoint_families(adm_webhooks_t *w, adm_buf_t *out)
{
    bool any = false;
    int err = 0;

    for (size_t i = 0; i < w->nupstreams; i++) {
        any = any || w->upstreams[i].nendpoints > 1 || w->upstreams[i].routed;
    }
    for (int f = 0; any && f < 2; f++) {
        const char *name =
            f == 0 ? "admitd_webhook_endpoint_calls_total" : "admitd_webhook_endpoint_outstanding";

        err |= family_head(out, name, f == 0 ? "counter" : "gauge",
                           f == 0 ? "Calls sent to each address of an upstream spread over several."
                                  : "Calls outstanding at each address of an upstream spread over several.");
        for (size_t i = 0; i < w->nupstreams; i++) {
            const adm_hook_upstream_t *u = &w->upstreams[i];

            for (size_t k = 0; (u->nendpoints > 1 || u->routed) && k < u->nendpoints; k++) {
                if (u->endpoints[k].up == NULL) {
                    continue; /* a removed address, drained */
                }
                err |= adm_buf_appendf(out, "%s{upstream=\"%s:%u\",address=\"%s\"} %llu\n", name, u->host,
                                       (unsigned)u->port, u->endpoints[k].address,
                                       (unsigned long long)(f == 0 ? u->endpoints[k].calls
                                                                   : (uint64_t)u->endpoints[k].outstanding));
            }
        }
    }
    return err;
}

int adm_webhooks_proxy_metrics(void *arg, adm_buf_t *out)
{
    adm_webhooks_t *w = arg;
    const adm_webhook_t *const lists[2] = {w->set->mutating, w->set->validating};
    const size_t counts[2] = {w->set->nmutating, w->set->nvalidating};
    int err = breaker_families(w, out, lists, counts);

    err |= shadow_families(w, out, lists, counts);
    err |= endpoint_families(w, out);
    return err != 0 ? ADM_ENOMEM : 0;
}

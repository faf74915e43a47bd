/* SPDX-License-Identifier: Apache-2.0 */
/* Webhook call results into the metrics and the decision trace (observe.h). */
#include "adm/webhook/observe.h"

#include "adm/base/admission_metrics.h"
#include "adm/base/json.h"
#include "webhooks_internal.h"

static const char *const verdict_names[] = {"allowed",     "patched",       "denied",
                                            "failed-open", "failed-closed", "error"};

adm_hook_verdict_t adm_hook_verdict(const adm_webhook_t *wh, const adm_hook_result_t *r)
{
    switch (r->outcome) {
    case ADM_HOOK_ALLOWED: return ADM_VERDICT_ALLOWED;
    case ADM_HOOK_DENIED: return ADM_VERDICT_DENIED;
    case ADM_HOOK_FAILED:
        return wh->failure_policy == ADM_FAILURE_IGNORE ? ADM_VERDICT_FAILED_OPEN : ADM_VERDICT_FAILED_CLOSED;
    default: return ADM_VERDICT_ERROR;
    }
}

static void observe(adm_trace_t *trace, const adm_webhook_t *wh, adm_operation_t op, unsigned round,
                    const adm_hook_result_t *r, adm_hook_verdict_t v, const char *failure,
                    const adm_status_t *st)
{
    adm_mx_type_t type = wh->type == ADM_WEBHOOK_MUTATING ? ADM_MX_ADMIT : ADM_MX_VALIDATE;
    bool rejected = v == ADM_VERDICT_DENIED || v == ADM_VERDICT_FAILED_CLOSED || v == ADM_VERDICT_ERROR;
    int name = adm_metrics_name(wh->name);
    adm_trace_step_t step = {
        .name = wh->name,
        .outcome = verdict_names[v],
        .latency_ns = r->latency_ns,
        .webhook = true,
        .validate = type == ADM_MX_VALIDATE,
        .round = round,
        .circuit = r->circuit,
    };

    adm_metrics_webhook(name, type, (unsigned)op, rejected, r->latency_ns);
    /* kube-apiserver's error_type and rejection_code: a denial keeps its code; a call failure is
       the 500 admitd answers with; anything else is an internal error with code 0 */
    if (v == ADM_VERDICT_DENIED) {
        adm_metrics_webhook_rejection(name, type, (unsigned)op, ADM_MX_NO_ERROR, st->code);
    } else if (v == ADM_VERDICT_FAILED_CLOSED) {
        adm_metrics_webhook_rejection(name, type, (unsigned)op, ADM_MX_CALLING_WEBHOOK_ERROR, 500);
    } else if (v == ADM_VERDICT_ERROR) {
        adm_metrics_webhook_rejection(name, type, (unsigned)op, ADM_MX_APISERVER_INTERNAL_ERROR, 0);
    } else if (v == ADM_VERDICT_FAILED_OPEN) {
        adm_metrics_webhook_fail_open(name, type);
    }
    if (trace == NULL) {
        return;
    }
    if (v == ADM_VERDICT_FAILED_OPEN || v == ADM_VERDICT_FAILED_CLOSED) {
        step.reason = failure != NULL ? failure : r->reason;
        step.code = v == ADM_VERDICT_FAILED_CLOSED ? 500 : 0;
    } else if (rejected) {
        step.reason = st->message;
        step.code = st->code;
    }
    adm_trace_add(trace, &step);
    if (rejected) {
        adm_trace_decided_by(trace, wh->name);
    }
}

void adm_hook_observe(adm_trace_t *trace, const adm_webhook_t *wh, adm_operation_t op, unsigned round,
                      const adm_hook_result_t *r, adm_hook_verdict_t v, const char *failure)
{
    observe(trace, wh, op, round, r, v, failure, &r->status);
}

void adm_hook_observe_status(adm_trace_t *trace, const adm_webhook_t *wh, adm_operation_t op, unsigned round,
                             const adm_hook_result_t *r, const adm_status_t *st)
{
    observe(trace, wh, op, round, r, ADM_VERDICT_ERROR, NULL, st);
}

void adm_hook_observe_shadow(adm_trace_t *trace, adm_arena_t *a, const adm_webhook_t *wh, unsigned round,
                             const adm_hook_result_t *r)
{
    static const char *const would[] = {"allowed", "denied", "failed", "error"};
    adm_trace_step_t step = {
        .name = wh->name,
        .outcome = would[r->outcome],
        .latency_ns = r->latency_ns,
        .webhook = true,
        .validate = wh->type != ADM_WEBHOOK_MUTATING,
        .round = round,
        .circuit = r->circuit,
        .shadow = true,
    };

    if (trace == NULL) {
        return;
    }
    if (r->outcome == ADM_HOOK_FAILED) {
        step.reason = r->reason;
    } else if (r->outcome != ADM_HOOK_ALLOWED) {
        step.reason = r->status.message;
        step.code = r->status.code;
    } else if (r->patch != NULL && yyjson_arr_size(r->patch) > 0) {
        yyjson_alc alc;

        adm_json_alc_init(&alc, a);
        step.outcome = "patched";
        step.patch = yyjson_val_write_opts(r->patch, 0, &alc, NULL, NULL);
    }
    adm_trace_add(trace, &step); /* never the decider */
}

size_t adm_webhooks_retiring_connections(adm_webhooks_t *const *retiring)
{
    size_t n = 0;

    for (adm_webhooks_t *w = *retiring; w != NULL; w = w->retiring_next) {
        n += adm_webhooks_connections(w);
    }
    return n;
}

size_t adm_webhooks_connections(void *arg)
{
    const adm_webhooks_t *w = arg;
    size_t n = 0;

    for (size_t i = 0; w != NULL && i < w->nupstreams; i++) {
        for (size_t e = 0; e < w->upstreams[i].nendpoints; e++) {
            const adm_hook_endpoint_t *ep = &w->upstreams[i].endpoints[e];

            n += ep->up != NULL ? adm_upstream_connections(ep->up) : 0;
        }
    }
    return n;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one downstream webhook call came to, recorded where operators look: the admitd_webhook_*
 * metrics (adm/base/admission_metrics.h) and the request's decision trace (adm/admission/trace.h).
 * The webhook plugins call it once per result they act on, and the late-answer path once per
 * answer that arrived after its request was decided, so every call is counted once.
 */
#ifndef ADM_WEBHOOK_OBSERVE_H
#define ADM_WEBHOOK_OBSERVE_H

#include "adm/admission/trace.h"
#include "adm/webhook/webhooks.h"

#include <stddef.h>

typedef enum adm_hook_verdict_e {
    ADM_VERDICT_ALLOWED,
    ADM_VERDICT_PATCHED,       /* allowed, and its patch changed the object */
    ADM_VERDICT_DENIED,        /* the webhook's denial */
    ADM_VERDICT_FAILED_OPEN,   /* a call failure under failurePolicy Ignore */
    ADM_VERDICT_FAILED_CLOSED, /* a call failure under failurePolicy Fail */
    ADM_VERDICT_ERROR,         /* a rejection failurePolicy does not apply to (dry run, bad patch) */
} adm_hook_verdict_t;

/** What r means for wh before any patch is applied. */
adm_hook_verdict_t adm_hook_verdict(const adm_webhook_t *wh, const adm_hook_result_t *r);

/**
 * Records r (the result of a call to wh about a request of operation op, in reinvocation round)
 * as verdict v: the duration histogram, a rejection or a fail-open count, and a step in trace
 * (NULL: none) naming wh as the decider when v rejects. failure: the failure's reason when it is
 * not r->reason (a patch type refused); a denial's Status is r->status.
 */
void adm_hook_observe(adm_trace_t *trace, const adm_webhook_t *wh, adm_operation_t op, unsigned round,
                      const adm_hook_result_t *r, adm_hook_verdict_t v, const char *failure);

/** The same, for a rejection whose Status is st (a patch that could not be applied). */
void adm_hook_observe_status(adm_trace_t *trace, const adm_webhook_t *wh, adm_operation_t op, unsigned round,
                             const adm_hook_result_t *r, const adm_status_t *st);

/**
 * A shadow webhook's result as a step of trace (NULL: nothing), marked shadow: the outcome it would
 * have had ("allowed", "patched" with its patch, "denied" with code and message, "failed" with the
 * reason), which decided nothing. Memory for the patch's text from a.
 */
void adm_hook_observe_shadow(adm_trace_t *trace, adm_arena_t *a, const adm_webhook_t *wh, unsigned round,
                             const adm_hook_result_t *r);

/** Open downstream connections of w (an adm_webhooks_t): the admitd_connections{side="client"} source. */
size_t adm_webhooks_connections(void *w);

/** The same, summed over a list of retired webhooks still finishing calls (adm_webhooks_retire). */
size_t adm_webhooks_retiring_connections(adm_webhooks_t *const *retiring);

#endif

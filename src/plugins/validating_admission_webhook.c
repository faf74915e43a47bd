/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ValidatingAdmissionWebhook: every matching validating webhook is called at once, on the final
 * object, and the request is answered as soon as the outcome is decided (Decision D3): the first
 * denial or fail-closed failure to arrive, or else once all have allowed. Matching for every hook
 * comes first, so a selector error (an unknown namespace) aborts before any call (spec 1.4, 7).
 * Fail-open failures are recorded as audit annotations indexed among the matched webhooks. Calls
 * still running when the request is decided go on in the background; their answers are counted
 * and logged (webhook_call.c), not merged. A shadow webhook is called and waited for like the
 * others, but its answer never decides: it only leaves its audit annotation
 * (shadow.validating.webhook.admitd.io.round_0_index_I, I among the matched webhooks).
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/webhook/match.h"
#include "adm/webhook/observe.h"
#include "adm/webhook/webhooks.h"

#include <string.h>

typedef struct fanout_s {
    adm_webhooks_t *w;
    adm_attrs_t *attrs;
    adm_async_t *async;
    const adm_webhook_t **hooks; /* the matched ones, in hook-list order */
    const char **convert;        /* per matched hook: a matchPolicy Equivalent failure reason, or NULL */
    adm_hook_call_t **calls;
    adm_hook_result_t *results;
    bool *answered;
    const char **shadow_notes; /* per matched shadow webhook: its annotation value, once answered */
    size_t n, outstanding;
    bool decided;
    adm_hook_body_t body;
} fanout_t;

typedef struct slot_s {
    fanout_t *f;
    size_t i;
} slot_t;

static void abandon_all(fanout_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!f->answered[i]) {
            adm_hook_call_abandon(f->calls[i]);
        }
    }
}

static void on_cancel(void *arg)
{
    fanout_t *f = arg;

    f->decided = true;
    abandon_all(f);
}

/*
 * What the answer carries from the webhooks that have answered, in webhook order: their warnings
 * and annotations, and the fail-open annotation of each ignored failure. kube-apiserver records
 * these as each call ends and keeps them whatever the outcome; admitd answers at the first denial
 * (D3), so it keeps those that arrived before it, the denial's own included.
 */
static void merge_answered(fanout_t *f)
{
    adm_attrs_t *attrs = f->attrs;

    for (size_t i = 0; i < f->n; i++) {
        adm_hook_result_t *r = &f->results[i];

        if (!f->answered[i]) {
            continue;
        }
        if (f->hooks[i]->shadow) {
            /* its answer decides nothing and adds nothing to the answer but this record */
            const char *key =
                adm_hook_annotation_key(attrs->arena, "shadow.validating.webhook.admitd.io", 0, i);

            if (key != NULL && f->shadow_notes[i] != NULL) {
                adm_hook_add_annotation(attrs->arena, &attrs->annotations, &attrs->nannotations,
                                        &attrs->annotations_cap, key, f->shadow_notes[i]);
            }
            continue;
        }
        adm_hook_merge_extras(attrs, r);
        if (r->outcome == ADM_HOOK_FAILED && f->hooks[i]->failure_policy == ADM_FAILURE_IGNORE) {
            adm_hook_add_annotation(
                attrs->arena, &attrs->annotations, &attrs->nannotations, &attrs->annotations_cap,
                adm_hook_annotation_key(attrs->arena, "failed-open.validating.webhook.admission.k8s.io", 0,
                                        i),
                f->hooks[i]->name);
        }
    }
}

static void decide(fanout_t *f, int rc, const adm_status_t *st)
{
    f->decided = true;
    merge_answered(f);
    abandon_all(f);
    adm_async_done(f->async, rc, st);
}

static void on_result(fanout_t *f, size_t i, adm_hook_result_t *res)
{
    const adm_webhook_t *wh = f->hooks[i];
    adm_status_t st = {0};

    f->answered[i] = true;
    f->outstanding--;
    f->results[i] = *res;
    if (wh->shadow) {
        f->shadow_notes[i] = adm_hook_shadow_note(f->w, f->attrs->arena, wh, res);
        adm_hook_observe_shadow(f->attrs->trace, f->attrs->arena, wh, 0, res);
        if (!f->decided && f->outstanding == 0) {
            decide(f, ADM_OK, NULL);
        }
        return;
    }
    if (f->decided) {
        return;
    }
    adm_hook_stats_count(adm_webhooks_stats(f->w, wh), wh, res);
    adm_hook_observe(f->attrs->trace, wh, f->attrs->req->operation, 0, res, adm_hook_verdict(wh, res), NULL);
    if (res->outcome == ADM_HOOK_FAILED && wh->failure_policy == ADM_FAILURE_IGNORE) {
        adm_log_v(1, "validating webhook %s failed open: %s", wh->name, res->reason);
    } else if (res->outcome == ADM_HOOK_FAILED) {
        adm_log_v(1, "validating webhook %s failed closed: %s", wh->name, res->reason);
        decide(f, adm_hook_failure_status(&st, f->attrs->arena, wh, res->reason), &st);
        return;
    } else if (res->outcome != ADM_HOOK_ALLOWED) {
        decide(f, ADM_DECLINED, &res->status);
        return;
    }
    if (f->outstanding == 0) {
        decide(f, ADM_OK, NULL);
    }
}

static void on_call_done(void *arg, adm_hook_result_t *res)
{
    slot_t *s = arg;

    on_result(s->f, s->i, res);
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    adm_webhooks_t *w = state;
    const adm_webhook_set_t *set = w != NULL ? adm_webhooks_set(w) : NULL;
    adm_arena_t *a = attrs->arena;
    adm_match_input_t in = {0};
    fanout_t *f;

    if (set == NULL || set->nvalidating == 0 || adm_webhook_request_exempt(attrs->req)) {
        return ADM_OK;
    }
    f = adm_arena_calloc(a, 1, sizeof(*f));
    if (f == NULL) {
        return adm_status_nomem(st);
    }
    f->hooks = adm_arena_calloc(a, set->nvalidating, sizeof(*f->hooks));
    f->convert = adm_arena_calloc(a, set->nvalidating, sizeof(*f->convert));
    if (f->hooks == NULL || f->convert == NULL) {
        return adm_status_nomem(st);
    }
    in.req = attrs->req;
    in.object = adm_attrs_object(attrs);
    in.old_object = attrs->req->old_object;
    in.cluster = adm_plugin_cluster(attrs);
    for (size_t i = 0; i < set->nvalidating; i++) {
        const char *reason = NULL;
        adm_wh_match_t m = adm_webhook_match(&set->validating[i], &in, a, st, &reason);

        if (m == ADM_WH_ERROR) {
            return ADM_DECLINED; /* not subject to failurePolicy, and before any call */
        }
        if (m == ADM_WH_SKIP) {
            continue;
        }
        f->convert[f->n] = m == ADM_WH_CONVERT ? reason : NULL;
        f->hooks[f->n++] = &set->validating[i];
    }
    if (f->n == 0) {
        return ADM_OK;
    }
    if (adm_plugin_now_ms(attrs) >= async->deadline_ms) {
        return adm_hook_timeout_status(st);
    }
    f->w = w;
    f->attrs = attrs;
    f->async = async;
    f->calls = adm_arena_calloc(a, f->n, sizeof(*f->calls));
    f->results = adm_arena_calloc(a, f->n, sizeof(*f->results));
    f->answered = adm_arena_calloc(a, f->n, sizeof(*f->answered));
    f->shadow_notes = adm_arena_calloc(a, f->n, sizeof(*f->shadow_notes));
    if (f->calls == NULL || f->results == NULL || f->answered == NULL || f->shadow_notes == NULL) {
        return adm_status_nomem(st);
    }
    adm_hook_body_init(&f->body, in.object);
    f->outstanding = f->n;
    async->cancel = on_cancel;
    async->cancel_arg = f;
    for (size_t i = 0; i < f->n && !f->decided; i++) {
        adm_hook_result_t now;
        slot_t *slot = adm_arena_alloc(a, sizeof(*slot));

        if (slot == NULL) {
            decide(f, adm_status_nomem(st), st);
            break;
        }
        slot->f = f;
        slot->i = i;
        if (f->convert[i] != NULL) {
            memset(&now, 0, sizeof(now));
            now.outcome = ADM_HOOK_FAILED;
            now.reason = f->convert[i];
            on_result(f, i, &now);
            continue;
        }
        f->calls[i] = adm_hook_call_start(w, f->hooks[i], attrs->req, &f->body, a, async->deadline_ms,
                                          on_call_done, slot, &now);
        if (f->calls[i] == NULL) {
            on_result(f, i, &now);
        }
    }
    return ADM_AGAIN;
}

const adm_plugin_t adm_plugin_validating_admission_webhook = {
    .name = "ValidatingAdmissionWebhook",
    .operations = ADM_OPS_ALL,
    .configure = adm_webhooks_configure_validating, /* WebhookAdmissionConfiguration (D13) */
    .validate_async = validate_async,
};

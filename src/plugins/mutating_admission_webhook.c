/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MutatingAdmissionWebhook: matching mutating webhooks are called one after another, each on the
 * object as patched so far (spec 6.1). A patch is applied as kube-apiserver applies it (JSON Patch
 * with evanphx/json-patch v4 semantics, atomically); a patch that cannot be applied, or a patch
 * for an operation without an object, is a 500 whatever the failurePolicy.
 *
 * Reinvocation (spec 6.2, Decision D7): a webhook whose patch changes the object asks the chain
 * for a second round, and schedules every IfNeeded webhook called before it; in that round only
 * scheduled webhooks are called (never one for the first time), and if built-in plugins changed
 * the object after this plugin's first round, every IfNeeded webhook called so far is scheduled.
 *
 * A shadow webhook is called in its place on the object as patched so far, and its answer only
 * recorded (shadow.mutation.webhook.admitd.io.round_R_index_I): its patch is never applied, its
 * denial or failure never decides, and it schedules nothing.
 */
#include "adm/admission/jsonpatch.h"
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/log.h"
#include "adm/webhook/match.h"
#include "adm/webhook/observe.h"
#include "adm/webhook/webhooks.h"

#include <string.h>

/* Kept across the two rounds of one request, in the plugin's slot (adm_plugin_slot). */
typedef struct reinvoke_s {
    bool *scheduled;         /* per hook: call again in round 1 */
    bool *invoked_ifneeded;  /* IfNeeded hooks called since the last change */
    yyjson_val *last_output; /* the object when this plugin last finished */
} reinvoke_t;

typedef struct serial_s {
    adm_webhooks_t *w;
    const adm_webhook_set_t *set;
    adm_attrs_t *attrs;
    adm_async_t *async;
    reinvoke_t *ctx;
    size_t i;              /* the hook being called, then the next one to look at */
    adm_hook_call_t *call; /* outstanding, or NULL */
    adm_hook_body_t body;
    bool in_start; /* inside admit_async: results are handled by the loop itself */
} serial_t;

static void note_mutation(serial_t *s, const adm_webhook_t *wh, bool mutated)
{
    adm_attrs_t *attrs = s->attrs;
    const char *key = adm_hook_annotation_key(attrs->arena, "mutation.webhook.admission.k8s.io",
                                              s->async->round, wh->index);
    const char *value =
        adm_arena_printf(attrs->arena, "{\"configuration\":\"%s\",\"webhook\":\"%s\",\"mutated\":%s}",
                         wh->config_name, wh->name, mutated ? "true" : "false");

    if (key != NULL && value != NULL) {
        adm_hook_add_annotation(attrs->arena, &attrs->annotations, &attrs->nannotations,
                                &attrs->annotations_cap, key, value);
    }
}

/* Every IfNeeded webhook called since the last change is called again in round 1. */
static void schedule_previous(reinvoke_t *ctx, size_t nhooks)
{
    for (size_t k = 0; k < nhooks; k++) {
        if (ctx->invoked_ifneeded[k]) {
            ctx->scheduled[k] = true;
            ctx->invoked_ifneeded[k] = false;
        }
    }
}

/* Applies an allowed webhook's patch. Returns ADM_OK (with *mutated), or ADM_DECLINED with *st. */
static int apply_patch(serial_t *s, const adm_webhook_t *wh, const adm_hook_result_t *res, bool *mutated,
                       adm_status_t *st, const char **failure)
{
    adm_attrs_t *attrs = s->attrs;
    yyjson_val *view;
    yyjson_mut_doc *doc;
    yyjson_mut_val *root;
    yyjson_alc alc;
    const char *error = NULL, *diff;
    size_t len, nops = 0;
    int rc;

    *mutated = false;
    if (res->patch == NULL || yyjson_arr_size(res->patch) == 0) {
        return ADM_OK;
    }
    view = adm_attrs_object(attrs);
    if (attrs->req->object == NULL || view == NULL) {
        return adm_status_internal(
            st, attrs->arena,
            "admission webhook \"%s\" attempted to modify the object, which is not supported for "
            "this operation",
            wh->name);
    }
    if (res->patch_type == NULL || strcmp(res->patch_type, "JSONPatch") != 0) {
        *failure = adm_arena_printf(attrs->arena, "unsupported patch type \"%s\"",
                                    res->patch_type != NULL ? res->patch_type : "");
        return ADM_OK;
    }
    adm_json_alc_init(&alc, attrs->arena);
    doc = yyjson_mut_doc_new(&alc);
    root = doc != NULL ? adm_json_mut_share(doc, view) : NULL;
    if (root == NULL) {
        return adm_status_nomem(st);
    }
    yyjson_mut_doc_set_root(doc, root);
    rc = adm_jsonpatch_apply(doc, res->patch, ADM_JSONPATCH_KUBE, attrs->arena, &error);
    if (rc == ADM_ENOMEM) {
        return adm_status_nomem(st);
    }
    if (rc == ADM_ETOOBIG) {
        /* kube-apiserver applies the patch, then fails to decode the result */
        return adm_status_internal(st, attrs->arena, "couldn't get version/kind; json parse error: %s",
                                   error);
    }
    if (rc != 0) {
        return adm_status_internal(st, attrs->arena, "%s",
                                   error != NULL ? error : "the patch could not be applied");
    }
    if (adm_jsonpatch_diff(view, yyjson_mut_doc_get_root(doc), attrs->arena, &diff, &len, &nops) != 0) {
        return adm_status_nomem(st);
    }
    if (nops > 0) {
        adm_attrs_set_object(attrs, doc);
        *mutated = true;
    }
    return ADM_OK;
}

/*
 * One webhook's result. Returns ADM_OK to go on with the next hook, or ADM_DECLINED with *st (the
 * request is rejected).
 */
static int handle(serial_t *s, const adm_webhook_t *wh, adm_hook_result_t *res, adm_status_t *st)
{
    adm_attrs_t *attrs = s->attrs;
    const char *failure = res->outcome == ADM_HOOK_FAILED ? res->reason : NULL;
    bool mutated = false;
    int rc = ADM_OK;

    if (wh->shadow) {
        /* never decides and never patches: only its record (shadow.c) */
        const char *key = adm_hook_annotation_key(attrs->arena, "shadow.mutation.webhook.admitd.io",
                                                  s->async->round, wh->index);
        const char *value = adm_hook_shadow_note(s->w, attrs->arena, wh, res);

        adm_hook_observe_shadow(attrs->trace, attrs->arena, wh, s->async->round, res);

        if (key != NULL && value != NULL) {
            adm_hook_add_annotation(attrs->arena, &attrs->annotations, &attrs->nannotations,
                                    &attrs->annotations_cap, key, value);
        }
        return ADM_OK;
    }
    adm_hook_merge_extras(attrs, res);
    if (res->outcome == ADM_HOOK_DENIED || res->outcome == ADM_HOOK_ERROR) {
        adm_webhooks_stats(s->w, wh)->rejected++;
        adm_hook_observe(attrs->trace, wh, attrs->req->operation, s->async->round, res,
                         adm_hook_verdict(wh, res), NULL);
        note_mutation(s, wh, false);
        *st = res->status;
        return ADM_DECLINED;
    }
    if (res->outcome == ADM_HOOK_ALLOWED) {
        rc = apply_patch(s, wh, res, &mutated, st, &failure);
    }
    note_mutation(s, wh, mutated);
    if (rc != ADM_OK) {
        adm_webhooks_stats(s->w, wh)->rejected++; /* a patch that could not be applied */
        adm_hook_observe_status(attrs->trace, wh, attrs->req->operation, s->async->round, res, st);
        return rc;
    }
    if (mutated) {
        schedule_previous(s->ctx, s->set->nmutating);
        s->async->reinvoke = true;
    }
    if (wh->reinvocation == ADM_REINVOKE_IF_NEEDED) {
        s->ctx->invoked_ifneeded[wh->index] = true; /* after the change: a webhook never schedules itself */
    }
    if (failure != NULL) {
        adm_hook_observe(attrs->trace, wh, attrs->req->operation, s->async->round, res,
                         wh->failure_policy == ADM_FAILURE_FAIL ? ADM_VERDICT_FAILED_CLOSED
                                                                : ADM_VERDICT_FAILED_OPEN,
                         failure);
        if (wh->failure_policy == ADM_FAILURE_FAIL) {
            adm_webhooks_stats(s->w, wh)->rejected++;
            adm_log_v(1, "mutating webhook %s failed closed: %s", wh->name, failure);
            return adm_hook_failure_status(st, attrs->arena, wh, failure);
        }
        adm_webhooks_stats(s->w, wh)->failed_open++;
        adm_log_v(1, "mutating webhook %s failed open: %s", wh->name, failure);
        adm_hook_add_annotation(
            attrs->arena, &attrs->annotations, &attrs->nannotations, &attrs->annotations_cap,
            adm_hook_annotation_key(attrs->arena, "failed-open.mutation.webhook.admission.k8s.io",
                                    s->async->round, wh->index),
            wh->name);
        if (adm_plugin_now_ms(attrs) >= s->async->deadline_ms) {
            return adm_hook_timeout_status(st);
        }
    } else {
        adm_hook_observe(attrs->trace, wh, attrs->req->operation, s->async->round, res,
                         mutated ? ADM_VERDICT_PATCHED : ADM_VERDICT_ALLOWED, NULL);
    }
    return ADM_OK;
}

static void on_call_done(void *arg, adm_hook_result_t *res);

/*
 * Walks the hook list from s->i. Returns ADM_AGAIN when a call is outstanding, else the phase's
 * outcome (ADM_OK, or ADM_DECLINED with *st).
 */
static int walk(serial_t *s, adm_status_t *st)
{
    adm_attrs_t *attrs = s->attrs;
    adm_match_input_t in = {0};

    in.req = attrs->req;
    in.old_object = attrs->req->old_object;
    in.cluster = adm_plugin_cluster(attrs);
    for (; s->i < s->set->nmutating; s->i++) {
        const adm_webhook_t *wh = &s->set->mutating[s->i];
        const char *reason = NULL;
        adm_hook_result_t now;
        adm_wh_match_t m;
        int rc;

        in.object = adm_attrs_object(attrs);
        m = adm_webhook_match(wh, &in, attrs->arena, st, &reason);
        if (m == ADM_WH_SKIP) {
            continue;
        }
        if (m == ADM_WH_ERROR) {
            return ADM_DECLINED;
        }
        if (s->async->round == 1 && !s->ctx->scheduled[s->i]) {
            continue;
        }
        if (m == ADM_WH_CONVERT) {
            memset(&now, 0, sizeof(now));
            now.outcome = ADM_HOOK_FAILED;
            now.reason = reason;
        } else {
            adm_hook_body_init(&s->body, in.object);
            s->call = adm_hook_call_start(s->w, wh, attrs->req, &s->body, attrs->arena, s->async->deadline_ms,
                                          on_call_done, s, &now);
            if (s->call != NULL) {
                return ADM_AGAIN;
            }
        }
        rc = handle(s, wh, &now, st);
        if (rc != ADM_OK) {
            return rc;
        }
    }
    s->ctx->last_output = adm_attrs_object(attrs);
    return ADM_OK;
}

static void on_call_done(void *arg, adm_hook_result_t *res)
{
    serial_t *s = arg;
    adm_status_t st = {0};
    int rc;

    s->call = NULL;
    rc = handle(s, &s->set->mutating[s->i], res, &st);
    if (rc == ADM_OK) {
        s->i++;
        rc = walk(s, &st);
        if (rc == ADM_AGAIN) {
            return;
        }
    }
    adm_async_done(s->async, rc, &st);
}

static void on_cancel(void *arg)
{
    serial_t *s = arg;

    adm_hook_call_abandon(s->call);
    s->call = NULL;
}

static bool changed_since(adm_attrs_t *attrs, yyjson_val *before)
{
    yyjson_val *now = adm_attrs_object(attrs);
    const char *diff;
    size_t len, nops = 0;

    if (now == before || before == NULL || now == NULL) {
        return now != before;
    }
    /* both flat: diffed as they are (their lineage is relative to the request's object) */
    return adm_jsonpatch_diff_flat(before, now, NULL, attrs->arena, &diff, &len, &nops) != 0 || nops > 0;
}

static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    adm_webhooks_t *w = state;
    const adm_webhook_set_t *set = w != NULL ? adm_webhooks_set(w) : NULL;
    serial_t *s;
    void **slot = adm_plugin_slot(attrs);
    reinvoke_t *ctx = *slot;
    int rc;

    if (set == NULL || set->nmutating == 0 || adm_webhook_request_exempt(attrs->req)) {
        return ADM_OK;
    }
    if (ctx == NULL) {
        ctx = adm_arena_calloc(attrs->arena, 1, sizeof(*ctx));
        if (ctx == NULL) {
            return adm_status_nomem(st);
        }
        ctx->scheduled = adm_arena_calloc(attrs->arena, set->nmutating, sizeof(bool));
        ctx->invoked_ifneeded = adm_arena_calloc(attrs->arena, set->nmutating, sizeof(bool));
        if (ctx->scheduled == NULL || ctx->invoked_ifneeded == NULL) {
            return adm_status_nomem(st);
        }
        *slot = ctx;
    }
    if (async->round == 1 && changed_since(attrs, ctx->last_output)) {
        /* built-in plugins changed the object after this plugin's first round */
        schedule_previous(ctx, set->nmutating);
    }
    s = adm_arena_calloc(attrs->arena, 1, sizeof(*s));
    if (s == NULL) {
        return adm_status_nomem(st);
    }
    s->w = w;
    s->set = set;
    s->attrs = attrs;
    s->async = async;
    s->ctx = ctx;
    rc = walk(s, st);
    if (rc == ADM_AGAIN) {
        async->cancel = on_cancel;
        async->cancel_arg = s;
    }
    return rc;
}

const adm_plugin_t adm_plugin_mutating_admission_webhook = {
    .name = "MutatingAdmissionWebhook",
    .operations = ADM_OPS_ALL,
    .configure = adm_webhooks_configure_mutating, /* WebhookAdmissionConfiguration (D13) */
    .admit_async = admit_async,
};

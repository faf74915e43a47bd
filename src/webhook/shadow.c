/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shadow webhooks (webhooks.h adm_hook_shadow_note): a webhook of a configuration annotated
 * proxy.admitd.io/shadow: "true" is matched and called like the others, and the dispatchers never
 * let its answer decide anything (no denial, no failure, no patch, no warning reaches the answer).
 * What it would have done is kept here: counted for the metrics, logged, and written as the JSON
 * value of an audit annotation, so an operator can try a new policy on live traffic first.
 */
#include "adm/base/json.h"
#include "adm/base/log.h"
#include "webhooks_internal.h"

#include <string.h>

#define SHADOW_PATCH_MAX 4096 /* longer patches are summarised by their size in the annotation */

static const char *const outcome_names[] = {"allowed", "denied", "failed", "refused"};

const char *adm_hook_shadow_note(adm_webhooks_t *w, adm_arena_t *a, const adm_webhook_t *wh,
                                 const adm_hook_result_t *r)
{
    adm_hook_stats_t *stats = adm_webhooks_stats(w, wh);
    const char *type = wh->type == ADM_WEBHOOK_MUTATING ? "mutating" : "validating";
    const char *detail = r->outcome == ADM_HOOK_FAILED ? r->reason : r->status.message;
    yyjson_alc alc;
    yyjson_mut_doc *doc;
    yyjson_mut_val *root;
    char *patch_text = NULL;
    size_t patch_len = 0;

    if (r->outcome == ADM_HOOK_ALLOWED && r->patch != NULL && yyjson_arr_size(r->patch) > 0) {
        stats->shadow_patches++;
        adm_json_alc_init(&alc, a);
        patch_text = yyjson_val_write_opts(r->patch, 0, &alc, &patch_len, NULL);
    }
    if (r->outcome != ADM_HOOK_ALLOWED || patch_text != NULL) {
        adm_log_info("shadow %s webhook %s would have %s (%.1f ms)%s%s", type, wh->name,
                     r->outcome == ADM_HOOK_ALLOWED  ? "patched the object"
                     : r->outcome == ADM_HOOK_DENIED ? "denied the request"
                     : r->outcome == ADM_HOOK_FAILED ? "failed"
                                                     : "refused the request",
                     (double)r->latency_ns / 1e6, detail != NULL || patch_text != NULL ? ": " : "",
                     detail != NULL       ? detail
                     : patch_text != NULL ? patch_text
                                          : "");
    } else {
        adm_log_v(1, "shadow %s webhook %s allowed (%.1f ms)", type, wh->name, (double)r->latency_ns / 1e6);
    }
    adm_json_alc_init(&alc, a);
    doc = yyjson_mut_doc_new(&alc);
    root = doc != NULL ? yyjson_mut_obj(doc) : NULL;
    if (root == NULL) {
        return NULL;
    }
    yyjson_mut_doc_set_root(doc, root);
    yyjson_mut_obj_add_str(doc, root, "configuration", wh->config_name);
    yyjson_mut_obj_add_str(doc, root, "webhook", wh->name);
    yyjson_mut_obj_add_str(doc, root, "outcome", outcome_names[r->outcome]);
    yyjson_mut_obj_add_real(doc, root, "latencyMs", (double)(r->latency_ns / 1000) / 1000.0);
    if (r->outcome == ADM_HOOK_FAILED && r->reason != NULL) {
        yyjson_mut_obj_add_str(doc, root, "reason", r->reason);
    } else if (r->outcome != ADM_HOOK_ALLOWED) {
        yyjson_mut_obj_add_int(doc, root, "code", r->status.code);
        yyjson_mut_obj_add_str(doc, root, "message", r->status.message != NULL ? r->status.message : "");
    } else if (patch_text != NULL && patch_len <= SHADOW_PATCH_MAX) {
        yyjson_mut_obj_add_val(doc, root, "patch", yyjson_val_mut_copy(doc, r->patch));
    } else if (patch_text != NULL) {
        yyjson_mut_obj_add_uint(doc, root, "patchBytes", patch_len);
    }
    return yyjson_mut_write_opts(doc, 0, &alc, NULL, NULL);
}

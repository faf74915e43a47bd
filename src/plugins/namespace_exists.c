/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceExists: nothing is created, updated or deleted in a namespace that does not exist (404
 * `namespaces "NS" not found`). Unlike NamespaceLifecycle it does not look at Terminating. The
 * lister and the live GET are both the --cluster-state files until admitd has an API client.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"

#include <string.h>

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *req = attrs->req;
    const adm_live_reader_t *live = &adm_live_reader_files;
    yyjson_val *ns;
    const char *err = NULL;

    (void)state;
    if (req->namespace_[0] == '\0' ||
        (req->kind.group[0] == '\0' && strcmp(req->kind.kind, "Namespace") == 0)) {
        return ADM_OK;
    }
    if (adm_lookup(attrs, "", "Namespace", "", req->namespace_) != NULL) {
        return ADM_OK;
    }
    switch (live->get(live->arg, attrs, "", "Namespace", "", req->namespace_, &ns, &err)) {
    case ADM_LIVE_FOUND: return ADM_OK;
    case ADM_LIVE_NOT_FOUND: return adm_status_not_found(st, attrs->arena, "", "namespaces", req->namespace_);
    default: return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "unknown error");
    }
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_namespace_exists = {
    .name = "NamespaceExists",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE,
    .reads = reads,
    .validate = validate,
};

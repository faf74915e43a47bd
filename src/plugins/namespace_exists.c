/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceExists: nothing is created, updated or deleted in a namespace that does not exist (404
 * `namespaces "NS" not found`). Unlike NamespaceLifecycle it does not look at Terminating.
 *
 * A namespace the lister does not have is looked up live, as kube does in case its cache lags:
 * with an API connection (--kubeconfig, --in-cluster) a GET of the namespace from the API server
 * (live_call.h, an ADM_AGAIN phase: the loop never waits), whose 404 is the client's NotFound as
 * is and any other failure kube's InternalError with the client's message. With --cluster-state
 * files only, the lister and the storage are both the files.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"

#include <string.h>

/* The API server answered the live GET of the request's namespace. */
static void on_live_namespace(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res,
                              yyjson_val *body, const char *err, void *arg)
{
    adm_status_t st;
    yyjson_val *ns;
    int rc;

    (void)arg;
    memset(&st, 0, sizeof(st));
    rc = adm_live_namespace_result(attrs, res, body, err, &st, &ns);
    adm_async_done(async, rc, &st);
}

static int decide(adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const adm_review_request_t *req = attrs->req;
    const adm_live_reader_t *live = &adm_live_reader_files;
    yyjson_val *ns;
    const char *err = NULL;

    if (req->namespace_[0] == '\0' ||
        (req->kind.group[0] == '\0' && strcmp(req->kind.kind, "Namespace") == 0)) {
        return ADM_OK;
    }
    if (adm_lookup(attrs, "", "Namespace", "", req->namespace_) != NULL) {
        return ADM_OK;
    }
    if (async != NULL && adm_live_call_possible(attrs)) {
        if (!adm_live_namespace_name(req->namespace_)) {
            return adm_status_not_found(st, attrs->arena, "", "namespaces", req->namespace_);
        }
        return adm_live_get_namespace(attrs, async, on_live_namespace, NULL);
    }
    switch (live->get(live->arg, attrs, "", "Namespace", "", req->namespace_, &ns, &err)) {
    case ADM_LIVE_FOUND: return ADM_OK;
    case ADM_LIVE_NOT_FOUND: return adm_status_not_found(st, attrs->arena, "", "namespaces", req->namespace_);
    default: return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "unknown error");
    }
}

/* Without a chain to resume (unit tests, file state): the live GET is the files' answer. */
static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    (void)state;
    return decide(attrs, st, NULL);
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    (void)state;
    return decide(attrs, st, async);
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_namespace_exists = {
    .name = "NamespaceExists",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE,
    .reads = reads,
    .validate = validate,
    .validate_async = validate_async,
};

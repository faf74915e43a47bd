/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceAutoProvision: kube's plugin creates the namespace of a CREATE that names one the
 * informer cache does not have (a POST to the API server; AlreadyExists is fine; not on dry run),
 * then admits; any other failure of the create is a 403 with the client's error. That side effect
 * needs an API connection: without --kubeconfig or --in-cluster, enabling the plugin stops admitd
 * at start (exit 2) with one line saying so, instead of admitting requests it was asked to
 * provision for. A namespace name that cannot exist (not a DNS-1123 label) is not posted: the
 * plugins after it answer for it, as they would for kube's refused create.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"

#include <stdio.h>
#include <string.h>

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    (void)state;
    if (cfg->api) {
        return 0;
    }
    snprintf(err, err_len,
             "--enable-admission-plugins: NamespaceAutoProvision creates namespaces through the API server, "
             "and admitd has no API connection (--kubeconfig or --in-cluster); disable it or give one");
    return ADM_EINVAL;
}

static void on_created(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res, yyjson_val *body,
                       const char *err, void *arg)
{
    adm_status_t st;
    int rc = ADM_OK;

    (void)arg;
    memset(&st, 0, sizeof(st));
    if (err != NULL) {
        rc = adm_status_forbidden(&st, attrs, "%s", err);
    } else if (res->status / 100 != 2 && res->status != 409) {
        rc = adm_status_forbidden(&st, attrs, "%s", adm_live_call_error(attrs, res, body));
    }
    adm_async_done(async, rc, &st);
}

static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const adm_review_request_t *req = attrs->req;
    const char *json;

    (void)state;
    (void)st;
    if (req->dry_run || req->namespace_[0] == '\0' ||
        (req->kind.group[0] == '\0' && strcmp(req->kind.kind, "Namespace") == 0)) {
        return ADM_OK;
    }
    if (adm_lookup(attrs, "", "Namespace", "", req->namespace_) != NULL ||
        !adm_live_namespace_name(req->namespace_) || !adm_live_call_possible(attrs)) {
        return ADM_OK;
    }
    json = adm_arena_printf(attrs->arena,
                            "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\"},"
                            "\"spec\":{},\"status\":{}}",
                            req->namespace_);
    if (json == NULL) {
        return ADM_ENOMEM;
    }
    return adm_live_call(attrs, async, "/api/v1/namespaces", json, on_created, NULL);
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_namespace_auto_provision = {
    .name = "NamespaceAutoProvision",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .configure = configure,
    .admit_async = admit_async,
};

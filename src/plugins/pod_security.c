/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity: the Pod Security Standards on pods (enforced), pod controllers (warned and
 * audited) and namespace label changes, as kube-apiserver's plugin wraps pod-security-admission.
 * Its PodSecurityConfiguration comes from the AdmissionConfiguration; namespaces and their pods
 * come from the cluster state. The policy engine is src/podsecurity/.
 *
 * With an API connection, a namespace the informer cache does not have yet is read live, as kube's
 * namespace getter falls back from its lister to the client: the object found goes in the plugin's
 * request slot, where the engine looks first. A GET that fails leaves the namespace missing (the
 * engine's "failed to lookup namespace" answer).
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"
#include "adm/podsecurity/admission.h"

#include <stdlib.h>
#include <string.h>

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_psa_config_t *c = calloc(1, sizeof(*c));
    char why[512];
    int rc;

    if (c == NULL) {
        snprintf(err, err_len, "PodSecurity: out of memory");
        return ADM_ENOMEM;
    }
    rc = adm_psa_config_decode(cfg->config, c, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s", cfg->source != NULL ? cfg->source : "PodSecurity", why);
        free(c);
        return rc;
    }
    *state = c;
    return 0;
}

static void free_state(void *state)
{
    if (state != NULL) {
        adm_psa_config_free(state);
        free(state);
    }
}

static uint64_t now_ns(void *arg)
{
    return adm_plugin_now_ns(arg);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return adm_psa_admit(state, attrs, now_ns, attrs, st);
}

static void on_live_namespace(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res,
                              yyjson_val *body, const char *err, void *arg)
{
    adm_status_t st;
    int rc;

    memset(&st, 0, sizeof(st));
    if (err == NULL && res->status == 200 && body != NULL) {
        *adm_plugin_slot(attrs) = body;
    }
    rc = adm_psa_admit(arg, attrs, now_ns, attrs, &st);
    adm_async_done(async, rc, &st);
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const char *ns = attrs->req->namespace_;

    if (ns[0] != '\0' && adm_live_call_possible(attrs) && adm_live_namespace_name(ns) &&
        adm_lookup(attrs, "", "Namespace", "", ns) == NULL) {
        return adm_live_get_namespace(attrs, async, on_live_namespace, state);
    }
    return validate(state, attrs, st);
}

/* the namespace's policy labels, and its pods when a label change raises the enforce level (kube's
 * namespace and pod listers) */
static const char *const reads[] = {"/Namespace", "/Pod", NULL};

const adm_plugin_t adm_plugin_pod_security = {
    .name = "PodSecurity",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .validate = validate,
    .validate_async = validate_async,
};

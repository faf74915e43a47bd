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
 *
 * With an API connection too, the existing pods a namespace label change is checked against are
 * listed live, as kube's standalone pod-security webhook lists them (PodListerFromClient), rather
 * than kept in an informer cache of every pod of the cluster (kube-apiserver's in-tree plugin
 * reads its pod informer): a paged LIST of that namespace's pods, evaluated page by page
 * (namespace_pods.h), within kube's time limit. Without one, the pods come from --cluster-state.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"
#include "adm/podsecurity/admission.h"
#include "adm/podsecurity/namespace_pods.h"

#include <stdlib.h>
#include <string.h>

/*
 * Pods per page of the live LIST. kube's webhook lists a namespace's pods without a limit, in one
 * answer of any size; admitd's answers from the API server stop at 10 MiB (Decision D9), and 500
 * (client-go's pager default, the informer's page) keeps a page of pods of up to 20 KB under it.
 */
#define POD_LIST_PAGE 500

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

/* A namespace label change's pods being listed live. */
typedef struct pods_list_s {
    adm_psa_pods_t *tally;
    const char *ns;
} pods_list_t;

static int on_pods_page(adm_attrs_t *attrs, const adm_list_page_t *page, adm_arena_t *scratch, void *arg)
{
    pods_list_t *pl = arg;
    size_t n = yyjson_arr_size(page->items);
    yyjson_val **pods = adm_arena_alloc(scratch, (n + 1) * sizeof(*pods));
    yyjson_val *pod;
    size_t i, max;
    int rc;

    (void)attrs;
    if (pods == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_arr_foreach(page->items, i, max, pod) /* an iterator: yyjson_arr_get walks from the start */
    {
        pods[i] = pod;
    }
    rc =
        adm_psa_pods_add(pl->tally, scratch, pods, n, page->continue_token[0] != '\0', page->remaining_items);
    if (rc < 0) {
        return rc;
    }
    return rc == ADM_PSA_PODS_MORE ? ADM_LIVE_LIST_NEXT : ADM_LIVE_LIST_STOP;
}

/* EvaluatePodsInNamespace's end: the tally's warnings, or kube's one warning for a failed LIST. */
static void on_pods_listed(adm_attrs_t *attrs, adm_async_t *async, int rc, const char *err, void *arg)
{
    pods_list_t *pl = arg;

    if (rc == 0) {
        rc = adm_psa_pods_warn(pl->tally, attrs, pl->ns);
    } else if (rc != ADM_ENOMEM) {
        adm_log_warn("PodSecurity: failed to list pods in namespace %s: %s", pl->ns,
                     err != NULL ? err : "unknown error");
        adm_attrs_add_warning(attrs, ADM_PSA_LIST_PODS_FAILED);
        rc = ADM_OK;
    }
    adm_async_done(async, rc < 0 ? rc : ADM_OK, NULL);
}

/*
 * ValidateNamespace, in kube's time for the existing pods: 1 s, or half of what is left of the
 * request's deadline when that is less (EvaluatePodsInNamespace). With an API connection the pods
 * are listed live (the LIST within that time too), else read from --cluster-state.
 */
static int validate_namespace(const adm_psa_config_t *cfg, adm_attrs_t *attrs, adm_status_t *st,
                              adm_async_t *async)
{
    adm_psa_pods_check_t check;
    uint64_t now_ms = adm_plugin_now_ms(attrs);
    uint64_t budget_ms = async->deadline_ms > now_ms ? (async->deadline_ms - now_ms) / 2 : 0;
    uint64_t deadline_ns;
    pods_list_t *pl;
    const char *path;
    int rc = adm_psa_namespace_decide(cfg, attrs, st, &check);

    if (rc != ADM_OK || !check.needed) {
        return rc;
    }
    if (budget_ms > ADM_PSA_NAMESPACE_CHECK_MS) {
        budget_ms = ADM_PSA_NAMESPACE_CHECK_MS;
    }
    deadline_ns = adm_plugin_now_ns(attrs) + budget_ms * 1000000ull;
    if (!adm_live_call_possible(attrs)) {
        rc = adm_psa_check_namespace_pods(cfg, attrs, check.namespace_, &check.enforce, now_ns, attrs,
                                          deadline_ns);
        return rc < 0 ? rc : ADM_OK;
    }
    if (!adm_live_namespace_name(check.namespace_)) {
        return ADM_OK; /* a name no namespace can have: it holds no pods */
    }
    pl = adm_arena_calloc(attrs->arena, 1, sizeof(*pl));
    path = adm_arena_printf(attrs->arena, "/api/v1/namespaces/%s/pods", check.namespace_);
    if (pl == NULL || path == NULL) {
        return ADM_ENOMEM;
    }
    pl->ns = check.namespace_;
    pl->tally = adm_psa_pods_start(attrs->arena, cfg, &check.enforce, now_ns, attrs, deadline_ns);
    if (pl->tally == NULL) {
        return ADM_ENOMEM;
    }
    return adm_live_list(attrs, async, path, POD_LIST_PAGE, now_ms + budget_ms, on_pods_page, on_pods_listed,
                         pl);
}

static bool namespace_request(const adm_attrs_t *attrs)
{
    return strcmp(attrs->req->resource.group, "") == 0 &&
           strcmp(attrs->req->resource.resource, "namespaces") == 0;
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const char *ns = attrs->req->namespace_;

    if (namespace_request(attrs)) {
        return validate_namespace(state, attrs, st, async);
    }
    if (ns[0] != '\0' && adm_live_call_possible(attrs) && adm_live_namespace_name(ns) &&
        adm_lookup(attrs, "", "Namespace", "", ns) == NULL) {
        return adm_live_get_namespace(attrs, async, on_live_namespace, state);
    }
    return validate(state, attrs, st);
}

/*
 * The namespace's policy labels (kube's namespace lister). Not Pods: with an API connection a label
 * change lists its namespace's pods live (above), so no informer keeps every pod of the cluster;
 * without one they come from --cluster-state, which serves every kind whatever is declared here.
 */
static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_pod_security = {
    .name = "PodSecurity",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .validate = validate,
    .validate_async = validate_async,
};

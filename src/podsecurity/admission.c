/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity on pods and pod controllers (admission/admission.go ValidatePod,
 * ValidatePodController and EvaluatePod): exemptions, the namespace's policy from its labels in
 * the cluster state, which pod updates count, and kube's denial, warning and audit texts.
 */
#include "adm/podsecurity/admission.h"

#include "adm/admission/plugin.h"
#include "adm/base/admission_metrics.h"
#include "adm/base/error.h"
#include "adm/cluster/cluster_state.h"
#include "adm/podsecurity/evaluate.h"
#include "adm/webhook/webhooks.h"

#include <string.h>

/* The annotation's full key: written out for the keys this file uses, printed for any other. */
static const char *annotation_key(adm_arena_t *a, const char *key)
{
    static const char *const known[] = {"enforce-policy", "exempt", "error", "audit-violations"};
    static const char *const full[] = {ADM_PSA_LABEL_PREFIX "enforce-policy", ADM_PSA_LABEL_PREFIX "exempt",
                                       ADM_PSA_LABEL_PREFIX "error", ADM_PSA_LABEL_PREFIX "audit-violations"};

    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++) {
        if (strcmp(key, known[i]) == 0) {
            return full[i];
        }
    }
    return adm_arena_printf(a, ADM_PSA_LABEL_PREFIX "%s", key);
}

void adm_psa_annotate(adm_attrs_t *attrs, const char *key, const char *value)
{
    const char *k = annotation_key(attrs->arena, key);

    if (k != NULL && value != NULL) {
        adm_hook_add_annotation(attrs->arena, &attrs->annotations, &attrs->nannotations,
                                &attrs->annotations_cap, k, value);
    }
}

static bool is(const adm_attrs_t *attrs, const char *group, const char *resource)
{
    return strcmp(attrs->req->resource.group, group) == 0 &&
           strcmp(attrs->req->resource.resource, resource) == 0;
}

static const char *sub(const adm_attrs_t *attrs)
{
    return attrs->req->sub_resource != NULL ? attrs->req->sub_resource : "";
}

static bool ignored_pod_subresource(const char *s)
{
    static const char *const ignored[] = {"exec", "attach",      "binding", "eviction",
                                          "log",  "portforward", "proxy",   "status"};

    for (size_t i = 0; s[0] != '\0' && i < sizeof(ignored) / sizeof(*ignored); i++) {
        if (strcmp(s, ignored[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* The pod template of a controller kube knows, and where it lives; NULL resource: not one. */
static yyjson_val *pod_template(const adm_attrs_t *attrs, yyjson_val *obj, bool *known)
{
    static const struct {
        const char *group, *resource;
    } with_spec_template[] = {{"", "replicationcontrollers"}, {"apps", "replicasets"},
                              {"apps", "deployments"},        {"apps", "statefulsets"},
                              {"apps", "daemonsets"},         {"batch", "jobs"}};

    *known = true;
    if (is(attrs, "", "podtemplates")) {
        return adm_json_get(obj, "template");
    }
    if (is(attrs, "batch", "cronjobs")) {
        return adm_json_path(obj, "spec", "jobTemplate", "spec", "template", NULL);
    }
    for (size_t i = 0; i < sizeof(with_spec_template) / sizeof(*with_spec_template); i++) {
        if (is(attrs, with_spec_template[i].group, with_spec_template[i].resource)) {
            return adm_json_path(obj, "spec", "template", NULL);
        }
    }
    *known = false;
    return NULL;
}

static size_t arr_size(yyjson_val *spec, const char *key)
{
    return yyjson_arr_size(adm_json_get(spec, key));
}

static bool image_changed(yyjson_val *c, yyjson_val *old)
{
    return strcmp(adm_json_str(c, "image"), adm_json_str(old, "image")) != 0;
}

/* isSignificantPodUpdate: containers added or removed, an image changed, an ephemeral container
   added or its image changed. Anything else may change on a running pod whatever the policy. */
static bool significant_update(yyjson_val *pod, yyjson_val *old)
{
    static const char *const lists[] = {"containers", "initContainers"};
    yyjson_val *spec = adm_json_get(pod, "spec");
    yyjson_val *ospec = adm_json_get(old, "spec");
    yyjson_val *eph = adm_json_get(spec, "ephemeralContainers");
    yyjson_val *oeph = adm_json_get(ospec, "ephemeralContainers");

    for (size_t l = 0; l < 2; l++) {
        if (arr_size(spec, lists[l]) != arr_size(ospec, lists[l])) {
            return true;
        }
    }
    for (size_t l = 0; l < 2; l++) {
        yyjson_val *a = adm_json_get(spec, lists[l]);
        yyjson_val *b = adm_json_get(ospec, lists[l]);

        for (size_t i = 0, n = yyjson_arr_size(a); i < n; i++) {
            if (image_changed(yyjson_arr_get(a, i), yyjson_arr_get(b, i))) {
                return true;
            }
        }
    }
    for (size_t i = 0, n = yyjson_arr_size(eph); i < n; i++) {
        yyjson_val *c = yyjson_arr_get(eph, i);
        yyjson_val *match = NULL;

        for (size_t k = 0, m = yyjson_arr_size(oeph); k < m && match == NULL; k++) {
            yyjson_val *o = yyjson_arr_get(oeph, k);

            if (strcmp(adm_json_str(o, "name"), adm_json_str(c, "name")) == 0) {
                match = o;
            }
        }
        if (match == NULL || image_changed(c, match)) {
            return true;
        }
    }
    return false;
}

_Static_assert(ADM_PSA_MAX_MINOR < ADM_MX_PSA_MINORS, "every known policy version has its own series");

/* The metrics' resource label, as kube's resourceLabel. */
static adm_mx_psa_resource_t mx_resource(const adm_attrs_t *attrs)
{
    if (is(attrs, "", "pods")) {
        return ADM_MX_PSA_POD;
    }
    return is(attrs, "", "namespaces") ? ADM_MX_PSA_NAMESPACE : ADM_MX_PSA_CONTROLLER;
}

/* RecordEvaluation: versions past the newest known are "future", as kube labels them. */
static void record_evaluation(const adm_attrs_t *attrs, adm_mx_psa_decision_t decision,
                              const adm_psa_lv_t *lv, adm_mx_psa_mode_t mode)
{
    int version = lv->version.latest                      ? ADM_MX_PSA_LATEST
                  : lv->version.minor > ADM_PSA_MAX_MINOR ? ADM_MX_PSA_FUTURE
                                                          : (int)lv->version.minor;

    adm_metrics_psa_evaluation(decision, (unsigned)lv->level, version, mode, (unsigned)attrs->req->operation,
                               mx_resource(attrs), sub(attrs));
}

static void record_error(const adm_attrs_t *attrs, bool fatal)
{
    adm_metrics_psa_error(fatal, (unsigned)attrs->req->operation, mx_resource(attrs), sub(attrs));
}

typedef struct eval_s {
    adm_psa_lv_t lv;
    adm_psa_result_t result;
    bool done;
} eval_t;

/*
 * Evaluates lv, reusing an earlier evaluation of the same level and version (kube's cache), and
 * the verdicts of checks an evaluation at another level already ran (memo).
 */
static const adm_psa_result_t *evaluate_cached(adm_arena_t *a, eval_t *cache, size_t *n, adm_psa_memo_t *memo,
                                               const adm_psa_lv_t *lv, yyjson_val *meta, yyjson_val *spec)
{
    static const adm_psa_result_t allowed; /* no failure: what privileged gives any pod */

    if (lv->level == ADM_PSA_PRIVILEGED) {
        return &allowed; /* the usual audit level: nothing to run, keep nor look up */
    }
    for (size_t i = 0; i < *n; i++) {
        if (adm_psa_lv_equal(&cache[i].lv, lv)) {
            return &cache[i].result;
        }
    }
    cache[*n].lv = *lv;
    adm_psa_evaluate_memo(a, lv, meta, spec, memo, &cache[*n].result);
    return &cache[(*n)++].result;
}

/* The request's name for the denial, as attrs.GetName(); the object's name when the request has
   none (a generated name is already in the object by the validating phase). */
static const char *request_name(adm_attrs_t *attrs, yyjson_val *obj)
{
    if (attrs->req->name != NULL && attrs->req->name[0] != '\0') {
        return attrs->req->name;
    }
    return adm_json_str(adm_json_get(obj, "metadata"), "name");
}

/*
 * `would violate PodSecurity "LV": DETAIL` (arena), or NULL when the arena is exhausted. The
 * label text needs no escaping (adm_psa_lv_string), so its Go quoting is its text in quotes. The
 * head is put together on the stack: the longest label text, "restricted:v1." and a 64-bit
 * minor, is 34 bytes.
 */
static const char *violation(adm_arena_t *a, const adm_psa_lv_t *lv, const adm_psa_result_t *r)
{
    static const char lead[] = "would violate PodSecurity \"";
    const char *text = adm_psa_lv_string(a, lv);
    char head[sizeof(lead) + 64];
    size_t ntext = text != NULL ? strlen(text) : 0;

    if (text == NULL || ntext > sizeof(head) - sizeof(lead) - 3) {
        return NULL; /* the arena is full (a text longer than 34 bytes is not made) */
    }
    memcpy(head, lead, sizeof(lead) - 1);
    memcpy(head + sizeof(lead) - 1, text, ntext);
    memcpy(head + sizeof(lead) - 1 + ntext, "\": ", 4);
    return adm_psa_result_detail_after(a, head, r);
}

/* EvaluatePod: enforce (when asked), then audit, then warn for allowed requests. */
static int evaluate_pod(const adm_psa_config_t *cfg, adm_attrs_t *attrs, const adm_psa_policy_t *policy,
                        const char *policy_errs, yyjson_val *obj, yyjson_val *meta, yyjson_val *spec,
                        bool enforce, adm_status_t *st)
{
    adm_arena_t *a = attrs->arena;
    eval_t cache[3];
    adm_psa_memo_t memo;
    size_t ncache = 0;
    const adm_psa_result_t *r;
    bool denied = false;
    int rc = ADM_OK;

    /* the runtime class is looked up only when some are exempt (the spec is a long object) */
    if (cfg->nruntime_classes > 0 &&
        adm_psa_exempt_runtime_class(cfg, adm_json_str(spec, "runtimeClassName"))) {
        adm_psa_annotate(attrs, "exempt", "runtimeClass");
        return ADM_OK;
    }
    memset(&memo, 0, sizeof(memo));
    if (policy_errs[0] != '\0') {
        adm_psa_annotate(attrs, "error", adm_arena_printf(a, "Failed to parse policy: %s", policy_errs));
        record_error(attrs, false);
    }
    if (enforce) {
        adm_psa_annotate(attrs, "enforce-policy", adm_psa_lv_string(a, &policy->enforce));
        r = evaluate_cached(a, cache, &ncache, &memo, &policy->enforce, meta, spec);
        if (r->nomem) {
            return ADM_ENOMEM;
        }
        if (r->nfailed > 0) {
            const char *detail = adm_psa_result_detail(a, r);
            const char *text = adm_psa_lv_string(a, &policy->enforce);
            const char *lv = text != NULL ? adm_go_quote(a, text) : NULL;

            if (detail == NULL || lv == NULL) {
                return ADM_ENOMEM;
            }
            rc = adm_status_forbidden_named(st, a, attrs->req->resource.group, attrs->req->resource.resource,
                                            request_name(attrs, obj), "violates PodSecurity %s: %s", lv,
                                            detail);
            denied = true;
        }
        record_evaluation(attrs, denied ? ADM_MX_PSA_DENY : ADM_MX_PSA_ALLOW, &policy->enforce,
                          ADM_MX_PSA_ENFORCE);
    }
    r = evaluate_cached(a, cache, &ncache, &memo, &policy->audit, meta, spec);
    if (r->nomem) {
        return ADM_ENOMEM;
    }
    if (r->nfailed > 0) {
        const char *v = violation(a, &policy->audit, r);

        if (v == NULL) {
            return ADM_ENOMEM;
        }
        adm_psa_annotate(attrs, "audit-violations", v);
        record_evaluation(attrs, ADM_MX_PSA_DENY, &policy->audit, ADM_MX_PSA_AUDIT);
    }
    if (!denied) {
        r = evaluate_cached(a, cache, &ncache, &memo, &policy->warn, meta, spec);
        if (r->nomem) {
            return ADM_ENOMEM;
        }
        if (r->nfailed > 0) {
            const char *w = violation(a, &policy->warn, r);

            if (w == NULL) {
                return ADM_ENOMEM;
            }
            adm_attrs_add_warning(attrs, w);
            record_evaluation(attrs, ADM_MX_PSA_DENY, &policy->warn, ADM_MX_PSA_WARN);
        }
    }
    return rc;
}

/*
 * The namespace's labels: from the live GET the plugin made on a cache miss (its request slot),
 * else from the cluster state; false when the namespace is in neither.
 */
static bool namespace_labels(adm_attrs_t *attrs, yyjson_val **labels)
{
    yyjson_val *live = attrs->slot != NULL ? *adm_plugin_slot(attrs) : NULL;
    yyjson_val *ns = live != NULL ? live
                                  : adm_cluster_state_get(adm_plugin_cluster(attrs), "", "Namespace", NULL,
                                                          attrs->req->namespace_);

    *labels = adm_json_path(ns, "metadata", "labels", NULL);
    return ns != NULL;
}

static int validate_pod(const adm_psa_config_t *cfg, adm_attrs_t *attrs, adm_status_t *st)
{
    adm_arena_t *a = attrs->arena;
    const char *ns = attrs->req->namespace_;
    yyjson_val *labels;
    adm_psa_policy_t policy;
    const char *errs;
    yyjson_val *pod;

    if (ignored_pod_subresource(sub(attrs))) {
        return ADM_OK;
    }
    if (adm_psa_exempt_namespace(cfg, ns)) {
        adm_psa_annotate(attrs, "exempt", "namespace");
        return ADM_OK;
    }
    if (adm_psa_exempt_user(cfg, attrs->req->user_info.username)) {
        adm_psa_annotate(attrs, "exempt", "user");
        return ADM_OK;
    }
    if (!namespace_labels(attrs, &labels)) {
        adm_psa_annotate(
            attrs, "error",
            adm_arena_printf(a,
                             "Internal error occurred: failed to lookup namespace \"%s\": namespaces "
                             "\"%s\" not found",
                             ns, ns));
        record_error(attrs, true);
        return adm_status_internal(st, a, "failed to lookup namespace \"%s\"", ns);
    }
    policy = adm_psa_policy_resolve(a, labels, &cfg->defaults, &errs);
    if (errs == NULL) {
        return ADM_ENOMEM;
    }
    if (errs[0] == '\0' && adm_psa_policy_fully_privileged(&policy)) {
        adm_psa_annotate(attrs, "enforce-policy", "privileged:latest");
        record_evaluation(attrs, ADM_MX_PSA_ALLOW, &policy.enforce, ADM_MX_PSA_ENFORCE);
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        adm_psa_annotate(attrs, "error", "failed to decode pod");
        record_error(attrs, true);
        return adm_status_bad_request(st, a, "failed to decode pod");
    }
    if (attrs->req->operation == ADM_OP_UPDATE) {
        if (attrs->req->old_object == NULL) {
            adm_psa_annotate(attrs, "error", "failed to decode old pod");
            record_error(attrs, true);
            return adm_status_bad_request(st, a, "failed to decode old pod");
        }
        if (!significant_update(pod, attrs->req->old_object)) {
            return ADM_OK;
        }
    }
    return evaluate_pod(cfg, attrs, &policy, errs, pod, adm_json_get(pod, "metadata"),
                        adm_json_get(pod, "spec"), true, st);
}

static int validate_controller(const adm_psa_config_t *cfg, adm_attrs_t *attrs, adm_status_t *st)
{
    adm_arena_t *a = attrs->arena;
    const char *ns = attrs->req->namespace_;
    yyjson_val *labels;
    yyjson_val *obj;
    yyjson_val *tmpl;
    adm_psa_policy_t policy;
    const char *errs;
    bool known;

    if (sub(attrs)[0] != '\0') {
        return ADM_OK;
    }
    if (adm_psa_exempt_namespace(cfg, ns)) {
        adm_psa_annotate(attrs, "exempt", "namespace");
        return ADM_OK;
    }
    if (adm_psa_exempt_user(cfg, attrs->req->user_info.username)) {
        adm_psa_annotate(attrs, "exempt", "user");
        return ADM_OK;
    }
    if (!namespace_labels(attrs, &labels)) {
        adm_psa_annotate(
            attrs, "error",
            adm_arena_printf(a, "failed to lookup namespace \"%s\": namespaces \"%s\" not found", ns, ns));
        record_error(attrs, true);
        return ADM_OK;
    }
    policy = adm_psa_policy_resolve(a, labels, &cfg->defaults, &errs);
    if (errs == NULL) {
        return ADM_ENOMEM;
    }
    if (errs[0] == '\0' && policy.warn.level == ADM_PSA_PRIVILEGED &&
        policy.audit.level == ADM_PSA_PRIVILEGED) {
        return ADM_OK;
    }
    obj = adm_attrs_object(attrs);
    tmpl = pod_template(attrs, obj, &known);
    if (tmpl == NULL || !yyjson_is_obj(tmpl)) {
        return ADM_OK; /* no template (an optional one left out): nothing to check */
    }
    return evaluate_pod(cfg, attrs, &policy, errs, obj, adm_json_get(tmpl, "metadata"),
                        adm_json_get(tmpl, "spec"), false, st);
}

static bool is_controller(const adm_attrs_t *attrs)
{
    bool known;

    pod_template(attrs, NULL, &known);
    return known;
}

int adm_psa_admit(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                  void *clock_arg, adm_status_t *st)
{
    if (attrs->req->operation != ADM_OP_CREATE && attrs->req->operation != ADM_OP_UPDATE) {
        return ADM_OK;
    }
    if (is(attrs, "", "pods")) {
        return validate_pod(cfg, attrs, st);
    }
    if (is(attrs, "", "namespaces")) {
        return adm_psa_validate_namespace(cfg, attrs, now_ns, clock_arg, st);
    }
    if (is_controller(attrs)) {
        return validate_controller(cfg, attrs, st);
    }
    return ADM_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity on namespaces (admission/admission.go ValidateNamespace and
 * EvaluatePodsInNamespace): bad labels are refused, an exempt namespace's policy is reported as
 * ignored, and a stricter enforce level is tried on the namespace's existing pods (from the
 * cluster state), whose failures come back as warnings, grouped as kube groups them.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"
#include "adm/cluster/cluster_state.h"
#include "adm/podsecurity/admission.h"
#include "adm/podsecurity/evaluate.h"

#include <stdlib.h>
#include <string.h>

/* apierrors.NewInvalid(Namespace, name, errs): 422 with one cause per bad label. */
static int invalid(adm_status_t *st, adm_arena_t *a, const char *name, const adm_psa_label_error_t *e, int n)
{
    adm_jsonw_t w;
    const char *msg;
    yyjson_read_err rerr;
    yyjson_doc *doc;

    if (n == 1) {
        msg = e[0].text;
    } else {
        msg = adm_arena_printf(a, "[%s", e[0].text);
        for (int i = 1; i < n && msg != NULL; i++) {
            msg = adm_arena_printf(a, "%s, %s", msg, e[i].text);
        }
        msg = msg != NULL ? adm_arena_printf(a, "%s]", msg) : NULL;
    }
    adm_jsonw_init(&w, a);
    ADM_JSONW_LIT(&w, "{\"name\":");
    adm_jsonw_string(&w, name, strlen(name));
    ADM_JSONW_LIT(&w, ",\"kind\":\"Namespace\",\"causes\":[");
    for (int i = 0; i < n; i++) {
        const char *body =
            adm_arena_printf(a, "Invalid value: %s: %s", adm_go_quote(a, e[i].value), e[i].detail);

        if (body == NULL) {
            return ADM_ENOMEM;
        }
        ADM_JSONW_LIT(&w, "{\"reason\":\"FieldValueInvalid\",\"message\":");
        adm_jsonw_string(&w, body, strlen(body));
        ADM_JSONW_LIT(&w, ",\"field\":");
        adm_jsonw_string(&w, e[i].field, strlen(e[i].field));
        adm_jsonw_raw(&w, i + 1 < n ? "}," : "}", i + 1 < n ? 2 : 1);
    }
    ADM_JSONW_LIT(&w, "]}");
    if (w.failed || msg == NULL) {
        return ADM_ENOMEM;
    }
    doc = adm_json_read(a, w.data, w.len, &rerr);
    st->code = 422;
    st->reason = "Invalid";
    st->message = adm_arena_printf(a, "Namespace %s is invalid: %s", adm_go_quote(a, name), msg);
    st->details = doc != NULL ? yyjson_doc_get_root(doc) : NULL;
    return st->message != NULL && st->details != NULL ? ADM_DECLINED : ADM_ENOMEM;
}

static bool has_label(yyjson_val *labels, const char *mode, const char *suffix)
{
    char key[64];

    snprintf(key, sizeof(key), ADM_PSA_LABEL_PREFIX "%s%s", mode, suffix);
    return yyjson_is_obj(labels) && yyjson_obj_get(labels, key) != NULL;
}

/* exemptNamespaceWarning; NULL when there is nothing to say. */
static const char *exempt_warning(adm_arena_t *a, const adm_psa_config_t *cfg, const char *name,
                                  const adm_psa_policy_t *p, yyjson_val *labels)
{
    static const char *const modes[] = {"enforce", "audit", "warn"};
    const adm_psa_lv_t *lvs[3] = {&p->enforce, &p->audit, &p->warn};
    const char *list = "";

    if (adm_psa_policy_fully_privileged(p) || adm_psa_policy_equivalent(p, &cfg->defaults)) {
        return NULL;
    }
    for (int m = 0; m < 3 && list != NULL; m++) {
        if (lvs[m]->level != ADM_PSA_PRIVILEGED &&
            (has_label(labels, modes[m], "") || has_label(labels, modes[m], "-version"))) {
            list = adm_arena_printf(a, "%s%s%s=%s", list, list[0] != '\0' ? ", " : "", modes[m],
                                    adm_psa_lv_string(a, lvs[m]));
        }
    }
    if (list == NULL) {
        return NULL;
    }
    return adm_arena_printf(a,
                            "namespace %s is exempt from Pod Security, and the policy (%s) will be ignored",
                            adm_go_quote(a, name), list);
}

static bool same_errors(const adm_psa_label_error_t *a, int na, const adm_psa_label_error_t *b, int nb)
{
    if (na != nb) {
        return false;
    }
    for (int i = 0; i < na; i++) {
        if (strcmp(a[i].text, b[i].text) != 0) {
            return false;
        }
    }
    return true;
}

int adm_psa_validate_namespace(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                               void *clock_arg, adm_status_t *st)
{
    adm_arena_t *a = attrs->arena;
    yyjson_val *obj = adm_attrs_object(attrs);
    yyjson_val *labels = adm_json_path(obj, "metadata", "labels", NULL);
    const char *name = adm_json_str(adm_json_get(obj, "metadata"), "name");
    const char *ns = attrs->req->namespace_[0] != '\0' ? attrs->req->namespace_ : name;
    adm_psa_label_error_t errs[6], old_errs[6];
    adm_psa_policy_t p, old;
    const char *agg;
    const char *warning;
    int n, nold;

    if (attrs->req->sub_resource != NULL && attrs->req->sub_resource[0] != '\0') {
        return ADM_OK;
    }
    if (obj == NULL || !adm_attrs_kind_is(attrs, "", "Namespace")) {
        adm_psa_annotate(attrs, "error", "failed to decode namespace");
        return adm_status_bad_request(st, a, "failed to decode namespace");
    }
    n = adm_psa_label_errors(a, labels, errs);
    p = adm_psa_policy_resolve(a, labels, &cfg->defaults, &agg);
    if (n < 0 || agg == NULL) {
        return ADM_ENOMEM;
    }
    if (attrs->req->operation == ADM_OP_CREATE) {
        if (n > 0) {
            return invalid(st, a, attrs->req->name[0] != '\0' ? attrs->req->name : name, errs, n);
        }
        warning = adm_psa_exempt_namespace(cfg, ns) ? exempt_warning(a, cfg, name, &p, labels) : NULL;
        if (warning != NULL) {
            adm_attrs_add_warning(attrs, warning);
        }
        return ADM_OK;
    }
    if (attrs->req->old_object == NULL) {
        adm_psa_annotate(attrs, "error", "failed to decode  old namespace");
        return adm_status_bad_request(st, a, "failed to decode  old namespace");
    }
    labels = adm_json_path(attrs->req->old_object, "metadata", "labels", NULL);
    nold = adm_psa_label_errors(a, labels, old_errs);
    old = adm_psa_policy_resolve(a, labels, &cfg->defaults, &agg);
    if (nold < 0 || agg == NULL) {
        return ADM_ENOMEM;
    }
    labels = adm_json_path(obj, "metadata", "labels", NULL);
    if (n > 0 && (nold == 0 || !same_errors(errs, n, old_errs, nold))) {
        return invalid(st, a, attrs->req->name[0] != '\0' ? attrs->req->name : name, errs, n);
    }
    if (adm_psa_lv_equal(&p.enforce, &old.enforce) || p.enforce.level == ADM_PSA_PRIVILEGED) {
        return ADM_OK;
    }
    if (p.enforce.version.latest == old.enforce.version.latest &&
        (p.enforce.version.latest || p.enforce.version.minor == old.enforce.version.minor) &&
        p.enforce.level <= old.enforce.level) {
        return ADM_OK;
    }
    if (adm_psa_exempt_namespace(cfg, ns)) {
        warning = exempt_warning(a, cfg, name, &p, labels);
        if (warning != NULL) {
            adm_attrs_add_warning(attrs, warning);
        }
        return ADM_OK;
    }
    n = adm_psa_check_namespace_pods(cfg, attrs, name, &p.enforce, now_ns, clock_arg);
    return n < 0 ? n : ADM_OK;
}

/* metav1.GetControllerOf: the UID of the ownerReference with controller=true, or NULL. */
static const char *controller_uid(yyjson_val *pod)
{
    yyjson_val *refs = adm_json_path(pod, "metadata", "ownerReferences", NULL);

    for (size_t i = 0, n = yyjson_arr_size(refs); i < n; i++) {
        yyjson_val *r = yyjson_arr_get(refs, i);

        if (yyjson_is_true(adm_json_get(r, "controller"))) {
            return adm_json_str(r, "uid");
        }
    }
    return NULL;
}

typedef struct group_s {
    const char *reasons; /* ForbiddenReason: the key */
    const char *pod;     /* the smallest pod name with it */
    size_t count;
} group_t;

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* prioritizePods: uncontrolled pods and each controller's first pod in list order, then the rest
   of each controller's pods; pods with an exempt runtime class are left out. */
static size_t prioritize(adm_arena_t *a, const adm_psa_config_t *cfg, yyjson_val *const *pods, size_t n,
                         yyjson_val **out)
{
    const char **seen = adm_arena_calloc(a, n + 1, sizeof(*seen));
    yyjson_val **dups = adm_arena_calloc(a, n + 1, sizeof(*dups));
    size_t nout = 0, nseen = 0, ndups = 0;

    if (seen == NULL || dups == NULL) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        const char *uid;
        bool dup = false;

        if (adm_psa_exempt_runtime_class(cfg,
                                         adm_json_str(adm_json_get(pods[i], "spec"), "runtimeClassName"))) {
            continue;
        }
        uid = controller_uid(pods[i]);
        for (size_t k = 0; uid != NULL && k < nseen && !dup; k++) {
            dup = strcmp(seen[k], uid) == 0;
        }
        if (dup) {
            dups[ndups++] = pods[i];
            continue;
        }
        if (uid != NULL) {
            seen[nseen++] = uid;
        }
        out[nout++] = pods[i];
    }
    memcpy(out + nout, dups, ndups * sizeof(*dups));
    return nout + ndups;
}

int adm_psa_check_namespace_pods(const adm_psa_config_t *cfg, adm_attrs_t *attrs, const char *ns,
                                 const adm_psa_lv_t *enforce, uint64_t (*now_ns)(void *), void *clock_arg)
{
    adm_arena_t *a = attrs->arena;
    size_t npods = 0;
    yyjson_val *const *pods = adm_cluster_state_list(adm_plugin_cluster(attrs), "", "Pod", ns, &npods);
    yyjson_val **order = adm_arena_calloc(a, npods + 1, sizeof(*order));
    group_t *groups = adm_arena_calloc(a, npods + 1, sizeof(*groups));
    const char **lines = adm_arena_calloc(a, npods + 1, sizeof(*lines));
    size_t total, checked, ngroups = 0;
    uint64_t deadline = now_ns(clock_arg) + ADM_PSA_NAMESPACE_CHECK_NS;
    int added = 0;

    if (order == NULL || groups == NULL || lines == NULL) {
        return ADM_ENOMEM;
    }
    total = prioritize(a, cfg, pods, npods, order);
    if (total == SIZE_MAX) {
        return ADM_ENOMEM;
    }
    checked = total < ADM_PSA_NAMESPACE_MAX_PODS ? total : ADM_PSA_NAMESPACE_MAX_PODS;
    for (size_t i = 0; i < checked; i++) {
        adm_psa_result_t r;
        const char *reasons;
        const char *pod_name = adm_json_str(adm_json_get(order[i], "metadata"), "name");
        size_t g;

        adm_psa_evaluate(a, enforce, adm_json_get(order[i], "metadata"), adm_json_get(order[i], "spec"), &r);
        if (r.nomem) {
            return ADM_ENOMEM;
        }
        if (r.nfailed > 0) {
            reasons = adm_psa_result_reason(a, &r);
            if (reasons == NULL) {
                return ADM_ENOMEM;
            }
            for (g = 0; g < ngroups && strcmp(groups[g].reasons, reasons) != 0; g++) {
            }
            if (g == ngroups) {
                groups[ngroups].reasons = reasons;
                groups[ngroups].pod = pod_name;
                ngroups++;
            } else if (strcmp(pod_name, groups[g].pod) < 0) {
                groups[g].pod = pod_name;
            }
            groups[g].count++;
        }
        if (now_ns(clock_arg) >= deadline) {
            checked = i + 1;
            break;
        }
    }
    if (checked < total) {
        const char *w =
            adm_arena_printf(a,
                             "new PodSecurity enforce level only checked against the first %zu of %zu "
                             "existing pods",
                             checked, total);

        if (w == NULL) {
            return ADM_ENOMEM;
        }
        adm_attrs_add_warning(attrs, w);
        added++;
    }
    if (ngroups > 0) {
        const char *lv = adm_psa_lv_string(a, enforce);
        const char *qns = adm_go_quote(a, ns);
        const char *qlv = lv != NULL ? adm_go_quote(a, lv) : NULL;
        const char *w =
            qns != NULL && qlv != NULL
                ? adm_arena_printf(a,
                                   "existing pods in namespace %s violate the new PodSecurity enforce "
                                   "level %s",
                                   qns, qlv)
                : NULL;

        if (w == NULL) {
            return ADM_ENOMEM;
        }
        adm_attrs_add_warning(attrs, w);
        added++;
    }
    for (size_t g = 0; g < ngroups; g++) {
        if (groups[g].count == 1) {
            lines[g] = adm_arena_printf(a, "%s: %s", groups[g].pod, groups[g].reasons);
        } else if (groups[g].count == 2) {
            lines[g] = adm_arena_printf(a, "%s (and 1 other pod): %s", groups[g].pod, groups[g].reasons);
        } else {
            lines[g] = adm_arena_printf(a, "%s (and %zu other pods): %s", groups[g].pod, groups[g].count - 1,
                                        groups[g].reasons);
        }
        if (lines[g] == NULL) {
            return ADM_ENOMEM;
        }
    }
    qsort(lines, ngroups, sizeof(*lines), cmp_str);
    for (size_t g = 0; g < ngroups; g++) {
        adm_attrs_add_warning(attrs, lines[g]);
        added++;
    }
    return added;
}

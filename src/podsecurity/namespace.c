/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity on namespaces (admission/admission.go ValidateNamespace): bad labels are refused,
 * an exempt namespace's policy is reported as ignored, and a stricter enforce level is tried on
 * the namespace's existing pods (namespace_pods.c: from the cluster state here, or from a live
 * LIST that the plugin makes when it has an API connection), whose failures come back as warnings.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"
#include "adm/podsecurity/admission.h"
#include "adm/podsecurity/namespace_pods.h"

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

int adm_psa_namespace_decide(const adm_psa_config_t *cfg, adm_attrs_t *attrs, adm_status_t *st,
                             adm_psa_pods_check_t *check)
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

    memset(check, 0, sizeof(*check));
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
    check->needed = true;
    check->namespace_ = name;
    check->enforce = p.enforce;
    return ADM_OK;
}

int adm_psa_validate_namespace(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                               void *clock_arg, adm_status_t *st)
{
    adm_psa_pods_check_t check;
    int rc = adm_psa_namespace_decide(cfg, attrs, st, &check);

    if (rc != ADM_OK || !check.needed) {
        return rc;
    }
    rc = adm_psa_check_namespace_pods(cfg, attrs, check.namespace_, &check.enforce, now_ns, clock_arg,
                                      now_ns(clock_arg) + ADM_PSA_NAMESPACE_CHECK_MS * 1000000ull);
    return rc < 0 ? rc : ADM_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Webhook matching. kube evaluates namespaceSelector, objectSelector, then rules; every step is
 * free of side effects, so this file tests the rules first (string compares only) and looks up
 * the namespace only for webhooks whose rules matched. The outcome is the same: a request is
 * skipped if any step says no, and a selector error surfaces only when nothing said no.
 */
#include "adm/webhook/match.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/webhook/api_equivalents.h"
#include "adm/webhook/selector.h"

#include <string.h>

typedef enum pending_e {
    PENDING_NONE,
    PENDING_NS_NOT_FOUND,
    PENDING_NO_OBJECT,
} pending_t;

static bool exact_or_wildcard(const char **items, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(items[i], "*") == 0 || strcmp(items[i], want) == 0) {
            return true;
        }
    }
    return false;
}

/* Namespaces are cluster-scoped although their requests carry their own name as namespace. */
static bool is_namespace_resource(const adm_review_request_t *req, const char *version)
{
    return req->resource.group[0] == '\0' && strcmp(version, "v1") == 0 &&
           strcmp(req->resource.resource, "namespaces") == 0;
}

static bool scope_matches(adm_rule_scope_t scope, const adm_review_request_t *req, const char *version)
{
    switch (scope) {
    case ADM_SCOPE_ALL: return true;
    case ADM_SCOPE_NAMESPACED: return !is_namespace_resource(req, version) && req->namespace_[0] != '\0';
    case ADM_SCOPE_CLUSTER: return is_namespace_resource(req, version) || req->namespace_[0] == '\0';
    }
    return false;
}

static bool resource_name_matches(const adm_rule_t *r, const char *resource, const char *sub)
{
    for (size_t i = 0; i < r->nresources; i++) {
        const adm_rule_resource_t *rr = &r->resources[i];

        if ((strcmp(rr->resource, "*") == 0 || strcmp(rr->resource, resource) == 0) &&
            (strcmp(rr->subresource, "*") == 0 || strcmp(rr->subresource, sub) == 0)) {
            return true;
        }
    }
    return false;
}

static bool resource_matches(const adm_rule_t *r, const adm_review_request_t *req)
{
    return resource_name_matches(r, req->resource.resource, req->sub_resource);
}

/* Every part of rules.Matcher but the version, which the caller substitutes. */
static bool rule_matches_at(const adm_rule_t *r, const adm_review_request_t *req, const char *version)
{
    return scope_matches(r->scope, req, version) && (r->operations & (1u << req->operation)) != 0 &&
           exact_or_wildcard(r->api_groups, r->napi_groups, req->resource.group) && resource_matches(r, req);
}

static bool rules_match_exactly(const adm_webhook_t *wh, const adm_review_request_t *req)
{
    const char *version = req->resource.version;

    for (size_t i = 0; i < wh->nrules; i++) {
        const adm_rule_t *r = &wh->rules[i];

        if (exact_or_wildcard(r->api_versions, r->napi_versions, version) &&
            rule_matches_at(r, req, version)) {
            return true;
        }
    }
    return false;
}

/*
 * The members in other groups of the request's built-in equivalence class (api_equivalents.h:
 * core v1 events and events.k8s.io/v1 events) that a rule matches: kube-apiserver would send the
 * request converted to that member; for admitd that is the D6 call failure too.
 */
static bool rules_match_other_group(const adm_webhook_t *wh, const adm_review_request_t *req)
{
    size_t nclasses;
    const adm_api_class_t *classes = adm_api_equivalent_classes(&nclasses);

    for (size_t c = 0; c < nclasses; c++) {
        const adm_api_class_t *cl = &classes[c];
        bool member = false;

        for (size_t j = 0; j < cl->nmembers && !member; j++) {
            const adm_gvr_t *g = &cl->members[j].gvr;

            member = strcmp(g->group, req->resource.group) == 0 &&
                     strcmp(g->version, req->resource.version) == 0 &&
                     strcmp(g->resource, req->resource.resource) == 0;
        }
        for (size_t j = 0; member && j < cl->nmembers; j++) {
            const adm_api_member_t *m = &cl->members[j];

            if (strcmp(m->gvr.group, req->resource.group) == 0 || !adm_api_member_served(m)) {
                continue;
            }
            for (size_t i = 0; i < wh->nrules; i++) {
                const adm_rule_t *r = &wh->rules[i];

                if (exact_or_wildcard(r->api_versions, r->napi_versions, m->gvr.version) &&
                    exact_or_wildcard(r->api_groups, r->napi_groups, m->gvr.group) &&
                    scope_matches(r->scope, req, m->gvr.version) &&
                    (r->operations & (1u << req->operation)) != 0 &&
                    resource_name_matches(r, m->gvr.resource, req->sub_resource)) {
                    return true;
                }
            }
        }
    }
    return false;
}

/*
 * kube tries the resource's equivalents (other versions with the same storage) against each rule.
 * At run time admitd takes every other version a rule lists for the same group and resource as
 * one, which is what D6 reports as a conversion it cannot do; so are the equivalents in other
 * groups that api_equivalents.h's table of built-in resources lists.
 */
static bool rules_match_other_version(const adm_webhook_t *wh, const adm_review_request_t *req)
{
    for (size_t i = 0; i < wh->nrules; i++) {
        const adm_rule_t *r = &wh->rules[i];

        for (size_t j = 0; j < r->napi_versions; j++) {
            const char *v = r->api_versions[j];

            if (strcmp(v, "*") != 0 && strcmp(v, req->resource.version) != 0 && rule_matches_at(r, req, v)) {
                return true;
            }
        }
    }
    return false;
}

/* metav1.Object's labels: NULL (no labels) when the object has metadata without labels. */
static bool object_selected(const adm_selector_t *s, yyjson_val *obj)
{
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");

    /* kube's meta.Accessor fails on objects without ObjectMeta (CONNECT options): no match. */
    if (!yyjson_is_obj(meta)) {
        return false;
    }
    return adm_selector_matches(s, yyjson_obj_get(meta, "labels"));
}

/* apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name). */
static void namespace_not_found(adm_status_t *st, adm_arena_t *a, const char *name)
{
    const char *qname = adm_go_quote(a, name);
    yyjson_alc alc;
    yyjson_mut_doc *mdoc;
    yyjson_mut_val *details;
    yyjson_doc *doc = NULL;

    adm_json_alc_init(&alc, a);
    mdoc = yyjson_mut_doc_new(&alc);
    details = mdoc != NULL ? yyjson_mut_obj(mdoc) : NULL;
    if (details != NULL && (name[0] == '\0' || yyjson_mut_obj_add_str(mdoc, details, "name", name)) &&
        yyjson_mut_obj_add_str(mdoc, details, "kind", "namespaces")) {
        yyjson_mut_doc_set_root(mdoc, details);
        doc = yyjson_mut_doc_imut_copy(mdoc, &alc);
    }
    st->message = qname != NULL ? adm_arena_printf(a, "namespaces %s not found", qname) : NULL;
    if (doc == NULL || st->message == NULL) {
        adm_status_nomem(st);
        return;
    }
    st->code = 404;
    st->reason = "NotFound";
    st->details = yyjson_doc_get_root(doc);
}

adm_wh_match_t adm_webhook_match(const adm_webhook_t *wh, const adm_match_input_t *in, adm_arena_t *a,
                                 adm_status_t *status, const char **reason)
{
    const adm_review_request_t *req = in->req;
    bool exact = rules_match_exactly(wh, req);
    bool namespaces = strcmp(req->resource.resource, "namespaces") == 0;
    pending_t pending = PENDING_NONE;

    if (!exact && (wh->match_policy != ADM_MATCH_EQUIVALENT ||
                   (!rules_match_other_version(wh, req) && !rules_match_other_group(wh, req)))) {
        return ADM_WH_SKIP;
    }

    /* Cluster-scoped objects other than namespaces are never exempted by a namespaceSelector. */
    if ((req->namespace_[0] != '\0' || namespaces) && !wh->namespace_selector.everything) {
        yyjson_val *ns_obj = NULL;
        yyjson_val *labels = NULL;

        /* A namespace being created or updated is not stored yet in its new form: its own labels. */
        if (namespaces && req->sub_resource[0] == '\0' &&
            (req->operation == ADM_OP_CREATE || req->operation == ADM_OP_UPDATE)) {
            if (in->object == NULL) {
                pending = PENDING_NO_OBJECT;
            } else {
                labels = adm_json_path(in->object, "metadata", "labels", NULL);
            }
        } else {
            ns_obj = adm_cluster_state_get(in->cluster, "", "Namespace", "", req->namespace_);
            if (ns_obj == NULL) {
                pending = PENDING_NS_NOT_FOUND;
            } else {
                labels = adm_json_path(ns_obj, "metadata", "labels", NULL);
            }
        }
        if (pending == PENDING_NONE && !adm_selector_matches(&wh->namespace_selector, labels)) {
            return ADM_WH_SKIP;
        }
    }

    if (!wh->object_selector.everything && !object_selected(&wh->object_selector, in->object) &&
        !object_selected(&wh->object_selector, in->old_object)) {
        return ADM_WH_SKIP;
    }

    switch (pending) {
    case PENDING_NS_NOT_FOUND: namespace_not_found(status, a, req->namespace_); return ADM_WH_ERROR;
    case PENDING_NO_OBJECT:
        /* What meta.Accessor(nil) returns, wrapped by apierrors.NewInternalError. */
        if (adm_status_internal(status, a, "object does not implement the Object interfaces") == ADM_ENOMEM) {
            adm_status_nomem(status);
        }
        return ADM_WH_ERROR;
    case PENDING_NONE: break;
    }

    if (!exact) {
        *reason = adm_arena_printf(a, "cannot convert %s/%s, Resource=%s for matchPolicy Equivalent",
                                   req->resource.group, req->resource.version, req->resource.resource);
        if (*reason == NULL) {
            adm_status_nomem(status);
            return ADM_WH_ERROR;
        }
        return ADM_WH_CONVERT;
    }
    return ADM_WH_CALL;
}

bool adm_webhook_request_exempt(const adm_review_request_t *req)
{
    static const char *const kinds[] = {
        "ValidatingWebhookConfiguration",   "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy",      "MutatingAdmissionPolicyBinding",
    };

    if (strcmp(req->kind.group, "admissionregistration.k8s.io") != 0) {
        return false;
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(req->kind.kind, kinds[i]) == 0) {
            return true;
        }
    }
    return false;
}

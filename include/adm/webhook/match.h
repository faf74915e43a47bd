/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which downstream webhooks a request calls: kube-apiserver's ShouldCallHook up to (not
 * including) matchConditions, spec/webhook-dispatch.md section 1: namespaceSelector, objectSelector,
 * rules with matchPolicy, then the selector error kept pending until the rules matched.
 *
 * Runs once per webhook per request (per round, for mutating webhooks): no heap allocation, and the
 * arena is touched only to build an error status or a conversion reason.
 */
#ifndef ADM_WEBHOOK_MATCH_H
#define ADM_WEBHOOK_MATCH_H

#include "adm/admission/admission.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/cluster/cluster_state.h"
#include "adm/webhook/webhook.h"

#include <stdbool.h>
#include <yyjson.h>

typedef struct adm_match_input_s {
    const adm_review_request_t *req;
    yyjson_val *object;     /* the object as patched so far (mutating) or req->object; NULL when none */
    yyjson_val *old_object; /* req->old_object */
    const adm_cluster_state_t *cluster; /* namespaces for namespaceSelector; NULL acts as empty */
} adm_match_input_t;

typedef enum adm_wh_match_e {
    ADM_WH_SKIP,    /* not called */
    ADM_WH_CALL,    /* rules matched the request's own group/version/resource, selectors matched */
    ADM_WH_CONVERT, /* matched only through another version (matchPolicy Equivalent), selectors matched */
    ADM_WH_ERROR,   /* rules matched but a selector step failed: *status, not subject to failurePolicy */
} adm_wh_match_t;

/**
 * Decides whether wh is called for in. The request's resource (req->resource, req->sub_resource)
 * is what rules compare against.
 *
 * ADM_WH_CONVERT: no rule matches exactly, matchPolicy is Equivalent, and a rule matches when the
 * request's version is replaced by another version the rule lists (same group and resource).
 * admitd cannot convert objects (INTERFACE D6); *reason is set to the call-failure reason
 * "cannot convert <group>/<version>, Resource=<resource> for matchPolicy Equivalent" with the
 * request's GroupVersionResource as Go prints it (core group: "/v1, Resource=pods").
 *
 * ADM_WH_ERROR: *status holds the pending selector error: 404 NotFound `namespaces "NAME" not
 * found` (details {name, kind: namespaces}) when the namespace is not in the cluster state (D5), a
 * 500 when a namespace request carries no object, or adm_status_nomem()'s 500 when the arena is
 * exhausted.
 */
adm_wh_match_t adm_webhook_match(const adm_webhook_t *wh, const adm_match_input_t *in, adm_arena_t *a,
                                 adm_status_t *status, const char **reason);

/**
 * True for requests no webhook configured through the API sees: the kind is one of the
 * admissionregistration.k8s.io webhook and policy configuration kinds (spec section 0.2).
 */
bool adm_webhook_request_exempt(const adm_review_request_t *req);

#endif

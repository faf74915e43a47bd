/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The downstream webhooks admitd calls, as loaded from MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration objects (admissionregistration.k8s.io/v1) with kube-apiserver's
 * defaults applied: the data model shared by the loader (config.h), matching
 * (match.h) and the dispatcher.
 *
 * A hook list is every webhook of every configuration of one type, configurations in name order
 * and webhooks in listed order (spec/webhook-dispatch.md, "hook list"). All memory belongs to the
 * set's arena and lives until the set is freed (a reload builds a new set).
 */
#ifndef ADM_WEBHOOK_H
#define ADM_WEBHOOK_H

#include "adm/admission/review.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

typedef enum adm_webhook_type_e {
    ADM_WEBHOOK_MUTATING,
    ADM_WEBHOOK_VALIDATING,
} adm_webhook_type_t;

typedef enum adm_failure_policy_e {
    ADM_FAILURE_FAIL, /* default */
    ADM_FAILURE_IGNORE,
} adm_failure_policy_t;

typedef enum adm_match_policy_e {
    ADM_MATCH_EQUIVALENT, /* default */
    ADM_MATCH_EXACT,
} adm_match_policy_t;

typedef enum adm_side_effects_e {
    ADM_SIDE_EFFECTS_NONE,
    ADM_SIDE_EFFECTS_NONE_ON_DRY_RUN,
    ADM_SIDE_EFFECTS_SOME,    /* only from older objects; refused on dry runs */
    ADM_SIDE_EFFECTS_UNKNOWN, /* likewise */
} adm_side_effects_t;

typedef enum adm_reinvocation_e {
    ADM_REINVOKE_NEVER, /* default */
    ADM_REINVOKE_IF_NEEDED,
} adm_reinvocation_t;

typedef enum adm_rule_scope_e {
    ADM_SCOPE_ALL, /* "*", the default */
    ADM_SCOPE_CLUSTER,
    ADM_SCOPE_NAMESPACED,
} adm_rule_scope_t;

/* One entry of rules[].resources, split at the first '/'. */
typedef struct adm_rule_resource_s {
    const char *resource;    /* "pods", "*" */
    const char *subresource; /* "" when none, "*", "status", or everything after the first '/' */
} adm_rule_resource_t;

typedef struct adm_rule_s {
    unsigned operations;     /* ADM_OPS_* bits (admission.h); "*" sets all four */
    const char **api_groups; /* "*" or exact groups, "" is core */
    size_t napi_groups;
    const char **api_versions;
    size_t napi_versions;
    adm_rule_resource_t *resources;
    size_t nresources;
    adm_rule_scope_t scope;
} adm_rule_t;

/* A label-selector requirement operator (metav1.LabelSelectorOperator). */
typedef enum adm_selector_op_e {
    ADM_SEL_IN,
    ADM_SEL_NOT_IN,
    ADM_SEL_EXISTS,
    ADM_SEL_DOES_NOT_EXIST,
} adm_selector_op_t;

typedef struct adm_selector_req_s {
    const char *key;
    adm_selector_op_t op;
    const char **values; /* In / NotIn: one or more; Exists / DoesNotExist: none */
    size_t nvalues;
} adm_selector_req_t;

/*
 * A parsed metav1.LabelSelector. matchLabels k=v become In requirements with one value, so the
 * requirements are all there is to evaluate (ANDed). everything: the selector was {} (or defaulted
 * to it) and matches any labels, even an object without metadata.
 */
typedef struct adm_selector_s {
    bool everything;
    adm_selector_req_t *reqs;
    size_t nreqs;
} adm_selector_t;

typedef struct adm_webhook_service_s {
    const char *namespace_;
    const char *name;
    const char *path; /* as configured; "" when absent */
    uint16_t port;    /* default 443 */
} adm_webhook_service_t;

typedef struct adm_webhook_s {
    adm_webhook_type_t type;
    const char *config_name; /* metadata.name of the configuration */
    const char *name;        /* the webhook's name (what messages quote) */
    const char *id;          /* "<configName>/<webhookName>/<n>", n counting earlier same names */
    size_t index;            /* position in the full hook list of its type */
    /* clientConfig: exactly one of url / service */
    const char *url;                      /* "https://host[:port][/path]" as written, or NULL */
    const adm_webhook_service_t *service; /* or NULL */
    const char *ca_bundle; /* PEM text (decoded from base64), NUL-terminated; NULL: system CAs */
    size_t ca_bundle_len;  /* bytes of ca_bundle without the NUL */
    adm_rule_t *rules;
    size_t nrules;
    adm_failure_policy_t failure_policy;
    adm_match_policy_t match_policy;
    adm_selector_t namespace_selector;
    adm_selector_t object_selector;
    adm_side_effects_t side_effects;
    uint32_t timeout_seconds;            /* 1..30, default 10 */
    adm_review_version_t review_version; /* first of admissionReviewVersions that admitd speaks */
    adm_reinvocation_t reinvocation;     /* mutating only */
    /* the configuration's proxy.admitd.io/circuit-breaker annotation (breaker.h), when it has one */
    bool breaker_set;
    uint32_t breaker_threshold; /* 0: off */
    uint64_t breaker_cooldown_ms;
    /* the configuration's proxy.admitd.io/shadow annotation is "true": called, never deciding */
    bool shadow;
} adm_webhook_t;

#endif

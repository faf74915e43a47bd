/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EvaluatePodsInNamespace (pod-security-admission's admission.go): when a label change raises a
 * namespace's enforce level, its existing pods are tried against the new level and the failures
 * come back as warnings, with kube's limits (the first 3000 pods in kube's priority order, 1 s)
 * and kube's words.
 *
 * The pods come page by page: the whole --cluster-state list as one page, or the pages of a live
 * LIST of the namespace's pods (the standalone pod-security webhook's PodListerFromClient). Of a
 * page only what the warnings need outlives it (each checked pod's name and failed reasons, in the
 * tally's arena), so a LIST of any size holds one page at a time: pods are evaluated as their page
 * arrives, the ones kube would not reach (past the first 3000 in its order) never.
 */
#ifndef ADM_PSA_NAMESPACE_PODS_H
#define ADM_PSA_NAMESPACE_PODS_H

#include "adm/admission/admission.h"
#include "adm/podsecurity/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

/* The most pods a namespace label change is checked against, and for how long (kube's limits). */
#define ADM_PSA_NAMESPACE_MAX_PODS 3000
#define ADM_PSA_NAMESPACE_CHECK_MS 1000

/* kube's warning when the pods cannot be listed (the LIST failed, or its time ran out). */
#define ADM_PSA_LIST_PODS_FAILED "failed to list pods while checking new PodSecurity enforce level"

typedef struct adm_psa_pods_s adm_psa_pods_t;

/**
 * A tally of the pods of one namespace against enforce, in a's memory (the request's arena; cfg
 * must outlive it). now_ns is a monotonic clock; evaluation stops once it reads deadline_ns or
 * later, as kube's stops at its context's deadline. NULL when out of memory.
 */
adm_psa_pods_t *adm_psa_pods_start(adm_arena_t *a, const adm_psa_config_t *cfg, const adm_psa_lv_t *enforce,
                                   uint64_t (*now_ns)(void *), void *clock_arg, uint64_t deadline_ns);

/* What adm_psa_pods_add answers besides errors. */
#define ADM_PSA_PODS_DONE 0 /* the list is complete for the warnings: call adm_psa_pods_warn */
#define ADM_PSA_PODS_MORE 1 /* the next page is needed */

/**
 * Takes the next n pods of the list, in list order. more: pages follow this one; remaining: how
 * many pods they hold (a LIST page's remainingItemCount), or -1 when unknown. Once the first 3000
 * pods of kube's order are known (3000 without a controller or first of their controller) and no
 * runtime class is exempt, remaining completes the total and no further page is needed. Pod
 * texts are read from the pods only during the call; scratch takes the evaluation's temporaries
 * (the tally's own arena, or one the caller resets after the call).
 *
 * Returns ADM_PSA_PODS_DONE, ADM_PSA_PODS_MORE, ADM_ENOMEM, or -ETIMEDOUT when the deadline
 * passed while pages remain (the LIST did not finish in time: kube's list failure). When the
 * deadline passes on the last page, evaluation stops there and the warnings say how many pods
 * were checked, as kube's do.
 */
int adm_psa_pods_add(adm_psa_pods_t *t, adm_arena_t *scratch, yyjson_val *const *pods, size_t n, bool more,
                     int64_t remaining);

/**
 * Adds the tally's warnings to attrs in kube's order and words: "new PodSecurity enforce level only
 * checked against the first N of M existing pods" when not all were checked, "existing pods in
 * namespace "ns" violate ..." when one failed, then one line per distinct set of reasons, sorted.
 * Returns the number of warnings added, or ADM_ENOMEM.
 */
int adm_psa_pods_warn(adm_psa_pods_t *t, adm_attrs_t *attrs, const char *ns);

/**
 * EvaluatePodsInNamespace on the pods of ns that the request's cluster state holds (--cluster-state,
 * without an API connection), evaluation stopping once now_ns reads deadline_ns. Returns the number
 * of warnings added to attrs, or ADM_ENOMEM.
 */
int adm_psa_check_namespace_pods(const adm_psa_config_t *cfg, adm_attrs_t *attrs, const char *ns,
                                 const adm_psa_lv_t *enforce, uint64_t (*now_ns)(void *), void *clock_arg,
                                 uint64_t deadline_ns);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Pod Security Standards checks and their evaluator (pod-security-admission's policy
 * package): which checks a level and version mean, running them on a pod's metadata and spec,
 * and the reason and detail texts kube prints for the failures.
 */
#ifndef ADM_PSA_EVALUATE_H
#define ADM_PSA_EVALUATE_H

#include "adm/base/arena.h"
#include "adm/podsecurity/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

/* AggregateCheckResult: the failing checks in check order. */
typedef struct adm_psa_result_s {
    size_t nfailed;
    const char *reasons[24]; /* ForbiddenReason of each failing check */
    const char *details[24]; /* ForbiddenDetail ("" when none) */
    bool nomem;              /* the arena ran out: the result is incomplete */
} adm_psa_result_t;

/**
 * Evaluates the pod (metadata and spec objects; either may be NULL) against lv. Privileged allows
 * everything. Texts live in the arena.
 */
void adm_psa_evaluate(adm_arena_t *a, const adm_psa_lv_t *lv, yyjson_val *metadata, yyjson_val *spec,
                      adm_psa_result_t *out);

/*
 * The verdicts of the checks already run on one pod (metadata and spec), so that evaluating it at
 * a second level or version runs again only the checks (or versions of a check) the first did
 * not: a check's verdict depends on the pod alone. Zero-filled is empty; it is tied to the pod it
 * was filled for.
 */
#define ADM_PSA_NCHECKS 19
typedef struct adm_psa_memo_s {
    unsigned char impl[ADM_PSA_NCHECKS]; /* the version of the check kept + 1; 0: none */
    bool nomem[ADM_PSA_NCHECKS];
    const char *reason[ADM_PSA_NCHECKS], *detail[ADM_PSA_NCHECKS];
    struct psa_pod_s *pod; /* the pod's fields the checks read, found by the first evaluation (arena) */
} adm_psa_memo_t;

/** adm_psa_evaluate, taking what memo holds for this pod and adding what it runs. */
void adm_psa_evaluate_memo(adm_arena_t *a, const adm_psa_lv_t *lv, yyjson_val *metadata, yyjson_val *spec,
                           adm_psa_memo_t *memo, adm_psa_result_t *out);

/** ForbiddenDetail: "reason (detail), reason2" (arena; NULL when full). */
const char *adm_psa_result_detail(adm_arena_t *a, const adm_psa_result_t *r);

/** prefix followed by adm_psa_result_detail, in one allocation (arena; NULL when full). */
const char *adm_psa_result_detail_after(adm_arena_t *a, const char *prefix, const adm_psa_result_t *r);

/** ForbiddenReason: the reasons joined ", " (arena; NULL when full). */
const char *adm_psa_result_reason(adm_arena_t *a, const adm_psa_result_t *r);

#endif

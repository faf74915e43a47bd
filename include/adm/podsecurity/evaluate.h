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

/** ForbiddenDetail: "reason (detail), reason2" (arena; NULL when full). */
const char *adm_psa_result_detail(adm_arena_t *a, const adm_psa_result_t *r);

/** ForbiddenReason: the reasons joined ", " (arena; NULL when full). */
const char *adm_psa_result_reason(adm_arena_t *a, const adm_psa_result_t *r);

#endif

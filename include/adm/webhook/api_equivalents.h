/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube-apiserver's built-in resources that are served by default under more than one
 * group/version, as equivalence classes: the members of a class share one storage, so
 * kube-apiserver's EquivalentResourceRegistry (keyed by storage prefix) makes them equivalent for
 * matchPolicy Equivalent, and a webhook whose rules list one member is sent requests for the others
 * converted to that one. admitd cannot convert (INTERFACE D6); the webhook loader uses this table
 * to warn exactly where a configuration relies on such a conversion, and the matcher to make a
 * request that matches only through another group of its class the D6 call failure.
 *
 * The table is static data, valid for the life of the process. It knows nothing of custom
 * resources or aggregated APIs: their versions are not kube-apiserver's to list.
 */
#ifndef ADM_API_EQUIVALENTS_H
#define ADM_API_EQUIVALENTS_H

#include "adm/admission/review.h"

#include <stdbool.h>
#include <stddef.h>

/* One group/version/resource of a class. */
typedef struct adm_api_member_s {
    adm_gvr_t gvr;
    unsigned last_minor; /* last 1.x release serving it by default; 0: the newest release still does */
} adm_api_member_t;

typedef struct adm_api_class_s {
    const adm_api_member_t *members;
    size_t nmembers;
    const char *const *subresources; /* served by every member, besides the resource itself */
    size_t nsubresources;
    bool namespaced; /* requests carry a namespace (a rule with scope Cluster never matches them) */
} adm_api_class_t;

/**
 * The equivalence classes, *n set to their count. A class lists every member that some supported
 * release (1.31 up to the newest, INTERFACE D1) serves by default; adm_api_member_served() tells
 * which ones the newest release serves.
 */
const adm_api_class_t *adm_api_equivalent_classes(size_t *n);

/** True when the newest release kube-apiserver serves m by default (m->last_minor is 0). */
bool adm_api_member_served(const adm_api_member_t *m);

#endif

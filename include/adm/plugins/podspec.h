/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cluster-state plugins compare and merge in pod specs as kube does: quantities read from
 * JSON, ResourceLists compared as apiequality.Semantic compares them, and tolerations merged as
 * kube's tolerations.MergeTolerations merges them (RuntimeClass, PodTolerationRestriction).
 */
#ifndef ADM_PLUGINS_PODSPEC_H
#define ADM_PLUGINS_PODSPEC_H

#include "adm/admission/podutil.h"
#include "adm/base/quantity.h"

#include <stdbool.h>
#include <yyjson.h>

/**
 * v (a JSON string or number, as a Quantity is written) as a quantity. Anything else, or text
 * that does not parse (which the API server never lets through), is Go's zero Quantity, 0.
 */
adm_quantity_t adm_json_quantity(yyjson_val *v);

/**
 * Semantic.DeepEqual of two ResourceLists (JSON objects, or NULL): the same names with equal
 * quantities (Cmp); an absent list and an empty one are equal.
 */
bool adm_resource_lists_equal(yyjson_val *a, yyjson_val *b);

/** tolerations' isSuperset(ss, t): ss tolerates everything t does. */
bool adm_toleration_is_superset(const adm_toleration_t *ss, const adm_toleration_t *t);

/**
 * tolerations.MergeTolerations(first, second): the tolerations of both arrays in order, without
 * those another kept or later (different) one covers (isSuperset). The result is a new array in
 * doc; NULL when doc's allocator failed.
 */
yyjson_mut_val *adm_merge_tolerations(yyjson_mut_doc *doc, yyjson_val *first, yyjson_val *second);

#endif

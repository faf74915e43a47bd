/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metav1.LabelSelector: parsing and validation as kube-apiserver validates a webhook's
 * namespaceSelector / objectSelector (LabelSelectorAsSelector plus ValidateLabelSelector), and
 * evaluation against an object's labels (k8s.io/apimachinery/pkg/labels semantics).
 */
#ifndef ADM_SELECTOR_H
#define ADM_SELECTOR_H

#include "adm/base/arena.h"
#include "adm/webhook/webhook.h"

#include <stdbool.h>
#include <yyjson.h>

/**
 * Parses v (a LabelSelector object) into out, allocating in a. v NULL (absent) gives the API
 * default {} (everything). Returns 0, ADM_EINVAL with *problem naming the field relative to the
 * selector (arena or static text, e.g. "matchExpressions[0].values: Required value: must be
 * specified when `operator` is 'In' or 'NotIn'"), or ADM_ENOMEM.
 */
int adm_selector_parse(adm_arena_t *a, yyjson_val *v, adm_selector_t *out, const char **problem);

/**
 * True when labels (the metadata.labels object, or NULL when the object has none) satisfy every
 * requirement: In needs the key present with a listed value, NotIn is true when the key is absent
 * or its value is not listed, Exists / DoesNotExist test presence. A selector with everything set
 * matches anything; an empty requirement list without everything (the "match nothing" of a null
 * selector inside kube's dispatcher) never occurs after parsing.
 */
bool adm_selector_matches(const adm_selector_t *s, yyjson_val *labels);

#endif

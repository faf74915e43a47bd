/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Label-selector evaluation (k8s.io/apimachinery/pkg/labels Requirement.Matches). Separate from
 * the parser so the request path links only this small file's logic.
 */
#include "adm/webhook/selector.h"

#include <string.h>

/*
 * A label value that is not a string cannot come from the API server; it counts as absent rather
 * than as some value, so In never matches it.
 */
static const char *label_value(yyjson_val *labels, const char *key)
{
    return yyjson_get_str(yyjson_obj_get(labels, key));
}

static bool listed(const adm_selector_req_t *r, const char *value)
{
    for (size_t i = 0; i < r->nvalues; i++) {
        if (strcmp(r->values[i], value) == 0) {
            return true;
        }
    }
    return false;
}

bool adm_selector_matches(const adm_selector_t *s, yyjson_val *labels)
{
    if (s->everything) {
        return true;
    }
    /* A zeroed selector is kube's labels.Nothing(); after parsing this does not occur. */
    if (s->nreqs == 0) {
        return false;
    }
    for (size_t i = 0; i < s->nreqs; i++) {
        const adm_selector_req_t *r = &s->reqs[i];
        const char *v = yyjson_is_obj(labels) ? label_value(labels, r->key) : NULL;
        bool ok;

        switch (r->op) {
        case ADM_SEL_IN: ok = v != NULL && listed(r, v); break;
        case ADM_SEL_NOT_IN: ok = v == NULL || !listed(r, v); break;
        case ADM_SEL_EXISTS: ok = v != NULL; break;
        case ADM_SEL_DOES_NOT_EXIST: ok = v == NULL; break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

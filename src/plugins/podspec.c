/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Quantities, ResourceLists and toleration merging for the cluster-state plugins
 * (include/adm/plugins/podspec.h).
 */
#include "adm/plugins/podspec.h"

#include "adm/admission/admission.h"
#include "adm/base/json.h"

#include <stdio.h>
#include <string.h>

adm_quantity_t adm_json_quantity(yyjson_val *v)
{
    adm_quantity_t q = {0};
    const char *problem = NULL;
    char num[64];

    if (yyjson_is_str(v)) {
        if (adm_quantity_parse(yyjson_get_str(v), yyjson_get_len(v), &q, &problem) != 0) {
            memset(&q, 0, sizeof(q));
        }
        return q;
    }
    if (yyjson_is_int(v) || yyjson_is_real(v)) {
        int n = yyjson_is_uint(v) ? snprintf(num, sizeof(num), "%llu", (unsigned long long)yyjson_get_uint(v))
                : yyjson_is_sint(v) ? snprintf(num, sizeof(num), "%lld", (long long)yyjson_get_sint(v))
                                    : snprintf(num, sizeof(num), "%.17g", yyjson_get_real(v));

        /* the number is parsed from the copy; q must not keep a pointer into it */
        if (n <= 0 || (size_t)n >= sizeof(num) || adm_quantity_parse(num, (size_t)n, &q, &problem) != 0) {
            memset(&q, 0, sizeof(q));
        }
        q.verbatim = NULL;
        q.verbatim_len = 0;
    }
    return q;
}

/* Every name of a is in b with an equal quantity. */
static bool list_within(yyjson_val *a, yyjson_val *b)
{
    yyjson_val *k;
    yyjson_obj_iter it;

    yyjson_obj_iter_init(a, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        yyjson_val *other = adm_json_get(b, yyjson_get_str(k));
        adm_quantity_t qa;
        adm_quantity_t qb;

        if (other == NULL) {
            return false;
        }
        qa = adm_json_quantity(yyjson_obj_iter_get_val(k));
        qb = adm_json_quantity(other);
        if (adm_quantity_cmp(&qa, &qb) != 0) {
            return false;
        }
    }
    return true;
}

bool adm_resource_lists_equal(yyjson_val *a, yyjson_val *b)
{
    return yyjson_obj_size(a) == yyjson_obj_size(b) && list_within(a, b);
}

static bool tol_equal(const adm_toleration_t *a, const adm_toleration_t *b)
{
    return strcmp(a->key, b->key) == 0 && strcmp(a->op, b->op) == 0 && strcmp(a->value, b->value) == 0 &&
           strcmp(a->effect, b->effect) == 0 && a->has_seconds == b->has_seconds &&
           (!a->has_seconds || a->seconds == b->seconds);
}

bool adm_toleration_is_superset(const adm_toleration_t *ss, const adm_toleration_t *t)
{
    if (tol_equal(ss, t)) {
        return true;
    }
    /* an empty key with Exists matches every key */
    if (strcmp(t->key, ss->key) != 0 && (ss->key[0] != '\0' || strcmp(ss->op, "Exists") != 0)) {
        return false;
    }
    if (strcmp(t->effect, ss->effect) != 0 && ss->effect[0] != '\0') {
        return false;
    }
    if (strcmp(ss->effect, "NoExecute") == 0 && ss->has_seconds &&
        (!t->has_seconds || t->seconds > ss->seconds)) {
        return false;
    }
    if (strcmp(ss->op, "Equal") == 0 || ss->op[0] == '\0') {
        return strcmp(t->op, "Equal") == 0 && strcmp(t->value, ss->value) == 0;
    }
    return strcmp(ss->op, "Exists") == 0;
}

yyjson_mut_val *adm_merge_tolerations(yyjson_mut_doc *doc, yyjson_val *first, yyjson_val *second)
{
    size_t n1 = yyjson_arr_size(first);
    size_t n = n1 + yyjson_arr_size(second);
    yyjson_val **all = n != 0 ? doc->alc.malloc(doc->alc.ctx, n * sizeof(*all)) : NULL;
    adm_toleration_t *tol = n != 0 ? doc->alc.malloc(doc->alc.ctx, n * sizeof(*tol)) : NULL;
    bool *kept = n != 0 ? doc->alc.malloc(doc->alc.ctx, n * sizeof(*kept)) : NULL;
    yyjson_mut_val *out = yyjson_mut_arr(doc);

    if (out == NULL || (n != 0 && (all == NULL || tol == NULL || kept == NULL))) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        all[i] = i < n1 ? yyjson_arr_get(first, i) : yyjson_arr_get(second, i - n1);
        tol[i] = adm_toleration_read(all[i]);
    }
    for (size_t i = 0; i < n; i++) {
        bool redundant = false;

        for (size_t j = 0; j < i && !redundant; j++) {
            redundant = kept[j] && adm_toleration_is_superset(&tol[j], &tol[i]);
        }
        /* of equal ones the first is kept */
        for (size_t j = i + 1; j < n && !redundant; j++) {
            redundant = !tol_equal(&tol[i], &tol[j]) && adm_toleration_is_superset(&tol[j], &tol[i]);
        }
        kept[i] = !redundant;
        if (kept[i] && !yyjson_mut_arr_append(out, adm_json_mut_share(doc, all[i]))) {
            return NULL;
        }
    }
    return out;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The oracle of adm_json_splice, shared by its unit test and its fuzzer: the same edits made with
 * yyjson's mutable API on a shared copy of the layout (the calls json_edit.h names for each op),
 * laid out by adm_json_view, must give the same flat array; and every run of a lineage must be a
 * byte copy of its origin. Header-only so that the fuzzer, which links admcore alone, has it too.
 */
#ifndef ADM_TEST_JSON_EDIT_CHECK_H
#define ADM_TEST_JSON_EDIT_CHECK_H

#include "adm/base/json.h"
#include "adm/base/json_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline size_t edit_check_size(const yyjson_val *v)
{
    return (v->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR ? v->uni.ofs / sizeof(yyjson_val) : 1;
}

/*
 * Applies e[0..n) to m, the adm_json_mut_share copy of root (value i for root's value i), as a
 * plugin would with yyjson's mutable API; every new value is a deep copy of the edit's, so the
 * edits stay intact for the splice. False when an edit is not one the splice accepts (the caller
 * knows).
 */
static inline bool edit_check_apply(yyjson_mut_doc *doc, yyjson_mut_val *m, yyjson_val *root,
                                    const adm_edit_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        yyjson_mut_val *mt = m + (e[i].target - root);
        yyjson_mut_val *c = e[i].value != NULL ? adm_json_mut_copy(doc, e[i].value) : NULL;
        yyjson_mut_val *k = e[i].key != NULL ? yyjson_mut_strn(doc, e[i].key, e[i].key_len) : NULL;

        switch (e[i].op) {
        case ADM_EDIT_ADD:
            yyjson_mut_obj_remove_keyn(mt, e[i].key, e[i].key_len);
            if (!yyjson_mut_obj_add(mt, k, c)) {
                return false;
            }
            break;
        case ADM_EDIT_SET:
            if (!yyjson_mut_obj_replace(mt, k, c) && !yyjson_mut_obj_add(mt, k, c)) {
                return false;
            }
            break;
        case ADM_EDIT_APPEND:
            if (!yyjson_mut_arr_append(mt, c)) {
                return false;
            }
            break;
        case ADM_EDIT_REPLACE: /* in place, as yyjson_mut_obj_replace does to a member's value */
            if (c == NULL) {
                return false;
            }
            mt->tag = c->tag;
            mt->uni = c->uni;
            break;
        case ADM_EDIT_REMOVE: yyjson_mut_obj_remove_keyn(mt, e[i].key, e[i].key_len); break;
        }
    }
    return true;
}

/*
 * NULL when layouts a and b hold the same values: tags (a string's NOESC mark aside: the parser
 * sets it, a mutable copy drops it), lengths, container sizes, numbers, and strings by content.
 * Else what differs, in a static buffer.
 */
static inline const char *edit_check_same(const yyjson_val *a, const yyjson_val *b)
{
    static char why[160];
    size_t n = edit_check_size(a);

    if (edit_check_size(b) != n) {
        snprintf(why, sizeof(why), "sizes differ: %zu values, %zu", n, edit_check_size(b));
        return why;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t ta = a[i].tag, tb = b[i].tag, type = ta & YYJSON_TYPE_MASK;
        bool str = type == YYJSON_TYPE_STR || type == YYJSON_TYPE_RAW;

        if (str) {
            ta &= ~(uint64_t)YYJSON_SUBTYPE_MASK;
            tb &= ~(uint64_t)YYJSON_SUBTYPE_MASK;
        }
        if (ta != tb) {
            snprintf(why, sizeof(why), "value %zu: tag %#llx, %#llx", i, (unsigned long long)ta,
                     (unsigned long long)tb);
            return why;
        }
        if (str ? memcmp(a[i].uni.str, b[i].uni.str, (size_t)(ta >> YYJSON_TAG_BIT) + 1) != 0
                : a[i].uni.u64 != b[i].uni.u64) {
            snprintf(why, sizeof(why), "value %zu: payload differs", i);
            return why;
        }
    }
    return NULL;
}

/*
 * NULL when l is a valid lineage of the layout whose root is root relative to origin: runs in
 * increasing order, disjoint, inside both layouts, each a byte copy of the origin's values. Else
 * what is wrong, in a static buffer.
 */
static inline const char *edit_check_lineage(const adm_json_lineage_t *l, const yyjson_val *root,
                                             const yyjson_val *origin)
{
    static char why[160];
    size_t n = edit_check_size(root), on = edit_check_size(origin), end = 0;

    if (l->origin != origin) {
        return "the lineage's origin is not the request's object";
    }
    for (size_t i = 0; i < l->nruns; i++) {
        const adm_json_run_t *r = &l->runs[i];

        if (r->n == 0 || r->to < end || (size_t)r->to + r->n > n || (size_t)r->from + r->n > on) {
            snprintf(why, sizeof(why), "run %zu (%u <- %u, %u) out of order or bounds", i, r->to, r->from,
                     r->n);
            return why;
        }
        if (memcmp(root + r->to, origin + r->from, r->n * sizeof(*root)) != 0) {
            snprintf(why, sizeof(why), "run %zu (%u <- %u, %u) is not a copy", i, r->to, r->from, r->n);
            return why;
        }
        end = (size_t)r->to + r->n;
    }
    return NULL;
}

/* NULL when both write the same JSON text; else a message (static). */
static inline const char *edit_check_text(const yyjson_val *a, yyjson_mut_val *b)
{
    size_t na = 0, nb = 0;
    char *ta = yyjson_val_write((yyjson_val *)a, YYJSON_WRITE_ALLOW_INVALID_UNICODE, &na);
    char *tb = yyjson_mut_val_write(b, YYJSON_WRITE_ALLOW_INVALID_UNICODE, &nb);
    bool same = (ta == NULL) == (tb == NULL) && (ta == NULL || (na == nb && memcmp(ta, tb, na) == 0));

    free(ta);
    free(tb);
    return same ? NULL : "the texts differ";
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch (RFC 6902): apply to yyjson mutable documents (jsonpatch_apply.c), and diff two
 * documents (jsonpatch_diff.c: a parsed one against a mutable one, or against a flat layout). Apply has two
 * modes (INTERFACE.md D4):
 *  - ADM_JSONPATCH_STRICT: RFC 6902 and RFC 6901 to the letter (the conformance suite's mode);
 *  - ADM_JSONPATCH_KUBE: what kube-apiserver does with a webhook's patch (evanphx/json-patch v4,
 *    spec/webhook-dispatch.md 3.4): negative array indices count from the end, "replace" of a
 *    missing object member creates it, array indices are read like Go's strconv.Atoi.
 */
#ifndef ADM_JSONPATCH_H
#define ADM_JSONPATCH_H

#include "adm/base/arena.h"
#include "adm/base/json.h"

#include <stddef.h>

#include <yyjson.h>

typedef enum adm_jsonpatch_mode_e {
    ADM_JSONPATCH_KUBE,
    ADM_JSONPATCH_STRICT,
} adm_jsonpatch_mode_t;

/**
 * Applies patch (a JSON array of operation objects) to doc, operation by operation. Returns 0,
 * or ADM_EINVAL with *error (static or arena text, e.g. "operation 2 (remove /a): missing value")
 * when the patch is malformed or an operation fails; doc is then partly patched, so apply to a
 * copy when the original must survive. ADM_ETOOBIG when the patched document nests deeper than
 * ADM_JSON_MAX_DEPTH (kube-apiserver's decoder would refuse it), with *error the text of Go's
 * decoder for it ("invalid character '[' exceeded max depth"). ADM_ENOMEM when doc's allocator
 * fails. Nothing here recurses: any nesting costs arena memory only.
 */
int adm_jsonpatch_apply(yyjson_mut_doc *doc, yyjson_val *patch, adm_jsonpatch_mode_t mode, adm_arena_t *a,
                        const char **error);

/**
 * Writes a JSON Patch that turns from into to: remove/add/replace operations only, minimal in
 * the common cases (changed members, common prefixes and suffixes of arrays kept). The text is
 * arena memory; "[]" with *nops 0 when the two are equal. Returns 0 or ADM_ENOMEM.
 */
int adm_jsonpatch_diff(yyjson_val *from, yyjson_mut_val *to, adm_arena_t *a, const char **out,
                       size_t *out_len, size_t *nops);

/**
 * adm_jsonpatch_diff with `to` a flat layout (a parsed document or a view, adm_json_view_traced)
 * and lin (NULL: none) its lineage relative to from: the subtrees lin maps onto their partners in
 * from are known equal without walking them. The same patch as adm_jsonpatch_diff(from, m) for
 * any mutable m holding to's values in to's order (the view's source), byte for byte: lin only
 * spares work (it must be true; one relative to another origin than from is ignored). from is a
 * flat layout too; with a lineage, one without NaN (a parsed request, adm_json_read), as a NaN is
 * unequal to its own copy. ADM_ENOMEM also when to is NULL (no view).
 */
int adm_jsonpatch_diff_flat(yyjson_val *from, yyjson_val *to, const adm_json_lineage_t *lin, adm_arena_t *a,
                            const char **out, size_t *out_len, size_t *nops);

#endif

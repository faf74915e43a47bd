/* SPDX-License-Identifier: Apache-2.0 */
/* yyjson glue: arena-backed allocation and the nesting-depth guard. */
#ifndef ADM_JSON_H
#define ADM_JSON_H

#include "adm/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

/** kube-apiserver's decoder refuses JSON nested deeper than this; so does admitd. */
#define ADM_JSON_MAX_DEPTH 10000

/** Fills alc so yyjson allocates from a (free is a no-op; the arena releases everything). */
void adm_json_alc_init(yyjson_alc *alc, adm_arena_t *a);

/**
 * True when the JSON text nests arrays/objects deeper than max_depth. A linear scan that skips
 * strings (and their escapes) and uses no recursion; malformed text is left to the parser.
 */
bool adm_json_too_deep(const char *text, size_t len, size_t max_depth);

/**
 * A mutable copy of v in doc whose strings (keys and values) are not copied but point at v's
 * document, which must outlive the copy (both live in one request's arena). Cheaper than
 * yyjson_val_mut_copy, and lets comparisons of unchanged strings stop at the pointer. Recursion
 * depth is the value's nesting depth, which every parse path bounds by ADM_JSON_MAX_DEPTH. NULL
 * when doc's allocator fails.
 */
yyjson_mut_val *adm_json_mut_share(yyjson_mut_doc *doc, yyjson_val *v);

/*
 * Strict decoding as kube-apiserver's strict decoder does it: every member of obj must be one of
 * known (NULL-terminated) and appear once. Returns NULL when so, else the first offending key,
 * with *duplicate telling which rule it broke. Stops at the first repeat, so the pairwise scan
 * never grows past the number of known names.
 */
const char *adm_json_check_members(yyjson_val *obj, const char *const *known, bool *duplicate);

#endif

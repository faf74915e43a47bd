/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What JSON Patch's apply (jsonpatch_apply.c) and diff (jsonpatch_diff.c) share, defined in
 * jsonpatch_equal.c: JSON equality, which the "test" operation and the diff's search for unchanged
 * array ends both need, and the hash index of an object's keys that keeps matching members of
 * large objects linear. Equality is a worklist of pairs still to compare, never recursion, so any
 * nesting costs arena memory only.
 */
#ifndef ADM_JSONPATCH_INTERNAL_H
#define ADM_JSONPATCH_INTERNAL_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

/* Objects up to this size are compared key by key; larger ones through a hash index. */
#define ADM__SMALL_OBJECT 8

/*
 * Deep equality is a worklist of pairs still to compare, never recursion: any nesting costs arena
 * memory only. The list lives in the caller's context and is reused across comparisons (the diff
 * compares array elements one after another).
 */
typedef struct adm__eq_pair_s {
    yyjson_mut_val *a;
    yyjson_val *b;
} adm__eq_pair_t;

/* A pair of adm__json_equal_flat: a is the flat value in the place of adm__json_equal's mutable one. */
typedef struct adm__eq_flat_pair_s {
    yyjson_val *a;
    yyjson_val *b;
} adm__eq_flat_pair_t;

typedef struct adm__eq_list_s {
    adm_arena_t *arena;
    adm__eq_pair_t *pairs;
    size_t n, cap;
    adm__eq_flat_pair_t *flat; /* adm__json_equal_flat's own list, n and cap as above */
    size_t flat_n, flat_cap;
    bool failed; /* an allocation failed: the comparison answered false without knowing */
} adm__eq_list_t;

/* A hash index of an object's keys, so diffing two large objects stays linear. */
typedef struct adm__key_index_s {
    const char **keys;
    size_t *lens;
    void **vals;
    uint32_t *slots; /* entry + 1, 0 when empty */
    size_t n, mask;
} adm__key_index_t;

/* Prepares x for n keys (arena memory); false when the arena is exhausted. */
bool adm__key_index_init(adm_arena_t *arena, adm__key_index_t *x, size_t n);

/* Adds a key and its value; false when the key is already there (a duplicate). */
bool adm__key_index_add(adm__key_index_t *x, const char *s, size_t len, void *val);

/* The value of a key, or NULL when the key is not there. */
void *adm__key_index_find(const adm__key_index_t *x, const char *s, size_t len);

/*
 * JSON equality of a (mutable) and b: numbers by value (1 == 1.0), objects regardless of member
 * order. l is the caller's worklist, reused from one comparison to the next; when an allocation
 * fails the answer is false and l->failed is set.
 */
bool adm__json_equal(adm__eq_list_t *l, yyjson_mut_val *a, yyjson_val *b);

/*
 * adm__json_equal with a flat value (a parsed document's, a view's) in a's place: the same answer
 * as adm__json_equal(l, m, b) for any mutable m holding a's values in a's order, duplicate keys
 * included (pairs by position while the keys agree, then by key; a key twice among a's remaining
 * members of a large object answers false).
 */
bool adm__json_equal_flat(adm__eq_list_t *l, yyjson_val *a, yyjson_val *b);

/* Two keys (or strings) alike. */
static inline bool adm__same_key(const char *s1, size_t l1, const char *s2, size_t l2)
{
    /* Copies made by adm_json_mut_share() point at the original's strings: compare pointers first. */
    return l1 == l2 && (s1 == s2 || memcmp(s1, s2, l1) == 0);
}

#endif

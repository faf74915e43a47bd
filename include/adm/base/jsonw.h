/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small JSON text writer into arena memory, for JSON written by hand (the patches of
 * adm_jsonpatch_diff): faster than building a document and serialising it. Errors are sticky:
 * check failed once at the end.
 */
#ifndef ADM_JSONW_H
#define ADM_JSONW_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

typedef struct adm_jsonw_s {
    adm_arena_t *arena;
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; the text is incomplete */
} adm_jsonw_t;

/** Starts an empty writer on a. */
void adm_jsonw_init(adm_jsonw_t *w, adm_arena_t *a);

/** Appends bytes as they are. */
void adm_jsonw_raw(adm_jsonw_t *w, const char *s, size_t n);

/** Appends a string literal as it is. */
#define ADM_JSONW_LIT(w, lit) adm_jsonw_raw((w), (lit), sizeof(lit) - 1)

/** Appends s (n bytes of UTF-8) as a quoted JSON string. */
void adm_jsonw_string(adm_jsonw_t *w, const char *s, size_t n);

/** Appends a mutable value as compact JSON. */
void adm_jsonw_mut_value(adm_jsonw_t *w, yyjson_mut_val *v);

#endif

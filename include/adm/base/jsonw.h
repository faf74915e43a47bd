/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON written by hand: admitd's one JSON string writer (adm_jsonw_put_string, into a buffer the
 * caller sized), and a small writer into growing arena memory for the patches of
 * adm_jsonpatch_diff and adm_jsonpatch_diff_flat, faster than building a document and serialising it. The
 * growing writer's errors are sticky: check failed once at the end.
 */
#ifndef ADM_JSONW_H
#define ADM_JSONW_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

typedef struct adm_jsonw_s {
    adm_arena_t *arena;
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; the text is incomplete */
} adm_jsonw_t;

/** The most bytes adm_jsonw_put_string writes for n bytes: the quotes, and \u00XX for each byte. */
#define ADM_JSONW_STRING_MAX(n) ((n)*6 + 2)

/**
 * Writes s (n bytes; a NUL among them is text like any other) at w as a quoted JSON string and
 * returns the end of what it wrote. w must have room for ADM_JSONW_STRING_MAX(n) bytes; nothing
 * is NUL-terminated. A quote, a backslash and control characters are escaped (JSON's short
 * escape where there is one, else \u00XX); every other byte is copied, except that a byte which
 * does not start valid UTF-8 becomes U+FFFD, as Go's encoder writes it: the output is valid JSON
 * whatever s holds.
 */
char *adm_jsonw_put_string(char *w, const char *s, size_t n);

/** Writes u in decimal at w (room for 20 bytes) and returns the end of what it wrote. */
char *adm_jsonw_put_u64(char *w, uint64_t u);

/** Starts an empty writer on a. */
void adm_jsonw_init(adm_jsonw_t *w, adm_arena_t *a);

/**
 * Makes room for extra more bytes at data + len, for a caller that writes there itself and then
 * advances len; false (and failed set) when the arena is exhausted.
 */
bool adm_jsonw_reserve(adm_jsonw_t *w, size_t extra);

/**
 * Appends bytes as they are. Inline: most calls append a literal of a byte or two (the commas and
 * brackets of a JSON Patch) into room already reserved, where a call would cost more than the copy.
 */
static inline void adm_jsonw_raw(adm_jsonw_t *w, const char *s, size_t n)
{
    if (n > 0 && ((!w->failed && n <= w->cap - w->len) || adm_jsonw_reserve(w, n))) {
        memcpy(w->data + w->len, s, n);
        w->len += n;
    }
}

/** Appends a string literal as it is. */
#define ADM_JSONW_LIT(w, lit) adm_jsonw_raw((w), (lit), sizeof(lit) - 1)

/** Appends s (n bytes) as a quoted JSON string, as adm_jsonw_put_string writes it. */
void adm_jsonw_string(adm_jsonw_t *w, const char *s, size_t n);

/** Appends a mutable value as compact JSON. */
void adm_jsonw_mut_value(adm_jsonw_t *w, yyjson_mut_val *v);

/**
 * Appends a value of a flat layout (a parsed document, a view) as compact JSON: the bytes
 * adm_jsonw_mut_value writes for a mutable value holding the same values (a string's NOESC mark,
 * which only the flat side may keep, changes nothing: yyjson sets it only on strings no writer
 * escapes), and it fails where that fails.
 */
void adm_jsonw_value(adm_jsonw_t *w, yyjson_val *v);

#endif

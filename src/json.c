/* SPDX-License-Identifier: Apache-2.0 */
/* yyjson glue: allocation from the request arena, and the nesting-depth guard. */
#include "adm/json.h"

static void *alc_malloc(void *ctx, size_t size)
{
    return adm_arena_alloc(ctx, size);
}

static void *alc_realloc(void *ctx, void *ptr, size_t old_size, size_t size)
{
    return adm_arena_realloc(ctx, ptr, old_size, size);
}

static void alc_free(void *ctx, void *ptr)
{
    /* Arena memory goes back all at once when the request ends. */
    (void)ctx;
    (void)ptr;
}

void adm_json_alc_init(yyjson_alc *alc, adm_arena_t *a)
{
    alc->malloc = alc_malloc;
    alc->realloc = alc_realloc;
    alc->free = alc_free;
    alc->ctx = a;
}

/* Byte classes for the depth scan. */
enum { OTHER = 0, OPEN, CLOSE, QUOTE, BACKSLASH };

static const unsigned char byte_class[256] = {
    ['['] = OPEN, ['{'] = OPEN, [']'] = CLOSE, ['}'] = CLOSE, ['"'] = QUOTE, ['\\'] = BACKSLASH,
};

bool adm_json_too_deep(const char *text, size_t len, size_t max_depth)
{
    const unsigned char *p = (const unsigned char *)text;
    const unsigned char *end = p + len;
    size_t depth = 0;
    bool in_string = false;

    /* Every level takes at least one byte, so short texts cannot nest too deep: the common
       AdmissionReview of a few KiB costs nothing here. */
    if (len <= max_depth) {
        return false;
    }
    for (; p < end; p++) {
        switch (byte_class[*p]) {
        case OPEN:
            if (!in_string && ++depth > max_depth) {
                return true;
            }
            break;
        case CLOSE:
            if (!in_string && depth > 0) {
                depth--;
            }
            break;
        case QUOTE:
            in_string = !in_string;
            break;
        case BACKSLASH:
            if (in_string) {
                p++; /* the escaped byte cannot end the string */
            }
            break;
        default:
            break;
        }
    }
    return false;
}

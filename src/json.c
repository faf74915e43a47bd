/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yyjson glue: an allocator that takes yyjson's memory from the request arena, and the
 * nesting-depth guard that runs on every request body before the parser. The guard is a single
 * forward pass with no recursion and constant memory. On x86-64 it settles 64 bytes at a time from
 * SSE2 bit masks; elsewhere, and for blocks the masks cannot settle, an exact byte walk runs that
 * skips string contents eight bytes at a time.
 */
#include "adm/json.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* Byte classes outside strings; everything else (numbers, literals, ',', ':', spaces) is OTHER. */
enum { OTHER = 0, OPEN, CLOSE, QUOTE };

static const unsigned char outside_class[256] = {
    ['['] = OPEN, ['{'] = OPEN, [']'] = CLOSE, ['}'] = CLOSE, ['"'] = QUOTE,
};

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Where the scan stands: the next byte, the nesting depth, and whether it is inside a string. */
typedef struct scan_s {
    const unsigned char *p;
    const unsigned char *end;
    size_t depth;
    bool in_string;
} scan_t;

/*
 * High bit set in each byte of w equal to b. The lowest set bit is exact (a borrow only travels
 * upwards from a matching byte), which is all string_special needs: it finds the first match.
 */
static inline uint64_t bytes_equal(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);

    return (x - ONES) & ~x & HIGHS;
}

/* Returns the first quote or backslash in [p, stop), or stop. */
static inline const unsigned char *string_special(const unsigned char *p, const unsigned char *stop)
{
    while (stop - p >= 8) {
        uint64_t w;
        uint64_t hits;

        memcpy(&w, p, sizeof(w));
        hits = bytes_equal(w, '"') | bytes_equal(w, '\\');
        if (hits != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + (__builtin_ctzll(hits) >> 3);
#else
            break; /* the byte loop below finds it within these eight bytes */
#endif
        }
        p += 8;
    }
    while (p < stop && *p != '"' && *p != '\\') {
        p++;
    }
    return p;
}

/*
 * The exact scan, from s->p up to stop. An escape at the last byte before stop may carry the scan
 * one byte past stop, never past the end. Returns true as soon as the depth passes max_depth.
 */
static bool walk(scan_t *s, const unsigned char *stop, size_t max_depth)
{
    const unsigned char *p = s->p;

    while (p < stop) {
        if (s->in_string) {
            /* Brackets in a string do not nest, and an escaped quote does not end it. */
            p = string_special(p, stop);
            if (p == stop) {
                break;
            }
            if (*p == '"') {
                s->in_string = false;
                p++;
            } else {
                p += s->end - p >= 2 ? 2 : 1; /* the backslash and the byte it escapes */
            }
            continue;
        }
        switch (outside_class[*p++]) {
        case OPEN:
            s->depth++;
            if (s->depth > max_depth) {
                return true;
            }
            break;
        case CLOSE:
            /* Unbalanced closers are the parser's to report; they never make the text deeper. */
            if (s->depth > 0) {
                s->depth--;
            }
            break;
        case QUOTE:
            s->in_string = true;
            break;
        default:
            break;
        }
    }
    s->p = p;
    return false;
}

#if defined(__SSE2__)
/*
 * 64 bytes at a time with SSE2 (every x86-64 has it). Each block yields bit masks of its quotes,
 * backslashes, openers and closers. Without a backslash in the block every quote is real, so the
 * bits inside strings are the running parity of the quotes (a prefix XOR), flipped when the block
 * starts inside a string. The block is settled by counting: it cannot pass the limit when the
 * depth plus its openers stays within it, and the zero floor for stray closers cannot apply when
 * the depth is at least its closers. Anything else (a backslash, a block near the limit or near
 * depth 0) goes through the exact walk, which decides the same way one byte at a time.
 */
typedef struct block_s {
    uint64_t quote;
    uint64_t backslash;
    uint64_t open;
    uint64_t close;
} block_t;

static inline void classify(const unsigned char *p, block_t *b)
{
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    /* '[' | 0x20 is '{' and ']' | 0x20 is '}'; no other byte maps to either. */
    const __m128i fold = _mm_set1_epi8(0x20);
    const __m128i open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');

    b->quote = b->backslash = b->open = b->close = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        __m128i folded = _mm_or_si128(v, fold);
        int shift = 16 * i;

        b->quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << shift;
        b->backslash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash))
                        << shift;
        b->open |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) << shift;
        b->close |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) << shift;
    }
}

/* Bit i of the result is the XOR of bits 0..i of x. */
static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* Set bits in x, without the libgcc call __builtin_popcountll becomes on baseline x86-64. */
static inline size_t count_bits(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (size_t)((x * ONES) >> 56);
}

static bool scan_blocks(scan_t *s, size_t max_depth)
{
    while (s->end - s->p >= 64) {
        block_t b;

        classify(s->p, &b);
        if (b.backslash == 0) {
            uint64_t inside = prefix_xor(b.quote) ^ (s->in_string ? ~UINT64_C(0) : 0);
            size_t opens = count_bits(b.open & ~inside);
            size_t closes = count_bits(b.close & ~inside);

            if (opens <= max_depth - s->depth && closes <= s->depth) {
                s->depth = s->depth + opens - closes;
                s->in_string = (inside >> 63) != 0;
                s->p += 64;
                continue;
            }
        }
        if (walk(s, s->p + 64, max_depth)) {
            return true;
        }
    }
    return false;
}
#endif

bool adm_json_too_deep(const char *text, size_t len, size_t max_depth)
{
    scan_t s;

    /* Every level takes at least one byte, so a text no longer than the limit cannot pass it: a
       typical AdmissionReview of a few KiB costs nothing here. */
    if (len <= max_depth) {
        return false;
    }
    s.p = (const unsigned char *)text;
    s.end = s.p + len;
    s.depth = 0;
    s.in_string = false;
#if defined(__SSE2__)
    if (scan_blocks(&s, max_depth)) {
        return true;
    }
#endif
    return walk(&s, s.end, max_depth);
}

yyjson_mut_val *adm_json_mut_share(yyjson_mut_doc *doc, yyjson_val *v)
{
    yyjson_mut_val *out;
    yyjson_val *child;
    size_t idx, max;

    switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_STR:
        return yyjson_mut_strn(doc, yyjson_get_str(v), yyjson_get_len(v));
    case YYJSON_TYPE_ARR:
        out = yyjson_mut_arr(doc);
        if (out == NULL) {
            return NULL;
        }
        yyjson_arr_foreach(v, idx, max, child) {
            yyjson_mut_val *c = adm_json_mut_share(doc, child);

            if (c == NULL || !yyjson_mut_arr_append(out, c)) {
                return NULL;
            }
        }
        return out;
    case YYJSON_TYPE_OBJ: {
        yyjson_val *key;

        out = yyjson_mut_obj(doc);
        if (out == NULL) {
            return NULL;
        }
        yyjson_obj_foreach(v, idx, max, key, child) {
            yyjson_mut_val *k = yyjson_mut_strn(doc, yyjson_get_str(key), yyjson_get_len(key));
            yyjson_mut_val *c = adm_json_mut_share(doc, child);

            if (k == NULL || c == NULL || !yyjson_mut_obj_add(out, k, c)) {
                return NULL;
            }
        }
        return out;
    }
    default:
        /* null, booleans and numbers carry no pointers */
        return yyjson_val_mut_copy(doc, v);
    }
}

const char *adm_json_check_members(yyjson_val *obj, const char *const *known, bool *duplicate)
{
    yyjson_obj_iter it;
    yyjson_val *key;
    size_t idx = 0;

    *duplicate = false;
    yyjson_obj_iter_init(obj, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        const char *k = yyjson_get_str(key);
        bool found = false;
        yyjson_obj_iter earlier;
        yyjson_val *other;

        for (const char *const *p = known; *p != NULL && !found; p++) {
            found = strcmp(*p, k) == 0;
        }
        if (!found) {
            return k;
        }
        yyjson_obj_iter_init(obj, &earlier);
        for (size_t j = 0; j < idx && (other = yyjson_obj_iter_next(&earlier)) != NULL; j++) {
            if (strcmp(yyjson_get_str(other), k) == 0) {
                *duplicate = true;
                return k;
            }
        }
        idx++;
    }
    return NULL;
}

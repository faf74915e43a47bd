/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON text written by hand, and admitd's one JSON string writer. Every answer's strings (uid,
 * message, warnings, annotations), every path of a JSON Patch diff and every quoted name in a
 * Status pass through adm_jsonw_put_string, so it copies plain text eight bytes at a time and
 * leaves the exact escaping to a byte-at-a-time path for the words that need it. The growing
 * writer (adm_jsonw_t) reserves the bound and writes through it too.
 */
#include "adm/base/jsonw.h"

#include "adm/base/json.h"

#include <stdint.h>
#include <string.h>

/*
 * Length of the valid UTF-8 sequence at p (lead byte >= 0x80, left bytes from p to the end), or
 * 0 when it is not one.
 */
static size_t utf8_sequence(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];

    if (c >= 0xc2 && c <= 0xdf) {
        return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    }
    if (c >= 0xe0 && c <= 0xef) {
        /* No overlong forms (E0 needs A0..BF) and no UTF-16 surrogates (ED needs 80..9F). */
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
        unsigned char hi = c == 0xed ? 0x9f : 0xbf;

        return left >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        /* No overlong forms (F0 needs 90..BF) and nothing past U+10FFFF (F4 needs 80..8F). */
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;

        return left >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4
                                                                                                       : 0;
    }
    return 0;
}

/* Hex digits of \u00XX: admitd's own strings write them in lower case, as Go's encoder does; the
   values of adm_jsonw_mut_value in upper case, as yyjson's writer does. */
static const char hex_lower[] = "0123456789abcdef";
static const char hex_upper[] = "0123456789ABCDEF";

/* A control byte as JSON's short escape where there is one, else \u00XX. */
static char *put_control(char *w, unsigned char c, const char *hex)
{
    *w++ = '\\';
    switch (c) {
    case '\b': *w++ = 'b'; break;
    case '\f': *w++ = 'f'; break;
    case '\n': *w++ = 'n'; break;
    case '\r': *w++ = 'r'; break;
    case '\t': *w++ = 't'; break;
    default:
        memcpy(w, "u00", 3);
        w[3] = hex[c >> 4];
        w[4] = hex[c & 15];
        w += 5;
        break;
    }
    return w;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)
#define ONES32 UINT32_C(0x01010101)
#define HIGHS32 UINT32_C(0x80808080)

/*
 * Whether eight (four) bytes are all plain: copied as they are. A byte needs care when it is a
 * control byte (x - 0x20 borrows into the high bit), a quote or a backslash (x ^ q is zero, so
 * x ^ q - 1 borrows) or has its high bit set. Borrows can only mark more bytes, never hide one, and
 * a marked byte goes to the byte-at-a-time code, which decides exactly. marks8 gives the mark of
 * each byte (its high bit), plain8 whether there is none.
 */
static inline uint64_t marks8(const unsigned char *p)
{
    uint64_t x;

    memcpy(&x, p, sizeof(x));
    return ((x - ONES * 0x20) | ((x ^ (ONES * '"')) - ONES) | ((x ^ (ONES * '\\')) - ONES) | x) & HIGHS;
}

static inline bool plain8(const unsigned char *p)
{
    return marks8(p) == 0;
}

static inline bool plain4(const unsigned char *p)
{
    uint32_t x;

    memcpy(&x, p, sizeof(x));
    return (((x - ONES32 * 0x20) | ((x ^ (ONES32 * '"')) - ONES32) | ((x ^ (ONES32 * '\\')) - ONES32) | x) &
            HIGHS32) == 0;
}

/*
 * The string writer, in two forms the compiler specialises: admitd's own (lower-case hex, each
 * invalid byte as U+FFFD) and yyjson's (upper-case hex, NULL on invalid UTF-8, as yyjson's writer
 * fails on it without YYJSON_WRITE_ALLOW_INVALID_UNICODE).
 */
static inline char *put_string_as(char *w, const char *s, size_t n, const char *hex, bool strict)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + n;

    *w++ = '"';
    /* Most strings are plain throughout (names, keys, paths): copied in words, the last few bytes
       as one more word that overlaps the bytes already copied (which came out as they went in),
       and a string of four to seven bytes as two overlapping halves. */
    if (n >= 8) {
        while (end - p >= 8 && plain8(p)) {
            memcpy(w, p, 8);
            w += 8;
            p += 8;
        }
        if (end - p < 8 && plain8(end - 8)) {
            memcpy(w + (end - p) - 8, end - 8, 8);
            w += end - p;
            *w++ = '"';
            return w;
        }
    } else if (n >= 4 && plain4(p) && plain4(end - 4)) {
        memcpy(w, p, 4);
        memcpy(w + n - 4, end - 4, 4);
        w += n;
        *w++ = '"';
        return w;
    }
    for (;;) {
        unsigned char c;
        size_t len;

        /* eight plain bytes at a time between the words that need care */
        while (end - p >= 8) {
            uint64_t marked = marks8(p);

            if (marked != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                /* The bytes below the first marked one are plain: copied at once (the word is
                   copied whole, in bound, and what follows overwrites the rest). */
                size_t plain = (size_t)__builtin_ctzll(marked) / 8;

                memcpy(w, p, 8);
                w += plain;
                p += plain;
#endif
                break;
            }
            memcpy(w, p, 8);
            w += 8;
            p += 8;
        }
        if (p == end) {
            break;
        }
        c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *w++ = (char)c;
            p++;
        } else if (c == '"' || c == '\\') {
            *w++ = '\\';
            *w++ = (char)c;
            p++;
        } else if (c < 0x20) {
            w = put_control(w, c, hex); /* NUL included: s may hold one */
            p++;
        } else {
            len = utf8_sequence(p, (size_t)(end - p));
            if (len == 0 && strict) {
                return NULL;
            }
            if (len == 0) {
                /* As Go's encoder does: each invalid byte becomes U+FFFD (3 bytes, in bound). */
                memcpy(w, "\xef\xbf\xbd", 3);
                w += 3;
                p++;
            } else {
                memcpy(w, p, len);
                w += len;
                p += len;
            }
        }
    }
    *w++ = '"';
    return w;
}

char *adm_jsonw_put_string(char *w, const char *s, size_t n)
{
    return put_string_as(w, s, n, hex_lower, false);
}

void adm_jsonw_init(adm_jsonw_t *w, adm_arena_t *a)
{
    memset(w, 0, sizeof(*w));
    w->arena = a;
}

bool adm_jsonw_reserve(adm_jsonw_t *w, size_t extra)
{
    size_t cap = w->cap;
    char *p;

    if (w->failed || w->len + extra <= w->cap) {
        return !w->failed;
    }
    while (cap < w->len + extra) {
        cap = cap < 256 ? 256 : cap * 2;
    }
    p = adm_arena_realloc(w->arena, w->data, w->cap, cap);
    if (p == NULL) {
        w->failed = true;
        return false;
    }
    w->data = p;
    w->cap = cap;
    return true;
}

void adm_jsonw_string(adm_jsonw_t *w, const char *s, size_t n)
{
    if (n > (SIZE_MAX - 2) / 6) {
        w->failed = true;
        return;
    }
    if (!adm_jsonw_reserve(w, ADM_JSONW_STRING_MAX(n))) {
        return;
    }
    w->len = (size_t)(adm_jsonw_put_string(w->data + w->len, s, n) - w->data);
}

/* Room for extra more bytes: the common case inline, the growth in adm_jsonw_reserve. */
static inline bool room(adm_jsonw_t *w, size_t extra)
{
    return w->len + extra <= w->cap || adm_jsonw_reserve(w, extra);
}

/* n bytes from s at w, the short ones (names, mostly) in two overlapping moves instead of a call. */
static inline char *put_bytes(char *w, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        memcpy(w, s, 8);
        memcpy(w + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(w, s, 4);
        memcpy(w + n - 4, s + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) {
            w[i] = s[i];
        }
    } else {
        memcpy(w, s, n);
    }
    return w + n;
}

char *adm_jsonw_put_u64(char *w, uint64_t u)
{
    char digits[20];
    size_t n = 0;

    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    while (n > 0) {
        *w++ = digits[--n];
    }
    return w;
}

/*
 * The reals yyjson writes by a rule simple enough to repeat here: zero as 0.0 (or -0.0), and an
 * integer from 1 to 2^53 - 1 as its digits and .0. NULL for every other real (NaN and infinities
 * included), which real_by_yyjson writes.
 */
static char *put_simple_real(char *w, double d)
{
    uint64_t raw;
    bool negative;
    double mag;

    memcpy(&raw, &d, sizeof(raw));
    negative = raw >> 63 != 0; /* -0.0 included: yyjson keeps its sign */
    mag = negative ? -d : d;
    if (mag != 0 && !(mag >= 1 && mag < 9007199254740992.0 && mag == (double)(uint64_t)mag)) {
        return NULL; /* NaN fails every comparison and lands here too */
    }
    if (negative) {
        *w++ = '-';
    }
    if (mag == 0) {
        memcpy(w, "0.0", 3);
        return w + 3;
    }
    w = adm_jsonw_put_u64(w, (uint64_t)mag);
    memcpy(w, ".0", 2);
    return w + 2;
}

/*
 * Any other real, by yyjson's own shortest round-trip writer (at most 32 bytes at w), from a pool
 * on the stack: no arena allocation between the growing writer's. NULL for NaN and infinities,
 * which yyjson refuses without YYJSON_WRITE_ALLOW_INF_AND_NAN.
 */
static char *real_by_yyjson(char *w, yyjson_mut_val *v)
{
    union {
        uint64_t align;
        char bytes[512];
    } pool;
    yyjson_alc alc;
    size_t n = 0;
    char *text;

    if (!yyjson_alc_pool_init(&alc, pool.bytes, sizeof(pool.bytes))) {
        return NULL;
    }
    text = yyjson_mut_val_write_opts(v, YYJSON_WRITE_NOFLAG, &alc, &n, NULL);
    if (text == NULL || n > 32) {
        return NULL;
    }
    memcpy(w, text, n);
    return w + n;
}

/* The whole value by yyjson's writer: for values nested deeper than write_mut's stack. */
static void mut_value_by_yyjson(adm_jsonw_t *w, yyjson_mut_val *v)
{
    yyjson_alc alc;
    size_t n = 0;
    char *text;

    adm_json_alc_init(&alc, w->arena);
    text = yyjson_mut_val_write_opts(v, YYJSON_WRITE_NOFLAG, &alc, &n, NULL);
    if (text == NULL) {
        w->failed = true;
        return;
    }
    adm_jsonw_raw(w, text, n);
}

/* Containers write_mut opens inside one another; a value nested deeper goes to yyjson's writer. */
#define MUT_DEPTH_MAX 64

/* What write_mut made of a value. */
typedef enum { MUT_WRITTEN, MUT_FAILED, MUT_TOO_DEEP } mut_result_t;

/* An open container: its value, how many of its values (keys count) are left, whether an object. */
typedef struct mut_frame_s {
    yyjson_mut_val *ctn;
    size_t left;
    bool obj;
} mut_frame_t;

/*
 * A scalar or an empty container with its separator: ':' after a string in a key's place, else
 * ','. Fails where yyjson's writer fails (invalid UTF-8 in a string not marked NOESC, NaN or
 * infinity, a value of no type). Inlined into both writers: it is most of their work per value.
 */
static inline __attribute__((always_inline)) bool put_scalar(adm_jsonw_t *w, yyjson_mut_val *v,
                                                             bool key_place)
{
    size_t len = unsafe_yyjson_get_len(v);
    char *p;

    switch (yyjson_mut_get_type(v)) {
    case YYJSON_TYPE_STR:
        if (len > (SIZE_MAX - 8) / 6 || !room(w, ADM_JSONW_STRING_MAX(len) + 1)) {
            return false;
        }
        p = w->data + w->len;
        if (yyjson_mut_get_subtype(v) != 0) {
            /* Marked as needing no escape (by yyjson's reader or yyjson_mut_str): yyjson copies
               it as it is, unchecked, and so does this. */
            *p++ = '"';
            p = put_bytes(p, v->uni.str, len);
            *p++ = '"';
        } else {
            p = put_string_as(p, v->uni.str, len, hex_upper, true);
            if (p == NULL) {
                return false;
            }
        }
        *p++ = key_place ? ':' : ',';
        break;
    case YYJSON_TYPE_NUM:
        if (!room(w, 33)) {
            return false;
        }
        p = w->data + w->len;
        if (yyjson_mut_get_subtype(v) == YYJSON_SUBTYPE_REAL) {
            char *end = put_simple_real(p, v->uni.f64);

            p = end != NULL ? end : real_by_yyjson(p, v);
            if (p == NULL) {
                return false;
            }
        } else if (yyjson_mut_get_subtype(v) == YYJSON_SUBTYPE_SINT && v->uni.i64 < 0) {
            *p++ = '-';
            p = adm_jsonw_put_u64(p, 0 - v->uni.u64);
        } else {
            p = adm_jsonw_put_u64(p, v->uni.u64);
        }
        *p++ = ',';
        break;
    case YYJSON_TYPE_BOOL:
        if (!room(w, 6)) {
            return false;
        }
        p = w->data + w->len;
        if (yyjson_mut_get_bool(v)) {
            memcpy(p, "true,", 5);
            p += 5;
        } else {
            memcpy(p, "false,", 6);
            p += 6;
        }
        break;
    case YYJSON_TYPE_NULL:
        if (!room(w, 5)) {
            return false;
        }
        p = w->data + w->len;
        memcpy(p, "null,", 5);
        p += 5;
        break;
    case YYJSON_TYPE_RAW:
        if (len > SIZE_MAX - 8 || !room(w, len + 1)) {
            return false;
        }
        p = put_bytes(w->data + w->len, v->uni.str, len);
        *p++ = ',';
        break;
    case YYJSON_TYPE_ARR:
    case YYJSON_TYPE_OBJ: /* empty: write_mut opens the others */
        if (!room(w, 3)) {
            return false;
        }
        p = w->data + w->len;
        memcpy(p, yyjson_mut_get_type(v) == YYJSON_TYPE_OBJ ? "{}," : "[],", 3);
        p += 3;
        break;
    default: return false;
    }
    w->len = (size_t)(p - w->data);
    return true;
}

/*
 * v as compact JSON, byte for byte what yyjson_mut_val_write_opts writes with
 * YYJSON_WRITE_NOFLAG, in one walk with an explicit stack. As yyjson's writer does, every value
 * is followed by its separator, and closing a container overwrites the separator of its last
 * value; the root's own separator is dropped at the end. A mutable container points at its last
 * child, whose next is the first (for an object: the last key, whose value's next is the first
 * key).
 */
static mut_result_t write_mut(adm_jsonw_t *w, yyjson_mut_val *v)
{
    mut_frame_t stack[MUT_DEPTH_MAX];
    size_t depth = 0;
    yyjson_mut_val *ctn = NULL; /* the open container; NULL at the root */
    size_t left = 1;            /* values left in it, v included */
    bool obj = false;

    for (;;) {
        yyjson_type type = yyjson_mut_get_type(v);
        size_t len = unsafe_yyjson_get_len(v);

        if ((type == YYJSON_TYPE_ARR || type == YYJSON_TYPE_OBJ) && len > 0) {
            if (depth == MUT_DEPTH_MAX) {
                return MUT_TOO_DEEP;
            }
            if (!room(w, 1)) {
                return MUT_FAILED;
            }
            stack[depth++] = (mut_frame_t){ctn, left, obj};
            obj = type == YYJSON_TYPE_OBJ;
            w->data[w->len++] = obj ? '{' : '[';
            ctn = v;
            left = obj ? len * 2 : len;
            v = ((yyjson_mut_val *)v->uni.ptr)->next;
            if (obj) {
                v = v->next;
            }
            continue;
        }
        if (!put_scalar(w, v, obj && left % 2 == 0)) {
            return MUT_FAILED;
        }
        while (--left == 0) {
            if (ctn == NULL) {
                w->len--; /* the root's separator */
                return MUT_WRITTEN;
            }
            if (!room(w, 1)) {
                return MUT_FAILED;
            }
            w->data[w->len - 1] = obj ? '}' : ']';
            w->data[w->len++] = ',';
            v = ctn;
            depth--;
            ctn = stack[depth].ctn;
            left = stack[depth].left;
            obj = stack[depth].obj;
        }
        v = v->next;
    }
}

void adm_jsonw_mut_value(adm_jsonw_t *w, yyjson_mut_val *v)
{
    size_t start = w->len;

    if (v == NULL) {
        w->failed = true; /* as yyjson fails on it */
    }
    if (w->failed) {
        return;
    }
    switch (write_mut(w, v)) {
    case MUT_WRITTEN: break;
    case MUT_TOO_DEEP:
        w->len = start;
        mut_value_by_yyjson(w, v);
        break;
    case MUT_FAILED: w->failed = true; break;
    }
}

/* The whole value by yyjson's writer: for flat values nested deeper than write_flat's stack. */
static void value_by_yyjson(adm_jsonw_t *w, yyjson_val *v)
{
    yyjson_alc alc;
    size_t n = 0;
    char *text;

    adm_json_alc_init(&alc, w->arena);
    text = yyjson_val_write_opts(v, YYJSON_WRITE_NOFLAG, &alc, &n, NULL);
    if (text == NULL) {
        w->failed = true;
        return;
    }
    adm_jsonw_raw(w, text, n);
}

/*
 * write_mut for a flat layout (a parsed document or a view): the first child of a container is
 * the value after it, a value's next sibling the value after its subtree. A scalar goes through
 * put_scalar as a mutable value holding its tag and payload, so both writers write one text.
 */
static mut_result_t write_flat(adm_jsonw_t *w, yyjson_val *v)
{
    struct {
        yyjson_val *ctn;
        size_t left;
        bool obj;
    } stack[MUT_DEPTH_MAX];
    size_t depth = 0;
    yyjson_val *ctn = NULL; /* the open container; NULL at the root */
    size_t left = 1;        /* values left in it, v included */
    bool obj = false;

    for (;;) {
        yyjson_type type = yyjson_get_type(v);
        size_t len = unsafe_yyjson_get_len(v);
        yyjson_mut_val scalar;

        if ((type == YYJSON_TYPE_ARR || type == YYJSON_TYPE_OBJ) && len > 0) {
            if (depth == MUT_DEPTH_MAX) {
                return MUT_TOO_DEEP;
            }
            if (!room(w, 1)) {
                return MUT_FAILED;
            }
            stack[depth].ctn = ctn;
            stack[depth].left = left;
            stack[depth].obj = obj;
            depth++;
            obj = type == YYJSON_TYPE_OBJ;
            w->data[w->len++] = obj ? '{' : '[';
            ctn = v;
            left = obj ? len * 2 : len;
            v++;
            continue;
        }
        scalar.tag = v->tag;
        scalar.uni = v->uni;
        scalar.next = NULL;
        if (!put_scalar(w, &scalar, obj && left % 2 == 0)) {
            return MUT_FAILED;
        }
        v++; /* a scalar's subtree is itself */
        while (--left == 0) {
            if (ctn == NULL) {
                w->len--; /* the root's separator */
                return MUT_WRITTEN;
            }
            if (!room(w, 1)) {
                return MUT_FAILED;
            }
            w->data[w->len - 1] = obj ? '}' : ']';
            w->data[w->len++] = ',';
            depth--;
            ctn = stack[depth].ctn;
            left = stack[depth].left;
            obj = stack[depth].obj;
        }
    }
}

void adm_jsonw_value(adm_jsonw_t *w, yyjson_val *v)
{
    size_t start = w->len;

    if (v == NULL) {
        w->failed = true; /* as adm_jsonw_mut_value fails on it */
    }
    if (w->failed) {
        return;
    }
    switch (write_flat(w, v)) {
    case MUT_WRITTEN: break;
    case MUT_TOO_DEEP:
        w->len = start;
        value_by_yyjson(w, v);
        break;
    case MUT_FAILED: w->failed = true; break;
    }
}

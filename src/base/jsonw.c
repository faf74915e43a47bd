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

/* A control byte as JSON's short escape where there is one, else \u00XX. */
static char *put_control(char *w, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";

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

char *adm_jsonw_put_string(char *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + n;

    *w++ = '"';
    for (;;) {
        unsigned char c;
        size_t len;

        /* Eight plain bytes at a time. A byte needs care when it is a control byte (x - 0x20
           borrows into the high bit), a quote or a backslash (x ^ q is zero, so x ^ q - 1 borrows)
           or has its high bit set. Borrows can only mark more bytes, never hide one, and a marked
           word goes to the byte-at-a-time code below, which decides exactly. */
        while (end - p >= 8) {
            uint64_t x;
            uint64_t marked;

            memcpy(&x, p, sizeof(x));
            marked = (x - ONES * 0x20) | ((x ^ (ONES * '"')) - ONES) | ((x ^ (ONES * '\\')) - ONES) | x;
            if ((marked & HIGHS) != 0) {
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
            w = put_control(w, c); /* NUL included: s may hold one */
            p++;
        } else {
            len = utf8_sequence(p, (size_t)(end - p));
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

void adm_jsonw_raw(adm_jsonw_t *w, const char *s, size_t n)
{
    if (adm_jsonw_reserve(w, n)) {
        memcpy(w->data + w->len, s, n);
        w->len += n;
    }
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

void adm_jsonw_mut_value(adm_jsonw_t *w, yyjson_mut_val *v)
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

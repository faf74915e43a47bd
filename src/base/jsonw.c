/* SPDX-License-Identifier: Apache-2.0 */
/* JSON text writer on arena memory; see adm/jsonw.h. */
#include "adm/base/jsonw.h"

#include "adm/base/json.h"

#include <string.h>

void adm_jsonw_init(adm_jsonw_t *w, adm_arena_t *a)
{
    memset(w, 0, sizeof(*w));
    w->arena = a;
}

static void reserve(adm_jsonw_t *w, size_t extra)
{
    size_t cap = w->cap;
    char *p;

    if (w->failed || w->len + extra <= w->cap) {
        return;
    }
    while (cap < w->len + extra) {
        cap = cap < 256 ? 256 : cap * 2;
    }
    p = adm_arena_realloc(w->arena, w->data, w->cap, cap);
    if (p == NULL) {
        w->failed = true;
        return;
    }
    w->data = p;
    w->cap = cap;
}

void adm_jsonw_raw(adm_jsonw_t *w, const char *s, size_t n)
{
    reserve(w, n);
    if (!w->failed) {
        memcpy(w->data + w->len, s, n);
        w->len += n;
    }
}

void adm_jsonw_string(adm_jsonw_t *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;

    reserve(w, n * 6 + 2);
    if (w->failed) {
        return;
    }
    w->data[w->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];

        if (c == '"' || c == '\\') {
            w->data[w->len++] = '\\';
            w->data[w->len++] = (char)c;
        } else if (c < 0x20) {
            w->data[w->len++] = '\\';
            switch (c) {
            case '\n': w->data[w->len++] = 'n'; break;
            case '\r': w->data[w->len++] = 'r'; break;
            case '\t': w->data[w->len++] = 't'; break;
            case '\b': w->data[w->len++] = 'b'; break;
            case '\f': w->data[w->len++] = 'f'; break;
            default:
                memcpy(w->data + w->len, "u00", 3);
                w->data[w->len + 3] = hex[c >> 4];
                w->data[w->len + 4] = hex[c & 15];
                w->len += 5;
                break;
            }
        } else {
            w->data[w->len++] = (char)c;
        }
    }
    w->data[w->len++] = '"';
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

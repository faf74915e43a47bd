/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the Pod Security checks share: arena string lists and sets, and the phrasing helpers.
 */
#include "check_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void psa_list_add(psa_ctx_t *cx, psa_list_t *l, const char *s)
{
    if (s == NULL) {
        cx->nomem = true;
        return;
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap == 0 ? PSA_LIST_FIRST : l->cap * 2;
        const char **g = l->cap == 0 ? l->first : adm_arena_alloc(cx->arena, ncap * sizeof(*g));

        if (g == NULL) {
            cx->nomem = true;
            return;
        }
        if (l->n > 0) {
            memcpy(g, l->v, l->n * sizeof(*g));
        }
        l->v = g;
        l->cap = ncap;
    }
    l->v[l->n++] = s;
}

void psa_set_add(psa_ctx_t *cx, psa_list_t *l, const char *s)
{
    for (size_t i = 0; s != NULL && i < l->n; i++) {
        if (strcmp(l->v[i], s) == 0) {
            return;
        }
    }
    psa_list_add(cx, l, s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void psa_list_sort(psa_list_t *l)
{
    if (l->n > 1) {
        qsort(l->v, l->n, sizeof(*l->v), cmp_str);
    }
}

/* prefix, then the items joined by sep (quoted when quote), then suffix, in one allocation. */
static const char *join_around(psa_ctx_t *cx, const char *prefix, const psa_list_t *l, const char *sep,
                               bool quote, const char *suffix)
{
    size_t prefixlen = strlen(prefix);
    size_t seplen = strlen(sep);
    size_t suffixlen = strlen(suffix);
    size_t len = prefixlen + suffixlen + 1;
    char *out;
    char *p;

    for (size_t i = 0; i < l->n; i++) {
        len += strlen(l->v[i]) + seplen + (quote ? 2 : 0);
    }
    out = adm_arena_alloc(cx->arena, len);
    if (out == NULL) {
        cx->nomem = true;
        return "";
    }
    memcpy(out, prefix, prefixlen);
    p = out + prefixlen;
    for (size_t i = 0; i < l->n; i++) {
        size_t n = strlen(l->v[i]);

        if (i > 0) {
            memcpy(p, sep, seplen);
            p += seplen;
        }
        if (quote) {
            *p++ = '"';
        }
        memcpy(p, l->v[i], n);
        p += n;
        if (quote) {
            *p++ = '"';
        }
    }
    memcpy(p, suffix, suffixlen + 1);
    return out;
}

const char *psa_join(psa_ctx_t *cx, const psa_list_t *l, const char *sep, bool quote)
{
    /* one item unquoted is the item itself: no text is written once made, so it can be shared */
    if (l->n == 1 && !quote) {
        return l->v[0];
    }
    return join_around(cx, "", l, sep, quote, "");
}

const char *psa_cat(psa_ctx_t *cx, ...)
{
    va_list ap;
    size_t len = 0;
    const char *part;
    char *out;
    char *p;

    va_start(ap, cx);
    for (part = va_arg(ap, const char *); part != NULL; part = va_arg(ap, const char *)) {
        len += strlen(part);
    }
    va_end(ap);
    out = adm_arena_alloc(cx->arena, len + 1);
    if (out == NULL) {
        cx->nomem = true;
        return "";
    }
    p = out;
    va_start(ap, cx);
    for (part = va_arg(ap, const char *); part != NULL; part = va_arg(ap, const char *)) {
        size_t n = strlen(part);

        memcpy(p, part, n);
        p += n;
    }
    va_end(ap);
    *p = '\0';
    return out;
}

const char *psa_int(psa_ctx_t *cx, int64_t n)
{
    char buf[24];
    char *p = buf + sizeof(buf);
    uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;

    *--p = '\0';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (n < 0) {
        *--p = '-';
    }
    return psa_cat(cx, p, NULL);
}

const char *psa_containers_phrase(psa_ctx_t *cx, const psa_list_t *names)
{
    return join_around(cx, psa_plural("container ", "containers ", names->n), names, ", ", true, "");
}

const char *psa_containers_then(psa_ctx_t *cx, const psa_list_t *names, const char *tail)
{
    return join_around(cx, psa_plural("container ", "containers ", names->n), names, ", ", true, tail);
}

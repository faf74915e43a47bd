/* SPDX-License-Identifier: Apache-2.0 */
/* Arena string lists and the phrasing helpers the Pod Security checks share. */
#include "check_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const psa_container_lists[3] = {"initContainers", "containers", "ephemeralContainers"};

void psa_ctx_lists(psa_ctx_t *cx)
{
    for (int l = 0; l < 3; l++) {
        cx->lists[l] = psa_get(cx->spec, psa_container_lists[l]);
    }
}

void psa_list_add(psa_ctx_t *cx, psa_list_t *l, const char *s)
{
    if (s == NULL) {
        cx->nomem = true;
        return;
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap == 0 ? 4 : l->cap * 2;
        const char **g = adm_arena_realloc(cx->arena, l->v, l->cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            cx->nomem = true;
            return;
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

const char *psa_join(psa_ctx_t *cx, const psa_list_t *l, const char *sep, bool quote)
{
    size_t seplen = strlen(sep);
    size_t len = 1;
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
    p = out;
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
    *p = '\0';
    return out;
}

const char *psa_fmt(psa_ctx_t *cx, const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    s = adm_arena_vprintf(cx->arena, fmt, ap);
    va_end(ap);
    if (s == NULL) {
        cx->nomem = true;
        return "";
    }
    return s;
}

const char *psa_containers_phrase(psa_ctx_t *cx, const psa_list_t *names)
{
    return psa_fmt(cx, "%s %s", psa_plural("container", "containers", names->n),
                   psa_join(cx, names, ", ", true));
}

bool psa_user_namespaced(const psa_ctx_t *cx)
{
    return psa_is_false(cx->spec, "hostUsers");
}

bool psa_windows(const psa_ctx_t *cx)
{
    return strcmp(psa_str(psa_get(cx->spec, "os"), "name"), "windows") == 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Growable byte buffers; growth doubles so appends are amortised O(1). */
#include "adm/base/buf.h"

#include "adm/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int adm_buf_reserve(adm_buf_t *b, size_t extra)
{
    size_t want, cap;
    uint8_t *p;

    if (extra > SIZE_MAX - b->len) {
        return ADM_ENOMEM;
    }
    want = b->len + extra;
    if (want <= b->cap) {
        return 0;
    }
    cap = b->cap < 1024 ? 1024 : b->cap;
    while (cap < want) {
        if (cap > SIZE_MAX / 2) {
            cap = want;
            break;
        }
        cap *= 2;
    }
    p = realloc(b->data, cap);
    if (p == NULL) {
        return ADM_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int adm_buf_append(adm_buf_t *b, const void *data, size_t len)
{
    int err;

    if (len == 0) {
        return 0;
    }
    err = adm_buf_reserve(b, len);
    if (err != 0) {
        return err;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

int adm_buf_append_str(adm_buf_t *b, const char *s)
{
    return adm_buf_append(b, s, strlen(s));
}

int adm_buf_appendf(adm_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    int err;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return ADM_EINVAL;
    }
    /* One more byte for vsnprintf's NUL, which is not counted in len. */
    err = adm_buf_reserve(b, (size_t)n + 1);
    if (err != 0) {
        return err;
    }
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void adm_buf_consume(adm_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void adm_buf_swap(adm_buf_t *a, adm_buf_t *b)
{
    adm_buf_t t = *a;

    *a = *b;
    *b = t;
}

void adm_buf_shrink(adm_buf_t *b, size_t keep)
{
    if (b->cap > keep) {
        adm_buf_free(b);
    }
    b->len = 0;
}

void adm_buf_free(adm_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

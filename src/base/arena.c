/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bump allocator over a list of chunks. The first chunk is kept across resets; later chunks grow
 * geometrically so a large request costs a handful of mallocs, and oversized allocations get a chunk
 * of their own.
 */
#include "adm/base/arena.h"

#include "adm/base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGNMENT 16

struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    _Alignas(ALIGNMENT) unsigned char data[];
};

struct cleanup {
    struct cleanup *next;
    adm_arena_cleanup_cb fn;
    void *arg;
};

struct adm_arena_s {
    struct chunk *head;  /* current chunk: allocations come from here */
    struct chunk *first; /* kept across resets */
    struct cleanup *cleanups;
    size_t used_total;
    void *last; /* the last allocation, which may grow in place */
    size_t next_size;
};

static size_t align_up(size_t n)
{
    return (n + (ALIGNMENT - 1)) & ~(size_t)(ALIGNMENT - 1);
}

static struct chunk *chunk_new(size_t size)
{
    struct chunk *c;

    if (size > SIZE_MAX - sizeof(*c)) {
        return NULL;
    }
    c = malloc(sizeof(*c) + size);
    if (c == NULL) {
        return NULL;
    }
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

adm_arena_t *adm_arena_create(size_t first_chunk)
{
    adm_arena_t *a = calloc(1, sizeof(*a));

    if (a == NULL) {
        return NULL;
    }
    if (first_chunk < 256) {
        first_chunk = 256;
    }
    a->first = chunk_new(align_up(first_chunk));
    if (a->first == NULL) {
        free(a);
        return NULL;
    }
    a->head = a->first;
    a->next_size = a->first->size * 2;
    return a;
}

static void run_cleanups(adm_arena_t *a)
{
    while (a->cleanups != NULL) {
        struct cleanup *c = a->cleanups;

        /* Unlink first: a cleanup may not register another, but must not see itself twice. */
        a->cleanups = c->next;
        c->fn(c->arg);
    }
}

static void free_chunks_after_first(adm_arena_t *a)
{
    struct chunk *c = a->head;

    /* Chunks are pushed on the front, so the first chunk is the tail of the list. */
    while (c != NULL && c != a->first) {
        struct chunk *next = c->next;

        free(c);
        c = next;
    }
    a->head = a->first;
    a->first->next = NULL;
    a->first->used = 0;
}

void adm_arena_reset(adm_arena_t *a)
{
    run_cleanups(a);
    free_chunks_after_first(a);
    a->used_total = 0;
    a->last = NULL;
    a->next_size = a->first->size * 2;
}

void adm_arena_destroy(adm_arena_t *a)
{
    if (a == NULL) {
        return;
    }
    adm_arena_reset(a);
    free(a->first);
    free(a);
}

void *adm_arena_alloc(adm_arena_t *a, size_t size)
{
    size_t need = align_up(size == 0 ? 1 : size);
    struct chunk *c = a->head;
    void *p;

    if (need < size) {
        return NULL; /* overflow */
    }
    if (c->size - c->used < need) {
        size_t chunk_size = a->next_size;

        if (chunk_size < need) {
            chunk_size = need;
        } else if (a->next_size < ((size_t)64 << 20)) {
            a->next_size *= 2;
        }
        c = chunk_new(chunk_size);
        if (c == NULL) {
            return NULL;
        }
        c->next = a->head;
        a->head = c;
    }
    p = c->data + c->used;
    c->used += need;
    a->used_total += need;
    a->last = p;
    return p;
}

void *adm_arena_calloc(adm_arena_t *a, size_t count, size_t size)
{
    void *p;

    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    p = adm_arena_alloc(a, count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

void *adm_arena_realloc(adm_arena_t *a, void *p, size_t old_size, size_t new_size)
{
    void *q;

    if (p == NULL) {
        return adm_arena_alloc(a, new_size);
    }
    if (p == a->last) {
        struct chunk *c = a->head;
        size_t offset = (size_t)((unsigned char *)p - c->data);
        size_t need = align_up(new_size == 0 ? 1 : new_size);

        if (need >= new_size && offset + need <= c->size) {
            a->used_total = a->used_total - (c->used - offset) + need;
            c->used = offset + need;
            return p;
        }
    }
    if (new_size <= old_size) {
        return p;
    }
    q = adm_arena_alloc(a, new_size);
    if (q != NULL) {
        memcpy(q, p, old_size);
    }
    return q;
}

char *adm_arena_strndup(adm_arena_t *a, const char *s, size_t len)
{
    char *d;

    if (len == SIZE_MAX) {
        return NULL;
    }
    d = adm_arena_alloc(a, len + 1);
    if (d == NULL) {
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

int adm_arena_on_free(adm_arena_t *a, adm_arena_cleanup_cb fn, void *arg)
{
    struct cleanup *c = adm_arena_alloc(a, sizeof(*c));

    if (c == NULL) {
        return ADM_ENOMEM;
    }
    c->fn = fn;
    c->arg = arg;
    c->next = a->cleanups;
    a->cleanups = c;
    /* The record itself is arena memory; it must not become the growable "last" allocation. */
    a->last = NULL;
    return 0;
}

size_t adm_arena_used(const adm_arena_t *a)
{
    return a->used_total;
}

char *adm_arena_vprintf(adm_arena_t *a, const char *fmt, va_list ap)
{
    va_list again;
    char small[256];
    char *out;
    int n;

    va_copy(again, ap);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0) {
        va_end(again);
        return NULL;
    }
    out = adm_arena_alloc(a, (size_t)n + 1);
    if (out != NULL) {
        if ((size_t)n < sizeof(small)) {
            memcpy(out, small, (size_t)n + 1);
        } else {
            vsnprintf(out, (size_t)n + 1, fmt, again);
        }
    }
    va_end(again);
    return out;
}

char *adm_arena_printf(adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    char *out;

    va_start(ap, fmt);
    out = adm_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return out;
}

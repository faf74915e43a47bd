/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Region allocator for everything that lives as long as one request: the parsed AdmissionReview,
 * the response bytes, patches. Memory is never freed piece by piece; adm_arena_reset() releases it
 * all at once and keeps the first chunk, so a connection that reuses its arena does no malloc per
 * request in the steady state.
 */
#ifndef ADM_ARENA_H
#define ADM_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct adm_arena_s adm_arena_t;

/** Cleanup run by adm_arena_reset()/adm_arena_destroy() for resources that are not arena memory. */
typedef void (*adm_arena_cleanup_cb)(void *arg);

/** Creates an arena whose first chunk holds at least first_chunk bytes. NULL when out of memory. */
adm_arena_t *adm_arena_create(size_t first_chunk);

/** Runs the cleanups (last registered first) and frees every chunk. NULL is a no-op. */
void adm_arena_destroy(adm_arena_t *a);

/** Runs the cleanups and forgets every allocation, keeping the first chunk for reuse. */
void adm_arena_reset(adm_arena_t *a);

/** Returns size bytes aligned to 16, or NULL when out of memory. size 0 returns a valid pointer. */
void *adm_arena_alloc(adm_arena_t *a, size_t size);

/** Like adm_arena_alloc but zero-filled. */
void *adm_arena_calloc(adm_arena_t *a, size_t count, size_t size);

/**
 * Grows (or shrinks) an allocation. The last allocation grows in place when its chunk has room;
 * otherwise the bytes are copied. p may be NULL (then it is adm_arena_alloc).
 */
void *adm_arena_realloc(adm_arena_t *a, void *p, size_t old_size, size_t new_size);

/** Copies len bytes of s and adds a terminating NUL. */
char *adm_arena_strndup(adm_arena_t *a, const char *s, size_t len);

/** printf into the arena; NULL when it is exhausted. */
char *adm_arena_printf(adm_arena_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *adm_arena_vprintf(adm_arena_t *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/** Registers a cleanup; returns 0 or ADM_ENOMEM (then fn is not registered and never called). */
int adm_arena_on_free(adm_arena_t *a, adm_arena_cleanup_cb fn, void *arg);

/** Bytes handed out since the last reset (for tests and metrics). */
size_t adm_arena_used(const adm_arena_t *a);

#endif

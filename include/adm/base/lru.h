/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A least-recently-used cache of fixed-size values by string key, with hashicorp/golang-lru's
 * semantics (what kube's admission plugins use): a lookup makes its key the most recent, and a
 * new key in a full cache takes the place of the least recent one. Keys are hashed with SipHash
 * under a key the caller draws at random, since clients choose them.
 *
 * Memory: slots are allocated at init (up to ADM_LRU_PREALLOC) and grow by doubling up to max,
 * so a full cache never allocates again. A slot keeps its key buffer when it takes a new key and
 * only grows it, so the steady state of a full cache allocates nothing. Slots are linked by index,
 * so the array can move when it grows without relinking anything.
 */
#ifndef ADM_LRU_H
#define ADM_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slots allocated at init (kube's EventRateLimit default cache size); more come as the cache fills. */
#define ADM_LRU_PREALLOC 4096

typedef struct adm_lru_s {
    unsigned char *slots; /* alloc slots of stride bytes: a private header, then the value */
    uint32_t *heads;      /* hash index: first slot of each chain */
    uint64_t seed[2];     /* SipHash key */
    size_t stride;
    size_t value_off; /* where a slot's value starts */
    size_t value_size;
    uint32_t mask;  /* heads - 1, a power of two less one */
    uint32_t count; /* slots in use */
    uint32_t alloc; /* slots allocated */
    uint32_t max;
    uint32_t mru, lru; /* ends of the recency list */
} adm_lru_t;

/**
 * Prepares l for at most max keys (at least 1) with values of value_size bytes (aligned as
 * malloc aligns). seed is the SipHash key; draw it at random. Returns 0 or ADM_ENOMEM; either
 * way adm_lru_dispose releases what was taken.
 */
int adm_lru_init(adm_lru_t *l, uint32_t max, size_t value_size, const uint64_t seed[2]);

/** Frees the slots and their keys. */
void adm_lru_dispose(adm_lru_t *l);

/**
 * The value for key (len bytes; any bytes, NUL included), now the most recently used. A key not
 * cached gets a zeroed value, in a new slot or in the slot of the least recently used key (which
 * is forgotten) when the cache is full. The pointer is valid until the next adm_lru_get. NULL when
 * memory for the key ran out; the cache is then unchanged.
 */
void *adm_lru_get(adm_lru_t *l, const char *key, size_t len);

/** The value for key without making it the most recent, or NULL when key is not cached. */
void *adm_lru_peek(const adm_lru_t *l, const char *key, size_t len);

/**
 * The value of the key that a new key would replace now (the least recent one, when the cache has
 * no free slot left to take), or NULL when a new key would take a free slot. For caches whose values
 * own memory: the caller releases it before adm_lru_get of a key adm_lru_peek does not find.
 */
void *adm_lru_oldest(const adm_lru_t *l);

/** Keys cached. */
static inline uint32_t adm_lru_count(const adm_lru_t *l)
{
    return l->count;
}

#endif

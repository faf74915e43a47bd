/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LRU cache of adm/base/lru.h. Slots sit in one array and point at each other by index: a
 * doubly linked recency list (mru .. lru) and, per hash bucket, a singly linked chain. A lookup
 * walks one chain; a hit moves the slot to the front of the list; a miss takes a fresh slot, or
 * unlinks the least recent one from both and reuses it with its key buffer.
 */
#include "adm/base/lru.h"

#include "adm/base/error.h"
#include "adm/base/siphash.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define MIN_KEY_CAP 64

typedef struct slot_s {
    char *key; /* owned, reused by the next key this slot holds */
    size_t key_len;
    size_t key_cap;
    uint64_t hash;
    uint32_t prev;  /* towards the most recently used */
    uint32_t next;  /* towards the least recently used */
    uint32_t chain; /* next slot of the same hash bucket */
} slot_t;

static slot_t *slot(const adm_lru_t *l, uint32_t i)
{
    return (slot_t *)(void *)(l->slots + (size_t)i * l->stride);
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 1;

    while (p < n) {
        p <<= 1;
    }
    return p;
}

static void heads_reset(adm_lru_t *l)
{
    memset(l->heads, 0xff, ((size_t)l->mask + 1) * sizeof(*l->heads));
}

int adm_lru_init(adm_lru_t *l, uint32_t max, size_t value_size, const uint64_t seed[2])
{
    uint32_t first;
    uint32_t nheads;

    memset(l, 0, sizeof(*l));
    max = max == 0 ? 1 : max;
    first = max < ADM_LRU_PREALLOC ? max : ADM_LRU_PREALLOC;
    nheads = pow2_at_least(first);
    l->seed[0] = seed[0];
    l->seed[1] = seed[1];
    /* The value starts where malloc's alignment allows any type. */
    l->value_off = round_up(sizeof(slot_t), alignof(max_align_t));
    l->value_size = value_size;
    l->stride = round_up(l->value_off + value_size, alignof(max_align_t));
    l->max = max;
    l->mru = NIL;
    l->lru = NIL;
    l->mask = nheads - 1;
    l->slots = calloc(first, l->stride);
    l->heads = malloc((size_t)nheads * sizeof(*l->heads));
    if (l->slots == NULL || l->heads == NULL) {
        return ADM_ENOMEM;
    }
    l->alloc = first;
    heads_reset(l);
    return 0;
}

void adm_lru_dispose(adm_lru_t *l)
{
    if (l->slots != NULL) {
        for (uint32_t i = 0; i < l->alloc; i++) {
            free(slot(l, i)->key);
        }
    }
    free(l->slots);
    free(l->heads);
    l->slots = NULL;
    l->heads = NULL;
    l->alloc = 0;
    l->count = 0;
}

static void list_unlink(adm_lru_t *l, uint32_t i)
{
    slot_t *e = slot(l, i);

    if (e->prev != NIL) {
        slot(l, e->prev)->next = e->next;
    } else {
        l->mru = e->next;
    }
    if (e->next != NIL) {
        slot(l, e->next)->prev = e->prev;
    } else {
        l->lru = e->prev;
    }
}

static void list_push_front(adm_lru_t *l, uint32_t i)
{
    slot_t *e = slot(l, i);

    e->prev = NIL;
    e->next = l->mru;
    if (l->mru != NIL) {
        slot(l, l->mru)->prev = i;
    } else {
        l->lru = i;
    }
    l->mru = i;
}

static void chain_insert(adm_lru_t *l, uint32_t i)
{
    uint32_t *head = &l->heads[slot(l, i)->hash & l->mask];

    slot(l, i)->chain = *head;
    *head = i;
}

static void chain_unlink(adm_lru_t *l, uint32_t i)
{
    uint32_t *link = &l->heads[slot(l, i)->hash & l->mask];

    while (*link != i) {
        link = &slot(l, *link)->chain;
    }
    *link = slot(l, i)->chain;
}

/* Doubles the slots (up to max). False when out of memory: the cache then recycles what it has. */
static bool grow(adm_lru_t *l)
{
    uint32_t alloc = l->alloc > l->max / 2 ? l->max : l->alloc * 2;
    unsigned char *slots = realloc(l->slots, (size_t)alloc * l->stride);
    uint32_t *heads;

    if (slots == NULL) {
        return false;
    }
    memset(slots + (size_t)l->alloc * l->stride, 0, (size_t)(alloc - l->alloc) * l->stride);
    l->slots = slots;
    l->alloc = alloc;
    if (alloc > l->mask + 1) {
        uint32_t nheads = pow2_at_least(alloc);

        heads = malloc((size_t)nheads * sizeof(*heads));
        if (heads == NULL) {
            return true; /* the old index still works, with longer chains */
        }
        free(l->heads);
        l->heads = heads;
        l->mask = nheads - 1;
        heads_reset(l);
        for (uint32_t i = 0; i < l->count; i++) {
            chain_insert(l, i);
        }
    }
    return true;
}

void *adm_lru_peek(const adm_lru_t *l, const char *key, size_t len)
{
    uint64_t hash = adm_siphash24(l->seed, key, len);

    for (uint32_t i = l->heads[hash & l->mask]; i != NIL; i = slot(l, i)->chain) {
        slot_t *e = slot(l, i);

        if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) {
            return (unsigned char *)e + l->value_off;
        }
    }
    return NULL;
}

void *adm_lru_oldest(const adm_lru_t *l)
{
    /* adm_lru_get takes a free slot while one is allocated or the array may still grow to max */
    if (l->count < l->alloc || l->alloc < l->max || l->lru == NIL) {
        return NULL;
    }
    return (unsigned char *)slot(l, l->lru) + l->value_off;
}

void *adm_lru_get(adm_lru_t *l, const char *key, size_t len)
{
    uint64_t hash = adm_siphash24(l->seed, key, len);
    uint32_t i = l->heads[hash & l->mask];
    slot_t *e;

    while (i != NIL) {
        e = slot(l, i);
        if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) {
            list_unlink(l, i);
            list_push_front(l, i);
            return (unsigned char *)e + l->value_off;
        }
        i = e->chain;
    }
    if (l->count == l->alloc && l->alloc < l->max) {
        (void)grow(l);
    }
    i = l->count < l->alloc ? l->count : l->lru;
    e = slot(l, i);
    if (e->key_cap < len + 1) {
        size_t cap = MIN_KEY_CAP;
        char *k;

        while (cap < len + 1 && cap < SIZE_MAX / 2) {
            cap *= 2;
        }
        k = cap >= len + 1 ? realloc(e->key, cap) : NULL;
        if (k == NULL) {
            return NULL;
        }
        e->key = k;
        e->key_cap = cap;
    }
    if (i == l->count) {
        l->count++;
    } else {
        list_unlink(l, i);
        chain_unlink(l, i);
    }
    memcpy(e->key, key, len);
    e->key[len] = '\0';
    e->key_len = len;
    e->hash = hash;
    memset((unsigned char *)e + l->value_off, 0, l->value_size);
    chain_insert(l, i);
    list_push_front(l, i);
    return (unsigned char *)e + l->value_off;
}

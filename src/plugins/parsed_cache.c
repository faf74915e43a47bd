/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parses of cluster-state objects kept across requests (include/adm/plugins/parsed_cache.h).
 */
#include "adm/plugins/parsed_cache.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/lru.h"
#include "adm/cluster/cluster_state.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_s {
    uint64_t state;              /* the key: the cluster state's serial, */
    yyjson_val *obj;             /* the object (never dereferenced once the request that made it ends), */
    const char *uid, *rv;        /* its uid and resourceVersion, copies in arena */
    adm_arena_t *arena;          /* the parse and the copies */
    const void *value;           /* the parse */
    int err;                     /* what the parse returned */
    size_t refs;                 /* requests holding it */
    bool gone;                   /* out of the cache: freed with its last holder */
    struct entry_s *prev, *next; /* the cache's entries, for adm_parsed_cache_free */
} entry_t;

/* What the index maps a (state serial, object address) key to; NULL once its entry left. */
typedef struct slot_s {
    entry_t *entry;
} slot_t;

typedef struct key_s {
    uint64_t state;
    uintptr_t obj;
} cache_key_t;

struct adm_parsed_cache_s {
    adm_parse_fn parse;
    adm_lru_t index; /* least recently used out, hashed: a cluster has thousands of namespaces */
    entry_t *entries;
};

adm_parsed_cache_t *adm_parsed_cache_create(adm_parse_fn parse, size_t max)
{
    /* keys are addresses admitd chose, not client input: a fixed hash key is enough */
    static const uint64_t seed[2] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full};
    adm_parsed_cache_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    if (max > UINT32_MAX) {
        max = UINT32_MAX;
    }
    if (adm_lru_init(&c->index, max == 0 ? 1 : (uint32_t)max, sizeof(slot_t), seed) != 0) {
        adm_lru_dispose(&c->index);
        free(c);
        return NULL;
    }
    c->parse = parse;
    return c;
}

static void entry_free(entry_t *e)
{
    adm_arena_destroy(e->arena);
    free(e);
}

/* Out of the cache: freed now, or by the last request that holds it. */
static void entry_drop(adm_parsed_cache_t *c, entry_t *e)
{
    if (e->prev != NULL) {
        e->prev->next = e->next;
    } else {
        c->entries = e->next;
    }
    if (e->next != NULL) {
        e->next->prev = e->prev;
    }
    e->gone = true;
    if (e->refs == 0) {
        entry_free(e);
    }
}

void adm_parsed_cache_free(adm_parsed_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    while (c->entries != NULL) {
        entry_drop(c, c->entries);
    }
    adm_lru_dispose(&c->index);
    free(c);
}

/* A request's arena went: its hold on the entry ends. */
static void entry_release(void *arg)
{
    entry_t *e = arg;

    if (--e->refs == 0 && e->gone) {
        entry_free(e);
    }
}

/* The request holds e until its arena goes. */
static int hold(adm_attrs_t *attrs, entry_t *e)
{
    if (adm_arena_on_free(attrs->arena, entry_release, e) != 0) {
        return ADM_ENOMEM;
    }
    e->refs++;
    return 0;
}

/* A new entry for obj, parsed; NULL when out of memory. */
static entry_t *entry_make(adm_parsed_cache_t *c, uint64_t state, yyjson_val *obj, const char *uid,
                           const char *rv)
{
    entry_t *e = calloc(1, sizeof(*e));
    void *value = NULL;

    if (e == NULL) {
        return NULL;
    }
    e->arena = adm_arena_create(1024);
    if (e->arena == NULL) {
        free(e);
        return NULL;
    }
    e->state = state;
    e->obj = obj;
    e->uid = adm_arena_strndup(e->arena, uid, strlen(uid));
    e->rv = adm_arena_strndup(e->arena, rv, strlen(rv));
    e->err = c->parse(e->arena, obj, &value);
    if (e->uid == NULL || e->rv == NULL || e->err == ADM_ENOMEM) {
        entry_free(e);
        return NULL;
    }
    e->value = value;
    e->next = c->entries;
    if (c->entries != NULL) {
        c->entries->prev = e;
    }
    c->entries = e;
    return e;
}

/*
 * The index's slot for key, the most recent now: found, or taken for it, the least recently used
 * entry leaving first when the index is full. NULL when out of memory.
 */
static slot_t *slot_for(adm_parsed_cache_t *c, const cache_key_t *key)
{
    /* only a full index makes a new key take the least recent one's place */
    slot_t *oldest = adm_lru_oldest(&c->index);

    if (oldest != NULL && oldest->entry != NULL &&
        adm_lru_peek(&c->index, (const char *)key, sizeof(*key)) == NULL) {
        entry_drop(c, oldest->entry);
        oldest->entry = NULL;
    }
    return adm_lru_get(&c->index, (const char *)key, sizeof(*key));
}

/*
 * The request's cluster state comes from files alone: no API client (the informer's store, when
 * there is one, stops changing before its client goes).
 */
static bool files_only(const adm_cluster_state_t *cs)
{
    return adm_cluster_state_api(cs) == NULL;
}

int adm_parsed_cache_get(adm_parsed_cache_t *c, adm_attrs_t *attrs, yyjson_val *obj, const void **out)
{
    const adm_cluster_state_t *cs = adm_plugin_cluster(attrs);
    yyjson_val *meta = adm_json_get(obj, "metadata");
    const char *uid = adm_json_str(meta, "uid"), *rv = adm_json_str(meta, "resourceVersion");
    cache_key_t key;
    slot_t *s = NULL;
    entry_t *e = NULL;
    void *value = NULL;
    int err;

    *out = NULL;
    memset(&key, 0, sizeof(key)); /* no padding bytes in the hashed key */
    key.state = cs != NULL ? adm_cluster_state_serial(cs) : 0;
    key.obj = (uintptr_t)obj;
    if (cs != NULL && (*rv != '\0' || files_only(cs))) {
        s = slot_for(c, &key);
    }
    if (s != NULL) {
        e = s->entry;
        if (e != NULL && (strcmp(e->rv, rv) != 0 || strcmp(e->uid, uid) != 0)) {
            /* another object at a freed one's address: the old parse goes */
            entry_drop(c, e);
            e = s->entry = NULL;
        }
        if (e == NULL) {
            e = s->entry = entry_make(c, key.state, obj, uid, rv);
            if (e == NULL) {
                return ADM_ENOMEM;
            }
        }
    }
    if (e == NULL) {
        /* not to be kept: the request's own parse */
        err = c->parse(attrs->arena, obj, &value);
        *out = err == ADM_ENOMEM ? NULL : value;
        return err;
    }
    if (hold(attrs, e) != 0) {
        return ADM_ENOMEM;
    }
    *out = e->value;
    return e->err;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parses of cluster-state objects kept across requests (include/adm/plugins/parsed_cache.h).
 */
#include "adm/plugins/parsed_cache.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/cluster_state.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_s {
    uint64_t state;       /* the key: the cluster state's serial, */
    yyjson_val *obj;      /* the object (never dereferenced once the request that made it ends), */
    const char *uid, *rv; /* its uid and resourceVersion, copies in arena */
    adm_arena_t *arena;   /* the parse and the copies */
    const void *value;    /* the parse */
    int err;              /* what the parse returned */
    size_t refs;          /* requests holding it */
    bool gone;            /* out of the cache: freed with its last holder */
    uint64_t used;        /* the cache's tick when last given out */
} entry_t;

struct adm_parsed_cache_s {
    adm_parse_fn parse;
    entry_t **entries;
    size_t n, max;
    uint64_t tick;
};

adm_parsed_cache_t *adm_parsed_cache_create(adm_parse_fn parse, size_t max)
{
    adm_parsed_cache_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->entries = calloc(max == 0 ? 1 : max, sizeof(*c->entries));
    if (c->entries == NULL) {
        free(c);
        return NULL;
    }
    c->parse = parse;
    c->max = max;
    return c;
}

static void entry_free(entry_t *e)
{
    adm_arena_destroy(e->arena);
    free(e);
}

/* Out of the cache: freed now, or by the last request that holds it. */
static void entry_drop(entry_t *e)
{
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
    for (size_t i = 0; i < c->n; i++) {
        entry_drop(c->entries[i]);
    }
    free(c->entries);
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
    return e;
}

/* Room for one more entry: the least recently given out leaves when the cache is full. */
static void make_room(adm_parsed_cache_t *c)
{
    size_t oldest = 0;

    if (c->n < c->max) {
        return;
    }
    for (size_t i = 1; i < c->n; i++) {
        if (c->entries[i]->used < c->entries[oldest]->used) {
            oldest = i;
        }
    }
    entry_drop(c->entries[oldest]);
    c->entries[oldest] = c->entries[--c->n];
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
    uint64_t state = cs != NULL ? adm_cluster_state_serial(cs) : 0;
    yyjson_val *meta = adm_json_get(obj, "metadata");
    const char *uid = adm_json_str(meta, "uid"), *rv = adm_json_str(meta, "resourceVersion");
    entry_t *e = NULL;
    void *value = NULL;
    int err;

    *out = NULL;
    for (size_t i = 0; i < c->n && e == NULL; i++) {
        entry_t *k = c->entries[i];

        if (k->obj == obj && k->state == state && strcmp(k->rv, rv) == 0 && strcmp(k->uid, uid) == 0) {
            e = k;
        }
    }
    if (e == NULL && cs != NULL && c->max > 0 && (*rv != '\0' || files_only(cs))) {
        e = entry_make(c, state, obj, uid, rv);
        if (e == NULL) {
            return ADM_ENOMEM;
        }
        make_room(c);
        c->entries[c->n++] = e;
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
    e->used = ++c->tick;
    *out = e->value;
    return e->err;
}

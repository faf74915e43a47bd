/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The live LIST cache of include/adm/plugins/list_cache.h. Each namespace's slot in an adm_lru_t
 * holds its List (an entry, reference-counted: the cache holds one reference and each request
 * that read it one more, dropped when its arena goes) with the list's expiry, and the LIST in
 * flight for it (a flight) that later requests join. Flights and entries live on the heap, since
 * both may outlive the request that made them.
 */
#include "adm/plugins/list_cache.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/lru.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/live_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* One namespace's List. */
typedef struct entry_s {
    unsigned refs;
    yyjson_doc *doc;
    yyjson_val **items;
    size_t n;
    struct entry_s *prev, *next; /* the cache's entries, while the cache holds this one */
} entry_t;

typedef struct flight_s flight_t;

/* A request waiting for a flight; in its arena. */
typedef struct waiter_s {
    struct waiter_s *prev, *next;
    flight_t *f;
    adm_attrs_t *attrs;
    adm_async_t *async;
    adm_list_cache_cb cb;
    void *arg;
} waiter_t;

/* One LIST in flight. */
struct flight_s {
    flight_t *prev, *next; /* the cache's flights */
    adm_list_cache_t *c;
    adm_call_t *call;
    char *ns;
    char *path;
    char *server;      /* for Go's url.Error wording */
    uint64_t end_ms;   /* when the call times out, on the chain's clock */
    adm_clock_t clock; /* the chain's clock, for the entry's expiry */
    waiter_t *waiters;
};

/* A namespace's slot in the LRU. */
typedef struct slot_value_s {
    entry_t *entry;
    uint64_t expiry_ms;
    flight_t *flight;
} slot_value_t;

struct adm_list_cache_s {
    adm_lru_t lru;
    char *resource;
    uint64_t ttl_ms;
    entry_t *entries;
    flight_t *flights;
};

static void entry_unref(void *arg)
{
    entry_t *e = arg;

    if (--e->refs == 0) {
        yyjson_doc_free(e->doc);
        free(e->items);
        free(e);
    }
}

/* The cache lets go of e. */
static void entry_drop(adm_list_cache_t *c, entry_t *e)
{
    if (e == NULL) {
        return;
    }
    if (e->prev != NULL) {
        e->prev->next = e->next;
    } else {
        c->entries = e->next;
    }
    if (e->next != NULL) {
        e->next->prev = e->prev;
    }
    e->prev = e->next = NULL;
    entry_unref(e);
}

/* The entry for a List's text, one reference held; NULL with *rc set. */
static entry_t *entry_parse(const char *json, size_t len, int *rc)
{
    entry_t *e = calloc(1, sizeof(*e));
    yyjson_val *items;
    yyjson_arr_iter it;
    yyjson_val *v;
    size_t i = 0;

    *rc = ADM_ENOMEM;
    if (e == NULL) {
        return NULL;
    }
    e->refs = 1;
    e->doc = yyjson_read(json, len, 0);
    items = adm_json_get(yyjson_doc_get_root(e->doc), "items");
    /* a List without items (absent or null) is an empty one, as Go decodes it */
    if (!yyjson_is_obj(yyjson_doc_get_root(e->doc)) ||
        (items != NULL && !yyjson_is_arr(items) && !yyjson_is_null(items))) {
        *rc = ADM_EINVAL;
        entry_unref(e);
        return NULL;
    }
    e->n = yyjson_arr_size(items);
    e->items = calloc(e->n == 0 ? 1 : e->n, sizeof(*e->items));
    if (e->items == NULL) {
        entry_unref(e);
        return NULL;
    }
    yyjson_arr_iter_init(items, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        e->items[i++] = v;
    }
    *rc = 0;
    return e;
}

/* Namespace ns's slot, created (its least recent neighbour forgotten when full); NULL: no memory. */
static slot_value_t *slot_for(adm_list_cache_t *c, const char *ns)
{
    size_t len = strlen(ns);
    slot_value_t *v = adm_lru_peek(&c->lru, ns, len);

    if (v == NULL) {
        slot_value_t *old = adm_lru_oldest(&c->lru);

        if (old != NULL) {
            entry_drop(c, old->entry);
            old->entry = NULL;
            if (old->flight != NULL) {
                old->flight = NULL; /* it goes on; nobody new joins it */
            }
        }
    }
    return adm_lru_get(&c->lru, ns, len);
}

static int store(adm_list_cache_t *c, const char *ns, entry_t *e, uint64_t now_ms)
{
    slot_value_t *v = slot_for(c, ns);

    if (v == NULL) {
        entry_unref(e);
        return ADM_ENOMEM;
    }
    entry_drop(c, v->entry);
    v->entry = e;
    v->expiry_ms = now_ms + c->ttl_ms;
    e->next = c->entries;
    if (c->entries != NULL) {
        c->entries->prev = e;
    }
    c->entries = e;
    return 0;
}

adm_list_cache_t *adm_list_cache_create(const char *resource, uint32_t max, uint64_t ttl_ms)
{
    adm_list_cache_t *c = calloc(1, sizeof(*c));
    uint64_t seed[2] = {0, 0};

    if (c == NULL) {
        return NULL;
    }
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        /* namespaces are not chosen by an attacker who sees the seed: any key works */
        seed[0] = (uint64_t)(uintptr_t)c;
        seed[1] = (uint64_t)(uintptr_t)&seed;
    }
    c->resource = strdup(resource);
    c->ttl_ms = ttl_ms;
    if (c->resource == NULL || adm_lru_init(&c->lru, max, sizeof(slot_value_t), seed) != 0) {
        adm_lru_dispose(&c->lru);
        free(c->resource);
        free(c);
        return NULL;
    }
    return c;
}

static void flight_free(flight_t *f)
{
    free(f->ns);
    free(f->path);
    free(f->server);
    free(f);
}

static void flight_unlink(adm_list_cache_t *c, flight_t *f)
{
    if (f->prev != NULL) {
        f->prev->next = f->next;
    } else {
        c->flights = f->next;
    }
    if (f->next != NULL) {
        f->next->prev = f->prev;
    }
}

void adm_list_cache_free(adm_list_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    while (c->flights != NULL) {
        flight_t *f = c->flights;

        flight_unlink(c, f);
        adm_call_cancel(f->call);
        flight_free(f);
    }
    while (c->entries != NULL) {
        entry_drop(c, c->entries);
    }
    adm_lru_dispose(&c->lru);
    free(c->resource);
    free(c);
}

int adm_list_cache_put(adm_list_cache_t *c, const char *ns, const char *json, size_t len, uint64_t now_ms)
{
    int rc;
    entry_t *e = entry_parse(json, len, &rc);

    return e != NULL ? store(c, ns, e, now_ms) : rc;
}

/* e's items for a request whose arena is a: a holds e until it goes. */
static bool pin(adm_arena_t *a, entry_t *e, yyjson_val *const **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (adm_arena_on_free(a, entry_unref, e) != 0) {
        return false;
    }
    e->refs++;
    *items = e->items;
    *n = e->n;
    return true;
}

bool adm_list_cache_fresh(adm_list_cache_t *c, adm_arena_t *a, const char *ns, uint64_t now_ms,
                          yyjson_val *const **items, size_t *n)
{
    slot_value_t *v = adm_lru_peek(&c->lru, ns, strlen(ns));

    *items = NULL;
    *n = 0;
    if (v == NULL || v->entry == NULL || v->expiry_ms < now_ms) {
        return false;
    }
    (void)adm_lru_get(&c->lru, ns, strlen(ns)); /* a hit makes it the most recent, as Get does */
    return pin(a, v->entry, items, n);
}

uint32_t adm_list_cache_count(const adm_list_cache_t *c)
{
    return adm_lru_count(&c->lru);
}

static void waiter_unlink(waiter_t *w)
{
    if (w->prev != NULL) {
        w->prev->next = w->next;
    } else if (w->f != NULL) {
        w->f->waiters = w->next;
    }
    if (w->next != NULL) {
        w->next->prev = w->prev;
    }
    w->prev = w->next = NULL;
    w->f = NULL;
}

/* The chain cancelled a waiting request: it stops waiting, the LIST goes on for the cache. */
static void on_waiter_cancel(void *arg)
{
    waiter_unlink(arg);
}

/* Tells w of the LIST's end: the items of e (NULL: it failed as res says). */
static void tell(waiter_t *w, flight_t *f, entry_t *e, const adm_call_result_t *res, yyjson_val *body)
{
    adm_attrs_t *attrs = w->attrs;
    yyjson_val *const *items = NULL;
    const char *err = NULL;
    size_t n = 0;
    int rc = ADM_OK;

    w->async->cancel = NULL;
    if (e != NULL) {
        rc = pin(attrs->arena, e, &items, &n) ? ADM_OK : ADM_ENOMEM;
    } else if (res->error != ADM_CALL_OK) {
        const char *why = res->error == ADM_CALL_TIMEOUT ? "context deadline exceeded"
                          : res->detail != NULL          ? res->detail
                                                         : "EOF";

        rc = ADM_EIO;
        err = adm_arena_printf(attrs->arena, "Get \"%s%s\": %s", f->server, f->path, why);
        rc = err != NULL ? rc : ADM_ENOMEM;
    } else {
        rc = ADM_EIO;
    }
    w->cb(attrs, w->async, rc, items, n, res, body, err, w->arg);
}

static void on_list(const adm_call_result_t *res, void *arg)
{
    flight_t *f = arg;
    adm_list_cache_t *c = f->c;
    slot_value_t *v = adm_lru_peek(&c->lru, f->ns, strlen(f->ns));
    entry_t *e = NULL;
    yyjson_doc *body = NULL;
    int rc;

    f->call = NULL;
    flight_unlink(c, f);
    if (v != NULL && v->flight == f) {
        v->flight = NULL;
    }
    if (res->error == ADM_CALL_OK && res->status / 100 == 2) {
        e = entry_parse((const char *)res->body, res->body_len, &rc);
        if (e != NULL) {
            e->refs++; /* ours until every waiter has pinned it; store drops the cache's on failure */
            (void)store(c, f->ns, e, f->clock.now_ms(f->clock.arg));
        }
    } else if (res->error == ADM_CALL_OK && res->body_len > 0) {
        body = yyjson_read((const char *)res->body, res->body_len, 0);
    }
    /* one waiter at a time: a callback may cancel another request, which unlinks it from f */
    while (f->waiters != NULL) {
        waiter_t *w = f->waiters;

        waiter_unlink(w);
        tell(w, f, e, res, body != NULL ? yyjson_doc_get_root(body) : NULL);
    }
    if (e != NULL) {
        entry_unref(e);
    }
    yyjson_doc_free(body);
    flight_free(f);
}

static flight_t *flight_start(adm_list_cache_t *c, adm_attrs_t *attrs, adm_async_t *async,
                              adm_api_client_t *api)
{
    flight_t *f = calloc(1, sizeof(*f));
    uint64_t now = adm_plugin_now_ms(attrs);
    uint64_t timeout = ADM_LIVE_CALL_TIMEOUT_MS;
    const char *ns = attrs->req->namespace_;
    size_t plen = strlen(ns) + strlen(c->resource) + sizeof("/api/v1/namespaces//");

    if (f == NULL) {
        return NULL;
    }
    if (async->deadline_ms > now && async->deadline_ms - now < timeout) {
        timeout = async->deadline_ms - now;
    }
    f->c = c;
    f->clock = *attrs->clock;
    f->end_ms = now + timeout;
    f->ns = strdup(ns);
    f->server = strdup(adm_api_client_server(api));
    f->path = malloc(plen);
    if (f->ns == NULL || f->server == NULL || f->path == NULL) {
        flight_free(f);
        return NULL;
    }
    snprintf(f->path, plen, "/api/v1/namespaces/%s/%s", ns, c->resource);
    f->call = adm_api_get(api, f->path, timeout, on_list, f, NULL);
    if (f->call == NULL) {
        flight_free(f);
        return NULL;
    }
    f->next = c->flights;
    if (c->flights != NULL) {
        c->flights->prev = f;
    }
    c->flights = f;
    return f;
}

int adm_list_cache_get(adm_list_cache_t *c, adm_attrs_t *attrs, adm_async_t *async, yyjson_val *const **items,
                       size_t *n, adm_list_cache_cb cb, void *arg)
{
    const adm_cluster_state_t *cs = adm_plugin_cluster(attrs);
    adm_api_client_t *api = cs != NULL ? adm_cluster_state_api(cs) : NULL;
    const char *ns = attrs->req->namespace_;
    uint64_t now = adm_plugin_now_ms(attrs);
    slot_value_t *v;
    waiter_t *w;
    flight_t *f;

    if (adm_list_cache_fresh(c, attrs->arena, ns, now, items, n)) {
        return ADM_OK;
    }
    w = adm_arena_calloc(attrs->arena, 1, sizeof(*w));
    v = slot_for(c, ns);
    if (w == NULL || v == NULL || api == NULL) {
        return ADM_ENOMEM;
    }
    f = v->flight;
    if (f == NULL || f->end_ms > async->deadline_ms) {
        /* none in flight, or it may end after this request must answer: a LIST of its own */
        f = flight_start(c, attrs, async, api);
        if (f == NULL) {
            return ADM_ENOMEM;
        }
        if (v->flight == NULL) {
            v->flight = f; /* later requests join it */
        }
    }
    w->f = f;
    w->attrs = attrs;
    w->async = async;
    w->cb = cb;
    w->arg = arg;
    w->next = f->waiters;
    if (f->waiters != NULL) {
        f->waiters->prev = w;
    }
    f->waiters = w;
    async->cancel = on_waiter_cancel;
    async->cancel_arg = w;
    return ADM_AGAIN;
}

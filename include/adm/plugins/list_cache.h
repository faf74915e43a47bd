/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The live LIST kube's LimitRanger and ResourceQuota make when their lister has nothing in the
 * request's namespace (GetLimitRanges, quotaAccessor.GetQuotas): a LIST of the namespace's objects
 * from the API server, its items kept per namespace for a TTL (kube's liveLookupCache, an LRU of
 * 10000 namespaces, liveTTL 30 s) so that requests in a namespace that has none do not LIST each
 * time. Requests that need the same namespace while its LIST is in flight wait for that one
 * (kube's singleflight group) rather than LIST again.
 *
 * The LIST goes through the API client of the request's cluster state (no second client), on the
 * loop, with live_call.h's short timeout bounded by the deadline of the request that started it;
 * a request whose deadline comes before that LIST would end makes its own. A request waits as an
 * ADM_AGAIN phase of the chain; the chain cancelling it only stops its wait: the LIST goes on and
 * its answer fills the cache. Only a 2xx List is kept; a failure reaches the requests that waited
 * for it, and the next request lists again.
 *
 * Memory: at most max namespaces (least recently used forgotten first), each holding its parsed
 * List; a request that read a list holds it until the request's arena goes, whatever the cache
 * does meanwhile. Single loop: no locks.
 */
#ifndef ADM_PLUGINS_LIST_CACHE_H
#define ADM_PLUGINS_LIST_CACHE_H

#include "adm/admission/plugin.h"
#include "adm/net/call_result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

/* kube's lru.New(10000) and liveTTL for both plugins. */
#define ADM_LIST_CACHE_MAX 10000
#define ADM_LIST_CACHE_TTL_MS 30000

typedef struct adm_list_cache_s adm_list_cache_t;

/**
 * A cache of LISTs of resource ("limitranges", "resourcequotas": core, namespaced) for at most max
 * namespaces, each fresh for ttl_ms. NULL when out of memory.
 */
adm_list_cache_t *adm_list_cache_create(const char *resource, uint32_t max, uint64_t ttl_ms);

/**
 * Frees c: LISTs still in flight are cancelled. No request may be waiting (each holds the chain
 * whose plugin state c is); lists requests still hold stay until their arenas go. NULL: no-op.
 */
void adm_list_cache_free(adm_list_cache_t *c);

/**
 * The items of the List json (len bytes) become namespace ns's, fresh until now_ms + the TTL.
 * Returns 0, ADM_EINVAL when json is no object with an items array, or ADM_ENOMEM.
 */
int adm_list_cache_put(adm_list_cache_t *c, const char *ns, const char *json, size_t len, uint64_t now_ms);

/**
 * Namespace ns's items when cached and not expired at now_ms (kube: expiry not before now): true,
 * with *items and *n valid until the arena a goes (a holds the list); false when a LIST is needed,
 * or when a cannot hold the list (*n is then 0 and *items NULL as well).
 */
bool adm_list_cache_fresh(adm_list_cache_t *c, adm_arena_t *a, const char *ns, uint64_t now_ms,
                          yyjson_val *const **items, size_t *n);

/** Namespaces cached. */
uint32_t adm_list_cache_count(const adm_list_cache_t *c);

/*
 * The LIST a request waited for ended. On a 2xx List, rc is ADM_OK and items[0..n) are valid
 * until the request's arena goes. Otherwise rc is ADM_EIO with res, body (the answer's JSON, or
 * NULL) and err (a Go-worded error for an answer that did not come, in the request's arena, else
 * NULL) as adm_live_call_cb gets them, res and body valid only during the callback; or ADM_ENOMEM.
 * The callback ends the phase with adm_async_done.
 */
typedef void (*adm_list_cache_cb)(adm_attrs_t *attrs, adm_async_t *async, int rc, yyjson_val *const *items,
                                  size_t n, const adm_call_result_t *res, yyjson_val *body, const char *err,
                                  void *arg);

/**
 * The items of the request's namespace (which must pass adm_live_namespace_name; the request must
 * have an API connection): ADM_OK with *items, *n when the cache has them fresh; else ADM_AGAIN,
 * the LIST started or joined, cb to come once unless the chain cancels; or ADM_ENOMEM.
 */
int adm_list_cache_get(adm_list_cache_t *c, adm_attrs_t *attrs, adm_async_t *async, yyjson_val *const **items,
                       size_t *n, adm_list_cache_cb cb, void *arg);

#endif

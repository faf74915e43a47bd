/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parses of cluster-state objects kept across requests: LimitRanger's LimitRanges and
 * ResourceQuota's quotas are read at every request and change rarely, so each plugin keeps what
 * it made of an object (its ResourceLists, parsed) instead of parsing the object again.
 *
 * An entry answers for an object when it was made from the same pointer, read through the same
 * cluster state (its serial: a state loaded later may take a freed one's address, never its
 * serial), with the same metadata.uid and metadata.resourceVersion. Where the state comes from
 * files only (no API client), its objects are immutable and live as long as it does, so the
 * pointer names one content. Objects from the API server (informer caches, live LISTs, a quota
 * version admitd wrote) may be replaced and freed while the state is in use, and a new object may
 * then take the old one's address: uid and resourceVersion, which the API server changes with
 * every write, tell them apart, and an object without a resourceVersion is not kept.
 * A parse therefore copies everything it keeps (names, quantities' texts) into its entry's own
 * arena: it never points into the object.
 *
 * A request holds the entries it was given until its arena is reset or destroyed (a cleanup), so
 * an entry evicted meanwhile (the cache keeps a bounded number, least recently used out) or left
 * when the cache is freed (a reload's old chain) is freed by the last request that holds it. One
 * event loop per process uses a cache: no locks.
 */
#ifndef ADM_PLUGINS_PARSED_CACHE_H
#define ADM_PLUGINS_PARSED_CACHE_H

#include "adm/admission/plugin.h"
#include "adm/base/arena.h"

#include <stddef.h>
#include <yyjson.h>

typedef struct adm_parsed_cache_s adm_parsed_cache_t;

/*
 * Parses obj into a: the result and all it points at must be memory of a (or static), never of
 * obj. Returns 0 or an error, both kept (ADM_ENOMEM is not kept).
 */
typedef int (*adm_parse_fn)(adm_arena_t *a, yyjson_val *obj, void **out);

/** A cache of at most max parses made by parse, found by a hashed index. NULL when out of memory. */
adm_parsed_cache_t *adm_parsed_cache_create(adm_parse_fn parse, size_t max);

/** Frees c; the entries requests still hold go with the last of them. NULL is a no-op. */
void adm_parsed_cache_free(adm_parsed_cache_t *c);

/**
 * The parse of obj for the request of attrs: kept from an earlier request, or made now (and kept
 * when obj can be, else in the request's arena). *out is valid until the request's arena is reset
 * and must not be changed. Returns what the parse returned, or ADM_ENOMEM (*out NULL).
 */
int adm_parsed_cache_get(adm_parsed_cache_t *c, adm_attrs_t *attrs, yyjson_val *obj, const void **out);

#endif

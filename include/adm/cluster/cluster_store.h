/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer caches: the objects of each watched kind, kept current by list+watch and read by
 * admission requests through the same lookups as file state (adm_cluster_state_get / _list, which
 * consult the store for the kinds it serves; see adm_cluster_state_use_store).
 *
 * Memory safety across updates (the design): everything runs on the one event loop, so a watch
 * event never runs *during* a lookup; the danger is a request that read an object, returned
 * ADM_AGAIN and uses the pointer again after an event replaced or deleted it. The store therefore
 * never frees an object (or a list array) that a request may still hold. It uses epochs: every
 * request pins the store when it starts (adm_cluster_store_pin, an intrusive record in the
 * request, O(1)) and unpins when it ends. An object or list array taken out of the store is not
 * freed but retired with the current epoch, and the epoch moves on; a retired block is freed once
 * every pin taken at or before its epoch is gone. Pins are appended in epoch order, so "the oldest
 * pin" is the head of a list and reclamation is a walk of the retired FIFO's front. With no
 * request in flight, retired memory is freed at once. A request therefore sees updates as they
 * come (as kube's listers do: they read the live informer cache, not a snapshot), and every
 * pointer it obtained stays valid until it ends.
 *
 * What is kept: each object is stored as its own compact immutable yyjson document without
 * metadata.managedFields (controller-runtime strips them from its caches the same way; they are
 * often most of an object's bytes and no admission plugin reads them) and without the annotation
 * kubectl.kubernetes.io/last-applied-configuration (kubectl apply's copy of the whole object, read
 * by no plugin). Pods also lose their status (PodSecurity reads metadata and spec), and so do Nodes
 * (PodTopologyLabels reads their labels). Every other
 * kind keeps everything else, since its plugins read most of it: Namespaces their labels
 * (namespaceSelector, kubernetes.io/metadata.name), annotations (PodNodeSelector,
 * PodTolerationRestriction), status.phase and deletionTimestamp (NamespaceLifecycle);
 * ResourceQuotas their status (used). Lists are built on demand, per namespace, and cached until
 * the kind changes, in the order the objects first arrived.
 */
#ifndef ADM_CLUSTER_STORE_H
#define ADM_CLUSTER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

typedef struct adm_cluster_store_s adm_cluster_store_t;
typedef struct adm_kind_store_s adm_kind_store_t;

/* A request's pin; embed it in the request, the store links it. */
typedef struct adm_cluster_pin_s {
    uint64_t epoch;
    struct adm_cluster_pin_s *prev, *next;
    bool pinned;
} adm_cluster_pin_t;

/** An empty store. NULL when out of memory. */
adm_cluster_store_t *adm_cluster_store_create(void);

/** Frees the store and every object; no pin may be held. NULL is a no-op. */
void adm_cluster_store_free(adm_cluster_store_t *s);

/**
 * Adds (or finds) the cache of group/kind ("" is core); namespaced says whether objects are keyed
 * by namespace. NULL when out of memory. The kind is served (lookups answer from the store) from
 * its first adm_kind_store_replace on.
 */
adm_kind_store_t *adm_cluster_store_kind(adm_cluster_store_t *s, const char *group, const char *kind,
                                         bool namespaced);

/**
 * Puts obj (copied, without what the kind does not keep: see above) under its namespace/name,
 * replacing any object there.
 * Returns 0, ADM_EINVAL (no metadata.name) or ADM_ENOMEM (the store is unchanged).
 */
int adm_kind_store_put(adm_kind_store_t *k, yyjson_val *obj);

/** Removes namespace_/name (a DELETED event); nothing when absent (a relist race). */
void adm_kind_store_delete(adm_kind_store_t *k, const char *namespace_, const char *name);

/**
 * Relist: replaces the whole content with the n objects of items (arrays of list pages) and marks
 * the kind synced. Built aside first, so on ADM_ENOMEM or ADM_EINVAL the old content stays.
 */
int adm_kind_store_replace(adm_kind_store_t *k, yyjson_val *const *pages, size_t npages);

/** Has the kind been listed at least once (reflector HasSynced). */
bool adm_kind_store_synced(const adm_kind_store_t *k);

/** Objects held, and the bytes they take (documents, keys, index), for metrics and benchmarks. */
size_t adm_kind_store_count(const adm_kind_store_t *k);
size_t adm_kind_store_bytes(const adm_kind_store_t *k);

/** True when the store serves group/kind (it has been listed). */
bool adm_cluster_store_serves(const adm_cluster_store_t *s, const char *group, const char *kind);

/** As adm_cluster_state_get, from the store; valid while the caller's pin is held. */
yyjson_val *adm_cluster_store_get(adm_cluster_store_t *s, const char *group, const char *kind,
                                  const char *namespace_, const char *name);

/**
 * As adm_cluster_state_list, from the store (NULL namespace_: every namespace); the array and its
 * objects are valid while the caller's pin is held. NULL with *n 0 when out of memory or empty.
 */
yyjson_val *const *adm_cluster_store_list(adm_cluster_store_t *s, const char *group, const char *kind,
                                          const char *namespace_, size_t *n);

/** Pins the store for a request (p is the caller's, zeroed or unpinned). */
void adm_cluster_store_pin(adm_cluster_store_t *s, adm_cluster_pin_t *p);

/** Ends p's pin and frees what no pin can still see. No-op when p is not pinned. */
void adm_cluster_store_unpin(adm_cluster_store_t *s, adm_cluster_pin_t *p);

/*
 * The API client the store's caches come from, for the live calls plugins make where kube's do
 * (a GET on a cache miss, a create, a quota status update): set by the informer, NULL once it
 * stops (and for stores without one).
 */
struct adm_api_client_s;
void adm_cluster_store_set_api(adm_cluster_store_t *s, struct adm_api_client_s *api);
struct adm_api_client_s *adm_cluster_store_api(const adm_cluster_store_t *s);

/** Blocks retired and not yet freed (tests). */
size_t adm_cluster_store_retired(const adm_cluster_store_t *s);

#endif

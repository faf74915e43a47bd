/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --cluster-state: the Kubernetes objects admitd reads instead of an API server (namespaces for
 * webhook namespaceSelectors, LimitRanges, ServiceAccounts ... for the plugins), loaded once from
 * files and immutable afterwards, so any number of requests may read it without locks. A reload
 * builds a new state and frees the old one when no request uses it any more.
 *
 * Objects are indexed by (API group, kind, namespace, name); the version is not part of the
 * identity, as in the API server's storage.
 */
#ifndef ADM_CLUSTER_STATE_H
#define ADM_CLUSTER_STATE_H

#include <stddef.h>
#include <yyjson.h>

typedef struct adm_cluster_state_s adm_cluster_state_t;

/**
 * Loads paths: files or directories (a directory contributes its regular *.yaml, *.yml and *.json
 * files in name order, not recursively, hidden names skipped). Each file holds multi-document YAML,
 * JSON, or a List (kind List or <Kind>List with items; items of a <Kind>List may omit apiVersion
 * and kind, as the API server's list responses do). npaths 0 gives the built-in default, what a new
 * cluster holds: Namespaces default, kube-system, kube-public and kube-node-lease, each with its
 * ServiceAccount "default".
 *
 * Objects need apiVersion, kind and metadata.name. Namespaced kinds keep metadata.namespace (a
 * known namespaced kind without one is an error); known cluster-scoped kinds are indexed without a
 * namespace. A Namespace gets the label kubernetes.io/metadata.name=<name>, as kube-apiserver
 * sets it on every namespace. A duplicate (same group, kind, namespace, name) is an error.
 *
 * Returns 0, or ADM_EINVAL / ADM_EIO / ADM_ENOMEM with one line in err naming the file and the
 * object ("state.yaml: document 3: object has no kind").
 */
int adm_cluster_state_load(const char *const *paths, size_t npaths, adm_cluster_state_t **out, char *err,
                           size_t err_len);

/** Frees cs and every value it handed out. NULL is a no-op. */
void adm_cluster_state_free(adm_cluster_state_t *cs);

/**
 * The object group/kind namespace_/name, or NULL. group is the API group ("" for core, as in
 * apiVersion "v1"; "apps" for "apps/v1"); namespace_ "" (or NULL) for cluster-scoped objects.
 * O(1), no allocation.
 */
yyjson_val *adm_cluster_state_get(const adm_cluster_state_t *cs, const char *group, const char *kind,
                                  const char *namespace_, const char *name);

/**
 * All objects of group/kind in namespace_ (NULL: in all namespaces, cluster-scoped ones included),
 * in load order; *n receives the count (NULL with 0 when there are none). O(1), no allocation.
 */
yyjson_val *const *adm_cluster_state_list(const adm_cluster_state_t *cs, const char *group, const char *kind,
                                          const char *namespace_, size_t *n);

/**
 * Makes lookups on cs answer from store (cluster_store.h, the informer caches) for every kind the
 * store serves, and from the files for the others: with --kubeconfig, watched kinds come from the
 * API server only. store is borrowed (NULL detaches it) and must outlive cs's use; callers pin it
 * per request (adm_chain_use_cluster_store does).
 */
struct adm_cluster_store_s;
void adm_cluster_state_use_store(adm_cluster_state_t *cs, struct adm_cluster_store_s *store);

/** The API client of the store cs reads (adm_cluster_store_api), or NULL: files only. */
struct adm_api_client_s;
struct adm_api_client_s *adm_cluster_state_api(const adm_cluster_state_t *cs);

/**
 * A number no other state loaded in this process has (a state loaded after cs was freed may get
 * cs's address, never its serial): what a cache of objects' parses keys them with.
 */
uint64_t adm_cluster_state_serial(const adm_cluster_state_t *cs);

/** How many objects cs holds. */
size_t adm_cluster_state_count(const adm_cluster_state_t *cs);

#endif

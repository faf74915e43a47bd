/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer set of --kubeconfig / --in-cluster: the API client, the store every chain generation
 * borrows (adm_chain_use_cluster_store), and one reflector per watched kind. A kind is watched when
 * an enabled plugin names it in adm_plugin_t.reads, and Namespaces also when a webhook has a
 * namespaceSelector (the caller asks for them, adm_informer_watch); every other kind the lookups
 * read keeps answering from --cluster-state. /readyz waits for adm_informer_synced, and /metrics
 * carries the admitd_informer_* families.
 */
#ifndef ADM_INFORMER_H
#define ADM_INFORMER_H

#include "adm/base/buf.h"
#include "adm/base/reload.h"
#include "adm/cluster/cluster_store.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct adm_informer_s adm_informer_t;

/**
 * Reads the kubeconfig at kubeconfig (or the in-cluster configuration when kubeconfig is NULL),
 * and starts watching the kinds the plugins read (enabled plugin names, count n). Returns
 * 0, or ADM_EINVAL / ADM_EIO / ADM_ENOMEM with one line in err naming the file and the field (the
 * caller exits 2), or naming a kind no plugin may read.
 */
int adm_informer_create(uv_loop_t *loop, const char *kubeconfig, const char *const *plugins, size_t n,
                        adm_informer_t **out, char *err, size_t err_len);

/**
 * Starts watching group_kind ("/Namespace", as in adm_plugin_t.reads) unless it is watched
 * already; /readyz waits for it from now on. Returns 0, or ADM_EINVAL (a kind admitd cannot
 * watch) / ADM_ENOMEM with one line in err.
 */
int adm_informer_watch(adm_informer_t *inf, const char *group_kind, char *err, size_t err_len);

/** The store the chains borrow. */
adm_cluster_store_t *adm_informer_store(adm_informer_t *inf);

/** True once every watched kind has been listed (arg: the informer; a readiness check). */
bool adm_informer_synced(void *arg);

/** Appends the admitd_informer_* families (arg: the informer). 0 or ADM_ENOMEM. */
int adm_informer_metrics(void *arg, adm_buf_t *out);

/**
 * Makes the kubeconfig and every file it names (for --in-cluster, the service account's token and
 * ca.crt) a part of r's reloads ("API connection"): a reload reads and checks them whole, and when
 * what the calls are made from changed, swaps it into the API client and reconnects the watches
 * (adm_reflector_reconnect; another server URL lists every kind again). Returns 0 or ADM_ETOOBIG.
 */
int adm_informer_add_reload(adm_informer_t *inf, adm_reload_t *r);

/** Stops every reflector and the client; the store stays for requests still in flight. */
void adm_informer_stop(adm_informer_t *inf);

/** Frees it after stop (and after the loop ran the closes). NULL: no-op. */
void adm_informer_destroy(adm_informer_t *inf);

#endif

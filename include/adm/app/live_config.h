/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's running admission configuration and its reload: the downstream webhooks with their
 * pools (--webhook-config), the chain with its plugins and their configurations
 * (--admission-control-config-file and its path: files) and the cluster state from
 * --cluster-state, built together as one generation. A reload builds the next generation whole
 * and swaps it in; requests under way keep the chain they started with (each run holds a
 * reference), and the old webhooks drain: once no request uses them, their calls still running in
 * the background finish and their connections close.
 */
#ifndef ADM_LIVE_CONFIG_H
#define ADM_LIVE_CONFIG_H

#include "adm/admission/chain.h"
#include "adm/base/buf.h"
#include "adm/base/options.h"
#include "adm/base/reload.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct adm_live_config_s adm_live_config_t;

/**
 * Builds the first generation from opts (which must outlive it) on loop. Returns 0, or ADM_EINVAL /
 * ADM_EIO / ADM_ENOMEM with one line in err naming the flag or file (and field).
 */
int adm_live_config_create(uv_loop_t *loop, const adm_options_t *opts, adm_live_config_t **out, char *err,
                           size_t err_len);

/** Where the running chain is: read it as each request starts (adm_admission_endpoint_t.live). */
adm_chain_t *const *adm_live_config_chain(adm_live_config_t *lc);

/**
 * Open downstream connections of every generation (lc is an adm_live_config_t): the
 * admitd_connections{side="client"} source, retired webhooks still draining included.
 */
size_t adm_live_config_connections(void *lc);

/**
 * The proxy's metric families (circuit breakers, shadows, endpoints) of the running generation,
 * for adm_server_add_metrics (lc is an adm_live_config_t); nothing once shut down. A reload
 * starts the new generation's counters at zero, which Prometheus reads as a counter reset.
 */
int adm_live_config_proxy_metrics(void *lc, adm_buf_t *out);

/** Logs what the running generation holds (plugins, cluster state, webhooks). */
void adm_live_config_log_summary(const adm_live_config_t *lc);

/**
 * True when the running generation reads namespace labels for its webhooks: an enabled webhook
 * plugin has a webhook whose namespaceSelector does not select everything. (The plugins' own
 * reads are in adm_plugin_t.reads; these depend on files a reload may change.)
 */
bool adm_live_config_selects_namespaces(const adm_live_config_t *lc);

/** Registers with the reload coordinator: the flags' files and the AdmissionConfiguration's. */
int adm_live_config_add_reload(adm_live_config_t *lc, adm_reload_t *r);

/**
 * The server is done: drops the running generation and cuts the background calls of every
 * generation (the loop must run afterwards for their sockets to close).
 */
void adm_live_config_shutdown(adm_live_config_t *lc);

/** Frees lc (after adm_live_config_shutdown, or when start-up failed). */
void adm_live_config_destroy(adm_live_config_t *lc);

/**
 * Every chain generation from now on borrows store (the informer's), the current one included;
 * store must outlive the configuration's chains.
 */
struct adm_cluster_store_s;
void adm_live_config_use_cluster_store(adm_live_config_t *lc, struct adm_cluster_store_s *store);

/**
 * fn(arg) runs after each reload has put a new generation in place (not for the first one), e.g.
 * to watch what the new generation reads. Each arg has one hook (at most 4 in all): a later call
 * with the same arg replaces its fn, and fn NULL removes it. 0, or ADM_ENOMEM when all are taken.
 */
int adm_live_config_on_commit(adm_live_config_t *lc, void (*fn)(void *arg), void *arg);

struct adm_webhooks_s;

/** The running generation's webhooks (NULL once shut down). */
struct adm_webhooks_s *adm_live_config_webhooks(const adm_live_config_t *lc);

/**
 * Calls fn for the webhooks of every generation whose chain may still start a call: the running
 * one first, then those a reload replaced whose requests are still under way (a newer one built by
 * a reload not yet committed may come first too).
 */
void adm_live_config_each_webhooks(const adm_live_config_t *lc,
                                   void (*fn)(void *arg, struct adm_webhooks_s *w), void *arg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission chain: the enabled compiled-in plugins in kube-apiserver's order, each configured,
 * run over one AdmissionReview request. The mutating phase runs every enabled plugin's admit hook,
 * then the validating phase every validate hook on the mutated object; the first rejection ends
 * the request. The answer carries a JSON Patch from the received object to the final one.
 */
#ifndef ADM_CHAIN_H
#define ADM_CHAIN_H

#include "adm/admission/admission.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/options.h"
#include "adm/cluster/cluster_state.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct adm_chain_s adm_chain_t;

#define ADM_PHASE_MUTATING 1u
#define ADM_PHASE_VALIDATING 2u

/**
 * Builds the chain from opts: the enabled set (kube-apiserver's default set, plus
 * --enable-admission-plugins, minus --disable-admission-plugins; a name in both is enabled), the
 * AdmissionConfiguration file, and each plugin's configure. Default plugins admitd does not
 * implement are left out (adm_chain_log_summary names them). Returns 0, or ADM_EINVAL with one line in err
 * (unknown plugin names list the known ones), or ADM_ENOMEM.
 */
int adm_chain_create(const adm_options_t *opts, adm_chain_t **out, char *err, size_t err_len);

/** As adm_chain_create, with the downstream webhooks the webhook plugins call (NULL: none). */
struct adm_webhooks_s;
int adm_chain_create_with(const adm_options_t *opts, struct adm_webhooks_s *webhooks, adm_chain_t **out,
                          char *err, size_t err_len);

/*
 * Where a chain's inputs come from and who owns them. The chain owns its plugins' states and,
 * unless cluster is given, the --cluster-state it loads; it only borrows the rest.
 */
typedef struct adm_chain_sources_s {
    struct adm_webhooks_s *webhooks; /* borrowed (NULL: none): kept by the owner until release runs */
    adm_cluster_state_t *cluster;    /* borrowed (an informer cache that outlives reloads), must outlive
                                        the chain; NULL: the chain loads --cluster-state and owns it */
    void (*release)(void *arg);      /* runs once when the chain is freed: what it borrowed for its
                                        lifetime (webhooks) may go then; NULL: nothing to tell */
    void *release_arg;
} adm_chain_sources_t;

/** As adm_chain_create, with the inputs of src (copied). */
int adm_chain_create_from(const adm_options_t *opts, const adm_chain_sources_t *src, adm_chain_t **out,
                          char *err, size_t err_len);

/*
 * A chain is reference counted so a reload can replace it while requests run: its creator holds
 * one reference, and every run started (adm_chain_start) holds one until it finishes or is
 * cancelled. adm_chain_destroy drops the creator's; the last reference frees the chain.
 */
void adm_chain_destroy(adm_chain_t *c);
void adm_chain_ref(adm_chain_t *c);

/**
 * Calls fn for each file the chain's configuration was read from: --admission-control-config-file
 * and the `path:` files it names (what a reload watches besides the flags' own files).
 */
void adm_chain_files(const adm_chain_t *c, void (*fn)(void *arg, const char *path), void *arg);

/**
 * Makes every hook of c read time from clock (copied), from now on and in requests under way: how
 * tests move time by hand. A new chain reads uv_hrtime for both readings (now_ms is then
 * uv_hrtime / 1000000: tools and tests that run no loop); a server gives it its loop's time
 * instead, adm_chain_use_loop.
 */
void adm_chain_set_clock(adm_chain_t *c, const adm_clock_t *clock);

/**
 * Makes c's millisecond reading the time of loop (uv_now), the scale on which the caller computes
 * the deadlines it passes to adm_chain_start; the nanosecond reading stays uv_hrtime. loop must
 * outlive c.
 */
struct uv_loop_s;
void adm_chain_use_loop(adm_chain_t *c, struct uv_loop_s *loop);

/**
 * Lends c the informer caches (cluster_store.h): lookups through adm_plugin_cluster() answer from
 * them for the kinds they serve, and each request pins the store from adm_chain_start until its
 * arena is freed, so nothing it read is freed under it. The store belongs to the caller (it
 * outlives reloads, which build new chains) and must outlive c and every request c started;
 * NULL lends nothing.
 */
struct adm_cluster_store_s;
void adm_chain_use_cluster_store(adm_chain_t *c, struct adm_cluster_store_s *store);
/** The cluster state the chain's plugins read (its own or the borrowed one). */
const adm_cluster_state_t *adm_chain_cluster(const adm_chain_t *c);

/** Logs two lines: the enabled plugins in order, and the default ones left out as not implemented. */
void adm_chain_log_summary(const adm_chain_t *c);

/** The names of the enabled plugins in execution order; *count set. */
const char *const *adm_chain_plugins(const adm_chain_t *c, size_t *count);

/**
 * Runs phases (ADM_PHASE_* bits) on req with allocations in a and fills resp: allowed, or the
 * rejecting plugin's Status; a patch (JSON Patch text) when the object changed. Returns 0, or
 * ADM_ENOMEM when the arena ran out (resp then holds a 500).
 */
int adm_chain_run(adm_chain_t *c, unsigned phases, const adm_review_request_t *req, adm_arena_t *a,
                  adm_review_response_t *resp);

/*
 * The same, for chains whose webhook plugins call downstream webhooks: done(arg, resp) runs once
 * with the answer (possibly before adm_chain_start returns), unless the run is cancelled first.
 * deadline_ms is when the answer is due, on the scale of the chain's millisecond clock (the loop's
 * time after adm_chain_use_loop). Everything lives in a. NULL when the arena is exhausted (done
 * never runs).
 */
typedef struct adm_chain_run_s adm_chain_run_t;
typedef void (*adm_chain_done_fn)(void *arg, adm_review_response_t *resp);

adm_chain_run_t *adm_chain_start(adm_chain_t *c, unsigned phases, const adm_review_request_t *req,
                                 adm_arena_t *a, uint64_t deadline_ms, adm_chain_done_fn done, void *arg);

/**
 * As adm_chain_start, recording each step of the run in trace (adm/admission/trace.h; NULL: none):
 * each built-in plugin's hook, and through attrs->trace each downstream webhook call.
 */
struct adm_trace_s;
adm_chain_run_t *adm_chain_start_traced(adm_chain_t *c, unsigned phases, const adm_review_request_t *req,
                                        adm_arena_t *a, uint64_t deadline_ms, struct adm_trace_s *trace,
                                        adm_chain_done_fn done, void *arg);

/** The caller is gone: outstanding webhook calls are dropped and done will not run. */
void adm_chain_cancel(adm_chain_run_t *run);

#endif

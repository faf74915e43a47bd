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

void adm_chain_destroy(adm_chain_t *c);

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

/** The caller is gone: outstanding webhook calls are dropped and done will not run. */
void adm_chain_cancel(adm_chain_run_t *run);

#endif

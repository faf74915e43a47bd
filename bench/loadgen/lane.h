/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One admitd-bench event loop ("lane"): its connections, its share of the requests, its counts.
 * admitd-bench --threads N runs N lanes, each on its own thread with its own libuv loop, client
 * pool, TLS context and copy of the review bodies; they share only the plan below, read-only
 * while they run but for its atomics.
 *
 * Lane i of N sends request numbers i, i+N, i+2N, ...: in the open loop request k is due at
 * t0 + k/rate whichever lane sends it, so N lanes send exactly the requests one lane would, at
 * the same instants; the request number also picks the review body and seeds the uid, so bodies
 * cycle and uids stay distinct across lanes.
 */
#ifndef ADM_BENCH_LANE_H
#define ADM_BENCH_LANE_H

#include "adm/net/upstream.h"
#include "reviewset.h"
#include "tally.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct plan_s {
    const char *path; /* path and query of the URL */
    bool closed;
    double rate; /* open loop: requests per second, all lanes together */
    unsigned nlanes;
    uint64_t warmup_ms, timeout_ms;
    uint64_t salt;
    uint64_t t0_ns;                      /* run start */
    uint64_t measure_ns;                 /* end of warmup */
    uint64_t end_ns;                     /* end of the measured window */
    atomic_uint_fast64_t interrupted_ns; /* SIGINT: the window's new end, for every lane; 0 until */
    atomic_flag error_shown[OUT_COUNT];  /* the first error of each kind is printed once per run */
} plan_t;

typedef struct lane_s lane_t;

/**
 * Makes lane index of plan->nlanes with its loop and a client pool of up to connections, taking
 * over reviews (the lane stamps uids into its bodies) and a reference on tls (NULL: plain HTTP).
 * Returns 0, ADM_ENOMEM, or ADM_EIO when the open-loop pacer (a timerfd) cannot be made.
 */
int lane_create(plan_t *plan, unsigned index, uint64_t connections, const char *host, uint16_t port,
                adm_tls_ctx_t *tls, adm_reviewset_t *reviews, lane_t **out);

/**
 * Before the run, on the lane's loop: one request, retried a few times when the connection is
 * closed or reset or the answer is not HTTP (a chaotic target rather than a broken one). Returns
 * 0 when the target answered (or timed out), else -1 with the reason in detail.
 */
int lane_probe(lane_t *l, char *detail, size_t detail_len);

/**
 * Runs the lane on the calling thread from plan->t0_ns until its measured window is over and its
 * answers are in (or their deadline passed). The plan's times are set before.
 */
void lane_run(lane_t *l);

/* After lane_run: what the lane counted and its thread's CPU over the measured window. */
const tally_t *lane_tally(const lane_t *l);
thread_usage_t lane_usage(const lane_t *l);

/** Closes what is left of the lane (all of it when it never ran) and frees it with its loop. */
void lane_free(lane_t *l);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision trace of one admission request: every step it went through (each built-in plugin's
 * hook, each downstream webhook call) with its outcome, latency and, for a failed call, why; and
 * which plugin or webhook decided. The endpoint starts one per request, the chain and the webhook
 * plugins fill it through attrs->trace (NULL: nothing is recorded), and when the answer goes out it
 * is rendered as one JSON object: logged at --v 2 and kept in a bounded ring that GET
 * /debug/requests serves on the metrics listener only (Decision D18).
 *
 * Everything lives in the request's arena; the ring keeps a copy of the rendered text.
 */
#ifndef ADM_TRACE_H
#define ADM_TRACE_H

#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/server/exchange.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One rendered trace at most this long: past it, the last steps are left out ("truncated"). */
#define ADM_TRACE_MAX_BYTES 4096
/* Traces the ring keeps. */
#define ADM_TRACE_RING 128

typedef struct adm_trace_step_s {
    const char *name;    /* plugin or webhook (static, configuration or arena text) */
    const char *outcome; /* allowed, patched, denied, failed-open, failed-closed, error */
    const char *reason;  /* a denial's message or a call failure's reason; NULL: none */
    uint64_t latency_ns;
    int code;      /* HTTP code of a rejection; 0: none */
    bool webhook;  /* a downstream webhook, else a built-in plugin */
    bool validate; /* validating phase, else mutating */
    unsigned round;
    /* webhooks only: its circuit breaker in this call ("open": refused at once; "half-open-probe"),
       NULL: closed or none */
    const char *circuit;
    bool shadow;       /* a shadow webhook: outcome is what it would have done, nothing was applied */
    const char *patch; /* a shadow webhook's patch (JSON text), NULL: none */
} adm_trace_step_t;

typedef struct adm_trace_s {
    adm_arena_t *arena;
    adm_trace_step_t *steps;
    size_t n, cap;
    const char *decided_by; /* the step that rejected; NULL while none did */
    bool lost;              /* a step could not be recorded (arena exhausted) */
} adm_trace_t;

/** A new empty trace in a; NULL when a is exhausted. */
adm_trace_t *adm_trace_start(adm_arena_t *a);

/** Appends a copy of step (its strings are kept, not copied). t NULL: nothing. */
void adm_trace_add(adm_trace_t *t, const adm_trace_step_t *step);

/** Names who decided the request: the first name given wins. t NULL: nothing. */
void adm_trace_decided_by(adm_trace_t *t, const char *name);

/**
 * Renders the trace of req on endpoint (its label: "validate"), answered with resp after total_ns,
 * as one JSON object of at most ADM_TRACE_MAX_BYTES (in t's arena). NULL when the arena is
 * exhausted.
 */
const char *adm_trace_render(const adm_trace_t *t, const adm_review_request_t *req, const char *endpoint,
                             const adm_review_response_t *resp, uint64_t total_ns, size_t *len);

/* The last ADM_TRACE_RING rendered traces, oldest overwritten first. */
typedef struct adm_trace_ring_s adm_trace_ring_t;

/** Returns 0 or ADM_ENOMEM (the ring's memory is taken once, here). */
int adm_trace_ring_create(adm_trace_ring_t **out);
void adm_trace_ring_destroy(adm_trace_ring_t *r);

/** Keeps a copy of a rendered trace (len at most ADM_TRACE_MAX_BYTES) under uid. */
void adm_trace_ring_push(adm_trace_ring_t *r, const char *uid, const char *json, size_t len);

/**
 * The route handler of GET /debug/requests (arg: the ring): 200 with {"requests":[...]}, newest
 * first; with ?uid=U only the traces of that uid, 404 when the ring holds none.
 */
void adm_trace_ring_serve(adm_exchange_t *x, void *arg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission endpoints (POST /mutate, /validate, /admit) as a route handler of the server: each
 * request's AdmissionReview is decoded, its ?timeout= taken as the deadline of the whole call (D8),
 * the chain's phases run over it, and the answer encoded in the request's apiVersion with its uid.
 * The server has already refused what the route declares (method, client certificate, content
 * type); what is left to refuse here is a body or query that does not decode (400).
 */
#ifndef ADM_ENDPOINT_H
#define ADM_ENDPOINT_H

#include "adm/admission/chain.h"
#include "adm/server/exchange.h"

#include <stdint.h>

/* One admission path: what it runs. Kept by the caller for as long as the route is served. */
typedef struct adm_admission_endpoint_s {
    adm_chain_t *chain;              /* not owned; used when live is NULL */
    adm_chain_t *const *live;        /* not owned: where the running configuration's chain is, read as
                                        each request starts (a reload swaps it; the run holds a reference) */
    unsigned phases;                 /* ADM_PHASE_* bits: mutating, validating, or both */
    uint64_t deadline_margin_ms;     /* --deadline-margin: answer this long before the caller's deadline */
    const char *label;               /* the endpoint's name in traces ("validate") */
    struct adm_trace_ring_s *traces; /* where each request's decision trace is kept; NULL: nowhere */
} adm_admission_endpoint_t;

/**
 * The route handler (adm_handler_fn) of an admission path; arg is its adm_admission_endpoint_t.
 * Answers 200 with the AdmissionReview response, 400 for a review or ?timeout= that does not decode,
 * or 500 when the request's arena runs out; at once when no downstream webhook is called, else
 * when the chain is done. If the exchange is cancelled first, the chain's run is cancelled. With
 * traces set or at --v 2, the request's decision trace is kept there and logged.
 */
void adm_admission_handle(adm_exchange_t *x, void *arg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission server: listeners (admission over HTTPS or plain HTTP, optional health and metrics
 * listeners), connections and the graceful drain, all on one libuv loop.
 */
#ifndef ADM_SERVER_H
#define ADM_SERVER_H

#include "adm/base/arena.h"
#include "adm/admission/chain.h"
#include "adm/net/http.h"
#include "adm/base/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct adm_server_s adm_server_t;

/** Called once when a drain has finished and the server has closed all its handles. */
typedef void (*adm_server_done_cb)(adm_server_t *s, void *arg);

/**
 * Creates a server on loop from options (which must outlive it): loads or generates the TLS
 * certificate. On failure returns a negative code with one line in err naming the flag/file.
 */
int adm_server_create(uv_loop_t *loop, const adm_options_t *opts, adm_server_t **out, char *err,
                      size_t err_len);

/**
 * Binds and starts the listeners and logs "serving <what> on ADDR (https|http)" for each. Returns 0
 * or a negative code with one line in err.
 */
int adm_server_start(adm_server_t *s, adm_server_done_cb done, void *arg, char *err, size_t err_len);

/**
 * Begins the drain of INTERFACE.md: /readyz turns 503 at once, answers carry Connection: close and
 * idle connections close during --shutdown-delay; then the listeners close and in-flight requests
 * get --shutdown-grace to finish. Calling it again cuts the drain short. done fires at the end.
 */
void adm_server_shutdown(adm_server_t *s);

/** Sets the admission chain the admission endpoints run (kept by the caller, outliving the server). */
void adm_server_set_chain(adm_server_t *s, adm_chain_t *chain);

/*
 * An exchange is one request on the admission listener and the answer it is owed. A handler may
 * answer at once or later (after upstream calls or a timer): until it does, the connection reads
 * no further request, so answers stay in order. Memory for the request's work comes from the
 * exchange's arena, which lives until the answer is queued or the exchange is cancelled.
 */
typedef struct adm_exchange_s adm_exchange_t;

/** Handles one request; must eventually call adm_exchange_reply() or adm_exchange_abort(). */
typedef void (*adm_handler_fn)(adm_exchange_t *x, void *arg);

/**
 * Serves every path of the admission listener except the probes and /metrics with fn instead of
 * admitd's admission endpoints (admitd-mockhook plays its webhooks this way).
 */
void adm_server_set_handler(adm_server_t *s, adm_handler_fn fn, void *arg);

const adm_http_request_t *adm_exchange_request(const adm_exchange_t *x);
adm_arena_t *adm_exchange_arena(const adm_exchange_t *x);
uv_loop_t *adm_exchange_loop(const adm_exchange_t *x);

/**
 * Queues the answer (its bytes are copied) and ends the exchange: the arena is released, and the
 * connection goes on with the next request. x is invalid afterwards.
 */
void adm_exchange_reply(adm_exchange_t *x, adm_http_response_t *resp);

/** Ends the exchange without an answer by closing the connection; reset: with a TCP RST. */
void adm_exchange_abort(adm_exchange_t *x, bool reset);

/**
 * fn(arg) runs if the exchange ends before an answer (the client went away, or the drain's grace
 * ran out): the handler must stop its work and never touch x again.
 */
void adm_exchange_on_cancel(adm_exchange_t *x, void (*fn)(void *arg), void *arg);

/** Frees the server after done has fired (or if it was never started). */
void adm_server_destroy(adm_server_t *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An exchange is one request and the answer it is owed: all that a route's handler sees of the
 * server. The server has already chosen the route from the request's head and made the checks the
 * route declared (adm/server/route.h), so a handler meets only requests it has to answer.
 *
 * A handler may answer at once or later (after upstream calls or a timer): until it does, the
 * connection reads no further request, so answers stay in order. Memory for the request's work
 * comes from the exchange's arena, which lives until the answer is queued or the exchange is
 * cancelled. Everything runs on the server's loop; no function here may be called from another
 * thread.
 */
#ifndef ADM_EXCHANGE_H
#define ADM_EXCHANGE_H

#include "adm/base/arena.h"
#include "adm/net/http.h"

#include <stdbool.h>
#include <uv.h>

typedef struct adm_exchange_s adm_exchange_t;

/* The listeners a server can have (INTERFACE.md: --listen, --health-listen, --metrics-listen). */
typedef enum adm_listener_kind_e {
    ADM_LISTENER_ADMISSION, /* --listen: HTTPS unless --insecure-http */
    ADM_LISTENER_HEALTH,    /* --health-listen: plain HTTP */
    ADM_LISTENER_METRICS,   /* --metrics-listen: plain HTTP */
    ADM_LISTENER_KINDS,
} adm_listener_kind_t;

/**
 * Handles one request. It must end the exchange, at once or later, with adm_exchange_reply() or
 * adm_exchange_abort(), unless the exchange is cancelled first (adm_exchange_on_cancel()).
 */
typedef void (*adm_handler_fn)(adm_exchange_t *x, void *arg);

/** The request: method, path, query, Content-Type and the whole body, valid until the exchange ends. */
const adm_http_request_t *adm_exchange_request(const adm_exchange_t *x);

/** Work memory for this request, released when the exchange ends; never freed piece by piece. */
adm_arena_t *adm_exchange_arena(const adm_exchange_t *x);

/** The loop the server runs on: for timers, and uv_now() as the base of deadlines. */
uv_loop_t *adm_exchange_loop(const adm_exchange_t *x);

/** Which listener the request came in on. */
adm_listener_kind_t adm_exchange_listener(const adm_exchange_t *x);

/**
 * True when the client presented a certificate that verified against --client-ca-file (mTLS);
 * always false on plain HTTP and without --client-ca-file.
 */
bool adm_exchange_peer_verified(const adm_exchange_t *x);

/**
 * Queues the answer (its bytes are copied, so resp and what it points to may be arena memory) and
 * ends the exchange: the arena is released, and the connection goes on with the next request. x
 * is invalid afterwards. An answer to an exchange already cancelled is dropped.
 */
void adm_exchange_reply(adm_exchange_t *x, adm_http_response_t *resp);

/**
 * Ends the exchange by writing len bytes as they are (no HTTP framing added) and closing the
 * connection after them: for a test upstream that plays a broken or hand-made answer. The bytes
 * are copied. Not counted in the request metrics.
 */
void adm_exchange_reply_raw(adm_exchange_t *x, const void *bytes, size_t len);

/** Ends the exchange without an answer by closing the connection; reset: with a TCP RST. */
void adm_exchange_abort(adm_exchange_t *x, bool reset);

/**
 * fn(arg) runs if the exchange ends before an answer (the client went away, or the drain's grace
 * ran out): the handler must stop its work and never touch x again. fn NULL removes it.
 */
void adm_exchange_on_cancel(adm_exchange_t *x, void (*fn)(void *arg), void *arg);

#endif

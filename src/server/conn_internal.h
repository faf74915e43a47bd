/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What server.c hands to conn.c. The server owns listeners and the set of connections; conn.c owns
 * each connection from accept to free. Calls go one way, server to connections: conn.c learns of the
 * server only through the fields below, and reports a freed connection through the set's on_freed
 * callback (where the server may accept again, or finish its drain).
 */
#ifndef ADM_CONN_INTERNAL_H
#define ADM_CONN_INTERNAL_H

#include "adm/base/arena.h"
#include "adm/base/options.h"
#include "adm/net/tls.h"
#include "adm/server/metrics.h"
#include "adm/server/route.h"
#include "handshake_pacer.h"
#include "heap_trim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* A request's head or body not complete this long after it began: close (INTERFACE.md). */
#define ADM_SLOW_CLIENT_MS 10000
/* After a Connection: close answer, how long unread input is drained before the socket closes. */
#define ADM_LINGER_MS 2000
/* Stop reading from a client that lets this much output pile up (pipelining without reading). */
#define ADM_MAX_PENDING_OUTPUT (1024 * 1024)
#define ADM_READ_BUFFER_SIZE (64 * 1024)
/* A connection idle this long gives back its buffers (conn.c, trim_idle). Longer than the gaps of a
   busy client, so a steady stream of requests keeps them and costs no malloc. */
#define ADM_IDLE_TRIM_MS 1000
/* Spare request arenas kept; more are made while many answers are outstanding. */
#define ADM_ARENA_POOL_MAX 64
#define ADM_REQUEST_ARENA_BYTES (256 * 1024)

typedef struct adm_conn_s adm_conn_t;

/* What every connection of a server shares. server.c sets it up and owns it; conn.c keeps the list. */
typedef struct adm__conns_s {
    uv_loop_t *loop;
    const adm_options_t *opts;
    adm_metrics_t *metrics;      /* requests answered, open connections */
    adm_conn_t *head;            /* open (not closing) connections */
    size_t open;                 /* in the list */
    size_t alive;                /* allocated, closing ones included */
    bool draining;               /* SIGTERM seen: answers carry Connection: close */
    bool stopping;               /* listeners closed: in-flight requests finish, handshakes may go */
    void (*on_freed)(void *arg); /* a connection was freed (alive went down) */
    void *on_freed_arg;
    /*
     * Request work memory (decode, chain, upstream calls, encode) comes from pooled arenas: one
     * per request being answered, back to the pool (reset) with the answer. Idle connections hold
     * none, and in the steady state a request costs no malloc.
     */
    adm_arena_t *arena_pool[ADM_ARENA_POOL_MAX];
    size_t narena_pool;
    adm__pacer_t pacer; /* bounds the TLS handshake work of one loop turn (connection storms) */
    /* Gives freed memory back to the system once many connections have closed. */
    adm__heap_trim_t heap_trim;
    uint8_t read_buf[ADM_READ_BUFFER_SIZE]; /* libuv reads are handled one at a time */
} adm__conns_t;

typedef struct adm__listener_s {
    uv_tcp_t tcp;
    adm_listener_kind_t kind;
    adm_tls_ctx_t *tls;              /* NULL: plain HTTP */
    const adm_route_table_t *routes; /* the server's; this listener's are those of kind */
    adm__conns_t *conns;
    void *owner;         /* the server, for its accept callback */
    bool accept_pending; /* a connection waits in the kernel until we are below --max-connections */
    bool open;
} adm__listener_t;

/* Sets up an empty set; on_freed(arg) runs after each connection is freed. */
void adm__conns_init(adm__conns_t *set, uv_loop_t *loop, const adm_options_t *opts, adm_metrics_t *metrics,
                     void (*on_freed)(void *arg), void *arg);

/* Frees the pooled arenas, once every connection has been freed. */
void adm__conns_dispose(adm__conns_t *set);

/* Accepts one connection waiting on l (or logs why not) and starts serving it. */
void adm__conn_accept(adm__listener_t *l);

/* Closes the connections with no request in progress and nothing to write. */
void adm__conns_close_idle(adm__conns_t *set);

/* Closes every connection at once (the drain's grace is over): handlers see their cancel callbacks. */
void adm__conns_close_all(adm__conns_t *set);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Structures shared by server.c, conn.c and router.c. A connection embeds its libuv handles and is
 * freed only after each of their close callbacks has run.
 */
#ifndef ADM_SERVER_INTERNAL_H
#define ADM_SERVER_INTERNAL_H

#include "adm/base/arena.h"
#include "adm/base/buf.h"
#include "adm/admission/chain.h"
#include "adm/net/http.h"
#include "adm/server/metrics.h"
#include "adm/base/options.h"
#include "adm/server/server.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* A request's head or body not complete this long after it began: close (INTERFACE.md). */
#define ADM_SLOW_CLIENT_MS 10000
/* After a Connection: close answer, how long unread input is drained before the socket closes. */
#define ADM_LINGER_MS 2000
/* Stop reading from a client that lets this much output pile up (pipelining without reading). */
#define ADM_MAX_PENDING_OUTPUT (1024 * 1024)
#define ADM_READ_BUFFER_SIZE (64 * 1024)

typedef enum adm__listener_kind_e {
    ADM_LISTENER_ADMISSION,
    ADM_LISTENER_HEALTH,
    ADM_LISTENER_METRICS,
} adm__listener_kind_t;

typedef struct adm__listener_s {
    uv_tcp_t tcp;
    adm_server_t *server;
    adm__listener_kind_t kind;
    bool tls;            /* TLS on this listener (the admission listener unless --insecure-http) */
    bool accept_pending; /* a connection waits in the kernel until we are below --max-connections */
    bool open;
} adm__listener_t;

typedef struct adm_conn_s adm_conn_t;

/* Spare request arenas kept by the server; more are made while many answers are outstanding. */
#define ADM_ARENA_POOL_MAX 64
#define ADM_REQUEST_ARENA_BYTES (256 * 1024)

struct adm_exchange_s {
    adm_conn_t *conn;
    adm_arena_t *arena;          /* the request's work memory, from the server's pool */
    void (*on_cancel)(void *arg);
    void *cancel_arg;
    bool keep_alive;             /* the request allows another on this connection */
};

typedef enum adm__conn_state_e {
    ADM_CONN_OPEN,    /* handshaking or serving requests */
    ADM_CONN_LINGER,  /* final answer written and FIN sent; discarding input until EOF */
    ADM_CONN_CLOSING, /* uv_close called; freed when both handles have closed */
} adm__conn_state_t;

struct adm_conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer;           /* slow-client, idle and linger deadlines */
    uv_write_t write_req;
    uv_shutdown_t shutdown_req;
    adm_server_t *server;
    adm__listener_t *listener;
    adm_conn_t *prev, *next;    /* server's list of open connections */
    adm_tls_session_t *tls;     /* NULL on plain listeners */
    adm_http_parser_t http;
    adm_arena_t *arena;         /* the current request's memory, reset after each answer */
    adm_buf_t in;               /* plaintext received; [in_off, len) not parsed yet */
    size_t in_off;
    adm_buf_t pending;          /* plaintext answers not yet encrypted or written */
    adm_buf_t writing;          /* bytes owned by the uv_write in flight */
    uint64_t accepted_ms;
    uint64_t request_started_ms; /* 0 between requests */
    uint64_t request_started_ns; /* uv_hrtime() at the same moment, for the latency histogram */
    adm_endpoint_t endpoint;     /* what the current request was routed to */
    adm_http_response_t early;  /* answer decided from the head alone (404, 405, 415, 401) */
    adm_exchange_t x;           /* the request being answered */
    adm__conn_state_t state;
    int pending_closes;         /* handle close callbacks still to come */
    bool has_early;
    bool awaiting;              /* a handler owes the current request its answer */
    bool dispatching;           /* inside the handler's first call for the current request */
    bool handshake_done;
    bool peer_verified;         /* mTLS client certificate verified */
    bool write_in_flight;
    bool close_after_write;     /* last answer queued: close once it is written */
    bool close_notify_sent;
    bool reading_paused;        /* backpressure: output is piling up */
    bool peer_eof;
};

struct adm_server_s {
    uv_loop_t *loop;
    const adm_options_t *opts;
    adm_chain_t *chain;         /* the compiled-in plugins; owned by the caller */
    adm_tls_ctx_t *tls;
    adm__listener_t listeners[3];
    int nlisteners;
    adm_conn_t *conns;          /* list head */
    size_t nconns;              /* open (not closing) connections */
    size_t nconns_alive;        /* allocated connections, closing ones included */
    uv_timer_t drain_timer;
    adm_server_done_cb done;
    void *done_arg;
    int pending_closes;
    bool ready;                 /* /readyz answers 200 */
    bool draining;              /* SIGTERM seen: answers carry Connection: close */
    bool stopping;              /* listeners closed: waiting for in-flight requests */
    bool finished;
    adm_metrics_t metrics;
    adm_buf_t scratch;          /* reused for rendering /metrics */
    /*
     * Request work memory (decode, chain, upstream calls, encode) comes from pooled arenas: one
     * per request being answered, back to the pool (reset) with the answer. Idle connections hold
     * none, and in the steady state a request costs no malloc.
     */
    adm_arena_t *arena_pool[ADM_ARENA_POOL_MAX];
    size_t narena_pool;
    adm_handler_fn handler;     /* replaces the admission endpoints (admitd-mockhook) */
    void *handler_arg;
    uint8_t read_buf[ADM_READ_BUFFER_SIZE]; /* shared: libuv reads are handled one at a time */
};

/* conn.c */
void adm__conn_accept(adm__listener_t *l);
/* Closes a connection that is idle (no request in progress, nothing to write). */
void adm__conn_close_if_idle(adm_conn_t *c);
void adm__conn_close_now(adm_conn_t *c);

/* server.c: a connection was freed. */
void adm__server_conn_freed(adm_server_t *s);
/* server.c: a request arena from the pool (NULL when out of memory), and its return. */
adm_arena_t *adm__server_arena_get(adm_server_t *s);
void adm__server_arena_put(adm_server_t *s, adm_arena_t *a);

/* router.c */
/* Decides from the head alone whether the request can go on; 0 or an answer in *resp. */
int adm__route_check(adm_conn_t *c, const adm_http_request_t *r, adm_http_response_t *resp);
/* Answers a complete request through its exchange, at once or later (adm_exchange_reply). */
void adm__route_handle(adm_conn_t *c, const adm_http_request_t *r, adm_exchange_t *x);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connections of one upstream, below the pool of upstream.h and private to src/net/: dialing
 * (resolving, trying each address, connecting, the TLS handshake), carrying one call at a time
 * (sending its request, parsing its answer), and the idle watch. This layer decides nothing about
 * calls: it reports what happened through the callbacks its owner gave it (a connection is ready,
 * an answer is in, a connection broke under a call, a dial failed, a connection closed or was
 * freed), and the owner, upstream.c, decides which call a connection carries next, whether a call
 * is sent again, and when to dial. So calls go down by name and news comes up through function
 * pointers, and the two files never call each other in a circle.
 *
 * A callback may run inside a function of this layer that the owner called (a dial or a send that
 * fails at once); the owner guards its own re-entry (upstream.c's in_post and in_maybe_dial).
 * Connection memory is released only from libuv close callbacks, so pointers stay valid for the
 * rest of the loop turn even when a callback closes everything.
 */
#ifndef ADM_UPSTREAM_CONN_H
#define ADM_UPSTREAM_CONN_H

#include "adm/base/buf.h"
#include "adm/net/call_result.h"
#include "adm/net/http_client.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

/* Bytes a connection asks libuv to read into at a time (the set's read_buf). */
#define UPSTREAM_READ_CHUNK (64 * 1024)
/* Addresses of one name tried in turn before a dial fails. */
#define UPSTREAM_MAX_ADDRS 8
/* Kept capacity of per-call and per-connection buffers between calls; larger ones are freed. */
#define UPSTREAM_KEEP_BYTES (256 * 1024)

typedef struct adm_upstream_conn_s adm_upstream_conn_t;
typedef struct adm_upstream_conn_set_s adm_upstream_conn_set_t;

/* A call as this layer sees it: the owner's, opaque here, handed back in the callbacks. */
struct adm_call_s;

typedef enum adm_upstream_conn_state_e {
    CONN_RESOLVING,
    CONN_CONNECTING,
    CONN_HANDSHAKE,
    CONN_READY,
    CONN_CLOSING,
} adm_upstream_conn_state_t;

/* What the connections report to their owner. None is optional. */
typedef struct adm_upstream_conn_events_s {
    /* c is ready and carries no call: give it one (adm__upstream_conn_start_call), park it
       (adm__upstream_conn_park) or close it. */
    void (*ready)(adm_upstream_conn_t *c);
    /* The whole answer to call is in (res is valid during the callback; the call is unbound). */
    void (*answered)(struct adm_call_s *call, const adm_call_result_t *res);
    /* The connection carrying call broke and is closed, call unbound. stale: the connection had
       carried a call before and no byte of this answer came (the server closed it as the request
       went out). */
    void (*broken)(struct adm_call_s *call, bool stale, adm_call_error_t error, const char *detail);
    /* A dial failed; its connection is closed. */
    void (*dial_failed)(adm_upstream_conn_set_t *set, adm_call_error_t error, const char *detail);
    /* Called last after a connection closed or finished an answer: the owner may dial for the
       calls still waiting. */
    void (*may_dial)(adm_upstream_conn_set_t *set);
    /* A closed connection's memory is freed (the owner may be waiting for the last one). */
    void (*freed)(adm_upstream_conn_set_t *set);
} adm_upstream_conn_events_t;

/* One connection; kept by upstream_conn.c. */
struct adm_upstream_conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer; /* dial deadline while connecting, idle deadline while idle */
    uv_connect_t connect_req;
    uv_getaddrinfo_t dns_req;
    uv_write_t write_req;
    adm_upstream_conn_set_t *set;
    adm_upstream_conn_t *prev, *next;           /* all connections */
    adm_upstream_conn_t *idle_prev, *idle_next; /* idle ones, most recent first */
    adm_tls_session_t *tls;
    adm_http_resp_parser_t resp;
    adm_buf_t plain;         /* plaintext received, not parsed yet */
    adm_buf_t out;           /* plaintext to send (plain HTTP only; TLS queues in the session) */
    adm_buf_t writing;       /* bytes owned by the uv_write in flight */
    struct adm_call_s *call; /* the call it carries; the owner clears it when it ends the call */
    struct sockaddr_storage addrs[UPSTREAM_MAX_ADDRS];
    int naddrs;
    int addr_index;
    adm_upstream_conn_state_t state;
    int pending_closes;
    bool idle;
    bool reused;         /* has carried a call before */
    bool answer_started; /* a byte of the current call's answer arrived */
    uint64_t idle_since; /* loop time it was last parked (the idle timer is re-armed lazily) */
    bool write_in_flight;
    bool dns_pending;
};

/* The connections of one upstream. The owner embeds it and fills in the settings before the first
   dial; this layer keeps the rest, which the owner reads for its policy. */
struct adm_upstream_conn_set_s {
    /* settings */
    uv_loop_t *loop;
    const adm_upstream_conn_events_t *events;
    adm_tls_ctx_t *tls;    /* NULL: plain HTTP */
    const char *host;      /* the name TLS verifies and sends as SNI, and logs name */
    const char *dial_host; /* the name or address to connect to */
    uint16_t port;
    struct sockaddr_storage fixed_addr; /* used instead of dial_host when has_fixed_addr */
    bool has_fixed_addr;
    size_t max_body_bytes;
    uint64_t idle_timeout_ms;
    /* kept here */
    adm_upstream_conn_t *all; /* every connection not freed yet */
    size_t nconns;            /* not closing */
    size_t ndialing;          /* not yet ready */
    size_t nidle;
    adm_upstream_conn_t *idle; /* most recent first */
    uint64_t dials;
    uint64_t writes; /* socket writes issued (tried or queued with libuv): one per flight */
    /*
     * Where every connection of the set reads into: libuv calls the alloc and read callbacks back to
     * back for one stream, and what a read brings is copied out (or consumed by the TLS session)
     * before the read callback returns, so one buffer serves them all. It lives here, not in a
     * function-static, so that upstreams on different loops (threads) never share it.
     */
    char read_buf[UPSTREAM_READ_CHUNK];
};

/**
 * Opens a new connection of set: resolves dial_host (or takes the fixed or literal address),
 * connects and, with TLS, shakes hands; once it is ready, events->ready runs. Returns 0 (also when
 * the dial fails at once: events->dial_failed has then run), or ADM_ENOMEM when no connection
 * could be allocated (no callback ran).
 */
int adm__upstream_conn_dial(adm_upstream_conn_set_t *set);

/**
 * Binds call to the ready connection c, which carries no call (taking c off the idle list), and
 * sends request (len bytes, copied). The outcome comes through events->answered or ->broken.
 */
void adm__upstream_conn_start_call(adm_upstream_conn_t *c, struct adm_call_s *call, const uint8_t *request,
                                   size_t len);

/** Puts the ready connection c, which carries no call, on the idle list under the idle deadline. */
void adm__upstream_conn_park(adm_upstream_conn_t *c);

/**
 * Closes c (nothing when it is closing already) without reporting anything; events->freed runs once
 * its handles have closed. A call it carried is the caller's to end.
 */
void adm__upstream_conn_close(adm_upstream_conn_t *c);

#endif

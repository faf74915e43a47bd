/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Outgoing HTTP/1.1 calls on the event loop: one pool of keep-alive connections per upstream
 * (scheme, host, port, trust), shared by the webhook dispatcher and admitd-bench.
 *
 * A call is a POST whose whole answer (status, Content-Type, body) reaches a callback, or an
 * error saying what failed (DNS, connect, TLS, I/O, protocol, deadline). Each call has a
 * deadline that covers waiting for a connection, connecting, the TLS handshake, sending and
 * reading. Connections are reused in LIFO order (the warmest first), bounded per upstream; calls
 * beyond the bound wait in FIFO order. Idle connections keep reading, so one the server closed is
 * noticed and dropped before it is handed out. A call that still meets a stale connection (the
 * server closed it as the request went out: EOF or reset on a reused connection before any byte
 * of an answer) is sent once more on a new one. Go's transport resends a POST only when nothing
 * of it was written; admitd also resends one that was, once, because that race is the usual
 * keep-alive failure and admission webhooks are to be idempotent (kube-apiserver's reinvocation
 * already calls them twice).
 *
 * Calls come from a free list and connections are kept alive: in the steady state a call costs no
 * malloc. src/net/upstream.c is the pool and its calls; src/net/upstream_conn.c, below it, the
 * connections.
 */
#ifndef ADM_UPSTREAM_H
#define ADM_UPSTREAM_H

#include "adm/net/call_result.h"
#include "adm/net/tls.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

typedef struct adm_upstream_s adm_upstream_t;
typedef struct adm_call_s adm_call_t;

/* Runs once per call unless the call was abandoned. */
typedef void (*adm_call_cb)(const adm_call_result_t *res, void *arg);

/*
 * Takes a piece of a streamed 2xx body (adm_upstream_stream) as it arrives. Returns 0 to go on, or
 * nonzero to cancel the call (as adm_call_cancel: the final callback does not run).
 */
typedef int (*adm_call_chunk_cb)(const uint8_t *data, size_t len, void *arg);

typedef struct adm_upstream_opts_s {
    const char *host; /* the Host header's host and the name TLS verifies and sends as SNI */
    uint16_t port;
    const char *dial_host;       /* name or address to connect to; NULL: host */
    const struct sockaddr *addr; /* fixed address (--resolve); NULL: resolve dial_host on each dial */
    adm_tls_ctx_t *tls;          /* client context (the upstream takes a reference); NULL: plain HTTP */
    size_t max_conns;            /* connections at most; 0: 64 */
    size_t max_body_bytes;       /* larger answers are ADM_CALL_PROTOCOL; 0: 10 MiB (Decision D9) */
    uint64_t idle_timeout_ms;    /* close connections idle this long; 0: 90 s (Go's default) */
    /* Not NULL: no connection is ever made; every call fails on the next loop turn with
       ADM_CALL_CONNECT and this text (copied), as a dial that met it would (a Service without an
       endpoint, whose ClusterIP kube-proxy refuses). */
    const char *refuse;
} adm_upstream_opts_t;

/** Creates an upstream on loop. Returns 0 or ADM_ENOMEM. */
int adm_upstream_create(uv_loop_t *loop, const adm_upstream_opts_t *opts, adm_upstream_t **out);

/**
 * Closes the upstream: idle connections close at once; calls in flight or waiting end with their
 * callbacks (ADM_CALL_IO, "upstream closed") before this returns or soon after; the memory is
 * freed once every handle has closed. The loop must run for that.
 */
void adm_upstream_close(adm_upstream_t *u);

/**
 * Starts a POST of body to path (which includes any query) with extra header lines (each
 * "Name: value\r\n", or NULL). The bytes are copied. timeout_ms bounds the whole call (0: 30 s,
 * Go's client default for webhooks). Returns the call (for adm_call_abandon), or NULL when out of
 * memory (then cb never runs).
 */
adm_call_t *adm_upstream_post(adm_upstream_t *u, const char *path, const char *extra_headers,
                              const void *body, size_t body_len, uint64_t timeout_ms, adm_call_cb cb,
                              void *arg);

/** As adm_upstream_post, for a GET (no body). */
adm_call_t *adm_upstream_get(adm_upstream_t *u, const char *path, const char *extra_headers,
                             uint64_t timeout_ms, adm_call_cb cb, void *arg);

/**
 * A GET whose 2xx body goes to chunk(data, len, arg) piece by piece as it arrives, with no size
 * limit and nothing kept (a watch: the body ends only when the server ends it). cb then runs once
 * as for any call: at the body's end (status 2xx, no body), with a non-2xx answer gathered whole
 * (a 410 or 429 Status), or with the error that cut the stream. timeout_ms bounds the whole call,
 * stream included (0: 30 s). A streamed call holds its connection for as long as it lasts, so the
 * caller gives long watches an upstream of their own. Returns the call, or NULL when out of memory.
 */
adm_call_t *adm_upstream_stream(adm_upstream_t *u, const char *path, const char *extra_headers,
                                uint64_t timeout_ms, adm_call_chunk_cb chunk, adm_call_cb cb, void *arg);

/**
 * Ends the call now, whatever it was doing: neither callback runs again, and a connection caught
 * mid-answer is closed (its framing is lost). For a watch the caller stops. NULL is a no-op.
 */
void adm_call_cancel(adm_call_t *call);

/**
 * The caller no longer wants the answer: the callback will not run. A call that is already on a
 * connection still completes (bounded by its deadline) so the connection can be kept; a waiting
 * one is dropped at once.
 */
void adm_call_abandon(adm_call_t *call);

/**
 * The answer goes to cb(res, arg) instead: the call goes on exactly as before (waiting, sending
 * or reading, under the same deadline) and the new callback runs once, as the old one would have.
 * For a caller that leaves before the answer but still wants to account for it.
 */
void adm_call_redirect(adm_call_t *call, adm_call_cb cb, void *arg);

/** Connections open (connecting, busy or idle), and idle ones; for tests and metrics. */
size_t adm_upstream_connections(const adm_upstream_t *u);
size_t adm_upstream_idle_connections(const adm_upstream_t *u);

/** Connections ever opened by this upstream (each a dial, and with TLS a handshake). */
uint64_t adm_upstream_dials(const adm_upstream_t *u);

/**
 * Socket writes issued on all its connections so far (each try and each queued write): a call's
 * request over a connection already up is one write, handshake flights one each.
 */
uint64_t adm_upstream_writes(const adm_upstream_t *u);

/** Human text for an error kind ("connect", "tls", ...), for counters and logs. */
const char *adm_call_error_name(adm_call_error_t e);

#endif

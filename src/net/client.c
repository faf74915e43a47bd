/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upstream connection pool of client.h.
 *
 * A connection is bound to at most one call at a time (no pipelining: an answer that is late must
 * not hold up the next call). Calls wait in a FIFO until a connection is ready; each waiting call
 * may cause one dial while the upstream is below its bound. Every path that ends a call goes
 * through finish_call(), and every path that ends a connection through conn_close(); the memory
 * of both is released only from libuv close callbacks, so pointers stay valid for the rest of the
 * loop turn even when a callback closes the upstream.
 *
 * A callback never runs inside adm_upstream_post(): a call that fails there (a dial refused by
 * connect(2) at once, such as ENETUNREACH, EMFILE or ENOBUFS; a write error on an idle connection)
 * is finished on the next loop turn, so the caller always holds the call before it can end. The
 * same holds for older waiting calls that such a failed dial fails.
 */
#include "adm/net/client.h"

#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/net/http_client.h"
#include "adm/net/tls_session.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_CONNS 64
#define DEFAULT_MAX_BODY (10u * 1024 * 1024)
#define DEFAULT_IDLE_MS 90000
#define DEFAULT_CALL_MS 30000
/* A dial (DNS, connect, handshake) with no call left waiting for it gives up after this long. */
#define DIAL_TIMEOUT_MS 30000
#define READ_CHUNK (64 * 1024)
#define MAX_ADDRS 8
/* Kept capacity of per-connection buffers between calls; larger ones are freed. */
#define KEEP_BYTES (256 * 1024)

typedef enum conn_state_e {
    CONN_RESOLVING,
    CONN_CONNECTING,
    CONN_HANDSHAKE,
    CONN_READY,
    CONN_CLOSING,
} conn_state_t;

typedef struct client_conn_s client_conn_t;

struct adm_call_s {
    uv_timer_t timer;
    adm_upstream_t *up;
    adm_call_t *next, *prev; /* in the wait queue, or next in the free list */
    client_conn_t *conn;     /* bound connection, or NULL */
    adm_call_cb cb;
    void *arg;
    adm_buf_t request;       /* the whole HTTP request */
    char detail[256];
    adm_call_error_t deferred_error; /* ended inside adm_upstream_post: reported from the timer */
    bool queued;
    bool retried;            /* already sent again after a stale connection */
    bool active;
    bool deferred;
};

struct client_conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer;        /* dial deadline while connecting, idle deadline while idle */
    uv_connect_t connect_req;
    uv_getaddrinfo_t dns_req;
    uv_write_t write_req;
    adm_upstream_t *up;
    client_conn_t *prev, *next;           /* all connections */
    client_conn_t *idle_prev, *idle_next; /* idle ones, most recent first */
    adm_tls_session_t *tls;
    adm_http_resp_parser_t resp;
    adm_buf_t plain;         /* plaintext received, not parsed yet */
    adm_buf_t out;           /* plaintext to send (plain HTTP only; TLS queues in the session) */
    adm_buf_t writing;       /* bytes owned by the uv_write in flight */
    adm_call_t *call;
    struct sockaddr_storage addrs[MAX_ADDRS];
    int naddrs;
    int addr_index;
    conn_state_t state;
    int pending_closes;
    bool idle;
    bool reused;             /* has carried a call before */
    bool answer_started;     /* a byte of the current call's answer arrived */
    bool write_in_flight;
    bool dns_pending;
};

struct adm_upstream_s {
    uv_loop_t *loop;
    adm_tls_ctx_t *tls;
    char *host;
    char *host_header;
    char *dial_host;
    uint16_t port;
    struct sockaddr_storage fixed_addr;
    bool has_fixed_addr;
    size_t max_conns;
    size_t max_body_bytes;
    uint64_t idle_timeout_ms;
    client_conn_t *conns;
    size_t nconns;           /* not closing */
    size_t ndialing;         /* not yet ready */
    size_t nidle;
    client_conn_t *idle;
    adm_call_t *wait_head, *wait_tail;
    size_t nwaiting;
    adm_call_t *free_calls;
    size_t ncalls;           /* call objects allocated (each owns a timer) */
    uint64_t dials;
    int pending_closes;      /* handle close callbacks still to come */
    int in_callback;         /* depth of user callbacks running */
    int in_post;             /* inside adm_upstream_post: calls that end are reported later */
    size_t ndeferred;        /* calls ended, their callbacks still to run */
    bool in_maybe_dial;
    bool closing;
};

static void conn_close(client_conn_t *c);
static void conn_flush(client_conn_t *c);
static void conn_available(client_conn_t *c);
static void maybe_dial(adm_upstream_t *u);
static void dial_failed(client_conn_t *c, adm_call_error_t error, const char *detail);

const char *adm_call_error_name(adm_call_error_t e)
{
    switch (e) {
    case ADM_CALL_OK:
        return "ok";
    case ADM_CALL_DNS:
        return "dns";
    case ADM_CALL_CONNECT:
        return "connect";
    case ADM_CALL_TLS:
        return "tls";
    case ADM_CALL_IO:
        return "io";
    case ADM_CALL_PROTOCOL:
        return "protocol";
    case ADM_CALL_TIMEOUT:
        return "timeout";
    case ADM_CALL_NOMEM:
        return "nomem";
    }
    return "unknown";
}

/* ---- freeing ------------------------------------------------------------------------------- */

static void upstream_free_if_done(adm_upstream_t *u)
{
    if (!u->closing || u->pending_closes > 0 || u->conns != NULL || u->ndeferred > 0) {
        return;
    }
    adm_tls_ctx_unref(u->tls);
    free(u->host);
    free(u->host_header);
    free(u->dial_host);
    free(u);
}

static void on_call_timer_closed(uv_handle_t *h)
{
    adm_call_t *call = h->data;
    adm_upstream_t *u = call->up;

    adm_buf_free(&call->request);
    free(call);
    u->pending_closes--;
    upstream_free_if_done(u);
}

/* Once the upstream is closing, every call object ends here when it is released. */
static void call_destroy(adm_call_t *call)
{
    call->up->pending_closes++;
    uv_close((uv_handle_t *)&call->timer, on_call_timer_closed);
}

static void call_release(adm_call_t *call)
{
    adm_upstream_t *u = call->up;

    call->active = false;
    call->cb = NULL;
    call->conn = NULL;
    if (u->closing) {
        call_destroy(call);
        return;
    }
    adm_buf_shrink(&call->request, KEEP_BYTES);
    call->next = u->free_calls;
    u->free_calls = call;
}

/* Drops one of the connection's pending callbacks (handle closes, a DNS lookup); the last one
   of a closing connection frees it. */
static void conn_unref(client_conn_t *c)
{
    adm_upstream_t *u = c->up;

    if (--c->pending_closes > 0 || c->state != CONN_CLOSING) {
        return;
    }
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        u->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    adm_tls_session_destroy(c->tls);
    adm_http_resp_parser_free(&c->resp);
    adm_buf_free(&c->plain);
    adm_buf_free(&c->out);
    adm_buf_free(&c->writing);
    free(c);
    upstream_free_if_done(u);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_unref(h->data);
}

/* ---- calls --------------------------------------------------------------------------------- */

static void wait_remove(adm_upstream_t *u, adm_call_t *call)
{
    if (call->prev != NULL) {
        call->prev->next = call->next;
    } else {
        u->wait_head = call->next;
    }
    if (call->next != NULL) {
        call->next->prev = call->prev;
    } else {
        u->wait_tail = call->prev;
    }
    call->next = call->prev = NULL;
    call->queued = false;
    u->nwaiting--;
}

static void wait_push(adm_upstream_t *u, adm_call_t *call, bool front)
{
    call->queued = true;
    if (front) {
        call->prev = NULL;
        call->next = u->wait_head;
        if (u->wait_head != NULL) {
            u->wait_head->prev = call;
        } else {
            u->wait_tail = call;
        }
        u->wait_head = call;
    } else {
        call->next = NULL;
        call->prev = u->wait_tail;
        if (u->wait_tail != NULL) {
            u->wait_tail->next = call;
        } else {
            u->wait_head = call;
        }
        u->wait_tail = call;
    }
    u->nwaiting++;
}

static void on_call_deferred(uv_timer_t *t)
{
    adm_call_t *call = t->data;
    adm_upstream_t *u = call->up;
    adm_call_cb cb = call->cb;
    adm_call_result_t res = {0};

    call->deferred = false;
    u->ndeferred--;
    res.error = call->deferred_error;
    res.detail = call->detail;
    res.content_type = "";
    if (cb != NULL) {
        u->in_callback++;
        cb(&res, call->arg);
        u->in_callback--;
    }
    call_release(call);
}

/* Ends a call: no longer queued or bound, the callback told (unless abandoned), the object freed. */
static void finish_call(adm_call_t *call, const adm_call_result_t *res)
{
    adm_upstream_t *u = call->up;
    adm_call_cb cb = call->cb;

    if (call->queued) {
        wait_remove(u, call);
    }
    if (call->conn != NULL) {
        call->conn->call = NULL;
        call->conn = NULL;
    }
    uv_timer_stop(&call->timer);
    if (cb != NULL && u->in_post > 0 && res->error != ADM_CALL_OK) {
        /* the caller of adm_upstream_post does not hold the call yet: tell it on the next turn */
        if (res->detail != call->detail) {
            snprintf(call->detail, sizeof(call->detail), "%s", res->detail != NULL ? res->detail : "");
        }
        call->deferred = true;
        call->deferred_error = res->error;
        u->ndeferred++;
        uv_timer_start(&call->timer, on_call_deferred, 0, 0);
        return;
    }
    if (cb != NULL) {
        u->in_callback++;
        cb(res, call->arg);
        u->in_callback--;
    }
    call_release(call);
}

static void fail_call(adm_call_t *call, adm_call_error_t error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_call(adm_call_t *call, adm_call_error_t error, const char *fmt, ...)
{
    adm_call_result_t res = {0};
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(call->detail, sizeof(call->detail), fmt, ap);
    va_end(ap);
    res.error = error;
    res.detail = call->detail;
    res.content_type = "";
    finish_call(call, &res);
}

static void on_call_timeout(uv_timer_t *t)
{
    adm_call_t *call = t->data;
    client_conn_t *c = call->conn;

    /* A connection caught mid-answer cannot carry another call. */
    if (c != NULL) {
        c->call = NULL;
        call->conn = NULL;
        conn_close(c);
    }
    fail_call(call, ADM_CALL_TIMEOUT, "context deadline exceeded");
    maybe_dial(call->up);
}

static adm_call_t *call_get(adm_upstream_t *u)
{
    adm_call_t *call = u->free_calls;

    if (call != NULL) {
        u->free_calls = call->next;
        call->next = NULL;
        return call;
    }
    call = calloc(1, sizeof(*call));
    if (call == NULL) {
        return NULL;
    }
    call->up = u;
    uv_timer_init(u->loop, &call->timer);
    call->timer.data = call;
    u->ncalls++;
    return call;
}

/* ---- connections --------------------------------------------------------------------------- */

static void idle_remove(client_conn_t *c)
{
    adm_upstream_t *u = c->up;

    if (!c->idle) {
        return;
    }
    if (c->idle_prev != NULL) {
        c->idle_prev->idle_next = c->idle_next;
    } else {
        u->idle = c->idle_next;
    }
    if (c->idle_next != NULL) {
        c->idle_next->idle_prev = c->idle_prev;
    }
    c->idle_prev = c->idle_next = NULL;
    c->idle = false;
    u->nidle--;
}

static void conn_close(client_conn_t *c)
{
    adm_upstream_t *u = c->up;

    if (c->state == CONN_CLOSING) {
        return;
    }
    if (c->state != CONN_READY) {
        u->ndialing--;
    }
    c->state = CONN_CLOSING;
    idle_remove(c);
    u->nconns--;
    if (c->dns_pending) {
        /* on_resolved still runs (with UV_ECANCELED when the cancel takes) and drops its count */
        uv_cancel((uv_req_t *)&c->dns_req);
    }
    c->pending_closes += 2;
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

/* The connection failed: its call (if any) fails with it, unless a stale keep-alive connection
   is to blame, in which case the call goes back to the head of the queue for a fresh one. */
static void conn_fail(client_conn_t *c, adm_call_error_t error, const char *detail)
{
    adm_call_t *call = c->call;
    adm_upstream_t *u = c->up;

    if (call == NULL && c->state != CONN_READY && c->state != CONN_CLOSING) {
        dial_failed(c, error, detail); /* still dialing: the waiting calls hear of it */
        return;
    }
    if (call != NULL) {
        c->call = NULL;
        call->conn = NULL;
        if (c->reused && !c->answer_started && !call->retried && error == ADM_CALL_IO && !u->closing) {
            call->retried = true;
            adm_log_v(3, "%s:%u: kept-alive connection closed by the server (%s); sending again on a new one",
                      u->host, (unsigned)u->port, detail);
            conn_close(c);
            wait_push(u, call, true);
            maybe_dial(u);
            return;
        }
    }
    conn_close(c);
    if (call != NULL) {
        fail_call(call, error, "%s", detail);
    }
    maybe_dial(u);
}

static void on_write_done(uv_write_t *req, int status)
{
    client_conn_t *c = req->data;
    char detail[160];

    c->write_in_flight = false;
    c->writing.len = 0;
    if (c->state == CONN_CLOSING) {
        return;
    }
    if (status < 0) {
        snprintf(detail, sizeof(detail), "write tcp: %s", uv_strerror(status));
        conn_fail(c, ADM_CALL_IO, detail);
        return;
    }
    conn_flush(c);
}

static void conn_flush(client_conn_t *c)
{
    adm_buf_t *out = c->tls != NULL ? adm_tls_session_output(c->tls) : &c->out;
    uv_buf_t b;
    int n;
    char detail[160];

    if (c->state == CONN_CLOSING || c->write_in_flight || out->len == 0) {
        return;
    }
    b = uv_buf_init((char *)out->data, (unsigned)out->len);
    n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n == (int)out->len) {
        out->len = 0;
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        snprintf(detail, sizeof(detail), "write tcp: %s", uv_strerror(n));
        conn_fail(c, ADM_CALL_IO, detail);
        return;
    }
    if (n < 0) {
        n = 0;
    }
    adm_buf_swap(out, &c->writing);
    out->len = 0;
    b = uv_buf_init((char *)c->writing.data + n, (unsigned)(c->writing.len - (size_t)n));
    c->write_req.data = c;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write_done) != 0) {
        c->writing.len = 0;
        conn_fail(c, ADM_CALL_IO, "write tcp: cannot queue the write");
        return;
    }
    c->write_in_flight = true;
}

/* Binds call to the ready connection c and sends its request. */
static void conn_start_call(client_conn_t *c, adm_call_t *call)
{
    int rc;

    idle_remove(c);
    uv_timer_stop(&c->timer);
    c->call = call;
    call->conn = c;
    c->answer_started = false;
    if (c->tls != NULL) {
        rc = adm_tls_session_send(c->tls, call->request.data, call->request.len);
    } else {
        rc = adm_buf_append(&c->out, call->request.data, call->request.len);
    }
    if (rc != 0) {
        conn_fail(c, ADM_CALL_NOMEM, "out of memory");
        return;
    }
    conn_flush(c);
}

static void on_idle_timeout(uv_timer_t *t)
{
    client_conn_t *c = t->data;

    if (c->call == NULL) {
        adm_log_v(3, "%s:%u: closing %s connection", c->up->host, (unsigned)c->up->port,
                  c->state == CONN_READY ? "idle" : "unfinished");
        conn_close(c);
        maybe_dial(c->up);
    }
}

/* c is ready and free: the oldest waiting call takes it, or it waits in the idle list. */
static void conn_available(client_conn_t *c)
{
    adm_upstream_t *u = c->up;

    if (c->state != CONN_READY || c->call != NULL) {
        return;
    }
    if (u->closing) {
        conn_close(c);
        return;
    }
    if (u->wait_head != NULL) {
        adm_call_t *call = u->wait_head;

        wait_remove(u, call);
        conn_start_call(c, call);
        return;
    }
    c->idle = true;
    c->idle_prev = NULL;
    c->idle_next = u->idle;
    if (u->idle != NULL) {
        u->idle->idle_prev = c;
    }
    u->idle = c;
    u->nidle++;
    uv_timer_start(&c->timer, on_idle_timeout, u->idle_timeout_ms, 0);
}

static void conn_ready(client_conn_t *c)
{
    c->state = CONN_READY;
    c->up->ndialing--;
    conn_available(c);
}

/* A whole answer is in: hand it over, then keep the connection if both sides allow it. */
static void conn_answer(client_conn_t *c)
{
    adm_call_t *call = c->call;
    adm_upstream_t *u = c->up;
    adm_call_result_t res = {0};
    bool keep = c->resp.keep_alive;

    res.error = ADM_CALL_OK;
    res.status = c->resp.status;
    res.content_type = c->resp.content_type;
    res.body = c->resp.body.data;
    res.body_len = c->resp.body.len;
    res.reused = c->reused;
    c->reused = true;
    finish_call(call, &res);
    if (c->state == CONN_CLOSING) {
        return;
    }
    adm_http_resp_next(&c->resp);
    adm_buf_shrink(&c->resp.body, KEEP_BYTES);
    if (!keep || c->plain.len > 0 || u->closing) {
        /* bytes past the answer were never asked for: the connection's framing is lost */
        conn_close(c);
        maybe_dial(u);
        return;
    }
    conn_available(c);
    maybe_dial(u);
}

static void parse_answer(client_conn_t *c)
{
    size_t used;
    adm_http_resp_event_t ev;
    char detail[200];

    if (c->plain.len == 0) {
        return;
    }
    if (c->call == NULL) {
        /* An answer to nothing: the server is confused; do not reuse the connection. */
        conn_close(c);
        maybe_dial(c->up);
        return;
    }
    c->answer_started = true;
    ev = adm_http_resp_parse(&c->resp, c->plain.data, c->plain.len, &used);
    adm_buf_consume(&c->plain, used);
    if (ev == ADM_HTTP_RESP_DONE) {
        conn_answer(c);
    } else if (ev == ADM_HTTP_RESP_ERROR) {
        snprintf(detail, sizeof(detail), "net/http: HTTP/1.x transport connection broken: malformed HTTP response (%s)",
                 c->resp.error);
        conn_fail(c, ADM_CALL_PROTOCOL, detail);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char chunk[READ_CHUNK]; /* one loop thread: reads are handled one at a time */

    (void)h;
    (void)suggested;
    buf->base = chunk;
    buf->len = sizeof(chunk);
}

static void on_eof(client_conn_t *c, ssize_t nread)
{
    char detail[160];

    if (c->state != CONN_READY) {
        snprintf(detail, sizeof(detail), "tls: handshake failed: %s",
                 nread == UV_EOF ? "EOF" : uv_strerror((int)nread));
        dial_failed(c, ADM_CALL_TLS, detail);
        return;
    }
    if (c->call == NULL) {
        conn_close(c); /* the server closed an idle connection: it is simply gone */
        maybe_dial(c->up);
        return;
    }
    if (nread == UV_EOF && c->answer_started && adm_http_resp_eof(&c->resp) == ADM_HTTP_RESP_DONE) {
        c->resp.keep_alive = false;
        conn_answer(c);
        return;
    }
    if (nread == UV_EOF) {
        conn_fail(c, ADM_CALL_IO, "EOF");
    } else {
        snprintf(detail, sizeof(detail), "read tcp: %s", uv_strerror((int)nread));
        conn_fail(c, ADM_CALL_IO, detail);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    client_conn_t *c = stream->data;
    char detail[300];
    int rc;

    if (nread == 0 || c->state == CONN_CLOSING) {
        return;
    }
    if (nread < 0) {
        on_eof(c, nread);
        return;
    }
    if (c->tls == NULL) {
        if (adm_buf_append(&c->plain, buf->base, (size_t)nread) != 0) {
            conn_fail(c, ADM_CALL_NOMEM, "out of memory");
            return;
        }
        parse_answer(c);
        return;
    }
    rc = adm_tls_session_recv(c->tls, (const uint8_t *)buf->base, (size_t)nread, &c->plain);
    if (rc == ADM_ETLS || rc == ADM_ENOMEM) {
        bool handshaking = c->state == CONN_HANDSHAKE;

        snprintf(detail, sizeof(detail), "%s%s", handshaking ? "tls: " : "local error: tls: ",
                 adm_tls_session_error(c->tls));
        conn_flush(c); /* the alert mbedTLS queued */
        conn_fail(c, handshaking ? ADM_CALL_TLS : ADM_CALL_IO, detail);
        return;
    }
    conn_flush(c);
    if (c->state == CONN_CLOSING) {
        return;
    }
    if (c->state == CONN_HANDSHAKE && adm_tls_session_handshake_done(c->tls)) {
        conn_ready(c);
        if (c->state == CONN_CLOSING) {
            return;
        }
    }
    parse_answer(c);
    if (rc == ADM_EOF && c->state != CONN_CLOSING) {
        on_eof(c, UV_EOF);
    }
}

static void dial_failed(client_conn_t *c, adm_call_error_t error, const char *detail)
{
    adm_upstream_t *u = c->up;
    adm_call_t *call = u->wait_head;

    conn_close(c);
    /* The dial was made for the waiting calls; the oldest one hears why it failed. */
    if (call != NULL && u->ndialing < u->nwaiting) {
        fail_call(call, error, "%s", detail);
    }
    maybe_dial(u);
}

static void try_connect(client_conn_t *c);

static void on_connect(uv_connect_t *req, int status)
{
    client_conn_t *c = req->data;
    char addr[64];
    char detail[200];

    if (c->state == CONN_CLOSING) {
        return;
    }
    if (status < 0) {
        adm_format_addr((const struct sockaddr *)&c->addrs[c->addr_index], addr, sizeof(addr));
        if (c->addr_index + 1 < c->naddrs) {
            /* The handle is spent after a failed connect: the next address gets a new connection. */
            adm_upstream_t *u = c->up;
            client_conn_t *next = calloc(1, sizeof(*next));

            adm_log_v(2, "%s:%u: connect to %s failed (%s); trying the next address", u->host, (unsigned)u->port, addr,
                      uv_strerror(status));
            if (next != NULL) {
                memcpy(next->addrs, c->addrs, sizeof(c->addrs));
                next->naddrs = c->naddrs;
                next->addr_index = c->addr_index + 1;
                next->up = u;
                conn_close(c);
                try_connect(next);
                return;
            }
        }
        snprintf(detail, sizeof(detail), "dial tcp %s: connect: %s", addr, uv_strerror(status));
        dial_failed(c, ADM_CALL_CONNECT, detail);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        dial_failed(c, ADM_CALL_IO, "read tcp: cannot start reading");
        return;
    }
    if (c->tls == NULL) {
        conn_ready(c);
        return;
    }
    c->state = CONN_HANDSHAKE;
    if (adm_tls_session_start(c->tls) != 0) {
        snprintf(detail, sizeof(detail), "tls: %s", adm_tls_session_error(c->tls));
        dial_failed(c, ADM_CALL_TLS, detail);
        return;
    }
    conn_flush(c);
}

static void on_dial_timeout(uv_timer_t *t)
{
    client_conn_t *c = t->data;

    dial_failed(c, ADM_CALL_TIMEOUT, "context deadline exceeded");
}

/* Links c (allocated, addresses filled) into the upstream and connects to its current address. */
static void conn_link(client_conn_t *c)
{
    adm_upstream_t *u = c->up;

    uv_tcp_init(u->loop, &c->tcp);
    uv_timer_init(u->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->next = u->conns;
    if (u->conns != NULL) {
        u->conns->prev = c;
    }
    u->conns = c;
    u->nconns++;
    u->ndialing++;
    adm_http_resp_parser_init(&c->resp, u->max_body_bytes);
    uv_timer_start(&c->timer, on_dial_timeout, DIAL_TIMEOUT_MS, 0);
}

/* Connects the linked connection c to its current address. */
static void start_connect(client_conn_t *c)
{
    adm_upstream_t *u = c->up;
    int rc;

    c->state = CONN_CONNECTING;
    if (u->tls != NULL && adm_tls_session_create(u->tls, u->host, &c->tls) != 0) {
        dial_failed(c, ADM_CALL_NOMEM, "tls: cannot create a session");
        return;
    }
    c->connect_req.data = c;
    rc = uv_tcp_connect(&c->connect_req, &c->tcp, (const struct sockaddr *)&c->addrs[c->addr_index], on_connect);
    if (rc != 0) {
        char addr[64];
        char detail[200];

        adm_format_addr((const struct sockaddr *)&c->addrs[c->addr_index], addr, sizeof(addr));
        snprintf(detail, sizeof(detail), "dial tcp %s: connect: %s", addr, uv_strerror(rc));
        dial_failed(c, ADM_CALL_CONNECT, detail);
    }
}

static void try_connect(client_conn_t *c)
{
    conn_link(c);
    start_connect(c);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    client_conn_t *c = req->data;
    adm_upstream_t *u = c->up;
    char detail[300];

    c->dns_pending = false;
    if (c->state == CONN_CLOSING) {
        uv_freeaddrinfo(res);
        conn_unref(c);
        return;
    }
    c->pending_closes--;
    if (status < 0) {
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: %s", u->dial_host, uv_strerror(status));
        uv_freeaddrinfo(res);
        dial_failed(c, ADM_CALL_DNS, detail);
        return;
    }
    c->naddrs = 0;
    for (struct addrinfo *ai = res; ai != NULL && c->naddrs < MAX_ADDRS; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
            memcpy(&c->addrs[c->naddrs++], ai->ai_addr, ai->ai_addrlen);
        }
    }
    uv_freeaddrinfo(res);
    if (c->naddrs == 0) {
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: no such host", u->dial_host);
        dial_failed(c, ADM_CALL_DNS, detail);
        return;
    }
    start_connect(c);
}

static bool ip_literal(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    return uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0 || uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0;
}

static void dial(adm_upstream_t *u)
{
    client_conn_t *c = calloc(1, sizeof(*c));
    struct sockaddr_storage ss;
    struct addrinfo hints = {0};
    char port[8];

    if (c == NULL) {
        return;
    }
    c->up = u;
    u->dials++;
    if (u->has_fixed_addr || ip_literal(u->dial_host, u->port, &ss)) {
        c->addrs[0] = u->has_fixed_addr ? u->fixed_addr : ss;
        c->naddrs = 1;
        try_connect(c);
        return;
    }
    conn_link(c);
    c->state = CONN_RESOLVING;
    c->dns_req.data = c;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", (unsigned)u->port);
    c->dns_pending = true;
    c->pending_closes++;
    if (uv_getaddrinfo(u->loop, &c->dns_req, on_resolved, u->dial_host, port, &hints) != 0) {
        char detail[300];

        c->dns_pending = false;
        c->pending_closes--;
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: cannot start the lookup", u->dial_host);
        dial_failed(c, ADM_CALL_DNS, detail);
    }
}

/* One dial per waiting call that no dial in progress will serve, within the bound. */
static void maybe_dial(adm_upstream_t *u)
{
    /* A dial that fails at once fails a waiting call and lands here again: the loop goes on. */
    if (u->in_maybe_dial) {
        return;
    }
    u->in_maybe_dial = true;
    while (!u->closing && u->ndialing < u->nwaiting && u->nconns < u->max_conns) {
        uint64_t before = u->dials;

        dial(u);
        if (u->dials == before) {
            break; /* out of memory: the waiting calls time out */
        }
    }
    u->in_maybe_dial = false;
}

/* ---- public -------------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

int adm_upstream_create(uv_loop_t *loop, const adm_upstream_opts_t *opts, adm_upstream_t **out)
{
    adm_upstream_t *u = calloc(1, sizeof(*u));
    bool default_port = opts->port == (opts->tls != NULL ? 443 : 80);

    if (u == NULL) {
        return ADM_ENOMEM;
    }
    u->loop = loop;
    u->port = opts->port;
    u->host = dup_or_null(opts->host);
    u->dial_host = dup_or_null(opts->dial_host != NULL ? opts->dial_host : opts->host);
    u->host_header = malloc(strlen(opts->host) + 16);
    if (u->host == NULL || u->dial_host == NULL || u->host_header == NULL) {
        free(u->host);
        free(u->dial_host);
        free(u->host_header);
        free(u);
        return ADM_ENOMEM;
    }
    if (default_port) {
        snprintf(u->host_header, strlen(opts->host) + 16, "%s", opts->host);
    } else if (strchr(opts->host, ':') != NULL) {
        snprintf(u->host_header, strlen(opts->host) + 16, "[%s]:%u", opts->host, (unsigned)opts->port);
    } else {
        snprintf(u->host_header, strlen(opts->host) + 16, "%s:%u", opts->host, (unsigned)opts->port);
    }
    if (opts->addr != NULL) {
        size_t len = opts->addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

        memcpy(&u->fixed_addr, opts->addr, len);
        u->has_fixed_addr = true;
    }
    u->tls = opts->tls;
    if (u->tls != NULL) {
        adm_tls_ctx_ref(u->tls);
    }
    u->max_conns = opts->max_conns != 0 ? opts->max_conns : DEFAULT_MAX_CONNS;
    u->max_body_bytes = opts->max_body_bytes != 0 ? opts->max_body_bytes : DEFAULT_MAX_BODY;
    u->idle_timeout_ms = opts->idle_timeout_ms != 0 ? opts->idle_timeout_ms : DEFAULT_IDLE_MS;
    *out = u;
    return 0;
}

adm_call_t *adm_upstream_post(adm_upstream_t *u, const char *path, const char *extra_headers, const void *body,
                              size_t body_len, uint64_t timeout_ms, adm_call_cb cb, void *arg)
{
    adm_call_t *call;

    if (u->closing || (call = call_get(u)) == NULL) {
        return NULL;
    }
    call->request.len = 0;
    if (adm_http_write_post(&call->request, u->host_header, path, extra_headers, body, body_len) != 0) {
        call_release(call);
        return NULL;
    }
    call->cb = cb;
    call->arg = arg;
    call->retried = false;
    call->active = true;
    call->deferred = false;
    call->detail[0] = '\0';
    uv_timer_start(&call->timer, on_call_timeout, timeout_ms != 0 ? timeout_ms : DEFAULT_CALL_MS, 0);
    u->in_post++;
    if (u->idle != NULL) {
        conn_start_call(u->idle, call);
    } else {
        wait_push(u, call, false);
        /* Posted from an answer's callback, the call may take that answer's connection, which
           frees up right after: every path that ends a call dials for what is still waiting. */
        if (u->in_callback == 0) {
            maybe_dial(u);
        }
    }
    u->in_post--;
    return call;
}

void adm_call_abandon(adm_call_t *call)
{
    if (call == NULL || !call->active) {
        return;
    }
    call->cb = NULL;
    if (call->queued) {
        wait_remove(call->up, call);
        uv_timer_stop(&call->timer);
        call_release(call);
    }
}

void adm_call_redirect(adm_call_t *call, adm_call_cb cb, void *arg)
{
    if (call == NULL || !call->active) {
        return;
    }
    call->cb = cb;
    call->arg = arg;
}

void adm_upstream_close(adm_upstream_t *u)
{
    adm_call_t *call;
    client_conn_t *c, *next;

    if (u->closing) {
        return;
    }
    u->closing = true;
    for (c = u->conns; c != NULL; c = next) {
        next = c->next;
        if (c->state == CONN_CLOSING) {
            continue;
        }
        call = c->call;
        if (call != NULL) {
            c->call = NULL;
            call->conn = NULL;
        }
        conn_close(c);
        if (call != NULL) {
            fail_call(call, ADM_CALL_IO, "upstream closed");
        }
    }
    while ((call = u->wait_head) != NULL) {
        fail_call(call, ADM_CALL_IO, "upstream closed");
    }
    while ((call = u->free_calls) != NULL) {
        u->free_calls = call->next;
        call_destroy(call);
    }
    upstream_free_if_done(u);
}

size_t adm_upstream_connections(const adm_upstream_t *u)
{
    return u->nconns;
}

size_t adm_upstream_idle_connections(const adm_upstream_t *u)
{
    return u->nidle;
}

uint64_t adm_upstream_dials(const adm_upstream_t *u)
{
    return u->dials;
}

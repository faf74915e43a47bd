/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connections of one upstream (upstream_conn.h), below the pool of upstream.c: resolving the
 * name (or taking the fixed or literal address) and trying each address in turn, connecting, the
 * TLS handshake, sending a call's request, reading and parsing its answer, and the idle watch.
 * It reports through the owner's callbacks (set->events) and decides nothing about calls.
 *
 * Idle connections keep reading, so one the server closed is noticed and dropped before it is
 * handed out. A connection that broke under a call says whether it was stale (reused, and no byte
 * of this answer came), the one case in which the pool sends the call again.
 */
#include "upstream_conn.h"

#include "adm/base/admission_metrics.h"
#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/net/http_client.h"
#include "adm/net/tls_session.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dial (DNS, connect, handshake) with no call left waiting for it gives up after this long. */
#define DIAL_TIMEOUT_MS 30000

static void conn_flush(adm_upstream_conn_t *c);
static void dial_failed(adm_upstream_conn_t *c, adm_call_error_t error, const char *detail);

/* ---- freeing ------------------------------------------------------------------------------- */

/* Drops one of the connection's pending callbacks (handle closes, a DNS lookup); the last one
   of a closing connection frees it. */
static void conn_unref(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;

    if (--c->pending_closes > 0 || c->state != CONN_CLOSING) {
        return;
    }
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        set->all = c->next;
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
    set->events->freed(set);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_unref(h->data);
}

/* ---- state --------------------------------------------------------------------------------- */

static void idle_remove(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;

    if (!c->idle) {
        return;
    }
    if (c->idle_prev != NULL) {
        c->idle_prev->idle_next = c->idle_next;
    } else {
        set->idle = c->idle_next;
    }
    if (c->idle_next != NULL) {
        c->idle_next->idle_prev = c->idle_prev;
    }
    c->idle_prev = c->idle_next = NULL;
    c->idle = false;
    set->nidle--;
}

void adm__upstream_conn_close(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;

    if (c->state == CONN_CLOSING) {
        return;
    }
    if (c->state != CONN_READY) {
        set->ndialing--;
    }
    c->state = CONN_CLOSING;
    idle_remove(c);
    set->nconns--;
    adm_metrics_client_conn(-1);
    if (c->dns_pending) {
        /* on_resolved still runs (with UV_ECANCELED when the cancel takes) and drops its count */
        uv_cancel((uv_req_t *)&c->dns_req);
    }
    c->pending_closes += 2;
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

/*
 * The connection failed. Still dialing, it is a failed dial. Otherwise its call (if any) goes back
 * to the owner, which sends it again when a stale keep-alive connection is to blame.
 */
static void conn_fail(adm_upstream_conn_t *c, adm_call_error_t error, const char *detail)
{
    struct adm_call_s *call = c->call;
    adm_upstream_conn_set_t *set = c->set;
    bool stale;

    if (call == NULL && c->state != CONN_READY && c->state != CONN_CLOSING) {
        dial_failed(c, error, detail); /* still dialing: the waiting calls hear of it */
        return;
    }
    /* Stale: a kept-alive connection that the server closed as the request went out. */
    stale = c->reused && !c->answer_started && error == ADM_CALL_IO;
    c->call = NULL;
    adm__upstream_conn_close(c);
    if (call != NULL) {
        set->events->broken(call, stale, error, detail);
    }
    set->events->may_dial(set);
}

static void on_write_done(uv_write_t *req, int status)
{
    adm_upstream_conn_t *c = req->data;
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

static void conn_flush(adm_upstream_conn_t *c)
{
    adm_buf_t *out = c->tls != NULL ? adm_tls_session_output(c->tls) : &c->out;
    uv_buf_t b;
    int n;
    char detail[160];

    if (c->state == CONN_CLOSING || c->write_in_flight || out->len == 0) {
        return;
    }
    b = uv_buf_init((char *)out->data, (unsigned)out->len);
    c->set->writes++;
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
    c->set->writes++;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write_done) != 0) {
        c->writing.len = 0;
        conn_fail(c, ADM_CALL_IO, "write tcp: cannot queue the write");
        return;
    }
    c->write_in_flight = true;
}

/*
 * The TLS session's sink (adm_tls_session_set_sink): a request's record goes to the socket from
 * mbedTLS's buffer, without a copy into the session's output. What the socket does not take, or a
 * write error, stays queued there, and conn_flush carries on with it (and reports the error).
 */
static size_t conn_sink(void *arg, const uint8_t *p, size_t len)
{
    adm_upstream_conn_t *c = arg;
    uv_buf_t b;
    int n;

    if (c->write_in_flight || c->state == CONN_CLOSING || len > UINT32_MAX) {
        return 0;
    }
    b = uv_buf_init((char *)p, (unsigned)len);
    c->set->writes++;
    n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    return n > 0 ? (size_t)n : 0;
}

void adm__upstream_conn_start_call(adm_upstream_conn_t *c, struct adm_call_s *call, const uint8_t *request,
                                   size_t len)
{
    int rc;

    /* The idle timer keeps running: it re-arms itself while the connection is busy (on_idle_timeout). */
    idle_remove(c);
    c->call = call;
    c->answer_started = false;
    if (c->tls != NULL) {
        rc = adm_tls_session_send(c->tls, request, len);
    } else {
        rc = adm_buf_append(&c->out, request, len);
    }
    if (rc != 0) {
        conn_fail(c, ADM_CALL_NOMEM, "out of memory");
        return;
    }
    conn_flush(c);
}

/*
 * Not stopped when a call takes the connection nor restarted when it parks again, so a call costs
 * no timer work: when it fires, a connection that was busy since, or parked later, waits out the
 * rest of its own idle time.
 */
static void on_idle_timeout(uv_timer_t *t)
{
    adm_upstream_conn_t *c = t->data;
    uint64_t now = uv_now(c->set->loop);
    uint64_t idle_for = now - c->idle_since;

    if (!c->idle) {
        return; /* busy: its next park arms the timer again */
    }
    if (idle_for < c->set->idle_timeout_ms) {
        uv_timer_start(&c->timer, on_idle_timeout, c->set->idle_timeout_ms - idle_for, 0);
        return;
    }
    if (c->call == NULL) {
        adm_log_v(3, "%s:%u: closing %s connection", c->set->host, (unsigned)c->set->port,
                  c->state == CONN_READY ? "idle" : "unfinished");
        adm__upstream_conn_close(c);
        c->set->events->may_dial(c->set);
    }
}

void adm__upstream_conn_park(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;

    c->idle = true;
    c->idle_prev = NULL;
    c->idle_next = set->idle;
    if (set->idle != NULL) {
        set->idle->idle_prev = c;
    }
    set->idle = c;
    set->nidle++;
    c->idle_since = uv_now(set->loop);
    if (!uv_is_active((uv_handle_t *)&c->timer)) {
        uv_timer_start(&c->timer, on_idle_timeout, set->idle_timeout_ms, 0);
    }
}

static void conn_ready(adm_upstream_conn_t *c)
{
    uv_timer_stop(&c->timer); /* the dial deadline; parking arms the idle one */
    c->state = CONN_READY;
    c->set->ndialing--;
    c->set->events->ready(c);
}

/* ---- reading ------------------------------------------------------------------------------- */

/* A whole answer is in: hand it over, then keep the connection if both sides allow it. */
static void conn_answer(adm_upstream_conn_t *c)
{
    struct adm_call_s *call = c->call;
    adm_upstream_conn_set_t *set = c->set;
    adm_call_result_t res = {0};
    bool keep = c->resp.keep_alive;

    res.error = ADM_CALL_OK;
    res.status = c->resp.status;
    res.content_type = c->resp.content_type;
    res.retry_after = c->resp.retry_after;
    res.body = c->resp.body.data;
    res.body_len = c->resp.body.len;
    res.reused = c->reused;
    c->reused = true;
    c->call = NULL;
    set->events->answered(call, &res);
    if (c->state == CONN_CLOSING) {
        return;
    }
    adm_http_resp_next(&c->resp);
    adm_buf_shrink(&c->resp.body, UPSTREAM_KEEP_BYTES);
    if (!keep || c->plain.len > 0) {
        /* bytes past the answer were never asked for: the connection's framing is lost */
        adm__upstream_conn_close(c);
    } else {
        set->events->ready(c);
    }
    set->events->may_dial(set);
}

/* Room for Go's words on a malformed first line: the line (at most 511 bytes) quoted. */
#define ANSWER_DETAIL_MAX 700

/* What Go's transport says of an answer whose first line it cannot read; false for other faults. */
static bool malformed_detail(const adm_upstream_conn_t *c, char *out, size_t cap)
{
    static const char broken[] = "net/http: HTTP/1.x transport connection broken: ";

    if (cap <= sizeof(broken)) {
        return false;
    }
    memcpy(out, broken, sizeof(broken));
    return adm_http_resp_go_error(&c->resp, out + sizeof(broken) - 1, cap - sizeof(broken) + 1);
}

static void parse_answer(adm_upstream_conn_t *c)
{
    size_t used;
    adm_http_resp_event_t ev;
    char detail[ANSWER_DETAIL_MAX];

    if (c->plain.len == 0) {
        return;
    }
    if (c->call == NULL) {
        /* An answer to nothing: the server is confused; do not reuse the connection. */
        adm__upstream_conn_close(c);
        c->set->events->may_dial(c->set);
        return;
    }
    c->answer_started = true;
    ev = adm_http_resp_parse(&c->resp, c->plain.data, c->plain.len, &used);
    adm_buf_consume(&c->plain, used);
    if (ev == ADM_HTTP_RESP_DONE) {
        conn_answer(c);
    } else if (ev == ADM_HTTP_RESP_ERROR && malformed_detail(c, detail, sizeof(detail))) {
        conn_fail(c, ADM_CALL_PROTOCOL, detail);
    } else if (ev == ADM_HTTP_RESP_ERROR) {
        snprintf(detail, sizeof(detail),
                 "net/http: HTTP/1.x transport connection broken: malformed HTTP response (%s)",
                 c->resp.error);
        conn_fail(c, ADM_CALL_PROTOCOL, detail);
    }
}

/* Every connection of a set reads into the set's one buffer (see read_buf). */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    adm_upstream_conn_t *c = h->data;

    (void)suggested;
    buf->base = c->set->read_buf;
    buf->len = sizeof(c->set->read_buf);
}

static void on_eof(adm_upstream_conn_t *c, ssize_t nread)
{
    char detail[ANSWER_DETAIL_MAX];

    if (c->state != CONN_READY) {
        snprintf(detail, sizeof(detail), "tls: handshake failed: %s",
                 nread == UV_EOF ? "EOF" : uv_strerror((int)nread));
        dial_failed(c, ADM_CALL_TLS, detail);
        return;
    }
    if (c->call == NULL) {
        adm__upstream_conn_close(c); /* the server closed an idle connection: it is simply gone */
        c->set->events->may_dial(c->set);
        return;
    }
    if (nread == UV_EOF && c->answer_started && adm_http_resp_eof(&c->resp) == ADM_HTTP_RESP_DONE) {
        c->resp.keep_alive = false;
        conn_answer(c);
        return;
    }
    if (nread == UV_EOF && c->answer_started && malformed_detail(c, detail, sizeof(detail))) {
        conn_fail(c, ADM_CALL_PROTOCOL, detail);
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
    adm_upstream_conn_t *c = stream->data;
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

        snprintf(detail, sizeof(detail), "%s%s",
                 handshaking ? "tls: " : "local error: tls: ", adm_tls_session_error(c->tls));
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

/* ---- dialing ------------------------------------------------------------------------------- */

static void dial_failed(adm_upstream_conn_t *c, adm_call_error_t error, const char *detail)
{
    adm_upstream_conn_set_t *set = c->set;

    adm__upstream_conn_close(c);
    set->events->dial_failed(set, error, detail);
}

static void try_connect(adm_upstream_conn_t *c);

static void on_connect(uv_connect_t *req, int status)
{
    adm_upstream_conn_t *c = req->data;
    char addr[64];
    char detail[200];

    if (c->state == CONN_CLOSING) {
        return;
    }
    if (status < 0) {
        adm_format_addr((const struct sockaddr *)&c->addrs[c->addr_index], addr, sizeof(addr));
        if (c->addr_index + 1 < c->naddrs) {
            /* The handle is spent after a failed connect: the next address gets a new connection. */
            adm_upstream_conn_set_t *set = c->set;
            adm_upstream_conn_t *next = calloc(1, sizeof(*next));

            adm_log_v(2, "%s:%u: connect to %s failed (%s); trying the next address", set->host,
                      (unsigned)set->port, addr, uv_strerror(status));
            if (next != NULL) {
                memcpy(next->addrs, c->addrs, sizeof(c->addrs));
                next->naddrs = c->naddrs;
                next->addr_index = c->addr_index + 1;
                next->set = set;
                adm__upstream_conn_close(c);
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
    adm_upstream_conn_t *c = t->data;

    dial_failed(c, ADM_CALL_TIMEOUT, "context deadline exceeded");
}

/* Links c (allocated, addresses filled) into the upstream and connects to its current address. */
static void conn_link(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;

    uv_tcp_init(set->loop, &c->tcp);
    uv_timer_init(set->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->next = set->all;
    if (set->all != NULL) {
        set->all->prev = c;
    }
    set->all = c;
    set->nconns++;
    adm_metrics_client_conn(1);
    set->ndialing++;
    adm_http_resp_parser_init(&c->resp, set->max_body_bytes);
    uv_timer_start(&c->timer, on_dial_timeout, DIAL_TIMEOUT_MS, 0);
}

/* Connects the linked connection c to its current address. */
static void start_connect(adm_upstream_conn_t *c)
{
    adm_upstream_conn_set_t *set = c->set;
    int rc;

    c->state = CONN_CONNECTING;
    if (set->tls != NULL && adm_tls_session_create(set->tls, set->host, &c->tls) != 0) {
        dial_failed(c, ADM_CALL_NOMEM, "tls: cannot create a session");
        return;
    }
    if (c->tls != NULL) {
        adm_tls_session_set_sink(c->tls, conn_sink, c);
    }
    c->connect_req.data = c;
    rc = uv_tcp_connect(&c->connect_req, &c->tcp, (const struct sockaddr *)&c->addrs[c->addr_index],
                        on_connect);
    if (rc != 0) {
        char addr[64];
        char detail[200];

        adm_format_addr((const struct sockaddr *)&c->addrs[c->addr_index], addr, sizeof(addr));
        snprintf(detail, sizeof(detail), "dial tcp %s: connect: %s", addr, uv_strerror(rc));
        dial_failed(c, ADM_CALL_CONNECT, detail);
    }
}

static void try_connect(adm_upstream_conn_t *c)
{
    conn_link(c);
    start_connect(c);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    adm_upstream_conn_t *c = req->data;
    adm_upstream_conn_set_t *set = c->set;
    char detail[300];

    c->dns_pending = false;
    if (c->state == CONN_CLOSING) {
        uv_freeaddrinfo(res);
        conn_unref(c);
        return;
    }
    c->pending_closes--;
    if (status < 0) {
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: %s", set->dial_host, uv_strerror(status));
        uv_freeaddrinfo(res);
        dial_failed(c, ADM_CALL_DNS, detail);
        return;
    }
    c->naddrs = 0;
    for (struct addrinfo *ai = res; ai != NULL && c->naddrs < UPSTREAM_MAX_ADDRS; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
            memcpy(&c->addrs[c->naddrs++], ai->ai_addr, ai->ai_addrlen);
        }
    }
    uv_freeaddrinfo(res);
    if (c->naddrs == 0) {
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: no such host", set->dial_host);
        dial_failed(c, ADM_CALL_DNS, detail);
        return;
    }
    start_connect(c);
}

static bool ip_literal(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    return uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0 ||
           uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0;
}

int adm__upstream_conn_dial(adm_upstream_conn_set_t *set)
{
    adm_upstream_conn_t *c = calloc(1, sizeof(*c));
    struct sockaddr_storage ss;
    struct addrinfo hints = {0};
    char port[8];

    if (c == NULL) {
        return ADM_ENOMEM;
    }
    c->set = set;
    set->dials++;
    if (set->has_fixed_addr || ip_literal(set->dial_host, set->port, &ss)) {
        c->addrs[0] = set->has_fixed_addr ? set->fixed_addr : ss;
        c->naddrs = 1;
        try_connect(c);
        return 0;
    }
    conn_link(c);
    c->state = CONN_RESOLVING;
    c->dns_req.data = c;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", (unsigned)set->port);
    c->dns_pending = true;
    c->pending_closes++;
    if (uv_getaddrinfo(set->loop, &c->dns_req, on_resolved, set->dial_host, port, &hints) != 0) {
        char detail[300];

        c->dns_pending = false;
        c->pending_closes--;
        snprintf(detail, sizeof(detail), "dial tcp: lookup %s: cannot start the lookup", set->dial_host);
        dial_failed(c, ADM_CALL_DNS, detail);
    }
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client connection: TLS (or plain) bytes in, HTTP requests out to the router, answers back.
 *
 * Reads land in the server's shared buffer, are decrypted (or copied) into the connection's input
 * buffer, and every complete request in that read is answered before anything is written: all
 * answers of a read go out as one TLS flight in one write, so a pipelining client costs one read and
 * one write per batch. Requests are answered strictly in order.
 *
 * Lifetimes follow libuv's rule: a connection is freed only when the close callbacks of its TCP
 * handle and its timer have both run; a write in flight is cancelled by uv_close and its callback
 * runs first.
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_FIRST_CHUNK (8 * 1024) /* request heads; the body is parsed in the exchange's arena */
/* Input buffer capacity kept between requests; larger buffers are freed when idle. */
#define IN_KEEP_BYTES (256 * 1024)

static void flush(adm_conn_t *c);
static void process_input(adm_conn_t *c);
static void resume_reading(adm_conn_t *c);

static void on_handle_closed(uv_handle_t *h)
{
    adm_conn_t *c = h->data;
    adm_server_t *s = c->server;

    if (--c->pending_closes > 0) {
        return;
    }
    adm_tls_session_destroy(c->tls);
    adm_arena_destroy(c->arena);
    adm_buf_free(&c->in);
    adm_buf_free(&c->pending);
    adm_buf_free(&c->writing);
    free(c);
    adm__server_conn_freed(s);
}

static void unlink_conn(adm_conn_t *c)
{
    adm_server_t *s = c->server;

    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        s->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->prev = c->next = NULL;
    s->nconns--;
    s->metrics.server_connections--;
}

/* The exchange is over (answered, aborted or cancelled): its arena goes back to the pool. */
static void end_exchange(adm_conn_t *c)
{
    adm_exchange_t *x = &c->x;

    c->awaiting = false;
    x->on_cancel = NULL;
    if (x->arena != NULL) {
        adm__server_arena_put(c->server, x->arena);
        x->arena = NULL;
    }
}

/* The answer can no longer be delivered: the handler lets go of the request first (its state
   lives in the exchange's arena), then the arena is released. */
static void cancel_exchange(adm_conn_t *c)
{
    void (*cancel)(void *) = c->x.on_cancel;
    void *arg = c->x.cancel_arg;

    if (!c->awaiting) {
        return;
    }
    c->x.on_cancel = NULL;
    if (cancel != NULL) {
        cancel(arg);
    }
    end_exchange(c);
}

static void close_conn(adm_conn_t *c, bool reset)
{
    if (c->state == ADM_CONN_CLOSING) {
        return;
    }
    c->state = ADM_CONN_CLOSING;
    unlink_conn(c);
    cancel_exchange(c);
    c->pending_closes = 2;
    if (!reset || uv_tcp_close_reset(&c->tcp, on_handle_closed) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    }
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

void adm__conn_close_now(adm_conn_t *c)
{
    close_conn(c, false);
}

static bool request_in_progress(const adm_conn_t *c)
{
    return c->awaiting || c->request_started_ms != 0 || adm_http_parser_in_message(&c->http);
}

static bool output_pending(adm_conn_t *c)
{
    if (c->write_in_flight || c->pending.len > 0) {
        return true;
    }
    return c->tls != NULL && adm_tls_session_output(c->tls)->len > 0;
}

void adm__conn_close_if_idle(adm_conn_t *c)
{
    /* Once the listeners are closed, a connection still in its handshake has no request to finish. */
    bool handshake_ok = c->handshake_done || c->server->stopping;

    if (c->state == ADM_CONN_OPEN && handshake_ok && !request_in_progress(c) && !output_pending(c)) {
        adm__conn_close_now(c);
    }
}

static void on_timer(uv_timer_t *t)
{
    adm_conn_t *c = t->data;

    if (c->state == ADM_CONN_OPEN && (request_in_progress(c) || !c->handshake_done)) {
        adm_log_v(1, "closing connection: request or handshake not complete within %d ms", ADM_SLOW_CLIENT_MS);
    } else if (c->state == ADM_CONN_OPEN) {
        adm_log_v(2, "closing idle keep-alive connection");
    }
    adm__conn_close_now(c);
}

/* Chooses the deadline for the connection's current state. */
static void arm_timer(adm_conn_t *c)
{
    uint64_t now = uv_now(c->server->loop);
    uint64_t timeout;

    if (c->state != ADM_CONN_OPEN) {
        return;
    }
    if (c->awaiting) {
        /* The handler answers by its own deadline (the caller's ?timeout=); a "hang" mock never
           does, by design, and the client decides when to give up. */
        uv_timer_stop(&c->timer);
        return;
    }
    if (!c->handshake_done || request_in_progress(c)) {
        uint64_t start = c->request_started_ms != 0 ? c->request_started_ms : c->accepted_ms;
        uint64_t deadline = start + ADM_SLOW_CLIENT_MS;

        timeout = deadline > now ? deadline - now : 0;
    } else if (output_pending(c)) {
        /* The client is not reading its answers; give it the slow-client allowance. */
        timeout = ADM_SLOW_CLIENT_MS;
    } else {
        timeout = c->server->opts->idle_timeout_ms;
    }
    uv_timer_start(&c->timer, on_timer, timeout, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    adm_conn_t *c = h->data;

    buf->base = (char *)c->server->read_buf;
    buf->len = sizeof(c->server->read_buf);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    adm_conn_t *c = req->data;

    if (status < 0 && c->state == ADM_CONN_LINGER) {
        adm__conn_close_now(c);
    }
}

/*
 * The final answer is on the wire. Send FIN, but keep reading (and discarding) for a while: closing
 * with unread input makes the kernel send RST, which can destroy the answer before the client
 * reads it.
 */
static void begin_linger(adm_conn_t *c)
{
    cancel_exchange(c);
    c->state = ADM_CONN_LINGER;
    c->shutdown_req.data = c;
    if (c->peer_eof || uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        adm__conn_close_now(c);
        return;
    }
    if (c->reading_paused) {
        c->reading_paused = false;
        resume_reading(c);
    }
    uv_timer_start(&c->timer, on_timer, ADM_LINGER_MS, 0);
}

static void after_output_drained(adm_conn_t *c)
{
    if (c->state != ADM_CONN_OPEN) {
        return;
    }
    if (c->close_after_write) {
        if (c->tls != NULL && c->handshake_done && !c->close_notify_sent) {
            c->close_notify_sent = true;
            adm_tls_session_close_notify(c->tls);
            flush(c);
            return;
        }
        begin_linger(c);
        return;
    }
    if (c->reading_paused && !c->awaiting) {
        c->reading_paused = false;
        resume_reading(c);
        process_input(c);
        flush(c);
        return;
    }
    arm_timer(c);
}

static void on_write_done(uv_write_t *req, int status)
{
    adm_conn_t *c = req->data;

    c->write_in_flight = false;
    c->writing.len = 0;
    if (c->state == ADM_CONN_CLOSING) {
        return;
    }
    if (status < 0) {
        adm_log_v(2, "write failed: %s", uv_strerror(status));
        adm__conn_close_now(c);
        return;
    }
    adm_buf_shrink(&c->writing, ADM_MAX_PENDING_OUTPUT);
    flush(c);
}

/* Writes everything queued: one uv_try_write, and a uv_write for what the socket did not take. */
static void flush(adm_conn_t *c)
{
    adm_buf_t *out = &c->pending;
    uv_buf_t b;
    int n;

    if (c->state == ADM_CONN_CLOSING || c->write_in_flight) {
        return;
    }
    if (c->tls != NULL) {
        if (c->pending.len > 0 && c->handshake_done) {
            if (adm_tls_session_send(c->tls, c->pending.data, c->pending.len) != 0) {
                adm__conn_close_now(c);
                return;
            }
            c->pending.len = 0;
        }
        out = adm_tls_session_output(c->tls);
    }
    if (out->len == 0) {
        after_output_drained(c);
        return;
    }
    b = uv_buf_init((char *)out->data, (unsigned)out->len);
    n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n == (int)out->len) {
        out->len = 0;
        after_output_drained(c);
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        adm_log_v(2, "write failed: %s", uv_strerror(n));
        adm__conn_close_now(c);
        return;
    }
    if (n < 0) {
        n = 0;
    }
    /* The uv_write owns its bytes until on_write_done: hand the buffer over whole. */
    adm_buf_swap(out, &c->writing);
    b = uv_buf_init((char *)c->writing.data + n, (unsigned)(c->writing.len - (size_t)n));
    c->write_req.data = c;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write_done) != 0) {
        c->writing.len = 0;
        adm__conn_close_now(c);
        return;
    }
    c->write_in_flight = true;
    arm_timer(c);
}

static void queue_answer(adm_conn_t *c, adm_http_response_t *resp, bool keep_alive)
{
    uint64_t started = c->request_started_ns != 0 ? c->request_started_ns : uv_hrtime();

    adm_metrics_observe(&c->server->metrics, c->endpoint, resp->status, uv_hrtime() - started);
    if (!keep_alive || c->server->draining) {
        resp->close = true;
    }
    if (adm_http_write_response(&c->pending, resp) != 0) {
        adm_log_error("out of memory writing an answer; closing the connection");
        adm__conn_close_now(c);
        return;
    }
    if (resp->close) {
        c->close_after_write = true;
    }
}

static void answer_error(adm_conn_t *c, int status, const char *message)
{
    adm_http_response_t resp = {0};
    char body[256];
    int n = snprintf(body, sizeof(body), "%s\n", message != NULL ? message : adm_http_reason(status));

    resp.status = status;
    resp.content_type = "text/plain; charset=utf-8";
    resp.body = body;
    resp.body_len = n > 0 && (size_t)n < sizeof(body) ? (size_t)n : sizeof(body) - 1;
    queue_answer(c, &resp, false);
}

static void on_headers(adm_conn_t *c)
{
    const adm_http_request_t *r = &c->http.req;
    adm_http_response_t resp = {0};
    bool body_follows = r->chunked || r->content_length > 0;

    if (adm__route_check(c, r, &resp) != 0) {
        if (body_follows && r->expect_continue) {
            /* The client waits for our word before sending the body: answer now and close. */
            queue_answer(c, &resp, false);
            return;
        }
        /* Read and drop the body so the connection stays usable, then answer. */
        c->early = resp;
        c->has_early = true;
        return;
    }
    if (body_follows && r->expect_continue) {
        if (adm_http_write_continue(&c->pending) != 0) {
            adm__conn_close_now(c);
        }
    }
}

/* The current request is answered: the parser and the head's memory move on to the next. */
static void end_request(adm_conn_t *c)
{
    adm_http_parser_next(&c->http);
    adm_arena_reset(c->arena);
    c->request_started_ms = 0;
    c->request_started_ns = 0;
    c->endpoint = ADM_EP_OTHER;
}

static void on_message(adm_conn_t *c)
{
    adm_http_request_t *r = &c->http.req;
    adm_exchange_t *x = &c->x;

    if (c->has_early) {
        adm_http_response_t resp = c->early;

        c->has_early = false;
        queue_answer(c, &resp, r->keep_alive);
        end_request(c);
        return;
    }
    x->conn = c;
    x->keep_alive = r->keep_alive;
    x->on_cancel = NULL;
    x->arena = adm__server_arena_get(c->server);
    if (x->arena == NULL) {
        adm_log_error("out of memory for a request; closing the connection");
        adm__conn_close_now(c);
        return;
    }
    c->awaiting = true;
    c->dispatching = true;
    adm__route_handle(c, r, x);
    c->dispatching = false;
    if (c->awaiting) {
        arm_timer(c);
    }
}

const adm_http_request_t *adm_exchange_request(const adm_exchange_t *x)
{
    return &x->conn->http.req;
}

adm_arena_t *adm_exchange_arena(const adm_exchange_t *x)
{
    return x->arena;
}

uv_loop_t *adm_exchange_loop(const adm_exchange_t *x)
{
    return x->conn->server->loop;
}

void adm_exchange_on_cancel(adm_exchange_t *x, void (*fn)(void *arg), void *arg)
{
    x->on_cancel = fn;
    x->cancel_arg = arg;
}

void adm_exchange_reply(adm_exchange_t *x, adm_http_response_t *resp)
{
    adm_conn_t *c = x->conn;

    if (!c->awaiting) {
        return;
    }
    if (c->state != ADM_CONN_OPEN) {
        end_exchange(c);
        return;
    }
    queue_answer(c, resp, x->keep_alive);
    end_exchange(c);
    end_request(c);
    if (c->peer_eof) {
        c->close_after_write = true; /* a half-closed client gets its answer, then the end */
    }
    if (!c->dispatching) {
        /* A late answer: go on with requests that arrived meanwhile. */
        process_input(c);
        flush(c);
    }
}

void adm_exchange_abort(adm_exchange_t *x, bool reset)
{
    adm_conn_t *c = x->conn;

    if (!c->awaiting) {
        return;
    }
    c->x.on_cancel = NULL;
    end_exchange(c);
    close_conn(c, reset);
}

/* Parses and answers every complete request in the input buffer. */
static void process_input(adm_conn_t *c)
{
    size_t drop;

    while (c->state == ADM_CONN_OPEN && !c->close_after_write && !c->reading_paused && !c->awaiting) {
        adm_http_event_t ev = adm_http_parse(&c->http, c->arena, c->in.data, c->in.len, &c->in_off);

        if (c->request_started_ms == 0 && adm_http_parser_in_message(&c->http)) {
            c->request_started_ms = uv_now(c->server->loop);
            c->request_started_ns = uv_hrtime();
        }
        if (ev == ADM_HTTP_NEED_MORE) {
            break;
        }
        if (ev == ADM_HTTP_HEADERS) {
            on_headers(c);
        } else if (ev == ADM_HTTP_MESSAGE) {
            on_message(c);
        } else {
            char message[160];

            /* llhttp's own reasons ("Invalid method encountered") need saying what they are about. */
            snprintf(message, sizeof(message), "%s%s", c->http.error_status == 400 ? "malformed HTTP request: " : "",
                     c->http.error_message);
            adm_log_v(1, "bad request: %d %s", c->http.error_status, message);
            answer_error(c, c->http.error_status, message);
            break;
        }
        if (c->pending.len > ADM_MAX_PENDING_OUTPUT && !c->close_after_write) {
            /* Stop reading until the client takes its answers. */
            c->reading_paused = true;
            uv_read_stop((uv_stream_t *)&c->tcp);
        }
    }
    /* Drop what no longer matters: parsed requests, but never the bytes of one in progress. */
    drop = adm_http_parser_keep_from(&c->http, c->in_off);
    if (drop > 0) {
        adm_buf_consume(&c->in, drop);
        c->in_off -= drop;
        adm_http_parser_shift(&c->http, drop);
    }
    if (c->in.len == 0 && c->in.cap > IN_KEEP_BYTES) {
        adm_buf_free(&c->in);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void resume_reading(adm_conn_t *c)
{
    if (!c->reading_paused && c->state != ADM_CONN_CLOSING && !c->peer_eof) {
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    adm_conn_t *c = stream->data;
    int rc;

    if (nread == 0) {
        return;
    }
    if (nread < 0) {
        /* EOF or error. A half-closing client still gets the answers it asked for. */
        uv_read_stop(stream);
        c->peer_eof = true;
        if (c->awaiting && nread == UV_EOF && c->state == ADM_CONN_OPEN) {
            return; /* the answer owed closes the connection (adm_exchange_reply) */
        }
        if (c->state == ADM_CONN_OPEN && output_pending(c) && !request_in_progress(c)) {
            c->close_after_write = true;
            return;
        }
        adm__conn_close_now(c);
        return;
    }
    if (c->state == ADM_CONN_LINGER) {
        return; /* discarding */
    }
    if (c->tls != NULL) {
        rc = adm_tls_session_recv(c->tls, (const uint8_t *)buf->base, (size_t)nread, &c->in);
        if (!c->handshake_done && adm_tls_session_handshake_done(c->tls)) {
            c->handshake_done = true;
            c->peer_verified = adm_tls_session_peer_verified(c->tls);
            adm_log_v(3, "TLS handshake done: %s %s", adm_tls_session_version(c->tls),
                      adm_tls_session_cipher(c->tls));
        }
        if (rc == ADM_ETLS || rc == ADM_ENOMEM) {
            adm_log_v(1, "closing TLS connection: %s", adm_tls_session_error(c->tls));
            /* Send the alert mbedTLS queued, then close. */
            c->close_after_write = true;
            c->close_notify_sent = true;
            uv_read_stop(stream);
            flush(c);
            return;
        }
        if (rc == ADM_EOF) {
            c->peer_eof = true;
            uv_read_stop(stream);
        }
    } else if (adm_buf_append(&c->in, buf->base, (size_t)nread) != 0) {
        adm__conn_close_now(c);
        return;
    }
    process_input(c);
    if (c->awaiting && c->state == ADM_CONN_OPEN && !c->reading_paused && c->in.len > ADM_MAX_PENDING_OUTPUT) {
        /* Pipelined requests pile up behind an answer still owed: stop reading until it is sent. */
        c->reading_paused = true;
        uv_read_stop(stream);
    }
    if (c->peer_eof && c->state == ADM_CONN_OPEN && c->awaiting) {
        flush(c);
        return;
    }
    if (c->peer_eof && c->state == ADM_CONN_OPEN) {
        if (request_in_progress(c)) {
            adm__conn_close_now(c);
            return;
        }
        c->close_after_write = true;
    }
    flush(c);
}

void adm__conn_accept(adm__listener_t *l)
{
    adm_server_t *s = l->server;
    adm_conn_t *c = calloc(1, sizeof(*c));
    int rc;

    if (c == NULL) {
        adm_log_error("out of memory accepting a connection");
        return;
    }
    c->server = s;
    c->listener = l;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->state = ADM_CONN_OPEN;
    c->accepted_ms = uv_now(s->loop);
    c->handshake_done = !l->tls;
    c->endpoint = ADM_EP_OTHER;
    /* Link first: from here on every path ends in adm__conn_close_now, which unlinks. */
    c->next = s->conns;
    if (s->conns != NULL) {
        s->conns->prev = c;
    }
    s->conns = c;
    s->nconns++;
    s->nconns_alive++;
    s->metrics.server_connections++;

    rc = uv_accept((uv_stream_t *)&l->tcp, (uv_stream_t *)&c->tcp);
    if (rc != 0) {
        adm_log_v(1, "accept failed: %s", uv_strerror(rc));
        adm__conn_close_now(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->arena = adm_arena_create(ARENA_FIRST_CHUNK);
    if (c->arena == NULL || (l->tls && adm_tls_session_create(s->tls, NULL, &c->tls) != 0)) {
        adm_log_error("cannot set up a connection: out of memory");
        adm__conn_close_now(c);
        return;
    }
    adm_http_parser_init(&c->http, s->opts->max_request_bytes);
    resume_reading(c);
    arm_timer(c);
}

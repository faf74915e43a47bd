/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client connection: TLS (or plain) bytes in, HTTP requests out to their routes' handlers,
 * answers back. The route is chosen once, when a request's head is complete; a refusal the route
 * declared (404, 405, 401, 415) is answered here once the body has been read and dropped, and
 * everything else goes to the handler as an exchange.
 *
 * Reads land in the set's shared buffer, are decrypted (or copied) into the connection's input
 * buffer, and every complete request in that read is answered before anything is written: all
 * answers of a read go out as one TLS flight in one write, so a pipelining client costs one read and
 * one write per batch. Requests are answered strictly in order.
 *
 * Lifetimes follow libuv's rule: a connection is freed only when the close callbacks of its TCP
 * handle and its timer have both run; a write in flight is cancelled by uv_close and its callback
 * runs first.
 *
 * Memory (issue 17): a connection idle for ADM_IDLE_TRIM_MS gives back everything only a request
 * needs (its input and output buffers, the head arena, the TLS session's buffers and the pages of
 * mbedTLS's record buffers), so an idle keep-alive connection costs a few KB rather than ~90;
 * busy connections keep theirs, so a steady stream of requests costs no malloc. The idle timer
 * does both jobs: it fires first to trim, then again at --idle-timeout to close.
 */
#include "conn_internal.h"

#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/net/http.h"
#include "adm/net/tls_session.h"
#include "adm/server/exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_FIRST_CHUNK (8 * 1024) /* request heads; the body is parsed in the exchange's arena */
/* Input buffer capacity kept between requests; larger buffers are freed when idle. */
#define IN_KEEP_BYTES (256 * 1024)

struct adm_exchange_s {
    adm_conn_t *conn;
    const adm_route_t *route; /* chosen when the head arrived; NULL: none (404, malformed) */
    unsigned endpoint;        /* metrics slot the answer counts in */
    adm_arena_t *arena;       /* the request's work memory, from the set's pool */
    void (*on_cancel)(void *arg);
    void *cancel_arg;
    bool keep_alive; /* the request allows another on this connection */
};

typedef enum conn_state_e {
    CONN_OPEN,    /* handshaking or serving requests */
    CONN_LINGER,  /* final answer written and FIN sent; discarding input until EOF */
    CONN_CLOSING, /* uv_close called; freed when both handles have closed */
} conn_state_t;

struct adm_conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer; /* slow-client, idle and linger deadlines */
    uv_write_t write_req;
    uv_shutdown_t shutdown_req;
    adm__conns_t *set;
    adm__listener_t *listener;
    adm_conn_t *prev, *next; /* the set's list of open connections */
    adm_tls_session_t *tls;  /* NULL on plain listeners */
    adm_http_parser_t http;
    adm_arena_t *arena; /* the current request's head, reset after each answer */
    adm_buf_t in;       /* plaintext received; [in_off, len) not parsed yet */
    size_t in_off;
    adm_buf_t pending; /* plaintext answers not yet encrypted or written */
    adm_buf_t writing; /* bytes owned by the uv_write in flight */
    uint64_t accepted_ms;
    uint64_t request_started_ms; /* 0 between requests */
    uint64_t request_started_ns; /* uv_hrtime() at the same moment, for the latency histogram */
    adm_http_response_t early;   /* refusal decided from the head (404, 405, 401, 415) */
    adm_exchange_t x;            /* the request being answered */
    conn_state_t state;
    int pending_closes; /* handle close callbacks still to come */
    bool has_early;
    bool awaiting;    /* a handler owes the current request its answer */
    bool dispatching; /* inside the handler's first call for the current request */
    bool handshake_done;
    bool peer_verified; /* mTLS client certificate verified */
    bool write_in_flight;
    bool close_after_write; /* last answer queued: close once it is written */
    bool close_notify_sent;
    bool reading_paused; /* backpressure: output is piling up */
    bool peer_eof;
    bool hello_taken;       /* the ClientHello went through: the rest of the handshake is never held */
    bool trimmed;           /* idle, and its buffers given back (trim_idle); new input clears it */
    adm__pacer_node_t pace; /* in the pacer's line: the ClientHello held for a later loop turn */
    adm_buf_t held;         /* that input (ciphertext) */
};

static void flush(adm_conn_t *c);
static void process_input(adm_conn_t *c);
static void resume_reading(adm_conn_t *c);
static void on_pacer_resume(adm__pacer_t *p, adm__pacer_node_t *node);

void adm__conns_init(adm__conns_t *set, uv_loop_t *loop, const adm_options_t *opts, adm_metrics_t *metrics,
                     void (*on_freed)(void *arg), void *arg)
{
    memset(set, 0, sizeof(*set));
    set->loop = loop;
    set->opts = opts;
    set->metrics = metrics;
    set->on_freed = on_freed;
    set->on_freed_arg = arg;
    adm__pacer_init(&set->pacer, loop, ADM_HANDSHAKE_BUDGET_NS, on_pacer_resume);
    adm__heap_trim_init(&set->heap_trim, loop);
}

void adm__conns_dispose(adm__conns_t *set)
{
    while (set->narena_pool > 0) {
        adm_arena_destroy(set->arena_pool[--set->narena_pool]);
    }
}

/* 256 KiB holds a 4 KB pod's decode, mutable copy, diff and answer many times over; pages not
   touched cost no memory. NULL when out of memory. */
static adm_arena_t *arena_get(adm__conns_t *set)
{
    if (set->narena_pool > 0) {
        return set->arena_pool[--set->narena_pool];
    }
    return adm_arena_create(ADM_REQUEST_ARENA_BYTES);
}

static void arena_put(adm__conns_t *set, adm_arena_t *a)
{
    if (set->narena_pool == ADM_ARENA_POOL_MAX) {
        adm_arena_destroy(a);
        return;
    }
    adm_arena_reset(a);
    set->arena_pool[set->narena_pool++] = a;
}

static void on_handle_closed(uv_handle_t *h)
{
    adm_conn_t *c = h->data;
    adm__conns_t *set = c->set;

    if (--c->pending_closes > 0) {
        return;
    }
    adm_tls_session_destroy(c->tls);
    adm_arena_destroy(c->arena);
    adm_buf_free(&c->in);
    adm_buf_free(&c->pending);
    adm_buf_free(&c->writing);
    adm_buf_free(&c->held);
    free(c);
    set->alive--;
    adm__heap_trim_note(&set->heap_trim, set->alive);
    set->on_freed(set->on_freed_arg);
}

static void unlink_conn(adm_conn_t *c)
{
    adm__conns_t *set = c->set;

    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        set->head = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->prev = c->next = NULL;
    set->open--;
    set->metrics->server_connections--;
}

/* The exchange is over (answered, aborted or cancelled): its arena goes back to the pool. */
static void end_exchange(adm_conn_t *c)
{
    adm_exchange_t *x = &c->x;

    c->awaiting = false;
    x->on_cancel = NULL;
    if (x->arena != NULL) {
        arena_put(c->set, x->arena);
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
    if (c->state == CONN_CLOSING) {
        return;
    }
    c->state = CONN_CLOSING;
    unlink_conn(c);
    adm__pacer_cancel(&c->set->pacer, &c->pace);
    cancel_exchange(c);
    c->pending_closes = 2;
    if (!reset || uv_tcp_close_reset(&c->tcp, on_handle_closed) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    }
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void close_now(adm_conn_t *c)
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

static void close_if_idle(adm_conn_t *c)
{
    /* Once the listeners are closed, a connection still in its handshake has no request to finish. */
    bool handshake_ok = c->handshake_done || c->set->stopping;

    if (c->state == CONN_OPEN && handshake_ok && !request_in_progress(c) && !output_pending(c)) {
        close_now(c);
    }
}

/* Between requests: shaken hands, nothing received of a next one, nothing owed or left to write. */
static bool is_idle(const adm_conn_t *c)
{
    return c->state == CONN_OPEN && c->handshake_done && !c->awaiting && !request_in_progress(c) &&
           !output_pending((adm_conn_t *)c);
}

/* The idle timer trims first when --idle-timeout leaves room for it. */
static bool trim_pending(const adm_conn_t *c)
{
    return !c->trimmed && c->set->opts->idle_timeout_ms > ADM_IDLE_TRIM_MS;
}

/*
 * Gives back what only a request needs; the next input brings it back (the arena in process_input,
 * buffers as they fill, record pages as mbedTLS touches them). Unparsed input, if any, stays.
 */
static void trim_idle(adm_conn_t *c)
{
    c->trimmed = true;
    if (c->in.len == 0) {
        adm_buf_free(&c->in);
        c->in_off = 0;
    }
    adm_buf_free(&c->pending);
    adm_buf_free(&c->writing);
    adm_buf_free(&c->held);
    adm_arena_destroy(c->arena);
    c->arena = NULL;
    if (c->tls != NULL) {
        adm_tls_session_trim(c->tls);
    }
}

void adm__conns_close_idle(adm__conns_t *set)
{
    adm_conn_t *c = set->head;

    while (c != NULL) {
        adm_conn_t *next = c->next;

        close_if_idle(c);
        c = next;
    }
}

void adm__conns_close_all(adm__conns_t *set)
{
    while (set->head != NULL) {
        close_now(set->head);
    }
}

static void on_timer(uv_timer_t *t)
{
    adm_conn_t *c = t->data;
    uint64_t idle_ms = c->set->opts->idle_timeout_ms;

    if (is_idle(c) && trim_pending(c)) {
        trim_idle(c);
        uv_timer_start(&c->timer, on_timer, idle_ms - ADM_IDLE_TRIM_MS, 0);
        return;
    }
    if (c->state == CONN_OPEN && (request_in_progress(c) || !c->handshake_done)) {
        adm_log_v(1, "closing connection: request or handshake not complete within %d ms",
                  ADM_SLOW_CLIENT_MS);
    } else if (c->state == CONN_OPEN) {
        adm_log_v(2, "closing idle keep-alive connection");
    }
    close_now(c);
}

/* Chooses the deadline for the connection's current state. */
static void arm_timer(adm_conn_t *c)
{
    uint64_t now = uv_now(c->set->loop);
    uint64_t timeout;

    if (c->state != CONN_OPEN) {
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
    } else if (trim_pending(c)) {
        timeout = ADM_IDLE_TRIM_MS; /* on_timer trims, then waits out the rest of --idle-timeout */
    } else {
        timeout = c->set->opts->idle_timeout_ms;
    }
    uv_timer_start(&c->timer, on_timer, timeout, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    adm_conn_t *c = h->data;

    buf->base = (char *)c->set->read_buf;
    buf->len = sizeof(c->set->read_buf);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    adm_conn_t *c = req->data;

    if (status < 0 && c->state == CONN_LINGER) {
        close_now(c);
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
    c->state = CONN_LINGER;
    c->shutdown_req.data = c;
    if (c->peer_eof || uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        close_now(c);
        return;
    }
    if (c->reading_paused) {
        c->reading_paused = false;
        resume_reading(c);
    }
    uv_timer_start(&c->timer, on_timer, ADM_LINGER_MS, 0);
}

/*
 * Everything queued is on the wire: what next. Returns true when it queued more output (the TLS
 * close_notify, or answers to requests that waited while reading was paused), which the caller
 * writes in turn.
 */
static bool after_output_drained(adm_conn_t *c)
{
    if (c->state != CONN_OPEN) {
        return false;
    }
    if (c->close_after_write) {
        if (c->tls != NULL && c->handshake_done && !c->close_notify_sent) {
            c->close_notify_sent = true;
            adm_tls_session_close_notify(c->tls);
            return true;
        }
        begin_linger(c);
        return false;
    }
    if (c->reading_paused && !c->awaiting) {
        c->reading_paused = false;
        resume_reading(c);
        process_input(c);
        return true;
    }
    arm_timer(c);
    return false;
}

static void on_write_done(uv_write_t *req, int status)
{
    adm_conn_t *c = req->data;

    c->write_in_flight = false;
    c->writing.len = 0;
    if (c->state == CONN_CLOSING) {
        return;
    }
    if (status < 0) {
        adm_log_v(2, "write failed: %s", uv_strerror(status));
        close_now(c);
        return;
    }
    adm_buf_shrink(&c->writing, ADM_MAX_PENDING_OUTPUT);
    flush(c);
}

/*
 * Writes everything queued: one uv_try_write, and a uv_write for what the socket did not take.
 * Returns true when all of it is on the wire (or there was nothing), false when a write is in
 * flight or the connection is closing.
 */
static bool write_out(adm_conn_t *c)
{
    adm_buf_t *out = &c->pending;
    uv_buf_t b;
    int n;

    if (c->state == CONN_CLOSING || c->write_in_flight) {
        return false;
    }
    if (c->tls != NULL) {
        if (c->pending.len > 0 && c->handshake_done) {
            if (adm_tls_session_send(c->tls, c->pending.data, c->pending.len) != 0) {
                close_now(c);
                return false;
            }
            c->pending.len = 0;
        }
        out = adm_tls_session_output(c->tls);
    }
    if (out->len == 0) {
        return true;
    }
    b = uv_buf_init((char *)out->data, (unsigned)out->len);
    n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n == (int)out->len) {
        out->len = 0;
        return true;
    }
    if (n < 0 && n != UV_EAGAIN) {
        adm_log_v(2, "write failed: %s", uv_strerror(n));
        close_now(c);
        return false;
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
        close_now(c);
        return false;
    }
    c->write_in_flight = true;
    arm_timer(c);
    return false;
}

/*
 * Writes what is queued, then whatever after_output_drained queues in turn. A loop rather than a
 * call back into flush: the close_notify comes once (close_notify_sent), and resuming a paused
 * connection answers requests already in its input buffer, which no read refills while this runs,
 * so every turn but the last consumes input and the loop ends.
 */
static void flush(adm_conn_t *c)
{
    while (write_out(c)) {
        if (!after_output_drained(c)) {
            return;
        }
    }
}

static void queue_answer(adm_conn_t *c, adm_http_response_t *resp, bool keep_alive)
{
    uint64_t started = c->request_started_ns != 0 ? c->request_started_ns : uv_hrtime();

    adm_metrics_observe(c->set->metrics, c->x.endpoint, resp->status, uv_hrtime() - started);
    if (!keep_alive || c->set->draining) {
        resp->close = true;
    }
    if (adm_http_write_response(&c->pending, resp) != 0) {
        adm_log_error("out of memory writing an answer; closing the connection");
        close_now(c);
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

/* The head is complete: the request's route is chosen here, once, and its checks made. */
static void on_headers(adm_conn_t *c)
{
    const adm_http_request_t *r = &c->http.req;
    const adm__listener_t *l = c->listener;
    adm_http_response_t resp = {0};
    bool body_follows = r->chunked || r->content_length > 0;
    bool client_ca = c->set->opts->client_ca_file != NULL;

    c->x.route = adm_route_table_find(l->routes, l->kind, r->path, &c->x.endpoint);
    if (adm_route_check(c->x.route, r, client_ca, c->peer_verified, &resp) != 0) {
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
            close_now(c);
        }
    }
}

/* The current request is answered: the parser and the head's memory move on to the next. */
static void end_request(adm_conn_t *c)
{
    adm_http_parser_next(&c->http);
    if (c->arena != NULL) {
        adm_arena_reset(c->arena);
    }
    c->request_started_ms = 0;
    c->request_started_ns = 0;
    c->x.route = NULL;
    c->x.endpoint = ADM_METRICS_OTHER;
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
    x->keep_alive = r->keep_alive;
    x->on_cancel = NULL;
    x->arena = arena_get(c->set);
    if (x->arena == NULL) {
        adm_log_error("out of memory for a request; closing the connection");
        close_now(c);
        return;
    }
    c->awaiting = true;
    c->dispatching = true;
    /* Not NULL: a request without a route was refused at its head (has_early). */
    x->route->handler(x, x->route->arg);
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
    return x->conn->set->loop;
}

adm_listener_kind_t adm_exchange_listener(const adm_exchange_t *x)
{
    return x->conn->listener->kind;
}

bool adm_exchange_peer_verified(const adm_exchange_t *x)
{
    return x->conn->peer_verified;
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
    if (c->state != CONN_OPEN) {
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

void adm_exchange_reply_raw(adm_exchange_t *x, const void *bytes, size_t len)
{
    adm_conn_t *c = x->conn;

    if (!c->awaiting) {
        return;
    }
    if (c->state != CONN_OPEN) {
        end_exchange(c);
        return;
    }
    if (adm_buf_append(&c->pending, bytes, len) != 0) {
        adm_log_error("out of memory writing an answer; closing the connection");
        end_exchange(c);
        close_now(c);
        return;
    }
    c->close_after_write = true;
    end_exchange(c);
    end_request(c);
    if (!c->dispatching) {
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

    if (c->arena == NULL && c->state == CONN_OPEN) {
        /* Given back while idle (trim_idle): request heads need it again. */
        c->arena = adm_arena_create(ARENA_FIRST_CHUNK);
        if (c->arena == NULL) {
            adm_log_error("out of memory for a request; closing the connection");
            close_now(c);
            return;
        }
    }
    while (c->state == CONN_OPEN && !c->close_after_write && !c->reading_paused && !c->awaiting) {
        adm_http_event_t ev = adm_http_parse(&c->http, c->arena, c->in.data, c->in.len, &c->in_off);

        if (c->request_started_ms == 0 && adm_http_parser_in_message(&c->http)) {
            c->request_started_ms = uv_now(c->set->loop);
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
            snprintf(message, sizeof(message), "%s%s",
                     c->http.error_status == 400 ? "malformed HTTP request: " : "", c->http.error_message);
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
static void take_input(adm_conn_t *c, const uint8_t *data, size_t len);

static void resume_reading(adm_conn_t *c)
{
    if (!c->reading_paused && c->state != CONN_CLOSING && !c->peer_eof && !c->pace.queued) {
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

/* Received bytes (ciphertext on TLS listeners): decrypt, parse, answer. */
static void take_input(adm_conn_t *c, const uint8_t *data, size_t len)
{
    uv_stream_t *stream = (uv_stream_t *)&c->tcp;
    int rc;

    if (c->state != CONN_OPEN) {
        return;
    }
    c->trimmed = false;
    if (c->tls != NULL) {
        bool handshaking = !c->handshake_done;
        uint64_t t0 = handshaking ? uv_hrtime() : 0;

        c->hello_taken = true;
        rc = adm_tls_session_recv(c->tls, data, len, &c->in);
        if (handshaking) {
            adm__pacer_charge(&c->set->pacer, uv_hrtime() - t0);
        }
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
    } else if (adm_buf_append(&c->in, data, len) != 0) {
        close_now(c);
        return;
    }
    process_input(c);
    if (c->awaiting && c->state == CONN_OPEN && !c->reading_paused && c->in.len > ADM_MAX_PENDING_OUTPUT) {
        /* Pipelined requests pile up behind an answer still owed: stop reading until it is sent. */
        c->reading_paused = true;
        uv_read_stop(stream);
    }
    if (c->peer_eof && c->state == CONN_OPEN && c->awaiting) {
        flush(c);
        return;
    }
    if (c->peer_eof && c->state == CONN_OPEN) {
        if (request_in_progress(c)) {
            close_now(c);
            return;
        }
        c->close_after_write = true;
    }
    flush(c);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    adm_conn_t *c = stream->data;

    if (nread == 0) {
        return;
    }
    if (nread < 0) {
        /* EOF or error. A half-closing client still gets the answers it asked for. */
        uv_read_stop(stream);
        c->peer_eof = true;
        if (c->awaiting && nread == UV_EOF && c->state == CONN_OPEN) {
            return; /* the answer owed closes the connection (adm_exchange_reply) */
        }
        if (c->state == CONN_OPEN && output_pending(c) && !request_in_progress(c)) {
            c->close_after_write = true;
            return;
        }
        close_now(c);
        return;
    }
    if (c->state == CONN_LINGER) {
        return; /* discarding */
    }
    /* Only new handshakes wait: one under way is finished first, so its client is answered sooner. */
    if (c->tls != NULL && !c->hello_taken && !adm__pacer_may_run(&c->set->pacer) &&
        adm_buf_append(&c->held, buf->base, (size_t)nread) == 0 &&
        adm__pacer_hold(&c->set->pacer, &c->pace) == 0) {
        /* This turn's handshake budget is spent: the handshake goes on in a later turn. */
        uv_read_stop(stream);
        return;
    }
    if (c->held.len > 0) {
        /* Holding failed after the copy (out of memory): go on now, in order. */
        take_input(c, c->held.data, c->held.len);
        adm_buf_free(&c->held);
        return;
    }
    take_input(c, (const uint8_t *)buf->base, (size_t)nread);
}

/* A held connection's turn: its handshake input goes through, then reading resumes. */
static void on_pacer_resume(adm__pacer_t *p, adm__pacer_node_t *node)
{
    adm_conn_t *c = (adm_conn_t *)((char *)node - offsetof(adm_conn_t, pace));

    (void)p;
    take_input(c, c->held.data, c->held.len);
    adm_buf_free(&c->held);
    resume_reading(c);
}

void adm__conn_accept(adm__listener_t *l)
{
    adm__conns_t *set = l->conns;
    adm_conn_t *c = calloc(1, sizeof(*c));
    int rc;

    if (c == NULL) {
        adm_log_error("out of memory accepting a connection");
        return;
    }
    c->set = set;
    c->listener = l;
    uv_tcp_init(set->loop, &c->tcp);
    uv_timer_init(set->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->state = CONN_OPEN;
    c->accepted_ms = uv_now(set->loop);
    c->handshake_done = l->tls == NULL;
    c->x.conn = c;
    c->x.endpoint = ADM_METRICS_OTHER;
    /* Link first: from here on every path ends in close_now, which unlinks. */
    c->next = set->head;
    if (set->head != NULL) {
        set->head->prev = c;
    }
    set->head = c;
    set->open++;
    set->alive++;
    set->metrics->server_connections++;
    adm__heap_trim_note(&set->heap_trim, set->alive);

    rc = uv_accept((uv_stream_t *)&l->tcp, (uv_stream_t *)&c->tcp);
    if (rc != 0) {
        adm_log_v(1, "accept failed: %s", uv_strerror(rc));
        close_now(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->arena = adm_arena_create(ARENA_FIRST_CHUNK);
    if (c->arena == NULL || (l->tls != NULL && adm_tls_session_create(l->tls, NULL, &c->tls) != 0)) {
        adm_log_error("cannot set up a connection: out of memory");
        close_now(c);
        return;
    }
    adm_http_parser_init(&c->http, set->opts->max_request_bytes);
    resume_reading(c);
    arm_timer(c);
}

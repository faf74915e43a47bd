/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upstream pool of upstream.h: calls, the queue they wait in, the policy that decides when to
 * dial, and the public adm_upstream_* and adm_call_* API. What happens on a connection (DNS,
 * connect, TLS, the request going out, the answer coming in, the idle watch) is the layer below,
 * upstream_conn.c: this file calls it by name and hears back through the callbacks of
 * conn_events, so the two never call each other in a circle.
 *
 * A connection is bound to at most one call at a time (no pipelining: an answer that is late must
 * not hold up the next call). Calls wait in a FIFO until a connection is ready; each waiting call
 * may cause one dial while the upstream is below its bound. Ready connections are handed out most
 * recent first (the warmest). Call objects come from a free list, so in the steady state (kept-alive
 * connections) a call costs no malloc.
 *
 * Deadlines cost no timer work per call either: the calls in flight are kept in a list ordered by
 * deadline (calls of one webhook mostly share a timeout, so a new one goes at the tail), and one
 * timer per upstream is armed for the earliest. A call that ends only leaves the list; the timer,
 * when it fires, fails the calls whose time is up and arms itself for the next (deadline_check).
 *
 * A callback never runs inside adm_upstream_post(): a call that fails there (a dial refused by
 * connect(2) at once, such as ENETUNREACH, EMFILE or ENOBUFS; a write error on an idle connection)
 * is finished on the next loop turn, so the caller always holds the call before it can end. The
 * same holds for older waiting calls that such a failed dial fails.
 */
#include "adm/net/upstream.h"

#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/net/http_client.h"
#include "upstream_conn.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_CONNS 64
#define DEFAULT_MAX_BODY (10u * 1024 * 1024)
#define DEFAULT_IDLE_MS 90000
#define DEFAULT_CALL_MS 30000

struct adm_call_s {
    uv_timer_t timer; /* the deferred report of its end */
    adm_upstream_t *up;
    adm_call_t *next, *prev;       /* in the wait queue, or next in the free list */
    adm_call_t *dl_next, *dl_prev; /* in the upstream's deadline list while timed */
    uint64_t deadline;             /* loop time the call fails with a timeout */
    adm_upstream_conn_t *conn;     /* the connection carrying it, or NULL */
    adm_call_cb cb;
    adm_call_chunk_cb chunk; /* a streamed call's body reader, or NULL */
    uint64_t uses;           /* bumped at each release: a reader's caller sees a call end and reused */
    void *arg;
    adm_buf_t request;               /* the whole HTTP request */
    char detail[720];                /* room for a quoted malformed first line (upstream_conn.c) */
    adm_call_error_t deferred_error; /* ended inside adm_upstream_post: reported from the timer */
    bool queued;
    bool retried; /* already sent again after a stale connection */
    bool active;
    bool deferred;
    bool timed; /* in the deadline list */
};

struct adm_upstream_s {
    adm_upstream_conn_set_t conns; /* its connections (upstream_conn.c), and their settings */
    char *host;
    char *host_header;
    char *dial_host;
    char *refuse; /* every call fails with this (adm_upstream_opts_t.refuse), or NULL */
    size_t max_conns;
    adm_call_t *wait_head, *wait_tail;
    size_t nwaiting;
    adm_call_t *free_calls;
    adm_call_t *dl_head, *dl_tail; /* calls in flight, earliest deadline first */
    uv_timer_t deadline_timer;     /* armed for dl_head's deadline, or earlier */
    uint64_t deadline_due;         /* loop time deadline_timer fires, while active */
    size_t ncalls;                 /* call objects allocated (each owns a timer) */
    int pending_closes;            /* timer close callbacks still to come */
    int in_callback;               /* depth of user callbacks running */
    int in_post;                   /* inside adm_upstream_post: calls that end are reported later */
    size_t ndeferred;              /* calls ended, their callbacks still to run */
    bool in_maybe_dial;
    bool closing;
};

/* The upstream whose connection set is set (the set is a member, as libuv embeds handles). */
static adm_upstream_t *upstream_of(adm_upstream_conn_set_t *set)
{
    return (adm_upstream_t *)((char *)set - offsetof(adm_upstream_t, conns));
}

static void maybe_dial(adm_upstream_t *u);

const char *adm_call_error_name(adm_call_error_t e)
{
    switch (e) {
    case ADM_CALL_OK: return "ok";
    case ADM_CALL_DNS: return "dns";
    case ADM_CALL_CONNECT: return "connect";
    case ADM_CALL_TLS: return "tls";
    case ADM_CALL_IO: return "io";
    case ADM_CALL_PROTOCOL: return "protocol";
    case ADM_CALL_TIMEOUT: return "timeout";
    case ADM_CALL_NOMEM: return "nomem";
    }
    return "unknown";
}

/* ---- freeing ------------------------------------------------------------------------------- */

/* Frees u once it is closing and nothing of it is left (connections, handles, deferred calls). */
static void upstream_free_if_done(adm_upstream_t *u)
{
    if (!u->closing || u->pending_closes > 0 || u->conns.all != NULL || u->ndeferred > 0) {
        return;
    }
    adm_tls_ctx_unref(u->conns.tls);
    free(u->host);
    free(u->host_header);
    free(u->dial_host);
    free(u->refuse);
    free(u);
}

static void on_deadline_timer_closed(uv_handle_t *h)
{
    adm_upstream_t *u = h->data;

    u->pending_closes--;
    upstream_free_if_done(u);
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
    call->chunk = NULL;
    call->conn = NULL;
    call->uses++;
    if (u->closing) {
        call_destroy(call);
        return;
    }
    adm_buf_shrink(&call->request, UPSTREAM_KEEP_BYTES);
    call->next = u->free_calls;
    u->free_calls = call;
}

/* ---- calls --------------------------------------------------------------------------------- */

static void deadline_remove(adm_upstream_t *u, adm_call_t *call)
{
    if (!call->timed) {
        return;
    }
    if (call->dl_prev != NULL) {
        call->dl_prev->dl_next = call->dl_next;
    } else {
        u->dl_head = call->dl_next;
    }
    if (call->dl_next != NULL) {
        call->dl_next->dl_prev = call->dl_prev;
    } else {
        u->dl_tail = call->dl_prev;
    }
    call->dl_next = call->dl_prev = NULL;
    call->timed = false;
}

static void on_deadlines(uv_timer_t *t);

/* Puts call in the deadline list, from the tail (where a call of the usual timeout belongs). */
static void deadline_add(adm_upstream_t *u, adm_call_t *call, uint64_t now)
{
    adm_call_t *after = u->dl_tail;

    while (after != NULL && after->deadline > call->deadline) {
        after = after->dl_prev;
    }
    call->dl_prev = after;
    call->dl_next = after != NULL ? after->dl_next : u->dl_head;
    if (call->dl_next != NULL) {
        call->dl_next->dl_prev = call;
    } else {
        u->dl_tail = call;
    }
    if (after != NULL) {
        after->dl_next = call;
    } else {
        u->dl_head = call;
    }
    call->timed = true;
    if (!uv_is_active((uv_handle_t *)&u->deadline_timer) || call->deadline < u->deadline_due) {
        u->deadline_due = call->deadline;
        uv_timer_start(&u->deadline_timer, on_deadlines, call->deadline - now, 0);
    }
}

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
    res.retry_after = "";
    if (cb != NULL) {
        u->in_callback++;
        cb(&res, call->arg);
        u->in_callback--;
    }
    call_release(call);
}

/*
 * Ends call with res: out of the wait queue, unbound from its connection, its callback told
 * (unless abandoned; on the next loop turn when inside adm_upstream_post), the object released.
 */
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
    deadline_remove(u, call);
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
    res.retry_after = "";
    finish_call(call, &res);
}

static void call_timeout(adm_call_t *call)
{
    adm_upstream_conn_t *c = call->conn;

    /* A connection caught mid-answer cannot carry another call. */
    if (c != NULL) {
        c->call = NULL;
        call->conn = NULL;
        adm__upstream_conn_close(c);
    }
    fail_call(call, ADM_CALL_TIMEOUT, "context deadline exceeded");
    maybe_dial(call->up);
}

/*
 * The upstream's deadline timer: fails every call whose time is up, oldest deadline first, then
 * arms itself for the next one. It may fire with nothing due (the call it was armed for ended).
 */
static void on_deadlines(uv_timer_t *t)
{
    adm_upstream_t *u = t->data;
    uint64_t now = uv_now(u->conns.loop);

    /* A callback may post (adding later deadlines) or close the upstream (emptying the list). */
    while (u->dl_head != NULL && u->dl_head->deadline <= now) {
        call_timeout(u->dl_head);
    }
    if (u->dl_head != NULL && !u->closing) {
        u->deadline_due = u->dl_head->deadline;
        uv_timer_start(t, on_deadlines, u->dl_head->deadline - now, 0);
    }
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
    uv_timer_init(u->conns.loop, &call->timer);
    call->timer.data = call;
    u->ncalls++;
    return call;
}

/* A streamed call's body piece: to the caller's reader, the call cancelled when it says stop. */
static int call_chunk(void *arg, const uint8_t *data, size_t len)
{
    adm_call_t *call = arg;
    adm_upstream_t *u = call->up;
    uint64_t uses = call->uses;
    int stop;

    if (call->chunk == NULL || call->conn == NULL) {
        return 1;
    }
    u->in_callback++;
    stop = call->chunk(data, len, call->arg);
    u->in_callback--;
    if (call->uses != uses) {
        return 1; /* cancelled inside the reader (the object may already carry a new call) */
    }
    if (stop != 0) {
        adm_call_cancel(call);
        return 1;
    }
    /* The parse stops on a cancelled call, and its closing connection is dropped. */
    return 0;
}

/* Puts call on the ready connection c, its body streamed or gathered as the call asks. */
static void call_bind(adm_upstream_conn_t *c, adm_call_t *call)
{
    call->conn = c;
    adm_http_resp_stream(&c->resp, call->chunk != NULL ? call_chunk : NULL, call);
    adm__upstream_conn_start_call(c, call, call->request.data, call->request.len);
}

/* ---- what connections report (conn_events) ------------------------------------------------ */

/* c is ready and carries no call: the oldest waiting call takes it, or it waits idle. */
static void on_conn_ready(adm_upstream_conn_t *c)
{
    adm_upstream_t *u = upstream_of(c->set);

    if (c->state != CONN_READY || c->call != NULL) {
        return;
    }
    if (u->closing) {
        adm__upstream_conn_close(c);
        return;
    }
    if (u->wait_head != NULL) {
        adm_call_t *call = u->wait_head;

        wait_remove(u, call);
        call_bind(c, call);
        return;
    }
    adm__upstream_conn_park(c);
}

static void on_conn_answered(adm_call_t *call, const adm_call_result_t *res)
{
    finish_call(call, res);
}

/*
 * The connection carrying call broke. A stale keep-alive connection (the server closed it as the
 * request went out) sends the call once more, at the head of the queue, on a new connection;
 * otherwise the call fails.
 */
static void on_conn_broken(adm_call_t *call, bool stale, adm_call_error_t error, const char *detail)
{
    adm_upstream_t *u = call->up;

    call->conn = NULL;
    if (stale && !call->retried && !u->closing) {
        call->retried = true;
        adm_log_v(3, "%s:%u: kept-alive connection closed by the server (%s); sending again on a new one",
                  u->host, (unsigned)u->conns.port, detail);
        wait_push(u, call, true);
        return;
    }
    fail_call(call, error, "%s", detail);
}

static void on_conn_dial_failed(adm_upstream_conn_set_t *set, adm_call_error_t error, const char *detail)
{
    adm_upstream_t *u = upstream_of(set);
    adm_call_t *call = u->wait_head;

    /* The dial was made for the waiting calls; the oldest one hears why it failed. */
    if (call != NULL && set->ndialing < u->nwaiting) {
        fail_call(call, error, "%s", detail);
    }
    maybe_dial(u);
}

static void on_conn_may_dial(adm_upstream_conn_set_t *set)
{
    maybe_dial(upstream_of(set));
}

static void on_conn_freed(adm_upstream_conn_set_t *set)
{
    upstream_free_if_done(upstream_of(set));
}

static const adm_upstream_conn_events_t conn_events = {
    .ready = on_conn_ready,
    .answered = on_conn_answered,
    .broken = on_conn_broken,
    .dial_failed = on_conn_dial_failed,
    .may_dial = on_conn_may_dial,
    .freed = on_conn_freed,
};

/* One dial per waiting call that no dial in progress will serve, within the bound. */
static void maybe_dial(adm_upstream_t *u)
{
    /*
     * A dial that fails at once fails a waiting call and lands here again (through
     * on_conn_dial_failed, inside adm__upstream_conn_dial): the flag turns that re-entry into the
     * next turn of this loop, which ends when no call is left waiting or the bound is reached.
     */
    if (u->in_maybe_dial) {
        return;
    }
    u->in_maybe_dial = true;
    while (!u->closing && u->conns.ndialing < u->nwaiting && u->conns.nconns < u->max_conns) {
        if (adm__upstream_conn_dial(&u->conns) != 0) {
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
    u->host = dup_or_null(opts->host);
    u->dial_host = dup_or_null(opts->dial_host != NULL ? opts->dial_host : opts->host);
    u->host_header = malloc(strlen(opts->host) + 16);
    u->refuse = dup_or_null(opts->refuse);
    if (u->host == NULL || u->dial_host == NULL || u->host_header == NULL ||
        (opts->refuse != NULL && u->refuse == NULL)) {
        free(u->host);
        free(u->dial_host);
        free(u->host_header);
        free(u->refuse);
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
        size_t len =
            opts->addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

        memcpy(&u->conns.fixed_addr, opts->addr, len);
        u->conns.has_fixed_addr = true;
    }
    u->conns.loop = loop;
    uv_timer_init(loop, &u->deadline_timer);
    u->deadline_timer.data = u;
    u->conns.events = &conn_events;
    u->conns.tls = opts->tls;
    if (u->conns.tls != NULL) {
        adm_tls_ctx_ref(u->conns.tls);
    }
    u->conns.host = u->host;
    u->conns.dial_host = u->dial_host;
    u->conns.port = opts->port;
    u->conns.max_body_bytes = opts->max_body_bytes != 0 ? opts->max_body_bytes : DEFAULT_MAX_BODY;
    u->conns.idle_timeout_ms = opts->idle_timeout_ms != 0 ? opts->idle_timeout_ms : DEFAULT_IDLE_MS;
    u->max_conns = opts->max_conns != 0 ? opts->max_conns : DEFAULT_MAX_CONNS;
    *out = u;
    return 0;
}

/* Sends the request already written into call->request, or queues it: the common end of every call. */
static adm_call_t *call_begin(adm_upstream_t *u, adm_call_t *call, uint64_t timeout_ms, adm_call_cb cb,
                              void *arg)
{
    call->cb = cb;
    call->arg = arg;
    call->retried = false;
    call->active = true;
    call->deferred = false;
    call->detail[0] = '\0';
    call->deadline = uv_now(u->conns.loop) + (timeout_ms != 0 ? timeout_ms : DEFAULT_CALL_MS);
    deadline_add(u, call, uv_now(u->conns.loop));
    u->in_post++;
    if (u->refuse != NULL) {
        fail_call(call, ADM_CALL_CONNECT, "%s", u->refuse); /* told on the next loop turn */
    } else if (u->conns.idle != NULL) {
        call_bind(u->conns.idle, call);
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

/* A call object with nothing written yet, or NULL (closing, or out of memory). */
static adm_call_t *call_new(adm_upstream_t *u, adm_call_chunk_cb chunk)
{
    adm_call_t *call = NULL;

    if (!u->closing) {
        call = call_get(u);
    }
    if (call != NULL) {
        call->request.len = 0;
        call->chunk = chunk;
    }
    return call;
}

adm_call_t *adm_upstream_post(adm_upstream_t *u, const char *path, const char *extra_headers,
                              const void *body, size_t body_len, uint64_t timeout_ms, adm_call_cb cb,
                              void *arg)
{
    adm_call_t *call = call_new(u, NULL);

    if (call == NULL) {
        return NULL;
    }
    if (adm_http_write_post(&call->request, u->host_header, path, extra_headers, body, body_len) != 0) {
        call_release(call);
        return NULL;
    }
    return call_begin(u, call, timeout_ms, cb, arg);
}

adm_call_t *adm_upstream_stream(adm_upstream_t *u, const char *path, const char *extra_headers,
                                uint64_t timeout_ms, adm_call_chunk_cb chunk, adm_call_cb cb, void *arg)
{
    adm_call_t *call = call_new(u, chunk);

    if (call == NULL) {
        return NULL;
    }
    if (adm_http_write_get(&call->request, u->host_header, path, extra_headers) != 0) {
        call_release(call);
        return NULL;
    }
    return call_begin(u, call, timeout_ms, cb, arg);
}

adm_call_t *adm_upstream_get(adm_upstream_t *u, const char *path, const char *extra_headers,
                             uint64_t timeout_ms, adm_call_cb cb, void *arg)
{
    return adm_upstream_stream(u, path, extra_headers, timeout_ms, NULL, cb, arg);
}

void adm_call_cancel(adm_call_t *call)
{
    adm_upstream_conn_t *c;
    adm_upstream_t *u;

    if (call == NULL || !call->active) {
        return;
    }
    u = call->up;
    call->cb = NULL;
    call->chunk = NULL;
    c = call->conn;
    if (c != NULL) {
        c->call = NULL;
        call->conn = NULL;
        adm__upstream_conn_close(c);
    }
    if (call->queued) {
        wait_remove(u, call);
    }
    /* off the deadline list before the object goes back to the free list, or its next call loops */
    deadline_remove(u, call);
    if (!call->deferred) {
        uv_timer_stop(&call->timer);
        call_release(call);
    }
    if (c != NULL && u->in_callback == 0) {
        maybe_dial(u);
    }
}

void adm_call_abandon(adm_call_t *call)
{
    if (call == NULL || !call->active) {
        return;
    }
    call->cb = NULL;
    if (call->queued) {
        wait_remove(call->up, call);
        deadline_remove(call->up, call);
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
    adm_upstream_conn_t *c, *next;

    if (u->closing) {
        return;
    }
    u->closing = true;
    u->pending_closes++;
    uv_close((uv_handle_t *)&u->deadline_timer, on_deadline_timer_closed);
    for (c = u->conns.all; c != NULL; c = next) {
        next = c->next;
        if (c->state == CONN_CLOSING) {
            continue;
        }
        call = c->call;
        if (call != NULL) {
            c->call = NULL;
            call->conn = NULL;
        }
        adm__upstream_conn_close(c);
        if (call != NULL) {
            fail_call(call, ADM_CALL_IO, "upstream closed");
        }
    }
    while (u->wait_head != NULL) {
        fail_call(u->wait_head, ADM_CALL_IO, "upstream closed");
    }
    while (u->free_calls != NULL) {
        call = u->free_calls;
        u->free_calls = call->next;
        call_destroy(call);
    }
    upstream_free_if_done(u);
}

size_t adm_upstream_connections(const adm_upstream_t *u)
{
    return u->conns.nconns;
}

size_t adm_upstream_idle_connections(const adm_upstream_t *u)
{
    return u->conns.nidle;
}

uint64_t adm_upstream_dials(const adm_upstream_t *u)
{
    return u->conns.dials;
}

uint64_t adm_upstream_writes(const adm_upstream_t *u)
{
    return u->conns.writes;
}

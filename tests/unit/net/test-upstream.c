/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upstream pool (src/net/upstream.c) and its connections (src/net/upstream_conn.c) against a
 * small HTTP/1.1 server that runs on the test's own libuv loop, on 127.0.0.1:0. The test decides
 * what the server does (answer at once, hold answers until released, close a connection at a
 * chosen request, close its idle connections) and counts what reached it, so every case is
 * checked on the wire as well as through the callbacks. Nothing sleeps: each wait drives the loop
 * until a condition holds, under a deadline that only a broken pool reaches. Each test ends by
 * closing the upstream and the server and requiring uv_loop_close() to succeed, so a leaked handle
 * fails it, and callbacks are counted after that close, so a callback that should never run and
 * runs late fails it too.
 */
#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"
#include "adm/net/upstream.h"
#include "certgen.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define MAX_PEERS 16
#define MAX_REQUESTS 64
#define WAIT_MS 5000 /* only a broken pool waits this long */

/* ---- the server ---------------------------------------------------------------------------- */

typedef struct srv_s srv_t;

/* One connection the server accepted. */
typedef struct peer_s {
    uv_tcp_t tcp;
    srv_t *srv;
    int index;     /* in accept order */
    int nrequests; /* requests received on it */
    adm_buf_t in;  /* plaintext received, not parsed yet */
    adm_tls_session_t *tls;
    bool closing;
} peer_t;

struct srv_s {
    uv_tcp_t listener;
    bool listening;
    int port;
    adm_tls_ctx_t *tls; /* NULL: plain HTTP */
    peer_t *peers[MAX_PEERS];
    int accepted;
    int closed;                     /* peers whose connection ended (either side closed it) */
    int requests;                   /* requests received on all connections */
    char paths[MAX_REQUESTS][32];   /* their paths, in arrival order */
    bool hold;                      /* keep answers back until srv_release() */
    peer_t *held[MAX_REQUESTS];     /* the peers of held requests, oldest first (NULL: gone) */
    int held_request[MAX_REQUESTS]; /* and which request each was */
    int nheld, next_held;
    int close_at[MAX_PEERS]; /* close peer i on its close_at[i]-th request, unanswered */
    const char *close_path;  /* close any connection on which this path is asked for */
    /* Connections accepted from now on are never read: over TLS, their handshakes never finish. */
    bool stall_new;
    peer_t *streaming; /* the peer answering a /stream request, its body still open */
};

typedef struct write_req_s {
    uv_write_t req; /* first, so the request's address is the allocation's */
    char data[];
} write_req_t;

static uv_loop_t loop;
static srv_t srv;

static void on_peer_written(uv_write_t *req, int status)
{
    (void)status; /* UV_ECANCELED when the peer closed first */
    free(req);
}

static void peer_send_raw(peer_t *p, const void *data, size_t len)
{
    write_req_t *w = malloc(sizeof(*w) + len);
    uv_buf_t b;

    assert_non_null(w);
    memcpy(w->data, data, len);
    b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&p->tcp, &b, 1, on_peer_written) != 0) {
        free(w);
    }
}

/* With TLS: sends what the session queued (handshake records, alerts, answers). */
static void peer_flush(peer_t *p)
{
    adm_buf_t *out = adm_tls_session_output(p->tls);

    if (out->len > 0) {
        peer_send_raw(p, out->data, out->len);
        out->len = 0;
    }
}

static void peer_send(peer_t *p, const char *text)
{
    if (p->tls == NULL) {
        peer_send_raw(p, text, strlen(text));
        return;
    }
    assert_int_equal(adm_tls_session_send(p->tls, (const uint8_t *)text, strlen(text)), 0);
    peer_flush(p);
}

static void on_peer_closed(uv_handle_t *h)
{
    peer_t *p = h->data;

    for (int i = 0; i < p->srv->nheld; i++) {
        if (p->srv->held[i] == p) {
            p->srv->held[i] = NULL;
        }
    }
    p->srv->peers[p->index] = NULL;
    adm_buf_free(&p->in);
    adm_tls_session_destroy(p->tls);
    free(p);
}

static void peer_close(peer_t *p)
{
    if (p->closing) {
        return;
    }
    p->closing = true;
    p->srv->closed++;
    uv_close((uv_handle_t *)&p->tcp, on_peer_closed);
}

/* The answer to request n: its path as a text body, so each call can see it got its own answer. */
static void peer_answer(peer_t *p, int n)
{
    const char *path = p->srv->paths[n];
    char text[256];

    if (strncmp(path, "/stream", 7) == 0) {
        /* a watch: chunked, the first event at once, the rest when the test sends them */
        p->srv->streaming = p;
        peer_send(p, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n");
        return;
    }
    if (strcmp(path, "/gone") == 0) {
        peer_send(p, "HTTP/1.1 410 Gone\r\nContent-Length: 7\r\n\r\nExpired");
        return;
    }

    snprintf(text, sizeof(text),
             "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s", strlen(path),
             path);
    peer_send(p, text);
}

/*
 * Takes every whole request out of p->in. The client under test always writes "Content-Length: "
 * in that spelling, and requests are small, so the head is read as a string.
 */
static void peer_parse(peer_t *p)
{
    srv_t *s = p->srv;

    while (!p->closing && p->in.len > 0) {
        char head[4096];
        const uint8_t *end = memmem(p->in.data, p->in.len, "\r\n\r\n", 4);
        const char *cl;
        size_t head_len, body_len = 0;
        int n;

        if (end == NULL) {
            return;
        }
        head_len = (size_t)(end - p->in.data) + 4;
        assert_true(head_len < sizeof(head));
        memcpy(head, p->in.data, head_len);
        head[head_len] = '\0';
        cl = strstr(head, "\r\nContent-Length: ");
        if (cl != NULL) {
            body_len = strtoul(cl + 18, NULL, 10);
        }
        if (p->in.len < head_len + body_len) {
            return;
        }
        adm_buf_consume(&p->in, head_len + body_len);
        assert_true(s->requests < MAX_REQUESTS);
        n = s->requests++;
        assert_int_equal(sscanf(head, "%*s %31s HTTP/1.1", s->paths[n]), 1);
        p->nrequests++;
        if (s->close_at[p->index] == p->nrequests ||
            (s->close_path != NULL && strcmp(s->close_path, s->paths[n]) == 0)) {
            peer_close(p); /* as a server does that closes a kept-alive connection just then */
            return;
        }
        if (s->hold) {
            s->held[s->nheld] = p;
            s->held_request[s->nheld] = n;
            s->nheld++;
            continue;
        }
        peer_answer(p, n);
    }
}

static void on_peer_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base != NULL ? suggested : 0;
}

static void on_peer_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    peer_t *p = stream->data;
    int rc = 0;

    if (nread < 0) {
        peer_close(p);
    } else if (nread > 0 && p->tls != NULL) {
        rc = adm_tls_session_recv(p->tls, (const uint8_t *)buf->base, (size_t)nread, &p->in);
        peer_flush(p);
    } else if (nread > 0) {
        rc = adm_buf_append(&p->in, buf->base, (size_t)nread);
    }
    free(buf->base);
    if (rc != 0) {
        peer_close(p);
        return;
    }
    if (nread > 0) {
        peer_parse(p);
    }
}

static void on_srv_connection(uv_stream_t *listener, int status)
{
    srv_t *s = listener->data;
    peer_t *p = calloc(1, sizeof(*p));

    assert_int_equal(status, 0);
    assert_non_null(p);
    assert_true(s->accepted < MAX_PEERS);
    uv_tcp_init(&loop, &p->tcp);
    p->tcp.data = p;
    p->srv = s;
    p->index = s->accepted++;
    s->peers[p->index] = p;
    assert_int_equal(uv_accept(listener, (uv_stream_t *)&p->tcp), 0);
    if (s->tls != NULL) {
        assert_int_equal(adm_tls_session_create(s->tls, NULL, &p->tls), 0);
    }
    if (!s->stall_new) {
        assert_int_equal(uv_read_start((uv_stream_t *)&p->tcp, on_peer_alloc, on_peer_read), 0);
    }
}

/* Starts the server on 127.0.0.1 on a port of the kernel's choosing (srv.port). */
static void srv_start(adm_tls_ctx_t *tls)
{
    struct sockaddr_in addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound);

    srv.tls = tls;
    uv_tcp_init(&loop, &srv.listener);
    srv.listener.data = &srv;
    srv.listening = true;
    assert_int_equal(uv_ip4_addr("127.0.0.1", 0, &addr), 0);
    assert_int_equal(uv_tcp_bind(&srv.listener, (const struct sockaddr *)&addr, 0), 0);
    assert_int_equal(uv_listen((uv_stream_t *)&srv.listener, 64, on_srv_connection), 0);
    assert_int_equal(uv_tcp_getsockname(&srv.listener, (struct sockaddr *)&bound, &len), 0);
    srv.port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
}

/* Answers the oldest held request; false when none is left whose connection is still open. */
static bool srv_release(void)
{
    while (srv.next_held < srv.nheld) {
        int i = srv.next_held++;

        if (srv.held[i] != NULL && !srv.held[i]->closing) {
            peer_answer(srv.held[i], srv.held_request[i]);
            return true;
        }
    }
    return false;
}

/* Closes every connection, as a server does with its idle keep-alive connections. */
static void srv_close_peers(void)
{
    for (int i = 0; i < srv.accepted; i++) {
        if (srv.peers[i] != NULL) {
            peer_close(srv.peers[i]);
        }
    }
}

static void srv_stop(void)
{
    srv_close_peers();
    if (srv.listening) {
        srv.listening = false;
        uv_close((uv_handle_t *)&srv.listener, NULL);
    }
    adm_tls_ctx_unref(srv.tls);
    srv.tls = NULL;
}

/* ---- the client side ----------------------------------------------------------------------- */

typedef struct result_s {
    int calls;    /* times the callback ran */
    bool in_post; /* it ran inside adm_upstream_post */
    adm_call_error_t error;
    int status;
    bool reused;
    char detail[256];
    char body[64];
    uint64_t at_ms; /* loop time when it ran */
} result_t;

/* Results live here, not on a test's stack, so that a callback that comes after a failed test has
   returned (from the teardown's close) writes into memory that is still there. */
static result_t results[8];
static adm_upstream_t *up;
static bool posting; /* adm_upstream_post is running */
static uv_timer_t deadline;
static bool deadline_passed;
static char dir[256]; /* certificates for the TLS cases */

static void on_result(const adm_call_result_t *res, void *arg)
{
    result_t *r = arg;
    size_t n = res->body_len < sizeof(r->body) - 1 ? res->body_len : sizeof(r->body) - 1;

    r->calls++;
    r->in_post = r->in_post || posting;
    r->error = res->error;
    r->status = res->status;
    r->reused = res->reused;
    snprintf(r->detail, sizeof(r->detail), "%s", res->detail != NULL ? res->detail : "");
    memcpy(r->body, res->body != NULL ? (const char *)res->body : "", n);
    r->body[n] = '\0';
    r->at_ms = uv_now(&loop);
}

static void on_deadline(uv_timer_t *t)
{
    (void)t;
    deadline_passed = true;
}

/* Drives the loop until cond holds; fails the test if WAIT_MS pass first. */
#define WAIT_UNTIL(cond)                                                                                     \
    do {                                                                                                     \
        deadline_passed = false;                                                                             \
        uv_timer_start(&deadline, on_deadline, WAIT_MS, 0);                                                  \
        while (!(cond) && !deadline_passed) {                                                                \
            uv_run(&loop, UV_RUN_ONCE);                                                                      \
        }                                                                                                    \
        uv_timer_stop(&deadline);                                                                            \
        if (!(cond)) {                                                                                       \
            fail_msg("%s:%d: still not %s after %d ms", __FILE__, __LINE__, #cond, WAIT_MS);                 \
        }                                                                                                    \
    } while (0)

static adm_upstream_t *upstream_to(const char *host, int port, size_t max_conns, adm_tls_ctx_t *tls)
{
    adm_upstream_opts_t o = {0};

    o.host = host;
    o.port = (uint16_t)port;
    o.max_conns = max_conns;
    o.tls = tls;
    assert_int_equal(adm_upstream_create(&loop, &o, &up), 0);
    return up;
}

static adm_call_t *post(const char *path, uint64_t timeout_ms, result_t *r)
{
    adm_call_t *call;

    memset(r, 0, sizeof(*r));
    posting = true;
    call = adm_upstream_post(up, path, NULL, "{}", 2, timeout_ms, on_result, r);
    posting = false;
    assert_non_null(call);
    return call;
}

/* Closes the upstream and the server and runs the loop until nothing of either is left. */
static void finish(void)
{
    if (up != NULL) {
        adm_upstream_close(up);
        up = NULL;
    }
    srv_stop();
    uv_run(&loop, UV_RUN_DEFAULT);
}

static int setup(void **state)
{
    (void)state;
    memset(&srv, 0, sizeof(srv));
    memset(results, 0, sizeof(results));
    up = NULL;
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &deadline);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    finish();
    uv_close((uv_handle_t *)&deadline, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return -1;
    }
    return certgen_make(dir, "otherca", "other CA", NULL, false);
}

static int group_teardown(void **state)
{
    (void)state;
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

/*
 * A server context with a generated certificate (srv_start takes it), a client context that
 * trusts that certificate and, when distrusting is not NULL, one that trusts another CA only.
 */
static void tls_contexts(adm_tls_ctx_t **server, adm_tls_ctx_t **trusting, adm_tls_ctx_t **distrusting)
{
    adm_tls_server_opts_t so = {0};
    adm_tls_client_opts_t co = {0};
    char pem[512], other[512], err[256];

    snprintf(pem, sizeof(pem), "%s/selfsigned.pem", dir);
    snprintf(other, sizeof(other), "%s/otherca.crt.pem", dir);
    so.self_signed_out = pem;
    if (adm_tls_server_ctx_create(&so, server, err, sizeof(err)) != 0) {
        fail_msg("server context: %s", err);
    }
    co.ca_file = pem;
    if (adm_tls_client_ctx_create(&co, trusting, err, sizeof(err)) != 0) {
        fail_msg("client context: %s", err);
    }
    co.ca_file = other;
    if (distrusting != NULL && adm_tls_client_ctx_create(&co, distrusting, err, sizeof(err)) != 0) {
        fail_msg("client context: %s", err);
    }
}

/* ---- the cases ----------------------------------------------------------------------------- */

/* N calls one after another: one dial, one connection, every answer after the first reused. */
static void test_keepalive_reuse(void **state)
{
    result_t *r = &results[0];
    char path[16];

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "/k%d", i);
        post(path, 5000, r);
        WAIT_UNTIL(r->calls == 1);
        assert_int_equal(r->error, ADM_CALL_OK);
        assert_int_equal(r->status, 200);
        assert_string_equal(r->body, path);
        assert_int_equal(r->reused, i > 0);
        assert_int_equal(adm_upstream_idle_connections(up), 1);
    }
    assert_int_equal(adm_upstream_dials(up), 1);
    assert_int_equal(adm_upstream_connections(up), 1);
    assert_int_equal(srv.accepted, 1);
    assert_int_equal(srv.requests, 5);
    finish();
    assert_int_equal(r->calls, 1);
}

/*
 * Five calls on an upstream bounded to two connections while the server holds its answers: two
 * connections, two requests on the wire, three calls waiting. Each answer frees a connection for
 * the oldest waiting call, so the rest go out in the order they were posted.
 */
static void test_bound_and_fifo(void **state)
{
    result_t *r = &results[0];
    char path[16];

    (void)state;
    srv.hold = true;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 2, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "/c%d", i);
        post(path, 5000, &r[i]);
    }
    WAIT_UNTIL(srv.requests == 2);
    assert_int_equal(adm_upstream_dials(up), 2);
    assert_int_equal(adm_upstream_connections(up), 2);
    /* Which of the two connections the server reads first is up to the kernel. */
    assert_true((strcmp(srv.paths[0], "/c0") == 0 && strcmp(srv.paths[1], "/c1") == 0) ||
                (strcmp(srv.paths[0], "/c1") == 0 && strcmp(srv.paths[1], "/c0") == 0));
    for (int k = 2; k < 5; k++) {
        snprintf(path, sizeof(path), "/c%d", k);
        assert_true(srv_release());
        WAIT_UNTIL(srv.requests == k + 1);
        assert_string_equal(srv.paths[k], path);
    }
    while (srv_release()) {
    }
    WAIT_UNTIL(r[0].calls + r[1].calls + r[2].calls + r[3].calls + r[4].calls == 5);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "/c%d", i);
        assert_int_equal(r[i].error, ADM_CALL_OK);
        assert_string_equal(r[i].body, path);
    }
    assert_int_equal(srv.accepted, 2);
    assert_int_equal(adm_upstream_dials(up), 2);
    finish();
}

/*
 * A server that never answers: the call on the connection ends at its deadline, and so does a
 * call that waited for a connection all along (its deadline covers the wait), each once. The
 * connection caught mid-answer is closed, and the waiting call's request never went out.
 */
static void test_deadline(void **state)
{
    result_t *on_conn = &results[0], *waiting = &results[1];
    uint64_t start;

    (void)state;
    srv.hold = true;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 1, NULL);
    uv_update_time(&loop);
    start = uv_now(&loop);
    post("/hang", 300, on_conn);
    post("/wait", 100, waiting);
    WAIT_UNTIL(on_conn->calls == 1 && waiting->calls == 1);
    assert_int_equal(waiting->error, ADM_CALL_TIMEOUT);
    assert_string_equal(waiting->detail, "context deadline exceeded");
    assert_true(waiting->at_ms - start >= 100);
    assert_int_equal(on_conn->error, ADM_CALL_TIMEOUT);
    assert_string_equal(on_conn->detail, "context deadline exceeded");
    assert_true(on_conn->at_ms - start >= 300);
    assert_true(waiting->at_ms < on_conn->at_ms);
    WAIT_UNTIL(srv.closed == 1);
    assert_int_equal(adm_upstream_connections(up), 0);
    assert_int_equal(srv.requests, 1);
    finish();
    assert_int_equal(on_conn->calls, 1);
    assert_int_equal(waiting->calls, 1);
}

/*
 * The pool's one deadline timer is armed for the earliest call and not moved when that call ends:
 * answered in time, it leaves the timer to fire early, find nothing due and arm itself for the
 * next call, which still times out at its own deadline, not before and not never.
 */
static void test_deadline_after_earlier_call_ended(void **state)
{
    result_t *quick = &results[0], *slow = &results[1];
    uint64_t start;

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 2, NULL);
    uv_update_time(&loop);
    start = uv_now(&loop);
    post("/quick", 100, quick);
    WAIT_UNTIL(quick->calls == 1);
    assert_int_equal(quick->error, ADM_CALL_OK);
    srv.hold = true;
    post("/slow", 300, slow);
    WAIT_UNTIL(slow->calls == 1);
    assert_int_equal(slow->error, ADM_CALL_TIMEOUT);
    assert_true(slow->at_ms - start >= 300);
    finish();
    assert_int_equal(quick->calls, 1);
    assert_int_equal(slow->calls, 1);
}

/* The server closes an idle connection: the pool notices by itself, and the next call dials. */
static void test_idle_close_redial(void **state)
{
    result_t *r = &results[0];

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    post("/a", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(adm_upstream_idle_connections(up), 1);
    srv_close_peers();
    WAIT_UNTIL(adm_upstream_connections(up) == 0);
    assert_int_equal(adm_upstream_idle_connections(up), 0);
    post("/b", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(r->error, ADM_CALL_OK);
    assert_string_equal(r->body, "/b");
    assert_false(r->reused);
    assert_int_equal(adm_upstream_dials(up), 2);
    assert_int_equal(srv.accepted, 2);
    assert_int_equal(srv.requests, 2); /* nothing was sent on the dead connection */
    finish();
}

/*
 * /a goes out on a new connection and is answered; the server closes that kept-alive connection
 * as /b arrives on it, so /b is sent again on a new one, which the server closes as well when
 * close_second says so. Returns /b's result, with the upstream and the server closed.
 */
static const result_t *stale_case(bool close_second)
{
    result_t *r = &results[0];

    srv.close_at[0] = 2;
    srv.close_at[1] = close_second ? 1 : 0;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    post("/a", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    post("/b", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(srv.requests, 3);
    assert_string_equal(srv.paths[1], "/b");
    assert_string_equal(srv.paths[2], "/b");
    assert_int_equal(srv.accepted, 2);
    assert_int_equal(adm_upstream_dials(up), 2);
    finish();
    assert_int_equal(r->calls, 1);
    return r;
}

/* The server closes a kept-alive connection as the next request arrives: sent again, answered. */
static void test_stale_resent(void **state)
{
    const result_t *r = stale_case(false);

    (void)state;
    assert_int_equal(r->error, ADM_CALL_OK);
    assert_string_equal(r->body, "/b");
    assert_false(r->reused); /* answered on the new connection */
}

/* Sent again once only: when the new connection fails too, the call fails (no third try). */
static void test_stale_resent_once(void **state)
{
    const result_t *r = stale_case(true);

    (void)state;
    assert_int_equal(r->error, ADM_CALL_IO);
    assert_string_equal(r->detail, "EOF");
}

/* A fresh connection that breaks is the server's answer, not a race: the call is not sent again. */
static void test_fresh_not_resent(void **state)
{
    result_t *r = &results[0];

    (void)state;
    srv.close_at[0] = 1;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    post("/a", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(r->error, ADM_CALL_IO);
    assert_string_equal(r->detail, "EOF");
    assert_int_equal(srv.requests, 1);
    assert_int_equal(srv.accepted, 1);
    assert_int_equal(adm_upstream_dials(up), 1);
    finish();
    assert_int_equal(r->calls, 1);
}

/*
 * Sent again once only, also when the second try meets a stale kept-alive connection: the call
 * waits for a new connection (whose TLS handshake the server never answers) when another
 * kept-alive one frees up and takes it, and that one has been closed by the server too. Two
 * tries, then the call fails; it does not wait for a third.
 */
static void test_stale_resent_once_reused(void **state)
{
    result_t *x = &results[0], *y = &results[1], *h = &results[2], *b = &results[3];
    adm_tls_ctx_t *server = NULL, *trusting = NULL;

    (void)state;
    tls_contexts(&server, &trusting, NULL);
    srv.hold = true;
    srv_start(server);
    upstream_to("127.0.0.1", srv.port, 3, trusting);
    adm_tls_ctx_unref(trusting); /* the upstream holds its own reference */
    /* Two kept-alive connections. */
    post("/x", 5000, x);
    post("/y", 5000, y);
    WAIT_UNTIL(srv.requests == 2);
    assert_true(srv_release());
    assert_true(srv_release());
    WAIT_UNTIL(x->calls == 1 && y->calls == 1);
    assert_int_equal(adm_upstream_idle_connections(up), 2);
    /* One carries /h, held; /b meets the other, which the server closes on it. */
    srv.close_path = "/b";
    post("/h", 5000, h);
    WAIT_UNTIL(srv.requests == 3);
    srv.stall_new = true;
    post("/b", 5000, b);
    WAIT_UNTIL(srv.accepted == 3); /* the new connection for the second try */
    assert_int_equal(b->calls, 0);
    /* /h's answer frees its connection, /b takes it, and the server closes that one as well. */
    assert_true(srv_release());
    WAIT_UNTIL(b->calls == 1);
    assert_int_equal(b->error, ADM_CALL_IO);
    assert_string_equal(b->detail, "EOF");
    assert_int_equal(h->calls, 1);
    assert_int_equal(h->error, ADM_CALL_OK);
    assert_int_equal(srv.requests, 5);
    assert_string_equal(srv.paths[3], "/b");
    assert_string_equal(srv.paths[4], "/b");
    finish();
    assert_int_equal(b->calls, 1);
}

/*
 * Abandoned calls never hear back. A waiting one leaves the queue at once (its request never goes
 * out); one already on a connection still completes there, so the connection is kept.
 */
static void test_abandon(void **state)
{
    result_t *a = &results[0], *waiting = &results[1], *on_conn = &results[2];
    adm_call_t *call;

    (void)state;
    srv.hold = true;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 1, NULL);
    post("/a", 5000, a);
    call = post("/waiting", 5000, waiting);
    WAIT_UNTIL(srv.requests == 1);
    adm_call_abandon(call);
    assert_true(srv_release());
    WAIT_UNTIL(a->calls == 1 && adm_upstream_idle_connections(up) == 1);
    assert_int_equal(a->error, ADM_CALL_OK);
    assert_int_equal(srv.requests, 1);

    call = post("/on-conn", 5000, on_conn);
    WAIT_UNTIL(srv.requests == 2);
    adm_call_abandon(call);
    assert_true(srv_release());
    WAIT_UNTIL(adm_upstream_idle_connections(up) == 1);
    assert_int_equal(adm_upstream_dials(up), 1);
    finish();
    assert_int_equal(waiting->calls, 0);
    assert_int_equal(on_conn->calls, 0);
}

/*
 * A redirected call goes on as before and only the new callback runs, once: for an answer on a
 * connection, and for a waiting call's deadline.
 */
static void test_redirect(void **state)
{
    result_t *first = &results[0], *second = &results[1], *waiting_first = &results[2],
             *waiting_second = &results[3];
    adm_call_t *call, *waiting;

    (void)state;
    srv.hold = true;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 1, NULL);
    call = post("/a", 5000, first);
    waiting = post("/w", 100, waiting_first);
    WAIT_UNTIL(srv.requests == 1);
    adm_call_redirect(call, on_result, second);
    adm_call_redirect(waiting, on_result, waiting_second);
    WAIT_UNTIL(waiting_second->calls == 1);
    assert_int_equal(waiting_second->error, ADM_CALL_TIMEOUT);
    assert_true(srv_release());
    WAIT_UNTIL(second->calls == 1);
    assert_int_equal(second->error, ADM_CALL_OK);
    assert_string_equal(second->body, "/a");
    finish();
    assert_int_equal(first->calls, 0);
    assert_int_equal(second->calls, 1);
    assert_int_equal(waiting_first->calls, 0);
    assert_int_equal(waiting_second->calls, 1);
}

/*
 * No callback runs inside adm_upstream_post, even when the dial fails within it: Linux refuses a
 * TCP connect to the broadcast address in connect(2) itself (ENETUNREACH), so uv_tcp_connect
 * fails at once and the call being posted ends before adm_upstream_post returns. Its callback
 * still runs only later, from the loop; so does the next call's.
 */
static void test_no_callback_inside_post_dial_fails_at_once(void **state)
{
    result_t *r = &results[0];

    (void)state;
    upstream_to("255.255.255.255", 80, 1, NULL);
    post("/a", 5000, &r[0]);
    post("/b", 5000, &r[1]);
    assert_int_equal(r[0].calls + r[1].calls, 0);
    WAIT_UNTIL(r[0].calls == 1 && r[1].calls == 1);
    for (int i = 0; i < 2; i++) {
        assert_false(r[i].in_post);
        assert_int_equal(r[i].error, ADM_CALL_CONNECT);
        assert_non_null(strstr(r[i].detail, "dial tcp 255.255.255.255:80: connect: "));
    }
    finish();
}

/* The same for a closed port, which libuv reports from the loop (connection refused). */
static void test_no_callback_inside_post_refused(void **state)
{
    uv_tcp_t probe;
    struct sockaddr_in addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    int port;
    char want[64];
    result_t *r = &results[0];

    (void)state;
    /* A port that was just free: bound, never listened on, closed. */
    uv_tcp_init(&loop, &probe);
    assert_int_equal(uv_ip4_addr("127.0.0.1", 0, &addr), 0);
    assert_int_equal(uv_tcp_bind(&probe, (const struct sockaddr *)&addr, 0), 0);
    assert_int_equal(uv_tcp_getsockname(&probe, (struct sockaddr *)&bound, &len), 0);
    port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    uv_close((uv_handle_t *)&probe, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);

    upstream_to("127.0.0.1", port, 1, NULL);
    post("/a", 5000, r);
    assert_int_equal(r->calls, 0);
    WAIT_UNTIL(r->calls == 1);
    assert_false(r->in_post);
    assert_int_equal(r->error, ADM_CALL_CONNECT);
    snprintf(want, sizeof(want), "dial tcp 127.0.0.1:%d: connect: connection refused", port);
    assert_string_equal(r->detail, want);
    finish();
}

/*
 * Over TLS: the handshake happens once and the connection is kept for the next calls; a client
 * that does not trust the server's certificate fails the call with a TLS error.
 */
static void test_tls(void **state)
{
    adm_tls_ctx_t *server = NULL, *trusting = NULL, *distrusting = NULL;
    result_t *r = &results[0];

    (void)state;
    tls_contexts(&server, &trusting, &distrusting);
    srv_start(server);

    upstream_to("127.0.0.1", srv.port, 4, trusting);
    for (int i = 0; i < 3; i++) {
        post("/t", 5000, r);
        WAIT_UNTIL(r->calls == 1);
        assert_int_equal(r->error, ADM_CALL_OK);
        assert_string_equal(r->body, "/t");
        assert_int_equal(r->reused, i > 0);
    }
    assert_int_equal(adm_upstream_dials(up), 1);
    assert_int_equal(srv.accepted, 1);
    adm_upstream_close(up);

    upstream_to("127.0.0.1", srv.port, 4, distrusting);
    post("/t", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(r->error, ADM_CALL_TLS);
    assert_string_equal(r->detail, "tls: TLS handshake failed: certificate verification failed (unknown CA)");
    assert_int_equal(srv.requests, 3);
    adm_tls_ctx_unref(trusting);
    adm_tls_ctx_unref(distrusting);
    finish();
}

/* A streamed GET's reader: gathers the pieces, and cancels at a given total when asked. */
typedef struct stream_s {
    char got[64];
    size_t len;
    int pieces;
    size_t cancel_at; /* return nonzero once this many bytes came; 0: never */
} stream_t;

static stream_t streams[2];

static int on_piece(const uint8_t *data, size_t len, void *arg)
{
    result_t *r = arg;
    stream_t *st = &streams[r - results];
    size_t n = len < sizeof(st->got) - 1 - st->len ? len : sizeof(st->got) - 1 - st->len;

    memcpy(st->got + st->len, data, n);
    st->len += n;
    st->got[st->len] = '\0';
    st->pieces++;
    return st->cancel_at != 0 && st->len >= st->cancel_at;
}

static adm_call_t *stream(const char *path, result_t *r)
{
    adm_call_t *call;

    memset(r, 0, sizeof(*r));
    memset(&streams[r - results], 0, sizeof(streams[0]));
    call = adm_upstream_stream(up, path, "Authorization: Bearer t\r\n", 5000, on_piece, on_result, r);
    assert_non_null(call);
    return call;
}

/*
 * A watch-like GET: the body reaches the reader piece by piece while the answer is still open, the
 * callback runs once at its end (200, no body kept), and the connection then carries the next call.
 * A non-2xx answer is gathered whole and never reaches the reader.
 */
static void test_stream(void **state)
{
    result_t *r = &results[0], *after = &results[1];

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    stream("/stream-a", r);
    WAIT_UNTIL(streams[0].len == 6);
    assert_string_equal(streams[0].got, "first\n");
    assert_int_equal(r->calls, 0);
    peer_send(srv.streaming, "7\r\nsecond\n\r\n");
    WAIT_UNTIL(streams[0].len == 13);
    assert_string_equal(streams[0].got, "first\nsecond\n");
    assert_int_equal(r->calls, 0);
    peer_send(srv.streaming, "0\r\n\r\n");
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(r->error, ADM_CALL_OK);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "");

    stream("/gone", after);
    WAIT_UNTIL(after->calls == 1);
    assert_int_equal(after->status, 410);
    assert_string_equal(after->body, "Expired");
    assert_true(after->reused);
    assert_int_equal(streams[1].pieces, 0);
    assert_int_equal(adm_upstream_dials(up), 1);
    finish();
    assert_int_equal(r->calls, 1);
}

/*
 * Cancelling a watch, from outside and from inside its reader: no callback ever runs, the
 * connection caught mid-body is closed (the server sees it go), and the next call dials anew.
 */
static void test_stream_cancel(void **state)
{
    result_t *r = &results[0], *inside = &results[1], *next = &results[2];
    adm_call_t *call;

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    call = stream("/stream-out", r);
    WAIT_UNTIL(streams[0].len == 6);
    adm_call_cancel(call);
    WAIT_UNTIL(srv.closed == 1);
    assert_int_equal(adm_upstream_connections(up), 0);

    stream("/stream-in", inside);
    streams[1].cancel_at = 8;
    WAIT_UNTIL(streams[1].len == 6);
    peer_send(srv.streaming, "7\r\nsecond\n\r\n");
    WAIT_UNTIL(srv.closed == 2);
    assert_int_equal(streams[1].len, 13);

    post("/after", 5000, next);
    WAIT_UNTIL(next->calls == 1);
    assert_int_equal(next->status, 200);
    assert_int_equal(adm_upstream_dials(up), 3);
    finish();
    assert_int_equal(r->calls, 0);
    assert_int_equal(inside->calls, 0);
}

/*
 * A cancelled call leaves nothing behind: the calls that reuse its object (the free list gives it
 * back first) are timed as any other, each failing at its own deadline, the shorter first. A
 * cancelled call that stayed on the deadline list made the next one loop on it.
 */
static void test_cancel_then_deadlines(void **state)
{
    result_t *watch = &results[0], *longer = &results[1], *shorter = &results[2];
    adm_call_t *call;
    uint64_t start;

    (void)state;
    srv_start(NULL);
    upstream_to("127.0.0.1", srv.port, 4, NULL);
    call = stream("/stream-out", watch);
    WAIT_UNTIL(streams[0].len == 6);
    adm_call_cancel(call);
    srv.hold = true;
    uv_update_time(&loop);
    start = uv_now(&loop);
    post("/longer", 300, longer);
    post("/shorter", 100, shorter);
    WAIT_UNTIL(longer->calls == 1 && shorter->calls == 1);
    assert_int_equal(shorter->error, ADM_CALL_TIMEOUT);
    assert_int_equal(longer->error, ADM_CALL_TIMEOUT);
    assert_true(shorter->at_ms - start >= 100);
    assert_true(longer->at_ms - start >= 300);
    assert_true(shorter->at_ms < longer->at_ms);
    assert_int_equal(watch->calls, 0);
    finish();
}

/*
 * A call's request leaves in one socket write over TLS, whatever its size: a 4 KB review (one TLS
 * record, written straight from mbedTLS's record buffer) and a 40 KB one (three records, queued
 * together and written at once). Counted by the pool itself, so a request split into head and
 * body, or records written one by one, fails here.
 */
static void test_tls_one_write_per_call(void **state)
{
    static const size_t sizes[] = {4096, 40000, 4096};
    adm_tls_ctx_t *server = NULL, *trusting = NULL;
    result_t *r = &results[0];
    char *body = malloc(40000);
    uint64_t before;

    (void)state;
    assert_non_null(body);
    memset(body, 'x', 40000);
    tls_contexts(&server, &trusting, NULL);
    srv_start(server);
    upstream_to("127.0.0.1", srv.port, 4, trusting);
    post("/up", 5000, r); /* the dial and handshake: their flights are writes of their own */
    WAIT_UNTIL(r->calls == 1);
    assert_int_equal(r->error, ADM_CALL_OK);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        memset(r, 0, sizeof(*r));
        before = adm_upstream_writes(up);
        assert_non_null(adm_upstream_post(up, "/w", NULL, body, sizes[i], 5000, on_result, r));
        assert_int_equal(adm_upstream_writes(up) - before, 1);
        WAIT_UNTIL(r->calls == 1);
        assert_int_equal(r->error, ADM_CALL_OK);
        assert_string_equal(r->body, "/w");
        assert_true(r->reused);
        assert_int_equal(adm_upstream_writes(up) - before, 1);
    }
    assert_int_equal(adm_upstream_dials(up), 1);
    assert_int_equal(srv.requests, 4);
    free(body);
    adm_tls_ctx_unref(trusting);
    finish();
}

static bool tick_passed;

static void on_tick(uv_timer_t *t)
{
    (void)t;
    tick_passed = true;
}

/*
 * The idle deadline counts from the last time the connection was parked, although its timer is
 * not restarted per call: a connection used again part-way through its idle time stays open for
 * a whole idle time after that call, then closes by itself.
 */
static void test_idle_deadline_after_reuse(void **state)
{
    adm_upstream_opts_t o = {0};
    result_t *r = &results[0];
    uv_timer_t tick;
    uint64_t answered;

    (void)state;
    srv_start(NULL);
    o.host = "127.0.0.1";
    o.port = (uint16_t)srv.port;
    o.max_conns = 4;
    o.idle_timeout_ms = 300;
    assert_int_equal(adm_upstream_create(&loop, &o, &up), 0);
    post("/a", 5000, r);
    WAIT_UNTIL(r->calls == 1);
    uv_timer_init(&loop, &tick);
    tick_passed = false;
    uv_timer_start(&tick, on_tick, 200, 0);
    WAIT_UNTIL(tick_passed);
    post("/b", 5000, &results[1]);
    WAIT_UNTIL(results[1].calls == 1); /* the second call's own answer, not the first's */
    answered = uv_now(&loop);
    assert_true(results[1].reused);
    WAIT_UNTIL(adm_upstream_connections(up) == 0);
    /* libuv's clock counts whole milliseconds, so allow a few; an idle time counted from the first
       park would close it about 100 ms after the second answer */
    assert_true(uv_now(&loop) - answered >= 295);
    assert_int_equal(adm_upstream_dials(up), 1);
    uv_close((uv_handle_t *)&tick, NULL);
    finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_keepalive_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_and_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_after_earlier_call_ended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_close_redial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_resent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_resent_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_resent_once_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fresh_not_resent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redirect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_callback_inside_post_dial_fails_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_callback_inside_post_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_then_deadlines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls_one_write_per_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_deadline_after_reuse, setup, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

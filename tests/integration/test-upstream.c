/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upstream client pool (upstream.h) against real admitd-mockhook processes over TLS on
 * 127.0.0.1: every mockhook behaviour as the pool sees it, keep-alive reuse, the connection bound,
 * parallel calls, deadlines, stale connections, connect and TLS failures, name resolution, and
 * abandoned calls. Every wait runs the loop until a condition holds, with a deadline.
 */
#include "adm/base/error.h"
#include "adm/net/tls.h"
#include "adm/net/upstream.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

typedef struct result_s {
    bool done;
    adm_call_result_t res;
    char detail[256];
    char body[4096];
    char content_type[128];
    long long at_ms;
} result_t;

static uv_loop_t loop;
static h_server_t mock;
static adm_tls_ctx_t *trusting; /* trusts the mockhook's certificate */

static void on_result(const adm_call_result_t *res, void *arg)
{
    result_t *r = arg;
    size_t n = res->body_len < sizeof(r->body) - 1 ? res->body_len : sizeof(r->body) - 1;

    r->done = true;
    r->res = *res;
    snprintf(r->detail, sizeof(r->detail), "%s", res->detail != NULL ? res->detail : "");
    snprintf(r->content_type, sizeof(r->content_type), "%s",
             res->content_type != NULL ? res->content_type : "");
    memcpy(r->body, res->body != NULL ? (const char *)res->body : "", n);
    r->body[n] = '\0';
    r->at_ms = h_now_ms();
}

static void on_deadline(uv_timer_t *t)
{
    *(bool *)t->data = true;
}

/* Runs the loop until all n results are done; false when timeout_ms passes first. */
static bool wait_results(result_t *rs, size_t n, int timeout_ms)
{
    uv_timer_t timer;
    bool expired = false;
    bool all = false;

    uv_timer_init(&loop, &timer);
    timer.data = &expired;
    uv_timer_start(&timer, on_deadline, (uint64_t)timeout_ms, 0);
    while (!expired) {
        all = true;
        for (size_t i = 0; i < n; i++) {
            all = all && rs[i].done;
        }
        if (all) {
            break;
        }
        uv_run(&loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    return all;
}

static bool idle_is(adm_upstream_t *u, size_t want, int timeout_ms)
{
    uv_timer_t timer;
    bool expired = false;

    uv_timer_init(&loop, &timer);
    timer.data = &expired;
    uv_timer_start(&timer, on_deadline, (uint64_t)timeout_ms, 0);
    while (!expired && adm_upstream_idle_connections(u) != want) {
        uv_run(&loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    return adm_upstream_idle_connections(u) == want;
}

static adm_upstream_t *upstream(int port, adm_tls_ctx_t *tls, const char *dial_host, size_t max_conns)
{
    adm_upstream_opts_t o = {0};
    adm_upstream_t *u;

    o.host = "127.0.0.1";
    o.dial_host = dial_host;
    o.port = (uint16_t)port;
    o.tls = tls;
    o.max_conns = max_conns;
    assert_int_equal(adm_upstream_create(&loop, &o, &u), 0);
    return u;
}

static void close_upstream(adm_upstream_t *u)
{
    adm_upstream_close(u);
    uv_run(&loop, UV_RUN_DEFAULT);
}

static void post(adm_upstream_t *u, const char *path, uint64_t timeout_ms, result_t *r)
{
    char *review = h_review("2b9c7a34-58a5-4c50-9a5f-9f0f8f0c1d11");

    memset(r, 0, sizeof(*r));
    assert_non_null(adm_upstream_post(u, path, NULL, review, strlen(review), timeout_ms, on_result, r));
    free(review);
}

static int setup(void **state)
{
    const char *args[] = {"--route",
                          "/deny=deny:not today",
                          "--route",
                          "/deny-bare=deny",
                          "--route",
                          "/patch=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/x\",\"value\":\"y\"}]",
                          "--route",
                          "/error=error:500",
                          "--route",
                          "/garbage=invalid-json",
                          "--route",
                          "/wrong-uid=wrong-uid",
                          "--route",
                          "/hang=hang",
                          "--route",
                          "/close=close",
                          "--route",
                          "/reset=reset",
                          "--route",
                          "/slow=allow",
                          "--route-delay",
                          "/slow=200ms",
                          "--idle-timeout",
                          "1s",
                          NULL};
    adm_tls_client_opts_t o = {0};
    char err[256];

    (void)state;
    assert_int_equal(adm_tls_global_init(), 0);
    uv_loop_init(&loop);
    assert_int_equal(h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, args), 0);
    o.ca_file = mock.ca;
    assert_int_equal(adm_tls_client_ctx_create(&o, &trusting, err, sizeof(err)), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    h_stop(&mock, 15, 5000);
    h_cleanup(&mock);
    adm_tls_ctx_unref(trusting);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    adm_tls_global_cleanup();
    return 0;
}

static void test_behaviours(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 4);
    result_t r[6];

    (void)state;
    post(u, "/allow", 5000, &r[0]);
    post(u, "/deny", 5000, &r[1]);
    post(u, "/patch", 5000, &r[2]);
    post(u, "/error", 5000, &r[3]);
    post(u, "/garbage", 5000, &r[4]);
    post(u, "/wrong-uid", 5000, &r[5]);
    assert_true(wait_results(r, 6, 10000));
    for (int i = 0; i < 6; i++) {
        assert_int_equal(r[i].res.error, ADM_CALL_OK);
    }
    assert_int_equal(r[0].res.status, 200);
    assert_non_null(strstr(r[0].body, "\"uid\":\"2b9c7a34-58a5-4c50-9a5f-9f0f8f0c1d11\",\"allowed\":true"));
    assert_non_null(
        strstr(r[1].body, "\"allowed\":false,\"status\":{\"code\":403,\"message\":\"not today\"}"));
    assert_non_null(strstr(r[2].body, "\"patchType\":\"JSONPatch\",\"patch\":\""));
    assert_int_equal(r[3].res.status, 500);
    assert_string_equal(r[3].content_type, "text/plain; charset=utf-8");
    assert_string_equal(r[4].body, "this is not json");
    assert_string_equal(r[4].content_type, "application/json");
    assert_null(strstr(r[5].body, "2b9c7a34"));
    close_upstream(u);
}

static void test_transport_failures(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 4);
    result_t r[3];
    long long t0 = h_now_ms();

    (void)state;
    post(u, "/hang", 300, &r[0]);
    post(u, "/close", 5000, &r[1]);
    post(u, "/reset", 5000, &r[2]);
    assert_true(wait_results(r, 3, 10000));
    assert_int_equal(r[0].res.error, ADM_CALL_TIMEOUT);
    assert_string_equal(r[0].detail, "context deadline exceeded");
    assert_true(r[0].at_ms - t0 >= 290 && r[0].at_ms - t0 < 2000);
    assert_int_equal(r[1].res.error, ADM_CALL_IO);
    assert_string_equal(r[1].detail, "EOF");
    assert_int_equal(r[2].res.error, ADM_CALL_IO);
    assert_non_null(strstr(r[2].detail, "connection reset by peer"));
    close_upstream(u);
}

static void test_keep_alive_and_bound(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 2);
    result_t r[6];
    long long t0;

    (void)state;
    /* one after another: one connection carries them all */
    for (int i = 0; i < 20; i++) {
        post(u, "/allow", 5000, &r[0]);
        assert_true(wait_results(r, 1, 5000));
        assert_int_equal(r[0].res.status, 200);
        assert_int_equal(r[0].res.reused, i > 0);
    }
    assert_int_equal(adm_upstream_dials(u), 1);
    /* six 200 ms calls through at most two connections: three rounds */
    t0 = h_now_ms();
    for (int i = 0; i < 6; i++) {
        post(u, "/slow", 5000, &r[i]);
    }
    assert_true(adm_upstream_connections(u) <= 2);
    assert_true(wait_results(r, 6, 5000));
    assert_true(h_now_ms() - t0 >= 590);
    assert_true(adm_upstream_connections(u) <= 2);
    assert_true(adm_upstream_dials(u) <= 2);
    close_upstream(u);
}

static void test_parallel_calls(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 0);
    result_t r[5];
    long long t0 = h_now_ms();

    (void)state;
    for (int i = 0; i < 5; i++) {
        post(u, "/slow", 5000, &r[i]);
    }
    assert_true(wait_results(r, 5, 5000));
    for (int i = 0; i < 5; i++) {
        assert_int_equal(r[i].res.status, 200);
    }
    /*
     * five 200 ms answers on five connections at once, not one after another: five dials, and
     * less than the 1,000 ms the five would take in series (the margin is for five handshakes on
     * a loaded machine under ASan, which once took this past 400 ms)
     */
    assert_int_equal(adm_upstream_dials(u), 5);
    assert_true(h_now_ms() - t0 < 1000);
    close_upstream(u);
}

static void test_server_closes_idle_connection(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 4);
    result_t r[1];

    (void)state;
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(adm_upstream_idle_connections(u), 1);
    /* the mockhook closes connections idle for 1 s: the pool notices and drops it */
    assert_true(idle_is(u, 0, 5000));
    assert_int_equal(adm_upstream_connections(u), 0);
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(r[0].res.status, 200);
    assert_false(r[0].res.reused);
    assert_int_equal(adm_upstream_dials(u), 2);
    close_upstream(u);
}

static void test_stale_connection_sent_once_more(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 1);
    result_t r[1];

    (void)state;
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(adm_upstream_dials(u), 1);
    /* the server closes the kept-alive connection on the request: sent once more on a new one,
       which fails the same way, and that failure is the answer (no third try) */
    post(u, "/close", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(r[0].res.error, ADM_CALL_IO);
    assert_string_equal(r[0].detail, "EOF");
    assert_int_equal(adm_upstream_dials(u), 2);
    /* a first call on a fresh connection is never resent */
    post(u, "/close", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(adm_upstream_dials(u), 3);
    close_upstream(u);
}

static void test_connect_and_tls_failures(void **state)
{
    adm_tls_client_opts_t o = {0};
    adm_tls_ctx_t *system_cas;
    adm_upstream_t *u;
    result_t r[1];
    char err[256];
    h_server_t other;
    const char *args[] = {NULL};

    (void)state;
    /* a port nobody listens on: take one from a server that has stopped */
    assert_int_equal(h_start_prog(&other, h_bin("MOCKHOOK_BIN"), NULL, args), 0);
    h_stop(&other, 15, 5000);
    u = upstream(other.port, trusting, NULL, 4);
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(r[0].res.error, ADM_CALL_CONNECT);
    assert_non_null(strstr(r[0].detail, "dial tcp 127.0.0.1:"));
    assert_non_null(strstr(r[0].detail, ": connect: connection refused"));
    close_upstream(u);
    h_cleanup(&other);

    /* the mockhook's self-signed certificate is not among the system CAs */
    assert_int_equal(adm_tls_client_ctx_create(&o, &system_cas, err, sizeof(err)), 0);
    u = upstream(mock.port, system_cas, NULL, 4);
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(r[0].res.error, ADM_CALL_TLS);
    assert_true(strncmp(r[0].detail, "tls: ", 5) == 0);
    close_upstream(u);
    adm_tls_ctx_unref(system_cas);
}

static void test_name_resolution(void **state)
{
    /* "localhost" goes through the resolver; if it yields ::1 first, the next address is tried */
    adm_upstream_t *u = upstream(mock.port, trusting, "localhost", 4);
    result_t r[1];

    (void)state;
    post(u, "/allow", 5000, &r[0]);
    assert_true(wait_results(r, 1, 5000));
    assert_int_equal(r[0].res.error, ADM_CALL_OK);
    assert_int_equal(r[0].res.status, 200);
    close_upstream(u);
}

static void test_abandon(void **state)
{
    adm_upstream_t *u = upstream(mock.port, trusting, NULL, 1);
    char *review = h_review("2b9c7a34-58a5-4c50-9a5f-9f0f8f0c1d11");
    result_t never, after;
    adm_call_t *busy, *waiting;

    (void)state;
    /* a warm connection first, so the slow call is on it at once */
    post(u, "/allow", 5000, &after);
    assert_true(wait_results(&after, 1, 5000));
    memset(&never, 0, sizeof(never));
    busy = adm_upstream_post(u, "/slow", NULL, review, strlen(review), 5000, on_result, &never);
    waiting = adm_upstream_post(u, "/allow", NULL, review, strlen(review), 5000, on_result, &never);
    assert_non_null(busy);
    assert_non_null(waiting);
    adm_call_abandon(waiting); /* dropped from the queue at once */
    adm_call_abandon(busy);    /* finishes on its connection, unheard */
    post(u, "/allow", 5000, &after);
    assert_true(wait_results(&after, 1, 5000));
    assert_false(never.done);
    assert_int_equal(after.res.status, 200);
    assert_true(after.res.reused); /* the abandoned call's connection came back to the pool */
    free(review);
    close_upstream(u);
}

static void test_immediate_dial_failure_reported_later(void **state)
{
    /* connect(2) refuses the broadcast address at once (ENETUNREACH): the call still ends after
       adm_upstream_post has returned it, never inside */
    adm_upstream_t *u = upstream(443, trusting, "255.255.255.255", 4);
    result_t r[2];

    (void)state;
    post(u, "/allow", 5000, &r[0]);
    assert_false(r[0].done);
    post(u, "/allow", 5000, &r[1]);
    assert_false(r[0].done);
    assert_false(r[1].done);
    assert_true(wait_results(r, 2, 5000));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].res.error, ADM_CALL_CONNECT);
        assert_non_null(strstr(r[i].detail, "dial tcp 255.255.255.255:443: connect: "));
    }
    close_upstream(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_behaviours),
        cmocka_unit_test(test_transport_failures),
        cmocka_unit_test(test_keep_alive_and_bound),
        cmocka_unit_test(test_parallel_calls),
        cmocka_unit_test(test_server_closes_idle_connection),
        cmocka_unit_test(test_stale_connection_sent_once_more),
        cmocka_unit_test(test_connect_and_tls_failures),
        cmocka_unit_test(test_name_resolution),
        cmocka_unit_test(test_abandon),
        cmocka_unit_test(test_immediate_dial_failure_reported_later),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connection reuse over TLS: 1,000 requests on one connection, 50 pipelined requests answered in
 * order, chunked bodies, Expect: 100-continue, the idle timeout, 200 concurrent connections, and
 * the --max-connections limit.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/buf.h"
#include "harness.h"

static h_server_t server;

static int setup(void **state)
{
    const char *args[] = {"--idle-timeout", "1s", NULL};

    return adm_tls_global_init() != 0 || h_start(&server, NULL, args) != 0;
}

static int teardown(void **state)
{
    int rc = h_stop(&server, SIGTERM, 10000);

    h_cleanup(&server);
    adm_tls_global_cleanup();
    return rc != 0;
}

static char *review_request(const char *path, const char *uid, size_t *len)
{
    char *body = h_review(uid);
    char *req = h_request("POST", path, "application/json", body, strlen(body), len);

    free(body);
    return req;
}

static void test_thousand_requests_one_connection(void **state)
{
    static const char *const paths[] = {"/validate", "/mutate", "/admit"};
    h_conn_t c;

    assert_int_equal(h_connect_to(&c, &server), 0);
    for (int i = 0; i < 1000; i++) {
        char uid[32];
        size_t len;
        char *req;
        h_response_t r;

        snprintf(uid, sizeof(uid), "ka-%d", i);
        req = review_request(paths[i % 3], uid, &len);
        assert_int_equal(h_send(&c, req, len), 0);
        assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
        if (!h_is_answer(&r, "admission.k8s.io/v1", uid, true) || r.close) {
            fail_msg("request %d: %d %s", i, r.status, (const char *)r.body.data);
        }
        h_response_free(&r);
        free(req);
    }
    h_close(&c);
}

static void test_pipelining_in_order(void **state)
{
    adm_buf_t all = ADM_BUF_INIT;
    h_conn_t c;

    for (int i = 0; i < 50; i++) {
        char uid[32];
        size_t len;
        char *req;

        snprintf(uid, sizeof(uid), "pipe-%d", i);
        req = review_request(i % 2 ? "/validate" : "/admit", uid, &len);
        adm_buf_append(&all, req, len);
        free(req);
    }
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, all.data, all.len), 0); /* one write: 50 requests */
    for (int i = 0; i < 50; i++) {
        char uid[32];
        h_response_t r;

        snprintf(uid, sizeof(uid), "pipe-%d", i);
        assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
        if (!h_is_answer(&r, "admission.k8s.io/v1", uid, true)) {
            fail_msg("answer %d out of order or wrong: %s", i, (const char *)r.body.data);
        }
        h_response_free(&r);
    }
    adm_buf_free(&all);
    h_close(&c);
}

static void test_chunked_bodies(void **state)
{
    static const size_t chunk_sizes[] = {1, 7, 100, 4096};
    h_conn_t c;

    assert_int_equal(h_connect_to(&c, &server), 0);
    for (size_t k = 0; k < sizeof(chunk_sizes) / sizeof(chunk_sizes[0]); k++) {
        char uid[32];
        char *body;
        adm_buf_t req = ADM_BUF_INIT;
        h_response_t r;
        size_t len;

        snprintf(uid, sizeof(uid), "chunked-%zu", chunk_sizes[k]);
        body = h_review(uid);
        len = strlen(body);
        adm_buf_appendf(&req, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n");
        for (size_t off = 0; off < len; off += chunk_sizes[k]) {
            size_t n = len - off < chunk_sizes[k] ? len - off : chunk_sizes[k];

            /* a chunk extension on every other chunk: legal, and ignored */
            adm_buf_appendf(&req, "%zx%s\r\n", n, (off / chunk_sizes[k]) % 2 ? ";name=value" : "");
            adm_buf_append(&req, body + off, n);
            adm_buf_append(&req, "\r\n", 2);
        }
        adm_buf_append_str(&req, "0\r\n\r\n");
        assert_int_equal(h_send(&c, req.data, req.len), 0);
        assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
        assert_true(h_is_answer(&r, "admission.k8s.io/v1", uid, true));
        h_response_free(&r);
        adm_buf_free(&req);
        free(body);
    }
    h_close(&c);
}

static void test_expect_continue(void **state)
{
    char *body = h_review("expect-1");
    adm_buf_t head = ADM_BUF_INIT;
    h_conn_t c;
    h_response_t r;
    int interim = 0;

    adm_buf_appendf(&head,
                    "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\nExpect: 100-continue\r\n\r\n",
                    strlen(body));
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, head.data, head.len), 0);
    /* The interim answer must come before the body is sent: wait for it alone. */
    assert_int_equal(h_read(&c, &r, 2000, &interim), -1); /* no final answer yet... */
    assert_int_equal(interim, 1);                         /* ...but 100 Continue */
    assert_int_equal(h_send(&c, body, strlen(body)), 0);
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "expect-1", true));
    h_response_free(&r);

    /* Refused from the head alone (wrong content type): the final answer comes at once, no 100. */
    head.len = 0;
    adm_buf_appendf(&head,
                    "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                    "Content-Length: %zu\r\nExpect: 100-continue\r\n\r\n",
                    strlen(body));
    assert_int_equal(h_send(&c, head.data, head.len), 0);
    assert_int_equal(h_read(&c, &r, 10000, &interim), 0);
    assert_int_equal(interim, 0);
    assert_int_equal(r.status, 415);
    assert_true(r.close);
    h_response_free(&r);
    adm_buf_free(&head);
    free(body);
    h_close(&c);
}

static void test_idle_timeout(void **state)
{
    h_conn_t c;
    size_t len;
    char *req = review_request("/validate", "idle-1", &len);
    h_response_t r;
    long long t0;

    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    h_response_free(&r);
    t0 = h_now_ms();
    assert_true(h_wait_closed(&c, 5000)); /* --idle-timeout 1s */
    assert_true(h_now_ms() - t0 >= 800);
    h_close(&c);
    free(req);
}

static void test_200_concurrent_connections(void **state)
{
    enum { N = 200 };
    h_conn_t *conns = calloc(N, sizeof(*conns));
    h_server_t patient; /* the shared server's 1 s idle timeout could close the first ones meanwhile */

    assert_int_equal(h_start(&patient, NULL, NULL), 0);
    /* All open at once: 200 handshakes, then a request on each, then every answer. */
    for (int i = 0; i < N; i++) {
        assert_int_equal(h_connect_to(&conns[i], &patient), 0);
    }
    for (int i = 0; i < N; i++) {
        char uid[32];
        size_t len;
        char *req;

        snprintf(uid, sizeof(uid), "conc-%d", i);
        req = review_request("/admit", uid, &len);
        assert_int_equal(h_send(&conns[i], req, len), 0);
        free(req);
    }
    for (int i = 0; i < N; i++) {
        char uid[32];
        h_response_t r;

        snprintf(uid, sizeof(uid), "conc-%d", i);
        assert_int_equal(h_read(&conns[i], &r, 10000, NULL), 0);
        assert_true(h_is_answer(&r, "admission.k8s.io/v1", uid, true));
        h_response_free(&r);
        h_close(&conns[i]);
    }
    free(conns);
    assert_int_equal(h_stop(&patient, SIGTERM, 10000), 0);
    h_cleanup(&patient);
}

static void test_max_connections(void **state)
{
    const char *args[] = {"--insecure-http", "--max-connections", "2", NULL};
    h_server_t s;
    h_conn_t a, b, third;
    h_response_t r;
    size_t len;
    char *req = h_request("GET", "/healthz", NULL, NULL, 0, &len);

    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_int_equal(h_connect_to(&a, &s), 0);
    assert_int_equal(h_connect_to(&b, &s), 0);
    assert_int_equal(h_send(&a, req, len), 0);
    assert_int_equal(h_read(&a, &r, 5000, NULL), 0); /* both accepted and served */
    h_response_free(&r);
    assert_int_equal(h_send(&b, req, len), 0);
    assert_int_equal(h_read(&b, &r, 5000, NULL), 0);
    h_response_free(&r);
    /* The third waits in the kernel's backlog: not accepted, so not answered... */
    assert_int_equal(h_connect_to(&third, &s), 0);
    assert_int_equal(h_send(&third, req, len), 0);
    assert_int_equal(h_read(&third, &r, 700, NULL), -1);
    /* ...until one of the others closes. */
    h_close(&a);
    assert_int_equal(h_read(&third, &r, 5000, NULL), 0);
    assert_int_equal(r.status, 200);
    h_response_free(&r);
    h_close(&b);
    h_close(&third);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thousand_requests_one_connection),
        cmocka_unit_test(test_pipelining_in_order),
        cmocka_unit_test(test_chunked_bodies),
        cmocka_unit_test(test_expect_continue),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_200_concurrent_connections),
        cmocka_unit_test(test_max_connections),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

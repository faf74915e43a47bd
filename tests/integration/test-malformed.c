/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every malformed input of INTERFACE.md, each on its own connection, with the expected answer and
 * close behaviour; between cases a "victim" connection opened at the start must keep working.
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

#define MAX_BODY 65536

static h_server_t server;
static h_conn_t victim;
static int victim_uses;

static int setup(void **state)
{
    const char *args[] = {"--max-request-bytes", "65536", NULL};

    if (adm_tls_global_init() != 0 || h_start(&server, NULL, args) != 0) {
        return -1;
    }
    return h_connect_to(&victim, &server);
}

static int teardown(void **state)
{
    int rc;

    h_close(&victim);
    rc = h_stop(&server, SIGTERM, 10000);
    h_cleanup(&server);
    adm_tls_global_cleanup();
    return rc != 0;
}

/* The victim connection, open since the start, still gets correct answers. */
static void victim_still_works(void)
{
    char uid[32];
    char *body;
    char *req;
    size_t len;
    h_response_t r;

    snprintf(uid, sizeof(uid), "victim-%d", ++victim_uses);
    body = h_review(uid);
    req = h_request("POST", "/validate", "application/json", body, strlen(body), &len);
    assert_int_equal(h_send(&victim, req, len), 0);
    assert_int_equal(h_read(&victim, &r, 10000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", uid, true));
    h_response_free(&r);
    free(req);
    free(body);
}

/* Sends raw request bytes on a fresh connection; checks the status, body text and closing. */
static void expect_answer(const void *bytes, size_t len, int status, const char *body_part, bool closes)
{
    h_conn_t c;
    h_response_t r;

    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, bytes, len), 0);
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    if (r.status != status || (body_part != NULL && strstr((const char *)r.body.data, body_part) == NULL)) {
        fail_msg("got %d \"%s\", want %d with \"%s\"", r.status, (const char *)r.body.data, status,
                 body_part != NULL ? body_part : "");
    }
    assert_int_equal(r.close, closes);
    if (closes) {
        assert_true(h_wait_closed(&c, 5000));
    }
    h_response_free(&r);
    h_close(&c);
    victim_still_works();
}

static void expect_review_error(const char *body, const char *problem)
{
    size_t len;
    char *req = h_request("POST", "/validate", "application/json", body, strlen(body), &len);

    expect_answer(req, len, 400, problem, false);
    free(req);
}

static void test_bad_reviews(void **state)
{
    expect_review_error("this is not json", "request body is not valid JSON");
    expect_review_error("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", "not an AdmissionReview");
    expect_review_error("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                        "AdmissionReview has no request");
    expect_review_error("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
                        "{\"operation\":\"CREATE\"}}",
                        "AdmissionReview request has no uid");
    expect_review_error("", "request body is not valid JSON");
}

static void test_http_errors(void **state)
{
    static const char wrong_method[] = "DELETE /validate HTTP/1.1\r\nHost: x\r\n\r\n";
    static const char unknown_path[] = "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n";
    static const char garbage[] = "THIS IS NOT HTTP\r\n\r\n";
    static const char bad_version[] = "GET /healthz HTTP/7.1\r\n\r\n";
    static const char bad_chunk[] = "POST /validate HTTP/1.1\r\nContent-Type: application/json\r\n"
                                    "Transfer-Encoding: chunked\r\n\r\nzz\r\n";
    char *review = h_review("ct");
    size_t len;
    char *req =
        h_request("POST", "/validate", "application/x-www-form-urlencoded", review, strlen(review), &len);

    expect_answer(wrong_method, strlen(wrong_method), 405, NULL, false);
    expect_answer(unknown_path, strlen(unknown_path), 404, NULL, false);
    expect_answer(req, len, 415, "application/json", false);
    expect_answer(garbage, strlen(garbage), 400, "malformed HTTP request", true);
    expect_answer(bad_version, strlen(bad_version), 400, "malformed HTTP request", true);
    expect_answer(bad_chunk, strlen(bad_chunk), 400, "malformed HTTP request", true);
    free(req);
    free(review);
}

static char *sized_review(size_t total, size_t *len)
{
    /* A valid review padded with a long name so the body is exactly total bytes. */
    const char *head = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
                       "{\"uid\":\"big\",\"operation\":\"CREATE\",\"name\":\"";
    const char *tail = "\"}}";
    size_t fixed = strlen(head) + strlen(tail);
    char *s = malloc(total + 1);

    memcpy(s, head, strlen(head));
    memset(s + strlen(head), 'n', total - fixed);
    memcpy(s + total - strlen(tail), tail, strlen(tail) + 1);
    *len = total;
    return s;
}

static void test_body_limit(void **state)
{
    size_t body_len, len;
    char *body = sized_review(MAX_BODY, &body_len);
    char *req = h_request("POST", "/validate", "application/json", body, body_len, &len);
    h_conn_t c;
    h_response_t r;

    /* exactly at the limit: fine */
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "big", true));
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(body);

    /* one byte more: 413 and the connection closes */
    body = sized_review(MAX_BODY + 1, &body_len);
    req = h_request("POST", "/validate", "application/json", body, body_len, &len);
    expect_answer(req, len, 413, NULL, true);
    free(req);

    /* the same over chunked encoding, where the size is only known on the way */
    {
        adm_buf_t chunked = ADM_BUF_INIT;

        adm_buf_append_str(&chunked, "POST /validate HTTP/1.1\r\nContent-Type: application/json\r\n"
                                     "Transfer-Encoding: chunked\r\n\r\n");
        for (size_t off = 0; off < body_len; off += 8192) {
            size_t n = body_len - off < 8192 ? body_len - off : 8192;

            adm_buf_appendf(&chunked, "%zx\r\n", n);
            adm_buf_append(&chunked, body + off, n);
            adm_buf_append_str(&chunked, "\r\n");
        }
        adm_buf_append_str(&chunked, "0\r\n\r\n");
        expect_answer(chunked.data, chunked.len, 413, NULL, true);
        adm_buf_free(&chunked);
    }
    free(body);
}

static void test_header_limit(void **state)
{
    adm_buf_t req = ADM_BUF_INIT;

    adm_buf_append_str(&req, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 70; i++) {
        adm_buf_appendf(&req, "X-Filler-%d: ", i);
        for (int j = 0; j < 1000; j++) {
            adm_buf_append(&req, "f", 1);
        }
        adm_buf_append_str(&req, "\r\n");
    }
    adm_buf_append_str(&req, "\r\n");
    expect_answer(req.data, req.len, 431, NULL, true);
    adm_buf_free(&req);
}

/* A review whose object nests arrays so the whole document is depth levels deep. */
static char *deep_review(size_t depth, size_t *len)
{
    const char *head = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
                       "{\"uid\":\"deep\",\"operation\":\"CREATE\",\"object\":";
    size_t inner = depth - 2;
    size_t n = strlen(head);
    char *s = malloc(n + 2 * inner + 3);

    memcpy(s, head, n);
    memset(s + n, '[', inner);
    memset(s + n + inner, ']', inner);
    memcpy(s + n + 2 * inner, "}}", 3);
    *len = n + 2 * inner + 2;
    return s;
}

static void test_deep_json(void **state)
{
    size_t body_len, len;
    char *body = deep_review(10001, &body_len);
    char *req = h_request("POST", "/validate", "application/json", body, body_len, &len);
    h_conn_t c;
    h_response_t r;

    expect_answer(req, len, 400, "deeper than 10000", false);
    free(req);
    free(body);
    body = deep_review(10000, &body_len);
    req = h_request("POST", "/validate", "application/json", body, body_len, &len);
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "deep", true));
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(body);
}

static void test_not_tls_and_abrupt_close(void **state)
{
    static const char plain[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    h_conn_t c;
    size_t len;
    char *body = h_review("abrupt");
    char *req = h_request("POST", "/validate", "application/json", body, strlen(body), &len);

    /* Plain HTTP (not a ClientHello) on the TLS port: closed, nothing else disturbed. */
    assert_int_equal(h_connect(&c, server.port, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(h_send_raw(&c, plain, strlen(plain)), 0);
    assert_true(h_wait_closed(&c, 5000));
    h_close(&c);
    victim_still_works();

    /* A client that disappears in the middle of a request. */
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len / 2), 0);
    h_close(&c);
    /* A client that disappears in the middle of the handshake. */
    assert_int_equal(h_connect(&c, server.port, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(h_send_raw(&c, "\x16\x03\x01\x02\x00\x01", 6), 0);
    h_close(&c);
    victim_still_works();
    free(req);
    free(body);
}

static void test_slow_client(void **state)
{
    static const char half_head[] = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Ty";
    h_conn_t c;
    long long t0 = h_now_ms();
    long long waited;

    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, half_head, strlen(half_head)), 0);
    victim_still_works(); /* served while the slow one dawdles */
    assert_true(h_wait_closed(&c, 20000));
    waited = h_now_ms() - t0;
    if (waited < 9000 || waited > 15000) {
        fail_msg("slow client closed after %lld ms, want about 10 s", waited);
    }
    h_close(&c);
    victim_still_works();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_reviews), cmocka_unit_test(test_http_errors),
        cmocka_unit_test(test_body_limit),  cmocka_unit_test(test_header_limit),
        cmocka_unit_test(test_deep_json),   cmocka_unit_test(test_not_tls_and_abrupt_close),
        cmocka_unit_test(test_slow_client),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The binary's surface: --help/--version, one-line errors with exit 2, and the endpoints over real
 * TLS (v1 and v1beta1 reviews on /validate /mutate /admit, probes, /metrics, 404/405/415).
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

#include "certgen.h"
#include "harness.h"

static h_server_t server;

static int setup(void **state)
{
    const char *args[] = {"--cluster-state", h_fixture_path("cluster-state.yaml"), NULL};

    return adm_tls_global_init() != 0 || h_start(&server, NULL, args) != 0;
}

static int teardown(void **state)
{
    int rc = h_stop(&server, SIGTERM, 10000);

    h_cleanup(&server);
    adm_tls_global_cleanup();
    return rc != 0;
}

static void test_help_version_and_flag_errors(void **state)
{
    char out[8192];
    const char *help[] = {"--help", NULL};
    const char *version[] = {"--version", NULL};
    const char *bogus[] = {"--bogus", NULL};
    const char *bad_duration[] = {"--idle-timeout", "soon", NULL};
    const char *missing[] = {"--tls-cert-file", "/nonexistent/cert.pem", "--tls-private-key-file",
                             "/nonexistent/key.pem", NULL};
    char dir[256], junk[320];
    const char *malformed[] = {"--tls-cert-file", junk, "--tls-private-key-file", junk, NULL};
    FILE *f;

    assert_int_equal(h_run(help, out, sizeof(out), 10000), 0);
    assert_non_null(strstr(out, "Usage: admitd"));
    assert_non_null(strstr(out, "--listen"));
    assert_int_equal(h_run(version, out, sizeof(out), 10000), 0);
    assert_non_null(strstr(out, "admitd "));

    assert_int_equal(h_run(bogus, out, sizeof(out), 10000), 2);
    assert_string_equal(out, "admitd: --bogus: unknown flag (see --help)\n");
    assert_int_equal(h_run(bad_duration, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "--idle-timeout soon"));
    assert_int_equal(h_run(missing, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "--tls-cert-file /nonexistent/cert.pem: cannot read"));
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */

    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(junk, sizeof(junk), "%s/junk.pem", dir);
    f = fopen(junk, "w");
    fputs("this is not a certificate\n", f);
    fclose(f);
    assert_int_equal(h_run(malformed, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, junk));
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
    certgen_rmdir(dir);
}

static void post_fixture(h_conn_t *c, const char *path, const char *fixture, const char *api_version)
{
    size_t len, req_len;
    char *body = h_fixture(fixture, &len);
    char *req;
    h_response_t r;
    char uid[64] = "";
    const char *u;

    assert_non_null(body);
    u = strstr(body, "\"uid\":\"");
    assert_non_null(u);
    snprintf(uid, sizeof(uid), "%.36s", u + 7);
    req = h_request("POST", path, "application/json", body, len, &req_len);
    assert_int_equal(h_send(c, req, req_len), 0);
    assert_int_equal(h_read(c, &r, 10000, NULL), 0);
    if (!h_is_answer(&r, api_version, uid, true)) {
        fail_msg("%s %s: %d %s", path, fixture, r.status, (const char *)r.body.data);
    }
    assert_string_equal(r.content_type, "application/json");
    h_response_free(&r);
    free(req);
    free(body);
}

static void test_reviews_over_tls(void **state)
{
    static const char *const paths[] = {"/validate", "/mutate", "/admit"};
    h_conn_t c;

    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_string_equal(adm_tls_session_version(c.tls), "TLSv1.3");
    for (size_t i = 0; i < 3; i++) {
        post_fixture(&c, paths[i], "pod-create.v1.review.json", "admission.k8s.io/v1");
        post_fixture(&c, paths[i], "pod-create.v1beta1.review.json", "admission.k8s.io/v1beta1");
        post_fixture(&c, paths[i], "pod-update.v1.review.json", "admission.k8s.io/v1");
        post_fixture(&c, paths[i], "configmap-delete.v1.review.json", "admission.k8s.io/v1");
    }
    h_close(&c);
    /* The generated certificate is valid for localhost as well as 127.0.0.1. */
    assert_int_equal(h_connect(&c, server.port, server.ca, "localhost", NULL, NULL), 0);
    post_fixture(&c, "/validate?timeout=10s", "pod-create.v1.review.json", "admission.k8s.io/v1");
    h_close(&c);
    /* ...and for nothing else. */
    assert_int_not_equal(h_connect(&c, server.port, server.ca, "admitd.example.com", NULL, NULL), 0);
    h_close(&c);
}

static void test_endpoints(void **state)
{
    h_conn_t c;
    char *review = h_review("u-1");

    assert_int_equal(h_connect_to(&c, &server), 0);
    h_expect(&c, "GET", "/healthz", NULL, NULL, 200, "ok");
    h_expect(&c, "GET", "/livez", NULL, NULL, 200, "ok");
    h_expect(&c, "GET", "/readyz", NULL, NULL, 200, "ok");
    h_expect(&c, "HEAD", "/healthz", NULL, NULL, 200, NULL);
    h_expect(&c, "GET", "/nope", NULL, NULL, 404, NULL);
    h_expect(&c, "GET", "/validate", NULL, NULL, 405, NULL);
    h_expect(&c, "POST", "/healthz", "application/json", "{}", 405, NULL);
    h_expect(&c, "POST", "/validate", "text/plain", review, 415, "application/json");
    h_expect(&c, "POST", "/validate", NULL, review, 415, NULL);
    h_expect(&c, "POST", "/validate", "application/json; charset=utf-8", review, 200, "\"uid\":\"u-1\"");
    h_expect(&c, "POST", "/validate?timeout=soon", "application/json", review, 400, "timeout");
    h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
             "admitd_requests_total{endpoint=\"validate\",code=\"200\"}");
    h_expect(&c, "GET", "/metrics", NULL, NULL, 200, "admitd_connections{side=\"server\"} ");
    h_close(&c);
    free(review);
}

static void test_health_listener(void **state)
{
    h_server_t s;
    const char *args[] = {"--health-listen", "127.0.0.1:0", NULL};
    h_conn_t c;
    char *review = h_review("u-2");

    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_int_equal(h_connect(&c, s.health_port, NULL, NULL, NULL, NULL), 0);
    h_expect(&c, "GET", "/readyz", NULL, NULL, 200, "ok");
    h_expect(&c, "POST", "/validate", "application/json", review, 404, NULL); /* never admission here */
    h_close(&c);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(review);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_version_and_flag_errors),
        cmocka_unit_test(test_reviews_over_tls),
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_health_listener),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

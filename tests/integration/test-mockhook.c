/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-mockhook on the server's route API: one catch-all route takes every path and method of
 * its listener, with no check of its own, while the server keeps serving the probes and /metrics
 * (with their own checks) and counts the mockhook's answers under endpoint="webhook".
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static h_server_t mock;

static int setup(void **state)
{
    const char *args[] = {"--route", "/deny=deny:not today", NULL};

    return h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, args);
}

static int teardown(void **state)
{
    int rc = h_stop(&mock, SIGTERM, 10000);

    h_cleanup(&mock);
    return rc != 0;
}

static void test_probes_and_metrics(void **state)
{
    h_conn_t c;

    assert_int_equal(h_connect_to(&c, &mock), 0);
    h_expect(&c, "GET", "/healthz", NULL, NULL, 200, "ok");
    h_expect(&c, "GET", "/livez", NULL, NULL, 200, "ok");
    h_expect(&c, "GET", "/readyz", NULL, NULL, 200, "ok");
    h_expect(&c, "HEAD", "/readyz", NULL, NULL, 200, NULL);
    /* the probes keep their own rules: the catch-all does not take them */
    h_expect(&c, "POST", "/healthz", "application/json", "{}", 405, "use GET");
    h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
             "admitd_requests_total{endpoint=\"healthz\",code=\"200\"} 1\n");
    h_close(&c);
}

static void test_catch_all(void **state)
{
    h_conn_t c;
    char *review = h_review("m-1");

    assert_int_equal(h_connect_to(&c, &mock), 0);
    /* any path: the default behaviour (allow), or the path's own */
    h_expect(&c, "POST", "/any/path", "application/json", review, 200, "\"allowed\":true");
    h_expect(&c, "POST", "/deny", "application/json", review, 200, "not today");
    /* admitd's own paths mean nothing here */
    h_expect(&c, "POST", "/validate", "application/json", review, 200, "\"uid\":\"m-1\"");
    /* no method or content type is refused before the mockhook sees the request: it answers
       what is not a review with its own 400 */
    h_expect(&c, "GET", "/validate", NULL, NULL, 400, "admitd-mockhook");
    h_expect(&c, "POST", "/x", "text/plain", review, 200, "\"allowed\":true");
    h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
             "admitd_requests_total{endpoint=\"webhook\",code=\"200\"} 4\n");
    h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
             "admitd_requests_total{endpoint=\"webhook\",code=\"400\"} 1\n");
    h_close(&c);
    free(review);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probes_and_metrics),
        cmocka_unit_test(test_catch_all),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

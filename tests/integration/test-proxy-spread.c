/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Endpoint spreading (issue 18): one webhook named by a service, spread.hooks.svc, whose name
 * --resolve maps to three admitd-mockhook processes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (same
 * port, same certificate for the service name, so TLS still verifies it). admitd-bench drives
 * admitd in closed loop:
 *  - with three equal upstreams, each gets within 10% of a third of the calls (one connection: each
 *    call finds none outstanding, so the tie-break's turn alone decides, whatever the machine's
 *    load does to the upstreams' speed);
 *  - with 12 connections, when one of them answers slowly (100 ms against 2 ms), it gets fewer than
 *    either other and less than a quarter of the calls (the fewest outstanding wins);
 *  - /metrics shows the calls per address.
 */
#include "harness.h"

#include "certgen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define NMOCKS 3

static char dir[256], records[NMOCKS][320], ca_b64[8192];
static h_server_t mocks[NMOCKS], admitd;
static int port;

/* Mockhook i on 127.0.0.(i+1):port (the first picks the port); the third answers /slow slowly. */
static void start_mock(int i)
{
    const char *args[] = {"--route",
                          "/eq=allow",
                          "--route",
                          "/slow=allow",
                          "--route-delay",
                          "/eq=2ms",
                          "--route-delay",
                          i == 2 ? "/slow=100ms" : "/slow=2ms",
                          NULL};

    snprintf(records[i], sizeof(records[i]), "%s/record-%d.jsonl", dir, i);
    h_start_loopback_mock(&mocks[i], i, &port, dir, "spread", records[i], args);
}

static int setup(void **state)
{
    char config[320], resolve[128];
    FILE *f;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(certgen_make(dir, "spreadca", "spread test CA", NULL, false), 0);
    assert_int_equal(certgen_make(dir, "spread", "spread.hooks.svc", "spreadca", false), 0);
    {
        char ca[320];

        snprintf(ca, sizeof(ca), "%s/spreadca.crt.pem", dir);
        h_file_b64(ca, ca_b64, sizeof(ca_b64));
    }
    for (int i = 0; i < NMOCKS; i++) {
        start_mock(i);
    }
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    f = fopen(config, "w");
    assert_non_null(f);
    fputs("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata: {name: spread}\nwebhooks:\n",
          f);
    for (int i = 0; i < 2; i++) {
        fprintf(
            f,
            "- name: %s.spread.example.com\n  clientConfig:\n    service: {namespace: hooks, name: spread, "
            "port: %d, path: /%s}\n    caBundle: %s\n"
            "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: "
            "[\"*/*\"]}]\n"
            "  objectSelector: {matchLabels: {t: %s}}\n  sideEffects: None\n  admissionReviewVersions: "
            "[v1]\n",
            i == 0 ? "eq" : "slow", port, i == 0 ? "eq" : "slow", ca_b64, i == 0 ? "eq" : "slow");
    }
    fclose(f);
    snprintf(resolve, sizeof(resolve), "spread.hooks.svc:%d:127.0.0.1,127.0.0.2,127.0.0.3", port);
    {
        const char *args[] = {"--webhook-config",
                              config,
                              "--resolve",
                              resolve,
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              NULL};

        if (h_start(&admitd, NULL, args) != 0) {
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (h_stop(&admitd, 15, 30000) != 0) {
        h_dump_log(&admitd);
        fail_msg("admitd did not exit cleanly");
    }
    h_cleanup(&admitd);
    for (int i = 0; i < NMOCKS; i++) {
        h_stop(&mocks[i], 15, 10000);
        h_cleanup(&mocks[i]);
    }
    certgen_rmdir(dir);
    return 0;
}

/* The pod fixture labelled t=<t>, written to a file for admitd-bench. */
static void write_review(const char *path, const char *t)
{
    size_t flen;
    char *fixture = h_fixture("pod-create.v1.review.json", &flen);
    const char *k = "\"labels\":{";
    char *at = strstr(fixture, k);
    FILE *f = fopen(path, "w");

    assert_non_null(at);
    assert_non_null(f);
    fprintf(f, "%.*s\"t\":\"%s\",%s", (int)(at - fixture + (ptrdiff_t)strlen(k)), fixture, t, at + strlen(k));
    fclose(f);
    free(fixture);
}

/* Drives admitd with admitd-bench (closed loop) for t; counts[i]: the calls mockhook i saw on /t. */
static void drive(const char *t, const char *connections, int counts[NMOCKS])
{
    char review[320], url[128], out[8192], needle[64];
    const char *args[] = {"--url",     url,          "--cacert", admitd.ca,
                          "--review",  review,       "--closed", "--connections",
                          connections, "--duration", "2s",       NULL};

    snprintf(review, sizeof(review), "%s/review-%s.json", dir, t);
    write_review(review, t);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/validate", admitd.port);
    if (h_run_prog(h_bin("BENCH_BIN"), args, out, sizeof(out), 60000) != 0) {
        fail_msg("admitd-bench failed: %s", out);
    }
    snprintf(needle, sizeof(needle), "{\"path\":\"/%s\",", t);
    for (int i = 0; i < NMOCKS; i++) {
        counts[i] = h_count_lines(records[i], needle);
    }
    print_message("/%s calls per address: %d %d %d\n", t, counts[0], counts[1], counts[2]);
}

static void test_equal_upstreams_get_a_third_each(void **state)
{
    int counts[NMOCKS], total = 0;

    (void)state;
    drive("eq", "1", counts);
    for (int i = 0; i < NMOCKS; i++) {
        total += counts[i];
    }
    assert_true(total >= 60);
    for (int i = 0; i < NMOCKS; i++) {
        double share = (double)counts[i] / total;

        if (share < 0.9 / 3 || share > 1.1 / 3) {
            fail_msg("address %d got %.3f of the calls", i, share);
        }
    }
}

static void test_slow_upstream_gets_fewer(void **state)
{
    int counts[NMOCKS];
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req, needle[128];

    (void)state;
    drive("slow", "12", counts);
    if (counts[0] + counts[1] + counts[2] < 60) {
        /* A machine so loaded that 2 s carry a few dozen calls cannot tell 2 ms from 100 ms. */
        print_message("SKIPPED: only %d calls in 2 s: too few to judge the shares\n",
                      counts[0] + counts[1] + counts[2]);
        skip();
    }
    /* 100 ms against 2 ms: with least-outstanding it gets clearly less than a third, and less than
       either other (by how much depends on the machine's load: the mockhooks share the CPU) */
    assert_true(counts[2] < counts[0]);
    assert_true(counts[2] < counts[1]);
    assert_true(counts[2] * 4 < counts[0] + counts[1] + counts[2]);
    assert_true(counts[2] > 0);

    req = h_request("GET", "/metrics", NULL, NULL, 0, &len);
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    snprintf(needle, sizeof(needle),
             "admitd_webhook_endpoint_calls_total{upstream=\"spread.hooks.svc:%d\",address=\"127.0.0.3:%d\"}",
             port, port);
    assert_non_null(memmem(r.body.data, r.body.len, needle, strlen(needle)));
    h_response_free(&r);
    h_close(&c);
    free(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_upstreams_get_a_third_each),
        cmocka_unit_test(test_slow_upstream_gets_fewer),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

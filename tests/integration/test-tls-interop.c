/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interoperability of every cipher suite admitd enables with the two TLS stacks that matter outside
 * mbedTLS: OpenSSL (`openssl s_client`) and Go's crypto/tls (tests/interop/goclient, the stack
 * kube-apiserver uses). Two admitd servers run, one on an ECDSA P-256 certificate (the default) and
 * one on an RSA-2048 certificate made with openssl, so that the ECDHE-ECDSA and ECDHE-RSA suites of
 * TLS 1.2 and TLS 1.3's RSA-PSS signatures are all exercised; each connection carries a request and
 * its answer, so the record layer (OpenSSL's AEADs under mbedTLS) works both ways. The server's
 * preference is checked too: offered everything, Go and OpenSSL clients get TLS_AES_128_GCM_SHA256.
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
#include <unistd.h>

#include <cmocka.h>

#include "certgen.h"
#include "harness.h"

#define OPENSSL "/usr/bin/openssl"

static char dir[256], rsa_cert[320], rsa_key[320], review[320];
static h_server_t ecdsa, rsa;

static int setup(void **state)
{
    char out[4096];
    const char *genrsa[] = {
        "req",     "-x509", "-newkey",       "rsa:2048", "-nodes",
        "-keyout", rsa_key, "-out",          rsa_cert,   "-days",
        "2",       "-subj", "/CN=localhost", "-addext",  "subjectAltName=DNS:localhost,IP:127.0.0.1",
        NULL};
    const char *rsa_args[] = {"--tls-cert-file", rsa_cert, "--tls-private-key-file", rsa_key, NULL};
    const char *fixtures = getenv("ADM_FIXTURES_DIR");

    (void)state;
    if (certgen_tempdir(dir, sizeof(dir)) != 0 || fixtures == NULL) {
        return -1;
    }
    snprintf(rsa_cert, sizeof(rsa_cert), "%s/rsa.crt.pem", dir);
    snprintf(rsa_key, sizeof(rsa_key), "%s/rsa.key.pem", dir);
    snprintf(review, sizeof(review), "%s/pod-create.v1.review.json", fixtures);
    if (h_run_prog(OPENSSL, genrsa, out, sizeof(out), 60000) != 0) {
        fprintf(stderr, "openssl req failed: %s\n", out);
        return -1;
    }
    if (h_start(&ecdsa, NULL, NULL) != 0) {
        return -1;
    }
    return h_start(&rsa, NULL, rsa_args);
}

static int teardown(void **state)
{
    int rc = h_stop(&ecdsa, SIGTERM, 10000) | h_stop(&rsa, SIGTERM, 10000);

    (void)state;
    h_cleanup(&ecdsa);
    h_cleanup(&rsa);
    certgen_rmdir(dir);
    return rc != 0;
}

static void assert_contains(const char *text, const char *want)
{
    if (strstr(text, want) == NULL) {
        fail_msg("\"%s\" does not contain \"%s\"", text, want);
    }
}

/*
 * Sends a probe through `openssl s_client` with the given version flag and suite option, and checks
 * the negotiated version and suite (OpenSSL's names) and that the answer came back.
 */
static void s_client(const h_server_t *s, const char *ca, const char *version, const char *suite_opt,
                     const char *suite, const char *want_version, const char *want_suite)
{
    char cmd[1024], out[16384];
    const char *args[] = {"-c", cmd, NULL};

    snprintf(
        cmd, sizeof(cmd),
        "printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' | " OPENSSL
        " s_client -connect 127.0.0.1:%d -servername localhost -CAfile %s -verify_return_error "
        "-brief -ign_eof %s %s %s 2>&1",
        s->port, ca, version, suite_opt, suite);
    assert_int_equal(h_run_prog("/bin/sh", args, out, sizeof(out), 30000), 0);
    assert_contains(out, want_version);
    assert_contains(out, want_suite);
    assert_contains(out, "HTTP/1.1 200");
}

static void openssl_tls13_every_suite(void **state)
{
    static const char *const suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                         "TLS_CHACHA20_POLY1305_SHA256"};

    (void)state;
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
        s_client(&ecdsa, ecdsa.ca, "-tls1_3", "-ciphersuites", suites[i], "Protocol version: TLSv1.3",
                 suites[i]);
        s_client(&rsa, rsa_cert, "-tls1_3", "-ciphersuites", suites[i], "Protocol version: TLSv1.3",
                 suites[i]);
    }
}

static void openssl_tls12_every_suite(void **state)
{
    static const char *const ecdsa_suites[] = {
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"};
    static const char *const rsa_suites[] = {"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
                                             "ECDHE-RSA-CHACHA20-POLY1305"};

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        s_client(&ecdsa, ecdsa.ca, "-tls1_2", "-cipher", ecdsa_suites[i], "Protocol version: TLSv1.2",
                 ecdsa_suites[i]);
        s_client(&rsa, rsa_cert, "-tls1_2", "-cipher", rsa_suites[i], "Protocol version: TLSv1.2",
                 rsa_suites[i]);
    }
}

/* OpenSSL offers TLS_AES_256_GCM_SHA384 first; admitd still picks its fastest, AES-128-GCM. */
static void openssl_gets_the_servers_preference(void **state)
{
    (void)state;
    s_client(&ecdsa, ecdsa.ca, "-tls1_3", "", "", "Protocol version: TLSv1.3", "TLS_AES_128_GCM_SHA256");
    s_client(&ecdsa, ecdsa.ca, "-tls1_2", "", "", "Protocol version: TLSv1.2",
             "ECDHE-ECDSA-AES128-GCM-SHA256");
}

/* Runs the Go client; want is its "VERSION SUITE STATUS" line. */
static void go_client(const h_server_t *s, const char *ca, const char *suite, const char *want)
{
    char url[128], out[4096];
    const char *bin = getenv("GOCLIENT_BIN");
    const char *args[] = {"-url", url, "-ca", ca, "-review", review, "-tls12", "-suite", suite, NULL};

    if (bin == NULL || access(bin, X_OK) != 0) {
        fail_msg("GOCLIENT_BIN (tests/interop/goclient, built when Go is installed) is not there: %s",
                 bin != NULL ? bin : "(unset)");
    }
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/validate", s->port);
    if (suite == NULL) {
        args[6] = NULL; /* Go's defaults: TLS 1.3 and its own suite order */
    }
    assert_int_equal(h_run_prog(bin, args, out, sizeof(out), 30000), 0);
    assert_contains(out, want);
}

static void go_tls13_default(void **state)
{
    (void)state;
    go_client(&ecdsa, ecdsa.ca, NULL, "TLSv1.3 TLS_AES_128_GCM_SHA256 200");
    go_client(&rsa, rsa_cert, NULL, "TLSv1.3 TLS_AES_128_GCM_SHA256 200");
}

static void go_tls12_every_suite(void **state)
{
    static const char *const suites[] = {
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",       "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",         "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
        char want[128];
        bool is_rsa = strstr(suites[i], "_RSA_") != NULL;

        snprintf(want, sizeof(want), "TLSv1.2 %s 200", suites[i]);
        go_client(is_rsa ? &rsa : &ecdsa, is_rsa ? rsa_cert : ecdsa.ca, suites[i], want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openssl_tls13_every_suite),
        cmocka_unit_test(openssl_tls12_every_suite),
        cmocka_unit_test(openssl_gets_the_servers_preference),
        cmocka_unit_test(go_tls13_default),
        cmocka_unit_test(go_tls12_every_suite),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

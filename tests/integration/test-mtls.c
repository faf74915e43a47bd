/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mTLS (--client-ca-file): admission paths need a verified client certificate (401 otherwise), the
 * probes do not; a server certificate given with --tls-cert-file is served.
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

#include "certgen.h"
#include "harness.h"

static h_server_t server;
static char dir[256];

static void file(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
    char ca[320], cert[320], key[320];
    const char *args[] = {
        "--client-ca-file", ca, "--tls-cert-file", cert, "--tls-private-key-file", key, NULL};

    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0 ||
        certgen_make(dir, "ca", "test CA", NULL, false) != 0 ||
        certgen_make(dir, "server", "localhost", "ca", false) != 0 ||
        certgen_make(dir, "client", "kube-apiserver", "ca", true) != 0 ||
        certgen_make(dir, "otherca", "other CA", NULL, false) != 0 ||
        certgen_make(dir, "intruder", "intruder", "otherca", true) != 0) {
        return -1;
    }
    file(ca, sizeof(ca), "ca.crt.pem");
    file(cert, sizeof(cert), "server.crt.pem");
    file(key, sizeof(key), "server.key.pem");
    return h_start(&server, dir, args);
}

static int teardown(void **state)
{
    int rc = h_stop(&server, SIGTERM, 10000);

    server.dir[0] = '\0'; /* shared with the certificates: removed below */
    h_cleanup(&server);
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return rc != 0;
}

/*
 * Connects with the named client certificate (or none), offering TLS 1.2 only when tls12, and
 * returns the status of method path (-1 when no answer came). *version gets the TLS version the
 * handshake settled on, when not NULL.
 */
static int status_tls(const char *client, const char *method, const char *path, bool tls12, char *version,
                      size_t version_len)
{
    char ca[320], cert[320], key[320];
    char name[64];
    adm_tls_client_opts_t o = {.ca_file = ca, .max_tls12 = tls12};
    h_conn_t c;
    h_response_t r;
    char *body = h_review("mtls");
    size_t len;
    char *req = h_request(method, path, strcmp(method, "POST") == 0 ? "application/json" : NULL,
                          strcmp(method, "POST") == 0 ? body : NULL, strlen(body), &len);
    int status = -1;

    file(ca, sizeof(ca), "ca.crt.pem");
    snprintf(name, sizeof(name), "%s.crt.pem", client != NULL ? client : "");
    file(cert, sizeof(cert), name);
    snprintf(name, sizeof(name), "%s.key.pem", client != NULL ? client : "");
    file(key, sizeof(key), name);
    if (client != NULL) {
        o.cert_file = cert;
        o.key_file = key;
    }
    if (version != NULL) {
        snprintf(version, version_len, "none");
    }
    if (h_connect_tls(&c, server.port, &o, "localhost") == 0) {
        if (version != NULL) {
            snprintf(version, version_len, "%s", adm_tls_session_version(c.tls));
        }
        if (h_send(&c, req, len) == 0 && h_read(&c, &r, 10000, NULL) == 0) {
            status = r.status;
            h_response_free(&r);
        }
    }
    h_close(&c);
    free(req);
    free(body);
    return status;
}

static int status_with(const char *client, const char *method, const char *path)
{
    return status_tls(client, method, path, false, NULL, 0);
}

static void test_verified_client(void **state)
{
    assert_int_equal(status_with("client", "POST", "/validate"), 200);
    assert_int_equal(status_with("client", "POST", "/mutate"), 200);
}

static void test_no_certificate(void **state)
{
    assert_int_equal(status_with(NULL, "POST", "/validate"), 401);
    assert_int_equal(status_with(NULL, "POST", "/admit"), 401);
    /* probes and scrapes work without one (INTERFACE.md D11) */
    assert_int_equal(status_with(NULL, "GET", "/healthz"), 200);
    assert_int_equal(status_with(NULL, "GET", "/readyz"), 200);
    assert_int_equal(status_with(NULL, "GET", "/metrics"), 200);
}

static void test_foreign_certificate(void **state)
{
    char version[32];

    /*
     * A certificate from another CA: the handshake completes (the certificate is optional at the
     * TLS level, D11) and the admission path answers 401, in TLS 1.3 and in TLS 1.2 alike.
     */
    assert_int_equal(status_tls("intruder", "POST", "/validate", false, version, sizeof(version)), 401);
    assert_string_equal(version, "TLSv1.3");
    assert_int_equal(status_tls("intruder", "POST", "/validate", true, version, sizeof(version)), 401);
    assert_string_equal(version, "TLSv1.2");
    assert_int_equal(status_tls("intruder", "POST", "/admit", true, version, sizeof(version)), 401);
    /* the same client with a certificate of the trusted CA is served over TLS 1.2 too */
    assert_int_equal(status_tls("client", "POST", "/validate", true, version, sizeof(version)), 200);
    assert_string_equal(version, "TLSv1.2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verified_client),
        cmocka_unit_test(test_no_certificate),
        cmocka_unit_test(test_foreign_certificate),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

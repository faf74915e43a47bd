/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mTLS (--client-ca-file): admission paths need a verified client certificate (401 otherwise), the
 * probes do not; a server certificate given with --tls-cert-file is served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
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
    const char *args[] = {"--client-ca-file", ca, "--tls-cert-file", cert, "--tls-private-key-file", key, NULL};

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

/* Connects with the named client certificate (or none) and returns the status of method path. */
static int status_with(const char *client, const char *method, const char *path)
{
    char ca[320], cert[320], key[320];
    char name[64];
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
    if (h_connect(&c, server.port, ca, "localhost", client != NULL ? cert : NULL, client != NULL ? key : NULL) == 0 &&
        h_send(&c, req, len) == 0 && h_read(&c, &r, 10000, NULL) == 0) {
        status = r.status;
        h_response_free(&r);
    }
    h_close(&c);
    free(req);
    free(body);
    return status;
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
    int status = status_with("intruder", "POST", "/validate");

    /* refused in the handshake (-1) or with 401: never admitted */
    assert_true(status == 401 || status == -1);
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

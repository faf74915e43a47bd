/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS sessions driven against each other purely in memory: a client and a server session pass
 * their output buffers back and forth, so every path (handshakes, verification, mTLS, records
 * split anywhere, close_notify, garbage) runs without a socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/error.h"
#include "adm/tls.h"
#include "certgen.h"

static char dir[256];
static char ca_pem[512];   /* the server's generated self-signed certificate */

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return -1;
    }
    path_of(ca_pem, sizeof(ca_pem), "selfsigned.pem");
    /* A CA with a client and a server certificate, and a second, unrelated CA with a client. */
    if (certgen_make(dir, "ca", "test CA", NULL, false) != 0 ||
        certgen_make(dir, "client", "admitd-test-client", "ca", true) != 0 ||
        certgen_make(dir, "server", "localhost", "ca", false) != 0 ||
        certgen_make(dir, "otherca", "other CA", NULL, false) != 0 ||
        certgen_make(dir, "intruder", "intruder", "otherca", true) != 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

typedef struct pair_s {
    adm_tls_ctx_t *sctx, *cctx;
    adm_tls_session_t *server, *client;
    adm_buf_t server_plain, client_plain;
    int server_rc, client_rc;
} pair_t;

static adm_tls_ctx_t *server_ctx(const char *client_ca)
{
    char ca_path[512];
    adm_tls_server_opts_t o = {.self_signed_out = ca_pem};
    adm_tls_ctx_t *ctx = NULL;
    char err[256];

    if (client_ca != NULL) {
        path_of(ca_path, sizeof(ca_path), client_ca);
        o.client_ca_file = ca_path;
    }
    assert_int_equal(adm_tls_server_ctx_create(&o, &ctx, err, sizeof(err)), 0);
    return ctx;
}

static adm_tls_ctx_t *client_ctx(const char *ca_file, const char *client_name, bool max_tls12)
{
    char cert[512], key[512];
    adm_tls_client_opts_t o = {.ca_file = ca_file, .max_tls12 = max_tls12};
    adm_tls_ctx_t *ctx = NULL;
    char err[256];

    if (client_name != NULL) {
        snprintf(cert, sizeof(cert), "%s/%s.crt.pem", dir, client_name);
        snprintf(key, sizeof(key), "%s/%s.key.pem", dir, client_name);
        o.cert_file = cert;
        o.key_file = key;
    }
    if (adm_tls_client_ctx_create(&o, &ctx, err, sizeof(err)) != 0) {
        fail_msg("client context: %s", err);
    }
    return ctx;
}

/* The server context comes first: it writes the self-signed certificate the client trusts. */
static void pair_open(pair_t *p, const char *server_client_ca, const char *client_trusts, const char *client_name,
                      bool tls12, const char *host)
{
    memset(p, 0, sizeof(*p));
    p->sctx = server_ctx(server_client_ca);
    p->cctx = client_ctx(client_trusts, client_name, tls12);
    assert_int_equal(adm_tls_session_create(p->sctx, NULL, &p->server), 0);
    assert_int_equal(adm_tls_session_create(p->cctx, host, &p->client), 0);
    assert_int_equal(adm_tls_session_start(p->client), 0);
}

static void pair_close(pair_t *p)
{
    adm_tls_session_destroy(p->server);
    adm_tls_session_destroy(p->client);
    adm_tls_ctx_unref(p->sctx);
    adm_tls_ctx_unref(p->cctx);
    adm_buf_free(&p->server_plain);
    adm_buf_free(&p->client_plain);
}

/* Hands one side's queued output to the other side, chunk bytes per call. */
static void deliver(adm_tls_session_t *from, adm_tls_session_t *to, int *to_rc, adm_buf_t *to_plain, size_t chunk)
{
    adm_buf_t moving = ADM_BUF_INIT;

    adm_buf_swap(adm_tls_session_output(from), &moving);
    for (size_t off = 0; off < moving.len && *to_rc == 0; off += chunk) {
        size_t n = moving.len - off < chunk ? moving.len - off : chunk;

        *to_rc = adm_tls_session_recv(to, moving.data + off, n, to_plain);
    }
    adm_buf_free(&moving);
}

/* Moves bytes between the two until neither has output (or the receiving side failed). */
static void pump(pair_t *p, size_t chunk)
{
    for (int round = 0; round < 10000; round++) {
        if (adm_tls_session_output(p->client)->len == 0 && adm_tls_session_output(p->server)->len == 0) {
            return;
        }
        deliver(p->client, p->server, &p->server_rc, &p->server_plain, chunk);
        deliver(p->server, p->client, &p->client_rc, &p->client_plain, chunk);
    }
    fail_msg("pump did not settle");
}

static void handshake_and_talk(bool tls12, size_t chunk, const char *host)
{
    pair_t p;
    const char *hello = "POST /validate HTTP/1.1\r\n\r\n";

    pair_open(&p, NULL, ca_pem, NULL, tls12, host);
    pump(&p, chunk);
    assert_int_equal(p.server_rc, 0);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_handshake_done(p.server));
    assert_true(adm_tls_session_handshake_done(p.client));
    assert_string_equal(adm_tls_session_version(p.server), tls12 ? "TLSv1.2" : "TLSv1.3");
    /* ChaCha20-Poly1305 is preferred whenever offered (the fastest AEAD in mbedTLS here). */
    assert_non_null(strstr(adm_tls_session_cipher(p.server), "CHACHA20-POLY1305"));
    assert_false(adm_tls_session_peer_verified(p.server)); /* no mTLS configured */
    assert_int_equal(adm_tls_session_send(p.client, (const uint8_t *)hello, strlen(hello)), 0);
    assert_int_equal(adm_tls_session_send(p.server, (const uint8_t *)"answer", 6), 0);
    pump(&p, chunk);
    assert_int_equal(p.server_plain.len, strlen(hello));
    assert_memory_equal(p.server_plain.data, hello, strlen(hello));
    assert_int_equal(p.client_plain.len, 6);
    assert_memory_equal(p.client_plain.data, "answer", 6);
    pair_close(&p);
}

static void test_tls13(void **state)
{
    handshake_and_talk(false, 1 << 20, "localhost");
}

static void test_tls12(void **state)
{
    handshake_and_talk(true, 1 << 20, "localhost");
}

static void test_ip_address_name(void **state)
{
    handshake_and_talk(false, 1 << 20, "127.0.0.1");
}

static void test_one_byte_at_a_time(void **state)
{
    handshake_and_talk(false, 1, "localhost");
    handshake_and_talk(true, 7, "localhost");
}

static void test_large_payload_and_close_notify(void **state)
{
    pair_t p;
    size_t big = 1 << 20;
    uint8_t *data = malloc(big);

    for (size_t i = 0; i < big; i++) {
        data[i] = (uint8_t)(i * 31 + 7);
    }
    pair_open(&p, NULL, ca_pem, NULL, false, "localhost");
    pump(&p, 1 << 20);
    assert_int_equal(adm_tls_session_send(p.client, data, big), 0);
    pump(&p, 1000);
    assert_int_equal(p.server_rc, 0);
    assert_int_equal(p.server_plain.len, big);
    assert_memory_equal(p.server_plain.data, data, big);
    assert_int_equal(adm_tls_session_close_notify(p.client), 0);
    pump(&p, 1 << 20);
    assert_int_equal(p.server_rc, ADM_EOF);
    free(data);
    pair_close(&p);
}

static void test_wrong_ca_and_wrong_name(void **state)
{
    char other[512];
    pair_t p;

    path_of(other, sizeof(other), "otherca.crt.pem");
    pair_open(&p, NULL, other, NULL, false, "localhost");
    pump(&p, 1 << 20);
    assert_int_equal(p.client_rc, ADM_ETLS);
    assert_non_null(strstr(adm_tls_session_error(p.client), "verification failed"));
    pair_close(&p);

    pair_open(&p, NULL, ca_pem, NULL, false, "example.com");
    pump(&p, 1 << 20);
    assert_int_equal(p.client_rc, ADM_ETLS);
    assert_non_null(strstr(adm_tls_session_error(p.client), "verification failed"));
    pair_close(&p);
}

static void mtls_case(const char *client, bool want_verified)
{
    pair_t p;

    pair_open(&p, "ca.crt.pem", ca_pem, client, false, "localhost");
    pump(&p, 1 << 20);
    /* A certificate from another CA may end the handshake or leave it unverified; never verified. */
    if (p.server_rc == 0 && p.client_rc == 0) {
        assert_true(adm_tls_session_handshake_done(p.server));
    }
    assert_int_equal(adm_tls_session_peer_verified(p.server), want_verified);
    pair_close(&p);
}

static void test_mtls(void **state)
{
    mtls_case("client", true);
    mtls_case(NULL, false);
    mtls_case("intruder", false);
}

static void test_garbage(void **state)
{
    pair_t p;
    static const uint8_t junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

    pair_open(&p, NULL, ca_pem, NULL, false, "localhost");
    assert_int_equal(adm_tls_session_recv(p.server, junk, sizeof(junk) - 1, &p.server_plain), ADM_ETLS);
    assert_true(strlen(adm_tls_session_error(p.server)) > 0);
    pair_close(&p);
}

static void expect_server_error(adm_tls_server_opts_t *o, const char *want)
{
    adm_tls_ctx_t *ctx = NULL;
    char err[512] = "";

    assert_int_not_equal(adm_tls_server_ctx_create(o, &ctx, err, sizeof(err)), 0);
    assert_null(ctx);
    if (strstr(err, want) == NULL) {
        fail_msg("error \"%s\" does not contain \"%s\"", err, want);
    }
    assert_null(strchr(err, '\n'));
}

static void test_file_errors(void **state)
{
    char cert[512], key[512], other_key[512], junk[512], missing[512];
    adm_tls_server_opts_t o;
    FILE *f;

    path_of(cert, sizeof(cert), "server.crt.pem");
    path_of(key, sizeof(key), "server.key.pem");
    path_of(other_key, sizeof(other_key), "client.key.pem");
    path_of(junk, sizeof(junk), "junk.pem");
    path_of(missing, sizeof(missing), "missing.pem");
    f = fopen(junk, "w");
    fputs("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n", f);
    fclose(f);

    o = (adm_tls_server_opts_t){.cert_file = cert, .key_file = key};
    {
        adm_tls_ctx_t *ctx = NULL;
        char err[256];

        assert_int_equal(adm_tls_server_ctx_create(&o, &ctx, err, sizeof(err)), 0);
        adm_tls_ctx_unref(ctx);
    }
    o = (adm_tls_server_opts_t){.cert_file = missing, .key_file = key};
    expect_server_error(&o, "--tls-cert-file");
    expect_server_error(&o, "cannot read: No such file or directory");
    o = (adm_tls_server_opts_t){.cert_file = junk, .key_file = key};
    expect_server_error(&o, "not a valid PEM/DER certificate");
    o = (adm_tls_server_opts_t){.cert_file = cert, .key_file = junk};
    expect_server_error(&o, "--tls-private-key-file");
    o = (adm_tls_server_opts_t){.cert_file = cert, .key_file = other_key};
    expect_server_error(&o, "key does not match the certificate");
    o = (adm_tls_server_opts_t){.client_ca_file = missing};
    expect_server_error(&o, "--client-ca-file");
    o = (adm_tls_server_opts_t){.self_signed_out = "/nonexistent-dir/ca.pem"};
    expect_server_error(&o, "--self-signed-ca-out /nonexistent-dir/ca.pem: cannot write");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls13),
        cmocka_unit_test(test_tls12),
        cmocka_unit_test(test_ip_address_name),
        cmocka_unit_test(test_one_byte_at_a_time),
        cmocka_unit_test(test_large_payload_and_close_notify),
        cmocka_unit_test(test_wrong_ca_and_wrong_name),
        cmocka_unit_test(test_mtls),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_file_errors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

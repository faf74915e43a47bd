/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS sessions driven against each other purely in memory: a client and a server session pass
 * their output buffers back and forth, so every path (handshakes in both versions, verification,
 * mTLS, records split anywhere, close_notify, garbage) runs without a socket. Certificates are
 * made at run time (tests/support/certgen.c) in a temporary directory removed at the end, and the
 * server's generated certificate is read back to check what clients will rely on.
 *
 * One file for both halves of the TLS module, contexts (src/net/tls.c, with selfsigned.c) and
 * sessions (src/net/tls_session.c): a session cannot run without contexts, and a context's
 * certificates and trust are only proven by the sessions that use them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>
#include <mbedtls/oid.h>
#include <mbedtls/x509_crt.h>

#include "adm/base/error.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"
#include "certgen.h"

#define BIG (1u << 20)

static char dir[256];
static char selfsigned_pem[512]; /* the server's generated certificate, which clients trust */

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    FILE *f;

    path_of(path, sizeof(path), name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Returns the file's contents, NUL-terminated; *len excludes the NUL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = calloc(1, 65536);
    size_t n;

    assert_non_null(f);
    assert_non_null(data);
    n = fread(data, 1, 65535, f);
    fclose(f);
    *len = n;
    return data;
}

static int setup(void **state)
{
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return -1;
    }
    path_of(selfsigned_pem, sizeof(selfsigned_pem), "selfsigned.pem");
    /* A CA with a client and a server certificate, and a second, unrelated CA with a client. */
    if (certgen_make(dir, "ca", "test CA", NULL, false) != 0 ||
        certgen_make(dir, "client", "admitd-test-client", "ca", true) != 0 ||
        certgen_make(dir, "server", "localhost", "ca", false) != 0 ||
        certgen_make(dir, "otherca", "other CA", NULL, false) != 0 ||
        certgen_make(dir, "intruder", "intruder", "otherca", true) != 0) {
        return -1;
    }
    write_file("text.pem", "this is not a certificate\n");
    write_file("empty.pem", "");
    write_file("badbase64.pem",
               "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
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
    adm_tls_server_opts_t o = {.self_signed_out = selfsigned_pem};
    adm_tls_ctx_t *ctx = NULL;
    char err[256];

    if (client_ca != NULL) {
        path_of(ca_path, sizeof(ca_path), client_ca);
        o.client_ca_file = ca_path;
    }
    if (adm_tls_server_ctx_create(&o, &ctx, err, sizeof(err)) != 0) {
        fail_msg("server context: %s", err);
    }
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

static void pair_start(pair_t *p, const char *host)
{
    assert_int_equal(adm_tls_session_create(p->sctx, NULL, &p->server), 0);
    assert_int_equal(adm_tls_session_create(p->cctx, host, &p->client), 0);
    assert_int_equal(adm_tls_session_start(p->client), 0);
    assert_true(adm_tls_session_output(p->client)->len > 0); /* the ClientHello */
}

/* The server context comes first: it writes the self-signed certificate the client trusts. */
static void pair_open(pair_t *p, const char *server_client_ca, const char *client_trusts,
                      const char *client_name, bool tls12, const char *host)
{
    memset(p, 0, sizeof(*p));
    p->sctx = server_ctx(server_client_ca);
    p->cctx = client_ctx(client_trusts, client_name, tls12);
    pair_start(p, host);
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
static void deliver(adm_tls_session_t *from, adm_tls_session_t *to, int *to_rc, adm_buf_t *to_plain,
                    size_t chunk)
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

static void assert_contains(const char *text, const char *want)
{
    if (strstr(text, want) == NULL) {
        fail_msg("\"%s\" does not contain \"%s\"", text, want);
    }
}

static void handshake_and_talk(bool tls12, size_t chunk, const char *host)
{
    static const char request[] = "POST /validate HTTP/1.1\r\n\r\n";
    pair_t p;

    pair_open(&p, NULL, selfsigned_pem, NULL, tls12, host);
    pump(&p, chunk);
    assert_int_equal(p.server_rc, 0);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_handshake_done(p.server));
    assert_true(adm_tls_session_handshake_done(p.client));
    assert_string_equal(adm_tls_session_version(p.server), tls12 ? "TLSv1.2" : "TLSv1.3");
    assert_string_equal(adm_tls_session_version(p.client), tls12 ? "TLSv1.2" : "TLSv1.3");
    assert_string_equal(adm_tls_session_alpn(p.server), "http/1.1");
    assert_string_equal(adm_tls_session_alpn(p.client), "http/1.1");
    /* AES-128-GCM is preferred whenever offered (the fastest AEAD here, see tls.c). */
    assert_contains(adm_tls_session_cipher(p.server), "AES-128-GCM");
    assert_false(adm_tls_session_peer_verified(p.server)); /* no mTLS configured */
    assert_false(adm_tls_ctx_wants_client_cert(p.sctx));
    assert_int_equal(adm_tls_session_send(p.client, (const uint8_t *)request, strlen(request)), 0);
    assert_int_equal(adm_tls_session_send(p.server, (const uint8_t *)"answer", 6), 0);
    pump(&p, chunk);
    assert_int_equal(p.server_rc, 0);
    assert_int_equal(p.client_rc, 0);
    assert_int_equal(p.server_plain.len, strlen(request));
    assert_memory_equal(p.server_plain.data, request, strlen(request));
    assert_int_equal(p.client_plain.len, 6);
    assert_memory_equal(p.client_plain.data, "answer", 6);
    pair_close(&p);
}

static void test_tls13(void **state)
{
    handshake_and_talk(false, BIG, "localhost");
}

static void test_tls12(void **state)
{
    handshake_and_talk(true, BIG, "localhost");
}

static void test_ip_address_names(void **state)
{
    handshake_and_talk(false, BIG, "127.0.0.1");
    handshake_and_talk(false, BIG, "::1");
    handshake_and_talk(true, BIG, "127.0.0.1");
}

static void test_one_byte_at_a_time(void **state)
{
    handshake_and_talk(false, 1, "localhost");
    handshake_and_talk(true, 1, "localhost");
    handshake_and_talk(false, 7, "localhost");
}

/* Sends BIG bytes from one side in uneven pieces, delivered 1000 bytes at a time. */
static void send_big(pair_t *p, bool from_client, const uint8_t *data)
{
    adm_tls_session_t *from = from_client ? p->client : p->server;
    adm_buf_t *got = from_client ? &p->server_plain : &p->client_plain;
    size_t off = 0;

    got->len = 0;
    for (size_t piece = 1; off < BIG; piece = piece * 3 + 1) {
        size_t n = BIG - off < piece ? BIG - off : piece;

        assert_int_equal(adm_tls_session_send(from, data + off, n), 0);
        off += n;
        pump(p, 1000);
    }
    assert_int_equal(p->server_rc, 0);
    assert_int_equal(p->client_rc, 0);
    assert_int_equal(got->len, BIG);
    assert_memory_equal(got->data, data, BIG);
}

static void big_payload(bool tls12)
{
    uint8_t *data = malloc(BIG);
    pair_t p;

    assert_non_null(data);
    for (size_t i = 0; i < BIG; i++) {
        data[i] = (uint8_t)(i * 31 + 7);
    }
    pair_open(&p, NULL, selfsigned_pem, NULL, tls12, "localhost");
    pump(&p, BIG);
    send_big(&p, true, data);
    send_big(&p, false, data);
    pair_close(&p);
    free(data);
}

static void test_large_payload(void **state)
{
    big_payload(false);
    big_payload(true);
}

/* Sends text from one side and checks the other receives exactly it, delivered chunk bytes at a time. */
static void talk(pair_t *p, bool from_client, const char *text, size_t chunk)
{
    adm_buf_t *got = from_client ? &p->server_plain : &p->client_plain;

    got->len = 0;
    assert_int_equal(
        adm_tls_session_send(from_client ? p->client : p->server, (const uint8_t *)text, strlen(text)), 0);
    pump(p, chunk);
    assert_int_equal(p->server_rc, 0);
    assert_int_equal(p->client_rc, 0);
    assert_int_equal(got->len, strlen(text));
    assert_memory_equal(got->data, text, strlen(text));
}

/*
 * An idle server session gives its record buffers' pages back, and goes on afterwards as if
 * nothing happened: the incoming record counter is kept aside, the pages come back zeroed.
 */
static void trim_case(bool tls12)
{
    static const char request[] = "POST /validate HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    uint8_t *data = malloc(BIG);
    adm_buf_t moving = ADM_BUF_INIT;
    pair_t p;

    assert_non_null(data);
    for (size_t i = 0; i < BIG; i++) {
        data[i] = (uint8_t)(i * 13 + 5);
    }
    pair_open(&p, NULL, selfsigned_pem, NULL, tls12, "localhost");
    assert_int_equal(adm_tls_session_trim(p.server), 0); /* the handshake is not done */
    pump(&p, BIG);
    talk(&p, true, request, BIG);
    talk(&p, false, "answer", BIG);
    /* Both buffers are on pages of their own (adm_tls_global_init's allocator): ~20 KB each. */
    assert_true(adm_tls_session_trim(p.server) >= 2 * 16384);
    assert_int_equal(adm_tls_session_trim(p.server), 0); /* nothing more to give */
    talk(&p, true, request, BIG);
    talk(&p, false, "answer", BIG);
    talk(&p, true, request, 1); /* partial records between calls */

    /* Part of a record received: the input buffer is live, nothing is given back. */
    assert_true(adm_tls_session_trim(p.server) > 0);
    assert_int_equal(adm_tls_session_send(p.client, (const uint8_t *)request, strlen(request)), 0);
    adm_buf_swap(adm_tls_session_output(p.client), &moving);
    p.server_plain.len = 0;
    assert_int_equal(adm_tls_session_recv(p.server, moving.data, 3, &p.server_plain), 0);
    assert_int_equal(adm_tls_session_trim(p.server), 0);
    assert_int_equal(adm_tls_session_recv(p.server, moving.data + 3, moving.len - 3, &p.server_plain), 0);
    assert_int_equal(p.server_plain.len, strlen(request));
    assert_memory_equal(p.server_plain.data, request, strlen(request));

    /* Full-size records both ways after another trim. */
    assert_true(adm_tls_session_trim(p.server) > 0);
    send_big(&p, true, data);
    assert_true(adm_tls_session_trim(p.server) > 0);
    send_big(&p, false, data);
    adm_buf_free(&moving);
    pair_close(&p);
    free(data);
}

static void test_trim_idle_session(void **state)
{
    /* No idle session keeps its pages here: every trim gives them back. */
    size_t budget = adm_tls_set_warm_idle_sessions(0);

    trim_case(false);
    trim_case(true);
    adm_tls_set_warm_idle_sessions(budget);
}

/*
 * The first idle sessions keep their record pages (giving them back and faulting them in again costs
 * more than they are worth while idle connections are few); past the budget they are given back. A
 * session that receives again, or is destroyed, leaves the count.
 */
static void test_trim_keeps_warm_sessions(void **state)
{
    static const char request[] = "POST /validate HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    size_t budget = adm_tls_set_warm_idle_sessions(2);
    pair_t p[3];

    assert_int_equal(budget, ADM_TLS_WARM_IDLE_SESSIONS);
    for (int i = 0; i < 3; i++) {
        pair_open(&p[i], NULL, selfsigned_pem, NULL, i == 1, "localhost");
        pump(&p[i], BIG);
        talk(&p[i], true, request, BIG);
        talk(&p[i], false, "answer", BIG);
    }
    assert_int_equal(adm_tls_warm_idle_sessions(), 0);
    assert_int_equal(adm_tls_session_trim(p[0].server), 0); /* kept */
    assert_int_equal(adm_tls_session_trim(p[0].server), 0); /* still kept, counted once */
    assert_int_equal(adm_tls_warm_idle_sessions(), 1);
    assert_int_equal(adm_tls_session_trim(p[1].server), 0);
    assert_int_equal(adm_tls_warm_idle_sessions(), 2);
    assert_true(adm_tls_session_trim(p[2].server) >= 2 * 16384); /* past the budget: given back */
    assert_int_equal(adm_tls_warm_idle_sessions(), 2);

    /* Busy again: out of the count, which the next idle session may take. */
    talk(&p[0], true, request, 7);
    talk(&p[0], false, "answer", BIG);
    assert_int_equal(adm_tls_warm_idle_sessions(), 1);
    talk(&p[2], true, request, BIG);
    talk(&p[2], false, "answer", BIG);
    assert_int_equal(adm_tls_session_trim(p[2].server), 0);
    assert_int_equal(adm_tls_warm_idle_sessions(), 2);
    assert_true(adm_tls_session_trim(p[0].server) >= 2 * 16384);

    /* A lower budget changes no session that keeps its pages; destroying one leaves the count. */
    assert_int_equal(adm_tls_set_warm_idle_sessions(0), 2);
    assert_int_equal(adm_tls_warm_idle_sessions(), 2);
    for (int i = 0; i < 3; i++) {
        talk(&p[i], true, request, BIG);
        talk(&p[i], false, "answer", BIG);
    }
    assert_int_equal(adm_tls_warm_idle_sessions(), 0);
    assert_int_equal(adm_tls_set_warm_idle_sessions(1), 0);
    assert_int_equal(adm_tls_session_trim(p[1].server), 0);
    assert_int_equal(adm_tls_warm_idle_sessions(), 1);
    for (int i = 0; i < 3; i++) {
        pair_close(&p[i]);
    }
    assert_int_equal(adm_tls_warm_idle_sessions(), 0);
    adm_tls_set_warm_idle_sessions(budget);
}

/* Data sent just before close_notify arrives in the same feed and is still handed over. */
static void close_case(bool client_closes, bool tls12)
{
    pair_t p;
    adm_tls_session_t *closer;

    pair_open(&p, NULL, selfsigned_pem, NULL, tls12, "localhost");
    pump(&p, BIG);
    closer = client_closes ? p.client : p.server;
    assert_int_equal(adm_tls_session_send(closer, (const uint8_t *)"last", 4), 0);
    assert_int_equal(adm_tls_session_close_notify(closer), 0);
    pump(&p, BIG);
    if (client_closes) {
        assert_int_equal(p.server_rc, ADM_EOF);
        assert_int_equal(p.server_plain.len, 4);
        assert_memory_equal(p.server_plain.data, "last", 4);
    } else {
        assert_int_equal(p.client_rc, ADM_EOF);
        assert_int_equal(p.client_plain.len, 4);
        assert_memory_equal(p.client_plain.data, "last", 4);
    }
    pair_close(&p);
}

static void test_close_notify(void **state)
{
    close_case(true, false);
    close_case(false, false);
    close_case(true, true);
    close_case(false, true);
}

static void test_wrong_ca(void **state)
{
    char other[512];
    pair_t p;

    path_of(other, sizeof(other), "otherca.crt.pem");
    pair_open(&p, NULL, other, NULL, false, "localhost");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, ADM_ETLS);
    assert_false(adm_tls_session_handshake_done(p.client));
    assert_string_equal(adm_tls_session_error(p.client),
                        "TLS handshake failed: certificate verification failed (unknown CA)");
    /* The client's alert reaches the server, which fails too instead of waiting forever. */
    assert_int_equal(p.server_rc, ADM_ETLS);
    assert_contains(adm_tls_session_error(p.server), "TLS handshake failed: SSL - ");
    pair_close(&p);
}

static void test_hostname_mismatch(void **state)
{
    pair_t p;

    pair_open(&p, NULL, selfsigned_pem, NULL, false, "example.com");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, ADM_ETLS);
    assert_string_equal(adm_tls_session_error(p.client),
                        "TLS handshake failed: certificate verification failed "
                        "(name mismatch: not valid for \"example.com\")");
    pair_close(&p);

    pair_open(&p, NULL, selfsigned_pem, NULL, true, "10.0.0.1");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, ADM_ETLS);
    assert_contains(adm_tls_session_error(p.client), "name mismatch");
    pair_close(&p);
}

static void test_insecure_client(void **state)
{
    adm_tls_client_opts_t o = {.insecure = true};
    char err[256];
    pair_t p;

    memset(&p, 0, sizeof(p));
    p.sctx = server_ctx(NULL);
    assert_int_equal(adm_tls_client_ctx_create(&o, &p.cctx, err, sizeof(err)), 0);
    pair_start(&p, NULL); /* no name needed when nothing is verified */
    pump(&p, BIG);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_handshake_done(p.client));
    pair_close(&p);
}

/*
 * With --client-ca-file the server asks for a certificate but lets the handshake finish without
 * one, or with one it cannot verify (VERIFY_OPTIONAL): the HTTP layer answers 401 on admission
 * paths. So all three cases complete the handshake, and only a certificate from the CA verifies.
 */
static void mtls_case(const char *client, bool tls12, bool want_verified)
{
    pair_t p;

    pair_open(&p, "ca.crt.pem", selfsigned_pem, client, tls12, "localhost");
    assert_true(adm_tls_ctx_wants_client_cert(p.sctx));
    pump(&p, BIG);
    assert_int_equal(p.server_rc, 0);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_handshake_done(p.server));
    assert_true(adm_tls_session_handshake_done(p.client));
    assert_int_equal(adm_tls_session_peer_verified(p.server), want_verified);
    assert_false(adm_tls_session_peer_verified(p.client)); /* a client does not ask */
    pair_close(&p);
}

static void test_mtls(void **state)
{
    for (int tls12 = 0; tls12 < 2; tls12++) {
        mtls_case("client", tls12, true);
        mtls_case(NULL, tls12, false);
        mtls_case("intruder", tls12, false);
    }
}

static void test_garbage(void **state)
{
    static const uint8_t http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    uint8_t noise[4096];
    pair_t p;

    /* Plain HTTP to a TLS port. */
    pair_open(&p, NULL, selfsigned_pem, NULL, false, "localhost");
    assert_int_equal(adm_tls_session_recv(p.server, http, sizeof(http) - 1, &p.server_plain), ADM_ETLS);
    assert_contains(adm_tls_session_error(p.server), "TLS handshake failed: ");
    /* Further input after a failure is refused, not a crash. */
    assert_int_not_equal(adm_tls_session_recv(p.server, http, sizeof(http) - 1, &p.server_plain), 0);
    pair_close(&p);

    /* Noise that looks like a handshake record, to both roles. */
    srand(7);
    for (size_t i = 0; i < sizeof(noise); i++) {
        noise[i] = (uint8_t)rand();
    }
    noise[0] = 0x16;
    noise[1] = 0x03;
    noise[2] = 0x01;
    noise[3] = 0x02;
    noise[4] = 0x00;
    pair_open(&p, NULL, selfsigned_pem, NULL, false, "localhost");
    assert_int_equal(adm_tls_session_recv(p.server, noise, sizeof(noise), &p.server_plain), ADM_ETLS);
    assert_int_equal(adm_tls_session_recv(p.client, noise, sizeof(noise), &p.client_plain), ADM_ETLS);
    assert_contains(adm_tls_session_error(p.client), "TLS handshake failed: ");
    pair_close(&p);

    /* A corrupted application record after the handshake fails authentication. */
    pair_open(&p, NULL, selfsigned_pem, NULL, false, "localhost");
    pump(&p, BIG);
    assert_int_equal(adm_tls_session_send(p.client, (const uint8_t *)"hello", 5), 0);
    adm_tls_session_output(p.client)->data[10] ^= 0x55;
    pump(&p, BIG);
    assert_int_equal(p.server_rc, ADM_ETLS);
    assert_contains(adm_tls_session_error(p.server), "TLS read failed: ");
    assert_int_equal(p.server_plain.len, 0);
    pair_close(&p);
}

static void test_misuse(void **state)
{
    adm_tls_ctx_t *cctx = client_ctx(selfsigned_pem, NULL, false);
    adm_tls_ctx_t *sctx = server_ctx(NULL);
    adm_tls_session_t *s = NULL;
    adm_buf_t plain = ADM_BUF_INIT;

    /* A verifying client must say which name to verify. */
    assert_int_equal(adm_tls_session_create(cctx, NULL, &s), ADM_ETLS);
    assert_null(s);

    assert_int_equal(adm_tls_session_create(sctx, NULL, &s), 0);
    assert_int_equal(adm_tls_session_start(s), 0);
    assert_int_equal(adm_tls_session_output(s)->len, 0);
    assert_int_equal(adm_tls_session_send(s, (const uint8_t *)"x", 1), ADM_ETLS);
    assert_string_equal(adm_tls_session_error(s), "TLS write: handshake not finished");
    assert_int_equal(adm_tls_session_close_notify(s), 0);
    assert_string_equal(adm_tls_session_alpn(s), "");
    assert_string_equal(adm_tls_session_cipher(s), "");
    assert_false(adm_tls_session_peer_verified(s));
    /* A ClientHello arriving in 3-byte pieces is collected before the session is set up. */
    assert_int_equal(adm_tls_session_recv(s, (const uint8_t *)"\x16\x03", 2, &plain), 0);
    assert_int_equal(adm_tls_session_recv(s, NULL, 0, &plain), 0);
    adm_tls_session_destroy(s);

    adm_tls_ctx_unref(cctx);
    adm_tls_ctx_unref(sctx);
    adm_buf_free(&plain);
}

/* A caBundle may hold several certificates and comes decoded from JSON without a NUL. */
static void test_ca_bundle(void **state)
{
    char other[512];
    size_t other_len, self_len;
    char *other_pem, *self_pem, *bundle;
    char err[256];
    pair_t p;

    path_of(other, sizeof(other), "otherca.crt.pem");
    other_pem = slurp(other, &other_len);
    memset(&p, 0, sizeof(p));
    p.sctx = server_ctx(NULL); /* writes the certificate read next */
    self_pem = slurp(selfsigned_pem, &self_len);
    bundle = malloc(other_len + self_len);
    assert_non_null(bundle);
    memcpy(bundle, other_pem, other_len);
    memcpy(bundle + other_len, self_pem, self_len);
    {
        adm_tls_client_opts_t o = {.ca_pem = bundle, .ca_pem_len = other_len + self_len};

        assert_int_equal(adm_tls_client_ctx_create(&o, &p.cctx, err, sizeof(err)), 0);
    }
    pair_start(&p, "localhost");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_handshake_done(p.client));
    pair_close(&p);

    /* With the NUL counted, as the header describes, it works just as well. */
    memset(&p, 0, sizeof(p));
    p.sctx = server_ctx(NULL);
    free(self_pem);
    self_pem = slurp(selfsigned_pem, &self_len);
    {
        adm_tls_client_opts_t o = {.ca_pem = self_pem, .ca_pem_len = self_len + 1};

        assert_int_equal(adm_tls_client_ctx_create(&o, &p.cctx, err, sizeof(err)), 0);
    }
    pair_start(&p, "localhost");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, 0);
    pair_close(&p);

    free(bundle);
    free(other_pem);
    free(self_pem);
}

/*
 * A client certificate and key handed over in memory (a kubeconfig's client-certificate-data and
 * client-key-data): the server verifies it as it does one from files; a key of another
 * certificate is refused with one line.
 */
static void test_client_cert_in_memory(void **state)
{
    char cert_path[512], key_path[512], other_key_path[512], err[256];
    size_t cert_len, key_len, other_len;
    char *cert, *key, *other_key;
    adm_tls_client_opts_t o = {0};
    pair_t p;

    (void)state;
    path_of(cert_path, sizeof(cert_path), "client.crt.pem");
    path_of(key_path, sizeof(key_path), "client.key.pem");
    path_of(other_key_path, sizeof(other_key_path), "intruder.key.pem");
    cert = slurp(cert_path, &cert_len);
    key = slurp(key_path, &key_len);
    other_key = slurp(other_key_path, &other_len);
    memset(&p, 0, sizeof(p));
    p.sctx = server_ctx("ca.crt.pem");
    o.ca_file = selfsigned_pem;
    o.cert_pem = cert;
    o.cert_pem_len = cert_len;
    o.key_pem = key;
    o.key_pem_len = key_len;
    assert_int_equal(adm_tls_client_ctx_create(&o, &p.cctx, err, sizeof(err)), 0);
    pair_start(&p, "localhost");
    pump(&p, BIG);
    assert_int_equal(p.client_rc, 0);
    assert_true(adm_tls_session_peer_verified(p.server));
    pair_close(&p);

    o.key_pem = other_key;
    o.key_pem_len = other_len;
    assert_int_not_equal(adm_tls_client_ctx_create(&o, &p.cctx, err, sizeof(err)), 0);
    assert_string_equal(err, "client certificate key: key does not match the certificate");
    free(cert);
    free(key);
    free(other_key);
}

/* What curl --cacert, Go and kube-apiserver rely on in the generated certificate. */
static void test_selfsigned_certificate(void **state)
{
    adm_tls_ctx_t *ctx = server_ctx(NULL);
    mbedtls_x509_crt crt;
    struct stat st;
    char info[4096];
    uint32_t flags = 0;
    time_t now = time(NULL);
    struct tm tm;

    assert_int_equal(stat(selfsigned_pem, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    mbedtls_x509_crt_init(&crt);
    assert_int_equal(mbedtls_x509_crt_parse_file(&crt, selfsigned_pem), 0);
    assert_null(crt.next);
    assert_int_equal(crt.version, 3);
    assert_int_equal(mbedtls_x509_crt_get_ca_istrue(&crt), 1);
    assert_int_equal(crt.serial.len, 16);
    assert_int_equal(mbedtls_pk_get_type(&crt.pk), MBEDTLS_PK_ECKEY);
    assert_int_equal(mbedtls_pk_get_bitlen(&crt.pk), 256);
    assert_true(mbedtls_x509_crt_has_ext_type(&crt, MBEDTLS_X509_EXT_KEY_USAGE));
    assert_int_equal(mbedtls_x509_crt_check_key_usage(&crt, MBEDTLS_X509_KU_DIGITAL_SIGNATURE |
                                                                MBEDTLS_X509_KU_KEY_CERT_SIGN),
                     0);
    assert_int_equal(mbedtls_x509_crt_check_extended_key_usage(&crt, MBEDTLS_OID_SERVER_AUTH,
                                                               MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)),
                     0);
    assert_true(mbedtls_x509_crt_info(info, sizeof(info), "", &crt) > 0);
    assert_contains(info, "subject name      : CN=admitd");
    assert_contains(info, "signed using      : ECDSA with SHA256");
    assert_contains(info, "dNSName : localhost");
    assert_contains(info, "iPAddress : 127.0.0.1");
    assert_contains(info, "iPAddress : 00:00:00:00:00:00:00:01");
    /* Valid now, starting in the past, ending about a year from now. */
    assert_false(mbedtls_x509_time_is_past(&crt.valid_to));
    assert_false(mbedtls_x509_time_is_future(&crt.valid_from));
    now += 365 * 24 * 3600;
    gmtime_r(&now, &tm);
    assert_int_equal(crt.valid_to.year, tm.tm_year + 1900);
    /* It is its own trust anchor, for every name it carries. */
    assert_int_equal(mbedtls_x509_crt_verify(&crt, &crt, NULL, "localhost", &flags, NULL, NULL), 0);
    assert_int_equal(mbedtls_x509_crt_verify(&crt, &crt, NULL, "::1", &flags, NULL, NULL), 0);
    mbedtls_x509_crt_free(&crt);
    adm_tls_ctx_unref(ctx);
}

static void expect_server_error(const adm_tls_server_opts_t *o, const char *want)
{
    adm_tls_ctx_t *ctx = NULL;
    char err[512] = "";

    assert_int_not_equal(adm_tls_server_ctx_create(o, &ctx, err, sizeof(err)), 0);
    assert_null(ctx);
    assert_null(strchr(err, '\n'));
    if (strcmp(err, want) != 0) {
        fail_msg("error \"%s\", want \"%s\"", err, want);
    }
}

static void expect_client_error(const adm_tls_client_opts_t *o, const char *want)
{
    adm_tls_ctx_t *ctx = NULL;
    char err[512] = "";

    assert_int_not_equal(adm_tls_client_ctx_create(o, &ctx, err, sizeof(err)), 0);
    assert_null(ctx);
    assert_null(strchr(err, '\n'));
    if (strcmp(err, want) != 0) {
        fail_msg("error \"%s\", want \"%s\"", err, want);
    }
}

static void test_file_errors(void **state)
{
    char cert[512], key[512], other_key[512], text[512], empty[512], bad[512], missing[512];
    char want[2048];
    adm_tls_ctx_t *ctx = NULL;
    char err[256];

    path_of(cert, sizeof(cert), "server.crt.pem");
    path_of(key, sizeof(key), "server.key.pem");
    path_of(other_key, sizeof(other_key), "client.key.pem");
    path_of(text, sizeof(text), "text.pem");
    path_of(empty, sizeof(empty), "empty.pem");
    path_of(bad, sizeof(bad), "badbase64.pem");
    path_of(missing, sizeof(missing), "missing.pem");

    /* The good pair loads. */
    assert_int_equal(adm_tls_server_ctx_create(&(adm_tls_server_opts_t){.cert_file = cert, .key_file = key},
                                               &ctx, err, sizeof(err)),
                     0);
    adm_tls_ctx_unref(ctx);

    snprintf(want, sizeof(want), "--tls-cert-file %s: cannot read: No such file or directory", missing);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = missing, .key_file = key}, want);
    snprintf(want, sizeof(want), "--tls-cert-file %s: no certificate found", text);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = text, .key_file = key}, want);
    snprintf(want, sizeof(want),
             "--tls-cert-file %s: not a valid PEM/DER certificate (PEM - PEM string is not as "
             "expected : BASE64 - Invalid character in input)",
             bad);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = bad, .key_file = key}, want);
    snprintf(want, sizeof(want),
             "--tls-private-key-file %s: not a valid PEM/DER private key (PK - Invalid key tag or "
             "value)",
             text);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = cert, .key_file = text}, want);
    snprintf(want, sizeof(want), "--tls-private-key-file %s: key does not match the certificate", other_key);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = cert, .key_file = other_key}, want);
    expect_server_error(&(adm_tls_server_opts_t){.cert_file = cert},
                        "--tls-private-key-file: --tls-cert-file and --tls-private-key-file go "
                        "together");
    snprintf(want, sizeof(want), "--client-ca-file %s: no certificate found", empty);
    expect_server_error(&(adm_tls_server_opts_t){.client_ca_file = empty}, want);
    snprintf(want, sizeof(want), "--client-ca-file %s: cannot read: No such file or directory", missing);
    expect_server_error(&(adm_tls_server_opts_t){.client_ca_file = missing}, want);
    expect_server_error(&(adm_tls_server_opts_t){.self_signed_out = "/nonexistent-dir/ca.pem"},
                        "--self-signed-ca-out /nonexistent-dir/ca.pem: cannot write: No such file "
                        "or directory");

    /* The client names the bench tool's flags, or the caBundle. */
    snprintf(want, sizeof(want), "--cacert %s: cannot read: No such file or directory", missing);
    expect_client_error(&(adm_tls_client_opts_t){.ca_file = missing}, want);
    snprintf(want, sizeof(want), "--cacert %s: no certificate found", text);
    expect_client_error(&(adm_tls_client_opts_t){.ca_file = text}, want);
    expect_client_error(&(adm_tls_client_opts_t){.ca_pem = "hello", .ca_pem_len = 5},
                        "caBundle: no certificate found");
    snprintf(want, sizeof(want), "--cert %s: cannot read: No such file or directory", missing);
    expect_client_error(&(adm_tls_client_opts_t){.insecure = true, .cert_file = missing}, want);
    snprintf(want, sizeof(want), "--key %s: key does not match the certificate", key);
    path_of(cert, sizeof(cert), "client.crt.pem");
    expect_client_error(&(adm_tls_client_opts_t){.insecure = true, .cert_file = cert, .key_file = key}, want);
    snprintf(want, sizeof(want), "--key %s: needs --cert", key);
    expect_client_error(&(adm_tls_client_opts_t){.insecure = true, .key_file = key}, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls13),
        cmocka_unit_test(test_tls12),
        cmocka_unit_test(test_ip_address_names),
        cmocka_unit_test(test_one_byte_at_a_time),
        cmocka_unit_test(test_large_payload),
        cmocka_unit_test(test_trim_idle_session),
        cmocka_unit_test(test_trim_keeps_warm_sessions),
        cmocka_unit_test(test_close_notify),
        cmocka_unit_test(test_wrong_ca),
        cmocka_unit_test(test_hostname_mismatch),
        cmocka_unit_test(test_insecure_client),
        cmocka_unit_test(test_mtls),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_ca_bundle),
        cmocka_unit_test(test_client_cert_in_memory),
        cmocka_unit_test(test_selfsigned_certificate),
        cmocka_unit_test(test_file_errors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

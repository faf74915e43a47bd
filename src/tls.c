/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mbedTLS behind memory buffers. The BIO callbacks never touch a socket: "receive" reads from the
 * ciphertext the connection just handed in, "send" appends to the session's output buffer, and
 * WANT_READ simply means "that was all the input there is". mbedTLS keeps partial records in its
 * own buffers, so each adm_tls_session_recv() consumes all it is given.
 */
#include "adm/tls.h"

#include "adm/error.h"
#include "tls_internal.h"

#include <errno.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/ssl.h>
#include <psa/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define PLAIN_CHUNK 16384 /* one TLS record's worth of plaintext per read */

struct adm_tls_ctx_s {
    int refs;
    bool server;
    bool wants_client_cert;
    mbedtls_ssl_config conf;
    mbedtls_ssl_config conf_chacha; /* servers: TLS 1.3 restricted to ChaCha20-Poly1305 */
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt own_cert;
    mbedtls_pk_context own_key;
    mbedtls_x509_crt ca;
};

struct adm_tls_session_s {
    adm_tls_ctx_t *ctx;
    mbedtls_ssl_context ssl;
    adm_buf_t out;            /* ciphertext to send */
    adm_buf_t held;           /* ciphertext received but not yet consumed (rare: after errors) */
    const uint8_t *input;     /* the ciphertext of the running recv call */
    size_t input_len, input_off;
    bool handshake_done;
    bool set_up;              /* mbedtls_ssl_setup done (servers wait for the ClientHello) */
    bool out_of_memory;
    char error[160];
};

static const char *const alpn_protocols[] = {"http/1.1", NULL};

/* X25519 first: Go (kube-apiserver) offers it first, and it avoids a HelloRetryRequest. */
static const uint16_t groups[] = {
    MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1,
    MBEDTLS_SSL_IANA_TLS_GROUP_NONE,
};

/*
 * AEAD suites only. ChaCha20-Poly1305 comes first: with mbedTLS on these machines it is 1.5x the
 * speed of AES-GCM (480 vs 322 MB/s, AES-NI in use), which is the largest per-request cost.
 * TLS 1.2 follows this server order; for TLS 1.3 mbedTLS follows the client's order, so a server
 * session whose ClientHello offers ChaCha20 is set up on conf_chacha (see choose_config).
 */
static const int ciphersuites[] = {
    MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
    MBEDTLS_TLS1_3_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    0,
};

static const int ciphersuites_chacha[] = {
    MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    0,
};

int adm_tls_global_init(void)
{
    return psa_crypto_init() == PSA_SUCCESS ? 0 : ADM_ETLS;
}

void adm_tls_global_cleanup(void)
{
    mbedtls_psa_crypto_free();
}

static void mbed_text(int ret, char *out, size_t out_len)
{
    mbedtls_strerror(ret, out, out_len);
}

/* Reads a whole file (NUL-terminated, as mbedTLS's PEM parser wants). */
static int read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;

    if (f == NULL) {
        return -errno;
    }
    for (;;) {
        size_t got;

        if (n + 4096 + 1 > cap) {
            unsigned char *nb;

            cap = cap == 0 ? 8192 : cap * 2;
            if (cap > (64u << 20)) {
                free(buf);
                fclose(f);
                return ADM_ETOOBIG;
            }
            nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return ADM_ENOMEM;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        int e = errno != 0 ? errno : EIO;

        free(buf);
        fclose(f);
        return -e;
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* read_file() for a file named by a flag: on failure, one line in msg that names both. */
static int read_named_file(const char *flag, const char *path, unsigned char **data, size_t *len, char *msg,
                           size_t msg_len)
{
    int err = read_file(path, data, len);

    if (err != 0) {
        snprintf(msg, msg_len, "%s %s: cannot read: %s", flag, path,
                 err == ADM_ETOOBIG ? "larger than 64 MiB" : adm_strerror(err));
        return ADM_EIO;
    }
    return 0;
}

/* Parses certificates (PEM or DER) from memory; len includes the NUL of PEM text. */
static int parse_certs(mbedtls_x509_crt *chain, const unsigned char *data, size_t len, const char *flag,
                       const char *path, char *msg, size_t msg_len)
{
    int ret = mbedtls_x509_crt_parse(chain, data, len);

    if (ret < 0) {
        char text[128];

        mbed_text(ret, text, sizeof(text));
        snprintf(msg, msg_len, "%s %s: not a valid PEM/DER certificate (%s)", flag, path, text);
        return ADM_ETLS;
    }
    if (chain->raw.len == 0) {
        snprintf(msg, msg_len, "%s %s: no certificate found", flag, path);
        return ADM_ETLS;
    }
    return 0;
}

static int load_certs(mbedtls_x509_crt *chain, const char *flag, const char *path, char *msg, size_t msg_len)
{
    unsigned char *data = NULL;
    size_t len = 0;
    int ret = read_named_file(flag, path, &data, &len, msg, msg_len);

    if (ret != 0) {
        return ret;
    }
    ret = parse_certs(chain, data, len + 1, flag, path, msg, msg_len);
    free(data);
    return ret;
}

static int load_key(adm_tls_ctx_t *ctx, const char *flag, const char *path, char *msg, size_t msg_len)
{
    unsigned char *data = NULL;
    size_t len = 0;
    int ret = read_named_file(flag, path, &data, &len, msg, msg_len);

    if (ret != 0) {
        return ret;
    }
    ret = mbedtls_pk_parse_key(&ctx->own_key, data, len + 1, NULL, 0, mbedtls_ctr_drbg_random, &ctx->drbg);
    mbedtls_platform_zeroize(data, len);
    free(data);
    if (ret != 0) {
        char text[128];

        mbed_text(ret, text, sizeof(text));
        snprintf(msg, msg_len, "%s %s: not a valid PEM/DER private key (%s)", flag, path, text);
        return ADM_ETLS;
    }
    return 0;
}

static adm_tls_ctx_t *ctx_new(bool server, char *msg, size_t msg_len)
{
    adm_tls_ctx_t *ctx = calloc(1, sizeof(*ctx));
    int ret;

    if (ctx == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    ctx->refs = 1;
    ctx->server = server;
    mbedtls_ssl_config_init(&ctx->conf);
    mbedtls_entropy_init(&ctx->entropy);
    mbedtls_ctr_drbg_init(&ctx->drbg);
    mbedtls_x509_crt_init(&ctx->own_cert);
    mbedtls_pk_init(&ctx->own_key);
    mbedtls_x509_crt_init(&ctx->ca);
    mbedtls_ssl_config_init(&ctx->conf_chacha);
    ret = mbedtls_ctr_drbg_seed(&ctx->drbg, mbedtls_entropy_func, &ctx->entropy,
                                (const unsigned char *)"admitd", 6);
    for (int i = 0; i < 2 && ret == 0; i++) {
        mbedtls_ssl_config *conf = i == 0 ? &ctx->conf : &ctx->conf_chacha;

        ret = mbedtls_ssl_config_defaults(conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                          MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
        if (ret != 0) {
            break;
        }
        mbedtls_ssl_conf_rng(conf, mbedtls_ctr_drbg_random, &ctx->drbg);
        mbedtls_ssl_conf_min_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_2);
        mbedtls_ssl_conf_max_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_3);
        mbedtls_ssl_conf_groups(conf, groups);
        mbedtls_ssl_conf_ciphersuites(conf, i == 0 ? ciphersuites : ciphersuites_chacha);
        mbedtls_ssl_conf_alpn_protocols(conf, (const char **)alpn_protocols);
    }
    if (ret != 0) {
        char text[128];

        mbed_text(ret, text, sizeof(text));
        snprintf(msg, msg_len, "TLS setup failed: %s", text);
        adm_tls_ctx_unref(ctx);
        return NULL;
    }
    return ctx;
}

int adm_tls_server_ctx_create(const adm_tls_server_opts_t *opts, adm_tls_ctx_t **out, char *err, size_t err_len)
{
    adm_tls_ctx_t *ctx = ctx_new(true, err, err_len);
    int ret;

    if (ctx == NULL) {
        return ADM_ENOMEM;
    }
    if (opts->cert_file != NULL) {
        ret = load_certs(&ctx->own_cert, "--tls-cert-file", opts->cert_file, err, err_len);
        if (ret == 0) {
            ret = load_key(ctx, "--tls-private-key-file", opts->key_file, err, err_len);
        }
        if (ret == 0 &&
            mbedtls_pk_check_pair(&ctx->own_cert.pk, &ctx->own_key, mbedtls_ctr_drbg_random, &ctx->drbg) != 0) {
            snprintf(err, err_len, "--tls-private-key-file %s: key does not match the certificate in %s",
                     opts->key_file, opts->cert_file);
            ret = ADM_ETLS;
        }
    } else {
        ret = adm__selfsigned_generate(&ctx->own_key, &ctx->own_cert, &ctx->drbg, opts->self_signed_out, err,
                                       err_len);
    }
    if (ret == 0 && opts->client_ca_file != NULL) {
        ret = load_certs(&ctx->ca, "--client-ca-file", opts->client_ca_file, err, err_len);
        ctx->wants_client_cert = ret == 0;
    }
    for (int i = 0; i < 2 && ret == 0; i++) {
        mbedtls_ssl_config *conf = i == 0 ? &ctx->conf : &ctx->conf_chacha;

        if (ctx->wants_client_cert) {
            /* Optional at the TLS level: probes come without certificates; admission paths answer
               401 unless adm_tls_session_peer_verified() (INTERFACE.md D11). */
            mbedtls_ssl_conf_ca_chain(conf, &ctx->ca, NULL);
            mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
        } else {
            mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_NONE);
        }
        if (mbedtls_ssl_conf_own_cert(conf, &ctx->own_cert, &ctx->own_key) != 0) {
            snprintf(err, err_len, "--tls-cert-file: certificate cannot be used for TLS");
            ret = ADM_ETLS;
        }
    }
    if (ret != 0) {
        adm_tls_ctx_unref(ctx);
        return ret;
    }
    *out = ctx;
    return 0;
}

int adm_tls_client_ctx_create(const adm_tls_client_opts_t *opts, adm_tls_ctx_t **out, char *err, size_t err_len)
{
    adm_tls_ctx_t *ctx = ctx_new(false, err, err_len);
    int ret = 0;

    if (ctx == NULL) {
        return ADM_ENOMEM;
    }
    if (opts->ca_pem != NULL) {
        ret = parse_certs(&ctx->ca, (const unsigned char *)opts->ca_pem, opts->ca_pem_len, "caBundle", "(inline)",
                          err, err_len);
    } else if (opts->ca_file != NULL) {
        ret = load_certs(&ctx->ca, "--cacert", opts->ca_file, err, err_len);
    } else if (!opts->insecure) {
        ret = load_certs(&ctx->ca, "system CA bundle", SYSTEM_CA_BUNDLE, err, err_len);
    }
    if (ret == 0 && opts->cert_file != NULL) {
        ret = load_certs(&ctx->own_cert, "--cert", opts->cert_file, err, err_len);
        if (ret == 0) {
            ret = load_key(ctx, "--key", opts->key_file != NULL ? opts->key_file : opts->cert_file, err, err_len);
        }
        if (ret == 0) {
            ret = mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->own_cert, &ctx->own_key) == 0 ? 0 : ADM_ETLS;
        }
    }
    if (ret != 0) {
        adm_tls_ctx_unref(ctx);
        return ret;
    }
    mbedtls_ssl_conf_ca_chain(&ctx->conf, &ctx->ca, NULL);
    mbedtls_ssl_conf_authmode(&ctx->conf, opts->insecure ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
    if (opts->max_tls12) {
        mbedtls_ssl_conf_max_tls_version(&ctx->conf, MBEDTLS_SSL_VERSION_TLS1_2);
    }
    *out = ctx;
    return 0;
}

void adm_tls_ctx_ref(adm_tls_ctx_t *ctx)
{
    ctx->refs++;
}

void adm_tls_ctx_unref(adm_tls_ctx_t *ctx)
{
    if (ctx == NULL || --ctx->refs > 0) {
        return;
    }
    mbedtls_ssl_config_free(&ctx->conf);
    mbedtls_ssl_config_free(&ctx->conf_chacha);
    mbedtls_x509_crt_free(&ctx->own_cert);
    mbedtls_pk_free(&ctx->own_key);
    mbedtls_x509_crt_free(&ctx->ca);
    mbedtls_ctr_drbg_free(&ctx->drbg);
    mbedtls_entropy_free(&ctx->entropy);
    free(ctx);
}

bool adm_tls_ctx_wants_client_cert(const adm_tls_ctx_t *ctx)
{
    return ctx->wants_client_cert;
}

static int bio_send(void *arg, const unsigned char *buf, size_t len)
{
    adm_tls_session_t *s = arg;

    if (adm_buf_append(&s->out, buf, len) != 0) {
        s->out_of_memory = true;
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    }
    return (int)len;
}

static int bio_recv(void *arg, unsigned char *buf, size_t len)
{
    adm_tls_session_t *s = arg;
    size_t avail = s->input_len - s->input_off;

    if (avail == 0) {
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    if (len > avail) {
        len = avail;
    }
    memcpy(buf, s->input + s->input_off, len);
    s->input_off += len;
    return (int)len;
}

int adm_tls_session_create(adm_tls_ctx_t *ctx, const char *server_name, adm_tls_session_t **out)
{
    adm_tls_session_t *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        return ADM_ENOMEM;
    }
    mbedtls_ssl_init(&s->ssl);
    /* Servers pick their configuration when the ClientHello arrives (choose_config). */
    if (!ctx->server) {
        if (mbedtls_ssl_setup(&s->ssl, &ctx->conf) != 0) {
            mbedtls_ssl_free(&s->ssl);
            free(s);
            return ADM_ENOMEM;
        }
        /* Clients always name the host: mbedTLS 3.6.3+ refuses to verify without it. */
        if (mbedtls_ssl_set_hostname(&s->ssl, server_name) != 0) {
            mbedtls_ssl_free(&s->ssl);
            free(s);
            return ADM_ETLS;
        }
        mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
        s->set_up = true;
    }
    adm_tls_ctx_ref(ctx);
    s->ctx = ctx;
    *out = s;
    return 0;
}

void adm_tls_session_destroy(adm_tls_session_t *s)
{
    if (s == NULL) {
        return;
    }
    mbedtls_ssl_free(&s->ssl);
    adm_buf_free(&s->out);
    adm_buf_free(&s->held);
    adm_tls_ctx_unref(s->ctx);
    free(s);
}

static int fail(adm_tls_session_t *s, const char *what, int ret)
{
    char text[128];

    if (s->out_of_memory || ret == MBEDTLS_ERR_SSL_ALLOC_FAILED) {
        snprintf(s->error, sizeof(s->error), "%s: out of memory", what);
        return ADM_ENOMEM;
    }
    mbed_text(ret, text, sizeof(text));
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        char why[96];
        int n = mbedtls_x509_crt_verify_info(why, sizeof(why), "", mbedtls_ssl_get_verify_result(&s->ssl));

        if (n > 0 && why[n - 1] == '\n') {
            why[n - 1] = '\0';
        }
        snprintf(s->error, sizeof(s->error), "%s: certificate verification failed: %s", what, why);
    } else {
        snprintf(s->error, sizeof(s->error), "%s: %s", what, text);
    }
    return ADM_ETLS;
}

static int step_handshake(adm_tls_session_t *s)
{
    int ret;

    if (s->handshake_done) {
        return 0;
    }
    ret = mbedtls_ssl_handshake(&s->ssl);
    if (ret == 0) {
        s->handshake_done = true;
        return 0;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        return ADM_AGAIN;
    }
    return fail(s, "TLS handshake failed", ret);
}

int adm_tls_session_start(adm_tls_session_t *s)
{
    int ret;

    s->input = NULL;
    s->input_len = s->input_off = 0;
    ret = step_handshake(s);
    return ret == ADM_AGAIN ? 0 : ret;
}

/*
 * Looks into the first TLS record for the ClientHello's cipher suites. Returns 1 when it offers
 * TLS_CHACHA20_POLY1305_SHA256, 0 when it does not (or is not a plain ClientHello: mbedTLS will
 * judge it), -1 when more bytes are needed.
 */
static int hello_offers_chacha(const uint8_t *p, size_t n)
{
    size_t record_len, avail, off, suites_len;
    const uint8_t *h;

    if (n < 5) {
        return -1;
    }
    if (p[0] != 0x16) {
        return 0;
    }
    record_len = (size_t)p[3] << 8 | p[4];
    avail = n - 5 < record_len ? n - 5 : record_len;
    h = p + 5;
    /* handshake type and length, legacy_version, random, then the session id */
    off = 4 + 2 + 32;
    if (avail >= 1 && h[0] != 0x01) {
        return 0;
    }
    if (avail < off + 1) {
        return avail < record_len ? -1 : 0;
    }
    off += 1 + h[off];
    if (avail < off + 2) {
        return avail < record_len ? -1 : 0;
    }
    suites_len = (size_t)h[off] << 8 | h[off + 1];
    off += 2;
    if (avail < off + suites_len) {
        return avail < record_len ? -1 : 0;
    }
    for (size_t i = 0; i + 1 < suites_len; i += 2) {
        if (h[off + i] == 0x13 && h[off + i + 1] == 0x03) {
            return 1;
        }
    }
    return 0;
}

/* Sets a server session up on the configuration its ClientHello calls for; ADM_AGAIN: need more. */
static int choose_config(adm_tls_session_t *s, const uint8_t *cipher, size_t len)
{
    int offers = hello_offers_chacha(cipher, len);
    mbedtls_ssl_config *conf;

    if (offers < 0 && len < 16384 + 5) {
        return ADM_AGAIN;
    }
    conf = offers == 1 ? &s->ctx->conf_chacha : &s->ctx->conf;
    if (mbedtls_ssl_setup(&s->ssl, conf) != 0) {
        snprintf(s->error, sizeof(s->error), "TLS setup: out of memory");
        return ADM_ENOMEM;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    s->set_up = true;
    return 0;
}

int adm_tls_session_recv(adm_tls_session_t *s, const uint8_t *cipher, size_t len, adm_buf_t *plain)
{
    int ret = 0;

    /* Leftovers from an earlier call come first; then the new bytes are read where they lie. */
    if (s->held.len > 0) {
        if (adm_buf_append(&s->held, cipher, len) != 0) {
            return ADM_ENOMEM;
        }
        cipher = s->held.data;
        len = s->held.len;
    }
    if (!s->set_up) {
        ret = choose_config(s, cipher, len);
        if (ret == ADM_AGAIN) {
            /* Keep the start of the ClientHello until the rest arrives. */
            if (cipher != s->held.data && adm_buf_append(&s->held, cipher, len) != 0) {
                return ADM_ENOMEM;
            }
            return 0;
        }
        if (ret != 0) {
            return ret;
        }
    }
    s->input = cipher;
    s->input_len = len;
    s->input_off = 0;

    ret = step_handshake(s);
    while (ret == 0) {
        int n;

        if (adm_buf_reserve(plain, PLAIN_CHUNK) != 0) {
            ret = ADM_ENOMEM;
            break;
        }
        n = mbedtls_ssl_read(&s->ssl, plain->data + plain->len, plain->cap - plain->len);
        if (n > 0) {
            plain->len += (size_t)n;
            continue;
        }
        if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE ||
            n == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
            if (n == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
                continue;
            }
            break;
        }
        if (n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || n == 0) {
            ret = ADM_EOF;
            break;
        }
        ret = fail(s, "TLS read failed", n);
    }
    if (ret == ADM_AGAIN) {
        ret = 0;
    }
    /* Keep what mbedTLS did not take (it normally takes everything; not after an error). */
    if (cipher == s->held.data) {
        adm_buf_consume(&s->held, s->input_off);
    } else if (s->input_off < len && ret == 0) {
        if (adm_buf_append(&s->held, cipher + s->input_off, len - s->input_off) != 0) {
            ret = ADM_ENOMEM;
        }
    }
    s->input = NULL;
    s->input_len = s->input_off = 0;
    return ret;
}

int adm_tls_session_send(adm_tls_session_t *s, const uint8_t *data, size_t len)
{
    while (len > 0) {
        int n = mbedtls_ssl_write(&s->ssl, data, len);

        if (n < 0) {
            return fail(s, "TLS write failed", n);
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int adm_tls_session_close_notify(adm_tls_session_t *s)
{
    int ret = mbedtls_ssl_close_notify(&s->ssl);

    return ret == 0 || ret == MBEDTLS_ERR_SSL_WANT_WRITE ? 0 : fail(s, "TLS close failed", ret);
}

adm_buf_t *adm_tls_session_output(adm_tls_session_t *s)
{
    return &s->out;
}

bool adm_tls_session_handshake_done(const adm_tls_session_t *s)
{
    return s->handshake_done;
}

bool adm_tls_session_peer_verified(const adm_tls_session_t *s)
{
    /* handshake_done implies set_up. */
    return s->handshake_done && s->ctx->wants_client_cert && mbedtls_ssl_get_peer_cert(&s->ssl) != NULL &&
           mbedtls_ssl_get_verify_result(&s->ssl) == 0;
}

const char *adm_tls_session_version(const adm_tls_session_t *s)
{
    return mbedtls_ssl_get_version(&s->ssl);
}

const char *adm_tls_session_cipher(const adm_tls_session_t *s)
{
    const char *name = mbedtls_ssl_get_ciphersuite(&s->ssl);

    return name != NULL ? name : "";
}

const char *adm_tls_session_error(const adm_tls_session_t *s)
{
    return s->error[0] != '\0' ? s->error : "no error";
}

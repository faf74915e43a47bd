/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mbedTLS behind memory buffers. The BIO callbacks never touch a socket: "receive" reads from the
 * ciphertext handed to adm_tls_session_recv(), "send" appends to the session's output buffer, and
 * WANT_READ simply means "that was all the input there is". mbedTLS keeps partial records in its
 * own input buffer, so a recv call normally consumes everything it is given straight from the
 * caller's memory; the session copies bytes only when it must look at a ClientHello before mbedTLS
 * may (see choose_config) or when an error leaves input unread. Contexts are built once at startup
 * or reload, synchronously, and shared by reference count between the sessions using them.
 */
#include "adm/net/tls.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "tls_internal.h"

#include <errno.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/ssl.h>
#include <psa/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define PLAIN_CHUNK 16384           /* one TLS record's worth of plaintext per mbedtls_ssl_read */
#define FILE_MAX ((size_t)64 << 20) /* larger certificate or key files are surely a mistake */

struct adm_tls_ctx_s {
    atomic_int refs; /* sessions on other loops may drop the last reference */
    bool server;
    bool wants_client_cert;
    bool verify_server; /* clients: the server's certificate and name are checked */
    mbedtls_ssl_config conf;
    mbedtls_ssl_config conf_chacha; /* servers only: TLS 1.3 restricted to ChaCha20-Poly1305 */
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg; /* locked by mbedTLS itself (built with MBEDTLS_THREADING_C) */
    mbedtls_x509_crt own_cert;
    mbedtls_pk_context own_key;
    mbedtls_x509_crt ca; /* client CA (servers) or trust anchors (clients) */
};

struct adm_tls_session_s {
    adm_tls_ctx_t *ctx;
    mbedtls_ssl_context ssl;
    adm_buf_t out;        /* ciphertext to send */
    adm_buf_t held;       /* ciphertext received but not yet given to mbedTLS */
    const uint8_t *input; /* the ciphertext of the running recv call, read by bio_recv */
    size_t input_len;     /* its length */
    size_t input_off;     /* how much of it bio_recv has handed out */
    char *server_name;    /* clients: the name verified, for error messages */
    bool handshake_done;
    bool set_up;        /* mbedtls_ssl_setup done (servers wait for the ClientHello) */
    bool out_of_memory; /* bio_send could not grow out */
    char error[256];
};

/* Not const all the way down only because mbedtls_ssl_conf_alpn_protocols() takes char **. */
static const char *alpn_protocols[] = {"http/1.1", NULL};

/* X25519 first: Go (kube-apiserver) sends an X25519 key share, so no HelloRetryRequest. */
static const uint16_t groups[] = {
    MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1,
    MBEDTLS_SSL_IANA_TLS_GROUP_NONE,
};

/*
 * AEAD suites only. ChaCha20-Poly1305 comes first: with mbedTLS on these machines it runs at 1.5x
 * the speed of AES-GCM (480 vs 322 MB/s with AES-NI, bench/RESULTS.md), and bulk encryption is the
 * largest per-request cost. TLS 1.2 follows this server order; for TLS 1.3 mbedTLS follows the
 * client's order, so a server session whose ClientHello offers ChaCha20 is set up on conf_chacha.
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

/*
 * Reads a file named by a flag, NUL-terminated as mbedTLS's PEM parsers want, into a (one buffer:
 * adm_fs_read leaves no other copy of a key's bytes there). On failure one line in msg names both.
 */
static int read_named_file(adm_arena_t *a, const char *flag, const char *path, unsigned char **data,
                           size_t *len, char *msg, size_t msg_len)
{
    char reason[256];
    int err = adm_fs_read(a, path, FILE_MAX, (char **)data, len, reason, sizeof(reason));

    if (err == ADM_ENOMEM) {
        snprintf(msg, msg_len, "%s %s: cannot read: out of memory", flag, path);
        return ADM_ENOMEM;
    }
    if (err != 0) {
        /* reason is "PATH: <why>" */
        size_t n = strlen(path);
        const char *why = strncmp(reason, path, n) == 0 && reason[n] == ':' ? reason + n + 2 : reason;

        snprintf(msg, msg_len, "%s %s: cannot read: %s", flag, path,
                 err == ADM_ETOOBIG ? "larger than 64 MiB" : why);
        return ADM_EIO;
    }
    return 0;
}

/* True when data has a PEM certificate block or could be DER (an ASN.1 SEQUENCE). */
static bool may_hold_cert(const unsigned char *data, size_t len)
{
    static const char begin[] = "-----BEGIN CERTIFICATE-----";

    if (len > 0 && data[0] == 0x30) {
        return true;
    }
    for (size_t i = 0; i + sizeof(begin) - 1 <= len; i++) {
        if (data[i] == '-' && memcmp(data + i, begin, sizeof(begin) - 1) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * Parses certificates (PEM or DER) from memory; for PEM, data[len - 1] must be the NUL. A bundle
 * of trust anchors may keep going past certificates mbedTLS cannot parse (system bundles hold a
 * few); a chain of our own (strict) must parse completely.
 */
static int parse_certs(mbedtls_x509_crt *chain, const unsigned char *data, size_t len, bool strict,
                       const char *flag, const char *path, char *msg, size_t msg_len)
{
    const char *sep = path[0] != '\0' ? " " : "";
    int ret;

    if (!may_hold_cert(data, len)) {
        snprintf(msg, msg_len, "%s%s%s: no certificate found", flag, sep, path);
        return ADM_ETLS;
    }
    ret = mbedtls_x509_crt_parse(chain, data, len);
    if (ret < 0) {
        char text[128];

        mbedtls_strerror(ret, text, sizeof(text));
        snprintf(msg, msg_len, "%s%s%s: not a valid PEM/DER certificate (%s)", flag, sep, path,
                 text);
        return ADM_ETLS;
    }
    if (ret > 0 && strict) {
        snprintf(msg, msg_len, "%s%s%s: %d certificate(s) in the chain could not be parsed", flag,
                 sep, path, ret);
        return ADM_ETLS;
    }
    if (chain->raw.len == 0) {
        snprintf(msg, msg_len, "%s%s%s: no certificate found", flag, sep, path);
        return ADM_ETLS;
    }
    return 0;
}

static int load_certs(mbedtls_x509_crt *chain, bool strict, const char *flag, const char *path,
                      char *msg, size_t msg_len)
{
    adm_arena_t *a = adm_arena_create(16384);
    unsigned char *data = NULL;
    size_t len = 0;
    int ret;

    if (a == NULL) {
        snprintf(msg, msg_len, "%s %s: out of memory", flag, path);
        return ADM_ENOMEM;
    }
    ret = read_named_file(a, flag, path, &data, &len, msg, msg_len);
    if (ret == 0) {
        ret = parse_certs(chain, data, len + 1, strict, flag, path, msg, msg_len);
    }
    adm_arena_destroy(a);
    return ret;
}

/* Loads ctx->own_key from key_path and checks that it belongs to ctx->own_cert. */
static int load_key(adm_tls_ctx_t *ctx, const char *flag, const char *path, char *msg,
                    size_t msg_len)
{
    adm_arena_t *a = adm_arena_create(16384);
    unsigned char *data = NULL;
    size_t len = 0;
    char text[128];
    int ret;

    if (a == NULL) {
        snprintf(msg, msg_len, "%s %s: out of memory", flag, path);
        return ADM_ENOMEM;
    }
    ret = read_named_file(a, flag, path, &data, &len, msg, msg_len);
    if (ret != 0) {
        adm_arena_destroy(a);
        return ret;
    }
    ret = mbedtls_pk_parse_key(&ctx->own_key, data, len + 1, NULL, 0, mbedtls_ctr_drbg_random,
                               &ctx->drbg);
    /* The file held a secret; do not leave it in freed heap memory. */
    mbedtls_platform_zeroize(data, len);
    adm_arena_destroy(a);
    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        snprintf(msg, msg_len, "%s %s: not a valid PEM/DER private key (%s)", flag, path, text);
        return ADM_ETLS;
    }
    ret = mbedtls_pk_check_pair(&ctx->own_cert.pk, &ctx->own_key, mbedtls_ctr_drbg_random,
                                &ctx->drbg);
    if (ret != 0) {
        snprintf(msg, msg_len, "%s %s: key does not match the certificate", flag, path);
        return ADM_ETLS;
    }
    return 0;
}

static void conf_common(adm_tls_ctx_t *ctx, mbedtls_ssl_config *conf, const int *suites)
{
    mbedtls_ssl_conf_rng(conf, mbedtls_ctr_drbg_random, &ctx->drbg);
    mbedtls_ssl_conf_min_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_2);
    mbedtls_ssl_conf_max_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_3);
    mbedtls_ssl_conf_groups(conf, groups);
    mbedtls_ssl_conf_ciphersuites(conf, suites);
    mbedtls_ssl_conf_alpn_protocols(conf, alpn_protocols);
}

/* Allocates a context with its RNG seeded and its configuration(s) at our defaults. */
static int ctx_new(bool server, adm_tls_ctx_t **out, char *msg, size_t msg_len)
{
    adm_tls_ctx_t *ctx = calloc(1, sizeof(*ctx));
    int endpoint = server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT;
    char text[128];
    int ret;

    if (ctx == NULL) {
        snprintf(msg, msg_len, "TLS setup: out of memory");
        return ADM_ENOMEM;
    }
    atomic_init(&ctx->refs, 1);
    ctx->server = server;
    mbedtls_ssl_config_init(&ctx->conf);
    mbedtls_ssl_config_init(&ctx->conf_chacha);
    mbedtls_entropy_init(&ctx->entropy);
    mbedtls_ctr_drbg_init(&ctx->drbg);
    mbedtls_x509_crt_init(&ctx->own_cert);
    mbedtls_pk_init(&ctx->own_key);
    mbedtls_x509_crt_init(&ctx->ca);

    ret = mbedtls_ctr_drbg_seed(&ctx->drbg, mbedtls_entropy_func, &ctx->entropy,
                                (const unsigned char *)"admitd", 6);
    if (ret != 0) {
        goto fail;
    }
    ret = mbedtls_ssl_config_defaults(&ctx->conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret != 0) {
        goto fail;
    }
    conf_common(ctx, &ctx->conf, ciphersuites);
    if (server) {
        ret = mbedtls_ssl_config_defaults(&ctx->conf_chacha, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                          MBEDTLS_SSL_PRESET_DEFAULT);
        if (ret != 0) {
            goto fail;
        }
        conf_common(ctx, &ctx->conf_chacha, ciphersuites_chacha);
    } else {
        /* Connections are not resumed, so a ticket would only be parsed and dropped. */
        mbedtls_ssl_conf_session_tickets(&ctx->conf, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
    }
    *out = ctx;
    return 0;

fail:
    mbedtls_strerror(ret, text, sizeof(text));
    snprintf(msg, msg_len, "TLS setup failed: %s", text);
    adm_tls_ctx_unref(ctx);
    return ADM_ETLS;
}

int adm_tls_server_ctx_create(const adm_tls_server_opts_t *opts, adm_tls_ctx_t **out, char *err,
                              size_t err_len)
{
    adm_tls_ctx_t *ctx = NULL;
    int ret;

    *out = NULL;
    if ((opts->cert_file == NULL) != (opts->key_file == NULL)) {
        snprintf(err, err_len, "%s: --tls-cert-file and --tls-private-key-file go together",
                 opts->cert_file == NULL ? "--tls-cert-file" : "--tls-private-key-file");
        return ADM_EINVAL;
    }
    ret = ctx_new(true, &ctx, err, err_len);
    if (ret != 0) {
        return ret;
    }
    if (opts->cert_file != NULL) {
        ret = load_certs(&ctx->own_cert, true, "--tls-cert-file", opts->cert_file, err, err_len);
        if (ret != 0) {
            goto fail;
        }
        ret = load_key(ctx, "--tls-private-key-file", opts->key_file, err, err_len);
    } else {
        ret = adm__selfsigned_generate(&ctx->own_key, &ctx->own_cert, &ctx->drbg,
                                       opts->self_signed_out, err, err_len);
    }
    if (ret != 0) {
        goto fail;
    }
    if (opts->client_ca_file != NULL) {
        ret = load_certs(&ctx->ca, false, "--client-ca-file", opts->client_ca_file, err, err_len);
        if (ret != 0) {
            goto fail;
        }
        ctx->wants_client_cert = true;
    }
    for (int i = 0; i < 2; i++) {
        mbedtls_ssl_config *conf = i == 0 ? &ctx->conf : &ctx->conf_chacha;

        if (ctx->wants_client_cert) {
            /*
             * Optional at the TLS level: health probes come without certificates, and admission
             * paths answer 401 unless adm_tls_session_peer_verified().
             */
            mbedtls_ssl_conf_ca_chain(conf, &ctx->ca, NULL);
            mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
        } else {
            mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_NONE);
        }
        ret = mbedtls_ssl_conf_own_cert(conf, &ctx->own_cert, &ctx->own_key);
        if (ret != 0) {
            snprintf(err, err_len, "--tls-cert-file %s: cannot be used for TLS (out of memory)",
                     opts->cert_file != NULL ? opts->cert_file : "(generated)");
            ret = ADM_ENOMEM;
            goto fail;
        }
    }
    *out = ctx;
    return 0;

fail:
    adm_tls_ctx_unref(ctx);
    return ret;
}

/* Trust anchors from a caBundle; mbedTLS wants PEM NUL-terminated, a decoded caBundle is not. */
static int parse_ca_pem(adm_tls_ctx_t *ctx, const char *pem, size_t len, char *err, size_t err_len)
{
    unsigned char *copy;
    int ret;

    if (len > 0 && pem[len - 1] == '\0') {
        return parse_certs(&ctx->ca, (const unsigned char *)pem, len, false, "caBundle", "", err,
                           err_len);
    }
    copy = malloc(len + 1);
    if (copy == NULL) {
        snprintf(err, err_len, "caBundle: out of memory");
        return ADM_ENOMEM;
    }
    memcpy(copy, pem, len);
    copy[len] = '\0';
    ret = parse_certs(&ctx->ca, copy, len + 1, false, "caBundle", "", err, err_len);
    free(copy);
    return ret;
}

int adm_tls_client_ctx_create(const adm_tls_client_opts_t *opts, adm_tls_ctx_t **out, char *err,
                              size_t err_len)
{
    adm_tls_ctx_t *ctx = NULL;
    int ret;

    *out = NULL;
    ret = ctx_new(false, &ctx, err, err_len);
    if (ret != 0) {
        return ret;
    }
    if (opts->ca_pem != NULL) {
        ret = parse_ca_pem(ctx, opts->ca_pem, opts->ca_pem_len, err, err_len);
    } else if (opts->ca_file != NULL) {
        ret = load_certs(&ctx->ca, false, "--cacert", opts->ca_file, err, err_len);
    } else if (!opts->insecure) {
        ret = load_certs(&ctx->ca, false, "system CA bundle", SYSTEM_CA_BUNDLE, err, err_len);
    }
    if (ret != 0) {
        goto fail;
    }
    if (opts->cert_file != NULL) {
        ret = load_certs(&ctx->own_cert, true, "--cert", opts->cert_file, err, err_len);
        if (ret != 0) {
            goto fail;
        }
        /* Without --key the key is looked for next to the certificate, as curl does. */
        ret = load_key(ctx, "--key", opts->key_file != NULL ? opts->key_file : opts->cert_file, err,
                       err_len);
        if (ret != 0) {
            goto fail;
        }
        ret = mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->own_cert, &ctx->own_key);
        if (ret != 0) {
            snprintf(err, err_len, "--cert %s: cannot be used for TLS (out of memory)",
                     opts->cert_file);
            ret = ADM_ENOMEM;
            goto fail;
        }
    } else if (opts->key_file != NULL) {
        snprintf(err, err_len, "--key %s: needs --cert", opts->key_file);
        ret = ADM_EINVAL;
        goto fail;
    }
    ctx->verify_server = !opts->insecure;
    mbedtls_ssl_conf_ca_chain(&ctx->conf, &ctx->ca, NULL);
    mbedtls_ssl_conf_authmode(&ctx->conf, ctx->verify_server ? MBEDTLS_SSL_VERIFY_REQUIRED
                                                             : MBEDTLS_SSL_VERIFY_NONE);
    if (opts->max_tls12) {
        mbedtls_ssl_conf_max_tls_version(&ctx->conf, MBEDTLS_SSL_VERSION_TLS1_2);
    }
    *out = ctx;
    return 0;

fail:
    adm_tls_ctx_unref(ctx);
    return ret;
}

void adm_tls_ctx_ref(adm_tls_ctx_t *ctx)
{
    atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
}

void adm_tls_ctx_unref(adm_tls_ctx_t *ctx)
{
    if (ctx == NULL || atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) > 1) {
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

/* Binds a session to a configuration; clients at creation, servers once the ClientHello shows. */
static int session_setup(adm_tls_session_t *s, const mbedtls_ssl_config *conf)
{
    int ret = mbedtls_ssl_setup(&s->ssl, conf);

    if (ret != 0) {
        snprintf(s->error, sizeof(s->error), "TLS setup: out of memory");
        return ADM_ENOMEM;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    s->set_up = true;
    return 0;
}

int adm_tls_session_create(adm_tls_ctx_t *ctx, const char *server_name, adm_tls_session_t **out)
{
    adm_tls_session_t *s = calloc(1, sizeof(*s));
    int ret;

    *out = NULL;
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    mbedtls_ssl_init(&s->ssl);
    adm_tls_ctx_ref(ctx);
    s->ctx = ctx;
    /* Servers choose their configuration when the ClientHello arrives (choose_config). */
    if (!ctx->server) {
        ret = session_setup(s, &ctx->conf);
        if (ret != 0) {
            goto fail;
        }
        /*
         * Always name the host: mbedTLS 3.6.3+ refuses to verify without a call. NULL would turn
         * name checking off silently, which only an insecure client may ask for.
         */
        if (server_name == NULL && ctx->verify_server) {
            ret = ADM_ETLS;
            goto fail;
        }
        if (server_name != NULL) {
            s->server_name = strdup(server_name);
            if (s->server_name == NULL) {
                ret = ADM_ENOMEM;
                goto fail;
            }
        }
        ret = mbedtls_ssl_set_hostname(&s->ssl, server_name);
        if (ret != 0) {
            ret = ret == MBEDTLS_ERR_SSL_ALLOC_FAILED ? ADM_ENOMEM : ADM_ETLS;
            goto fail;
        }
    }
    *out = s;
    return 0;

fail:
    adm_tls_session_destroy(s);
    return ret;
}

void adm_tls_session_destroy(adm_tls_session_t *s)
{
    if (s == NULL) {
        return;
    }
    mbedtls_ssl_free(&s->ssl);
    adm_buf_free(&s->out);
    adm_buf_free(&s->held);
    free(s->server_name);
    adm_tls_ctx_unref(s->ctx);
    free(s);
}

/* Short names for the certificate verification flags people actually meet. */
static const struct {
    uint32_t flag;
    const char *text;
} verify_reasons[] = {
    {MBEDTLS_X509_BADCERT_NOT_TRUSTED, "unknown CA"},
    {MBEDTLS_X509_BADCERT_CN_MISMATCH, "name mismatch"},
    {MBEDTLS_X509_BADCERT_EXPIRED, "expired"},
    {MBEDTLS_X509_BADCERT_FUTURE, "not yet valid"},
    {MBEDTLS_X509_BADCERT_REVOKED, "revoked"},
    {MBEDTLS_X509_BADCERT_MISSING, "no certificate"},
    {MBEDTLS_X509_BADCERT_KEY_USAGE, "key usage does not allow it"},
    {MBEDTLS_X509_BADCERT_EXT_KEY_USAGE, "extended key usage does not allow it"},
    {MBEDTLS_X509_BADCERT_BAD_MD, "unacceptable signature hash"},
    {MBEDTLS_X509_BADCERT_BAD_PK, "unacceptable signature algorithm"},
    {MBEDTLS_X509_BADCERT_BAD_KEY, "unacceptable key"},
};

/* Appends ", "-separated reasons for flags to out (which holds a string already). */
static void describe_verify_flags(uint32_t flags, const char *name, char *out, size_t out_len)
{
    size_t used = strlen(out);
    const char *sep = "";

    for (size_t i = 0; i < sizeof(verify_reasons) / sizeof(verify_reasons[0]); i++) {
        if ((flags & verify_reasons[i].flag) == 0 || used + 1 >= out_len) {
            continue;
        }
        flags &= ~verify_reasons[i].flag;
        if (verify_reasons[i].flag == MBEDTLS_X509_BADCERT_CN_MISMATCH && name != NULL) {
            snprintf(out + used, out_len - used, "%sname mismatch: not valid for \"%s\"", sep,
                     name);
        } else {
            snprintf(out + used, out_len - used, "%s%s", sep, verify_reasons[i].text);
        }
        used += strlen(out + used);
        sep = ", ";
    }
    if (flags != 0 && used + 1 < out_len) {
        snprintf(out + used, out_len - used, "%sverify flags 0x%x", sep, (unsigned)flags);
    }
}

/* Records why the session failed and maps the mbedTLS code to ours. */
static int session_fail(adm_tls_session_t *s, const char *what, int ret)
{
    char text[128];

    if (s->out_of_memory || ret == MBEDTLS_ERR_SSL_ALLOC_FAILED) {
        snprintf(s->error, sizeof(s->error), "%s: out of memory", what);
        return ADM_ENOMEM;
    }
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        int n = snprintf(s->error, sizeof(s->error), "%s: certificate verification failed (", what);

        if (n > 0 && (size_t)n < sizeof(s->error)) {
            describe_verify_flags(mbedtls_ssl_get_verify_result(&s->ssl), s->server_name, s->error,
                                  sizeof(s->error) - 1);
            n = (int)strlen(s->error);
            s->error[n] = ')';
            s->error[n + 1] = '\0';
        }
        return ADM_ETLS;
    }
    mbedtls_strerror(ret, text, sizeof(text));
    snprintf(s->error, sizeof(s->error), "%s: %s", what, text);
    return ADM_ETLS;
}

/* Advances the handshake: 0 once done, ADM_AGAIN while it needs more input, or an error. */
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
    return session_fail(s, "TLS handshake failed", ret);
}

int adm_tls_session_start(adm_tls_session_t *s)
{
    int ret;

    if (!s->set_up) {
        return 0; /* a server session: it speaks once the ClientHello is in */
    }
    s->input = NULL;
    s->input_len = 0;
    s->input_off = 0;
    ret = step_handshake(s);
    return ret == ADM_AGAIN ? 0 : ret;
}

/*
 * Looks into the first TLS record for the ClientHello's cipher suites. Returns 1 when it offers
 * TLS_CHACHA20_POLY1305_SHA256, 0 when it does not (or is no plain ClientHello: mbedTLS will
 * judge it), -1 when more bytes are needed.
 */
static int hello_offers_chacha(const uint8_t *p, size_t n)
{
    size_t record_len, avail, off, suites_len;
    const uint8_t *h;

    if (n < 5) {
        return -1;
    }
    if (p[0] != MBEDTLS_SSL_MSG_HANDSHAKE) {
        return 0;
    }
    record_len = (size_t)p[3] << 8 | p[4];
    avail = n - 5 < record_len ? n - 5 : record_len;
    h = p + 5;
    if (avail >= 1 && h[0] != MBEDTLS_SSL_HS_CLIENT_HELLO) {
        return 0;
    }
    /* Handshake type and length, legacy_version and random come before the session id. */
    off = 4 + 2 + 32;
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

    if (offers < 0 && len < MBEDTLS_SSL_IN_CONTENT_LEN + 5) {
        return ADM_AGAIN;
    }
    return session_setup(s, offers == 1 ? &s->ctx->conf_chacha : &s->ctx->conf);
}

/* Decrypts every complete record mbedTLS can reach into plain. */
static int read_plain(adm_tls_session_t *s, adm_buf_t *plain)
{
    for (;;) {
        int n;

        if (adm_buf_reserve(plain, PLAIN_CHUNK) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            return ADM_ENOMEM;
        }
        n = mbedtls_ssl_read(&s->ssl, plain->data + plain->len, plain->cap - plain->len);
        if (n > 0) {
            plain->len += (size_t)n;
            continue;
        }
        /* A TLS 1.3 client may be told about a ticket it will not use; keep reading. */
        if (n == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
            continue;
        }
        if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE) {
            return 0;
        }
        if (n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || n == 0) {
            return ADM_EOF;
        }
        return session_fail(s, "TLS read failed", n);
    }
}

int adm_tls_session_recv(adm_tls_session_t *s, const uint8_t *cipher, size_t len, adm_buf_t *plain)
{
    const uint8_t *in = cipher;
    size_t in_len = len;
    int ret;

    /* Leftovers from an earlier call come first; otherwise bytes are read where they lie. */
    if (s->held.len > 0) {
        if (adm_buf_append(&s->held, cipher, len) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            return ADM_ENOMEM;
        }
        in = s->held.data;
        in_len = s->held.len;
    }
    if (!s->set_up) {
        ret = choose_config(s, in, in_len);
        if (ret == ADM_AGAIN) {
            /* Keep the start of the ClientHello until the rest arrives. */
            if (in != s->held.data && adm_buf_append(&s->held, in, in_len) != 0) {
                snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
                return ADM_ENOMEM;
            }
            return 0;
        }
        if (ret != 0) {
            return ret;
        }
    }
    s->input = in;
    s->input_len = in_len;
    s->input_off = 0;

    ret = step_handshake(s);
    if (ret == 0) {
        ret = read_plain(s, plain);
    } else if (ret == ADM_AGAIN) {
        ret = 0;
    }

    /* mbedTLS takes all input unless it stopped on an error; whatever remains waits here. */
    if (in == s->held.data) {
        adm_buf_consume(&s->held, s->input_off);
    } else if (ret == 0 && s->input_off < in_len) {
        if (adm_buf_append(&s->held, in + s->input_off, in_len - s->input_off) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            ret = ADM_ENOMEM;
        }
    }
    s->input = NULL;
    s->input_len = 0;
    s->input_off = 0;
    return ret;
}

int adm_tls_session_send(adm_tls_session_t *s, const uint8_t *data, size_t len)
{
    if (!s->handshake_done) {
        snprintf(s->error, sizeof(s->error), "TLS write: handshake not finished");
        return ADM_ETLS;
    }
    while (len > 0) {
        int n = mbedtls_ssl_write(&s->ssl, data, len);

        if (n < 0) {
            return session_fail(s, "TLS write failed", n);
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int adm_tls_session_close_notify(adm_tls_session_t *s)
{
    int ret;

    if (!s->set_up) {
        return 0; /* nothing was said yet, so nothing needs closing */
    }
    ret = mbedtls_ssl_close_notify(&s->ssl);
    if (ret != 0 && ret != MBEDTLS_ERR_SSL_WANT_WRITE) {
        return session_fail(s, "TLS close failed", ret);
    }
    return 0;
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
    /* VERIFY_OPTIONAL lets unverified certificates through the handshake, so check both. */
    return s->handshake_done && s->ctx->wants_client_cert &&
           mbedtls_ssl_get_peer_cert(&s->ssl) != NULL &&
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

const char *adm_tls_session_alpn(const adm_tls_session_t *s)
{
    const char *proto = s->handshake_done ? mbedtls_ssl_get_alpn_protocol(&s->ssl) : NULL;

    return proto != NULL ? proto : "";
}

const char *adm_tls_session_error(const adm_tls_session_t *s)
{
    return s->error[0] != '\0' ? s->error : "no error";
}

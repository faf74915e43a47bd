/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS contexts (tls.h): what every connection of one role shares. This file loads certificate
 * chains and keys (PEM or DER, from files named by flags or from a webhook's caBundle), the trust
 * anchors (a CA file, a caBundle or the system bundle), hooks up the self-signed certificate
 * generator (selfsigned.c) when a server has no certificate, and sets the mbedTLS configurations
 * to admitd's defaults. Contexts are built once at startup or reload, synchronously, and shared by
 * reference count between the sessions using them (tls_session.c), which only read them.
 */
#include "adm/net/tls.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "tls_internal.h"

#include <mbedtls/error.h>
#include <mbedtls/platform.h>
#include <psa/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define FILE_MAX ((size_t)64 << 20) /* larger certificate or key files are surely a mistake */

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
 * AEAD suites only, the fastest on admitd's machines first: AES-128-GCM, then AES-256-GCM, then
 * ChaCha20-Poly1305. Record encryption is OpenSSL's (third_party/mbedtls/aead_openssl.c), where
 * AES-GCM with AES-NI/VAES beats ChaCha20-Poly1305 at every record size admitd sees, by the most on
 * the small records of answers (bench/RESULTS.md, "record-layer AEAD"); Go clients (kube-apiserver)
 * offer all three, AES-128-GCM first on such CPUs. TLS 1.2 follows this server order; for TLS 1.3
 * mbedTLS follows the client's order, so a server session whose ClientHello offers
 * TLS_AES_128_GCM_SHA256 is set up on conf_fastest, whose only TLS 1.3 suite is that one.
 */
static const int ciphersuites[] = {
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
    MBEDTLS_TLS1_3_AES_256_GCM_SHA384,
    MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    0,
};

static const int ciphersuites_fastest[] = {
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    0,
};

int adm_tls_global_init(void)
{
#if defined(MBEDTLS_PLATFORM_MEMORY)
    /* Before anything is allocated, though free() would take back what calloc gave either way. */
    mbedtls_platform_set_calloc_free(adm__tls_calloc, free);
#endif
    return psa_crypto_init() == PSA_SUCCESS ? 0 : ADM_ETLS;
}

void adm_tls_global_cleanup(void)
{
    mbedtls_psa_crypto_free();
}

/* Bumped in each forked worker: a context's DRBG seeded before the fork reseeds at its next use. */
static atomic_uint fork_generation;

int adm_tls_after_fork(void)
{
    pid_t pid = getpid();

    atomic_fetch_add(&fork_generation, 1);
    return psa_random_reseed((const uint8_t *)&pid, sizeof(pid)) == PSA_SUCCESS ? 0 : ADM_ETLS;
}

/* The TLS stack's RNG: the context's DRBG, never sharing a stream with another worker's (D12). */
static int ctx_random(void *arg, unsigned char *out, size_t len)
{
    adm_tls_ctx_t *ctx = arg;
    unsigned now = atomic_load(&fork_generation);

    if (atomic_exchange(&ctx->drbg_generation, now) != now) {
        pid_t pid = getpid();
        int ret = mbedtls_ctr_drbg_reseed(&ctx->drbg, (const unsigned char *)&pid, sizeof(pid));

        if (ret != 0) {
            return ret;
        }
    }
    return mbedtls_ctr_drbg_random(&ctx->drbg, out, len);
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
        snprintf(msg, msg_len, "%s%s%s: not a valid PEM/DER certificate (%s)", flag, sep, path, text);
        return ADM_ETLS;
    }
    if (ret > 0 && strict) {
        snprintf(msg, msg_len, "%s%s%s: %d certificate(s) in the chain could not be parsed", flag, sep, path,
                 ret);
        return ADM_ETLS;
    }
    if (chain->raw.len == 0) {
        snprintf(msg, msg_len, "%s%s%s: no certificate found", flag, sep, path);
        return ADM_ETLS;
    }
    return 0;
}

static int load_certs(mbedtls_x509_crt *chain, bool strict, const char *flag, const char *path, char *msg,
                      size_t msg_len)
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

/* Parses ctx->own_key from data (len bytes with the PEM's NUL) and checks it against ctx->own_cert. */
static int parse_key(adm_tls_ctx_t *ctx, const unsigned char *data, size_t len, const char *flag,
                     const char *path, char *msg, size_t msg_len)
{
    char text[128];
    int ret = mbedtls_pk_parse_key(&ctx->own_key, data, len, NULL, 0, mbedtls_ctr_drbg_random, &ctx->drbg);

    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        snprintf(msg, msg_len, "%s %s: not a valid PEM/DER private key (%s)", flag, path, text);
        return ADM_ETLS;
    }
    ret = mbedtls_pk_check_pair(&ctx->own_cert.pk, &ctx->own_key, mbedtls_ctr_drbg_random, &ctx->drbg);
    if (ret != 0) {
        snprintf(msg, msg_len, "%s %s: key does not match the certificate", flag, path);
        return ADM_ETLS;
    }
    return 0;
}

/* Loads ctx->own_key from key_path and checks that it belongs to ctx->own_cert. */
static int load_key(adm_tls_ctx_t *ctx, const char *flag, const char *path, char *msg, size_t msg_len)
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
    if (ret != 0) {
        adm_arena_destroy(a);
        return ret;
    }
    ret = parse_key(ctx, data, len + 1, flag, path, msg, msg_len);
    /* The file held a secret; do not leave it in freed heap memory. */
    mbedtls_platform_zeroize(data, len);
    adm_arena_destroy(a);
    return ret;
}

/* A NUL-terminated copy of len bytes, as mbedTLS wants PEM; NULL when out of memory. */
static unsigned char *nul_copy(const char *data, size_t len)
{
    unsigned char *copy = malloc(len + 1);

    if (copy != NULL) {
        memcpy(copy, data, len);
        copy[len] = '\0';
    }
    return copy;
}

/* ctx->own_cert and own_key from memory (a kubeconfig's inline data), checked as a pair. */
static int parse_own_pem(adm_tls_ctx_t *ctx, const adm_tls_client_opts_t *o, char *msg, size_t msg_len)
{
    const char *label = o->cert_label != NULL ? o->cert_label : "client certificate";
    unsigned char *cert = nul_copy(o->cert_pem, o->cert_pem_len);
    unsigned char *key = o->key_pem != NULL ? nul_copy(o->key_pem, o->key_pem_len) : NULL;
    int ret;

    if (cert == NULL || (o->key_pem != NULL && key == NULL)) {
        free(cert);
        free(key);
        snprintf(msg, msg_len, "%s: out of memory", label);
        return ADM_ENOMEM;
    }
    ret = parse_certs(&ctx->own_cert, cert, o->cert_pem_len + 1, true, label, "", msg, msg_len);
    if (ret == 0 && key == NULL) {
        snprintf(msg, msg_len, "%s: no private key given with it", label);
        ret = ADM_ETLS;
    }
    if (ret == 0) {
        ret = parse_key(ctx, key, o->key_pem_len + 1, label, "key", msg, msg_len);
    }
    if (key != NULL) {
        mbedtls_platform_zeroize(key, o->key_pem_len);
    }
    free(cert);
    free(key);
    if (ret == 0 && mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->own_cert, &ctx->own_key) != 0) {
        snprintf(msg, msg_len, "%s: cannot be used for TLS (out of memory)", label);
        ret = ADM_ENOMEM;
    }
    return ret;
}

static void conf_common(adm_tls_ctx_t *ctx, mbedtls_ssl_config *conf, const int *suites)
{
    mbedtls_ssl_conf_rng(conf, ctx_random, ctx);
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
    atomic_init(&ctx->drbg_generation, atomic_load(&fork_generation));
    ctx->server = server;
    mbedtls_ssl_config_init(&ctx->conf);
    mbedtls_ssl_config_init(&ctx->conf_fastest);
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
        ret = mbedtls_ssl_config_defaults(&ctx->conf_fastest, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                          MBEDTLS_SSL_PRESET_DEFAULT);
        if (ret != 0) {
            goto fail;
        }
        conf_common(ctx, &ctx->conf_fastest, ciphersuites_fastest);
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

/*
 * A reload keeps the generated certificate (clients were given it as their trust anchor): the new
 * context gets copies of the old one's certificate and key, through DER.
 */
static int copy_generated(adm_tls_ctx_t *ctx, const adm_tls_ctx_t *from, char *err, size_t err_len)
{
    unsigned char der[1024]; /* a P-256 key is ~121 bytes of DER */
    int n, ret;

    ret = mbedtls_x509_crt_parse_der(&ctx->own_cert, from->own_cert.raw.p, from->own_cert.raw.len);
    /* mbedtls_pk_write_key_der writes at the end of the buffer */
    n = ret == 0 ? mbedtls_pk_write_key_der((mbedtls_pk_context *)&from->own_key, der, sizeof(der)) : ret;
    if (n > 0) {
        ret = mbedtls_pk_parse_key(&ctx->own_key, der + sizeof(der) - n, (size_t)n, NULL, 0,
                                   mbedtls_ctr_drbg_random, &ctx->drbg);
    } else {
        ret = n != 0 ? n : -1;
    }
    mbedtls_platform_zeroize(der, sizeof(der));
    if (ret != 0) {
        snprintf(err, err_len, "(generated certificate): cannot be kept across the reload");
        return ADM_ETLS;
    }
    return 0;
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
    } else if (opts->keep_generated != NULL) {
        ret = copy_generated(ctx, opts->keep_generated, err, err_len);
    } else {
        ret = adm__selfsigned_generate(&ctx->own_key, &ctx->own_cert, &ctx->drbg, opts->self_signed_out, err,
                                       err_len);
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
        mbedtls_ssl_config *conf = i == 0 ? &ctx->conf : &ctx->conf_fastest;

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
        return parse_certs(&ctx->ca, (const unsigned char *)pem, len, false, "caBundle", "", err, err_len);
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
    if (opts->cert_pem != NULL) {
        ret = parse_own_pem(ctx, opts, err, err_len);
        if (ret != 0) {
            goto fail;
        }
    } else if (opts->cert_file != NULL) {
        ret = load_certs(&ctx->own_cert, true, "--cert", opts->cert_file, err, err_len);
        if (ret != 0) {
            goto fail;
        }
        /* Without --key the key is looked for next to the certificate, as curl does. */
        ret = load_key(ctx, "--key", opts->key_file != NULL ? opts->key_file : opts->cert_file, err, err_len);
        if (ret != 0) {
            goto fail;
        }
        ret = mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->own_cert, &ctx->own_key);
        if (ret != 0) {
            snprintf(err, err_len, "--cert %s: cannot be used for TLS (out of memory)", opts->cert_file);
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
    mbedtls_ssl_conf_authmode(&ctx->conf,
                              ctx->verify_server ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
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
    mbedtls_ssl_config_free(&ctx->conf_fastest);
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

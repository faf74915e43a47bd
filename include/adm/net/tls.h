/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS contexts on top of mbedTLS. A context (adm_tls_ctx_t) holds what all connections of one
 * role share: certificate chain, private key, optional client CA for mTLS or the trust anchors of
 * a client, RNG, ALPN list, and the mbedTLS configuration. One connection's TLS state is a
 * session on a context (tls_session.h). Server and client roles are both supported: admitd
 * serves, and the same code dials upstream webhooks, benchmarks and tests.
 *
 * Defaults chosen for kube-apiserver as the client: TLS 1.2 and 1.3, ALPN "http/1.1", key exchange
 * X25519 then P-256 (Go offers X25519 first), AEAD suites only, ECDSA P-256 self-signed
 * certificates (a full handshake costs ~2 ms with P-256 against ~4.8 ms with RSA-2048).
 */
#ifndef ADM_TLS_H
#define ADM_TLS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct adm_tls_ctx_s adm_tls_ctx_t;

typedef struct adm_tls_server_opts_s {
    const char *cert_file;       /* PEM chain; NULL (with key_file NULL) generates a self-signed cert */
    const char *key_file;        /* PEM private key, RSA or EC */
    const char *client_ca_file;  /* PEM CA bundle: request a client certificate (optional at TLS
                                    level, see adm_tls_session_peer_verified); NULL: no mTLS */
    const char *self_signed_out; /* when generating: also write the certificate here (PEM) */
    const adm_tls_ctx_t *keep_generated; /* a reload without cert_file: serve this server context's
                                            generated certificate and key again instead of a new one */
} adm_tls_server_opts_t;

typedef struct adm_tls_client_opts_s {
    const char *ca_file;   /* PEM bundle to verify the server; NULL with ca_pem NULL: system CAs */
    const char *ca_pem;    /* the same as a NUL-terminated PEM string (a webhook's caBundle) */
    size_t ca_pem_len;     /* bytes of ca_pem, including its NUL when PEM */
    const char *cert_file; /* optional client certificate */
    const char *key_file;  /* its key */
    /* a client certificate and key given as text instead (a kubeconfig's client-certificate-data),
       PEM or DER, lengths without any NUL; used when cert_pem is set */
    const char *cert_pem, *key_pem;
    size_t cert_pem_len, key_pem_len;
    const char *cert_label; /* names cert_pem in errors ("users[0] client-certificate-data") */
    bool insecure;          /* skip verification (benchmarks against self-signed targets) */
    bool max_tls12;         /* offer TLS 1.2 only (tests and TLS 1.2 benchmarks) */
} adm_tls_client_opts_t;

/**
 * One-time process setup (mbedTLS's allocator, which gives record buffers pages of their own, and
 * psa_crypto_init). Call before creating contexts; returns 0 or ADM_ETLS.
 * adm_tls_global_cleanup() releases it at exit so leak checkers stay quiet.
 */
int adm_tls_global_init(void);
void adm_tls_global_cleanup(void);

/**
 * In a process forked after contexts were made (admitd's workers, D12): reseeds PSA's generator and
 * makes every context's DRBG reseed at its next use, so no two workers draw the same randoms
 * (handshake randoms, ephemeral keys). Returns 0 or ADM_ETLS.
 */
int adm_tls_after_fork(void);

/**
 * Creates a server context. On failure returns a negative code and writes one line into err that
 * names the file and the problem (e.g. "--tls-cert-file /x.pem: not a PEM certificate").
 */
int adm_tls_server_ctx_create(const adm_tls_server_opts_t *opts, adm_tls_ctx_t **out, char *err,
                              size_t err_len);

/** Creates a client context; errors as for the server. */
int adm_tls_client_ctx_create(const adm_tls_client_opts_t *opts, adm_tls_ctx_t **out, char *err,
                              size_t err_len);

/** Contexts are reference counted: sessions keep theirs alive, so a reload can swap contexts. */
void adm_tls_ctx_ref(adm_tls_ctx_t *ctx);
void adm_tls_ctx_unref(adm_tls_ctx_t *ctx);

/** True when the server context asks clients for certificates (--client-ca-file given). */
bool adm_tls_ctx_wants_client_cert(const adm_tls_ctx_t *ctx);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS on top of mbedTLS, driven entirely from memory buffers so the event loop never blocks:
 * the connection hands received ciphertext to adm_tls_session_recv(), gets plaintext back, and
 * sends whatever ciphertext the session queued in its output buffer with one socket write.
 *
 * A context (adm_tls_ctx_t) holds what all connections share: certificate chain, private key,
 * optional client CA for mTLS, RNG, ALPN list, and the mbedTLS configuration. A session
 * (adm_tls_session_t) is one connection's TLS state. Server and client roles are both supported:
 * admitd serves, and the same code dials upstream webhooks, benchmarks and tests.
 *
 * Defaults chosen for kube-apiserver as the client: TLS 1.2 and 1.3, ALPN "http/1.1", key exchange
 * X25519 then P-256 (Go offers X25519 first), AEAD suites only, ECDSA P-256 self-signed
 * certificates (a full handshake costs ~2 ms with P-256 against ~4.8 ms with RSA-2048).
 */
#ifndef ADM_TLS_H
#define ADM_TLS_H

#include "adm/base/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct adm_tls_ctx_s adm_tls_ctx_t;
typedef struct adm_tls_session_s adm_tls_session_t;

typedef struct adm_tls_server_opts_s {
    const char *cert_file;      /* PEM chain; NULL (with key_file NULL) generates a self-signed cert */
    const char *key_file;       /* PEM private key, RSA or EC */
    const char *client_ca_file; /* PEM CA bundle: request a client certificate (optional at TLS
                                   level, see adm_tls_session_peer_verified); NULL: no mTLS */
    const char *self_signed_out; /* when generating: also write the certificate here (PEM) */
} adm_tls_server_opts_t;

typedef struct adm_tls_client_opts_s {
    const char *ca_file;      /* PEM bundle to verify the server; NULL with ca_pem NULL: system CAs */
    const char *ca_pem;       /* the same as a NUL-terminated PEM string (a webhook's caBundle) */
    size_t ca_pem_len;        /* bytes of ca_pem, including its NUL when PEM */
    const char *cert_file;    /* optional client certificate */
    const char *key_file;     /* its key */
    bool insecure;            /* skip verification (benchmarks against self-signed targets) */
    bool max_tls12;           /* offer TLS 1.2 only (tests and TLS 1.2 benchmarks) */
} adm_tls_client_opts_t;

/**
 * One-time process setup (psa_crypto_init). Call before creating contexts; returns 0 or ADM_ETLS.
 * adm_tls_global_cleanup() releases it at exit so leak checkers stay quiet.
 */
int adm_tls_global_init(void);
void adm_tls_global_cleanup(void);

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

/**
 * Creates a session on ctx (taking a reference). For a client session, server_name is the host to
 * verify and send as SNI (NULL for servers; a verifying client without one gets ADM_ETLS).
 * Returns 0, ADM_ENOMEM or ADM_ETLS.
 */
int adm_tls_session_create(adm_tls_ctx_t *ctx, const char *server_name, adm_tls_session_t **out);
void adm_tls_session_destroy(adm_tls_session_t *s);

/**
 * Feeds len bytes of ciphertext just read from the socket, advances the handshake, and appends all
 * plaintext that can be decrypted to plain. Leftover partial records are kept inside the session.
 * Handshake and alert records to send are queued in adm_tls_session_output().
 * Returns 0 (possibly with no plaintext), ADM_EOF when the peer sent close_notify (plaintext
 * received before it is still appended), ADM_ENOMEM, or ADM_ETLS on a protocol/verification error
 * (adm_tls_session_error() then describes it).
 */
int adm_tls_session_recv(adm_tls_session_t *s, const uint8_t *cipher, size_t len, adm_buf_t *plain);

/**
 * Client sessions: starts the handshake (queues the ClientHello). Servers need not call it.
 * Returns 0 or ADM_ETLS.
 */
int adm_tls_session_start(adm_tls_session_t *s);

/**
 * Encrypts len bytes of plaintext into the output buffer. Only valid once the handshake is done.
 * Returns 0, ADM_ENOMEM or ADM_ETLS.
 */
int adm_tls_session_send(adm_tls_session_t *s, const uint8_t *data, size_t len);

/** Queues a close_notify alert. */
int adm_tls_session_close_notify(adm_tls_session_t *s);

/** Ciphertext waiting to go to the socket. The caller may take it with adm_buf_swap(). */
adm_buf_t *adm_tls_session_output(adm_tls_session_t *s);

bool adm_tls_session_handshake_done(const adm_tls_session_t *s);

/** Server sessions: true when the client presented a certificate that verified against the CA. */
bool adm_tls_session_peer_verified(const adm_tls_session_t *s);

/** Negotiated protocol and cipher names for logs ("TLSv1.3", "TLS1-3-AES-128-GCM-SHA256"). */
const char *adm_tls_session_version(const adm_tls_session_t *s);
const char *adm_tls_session_cipher(const adm_tls_session_t *s);

/** Negotiated ALPN protocol ("http/1.1"), or "" when none was agreed (or not yet). */
const char *adm_tls_session_alpn(const adm_tls_session_t *s);

/** Description of the last ADM_ETLS failure on this session ("certificate verify failed: ..."). */
const char *adm_tls_session_error(const adm_tls_session_t *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private glue of the TLS module, shared by tls.c (contexts), tls_session.c (sessions) and
 * selfsigned.c, and by nothing else: the context's fields, which sessions read to set themselves
 * up, and the certificate generator, which works on a context's key, chain and RNG.
 */
#ifndef ADM_TLS_INTERNAL_H
#define ADM_TLS_INTERNAL_H

#include "adm/net/tls.h"

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Written only while tls.c builds the context; read-only once a session may hold it. */
struct adm_tls_ctx_s {
    atomic_int refs; /* sessions on other loops may drop the last reference */
    bool server;
    bool wants_client_cert;
    bool verify_server; /* clients: the server's certificate and name are checked */
    mbedtls_ssl_config conf;
    mbedtls_ssl_config conf_fastest; /* servers only: TLS 1.3 restricted to TLS_AES_128_GCM_SHA256 */
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg; /* locked by mbedTLS itself (built with MBEDTLS_THREADING_C) */
    atomic_uint drbg_generation;   /* adm_tls_after_fork's count when drbg was last (re)seeded */
    mbedtls_x509_crt own_cert;
    mbedtls_pk_context own_key;
    mbedtls_x509_crt ca; /* client CA (servers) or trust anchors (clients) */
};

/**
 * Generates an ECDSA P-256 key and a self-signed certificate for localhost, 127.0.0.1 and ::1
 * (valid from an hour ago for a year, usable as its own trust anchor). When pem_out is not NULL
 * the certificate is also written there (PEM, mode 0644, atomically). key and crt must be
 * initialised and empty. Returns 0, or a negative code with one line in err.
 */
int adm__selfsigned_generate(mbedtls_pk_context *key, mbedtls_x509_crt *crt, mbedtls_ctr_drbg_context *rng,
                             const char *pem_out, char *err, size_t err_len);

/**
 * tls_idle.c. Frees what a finished handshake left behind (TLS 1.3 in mbedTLS 3.6 keeps its
 * handshake structures to the end): a no-op while the handshake runs or when nothing is left.
 */
void adm__tls_drop_handshake(mbedtls_ssl_context *ssl);

/**
 * tls_idle.c. Gives the pages of the record buffers back to the system (madvise) when nothing in
 * them is live, keeping the incoming record counter in saved_ctr: true then (*released says how
 * many bytes went), false when the session holds input or output in them (nothing changed).
 * adm__tls_restore_record_counter must run before the session reads another record; the pages
 * come back, zeroed, as records need them.
 */
bool adm__tls_release_record_pages(mbedtls_ssl_context *ssl, unsigned char saved_ctr[8], size_t *released);
void adm__tls_restore_record_counter(mbedtls_ssl_context *ssl, const unsigned char saved_ctr[8]);

/**
 * tls_idle.c. mbedTLS's calloc (installed by adm_tls_global_init): allocations the size of a record
 * buffer or more get whole pages of their own, so that all of a buffer's pages can be given back;
 * free() releases them like the rest.
 */
void *adm__tls_calloc(size_t n, size_t size);

#endif

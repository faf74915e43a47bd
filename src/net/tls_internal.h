/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Declarations shared between tls.c and selfsigned.c and nothing else: the certificate generator
 * works on a context's key, chain and RNG, which stay private to the TLS module.
 */
#ifndef ADM_TLS_INTERNAL_H
#define ADM_TLS_INTERNAL_H

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <stddef.h>

/**
 * Generates an ECDSA P-256 key and a self-signed certificate for localhost, 127.0.0.1 and ::1
 * (valid from an hour ago for a year, usable as its own trust anchor). When pem_out is not NULL
 * the certificate is also written there (PEM, mode 0644, atomically). key and crt must be
 * initialised and empty. Returns 0, or a negative code with one line in err.
 */
int adm__selfsigned_generate(mbedtls_pk_context *key, mbedtls_x509_crt *crt,
                             mbedtls_ctr_drbg_context *rng, const char *pem_out, char *err,
                             size_t err_len);

#endif

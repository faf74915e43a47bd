/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MBEDTLS_GCM_ALT context: AES-GCM by OpenSSL's libcrypto (aead_openssl.c), which uses AES-NI with
 * VAES/VPCLMULQDQ where the CPU has them, 4-15x the speed of mbedTLS's own GCM on admitd's records.
 *
 * Why the _ALT hooks rather than a PSA accelerator driver: in mbedTLS 3.6 a driver is dispatched by
 * psa_crypto_driver_wrappers.h, code generated from JSON driver descriptions with Jinja2 templates,
 * and the TLS record layer goes through PSA only with MBEDTLS_USE_PSA_CRYPTO. The _ALT context is
 * reached by both roads the library has to an AEAD (the cipher module the record layer uses, and
 * PSA's built-in AEAD), with no generated code to keep in step.
 */
#ifndef ADM_GCM_ALT_H
#define ADM_GCM_ALT_H

#include <stddef.h>

typedef struct mbedtls_gcm_context {
    void *evp;        /* EVP_CIPHER_CTX * keyed in setkey; the IV is set per message */
    void *evp_verify; /* multipart decryption only: re-encrypts to compute the tag (see finish) */
    int mode;         /* MBEDTLS_GCM_ENCRYPT or MBEDTLS_GCM_DECRYPT of the message under way */
    int keybits;
    size_t iv_len;         /* IV length evp is set for */
    size_t verify_iv_len;  /* and evp_verify */
    unsigned char key[32]; /* kept for evp_verify, created only if multipart decryption is used */
} mbedtls_gcm_context;

#endif

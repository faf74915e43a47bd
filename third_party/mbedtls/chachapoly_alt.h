/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MBEDTLS_CHACHAPOLY_ALT context: ChaCha20-Poly1305 (RFC 8439) by OpenSSL's libcrypto
 * (aead_openssl.c), with its AVX-512 code paths. See gcm_alt.h for why the _ALT hooks.
 */
#ifndef ADM_CHACHAPOLY_ALT_H
#define ADM_CHACHAPOLY_ALT_H

typedef struct mbedtls_chachapoly_context {
    void *evp;        /* EVP_CIPHER_CTX * keyed in setkey; the nonce is set per message */
    void *evp_verify; /* multipart decryption only: re-encrypts to compute the tag (see finish) */
    int mode;         /* MBEDTLS_CHACHAPOLY_ENCRYPT or _DECRYPT of the message under way */
    int state;        /* 0 no key, 1 keyed, 2 started (AAD allowed), 3 data seen */
    unsigned char key[32];
} mbedtls_chachapoly_context;

#endif

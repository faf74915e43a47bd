/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's mbedTLS 3.6 configuration: only what admitd uses. third_party/deps.sh builds mbedTLS from
 * Debian's source tarball with this file as include/mbedtls/mbedtls_config.h and installs it into
 * third_party/prefix, so admitd is compiled against the same options the library was built with.
 *
 * Kept: TLS 1.2 and 1.3 (server and client: admitd serves, and dials upstream webhooks), ECDHE with
 * ECDSA or RSA certificates, AEAD suites only (AES-GCM, ChaCha20-Poly1305), X25519 and the NIST
 * curves, X.509 parsing (certificates, CSRs for CertificateSubjectRestriction) and writing (the
 * self-signed certificate, test CSRs). Dropped: DTLS, PSK, CBC/CCM suites, legacy ciphers and
 * hashes, the debug module, the session cache, PKCS#5/#12/#7, the network and timing modules.
 *
 * AES-GCM and ChaCha20-Poly1305 are MBEDTLS_GCM_ALT / MBEDTLS_CHACHAPOLY_ALT: their contexts and
 * functions come from aead_openssl.c (OpenSSL's libcrypto), which both the TLS record layer (through
 * the cipher module) and PSA's built-in AEAD call. See gcm_alt.h for why the _ALT hooks and not a PSA
 * driver.
 */
#ifndef ADM_MBEDTLS_CONFIG_H
#define ADM_MBEDTLS_CONFIG_H

/* Platform */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
#define MBEDTLS_PLATFORM_C
/* mbedtls_platform_set_calloc_free: admitd puts the TLS record buffers on whole pages of their own
   (src/net/tls_idle.c), so an idle connection can give every page of them back. */
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_FS_IO
#define MBEDTLS_THREADING_C /* the contexts' RNG may be shared by threads (Debian's build had it too) */
#define MBEDTLS_THREADING_PTHREAD
#define MBEDTLS_ERROR_C   /* mbedtls_strerror in error messages */
#define MBEDTLS_SELF_TEST /* tests/unit/net/test-aead.c runs the GCM and ChaCha20-Poly1305 self-tests */

/* Randomness */
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_HMAC_DRBG_C /* deterministic ECDSA */

/* Symmetric crypto: AES for the DRBG and GCM; the two AEADs through OpenSSL (aead_openssl.c) */
#define MBEDTLS_AES_C
#define MBEDTLS_AESNI_C
#define MBEDTLS_GCM_C
#define MBEDTLS_GCM_ALT
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_CHACHAPOLY_ALT
#define MBEDTLS_CIPHER_C

/* Hashes and key derivation (SHA-1 only to verify old certificates in trust bundles) */
#define MBEDTLS_MD_C
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA224_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C
#define MBEDTLS_HKDF_C

/* Public key */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_GENPRIME
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21 /* RSA-PSS: TLS 1.3 signatures with RSA keys */
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_SECP521R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDSA_DETERMINISTIC
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PK_WRITE_C
#define MBEDTLS_PK_PARSE_EC_EXTENDED
#define MBEDTLS_PK_PARSE_EC_COMPRESSED
#define MBEDTLS_PSA_CRYPTO_C /* TLS 1.3 key schedule */
#define MBEDTLS_PSA_KEY_STORE_DYNAMIC

/* Encodings and X.509 */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_OID_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_PEM_WRITE_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
#define MBEDTLS_X509_CSR_PARSE_C
#define MBEDTLS_X509_CREATE_C
#define MBEDTLS_X509_CRT_WRITE_C
#define MBEDTLS_X509_CSR_WRITE_C
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT

/* TLS */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3
#define MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE /* mTLS: the peer certificate is looked at after the handshake */
#define MBEDTLS_SSL_SESSION_TICKETS       /* a TLS 1.3 client must accept NewSessionTicket messages */
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_ALPN
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
/* Record buffers sized by what the session needs rather than always the maximum (memory per idle
 * connection, issue 17 item 5). In practice this changes nothing for admitd's clients: mbedTLS
 * allocates both buffers at their maximum at setup and shrinks them after the handshake only when a
 * max_fragment_length was negotiated, which Go and OpenSSL clients never ask for. It is kept because
 * it records each buffer's length in the context (in_buf_len, out_buf_len), which tls_idle.c reads
 * to give an idle connection's record pages back. MBEDTLS_SSL_IN_CONTENT_LEN stays 16384 (peers may
 * send full records); a smaller OUT_CONTENT_LEN would bound the certificate chain a handshake can
 * send and saves nothing once idle pages are given back. */
#define MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH

#endif

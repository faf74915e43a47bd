/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Record-layer AEAD speed on the record sizes admitd sees (answers of 100-500 bytes, requests of
 * 1-64 KB cut into records of up to 16 KB): one record sealed then opened in place, per suite, for
 * the backend this file is compiled for (bench/aead/aead-speed.sh builds one binary per backend):
 *   -DBACKEND_MBEDTLS   mbedTLS's cipher layer, the call the TLS record layer makes (linked with
 *                       Debian's prebuilt mbedTLS: its own C code; with admitd's: OpenSSL under _ALT)
 *   -DBACKEND_OPENSSL   OpenSSL's EVP directly (keyed once, nonce per record)
 *   -DBACKEND_SODIUM    libsodium (ChaCha20-Poly1305-IETF and AES-256-GCM; it has no AES-128-GCM)
 * Prints "backend suite bytes MB/s ns-per-record" lines, the median of 9 timed runs in which the
 * suites take turns.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum suite { CHACHA, AES128, AES256, NSUITES };
static const char *const suite_names[] = {"chacha20-poly1305", "aes-128-gcm", "aes-256-gcm"};
static const size_t sizes[] = {64, 256, 1024, 4096, 16384};
#define RUNS 9
static unsigned char key[32] = {1, 2, 3}, nonce[12], aad[13], buf[16384 + 16];

#if defined(BACKEND_MBEDTLS)
#include <mbedtls/cipher.h>
#define BACKEND "mbedtls-" MBEDTLS_FLAVOUR
static mbedtls_cipher_context_t encs[NSUITES], decs[NSUITES];
static int setup(enum suite s)
{
    mbedtls_cipher_context_t *enc = &encs[s], *dec = &decs[s];
    mbedtls_cipher_type_t t = s == CHACHA   ? MBEDTLS_CIPHER_CHACHA20_POLY1305
                              : s == AES128 ? MBEDTLS_CIPHER_AES_128_GCM
                                            : MBEDTLS_CIPHER_AES_256_GCM;
    int bits = s == AES128 ? 128 : 256;
    mbedtls_cipher_init(enc);
    mbedtls_cipher_init(dec);
    return mbedtls_cipher_setup(enc, mbedtls_cipher_info_from_type(t)) ||
           mbedtls_cipher_setup(dec, mbedtls_cipher_info_from_type(t)) ||
           mbedtls_cipher_setkey(enc, key, bits, MBEDTLS_ENCRYPT) ||
           mbedtls_cipher_setkey(dec, key, bits, MBEDTLS_DECRYPT);
}
static int seal_open(enum suite s, size_t n)
{
    mbedtls_cipher_context_t *enc = &encs[s], *dec = &decs[s];
    size_t olen;
    return mbedtls_cipher_auth_encrypt_ext(enc, nonce, 12, aad, 13, buf, n, buf, sizeof(buf), &olen, 16) ||
           mbedtls_cipher_auth_decrypt_ext(dec, nonce, 12, aad, 13, buf, n + 16, buf, sizeof(buf), &olen, 16);
}
#elif defined(BACKEND_OPENSSL)
#include <openssl/evp.h>
#define BACKEND "openssl-evp"
static unsigned char tag[16];
static EVP_CIPHER_CTX *encs[NSUITES], *decs[NSUITES];
static int setup(enum suite s)
{
    EVP_CIPHER_CTX *enc, *dec;
    const EVP_CIPHER *c = s == CHACHA   ? EVP_chacha20_poly1305()
                          : s == AES128 ? EVP_aes_128_gcm()
                                        : EVP_aes_256_gcm();
    enc = encs[s] = EVP_CIPHER_CTX_new();
    dec = decs[s] = EVP_CIPHER_CTX_new();
    return EVP_CipherInit_ex(enc, c, NULL, key, NULL, 1) != 1 ||
           EVP_CipherInit_ex(dec, c, NULL, key, NULL, 0) != 1;
}
static int seal_open(enum suite s, size_t n)
{
    EVP_CIPHER_CTX *enc = encs[s], *dec = decs[s];
    int l;
    return EVP_CipherInit_ex(enc, NULL, NULL, NULL, nonce, 1) != 1 ||
           EVP_CipherUpdate(enc, NULL, &l, aad, 13) != 1 ||
           EVP_CipherUpdate(enc, buf, &l, buf, (int)n) != 1 || EVP_CipherFinal_ex(enc, buf, &l) != 1 ||
           EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1 ||
           EVP_CipherInit_ex(dec, NULL, NULL, NULL, nonce, 0) != 1 ||
           EVP_CipherUpdate(dec, NULL, &l, aad, 13) != 1 ||
           EVP_CipherUpdate(dec, buf, &l, buf, (int)n) != 1 ||
           EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_AEAD_SET_TAG, 16, tag) != 1 ||
           EVP_CipherFinal_ex(dec, buf, &l) != 1;
}
#elif defined(BACKEND_SODIUM)
#include <sodium.h>
#define BACKEND "libsodium"
static unsigned char tag[16];
static crypto_aead_aes256gcm_state gcm_state;
static int setup(enum suite s)
{
    if (sodium_init() < 0 || s == AES128) {
        return 1;
    }
    return s == AES256 &&
           (!crypto_aead_aes256gcm_is_available() || crypto_aead_aes256gcm_beforenm(&gcm_state, key));
}
static int seal_open(enum suite s, size_t n)
{
    if (s == CHACHA) {
        return crypto_aead_chacha20poly1305_ietf_encrypt_detached(buf, tag, NULL, buf, n, aad, 13, NULL,
                                                                  nonce, key) ||
               crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf, NULL, buf, n, tag, aad, 13, nonce,
                                                                  key);
    }
    return crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag, NULL, buf, n, aad, 13, NULL, nonce,
                                                          &gcm_state) ||
           crypto_aead_aes256gcm_decrypt_detached_afternm(buf, NULL, buf, n, tag, aad, 13, nonce, &gcm_state);
}
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    int ok[NSUITES];

    for (int s = 0; s < NSUITES; s++) {
        ok[s] = setup((enum suite)s) == 0;
        if (!ok[s]) {
            printf("%s %s - unsupported\n", BACKEND, suite_names[s]);
        }
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        long iters = (long)(100e6 / (double)(n + 200)); /* ~0.05 s at 2 GB/s */
        double t[NSUITES][RUNS];

        /* The suites take turns run by run, so the machine's noise falls on all of them alike. */
        for (int r = 0; r < RUNS; r++) {
            for (int s = 0; s < NSUITES; s++) {
                double t0 = now();

                for (long k = 0; ok[s] && k < iters; k++) {
                    nonce[0] = (unsigned char)k;
                    if (seal_open((enum suite)s, n) != 0) {
                        fprintf(stderr, "%s %s: failed\n", BACKEND, suite_names[s]);
                        return 1;
                    }
                }
                t[s][r] = (now() - t0) / (double)iters; /* seconds per record, sealed and opened */
            }
        }
        for (int s = 0; s < NSUITES; s++) {
            if (ok[s]) {
                qsort(t[s], RUNS, sizeof(t[s][0]), cmp);
                /* MB/s of records through both directions, as a server sees it */
                printf("%s %s %zu %.0f %.0f\n", BACKEND, suite_names[s], n,
                       2.0 * (double)n / t[s][RUNS / 2] / 1e6, t[s][RUNS / 2] * 1e9);
            }
        }
    }
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mbedTLS's GCM and ChaCha20-Poly1305 modules (MBEDTLS_GCM_ALT, MBEDTLS_CHACHAPOLY_ALT) on OpenSSL's
 * libcrypto EVP interface. third_party/deps.sh compiles this file into admitd's libmbedcrypto.a;
 * tests/unit/net/test-aead.c checks it against RFC 8439 and NIST GCM vectors.
 *
 * Each mbedTLS context owns one EVP_CIPHER_CTX keyed once in setkey; every record only sets its
 * nonce, so the key schedule (AES round keys, GHASH tables) is not redone per record. One-shot calls
 * (what the TLS record layer and PSA's one-shot AEAD make) go straight to EVP. OpenSSL cannot hand
 * out the tag it computed while decrypting, which the multipart API's finish() must return; for
 * that case (not on TLS's path) a second context re-encrypts the plaintext, whose tag is then the
 * tag of the received ciphertext.
 */
#include <mbedtls/chachapoly.h>
#include <mbedtls/error.h>
#include <mbedtls/gcm.h>
#include <mbedtls/platform_util.h>
#include <openssl/evp.h>

#include <pthread.h>
#include <string.h>

#define GCM_IV_MAX 128 /* OpenSSL's limit on a GCM IV (1024 bits) */

/*
 * The ciphers are fetched from OpenSSL's default provider once per process: initialising a context
 * with the legacy EVP_aes_128_gcm() objects fetches again (and allocates) at every setkey, that is
 * at every TLS connection. Kept until exit, as OpenSSL keeps its own provider state.
 */
enum { AES_128_GCM, AES_192_GCM, AES_256_GCM, CHACHA20_POLY1305, NCIPHERS };
static EVP_CIPHER *fetched[NCIPHERS];
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

static void fetch_ciphers(void)
{
    static const char *const names[NCIPHERS] = {"AES-128-GCM", "AES-192-GCM", "AES-256-GCM",
                                                "ChaCha20-Poly1305"};

    for (int i = 0; i < NCIPHERS; i++) {
        fetched[i] = EVP_CIPHER_fetch(NULL, names[i], NULL);
    }
}

static const EVP_CIPHER *cipher_of(int which)
{
    pthread_once(&fetch_once, fetch_ciphers);
    return fetched[which];
}

static EVP_CIPHER_CTX *evp_keyed(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key)
{
    if (ctx == NULL) {
        ctx = EVP_CIPHER_CTX_new();
        if (ctx == NULL) {
            return NULL;
        }
    }
    if (cipher == NULL || EVP_CipherInit_ex(ctx, cipher, NULL, key, NULL, 1) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/*
 * Sets a message's IV (and direction) on a keyed context. *cur_iv_len is the IV length the context is
 * set for (GCM only, which allows IVs other than 12 bytes; NULL for ChaCha20-Poly1305).
 */
static int evp_start(EVP_CIPHER_CTX *ctx, const unsigned char *iv, size_t iv_len, int encrypt,
                     size_t *cur_iv_len)
{
    if (cur_iv_len != NULL && *cur_iv_len != iv_len) {
        if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)iv_len, NULL) != 1) {
            return -1;
        }
        *cur_iv_len = iv_len;
    }
    return EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, encrypt) == 1 ? 0 : -1;
}

/* EVP_CipherUpdate takes int lengths: feed larger inputs in slices. out NULL means AAD. */
static int evp_feed(EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t len, unsigned char *out)
{
    while (len > 0) {
        int n = len > (1u << 30) ? 1 << 30 : (int)len;
        int outl = 0;

        if (EVP_CipherUpdate(ctx, out, &outl, in, n) != 1) {
            return -1;
        }
        in += n;
        len -= (size_t)n;
        if (out != NULL) {
            out += n;
        }
    }
    return 0;
}

/* Finishes an encryption and copies the first tag_len bytes of its tag. */
static int evp_finish_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, size_t tag_len)
{
    unsigned char full[16];
    int outl = 0;

    if (EVP_CipherFinal_ex(ctx, full, &outl) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, full) != 1) {
        return -1;
    }
    memcpy(tag, full, tag_len);
    mbedtls_platform_zeroize(full, sizeof(full));
    return 0;
}

/* Finishes a decryption: 1 when the tag matches, 0 when it does not, -1 on an internal error. */
static int evp_finish_check(EVP_CIPHER_CTX *ctx, const unsigned char *tag, size_t tag_len)
{
    unsigned char expected[16];
    int outl = 0;

    memcpy(expected, tag, tag_len);
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, expected) != 1) {
        return -1;
    }
    return EVP_CipherFinal_ex(ctx, expected, &outl) == 1 ? 1 : 0;
}

/*
 * Multipart decryption: decrypts in→out with dec (decryption mode) and re-encrypts out with enc
 * (same key and nonce, encryption mode, into a scratch buffer) so enc's tag covers the ciphertext.
 */
static int decrypt_and_reencrypt(EVP_CIPHER_CTX *dec, EVP_CIPHER_CTX *enc, const unsigned char *in,
                                 size_t len, unsigned char *out)
{
    unsigned char scratch[512];

    if (evp_feed(dec, in, len, out) != 0) {
        return -1;
    }
    for (size_t done = 0; done < len;) {
        size_t n = len - done < sizeof(scratch) ? len - done : sizeof(scratch);

        if (evp_feed(enc, out + done, n, scratch) != 0) {
            return -1;
        }
        done += n;
    }
    mbedtls_platform_zeroize(scratch, sizeof(scratch));
    return 0;
}

/* ---- AES-GCM ---- */

static const EVP_CIPHER *gcm_cipher(int keybits)
{
    switch (keybits) {
    case 128: return cipher_of(AES_128_GCM);
    case 192: return cipher_of(AES_192_GCM);
    case 256: return cipher_of(AES_256_GCM);
    default: return NULL;
    }
}

void mbedtls_gcm_init(mbedtls_gcm_context *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
}

void mbedtls_gcm_free(mbedtls_gcm_context *ctx)
{
    if (ctx == NULL) {
        return;
    }
    EVP_CIPHER_CTX_free(ctx->evp);
    EVP_CIPHER_CTX_free(ctx->evp_verify);
    mbedtls_platform_zeroize(ctx, sizeof(*ctx));
}

int mbedtls_gcm_setkey(mbedtls_gcm_context *ctx, mbedtls_cipher_id_t cipher, const unsigned char *key,
                       unsigned int keybits)
{
    const EVP_CIPHER *evp_cipher = gcm_cipher((int)keybits);

    if (cipher != MBEDTLS_CIPHER_ID_AES || evp_cipher == NULL) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    EVP_CIPHER_CTX_free(ctx->evp_verify);
    ctx->evp_verify = NULL;
    ctx->evp = evp_keyed(ctx->evp, evp_cipher, key);
    if (ctx->evp == NULL) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    ctx->keybits = (int)keybits;
    ctx->iv_len = 12; /* OpenSSL's default */
    ctx->verify_iv_len = 12;
    memcpy(ctx->key, key, keybits / 8);
    return 0;
}

int mbedtls_gcm_starts(mbedtls_gcm_context *ctx, int mode, const unsigned char *iv, size_t iv_len)
{
    if (ctx->evp == NULL || iv_len == 0) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    if (iv_len > GCM_IV_MAX) {
        return MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
    }
    ctx->mode = mode;
    if (evp_start(ctx->evp, iv, iv_len, mode == MBEDTLS_GCM_ENCRYPT, &ctx->iv_len) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    if (mode == MBEDTLS_GCM_DECRYPT) {
        if (ctx->evp_verify == NULL) {
            ctx->evp_verify = evp_keyed(NULL, gcm_cipher(ctx->keybits), ctx->key);
        }
        if (ctx->evp_verify == NULL || evp_start(ctx->evp_verify, iv, iv_len, 1, &ctx->verify_iv_len) != 0) {
            return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
        }
    }
    return 0;
}

int mbedtls_gcm_update_ad(mbedtls_gcm_context *ctx, const unsigned char *add, size_t add_len)
{
    if (add_len == 0) {
        return 0;
    }
    if (evp_feed(ctx->evp, add, add_len, NULL) != 0 ||
        (ctx->mode == MBEDTLS_GCM_DECRYPT && evp_feed(ctx->evp_verify, add, add_len, NULL) != 0)) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    return 0;
}

int mbedtls_gcm_update(mbedtls_gcm_context *ctx, const unsigned char *input, size_t input_length,
                       unsigned char *output, size_t output_size, size_t *output_length)
{
    *output_length = 0;
    if (output_size < input_length) {
        return MBEDTLS_ERR_GCM_BUFFER_TOO_SMALL;
    }
    if (input_length == 0) {
        return 0;
    }
    if (ctx->mode == MBEDTLS_GCM_DECRYPT
            ? decrypt_and_reencrypt(ctx->evp, ctx->evp_verify, input, input_length, output) != 0
            : evp_feed(ctx->evp, input, input_length, output) != 0) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    *output_length = input_length;
    return 0;
}

int mbedtls_gcm_finish(mbedtls_gcm_context *ctx, unsigned char *output, size_t output_size,
                       size_t *output_length, unsigned char *tag, size_t tag_len)
{
    (void)output;
    (void)output_size;
    *output_length = 0;
    if (tag_len < 4 || tag_len > 16) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    if (evp_finish_tag(ctx->mode == MBEDTLS_GCM_DECRYPT ? ctx->evp_verify : ctx->evp, tag, tag_len) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

int mbedtls_gcm_crypt_and_tag(mbedtls_gcm_context *ctx, int mode, size_t length, const unsigned char *iv,
                              size_t iv_len, const unsigned char *add, size_t add_len,
                              const unsigned char *input, unsigned char *output, size_t tag_len,
                              unsigned char *tag)
{
    size_t olen;
    int ret;

    if (tag_len < 4 || tag_len > 16) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    ret = mbedtls_gcm_starts(ctx, mode, iv, iv_len);
    if (ret == 0) {
        ret = mbedtls_gcm_update_ad(ctx, add, add_len);
    }
    if (ret == 0) {
        ret = mbedtls_gcm_update(ctx, input, length, output, length, &olen);
    }
    if (ret == 0) {
        ret = mbedtls_gcm_finish(ctx, NULL, 0, &olen, tag, tag_len);
    }
    return ret;
}

int mbedtls_gcm_auth_decrypt(mbedtls_gcm_context *ctx, size_t length, const unsigned char *iv, size_t iv_len,
                             const unsigned char *add, size_t add_len, const unsigned char *tag,
                             size_t tag_len, const unsigned char *input, unsigned char *output)
{
    int ok;

    if (ctx->evp == NULL || iv_len == 0 || tag_len < 4 || tag_len > 16) {
        return MBEDTLS_ERR_GCM_BAD_INPUT;
    }
    if (iv_len > GCM_IV_MAX) {
        return MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
    }
    ctx->mode = MBEDTLS_GCM_ENCRYPT; /* no multipart decryption under way: evp_verify is not fed */
    if (evp_start(ctx->evp, iv, iv_len, 0, &ctx->iv_len) != 0 ||
        evp_feed(ctx->evp, add, add_len, NULL) != 0 || evp_feed(ctx->evp, input, length, output) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    ok = evp_finish_check(ctx->evp, tag, tag_len);
    if (ok != 1) {
        mbedtls_platform_zeroize(output, length);
        return ok == 0 ? MBEDTLS_ERR_GCM_AUTH_FAILED : MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

/* ---- ChaCha20-Poly1305 ---- */

enum { CP_NO_KEY, CP_KEYED, CP_AAD, CP_DATA };

void mbedtls_chachapoly_init(mbedtls_chachapoly_context *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
}

void mbedtls_chachapoly_free(mbedtls_chachapoly_context *ctx)
{
    if (ctx == NULL) {
        return;
    }
    EVP_CIPHER_CTX_free(ctx->evp);
    EVP_CIPHER_CTX_free(ctx->evp_verify);
    mbedtls_platform_zeroize(ctx, sizeof(*ctx));
}

int mbedtls_chachapoly_setkey(mbedtls_chachapoly_context *ctx, const unsigned char key[32])
{
    EVP_CIPHER_CTX_free(ctx->evp_verify);
    ctx->evp_verify = NULL;
    ctx->evp = evp_keyed(ctx->evp, cipher_of(CHACHA20_POLY1305), key);
    if (ctx->evp == NULL) {
        ctx->state = CP_NO_KEY;
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    memcpy(ctx->key, key, sizeof(ctx->key));
    ctx->state = CP_KEYED;
    return 0;
}

int mbedtls_chachapoly_starts(mbedtls_chachapoly_context *ctx, const unsigned char nonce[12],
                              mbedtls_chachapoly_mode_t mode)
{
    if (ctx->state == CP_NO_KEY) {
        return MBEDTLS_ERR_CHACHAPOLY_BAD_STATE;
    }
    ctx->mode = (int)mode;
    if (evp_start(ctx->evp, nonce, 12, mode == MBEDTLS_CHACHAPOLY_ENCRYPT, NULL) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    if (mode == MBEDTLS_CHACHAPOLY_DECRYPT) {
        if (ctx->evp_verify == NULL) {
            ctx->evp_verify = evp_keyed(NULL, cipher_of(CHACHA20_POLY1305), ctx->key);
        }
        if (ctx->evp_verify == NULL || evp_start(ctx->evp_verify, nonce, 12, 1, NULL) != 0) {
            return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
        }
    }
    ctx->state = CP_AAD;
    return 0;
}

int mbedtls_chachapoly_update_aad(mbedtls_chachapoly_context *ctx, const unsigned char *aad, size_t aad_len)
{
    if (ctx->state != CP_AAD) {
        return MBEDTLS_ERR_CHACHAPOLY_BAD_STATE;
    }
    if (evp_feed(ctx->evp, aad, aad_len, NULL) != 0 ||
        (ctx->mode == MBEDTLS_CHACHAPOLY_DECRYPT && evp_feed(ctx->evp_verify, aad, aad_len, NULL) != 0)) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

int mbedtls_chachapoly_update(mbedtls_chachapoly_context *ctx, size_t len, const unsigned char *input,
                              unsigned char *output)
{
    if (ctx->state != CP_AAD && ctx->state != CP_DATA) {
        return MBEDTLS_ERR_CHACHAPOLY_BAD_STATE;
    }
    ctx->state = CP_DATA;
    if (len == 0) {
        return 0;
    }
    if (ctx->mode == MBEDTLS_CHACHAPOLY_DECRYPT
            ? decrypt_and_reencrypt(ctx->evp, ctx->evp_verify, input, len, output) != 0
            : evp_feed(ctx->evp, input, len, output) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

int mbedtls_chachapoly_finish(mbedtls_chachapoly_context *ctx, unsigned char mac[16])
{
    if (ctx->state != CP_AAD && ctx->state != CP_DATA) {
        return MBEDTLS_ERR_CHACHAPOLY_BAD_STATE;
    }
    ctx->state = CP_KEYED;
    if (evp_finish_tag(ctx->mode == MBEDTLS_CHACHAPOLY_DECRYPT ? ctx->evp_verify : ctx->evp, mac, 16) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

int mbedtls_chachapoly_encrypt_and_tag(mbedtls_chachapoly_context *ctx, size_t length,
                                       const unsigned char nonce[12], const unsigned char *aad,
                                       size_t aad_len, const unsigned char *input, unsigned char *output,
                                       unsigned char tag[16])
{
    int ret = mbedtls_chachapoly_starts(ctx, nonce, MBEDTLS_CHACHAPOLY_ENCRYPT);

    if (ret == 0) {
        ret = mbedtls_chachapoly_update_aad(ctx, aad, aad_len);
    }
    if (ret == 0) {
        ret = mbedtls_chachapoly_update(ctx, length, input, output);
    }
    if (ret == 0) {
        ret = mbedtls_chachapoly_finish(ctx, tag);
    }
    return ret;
}

int mbedtls_chachapoly_auth_decrypt(mbedtls_chachapoly_context *ctx, size_t length,
                                    const unsigned char nonce[12], const unsigned char *aad, size_t aad_len,
                                    const unsigned char tag[16], const unsigned char *input,
                                    unsigned char *output)
{
    int ok;

    if (ctx->state == CP_NO_KEY) {
        return MBEDTLS_ERR_CHACHAPOLY_BAD_STATE;
    }
    ctx->state = CP_KEYED;
    if (evp_start(ctx->evp, nonce, 12, 0, NULL) != 0 || evp_feed(ctx->evp, aad, aad_len, NULL) != 0 ||
        evp_feed(ctx->evp, input, length, output) != 0) {
        return MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    ok = evp_finish_check(ctx->evp, tag, 16);
    if (ok != 1) {
        mbedtls_platform_zeroize(output, length);
        return ok == 0 ? MBEDTLS_ERR_CHACHAPOLY_AUTH_FAILED : MBEDTLS_ERR_PLATFORM_HW_ACCEL_FAILED;
    }
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer tests for the record-layer AEADs admitd's mbedTLS gets from OpenSSL
 * (third_party/mbedtls/aead_openssl.c, the MBEDTLS_GCM_ALT and MBEDTLS_CHACHAPOLY_ALT modules):
 * NIST's GCM vectors (tests/fixtures/aead/gcm-nist.txt) and RFC 8439's ChaCha20-Poly1305 vectors,
 * each through every road mbedTLS has to them: the modules' one-shot calls, their multipart API
 * (split at awkward places), the cipher layer the TLS record layer uses, and PSA's AEAD. Forged tags
 * must fail and leave no plaintext behind. The library's own GCM and ChaCha20-Poly1305 self-tests
 * (the GCM specification's vectors, 8- to 60-byte IVs) run on the same modules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/chachapoly.h>
#include <mbedtls/cipher.h>
#include <mbedtls/gcm.h>
#include <psa/crypto.h>

#define MAX_DATA 512

typedef struct vector_s {
    unsigned char key[32], iv[128], aad[MAX_DATA], pt[MAX_DATA], ct[MAX_DATA], tag[16];
    size_t key_len, iv_len, aad_len, pt_len, tag_len;
    int ok; /* 0: the tag must not verify */
} vector_t;

static size_t unhex(const char *hex, unsigned char *out, size_t cap)
{
    size_t n = 0;

    if (strcmp(hex, "-") == 0) {
        return 0;
    }
    for (; hex[0] != '\0' && hex[1] != '\0'; hex += 2) {
        unsigned int byte;

        assert_true(n < cap);
        assert_int_equal(sscanf(hex, "%2x", &byte), 1);
        out[n++] = (unsigned char)byte;
    }
    return n;
}

/* ---- paths: each checks one vector through one road and fails the test on a mismatch ---- */

static void gcm_one_shot(const vector_t *v)
{
    mbedtls_gcm_context ctx;
    unsigned char out[MAX_DATA], tag[16];

    mbedtls_gcm_init(&ctx);
    assert_int_equal(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, v->key, (unsigned)v->key_len * 8), 0);
    if (v->ok) {
        assert_int_equal(mbedtls_gcm_crypt_and_tag(&ctx, MBEDTLS_GCM_ENCRYPT, v->pt_len, v->iv, v->iv_len,
                                                   v->aad, v->aad_len, v->pt, out, v->tag_len, tag),
                         0);
        assert_memory_equal(out, v->ct, v->pt_len);
        assert_memory_equal(tag, v->tag, v->tag_len);
    }
    memset(out, 0xAA, sizeof(out));
    int ret = mbedtls_gcm_auth_decrypt(&ctx, v->pt_len, v->iv, v->iv_len, v->aad, v->aad_len, v->tag,
                                       v->tag_len, v->ct, out);
    if (v->ok) {
        assert_int_equal(ret, 0);
        assert_memory_equal(out, v->pt, v->pt_len);
    } else {
        static const unsigned char zero[MAX_DATA];

        assert_int_equal(ret, MBEDTLS_ERR_GCM_AUTH_FAILED);
        assert_memory_equal(out, zero, v->pt_len); /* no unauthenticated plaintext is left */
    }
    mbedtls_gcm_free(&ctx);
}

/* Multipart, AAD in two pieces and data in three (1 byte, then 16, then the rest). */
static void gcm_multipart(const vector_t *v, int mode)
{
    mbedtls_gcm_context ctx;
    unsigned char out[MAX_DATA], tag[16];
    const unsigned char *in = mode == MBEDTLS_GCM_ENCRYPT ? v->pt : v->ct;
    size_t cuts[] = {0, v->pt_len < 1 ? v->pt_len : 1, v->pt_len < 17 ? v->pt_len : 17, v->pt_len};
    size_t half = v->aad_len / 2, olen;

    mbedtls_gcm_init(&ctx);
    assert_int_equal(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, v->key, (unsigned)v->key_len * 8), 0);
    assert_int_equal(mbedtls_gcm_starts(&ctx, mode, v->iv, v->iv_len), 0);
    assert_int_equal(mbedtls_gcm_update_ad(&ctx, v->aad, half), 0);
    assert_int_equal(mbedtls_gcm_update_ad(&ctx, v->aad + half, v->aad_len - half), 0);
    for (size_t i = 0; i + 1 < sizeof(cuts) / sizeof(cuts[0]); i++) {
        size_t n = cuts[i + 1] - cuts[i];

        assert_int_equal(mbedtls_gcm_update(&ctx, in + cuts[i], n, out + cuts[i], n, &olen), 0);
        assert_int_equal(olen, n);
    }
    assert_int_equal(mbedtls_gcm_finish(&ctx, NULL, 0, &olen, tag, v->tag_len), 0);
    if (v->ok) {
        assert_memory_equal(out, mode == MBEDTLS_GCM_ENCRYPT ? v->ct : v->pt, v->pt_len);
    }
    /* Decrypting, finish() gives the tag of what was received: the caller compares. */
    if (v->ok) {
        assert_memory_equal(tag, v->tag, v->tag_len);
    } else {
        assert_memory_not_equal(tag, v->tag, v->tag_len);
    }
    mbedtls_gcm_free(&ctx);
}

/* The cipher layer, as the TLS record layer calls it: ciphertext and tag in one buffer, in place. */
static void via_cipher_layer(const vector_t *v, mbedtls_cipher_type_t type)
{
    mbedtls_cipher_context_t enc, dec;
    unsigned char buf[MAX_DATA + 16];
    size_t olen;

    mbedtls_cipher_init(&enc);
    mbedtls_cipher_init(&dec);
    assert_int_equal(mbedtls_cipher_setup(&enc, mbedtls_cipher_info_from_type(type)), 0);
    assert_int_equal(mbedtls_cipher_setup(&dec, mbedtls_cipher_info_from_type(type)), 0);
    assert_int_equal(mbedtls_cipher_setkey(&enc, v->key, (int)v->key_len * 8, MBEDTLS_ENCRYPT), 0);
    assert_int_equal(mbedtls_cipher_setkey(&dec, v->key, (int)v->key_len * 8, MBEDTLS_DECRYPT), 0);
    if (v->ok) {
        memcpy(buf, v->pt, v->pt_len);
        assert_int_equal(mbedtls_cipher_auth_encrypt_ext(&enc, v->iv, v->iv_len, v->aad, v->aad_len, buf,
                                                         v->pt_len, buf, sizeof(buf), &olen, v->tag_len),
                         0);
        assert_int_equal(olen, v->pt_len + v->tag_len);
        assert_memory_equal(buf, v->ct, v->pt_len);
        assert_memory_equal(buf + v->pt_len, v->tag, v->tag_len);
    }
    memcpy(buf, v->ct, v->pt_len);
    memcpy(buf + v->pt_len, v->tag, v->tag_len);
    int ret = mbedtls_cipher_auth_decrypt_ext(&dec, v->iv, v->iv_len, v->aad, v->aad_len, buf,
                                              v->pt_len + v->tag_len, buf, sizeof(buf), &olen, v->tag_len);
    if (v->ok) {
        assert_int_equal(ret, 0);
        assert_int_equal(olen, v->pt_len);
        assert_memory_equal(buf, v->pt, v->pt_len);
    } else {
        assert_int_equal(ret, MBEDTLS_ERR_CIPHER_AUTH_FAILED);
    }
    mbedtls_cipher_free(&enc);
    mbedtls_cipher_free(&dec);
}

/* PSA's one-shot AEAD (its built-in driver calls the same modules). */
static void via_psa(const vector_t *v, psa_key_type_t type, psa_algorithm_t alg)
{
    psa_key_attributes_t attrs = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_id_t key;
    unsigned char buf[MAX_DATA + 16], in[MAX_DATA + 16];
    size_t olen;

    psa_set_key_type(&attrs, type);
    psa_set_key_algorithm(&attrs, alg);
    psa_set_key_usage_flags(&attrs, PSA_KEY_USAGE_ENCRYPT | PSA_KEY_USAGE_DECRYPT);
    assert_int_equal(psa_import_key(&attrs, v->key, v->key_len, &key), PSA_SUCCESS);
    if (v->ok) {
        assert_int_equal(psa_aead_encrypt(key, alg, v->iv, v->iv_len, v->aad, v->aad_len, v->pt, v->pt_len,
                                          buf, sizeof(buf), &olen),
                         PSA_SUCCESS);
        assert_int_equal(olen, v->pt_len + v->tag_len);
        assert_memory_equal(buf, v->ct, v->pt_len);
        assert_memory_equal(buf + v->pt_len, v->tag, v->tag_len);
    }
    memcpy(in, v->ct, v->pt_len);
    memcpy(in + v->pt_len, v->tag, v->tag_len);
    psa_status_t st = psa_aead_decrypt(key, alg, v->iv, v->iv_len, v->aad, v->aad_len, in,
                                       v->pt_len + v->tag_len, buf, sizeof(buf), &olen);
    if (v->ok) {
        assert_int_equal(st, PSA_SUCCESS);
        assert_memory_equal(buf, v->pt, v->pt_len);
    } else {
        assert_int_equal(st, PSA_ERROR_INVALID_SIGNATURE);
    }
    assert_int_equal(psa_destroy_key(key), PSA_SUCCESS);
}

/* ---- AES-GCM: NIST vectors ---- */

static mbedtls_cipher_type_t gcm_type(size_t key_len)
{
    return key_len == 16   ? MBEDTLS_CIPHER_AES_128_GCM
           : key_len == 24 ? MBEDTLS_CIPHER_AES_192_GCM
                           : MBEDTLS_CIPHER_AES_256_GCM;
}

static void gcm_nist_vectors(void **state)
{
    char path[512], line[4096];
    const char *dir = getenv("ADM_FIXTURES_DIR");
    FILE *f;
    int count = 0, failing = 0, iv96 = 0;
    vector_t *v = calloc(1, sizeof(*v));

    (void)state;
    assert_non_null(dir);
    assert_non_null(v);
    snprintf(path, sizeof(path), "%s/aead/gcm-nist.txt", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        char key[80], iv[300], aad[2 * MAX_DATA + 2], pt[2 * MAX_DATA + 2], ct[2 * MAX_DATA + 2], tag[40],
            res[8];

        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        assert_int_equal(
            sscanf(line, "%79s %299s %1025s %1025s %1025s %39s %7s", key, iv, aad, pt, ct, tag, res), 7);
        memset(v, 0, sizeof(*v));
        v->key_len = unhex(key, v->key, sizeof(v->key));
        v->iv_len = unhex(iv, v->iv, sizeof(v->iv));
        v->aad_len = unhex(aad, v->aad, sizeof(v->aad));
        v->ok = strcmp(res, "ok") == 0;
        v->pt_len = unhex(ct, v->ct, sizeof(v->ct));
        /* A forged vector has no plaintext: NIST gives none. */
        assert_int_equal(v->ok ? unhex(pt, v->pt, sizeof(v->pt)) : v->pt_len, v->pt_len);
        v->tag_len = unhex(tag, v->tag, sizeof(v->tag));

        gcm_one_shot(v);
        gcm_multipart(v, MBEDTLS_GCM_DECRYPT);
        if (v->ok) {
            gcm_multipart(v, MBEDTLS_GCM_ENCRYPT);
        }
        via_cipher_layer(v, gcm_type(v->key_len));
        if (v->tag_len == 4 || v->tag_len == 8 || v->tag_len >= 12) { /* the lengths PSA allows */
            via_psa(v, PSA_KEY_TYPE_AES, PSA_ALG_AEAD_WITH_SHORTENED_TAG(PSA_ALG_GCM, v->tag_len));
        }
        iv96 += v->iv_len == 12;
        count++;
        failing += !v->ok;
    }
    fclose(f);
    free(v);
    /* The file holds every key size and NIST tag length, with forged tags among them. */
    assert_true(count >= 250);
    assert_true(failing >= 60);
    assert_true(iv96 >= 3); /* TLS's IV length; the self-test has more */
}

/* ---- ChaCha20-Poly1305: RFC 8439 ---- */

/* RFC 8439 section 2.8.2 and appendix A.5. */
static const char *const rfc8439[][6] = {
    {"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f", "070000004041424344454647",
     "50515253c0c1c2c3c4c5c6c7",
     "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966204920636f756c"
     "64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73637265656e20"
     "776f756c642062652069742e",
     "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de"
     "0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b"
     "7a9de576d26586cec64b6116",
     "1ae10b594f09e26a7e902ecbd0600691"},
    {"1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0", "000000000102030405060708",
     "f33388860000000000004e91",
     "496e7465726e65742d4472616674732061726520647261667420646f63756d656e74732076616c696420666f722061206d61"
     "78696d756d206f6620736978206d6f6e74687320616e64206d617920626520757064617465642c207265706c616365642c20"
     "6f72206f62736f6c65746564206279206f7468657220646f63756d656e747320617420616e792074696d652e204974206973"
     "20696e617070726f70726961746520746f2075736520496e7465726e65742d447261667473206173207265666572656e6365"
     "206d6174657269616c206f7220746f2063697465207468656d206f74686572207468616e206173202fe2809c776f726b2069"
     "6e2070726f67726573732e2fe2809d",
     "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb24c6cfc18755d43eea09ee94e382d26b0bdb7"
     "b73c321b0100d4f03b7f355894cf332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c8559797a06ef"
     "4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4b9166c767b804d46a59b5216cde7a4e99040c5a404332"
     "25ee282a1b0a06c523eaf4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a0bb2316053fa76991"
     "955ebd63159434ecebb4e466dae5a1073a6727627097a1049e617d91d361094fa68f0ff77987130305beaba2eda04df997b71"
     "4d6c6f2c29a6ad5cb4022b02709b",
     "eead9d67890cbb22392336fea1851f38"},
};

static void load_rfc8439(vector_t *v, size_t i, int forge)
{
    memset(v, 0, sizeof(*v));
    v->key_len = unhex(rfc8439[i][0], v->key, sizeof(v->key));
    v->iv_len = unhex(rfc8439[i][1], v->iv, sizeof(v->iv));
    v->aad_len = unhex(rfc8439[i][2], v->aad, sizeof(v->aad));
    v->pt_len = unhex(rfc8439[i][3], v->pt, sizeof(v->pt));
    assert_int_equal(unhex(rfc8439[i][4], v->ct, sizeof(v->ct)), v->pt_len);
    v->tag_len = unhex(rfc8439[i][5], v->tag, sizeof(v->tag));
    v->ok = !forge;
    if (forge) {
        v->tag[15] ^= 0x01;
    }
}

static void chachapoly_paths(const vector_t *v)
{
    mbedtls_chachapoly_context ctx;
    unsigned char out[MAX_DATA], tag[16];
    static const unsigned char zero[MAX_DATA];

    mbedtls_chachapoly_init(&ctx);
    assert_int_equal(mbedtls_chachapoly_setkey(&ctx, v->key), 0);
    if (v->ok) {
        assert_int_equal(
            mbedtls_chachapoly_encrypt_and_tag(&ctx, v->pt_len, v->iv, v->aad, v->aad_len, v->pt, out, tag),
            0);
        assert_memory_equal(out, v->ct, v->pt_len);
        assert_memory_equal(tag, v->tag, 16);
    }
    memset(out, 0xAA, sizeof(out));
    int ret = mbedtls_chachapoly_auth_decrypt(&ctx, v->pt_len, v->iv, v->aad, v->aad_len, v->tag, v->ct, out);
    if (v->ok) {
        assert_int_equal(ret, 0);
        assert_memory_equal(out, v->pt, v->pt_len);
    } else {
        assert_int_equal(ret, MBEDTLS_ERR_CHACHAPOLY_AUTH_FAILED);
        assert_memory_equal(out, zero, v->pt_len);
    }

    /* Multipart both ways, the data cut at 1 and 65 bytes (inside and across ChaCha20 blocks). */
    for (int dir = 0; dir < 2; dir++) {
        const unsigned char *in = dir == 0 ? v->pt : v->ct;

        assert_int_equal(mbedtls_chachapoly_starts(
                             &ctx, v->iv, dir == 0 ? MBEDTLS_CHACHAPOLY_ENCRYPT : MBEDTLS_CHACHAPOLY_DECRYPT),
                         0);
        assert_int_equal(mbedtls_chachapoly_update_aad(&ctx, v->aad, 5), 0);
        assert_int_equal(mbedtls_chachapoly_update_aad(&ctx, v->aad + 5, v->aad_len - 5), 0);
        assert_int_equal(mbedtls_chachapoly_update(&ctx, 1, in, out), 0);
        assert_int_equal(mbedtls_chachapoly_update(&ctx, 64, in + 1, out + 1), 0);
        assert_int_equal(mbedtls_chachapoly_update(&ctx, v->pt_len - 65, in + 65, out + 65), 0);
        /* AAD after data is a misuse the API refuses, as mbedTLS's own module does. */
        assert_int_equal(mbedtls_chachapoly_update_aad(&ctx, v->aad, 1), MBEDTLS_ERR_CHACHAPOLY_BAD_STATE);
        assert_int_equal(mbedtls_chachapoly_finish(&ctx, tag), 0);
        assert_memory_equal(out, dir == 0 ? v->ct : v->pt, v->pt_len);
        if (v->ok) {
            assert_memory_equal(tag, v->tag, 16);
        } else {
            assert_memory_not_equal(tag, v->tag, 16);
        }
        if (!v->ok) {
            break; /* a forged tag has no encryption side */
        }
    }
    assert_int_equal(mbedtls_chachapoly_finish(&ctx, tag), MBEDTLS_ERR_CHACHAPOLY_BAD_STATE);
    mbedtls_chachapoly_free(&ctx);

    via_cipher_layer(v, MBEDTLS_CIPHER_CHACHA20_POLY1305);
    via_psa(v, PSA_KEY_TYPE_CHACHA20, PSA_ALG_CHACHA20_POLY1305);
}

static void chachapoly_rfc8439_vectors(void **state)
{
    vector_t *v = calloc(1, sizeof(*v));

    (void)state;
    assert_non_null(v);
    for (size_t i = 0; i < sizeof(rfc8439) / sizeof(rfc8439[0]); i++) {
        load_rfc8439(v, i, 0);
        chachapoly_paths(v);
        load_rfc8439(v, i, 1);
        chachapoly_paths(v);
    }
    free(v);
}

/* A context without a key refuses to work instead of crashing. */
static void chachapoly_without_key(void **state)
{
    mbedtls_chachapoly_context ctx;
    unsigned char nonce[12] = {0}, tag[16] = {0}, buf[4] = {0};

    (void)state;
    mbedtls_chachapoly_init(&ctx);
    assert_int_equal(mbedtls_chachapoly_starts(&ctx, nonce, MBEDTLS_CHACHAPOLY_ENCRYPT),
                     MBEDTLS_ERR_CHACHAPOLY_BAD_STATE);
    assert_int_equal(mbedtls_chachapoly_auth_decrypt(&ctx, sizeof(buf), nonce, NULL, 0, tag, buf, buf),
                     MBEDTLS_ERR_CHACHAPOLY_BAD_STATE);
    mbedtls_chachapoly_free(&ctx);
}

static void gcm_bad_parameters(void **state)
{
    mbedtls_gcm_context ctx;
    unsigned char key[32] = {0}, iv[12] = {0}, tag[16] = {0}, buf[4] = {0};
    size_t olen;

    (void)state;
    mbedtls_gcm_init(&ctx);
    assert_int_equal(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv, sizeof(iv)),
                     MBEDTLS_ERR_GCM_BAD_INPUT);
    assert_int_equal(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key, 100), MBEDTLS_ERR_GCM_BAD_INPUT);
    assert_int_equal(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key, 256), 0);
    assert_non_null(ctx.evp); /* the module is the OpenSSL one (this field exists only there) */
    assert_int_equal(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv, 0), MBEDTLS_ERR_GCM_BAD_INPUT);
    assert_int_equal(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv, sizeof(iv)), 0);
    assert_int_equal(mbedtls_gcm_update(&ctx, buf, sizeof(buf), buf, 2, &olen),
                     MBEDTLS_ERR_GCM_BUFFER_TOO_SMALL);
    assert_int_equal(mbedtls_gcm_finish(&ctx, NULL, 0, &olen, tag, 3), MBEDTLS_ERR_GCM_BAD_INPUT);
    assert_int_equal(mbedtls_gcm_auth_decrypt(&ctx, sizeof(buf), iv, sizeof(iv), NULL, 0, tag, 17, buf, buf),
                     MBEDTLS_ERR_GCM_BAD_INPUT);
    mbedtls_gcm_free(&ctx);
}

/* mbedTLS's own self-tests on the same modules: the GCM specification's 18 cases, RFC 8439's. */
static void library_self_tests(void **state)
{
    (void)state;
    assert_int_equal(mbedtls_gcm_self_test(0), 0);
    assert_int_equal(mbedtls_chachapoly_self_test(0), 0);
}

static int setup(void **state)
{
    (void)state;
    return psa_crypto_init() == PSA_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    mbedtls_psa_crypto_free();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gcm_nist_vectors),       cmocka_unit_test(chachapoly_rfc8439_vectors),
        cmocka_unit_test(chachapoly_without_key), cmocka_unit_test(gcm_bad_parameters),
        cmocka_unit_test(library_self_tests),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

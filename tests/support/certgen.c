/* SPDX-License-Identifier: Apache-2.0 */
/* Run-time test PKI on mbedTLS's certificate writer. */
#include "certgen.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <mbedtls/asn1.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_text(const char *dir, const char *name, const char *suffix, const unsigned char *text)
{
    char path[512];
    FILE *f;
    int ok;

    snprintf(path, sizeof(path), "%s/%s.%s.pem", dir, name, suffix);
    f = fopen(path, "w");
    if (f == NULL) {
        return -1;
    }
    ok = fputs((const char *)text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int certgen_make(const char *dir, const char *name, const char *cn, const char *issuer, bool client_auth)
{
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context rng;
    mbedtls_pk_context key, issuer_key;
    mbedtls_x509_crt issuer_crt;
    mbedtls_x509write_cert w;
    mbedtls_asn1_sequence eku;
    mbedtls_x509_san_list san[3];
    unsigned char ip4[4];
    unsigned char serial[8] = {0x01};
    unsigned char *pem = malloc(8192);
    char subject[256], path[512];
    int ret;

    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&rng);
    mbedtls_pk_init(&key);
    mbedtls_pk_init(&issuer_key);
    mbedtls_x509_crt_init(&issuer_crt);
    mbedtls_x509write_crt_init(&w);
    ret = pem == NULL ? -1 : mbedtls_ctr_drbg_seed(&rng, mbedtls_entropy_func, &entropy, NULL, 0);
    if (ret == 0) {
        ret = mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
    }
    if (ret == 0) {
        ret =
            mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key), mbedtls_ctr_drbg_random, &rng);
    }
    if (ret == 0 && issuer != NULL) {
        snprintf(path, sizeof(path), "%s/%s.crt.pem", dir, issuer);
        ret = mbedtls_x509_crt_parse_file(&issuer_crt, path);
        if (ret == 0) {
            snprintf(path, sizeof(path), "%s/%s.key.pem", dir, issuer);
            ret = mbedtls_pk_parse_keyfile(&issuer_key, path, NULL, mbedtls_ctr_drbg_random, &rng);
        }
    }
    if (ret != 0) {
        goto out;
    }
    mbedtls_ctr_drbg_random(&rng, serial + 1, sizeof(serial) - 1);
    snprintf(subject, sizeof(subject), "CN=%s", cn);
    mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&w, &key);
    mbedtls_x509write_crt_set_issuer_key(&w, issuer != NULL ? &issuer_key : &key);
    ret = mbedtls_x509write_crt_set_subject_name(&w, subject);
    if (ret == 0) {
        char issuer_name[256];

        if (issuer != NULL) {
            mbedtls_x509_dn_gets(issuer_name, sizeof(issuer_name), &issuer_crt.subject);
        }
        ret = mbedtls_x509write_crt_set_issuer_name(&w, issuer != NULL ? issuer_name : subject);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_serial_raw(&w, serial, sizeof(serial));
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_validity(&w, "20200101000000", "20991231235959");
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_basic_constraints(&w, issuer == NULL, -1);
    }
    if (ret == 0 && issuer != NULL) {
        memset(&eku, 0, sizeof(eku));
        eku.buf.tag = MBEDTLS_ASN1_OID;
        eku.buf.p = (unsigned char *)(client_auth ? MBEDTLS_OID_CLIENT_AUTH : MBEDTLS_OID_SERVER_AUTH);
        eku.buf.len = client_auth ? MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH)
                                  : MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH);
        ret = mbedtls_x509write_crt_set_ext_key_usage(&w, &eku);
    }
    if (ret == 0 && issuer != NULL && !client_auth) {
        inet_pton(AF_INET, "127.0.0.1", ip4);
        memset(san, 0, sizeof(san));
        san[0].node.type = MBEDTLS_X509_SAN_DNS_NAME;
        san[0].node.san.unstructured_name.p = (unsigned char *)"localhost";
        san[0].node.san.unstructured_name.len = 9;
        san[0].next = &san[1];
        san[1].node.type = MBEDTLS_X509_SAN_IP_ADDRESS;
        san[1].node.san.unstructured_name.p = ip4;
        san[1].node.san.unstructured_name.len = 4;
        if (strcmp(cn, "localhost") != 0) {
            /* the common name as a DNS name too, for services ("NAME.NAMESPACE.svc") */
            san[1].next = &san[2];
            san[2].node.type = MBEDTLS_X509_SAN_DNS_NAME;
            san[2].node.san.unstructured_name.p = (unsigned char *)cn;
            san[2].node.san.unstructured_name.len = strlen(cn);
        }
        ret = mbedtls_x509write_crt_set_subject_alternative_name(&w, san);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_pem(&w, pem, 8192, mbedtls_ctr_drbg_random, &rng);
    }
    if (ret == 0) {
        ret = write_text(dir, name, "crt", pem);
    }
    if (ret == 0) {
        ret = mbedtls_pk_write_key_pem(&key, pem, 8192);
    }
    if (ret == 0) {
        ret = write_text(dir, name, "key", pem);
    }
out:
    mbedtls_x509write_crt_free(&w);
    mbedtls_x509_crt_free(&issuer_crt);
    mbedtls_pk_free(&issuer_key);
    mbedtls_pk_free(&key);
    mbedtls_ctr_drbg_free(&rng);
    mbedtls_entropy_free(&entropy);
    free(pem);
    return ret == 0 ? 0 : -1;
}

int certgen_tempdir(char *out, unsigned long out_len)
{
    const char *base = getenv("TMPDIR");

    snprintf(out, out_len, "%s/admitd-test.XXXXXX", base != NULL ? base : "/tmp");
    return mkdtemp(out) != NULL ? 0 : -1;
}

void certgen_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL) {
        return;
    }
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        char path[1024];

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

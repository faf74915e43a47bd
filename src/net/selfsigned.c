/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default server certificate when no --tls-cert-file is given: a fresh ECDSA P-256 key (a full
 * handshake costs the server about half what RSA-2048 costs with mbedTLS) and a certificate that
 * signs itself, with CA:TRUE so curl's --cacert, Go's x509 pools and kube-apiserver's caBundle all
 * accept it as its own trust anchor. --self-signed-ca-out publishes it for those clients.
 */
#include "adm/base/error.h"
#include "tls_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <mbedtls/asn1.h>
#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PEM_MAX 4096 /* a P-256 certificate with these extensions is about 800 bytes of PEM */
#define FLAG "--self-signed-ca-out"

static int mbed_fail(int ret, const char *what, char *err, size_t err_len)
{
    char text[128];

    mbedtls_strerror(ret, text, sizeof(text));
    snprintf(err, err_len, "generating the self-signed certificate: %s: %s", what, text);
    return ADM_ETLS;
}

static void format_time(time_t t, char out[15])
{
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(out, 15, "%Y%m%d%H%M%S", &tm);
}

/*
 * Writes the PEM to a temporary file next to path and renames it over path, so a client reading
 * the file never sees half a certificate. The mode is set explicitly: the file is public, and a
 * restrictive umask must not keep other users' clients from trusting it.
 */
static int write_pem(const char *path, const unsigned char *pem, char *err, size_t err_len)
{
    char tmp[4096];
    size_t len = strlen((const char *)pem);
    size_t done = 0;
    int fd = -1;
    int n;
    int e = EIO;

    n = snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        snprintf(err, err_len, FLAG " %s: path too long", path);
        return ADM_EINVAL;
    }
    fd = mkstemp(tmp);
    if (fd < 0) {
        e = errno;
        tmp[0] = '\0';
        goto fail;
    }
    if (fchmod(fd, 0644) != 0) {
        e = errno;
        goto fail;
    }
    while (done < len) {
        ssize_t w = write(fd, pem + done, len - done);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            e = errno;
            goto fail;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) {
        e = errno;
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        e = errno;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        e = errno;
        goto fail;
    }
    return 0;

fail:
    if (fd >= 0) {
        close(fd);
    }
    if (tmp[0] != '\0') {
        unlink(tmp);
    }
    snprintf(err, err_len, FLAG " %s: cannot write: %s", path, strerror(e));
    return -e;
}

int adm__selfsigned_generate(mbedtls_pk_context *key, mbedtls_x509_crt *crt, mbedtls_ctr_drbg_context *rng,
                             const char *pem_out, char *err, size_t err_len)
{
    mbedtls_x509write_cert w;
    unsigned char serial[16];
    unsigned char pem[PEM_MAX];
    unsigned char ip4[4], ip6[16];
    char not_before[15], not_after[15];
    mbedtls_x509_san_list san[3];
    mbedtls_asn1_sequence eku;
    time_t now = time(NULL);
    int ret;

    mbedtls_x509write_crt_init(&w);
    ret = mbedtls_pk_setup(key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
    if (ret != 0) {
        ret = mbed_fail(ret, "key setup", err, err_len);
        goto out;
    }
    ret = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*key), mbedtls_ctr_drbg_random, rng);
    if (ret != 0) {
        ret = mbed_fail(ret, "P-256 key generation", err, err_len);
        goto out;
    }
    ret = mbedtls_ctr_drbg_random(rng, serial, sizeof(serial));
    if (ret != 0) {
        ret = mbed_fail(ret, "serial number", err, err_len);
        goto out;
    }
    /* DER integers are signed: clear the top bit, and keep the first byte nonzero (16 bytes). */
    serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x01);

    inet_pton(AF_INET, "127.0.0.1", ip4);
    inet_pton(AF_INET6, "::1", ip6);
    memset(san, 0, sizeof(san));
    san[0].node.type = MBEDTLS_X509_SAN_DNS_NAME;
    san[0].node.san.unstructured_name.p = (unsigned char *)"localhost";
    san[0].node.san.unstructured_name.len = strlen("localhost");
    san[0].next = &san[1];
    san[1].node.type = MBEDTLS_X509_SAN_IP_ADDRESS;
    san[1].node.san.unstructured_name.p = ip4;
    san[1].node.san.unstructured_name.len = sizeof(ip4);
    san[1].next = &san[2];
    san[2].node.type = MBEDTLS_X509_SAN_IP_ADDRESS;
    san[2].node.san.unstructured_name.p = ip6;
    san[2].node.san.unstructured_name.len = sizeof(ip6);
    san[2].next = NULL;

    memset(&eku, 0, sizeof(eku));
    eku.buf.tag = MBEDTLS_ASN1_OID;
    eku.buf.p = (unsigned char *)MBEDTLS_OID_SERVER_AUTH;
    eku.buf.len = MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH);

    /* Valid from an hour ago, so a client whose clock runs a little behind still accepts it. */
    format_time(now - 3600, not_before);
    format_time(now + 365 * 24 * 3600, not_after);

    mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&w, key);
    mbedtls_x509write_crt_set_issuer_key(&w, key);
    ret = mbedtls_x509write_crt_set_subject_name(&w, "CN=admitd");
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_issuer_name(&w, "CN=admitd");
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_serial_raw(&w, serial, sizeof(serial));
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_validity(&w, not_before, not_after);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_basic_constraints(&w, 1, -1);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_key_usage(&w, MBEDTLS_X509_KU_DIGITAL_SIGNATURE |
                                                          MBEDTLS_X509_KU_KEY_CERT_SIGN);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_ext_key_usage(&w, &eku);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_subject_alternative_name(&w, san);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_subject_key_identifier(&w);
    }
    if (ret == 0) {
        ret = mbedtls_x509write_crt_set_authority_key_identifier(&w);
    }
    if (ret != 0) {
        ret = mbed_fail(ret, "certificate fields", err, err_len);
        goto out;
    }
    ret = mbedtls_x509write_crt_pem(&w, pem, sizeof(pem), mbedtls_ctr_drbg_random, rng);
    if (ret != 0) {
        ret = mbed_fail(ret, "signing", err, err_len);
        goto out;
    }
    ret = mbedtls_x509_crt_parse(crt, pem, strlen((const char *)pem) + 1);
    if (ret != 0) {
        ret = mbed_fail(ret, "parsing it back", err, err_len);
        goto out;
    }
    if (pem_out != NULL) {
        ret = write_pem(pem_out, pem, err, err_len);
    }
out:
    mbedtls_x509write_crt_free(&w);
    return ret;
}

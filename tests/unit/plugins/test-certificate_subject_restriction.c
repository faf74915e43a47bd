/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CertificateSubjectRestriction with CSRs made at run time (mbedTLS, ECDSA P-256): system:masters
 * refused only for the kube-apiserver-client signer, other subjects and signers admitted, and every
 * kind of unparsable request refused with "failed to parse CSR".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/base64.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_csr.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/net/tls.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_certificate_subject_restriction;

static adm_arena_t *arena;
static mbedtls_entropy_context entropy;
static mbedtls_ctr_drbg_context rng;
static mbedtls_pk_context key;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    adm_tls_global_init();
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&rng);
    mbedtls_pk_init(&key);
    return arena == NULL || mbedtls_ctr_drbg_seed(&rng, mbedtls_entropy_func, &entropy, NULL, 0) != 0 ||
           mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
           mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key), mbedtls_ctr_drbg_random, &rng) !=
               0;
}

static int teardown(void **state)
{
    mbedtls_pk_free(&key);
    mbedtls_ctr_drbg_free(&rng);
    mbedtls_entropy_free(&entropy);
    adm_tls_global_cleanup();
    adm_arena_destroy(arena);
    return 0;
}

/* A PEM CSR for subject (e.g. "CN=alice,O=system:masters"), base64-encoded again as JSON []byte. */
static const char *csr_b64(const char *subject)
{
    mbedtls_x509write_csr w;
    unsigned char pem[4096];
    unsigned char *b64 = adm_arena_alloc(arena, 8192);
    size_t olen = 0;

    mbedtls_x509write_csr_init(&w);
    mbedtls_x509write_csr_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_csr_set_key(&w, &key);
    assert_int_equal(mbedtls_x509write_csr_set_subject_name(&w, subject), 0);
    assert_int_equal(mbedtls_x509write_csr_pem(&w, pem, sizeof(pem), mbedtls_ctr_drbg_random, &rng), 0);
    mbedtls_x509write_csr_free(&w);
    assert_int_equal(mbedtls_base64_encode(b64, 8192, &olen, pem, strlen((char *)pem)), 0);
    return (const char *)b64;
}

static const char *b64_of(const char *text)
{
    unsigned char *b64 = adm_arena_alloc(arena, strlen(text) * 2 + 8);
    size_t olen = 0;

    assert_int_equal(
        mbedtls_base64_encode(b64, strlen(text) * 2 + 8, &olen, (const unsigned char *)text, strlen(text)),
        0);
    return (const char *)b64;
}

static pt_result_t check(const char *signer, const char *request_b64, const char *op,
                         const char *sub_resource)
{
    pt_request_t r = {.operation = op,
                      .group = "certificates.k8s.io",
                      .resource = "certificatesigningrequests",
                      .sub_resource = sub_resource,
                      .kind = "CertificateSigningRequest",
                      .name = "csr-1"};

    r.object = adm_arena_printf(arena,
                                "{\"metadata\":{\"name\":\"csr-1\"},\"spec\":{\"signerName\":\"%s\","
                                "\"request\":\"%s\",\"usages\":[\"client auth\"]}}",
                                signer, request_b64);
    return pt_run(arena, &adm_plugin_certificate_subject_restriction, NULL, 'v', &r);
}

#define CLIENT "kubernetes.io/kube-apiserver-client"

static void expect_parse_failure(const char *request_b64, const char *reason_prefix)
{
    pt_result_t res = check(CLIENT, request_b64, "CREATE", NULL);
    char want[256];

    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 403);
    snprintf(want, sizeof(want),
             "certificatesigningrequests.certificates.k8s.io \"csr-1\" is forbidden: "
             "failed to parse CSR: %s",
             reason_prefix);
    if (strncmp(res.status.message, want, strlen(want)) != 0) {
        fail_msg("got  %s\nwant %s...", res.status.message, want);
    }
}

static void test_masters_refused(void **state)
{
    pt_result_t res;

    adm_arena_reset(arena);
    res = check(CLIENT, csr_b64("CN=alice,O=system:masters"), "CREATE", NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 403);
    assert_string_equal(res.status.reason, "Forbidden");
    assert_string_equal(res.status.message,
                        "certificatesigningrequests.certificates.k8s.io \"csr-1\" is forbidden: "
                        "use of kubernetes.io/kube-apiserver-client signer with system:masters "
                        "group is not allowed");
    {
        yyjson_alc alc;

        adm_json_alc_init(&alc, arena);
        assert_json_equal(
            yyjson_val_write_opts(res.status.details, 0, &alc, NULL, NULL),
            "{\"name\":\"csr-1\",\"group\":\"certificates.k8s.io\",\"kind\":\"certificatesigningrequests\"}");
    }
    /* Among other attributes (mbedTLS's writer keeps one value per attribute type, so one O). */
    res = check(CLIENT, csr_b64("CN=bob,OU=devs,O=system:masters,L=Berlin,C=DE"), "CREATE", NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
}

static void test_others_admitted(void **state)
{
    adm_arena_reset(arena);
    assert_int_equal(check(CLIENT, csr_b64("CN=alice,O=devs"), "CREATE", NULL).rc, ADM_OK);
    assert_int_equal(check(CLIENT, csr_b64("CN=system:masters"), "CREATE", NULL).rc,
                     ADM_OK); /* CN is not O */
    assert_int_equal(check(CLIENT, csr_b64("CN=alice,O=system:masters2"), "CREATE", NULL).rc, ADM_OK);
    /* Other signers are not this plugin's business, even with garbage. */
    assert_int_equal(
        check("kubernetes.io/kubelet-serving", csr_b64("CN=x,O=system:masters"), "CREATE", NULL).rc, ADM_OK);
    assert_int_equal(check("example.com/signer", "bm90IGEgQ1NS", "CREATE", NULL).rc, ADM_OK);
    /* Subresources (approval, status) are skipped; only CREATE is handled at all. */
    assert_int_equal(check(CLIENT, "bm90IGEgQ1NS", "UPDATE", "approval").rc, ADM_OK);
    assert_int_equal(adm_plugin_certificate_subject_restriction.operations, ADM_OPS_CREATE);
}

/*
 * A CSR with an Ed25519 key, which Go parses and mbedTLS does not: DER assembled by hand with
 * O=<org> (14 bytes) and zero key and signature bytes (admission does not verify signatures).
 */
static const char *ed25519_csr_b64(const char *org)
{
    unsigned char der[155];
    size_t n = 0;
    unsigned char pem_body[256];
    size_t olen = 0;
    char pem[512];

    assert_int_equal(strlen(org), 14);
#define PUT(...)                                                                                             \
    do {                                                                                                     \
        const unsigned char b_[] = {__VA_ARGS__};                                                            \
        memcpy(der + n, b_, sizeof(b_));                                                                     \
        n += sizeof(b_);                                                                                     \
    } while (0)
    PUT(0x30, 0x81, 0x98); /* CertificationRequest */
    PUT(0x30, 0x4c);       /* CertificationRequestInfo */
    PUT(0x02, 0x01, 0x00); /* version 0 */
    PUT(0x30, 0x19, 0x31, 0x17, 0x30, 0x15, 0x06, 0x03, 0x55, 0x04, 0x0a, 0x0c, 0x0e); /* Name: O= */
    memcpy(der + n, org, 14);
    n += 14;
    PUT(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00); /* SPKI: id-Ed25519 */
    memset(der + n, 0x11, 32);
    n += 32;
    PUT(0xa0, 0x00);                               /* no attributes */
    PUT(0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70); /* signatureAlgorithm */
    PUT(0x03, 0x41, 0x00);
    memset(der + n, 0x22, 64);
    n += 64;
#undef PUT
    assert_int_equal(n, sizeof(der));
    assert_int_equal(mbedtls_base64_encode(pem_body, sizeof(pem_body), &olen, der, n), 0);
    snprintf(pem, sizeof(pem), "-----BEGIN CERTIFICATE REQUEST-----\n%s\n-----END CERTIFICATE REQUEST-----\n",
             (char *)pem_body);
    return b64_of(pem);
}

static void test_keys_mbedtls_cannot_parse(void **state)
{
    pt_result_t res;

    adm_arena_reset(arena);
    res = check(CLIENT, ed25519_csr_b64("system:masters"), "CREATE", NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_non_null(
        strstr(res.status.message, "use of kubernetes.io/kube-apiserver-client signer with system:masters"));
    assert_int_equal(check(CLIENT, ed25519_csr_b64("system:devs-ok"), "CREATE", NULL).rc, ADM_OK);
}

static void test_unparsable(void **state)
{
    char *pem;
    size_t len;
    const char *good;
    unsigned char der_pem[8192];
    size_t olen = 0;

    adm_arena_reset(arena);
    expect_parse_failure(b64_of("not a CSR"), "PEM block type must be CERTIFICATE REQUEST");
    expect_parse_failure("", "PEM block type must be CERTIFICATE REQUEST");
    expect_parse_failure("!!! not base64", "spec.request is not valid base64");
    expect_parse_failure(b64_of("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
                         "PEM block type must be CERTIFICATE REQUEST");
    expect_parse_failure(b64_of("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n"),
                         "PEM block type must be CERTIFICATE REQUEST");
    expect_parse_failure(
        b64_of("-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQA=\n-----END CERTIFICATE REQUEST-----\n"),
        "x509: malformed certificate request");
    /* A real CSR cut short inside its DER. */
    good = csr_b64("CN=alice,O=system:masters");
    assert_int_equal(
        mbedtls_base64_decode(der_pem, sizeof(der_pem), &olen, (const unsigned char *)good, strlen(good)), 0);
    der_pem[olen] = '\0';
    pem = strstr((char *)der_pem, "\n-----END");
    assert_non_null(pem);
    len = (size_t)(pem - (char *)der_pem);
    memmove((char *)der_pem + len - 40, pem, strlen(pem) + 1); /* drop 40 base64 chars before the end line */
    expect_parse_failure(b64_of((char *)der_pem), "x509: malformed certificate request");
    /* Leading text before the block is allowed, as pem.Decode skips it. */
    {
        char *with_text = adm_arena_alloc(arena, olen + 64);

        assert_int_equal(
            mbedtls_base64_decode(der_pem, sizeof(der_pem), &olen, (const unsigned char *)good, strlen(good)),
            0);
        der_pem[olen] = '\0';
        snprintf(with_text, olen + 64, "Certificate request:\n%s", der_pem);
        assert_int_equal(check(CLIENT, b64_of(with_text), "CREATE", NULL).rc, ADM_DECLINED);
        assert_non_null(
            strstr(check(CLIENT, b64_of(with_text), "CREATE", NULL).status.message, "system:masters group"));
    }
    /* Not a CSR object at all. */
    {
        pt_request_t r = {.operation = "CREATE",
                          .group = "certificates.k8s.io",
                          .resource = "certificatesigningrequests",
                          .kind = "Pod",
                          .name = "x",
                          .object = "{}"};
        pt_result_t res = pt_run(arena, &adm_plugin_certificate_subject_restriction, NULL, 'v', &r);

        assert_int_equal(res.rc, ADM_DECLINED);
        assert_string_equal(res.status.message,
                            "certificatesigningrequests.certificates.k8s.io \"x\" is forbidden: "
                            "expected type CertificateSigningRequest, got: Pod");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masters_refused),
        cmocka_unit_test(test_others_admitted),
        cmocka_unit_test(test_unparsable),
        cmocka_unit_test(test_keys_mbedtls_cannot_parse),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CertificateSubjectRestriction: a CertificateSigningRequest for the
 * kubernetes.io/kube-apiserver-client signer may not ask for the system:masters group (subject
 * O=system:masters), which would be cluster-admin that RBAC cannot take away.
 *
 * kube decodes the first PEM block of spec.request (it must be a CERTIFICATE REQUEST) and parses it
 * with Go's x509.ParseCertificateRequest. admitd parses with mbedTLS; for public-key algorithms
 * mbedTLS does not know (Ed25519, ...) it reads the subject straight from the DER, so such CSRs are
 * judged like any other. Go's own parse error texts cannot be reproduced; admitd's say the same thing.
 */
#include "adm/error.h"
#include "adm/plugin.h"

#include <mbedtls/asn1.h>
#include <mbedtls/base64.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_csr.h>
#include <stdlib.h>
#include <string.h>

#define SIGNER "kubernetes.io/kube-apiserver-client"
#define BEGIN "-----BEGIN "
#define PEM_TYPE_ERROR "PEM block type must be CERTIFICATE REQUEST"

/*
 * Go's pem.Decode, as far as ParseCSR needs it: the first "-----BEGIN TYPE-----" ... "-----END
 * TYPE-----" block. Sets *der (arena) or returns the reason it is not a CSR block.
 */
static const char *pem_csr_der(adm_arena_t *a, const char *pem, size_t len, unsigned char **der, size_t *der_len)
{
    const char *end = pem + len;
    const char *p = pem;
    const char *type, *type_end, *body, *body_end;
    char footer[80];
    size_t type_len, olen = 0;
    unsigned char *clean;
    size_t n = 0;

    while ((p = memchr(p, '-', (size_t)(end - p))) != NULL) {
        if ((size_t)(end - p) >= sizeof(BEGIN) - 1 && memcmp(p, BEGIN, sizeof(BEGIN) - 1) == 0 &&
            (p == pem || p[-1] == '\n')) {
            break;
        }
        p++;
    }
    if (p == NULL) {
        return PEM_TYPE_ERROR;
    }
    type = p + sizeof(BEGIN) - 1;
    type_end = type;
    while (type_end < end && *type_end != '-' && *type_end != '\n') {
        type_end++;
    }
    type_len = (size_t)(type_end - type);
    if ((size_t)(end - type_end) < 5 || memcmp(type_end, "-----", 5) != 0 || type_len != strlen("CERTIFICATE REQUEST") ||
        memcmp(type, "CERTIFICATE REQUEST", type_len) != 0) {
        return PEM_TYPE_ERROR;
    }
    body = type_end + 5;
    snprintf(footer, sizeof(footer), "-----END CERTIFICATE REQUEST-----");
    for (body_end = body; body_end + strlen(footer) <= end; body_end++) {
        if (memcmp(body_end, footer, strlen(footer)) == 0) {
            break;
        }
    }
    if (body_end + strlen(footer) > end) {
        return PEM_TYPE_ERROR; /* no end line: pem.Decode finds no block */
    }
    /* base64 without the line breaks */
    clean = adm_arena_alloc(a, (size_t)(body_end - body) + 1);
    *der = adm_arena_alloc(a, (size_t)(body_end - body) + 1);
    if (clean == NULL || *der == NULL) {
        return NULL;
    }
    for (const char *q = body; q < body_end; q++) {
        if (*q != '\n' && *q != '\r' && *q != ' ' && *q != '\t') {
            clean[n++] = (unsigned char)*q;
        }
    }
    if (mbedtls_base64_decode(*der, (size_t)(body_end - body) + 1, &olen, clean, n) != 0) {
        return PEM_TYPE_ERROR;
    }
    *der_len = olen;
    return "";
}

static bool name_has_masters(const mbedtls_x509_name *name)
{
    static const char masters[] = "system:masters";

    for (; name != NULL; name = name->next) {
        if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_ORGANIZATION, &name->oid) == 0 && name->val.len == sizeof(masters) - 1 &&
            memcmp(name->val.p, masters, sizeof(masters) - 1) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether a DER Name (SEQUENCE OF SET OF {type OID, value}) has O=system:masters. */
static int name_der_has_masters(unsigned char *p, const unsigned char *end, bool *found)
{
    static const char masters[] = "system:masters";
    size_t n;
    int rc;

    *found = false;
    while (p < end) {
        const unsigned char *set_end;

        if ((rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET)) != 0) {
            return rc;
        }
        set_end = p + n;
        while (p < set_end) {
            const unsigned char *atv_end;
            mbedtls_asn1_buf oid;

            if ((rc = mbedtls_asn1_get_tag(&p, set_end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) != 0) {
                return rc;
            }
            atv_end = p + n;
            if ((rc = mbedtls_asn1_get_tag(&p, atv_end, &oid.len, MBEDTLS_ASN1_OID)) != 0) {
                return rc;
            }
            oid.tag = MBEDTLS_ASN1_OID;
            oid.p = p;
            p += oid.len;
            if (p + 2 > atv_end) {
                return MBEDTLS_ERR_ASN1_OUT_OF_DATA;
            }
            p++; /* the value's string type (UTF8String, PrintableString, ...) */
            if ((rc = mbedtls_asn1_get_len(&p, atv_end, &n)) != 0) {
                return rc;
            }
            if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_ORGANIZATION, &oid) == 0 && n == sizeof(masters) - 1 &&
                memcmp(p, masters, n) == 0) {
                *found = true;
            }
            p = (unsigned char *)atv_end;
        }
    }
    return 0;
}

/* The subject of a CertificationRequest read from the DER, for keys mbedTLS cannot parse. */
static int subject_has_masters(unsigned char *der, size_t len, bool *found)
{
    unsigned char *p = der;
    const unsigned char *end = der + len;
    size_t n;
    int version;
    int rc;

    if ((rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) != 0 ||
        (rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) != 0 ||
        (rc = mbedtls_asn1_get_int(&p, end, &version)) != 0 ||
        (rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) != 0) {
        return rc;
    }
    return name_der_has_masters(p, p + n, found);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *csr;
    const char *signer;
    yyjson_val *request;
    unsigned char *pem, *der = NULL;
    size_t pem_len = 0, der_len = 0;
    const char *problem;
    mbedtls_x509_csr parsed;
    bool masters = false;
    int rc;

    if (!adm_attrs_is(attrs, "certificates.k8s.io", "certificatesigningrequests")) {
        return ADM_OK;
    }
    csr = adm_attrs_object(attrs);
    if (csr == NULL || !adm_attrs_kind_is(attrs, "certificates.k8s.io", "CertificateSigningRequest")) {
        return adm_status_forbidden(st, attrs, "expected type CertificateSigningRequest, got: %s",
                                    attrs->req->kind.kind[0] != '\0' ? attrs->req->kind.kind : "<nil>");
    }
    signer = adm_json_str(adm_json_get(csr, "spec"), "signerName");
    if (strcmp(signer, SIGNER) != 0) {
        return ADM_OK;
    }
    /* spec.request is []byte: base64 in JSON */
    request = adm_json_path(csr, "spec", "request", NULL);
    pem = adm_arena_alloc(attrs->arena, yyjson_get_len(request) + 1);
    if (pem == NULL) {
        return ADM_ENOMEM;
    }
    if (!yyjson_is_str(request) || mbedtls_base64_decode(pem, yyjson_get_len(request) + 1, &pem_len,
                                                         (const unsigned char *)yyjson_get_str(request),
                                                         yyjson_get_len(request)) != 0) {
        pem_len = 0;
    }
    problem = pem_csr_der(attrs->arena, (const char *)pem, pem_len, &der, &der_len);
    if (problem == NULL) {
        return ADM_ENOMEM;
    }
    if (problem[0] != '\0') {
        return adm_status_forbidden(st, attrs, "failed to parse CSR: %s", problem);
    }
    mbedtls_x509_csr_init(&parsed);
    rc = mbedtls_x509_csr_parse_der(&parsed, der, der_len);
    if (rc == 0) {
        masters = name_has_masters(&parsed.subject);
    } else if (((-rc) & 0xff80) == -MBEDTLS_ERR_PK_UNKNOWN_PK_ALG ||
               ((-rc) & 0xff80) == -MBEDTLS_ERR_PK_KEY_INVALID_FORMAT || ((-rc) & 0x007f) == -MBEDTLS_ERR_OID_NOT_FOUND) {
        /* a key mbedTLS cannot parse: judge the subject anyway, as Go would parse the CSR */
        rc = subject_has_masters(der, der_len, &masters);
    } else {
        masters = false;
    }
    mbedtls_x509_csr_free(&parsed);
    if (rc != 0) {
        char reason[128];

        mbedtls_strerror(rc, reason, sizeof(reason));
        return adm_status_forbidden(st, attrs, "failed to parse CSR: x509: malformed certificate request (%s)", reason);
    }
    if (masters) {
        return adm_status_forbidden(st, attrs, "use of %s signer with system:masters group is not allowed", SIGNER);
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_certificate_subject_restriction = {
    .name = "CertificateSubjectRestriction",
    .operations = ADM_OPS_CREATE,
    .validate = validate,
};

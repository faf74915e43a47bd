/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PEM as encoding/pem.Decode finds its first block, PKCS#10 structure checked by mbedTLS, and the
 * subject read from the DER by hand so that requests with keys mbedTLS lacks are judged like the
 * rest. Everything is bounded by the input; nothing recurses.
 */
#include "adm/admission/csr.h"

#include "adm/base/error.h"

#include <mbedtls/asn1.h>
#include <mbedtls/base64.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_csr.h>
#include <stdio.h>
#include <string.h>

#define PEM_TYPE_ERROR "PEM block type must be CERTIFICATE REQUEST"

/*
 * encoding/pem.Decode's first block: a "-----BEGIN <type>-----" line at the start of data or of a
 * line, with a matching END line. Returns its type (arena) and the base64 body between the two
 * lines, or NULL when there is no block (or the arena is exhausted: *oom set).
 */
static const char *first_pem_block(adm_arena_t *a, const char *data, size_t len, const char **body,
                                   size_t *body_len, bool *oom)
{
    static const char begin[] = "-----BEGIN ";
    const char *p = data;
    const char *end = data + len;

    *oom = false;
    while (p < end) {
        const char *b = memmem(p, (size_t)(end - p), begin, sizeof(begin) - 1);
        const char *type, *eol, *type_end, *f;
        char *name, *footer;

        if (b == NULL) {
            return NULL;
        }
        p = b + 1;
        if (b != data && b[-1] != '\n') {
            continue;
        }
        type = b + sizeof(begin) - 1;
        eol = memchr(type, '\n', (size_t)(end - type));
        type_end = eol != NULL ? eol : end;
        while (type_end > type && (type_end[-1] == '\r' || type_end[-1] == ' ' || type_end[-1] == '\t')) {
            type_end--;
        }
        if (type_end - type < 5 || memcmp(type_end - 5, "-----", 5) != 0) {
            continue;
        }
        name = adm_arena_strndup(a, type, (size_t)(type_end - 5 - type));
        footer = name != NULL ? adm_arena_printf(a, "-----END %s-----", name) : NULL;
        if (footer == NULL) {
            *oom = true;
            return NULL;
        }
        f = memmem(type_end, (size_t)(end - type_end), footer, strlen(footer));
        if (f == NULL) {
            continue;
        }
        *body = type_end;
        *body_len = (size_t)(f - type_end);
        return name;
    }
    return NULL;
}

/* Appends one AttributeTypeAndValue of a Name. */
static int add_attr(adm_arena_t *a, adm_csr_t *out, size_t *cap, const adm_csr_attr_t *attr)
{
    if (out->nsubject == *cap) {
        size_t ncap = *cap == 0 ? 8 : *cap * 2;
        adm_csr_attr_t *g = adm_arena_realloc(a, out->subject, *cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return ADM_ENOMEM;
        }
        out->subject = g;
        *cap = ncap;
    }
    out->subject[out->nsubject++] = *attr;
    return 0;
}

/* CertificationRequest { CertificationRequestInfo { version, subject Name, ... }, ... }: the Name. */
static int read_subject(adm_arena_t *a, unsigned char *der, size_t len, adm_csr_t *out)
{
    unsigned char *p = der;
    const unsigned char *end = der + len;
    const unsigned char *name_end;
    size_t n, cap = 0;
    int version;
    int rc;

    /* the request, its info, the version, the subject Name */
    rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
    if (rc == 0) {
        rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
    }
    if (rc == 0) {
        rc = mbedtls_asn1_get_int(&p, end, &version);
    }
    if (rc == 0) {
        rc = mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
    }
    if (rc != 0) {
        return rc;
    }
    name_end = p + n;
    while (p < name_end) { /* SEQUENCE OF SET OF AttributeTypeAndValue */
        const unsigned char *set_end;

        rc = mbedtls_asn1_get_tag(&p, name_end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET);
        if (rc != 0) {
            return rc;
        }
        set_end = p + n;
        while (p < set_end) {
            const unsigned char *atv_end;
            adm_csr_attr_t attr;

            rc = mbedtls_asn1_get_tag(&p, set_end, &n, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
            if (rc != 0) {
                return rc;
            }
            atv_end = p + n;
            rc = mbedtls_asn1_get_tag(&p, atv_end, &attr.oid_len, MBEDTLS_ASN1_OID);
            if (rc != 0) {
                return rc;
            }
            attr.oid = p;
            p += attr.oid_len;
            if (p >= atv_end) {
                return MBEDTLS_ERR_ASN1_OUT_OF_DATA;
            }
            attr.tag = *p++;
            rc = mbedtls_asn1_get_len(&p, atv_end, &attr.val_len);
            if (rc != 0) {
                return rc;
            }
            attr.val = p;
            rc = add_attr(a, out, &cap, &attr);
            if (rc != 0) {
                return rc;
            }
            p = (unsigned char *)atv_end;
        }
    }
    return 0;
}

/* Errors that mean "a key algorithm mbedTLS does not know", not a malformed request. */
static bool unknown_key(int rc)
{
    int high = (-rc) & 0xff80, low = (-rc) & 0x007f;

    return high == -MBEDTLS_ERR_PK_UNKNOWN_PK_ALG || high == -MBEDTLS_ERR_PK_KEY_INVALID_FORMAT ||
           low == -MBEDTLS_ERR_OID_NOT_FOUND;
}

int adm_csr_parse(adm_arena_t *a, const char *request_b64, size_t len, adm_csr_t *out, const char **error)
{
    unsigned char *pem, *der, *clean;
    size_t pem_len = 0, der_len = 0, n = 0, body_len;
    const char *type, *body;
    mbedtls_x509_csr csr;
    bool oom;
    int rc;

    memset(out, 0, sizeof(*out));
    *error = NULL;
    pem = adm_arena_alloc(a, len + 1);
    if (pem == NULL) {
        return ADM_ENOMEM;
    }
    if (mbedtls_base64_decode(pem, len + 1, &pem_len, (const unsigned char *)request_b64, len) != 0) {
        /* kube-apiserver decodes []byte before admission; only a hand-made review gets here */
        *error = "spec.request is not valid base64";
        return ADM_EPARSE;
    }
    type = first_pem_block(a, (const char *)pem, pem_len, &body, &body_len, &oom);
    if (oom) {
        return ADM_ENOMEM;
    }
    if (type == NULL || strcmp(type, "CERTIFICATE REQUEST") != 0) {
        *error = PEM_TYPE_ERROR;
        return ADM_EPARSE;
    }
    clean = adm_arena_alloc(a, body_len + 1);
    der = adm_arena_alloc(a, body_len + 1);
    if (clean == NULL || der == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < body_len; i++) {
        if (body[i] != '\n' && body[i] != '\r' && body[i] != ' ' && body[i] != '\t') {
            clean[n++] = (unsigned char)body[i];
        }
    }
    if (mbedtls_base64_decode(der, body_len + 1, &der_len, clean, n) != 0) {
        *error = PEM_TYPE_ERROR; /* pem.Decode finds no block in bad base64 */
        return ADM_EPARSE;
    }
    mbedtls_x509_csr_init(&csr);
    rc = mbedtls_x509_csr_parse_der(&csr, der, der_len);
    mbedtls_x509_csr_free(&csr);
    if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED) {
        return ADM_ENOMEM;
    }
    if (rc == 0 || unknown_key(rc)) {
        int rc2 = read_subject(a, der, der_len, out);

        if (rc2 == ADM_ENOMEM) {
            return rc2;
        }
        rc = rc2;
    }
    if (rc != 0) {
        char why[128];

        mbedtls_strerror(rc, why, sizeof(why));
        *error = adm_arena_printf(a, "x509: malformed certificate request (%s)", why);
        return *error != NULL ? ADM_EPARSE : ADM_ENOMEM;
    }
    return 0;
}

static bool oid_is(const adm_csr_attr_t *attr, const char *oid, size_t oid_len)
{
    return attr->oid_len == oid_len && memcmp(attr->oid, oid, oid_len) == 0;
}

bool adm_csr_has_organization(const adm_csr_t *csr, const char *value)
{
    size_t n = strlen(value);

    for (size_t i = 0; i < csr->nsubject; i++) {
        const adm_csr_attr_t *attr = &csr->subject[i];

        if (oid_is(attr, MBEDTLS_OID_AT_ORGANIZATION, MBEDTLS_OID_SIZE(MBEDTLS_OID_AT_ORGANIZATION)) &&
            attr->val_len == n && memcmp(attr->val, value, n) == 0) {
            return true;
        }
    }
    return false;
}

bool adm_csr_common_name_is(const adm_csr_t *csr, const char *want)
{
    const adm_csr_attr_t *cn = NULL;
    size_t wl = strlen(want);

    for (size_t i = 0; i < csr->nsubject; i++) {
        const adm_csr_attr_t *attr = &csr->subject[i];
        int tag = attr->tag;

        if (oid_is(attr, MBEDTLS_OID_AT_CN, MBEDTLS_OID_SIZE(MBEDTLS_OID_AT_CN)) &&
            (tag == MBEDTLS_ASN1_UTF8_STRING || tag == MBEDTLS_ASN1_PRINTABLE_STRING ||
             tag == MBEDTLS_ASN1_T61_STRING || tag == MBEDTLS_ASN1_IA5_STRING ||
             tag == 0x12 /* NumericString */ || tag == MBEDTLS_ASN1_BMP_STRING)) {
            cn = attr;
        }
    }
    if (cn == NULL) {
        return false; /* Go's CommonName is "" then */
    }
    if (cn->tag != MBEDTLS_ASN1_BMP_STRING) {
        return cn->val_len == wl && memcmp(cn->val, want, wl) == 0;
    }
    if (cn->val_len != 2 * wl) {
        return false;
    }
    for (size_t i = 0; i < wl; i++) {
        /* the names compared are ASCII */
        if (cn->val[2 * i] != 0 || cn->val[2 * i + 1] != (unsigned char)want[i]) {
            return false;
        }
    }
    return true;
}

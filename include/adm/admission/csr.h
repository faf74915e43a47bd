/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Certificate signing requests as kube's certificates API helpers read them (ParseCSR): the first
 * PEM block of a CertificateSigningRequest's spec.request must be a CERTIFICATE REQUEST, whose
 * PKCS#10 DER must parse. The plugins that judge CSRs only need the subject, which is returned as
 * its attributes in DER order.
 */
#ifndef ADM_CSR_H
#define ADM_CSR_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct adm_csr_attr_s {
    const unsigned char *oid; /* the attribute type's OID bytes, e.g. 55 04 03 for CN */
    size_t oid_len;
    int tag; /* the value's ASN.1 string type (UTF8String, PrintableString, BMPString ...) */
    const unsigned char *val;
    size_t val_len;
} adm_csr_attr_t;

typedef struct adm_csr_s {
    adm_csr_attr_t *subject; /* arena */
    size_t nsubject;
} adm_csr_t;

/**
 * Parses spec.request as given in JSON (base64 of the PEM text, len bytes). Returns 0; or
 * ADM_EPARSE with *error saying why, as kube would: "spec.request is not valid base64",
 * "PEM block type must be CERTIFICATE REQUEST", or "x509: malformed certificate request (<detail>)"
 * (Go's own x509 texts cannot be reproduced); or ADM_ENOMEM. Keys mbedTLS cannot parse (Ed25519,
 * ML-DSA ...) are accepted as Go accepts them: only the request's structure and subject are read.
 */
int adm_csr_parse(adm_arena_t *a, const char *request_b64, size_t len, adm_csr_t *out, const char **error);

/** True when the subject has an Organization (O) attribute equal to value. */
bool adm_csr_has_organization(const adm_csr_t *csr, const char *value);

/**
 * Go's pkix.Name.CommonName: the last CN of a string type (BMPString decoded from UTF-16 when it is
 * ASCII), compared with want; false when there is none.
 */
bool adm_csr_common_name_is(const adm_csr_t *csr, const char *want);

#endif

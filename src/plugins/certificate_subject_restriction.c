/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CertificateSubjectRestriction: a CertificateSigningRequest for the
 * kubernetes.io/kube-apiserver-client signer may not ask for the system:masters group (subject
 * O=system:masters), which would be cluster-admin that RBAC cannot take away. spec.request is read
 * as kube's ParseCSR reads it (adm/csr.h).
 */
#include "adm/admission/csr.h"
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <string.h>

#define SIGNER "kubernetes.io/kube-apiserver-client"

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *csr;
    yyjson_val *request;
    adm_csr_t parsed;
    const char *error;
    int rc;

    if (!adm_attrs_is(attrs, "certificates.k8s.io", "certificatesigningrequests")) {
        return ADM_OK;
    }
    csr = adm_attrs_object(attrs);
    if (csr == NULL || !adm_attrs_kind_is(attrs, "certificates.k8s.io", "CertificateSigningRequest")) {
        return adm_status_forbidden(st, attrs, "expected type CertificateSigningRequest, got: %s",
                                    attrs->req->kind.kind[0] != '\0' ? attrs->req->kind.kind : "<nil>");
    }
    if (strcmp(adm_json_str(adm_json_get(csr, "spec"), "signerName"), SIGNER) != 0) {
        return ADM_OK;
    }
    request = adm_json_path(csr, "spec", "request", NULL);
    rc = adm_csr_parse(attrs->arena, yyjson_is_str(request) ? yyjson_get_str(request) : "",
                       yyjson_get_len(request), &parsed, &error);
    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        return adm_status_forbidden(st, attrs, "failed to parse CSR: %s", error);
    }
    if (adm_csr_has_organization(&parsed, "system:masters")) {
        return adm_status_forbidden(st, attrs, "use of %s signer with system:masters group is not allowed",
                                    SIGNER);
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_certificate_subject_restriction = {
    .name = "CertificateSubjectRestriction",
    .operations = ADM_OPS_CREATE,
    .validate = validate,
};

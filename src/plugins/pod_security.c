/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity: the Pod Security Standards on pods (enforced), pod controllers (warned and
 * audited) and namespace label changes, as kube-apiserver's plugin wraps pod-security-admission.
 * Its PodSecurityConfiguration comes from the AdmissionConfiguration; namespaces and their pods
 * come from the cluster state. The policy engine is src/podsecurity/.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/podsecurity/admission.h"

#include <stdlib.h>

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_psa_config_t *c = calloc(1, sizeof(*c));
    char why[512];
    int rc;

    if (c == NULL) {
        snprintf(err, err_len, "PodSecurity: out of memory");
        return ADM_ENOMEM;
    }
    rc = adm_psa_config_decode(cfg->config, c, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s", cfg->source != NULL ? cfg->source : "PodSecurity", why);
        free(c);
        return rc;
    }
    *state = c;
    return 0;
}

static void free_state(void *state)
{
    if (state != NULL) {
        adm_psa_config_free(state);
        free(state);
    }
}

static uint64_t now_ns(void *arg)
{
    return adm_plugin_now_ns(arg);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return adm_psa_admit(state, attrs, now_ns, attrs, st);
}

const adm_plugin_t adm_plugin_pod_security = {
    .name = "PodSecurity",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .configure = configure,
    .free_state = free_state,
    .validate = validate,
};

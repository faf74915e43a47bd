/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceAutoProvision: kube's plugin creates the namespace of a CREATE that names one the
 * cluster does not have (a POST to the API server, not on dry run). admitd has no API connection
 * yet, so it cannot have that side effect: enabling the plugin stops admitd at start (exit 2)
 * with one line saying so, instead of admitting requests it was asked to provision for.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <stdio.h>

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    (void)cfg;
    (void)state;
    snprintf(err, err_len,
             "--enable-admission-plugins: NamespaceAutoProvision creates namespaces through the API server, "
             "and admitd has no API connection yet; disable it");
    return ADM_EINVAL;
}

const adm_plugin_t adm_plugin_namespace_auto_provision = {
    .name = "NamespaceAutoProvision",
    .operations = ADM_OPS_CREATE,
    .configure = configure,
};

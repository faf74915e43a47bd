/* SPDX-License-Identifier: Apache-2.0 */
/* AlwaysAdmit: admits everything; deprecated in kube-apiserver, which warns at start as admitd does. */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_log_warn("AlwaysAdmit admission controller is deprecated. Please remove this controller from your "
                 "configuration files and scripts.");
    return 0;
}

const adm_plugin_t adm_plugin_always_admit = {
    .name = "AlwaysAdmit",
    .operations = ADM_OPS_ALL,
    .configure = configure,
};

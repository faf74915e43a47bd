/* SPDX-License-Identifier: Apache-2.0 */
/* AlwaysDeny: rejects every request in both phases (for tests of the chain; deprecated upstream). */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_log_warn("AlwaysDeny admission controller is deprecated. Please remove this controller from your "
                 "configuration files and scripts.");
    return 0;
}

static int deny(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return adm_status_forbidden(st, attrs, "admission control is denying all modifications");
}

const adm_plugin_t adm_plugin_always_deny = {
    .name = "AlwaysDeny",
    .operations = ADM_OPS_ALL,
    .configure = configure,
    .admit = deny,
    .validate = deny,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DenyServiceExternalIPs: no new use of spec.externalIPs (CVE-2020-8554). A service may keep the
 * external IPs it has, or drop some, but never add one.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <string.h>

static bool ip_in(yyjson_val *list, const char *ip)
{
    yyjson_val *v;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(list, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        if (yyjson_is_str(v) && strcmp(yyjson_get_str(v), ip) == 0) {
            return true;
        }
    }
    return false;
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *svc;
    yyjson_val *ips;
    yyjson_val *old = attrs->req->old_object;
    yyjson_val *ip;
    yyjson_arr_iter it;
    const adm_gvk_t *k = &attrs->req->kind;

    if (!adm_attrs_is(attrs, "", "services")) {
        return ADM_OK;
    }
    svc = adm_attrs_object(attrs);
    if (svc == NULL || !adm_attrs_kind_is(attrs, "", "Service")) {
        /* Go prints a GroupVersionKind as "group/version, Kind=kind". */
        return adm_status_internal(st, attrs->arena, "Expected Service resource, got: %s/%s, Kind=%s",
                                   k->group, k->version, k->kind);
    }
    ips = adm_json_path(svc, "spec", "externalIPs", NULL);
    if (yyjson_arr_size(ips) == 0) {
        return ADM_OK;
    }
    if (old != NULL) {
        bool subset = true;

        yyjson_arr_iter_init(ips, &it);
        for (ip = yyjson_arr_iter_next(&it); subset && ip != NULL; ip = yyjson_arr_iter_next(&it)) {
            subset = yyjson_is_str(ip) &&
                     ip_in(adm_json_path(old, "spec", "externalIPs", NULL), yyjson_get_str(ip));
        }
        if (subset) {
            return ADM_OK;
        }
    }
    return adm_status_forbidden(st, attrs, "Use of external IPs is denied by admission control");
}

const adm_plugin_t adm_plugin_deny_service_external_ips = {
    .name = "DenyServiceExternalIPs",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .validate = validate,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ExtendedResourceToleration: a pod requesting an extended resource (nvidia.com/gpu ...) tolerates
 * the NoSchedule taint of that name, so nodes with such hardware can be tainted to keep other pods
 * away. Names are added in sorted order; an existing toleration of the same key, operator, value
 * and effect is replaced when it differs (e.g. in tolerationSeconds).
 */
#include "adm/admission/plugin.h"
#include "adm/admission/podutil.h"
#include "adm/base/error.h"
#include "adm/base/util.h"

#include <stdlib.h>
#include <string.h>

/* kube's IsExtendedResourceName. */
static bool is_extended_resource(adm_arena_t *a, const char *name)
{
    const char *quota_name;

    if (strchr(name, '/') == NULL || strstr(name, "kubernetes.io/") != NULL ||
        strncmp(name, "requests.", 9) == 0) {
        return false;
    }
    quota_name = adm_arena_printf(a, "requests.%s", name);
    return quota_name != NULL && adm_is_qualified_name(quota_name);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    static const char *const lists[] = {"containers", "initContainers"}; /* not ephemeral containers */
    yyjson_val *pod;
    const char **names = NULL;
    size_t count = 0;
    size_t cap = 0;
    yyjson_mut_val *mpod;

    if (!adm_attrs_is(attrs, "", "pods")) {
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return adm_status_bad_request(st, attrs->arena,
                                      "Resource was marked with kind Pod but was unable to be converted");
    }
    for (size_t l = 0; l < 2; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_path(pod, "spec", lists[l], NULL), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            yyjson_val *requests = adm_json_path(c, "resources", "requests", NULL);
            yyjson_val *key;
            yyjson_obj_iter oit;

            yyjson_obj_iter_init(requests, &oit);
            for (key = yyjson_obj_iter_next(&oit); key != NULL; key = yyjson_obj_iter_next(&oit)) {
                const char *name = yyjson_get_str(key);

                if (!is_extended_resource(attrs->arena, name)) {
                    continue;
                }
                if (count == cap) {
                    size_t ncap = cap == 0 ? 8 : cap * 2;
                    const char **grown =
                        adm_arena_realloc(attrs->arena, names, cap * sizeof(*names), ncap * sizeof(*names));

                    if (grown == NULL) {
                        return ADM_ENOMEM;
                    }
                    names = grown;
                    cap = ncap;
                }
                names[count++] = name;
            }
        }
    }
    if (count == 0) {
        return ADM_OK;
    }
    qsort(names, count, sizeof(*names), cmp_str);
    mpod = adm_attrs_mutable_object(attrs);
    if (mpod == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        adm_toleration_t t = {names[i], "Exists", "", "NoSchedule", false, 0};

        if (i > 0 && strcmp(names[i], names[i - 1]) == 0) {
            continue; /* a set in kube */
        }
        if (adm_pod_add_or_update_toleration(attrs->mdoc, mpod, &t) < 0) {
            return ADM_ENOMEM;
        }
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_extended_resource_toleration = {
    .name = "ExtendedResourceToleration",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .admit = admit,
};

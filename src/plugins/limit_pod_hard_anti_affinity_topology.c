/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LimitPodHardAntiAffinityTopology: required pod anti-affinity may only use the
 * kubernetes.io/hostname topology, so one tenant cannot block a whole zone for others.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <string.h>

#define HOSTNAME "kubernetes.io/hostname"

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *pod;
    yyjson_val *term;
    yyjson_arr_iter it;

    if (!adm_attrs_is(attrs, "", "pods")) {
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return adm_status_bad_request(st, attrs->arena,
                                      "Resource was marked with kind Pod but was unable to be converted");
    }
    yyjson_arr_iter_init(adm_json_path(pod, "spec", "affinity", "podAntiAffinity",
                                       "requiredDuringSchedulingIgnoredDuringExecution", NULL),
                         &it);
    for (term = yyjson_arr_iter_next(&it); term != NULL; term = yyjson_arr_iter_next(&it)) {
        const char *key = adm_json_str(term, "topologyKey");

        if (strcmp(key, HOSTNAME) != 0) {
            /* kube names the pod by pod.Name here, without the generateName fallback. */
            return adm_status_forbidden_named(
                st, attrs->arena, attrs->req->resource.group, attrs->req->resource.resource,
                adm_json_str(adm_json_get(pod, "metadata"), "name"),
                "affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %s "
                "but only key %s is allowed",
                key, HOSTNAME);
        }
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_limit_pod_hard_anti_affinity_topology = {
    .name = "LimitPodHardAntiAffinityTopology",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .validate = validate,
};

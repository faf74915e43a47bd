/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Restricted checks on volumes and users: volume types, runAsNonRoot and runAsUser
 * (policy/check_restrictedVolumes.go, check_runAsNonRoot.go, check_runAsUser.go).
 */
#include "check_internal.h"

#include <string.h>

/* Sources the restricted level allows (image since kube 1.33, for every version). */
static const char *const allowed_sources[] = {
    "configMap", "csi",    "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim",
    "projected", "secret",
};

/* Sources kube names in its message, in the order of its switch; anything else is "unknown". */
static const char *const named_sources[] = {
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
};

#define COUNT(a) (sizeof(a) / sizeof(*(a)))

psa_verdict_t psa_restricted_volumes_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t types = {0};
    yyjson_val *vols = psa_get(cx->spec, "volumes");

    for (size_t i = 0, n = yyjson_arr_size(vols); i < n; i++) {
        yyjson_val *v = yyjson_arr_get(vols, i);
        const char *type = "unknown";
        bool allowed = false;

        for (size_t k = 0; k < COUNT(allowed_sources) && !allowed; k++) {
            allowed = psa_get(v, allowed_sources[k]) != NULL;
        }
        if (allowed) {
            continue;
        }
        psa_list_add(cx, &bad, psa_str(v, "name"));
        for (size_t k = 0; k < COUNT(named_sources); k++) {
            if (psa_get(v, named_sources[k]) != NULL) {
                type = named_sources[k];
                break;
            }
        }
        psa_set_add(cx, &types, type);
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&types);
    return psa_deny("restricted volume types",
                    psa_fmt(cx, "%s %s %s %s %s", psa_plural("volume", "volumes", bad.n),
                            psa_join(cx, &bad, ", ", true), psa_plural("uses", "use", bad.n),
                            psa_plural("restricted volume type", "restricted volume types", types.n),
                            psa_join(cx, &types, ", ", true)));
}

psa_verdict_t psa_run_as_non_root_1_0(psa_ctx_t *cx)
{
    psa_list_t setters = {0};
    psa_list_t explicit_bad = {0};
    psa_list_t implicit_bad = {0};
    yyjson_val *psc = psa_get(cx->spec, "securityContext");
    bool pod_non_root = psa_is_true(psc, "runAsNonRoot");

    if (psa_is_false(psc, "runAsNonRoot")) {
        psa_list_add(cx, &setters, "pod");
    }
    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *v = psa_get(psa_csc(c), "runAsNonRoot");

        if (yyjson_is_bool(v)) {
            if (!yyjson_get_bool(v)) {
                psa_list_add(cx, &explicit_bad, psa_str(c, "name"));
            }
        } else if (!pod_non_root) {
            psa_list_add(cx, &implicit_bad, psa_str(c, "name"));
        }
    }
    if (explicit_bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &explicit_bad));
    }
    if (setters.n > 0) {
        return psa_deny("runAsNonRoot != true",
                        psa_fmt(cx, "%s must not set securityContext.runAsNonRoot=false",
                                psa_join(cx, &setters, " and ", false)));
    }
    if (implicit_bad.n > 0) {
        return psa_deny("runAsNonRoot != true",
                        psa_fmt(cx, "pod or %s must set securityContext.runAsNonRoot=true",
                                psa_containers_phrase(cx, &implicit_bad)));
    }
    return psa_allow();
}

psa_verdict_t psa_run_as_non_root_1_35(psa_ctx_t *cx)
{
    return psa_user_namespaced(cx) ? psa_allow() : psa_run_as_non_root_1_0(cx);
}

static bool root_user(yyjson_val *sc)
{
    yyjson_val *v = psa_get(sc, "runAsUser");

    return yyjson_is_int(v) && yyjson_get_sint(v) == 0;
}

psa_verdict_t psa_run_as_user_1_23(psa_ctx_t *cx)
{
    psa_list_t setters = {0};
    psa_list_t bad = {0};

    if (root_user(psa_get(cx->spec, "securityContext"))) {
        psa_list_add(cx, &setters, "pod");
    }
    PSA_FOR_CONTAINERS(cx, c)
    {
        if (root_user(psa_csc(c))) {
            psa_list_add(cx, &bad, psa_str(c, "name"));
        }
    }
    if (bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &bad));
    }
    if (setters.n == 0) {
        return psa_allow();
    }
    return psa_deny("runAsUser=0",
                    psa_fmt(cx, "%s must not set runAsUser=0", psa_join(cx, &setters, " and ", false)));
}

psa_verdict_t psa_run_as_user_1_35(psa_ctx_t *cx)
{
    return psa_user_namespaced(cx) ? psa_allow() : psa_run_as_user_1_23(cx);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Restricted checks on volumes and users: volume types, runAsNonRoot and runAsUser
 * (policy/check_restrictedVolumes.go, check_runAsNonRoot.go, check_runAsUser.go).
 */
#include "check_internal.h"

#include <string.h>

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

    for (size_t i = 0; i < cx->pod->nvolumes; i++) {
        const psa_volume_t *v = &cx->pod->volumes[i];
        const char *type = "unknown";

        if (v->allowed) { /* the sources it allows: psa_pod_read */
            continue;
        }
        psa_list_add(cx, &bad, v->name);
        for (size_t k = 0; k < COUNT(named_sources); k++) {
            if (psa_get(v->v, named_sources[k]) != NULL) {
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
                    psa_cat(cx, psa_plural("volume ", "volumes ", bad.n), psa_join(cx, &bad, ", ", true),
                            psa_plural(" uses ", " use ", bad.n),
                            psa_plural("restricted volume type ", "restricted volume types ", types.n),
                            psa_join(cx, &types, ", ", true), NULL));
}

psa_verdict_t psa_run_as_non_root_1_0(psa_ctx_t *cx)
{
    psa_list_t setters = {0};
    psa_list_t explicit_bad = {0};
    psa_list_t implicit_bad = {0};
    bool pod_non_root = yyjson_is_true(cx->pod->sc[PSA_SC_RUN_AS_NON_ROOT]);

    if (yyjson_is_false(cx->pod->sc[PSA_SC_RUN_AS_NON_ROOT])) {
        psa_list_add(cx, &setters, "pod");
    }
    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *v = c->sc[PSA_SC_RUN_AS_NON_ROOT];

        if (yyjson_is_bool(v)) {
            if (!yyjson_get_bool(v)) {
                psa_list_add(cx, &explicit_bad, c->name);
            }
        } else if (!pod_non_root) {
            psa_list_add(cx, &implicit_bad, c->name);
        }
    }
    if (explicit_bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &explicit_bad));
    }
    if (setters.n > 0) {
        return psa_deny("runAsNonRoot != true",
                        psa_cat(cx, psa_join(cx, &setters, " and ", false),
                                " must not set securityContext.runAsNonRoot=false", NULL));
    }
    if (implicit_bad.n > 0) {
        return psa_deny("runAsNonRoot != true",
                        psa_cat(cx, "pod or ", psa_containers_phrase(cx, &implicit_bad),
                                " must set securityContext.runAsNonRoot=true", NULL));
    }
    return psa_allow();
}

psa_verdict_t psa_run_as_non_root_1_35(psa_ctx_t *cx)
{
    return cx->pod->user_namespaced ? psa_allow() : psa_run_as_non_root_1_0(cx);
}

/* runAsUser (a securityContext's, NULL when unset) is 0. */
static bool root_user(yyjson_val *v)
{
    return yyjson_is_int(v) && yyjson_get_sint(v) == 0;
}

psa_verdict_t psa_run_as_user_1_23(psa_ctx_t *cx)
{
    psa_list_t setters = {0};
    psa_list_t bad = {0};

    if (root_user(cx->pod->sc[PSA_SC_RUN_AS_USER])) {
        psa_list_add(cx, &setters, "pod");
    }
    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_RUN_AS_USER)
    {
        if (root_user(c->sc[PSA_SC_RUN_AS_USER])) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &bad));
    }
    if (setters.n == 0) {
        return psa_allow();
    }
    return psa_deny("runAsUser=0",
                    psa_cat(cx, psa_join(cx, &setters, " and ", false), " must not set runAsUser=0", NULL));
}

psa_verdict_t psa_run_as_user_1_35(psa_ctx_t *cx)
{
    return cx->pod->user_namespaced ? psa_allow() : psa_run_as_user_1_23(cx);
}

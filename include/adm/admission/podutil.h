/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod helpers the plugins share, as kube's pods package has them: visiting containers,
 * tolerations, and a PodSpec's references to other API objects.
 */
#ifndef ADM_PODUTIL_H
#define ADM_PODUTIL_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <yyjson.h>

/* The container lists of a PodSpec in kube's visiting order (VisitContainersWithPath). */
#define ADM_POD_CONTAINER_LISTS                                                                              \
    {                                                                                                        \
        "initContainers", "containers", "ephemeralContainers"                                                \
    }

/* A toleration as kube's core.Toleration; strings "" when unset. */
typedef struct adm_toleration_s {
    const char *key;
    const char *op;
    const char *value;
    const char *effect;
    bool has_seconds; /* tolerationSeconds is a pointer in Go: unset differs from 0 */
    int64_t seconds;
} adm_toleration_t;

/** Reads a toleration object (absent members as empty). */
adm_toleration_t adm_toleration_read(yyjson_val *t);

/**
 * kube's AddOrUpdateTolerationInPod: a toleration of spec.tolerations matching t on key, operator,
 * value and effect is replaced by t unless equal; with no match t is appended. Returns 1 when the
 * pod changed, 0 when not, ADM_ENOMEM when the document could not grow.
 */
int adm_pod_add_or_update_toleration(yyjson_mut_doc *doc, yyjson_mut_val *pod, const adm_toleration_t *t);

struct adm_attrs_s;

/**
 * adm_pod_add_or_update_toleration of ts[0], then ts[1]..., on the pod attrs holds, made as one
 * edit (adm_attrs_edit): a copy of spec.tolerations alone (or a new list) takes the changes and
 * replaces it, so the pod is never copied whole. Returns how many of ts changed the pod (no edit
 * when none), or ADM_ENOMEM: when the arena fails, or, as the mutable form, when spec or
 * spec.tolerations is there with a type that cannot hold them.
 */
int adm_pod_edit_tolerations(struct adm_attrs_s *attrs, const adm_toleration_t *ts, size_t n);

/**
 * podutil.VisitPodSecretNames finds a name in spec (a PodSpec): imagePullSecrets, a container's
 * envFrom[].secretRef or env[].valueFrom.secretKeyRef (init, regular and ephemeral containers),
 * or a volume source that names a secret. As kube's volume switch, only a volume's first source
 * in kube's order is looked at.
 */
bool adm_pod_references_secrets(yyjson_val *spec);

/** podutil.VisitPodConfigmapNames finds a name in spec: envFrom, env valueFrom, and volumes. */
bool adm_pod_references_configmaps(yyjson_val *spec);

/**
 * podutil.HasAPIObjectReference (what NodeRestriction asks of a mirror pod): the plural of the
 * first kind of API object spec references, in kube's order and words ("serviceaccounts",
 * "secrets", "configmaps", "resourceclaims", then per volume e.g. "secrets (via secret volumes)"
 * or "serviceaccounts (via projected volumes)"), or NULL when it references none. A volume or
 * projected source kube does not know gives "" with *err set to kube's error (arena text; NULL
 * when the arena is exhausted); *err is NULL otherwise.
 */
const char *adm_pod_api_object_reference(adm_arena_t *a, yyjson_val *spec, const char **err);

#endif

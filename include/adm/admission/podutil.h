/* SPDX-License-Identifier: Apache-2.0 */
/* Pod helpers the plugins share: visiting containers as kube's pods package does, and tolerations. */
#ifndef ADM_PODUTIL_H
#define ADM_PODUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <yyjson.h>

/* The container lists of a PodSpec in kube's visiting order (VisitContainersWithPath). */
#define ADM_POD_CONTAINER_LISTS {"initContainers", "containers", "ephemeralContainers"}

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

#endif

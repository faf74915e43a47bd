/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --admission-control-config-file: kube-apiserver's AdmissionConfiguration
 * (apiserver.config.k8s.io/v1, v1alpha1, and the legacy apiserver.k8s.io/v1alpha1), YAML or JSON,
 * decoded strictly as kube does (unknown or duplicate fields are errors). Each plugin entry gives an
 * inline `configuration:` (which wins) or a `path:` resolved against the config file's folder.
 */
#ifndef ADM_ADMISSION_CONFIG_H
#define ADM_ADMISSION_CONFIG_H

#include "adm/base/arena.h"

#include <stddef.h>
#include <yyjson.h>

typedef struct adm_admission_plugin_config_s {
    const char *name;      /* plugin name as written */
    yyjson_val *config;    /* inline configuration or the parsed path file; NULL when neither */
    const char *source;    /* "FILE: plugins[N].configuration" or the path file's name */
    const char *path_file; /* the path: file read, or NULL (what a reload watches) */
} adm_admission_plugin_config_t;

typedef struct adm_admission_config_s {
    adm_admission_plugin_config_t *plugins;
    size_t nplugins;
} adm_admission_config_t;

/**
 * Reads and validates path; everything lands in a. Returns 0, or ADM_EINVAL with one line in err
 * naming the file, the field and the problem (e.g. "admission.yaml: plugins[1].path: must be a
 * string"), or ADM_ENOMEM.
 */
int adm_admission_config_load(adm_arena_t *a, const char *path, adm_admission_config_t *out, char *err,
                              size_t err_len);

/** The entry for name (the first, as kube-apiserver takes it), or NULL. */
const adm_admission_plugin_config_t *adm_admission_config_find(const adm_admission_config_t *c,
                                                               const char *name);

#endif

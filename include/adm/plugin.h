/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiled-in admission plugins: one constant descriptor per plugin (src/plugins/<name>.c),
 * and the registry of every plugin name kube-apiserver knows, in its execution order, with its
 * default and whether admitd implements it (src/plugins/plugins.def).
 */
#ifndef ADM_PLUGIN_H
#define ADM_PLUGIN_H

#include "adm/admission.h"
#include "adm/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <yyjson.h>

/* What a plugin gets at start (and at every reload) to build its state. */
typedef struct adm_plugin_config_s {
    /*
     * The plugin's configuration from --admission-control-config-file: the inline `configuration:`
     * object, or the parsed file named by `path:` (YAML or JSON); NULL when none was given. It is
     * valid only during configure: keep copies, not pointers.
     */
    yyjson_val *config;
    /* Where config came from, for error messages: "FILE" or "FILE: plugins[N].configuration". */
    const char *source;
    const adm_options_t *opts; /* the command line, for plugins configured by flags */
} adm_plugin_config_t;

typedef struct adm_plugin_s {
    const char *name;    /* as kube-apiserver registers it, e.g. "DefaultTolerationSeconds" */
    unsigned operations; /* ADM_OPS_* bits the plugin handles; others skip it (admission.Handler) */
    /*
     * Optional. Builds the plugin's state from its configuration. Returns 0, or ADM_EINVAL with one
     * line in err naming cfg->source, the field and the problem, e.g.
     * "FILE: plugins[0].configuration: limits[0].qps: must be positive". *state may stay NULL.
     */
    int (*configure)(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len);
    void (*free_state)(void *state); /* optional; called with what configure set */
    /*
     * The phases; either may be NULL. Each returns ADM_OK to admit (a mutating hook may have
     * changed the object through adm_attrs_mutable_object()), ADM_DECLINED with *st filled through
     * the adm_status_* constructors to reject, or ADM_ENOMEM.
     */
    int (*admit)(void *state, adm_attrs_t *attrs, adm_status_t *st);
    int (*validate)(void *state, adm_attrs_t *attrs, adm_status_t *st);
} adm_plugin_t;

/* One row of the registry. */
typedef struct adm_plugin_info_s {
    const char *name;
    bool default_on;            /* in kube-apiserver's default set */
    const char *type;           /* "mutating", "validating" or "mutating, validating" */
    const adm_plugin_t *plugin; /* NULL: known to kube-apiserver, not implemented by admitd yet */
} adm_plugin_info_t;

/** Every known plugin in kube-apiserver's execution order; *count set to the number of rows. */
const adm_plugin_info_t *adm_plugin_registry(size_t *count);

/** The registry row for name (exact, case-sensitive as kube-apiserver), or NULL. */
const adm_plugin_info_t *adm_plugin_find(const char *name);

/** Prints the --list-plugins table. */
void adm_plugin_list(FILE *out);

#endif

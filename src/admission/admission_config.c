/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads --admission-control-config-file (admission_config.h) as kube-apiserver does: strictly, one
 * AdmissionConfiguration per file, each plugin's configuration inline or from a `path:` file next
 * to it, and the legacy opaque files of ImagePolicyWebhook and PodNodeSelector.
 */
#include "adm/admission/admission_config.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/json.h"
#include "adm/base/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Configuration files are small; this bounds what a mistaken path (a disk image ...) can cost. */
#define MAX_CONFIG_BYTES (16u << 20)

/* Strict decoding: every member must be one of known[] and appear once. */
static int check_members(yyjson_val *obj, const char *const *known, const char *file, const char *where,
                         char *err, size_t err_len)
{
    bool duplicate;
    const char *k = adm_json_check_members(obj, known, &duplicate);

    if (k == NULL) {
        return 0;
    }
    snprintf(err, err_len, "%s: %s%s%s field \"%s\"", file, where, where[0] != '\0' ? ": " : "",
             duplicate ? "duplicate" : "unknown", k);
    return ADM_EINVAL;
}

static const char *dir_of(adm_arena_t *a, const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL) {
        return ".";
    }
    if (slash == path) {
        return "/";
    }
    return adm_arena_strndup(a, path, (size_t)(slash - path));
}

static int load_path(adm_arena_t *a, const char *file, size_t i, const char *rel,
                     adm_admission_plugin_config_t *pc, char *err, size_t err_len)
{
    const char *full = rel[0] == '/' ? rel : adm_arena_printf(a, "%s/%s", dir_of(a, file), rel);
    char sub[512];
    char *data;
    size_t len;
    yyjson_val **docs;
    size_t ndocs;
    int rc;

    if (full == NULL) {
        return ADM_ENOMEM;
    }
    rc = adm_fs_read(a, full, MAX_CONFIG_BYTES, &data, &len, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s: plugins[%zu].path: %s", file, i, sub);
        return ADM_EINVAL;
    }
    rc = adm_yaml_parse(a, data, len, &docs, &ndocs, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0 || ndocs > 1) {
        snprintf(err, err_len, "%s: %s", full, rc != 0 ? sub : "holds more than one YAML document");
        return ADM_EINVAL;
    }
    pc->config = ndocs == 1 ? docs[0] : NULL;
    pc->source = full;
    pc->path_file = full;
    return 0;
}

static int load_plugin(adm_arena_t *a, const char *file, size_t i, yyjson_val *entry,
                       adm_admission_plugin_config_t *pc, char *err, size_t err_len)
{
    static const char *const members[] = {"name", "path", "configuration", NULL};
    char where[64];
    yyjson_val *name, *path, *conf;
    int rc;

    snprintf(where, sizeof(where), "plugins[%zu]", i);
    if (!yyjson_is_obj(entry)) {
        snprintf(err, err_len, "%s: %s: must be an object with name, and path or configuration", file, where);
        return ADM_EINVAL;
    }
    rc = check_members(entry, members, file, where, err, err_len);
    if (rc != 0) {
        return rc;
    }
    name = yyjson_obj_get(entry, "name");
    path = yyjson_obj_get(entry, "path");
    conf = yyjson_obj_get(entry, "configuration");
    if (!yyjson_is_str(name) || yyjson_get_len(name) == 0) {
        snprintf(err, err_len, "%s: %s.name: %s", file, where,
                 name == NULL ? "required" : "must be a non-empty string");
        return ADM_EINVAL;
    }
    if (path != NULL && !yyjson_is_null(path) && !yyjson_is_str(path)) {
        snprintf(err, err_len, "%s: %s.path: must be a string", file, where);
        return ADM_EINVAL;
    }
    pc->name = yyjson_get_str(name);
    pc->config = NULL;
    pc->source = file;
    if (conf != NULL && !yyjson_is_null(conf)) {
        /* runtime.Unknown holds an object; kube's decoder refuses anything else. */
        if (!yyjson_is_obj(conf)) {
            snprintf(err, err_len, "%s: %s.configuration: must be an object", file, where);
            return ADM_EINVAL;
        }
        pc->config = conf;
        pc->source = adm_arena_printf(a, "%s: %s.configuration", file, where);
        return pc->source != NULL ? 0 : ADM_ENOMEM;
    }
    if (yyjson_is_str(path) && yyjson_get_len(path) > 0) {
        return load_path(a, file, i, yyjson_get_str(path), pc, err, err_len);
    }
    return 0;
}

/* The legacy opaque files of ImagePolicyWebhook and PodNodeSelector (kube still accepts them). */
static int load_legacy(adm_arena_t *a, const char *file, yyjson_val *root, adm_admission_config_t *out)
{
    static const struct {
        const char *key, *plugin;
    } legacy[] = {{"imagePolicy", "ImagePolicyWebhook"}, {"podNodeSelectorPluginConfig", "PodNodeSelector"}};

    out->plugins = adm_arena_calloc(a, 2, sizeof(*out->plugins));
    if (out->plugins == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < 2; i++) {
        if (yyjson_obj_get(root, legacy[i].key) != NULL) {
            out->plugins[out->nplugins].name = legacy[i].plugin;
            out->plugins[out->nplugins].config = root;
            out->plugins[out->nplugins].source = file;
            out->nplugins++;
        }
    }
    return 0;
}

int adm_admission_config_load(adm_arena_t *a, const char *path, adm_admission_config_t *out, char *err,
                              size_t err_len)
{
    static const char *const members[] = {"apiVersion", "kind", "plugins", NULL};
    char sub[512];
    char *data;
    size_t len;
    yyjson_val **docs;
    size_t ndocs;
    yyjson_val *root, *api_version, *kind, *plugins;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = adm_fs_read(a, path, MAX_CONFIG_BYTES, &data, &len, err, err_len);
    if (rc != 0) {
        return rc == ADM_ENOMEM ? rc : ADM_EINVAL;
    }
    rc = adm_yaml_parse(a, data, len, &docs, &ndocs, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s", path, sub);
        return ADM_EINVAL;
    }
    if (ndocs != 1 || !yyjson_is_obj(docs[0])) {
        snprintf(err, err_len, "%s: want one AdmissionConfiguration object, found %s", path,
                 ndocs == 0  ? "an empty file"
                 : ndocs > 1 ? "several YAML documents"
                             : "no object");
        return ADM_EINVAL;
    }
    root = docs[0];
    api_version = yyjson_obj_get(root, "apiVersion");
    kind = yyjson_obj_get(root, "kind");
    if (api_version == NULL && kind == NULL &&
        (yyjson_obj_get(root, "imagePolicy") != NULL ||
         yyjson_obj_get(root, "podNodeSelectorPluginConfig") != NULL)) {
        return load_legacy(a, path, root, out);
    }
    if (!yyjson_is_str(api_version) ||
        (strcmp(yyjson_get_str(api_version), "apiserver.config.k8s.io/v1") != 0 &&
         strcmp(yyjson_get_str(api_version), "apiserver.config.k8s.io/v1alpha1") != 0 &&
         strcmp(yyjson_get_str(api_version), "apiserver.k8s.io/v1alpha1") != 0)) {
        snprintf(err, err_len,
                 "%s: apiVersion: want apiserver.config.k8s.io/v1 (or v1alpha1, or the legacy "
                 "apiserver.k8s.io/v1alpha1)",
                 path);
        return ADM_EINVAL;
    }
    if (!yyjson_is_str(kind) || strcmp(yyjson_get_str(kind), "AdmissionConfiguration") != 0) {
        snprintf(err, err_len, "%s: kind: want AdmissionConfiguration", path);
        return ADM_EINVAL;
    }
    rc = check_members(root, members, path, "", err, err_len);
    if (rc != 0) {
        return rc;
    }
    plugins = yyjson_obj_get(root, "plugins");
    if (plugins == NULL || yyjson_is_null(plugins)) {
        return 0;
    }
    if (!yyjson_is_arr(plugins)) {
        snprintf(err, err_len, "%s: plugins: must be a list", path);
        return ADM_EINVAL;
    }
    out->plugins = adm_arena_calloc(a, yyjson_arr_size(plugins) + 1, sizeof(*out->plugins));
    if (out->plugins == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < yyjson_arr_size(plugins); i++) {
        rc = load_plugin(a, path, i, yyjson_arr_get(plugins, i), &out->plugins[i], err, err_len);
        if (rc != 0) {
            return rc;
        }
        out->nplugins++;
    }
    return 0;
}

const adm_admission_plugin_config_t *adm_admission_config_find(const adm_admission_config_t *c,
                                                               const char *name)
{
    for (size_t i = 0; i < c->nplugins; i++) {
        if (strcmp(c->plugins[i].name, name) == 0) {
            return &c->plugins[i];
        }
    }
    return NULL;
}

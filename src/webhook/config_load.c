/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --webhook-config loading (adm/webhook/config.h): the files and folders named, the YAML or JSON
 * documents in each, Lists of configurations, and each configuration's envelope (kind,
 * apiVersion, metadata.name, strict top-level members); its webhooks are validated by
 * config_validate.c. Names must be unique per kind across all files. Once everything loaded, the
 * configurations are sorted by name and flattened into the two hook lists of the set.
 */
#include "config_internal.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/json.h"
#include "adm/base/yaml.h"
#include "adm/webhook/breaker.h"
#include "adm/webhook/webhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_VERSION "admissionregistration.k8s.io/v1"

/* One configuration as validated, before the hook lists are put together. */
typedef struct adm__cfg_config_s {
    adm_webhook_type_t type;
    const char *name;
    const char *file;
    size_t seq; /* load order, so sorting by name stays stable */
    adm_webhook_t *hooks;
    size_t nhooks;
} config_t;

static const char *const webhook_kinds[] = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"};

/* ---- configurations, documents, files ---- */

static int add_config(adm__cfg_loader_t *L, const config_t *c)
{
    for (size_t i = 0; i < L->nconfigs; i++) {
        if (L->configs[i].type == c->type && strcmp(L->configs[i].name, c->name) == 0) {
            return adm__cfg_fail(L, "metadata.name: Duplicate value: \"%s\": another %s has this name (%s)",
                                 c->name, webhook_kinds[c->type == ADM_WEBHOOK_MUTATING ? 0 : 1],
                                 L->configs[i].file);
        }
    }
    if (L->nconfigs == L->configs_cap) {
        size_t ncap = L->configs_cap == 0 ? 8 : L->configs_cap * 2;
        config_t *g = adm_arena_realloc(L->a, L->configs, L->configs_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return adm__cfg_nomem(L);
        }
        L->configs = g;
        L->configs_cap = ncap;
    }
    L->configs[L->nconfigs] = *c;
    L->configs[L->nconfigs].seq = L->nconfigs;
    L->nconfigs++;
    return 0;
}

static int check_metadata_name(adm__cfg_loader_t *L, yyjson_val *obj, const char **name)
{
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    yyjson_val *v;
    const char *msg;

    if (!absent(meta) && !yyjson_is_obj(meta)) {
        return adm__cfg_fail(L, "metadata: must be an object");
    }
    v = yyjson_obj_get(meta, "name");
    if (!absent(v) && !yyjson_is_str(v)) {
        return adm__cfg_fail(L, "metadata.name: must be a string");
    }
    if (!yyjson_is_str(v) || yyjson_get_len(v) == 0) {
        return adm__cfg_fail(L, "metadata.name: Required value: name or generateName is required");
    }
    msg = adm__cfg_dns1123_subdomain_problem(yyjson_get_str(v), yyjson_get_len(v));
    if (msg != NULL) {
        return adm__cfg_fail(L, "metadata.name: Invalid value: %s: %s", adm_json_text(L->a, v), msg);
    }
    *name = yyjson_get_str(v);
    return 0;
}

/* admitd's own settings for the webhooks of a configuration, from its metadata.annotations. */
static int read_proxy_annotations(adm__cfg_loader_t *L, yyjson_val *obj, adm_webhook_t *h)
{
    yyjson_val *v = yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "annotations"),
                                   ADM_BREAKER_ANNOTATION);

    yyjson_val *shadow =
        yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "annotations"), ADM_SHADOW_ANNOTATION);

    if (shadow != NULL) {
        if (!yyjson_is_str(shadow) ||
            (strcmp(yyjson_get_str(shadow), "true") != 0 && strcmp(yyjson_get_str(shadow), "false") != 0)) {
            return adm__cfg_fail(L,
                                 "metadata.annotations." ADM_SHADOW_ANNOTATION ": Invalid value: %s: want "
                                 "\"true\" or \"false\"",
                                 adm_json_text(L->a, shadow));
        }
        h->shadow = strcmp(yyjson_get_str(shadow), "true") == 0;
    }
    if (v == NULL) {
        return 0;
    }
    if (!yyjson_is_str(v) ||
        adm_breaker_parse(yyjson_get_str(v), &h->breaker_threshold, &h->breaker_cooldown_ms) != 0) {
        return adm__cfg_fail(L,
                             "metadata.annotations." ADM_BREAKER_ANNOTATION ": Invalid value: %s: want "
                             "K/COOLDOWN (\"5/10s\") or \"off\"",
                             adm_json_text(L->a, v));
    }
    h->breaker_set = true;
    return 0;
}

static int load_config(adm__cfg_loader_t *L, yyjson_val *obj, const char *label, const char *item_kind)
{
    static const char *const members[] = {"apiVersion", "kind", "metadata", "webhooks", NULL};
    yyjson_val *kind = yyjson_obj_get(obj, "kind");
    yyjson_val *api = yyjson_obj_get(obj, "apiVersion");
    yyjson_val *hooks;
    const char *kind_name;
    config_t c = {0};
    int rc;

    L->obj = label;
    if (!yyjson_is_obj(obj)) {
        return adm__cfg_fail(L, "must be an object (a webhook configuration)");
    }
    if (item_kind != NULL) {
        if (!absent(kind) && !str_is(kind, item_kind)) {
            return adm__cfg_fail(L, "kind: Unsupported value: %s: supported values: \"%s\"",
                                 adm_json_text(L->a, kind), item_kind);
        }
        kind_name = item_kind;
    } else if (str_is(kind, webhook_kinds[0]) || str_is(kind, webhook_kinds[1])) {
        kind_name = yyjson_get_str(kind);
    } else {
        return adm__cfg_fail(L, "kind: %s%s: supported values: \"%s\", \"%s\" (or a List of them)",
                             absent(kind) ? "Required value" : "Unsupported value: ",
                             absent(kind) ? "" : adm_json_text(L->a, kind), webhook_kinds[0],
                             webhook_kinds[1]);
    }
    c.type = strcmp(kind_name, webhook_kinds[0]) == 0 ? ADM_WEBHOOK_MUTATING : ADM_WEBHOOK_VALIDATING;
    if (!str_is(api, API_VERSION) && !(item_kind != NULL && absent(api))) {
        return adm__cfg_fail(L, "apiVersion: %s%s: supported values: \"" API_VERSION "\"",
                             absent(api) ? "Required value" : "Unsupported value: ",
                             absent(api) ? "" : adm_json_text(L->a, api));
    }
    L->obj = adm_arena_printf(L->a, "%s %s", label, kind_name);
    if (L->obj == NULL) {
        return adm__cfg_nomem(L);
    }
    rc = check_metadata_name(L, obj, &c.name);
    if (rc != 0) {
        return rc;
    }
    L->obj = adm_arena_printf(L->a, "%s \"%s\"", kind_name, c.name);
    if (L->obj == NULL) {
        return adm__cfg_nomem(L);
    }
    rc = adm__cfg_check_members(L, obj, members, "");
    if (rc != 0) {
        return rc;
    }
    hooks = yyjson_obj_get(obj, "webhooks");
    if (!absent(hooks) && !yyjson_is_arr(hooks)) {
        return adm__cfg_fail(L, "webhooks: must be an array");
    }
    c.file = L->file;
    c.hooks = adm_arena_calloc(L->a, yyjson_arr_size(hooks) + 1, sizeof(*c.hooks));
    if (c.hooks == NULL) {
        return adm__cfg_nomem(L);
    }
    for (size_t i = 0; i < yyjson_arr_size(hooks); i++) {
        adm_webhook_t *h = &c.hooks[i];
        size_t same = 0;

        rc = adm__cfg_parse_webhook(L, c.type, i, yyjson_arr_get(hooks, i), h);
        if (rc != 0) {
            return rc;
        }
        for (size_t j = 0; j < i; j++) {
            same += strcmp(c.hooks[j].name, h->name) == 0;
        }
        if (same > 0) {
            return adm__cfg_fail(L, "webhooks[%zu].name: Duplicate value: \"%s\"", i, h->name);
        }
        h->config_name = c.name;
        h->id = adm_arena_printf(L->a, "%s/%s/%zu", c.name, h->name, same);
        if (h->id == NULL) {
            return adm__cfg_nomem(L);
        }
        rc = adm__cfg_warn_equivalent(L, h, i);
        if (rc == 0) {
            rc = read_proxy_annotations(L, obj, h);
        }
        if (rc != 0) {
            return rc;
        }
        c.nhooks++;
    }
    return add_config(L, &c);
}

static int load_list(adm__cfg_loader_t *L, yyjson_val *obj, const char *label)
{
    static const char *const members[] = {"apiVersion", "kind", "metadata", "items", NULL};
    const char *kind = yyjson_get_str(yyjson_obj_get(obj, "kind"));
    yyjson_val *api = yyjson_obj_get(obj, "apiVersion");
    const char *want_api = strcmp(kind, "List") == 0 ? "v1" : API_VERSION;
    /* Items of a typed list may leave out their kind and apiVersion; a plain List's may not. */
    const char *item_kind = strcmp(kind, "List") == 0                               ? NULL
                            : strcmp(kind, "MutatingWebhookConfigurationList") == 0 ? webhook_kinds[0]
                                                                                    : webhook_kinds[1];
    yyjson_val *items;
    int rc;

    L->obj = label;
    if (!str_is(api, want_api)) {
        return adm__cfg_fail(L, "apiVersion: %s%s: supported values for kind %s: \"%s\"",
                             absent(api) ? "Required value" : "Unsupported value: ",
                             absent(api) ? "" : adm_json_text(L->a, api), kind, want_api);
    }
    rc = adm__cfg_check_members(L, obj, members, "");
    if (rc != 0) {
        return rc;
    }
    items = yyjson_obj_get(obj, "items");
    if (!absent(items) && !yyjson_is_arr(items)) {
        return adm__cfg_fail(L, "items: must be an array");
    }
    for (size_t i = 0; i < yyjson_arr_size(items); i++) {
        yyjson_val *item = yyjson_arr_get(items, i);
        const char *item_label = adm_arena_printf(L->a, "%s items[%zu]", label, i);

        if (item_label == NULL) {
            return adm__cfg_nomem(L);
        }
        rc = load_config(L, item, item_label, item_kind);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static bool is_list_kind(const char *kind)
{
    return strcmp(kind, "List") == 0 || strcmp(kind, "MutatingWebhookConfigurationList") == 0 ||
           strcmp(kind, "ValidatingWebhookConfigurationList") == 0;
}

/* One file of --webhook-config (adm_fs_walk's callback). */
static int load_file(void *arg, const char *path)
{
    adm__cfg_loader_t *L = arg;
    char sub[512];
    char *data;
    size_t len, ndocs;
    yyjson_val **docs;
    int rc;

    L->file = adm_arena_strndup(L->a, path, strlen(path));
    L->obj = NULL;
    if (L->file == NULL) {
        return adm__cfg_nomem(L);
    }
    rc = adm_fs_read(L->a, path, ADM_WEBHOOK_CONFIG_MAX_BYTES, &data, &len, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return adm__cfg_nomem(L);
    }
    if (rc != 0) {
        snprintf(L->err, L->err_len, "%s", sub);
        adm__cfg_one_line(L->err);
        return rc == ADM_ETOOBIG ? ADM_EINVAL : ADM_EIO;
    }
    rc = adm_yaml_parse(L->a, data, len, &docs, &ndocs, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return adm__cfg_nomem(L);
    }
    if (rc != 0) {
        return adm__cfg_fail(L, "%s", sub);
    }
    for (size_t d = 0; d < ndocs; d++) {
        const char *label = adm_arena_printf(L->a, "document %zu", d + 1);
        yyjson_val *kind = yyjson_obj_get(docs[d], "kind");

        if (label == NULL) {
            return adm__cfg_nomem(L);
        }
        if (yyjson_is_str(kind) && is_list_kind(yyjson_get_str(kind))) {
            rc = load_list(L, docs[d], label);
        } else {
            rc = load_config(L, docs[d], label, NULL);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int cmp_configs(const void *x, const void *y)
{
    const config_t *a = x, *b = y;
    int c = strcmp(a->name, b->name);

    if (c != 0) {
        return c;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int build_lists(adm__cfg_loader_t *L)
{
    adm_webhook_set_t *set = L->set;
    size_t nm = 0, nv = 0;

    if (L->nconfigs > 0) {
        qsort(L->configs, L->nconfigs, sizeof(*L->configs), cmp_configs);
    }
    for (size_t i = 0; i < L->nconfigs; i++) {
        *(L->configs[i].type == ADM_WEBHOOK_MUTATING ? &nm : &nv) += L->configs[i].nhooks;
    }
    set->mutating = adm_arena_calloc(L->a, nm + 1, sizeof(*set->mutating));
    set->validating = adm_arena_calloc(L->a, nv + 1, sizeof(*set->validating));
    if (set->mutating == NULL || set->validating == NULL) {
        return adm__cfg_nomem(L);
    }
    for (size_t i = 0; i < L->nconfigs; i++) {
        const config_t *c = &L->configs[i];
        adm_webhook_t *list = c->type == ADM_WEBHOOK_MUTATING ? set->mutating : set->validating;
        size_t *count = c->type == ADM_WEBHOOK_MUTATING ? &set->nmutating : &set->nvalidating;

        for (size_t j = 0; j < c->nhooks; j++) {
            list[*count] = c->hooks[j];
            list[*count].index = *count;
            (*count)++;
        }
    }
    return 0;
}

int adm_webhook_set_load(const char *const *paths, size_t npaths, bool allow_insecure_urls,
                         adm_webhook_set_t **out, char *err, size_t err_len)
{
    adm_arena_t *a = adm_arena_create(65536);
    adm__cfg_loader_t L = {0};
    int rc = 0;

    *out = NULL;
    if (err_len > 0) {
        err[0] = '\0';
    }
    if (a != NULL) {
        L.set = adm_arena_calloc(a, 1, sizeof(*L.set));
    }
    if (a == NULL || L.set == NULL) {
        adm_arena_destroy(a);
        if (err_len > 0) {
            snprintf(err, err_len, "webhook configuration: out of memory");
        }
        return ADM_ENOMEM;
    }
    L.set->arena = a;
    L.a = a;
    L.allow_insecure = allow_insecure_urls;
    L.err = err;
    L.err_len = err_len;
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        L.file = paths[i];
        L.obj = NULL;
        rc = adm_fs_walk(a, paths[i], adm_fs_config_suffixes, load_file, &L, err, err_len);
        if (rc == ADM_ENOMEM && err_len > 0 && err[0] == '\0') {
            snprintf(err, err_len, "webhook configuration: out of memory");
        }
        if (rc == ADM_EIO) {
            adm__cfg_one_line(err);
        }
    }
    if (rc == 0) {
        rc = build_lists(&L);
    }
    if (rc != 0) {
        adm_arena_destroy(a);
        return rc;
    }
    *out = L.set;
    return 0;
}

void adm_webhook_set_free(adm_webhook_set_t *set)
{
    if (set != NULL) {
        adm_arena_destroy(set->arena);
    }
}

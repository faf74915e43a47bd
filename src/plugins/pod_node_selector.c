/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodNodeSelector: a new pod gets its namespace's node selector (the namespace annotation
 * scheduler.alpha.kubernetes.io/node-selector, else the configured clusterDefaultNodeSelector)
 * merged into its own, and is refused when the two disagree on a key or when its selector leaves
 * the whitelist configured for its namespace. The namespace is read from the cluster state, then
 * (kube's informer may lag) from the storage, which is the same files until admitd has an API client.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/util.h"
#include "adm/plugins/lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ANNOTATION "scheduler.alpha.kubernetes.io/node-selector"
#define CONFIG_KEY "podNodeSelectorPluginConfig"
#define CONFLICT "pod node label selector conflicts with its namespace node label selector"
#define WHITELIST "pod node label selector labels conflict with its namespace whitelist"

/* The configured map: "clusterDefaultNodeSelector" and namespace names to selector strings. */
typedef struct state_s {
    yyjson_mut_doc *doc; /* its root is the map, or NULL when none was configured */
} state_t;

/* A labels.Set read from a selector string, in the string's order (a later key replaces an earlier). */
typedef struct label_set_s {
    const char **keys;
    const char **values;
    size_t n;
} label_set_t;

static void free_state(void *state)
{
    state_t *s = state;

    if (s != NULL) {
        yyjson_mut_doc_free(s->doc);
        free(s);
    }
}

/* Go's encoding/json matches field names case-insensitively; kube decodes the file that way. */
static yyjson_val *config_map(yyjson_val *config)
{
    yyjson_obj_iter it;
    yyjson_val *k;

    yyjson_obj_iter_init(config, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        if (strcasecmp(yyjson_get_str(k), CONFIG_KEY) == 0) {
            return yyjson_obj_iter_get_val(k);
        }
    }
    return NULL;
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    yyjson_val *map = cfg->config != NULL && yyjson_is_obj(cfg->config) ? config_map(cfg->config) : NULL;
    state_t *s;
    yyjson_obj_iter it;
    yyjson_val *k;

    if (cfg->config != NULL && !yyjson_is_obj(cfg->config)) {
        snprintf(err, err_len, "%s: want an object with %s", cfg->source, CONFIG_KEY);
        return ADM_EINVAL;
    }
    if (map != NULL && !yyjson_is_obj(map) && !yyjson_is_null(map)) {
        snprintf(err, err_len, "%s: %s: want a map of namespace names to node selectors", cfg->source,
                 CONFIG_KEY);
        return ADM_EINVAL;
    }
    yyjson_obj_iter_init(map, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        if (!yyjson_is_str(yyjson_obj_iter_get_val(k))) {
            snprintf(err, err_len, "%s: %s.%s: want a node selector string", cfg->source, CONFIG_KEY,
                     yyjson_get_str(k));
            return ADM_EINVAL;
        }
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    if (yyjson_is_obj(map)) {
        s->doc = yyjson_mut_doc_new(NULL);
        if (s->doc == NULL) {
            free(s);
            return ADM_ENOMEM;
        }
        yyjson_mut_doc_set_root(s->doc, yyjson_val_mut_copy(s->doc, map));
        if (yyjson_mut_doc_get_root(s->doc) == NULL) {
            free_state(s);
            return ADM_ENOMEM;
        }
    }
    *state = s;
    return 0;
}

static const char *configured(const state_t *s, const char *key)
{
    yyjson_mut_val *v = s->doc != NULL ? yyjson_mut_obj_get(yyjson_mut_doc_get_root(s->doc), key) : NULL;

    return yyjson_mut_is_str(v) ? yyjson_mut_get_str(v) : "";
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* IsValidLabelValue: empty, or at most 63 bytes of [A-Za-z0-9-_.] starting and ending alphanumeric. */
static bool label_value_ok(const char *v)
{
    size_t n = strlen(v);

    if (n == 0) {
        return true;
    }
    if (n > 63 || !alnum(v[0]) || !alnum(v[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.') {
            return false;
        }
    }
    return true;
}

/* strings.TrimSpace for the ASCII spaces a selector holds. */
static const char *trim(adm_arena_t *a, const char *s, size_t n)
{
    while (n > 0 && strchr(" \t\n\v\f\r", s[0]) != NULL) {
        s++;
        n--;
    }
    while (n > 0 && strchr(" \t\n\v\f\r", s[n - 1]) != NULL) {
        n--;
    }
    return adm_arena_strndup(a, s, n);
}

static const char *set_get(const label_set_t *set, const char *key)
{
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->keys[i], key) == 0) {
            return set->values[i];
        }
    }
    return NULL;
}

/* Go's fmt of strings.Split(label, "="): "[a b c]". */
static const char *split_text(adm_arena_t *a, const char *label, size_t n)
{
    char *t = adm_arena_printf(a, "[%.*s]", (int)n, label);

    for (size_t i = 1; t != NULL && i <= n; i++) {
        if (t[i] == '=') {
            t[i] = ' ';
        }
    }
    return t;
}

/*
 * labels.ConvertSelectorToLabelsMap: "k=v,k2=v2" as a set. NULL with *err the plain error kube
 * returns for a malformed one ("" when the arena is exhausted).
 */
static label_set_t *parse_selector(adm_arena_t *a, const char *sel, const char **err)
{
    label_set_t *set = adm_arena_calloc(a, 1, sizeof(*set));
    size_t cap = 1;
    const char *p = sel;

    *err = "";
    if (set == NULL) {
        return NULL;
    }
    for (const char *c = sel; *c != '\0'; c++) {
        cap += *c == ',';
    }
    set->keys = adm_arena_calloc(a, cap, sizeof(*set->keys));
    set->values = adm_arena_calloc(a, cap, sizeof(*set->values));
    if (set->keys == NULL || set->values == NULL) {
        return NULL;
    }
    while (sel[0] != '\0') {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        const char *key;
        const char *value;

        if (eq == NULL || memchr(eq + 1, '=', n - (size_t)(eq + 1 - p)) != NULL) {
            *err = adm_arena_printf(a, "invalid selector: %s", split_text(a, p, n));
            return NULL;
        }
        key = trim(a, p, (size_t)(eq - p));
        value = trim(a, eq + 1, n - (size_t)(eq + 1 - p));
        if (key == NULL || value == NULL) {
            return NULL;
        }
        if (!adm_is_qualified_name(key)) {
            *err = adm_arena_printf(a, "Invalid value: %s: invalid label key", adm_go_quote(a, key));
            return NULL;
        }
        if (!label_value_ok(value)) {
            *err = adm_arena_printf(a, "Invalid value: %s: invalid label value", adm_go_quote(a, value));
            return NULL;
        }
        size_t i = 0;
        while (i < set->n && strcmp(set->keys[i], key) != 0) {
            i++;
        }
        set->keys[i] = key;
        set->values[i] = value;
        set->n += i == set->n;
        if (p[n] == '\0') {
            break;
        }
        p += n + 1;
    }
    return set;
}

static int selector_error(adm_status_t *st, adm_arena_t *a, const char *err)
{
    if (err == NULL || err[0] == '\0') {
        return adm_status_nomem(st);
    }
    return adm_status_plain(st, a, "%s", err);
}

/* getNamespaceNodeSelectorMap: ADM_OK with *set, or a rejection in st. */
static int namespace_selector(const state_t *s, adm_attrs_t *attrs, adm_status_t *st, label_set_t **set)
{
    const adm_live_reader_t *live = &adm_live_reader_files;
    const char *name = attrs->req->namespace_ != NULL ? attrs->req->namespace_ : "";
    yyjson_val *ns = adm_lookup(attrs, "", "Namespace", "", name);
    yyjson_val *ann;
    const char *err = NULL;

    if (ns == NULL && live->get(live->arg, attrs, "", "Namespace", "", name, &ns, &err) != ADM_LIVE_FOUND) {
        /* kube's fallback GET turns every failure into this one, which is not a NotFound */
        return adm_status_internal(st, attrs->arena, "namespace %s does not exist", name);
    }
    ann = adm_json_path(ns, "metadata", "annotations", ANNOTATION, NULL);
    *set = parse_selector(
        attrs->arena, yyjson_is_str(ann) ? yyjson_get_str(ann) : configured(s, "clusterDefaultNodeSelector"),
        &err);
    return *set != NULL ? ADM_OK : selector_error(st, attrs->arena, err);
}

static bool ignored(adm_attrs_t *attrs)
{
    return !adm_attrs_is(attrs, "", "pods") || adm_attrs_object(attrs) == NULL ||
           !adm_attrs_kind_is(attrs, "", "Pod");
}

static const char *pod_name(adm_attrs_t *attrs)
{
    yyjson_val *name = adm_json_path(adm_attrs_object(attrs), "metadata", "name", NULL);

    return yyjson_is_str(name) ? yyjson_get_str(name) : "";
}

/* labels.Conflicts(namespace's, pod's). */
static bool conflicts(const label_set_t *ns, yyjson_val *pod_sel)
{
    for (size_t i = 0; i < ns->n; i++) {
        yyjson_val *v = adm_json_get(pod_sel, ns->keys[i]);

        if (yyjson_is_str(v) && strcmp(yyjson_get_str(v), ns->values[i]) != 0) {
            return true;
        }
    }
    return false;
}

static bool whitelisted(const label_set_t *whitelist, const char *key, const char *value)
{
    const char *want = set_get(whitelist, key);

    return want != NULL && value != NULL && strcmp(want, value) == 0;
}

/*
 * The checks Validate makes on the pod's selector: pod_sel, plus ns's labels when merged is set
 * (Admit checks the selector it has just merged).
 */
static int check(const state_t *s, adm_attrs_t *attrs, adm_status_t *st, const label_set_t *ns,
                 yyjson_val *pod_sel, bool merged)
{
    const char *namespace_ = attrs->req->namespace_ != NULL ? attrs->req->namespace_ : "";
    label_set_t *whitelist;
    const char *err = NULL;
    yyjson_obj_iter it;
    yyjson_val *k;

    if (conflicts(ns, pod_sel)) {
        return adm_status_forbidden_named(st, attrs->arena, "", "pods", pod_name(attrs), CONFLICT);
    }
    whitelist = parse_selector(attrs->arena, configured(s, namespace_), &err);
    if (whitelist == NULL) {
        return selector_error(st, attrs->arena, err);
    }
    if (whitelist->n == 0) {
        return ADM_OK;
    }
    yyjson_obj_iter_init(pod_sel, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        if (!whitelisted(whitelist, yyjson_get_str(k), yyjson_get_str(yyjson_obj_iter_get_val(k)))) {
            return adm_status_forbidden_named(st, attrs->arena, "", "pods", pod_name(attrs), WHITELIST);
        }
    }
    for (size_t i = 0; merged && i < ns->n; i++) {
        if (!whitelisted(whitelist, ns->keys[i], ns->values[i])) {
            return adm_status_forbidden_named(st, attrs->arena, "", "pods", pod_name(attrs), WHITELIST);
        }
    }
    return ADM_OK;
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const state_t *s = state;
    label_set_t *ns;
    yyjson_val *pod_sel;
    yyjson_mut_val *root;
    yyjson_mut_val *spec;
    yyjson_mut_val *sel;
    int r;

    if (ignored(attrs)) {
        return ADM_OK;
    }
    r = namespace_selector(s, attrs, st, &ns);
    if (r != ADM_OK) {
        return r;
    }
    pod_sel = adm_json_path(adm_attrs_object(attrs), "spec", "nodeSelector", NULL);
    if (conflicts(ns, pod_sel)) {
        return adm_status_forbidden_named(st, attrs->arena, "", "pods", pod_name(attrs), CONFLICT);
    }
    if (ns->n > 0) {
        root = adm_attrs_mutable_object(attrs);
        spec = root != NULL ? adm_mut_ensure(attrs->mdoc, root, "spec", YYJSON_TYPE_OBJ) : NULL;
        sel = spec != NULL ? adm_mut_ensure(attrs->mdoc, spec, "nodeSelector", YYJSON_TYPE_OBJ) : NULL;
        if (sel == NULL) {
            return adm_status_nomem(st);
        }
        for (size_t i = 0; i < ns->n; i++) {
            if (adm_json_get(pod_sel, ns->keys[i]) == NULL &&
                !yyjson_mut_obj_add_strcpy(attrs->mdoc, sel, ns->keys[i], ns->values[i])) {
                return adm_status_nomem(st);
            }
        }
    }
    /* kube's Admit ends in Validate, on the merged selector */
    return check(s, attrs, st, ns, pod_sel, true);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const state_t *s = state;
    label_set_t *ns;
    int r;

    if (ignored(attrs)) {
        return ADM_OK;
    }
    r = namespace_selector(s, attrs, st, &ns);
    if (r != ADM_OK) {
        return r;
    }
    return check(s, attrs, st, ns, adm_json_path(adm_attrs_object(attrs), "spec", "nodeSelector", NULL),
                 false);
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_pod_node_selector = {
    .name = "PodNodeSelector",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .admit = admit,
    .validate = validate,
};

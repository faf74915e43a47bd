/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTolerationRestriction: a new pod gets its namespace's default tolerations (the namespace
 * annotation scheduler.alpha.kubernetes.io/defaultTolerations, else the configured `default`)
 * merged into its own, every pod that is not BestEffort tolerates the memory-pressure taint, and a
 * pod whose tolerations leave the whitelist (annotation scheduler.alpha.kubernetes.io/
 * tolerationsWhitelist, else the configured `whitelist`) is refused. An annotation that is set,
 * even to "", replaces the configured list. The namespace is read from the cluster state, then
 * (kube's informer may lag) from the storage, which is the same files until admitd has an API
 * client. The configuration is podtolerationrestriction.admission.k8s.io v1 or v1alpha1
 * Configuration.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/util.h"
#include "adm/plugins/lookup.h"
#include "adm/plugins/podspec.h"
#include "adm/plugins/resources.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULTS_ANNOTATION "scheduler.alpha.kubernetes.io/defaultTolerations"
#define WHITELIST_ANNOTATION "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
#define WHITELIST_CONFLICT                                                                                   \
    "pod tolerations (possibly merged with namespace default tolerations) conflict with its %s whitelist"
#define GROUP "podtolerationrestriction.admission.k8s.io/"

/* The configured lists, written as kube writes tolerations; NULL members when not configured. */
typedef struct state_s {
    yyjson_doc *doc;
    yyjson_val *defaults;
    yyjson_val *whitelist;
} state_t;

/* Where decoding a toleration list failed, in the words of Go's encoding/json. */
typedef struct decode_err_s {
    size_t index;      /* the element, when field is set or elem */
    const char *field; /* the Toleration member, or NULL */
    bool elem;         /* the element itself is not an object */
    const char *got;   /* Go's word for the JSON type found ("number 1.5" for a bad int64) */
} decode_err_t;

static void free_state(void *state)
{
    state_t *s = state;

    if (s != NULL) {
        yyjson_doc_free(s->doc);
        free(s);
    }
}

static const char *const FIELDS[] = {"key", "operator", "value", "effect", "tolerationSeconds"};

/* Go's field match: exact for apimachinery's case-sensitive decoder, else case-insensitive (encoding/json).
 */
static int field_index(const char *name, bool fold)
{
    for (int i = 0; i < 5; i++) {
        if (fold ? strcasecmp(name, FIELDS[i]) == 0 : strcmp(name, FIELDS[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* One member of a toleration object into t; false with e filled when Go would not decode it. */
static bool decode_member(adm_arena_t *a, adm_toleration_t *t, int f, yyjson_val *v, decode_err_t *e)
{
    const char **strs[4] = {&t->key, &t->op, &t->value, &t->effect};

    if (yyjson_is_null(v)) {
        if (f == 4) {
            t->has_seconds = false;
        }
        return true;
    }
    e->field = FIELDS[f];
    if (f < 4) {
        e->got = adm_json_go_type(v);
        *strs[f] = yyjson_get_str(v);
        return yyjson_is_str(v);
    }
    if (yyjson_is_int(v) && (yyjson_is_sint(v) || yyjson_get_uint(v) <= INT64_MAX)) {
        t->has_seconds = true;
        t->seconds = yyjson_is_sint(v) ? yyjson_get_sint(v) : (int64_t)yyjson_get_uint(v);
        return true;
    }
    e->got = yyjson_is_num(v) ? adm_arena_printf(a, "number %s", adm_json_text(a, v)) : adm_json_go_type(v);
    return false;
}

/* Appends t to arr as kube's encoder writes a Toleration (empty members left out). */
static bool write_toleration(yyjson_mut_doc *doc, yyjson_mut_val *arr, const adm_toleration_t *t)
{
    yyjson_mut_val *o = yyjson_mut_arr_add_obj(doc, arr);
    const char *strs[4] = {t->key, t->op, t->value, t->effect};
    bool ok = o != NULL;

    for (int f = 0; ok && f < 4; f++) {
        ok = strs[f][0] == '\0' || yyjson_mut_obj_add_strcpy(doc, o, FIELDS[f], strs[f]);
    }
    return ok && (!t->has_seconds || yyjson_mut_obj_add_int(doc, o, FIELDS[4], t->seconds));
}

/*
 * json.Unmarshal of v into []v1.Toleration, written back into arr: null is an empty list, a null
 * element an empty toleration. Returns 1, 0 with e filled, or ADM_ENOMEM.
 */
static int decode_tolerations(adm_arena_t *a, yyjson_val *v, bool fold, yyjson_mut_doc *doc,
                              yyjson_mut_val *arr, decode_err_t *e)
{
    yyjson_arr_iter it;
    yyjson_val *item;

    memset(e, 0, sizeof(*e));
    if (yyjson_is_null(v)) {
        return 1;
    }
    if (!yyjson_is_arr(v)) {
        e->got = adm_json_go_type(v);
        return 0;
    }
    yyjson_arr_iter_init(v, &it);
    for (item = yyjson_arr_iter_next(&it); item != NULL; item = yyjson_arr_iter_next(&it), e->index++) {
        adm_toleration_t t = {"", "", "", "", false, 0};
        yyjson_obj_iter mi;
        yyjson_val *k;

        if (!yyjson_is_obj(item) && !yyjson_is_null(item)) {
            e->elem = true;
            e->got = adm_json_go_type(item);
            return 0;
        }
        yyjson_obj_iter_init(item, &mi);
        for (k = yyjson_obj_iter_next(&mi); k != NULL; k = yyjson_obj_iter_next(&mi)) {
            int f = field_index(yyjson_get_str(k), fold);

            /* unknown members are dropped, as Go drops them */
            if (f >= 0 && !decode_member(a, &t, f, yyjson_obj_iter_get_val(k), e)) {
                return 0;
            }
        }
        if (!write_toleration(doc, arr, &t)) {
            return ADM_ENOMEM;
        }
    }
    return 1;
}

/* Go's UnmarshalTypeError text for e. */
static const char *decode_err_text(adm_arena_t *a, const decode_err_t *e)
{
    if (e->field != NULL) {
        return adm_arena_printf(a, "json: cannot unmarshal %s into Go struct field Toleration.%s of type %s",
                                e->got, e->field, strcmp(e->field, FIELDS[4]) == 0 ? "int64" : "string");
    }
    return adm_arena_printf(a, "json: cannot unmarshal %s into Go value of type %s", e->got,
                            e->elem ? "v1.Toleration" : "[]v1.Toleration");
}

/* ---- configuration ---- */

static bool label_value_ok(const char *v)
{
    return v[0] == '\0' || (strchr(v, '/') == NULL && adm_is_qualified_name(v));
}

/* validation.ValidateTolerations for one toleration: NULL, or "MEMBER: problem" (text in a). */
static const char *toleration_problem(adm_arena_t *a, const adm_toleration_t *t)
{
    const char *op = t->op;

    if (t->key[0] != '\0' && !adm_is_qualified_name(t->key)) {
        return adm_arena_printf(a, "key: Invalid value: %s: must be a qualified name",
                                adm_go_quote(a, t->key));
    }
    if (t->key[0] == '\0' && strcmp(op, "Exists") != 0) {
        return adm_arena_printf(a,
                                "operator: Invalid value: %s: operator must be Exists when `key` is empty, "
                                "which means \"match all values and all keys\"",
                                adm_go_quote(a, op));
    }
    if (t->has_seconds && strcmp(t->effect, "NoExecute") != 0) {
        return adm_arena_printf(a,
                                "effect: Invalid value: %s: effect must be 'NoExecute' when "
                                "`tolerationSeconds` is set",
                                adm_go_quote(a, t->effect));
    }
    if ((op[0] == '\0' || strcmp(op, "Equal") == 0) && !label_value_ok(t->value)) {
        return adm_arena_printf(a,
                                "operator: Invalid value: %s: a valid label must be an empty string or "
                                "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                                "with an alphanumeric character",
                                adm_go_quote(a, t->value));
    }
    if (strcmp(op, "Exists") == 0 && t->value[0] != '\0') {
        return "operator: Invalid value: value must be empty when `operator` is 'Exists'";
    }
    if (op[0] != '\0' && strcmp(op, "Equal") != 0 && strcmp(op, "Exists") != 0) {
        return adm_arena_printf(a, "operator: Unsupported value: %s: supported values: \"Equal\", \"Exists\"",
                                adm_go_quote(a, op));
    }
    if (t->effect[0] != '\0' && strcmp(t->effect, "NoSchedule") != 0 &&
        strcmp(t->effect, "PreferNoSchedule") != 0 && strcmp(t->effect, "NoExecute") != 0) {
        return adm_arena_printf(a,
                                "effect: Unsupported value: %s: supported values: \"NoSchedule\", "
                                "\"PreferNoSchedule\", \"NoExecute\"",
                                adm_go_quote(a, t->effect));
    }
    return NULL;
}

/* One configured list (`default` or `whitelist`) into root: NULL, or "FIELD: problem". */
static const char *read_list(adm_arena_t *a, yyjson_val *config, const char *name, yyjson_mut_doc *doc,
                             yyjson_mut_val *root)
{
    yyjson_val *v = yyjson_obj_get(config, name);
    yyjson_mut_val *arr;
    decode_err_t e;
    int r;

    if (v == NULL) {
        return NULL;
    }
    arr = yyjson_mut_obj_add_arr(doc, root, name);
    r = arr != NULL ? decode_tolerations(a, v, false, doc, arr, &e) : ADM_ENOMEM;
    if (r == 0) {
        return e.field != NULL || e.elem
                   ? adm_arena_printf(a, "%s[%zu]: %s", name, e.index, decode_err_text(a, &e))
                   : adm_arena_printf(a, "%s: %s", name, decode_err_text(a, &e));
    }
    return r == 1 ? NULL : "out of memory";
}

/* Validates the decoded lists of s (ValidateConfiguration): NULL, or "FIELD[i].MEMBER: problem". */
static const char *validate_lists(adm_arena_t *a, const state_t *s)
{
    yyjson_val *lists[2] = {s->defaults, s->whitelist};
    static const char *const names[2] = {"default", "whitelist"};

    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; i < yyjson_arr_size(lists[l]); i++) {
            adm_toleration_t t = adm_toleration_read(yyjson_arr_get(lists[l], i));
            const char *why = toleration_problem(a, &t);

            if (why != NULL) {
                return adm_arena_printf(a, "%s[%zu].%s", names[l], i, why);
            }
        }
    }
    return NULL;
}

/* Fills s from the Configuration: NULL, or "FIELD: problem". */
static const char *read_config(adm_arena_t *a, yyjson_val *root, state_t *s)
{
    const char *api = adm_json_str(root, "apiVersion");
    yyjson_mut_doc *doc;
    yyjson_mut_val *lists;
    yyjson_alc alc;
    const char *why;

    if (!yyjson_is_obj(root)) {
        return "the configuration must be an object";
    }
    if (strcmp(api, GROUP "v1") != 0 && strcmp(api, GROUP "v1alpha1") != 0) {
        return adm_arena_printf(a, "apiVersion: %s is not " GROUP "v1 or v1alpha1", adm_go_quote(a, api));
    }
    if (strcmp(adm_json_str(root, "kind"), "Configuration") != 0) {
        return adm_arena_printf(a, "kind: %s is not Configuration",
                                adm_go_quote(a, adm_json_str(root, "kind")));
    }
    adm_json_alc_init(&alc, a);
    doc = yyjson_mut_doc_new(&alc);
    lists = doc != NULL ? yyjson_mut_obj(doc) : NULL;
    if (lists == NULL) {
        return "out of memory";
    }
    yyjson_mut_doc_set_root(doc, lists);
    why = read_list(a, root, "default", doc, lists);
    if (why == NULL) {
        why = read_list(a, root, "whitelist", doc, lists);
    }
    if (why != NULL) {
        return why;
    }
    s->doc = yyjson_mut_doc_imut_copy(doc, NULL);
    if (s->doc == NULL) {
        return "out of memory";
    }
    s->defaults = yyjson_obj_get(yyjson_doc_get_root(s->doc), "default");
    s->whitelist = yyjson_obj_get(yyjson_doc_get_root(s->doc), "whitelist");
    return validate_lists(a, s);
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_arena_t *a;
    state_t *s;
    const char *why;

    if (cfg->config == NULL) {
        return 0; /* loadConfiguration(nil): no default, no whitelist */
    }
    a = adm_arena_create(4096);
    s = calloc(1, sizeof(*s));
    if (a == NULL || s == NULL) {
        adm_arena_destroy(a);
        free(s);
        return ADM_ENOMEM;
    }
    why = read_config(a, cfg->config, s);
    if (why != NULL) {
        /* why may live in the arena: read it before the arena goes */
        int rc = strcmp(why, "out of memory") == 0 ? ADM_ENOMEM : ADM_EINVAL;

        snprintf(err, err_len, "%s: %s", cfg->source, why);
        adm_arena_destroy(a);
        free_state(s);
        return rc;
    }
    adm_arena_destroy(a);
    *state = s;
    return 0;
}

/* ---- the request ---- */

static bool ignored(adm_attrs_t *attrs)
{
    return !adm_attrs_is(attrs, "", "pods") || attrs->req->sub_resource[0] != '\0' ||
           adm_attrs_object(attrs) == NULL || !adm_attrs_kind_is(attrs, "", "Pod");
}

/*
 * extractNSTolerations(namespace, key): ADM_OK with *list the annotation's tolerations (NULL and
 * *set false when the annotation is absent; *set true, even for "", when it is there), or a
 * rejection: the namespace not found (404), the annotation not a toleration list (Go's error, 500).
 */
static int namespace_tolerations(adm_attrs_t *attrs, adm_status_t *st, const char *key, yyjson_val **list,
                                 bool *set)
{
    const adm_live_reader_t *live = &adm_live_reader_files;
    const char *name = attrs->req->namespace_;
    yyjson_val *ns = adm_lookup(attrs, "", "Namespace", "", name);
    yyjson_val *ann;
    const char *err = NULL;
    yyjson_read_err rerr;
    yyjson_doc *parsed;
    yyjson_mut_doc *doc;
    yyjson_mut_val *arr;
    yyjson_alc alc;
    decode_err_t e;
    int r;

    *list = NULL;
    *set = false;
    if (ns == NULL) {
        adm_live_result_t got = live->get(live->arg, attrs, "", "Namespace", "", name, &ns, &err);

        if (got == ADM_LIVE_NOT_FOUND) {
            return adm_status_not_found(st, attrs->arena, "", "namespaces", name);
        }
        if (got != ADM_LIVE_FOUND) {
            return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "");
        }
    }
    ann = adm_json_path(ns, "metadata", "annotations", key, NULL);
    if (!yyjson_is_str(ann)) {
        return ADM_OK;
    }
    *set = true;
    if (yyjson_get_len(ann) == 0) {
        return ADM_OK;
    }
    parsed = adm_json_read(attrs->arena, yyjson_get_str(ann), yyjson_get_len(ann), &rerr);
    if (parsed == NULL) {
        return adm_status_plain(
            st, attrs->arena, "%s",
            adm_json_go_error(attrs->arena, yyjson_get_str(ann), yyjson_get_len(ann), &rerr));
    }
    adm_json_alc_init(&alc, attrs->arena);
    doc = yyjson_mut_doc_new(&alc);
    arr = doc != NULL ? yyjson_mut_arr(doc) : NULL;
    r = arr != NULL ? decode_tolerations(attrs->arena, yyjson_doc_get_root(parsed), true, doc, arr, &e)
                    : ADM_ENOMEM;
    if (r == 0) {
        return adm_status_plain(st, attrs->arena, "%s", decode_err_text(attrs->arena, &e));
    }
    parsed = r == 1 ? yyjson_mut_val_imut_copy(arr, &alc) : NULL;
    if (parsed == NULL) {
        return adm_status_nomem(st);
    }
    *list = yyjson_doc_get_root(parsed);
    return ADM_OK;
}

/* VerifyAgainstWhitelist: each toleration has a superset in the whitelist. */
static bool within_whitelist(yyjson_val *tolerations, yyjson_val *whitelist)
{
    yyjson_arr_iter it;
    yyjson_val *v;

    yyjson_arr_iter_init(tolerations, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        adm_toleration_t t = adm_toleration_read(v);
        bool covered = false;

        for (size_t i = 0; !covered && i < yyjson_arr_size(whitelist); i++) {
            adm_toleration_t w = adm_toleration_read(yyjson_arr_get(whitelist, i));

            covered = adm_toleration_is_superset(&w, &t);
        }
        if (!covered) {
            return false;
        }
    }
    return true;
}

/* Validate: the pod's tolerations against the namespace's whitelist, else the configured one. */
static int check_whitelist(const state_t *s, adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod)
{
    yyjson_val *tolerations = adm_json_path(pod, "spec", "tolerations", NULL);
    yyjson_val *whitelist;
    bool set;
    int r;

    if (yyjson_arr_size(tolerations) == 0) {
        return ADM_OK;
    }
    r = namespace_tolerations(attrs, st, WHITELIST_ANNOTATION, &whitelist, &set);
    if (r != ADM_OK) {
        return r;
    }
    if (!set && s != NULL) {
        whitelist = s->whitelist;
    }
    if (yyjson_arr_size(whitelist) > 0 && !within_whitelist(tolerations, whitelist)) {
        return adm_status_plain(st, attrs->arena, WHITELIST_CONFLICT, set ? "namespace" : "cluster");
    }
    return ADM_OK;
}

/*
 * The tolerations Admit adds: the defaults and, unless the pod is BestEffort, memory pressure.
 * Returns ADM_OK with *extra set (NULL: none), or ADM_ENOMEM.
 */
static int extra_tolerations(adm_attrs_t *attrs, yyjson_val *defaults, yyjson_val *pod, yyjson_val **extra)
{
    static const adm_toleration_t memory_pressure = {
        "node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule", false, 0};
    yyjson_mut_doc *doc;
    yyjson_mut_val *arr;
    yyjson_doc *out;
    yyjson_alc alc;

    *extra = defaults;
    if (adm_pod_qos_best_effort(pod)) {
        return ADM_OK;
    }
    adm_json_alc_init(&alc, attrs->arena);
    doc = yyjson_mut_doc_new(&alc);
    arr = doc != NULL ? yyjson_mut_arr(doc) : NULL;
    for (size_t i = 0; arr != NULL && i < yyjson_arr_size(defaults); i++) {
        if (!yyjson_mut_arr_append(arr, yyjson_val_mut_copy(doc, yyjson_arr_get(defaults, i)))) {
            arr = NULL;
        }
    }
    out = arr != NULL && write_toleration(doc, arr, &memory_pressure) ? yyjson_mut_val_imut_copy(arr, &alc)
                                                                      : NULL;
    *extra = yyjson_doc_get_root(out);
    return out != NULL ? ADM_OK : ADM_ENOMEM;
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const state_t *s = state;
    yyjson_val *pod;
    yyjson_val *defaults = NULL;
    yyjson_val *extra;
    yyjson_mut_val *root;
    yyjson_mut_val *spec;
    yyjson_mut_val *merged;
    bool set = false;
    int r;

    if (ignored(attrs)) {
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    if (attrs->req->operation == ADM_OP_CREATE) {
        r = namespace_tolerations(attrs, st, DEFAULTS_ANNOTATION, &defaults, &set);
        if (r != ADM_OK) {
            return r;
        }
        if (!set && s != NULL) {
            defaults = s->defaults;
        }
    }
    if (extra_tolerations(attrs, defaults, pod, &extra) != ADM_OK) {
        return adm_status_nomem(st);
    }
    if (yyjson_arr_size(extra) > 0) {
        /* the object before the change stays readable: it lives in the request's arena */
        root = adm_attrs_mutable_object(attrs);
        merged = root != NULL ? adm_merge_tolerations(attrs->mdoc,
                                                      adm_json_path(pod, "spec", "tolerations", NULL), extra)
                              : NULL;
        spec = merged != NULL ? adm_mut_ensure(attrs->mdoc, root, "spec", YYJSON_TYPE_OBJ) : NULL;
        if (spec == NULL) {
            return adm_status_nomem(st);
        }
        yyjson_mut_obj_remove_key(spec, "tolerations");
        if (!yyjson_mut_obj_add_val(attrs->mdoc, spec, "tolerations", merged)) {
            return adm_status_nomem(st);
        }
        pod = adm_attrs_object(attrs);
        if (pod == NULL) {
            return adm_status_nomem(st);
        }
    }
    /* kube's Admit ends in Validate, on the merged tolerations */
    return check_whitelist(s, attrs, st, pod);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    if (ignored(attrs)) {
        return ADM_OK;
    }
    return check_whitelist(state, attrs, st, adm_attrs_object(attrs));
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_pod_toleration_restriction = {
    .name = "PodTolerationRestriction",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .admit = admit,
    .validate = validate,
};

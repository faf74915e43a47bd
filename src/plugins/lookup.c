/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster-state reads and the NotFound / cause Statuses the cluster-state plugins share
 * (include/adm/plugins/lookup.h).
 */
#include "adm/plugins/lookup.h"

#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/cluster_state.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

yyjson_val *adm_lookup(adm_attrs_t *attrs, const char *group, const char *kind, const char *namespace_,
                       const char *name)
{
    const adm_cluster_state_t *cs = adm_plugin_cluster(attrs);

    return cs != NULL ? adm_cluster_state_get(cs, group, kind, namespace_, name) : NULL;
}

yyjson_val *const *adm_lookup_list(adm_attrs_t *attrs, const char *group, const char *kind, size_t *n)
{
    const adm_cluster_state_t *cs = adm_plugin_cluster(attrs);

    *n = 0;
    return cs != NULL ? adm_cluster_state_list(cs, group, kind, NULL, n) : NULL;
}

/*
 * metadata.creationTimestamp (RFC 3339, as the API server writes it: seconds, "Z" or an offset)
 * in seconds since the epoch; INT64_MIN, older than any time, when absent or not a time.
 */
static int64_t creation_seconds(yyjson_val *obj)
{
    const char *t = adm_json_str(adm_json_get(obj, "metadata"), "creationTimestamp");
    struct tm tm;
    const char *rest;
    int64_t secs;

    memset(&tm, 0, sizeof(tm));
    rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
    if (rest == NULL) {
        return INT64_MIN;
    }
    while (*rest == '.' || (*rest >= '0' && *rest <= '9')) {
        rest++; /* fractional seconds: the API server keeps whole seconds */
    }
    secs = (int64_t)timegm(&tm);
    if ((rest[0] == '+' || rest[0] == '-') && strlen(rest) == 6 && rest[3] == ':') {
        int64_t off =
            ((rest[1] - '0') * 10 + (rest[2] - '0')) * 3600 + ((rest[4] - '0') * 10 + (rest[5] - '0')) * 60;

        return rest[0] == '+' ? secs - off : secs + off;
    }
    return strcmp(rest, "Z") == 0 ? secs : INT64_MIN;
}

static bool is_default(yyjson_val *obj, const char *const *annotations)
{
    yyjson_val *ann = adm_json_path(obj, "metadata", "annotations", NULL);

    for (size_t i = 0; annotations[i] != NULL; i++) {
        if (strcmp(adm_json_str(ann, annotations[i]), "true") == 0) {
            return true;
        }
    }
    return false;
}

yyjson_val *adm_lookup_default_class(adm_attrs_t *attrs, const char *group, const char *kind,
                                     const char *const *annotations)
{
    size_t n = 0;
    yyjson_val *const *all = adm_lookup_list(attrs, group, kind, &n);
    yyjson_val *best = NULL;
    int64_t best_t = INT64_MIN;

    for (size_t i = 0; i < n; i++) {
        int64_t t;

        if (!is_default(all[i], annotations)) {
            continue;
        }
        t = creation_seconds(all[i]);
        if (best == NULL || t > best_t ||
            (t == best_t && strcmp(adm_json_str(adm_json_get(all[i], "metadata"), "name"),
                                   adm_json_str(adm_json_get(best, "metadata"), "name")) < 0)) {
            best = all[i];
            best_t = t;
        }
    }
    return best;
}

static adm_live_result_t files_get(void *arg, adm_attrs_t *attrs, const char *group, const char *kind,
                                   const char *namespace_, const char *name, yyjson_val **obj,
                                   const char **err)
{
    (void)arg;
    *err = NULL;
    *obj = adm_lookup(attrs, group, kind, namespace_, name);
    return *obj != NULL ? ADM_LIVE_FOUND : ADM_LIVE_NOT_FOUND;
}

const adm_live_reader_t adm_live_reader_files = {.get = files_get, .arg = NULL};

/* A fresh object in doc for st->details: a mutable share of the old details, or an empty object. */
static yyjson_mut_val *details_copy(yyjson_mut_doc *doc, yyjson_val *details)
{
    return yyjson_is_obj(details) ? adm_json_mut_share(doc, details) : yyjson_mut_obj(doc);
}

static int set_details(adm_status_t *st, yyjson_mut_doc *doc, yyjson_mut_val *root, yyjson_alc *alc)
{
    yyjson_doc *out;

    yyjson_mut_doc_set_root(doc, root);
    out = yyjson_mut_doc_imut_copy(doc, alc);
    if (out == NULL) {
        return ADM_ENOMEM;
    }
    st->details = yyjson_doc_get_root(out);
    return ADM_DECLINED;
}

int adm_status_not_found(adm_status_t *st, adm_arena_t *a, const char *group, const char *resource,
                         const char *name)
{
    const char *gr = adm_group_resource(a, group, resource);
    const char *qname = adm_go_quote(a, name);
    yyjson_alc alc;
    yyjson_mut_doc *doc;
    yyjson_mut_val *details;
    bool ok;

    if (gr == NULL || qname == NULL) {
        return ADM_ENOMEM;
    }
    st->code = 404;
    st->reason = "NotFound";
    st->message = adm_arena_printf(a, "%s %s not found", gr, qname);
    adm_json_alc_init(&alc, a);
    doc = yyjson_mut_doc_new(&alc);
    details = doc != NULL ? yyjson_mut_obj(doc) : NULL;
    ok = st->message != NULL && details != NULL;
    /* metav1.StatusDetails order, empty members omitted */
    ok = ok && (name[0] == '\0' || yyjson_mut_obj_add_str(doc, details, "name", name));
    ok = ok && (group[0] == '\0' || yyjson_mut_obj_add_str(doc, details, "group", group));
    ok = ok && (resource[0] == '\0' || yyjson_mut_obj_add_str(doc, details, "kind", resource));
    return ok ? set_details(st, doc, details, &alc) : ADM_ENOMEM;
}

int adm_status_add_cause(adm_status_t *st, adm_arena_t *a, const char *type, const char *message,
                         const char *field)
{
    yyjson_alc alc;
    yyjson_mut_doc *doc;
    yyjson_mut_val *details;
    yyjson_mut_val *causes;
    yyjson_mut_val *cause;
    bool ok;

    adm_json_alc_init(&alc, a);
    doc = yyjson_mut_doc_new(&alc);
    details = doc != NULL ? details_copy(doc, st->details) : NULL;
    causes = details != NULL ? adm_mut_ensure(doc, details, "causes", YYJSON_TYPE_ARR) : NULL;
    cause = causes != NULL ? yyjson_mut_arr_add_obj(doc, causes) : NULL;
    ok = cause != NULL;
    ok = ok && (type[0] == '\0' || yyjson_mut_obj_add_str(doc, cause, "reason", type));
    ok = ok && (message[0] == '\0' || yyjson_mut_obj_add_str(doc, cause, "message", message));
    ok = ok && (field[0] == '\0' || yyjson_mut_obj_add_str(doc, cause, "field", field));
    return ok ? set_details(st, doc, details, &alc) : ADM_ENOMEM;
}

int adm_lookup_set_default_class(adm_attrs_t *attrs, adm_status_t *st, const char *group, const char *kind,
                                 const char *const *annotations, const char *field)
{
    yyjson_val *def = adm_lookup_default_class(attrs, group, kind, annotations);
    yyjson_val *spec;
    yyjson_mut_doc *doc;

    if (def == NULL) {
        return ADM_OK;
    }
    spec = adm_attrs_ensure(attrs, YYJSON_TYPE_OBJ, "spec", NULL);
    doc = adm_attrs_values_doc(attrs);
    if (spec == NULL || doc == NULL ||
        adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, field,
                           yyjson_mut_strcpy(doc, adm_json_str(adm_json_get(def, "metadata"), "name"))) !=
            ADM_OK) {
        return adm_status_nomem(st);
    }
    return ADM_OK;
}

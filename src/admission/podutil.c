/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod helpers of kube's pkg/api/pod (util.go) and its toleration helpers, for the plugins that
 * read or change pods: tolerations read and added as AddOrUpdateTolerationInPod does, and the
 * walkers over a PodSpec's references to other API objects (VisitPodSecretNames,
 * VisitPodConfigmapNames, HasAPIObjectReference) with kube's order of looking, so the first
 * reference found, and the message that names it, are kube's.
 */
#include "adm/admission/podutil.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"

#include <string.h>

static const char *const container_lists[] = ADM_POD_CONTAINER_LISTS;
#define NLISTS (sizeof(container_lists) / sizeof(container_lists[0]))

static const char *mstr(yyjson_mut_val *obj, const char *key)
{
    const char *s = yyjson_mut_get_str(adm_mut_get(obj, key));

    return s != NULL ? s : "";
}

adm_toleration_t adm_toleration_read(yyjson_val *t)
{
    yyjson_val *secs = adm_json_get(t, "tolerationSeconds");
    adm_toleration_t out = {
        .key = adm_json_str(t, "key"),
        .op = adm_json_str(t, "operator"),
        .value = adm_json_str(t, "value"),
        .effect = adm_json_str(t, "effect"),
        .has_seconds = yyjson_is_int(secs),
        .seconds = yyjson_is_int(secs) ? yyjson_get_sint(secs) : 0,
    };

    return out;
}

/* Go field order, empty members omitted as omitempty does. */
static yyjson_mut_val *toleration_value(yyjson_mut_doc *doc, const adm_toleration_t *t)
{
    yyjson_mut_val *o = yyjson_mut_obj(doc);
    bool ok = o != NULL;

    if (ok && t->key[0] != '\0') {
        ok = yyjson_mut_obj_add_strcpy(doc, o, "key", t->key);
    }
    if (ok && t->op[0] != '\0') {
        ok = yyjson_mut_obj_add_strcpy(doc, o, "operator", t->op);
    }
    if (ok && t->value[0] != '\0') {
        ok = yyjson_mut_obj_add_strcpy(doc, o, "value", t->value);
    }
    if (ok && t->effect[0] != '\0') {
        ok = yyjson_mut_obj_add_strcpy(doc, o, "effect", t->effect);
    }
    if (ok && t->has_seconds) {
        ok = yyjson_mut_obj_add_sint(doc, o, "tolerationSeconds", t->seconds);
    }
    return ok ? o : NULL;
}

/* AddOrUpdateTolerationInPod on the list itself: 1 when it changed, 0 when not, or ADM_ENOMEM. */
static int list_add_or_update(yyjson_mut_doc *doc, yyjson_mut_val *list, const adm_toleration_t *t)
{
    yyjson_mut_val *item;
    yyjson_mut_arr_iter it;
    size_t idx = 0;

    yyjson_mut_arr_iter_init(list, &it);
    for (item = yyjson_mut_arr_iter_next(&it); item != NULL; item = yyjson_mut_arr_iter_next(&it)) {
        yyjson_mut_val *secs = adm_mut_get(item, "tolerationSeconds");
        bool has_seconds = yyjson_mut_is_int(secs);
        yyjson_mut_val *replacement;

        if (strcmp(mstr(item, "key"), t->key) != 0 || strcmp(mstr(item, "operator"), t->op) != 0 ||
            strcmp(mstr(item, "value"), t->value) != 0 || strcmp(mstr(item, "effect"), t->effect) != 0) {
            idx++;
            continue;
        }
        if (has_seconds == t->has_seconds && (!has_seconds || yyjson_mut_get_sint(secs) == t->seconds)) {
            return 0; /* already there, equal in every field */
        }
        replacement = toleration_value(doc, t);
        if (replacement == NULL) {
            return ADM_ENOMEM;
        }
        yyjson_mut_arr_replace(list, idx, replacement);
        return 1;
    }
    item = toleration_value(doc, t);
    if (item == NULL || !yyjson_mut_arr_append(list, item)) {
        return ADM_ENOMEM;
    }
    return 1;
}

int adm_pod_add_or_update_toleration(yyjson_mut_doc *doc, yyjson_mut_val *pod, const adm_toleration_t *t)
{
    yyjson_mut_val *spec = adm_mut_ensure(doc, pod, "spec", YYJSON_TYPE_OBJ);
    yyjson_mut_val *list = spec != NULL ? adm_mut_ensure(doc, spec, "tolerations", YYJSON_TYPE_ARR) : NULL;

    return list != NULL ? list_add_or_update(doc, list, t) : ADM_ENOMEM;
}

int adm_pod_edit_tolerations(adm_attrs_t *attrs, const adm_toleration_t *ts, size_t n)
{
    /* the list read (edits pending elsewhere in the pod are not laid out for it), then the
       targets, which that read leaves in place */
    yyjson_val *list = adm_attrs_get(attrs, "spec", "tolerations", NULL);
    yyjson_val *pod = adm_attrs_target(attrs, NULL);
    yyjson_val *spec = adm_attrs_target(attrs, "spec", NULL);
    yyjson_mut_doc *doc = adm_attrs_values_doc(attrs);
    yyjson_mut_val *mlist, *mspec;
    adm_edit_t e;
    int changed = 0;

    if (!yyjson_is_obj(pod) || doc == NULL || adm_json_not_ensurable(spec, YYJSON_TYPE_OBJ) ||
        adm_json_not_ensurable(list, YYJSON_TYPE_ARR)) {
        return ADM_ENOMEM;
    }
    mlist = yyjson_is_arr(list) ? adm_json_mut_share(doc, list) : yyjson_mut_arr(doc);
    if (mlist == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = list_add_or_update(doc, mlist, &ts[i]);

        if (rc < 0) {
            return rc;
        }
        changed += rc;
    }
    if (changed == 0) {
        return 0;
    }
    /* the list replaced, set into spec (in place of a null), or a spec made around it */
    if (yyjson_is_arr(list)) {
        e = (adm_edit_t){.op = ADM_EDIT_REPLACE, .target = list, .value = mlist};
    } else if (yyjson_is_obj(spec)) {
        e = (adm_edit_t){ADM_EDIT_SET, spec, "tolerations", strlen("tolerations"), mlist};
    } else {
        mspec = yyjson_mut_obj(doc);
        if (mspec == NULL || !yyjson_mut_obj_add_val(doc, mspec, "tolerations", mlist)) {
            return ADM_ENOMEM;
        }
        e = (adm_edit_t){ADM_EDIT_SET, pod, "spec", strlen("spec"), mspec};
    }
    return adm_attrs_edit(attrs, &e) == ADM_OK ? changed : ADM_ENOMEM;
}

/* ---- references to other API objects (HasAPIObjectReference) ---- */

static bool present(yyjson_val *v)
{
    return v != NULL && !yyjson_is_null(v);
}

/* The object at obj[key] is set and names something (kube's visitors skip empty names). */
static bool ref_named(yyjson_val *obj, const char *key)
{
    yyjson_val *ref = adm_json_get(obj, key);

    return present(ref) && adm_json_str(ref, "name")[0] != '\0';
}

/* A container of any list references a secret or configmap through envFrom[].from or env[].valueFrom.key. */
static bool containers_reference(yyjson_val *spec, const char *from, const char *key)
{
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_get(spec, container_lists[l]), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            yyjson_val *e;
            yyjson_arr_iter eit;

            yyjson_arr_iter_init(adm_json_get(c, "envFrom"), &eit);
            for (e = yyjson_arr_iter_next(&eit); e != NULL; e = yyjson_arr_iter_next(&eit)) {
                if (ref_named(e, from)) {
                    return true;
                }
            }
            yyjson_arr_iter_init(adm_json_get(c, "env"), &eit);
            for (e = yyjson_arr_iter_next(&eit); e != NULL; e = yyjson_arr_iter_next(&eit)) {
                if (ref_named(adm_json_get(e, "valueFrom"), key)) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* Some projected source of volume v is set as key and names something. */
static bool projected_names(yyjson_val *v, const char *key)
{
    yyjson_val *s;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(adm_json_path(v, "projected", "sources", NULL), &it);
    for (s = yyjson_arr_iter_next(&it); s != NULL; s = yyjson_arr_iter_next(&it)) {
        if (ref_named(s, key)) {
            return true;
        }
    }
    return false;
}

/*
 * podutil.VisitPodSecretNames finds a name. Its volume switch takes the first source set, in this
 * order, and looks only there.
 */
bool adm_pod_references_secrets(yyjson_val *spec)
{
    static const struct {
        const char *source;
        const char *member; /* a name string, or an object with a name ("ref") */
        bool ref;
    } sources[] = {
        {"azureFile", "secretName", false},
        {"cephfs", "secretRef", true},
        {"cinder", "secretRef", true},
        {"flexVolume", "secretRef", true},
        {"projected", NULL, false},
        {"rbd", "secretRef", true},
        {"secret", "secretName", false},
        {"scaleIO", "secretRef", true},
        {"iscsi", "secretRef", true},
        {"storageos", "secretRef", true},
        {"csi", "nodePublishSecretRef", true},
    };
    yyjson_val *v;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(adm_json_get(spec, "imagePullSecrets"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        if (adm_json_str(v, "name")[0] != '\0') {
            return true;
        }
    }
    if (containers_reference(spec, "secretRef", "secretKeyRef")) {
        return true;
    }
    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
            yyjson_val *src = adm_json_get(v, sources[i].source);

            if (!present(src)) {
                continue;
            }
            if (sources[i].member == NULL ? projected_names(v, "secret")
                : sources[i].ref          ? ref_named(src, sources[i].member)
                                          : adm_json_str(src, sources[i].member)[0] != '\0') {
                return true;
            }
            break;
        }
    }
    return false;
}

/* podutil.VisitPodConfigmapNames finds a name (projected volumes are looked at first). */
bool adm_pod_references_configmaps(yyjson_val *spec)
{
    yyjson_val *v;
    yyjson_arr_iter it;

    if (containers_reference(spec, "configMapRef", "configMapKeyRef")) {
        return true;
    }
    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        if (present(adm_json_get(v, "projected")) ? projected_names(v, "configMap")
                                                  : ref_named(v, "configMap")) {
            return true;
        }
    }
    return false;
}

/* Volume sources that need no API object. */
static const char *const local_sources[] = {
    "awsElasticBlockStore",
    "azureDisk",
    "cephfs",
    "cinder",
    "downwardAPI",
    "emptyDir",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "gitRepo",
    "hostPath",
    "image",
    "iscsi",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
};

/* Volume sources that do, with what HasAPIObjectReference calls them; projected follows these. */
static const struct {
    const char *source;
    const char *what;
} api_sources[] = {
    {"configMap", "configmaps (via configmap volumes)"},
    {"secret", "secrets (via secret volumes)"},
    {"csi", "csidrivers (via CSI volumes)"},
    {"glusterfs", "endpoints (via glusterFS volumes)"},
    {"persistentVolumeClaim", "persistentvolumeclaims"},
    {"ephemeral", "persistentvolumeclaims (via ephemeral volumes)"},
    {"azureFile", "secrets (via azureFile volumes)"},
};

static bool has_any(yyjson_val *obj, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (present(adm_json_get(obj, keys[i]))) {
            return true;
        }
    }
    return false;
}

/* A volume with no source besides its name: the API server's defaulting made it an emptyDir. */
static bool defaulted_empty_dir(yyjson_val *v)
{
    yyjson_val *k;
    yyjson_obj_iter it;

    yyjson_obj_iter_init(v, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        if (strcmp(yyjson_get_str(k), "name") != 0 && present(yyjson_obj_iter_get_val(k))) {
            return false;
        }
    }
    return true;
}

/* Outcome of the projected sources of one volume: a reference, none, or an unknown source. */
static const char *projected_reference(yyjson_val *v, bool *unknown)
{
    static const struct {
        const char *source;
        const char *what; /* NULL: needs no API object */
    } kinds[] = {
        {"configMap", "configmaps (via projected volumes)"},
        {"secret", "secrets (via projected volumes)"},
        {"serviceAccountToken", "serviceaccounts (via projected volumes)"},
        {"clusterTrustBundle", "clustertrustbundles"},
        {"podCertificate", "podcertificates"},
        {"downwardAPI", NULL},
    };
    yyjson_val *s;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(adm_json_path(v, "projected", "sources", NULL), &it);
    for (s = yyjson_arr_iter_next(&it); s != NULL; s = yyjson_arr_iter_next(&it)) {
        size_t i;

        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
            if (present(adm_json_get(s, kinds[i].source))) {
                break;
            }
        }
        if (i == sizeof(kinds) / sizeof(kinds[0])) {
            *unknown = true;
            return NULL;
        }
        if (kinds[i].what != NULL) {
            return kinds[i].what;
        }
    }
    return NULL;
}

/*
 * podutil.HasAPIObjectReference: the plural of the first kind of API object the pod references, in
 * kube's order, or NULL. *err is set to the error kube returns for a volume or projected source it
 * does not know.
 */
const char *adm_pod_api_object_reference(adm_arena_t *a, yyjson_val *spec, const char **err)
{
    yyjson_val *v;
    yyjson_arr_iter it;

    *err = NULL;
    if (adm_json_str(spec, "serviceAccountName")[0] != '\0') {
        return "serviceaccounts";
    }
    if (adm_pod_references_secrets(spec)) {
        return "secrets";
    }
    if (adm_pod_references_configmaps(spec)) {
        return "configmaps";
    }
    if (yyjson_arr_size(adm_json_get(spec, "resourceClaims")) > 0) {
        return "resourceclaims";
    }
    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        const char *name = adm_json_str(v, "name");
        const char *what = NULL;
        bool unknown = false;
        size_t i;

        if (has_any(v, local_sources, sizeof(local_sources) / sizeof(local_sources[0]))) {
            continue;
        }
        for (i = 0; i < sizeof(api_sources) / sizeof(api_sources[0]); i++) {
            if (present(adm_json_get(v, api_sources[i].source))) {
                return api_sources[i].what;
            }
        }
        if (present(adm_json_get(v, "projected"))) {
            what = projected_reference(v, &unknown);
            if (what != NULL) {
                return what;
            }
            if (unknown) {
                const char *q = adm_go_quote(a, name);

                *err = q != NULL ? adm_arena_printf(a, "unknown source for projected volume %s", q) : NULL;
                return "";
            }
            continue;
        }
        if (!defaulted_empty_dir(v)) {
            const char *q = adm_go_quote(a, name);

            /* sic: two spaces in kube's message */
            *err = q != NULL ? adm_arena_printf(a, "unknown volume type for volume  %s", q) : NULL;
            return "";
        }
    }
    return NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DefaultStorageClass: a new PersistentVolumeClaim that names no class (no spec.storageClassName,
 * not even "", and no volume.beta.kubernetes.io/storage-class annotation) gets the default
 * StorageClass: the one annotated storageclass.kubernetes.io/is-default-class=true (or its beta
 * twin), the newest when several are. No default, no change.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"

static const char *const default_annotations[] = {
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
    NULL,
};

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *pvc;
    yyjson_val *def;
    yyjson_mut_val *root;
    yyjson_mut_val *spec;

    (void)state;
    if (!adm_attrs_is(attrs, "", "persistentvolumeclaims")) {
        return ADM_OK;
    }
    pvc = adm_attrs_object(attrs);
    /* not a claim: not this plugin's to handle */
    if (pvc == NULL || !adm_attrs_kind_is(attrs, "", "PersistentVolumeClaim")) {
        return ADM_OK;
    }
    if (adm_json_get(adm_json_path(pvc, "metadata", "annotations", NULL),
                     "volume.beta.kubernetes.io/storage-class") != NULL ||
        yyjson_is_str(adm_json_path(pvc, "spec", "storageClassName", NULL))) {
        return ADM_OK;
    }
    def = adm_lookup_default_class(attrs, "storage.k8s.io", "StorageClass", default_annotations);
    if (def == NULL) {
        return ADM_OK;
    }
    root = adm_attrs_mutable_object(attrs);
    spec = root != NULL ? adm_mut_ensure(attrs->mdoc, root, "spec", YYJSON_TYPE_OBJ) : NULL;
    if (spec == NULL) {
        return adm_status_nomem(st);
    }
    yyjson_mut_obj_remove_key(spec, "storageClassName");
    if (!yyjson_mut_obj_add_strcpy(attrs->mdoc, spec, "storageClassName",
                                   adm_json_str(adm_json_get(def, "metadata"), "name"))) {
        return adm_status_nomem(st);
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_default_storage_class = {
    .name = "DefaultStorageClass",
    .operations = ADM_OPS_CREATE,
    .admit = admit,
};

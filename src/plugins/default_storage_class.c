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
    return adm_lookup_set_default_class(attrs, st, "storage.k8s.io", "StorageClass", default_annotations,
                                        "storageClassName");
}

static const char *const reads[] = {"storage.k8s.io/StorageClass", NULL};

const adm_plugin_t adm_plugin_default_storage_class = {
    .name = "DefaultStorageClass",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .admit = admit,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * StorageObjectInUseProtection: new PersistentVolumes, PersistentVolumeClaims and
 * VolumeAttributesClasses get the finalizer that keeps them while something uses them.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <string.h>

static const struct {
    const char *group, *resource, *kind, *finalizer;
} protected_kinds[] = {
    {"", "persistentvolumes", "PersistentVolume", "kubernetes.io/pv-protection"},
    {"", "persistentvolumeclaims", "PersistentVolumeClaim", "kubernetes.io/pvc-protection"},
    {"storage.k8s.io", "volumeattributesclasses", "VolumeAttributesClass", "kubernetes.io/vac-protection"},
};

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    for (size_t i = 0; i < sizeof(protected_kinds) / sizeof(protected_kinds[0]); i++) {
        yyjson_val *obj;
        yyjson_val *f;
        yyjson_arr_iter it;
        yyjson_val *finalizers;
        yyjson_mut_doc *doc;

        if (!adm_attrs_is(attrs, protected_kinds[i].group, protected_kinds[i].resource)) {
            continue;
        }
        obj = adm_attrs_object(attrs);
        if (obj == NULL || !adm_attrs_kind_is(attrs, protected_kinds[i].group, protected_kinds[i].kind)) {
            return ADM_OK; /* kube ignores objects it cannot convert */
        }
        yyjson_arr_iter_init(adm_json_path(obj, "metadata", "finalizers", NULL), &it);
        for (f = yyjson_arr_iter_next(&it); f != NULL; f = yyjson_arr_iter_next(&it)) {
            if (yyjson_is_str(f) && strcmp(yyjson_get_str(f), protected_kinds[i].finalizer) == 0) {
                return ADM_OK;
            }
        }
        finalizers = adm_attrs_ensure(attrs, YYJSON_TYPE_ARR, "metadata", "finalizers", NULL);
        doc = adm_attrs_values_doc(attrs);
        if (finalizers == NULL || doc == NULL) {
            return ADM_ENOMEM;
        }
        return adm_attrs_edit_key(attrs, ADM_EDIT_APPEND, finalizers, NULL,
                                  yyjson_mut_str(doc, protected_kinds[i].finalizer));
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_storage_object_in_use_protection = {
    .name = "StorageObjectInUseProtection",
    .operations = ADM_OPS_CREATE,
    .admit = admit,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PersistentVolumeClaimResize: a claim may grow (spec.resources.requests.storage above the old
 * value, compared as resource.Quantity) only when it is Bound and its StorageClass, the same
 * before and after, exists and sets allowVolumeExpansion: true.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"
#include "adm/plugins/podspec.h"

#include <string.h>

/* GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName. */
static const char *claim_class(yyjson_val *pvc)
{
    yyjson_val *ann = adm_json_get(adm_json_path(pvc, "metadata", "annotations", NULL),
                                   "volume.beta.kubernetes.io/storage-class");

    if (ann != NULL) {
        return yyjson_is_str(ann) ? yyjson_get_str(ann) : "";
    }
    return adm_json_str(adm_json_get(pvc, "spec"), "storageClassName");
}

static bool allow_resize(adm_attrs_t *attrs, yyjson_val *pvc, yyjson_val *old)
{
    const char *cls = claim_class(pvc);
    yyjson_val *sc;

    if (cls[0] == '\0' || strcmp(cls, claim_class(old)) != 0) {
        return false;
    }
    sc = adm_lookup(attrs, "storage.k8s.io", "StorageClass", "", cls);
    return yyjson_is_true(adm_json_get(sc, "allowVolumeExpansion"));
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *pvc;
    yyjson_val *old = attrs->req->old_object;
    adm_quantity_t size;
    adm_quantity_t old_size;

    (void)state;
    if (!adm_attrs_is(attrs, "", "persistentvolumeclaims")) {
        return ADM_OK;
    }
    pvc = adm_attrs_object(attrs);
    if (pvc == NULL || old == NULL || !adm_attrs_kind_is(attrs, "", "PersistentVolumeClaim")) {
        return ADM_OK;
    }
    size = adm_json_quantity(adm_json_path(pvc, "spec", "resources", "requests", "storage", NULL));
    old_size = adm_json_quantity(adm_json_path(old, "spec", "resources", "requests", "storage", NULL));
    if (adm_quantity_cmp(&size, &old_size) <= 0) {
        return ADM_OK;
    }
    if (strcmp(adm_json_str(adm_json_get(old, "status"), "phase"), "Bound") != 0) {
        return adm_status_forbidden(st, attrs, "Only bound persistent volume claims can be expanded");
    }
    if (!allow_resize(attrs, pvc, old)) {
        return adm_status_forbidden(st, attrs,
                                    "only dynamically provisioned pvc can be resized and the storageclass "
                                    "that provisions the pvc must support resize");
    }
    return ADM_OK;
}

static const char *const reads[] = {"storage.k8s.io/StorageClass", NULL};

const adm_plugin_t adm_plugin_persistent_volume_claim_resize = {
    .name = "PersistentVolumeClaimResize",
    .operations = ADM_OPS_UPDATE,
    .reads = reads,
    .validate = validate,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DefaultIngressClass: a new Ingress without spec.ingressClassName and without the legacy
 * kubernetes.io/ingress.class annotation gets the default IngressClass, the one annotated
 * ingressclass.kubernetes.io/is-default-class=true (the newest when several are).
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"

static const char *const default_annotations[] = {"ingressclass.kubernetes.io/is-default-class", NULL};

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_gvk_t *k = &attrs->req->kind;
    yyjson_val *ing;

    (void)state;
    if (!adm_attrs_is(attrs, "networking.k8s.io", "ingresses")) {
        return ADM_OK;
    }
    ing = adm_attrs_object(attrs);
    if (ing == NULL || !adm_attrs_kind_is(attrs, "networking.k8s.io", "Ingress")) {
        /* Go prints a GroupVersionKind as "group/version, Kind=kind" */
        return adm_status_internal(st, attrs->arena, "Expected Ingress resource, got: %s/%s, Kind=%s",
                                   k->group, k->version, k->kind);
    }
    if (adm_json_get(ing, "spec") != NULL &&
        yyjson_is_str(adm_json_path(ing, "spec", "ingressClassName", NULL))) {
        return ADM_OK;
    }
    if (adm_json_get(adm_json_path(ing, "metadata", "annotations", NULL), "kubernetes.io/ingress.class") !=
        NULL) {
        return ADM_OK;
    }
    return adm_lookup_set_default_class(attrs, st, "networking.k8s.io", "IngressClass", default_annotations,
                                        "ingressClassName");
}

static const char *const reads[] = {"networking.k8s.io/IngressClass", NULL};

const adm_plugin_t adm_plugin_default_ingress_class = {
    .name = "DefaultIngressClass",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .admit = admit,
};

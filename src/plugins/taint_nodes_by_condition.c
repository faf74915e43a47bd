/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TaintNodesByCondition: a node is created with the NoSchedule taint node.kubernetes.io/not-ready
 * (no value, no timeAdded) until the node controller sees it ready; a taint with the same key and
 * effect already there is kept, whatever its value.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"

#include <string.h>

#define NOT_READY "node.kubernetes.io/not-ready"

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *node;
    yyjson_val *t;
    yyjson_arr_iter it;
    yyjson_val *taints;
    yyjson_mut_val *taint;
    yyjson_mut_doc *doc;

    if (!adm_attrs_is(attrs, "", "nodes")) {
        return ADM_OK;
    }
    node = adm_attrs_object(attrs);
    if (node == NULL || !adm_attrs_kind_is(attrs, "", "Node")) {
        return adm_status_forbidden(st, attrs, "unexpected type *core.%s",
                                    attrs->req->kind.kind[0] != '\0' ? attrs->req->kind.kind : "<nil>");
    }
    yyjson_arr_iter_init(adm_json_path(node, "spec", "taints", NULL), &it);
    for (t = yyjson_arr_iter_next(&it); t != NULL; t = yyjson_arr_iter_next(&it)) {
        if (strcmp(adm_json_str(t, "key"), NOT_READY) == 0 &&
            strcmp(adm_json_str(t, "effect"), "NoSchedule") == 0) {
            return ADM_OK;
        }
    }
    taints = adm_attrs_ensure(attrs, YYJSON_TYPE_ARR, "spec", "taints", NULL);
    doc = adm_attrs_values_doc(attrs);
    taint = taints != NULL && doc != NULL ? yyjson_mut_obj(doc) : NULL;
    if (taint == NULL || !yyjson_mut_obj_add_str(doc, taint, "key", NOT_READY) ||
        !yyjson_mut_obj_add_str(doc, taint, "effect", "NoSchedule")) {
        return ADM_ENOMEM;
    }
    return adm_attrs_edit_key(attrs, ADM_EDIT_APPEND, taints, NULL, taint);
}

const adm_plugin_t adm_plugin_taint_nodes_by_condition = {
    .name = "TaintNodesByCondition",
    .operations = ADM_OPS_CREATE,
    .admit = admit,
};

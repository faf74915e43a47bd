/* SPDX-License-Identifier: Apache-2.0 */
#include "adm/admission/podutil.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"

#include <string.h>

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

int adm_pod_add_or_update_toleration(yyjson_mut_doc *doc, yyjson_mut_val *pod, const adm_toleration_t *t)
{
    yyjson_mut_val *spec = adm_mut_ensure(doc, pod, "spec", YYJSON_TYPE_OBJ);
    yyjson_mut_val *list = spec != NULL ? adm_mut_ensure(doc, spec, "tolerations", YYJSON_TYPE_ARR) : NULL;
    yyjson_mut_val *item;
    yyjson_mut_arr_iter it;
    size_t idx = 0;

    if (list == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_mut_arr_iter_init(list, &it);
    while ((item = yyjson_mut_arr_iter_next(&it)) != NULL) {
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

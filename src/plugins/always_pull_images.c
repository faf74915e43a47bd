/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AlwaysPullImages: every init, regular and ephemeral container of a pod gets imagePullPolicy
 * Always, so a private image cached on a node cannot be started without credentials. An update that
 * brings no image the old pod lacked is left alone; the pods/ephemeralcontainers subresource is not
 * touched (kube's behaviour).
 */
#include "adm/admission/plugin.h"
#include "adm/admission/podutil.h"
#include "adm/base/error.h"

#include <string.h>

static const char *const container_lists[] = ADM_POD_CONTAINER_LISTS;
#define NLISTS (sizeof(container_lists) / sizeof(container_lists[0]))

static bool image_in(yyjson_val *spec, const char *image)
{
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_get(spec, container_lists[l]), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            if (strcmp(adm_json_str(c, "image"), image) == 0) {
                return true;
            }
        }
    }
    return false;
}

static bool update_with_no_new_images(adm_attrs_t *attrs, yyjson_val *pod)
{
    yyjson_val *old = attrs->req->old_object;
    yyjson_val *spec = adm_json_get(pod, "spec");

    if (attrs->req->operation != ADM_OP_UPDATE || old == NULL) {
        return false;
    }
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_get(spec, container_lists[l]), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            if (!image_in(adm_json_get(old, "spec"), adm_json_str(c, "image"))) {
                return false;
            }
        }
    }
    return true;
}

/* The pod, or NULL when the plugin does not apply; sets *rc on a rejection. */
static yyjson_val *applicable_pod(adm_attrs_t *attrs, adm_status_t *st, int *rc)
{
    yyjson_val *pod;

    *rc = ADM_OK;
    if (!adm_attrs_is(attrs, "", "pods")) {
        return NULL;
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        *rc = adm_status_bad_request(st, attrs->arena,
                                     "Resource was marked with kind Pod but was unable to be converted");
        return NULL;
    }
    return update_with_no_new_images(attrs, pod) ? NULL : pod;
}

static bool all_always(yyjson_val *spec)
{
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_get(spec, container_lists[l]), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            if (strcmp(adm_json_str(c, "imagePullPolicy"), "Always") != 0) {
                return false;
            }
        }
    }
    return true;
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    int rc;
    yyjson_val *pod = applicable_pod(attrs, st, &rc);
    yyjson_mut_val *spec;

    if (pod == NULL || all_always(adm_json_get(pod, "spec"))) {
        return rc;
    }
    spec = adm_mut_get(adm_attrs_mutable_object(attrs), "spec");
    if (spec == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_mut_val *list = adm_mut_get(spec, container_lists[l]);
        yyjson_mut_val *c;
        yyjson_mut_arr_iter it;

        if (!yyjson_mut_is_arr(list)) {
            continue;
        }
        yyjson_mut_arr_iter_init(list, &it);
        for (c = yyjson_mut_arr_iter_next(&it); c != NULL; c = yyjson_mut_arr_iter_next(&it)) {
            yyjson_mut_val *policy = adm_mut_get(c, "imagePullPolicy");

            if (policy != NULL) {
                yyjson_mut_set_str(policy, "Always");
            } else if (!yyjson_mut_is_obj(c) ||
                       !yyjson_mut_obj_add_str(attrs->mdoc, c, "imagePullPolicy", "Always")) {
                return ADM_ENOMEM;
            }
        }
    }
    return ADM_OK;
}

/*
 * Only reachable when a later mutating step changed a policy back. kube collects one Forbidden per
 * container into an aggregate, which is not a Status error: the API answers 500 with the message.
 */
static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    int rc;
    yyjson_val *pod = applicable_pod(attrs, st, &rc);
    adm_aggregate_t agg;
    const char *text;

    if (pod == NULL) {
        return rc;
    }
    adm_aggregate_init(&agg, attrs->arena);
    for (size_t l = 0; l < NLISTS; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;
        size_t i = 0;

        yyjson_arr_iter_init(adm_json_path(pod, "spec", container_lists[l], NULL), &it);
        for (; (c = yyjson_arr_iter_next(&it)) != NULL; i++) {
            const char *policy = adm_json_str(c, "imagePullPolicy");
            const char *quoted;
            adm_status_t one;

            if (strcmp(policy, "Always") == 0) {
                continue;
            }
            quoted = adm_go_quote(attrs->arena, policy);
            if (quoted == NULL || adm_status_forbidden(&one, attrs,
                                                       "spec.%s[%zu].imagePullPolicy: Unsupported value: %s: "
                                                       "supported values: \"Always\"",
                                                       container_lists[l], i, quoted) != ADM_DECLINED) {
                return ADM_ENOMEM;
            }
            adm_aggregate_add(&agg, one.message);
        }
    }
    text = adm_aggregate_text(&agg);
    if (text == NULL) {
        return ADM_ENOMEM;
    }
    return text[0] == '\0' ? ADM_OK : adm_status_plain(st, attrs->arena, "%s", text);
}

const adm_plugin_t adm_plugin_always_pull_images = {
    .name = "AlwaysPullImages",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .admit = admit,
    .validate = validate,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RuntimeClass: a new pod that names a RuntimeClass gets the class's pod overhead (a pod that
 * states a different one is refused) and its scheduling: the class's nodeSelector merged into the
 * pod's (a conflicting value is refused) and its tolerations merged with the pod's. Validation
 * then insists that the pod's overhead is the class's, and that a pod without such a class states
 * none. The class is read from the cluster state, then (kube's informer may lag) from the storage,
 * which is the same files until admitd has an API client.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/plugins/lookup.h"
#include "adm/plugins/podspec.h"

#include <string.h>

/*
 * prepareObjects: ADM_OK with *rc the pod's RuntimeClass (NULL when it names none), or a rejection
 * in st.
 */
static int prepare(adm_attrs_t *attrs, adm_status_t *st, yyjson_val **pod, yyjson_val **rc)
{
    const adm_live_reader_t *live = &adm_live_reader_files;
    yyjson_val *named;
    const char *name;
    const char *err = NULL;

    *rc = NULL;
    *pod = NULL;
    if (!adm_attrs_has_object(attrs) || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return adm_status_bad_request(st, attrs->arena,
                                      "Resource was marked with kind Pod but was unable to be converted");
    }
    /* the name alone first: a pod without a RuntimeClass needs no view of the changed pod */
    named = adm_attrs_get(attrs, "spec", "runtimeClassName", NULL);
    if (!yyjson_is_str(named)) {
        return ADM_OK;
    }
    name = yyjson_get_str(named);
    *pod = adm_attrs_object(attrs);
    if (*pod == NULL) {
        return adm_status_bad_request(st, attrs->arena,
                                      "Resource was marked with kind Pod but was unable to be converted");
    }
    *rc = adm_lookup(attrs, "node.k8s.io", "RuntimeClass", "", name);
    if (*rc != NULL) {
        return ADM_OK;
    }
    switch (live->get(live->arg, attrs, "node.k8s.io", "RuntimeClass", "", name, rc, &err)) {
    case ADM_LIVE_FOUND: return ADM_OK;
    case ADM_LIVE_NOT_FOUND:
        err = adm_go_quote(attrs->arena, name);
        return err != NULL ? adm_status_forbidden(st, attrs, "pod rejected: RuntimeClass %s not found", err)
                           : adm_status_nomem(st);
    default: return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "unknown error");
    }
}

static bool ignored(adm_attrs_t *attrs)
{
    return !adm_attrs_is(attrs, "", "pods");
}

static int set_overhead(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc,
                        yyjson_mut_val *spec)
{
    yyjson_val *overhead = adm_json_get(rc, "overhead");
    yyjson_val *fixed = adm_json_get(overhead, "podFixed");
    yyjson_val *have = adm_json_path(pod, "spec", "overhead", NULL);

    if (overhead == NULL || yyjson_is_null(overhead)) {
        return ADM_OK;
    }
    if (yyjson_obj_size(have) > 0 && !adm_resource_lists_equal(fixed, have)) {
        return adm_status_forbidden(st, attrs,
                                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                                    "Overhead");
    }
    yyjson_mut_obj_remove_key(spec, "overhead");
    if (yyjson_is_obj(fixed) &&
        !yyjson_mut_obj_add_val(attrs->mdoc, spec, "overhead", adm_json_mut_share(attrs->mdoc, fixed))) {
        return adm_status_nomem(st);
    }
    return ADM_OK;
}

static int set_scheduling(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc,
                          yyjson_mut_val *spec)
{
    yyjson_val *sched = adm_json_get(rc, "scheduling");
    yyjson_val *want = adm_json_get(sched, "nodeSelector");
    yyjson_val *have = adm_json_path(pod, "spec", "nodeSelector", NULL);
    yyjson_mut_val *sel;
    yyjson_mut_val *tols;
    yyjson_val *k;
    yyjson_obj_iter it;

    if (sched == NULL || yyjson_is_null(sched)) {
        return ADM_OK;
    }
    /* kube walks a Go map, in no fixed order; admitd reports the first conflict in the class's order */
    yyjson_obj_iter_init(want, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        yyjson_val *pv = adm_json_get(have, yyjson_get_str(k));
        const char *rv = yyjson_get_str(yyjson_obj_iter_get_val(k));

        if (yyjson_is_str(pv) && rv != NULL && strcmp(yyjson_get_str(pv), rv) != 0) {
            return adm_status_forbidden(st, attrs,
                                        "conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; "
                                        "pod.spec.nodeSelector[%s] = %s",
                                        yyjson_get_str(k), rv, yyjson_get_str(k), yyjson_get_str(pv));
        }
    }
    if (yyjson_is_obj(want)) {
        sel = adm_mut_ensure(attrs->mdoc, spec, "nodeSelector", YYJSON_TYPE_OBJ);
        if (sel == NULL) {
            return adm_status_nomem(st);
        }
        yyjson_obj_iter_init(want, &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            if (adm_json_get(have, yyjson_get_str(k)) != NULL) {
                continue; /* the same value */
            }
            if (!yyjson_mut_obj_add_val(attrs->mdoc, sel, yyjson_get_str(k),
                                        adm_json_mut_share(attrs->mdoc, yyjson_obj_iter_get_val(k)))) {
                return adm_status_nomem(st);
            }
        }
    }
    tols = adm_merge_tolerations(attrs->mdoc, adm_json_path(pod, "spec", "tolerations", NULL),
                                 adm_json_get(sched, "tolerations"));
    if (tols == NULL) {
        return adm_status_nomem(st);
    }
    yyjson_mut_obj_remove_key(spec, "tolerations");
    /* an empty result is a nil slice in Go, which the encoder omits */
    if (yyjson_mut_arr_size(tols) != 0 && !yyjson_mut_obj_add_val(attrs->mdoc, spec, "tolerations", tols)) {
        return adm_status_nomem(st);
    }
    return ADM_OK;
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *pod;
    yyjson_val *rc;
    yyjson_mut_val *root;
    yyjson_mut_val *spec;
    int r;

    (void)state;
    if (ignored(attrs)) {
        return ADM_OK;
    }
    r = prepare(attrs, st, &pod, &rc);
    if (r != ADM_OK || rc == NULL ||
        ((adm_json_get(rc, "overhead") == NULL || yyjson_is_null(adm_json_get(rc, "overhead"))) &&
         (adm_json_get(rc, "scheduling") == NULL || yyjson_is_null(adm_json_get(rc, "scheduling"))))) {
        return r;
    }
    root = adm_attrs_mutable_object(attrs);
    spec = root != NULL ? adm_mut_ensure(attrs->mdoc, root, "spec", YYJSON_TYPE_OBJ) : NULL;
    if (spec == NULL) {
        return adm_status_nomem(st);
    }
    r = set_overhead(attrs, st, pod, rc, spec);
    return r == ADM_OK ? set_scheduling(attrs, st, pod, rc, spec) : r;
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    yyjson_val *pod;
    yyjson_val *rc;
    yyjson_val *overhead;
    yyjson_val *have;
    int r;

    (void)state;
    if (ignored(attrs)) {
        return ADM_OK;
    }
    r = prepare(attrs, st, &pod, &rc);
    if (r != ADM_OK) {
        return r;
    }
    overhead = adm_json_get(rc, "overhead");
    if (overhead != NULL && !yyjson_is_null(overhead)) {
        have = adm_json_path(pod, "spec", "overhead", NULL); /* prepare read the pod: it names a class */
        if (!adm_resource_lists_equal(adm_json_get(overhead, "podFixed"), have)) {
            return adm_status_forbidden(st, attrs,
                                        "pod rejected: Pod's Overhead doesn't match RuntimeClass's "
                                        "defined Overhead");
        }
    } else {
        have = adm_attrs_get(attrs, "spec", "overhead", NULL);
        if (have != NULL && !yyjson_is_null(have)) {
            return adm_status_forbidden(st, attrs,
                                        "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                        "defined Overhead");
        }
    }
    return ADM_OK;
}

static const char *const reads[] = {"node.k8s.io/RuntimeClass", NULL};

const adm_plugin_t adm_plugin_runtime_class = {
    .name = "RuntimeClass",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .admit = admit,
    .validate = validate,
};

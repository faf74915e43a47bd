/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RuntimeClass: a new pod that names a RuntimeClass gets the class's pod overhead (a pod that
 * states a different one is refused) and its scheduling: the class's nodeSelector merged into the
 * pod's (a conflicting value is refused) and its tolerations merged with the pod's. Validation
 * then insists that the pod's overhead is the class's, and that a pod without such a class states
 * none. The class is read from the cluster state, then (kube's informer may lag) from the storage:
 * with an API connection (--kubeconfig, --in-cluster) a live GET from the API server (live_call.h,
 * an ADM_AGAIN phase: the loop never waits), whose 404 is kube's Forbidden and any other failure
 * the client's error as kube returns it, unwrapped; the class found is kept in the request's slot,
 * so validate does not GET it again after admit did. A name that cannot be a RuntimeClass's (not
 * a DNS subdomain) is not found without a GET. With --cluster-state files only, the lister and
 * the storage are both the files.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"
#include "adm/plugins/podspec.h"

#include <string.h>

/* What admit or validate does once prepareObjects has the pod and its class (NULL when none). */
typedef int (*class_phase_fn)(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc);

/* The class found live in this request, in the plugin's slot (arena memory). */
typedef struct found_s {
    const char *name;
    yyjson_val *rc;
} found_t;

/* One live GET of a class, in the request's arena. */
typedef struct live_get_s {
    const char *name;
    class_phase_fn phase;
} live_get_t;

/* validate after admit in the same request finds the class admit's GET found: no second GET. */
static void remember(adm_attrs_t *attrs, const char *name, yyjson_val *rc)
{
    void **slot = adm_plugin_slot(attrs);
    found_t *f = slot != NULL ? adm_arena_calloc(attrs->arena, 1, sizeof(*f)) : NULL;

    if (f != NULL) {
        f->name = name;
        f->rc = rc;
        *slot = f;
    }
}

static yyjson_val *remembered(adm_attrs_t *attrs, const char *name)
{
    void **slot = adm_plugin_slot(attrs);
    const found_t *f = slot != NULL ? *slot : NULL;

    return f != NULL && strcmp(f->name, name) == 0 ? f->rc : NULL;
}

static int not_found(adm_attrs_t *attrs, adm_status_t *st, const char *name)
{
    const char *quoted = adm_go_quote(attrs->arena, name);

    return quoted != NULL ? adm_status_forbidden(st, attrs, "pod rejected: RuntimeClass %s not found", quoted)
                          : adm_status_nomem(st);
}

/* The API server answered the live GET: the phase runs with the class, or the request is refused. */
static void on_live_class(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res,
                          yyjson_val *body, const char *err, void *arg)
{
    live_get_t *lg = arg;
    adm_status_t st;
    int rc;

    memset(&st, 0, sizeof(st));
    if (err == NULL && res->status == 404) {
        rc = not_found(attrs, &st, lg->name);
    } else if (err != NULL || res->status / 100 != 2 || !yyjson_is_obj(body)) {
        rc = adm_live_call_refuse(attrs, &st, res, body, err); /* kube returns the client's error as is */
    } else {
        remember(attrs, lg->name, body);
        rc = lg->phase(attrs, &st, adm_attrs_object(attrs), body); /* the pod: prepare read it before */
    }
    adm_async_done(async, rc, &st);
}

/*
 * prepareObjects: ADM_OK with *rc the pod's RuntimeClass (NULL when it names none), a rejection
 * in st, or (a class the lister does not have, with an API connection and a chain to resume)
 * ADM_AGAIN, phase then running with the class the live GET found.
 */
static int prepare(adm_attrs_t *attrs, adm_status_t *st, yyjson_val **pod, yyjson_val **rc,
                   adm_async_t *async, class_phase_fn phase)
{
    const adm_live_reader_t *live = &adm_live_reader_files;
    yyjson_val *named;
    const char *name;
    const char *err = NULL;
    live_get_t *lg;
    const char *path;

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
    if (*rc == NULL) {
        *rc = remembered(attrs, name);
    }
    if (*rc != NULL) {
        return ADM_OK;
    }
    if (async != NULL && adm_live_call_possible(attrs)) {
        if (!adm_live_subdomain_name(name)) {
            return not_found(attrs, st, name);
        }
        lg = adm_arena_calloc(attrs->arena, 1, sizeof(*lg));
        path = adm_arena_printf(attrs->arena, "/apis/node.k8s.io/v1/runtimeclasses/%s", name);
        if (lg == NULL || path == NULL) {
            return adm_status_nomem(st);
        }
        lg->name = name;
        lg->phase = phase;
        return adm_live_call(attrs, async, path, NULL, on_live_class, lg) == ADM_AGAIN ? ADM_AGAIN
                                                                                       : adm_status_nomem(st);
    }
    switch (live->get(live->arg, attrs, "node.k8s.io", "RuntimeClass", "", name, rc, &err)) {
    case ADM_LIVE_FOUND: return ADM_OK;
    case ADM_LIVE_NOT_FOUND: return not_found(attrs, st, name);
    default: return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "unknown error");
    }
}

static bool ignored(adm_attrs_t *attrs)
{
    return !adm_attrs_is(attrs, "", "pods");
}

static int set_overhead(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc,
                        yyjson_val *spec)
{
    yyjson_val *overhead = adm_json_get(rc, "overhead");
    yyjson_val *fixed = adm_json_get(overhead, "podFixed");
    yyjson_val *have = adm_json_path(pod, "spec", "overhead", NULL);
    yyjson_mut_doc *doc = adm_attrs_values_doc(attrs);
    int r;

    if (overhead == NULL || yyjson_is_null(overhead)) {
        return ADM_OK;
    }
    if (yyjson_obj_size(have) > 0 && !adm_resource_lists_equal(fixed, have)) {
        return adm_status_forbidden(st, attrs,
                                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                                    "Overhead");
    }
    /* the class's, or none */
    r = yyjson_is_obj(fixed) ? adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "overhead",
                                                  doc != NULL ? adm_json_mut_share(doc, fixed) : NULL)
                             : adm_attrs_edit_key(attrs, ADM_EDIT_REMOVE, spec, "overhead", NULL);
    return r == ADM_OK ? ADM_OK : adm_status_nomem(st);
}

/* The class's nodeSelector entries the pod lacks: added to its own, or as a new one. */
static int add_selector(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *spec, yyjson_val *want,
                        yyjson_val *have)
{
    yyjson_val *sel = adm_json_get(spec, "nodeSelector");
    yyjson_mut_val *made = NULL;
    yyjson_val *k;
    yyjson_obj_iter it;

    if (adm_json_not_ensurable(sel, YYJSON_TYPE_OBJ)) {
        return ADM_ENOMEM;
    }
    if (!yyjson_is_obj(sel)) {
        made = yyjson_mut_obj(doc);
        if (made == NULL) {
            return ADM_ENOMEM;
        }
    }
    yyjson_obj_iter_init(want, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        yyjson_mut_val *v;

        if (adm_json_get(have, yyjson_get_str(k)) != NULL) {
            continue; /* the same value */
        }
        v = adm_json_mut_share(doc, yyjson_obj_iter_get_val(k));
        if (made != NULL ? !yyjson_mut_obj_add_val(doc, made, yyjson_get_str(k), v)
                         : adm_attrs_edit_key(attrs, ADM_EDIT_ADD, sel, yyjson_get_str(k), v) != ADM_OK) {
            return ADM_ENOMEM;
        }
    }
    return made != NULL ? adm_attrs_edit_key(attrs, ADM_EDIT_SET, spec, "nodeSelector", made) : ADM_OK;
}

static int set_scheduling(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc,
                          yyjson_val *spec)
{
    yyjson_val *sched = adm_json_get(rc, "scheduling");
    yyjson_val *want = adm_json_get(sched, "nodeSelector");
    yyjson_val *have = adm_json_path(pod, "spec", "nodeSelector", NULL);
    yyjson_mut_doc *doc = adm_attrs_values_doc(attrs);
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
    if (doc == NULL || (yyjson_is_obj(want) && add_selector(attrs, doc, spec, want, have) != ADM_OK)) {
        return adm_status_nomem(st);
    }
    tols = adm_merge_tolerations(doc, adm_json_path(pod, "spec", "tolerations", NULL),
                                 adm_json_get(sched, "tolerations"));
    if (tols == NULL) {
        return adm_status_nomem(st);
    }
    /* an empty result is a nil slice in Go, which the encoder omits */
    if ((yyjson_mut_arr_size(tols) != 0
             ? adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "tolerations", tols)
             : adm_attrs_edit_key(attrs, ADM_EDIT_REMOVE, spec, "tolerations", NULL)) != ADM_OK) {
        return adm_status_nomem(st);
    }
    return ADM_OK;
}

/* admit once prepareObjects has the class: its overhead and scheduling onto the pod, as edits. */
static int admit_with(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc)
{
    yyjson_val *spec;
    int r;

    if (rc == NULL ||
        ((adm_json_get(rc, "overhead") == NULL || yyjson_is_null(adm_json_get(rc, "overhead"))) &&
         (adm_json_get(rc, "scheduling") == NULL || yyjson_is_null(adm_json_get(rc, "scheduling"))))) {
        return ADM_OK;
    }
    spec = adm_attrs_ensure(attrs, YYJSON_TYPE_OBJ, "spec", NULL);
    if (spec == NULL) {
        return adm_status_nomem(st);
    }
    pod = adm_attrs_object(attrs); /* the same pod, laid out again when spec had to be made */
    r = set_overhead(attrs, st, pod, rc, spec);
    return r == ADM_OK ? set_scheduling(attrs, st, pod, rc, spec) : r;
}

/* validate once prepareObjects has the class: the pod's overhead must be the class's, or none. */
static int validate_with(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *pod, yyjson_val *rc)
{
    yyjson_val *overhead = adm_json_get(rc, "overhead");
    yyjson_val *have;

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

static int run(adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async, class_phase_fn phase)
{
    yyjson_val *pod;
    yyjson_val *rc;
    int r;

    if (ignored(attrs)) {
        return ADM_OK;
    }
    r = prepare(attrs, st, &pod, &rc, async, phase);
    return r == ADM_OK ? phase(attrs, st, pod, rc) : r;
}

/* Without a chain to resume (unit tests, file state): the live GET is the files' answer. */
static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    (void)state;
    return run(attrs, st, NULL, admit_with);
}

static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    (void)state;
    return run(attrs, st, async, admit_with);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    (void)state;
    return run(attrs, st, NULL, validate_with);
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    (void)state;
    return run(attrs, st, async, validate_with);
}

static const char *const reads[] = {"node.k8s.io/RuntimeClass", NULL};

const adm_plugin_t adm_plugin_runtime_class = {
    .name = "RuntimeClass",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .admit = admit,
    .validate = validate,
    .admit_async = admit_async,
    .validate_async = validate_async,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodResizeValidator: an in-place resize (an UPDATE of pods/resize that changed the pod's
 * metadata.generation) of a pod bound to a Node must fit that Node: the pod's cpu and memory
 * requests, totalled as kube's GetResourceRequest totals them, within the Node's
 * status.allocatable, and the Node a linux one (label kubernetes.io/os). Both refusals are
 * admission.NewForbidden with one StatusCause whose type says which (NodeCapacity,
 * UnsupportedPlatform): that is how a client such as the vertical pod autoscaler tells a resize
 * that can never fit from another error. A Node the cluster state does not hold is refused too
 * (kube reads only its Node lister, no live GET).
 *
 * This is kube-apiserver's plugin/pkg/admission/podresize from 1.36, which runs while the
 * InPlacePodVerticalScaling gate is on (GA, always on, since 1.35).
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"
#include "adm/plugins/resources.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/*
 * fmt.Sprintf("... %T", obj): kube's internal types live in a package named after the group's
 * first label (core for ""), and Go prints a nil interface as <nil>.
 */
static int wrong_type(adm_attrs_t *attrs, adm_status_t *st, const char *what, yyjson_val *obj)
{
    const adm_gvk_t *k = &attrs->req->kind;
    int pkg_len = (int)strcspn(k->group, ".");

    if (obj == NULL) {
        return adm_status_bad_request(st, attrs->arena, "expected %s but got a <nil>", what);
    }
    return adm_status_bad_request(st, attrs->arena, "expected %s but got a *%.*s.%s", what,
                                  pkg_len > 0 ? pkg_len : 4, pkg_len > 0 ? k->group : "core", k->kind);
}

/* metadata.generation as the int64 Go decodes; absent is 0. */
static int64_t generation(yyjson_val *pod)
{
    yyjson_val *g = adm_json_path(pod, "metadata", "generation", NULL);

    return yyjson_is_int(g) ? yyjson_get_sint(g) : 0;
}

/*
 * GetResourceRequestQuantity for cpu and memory: with pod-level resources (PodLevelResources, on
 * since 1.34) only spec.resources.requests counts, else the containers' total (sidecars and init
 * containers as PodRequests takes them); then spec.overhead is added to a total that is not zero.
 */
static int pod_requests(adm_arena_t *a, yyjson_val *pod, adm_quantity_t *cpu, adm_quantity_t *mem,
                        const char **bad)
{
    yyjson_val *spec = adm_json_get(pod, "spec");
    adm_quantity_t *totals[2] = {cpu, mem};
    static const char *const names[2] = {"cpu", "memory"};
    adm_rlist_t reqs, overhead;
    int err;

    if (adm_pod_level_resources_set(pod)) {
        err = adm_rlist_read(a, adm_json_path(spec, "resources", "requests", NULL), &reqs, bad);
    } else {
        err = adm_pod_resource_total(a, pod, "requests", &reqs, bad);
    }
    if (err == 0) {
        err = adm_rlist_read(a, adm_json_get(spec, "overhead"), &overhead, bad);
    }
    for (size_t i = 0; err == 0 && i < 2; i++) {
        const adm_quantity_t *r = adm_rlist_find(&reqs, names[i]);
        const adm_quantity_t *o = adm_rlist_find(&overhead, names[i]);

        memset(totals[i], 0, sizeof(*totals[i]));
        if (r != NULL) {
            err = adm_quantity_add(totals[i], r);
        }
        if (err == 0 && o != NULL && !adm_quantity_is_zero(totals[i])) {
            err = adm_quantity_add(totals[i], o);
        }
    }
    return err;
}

/* A refusal with the StatusCause kube appends: type only, no message, no field. */
static int refuse(adm_attrs_t *attrs, adm_status_t *st, const char *cause, const char *msg)
{
    int rc = adm_status_forbidden(st, attrs, "%s", msg);

    return rc == ADM_DECLINED ? adm_status_add_cause(st, attrs->arena, cause, "", "") : rc;
}

/* validateNodeAllocatable: "" when the requests fit, else kube's message (NULL: out of memory). */
static const char *allocatable_problem(adm_arena_t *a, const adm_quantity_t *cpu, const adm_quantity_t *mem,
                                       const adm_rlist_t *allocatable)
{
    const adm_quantity_t *cpu_alloc_q = adm_rlist_find(allocatable, "cpu");
    const adm_quantity_t *mem_alloc_q = adm_rlist_find(allocatable, "memory");
    int64_t cpu_alloc = cpu_alloc_q != NULL ? adm_quantity_milli_value(cpu_alloc_q) : 0;
    int64_t mem_alloc = mem_alloc_q != NULL ? adm_quantity_value(mem_alloc_q) : 0;
    int64_t cpu_req = adm_quantity_milli_value(cpu);
    int64_t mem_req = adm_quantity_value(mem);
    const char *cpu_part = NULL;
    const char *mem_part = NULL;

    if (cpu_req > cpu_alloc) {
        cpu_part =
            adm_arena_printf(a, "cpu, requested: %" PRId64 ", allocatable: %" PRId64, cpu_req, cpu_alloc);
        if (cpu_part == NULL) {
            return NULL;
        }
    }
    if (mem_req > mem_alloc) {
        mem_part =
            adm_arena_printf(a, "memory, requested: %" PRId64 ", allocatable: %" PRId64, mem_req, mem_alloc);
        if (mem_part == NULL) {
            return NULL;
        }
    }
    if (cpu_part == NULL && mem_part == NULL) {
        return "";
    }
    return adm_arena_printf(
        a, "Node didn't have enough allocatable resources: %s%s%s", cpu_part != NULL ? cpu_part : "",
        cpu_part != NULL && mem_part != NULL ? "; " : "", mem_part != NULL ? mem_part : "");
}

static int validate_resize(adm_attrs_t *attrs, yyjson_val *pod, const char *node_name, adm_status_t *st)
{
    adm_arena_t *a = attrs->arena;
    yyjson_val *node = adm_lookup(attrs, "", "Node", "", node_name);
    yyjson_val *os;
    adm_rlist_t allocatable;
    adm_quantity_t cpu, mem;
    const char *bad = NULL;
    const char *msg;
    int err = pod_requests(a, pod, &cpu, &mem, &bad);

    if (err == ADM_EINVAL) {
        /* a quantity kube-apiserver could not have decoded: its decoder's 400 */
        return adm_status_bad_request(st, a, "%s in version \"%s\" cannot be handled as a %s: %s",
                                      attrs->req->kind.kind, attrs->req->kind.version, attrs->req->kind.kind,
                                      bad);
    }
    if (err == ADM_ETOOBIG) {
        return adm_status_forbidden(st, attrs, "resource totals exceed what admitd can add up");
    }
    if (err != 0) {
        return adm_status_nomem(st);
    }
    /* a Node whose allocatable kube could not decode never reaches its informer */
    if (node == NULL || adm_rlist_read(a, adm_json_path(node, "status", "allocatable", NULL), &allocatable,
                                       &bad) == ADM_EINVAL) {
        return adm_status_forbidden(st, attrs, "node %s not found", adm_go_quote(a, node_name));
    }
    msg = allocatable_problem(a, &cpu, &mem, &allocatable);
    if (msg == NULL) {
        return adm_status_nomem(st);
    }
    if (*msg != '\0') {
        return refuse(attrs, st, "NodeCapacity", msg);
    }
    os = adm_json_get(adm_json_path(node, "metadata", "labels", NULL), "kubernetes.io/os");
    if (yyjson_is_str(os) && strcmp(yyjson_get_str(os), "linux") == 0) {
        return ADM_OK;
    }
    msg = adm_arena_printf(a, "pod resize is only supported on linux nodes, node %s is %s",
                           adm_go_quote(a, adm_json_str(adm_json_get(node, "metadata"), "name")),
                           adm_go_quote(a, yyjson_is_str(os) ? yyjson_get_str(os) : ""));
    return msg != NULL ? refuse(attrs, st, "UnsupportedPlatform", msg) : adm_status_nomem(st);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *r = attrs->req;
    yyjson_val *pod;
    yyjson_val *old;
    const char *node_name;

    (void)state;
    if (r->resource.group[0] != '\0' || strcmp(r->resource.resource, "pods") != 0 ||
        strcmp(r->sub_resource, "resize") != 0) {
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    if (pod == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return wrong_type(attrs, st, "a pod", pod);
    }
    node_name = adm_json_str(adm_json_get(pod, "spec"), "nodeName");
    if (node_name[0] == '\0') {
        return ADM_OK; /* not bound yet: the scheduler will place it with its new requests */
    }
    old = r->old_object;
    if (old == NULL) {
        return wrong_type(attrs, st, "an old pod", old);
    }
    /* the generation moves only when the spec does: a resize that changes nothing is not checked */
    if (generation(old) == generation(pod)) {
        return ADM_OK;
    }
    return validate_resize(attrs, pod, node_name, st);
}

/* The informer keeps a cache of Nodes (labels and status.allocatable) for this plugin. */
static const char *const reads[] = {"/Node", NULL};

const adm_plugin_t adm_plugin_pod_resize_validator = {
    .name = "PodResizeValidator",
    .operations = ADM_OPS_UPDATE,
    .reads = reads,
    .validate = validate,
};

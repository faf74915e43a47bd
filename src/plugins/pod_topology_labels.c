/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTopologyLabels: a pod bound to a Node gets that Node's topology.kubernetes.io/zone and
 * topology.kubernetes.io/region labels, so the Downward API can hand them to its containers. Two
 * requests bind a pod: a CREATE of pods/binding (the scheduler's Binding, whose metadata.labels
 * the binding registry copies onto the pod) when the Binding's target is a Node, and a CREATE of a
 * pod whose spec.nodeName is already set. The Node's value replaces a label the object already has,
 * so a second round of the mutating phase (reinvocation) puts it back if a webhook changed it. A
 * Node that the cluster state does not hold changes nothing.
 *
 * This is kube-apiserver 1.34+ (1.35: feature gate PodTopologyLabelsAdmission beta, on by default);
 * the README says how 1.33 differed.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/lookup.h"

#include <stdbool.h>
#include <string.h>

/* The keys copied, in the order Go's encoding/json writes a map's keys. */
static const char *const topology_keys[] = {
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
};

#define NKEYS (sizeof(topology_keys) / sizeof(topology_keys[0]))

/* An object's labels kube could decode: absent, null or an object. */
static bool labels_usable(yyjson_val *obj)
{
    yyjson_val *meta = adm_json_get(obj, "metadata");
    yyjson_val *labels = adm_json_get(meta, "labels");

    return (meta == NULL || yyjson_is_null(meta) || yyjson_is_obj(meta)) &&
           (labels == NULL || yyjson_is_null(labels) || yyjson_is_obj(labels));
}

/*
 * Copies the Node's topology labels into obj's metadata.labels, replacing what differs (kube's
 * mergeLabels overwrites). The mutable object is asked for only when a label changes, so a pod
 * that already carries the Node's values (the reinvocation round) is left untouched.
 */
static int copy_topology(adm_attrs_t *attrs, yyjson_val *obj, const char *node_name)
{
    yyjson_val *node = node_name[0] != '\0' ? adm_lookup(attrs, "", "Node", "", node_name) : NULL;
    yyjson_val *node_labels = adm_json_path(node, "metadata", "labels", NULL);
    yyjson_val *have = adm_json_path(obj, "metadata", "labels", NULL);
    const char *want[NKEYS];
    bool differs = false;
    yyjson_mut_val *root;
    yyjson_mut_val *meta;
    yyjson_mut_val *labels;

    for (size_t i = 0; i < NKEYS; i++) {
        yyjson_val *v = adm_json_get(node_labels, topology_keys[i]);
        yyjson_val *cur = adm_json_get(have, topology_keys[i]);

        want[i] = yyjson_is_str(v) ? yyjson_get_str(v) : NULL;
        differs = differs ||
                  (want[i] != NULL && !(yyjson_is_str(cur) && strcmp(yyjson_get_str(cur), want[i]) == 0));
    }
    /* kube's short cut too: no topology labels on the Node (or no Node), no change */
    if (!differs || !labels_usable(obj)) {
        return ADM_OK;
    }
    root = adm_attrs_mutable_object(attrs);
    meta = root != NULL ? adm_mut_ensure(attrs->mdoc, root, "metadata", YYJSON_TYPE_OBJ) : NULL;
    labels = meta != NULL ? adm_mut_ensure(attrs->mdoc, meta, "labels", YYJSON_TYPE_OBJ) : NULL;
    if (labels == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < NKEYS; i++) {
        if (want[i] != NULL && !yyjson_mut_obj_put(labels, yyjson_mut_str(attrs->mdoc, topology_keys[i]),
                                                   yyjson_mut_strcpy(attrs->mdoc, want[i]))) {
            return ADM_ENOMEM;
        }
    }
    return ADM_OK;
}

/*
 * fmt.Errorf("expected Pod but got %T", obj): kube's internal types live in a package named after
 * the group's first label (core for ""), and Go prints a nil interface as <nil>.
 */
static int not_a_pod(adm_attrs_t *attrs, yyjson_val *obj, adm_status_t *st)
{
    const adm_gvk_t *k = &attrs->req->kind;
    int pkg_len = (int)strcspn(k->group, ".");

    if (obj == NULL) {
        return adm_status_plain(st, attrs->arena, "expected Pod but got <nil>");
    }
    return adm_status_plain(st, attrs->arena, "expected Pod but got *%.*s.%s", pkg_len > 0 ? pkg_len : 4,
                            pkg_len > 0 ? k->group : "core", k->kind);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *r = attrs->req;
    yyjson_val *obj;

    (void)state;
    if (r->resource.group[0] != '\0' || strcmp(r->resource.resource, "pods") != 0) {
        return ADM_OK;
    }
    obj = adm_attrs_object(attrs);
    if (r->sub_resource[0] == '\0') {
        if (obj == NULL || !adm_attrs_kind_is(attrs, "", "Pod")) {
            return not_a_pod(attrs, obj, st);
        }
        return copy_topology(attrs, obj, adm_json_str(adm_json_get(obj, "spec"), "nodeName"));
    }
    if (strcmp(r->sub_resource, "binding") == 0) {
        yyjson_val *target;

        if (obj == NULL || !adm_attrs_kind_is(attrs, "", "Binding")) {
            return adm_status_plain(st, attrs->arena, "expected Binding but got %s", r->kind.kind);
        }
        /* the scheduler sets only the target's kind and name, so the kind alone decides */
        target = adm_json_get(obj, "target");
        if (strcmp(adm_json_str(target, "kind"), "Node") != 0) {
            return ADM_OK;
        }
        return copy_topology(attrs, obj, adm_json_str(target, "name"));
    }
    return ADM_OK; /* pods/status, pods/ephemeralcontainers ... are not this plugin's */
}

/* The informer keeps a cache of Nodes for this plugin when admitd has an API connection. */
static const char *const reads[] = {"/Node", NULL};

const adm_plugin_t adm_plugin_pod_topology_labels = {
    .name = "PodTopologyLabels",
    .operations = ADM_OPS_CREATE,
    .reads = reads,
    .admit = admit,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NodeRestriction: a kubelet (user system:node:<name> in group system:nodes) may change only its
 * own Node, Lease, CSINode and ResourceSlices, create mirror pods bound to itself that reference
 * no other API object, update the status of pods bound to it, and ask for kubelet certificates in
 * its own name. As kube-apiserver's plugin/pkg/admission/noderestriction (newest source: mirror
 * pods checked with podutil.HasAPIObjectReference, the Node's ownerReferences frozen, pod status
 * with extendedResourceClaimStatus, PodCertificateRequests). It only rejects, in the mutating
 * phase, as kube's Admit does.
 *
 * Feature gates are fixed at kube's newest defaults: AllowInsecureKubeletCertificateSigningRequests
 * off (kubelet CSRs are checked), RecoverVolumeExpansionFailure and
 * ServiceAccountNodeAudienceRestriction on, PodCertificateRequest on (the resource reaches admission
 * only when it is served).
 *
 * Not enforced yet, because admitd has no cluster state (each place is marked "needs cluster
 * state" below):
 *   1. pods CREATE (mirror pods): the owner reference's uid is not compared with the Node's uid.
 *      Allowed when every other rule holds.
 *   2. pods/eviction CREATE: whether the pod to evict is bound to the node. Denied.
 *   3. serviceaccounts/token CREATE: whether the bound pod exists with the given uid, is bound to
 *      the node, and uses the requested audience (projected token, CSI driver, or authorizer).
 *      Denied.
 *   4. podcertificaterequests CREATE: the node's uid, the pod (uid, node, not a mirror pod), its
 *      service account and uid, and the signer. Denied.
 * Decided from the request where kube asks its informer instead:
 *   5. pods DELETE: the pod's spec.nodeName is read from request.oldObject, the stored pod the API
 *      server sends with every DELETE; denied when a review lacks it.
 * Messages are kube's byte for byte except where Go prints its own diagnostics: the go-cmp diff of a
 * refused PVC status update (admitd lists the differing fields), and why a CSR does not parse
 * (adm/csr.h: mbedTLS's text; CSRs with keys mbedTLS cannot parse, e.g. Ed25519, are judged by
 * their subject as Go would).
 */
#include "adm/admission/csr.h"
#include "adm/admission/plugin.h"
#include "adm/admission/podutil.h"
#include "adm/base/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NODE_USER_PREFIX "system:node:"
#define NODES_GROUP "system:nodes"
#define MIRROR_POD_ANNOTATION "kubernetes.io/config.mirror"
#define NODE_LEASE_NAMESPACE "kube-node-lease"
#define KUBELET_SERVING_SIGNER "kubernetes.io/kubelet-serving"
#define KUBELET_CLIENT_SIGNER "kubernetes.io/kube-apiserver-client-kubelet"
/* Deeper than any real object; past it, equality falls back to yyjson's strict comparison. */
#define MAX_COMPARE_DEPTH 64

/* One request from a node. */
typedef struct nr_s {
    adm_attrs_t *attrs;
    adm_status_t *st;
    const char *node;  /* the node's name */
    const char *qnode; /* Go's %q of it */
} nr_t;

static int forbid(nr_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* admission.NewForbidden(a, fmt.Errorf(...)). */
static int forbid(nr_t *r, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = adm_arena_vprintf(r->attrs->arena, fmt, ap);
    va_end(ap);
    return msg != NULL ? adm_status_forbidden(r->st, r->attrs, "%s", msg) : ADM_ENOMEM;
}

static int unverifiable(nr_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where kube consults its informers and admitting unchecked would be unsafe: a 403 that says why. */
static int unverifiable(nr_t *r, const char *fmt, ...)
{
    va_list ap;
    char *what;

    va_start(ap, fmt);
    what = adm_arena_vprintf(r->attrs->arena, fmt, ap);
    va_end(ap);
    return what != NULL ? forbid(r, "admitd cannot verify without cluster state that %s", what) : ADM_ENOMEM;
}

/*
 * fmt.Errorf("unexpected type %T", obj). kube's internal types live in a package named after the
 * group's first label (core for ""), and Go prints a nil interface as <nil>.
 */
static int unexpected_type(nr_t *r, yyjson_val *obj)
{
    const adm_gvk_t *k = &r->attrs->req->kind;
    int pkg_len = (int)strcspn(k->group, ".");

    if (obj == NULL) {
        return forbid(r, "unexpected type <nil>");
    }
    return forbid(r, "unexpected type *%.*s.%s", pkg_len > 0 ? pkg_len : 4, pkg_len > 0 ? k->group : "core",
                  k->kind);
}

static bool present(yyjson_val *v)
{
    return v != NULL && !yyjson_is_null(v);
}

static bool str_is(yyjson_val *obj, const char *key, const char *want)
{
    return strcmp(adm_json_str(obj, key), want) == 0;
}

/*
 * apiequality.Semantic.DeepEqual over what the API server serialises: an absent member, null and
 * an empty list are one value (nil and empty slices compare equal; nil pointers are omitted), while
 * an empty object is kept apart from an absent one (a pointer to an empty struct is not nil).
 * Quantities and times compare as text, which is exact for the canonical forms the API server writes.
 */
static bool absent(yyjson_val *v)
{
    return !present(v) || (yyjson_is_arr(v) && yyjson_arr_size(v) == 0);
}

static bool sem_equal(yyjson_val *a, yyjson_val *b, int depth)
{
    if (absent(a) || absent(b)) {
        return absent(a) && absent(b);
    }
    if (depth > MAX_COMPARE_DEPTH) {
        return yyjson_equals(a, b);
    }
    if (yyjson_is_obj(a) && yyjson_is_obj(b)) {
        yyjson_val *k;
        yyjson_obj_iter it;

        yyjson_obj_iter_init(a, &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            if (!sem_equal(yyjson_obj_iter_get_val(k),
                           yyjson_obj_getn(b, yyjson_get_str(k), yyjson_get_len(k)), depth + 1)) {
                return false;
            }
        }
        yyjson_obj_iter_init(b, &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            if (yyjson_obj_getn(a, yyjson_get_str(k), yyjson_get_len(k)) == NULL &&
                !absent(yyjson_obj_iter_get_val(k))) {
                return false;
            }
        }
        return true;
    }
    if (yyjson_is_arr(a) && yyjson_is_arr(b)) {
        size_t n = yyjson_arr_size(a);

        if (n != yyjson_arr_size(b)) {
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            if (!sem_equal(yyjson_arr_get(a, i), yyjson_arr_get(b, i), depth + 1)) {
                return false;
            }
        }
        return true;
    }
    return yyjson_equals(a, b);
}

/* ---- node identity and labels ---- */

/* nodeidentifier.NodeIdentity: the name after system:node:, when the user is in system:nodes. */
static bool node_identity(const adm_user_info_t *u, const char **name)
{
    size_t plen = strlen(NODE_USER_PREFIX);

    if (strncmp(u->username, NODE_USER_PREFIX, plen) != 0) {
        return false;
    }
    for (size_t i = 0; i < u->ngroups; i++) {
        if (strcmp(u->groups[i], NODES_GROUP) == 0) {
            *name = u->username + plen;
            return true;
        }
    }
    return false;
}

/* The namespace ns (len bytes) is want or a subdomain of it. */
static bool in_namespace(const char *ns, size_t len, const char *want)
{
    size_t wl = strlen(want);

    return (len == wl && memcmp(ns, want, wl) == 0) ||
           (len > wl && ns[len - wl - 1] == '.' && memcmp(ns + len - wl, want, wl) == 0);
}

/* k8s.io/kubelet/pkg/apis: labels a kubelet may set on its own Node. */
static bool is_kubelet_label(const char *key, size_t ns_len)
{
    static const char *const labels[] = {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    };

    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
        if (strcmp(key, labels[i]) == 0) {
            return true;
        }
    }
    return in_namespace(key, ns_len, "kubelet.kubernetes.io") ||
           in_namespace(key, ns_len, "node.kubernetes.io");
}

/* getForbiddenLabels' test of one key: node-restriction labels, and unknown kubernetes.io/k8s.io ones. */
static bool forbidden_label(const char *key)
{
    const char *slash = strchr(key, '/');
    size_t ns_len = slash != NULL ? (size_t)(slash - key) : 0;

    if (in_namespace(key, ns_len, "node-restriction.kubernetes.io")) {
        return true;
    }
    return (in_namespace(key, ns_len, "kubernetes.io") || in_namespace(key, ns_len, "k8s.io")) &&
           !is_kubelet_label(key, ns_len);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds the forbidden keys of from that to lacks or maps to another value. */
static void collect_forbidden(yyjson_val *from, yyjson_val *to, bool skip_common, const char **keys,
                              size_t *n)
{
    yyjson_val *k;
    yyjson_obj_iter it;

    yyjson_obj_iter_init(from, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        yyjson_val *other = yyjson_obj_getn(to, yyjson_get_str(k), yyjson_get_len(k));
        yyjson_val *v = yyjson_obj_iter_get_val(k);

        if (other != NULL && (skip_common || yyjson_equals(v, other))) {
            continue;
        }
        if (forbidden_label(yyjson_get_str(k))) {
            keys[(*n)++] = yyjson_get_str(k);
        }
    }
}

/*
 * getForbiddenLabels(getModifiedLabels(now, old)): the added, removed or changed keys a kubelet may
 * not set, sorted and joined with ", " as sets.String.List(); "" when there are none, NULL when the
 * arena is exhausted.
 */
static const char *forbidden_label_changes(adm_arena_t *a, yyjson_val *now, yyjson_val *old)
{
    size_t cap = yyjson_obj_size(now) + yyjson_obj_size(old);
    const char **keys = adm_arena_alloc(a, (cap > 0 ? cap : 1) * sizeof(*keys));
    size_t n = 0;
    size_t len = 0;
    char *out;
    char *w;

    if (keys == NULL) {
        return NULL;
    }
    collect_forbidden(now, old, false, keys, &n);
    collect_forbidden(old, now, true, keys, &n); /* keys in both were seen above */
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (size_t i = 0; i < n; i++) {
        len += strlen(keys[i]) + 2;
    }
    out = adm_arena_alloc(a, len + 1);
    if (out == NULL) {
        return NULL;
    }
    w = out;
    for (size_t i = 0; i < n; i++) {
        size_t kl = strlen(keys[i]);

        if (i > 0) {
            memcpy(w, ", ", 2);
            w += 2;
        }
        memcpy(w, keys[i], kl);
        w += kl;
    }
    *w = '\0';
    return out;
}

/* labels.Equals: the same keys with the same values. */
static bool labels_equal(yyjson_val *a, yyjson_val *b)
{
    yyjson_val *k;
    yyjson_obj_iter it;

    if (yyjson_obj_size(a) != yyjson_obj_size(b)) {
        return false;
    }
    yyjson_obj_iter_init(a, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        yyjson_val *other = yyjson_obj_getn(b, yyjson_get_str(k), yyjson_get_len(k));

        if (other == NULL || !yyjson_equals(yyjson_obj_iter_get_val(k), other)) {
            return false;
        }
    }
    return true;
}

/* ---- pods ---- */

static int admit_pod_create(nr_t *r)
{
    yyjson_val *pod = adm_attrs_object(r->attrs);
    yyjson_val *owners;
    yyjson_val *owner;
    const char *what;
    const char *err;

    if (pod == NULL || !adm_attrs_kind_is(r->attrs, "", "Pod")) {
        return unexpected_type(r, pod);
    }
    /* a key with any value, even null (which Go decodes as ""), marks a mirror pod */
    if (adm_json_get(adm_json_path(pod, "metadata", "annotations", NULL), MIRROR_POD_ANNOTATION) == NULL) {
        return forbid(r, "pod does not have \"%s\" annotation, node %s can only create mirror pods",
                      MIRROR_POD_ANNOTATION, r->qnode);
    }
    if (strcmp(adm_json_str(adm_json_get(pod, "spec"), "nodeName"), r->node) != 0) {
        return forbid(r, "node %s can only create pods with spec.nodeName set to itself", r->qnode);
    }
    owners = adm_json_path(pod, "metadata", "ownerReferences", NULL);
    if (yyjson_arr_size(owners) > 1) {
        return forbid(r, "node %s can only create pods with a single owner reference set to itself",
                      r->qnode);
    }
    owner = yyjson_arr_get_first(owners);
    if (owner == NULL || !str_is(owner, "apiVersion", "v1") || !str_is(owner, "kind", "Node") ||
        !str_is(owner, "name", r->node)) {
        return forbid(r, "node %s can only create pods with an owner reference set to itself", r->qnode);
    }
    if (!yyjson_is_true(adm_json_get(owner, "controller"))) {
        return forbid(r, "node %s can only create pods with a controller owner reference set to itself",
                      r->qnode);
    }
    if (yyjson_is_true(adm_json_get(owner, "blockOwnerDeletion"))) {
        return forbid(r, "node %s must not set blockOwnerDeletion on an owner reference", r->qnode);
    }
    /*
     * needs cluster state: kube compares owner.uid with the Node's uid from its informer (404 when it
     * has no such Node, "node <n> UID mismatch: expected <owner uid> got <node uid>" otherwise).
     * Admitted unchecked: the pod is already bound to this node and owned by it by name, as its
     * controller, without blocking deletion; a wrong uid only lets the garbage collector delete the
     * mirror pod, which gives the node nothing it lacks.
     */
    what = adm_pod_api_object_reference(r->attrs->arena, adm_json_get(pod, "spec"), &err);
    if (what == NULL) {
        return ADM_OK;
    }
    if (what[0] == '\0') {
        return err != NULL ? forbid(r, "error checking mirror pod for API references: %s", err) : ADM_ENOMEM;
    }
    return forbid(r, "node %s can not create pods that reference %s", r->qnode, what);
}

static int admit_pod_delete(nr_t *r)
{
    yyjson_val *old = r->attrs->req->old_object;

    /*
     * kube reads the pod from its informer (404 when unknown). The review of a DELETE carries the
     * stored pod as oldObject, which decides the same question without cluster state.
     */
    if (old == NULL) {
        /* needs cluster state: the pod, when the review lacks oldObject; a node must not delete others' pods
         */
        return unverifiable(r, "the pod is bound to node %s: the review has no oldObject", r->qnode);
    }
    if (strcmp(adm_json_str(adm_json_get(old, "spec"), "nodeName"), r->node) != 0) {
        return forbid(r, "node %s can only delete pods with spec.nodeName set to itself", r->qnode);
    }
    return ADM_OK;
}

static int admit_pod(nr_t *r)
{
    const char *op;

    switch (r->attrs->req->operation) {
    case ADM_OP_CREATE: return admit_pod_create(r);
    case ADM_OP_DELETE: return admit_pod_delete(r);
    default:
        op = adm_go_quote(r->attrs->arena, r->attrs->req->operation_name);
        return op != NULL
                   ? forbid(r, "unexpected operation %s, node %s can only create and delete mirror pods", op,
                            r->qnode)
                   : ADM_ENOMEM;
    }
}

/* forbid "unexpected operation %q" */
static int unexpected_operation(nr_t *r)
{
    const char *op = adm_go_quote(r->attrs->arena, r->attrs->req->operation_name);

    return op != NULL ? forbid(r, "unexpected operation %s", op) : ADM_ENOMEM;
}

/* resourceClaimStatusesEqual: the same names and claim names (a nil claim name differs from ""). */
static bool claim_statuses_equal(yyjson_val *a, yyjson_val *b)
{
    size_t n = yyjson_arr_size(a);

    if (n != yyjson_arr_size(b)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        yyjson_val *x = yyjson_arr_get(a, i);
        yyjson_val *y = yyjson_arr_get(b, i);
        yyjson_val *cx = adm_json_get(x, "resourceClaimName");
        yyjson_val *cy = adm_json_get(y, "resourceClaimName");

        if (!str_is(x, "name", adm_json_str(y, "name")) || present(cx) != present(cy) ||
            (present(cx) && !str_is(x, "resourceClaimName", adm_json_str(y, "resourceClaimName")))) {
            return false;
        }
    }
    return true;
}

/* extendedResourceClaimStatusEqual: both nil, or the same claim name and request mappings. */
static bool extended_claim_status_equal(yyjson_val *a, yyjson_val *b)
{
    static const char *const fields[] = {"containerName", "resourceName", "requestName"};
    yyjson_val *ma;
    yyjson_val *mb;
    size_t n;

    if (!present(a) || !present(b)) {
        return !present(a) && !present(b);
    }
    if (!str_is(a, "resourceClaimName", adm_json_str(b, "resourceClaimName"))) {
        return false;
    }
    ma = adm_json_get(a, "requestMappings");
    mb = adm_json_get(b, "requestMappings");
    n = yyjson_arr_size(ma);
    if (n != yyjson_arr_size(mb)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
            if (!str_is(yyjson_arr_get(ma, i), fields[f], adm_json_str(yyjson_arr_get(mb, i), fields[f]))) {
                return false;
            }
        }
    }
    return true;
}

static int admit_pod_status(nr_t *r)
{
    yyjson_val *old = r->attrs->req->old_object;
    yyjson_val *pod;

    if (r->attrs->req->operation != ADM_OP_UPDATE) {
        return unexpected_operation(r);
    }
    if (old == NULL || !adm_attrs_kind_is(r->attrs, "", "Pod")) {
        return unexpected_type(r, old);
    }
    if (strcmp(adm_json_str(adm_json_get(old, "spec"), "nodeName"), r->node) != 0) {
        return forbid(r, "node %s can only update pod status for pods with spec.nodeName set to itself",
                      r->qnode);
    }
    pod = adm_attrs_object(r->attrs);
    if (pod == NULL) {
        return unexpected_type(r, pod);
    }
    if (!labels_equal(adm_json_path(old, "metadata", "labels", NULL),
                      adm_json_path(pod, "metadata", "labels", NULL))) {
        return forbid(r, "node %s cannot update labels through pod status", r->qnode);
    }
    if (!claim_statuses_equal(adm_json_path(old, "status", "resourceClaimStatuses", NULL),
                              adm_json_path(pod, "status", "resourceClaimStatuses", NULL))) {
        return forbid(r, "node %s cannot update resource claim statues", r->qnode); /* sic */
    }
    if (!extended_claim_status_equal(adm_json_path(old, "status", "extendedResourceClaimStatus", NULL),
                                     adm_json_path(pod, "status", "extendedResourceClaimStatus", NULL))) {
        return forbid(r, "node %s cannot update extended resource claim status", r->qnode);
    }
    return ADM_OK;
}

static int admit_pod_eviction(nr_t *r)
{
    yyjson_val *eviction = adm_attrs_object(r->attrs);
    const char *pod = r->attrs->req->name;
    const char *qpod;

    if (r->attrs->req->operation != ADM_OP_CREATE) {
        return forbid(r, "unexpected operation %s", r->attrs->req->operation_name);
    }
    if (eviction == NULL || !adm_attrs_kind_is(r->attrs, "policy", "Eviction")) {
        return unexpected_type(r, eviction);
    }
    if (pod[0] == '\0') {
        pod = adm_json_str(adm_json_get(eviction, "metadata"), "name");
        if (pod[0] == '\0') {
            return forbid(r, "could not determine pod from request data");
        }
    }
    /*
     * needs cluster state: kube reads the pod from its informer (404 when unknown) and requires
     * spec.nodeName to be this node ("node <n> can only evict pods with spec.nodeName set to
     * itself"). Denied: admitting unchecked would let a node evict any pod in the cluster.
     */
    qpod = adm_go_quote(r->attrs->arena, pod);
    return qpod != NULL ? unverifiable(r, "pod %s is bound to node %s", qpod, r->qnode) : ADM_ENOMEM;
}

static int admit_pods(nr_t *r)
{
    const char *sub = r->attrs->req->sub_resource;
    const char *q;

    if (sub[0] == '\0') {
        return admit_pod(r);
    }
    if (strcmp(sub, "status") == 0) {
        return admit_pod_status(r);
    }
    if (strcmp(sub, "eviction") == 0) {
        return admit_pod_eviction(r);
    }
    q = adm_go_quote(r->attrs->arena, sub);
    return q != NULL ? forbid(r, "unexpected pod subresource %s, only 'status' and 'eviction' are allowed", q)
                     : ADM_ENOMEM;
}

/* ---- persistent volume claims ---- */

/* Members of metadata and status that kube clears on both PVCs before comparing them. */
static bool pvc_ignored(const char *parent, const char *key)
{
    static const char *const meta[] = {"resourceVersion", "managedFields"};
    /* allocatedResources and allocatedResourceStatuses: RecoverVolumeExpansionFailure is on */
    static const char *const status[] = {"capacity", "conditions", "allocatedResources",
                                         "allocatedResourceStatuses"};
    const char *const *list = strcmp(parent, "metadata") == 0 ? meta
                              : strcmp(parent, "status") == 0 ? status
                                                              : NULL;
    size_t n = list == meta ? 2 : list == status ? 4 : 0;

    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, list[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Appends path to the comma-separated list *out; false when the arena is exhausted. */
static bool add_path(adm_arena_t *a, const char **out, const char *path)
{
    *out = *out == NULL ? path : adm_arena_printf(a, "%s, %s", *out, path);
    return *out != NULL;
}

/*
 * Appends to *out the paths where x and y differ: objects member by member, leaving out what kube
 * clears under metadata and status; anything else whole. False when the arena is exhausted.
 */
static bool diff_paths(adm_arena_t *a, yyjson_val *x, yyjson_val *y, const char *path, const char *top,
                       int depth, const char **out)
{
    yyjson_val *pair[2] = {x, y};
    /* metadata, spec and status are structs, not pointers: absent is the same as empty there */
    bool xo = yyjson_is_obj(x) || (depth == 1 && !present(x) && yyjson_is_obj(y));
    bool yo = yyjson_is_obj(y) || (depth == 1 && !present(y) && yyjson_is_obj(x));

    if (!xo || !yo || depth > MAX_COMPARE_DEPTH) {
        return sem_equal(x, y, depth) || add_path(a, out, path[0] != '\0' ? path : "(root)");
    }
    for (int side = 0; side < 2; side++) {
        yyjson_val *k;
        yyjson_obj_iter it;

        yyjson_obj_iter_init(pair[side], &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            const char *key = yyjson_get_str(k);
            yyjson_val *other = yyjson_obj_getn(pair[1 - side], key, yyjson_get_len(k));
            const char *sub;

            if ((side == 1 && other != NULL) || (depth == 1 && pvc_ignored(top, key))) {
                continue;
            }
            sub = path[0] != '\0' ? adm_arena_printf(a, "%s.%s", path, key) : key;
            if (sub == NULL || !diff_paths(a, side == 0 ? yyjson_obj_iter_get_val(k) : other,
                                           side == 0 ? other : yyjson_obj_iter_get_val(k), sub,
                                           depth == 0 ? key : top, depth + 1, out)) {
                return false;
            }
        }
    }
    return true;
}

static int admit_pvc_status(nr_t *r)
{
    yyjson_val *old = r->attrs->req->old_object;
    yyjson_val *pvc;
    const char *diff = NULL;

    if (r->attrs->req->operation != ADM_OP_UPDATE) {
        return unexpected_operation(r);
    }
    if (old == NULL || !adm_attrs_kind_is(r->attrs, "", "PersistentVolumeClaim")) {
        return unexpected_type(r, old);
    }
    pvc = adm_attrs_object(r->attrs);
    if (pvc == NULL) {
        return unexpected_type(r, pvc);
    }
    if (!diff_paths(r->attrs->arena, old, pvc, "", "", 0, &diff)) {
        return ADM_ENOMEM;
    }
    if (diff == NULL) {
        return ADM_OK;
    }
    /* kube appends Go's diff of the two objects; admitd names the fields that differ. */
    return forbid(r,
                  "node %s is not allowed to update fields other than status.quantity and status.conditions: "
                  "differing fields: %s",
                  r->qnode, diff);
}

static int admit_pvc(nr_t *r)
{
    if (strcmp(r->attrs->req->sub_resource, "status") != 0) {
        return forbid(r, "may only update PVC status");
    }
    return admit_pvc_status(r);
}

/* ---- nodes ---- */

static int forbid_labels(nr_t *r, yyjson_val *now, yyjson_val *old, bool create)
{
    const char *keys = forbidden_label_changes(r->attrs->arena, now, old);

    if (keys == NULL) {
        return ADM_ENOMEM;
    }
    if (keys[0] == '\0') {
        return ADM_OK;
    }
    if (create) {
        return forbid(r, "node %s is not allowed to set the following labels: %s", r->qnode, keys);
    }
    return forbid(r, "is not allowed to modify labels: %s", keys); /* sic: no node in kube's message */
}

static int admit_node_update(nr_t *r, yyjson_val *node)
{
    yyjson_val *old = r->attrs->req->old_object;
    yyjson_val *config;

    if (node == NULL || !adm_attrs_kind_is(r->attrs, "", "Node")) {
        return unexpected_type(r, node);
    }
    if (old == NULL) {
        return unexpected_type(r, node); /* sic: kube prints the new object's type here */
    }
    /* old kubelets may drop configSource in a status update, so only a non-nil one is compared */
    config = adm_json_path(node, "spec", "configSource", NULL);
    if (present(config) && !sem_equal(config, adm_json_path(old, "spec", "configSource", NULL), 0)) {
        return forbid(r, "node %s is not allowed to update configSource to a new non-nil configSource",
                      r->qnode);
    }
    if (!sem_equal(adm_json_path(node, "spec", "taints", NULL), adm_json_path(old, "spec", "taints", NULL),
                   0)) {
        return forbid(r, "node %s is not allowed to modify taints", r->qnode);
    }
    /* an owner a node points at and then deletes would let the garbage collector delete the Node */
    if (!sem_equal(adm_json_path(node, "metadata", "ownerReferences", NULL),
                   adm_json_path(old, "metadata", "ownerReferences", NULL), 0)) {
        return forbid(r, "node %s is not allowed to modify ownerReferences", r->qnode);
    }
    return forbid_labels(r, adm_json_path(node, "metadata", "labels", NULL),
                         adm_json_path(old, "metadata", "labels", NULL), false);
}

static int admit_node(nr_t *r)
{
    const char *requested = r->attrs->req->name;
    yyjson_val *node;

    if (strcmp(requested, r->node) != 0) {
        const char *q = adm_go_quote(r->attrs->arena, requested);

        return q != NULL ? forbid(r, "node %s is not allowed to modify node %s", r->qnode, q) : ADM_ENOMEM;
    }
    node = adm_attrs_object(r->attrs);
    switch (r->attrs->req->operation) {
    case ADM_OP_CREATE:
        if (node == NULL || !adm_attrs_kind_is(r->attrs, "", "Node")) {
            return unexpected_type(r, node);
        }
        /* a node sees what its Node's spec names, so choosing its config source would widen that view */
        if (present(adm_json_path(node, "spec", "configSource", NULL))) {
            return forbid(r, "node %s is not allowed to create pods with a non-nil configSource",
                          r->qnode); /* sic */
        }
        return forbid_labels(r, adm_json_path(node, "metadata", "labels", NULL), NULL, true);
    case ADM_OP_UPDATE: return admit_node_update(r, node);
    default: return ADM_OK;
    }
}

/* ---- service account tokens ---- */

static int admit_service_account(nr_t *r)
{
    yyjson_val *tr = adm_attrs_object(r->attrs);
    yyjson_val *ref;
    const char *qpod;
    const char *quid;

    if (r->attrs->req->operation != ADM_OP_CREATE || strcmp(r->attrs->req->sub_resource, "token") != 0) {
        return ADM_OK;
    }
    if (tr == NULL || !adm_attrs_kind_is(r->attrs, "authentication.k8s.io", "TokenRequest")) {
        return unexpected_type(r, tr);
    }
    ref = adm_json_path(tr, "spec", "boundObjectRef", NULL);
    if (!present(ref) || !str_is(ref, "apiVersion", "v1") || !str_is(ref, "kind", "Pod") ||
        adm_json_str(ref, "name")[0] == '\0') {
        return forbid(r, "node requested token not bound to a pod");
    }
    if (adm_json_str(ref, "uid")[0] == '\0') {
        return forbid(r, "node requested token with a pod binding without a uid");
    }
    /*
     * needs cluster state: kube reads the bound pod from its informer (404 when unknown), requires its
     * uid to match ("the UID in the bound object reference (<uid>) does not match the UID in record.
     * ..."), requires it to run on this node ("node requested token bound to a pod scheduled on a
     * different node"), and then requires the audience to appear in the pod's projected tokens, in a
     * CSI driver the pod uses, or to be allowed by the authorizer. Denied: admitting unchecked would
     * let a node mint tokens bound to other nodes' pods, or for any audience.
     *
     * kube counts audiences only after the pod checks; the count needs no pod, so it is told here.
     */
    if (yyjson_arr_size(adm_json_path(tr, "spec", "audiences", NULL)) > 1) {
        return forbid(r, "node may only request 0 or 1 audiences");
    }
    qpod = adm_go_quote(r->attrs->arena, adm_json_str(ref, "name"));
    quid = adm_go_quote(r->attrs->arena, adm_json_str(ref, "uid"));
    if (qpod == NULL || quid == NULL) {
        return ADM_ENOMEM;
    }
    return unverifiable(r, "the bound pod %s with uid %s runs on node %s and uses the requested audience",
                        qpod, quid, r->qnode);
}

/* ---- pod certificate requests ---- */

static int admit_pod_certificate_request(nr_t *r)
{
    yyjson_val *pcr = adm_attrs_object(r->attrs);
    yyjson_val *spec;
    const char *qname;
    const char *qpod;
    const char *pod_ref;

    /* kube refuses everything while the PodCertificateRequest gate is off; the resource is not served then */
    if (r->attrs->req->operation != ADM_OP_CREATE) {
        return forbid(r, "unexpected operation %s", r->attrs->req->operation_name);
    }
    if (r->attrs->req->sub_resource[0] != '\0') {
        return forbid(r, "unexpected subresource %s", r->attrs->req->sub_resource);
    }
    if (pcr == NULL || !adm_attrs_kind_is(r->attrs, "certificates.k8s.io", "PodCertificateRequest")) {
        return unexpected_type(r, pcr);
    }
    spec = adm_json_get(pcr, "spec");
    if (!str_is(spec, "nodeName", r->node)) {
        qname = adm_go_quote(r->attrs->arena, adm_json_str(spec, "nodeName"));
        return qname != NULL
                   ? forbid(r, "PodCertificateRequest.Spec.NodeName=%s, which is not the requesting node %s",
                            qname, r->qnode)
                   : ADM_ENOMEM;
    }
    /*
     * needs cluster state: kube compares spec.nodeUID with the Node's uid, reads the pod (uid, on
     * this node, not a mirror pod), its service account (name and uid), and asks whether the pod may
     * use the signer. Denied: admitting unchecked would let a node obtain certificates for pods and
     * service accounts that are not its own.
     */
    pod_ref =
        adm_arena_printf(r->attrs->arena, "%s/%s", r->attrs->req->namespace_, adm_json_str(spec, "podName"));
    qpod = pod_ref != NULL ? adm_go_quote(r->attrs->arena, pod_ref) : NULL;
    if (qpod == NULL) {
        return ADM_ENOMEM;
    }
    return unverifiable(
        r, "pod %s runs on node %s with the node, pod and service account uids the request names", qpod,
        r->qnode);
}

/* ---- leases, CSINodes, ResourceSlices ---- */

static int admit_lease(nr_t *r)
{
    yyjson_val *lease;

    if (strcmp(r->attrs->req->namespace_, NODE_LEASE_NAMESPACE) != 0) {
        return forbid(r, "can only access leases in the \"%s\" system namespace", NODE_LEASE_NAMESPACE);
    }
    if (r->attrs->req->operation == ADM_OP_CREATE) {
        /* the request names no object on create, so the lease's own name is what counts */
        lease = adm_attrs_object(r->attrs);
        if (lease == NULL || !adm_attrs_kind_is(r->attrs, "coordination.k8s.io", "Lease")) {
            return unexpected_type(r, lease);
        }
        if (!str_is(adm_json_get(lease, "metadata"), "name", r->node)) {
            return forbid(r, "can only access node lease with the same name as the requesting node");
        }
    } else if (strcmp(r->attrs->req->name, r->node) != 0) {
        return forbid(r, "can only access node lease with the same name as the requesting node");
    }
    return ADM_OK;
}

static int admit_csinode(nr_t *r)
{
    yyjson_val *obj;

    if (r->attrs->req->operation == ADM_OP_CREATE) {
        obj = adm_attrs_object(r->attrs);
        if (obj == NULL) {
            return forbid(r, "unable to access the object name");
        }
        if (!str_is(adm_json_get(obj, "metadata"), "name", r->node)) {
            return forbid(r, "can only access CSINode with the same name as the requesting node");
        }
    } else if (strcmp(r->attrs->req->name, r->node) != 0) {
        return forbid(r, "can only access CSINode with the same name as the requesting node");
    }
    return ADM_OK;
}

/*
 * The node authorizer cannot see a created slice's content, nor each slice a DeleteCollection
 * removes; other operations it checks itself.
 */
static int admit_resource_slice(nr_t *r)
{
    yyjson_val *slice;
    yyjson_val *node;
    bool create = r->attrs->req->operation == ADM_OP_CREATE;

    if (!create && r->attrs->req->operation != ADM_OP_DELETE) {
        return ADM_OK;
    }
    slice = create ? adm_attrs_object(r->attrs) : r->attrs->req->old_object;
    if (slice == NULL || !adm_attrs_kind_is(r->attrs, "resource.k8s.io", "ResourceSlice")) {
        return unexpected_type(r, slice);
    }
    node = adm_json_path(slice, "spec", "nodeName", NULL);
    if (!yyjson_is_str(node) || strcmp(yyjson_get_str(node), r->node) != 0) {
        return forbid(r, "can only %s ResourceSlice with the same NodeName as the requesting node",
                      create ? "create" : "delete");
    }
    return ADM_OK;
}

/* ---- certificate signing requests ---- */

static int admit_csr(nr_t *r)
{
    yyjson_val *csr = adm_attrs_object(r->attrs);
    yyjson_val *spec;
    yyjson_val *request;
    const char *want;
    const char *error;
    adm_csr_t parsed;
    int rc;

    /* AllowInsecureKubeletCertificateSigningRequests is off: the check applies */
    if (r->attrs->req->operation != ADM_OP_CREATE) {
        return ADM_OK;
    }
    if (csr == NULL || !adm_attrs_kind_is(r->attrs, "certificates.k8s.io", "CertificateSigningRequest")) {
        return unexpected_type(r, csr);
    }
    spec = adm_json_get(csr, "spec");
    if (!str_is(spec, "signerName", KUBELET_SERVING_SIGNER) &&
        !str_is(spec, "signerName", KUBELET_CLIENT_SIGNER)) {
        return ADM_OK;
    }
    want = adm_arena_printf(r->attrs->arena, NODE_USER_PREFIX "%s", r->node);
    if (want == NULL) {
        return ADM_ENOMEM;
    }
    request = adm_json_get(spec, "request");
    rc = adm_csr_parse(r->attrs->arena, yyjson_is_str(request) ? yyjson_get_str(request) : "",
                       yyjson_get_len(request), &parsed, &error);
    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        return forbid(r, "unable to parse csr: %s", error);
    }
    return adm_csr_common_name_is(&parsed, want) ? ADM_OK
                                                 : forbid(r, "can only create a node CSR with CN=%s", want);
}

/* ---- the hook ---- */

static bool resource_is(const adm_review_request_t *req, const char *group, const char *resource)
{
    return strcmp(req->resource.group, group) == 0 && strcmp(req->resource.resource, resource) == 0;
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const adm_review_request_t *req = attrs->req;
    nr_t r = {.attrs = attrs, .st = st};

    if (!node_identity(&req->user_info, &r.node)) {
        return ADM_OK; /* only nodes are restricted */
    }
    if (r.node[0] == '\0') {
        const char *q = adm_go_quote(attrs->arena, req->user_info.username);

        return q != NULL ? forbid(&r, "could not determine node from user %s", q) : ADM_ENOMEM;
    }
    r.qnode = adm_go_quote(attrs->arena, r.node);
    if (r.qnode == NULL) {
        return ADM_ENOMEM;
    }
    /* by group and resource, whatever the subresource, as kube's switch on GroupResource() */
    if (resource_is(req, "", "pods")) {
        return admit_pods(&r);
    }
    if (resource_is(req, "", "nodes")) {
        return admit_node(&r);
    }
    if (resource_is(req, "", "persistentvolumeclaims")) {
        return admit_pvc(&r);
    }
    if (resource_is(req, "", "serviceaccounts")) {
        return admit_service_account(&r);
    }
    if (resource_is(req, "certificates.k8s.io", "podcertificaterequests")) {
        return admit_pod_certificate_request(&r);
    }
    if (resource_is(req, "coordination.k8s.io", "leases")) {
        return admit_lease(&r);
    }
    if (resource_is(req, "storage.k8s.io", "csinodes")) {
        return admit_csinode(&r);
    }
    if (resource_is(req, "resource.k8s.io", "resourceslices")) {
        return admit_resource_slice(&r);
    }
    if (resource_is(req, "certificates.k8s.io", "certificatesigningrequests")) {
        return admit_csr(&r);
    }
    return ADM_OK;
}

const adm_plugin_t adm_plugin_node_restriction = {
    .name = "NodeRestriction",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE,
    .admit = admit,
};

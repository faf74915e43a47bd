/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota (validating): a CREATE or UPDATE is charged against every ResourceQuota of its
 * namespace (cluster state) that tracks what it uses and whose scopes it matches; usage is the
 * quota's status.used, the bound its status.hard, as kube-apiserver's quotaEvaluator.checkRequest.
 * With an API connection the usage a request adds is then written into each quota's status.used
 * before it is admitted (quota_reserve.h: per-namespace batches, status PUTs, conflicts); without
 * one, or on dry run, the check alone decides (README: what differs). Evaluators: pods (compute resources,
 * pods, count/pods; scopes), persistentvolumeclaims (storage, per storage class), services (load balancers,
 * node ports), and kube's object count evaluator (count/<resource>[.<group>]) for every other resource.
 *
 * When the cache has no quota in the namespace, kube's GetQuotas lists the namespace's live (kept
 * 30 s per namespace, one LIST at a time per namespace): with an API connection admitd does the
 * same through list_cache.h, and the quotas it finds are checked and charged as cached ones are. A
 * LIST that fails refuses the request with the API server's Status as it came (Go's url.Error,
 * 500, for an answer that did not come), as kube returns the client's error unwrapped.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/quantity.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/list_cache.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/parsed_cache.h"
#include "adm/plugins/quota_reserve.h"
#include "adm/plugins/resources.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STORAGE_CLASS_SUFFIX ".storageclass.storage.k8s.io/"

static int rl_set_int(adm_arena_t *a, adm_rlist_t *l, const char *name, int64_t v)
{
    adm_quantity_t q = adm_quantity_scaled(v, 0, ADM_QTY_DECIMAL_SI);

    return adm_rlist_set(a, l, name, &q);
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* helper.IsNativeResource: no domain, or a kubernetes.io domain. */
static bool is_native(const char *name)
{
    return strchr(name, '/') == NULL || strstr(name, "kubernetes.io/") != NULL;
}

/*
 * name's adm_res_t, or -1 when it is none of those names. Lists adm_rlist_read made hold the
 * interned pointers (resources.h), found by their address; any other text is interned first.
 */
static int res_of(const char *name)
{
    uintptr_t off = (uintptr_t)name - (uintptr_t)adm_res_names;

    if (off >= sizeof(adm_res_names)) {
        off = (uintptr_t)adm_res_intern(name) - (uintptr_t)adm_res_names;
    }
    return off < sizeof(adm_res_names) && off % ADM_RES_NAME_MAX == 0 ? (int)(off / ADM_RES_NAME_MAX) : -1;
}

/* ---- the evaluators ---- */

typedef enum { EV_POD, EV_PVC, EV_SERVICE, EV_COUNT } ev_kind_t;

typedef struct ev_s {
    ev_kind_t kind;
    const char *count_name;  /* count/<resource>[.<group>] */
    const char *legacy_name; /* the object count's legacy name ("configmaps"), or NULL */
} ev_t;

static const char *const POD_RESOURCES[] = {
    "cpu",
    "requests.cpu",
    "limits.cpu",
    "memory",
    "requests.memory",
    "limits.memory",
    "pods",
    "count/pods",
    "ephemeral-storage",
    "requests.ephemeral-storage",
    "limits.ephemeral-storage",
};

/* MatchingResources: whether the evaluator tracks name. */
static bool ev_tracks(const ev_t *ev, const char *name)
{
    switch (ev->kind) {
    case EV_POD:
        for (size_t i = 0; i < sizeof(POD_RESOURCES) / sizeof(POD_RESOURCES[0]); i++) {
            if (strcmp(name, POD_RESOURCES[i]) == 0) {
                return true;
            }
        }
        return starts_with(name, "hugepages-") || starts_with(name, "requests.hugepages-") ||
               (!is_native(name) && starts_with(name, "requests."));
    case EV_PVC:
        return strcmp(name, "persistentvolumeclaims") == 0 ||
               strcmp(name, "count/persistentvolumeclaims") == 0 || strcmp(name, "requests.storage") == 0 ||
               (strstr(name, STORAGE_CLASS_SUFFIX) != NULL &&
                (ends_with(name, STORAGE_CLASS_SUFFIX "requests.storage") ||
                 ends_with(name, STORAGE_CLASS_SUFFIX "persistentvolumeclaims")));
    case EV_SERVICE:
        return strcmp(name, "services") == 0 || strcmp(name, "count/services") == 0 ||
               strcmp(name, "services.loadbalancers") == 0 || strcmp(name, "services.nodeports") == 0;
    case EV_COUNT:
        return strcmp(name, ev->count_name) == 0 ||
               (ev->legacy_name != NULL && strcmp(name, ev->legacy_name) == 0);
    }
    return false;
}

/*
 * A usage (or what an update adds), with where each adm_res_t name is in its list: a quota's
 * tracked entries find their value by index instead of searching the list by name.
 */
typedef struct usage_s {
    adm_rlist_t l;
    int32_t at[ADM_RES_COUNT]; /* index in l, -1 when absent */
} usage_t;

static void usage_index(usage_t *u)
{
    for (size_t r = 0; r < ADM_RES_COUNT; r++) {
        u->at[r] = -1;
    }
    for (size_t k = 0; k < u->l.n; k++) {
        int r = res_of(u->l.names[k]);

        if (r >= 0 && u->at[r] < 0) {
            u->at[r] = (int32_t)k;
        }
    }
}

/* The entry appended to l, whose arrays have room (usage lists are sized before they are filled). */
static void put(adm_rlist_t *l, const char *name, const adm_quantity_t *q)
{
    l->names[l->n] = name;
    l->qs[l->n++] = *q;
}

/* put, for an adm_res_t name: u->at says where it is. */
static void put_res(usage_t *u, adm_res_t r, const adm_quantity_t *q)
{
    u->at[r] = (int32_t)u->l.n;
    put(&u->l, adm_res(r), q);
}

/* put, for any name: u->at says where it is when it is an adm_res_t name. */
static void put_any(usage_t *u, const char *name, const adm_quantity_t *q)
{
    int r = res_of(name);

    if (r >= 0 && u->at[r] < 0) {
        u->at[r] = (int32_t)u->l.n;
    }
    put(&u->l, name, q);
}

/*
 * The pod evaluator's Usage: count/pods, then podComputeUsageHelper's requests and limits as the
 * quota resource names (pods, cpu, requests.cpu, limits.cpu, ... then hugepages and extended
 * resources in the order of the pod's requests). The list is sized once: every name comes from
 * one distinct name of req or lim, so it holds at most 2 + 3 * 3 + 2 * req->n entries; u->at
 * is filled as the names are put.
 */
static int pod_compute_usage(adm_arena_t *a, const adm_rlist_t *req, const adm_rlist_t *lim, usage_t *u)
{
    /* the quota names of the three (the bare name is the resource's own), in kube's order */
    static const adm_res_t plain[3][3] = {
        {ADM_RES_CPU, ADM_RES_REQUESTS_CPU, ADM_RES_LIMITS_CPU},
        {ADM_RES_MEMORY, ADM_RES_REQUESTS_MEMORY, ADM_RES_LIMITS_MEMORY},
        {ADM_RES_EPHEMERAL_STORAGE, ADM_RES_REQUESTS_EPHEMERAL_STORAGE, ADM_RES_LIMITS_EPHEMERAL_STORAGE}};
    adm_quantity_t one = adm_quantity_scaled(1, 0, ADM_QTY_DECIMAL_SI);
    const adm_quantity_t *found[2][3] = {{NULL, NULL, NULL}, {NULL, NULL, NULL}}; /* requests, limits */
    const adm_rlist_t *lists[2] = {req, lim};
    size_t cap = 2 + 3 * 3 + 2 * req->n;
    bool others; /* req names something besides cpu, memory and ephemeral-storage */
    adm_rlist_t *out = &u->l;

    out->names = adm_arena_alloc(a, cap * sizeof(*out->names));
    out->qs = adm_arena_alloc(a, cap * sizeof(*out->qs));
    if (out->names == NULL || out->qs == NULL) {
        return ADM_ENOMEM;
    }
    out->cap = cap;
    out->n = 0;
    for (size_t k = 0; k < ADM_RES_COUNT; k++) {
        u->at[k] = -1;
    }
    /* each list's cpu, memory and ephemeral-storage in one pass (a list holds a name once) */
    for (size_t w = 0; w < 2; w++) {
        for (size_t k = 0; k < lists[w]->n; k++) {
            int res = res_of(lists[w]->names[k]);

            for (size_t i = 0; i < 3; i++) {
                found[w][i] = res == (int)plain[i][0] ? &lists[w]->qs[k] : found[w][i];
            }
        }
    }
    others = req->n > (size_t)(found[0][0] != NULL) + (found[0][1] != NULL) + (found[0][2] != NULL);
    put_res(u, ADM_RES_COUNT_PODS, &one);
    put_res(u, ADM_RES_PODS, &one);
    for (size_t i = 0; i < 3; i++) {
        if (found[0][i] != NULL) {
            put_res(u, plain[i][0], found[0][i]);
            put_res(u, plain[i][1], found[0][i]);
        }
        if (found[1][i] != NULL) {
            put_res(u, plain[i][2], found[1][i]);
        }
    }
    for (size_t i = 0; others && i < req->n; i++) {
        const char *name = req->names[i];
        bool huge;

        if (&req->qs[i] == found[0][0] || &req->qs[i] == found[0][1] || &req->qs[i] == found[0][2]) {
            continue; /* cpu, memory, ephemeral-storage: put above */
        }
        huge = starts_with(name, "hugepages-");
        if (huge) {
            put_any(u, name, &req->qs[i]);
        }
        if (huge || (!is_native(name) && !starts_with(name, "requests."))) {
            const char *requests = adm_arena_printf(a, "requests.%s", name);

            if (requests == NULL) {
                return ADM_ENOMEM;
            }
            put_any(u, requests, &req->qs[i]);
        }
    }
    return 0;
}

static bool pod_terminal(yyjson_val *pod)
{
    const char *phase = adm_json_str(adm_json_get(pod, "status"), "phase");

    return strcmp(phase, "Failed") == 0 || strcmp(phase, "Succeeded") == 0;
}

/* The evaluator's Usage of obj as a list; a pod's only when it is terminal (ev_usage). */
static int ev_usage_list(adm_arena_t *a, const ev_t *ev, yyjson_val *obj, adm_rlist_t *out)
{
    const char *bad; /* the object's own decoding reports a malformed quantity */
    int err = 0;

    memset(out, 0, sizeof(*out));
    switch (ev->kind) {
    case EV_POD: return rl_set_int(a, out, adm_res(ADM_RES_COUNT_PODS), 1);
    case EV_PVC: {
        yyjson_val *storage = adm_json_path(obj, "spec", "resources", "requests", "storage", NULL);
        const char *cls = adm_json_str(adm_json_path(obj, "metadata", "annotations", NULL),
                                       "volume.beta.kubernetes.io/storage-class");
        adm_quantity_t q;

        if (*cls == '\0') {
            cls = adm_json_str(adm_json_get(obj, "spec"), "storageClassName");
        }
        err = rl_set_int(a, out, "count/persistentvolumeclaims", 1);
        if (err == 0) {
            err = rl_set_int(a, out, "persistentvolumeclaims", 1);
        }
        if (err == 0 && *cls != '\0') {
            err = rl_set_int(a, out,
                             adm_arena_printf(a, "%s" STORAGE_CLASS_SUFFIX "persistentvolumeclaims", cls), 1);
        }
        if (err == 0 && storage != NULL) {
            err = adm_json_read_quantity(a, storage, &q, &bad);
            if (err == 0) {
                err = adm_rlist_set(a, out, "requests.storage", &q);
            }
            if (err == 0 && *cls != '\0') {
                err = adm_rlist_set(
                    a, out, adm_arena_printf(a, "%s" STORAGE_CLASS_SUFFIX "requests.storage", cls), &q);
            }
        }
        return err;
    }
    case EV_SERVICE: {
        yyjson_val *spec = adm_json_get(obj, "spec");
        const char *type = adm_json_str(spec, "type");
        yyjson_val *ports = adm_json_get(spec, "ports");
        int64_t nports = (int64_t)yyjson_arr_size(ports);

        err = rl_set_int(a, out, "count/services", 1);
        if (err == 0) {
            err = rl_set_int(a, out, "services", 1);
        }
        if (err == 0 && strcmp(type, "NodePort") == 0) {
            err = rl_set_int(a, out, "services.nodeports", nports);
        } else if (err == 0 && strcmp(type, "LoadBalancer") == 0) {
            if (yyjson_is_false(adm_json_get(spec, "allocateLoadBalancerNodePorts"))) {
                /* node ports are not allocated then: only the ones asked for count */
                yyjson_arr_iter it;
                yyjson_val *p;

                nports = 0;
                yyjson_arr_iter_init(ports, &it);
                for (p = yyjson_arr_iter_next(&it); p != NULL; p = yyjson_arr_iter_next(&it)) {
                    nports += yyjson_get_int(adm_json_get(p, "nodePort")) != 0;
                }
            }
            err = rl_set_int(a, out, "services.nodeports", nports);
            if (err == 0) {
                err = rl_set_int(a, out, "services.loadbalancers", 1);
            }
        }
        return err;
    }
    case EV_COUNT:
        err = rl_set_int(a, out, ev->count_name, 1);
        if (err == 0 && ev->legacy_name != NULL) {
            err = rl_set_int(a, out, ev->legacy_name, 1);
        }
        return err;
    }
    return 0;
}

/* The evaluator's Usage of obj, indexed. */
static int ev_usage(adm_arena_t *a, const ev_t *ev, yyjson_val *obj, usage_t *u)
{
    int err;

    if (ev->kind == EV_POD && !pod_terminal(obj)) {
        const adm_rlist_t *req, *lim;
        const char *bad; /* the object's own decoding reports a malformed quantity */

        memset(&u->l, 0, sizeof(u->l));
        err = adm_pod_resource_totals_kept(a, obj, &req, &lim, &bad);
        return err == 0 ? pod_compute_usage(a, req, lim, u) : err;
    }
    err = ev_usage_list(a, ev, obj, &u->l);
    if (err == 0) {
        usage_index(u);
    }
    return err;
}

/* ---- the quota as an evaluator sees it, and the usage found by name ---- */

/*
 * The names pod_constraints validates, sorted, with the resource and the list (0 requests, 1
 * limits) a container must state for each.
 */
static const struct {
    adm_res_t name, resource;
    int list;
} POD_VALIDATION[] = {{ADM_RES_CPU, ADM_RES_CPU, 0},
                      {ADM_RES_LIMITS_CPU, ADM_RES_CPU, 1},
                      {ADM_RES_LIMITS_MEMORY, ADM_RES_MEMORY, 1},
                      {ADM_RES_MEMORY, ADM_RES_MEMORY, 0},
                      {ADM_RES_REQUESTS_CPU, ADM_RES_CPU, 0},
                      {ADM_RES_REQUESTS_MEMORY, ADM_RES_MEMORY, 0}};
#define POD_NVALIDATION (sizeof(POD_VALIDATION) / sizeof(POD_VALIDATION[0]))

/* One status.hard entry the evaluator tracks, with its status.used entry found. */
typedef struct tracked_s {
    const char *name;           /* as status.hard has it */
    const adm_quantity_t *hard; /* its limit, in status.hard's array */
    ptrdiff_t used;             /* its index in status.used, or -1 when there is none */
    int res;                    /* its adm_res_t, or -1 */
} tracked_t;

/*
 * A quota as one evaluator sees it: the status.hard entries it tracks (MatchingResources), in
 * status.hard's order. Its indexes point into the lists it was made from, so it is only used with
 * those, unchanged but for quantities added in place (a batch's charge never adds a name: every
 * name a check charges is tracked, and one missing from status.used refuses the request).
 */
typedef struct view_s {
    const tracked_t *t;
    size_t n;
    size_t nmissing;     /* tracked entries status.used lacks */
    unsigned validation; /* pod evaluator: bit k when POD_VALIDATION[k]'s name is tracked */
} view_t;

static int view_make(adm_arena_t *a, const ev_t *ev, const adm_rlist_t *hard, const adm_rlist_t *used,
                     view_t *v)
{
    tracked_t *t = adm_arena_alloc(a, (hard->n + 1) * sizeof(*t));

    memset(v, 0, sizeof(*v));
    if (t == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t k = 0; k < hard->n; k++) {
        const adm_quantity_t *u;
        tracked_t *e = &t[v->n];

        if (!ev_tracks(ev, hard->names[k])) {
            continue;
        }
        u = adm_rlist_find(used, hard->names[k]);
        e->name = hard->names[k];
        e->hard = &hard->qs[k];
        e->used = u != NULL ? u - used->qs : -1;
        e->res = res_of(e->name);
        v->nmissing += u == NULL;
        for (size_t j = 0; ev->kind == EV_POD && j < POD_NVALIDATION; j++) {
            v->validation |= e->res == (int)POD_VALIDATION[j].name ? 1u << j : 0;
        }
        v->n++;
    }
    v->t = t;
    return 0;
}

/* Whether v tracks name (its text). */
static bool view_has(const view_t *v, const char *name)
{
    for (size_t k = 0; k < v->n; k++) {
        if (v->t[k].name == name || strcmp(v->t[k].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The usage of t's name, or NULL. */
static const adm_quantity_t *usage_of(const usage_t *u, const tracked_t *t)
{
    if (t->res >= 0) {
        return u->at[t->res] >= 0 ? &u->l.qs[u->at[t->res]] : NULL;
    }
    return adm_rlist_find(&u->l, t->name); /* hugepages, extended resources, storage classes ... */
}

/* ---- scopes ---- */

static bool terms_cross_namespace(yyjson_val *terms, bool weighted)
{
    yyjson_arr_iter it;
    yyjson_val *t;

    yyjson_arr_iter_init(terms, &it);
    for (t = yyjson_arr_iter_next(&it); t != NULL; t = yyjson_arr_iter_next(&it)) {
        yyjson_val *term = weighted ? adm_json_get(t, "podAffinityTerm") : t;

        if (yyjson_arr_size(adm_json_get(term, "namespaces")) > 0 ||
            (adm_json_get(term, "namespaceSelector") != NULL &&
             !yyjson_is_null(adm_json_get(term, "namespaceSelector")))) {
            return true;
        }
    }
    return false;
}

static bool pod_cross_namespace_affinity(yyjson_val *pod)
{
    static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};

    for (size_t i = 0; i < 2; i++) {
        yyjson_val *aff = adm_json_path(pod, "spec", "affinity", kinds[i], NULL);

        if (terms_cross_namespace(adm_json_get(aff, "requiredDuringSchedulingIgnoredDuringExecution"),
                                  false) ||
            terms_cross_namespace(adm_json_get(aff, "preferredDuringSchedulingIgnoredDuringExecution"),
                                  true)) {
            return true;
        }
    }
    return false;
}

/* A PriorityClass selector: the pod's label set is {PriorityClass: name} (empty without one). */
static bool priority_matches(yyjson_val *pod, const char *op, yyjson_val *values)
{
    const char *pc = adm_json_str(adm_json_get(pod, "spec"), "priorityClassName");
    bool has = *pc != '\0', in = false;
    yyjson_arr_iter it;
    yyjson_val *v;

    yyjson_arr_iter_init(values, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        in = in || (has && yyjson_is_str(v) && strcmp(yyjson_get_str(v), pc) == 0);
    }
    if (strcmp(op, "In") == 0) {
        return in;
    }
    if (strcmp(op, "NotIn") == 0) {
        return !in;
    }
    if (strcmp(op, "Exists") == 0) {
        return has;
    }
    if (strcmp(op, "DoesNotExist") == 0) {
        return !has;
    }
    return false;
}

/* podMatchesScopeFunc; other evaluators match no scope (generic.MatchesNoScopeFunc). */
static bool scope_matches(const ev_t *ev, yyjson_val *obj, const char *scope, const char *op,
                          yyjson_val *values)
{
    yyjson_val *deadline;

    if (ev->kind != EV_POD) {
        return false;
    }
    deadline = adm_json_path(obj, "spec", "activeDeadlineSeconds", NULL);
    if (strcmp(scope, "Terminating") == 0 || strcmp(scope, "NotTerminating") == 0) {
        bool terminating = yyjson_is_int(deadline) && yyjson_get_sint(deadline) >= 0;

        return terminating == (strcmp(scope, "Terminating") == 0);
    }
    if (strcmp(scope, "BestEffort") == 0) {
        return adm_pod_qos_best_effort(obj);
    }
    if (strcmp(scope, "NotBestEffort") == 0) {
        return !adm_pod_qos_best_effort(obj);
    }
    if (strcmp(scope, "PriorityClass") == 0) {
        return priority_matches(obj, op, values);
    }
    if (strcmp(scope, "CrossNamespacePodAffinity") == 0) {
        return pod_cross_namespace_affinity(obj);
    }
    return false;
}

/* generic.Matches' scope half: spec.scopes (as Exists) and every scopeSelector expression match. */
static bool quota_scopes_match(const ev_t *ev, yyjson_val *quota, yyjson_val *obj)
{
    yyjson_arr_iter it;
    yyjson_val *s;

    yyjson_arr_iter_init(adm_json_path(quota, "spec", "scopes", NULL), &it);
    for (s = yyjson_arr_iter_next(&it); s != NULL; s = yyjson_arr_iter_next(&it)) {
        if (!scope_matches(ev, obj, yyjson_is_str(s) ? yyjson_get_str(s) : "", "Exists", NULL)) {
            return false;
        }
    }
    yyjson_arr_iter_init(adm_json_path(quota, "spec", "scopeSelector", "matchExpressions", NULL), &it);
    for (s = yyjson_arr_iter_next(&it); s != NULL; s = yyjson_arr_iter_next(&it)) {
        if (!scope_matches(ev, obj, adm_json_str(s, "scopeName"), adm_json_str(s, "operator"),
                           adm_json_get(s, "values"))) {
            return false;
        }
    }
    return true;
}

/* Whether the quota names a scope at all: one that does not matches every object. */
static bool quota_scoped(yyjson_val *quota)
{
    return yyjson_arr_size(adm_json_path(quota, "spec", "scopes", NULL)) > 0 ||
           yyjson_arr_size(adm_json_path(quota, "spec", "scopeSelector", "matchExpressions", NULL)) > 0;
}

/*
 * What a check needs of a quota beyond its lists, worked out when the quota is parsed: whether it
 * has scopes, and the views of the evaluators whose tracked names are fixed (an object count's
 * depend on the request's resource). Kept with the parse (parsed_cache.h), so it goes when the
 * quota changes; a quota read otherwise (a batch's) has none, and each check works it out.
 */
typedef struct rq_prep_s {
    bool scoped;
    view_t views[EV_SERVICE + 1]; /* by ev_kind_t: EV_POD, EV_PVC, EV_SERVICE */
} rq_prep_t;

static int prep_make(adm_arena_t *a, yyjson_val *quota, const adm_rlist_t *hard, const adm_rlist_t *used,
                     rq_prep_t *p)
{
    int err = 0;

    p->scoped = quota_scoped(quota);
    for (int k = EV_POD; err == 0 && k <= EV_SERVICE; k++) {
        ev_t ev = {.kind = (ev_kind_t)k};

        err = view_make(a, &ev, hard, used, &p->views[k]);
    }
    return err;
}

/* generic.Matches' scope half, skipped for a quota without scopes (prep may be NULL). */
static bool quota_matches(const ev_t *ev, const adm_quota_t *q, const rq_prep_t *prep, yyjson_val *obj)
{
    if (prep != NULL ? !prep->scoped : !quota_scoped(q->obj)) {
        return true;
    }
    return quota_scopes_match(ev, q->obj, obj);
}

/* ---- limitedResources (the plugin's Configuration) ---- */

typedef struct scope_req_s {
    const char *name, *op;
    yyjson_val *values; /* in the state's own document */
} scope_req_t;

typedef struct limited_s {
    const char *group, *resource;
    const char **contains;
    size_t ncontains;
    scope_req_t *scopes;
    size_t nscopes;
} limited_t;

typedef struct rq_state_s {
    yyjson_doc *doc; /* a copy of the configuration: the strings above point into it */
    limited_t *limited;
    size_t nlimited;
} rq_state_t;

static const char *const SCOPES[] = {"Terminating",   "NotTerminating", "BestEffort",
                                     "NotBestEffort", "PriorityClass",  "CrossNamespacePodAffinity"};

/* One matchScopes entry as kube's ValidateConfiguration checks it; NULL or the problem. */
static const char *check_scope(yyjson_val *m, scope_req_t *out)
{
    bool known = false;
    yyjson_val *values = adm_json_get(m, "values");

    out->name = adm_json_str(m, "scopeName");
    out->op = adm_json_str(m, "operator");
    out->values = values;
    for (size_t i = 0; i < sizeof(SCOPES) / sizeof(SCOPES[0]); i++) {
        known = known || strcmp(out->name, SCOPES[i]) == 0;
    }
    if (!known) {
        return "scopeName: unsupported scope";
    }
    if (strcmp(out->op, "In") != 0 && strcmp(out->op, "NotIn") != 0 && strcmp(out->op, "Exists") != 0 &&
        strcmp(out->op, "DoesNotExist") != 0) {
        return "operator: must be In, NotIn, Exists or DoesNotExist";
    }
    if ((strcmp(out->op, "In") == 0 || strcmp(out->op, "NotIn") == 0) && yyjson_arr_size(values) == 0) {
        return "values: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector";
    }
    if ((strcmp(out->op, "Exists") == 0 || strcmp(out->op, "DoesNotExist") == 0) &&
        yyjson_arr_size(values) > 0) {
        return "values: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector";
    }
    return NULL;
}

/* Fills s from the Configuration; NULL or "FIELD: problem". */
static const char *read_config(adm_arena_t *a, yyjson_val *root, rq_state_t *s)
{
    const char *api = adm_json_str(root, "apiVersion");
    yyjson_val *list = adm_json_get(root, "limitedResources");
    size_t n = yyjson_arr_size(list);

    if (!yyjson_is_obj(root)) {
        return "the configuration must be an object";
    }
    if (strcmp(api, "resourcequota.admission.k8s.io/v1") != 0 &&
        strcmp(api, "resourcequota.admission.k8s.io/v1beta1") != 0 &&
        strcmp(api, "resourcequota.admission.k8s.io/v1alpha1") != 0) {
        return adm_arena_printf(
            a, "apiVersion: \"%s\" is not resourcequota.admission.k8s.io/v1, v1beta1 or v1alpha1", api);
    }
    if (strcmp(adm_json_str(root, "kind"), "Configuration") != 0) {
        return adm_arena_printf(a, "kind: \"%s\" is not Configuration", adm_json_str(root, "kind"));
    }
    if (list != NULL && !yyjson_is_arr(list)) {
        return "limitedResources: must be a list";
    }
    s->limited = calloc(n == 0 ? 1 : n, sizeof(*s->limited));
    if (s->limited == NULL) {
        return "out of memory";
    }
    for (size_t i = 0; i < n; i++) {
        yyjson_val *item = yyjson_arr_get(list, i), *contains = adm_json_get(item, "matchContains");
        yyjson_val *scopes = adm_json_get(item, "matchScopes");
        limited_t *l = &s->limited[i];

        l->group = adm_json_str(item, "apiGroup");
        l->resource = adm_json_str(item, "resource");
        if (*l->resource == '\0') {
            return adm_arena_printf(a, "limitedResources[%zu].resource: Required value", i);
        }
        if (yyjson_arr_size(contains) == 0 && yyjson_arr_size(scopes) == 0) {
            return adm_arena_printf(
                a,
                "limitedResources[%zu].matchContains: Required value: must at least specify "
                "matchContains or matchScopes",
                i);
        }
        l->ncontains = yyjson_arr_size(contains);
        l->contains = adm_arena_calloc(a, l->ncontains + 1, sizeof(*l->contains));
        l->nscopes = yyjson_arr_size(scopes);
        l->scopes = adm_arena_calloc(a, l->nscopes + 1, sizeof(*l->scopes));
        if (l->contains == NULL || l->scopes == NULL) {
            return "out of memory";
        }
        for (size_t k = 0; k < l->ncontains; k++) {
            yyjson_val *c = yyjson_arr_get(contains, k);

            if (!yyjson_is_str(c)) {
                return adm_arena_printf(a, "limitedResources[%zu].matchContains[%zu]: must be a string", i,
                                        k);
            }
            l->contains[k] = yyjson_get_str(c);
        }
        for (size_t k = 0; k < l->nscopes; k++) {
            const char *why = check_scope(yyjson_arr_get(scopes, k), &l->scopes[k]);

            if (why != NULL) {
                return adm_arena_printf(a, "limitedResources[%zu].matchScopes[%zu].%s", i, k, why);
            }
        }
    }
    s->nlimited = n;
    return NULL;
}

/*
 * configure: the limitedResources of a resourcequota.admission.k8s.io Configuration. The state
 * keeps its own copy of the document (the strings point into it) and an arena for the arrays.
 */
typedef struct rq_owner_s {
    rq_state_t st;
    adm_parsed_cache_t *parsed; /* the quotas' status.hard and status.used, parsed (quota_parse) */
    adm_arena_t *arena;
    adm_quota_reserver_t *reserver; /* with an API connection: the batches that write status.used */
    adm_list_cache_t *live;         /* with an API connection: the live LISTs on an empty cache */
} rq_owner_t;

/* The live LIST's quotas for this request, in the plugin's slot (arena memory). */
typedef struct rq_live_s {
    yyjson_val *const *items;
    size_t n;
} rq_live_t;

/* The quotas of the live LIST this request read (adm_quota_source_fn). */
static yyjson_val *const *live_quotas(adm_attrs_t *attrs, size_t *n)
{
    void **slot = adm_plugin_slot(attrs);
    const rq_live_t *l = slot != NULL ? *slot : NULL;

    *n = l != NULL ? l->n : 0;
    return l != NULL ? l->items : NULL;
}

/* A quota's lists as the parsed cache keeps them (nothing points into the object). */
typedef struct rq_parsed_s {
    adm_rlist_t hard, used;
    rq_prep_t prep; /* made from the two lists above, and the object's spec */
} rq_parsed_t;

/*
 * Quotas kept parsed: requests come from every namespace, so room for as many namespaces as a
 * large cluster has (about 1 KB each), the least recently used leaving first.
 */
#define RQ_PARSED_MAX 4096

static int quota_parse(adm_arena_t *a, yyjson_val *obj, void **out)
{
    rq_parsed_t *p = adm_arena_calloc(a, 1, sizeof(*p));
    const char *bad;
    int err;

    if (p == NULL) {
        return ADM_ENOMEM;
    }
    *out = p;
    err = adm_rlist_read(a, adm_json_path(obj, "status", "hard", NULL), &p->hard, &bad);
    if (err == 0) {
        err = adm_rlist_read(a, adm_json_path(obj, "status", "used", NULL), &p->used, &bad);
    }
    if (err == 0) {
        err = adm_rlist_own(a, &p->hard);
    }
    if (err == 0) {
        err = adm_rlist_own(a, &p->used);
    }
    return err == 0 ? prep_make(a, obj, &p->hard, &p->used, &p->prep) : err;
}

/*
 * adm_quota_list without a reserver (no API connection, so no version admitd wrote to prefer) for
 * items[0..n), the cluster state's quotas of the namespace: each quota's lists and prep from the
 * parsed cache, shared, not copied: the check of such a request charges nothing (check_quotas
 * without charge), so it only reads them.
 */
static int quota_list_parsed(adm_parsed_cache_t *parsed, adm_attrs_t *attrs, yyjson_val *const *items,
                             size_t n, adm_quota_t **out)
{
    adm_quota_t *q;

    *out = NULL;
    if (n == 0) {
        return 0;
    }
    q = adm_arena_calloc(attrs->arena, n, sizeof(*q));
    if (q == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        yyjson_val *meta = adm_json_get(items[i], "metadata");
        const void *kept;
        int err = adm_parsed_cache_get(parsed, attrs, items[i], &kept);

        if (err == ADM_ENOMEM) {
            return err;
        }
        q[i].obj = items[i];
        q[i].name = adm_json_str(meta, "name");
        q[i].rv = adm_json_str(meta, "resourceVersion");
        q[i].usable = err == 0;
        if (err == 0) {
            const rq_parsed_t *p = kept;

            q[i].hard = p->hard;
            q[i].used = p->used;
            q[i].prepared = &p->prep;
        }
    }
    *out = q;
    return 0;
}

static void free_owner(void *state)
{
    rq_owner_t *o = state;

    if (o != NULL) {
        adm_parsed_cache_free(o->parsed);
        adm_quota_reserver_free(o->reserver);
        adm_list_cache_free(o->live);
        yyjson_doc_free(o->st.doc);
        free(o->st.limited);
        adm_arena_destroy(o->arena);
        free(o);
    }
}

static int check_request(void *arg, adm_attrs_t *attrs, adm_arena_t *qa, adm_quota_t *quotas, size_t n,
                         adm_status_t *st, bool *charged);

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    rq_owner_t *o;
    const char *problem;

    *state = NULL;
    o = calloc(1, sizeof(*o));
    if (o == NULL) {
        return ADM_ENOMEM;
    }
    o->parsed = adm_parsed_cache_create(quota_parse, RQ_PARSED_MAX);
    if (o->parsed == NULL) {
        free_owner(o);
        return ADM_ENOMEM;
    }
    if (cfg->api) {
        o->reserver = adm_quota_reserver_create(check_request, &o->st);
        o->live = adm_list_cache_create("resourcequotas", ADM_LIST_CACHE_MAX, ADM_LIST_CACHE_TTL_MS);
        if (o->reserver == NULL || o->live == NULL) {
            free_owner(o);
            return ADM_ENOMEM;
        }
        adm_quota_reserver_set_source(o->reserver, live_quotas);
    }
    if (cfg->config == NULL) {
        *state = o;
        return 0;
    }
    o->arena = adm_arena_create(1024);
    {
        size_t len;
        char *text = yyjson_val_write(cfg->config, 0, &len);

        o->st.doc = text == NULL ? NULL : yyjson_read(text, len, 0);
        free(text);
    }
    if (o->arena == NULL || o->st.doc == NULL) {
        free_owner(o);
        return ADM_ENOMEM;
    }
    problem = read_config(o->arena, yyjson_doc_get_root(o->st.doc), &o->st);
    if (problem != NULL) {
        snprintf(err, err_len, "%s: %s", cfg->source, problem);
        free_owner(o);
        return ADM_EINVAL;
    }
    *state = o;
    return 0;
}

/* ---- the check ---- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* "a,b,c" from names sorted with duplicates dropped (sets.String.List). */
static const char *sorted_join(adm_arena_t *a, const char **names, size_t n, const char *sep)
{
    const char *out = "";

    qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n && out != NULL; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0) {
            continue;
        }
        out = i == 0 ? names[i] : adm_arena_printf(a, "%s%s%s", out, sep, names[i]);
    }
    return out;
}

/*
 * Constraints of the pod evaluator: a quota on cpu or memory needs every container to state them
 * (kube's backward-compatibility rule); wanted has bit k when the quota tracks POD_VALIDATION[k]'s
 * name. Returns "" when satisfied, the error text, or NULL (memory). A container's usage
 * (podComputeUsageHelper) has cpu and requests.cpu when its requests have cpu, limits.cpu when its
 * limits do, and so for memory: those are what is looked at, in the lists the pod's totals and
 * LimitRanger read too.
 */
static const char *pod_constraints(adm_arena_t *a, yyjson_val *pod, unsigned wanted)
{
    yyjson_val *spec = adm_json_get(pod, "spec");
    yyjson_val *lists[2] = {adm_json_get(spec, "containers"), adm_json_get(spec, "initContainers")};
    size_t ncont = yyjson_arr_size(lists[0]) + yyjson_arr_size(lists[1]);
    const char **names, **cnames;
    unsigned *has; /* per container: bit 2 * list + (0 cpu, 1 memory) when that list states it */
    const char *text = NULL, *bad;
    size_t nc = 0;

    if (wanted == 0) {
        return "";
    }
    names = adm_arena_alloc(a, (ncont + 1) * sizeof(*names));
    cnames = adm_arena_alloc(a, (ncont + 1) * sizeof(*cnames));
    has = adm_arena_alloc(a, (ncont + 1) * sizeof(*has));
    if (names == NULL || cnames == NULL || has == NULL) {
        return NULL;
    }
    /* each container once, in kube's order (containers, then init containers) */
    for (size_t l = 0; l < 2; l++) {
        yyjson_arr_iter it;
        yyjson_val *c;

        yyjson_arr_iter_init(lists[l], &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            yyjson_val *res = adm_json_get(c, "resources");
            const adm_rlist_t *have[2];
            int err;

            if (!yyjson_is_obj(c)) {
                continue; /* not a container: kube-apiserver would not have decoded the pod */
            }
            err = adm_rlist_read_kept(a, adm_json_get(res, "requests"), &have[0], &bad);
            if (err == 0) {
                err = adm_rlist_read_kept(a, adm_json_get(res, "limits"), &have[1], &bad);
            }
            if (err == ADM_EINVAL) {
                return ""; /* a malformed quantity: the pod's own decoding rejects it */
            }
            if (err != 0) {
                return NULL;
            }
            /* read lists hold the interned names: cpu and memory are found by their pointers */
            has[nc] = 0;
            for (size_t w = 0; w < 2; w++) {
                for (size_t i = 0; i < have[w]->n; i++) {
                    has[nc] |= have[w]->names[i] == adm_res(ADM_RES_CPU)      ? 1u << (2 * w)
                               : have[w]->names[i] == adm_res(ADM_RES_MEMORY) ? 1u << (2 * w + 1)
                                                                              : 0;
                }
            }
            cnames[nc++] = adm_json_str(c, "name");
        }
    }
    for (size_t k = 0; k < POD_NVALIDATION; k++) {
        unsigned need = 1u << (2 * POD_VALIDATION[k].list + (POD_VALIDATION[k].resource == ADM_RES_MEMORY));
        size_t n = 0;

        if ((wanted & 1u << k) == 0) {
            continue;
        }
        for (size_t i = 0; i < nc; i++) {
            if ((has[i] & need) == 0) {
                names[n++] = cnames[i];
            }
        }
        if (n > 0) {
            const char *part = adm_arena_printf(a, "%s for: %s", adm_res(POD_VALIDATION[k].name),
                                                sorted_join(a, names, n, ","));

            text = text == NULL ? part : adm_arena_printf(a, "%s; %s", text, part);
        }
    }
    return text == NULL ? "" : adm_arena_printf(a, "must specify %s", text);
}

/* prettyPrint: "name=value" sorted by name, comma separated, for names in keys. */
static const char *pretty(adm_arena_t *a, const adm_rlist_t *l, const char **keys, size_t nkeys)
{
    const char *out = "";
    bool first = true;

    qsort(keys, nkeys, sizeof(*keys), cmp_str);
    for (size_t i = 0; i < nkeys && out != NULL; i++) {
        const adm_quantity_t *q = adm_rlist_find(l, keys[i]);
        char buf[ADM_QTY_STR_MAX];

        if (q == NULL) {
            continue;
        }
        adm_quantity_format(q, buf, sizeof(buf));
        out = adm_arena_printf(a, "%s%s%s=%s", out, first ? "" : ",", keys[i], buf);
        first = false;
    }
    return out;
}

/* Which evaluator handles the request; false when none does (kube's Handles). */
static bool pick_evaluator(adm_attrs_t *attrs, ev_t *ev)
{
    const adm_review_request_t *req = attrs->req;
    const char *group = req->resource.group, *resource = req->resource.resource;
    bool core = req->kind.group[0] == '\0';
    bool create = req->operation == ADM_OP_CREATE;

    memset(ev, 0, sizeof(*ev));
    if (req->sub_resource[0] != '\0' && strcmp(req->sub_resource, "resize") != 0) {
        return false; /* kube's plugin ignores subresources but a pod's resize */
    }
    if (core && strcmp(req->kind.kind, "Pod") == 0 && strcmp(resource, "pods") == 0) {
        ev->kind = EV_POD;
        return create || (req->operation == ADM_OP_UPDATE && strcmp(req->sub_resource, "resize") == 0);
    }
    if (req->sub_resource[0] != '\0') {
        return false;
    }
    if (core && strcmp(req->kind.kind, "PersistentVolumeClaim") == 0) {
        ev->kind = EV_PVC;
        return create || req->operation == ADM_OP_UPDATE;
    }
    if (core && strcmp(req->kind.kind, "Service") == 0) {
        ev->kind = EV_SERVICE;
        return create || req->operation == ADM_OP_UPDATE;
    }
    ev->kind = EV_COUNT;
    ev->count_name = group[0] == '\0' ? adm_arena_printf(attrs->arena, "count/%s", resource)
                                      : adm_arena_printf(attrs->arena, "count/%s.%s", resource, group);
    if (group[0] == '\0' &&
        (strcmp(resource, "configmaps") == 0 || strcmp(resource, "secrets") == 0 ||
         strcmp(resource, "replicationcontrollers") == 0 || strcmp(resource, "resourcequotas") == 0)) {
        ev->legacy_name = resource;
    }
    return create && ev->count_name != NULL;
}

/* limitedByDefault: the consumed resources a covering quota must track. */
static size_t limited_names(const rq_state_t *cfg, const adm_attrs_t *attrs, const adm_rlist_t *usage,
                            const char **out)
{
    size_t n = 0;

    for (size_t i = 0; cfg != NULL && i < cfg->nlimited; i++) {
        const limited_t *l = &cfg->limited[i];

        if (strcmp(l->group, attrs->req->resource.group) != 0 ||
            strcmp(l->resource, attrs->req->resource.resource) != 0) {
            continue;
        }
        for (size_t k = 0; k < usage->n; k++) {
            bool hit = false;

            for (size_t c = 0; !hit && adm_quantity_sign(&usage->qs[k]) > 0 && c < l->ncontains; c++) {
                hit = strstr(usage->names[k], l->contains[c]) != NULL;
            }
            for (size_t j = 0; hit && j < n; j++) {
                hit = out[j] != usage->names[k]; /* once each: out holds at most usage->n names */
            }
            if (hit) {
                out[n++] = usage->names[k];
            }
        }
    }
    return n;
}

/* Go's %v of a ScopedResourceSelectorRequirement: {PriorityClass In [a b]}. */
static const char *scope_text(adm_arena_t *a, const scope_req_t *r)
{
    const char *values = "";
    yyjson_arr_iter it;
    yyjson_val *v;
    bool first = true;

    yyjson_arr_iter_init(r->values, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL && values != NULL; v = yyjson_arr_iter_next(&it)) {
        values = adm_arena_printf(a, "%s%s%s", values, first ? "" : " ",
                                  yyjson_is_str(v) ? yyjson_get_str(v) : "");
        first = false;
    }
    return adm_arena_printf(a, "{%s %s [%s]}", r->name, r->op, values);
}

/*
 * The limited scopes the object matches that no quota of the namespace covers (a quota covers a
 * scope when one of its own scopes of that name matches the object), as Go prints the list; ""
 * when all are covered.
 */
static const char *uncovered_scopes(adm_arena_t *a, const rq_state_t *cfg, const ev_t *ev, yyjson_val *obj,
                                    const adm_quota_t *quotas, size_t nquotas)
{
    const char *text = NULL;

    for (size_t i = 0; cfg != NULL && i < cfg->nlimited; i++) {
        for (size_t k = 0; k < cfg->limited[i].nscopes; k++) {
            const scope_req_t *r = &cfg->limited[i].scopes[k];
            bool covered = false;

            if (!scope_matches(ev, obj, r->name, r->op, r->values)) {
                continue;
            }
            for (size_t q = 0; q < nquotas && !covered; q++) {
                yyjson_arr_iter it;
                yyjson_val *sc;

                yyjson_arr_iter_init(adm_json_path(quotas[q].obj, "spec", "scopes", NULL), &it);
                for (sc = yyjson_arr_iter_next(&it); sc != NULL && !covered; sc = yyjson_arr_iter_next(&it)) {
                    covered = yyjson_is_str(sc) && strcmp(yyjson_get_str(sc), r->name) == 0 &&
                              scope_matches(ev, obj, r->name, "Exists", NULL);
                }
                yyjson_arr_iter_init(
                    adm_json_path(quotas[q].obj, "spec", "scopeSelector", "matchExpressions", NULL), &it);
                for (sc = yyjson_arr_iter_next(&it); sc != NULL && !covered; sc = yyjson_arr_iter_next(&it)) {
                    const char *name = adm_json_str(sc, "scopeName");

                    covered = strcmp(name, r->name) == 0 &&
                              scope_matches(ev, obj, name, adm_json_str(sc, "operator"),
                                            adm_json_get(sc, "values"));
                }
            }
            if (!covered) {
                const char *one = scope_text(a, r);

                text = text == NULL ? one : adm_arena_printf(a, "%s %s", text, one);
            }
        }
    }
    return text == NULL ? "" : adm_arena_printf(a, "[%s]", text);
}

static const adm_quantity_t ZERO; /* Quantity{}: 0 */

static bool all_zero(const adm_rlist_t *l)
{
    for (size_t k = 0; k < l->n; k++) {
        if (!adm_quantity_is_zero(&l->qs[k])) {
            return false;
        }
    }
    return true;
}

/*
 * quota.Add(used, requested) into the quota's status.used, in a (the running quotas outlive the
 * request: a name new to the list is copied, and no quantity keeps the request's text).
 */
static int charge(adm_arena_t *a, adm_quota_t *q, const adm_rlist_t *requested)
{
    for (size_t k = 0; k < requested->n; k++) {
        adm_quantity_t *was = adm_rlist_find(&q->used, requested->names[k]);
        adm_quantity_t v = requested->qs[k];
        const char *name;
        int err;

        if (was != NULL) {
            err = adm_quantity_add(was, &v);
            if (err != 0) {
                return err;
            }
            continue;
        }
        v.verbatim = NULL;
        v.verbatim_len = 0;
        name = adm_arena_strndup(a, requested->names[k], strlen(requested->names[k]));
        if (name == NULL || adm_rlist_append(a, &q->used, name, &v) != 0) {
            return ADM_ENOMEM;
        }
    }
    q->changed = q->changed || requested->n > 0;
    return 0;
}

/* The names of usage's negative entries, sorted, or "" (NULL: out of memory). */
static const char *negative_names(adm_arena_t *a, const adm_rlist_t *usage)
{
    const char **neg;
    size_t nneg = 0;

    for (size_t k = 0; k < usage->n; k++) {
        nneg += adm_quantity_sign(&usage->qs[k]) < 0;
    }
    if (nneg == 0) {
        return "";
    }
    neg = adm_arena_alloc(a, nneg * sizeof(*neg));
    if (neg == NULL) {
        return NULL;
    }
    nneg = 0;
    for (size_t k = 0; k < usage->n; k++) {
        if (adm_quantity_sign(&usage->qs[k]) < 0) {
            neg[nneg++] = usage->names[k];
        }
    }
    return sorted_join(a, neg, nneg, ",");
}

/* What a check holds for each quota it charges (all empty for the others). */
typedef struct charge_s {
    const view_t *view;    /* what the evaluator tracks of the quota */
    const usage_t *delta;  /* what the request adds to it */
    adm_rlist_t requested; /* delta masked by the tracked names, zeros dropped (only to charge) */
} charge_t;

/*
 * The entries of requested (quota.Mask(quota.RemoveZeros(delta), hard names)) the quota cannot
 * take: their names into keys, their requested values into *over (sized when the first one
 * comes), or ADM_ENOMEM; when charge_them, c->requested too (every name of a usage is one its
 * evaluator tracks, so the tracked names of status.hard are all that can match).
 */
static int exceeded_of(adm_arena_t *a, const adm_quota_t *q, charge_t *c, bool charge_them,
                       const char ***keys, adm_rlist_t *over)
{
    const view_t *v = c->view;

    if (charge_them) {
        c->requested.names = adm_arena_alloc(a, (v->n + 1) * sizeof(*c->requested.names));
        c->requested.qs = adm_arena_alloc(a, (v->n + 1) * sizeof(*c->requested.qs));
        if (c->requested.names == NULL || c->requested.qs == NULL) {
            return ADM_ENOMEM;
        }
        c->requested.cap = v->n + 1;
    }
    memset(over, 0, sizeof(*over));
    for (size_t k = 0; k < v->n; k++) {
        const tracked_t *t = &v->t[k];
        const adm_quantity_t *d = usage_of(c->delta, t);
        adm_quantity_t now;

        if (d == NULL || adm_quantity_is_zero(d)) {
            continue;
        }
        if (charge_them) {
            put(&c->requested, t->name, d);
        }
        now = t->used >= 0 ? q->used.qs[t->used] : ZERO;
        if (adm_quantity_add(&now, d) == 0 && adm_quantity_cmp(&now, t->hard) <= 0) {
            continue;
        }
        if (over->names == NULL) {
            over->names = adm_arena_alloc(a, v->n * sizeof(*over->names));
            over->qs = adm_arena_alloc(a, v->n * sizeof(*over->qs));
            *keys = adm_arena_alloc(a, v->n * sizeof(**keys));
            if (over->names == NULL || over->qs == NULL || *keys == NULL) {
                return ADM_ENOMEM;
            }
            over->cap = v->n;
        }
        (*keys)[over->n] = t->name;
        put(over, t->name, d);
    }
    return 0;
}

/*
 * kube's CheckRequest against quotas[0..n) for the object ev evaluates: the quotas that match the
 * object and track what it uses, their constraints and usage stats, the object's usage (on an
 * update what it adds to each quota the old object matched too, else all of it), the limited
 * resources and scopes of the configuration, then each quota's hard limit; on success, when
 * charge_them, the usage is added to the quotas it charges (else the quotas are only read). cfg
 * may be NULL.
 */
static int check_quotas(const rq_state_t *cfg, adm_attrs_t *attrs, const ev_t *ev, adm_arena_t *qa,
                        adm_quota_t *quotas, size_t n, bool charge_them, adm_status_t *st, bool *charged)
{
    adm_arena_t *a = attrs->arena;
    yyjson_val *obj, *old;
    usage_t usage, prev, sub;
    charge_t *ch;
    const usage_t *delta_none;
    const char *uncovered, *neg;
    const char *limited_text = NULL;
    size_t nmatch = 0;
    bool have_sub = false, any = false;
    int err;

    *charged = false;
    if (n == 0 && (cfg == NULL || cfg->nlimited == 0)) {
        return ADM_OK;
    }
    obj = adm_attrs_object(attrs);
    ch = adm_arena_calloc(a, n + 1, sizeof(*ch));
    if (obj == NULL || ch == NULL) {
        return adm_status_nomem(st);
    }
    for (size_t i = 0; i < n; i++) {
        const rq_prep_t *prep = quotas[i].usable ? quotas[i].prepared : NULL;
        const view_t *v;

        if (!quotas[i].usable || !quota_matches(ev, &quotas[i], prep, obj)) {
            continue;
        }
        if (prep != NULL && ev->kind != EV_COUNT) {
            v = &prep->views[ev->kind];
        } else {
            view_t *own = adm_arena_alloc(a, sizeof(*own));

            if (own == NULL || view_make(a, ev, &quotas[i].hard, &quotas[i].used, own) != 0) {
                return adm_status_nomem(st);
            }
            v = own;
        }
        if (v->n == 0) {
            continue;
        }
        if (ev->kind == EV_POD) {
            const char *why = pod_constraints(a, obj, v->validation);

            if (why == NULL) {
                return adm_status_nomem(st);
            }
            if (*why != '\0') {
                return adm_status_forbidden(st, attrs, "failed quota: %s: %s", quotas[i].name, why);
            }
        }
        if (v->nmissing > 0) {
            const char **missing = adm_arena_alloc(a, v->n * sizeof(*missing));

            if (missing == NULL) {
                return adm_status_nomem(st);
            }
            for (size_t k = 0; k < v->n; k++) {
                missing[k] = v->t[k].name;
            }
            return adm_status_forbidden(st, attrs, "status unknown for quota: %s, resources: %s",
                                        quotas[i].name, sorted_join(a, missing, v->n, ","));
        }
        ch[i].view = v;
        ch[i].delta = &usage; /* interesting: charged the object's usage unless an update says less */
        nmatch++;
    }
    err = ev_usage(a, ev, obj, &usage);
    if (err == ADM_EINVAL) {
        return ADM_OK; /* a malformed quantity: the object's own decoding rejects it */
    }
    if (err != 0) {
        return err == ADM_ENOMEM
                   ? adm_status_nomem(st)
                   : adm_status_forbidden(st, attrs, "resource totals exceed what admitd can add up");
    }
    /* hasNoCoveringQuota, from the object's whole usage: a quota charged covers what it tracks */
    if (cfg != NULL && cfg->nlimited > 0) {
        const char **keys = adm_arena_alloc(a, (usage.l.n + 1) * sizeof(*keys));
        size_t nlimited, nuncovered = 0;

        if (keys == NULL) {
            return adm_status_nomem(st);
        }
        nlimited = limited_names(cfg, attrs, &usage.l, keys);
        for (size_t k = 0; k < nlimited; k++) {
            bool covered = false;

            for (size_t i = 0; i < n && !covered; i++) {
                covered = ch[i].view != NULL && view_has(ch[i].view, keys[k]);
            }
            if (!covered) {
                keys[nuncovered++] = keys[k];
            }
        }
        if (nuncovered > 0) {
            limited_text = sorted_join(a, keys, nuncovered, ",");
            if (limited_text == NULL) {
                return adm_status_nomem(st);
            }
        }
    }
    neg = negative_names(a, &usage.l);
    if (neg == NULL) {
        return adm_status_nomem(st);
    }
    if (*neg != '\0') {
        return adm_status_forbidden(st, attrs, "quota usage is negative for resource(s): %s", neg);
    }
    old = attrs->req->old_object;
    if (attrs->req->operation == ADM_OP_UPDATE && old == NULL) {
        return adm_status_forbidden(
            st, attrs, "unable to get previous usage since prior version of object was not found");
    }
    /* an old object without a resourceVersion is an update that creates: charged in full */
    if (attrs->req->operation == ADM_OP_UPDATE &&
        *adm_json_str(adm_json_get(old, "metadata"), "resourceVersion") != '\0' &&
        ev_usage(a, ev, old, &prev) == 0) {
        /* SubtractWithNonNegativeResult: what the update adds, never less than nothing */
        memset(&sub, 0, sizeof(sub));
        for (size_t k = 0; k < usage.l.n; k++) {
            const adm_quantity_t *was = adm_rlist_find(&prev.l, usage.l.names[k]);
            adm_quantity_t q = usage.l.qs[k];

            if (was != NULL && adm_quantity_sub(&q, was) != 0) {
                return adm_status_forbidden(st, attrs, "resource totals exceed what admitd can add up");
            }
            if (adm_rlist_append(a, &sub.l, usage.l.names[k], adm_quantity_sign(&q) > 0 ? &q : &ZERO) != 0) {
                return adm_status_nomem(st);
            }
        }
        memcpy(sub.at, usage.at, sizeof(sub.at)); /* the same names at the same places */
        have_sub = true;
        /* only the quotas the old object was charged to: the others get all of it */
        for (size_t i = 0; i < n; i++) {
            if (ch[i].delta != NULL && quota_matches(ev, &quotas[i], quotas[i].prepared, old)) {
                ch[i].delta = &sub;
            }
        }
    }
    delta_none = have_sub ? &sub : &usage;
    for (size_t i = 0; i < n; i++) {
        any = any || (ch[i].delta != NULL && !all_zero(&ch[i].delta->l));
    }
    if (nmatch > 0 ? !any : all_zero(&delta_none->l)) {
        return ADM_OK; /* no remaining non-zero usage */
    }
    if (limited_text != NULL) {
        return adm_status_forbidden(st, attrs, "insufficient quota to consume: %s", limited_text);
    }
    uncovered = uncovered_scopes(a, cfg, ev, obj, quotas, n);
    if (uncovered == NULL) {
        return adm_status_nomem(st);
    }
    if (*uncovered != '\0') {
        /* a plain error in kube (not a Forbidden): the API answers 500 with the bare message */
        return adm_status_plain(st, a, "insufficient quota to match these scopes: %s", uncovered);
    }
    if (nmatch == 0) {
        return ADM_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const char **keys = NULL;
        adm_rlist_t over;

        if (ch[i].delta == NULL) {
            continue;
        }
        if (exceeded_of(a, &quotas[i], &ch[i], charge_them, &keys, &over) != 0) {
            return adm_status_nomem(st);
        }
        if (over.n > 0) {
            const char *want = pretty(a, &over, keys, over.n);
            const char *was = pretty(a, &quotas[i].used, keys, over.n);
            const char *limited = pretty(a, &quotas[i].hard, keys, over.n);

            if (want == NULL || was == NULL || limited == NULL) {
                return adm_status_nomem(st);
            }
            return adm_status_forbidden(st, attrs, "exceeded quota: %s, requested: %s, used: %s, limited: %s",
                                        quotas[i].name, want, was, limited);
        }
    }
    /* the request fits every quota: its usage goes into each one it charges */
    for (size_t i = 0; charge_them && i < n; i++) {
        if (ch[i].delta != NULL && ch[i].requested.n > 0) {
            err = charge(qa, &quotas[i], &ch[i].requested);
            if (err != 0) {
                return err == ADM_ENOMEM
                           ? adm_status_nomem(st)
                           : adm_status_forbidden(st, attrs, "resource totals exceed what admitd can add up");
            }
            *charged = true;
        }
    }
    return ADM_OK;
}

/*
 * kube's CheckRequest as a batch runs it (quota_reserve.h's adm_quota_check_fn): the usage is
 * charged to the quotas the batch holds. arg is the configuration (rq_state_t, may be NULL).
 */
static int check_request(void *arg, adm_attrs_t *attrs, adm_arena_t *qa, adm_quota_t *quotas, size_t n,
                         adm_status_t *st, bool *charged)
{
    ev_t ev;

    *charged = false;
    if (!pick_evaluator(attrs, &ev)) {
        return ADM_OK;
    }
    return check_quotas(arg, attrs, &ev, qa, quotas, n, true, st, charged);
}

/*
 * The check of a request (of the object ev evaluates) against its n quotas, items (the cluster
 * state's or the live LIST's), or its wait in the batch.
 */
static int evaluate(rq_owner_t *o, adm_attrs_t *attrs, const ev_t *ev, adm_status_t *st, adm_async_t *async,
                    yyjson_val *const *items, size_t n)
{
    const rq_state_t *cfg = o != NULL ? &o->st : NULL;
    const adm_review_request_t *req = attrs->req;
    adm_quota_t *quotas;
    bool charged;

    if (n == 0 && (cfg == NULL || cfg->nlimited == 0)) {
        return ADM_OK;
    }
    if (async != NULL && o != NULL && o->reserver != NULL && !req->dry_run && adm_live_call_possible(attrs) &&
        adm_live_namespace_name(req->namespace_)) {
        return adm_quota_reserver_submit(o->reserver, attrs, async);
    }
    if (o != NULL && o->reserver == NULL
            ? quota_list_parsed(o->parsed, attrs, items, n, &quotas) != 0
            : adm_quota_list(o != NULL ? o->reserver : NULL, attrs, attrs->arena, &quotas, &n) != 0) {
        return adm_status_nomem(st);
    }
    /* nothing is written for this request: the check only reads the quotas (shared, from the cache) */
    return check_quotas(cfg, attrs, ev, attrs->arena, quotas, n, false, st, &charged);
}

static void remember_live(adm_attrs_t *attrs, yyjson_val *const *items, size_t n)
{
    void **slot = adm_plugin_slot(attrs);
    rq_live_t *l = slot != NULL ? adm_arena_calloc(attrs->arena, 1, sizeof(*l)) : NULL;

    if (l != NULL) {
        l->items = items;
        l->n = n;
        *slot = l;
    }
}

/* The live LIST answered: the request is evaluated against its quotas, or refused. */
static void on_live_quotas(adm_attrs_t *attrs, adm_async_t *async, int rc, yyjson_val *const *items, size_t n,
                           const adm_call_result_t *res, yyjson_val *body, const char *err, void *arg)
{
    adm_status_t st;
    ev_t ev;

    memset(&st, 0, sizeof(st));
    if (rc == ADM_OK) {
        remember_live(attrs, items, n);
        (void)pick_evaluator(attrs, &ev); /* validate_async asked: it handles the request */
        rc = evaluate(arg, attrs, &ev, &st, async, items, n);
        if (rc == ADM_AGAIN) {
            return; /* waiting in its namespace's batch now */
        }
    } else if (rc == ADM_EIO) {
        rc = adm_live_call_refuse(attrs, &st, res, body, err); /* unwrapped, as kube */
    } else {
        rc = adm_status_nomem(&st);
    }
    adm_async_done(async, rc, &st);
}

/*
 * The phase: requests the plugin handles in a namespace with quotas (or limitedResources) are
 * checked; with an API connection and not on dry run they then wait in their namespace's batch
 * for the usage to be written (quota_reserve.h). Otherwise the check against the cluster state
 * decides alone and nothing is written (README: what differs). A namespace the cache has no quota
 * in is listed live first, with an API connection.
 */
static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    rq_owner_t *o = state;
    const adm_review_request_t *req = attrs->req;
    yyjson_val *const *items;
    size_t n;
    ev_t ev;
    int rc;

    if (req->namespace_[0] == '\0' || !pick_evaluator(attrs, &ev)) {
        return ADM_OK;
    }
    items = adm_cluster_state_list(adm_plugin_cluster(attrs), "", "ResourceQuota", req->namespace_, &n);
    if (n == 0 && o != NULL && o->live != NULL && async != NULL && adm_live_call_possible(attrs) &&
        adm_live_namespace_name(req->namespace_)) {
        rc = adm_list_cache_get(o->live, attrs, async, &items, &n, on_live_quotas, o);
        if (rc != ADM_OK) {
            return rc == ADM_AGAIN ? rc : adm_status_nomem(st);
        }
        remember_live(attrs, items, n);
    }
    return evaluate(o, attrs, &ev, st, async, items, n);
}

/* Without a chain to resume (unit tests): the check alone. */
static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return validate_async(state, attrs, st, NULL);
}

static const char *const reads[] = {"/ResourceQuota", NULL};

const adm_plugin_t adm_plugin_resource_quota = {
    .name = "ResourceQuota",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_owner,
    .validate = validate,
    .validate_async = validate_async,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EvaluatePodsInNamespace fed page by page (include/adm/podsecurity/namespace_pods.h).
 *
 * kube's order (prioritizePods) puts the pods without a controller and the first pod of each
 * controller first, in list order, then the other pods of those controllers, in list order; it
 * checks the first 3000. Taken page by page, the first kind only grows at its end while the second
 * comes after all of it, so the pods kube checks are always the primaries seen so far followed by
 * the duplicates that still fit: a new primary pushes the last duplicate out. A page is classified
 * whole before any pod of it is evaluated, so a pod pushed out by a later pod of its own page is
 * never evaluated; and with one page (the cluster state, a small namespace) the evaluation runs in
 * kube's order exactly, so its time limit stops where kube's stops.
 */
#include "adm/podsecurity/namespace_pods.h"

#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/siphash.h"
#include "adm/cluster/cluster_state.h"
#include "adm/podsecurity/evaluate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_s {
    size_t at;           /* its index in the page being taken */
    const char *name;    /* set when it failed (the tally's arena) */
    const char *reasons; /* ForbiddenReason when it failed, NULL when it passed or is not evaluated */
    bool evaluated;
} entry_t;

typedef struct list_s {
    entry_t *v;
    size_t n, cap;
} list_t;

struct adm_psa_pods_s {
    adm_arena_t *a;
    const adm_psa_config_t *cfg;
    adm_psa_lv_t enforce;
    uint64_t (*now_ns)(void *);
    void *clock_arg;
    uint64_t deadline_ns;
    list_t primary, dup; /* primary.n + dup.n <= ADM_PSA_NAMESPACE_MAX_PODS */
    /* the controller UIDs seen (open addressing; kept while primaries may still come) */
    const char **seen;
    size_t nseen, seen_cap;
    uint64_t seen_key[2];
    size_t total; /* pods not exempt by their runtime class */
};

adm_psa_pods_t *adm_psa_pods_start(adm_arena_t *a, const adm_psa_config_t *cfg, const adm_psa_lv_t *enforce,
                                   uint64_t (*now_ns)(void *), void *clock_arg, uint64_t deadline_ns)
{
    adm_psa_pods_t *t = adm_arena_calloc(a, 1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    t->a = a;
    t->cfg = cfg;
    t->enforce = *enforce;
    t->now_ns = now_ns;
    t->clock_arg = clock_arg;
    t->deadline_ns = deadline_ns;
    /* controller UIDs are chosen by whoever creates a pod: the table's key is not a constant */
    t->seen_key[0] = now_ns(clock_arg);
    t->seen_key[1] = (uint64_t)(uintptr_t)t;
    return t;
}

/* metav1.GetControllerOf: the UID of the ownerReference with controller=true, or NULL. */
static const char *controller_uid(yyjson_val *pod)
{
    yyjson_val *refs = adm_json_path(pod, "metadata", "ownerReferences", NULL);

    for (size_t i = 0, n = yyjson_arr_size(refs); i < n; i++) {
        yyjson_val *r = yyjson_arr_get(refs, i);

        if (yyjson_is_true(adm_json_get(r, "controller"))) {
            return adm_json_str(r, "uid");
        }
    }
    return NULL;
}

static size_t seen_slot(const adm_psa_pods_t *t, const char **table, size_t cap, const char *uid)
{
    size_t i = (size_t)adm_siphash24(t->seen_key, uid, strlen(uid)) & (cap - 1);

    while (table[i] != NULL && strcmp(table[i], uid) != 0) {
        i = (i + 1) & (cap - 1);
    }
    return i;
}

/* Records uid: 1 when it was new, 0 when already seen, or ADM_ENOMEM. */
static int seen_add(adm_psa_pods_t *t, const char *uid)
{
    size_t i;

    if (2 * (t->nseen + 1) > t->seen_cap) {
        size_t cap = t->seen_cap != 0 ? 2 * t->seen_cap : 64;
        const char **table = adm_arena_calloc(t->a, cap, sizeof(*table));

        if (table == NULL) {
            return ADM_ENOMEM;
        }
        for (size_t k = 0; k < t->seen_cap; k++) {
            if (t->seen[k] != NULL) {
                table[seen_slot(t, table, cap, t->seen[k])] = t->seen[k];
            }
        }
        t->seen = table;
        t->seen_cap = cap;
    }
    i = seen_slot(t, t->seen, t->seen_cap, uid);
    if (t->seen[i] != NULL) {
        return 0;
    }
    t->seen[i] = adm_arena_strndup(t->a, uid, strlen(uid));
    if (t->seen[i] == NULL) {
        return ADM_ENOMEM;
    }
    t->nseen++;
    return 1;
}

static int push(adm_arena_t *a, list_t *l, size_t at)
{
    if (l->n == l->cap) {
        size_t cap = l->cap != 0 ? 2 * l->cap : 16;
        entry_t *v = adm_arena_realloc(a, l->v, l->cap * sizeof(*v), cap * sizeof(*v));

        if (v == NULL) {
            return ADM_ENOMEM;
        }
        l->v = v;
        l->cap = cap;
    }
    memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
    l->v[l->n++].at = at;
    return 0;
}

/* The page's place in kube's order: the primaries grow, the duplicates fill what is left. */
static int classify(adm_psa_pods_t *t, yyjson_val *const *pods, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *uid;
        int rc;

        if (adm_psa_exempt_runtime_class(t->cfg,
                                         adm_json_str(adm_json_get(pods[i], "spec"), "runtimeClassName"))) {
            continue;
        }
        t->total++;
        if (t->primary.n >= ADM_PSA_NAMESPACE_MAX_PODS) {
            continue; /* kube's first 3000 are known: the rest only count */
        }
        uid = controller_uid(pods[i]);
        rc = uid != NULL ? seen_add(t, uid) : 1;
        if (rc < 0) {
            return rc;
        }
        if (rc == 1) {
            rc = push(t->a, &t->primary, i);
            if (rc == 0 && t->primary.n + t->dup.n > ADM_PSA_NAMESPACE_MAX_PODS) {
                t->dup.n--; /* the last duplicate no longer fits */
            }
        } else if (t->primary.n + t->dup.n < ADM_PSA_NAMESPACE_MAX_PODS) {
            rc = push(t->a, &t->dup, i);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int evaluate(adm_psa_pods_t *t, adm_arena_t *scratch, entry_t *e, yyjson_val *pod)
{
    yyjson_val *meta = adm_json_get(pod, "metadata");
    adm_psa_result_t r;

    adm_psa_evaluate(scratch, &t->enforce, meta, adm_json_get(pod, "spec"), &r);
    if (r.nomem) {
        return ADM_ENOMEM;
    }
    e->evaluated = true;
    if (r.nfailed > 0) {
        const char *name = adm_json_str(meta, "name");

        e->reasons = adm_psa_result_reason(t->a, &r);
        e->name = scratch != t->a ? adm_arena_strndup(t->a, name, strlen(name)) : name;
        if (e->reasons == NULL || e->name == NULL) {
            return ADM_ENOMEM;
        }
    }
    return 0;
}

int adm_psa_pods_add(adm_psa_pods_t *t, adm_arena_t *scratch, yyjson_val *const *pods, size_t n, bool more,
                     int64_t remaining)
{
    list_t *lists[2] = {&t->primary, &t->dup};
    int rc = classify(t, pods, n);

    if (rc != 0) {
        return rc;
    }
    if (more && remaining >= 0 && t->primary.n >= ADM_PSA_NAMESPACE_MAX_PODS &&
        t->cfg->nruntime_classes == 0) {
        t->total += (size_t)remaining; /* none of them can be exempt, nor checked */
        more = false;
    }
    /* what this page brought, in kube's order; earlier pages' pods were all evaluated */
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lists[k]->n; i++) {
            entry_t *e = &lists[k]->v[i];

            if (e->evaluated) {
                continue;
            }
            rc = evaluate(t, scratch, e, pods[e->at]);
            if (rc != 0) {
                return rc;
            }
            if (t->now_ns(t->clock_arg) >= t->deadline_ns) {
                return more ? -ETIMEDOUT : ADM_PSA_PODS_DONE;
            }
        }
    }
    return more ? ADM_PSA_PODS_MORE : ADM_PSA_PODS_DONE;
}

typedef struct group_s {
    const char *reasons; /* ForbiddenReason: the key */
    const char *pod;     /* the smallest pod name with it */
    size_t count;
} group_t;

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int adm_psa_pods_warn(adm_psa_pods_t *t, adm_attrs_t *attrs, const char *ns)
{
    adm_arena_t *a = attrs->arena;
    const list_t *lists[2] = {&t->primary, &t->dup};
    size_t max = t->primary.n + t->dup.n;
    group_t *groups = adm_arena_calloc(a, max + 1, sizeof(*groups));
    const char **lines = adm_arena_calloc(a, max + 1, sizeof(*lines));
    size_t checked = 0, ngroups = 0;
    int added = 0;

    if (groups == NULL || lines == NULL) {
        return ADM_ENOMEM;
    }
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lists[k]->n; i++) {
            const entry_t *e = &lists[k]->v[i];
            size_t g;

            checked += e->evaluated;
            if (e->reasons == NULL) {
                continue;
            }
            for (g = 0; g < ngroups && strcmp(groups[g].reasons, e->reasons) != 0; g++) {
            }
            if (g == ngroups) {
                groups[ngroups].reasons = e->reasons;
                groups[ngroups].pod = e->name;
                ngroups++;
            } else if (strcmp(e->name, groups[g].pod) < 0) {
                groups[g].pod = e->name;
            }
            groups[g].count++;
        }
    }
    if (checked < t->total) {
        const char *w =
            adm_arena_printf(a,
                             "new PodSecurity enforce level only checked against the first %zu of %zu "
                             "existing pods",
                             checked, t->total);

        if (w == NULL) {
            return ADM_ENOMEM;
        }
        adm_attrs_add_warning(attrs, w);
        added++;
    }
    if (ngroups > 0) {
        const char *lv = adm_psa_lv_string(a, &t->enforce);
        const char *qns = adm_go_quote(a, ns);
        const char *qlv = lv != NULL ? adm_go_quote(a, lv) : NULL;
        const char *w =
            qns != NULL && qlv != NULL
                ? adm_arena_printf(a,
                                   "existing pods in namespace %s violate the new PodSecurity enforce "
                                   "level %s",
                                   qns, qlv)
                : NULL;

        if (w == NULL) {
            return ADM_ENOMEM;
        }
        adm_attrs_add_warning(attrs, w);
        added++;
    }
    for (size_t g = 0; g < ngroups; g++) {
        if (groups[g].count == 1) {
            lines[g] = adm_arena_printf(a, "%s: %s", groups[g].pod, groups[g].reasons);
        } else if (groups[g].count == 2) {
            lines[g] = adm_arena_printf(a, "%s (and 1 other pod): %s", groups[g].pod, groups[g].reasons);
        } else {
            lines[g] = adm_arena_printf(a, "%s (and %zu other pods): %s", groups[g].pod, groups[g].count - 1,
                                        groups[g].reasons);
        }
        if (lines[g] == NULL) {
            return ADM_ENOMEM;
        }
    }
    qsort(lines, ngroups, sizeof(*lines), cmp_str);
    for (size_t g = 0; g < ngroups; g++) {
        adm_attrs_add_warning(attrs, lines[g]);
        added++;
    }
    return added;
}

int adm_psa_check_namespace_pods(const adm_psa_config_t *cfg, adm_attrs_t *attrs, const char *ns,
                                 const adm_psa_lv_t *enforce, uint64_t (*now_ns)(void *), void *clock_arg,
                                 uint64_t deadline_ns)
{
    size_t npods = 0;
    yyjson_val *const *pods = adm_cluster_state_list(adm_plugin_cluster(attrs), "", "Pod", ns, &npods);
    adm_psa_pods_t *t = adm_psa_pods_start(attrs->arena, cfg, enforce, now_ns, clock_arg, deadline_ns);
    int rc;

    if (t == NULL) {
        return ADM_ENOMEM;
    }
    rc = adm_psa_pods_add(t, attrs->arena, pods, npods, false, -1);
    return rc < 0 ? rc : adm_psa_pods_warn(t, attrs, ns);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceLists, pod resource totals and the pod's BestEffort QoS class for the plugins that count
 * resources (include/adm/plugins/resources.h).
 */
#include "adm/plugins/resources.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdint.h>
#include <string.h>

const char adm_res_names[ADM_RES_COUNT][ADM_RES_NAME_MAX] = {
    [ADM_RES_CPU] = "cpu",
    [ADM_RES_MEMORY] = "memory",
    [ADM_RES_EPHEMERAL_STORAGE] = "ephemeral-storage",
    [ADM_RES_PODS] = "pods",
    [ADM_RES_COUNT_PODS] = "count/pods",
    [ADM_RES_REQUESTS_CPU] = "requests.cpu",
    [ADM_RES_REQUESTS_MEMORY] = "requests.memory",
    [ADM_RES_REQUESTS_EPHEMERAL_STORAGE] = "requests.ephemeral-storage",
    [ADM_RES_LIMITS_CPU] = "limits.cpu",
    [ADM_RES_LIMITS_MEMORY] = "limits.memory",
    [ADM_RES_LIMITS_EPHEMERAL_STORAGE] = "limits.ephemeral-storage",
    [ADM_RES_STORAGE] = "storage",
    [ADM_RES_REQUESTS_STORAGE] = "requests.storage",
};

static bool interned(const char *name)
{
    return (uintptr_t)name - (uintptr_t)adm_res_names < sizeof(adm_res_names);
}

/* a and b are the same C string (the names compared here are short: no call to strcmp) */
static inline bool same_str(const char *a, const char *b)
{
    while (*a == *b && *a != '\0') {
        a++;
        b++;
    }
    return *a == *b;
}

/* The interned name among ids[0..n) that name spells, else name. */
static inline const char *intern_among(const char *name, const adm_res_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (same_str(adm_res_names[ids[i]], name)) {
            return adm_res_names[ids[i]];
        }
    }
    return name;
}

const char *adm_res_intern(const char *name)
{
    /* the first byte leaves at most four candidates: every list read interns each of its names */
    static const adm_res_t c[] = {ADM_RES_CPU, ADM_RES_COUNT_PODS};
    static const adm_res_t m[] = {ADM_RES_MEMORY};
    static const adm_res_t e[] = {ADM_RES_EPHEMERAL_STORAGE};
    static const adm_res_t p[] = {ADM_RES_PODS};
    static const adm_res_t s[] = {ADM_RES_STORAGE};
    static const adm_res_t r[] = {ADM_RES_REQUESTS_CPU, ADM_RES_REQUESTS_MEMORY,
                                  ADM_RES_REQUESTS_EPHEMERAL_STORAGE, ADM_RES_REQUESTS_STORAGE};
    static const adm_res_t l[] = {ADM_RES_LIMITS_CPU, ADM_RES_LIMITS_MEMORY,
                                  ADM_RES_LIMITS_EPHEMERAL_STORAGE};

    switch (name[0]) {
    case 'c': return intern_among(name, c, sizeof(c) / sizeof(c[0]));
    case 'm': return intern_among(name, m, 1);
    case 'e': return intern_among(name, e, 1);
    case 'p': return intern_among(name, p, 1);
    case 's': return intern_among(name, s, 1);
    case 'r': return intern_among(name, r, sizeof(r) / sizeof(r[0]));
    case 'l': return intern_among(name, l, sizeof(l) / sizeof(l[0]));
    default: return name;
    }
}

adm_quantity_t *adm_rlist_find(const adm_rlist_t *l, const char *name)
{
    bool known = interned(name);

    for (size_t i = 0; i < l->n; i++) {
        const char *have = l->names[i];

        if (have == name) {
            return &l->qs[i];
        }
        if (known && interned(have)) {
            continue; /* two different interned names */
        }
        /* the first byte settles most comparisons ("cpu", "memory", "pods", "requests.cpu" ...) */
        if (have[0] == name[0] && strcmp(have, name) == 0) {
            return &l->qs[i];
        }
    }
    return NULL;
}

int adm_rlist_append(adm_arena_t *a, adm_rlist_t *l, const char *name, const adm_quantity_t *q)
{
    if (l->n == l->cap) {
        /* 8 holds a pod's usage (pods, cpu, memory and their requests./limits. names) without growing */
        size_t ncap = l->cap == 0 ? 8 : l->cap * 2;
        const char **names = adm_arena_realloc(a, l->names, l->cap * sizeof(*names), ncap * sizeof(*names));
        adm_quantity_t *qs = adm_arena_realloc(a, l->qs, l->cap * sizeof(*qs), ncap * sizeof(*qs));

        if (names == NULL || qs == NULL) {
            return ADM_ENOMEM;
        }
        l->names = names;
        l->qs = qs;
        l->cap = ncap;
    }
    l->names[l->n] = name;
    l->qs[l->n] = *q;
    l->n++;
    return 0;
}

int adm_rlist_set(adm_arena_t *a, adm_rlist_t *l, const char *name, const adm_quantity_t *q)
{
    adm_quantity_t *found = adm_rlist_find(l, name);

    if (found != NULL) {
        *found = *q;
        return 0;
    }
    return adm_rlist_append(a, l, name, q);
}

int adm_rlist_add(adm_arena_t *a, adm_rlist_t *into, const adm_rlist_t *from)
{
    for (size_t i = 0; i < from->n; i++) {
        adm_quantity_t *have = adm_rlist_find(into, from->names[i]);

        if (have == NULL) {
            if (adm_rlist_append(a, into, from->names[i], &from->qs[i]) != 0) {
                return ADM_ENOMEM;
            }
        } else if (adm_quantity_add(have, &from->qs[i]) != 0) {
            return ADM_ETOOBIG;
        }
    }
    return 0;
}

int adm_rlist_max(adm_arena_t *a, adm_rlist_t *into, const adm_rlist_t *from)
{
    for (size_t i = 0; i < from->n; i++) {
        adm_quantity_t *have = adm_rlist_find(into, from->names[i]);

        if (have == NULL) {
            if (adm_rlist_append(a, into, from->names[i], &from->qs[i]) != 0) {
                return ADM_ENOMEM;
            }
        } else if (adm_quantity_cmp(&from->qs[i], have) > 0) {
            *have = from->qs[i];
        }
    }
    return 0;
}

int adm_json_read_quantity(adm_arena_t *a, yyjson_val *v, adm_quantity_t *q, const char **problem)
{
    const char *text;

    if (yyjson_is_str(v)) {
        return adm_quantity_parse(yyjson_get_str(v), yyjson_get_len(v), q, problem);
    }
    if (yyjson_is_uint(v)) {
        text = adm_arena_printf(a, "%llu", (unsigned long long)yyjson_get_uint(v));
    } else if (yyjson_is_sint(v)) {
        text = adm_arena_printf(a, "%lld", (long long)yyjson_get_sint(v));
    } else if (yyjson_is_real(v)) {
        text = adm_arena_printf(a, "%.17g", yyjson_get_real(v));
    } else {
        *problem = "quantities must be strings or numbers";
        return ADM_EINVAL;
    }
    if (text == NULL) {
        *problem = "out of memory";
        return ADM_ENOMEM;
    }
    return adm_quantity_parse(text, strlen(text), q, problem);
}

/*
 * adm_res_intern of a JSON key of len bytes: cpu, memory and ephemeral-storage, a container list's
 * usual names, by their length and one comparison of fixed size; anything else as adm_res_intern
 * (the same answer for every string, one with a NUL inside included).
 */
static inline const char *intern_key(const char *name, size_t len)
{
    switch (len) {
    case 3: return memcmp(name, "cpu", 3) == 0 ? adm_res(ADM_RES_CPU) : adm_res_intern(name);
    case 6: return memcmp(name, "memory", 6) == 0 ? adm_res(ADM_RES_MEMORY) : adm_res_intern(name);
    case 17:
        return memcmp(name, "ephemeral-storage", 17) == 0 ? adm_res(ADM_RES_EPHEMERAL_STORAGE)
                                                          : adm_res_intern(name);
    default: return adm_res_intern(name);
    }
}

/*
 * The list is sized once from the object's member count, and a name is looked for among those
 * before it only to catch a key given twice (the later value wins in its first place, as
 * adm_rlist_set keeps it): no growth and no lookup by strcmp per member.
 */
static int rlist_read(adm_arena_t *a, yyjson_val *obj, adm_rlist_t *out, const char **bad, bool fixed)
{
    size_t n = yyjson_obj_size(obj);
    yyjson_obj_iter it;
    yyjson_val *key;

    memset(out, 0, sizeof(*out));
    if (n == 0) {
        return 0;
    }
    if (fixed) {
        /*
         * a list that never grows (adm_rlist_read_kept's): both arrays in one block, the quantities
         * first (their alignment is the arena's); a list that may grow needs two, or growing the
         * first in place would run over the second
         */
        out->qs = adm_arena_alloc(a, n * (sizeof(*out->qs) + sizeof(*out->names)));
        out->names = out->qs == NULL ? NULL : (const char **)(void *)(out->qs + n);
    } else {
        out->names = adm_arena_alloc(a, n * sizeof(*out->names));
        out->qs = adm_arena_alloc(a, n * sizeof(*out->qs));
    }
    if (out->names == NULL || out->qs == NULL) {
        return ADM_ENOMEM;
    }
    out->cap = n;
    yyjson_obj_iter_init(obj, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *name = intern_key(yyjson_get_str(key), yyjson_get_len(key));
        adm_quantity_t q;
        size_t i = 0;
        int err = adm_json_read_quantity(a, yyjson_obj_iter_get_val(key), &q, bad);

        if (err != 0) {
            return err == ADM_ENOMEM ? ADM_ENOMEM : ADM_EINVAL;
        }
        while (i < out->n && out->names[i] != name &&
               (out->names[i][0] != name[0] || strcmp(out->names[i], name) != 0)) {
            i++;
        }
        if (i == out->n) {
            out->names[out->n++] = name;
        }
        out->qs[i] = q;
    }
    return 0;
}

int adm_rlist_read(adm_arena_t *a, yyjson_val *obj, adm_rlist_t *out, const char **bad)
{
    return rlist_read(a, obj, out, bad, false);
}

int adm_rlist_own(adm_arena_t *a, adm_rlist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!interned(l->names[i])) { /* static: kept as it is, interned */
            l->names[i] = adm_arena_strndup(a, l->names[i], strlen(l->names[i]));
            if (l->names[i] == NULL) {
                return ADM_ENOMEM;
            }
        }
        if (l->qs[i].verbatim != NULL) {
            l->qs[i].verbatim = adm_arena_strndup(a, l->qs[i].verbatim, l->qs[i].verbatim_len);
            if (l->qs[i].verbatim == NULL) {
                return ADM_ENOMEM;
            }
        }
    }
    return 0;
}

/*
 * A list being summed (a pod's totals): an adm_rlist_t whose cpu, memory and ephemeral-storage
 * entries are also found by their slot, so that the names nearly every container has cost no scan,
 * and whose first entries live in the sum itself (no allocation while a pod's few names fit).
 * Its entries come from read lists only, whose names are interned: a name spelling one of the
 * slots' is that slot's pointer, and the list keeps the order in which names were first added.
 * A sum points into itself: it is set up in place (sum_init) and never copied.
 */
#define SUM_INLINE 8

typedef struct sum_s {
    adm_rlist_t l;
    size_t at[ADM_RES_SLOTS]; /* 1 + where the slot's name sits in l; 0: not there */
    const char *names[SUM_INLINE];
    adm_quantity_t qs[SUM_INLINE];
} sum_t;

static void sum_init(sum_t *s)
{
    s->l = (adm_rlist_t){s->names, s->qs, 0, SUM_INLINE};
    memset(s->at, 0, sizeof(s->at));
}

static adm_quantity_t *sum_find(const sum_t *s, const char *name)
{
    int k = adm_res_slot(name);

    if (k >= 0) {
        return s->at[k] != 0 ? &s->l.qs[s->at[k] - 1] : NULL;
    }
    return adm_rlist_find(&s->l, name);
}

static int sum_append(adm_arena_t *a, sum_t *s, const char *name, const adm_quantity_t *q)
{
    int k = adm_res_slot(name);

    if (s->l.n == s->l.cap) {
        /* past the inline room: arrays of a, never grown in place (they may still be the sum's own) */
        size_t cap = 2 * s->l.cap;
        const char **names = adm_arena_alloc(a, cap * sizeof(*names));
        adm_quantity_t *qs = adm_arena_alloc(a, cap * sizeof(*qs));

        if (names == NULL || qs == NULL) {
            return ADM_ENOMEM;
        }
        memcpy(names, s->l.names, s->l.n * sizeof(*names));
        memcpy(qs, s->l.qs, s->l.n * sizeof(*qs));
        s->l.names = names;
        s->l.qs = qs;
        s->l.cap = cap;
    }
    s->l.names[s->l.n] = name;
    s->l.qs[s->l.n] = *q;
    s->l.n++;
    if (k >= 0) {
        s->at[k] = s->l.n;
    }
    return 0;
}

/* adm_rlist_add (max false) or adm_rlist_max (max true) into a sum. */
static int sum_merge(adm_arena_t *a, sum_t *into, const adm_rlist_t *from, bool max)
{
    for (size_t i = 0; i < from->n; i++) {
        adm_quantity_t *have = sum_find(into, from->names[i]);

        if (have == NULL) {
            if (sum_append(a, into, from->names[i], &from->qs[i]) != 0) {
                return ADM_ENOMEM;
            }
        } else if (!max) {
            if (adm_quantity_add(have, &from->qs[i]) != 0) {
                return ADM_ETOOBIG;
            }
        } else if (adm_quantity_cmp(&from->qs[i], have) > 0) {
            *have = from->qs[i];
        }
    }
    return 0;
}

static int sum_add(adm_arena_t *a, sum_t *into, const adm_rlist_t *from)
{
    return sum_merge(a, into, from, false);
}

static int sum_max(adm_arena_t *a, sum_t *into, const adm_rlist_t *from)
{
    return sum_merge(a, into, from, true);
}

/* One init container: a sidecar joins the pod's total; any other runs with the sidecars before it. */
static int add_init_container(adm_arena_t *a, bool sidecar, const adm_rlist_t *one, sum_t *out,
                              sum_t *sidecars, sum_t *init_max)
{
    sum_t tmp;
    int err;

    if (sidecar) {
        err = sum_add(a, out, one);
        if (err == 0) {
            err = sum_add(a, sidecars, one);
        }
        return err == 0 ? sum_max(a, init_max, &sidecars->l) : err;
    }
    if (sidecars->l.n == 0) {
        /* one alone: its names are distinct (a read list's are), so one + nothing is one, uncopied */
        return sum_max(a, init_max, one);
    }
    sum_init(&tmp);
    err = sum_add(a, &tmp, one);
    if (err == 0) {
        err = sum_add(a, &tmp, &sidecars->l);
    }
    return err == 0 ? sum_max(a, init_max, &tmp.l) : err;
}

/* The most lists one walk of pod_resource_totals sums (requests and limits). */
#define TOTALS_MAX 2

static const char *const totals_which[TOTALS_MAX] = {"requests", "limits"};

/* res[which[w]], the usual pair by their literal names (lengths known: no strlen, no memcmp call). */
static inline yyjson_val *member(yyjson_val *res, const char *const *which, size_t w)
{
    if (which == totals_which) {
        return w == 0 ? adm_json_get(res, "requests") : adm_json_get(res, "limits");
    }
    return adm_json_get(res, which[w]);
}

/*
 * One container list of the walk: read (kept), recorded in the view when there is one, and summed
 * by add unless the walk's list w has failed already. Returns add's error or the read's.
 */
static int walk_list(adm_arena_t *a, yyjson_val *obj, adm_kept_rlist_t *view, int err, const char **bad,
                     const adm_rlist_t **one)
{
    const char *why = NULL;
    int e = adm_rlist_read_kept(a, obj, one, &why);

    if (view != NULL) {
        *view = (adm_kept_rlist_t){*one, e, e != 0 ? why : NULL};
    }
    if (err == 0 && e != 0) {
        *bad = why;
    }
    return err != 0 ? err : e;
}

/*
 * The pod's totals of nw lists at once (which[w]: "requests", "limits"), in one walk of its
 * containers: out[w], err[w] and bad[w] are what a walk for which[w] alone would give (a list's
 * first error stops that list's sum only; adm_rlist_read_kept keeps each container list's own
 * answer, so the order the lists are read in changes nothing). With views, every container's lists
 * (spec.containers then spec.initContainers) are read, and *views (in a) has *nviews entries:
 * (*views)[nw * i + w] is container i's which[w].
 */
static void pod_resource_totals(adm_arena_t *a, yyjson_val *pod, size_t nw, const char *const *which,
                                adm_rlist_t *out, int *err, const char **bad, adm_kept_rlist_t **views,
                                size_t *nviews)
{
    yyjson_val *spec = adm_json_get(pod, "spec"), *spec_res;
    yyjson_val *containers = adm_json_get(spec, "containers"), *inits = adm_json_get(spec, "initContainers");
    sum_t *total = adm_arena_alloc(a, TOTALS_MAX * sizeof(*total)); /* the totals outlive the walk */
    sum_t sidecars[TOTALS_MAX], init_max[TOTALS_MAX];
    adm_kept_rlist_t *view = NULL;
    const adm_rlist_t *one;
    yyjson_arr_iter it;
    yyjson_val *c;
    size_t nc = 0;

    for (size_t w = 0; w < nw; w++) {
        memset(&out[w], 0, sizeof(out[w]));
        err[w] = total == NULL ? ADM_ENOMEM : 0;
        if (total == NULL) {
            continue;
        }
        sum_init(&total[w]);
        sum_init(&sidecars[w]);
        sum_init(&init_max[w]);
    }
    if (views != NULL) {
        *nviews = nw * (yyjson_arr_size(containers) + yyjson_arr_size(inits));
        view = *views = adm_arena_alloc(a, (*nviews + 1) * sizeof(*view));
        for (size_t w = 0; view == NULL && w < nw; w++) {
            err[w] = ADM_ENOMEM;
        }
    }
    yyjson_arr_iter_init(containers, &it);
    for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
        yyjson_val *res = adm_json_get(c, "resources");

        for (size_t w = 0; w < nw; w++) {
            if (err[w] == 0 || view != NULL) {
                int e = walk_list(a, member(res, which, w), view != NULL ? &view[nw * nc + w] : NULL, err[w],
                                  &bad[w], &one);

                err[w] = e == 0 ? sum_add(a, &total[w], one) : e;
            }
        }
        nc++;
    }
    yyjson_arr_iter_init(inits, &it);
    for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
        yyjson_val *res = adm_json_get(c, "resources");
        bool sidecar = strcmp(adm_json_str(c, "restartPolicy"), "Always") == 0;

        for (size_t w = 0; w < nw; w++) {
            if (err[w] == 0 || view != NULL) {
                int e = walk_list(a, member(res, which, w), view != NULL ? &view[nw * nc + w] : NULL, err[w],
                                  &bad[w], &one);

                err[w] =
                    e == 0 ? add_init_container(a, sidecar, one, &total[w], &sidecars[w], &init_max[w]) : e;
            }
        }
        nc++;
    }
    spec_res = adm_json_get(spec, "resources");
    for (size_t w = 0; w < nw; w++) {
        if (err[w] == 0) {
            err[w] = sum_max(a, &total[w], &init_max[w].l);
        }
        if (err[w] == 0) {
            err[w] = adm_rlist_read_kept(a, member(spec_res, which, w), &one, &bad[w]);
        }
        /* read lists hold the interned names: cpu and memory are found by their pointers */
        for (size_t i = 0; err[w] == 0 && i < one->n; i++) {
            if (one->names[i] == adm_res(ADM_RES_CPU) || one->names[i] == adm_res(ADM_RES_MEMORY)) {
                adm_quantity_t *have = sum_find(&total[w], one->names[i]);

                if (have != NULL) {
                    *have = one->qs[i];
                } else {
                    err[w] = sum_append(a, &total[w], one->names[i], &one->qs[i]);
                }
            }
        }
        if (total != NULL) {
            out[w] = total[w].l; /* its arrays are the sum's, in a */
        }
    }
}

/*
 * A request's plugins read the same pod again and again: each container's requests and limits
 * (LimitRanger's container limits, ResourceQuota's constraints, the pod's totals) and the pod's
 * totals (LimitRanger's pod limits, then ResourceQuota's usage, each requests and limits). What
 * was read is kept, per thread, in the arena it was read in, and forgotten when that arena is
 * reset or destroyed (its cleanup). Within an arena's life a pointer cannot name another value
 * (arena memory is not reused, and the objects plugins read from outside it, the request's own
 * document and the cluster state's, live at least as long as the request's arena), so the JSON
 * value's pointer is the key: a mutated pod is a new view in the arena, with new pointers for
 * what changed.
 */
typedef struct kept_list_s {
    yyjson_val *obj;
    int err;
    const char *bad;
    adm_rlist_t list;
} kept_list_t;

typedef struct request_memo_s {
    adm_arena_t *arena;
    kept_list_t *lists; /* adm_rlist_read_kept's */
    size_t nlists, caplists;
    yyjson_val *pod; /* the pod whose totals these are */
    bool done[2];
    int err[2];
    const char *bad[2];
    adm_rlist_t total[2];       /* requests, limits */
    adm_kept_rlist_t *lists_of; /* its containers' requests and limits, as they were read */
    size_t nlists_of;
} request_memo_t;

static _Thread_local request_memo_t *request_memo;

static void request_memo_forget(void *memo)
{
    if (request_memo == memo) {
        request_memo = NULL;
    }
}

/* The memo of arena a, created on first use; NULL when out of memory. */
static request_memo_t *memo_of(adm_arena_t *a)
{
    request_memo_t *m = request_memo;

    if (m != NULL && m->arena == a) {
        return m;
    }
    m = adm_arena_calloc(a, 1, sizeof(*m));
    if (m == NULL || adm_arena_on_free(a, request_memo_forget, m) != 0) {
        return NULL;
    }
    m->arena = a;
    request_memo = m;
    return m;
}

int adm_rlist_read_kept(adm_arena_t *a, yyjson_val *obj, const adm_rlist_t **out, const char **bad)
{
    static const adm_rlist_t empty;
    request_memo_t *m;
    kept_list_t *k;
    int err;

    *out = &empty;
    if (yyjson_obj_size(obj) == 0) {
        return 0; /* absent, not an object, or empty: nothing to keep */
    }
    m = memo_of(a);
    if (m == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < m->nlists; i++) {
        if (m->lists[i].obj == obj) {
            if (m->lists[i].err != 0) {
                *bad = m->lists[i].bad;
                return m->lists[i].err;
            }
            *out = &m->lists[i].list;
            return 0;
        }
    }
    if (m->nlists == m->caplists) {
        size_t cap = m->caplists == 0 ? 8 : 2 * m->caplists;
        kept_list_t *g = adm_arena_realloc(a, m->lists, m->caplists * sizeof(*g), cap * sizeof(*g));

        if (g == NULL) {
            return ADM_ENOMEM;
        }
        m->lists = g;
        m->caplists = cap;
    }
    k = &m->lists[m->nlists];
    err = rlist_read(a, obj, &k->list, bad, true);
    if (err == ADM_ENOMEM) {
        return err;
    }
    k->obj = obj;
    k->err = err;
    k->bad = err != 0 ? *bad : NULL;
    m->nlists++;
    if (err == 0) {
        *out = &k->list;
    }
    return err;
}

int adm_rlist_copy(adm_arena_t *a, const adm_rlist_t *from, adm_rlist_t *out)
{
    memset(out, 0, sizeof(*out));
    if (from->n == 0) {
        return 0;
    }
    out->names = adm_arena_alloc(a, from->n * sizeof(*out->names));
    out->qs = adm_arena_alloc(a, from->n * sizeof(*out->qs));
    if (out->names == NULL || out->qs == NULL) {
        return ADM_ENOMEM;
    }
    memcpy(out->names, from->names, from->n * sizeof(*out->names));
    memcpy(out->qs, from->qs, from->n * sizeof(*out->qs));
    out->n = out->cap = from->n;
    return 0;
}

/*
 * The memo holding pod's totals (both: a request asks for both, LimitRanger's Pod items and
 * ResourceQuota's usage, and one walk sums both), computed when it holds another pod's; NULL when
 * out of memory.
 */
static request_memo_t *memo_totals(adm_arena_t *a, yyjson_val *pod)
{
    request_memo_t *m = memo_of(a);
    adm_rlist_t total[TOTALS_MAX];
    const char *why[TOTALS_MAX] = {NULL, NULL};
    int err[TOTALS_MAX];

    if (m == NULL) {
        return NULL;
    }
    if (m->pod == pod && m->done[0] && m->done[1]) {
        return m;
    }
    pod_resource_totals(a, pod, TOTALS_MAX, totals_which, total, err, why, &m->lists_of, &m->nlists_of);
    m->pod = pod;
    for (size_t k = 0; k < TOTALS_MAX; k++) {
        m->done[k] = err[k] != ADM_ENOMEM; /* running out of memory is not the pod's answer */
        m->err[k] = err[k];
        m->bad[k] = err[k] != 0 ? why[k] : NULL;
        m->total[k] = total[k];
    }
    return m->done[0] && m->done[1] ? m : NULL;
}

int adm_pod_resource_total(adm_arena_t *a, yyjson_val *pod, const char *which, adm_rlist_t *out,
                           const char **bad)
{
    int w = strcmp(which, totals_which[0]) == 0 ? 0 : strcmp(which, totals_which[1]) == 0 ? 1 : -1;
    request_memo_t *m;
    int err;

    if (w < 0) {
        pod_resource_totals(a, pod, 1, &which, out, &err, bad, NULL, NULL);
        return err;
    }
    m = memo_totals(a, pod);
    memset(out, 0, sizeof(*out));
    if (m == NULL) {
        return ADM_ENOMEM;
    }
    if (m->err[w] != 0) {
        *bad = m->bad[w];
        return m->err[w];
    }
    /* the caller's own arrays: it may change its list, the kept one stays as it was */
    return adm_rlist_copy(a, &m->total[w], out);
}

int adm_pod_resource_totals_kept(adm_arena_t *a, yyjson_val *pod, const adm_rlist_t **requests,
                                 const adm_rlist_t **limits, const char **bad)
{
    request_memo_t *m = memo_totals(a, pod);

    if (m == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t w = 0; w < TOTALS_MAX; w++) {
        if (m->err[w] != 0) {
            *bad = m->bad[w];
            return m->err[w];
        }
    }
    *requests = &m->total[0];
    *limits = &m->total[1];
    return 0;
}

int adm_pod_container_lists_kept(adm_arena_t *a, yyjson_val *pod, const adm_kept_rlist_t **lists, size_t *n)
{
    request_memo_t *m = memo_totals(a, pod);

    *lists = NULL;
    *n = 0;
    if (m == NULL) {
        return ADM_ENOMEM;
    }
    *lists = m->lists_of;
    *n = m->nlists_of / TOTALS_MAX;
    return 0;
}

/* A cpu or memory entry of the ResourceList above zero (processResourceList keeps only those). */
static bool qos_counts(yyjson_val *list)
{
    static const char *const names[] = {"cpu", "memory"};

    for (size_t k = 0; k < 2; k++) {
        yyjson_val *v = adm_json_get(list, names[k]);
        adm_quantity_t q;
        const char *problem;

        if (yyjson_is_str(v) && adm_quantity_parse(yyjson_get_str(v), yyjson_get_len(v), &q, &problem) == 0 &&
            adm_quantity_sign(&q) > 0) {
            return true;
        }
        if (yyjson_is_num(v) && yyjson_get_num(v) > 0) {
            return true;
        }
    }
    return false;
}

bool adm_pod_level_resources_set(yyjson_val *pod)
{
    static const char *const which[] = {"requests", "limits"};

    for (size_t w = 0; w < 2; w++) {
        yyjson_obj_iter it;
        yyjson_val *k;

        yyjson_obj_iter_init(adm_json_path(pod, "spec", "resources", which[w], NULL), &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            const char *name = yyjson_get_str(k);

            if (strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
                strncmp(name, "hugepages-", 10) == 0) {
                return true;
            }
        }
    }
    return false;
}

bool adm_pod_qos_best_effort(yyjson_val *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const char *status = adm_json_str(adm_json_get(pod, "status"), "qosClass");
    yyjson_val *res = adm_json_path(pod, "spec", "resources", NULL);

    if (status[0] != '\0') {
        return strcmp(status, "BestEffort") == 0;
    }
    if (adm_pod_level_resources_set(pod)) {
        return !qos_counts(adm_json_get(res, "requests")) && !qos_counts(adm_json_get(res, "limits"));
    }
    for (size_t l = 0; l < 2; l++) {
        yyjson_arr_iter it;
        yyjson_val *c;

        yyjson_arr_iter_init(adm_json_path(pod, "spec", lists[l], NULL), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            if (qos_counts(adm_json_path(c, "resources", "requests", NULL)) ||
                qos_counts(adm_json_path(c, "resources", "limits", NULL))) {
                return false;
            }
        }
    }
    return true;
}

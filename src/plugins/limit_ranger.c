/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LimitRanger: the LimitRanges of the request's namespace (cluster state) give containers their
 * default requests and limits (mutating phase, with the kubernetes.io/limit-ranger annotation
 * saying what was set) and bound containers, pods and PersistentVolumeClaims by min, max and
 * maxLimitRequestRatio (validating phase). Quantities are compared as kube-apiserver's released
 * plugin compares them: in milli-units when all three fit, else in whole units, rounding up. The
 * first LimitRange (in load order) with a violation rejects with all of its violations.
 *
 * When the cache has no LimitRange in the namespace, kube's GetLimitRanges lists the namespace's
 * live (and keeps the answer 30 s per namespace): with an API connection admitd does the same
 * through list_cache.h, in admit and validate as ADM_AGAIN phases; the list read is kept for the
 * request, so validate does not look again. A LIST that fails is the Forbidden kube wraps the
 * client's error in. Without an API connection the files are all there is.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/quantity.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/list_cache.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/parsed_cache.h"
#include "adm/plugins/resources.h"

#include <stdlib.h>
#include <string.h>

#define ANNOTATION "kubernetes.io/limit-ranger"

/*
 * What the validate checks need of one bound (an entry of min, max or maxLimitRequestRatio),
 * worked out when the LimitRange is read (and kept with its parse): its name's slot (adm_res_slot,
 * -1 for a name without one) and, when small_milli holds for its quantity, its milli-units.
 */
typedef struct lr_bound_s {
    int slot;
    bool small;
    int64_t milli;
} lr_bound_t;

/* One item of spec.limits, parsed. */
typedef struct lr_item_s {
    const char *type;
    adm_rlist_t min, max, def, def_request, ratio;
    const char **def_text, **def_request_text; /* the defaults as Quantity.String(), or NULL */
    lr_bound_t *min_b, *max_b, *ratio_b;       /* [k]: of min, max, ratio's entry k */
} lr_item_t;

static inline bool small_milli(const adm_quantity_t *q, int64_t *milli);

/* The bounds of l's entries, in a; NULL when out of memory. */
static lr_bound_t *bounds_of(adm_arena_t *a, const adm_rlist_t *l)
{
    lr_bound_t *b = adm_arena_alloc(a, (l->n + 1) * sizeof(*b));

    for (size_t i = 0; b != NULL && i < l->n; i++) {
        b[i].slot = adm_res_slot(l->names[i]);
        b[i].small = small_milli(&l->qs[i], &b[i].milli);
    }
    return b;
}

typedef struct lr_s {
    lr_item_t *items;
    size_t n;
} lr_t;

/* Parses a LimitRange; ADM_EINVAL when one of its quantities is malformed. */
static int lr_read(adm_arena_t *a, yyjson_val *obj, lr_t *out)
{
    yyjson_val *limits = adm_json_get(adm_json_get(obj, "spec"), "limits");
    size_t n = yyjson_arr_size(limits), i = 0;
    yyjson_arr_iter it;
    yyjson_val *item;
    const char *bad;

    out->n = 0;
    out->items = adm_arena_calloc(a, n == 0 ? 1 : n, sizeof(*out->items));
    if (out->items == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_arr_iter_init(limits, &it);
    for (item = yyjson_arr_iter_next(&it); item != NULL; item = yyjson_arr_iter_next(&it), i++) {
        lr_item_t *li = &out->items[i];
        int err;

        li->type = adm_json_str(item, "type");
        err = adm_rlist_read(a, adm_json_get(item, "min"), &li->min, &bad);
        if (err == 0) {
            err = adm_rlist_read(a, adm_json_get(item, "max"), &li->max, &bad);
        }
        if (err == 0) {
            err = adm_rlist_read(a, adm_json_get(item, "default"), &li->def, &bad);
        }
        if (err == 0) {
            err = adm_rlist_read(a, adm_json_get(item, "defaultRequest"), &li->def_request, &bad);
        }
        if (err == 0) {
            err = adm_rlist_read(a, adm_json_get(item, "maxLimitRequestRatio"), &li->ratio, &bad);
        }
        if (err != 0) {
            return err;
        }
        li->min_b = bounds_of(a, &li->min);
        li->max_b = bounds_of(a, &li->max);
        li->ratio_b = bounds_of(a, &li->ratio);
        if (li->min_b == NULL || li->max_b == NULL || li->ratio_b == NULL) {
            return ADM_ENOMEM;
        }
    }
    out->n = i;
    return 0;
}

static const char *qstr(adm_arena_t *a, const adm_quantity_t *q)
{
    char buf[ADM_QTY_STR_MAX];
    size_t n = adm_quantity_format(q, buf, sizeof(buf));
    char *s;

    if (n < sizeof(buf)) {
        return adm_arena_strndup(a, buf, n);
    }
    s = adm_arena_alloc(a, n + 1);
    if (s != NULL) {
        adm_quantity_format(q, s, n + 1);
    }
    return s;
}

/* The texts of l's quantities (what a default is written into the pod as); NULL when out of memory. */
static const char **texts_of(adm_arena_t *a, const adm_rlist_t *l)
{
    const char **t = adm_arena_alloc(a, (l->n + 1) * sizeof(*t));

    for (size_t i = 0; t != NULL && i < l->n; i++) {
        t[i] = qstr(a, &l->qs[i]);
        if (t[i] == NULL) {
            return NULL;
        }
    }
    return t;
}

/* lr_read as the parse a cache keeps (parsed_cache.h): nothing of it points into obj. */
static int lr_parse(adm_arena_t *a, yyjson_val *obj, void **out)
{
    lr_t *lr = adm_arena_calloc(a, 1, sizeof(*lr));
    int err;

    if (lr == NULL) {
        return ADM_ENOMEM;
    }
    *out = lr;
    err = lr_read(a, obj, lr);
    for (size_t i = 0; err == 0 && i < lr->n; i++) {
        lr_item_t *li = &lr->items[i];

        li->type = adm_arena_strndup(a, li->type, strlen(li->type));
        err = li->type == NULL ? ADM_ENOMEM : adm_rlist_own(a, &li->min);
        if (err == 0) {
            err = adm_rlist_own(a, &li->max);
        }
        if (err == 0) {
            err = adm_rlist_own(a, &li->def);
        }
        if (err == 0) {
            err = adm_rlist_own(a, &li->def_request);
        }
        if (err == 0) {
            err = adm_rlist_own(a, &li->ratio);
        }
        /* a cached LimitRange's defaults are formatted once, not at every request */
        if (err == 0) {
            li->def_text = texts_of(a, &li->def);
            li->def_request_text = texts_of(a, &li->def_request);
            err = li->def_text == NULL || li->def_request_text == NULL ? ADM_ENOMEM : 0;
        }
    }
    return err;
}

/* The plugin's state: the LimitRanges' parses, and with an API connection the live LISTs. */
typedef struct lr_state_s {
    adm_parsed_cache_t *parsed;
    adm_list_cache_t *live;
} lr_state_t;

/*
 * LimitRanges kept parsed: requests come from every namespace, so room for as many namespaces as a
 * large cluster has (about 1 KB each), the least recently used leaving first.
 */
#define LR_PARSED_MAX 4096

/*
 * The LimitRanges read in this request, kept in the plugin's request slot: admit reads them and
 * validate, in the same request, finds them here (the objects are pinned for the request, so the
 * same pointer is the same content).
 */
typedef struct lr_kept_s {
    yyjson_val *obj;
    lr_t lr;
    int err;
} lr_kept_t;

typedef struct lr_memo_s {
    adm_parsed_cache_t *parsed; /* the plugin's, set as a phase starts */
    lr_kept_t *v;
    size_t n, cap;
    bool listed;             /* the live LIST answered for this request: */
    yyjson_val *const *live; /* its items, held until the request ends */
    size_t nlive;
} lr_memo_t;

/* The request's memo, created on first use; NULL when out of memory (or no slot: unit tests). */
static lr_memo_t *memo(adm_attrs_t *attrs)
{
    void **slot = adm_plugin_slot(attrs);

    if (slot == NULL) {
        return NULL;
    }
    if (*slot == NULL) {
        *slot = adm_arena_calloc(attrs->arena, 1, sizeof(lr_memo_t));
    }
    return *slot;
}

/* lr_read of obj, once per request. */
static int lr_read_once(adm_attrs_t *attrs, yyjson_val *obj, lr_t *out)
{
    lr_memo_t *m = memo(attrs);
    int err;

    for (size_t i = 0; m != NULL && i < m->n; i++) {
        if (m->v[i].obj == obj) {
            *out = m->v[i].lr;
            return m->v[i].err;
        }
    }
    if (m != NULL && m->parsed != NULL) {
        const void *kept;

        err = adm_parsed_cache_get(m->parsed, attrs, obj, &kept);
        if (kept != NULL) {
            *out = *(const lr_t *)kept;
        }
    } else {
        err = lr_read(attrs->arena, obj, out);
    }
    if (m == NULL || err == ADM_ENOMEM) {
        return err;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap == 0 ? 4 : 2 * m->cap;
        lr_kept_t *g = adm_arena_realloc(attrs->arena, m->v, m->cap * sizeof(*g), cap * sizeof(*g));

        if (g != NULL) {
            m->v = g;
            m->cap = cap;
        }
    }
    if (m->n < m->cap) {
        m->v[m->n++] = (lr_kept_t){obj, *out, err};
    }
    return err;
}

/* ---- the constraints (messages as kube's minConstraint, maxConstraint ...) ---- */

/*
 * q's MilliValue when q is an int64 amount whose milli-units are exact and at most
 * ADM_QTY_MAX_MILLI_VALUE in size (every quantity of a usual LimitRange or pod, 2Gi included): its
 * Value is then a thousandth of that, far below ADM_QTY_MAX_MILLI_VALUE, so
 * requestLimitEnforcedValues' answer needs neither Value nor ScaledValue.
 */
static inline bool small_milli(const adm_quantity_t *q, int64_t *milli)
{
    /* most[k]: the largest unscaled amount whose milli-units, unscaled * 10^k, stay within the bound */
    static const int64_t most[] = {
        ADM_QTY_MAX_MILLI_VALUE,
        ADM_QTY_MAX_MILLI_VALUE / 10,
        ADM_QTY_MAX_MILLI_VALUE / 100,
        ADM_QTY_MAX_MILLI_VALUE / 1000,
        ADM_QTY_MAX_MILLI_VALUE / 10000,
        ADM_QTY_MAX_MILLI_VALUE / 100000,
        ADM_QTY_MAX_MILLI_VALUE / 1000000,
        ADM_QTY_MAX_MILLI_VALUE / 10000000,
        ADM_QTY_MAX_MILLI_VALUE / 100000000,
        ADM_QTY_MAX_MILLI_VALUE / 1000000000,
    };
    static const int64_t pow10[] = {1,      10,      100,      1000,      10000,
                                    100000, 1000000, 10000000, 100000000, 1000000000};
    size_t k;
    int64_t u;

    if (q->dec || q->scale < ADM_QTY_MILLI || q->scale > ADM_QTY_MILLI + 9) {
        return false;
    }
    k = (size_t)(q->scale - ADM_QTY_MILLI);
    u = (int64_t)q->unscaled; /* an int64 amount's (not dec) fits */
    if (u > most[k] || u < -most[k]) {
        return false;
    }
    *milli = u * pow10[k];
    return true;
}

/* requestLimitEnforcedValues: milli-units when all three fit, else whole units. */
static void common_values(const adm_quantity_t *req, const adm_quantity_t *lim, const adm_quantity_t *enf,
                          int64_t *r, int64_t *l, int64_t *e)
{
    if (small_milli(req, r) && small_milli(lim, l) && small_milli(enf, e)) {
        return;
    }
    *r = adm_quantity_value(req);
    *l = adm_quantity_value(lim);
    *e = adm_quantity_value(enf);
    if (*r <= ADM_QTY_MAX_MILLI_VALUE && *l <= ADM_QTY_MAX_MILLI_VALUE && *e <= ADM_QTY_MAX_MILLI_VALUE) {
        *r = adm_quantity_milli_value(req);
        *l = adm_quantity_milli_value(lim);
        *e = adm_quantity_milli_value(enf);
    }
}

static const adm_quantity_t ZERO; /* what a missing entry reads as (Quantity{}) */

/*
 * A container's (or the pod's) requests and limits as the constraints look them up: the entries
 * of cpu, memory and ephemeral-storage found once, in one pass over each list, so that the bounds
 * of a LimitRange (whose names are interned as the lists' are: adm_res_slot tells them) find them
 * without a scan; any other name is looked for in the lists.
 */
typedef struct lr_slot_s {
    const adm_quantity_t *q; /* NULL: not in the list */
    bool small;              /* small_milli(q) holds (a missing entry, Quantity{}, is 0) */
    int64_t milli;           /* its milli-units then */
} lr_slot_t;

typedef struct lr_have_s {
    const adm_rlist_t *requests, *limits;
    lr_slot_t req[ADM_RES_SLOTS], lim[ADM_RES_SLOTS];
} lr_have_t;

static void slots_of(const adm_rlist_t *l, lr_slot_t *slot)
{
    for (size_t k = 0; k < ADM_RES_SLOTS; k++) {
        slot[k] = (lr_slot_t){NULL, true, 0};
    }
    for (size_t i = 0; i < l->n; i++) {
        int k = adm_res_slot(l->names[i]);

        if (k >= 0) {
            slot[k].q = &l->qs[i];
            slot[k].small = small_milli(&l->qs[i], &slot[k].milli);
        }
    }
}

static void have_init(lr_have_t *h, const adm_rlist_t *requests, const adm_rlist_t *limits)
{
    h->requests = requests;
    h->limits = limits;
    slots_of(requests, h->req);
    slots_of(limits, h->lim);
}

/*
 * The checks' answer where it is a plain comparison: the resource has a slot and request, limit
 * and bound are all small_milli amounts, so requestLimitEnforcedValues compares their milli-units
 * (what common_values would give). True when the constraint holds for certain; false when it may
 * not, and the full check (with its message) decides.
 */
static inline bool min_holds(const lr_have_t *h, const lr_bound_t *b)
{
    int k = b->slot;

    return k >= 0 && b->small && h->req[k].q != NULL && h->req[k].small && h->lim[k].small &&
           h->req[k].milli >= b->milli && (h->lim[k].q == NULL || h->lim[k].milli >= b->milli);
}

static inline bool max_holds(const lr_have_t *h, const lr_bound_t *b)
{
    int k = b->slot;

    return k >= 0 && b->small && h->lim[k].q != NULL && h->req[k].small && h->lim[k].small &&
           h->lim[k].milli <= b->milli && (h->req[k].q == NULL || h->req[k].milli <= b->milli);
}

static inline bool ratio_holds(const lr_have_t *h, const lr_bound_t *b)
{
    int k = b->slot;

    /* as ratio_constraint: the observed ratio of milli-units, times 1000 against the bound's */
    return k >= 0 && b->small && h->req[k].q != NULL && h->lim[k].q != NULL && h->req[k].small &&
           h->lim[k].small && h->req[k].milli != 0 && h->lim[k].milli != 0 &&
           !((double)h->lim[k].milli / (double)h->req[k].milli * 1000 > (double)b->milli);
}

/* The request (limit) of res in h, or NULL. */
static const adm_quantity_t *have_req(const lr_have_t *h, const char *res)
{
    int k = adm_res_slot(res);

    return k >= 0 ? h->req[k].q : adm_rlist_find(h->requests, res);
}

static const adm_quantity_t *have_lim(const lr_have_t *h, const char *res)
{
    int k = adm_res_slot(res);

    return k >= 0 ? h->lim[k].q : adm_rlist_find(h->limits, res);
}

static const char *min_constraint(adm_arena_t *a, const char *type, const char *res,
                                  const adm_quantity_t *enf, const lr_have_t *h)
{
    const adm_quantity_t *req = have_req(h, res), *lim = have_lim(h, res);
    int64_t r, l, e;

    common_values(req != NULL ? req : &ZERO, lim != NULL ? lim : &ZERO, enf, &r, &l, &e);
    if (req == NULL) {
        return adm_arena_printf(a, "minimum %s usage per %s is %s.  No request is specified", res, type,
                                qstr(a, enf));
    }
    if (r < e) {
        return adm_arena_printf(a, "minimum %s usage per %s is %s, but request is %s", res, type,
                                qstr(a, enf), qstr(a, req));
    }
    if (lim != NULL && l < e) {
        return adm_arena_printf(a, "minimum %s usage per %s is %s, but limit is %s", res, type, qstr(a, enf),
                                qstr(a, lim));
    }
    return "";
}

static const char *max_request_constraint(adm_arena_t *a, const char *type, const char *res,
                                          const adm_quantity_t *enf, const lr_have_t *h)
{
    const adm_quantity_t *req = have_req(h, res);
    int64_t r, l, e;

    common_values(req != NULL ? req : &ZERO, &ZERO, enf, &r, &l, &e);
    if (req == NULL) {
        return adm_arena_printf(a, "maximum %s usage per %s is %s.  No request is specified", res, type,
                                qstr(a, enf));
    }
    if (r > e) {
        return adm_arena_printf(a, "maximum %s usage per %s is %s, but request is %s", res, type,
                                qstr(a, enf), qstr(a, req));
    }
    return "";
}

static const char *max_constraint(adm_arena_t *a, const char *type, const char *res,
                                  const adm_quantity_t *enf, const lr_have_t *h)
{
    const adm_quantity_t *req = have_req(h, res), *lim = have_lim(h, res);
    int64_t r, l, e;

    common_values(req != NULL ? req : &ZERO, lim != NULL ? lim : &ZERO, enf, &r, &l, &e);
    if (lim == NULL) {
        return adm_arena_printf(a, "maximum %s usage per %s is %s.  No limit is specified", res, type,
                                qstr(a, enf));
    }
    if (l > e) {
        return adm_arena_printf(a, "maximum %s usage per %s is %s, but limit is %s", res, type, qstr(a, enf),
                                qstr(a, lim));
    }
    if (req != NULL && r > e) {
        return adm_arena_printf(a, "maximum %s usage per %s is %s, but request is %s", res, type,
                                qstr(a, enf), qstr(a, req));
    }
    return "";
}

static const char *ratio_constraint(adm_arena_t *a, const char *type, const char *res,
                                    const adm_quantity_t *enf, const lr_have_t *h)
{
    const adm_quantity_t *req = have_req(h, res), *lim = have_lim(h, res);
    int64_t r, l, e;
    double observed, shown, max;

    common_values(req != NULL ? req : &ZERO, lim != NULL ? lim : &ZERO, enf, &r, &l, &e);
    if (req == NULL || r == 0) {
        return adm_arena_printf(a,
                                "%s max limit to request ratio per %s is %s, but no request is specified or "
                                "request is 0",
                                res, type, qstr(a, enf));
    }
    if (lim == NULL || l == 0) {
        return adm_arena_printf(a,
                                "%s max limit to request ratio per %s is %s, but no limit is specified or "
                                "limit is 0",
                                res, type, qstr(a, enf));
    }
    observed = (double)l / (double)r;
    shown = observed;
    if (small_milli(enf, &e)) {
        /* its Value is within ADM_QTY_MAX_MILLI_VALUE: compared in milli-units, e already */
        observed *= 1000;
        max = (double)e;
    } else {
        max = (double)adm_quantity_value(enf);
        if (adm_quantity_value(enf) <= ADM_QTY_MAX_MILLI_VALUE) {
            observed *= 1000;
            max = (double)adm_quantity_milli_value(enf);
        }
    }
    if (observed > max) {
        return adm_arena_printf(a, "%s max limit to request ratio per %s is %s, but provided ratio is %f",
                                res, type, qstr(a, enf), shown);
    }
    return "";
}

/* Adds every violation of item against requests/limits to agg. */
static void check_item(adm_arena_t *a, adm_aggregate_t *agg, const lr_item_t *li, const adm_rlist_t *requests,
                       const adm_rlist_t *limits)
{
    lr_have_t h;

    have_init(&h, requests, limits);
    for (size_t k = 0; k < li->min.n; k++) {
        const char *m;

        if (min_holds(&h, &li->min_b[k])) {
            continue;
        }
        m = min_constraint(a, li->type, li->min.names[k], &li->min.qs[k], &h);
        if (m == NULL || *m != '\0') {
            adm_aggregate_add(agg, m);
        }
    }
    for (size_t k = 0; k < li->max.n; k++) {
        const char *m;

        if (max_holds(&h, &li->max_b[k])) {
            continue;
        }
        m = max_constraint(a, li->type, li->max.names[k], &li->max.qs[k], &h);
        if (m == NULL || *m != '\0') {
            adm_aggregate_add(agg, m);
        }
    }
    for (size_t k = 0; k < li->ratio.n; k++) {
        const char *m;

        if (ratio_holds(&h, &li->ratio_b[k])) {
            continue;
        }
        m = ratio_constraint(a, li->type, li->ratio.names[k], &li->ratio.qs[k], &h);
        if (m == NULL || *m != '\0') {
            adm_aggregate_add(agg, m);
        }
    }
}

/* ---- the hooks ---- */

/* SupportsAttributes. */
static bool supported(const adm_attrs_t *attrs)
{
    const adm_review_request_t *req = attrs->req;
    bool pod = adm_attrs_kind_is(attrs, "", "Pod");
    bool pvc = adm_attrs_kind_is(attrs, "", "PersistentVolumeClaim");

    if (strcmp(req->sub_resource, "resize") == 0 && pod && req->operation == ADM_OP_UPDATE) {
        return true;
    }
    if (req->sub_resource[0] != '\0' || (pod && req->operation == ADM_OP_UPDATE)) {
        return false;
    }
    return pod || pvc;
}

/* An object being deleted is not limited. */
static bool exempt(const adm_attrs_t *attrs)
{
    return !supported(attrs) ||
           adm_json_path(attrs->req->old_object, "metadata", "deletionTimestamp", NULL) != NULL;
}

/* What admit or validate does with the namespace's LimitRanges. */
typedef struct lr_phase_s {
    int (*run)(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *const *ranges, size_t n);
} lr_phase_t;

/* The live LIST answered: the phase goes on with its items, or ends in kube's Forbidden. */
static void on_live_ranges(adm_attrs_t *attrs, adm_async_t *async, int rc, yyjson_val *const *items, size_t n,
                           const adm_call_result_t *res, yyjson_val *body, const char *err, void *arg)
{
    const lr_phase_t *phase = arg;
    lr_memo_t *m = memo(attrs);
    adm_status_t st;

    memset(&st, 0, sizeof(st));
    if (rc == ADM_OK && m != NULL) {
        m->listed = true;
        m->live = items;
        m->nlive = n;
        rc = phase->run(attrs, &st, items, n);
    } else if (rc == ADM_EIO) {
        rc =
            adm_status_forbidden(&st, attrs, "%s", err != NULL ? err : adm_live_call_error(attrs, res, body));
    } else {
        rc = adm_status_nomem(&st);
    }
    adm_async_done(async, rc, &st);
}

/*
 * GetLimitRanges: the namespace's LimitRanges from the lister; when it has none, with an API
 * connection and a chain to resume, the live LIST's (cached, or ADM_AGAIN and phase later).
 * ADM_OK with *ranges, *n (n is 0 for an exempt request), ADM_AGAIN, or ADM_ENOMEM.
 */
static int limit_ranges(adm_list_cache_t *live, adm_attrs_t *attrs, adm_async_t *async, lr_phase_t *phase,
                        yyjson_val *const **ranges, size_t *n)
{
    const char *ns = attrs->req->namespace_;
    lr_memo_t *m;
    int rc;

    *ranges = NULL;
    *n = 0;
    if (exempt(attrs)) {
        return ADM_OK;
    }
    *ranges = adm_cluster_state_list(adm_plugin_cluster(attrs), "", "LimitRange", ns, n);
    if (*n > 0 || live == NULL || async == NULL || !adm_live_call_possible(attrs) ||
        !adm_live_namespace_name(ns)) {
        return ADM_OK;
    }
    m = memo(attrs);
    if (m == NULL) {
        return ADM_ENOMEM;
    }
    if (m->listed) {
        *ranges = m->live;
        *n = m->nlive;
        return ADM_OK;
    }
    rc = adm_list_cache_get(live, attrs, async, ranges, n, on_live_ranges, phase);
    if (rc == ADM_OK) {
        m->listed = true;
        m->live = *ranges;
        m->nlive = *n;
    }
    return rc;
}

static void free_state(void *state)
{
    lr_state_t *s = state;

    if (s != NULL) {
        adm_parsed_cache_free(s->parsed);
        adm_list_cache_free(s->live);
        free(s);
    }
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    lr_state_t *s = calloc(1, sizeof(*s));

    (void)err;
    (void)err_len;
    *state = s;
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    s->parsed = adm_parsed_cache_create(lr_parse, LR_PARSED_MAX);
    if (cfg->api) {
        s->live = adm_list_cache_create("limitranges", ADM_LIST_CACHE_MAX, ADM_LIST_CACHE_TTL_MS);
    }
    if (s->parsed == NULL || (cfg->api && s->live == NULL)) {
        free_state(s);
        *state = NULL;
        return ADM_ENOMEM;
    }
    return 0;
}

static int bad_quantity(adm_status_t *st, adm_attrs_t *attrs, const char *problem)
{
    return adm_status_bad_request(st, attrs->arena, "%s in version \"%s\" cannot be handled as a %s: %s",
                                  attrs->req->kind.kind, attrs->req->kind.version, attrs->req->kind.kind,
                                  problem);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The n strings of s one after another, in a (a concatenation: no printf for the annotation). */
static const char *concat(adm_arena_t *a, const char *const *s, size_t n)
{
    size_t len = 0;
    char *out, *at;

    for (size_t i = 0; i < n; i++) {
        len += strlen(s[i]);
    }
    out = adm_arena_alloc(a, len + 1);
    if (out == NULL) {
        return NULL;
    }
    at = out;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(s[i]);

        memcpy(at, s[i], l);
        at += l;
    }
    *at = '\0';
    return out;
}

/* Defaults of one kind (requests or limits) with their values as Quantity.String() writes them. */
typedef struct lr_defaults_s {
    adm_rlist_t list;
    const char **text; /* text[i]: list.qs[i] formatted, once per request */
} lr_defaults_t;

/*
 * Sets into c.resources.<which> every default it lacks, as edits (into *fresh, the resources object
 * made for a container that has none, set by the caller); appends "<names> <word> for <prefix>
 * <name>". The changes are those adm_mut_ensure and yyjson_mut_obj_add made on a mutable copy.
 */
static int merge_defaults(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *c,
                          const lr_defaults_t *defaults, const char *which, const char *word,
                          const char *prefix, const char **parts, size_t *nparts, yyjson_mut_val **fresh)
{
    adm_arena_t *a = attrs->arena;
    yyjson_val *name = adm_json_get(c, "name");
    yyjson_val *res = adm_json_get(c, "resources");
    yyjson_val *have = adm_json_get(res, which);
    yyjson_mut_val *list = NULL; /* the new <which> object, when c has none */
    const char **set = adm_arena_alloc(a, (2 * defaults->list.n + 6) * sizeof(*set));
    const char *text;
    size_t nset = 0, npieces;

    if (set == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < defaults->list.n; i++) {
        yyjson_mut_val *value;

        /* defaults' names are distinct: one added here is never looked for again */
        if (adm_json_get(have, defaults->list.names[i]) != NULL) {
            continue;
        }
        value = defaults->text[i] != NULL ? yyjson_mut_str(doc, defaults->text[i]) : NULL;
        if (value == NULL || adm_json_not_ensurable(res, YYJSON_TYPE_OBJ) ||
            adm_json_not_ensurable(have, YYJSON_TYPE_OBJ)) {
            return ADM_ENOMEM;
        }
        if (yyjson_is_obj(have)) {
            if (adm_attrs_edit_key(attrs, ADM_EDIT_ADD, have, defaults->list.names[i], value) != ADM_OK) {
                return ADM_ENOMEM;
            }
        } else {
            if (list == NULL) {
                list = yyjson_mut_obj(doc);
                if (list == NULL) {
                    return ADM_ENOMEM;
                }
                if (yyjson_is_obj(res)) {
                    /* set now, filled below: the edit holds the value, applied at the next read */
                    if (adm_attrs_edit_key(attrs, ADM_EDIT_SET, res, which, list) != ADM_OK) {
                        return ADM_ENOMEM;
                    }
                } else {
                    if (*fresh == NULL) {
                        *fresh = yyjson_mut_obj(doc);
                    }
                    if (*fresh == NULL || !yyjson_mut_obj_add_val(doc, *fresh, which, list)) {
                        return ADM_ENOMEM;
                    }
                }
            }
            if (!yyjson_mut_obj_add_val(doc, list, defaults->list.names[i], value)) {
                return ADM_ENOMEM;
            }
        }
        set[nset++] = defaults->list.names[i];
    }
    if (nset == 0) {
        return 0;
    }
    qsort(set, nset, sizeof(*set), cmp_str);
    /* "a, b word for prefix name": the sorted names spread out with their separators */
    npieces = 2 * nset - 1;
    for (size_t i = nset; i-- > 1;) {
        set[2 * i] = set[i];
        set[2 * i - 1] = ", ";
    }
    set[npieces++] = " ";
    set[npieces++] = word;
    set[npieces++] = " for ";
    set[npieces++] = prefix;
    set[npieces++] = " ";
    set[npieces++] = yyjson_is_str(name) ? yyjson_get_str(name) : "";
    text = concat(a, set, npieces);
    if (text == NULL) {
        return ADM_ENOMEM;
    }
    parts[(*nparts)++] = text;
    return 0;
}

/* A container (regular or init) of pod lacks one of the defaults in resources.requests or .limits. */
static bool defaults_missing(yyjson_val *pod, const adm_rlist_t *requests, const adm_rlist_t *limits)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const adm_rlist_t *defaults[] = {requests, limits};
    static const char *const which[] = {"requests", "limits"};

    for (size_t l = 0; l < 2; l++) {
        yyjson_arr_iter it;
        yyjson_val *c;

        yyjson_arr_iter_init(adm_json_get(adm_json_get(pod, "spec"), lists[l]), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            for (size_t w = 0; yyjson_is_obj(c) && w < 2; w++) {
                yyjson_val *have = adm_json_get(adm_json_get(c, "resources"), which[w]);

                for (size_t k = 0; k < defaults[w]->n; k++) {
                    if (adm_json_get(have, defaults[w]->names[k]) == NULL) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

/* The formatted values of d's list (NULL entries when out of memory: merge_defaults says so). */
static int defaults_text(adm_arena_t *a, lr_defaults_t *d)
{
    d->text = adm_arena_alloc(a, (d->list.n + 1) * sizeof(*d->text));
    if (d->text == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < d->list.n; i++) {
        d->text[i] = qstr(a, &d->list.qs[i]);
    }
    return 0;
}

/*
 * metadata.annotations[ANNOTATION] = text, as edits: what adm_mut_ensure of metadata and of its
 * annotations, then replacing the key, made on a mutable copy.
 */
static int annotate(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *pod, const char *text)
{
    yyjson_val *meta = adm_json_get(pod, "metadata");
    yyjson_val *annotations = adm_json_get(meta, "annotations");
    yyjson_mut_val *value = yyjson_mut_str(doc, text);
    yyjson_mut_val *fresh;

    if (value == NULL || !yyjson_is_obj(pod) || adm_json_not_ensurable(meta, YYJSON_TYPE_OBJ) ||
        adm_json_not_ensurable(annotations, YYJSON_TYPE_OBJ)) {
        return ADM_ENOMEM;
    }
    if (yyjson_is_obj(annotations)) {
        return adm_attrs_edit_key(attrs, ADM_EDIT_ADD, annotations, ANNOTATION, value);
    }
    fresh = yyjson_mut_obj(doc);
    if (fresh == NULL || !yyjson_mut_obj_add_val(doc, fresh, ANNOTATION, value)) {
        return ADM_ENOMEM;
    }
    if (yyjson_is_obj(meta)) {
        return adm_attrs_edit_key(attrs, ADM_EDIT_SET, meta, "annotations", fresh);
    }
    value = fresh;
    fresh = yyjson_mut_obj(doc);
    if (fresh == NULL || !yyjson_mut_obj_add_val(doc, fresh, "annotations", value)) {
        return ADM_ENOMEM;
    }
    return adm_attrs_edit_key(attrs, ADM_EDIT_SET, pod, "metadata", fresh);
}

/* PodMutateLimitFunc for one LimitRange: defaults from its Container items, then the annotation. */
static int apply_defaults(adm_attrs_t *attrs, const lr_t *lr)
{
    static const char *const lists[] = {"containers", "initContainers"};
    static const char *const prefixes[] = {"container", "init container"};
    adm_arena_t *a = attrs->arena;
    lr_defaults_t requests, limits;
    yyjson_val *pod;
    yyjson_mut_doc *doc;
    const char **parts;
    size_t nparts = 0, ncontainers;
    const char *text;
    int err;

    memset(&requests, 0, sizeof(requests));
    memset(&limits, 0, sizeof(limits));
    for (size_t i = 0; i < lr->n; i++) {
        if (strcmp(lr->items[i].type, "Container") != 0) {
            continue;
        }
        if (requests.list.n == 0 && limits.list.n == 0 && lr->items[i].def_text != NULL) {
            /* the first Container item, formatted already: its lists as they are (only read) */
            requests.list = lr->items[i].def_request;
            requests.text = lr->items[i].def_request_text;
            limits.list = lr->items[i].def;
            limits.text = lr->items[i].def_text;
            continue;
        }
        if (requests.text != NULL) {
            /* a later Container item: merged into copies of the first's, formatted below */
            adm_rlist_t req = requests.list, lim = limits.list;

            if (adm_rlist_copy(a, &req, &requests.list) != 0 || adm_rlist_copy(a, &lim, &limits.list) != 0) {
                return ADM_ENOMEM;
            }
            requests.text = limits.text = NULL;
        }
        for (size_t k = 0; k < lr->items[i].def_request.n; k++) {
            if (adm_rlist_set(a, &requests.list, lr->items[i].def_request.names[k],
                              &lr->items[i].def_request.qs[k]) != 0) {
                return ADM_ENOMEM;
            }
        }
        for (size_t k = 0; k < lr->items[i].def.n; k++) {
            if (adm_rlist_set(a, &limits.list, lr->items[i].def.names[k], &lr->items[i].def.qs[k]) != 0) {
                return ADM_ENOMEM;
            }
        }
    }
    if (!defaults_missing(adm_attrs_object(attrs), &requests.list, &limits.list)) {
        return 0; /* nothing to set: no copy of the object, which later readers would pay for */
    }
    if ((requests.text == NULL && defaults_text(a, &requests) != 0) ||
        (limits.text == NULL && defaults_text(a, &limits) != 0)) {
        return ADM_ENOMEM;
    }
    pod = adm_attrs_object(attrs);
    doc = adm_attrs_values_doc(attrs);
    if (pod == NULL || doc == NULL) {
        return ADM_ENOMEM;
    }
    ncontainers = yyjson_arr_size(adm_json_path(pod, "spec", lists[0], NULL)) +
                  yyjson_arr_size(adm_json_path(pod, "spec", lists[1], NULL));
    /* room for the parts and the "; " between them, after the prefix */
    parts = adm_arena_alloc(a, (4 * ncontainers + 2) * sizeof(*parts));
    if (parts == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t l = 0; l < 2; l++) {
        yyjson_val *c;
        yyjson_arr_iter it;

        yyjson_arr_iter_init(adm_json_path(pod, "spec", lists[l], NULL), &it);
        for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
            yyjson_mut_val *fresh = NULL;

            if (!yyjson_is_obj(c)) {
                continue;
            }
            err = merge_defaults(attrs, doc, c, &requests, "requests", "request", prefixes[l], parts, &nparts,
                                 &fresh);
            if (err == 0) {
                err = merge_defaults(attrs, doc, c, &limits, "limits", "limit", prefixes[l], parts, &nparts,
                                     &fresh);
            }
            if (err == 0 && fresh != NULL) {
                err = adm_attrs_edit_key(attrs, ADM_EDIT_SET, c, "resources", fresh);
            }
            if (err != 0) {
                return err;
            }
        }
    }
    if (nparts == 0) {
        return 0;
    }
    /* "LimitRanger plugin set: p0; p1; ...": the parts spread out with their separators */
    for (size_t i = nparts; i-- > 0;) {
        parts[2 * i + 1] = parts[i];
        parts[2 * i] = i > 0 ? "; " : "LimitRanger plugin set: ";
    }
    text = concat(a, parts, 2 * nparts);
    return text != NULL ? annotate(attrs, doc, pod, text) : ADM_ENOMEM;
}

static int admit_with(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *const *ranges, size_t n)
{
    if (n == 0 || strcmp(attrs->req->resource.resource, "pods") != 0) {
        return ADM_OK;
    }
    for (size_t i = 0; i < n; i++) {
        lr_t lr;
        int err = lr_read_once(attrs, ranges[i], &lr);

        if (err == ADM_EINVAL) {
            continue; /* kube-apiserver could not have decoded it: its informer never holds it */
        }
        if (err == 0) {
            err = apply_defaults(attrs, &lr);
        }
        if (err != 0) {
            return err == ADM_ENOMEM ? ADM_ENOMEM : adm_status_nomem(st);
        }
    }
    return ADM_OK;
}

static lr_phase_t admit_phase = {admit_with};

/* A phase over the namespace's LimitRanges: at once when they are known, else once the LIST answers. */
static int run_phase(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async, lr_phase_t *phase)
{
    lr_state_t *s = state;
    yyjson_val *const *ranges;
    size_t n;
    int rc;

    if (s != NULL && s->parsed != NULL && !exempt(attrs)) {
        lr_memo_t *m = memo(attrs);

        if (m != NULL) {
            m->parsed = s->parsed;
        }
    }
    rc = limit_ranges(s != NULL ? s->live : NULL, attrs, async, phase, &ranges, &n);

    if (rc == ADM_ENOMEM) {
        return adm_status_nomem(st);
    }
    return rc != ADM_OK ? rc : phase->run(attrs, st, ranges, n);
}

static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    return run_phase(state, attrs, st, async, &admit_phase);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return admit_async(state, attrs, st, NULL);
}

/* PodValidateLimitFunc / PersistentVolumeClaimValidateLimitFunc for one LimitRange. */
static int check_range(adm_attrs_t *attrs, yyjson_val *obj, bool is_pod, const lr_t *lr, adm_aggregate_t *agg,
                       const char **bad)
{
    adm_arena_t *a = attrs->arena;
    adm_rlist_t requests, none;
    lr_have_t h;
    int err;

    memset(&none, 0, sizeof(none));
    for (size_t i = 0; i < lr->n; i++) {
        const lr_item_t *li = &lr->items[i];

        if (!is_pod) {
            if (strcmp(li->type, "PersistentVolumeClaim") != 0) {
                continue;
            }
            err =
                adm_rlist_read(a, adm_json_path(obj, "spec", "resources", "requests", NULL), &requests, bad);
            if (err != 0) {
                return err;
            }
            have_init(&h, &requests, &none);
            for (size_t k = 0; k < li->min.n; k++) {
                const char *m = min_constraint(a, li->type, li->min.names[k], &li->min.qs[k], &h);

                if (m == NULL || *m != '\0') {
                    adm_aggregate_add(agg, m);
                }
            }
            for (size_t k = 0; k < li->max.n; k++) {
                const char *m = max_request_constraint(a, li->type, li->max.names[k], &li->max.qs[k], &h);

                if (m == NULL || *m != '\0') {
                    adm_aggregate_add(agg, m);
                }
            }
            continue;
        }
        if (strcmp(li->type, "Container") == 0) {
            const adm_kept_rlist_t *lists;
            size_t nc;

            /*
             * containers then init containers, read once for the request in the walk that sums the
             * pod's totals (which Pod items and ResourceQuota read); the first list (requests before
             * limits) that is not a ResourceList ends the check, as reading them in turn would
             */
            if (adm_pod_container_lists_kept(a, obj, &lists, &nc) != 0) {
                return ADM_ENOMEM;
            }
            for (size_t c = 0; c < nc; c++) {
                for (size_t w = 0; w < 2; w++) {
                    if (lists[2 * c + w].err != 0) {
                        *bad = lists[2 * c + w].bad;
                        return lists[2 * c + w].err;
                    }
                }
                check_item(a, agg, li, lists[2 * c].list, lists[2 * c + 1].list);
            }
        } else if (strcmp(li->type, "Pod") == 0) {
            const adm_rlist_t *preq, *plim;

            /* only read: the request's kept totals, not copies */
            err = adm_pod_resource_totals_kept(a, obj, &preq, &plim, bad);
            if (err != 0) {
                return err;
            }
            check_item(a, agg, li, preq, plim);
        }
    }
    return 0;
}

static int validate_with(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *const *ranges, size_t n)
{
    yyjson_val *obj;
    const char *resource = attrs->req->resource.resource;
    bool is_pod = strcmp(resource, "pods") == 0;

    if (n == 0 || (!is_pod && strcmp(resource, "persistentvolumeclaims") != 0)) {
        return ADM_OK;
    }
    obj = adm_attrs_object(attrs);
    if (obj == NULL) {
        return adm_status_nomem(st);
    }
    for (size_t i = 0; i < n; i++) {
        adm_aggregate_t agg;
        const char *bad = NULL, *text;
        lr_t lr;
        int err = lr_read_once(attrs, ranges[i], &lr);

        if (err == ADM_EINVAL) {
            continue; /* as in admit */
        }
        adm_aggregate_init(&agg, attrs->arena);
        if (err == 0) {
            err = check_range(attrs, obj, is_pod, &lr, &agg, &bad);
        }
        if (err == ADM_EINVAL) {
            return bad_quantity(st, attrs, bad);
        }
        if (err == ADM_ETOOBIG) {
            return adm_status_forbidden(st, attrs, "resource totals exceed what admitd can add up");
        }
        if (err != 0) {
            return adm_status_nomem(st);
        }
        text = adm_aggregate_text(&agg);
        if (text == NULL) {
            return adm_status_nomem(st);
        }
        if (*text != '\0') {
            return adm_status_forbidden(st, attrs, "%s", text);
        }
    }
    return ADM_OK;
}

static lr_phase_t validate_phase = {validate_with};

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    return run_phase(state, attrs, st, async, &validate_phase);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return validate_async(state, attrs, st, NULL);
}

static const char *const reads[] = {"/LimitRange", NULL};

const adm_plugin_t adm_plugin_limit_ranger = {
    .name = "LimitRanger",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .admit = admit,
    .validate = validate,
    .admit_async = admit_async,
    .validate_async = validate_async,
};

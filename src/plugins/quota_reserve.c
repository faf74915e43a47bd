/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota's reservation (include/adm/plugins/quota_reserve.h): a table of the namespaces that
 * have work, each with the batch being written and the requests queued behind it; a batch's
 * quotas, checks and calls live in an arena of its own (the requests may leave before it ends), a
 * request's answer in the request's arena. Answers are handed back only after every list is
 * consistent again, from a list local to that step, so a request that ends the chain (and with it
 * this state) in its callback leaves nothing behind that is touched afterwards.
 */
#include "adm/plugins/quota_reserve.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/live_call.h"

#include <stdlib.h>
#include <string.h>

#define NS_BUCKETS 64

typedef struct waiter_s waiter_t;
typedef struct ns_work_s ns_work_t;
typedef struct batch_s batch_t;

typedef struct wlist_s {
    waiter_t *head, *tail;
} wlist_t;

/* One request waiting for its namespace's batch; in the request's arena. */
struct waiter_s {
    adm_quota_reserver_t *r;
    adm_attrs_t *attrs;
    adm_async_t *async;
    ns_work_t *ns;
    wlist_t *list; /* the list it is on (queued, a batch's, decided), or NULL */
    waiter_t *prev, *next;
    uint64_t since_ms;
    uint64_t limit_ms; /* answered by then: its ADM_QUOTA_WAIT_MS, or its request's deadline */
    int rc;            /* ADM_AGAIN while it waits for the writes (kube's defaultDeny) */
    adm_status_t st;   /* the refusal, in the request's arena */
};

/* The last failure of a batch's calls (kube's lastErr), in the batch's arena. */
typedef struct api_err_s {
    int32_t code;
    const char *reason;  /* NULL: kube's empty reason */
    const char *message; /* NULL: none yet */
    const char *details; /* the Status's details as JSON text, or NULL */
} api_err_t;

/* One status PUT of a batch. */
typedef struct put_s {
    batch_t *b;
    size_t quota; /* index in b->quotas */
    adm_call_t *call;
    uint64_t started_ms;
    bool failed;
} put_t;

struct batch_s {
    adm_quota_reserver_t *r;
    ns_work_t *ns;
    adm_arena_t *arena; /* the batch itself, its quotas and its calls' answers */
    wlist_t waiters;
    adm_quota_t *quotas; /* the running quotas: each request's charge added as it passes */
    size_t n;
    int retries;          /* reads left after a failed write */
    uint64_t deadline_ms; /* the oldest request's ADM_QUOTA_WAIT_MS */
    put_t *puts;
    size_t nputs, outstanding;
    adm_call_t *list_call; /* the live re-read */
    uint64_t list_started_ms;
    api_err_t err;
};

struct ns_work_s {
    ns_work_t *next; /* in its bucket */
    batch_t *batch;  /* being written, or NULL */
    wlist_t queued;  /* the next batch (kube's dirtyWork) */
    char name[];
};

/* A quota as admitted last wrote it (kube's updatedQuotas). */
typedef struct written_s {
    char *ns, *name; /* NULL: a free slot */
    char *json;
    size_t len;
    uint64_t rv;
    uint64_t tick; /* when last used, for eviction */
} written_t;

struct adm_quota_reserver_s {
    adm_quota_check_fn check;
    void *arg;
    adm_quota_source_fn source;    /* the quotas of a namespace the cache has none in, or NULL */
    const adm_cluster_state_t *cs; /* the chain's (the same for every request): its API client */
    const adm_clock_t *clock;
    ns_work_t *buckets[NS_BUCKETS];
    wlist_t decided; /* answers to hand back */
    written_t written[ADM_QUOTA_WRITTEN_MAX];
    uint64_t tick;
    adm_arena_t *spare; /* a finished batch's arena, kept for the next batch */
    uv_timer_t timer;   /* for the earliest wait limit (set up with the first request) */
    bool has_timer;
    uint64_t timer_due; /* 0: not armed */
};

/* ---- lists ---- */

static void wl_push(wlist_t *l, waiter_t *w)
{
    w->list = l;
    w->next = NULL;
    w->prev = l->tail;
    if (l->tail != NULL) {
        l->tail->next = w;
    } else {
        l->head = w;
    }
    l->tail = w;
}

static void wl_remove(waiter_t *w)
{
    wlist_t *l = w->list;

    if (l == NULL) {
        return;
    }
    if (w->prev != NULL) {
        w->prev->next = w->next;
    } else {
        l->head = w->next;
    }
    if (w->next != NULL) {
        w->next->prev = w->prev;
    } else {
        l->tail = w->prev;
    }
    w->list = NULL;
    w->prev = w->next = NULL;
}

static waiter_t *wl_pop(wlist_t *l)
{
    waiter_t *w = l->head;

    if (w != NULL) {
        wl_remove(w);
    }
    return w;
}

/* Moves every waiter of from to the end of to. */
static void wl_move_all(wlist_t *to, wlist_t *from)
{
    waiter_t *w;

    for (w = wl_pop(from); w != NULL; w = wl_pop(from)) {
        wl_push(to, w);
    }
}

/* ---- small helpers ---- */

static uint64_t now_ms(const adm_quota_reserver_t *r)
{
    return r->clock->now_ms(r->clock->arg);
}

/* A resourceVersion as etcd's integer (APIObjectVersioner); 0 when it is not one. */
static uint64_t rv_number(const char *rv)
{
    uint64_t v = 0;

    if (rv == NULL || *rv == '\0') {
        return 0;
    }
    for (const char *p = rv; *p != '\0'; p++) {
        uint64_t d = (uint64_t)(*p - '0');

        if (*p < '0' || *p > '9' || v > (UINT64_MAX - d) / 10) {
            return 0;
        }
        v = v * 10 + d;
    }
    return v;
}

/* A name that goes into a URL as it is: what the API server accepts as an object's name. */
static bool url_name(const char *s)
{
    if (*s == '\0' || strlen(s) > 253) {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.')) {
            return false;
        }
    }
    return true;
}

static adm_api_client_t *api_of(const adm_quota_reserver_t *r)
{
    return r->cs != NULL ? adm_cluster_state_api(r->cs) : NULL;
}

/* ---- the quotas ---- */

int adm_quota_read(adm_arena_t *a, yyjson_val *obj, adm_quota_t *q)
{
    yyjson_val *meta = adm_json_get(obj, "metadata");
    const char *bad;
    int err;

    memset(q, 0, sizeof(*q));
    q->obj = obj;
    q->name = adm_json_str(meta, "name");
    q->rv = adm_json_str(meta, "resourceVersion");
    err = adm_rlist_read(a, adm_json_path(obj, "status", "hard", NULL), &q->hard, &bad);
    if (err == 0) {
        err = adm_rlist_read(a, adm_json_path(obj, "status", "used", NULL), &q->used, &bad);
    }
    q->usable = err == 0;
    return err == ADM_ENOMEM ? ADM_ENOMEM : 0;
}

static written_t *find_written(adm_quota_reserver_t *r, const char *ns, const char *name)
{
    for (size_t i = 0; i < ADM_QUOTA_WRITTEN_MAX; i++) {
        written_t *w = &r->written[i];

        if (w->ns != NULL && strcmp(w->ns, ns) == 0 && strcmp(w->name, name) == 0) {
            w->tick = ++r->tick;
            return w;
        }
    }
    return NULL;
}

static void forget_written(written_t *w)
{
    free(w->ns);
    free(w->name);
    free(w->json);
    memset(w, 0, sizeof(*w));
}

/* Keeps the quota the API server answered a write with; the least recently used one makes room. */
static void remember_written(adm_quota_reserver_t *r, const char *ns, yyjson_val *quota, adm_arena_t *a)
{
    yyjson_val *meta = adm_json_get(quota, "metadata");
    const char *name = adm_json_str(meta, "name");
    const char *json = adm_json_text(a, quota);
    written_t *w = find_written(r, ns, name);
    size_t len = strlen(json);

    if (*name == '\0' || strcmp(json, "?") == 0) {
        return;
    }
    if (w == NULL) {
        w = &r->written[0];
        for (size_t i = 0; i < ADM_QUOTA_WRITTEN_MAX && w->ns != NULL; i++) {
            if (r->written[i].ns == NULL || r->written[i].tick < w->tick) {
                w = &r->written[i];
            }
        }
    }
    forget_written(w);
    w->ns = strdup(ns);
    w->name = strdup(name);
    w->json = malloc(len + 1);
    if (w->ns == NULL || w->name == NULL || w->json == NULL) {
        forget_written(w); /* only a cache: the next batch may conflict and read again */
        return;
    }
    memcpy(w->json, json, len + 1);
    w->len = len;
    w->rv = rv_number(adm_json_str(meta, "resourceVersion"));
    w->tick = ++r->tick;
}

/*
 * checkCache: the version admitd wrote when it is newer than the cache's; a written one the cache
 * has caught up with is forgotten. Returns obj, the written version (parsed into a), or NULL when
 * out of memory.
 */
static yyjson_val *newest(adm_quota_reserver_t *r, const char *ns, yyjson_val *obj, adm_arena_t *a)
{
    yyjson_val *meta = adm_json_get(obj, "metadata");
    written_t *w = r != NULL ? find_written(r, ns, adm_json_str(meta, "name")) : NULL;
    yyjson_read_err err;
    yyjson_doc *d;

    if (w == NULL) {
        return obj;
    }
    if (rv_number(adm_json_str(meta, "resourceVersion")) >= w->rv) {
        forget_written(w);
        return obj;
    }
    d = adm_json_read(a, w->json, w->len, &err);
    return d != NULL ? yyjson_doc_get_root(d) : NULL;
}

int adm_quota_list(adm_quota_reserver_t *r, adm_attrs_t *attrs, adm_arena_t *a, adm_quota_t **out, size_t *n)
{
    const char *ns = attrs->req->namespace_;
    yyjson_val *const *items = adm_cluster_state_list(adm_plugin_cluster(attrs), "", "ResourceQuota", ns, n);
    adm_quota_t *q;

    *out = NULL;
    if (*n == 0 && r != NULL && r->source != NULL) {
        items = r->source(attrs, n);
    }
    if (*n == 0) {
        return 0;
    }
    q = adm_arena_calloc(a, *n, sizeof(*q));
    if (q == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < *n; i++) {
        yyjson_val *obj = newest(r, ns, items[i], a);

        if (obj == NULL || adm_quota_read(a, obj, &q[i]) != 0) {
            return ADM_ENOMEM;
        }
    }
    *out = q;
    return 0;
}

/* ---- the status PUT ---- */

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * The body of the status PUT: the quota as read (metadata with its resourceVersion, spec, status)
 * with status.used replaced by the running usage, names in order as Go writes a map. NULL when out
 * of memory.
 */
static const char *status_body(adm_arena_t *a, const adm_quota_t *q, size_t *len)
{
    yyjson_alc alc;
    yyjson_mut_doc *d;
    yyjson_mut_val *root, *status, *used;
    yyjson_obj_iter it;
    yyjson_val *k;
    const char **names = adm_arena_alloc(a, (q->used.n + 1) * sizeof(*names));

    adm_json_alc_init(&alc, a);
    d = yyjson_mut_doc_new(&alc);
    if (d == NULL || names == NULL) {
        return NULL;
    }
    root = yyjson_mut_obj(d);
    status = yyjson_mut_obj(d);
    used = yyjson_mut_obj(d);
    if (root == NULL || status == NULL || used == NULL ||
        !yyjson_mut_obj_add_str(d, root, "kind", "ResourceQuota") ||
        !yyjson_mut_obj_add_str(d, root, "apiVersion", "v1")) {
        return NULL;
    }
    yyjson_mut_doc_set_root(d, root);
    yyjson_obj_iter_init(q->obj, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        const char *key = yyjson_get_str(k);

        if (strcmp(key, "kind") != 0 && strcmp(key, "apiVersion") != 0 && strcmp(key, "status") != 0 &&
            !yyjson_mut_obj_add(root, yyjson_mut_str(d, key),
                                yyjson_val_mut_copy(d, yyjson_obj_iter_get_val(k)))) {
            return NULL;
        }
    }
    yyjson_obj_iter_init(adm_json_get(q->obj, "status"), &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        const char *key = yyjson_get_str(k);

        if (strcmp(key, "used") != 0 &&
            !yyjson_mut_obj_add(status, yyjson_mut_str(d, key),
                                yyjson_val_mut_copy(d, yyjson_obj_iter_get_val(k)))) {
            return NULL;
        }
    }
    memcpy(names, q->used.names, q->used.n * sizeof(*names));
    qsort(names, q->used.n, sizeof(*names), cmp_name);
    for (size_t i = 0; i < q->used.n; i++) {
        char buf[ADM_QTY_STR_MAX];

        adm_quantity_format(adm_rlist_find(&q->used, names[i]), buf, sizeof(buf));
        if (!yyjson_mut_obj_add_strcpy(d, used, names[i], buf)) {
            return NULL;
        }
    }
    if (!yyjson_mut_obj_add_val(d, status, "used", used) ||
        !yyjson_mut_obj_add_val(d, root, "status", status)) {
        return NULL;
    }
    return yyjson_mut_write_opts(d, 0, &alc, len, NULL);
}

/*
 * lastErr from a call's end: Go's url.Error for an answer that did not come, the API server's
 * Status as it is (a 409 Conflict: `Operation cannot be fulfilled on resourcequotas "q": the object
 * has been modified; ...`), else client-go's words for an answer without one.
 */
static void set_error(adm_quota_reserver_t *r, batch_t *b, const adm_call_result_t *res, yyjson_val *body,
                      const char *verb, const char *path)
{
    adm_api_client_t *api = api_of(r);
    adm_arena_t *a = b->arena;
    api_err_t e = {500, NULL, NULL, NULL};

    if (res->error != ADM_CALL_OK) {
        const char *why = res->error == ADM_CALL_TIMEOUT ? "context deadline exceeded"
                          : res->detail != NULL          ? res->detail
                                                         : "EOF";

        e.message = adm_arena_printf(a, "%s \"%s%s\": %s", verb,
                                     api != NULL ? adm_api_client_server(api) : "", path, why);
    } else if (strcmp(adm_json_str(body, "kind"), "Status") == 0 && *adm_json_str(body, "message") != '\0') {
        yyjson_val *code = adm_json_get(body, "code"), *details = adm_json_get(body, "details");

        e.code =
            yyjson_is_int(code) && yyjson_get_int(code) > 0 ? (int32_t)yyjson_get_int(code) : res->status;
        e.reason = *adm_json_str(body, "reason") != '\0' ? adm_json_str(body, "reason") : NULL;
        e.message = adm_json_str(body, "message");
        e.details = yyjson_is_obj(details) ? adm_json_text(a, details) : NULL;
    } else {
        e.code = res->status;
        e.message = adm_arena_printf(
            a, "an error on the server (\"unknown\") has prevented the request from succeeding (status %d)",
            res->status);
    }
    if (e.message == NULL) {
        e = (api_err_t){500, NULL, "out of memory", NULL};
    }
    b->err = e;
}

/* ---- decisions ---- */

static void decide(waiter_t *w, int rc, const adm_status_t *st)
{
    w->rc = rc;
    if (st != NULL) {
        w->st = *st;
    }
}

/* The batch's lastErr as this request's refusal, copied into its arena. */
static void decide_error(waiter_t *w, const api_err_t *e)
{
    adm_arena_t *a = w->attrs->arena;
    adm_status_t st = {0};
    yyjson_read_err err;
    yyjson_doc *d = NULL;

    st.code = e->code;
    st.reason = e->reason != NULL ? adm_arena_strndup(a, e->reason, strlen(e->reason)) : NULL;
    st.message = adm_arena_strndup(a, e->message, strlen(e->message));
    if (e->details != NULL) {
        d = adm_json_read(a, e->details, strlen(e->details), &err);
    }
    st.details = d != NULL ? yyjson_doc_get_root(d) : NULL;
    if (st.message == NULL || (e->reason != NULL && st.reason == NULL) || (e->details != NULL && d == NULL)) {
        decide(w, ADM_ENOMEM, NULL);
        return;
    }
    decide(w, ADM_DECLINED, &st);
}

static void on_timer(uv_timer_t *t);

static void decide_timeout(waiter_t *w)
{
    adm_status_t st = {0};
    int rc = adm_status_internal(&st, w->attrs->arena, "resource quota evaluation timed out");

    decide(w, rc, &st);
}

/* Every request still waiting for the writes gets lastErr (or the timeout when its wait is over). */
static void fail_waiting(adm_quota_reserver_t *r, batch_t *b)
{
    uint64_t now = now_ms(r);

    for (waiter_t *w = b->waiters.head; w != NULL; w = w->next) {
        if (w->rc != ADM_AGAIN) {
            continue;
        }
        if (now >= w->limit_ms) {
            decide_timeout(w);
        } else if (b->err.message != NULL) {
            decide_error(w, &b->err);
        } else {
            decide(w, ADM_ENOMEM, NULL);
        }
    }
}

static void fail_all_nomem(batch_t *b)
{
    for (waiter_t *w = b->waiters.head; w != NULL; w = w->next) {
        if (w->rc == ADM_AGAIN) {
            decide(w, ADM_ENOMEM, NULL);
        }
    }
}

/*
 * Hands back every decided answer. The list is taken over first, so a request that leaves during
 * another's callback unlinks itself from this local list, and nothing of r is touched once the
 * last callback (which may end the chain that owns r) has run.
 */
static void notify(adm_quota_reserver_t *r)
{
    wlist_t local = {0};
    waiter_t *w;

    wl_move_all(&local, &r->decided);
    for (w = wl_pop(&local); w != NULL; w = wl_pop(&local)) {
        adm_async_done(w->async, w->rc, w->rc == ADM_DECLINED ? &w->st : NULL);
    }
}

/* ---- namespaces ---- */

static size_t bucket_of(const char *ns)
{
    uint32_t h = 2166136261u;

    for (; *ns != '\0'; ns++) {
        h = (h ^ (unsigned char)*ns) * 16777619u;
    }
    return h % NS_BUCKETS;
}

static ns_work_t *ns_get(adm_quota_reserver_t *r, const char *name)
{
    ns_work_t **at = &r->buckets[bucket_of(name)];
    size_t len = strlen(name);
    ns_work_t *w;

    for (w = *at; w != NULL; w = w->next) {
        if (strcmp(w->name, name) == 0) {
            return w;
        }
    }
    w = calloc(1, sizeof(*w) + len + 1);
    if (w != NULL) {
        memcpy(w->name, name, len + 1);
        w->next = *at;
        *at = w;
    }
    return w;
}

static void ns_release_if_idle(adm_quota_reserver_t *r, ns_work_t *w)
{
    ns_work_t **at = &r->buckets[bucket_of(w->name)];

    if (w->batch != NULL || w->queued.head != NULL) {
        return;
    }
    while (*at != w) {
        at = &(*at)->next;
    }
    *at = w->next;
    free(w);
}

/* ---- batches ---- */

static void batch_arena_release(adm_quota_reserver_t *r, adm_arena_t *a)
{
    if (r->spare == NULL) {
        adm_arena_reset(a);
        r->spare = a;
    } else {
        adm_arena_destroy(a);
    }
}

/* The batch's requests are all decided: their answers wait in r->decided, the namespace is free. */
static void batch_end(adm_quota_reserver_t *r, batch_t *b)
{
    ns_work_t *ns = b->ns;

    fail_waiting(r, b); /* none should be left waiting; should one be, it is not admitted */
    wl_move_all(&r->decided, &b->waiters);
    ns->batch = NULL;
    batch_arena_release(r, b->arena);
}

static bool round_start(adm_quota_reserver_t *r, batch_t *b);

/* The batch of ns's queued requests with the quotas read; NULL when there is none left to run. */
static batch_t *batch_begin(adm_quota_reserver_t *r, ns_work_t *ns)
{
    adm_arena_t *a = r->spare != NULL ? r->spare : adm_arena_create(16384);
    uint64_t now = now_ms(r), oldest = now;
    batch_t *b = a != NULL ? adm_arena_calloc(a, 1, sizeof(*b)) : NULL;
    waiter_t *w;

    r->spare = a == r->spare ? NULL : r->spare;
    if (b == NULL) {
        for (w = wl_pop(&ns->queued); w != NULL; w = wl_pop(&ns->queued)) {
            decide(w, ADM_ENOMEM, NULL);
            wl_push(&r->decided, w);
        }
        if (a != NULL) {
            batch_arena_release(r, a);
        }
        return NULL;
    }
    b->r = r;
    b->ns = ns;
    b->arena = a;
    b->retries = ADM_QUOTA_RETRIES;
    ns->batch = b;
    wl_move_all(&b->waiters, &ns->queued);
    for (w = b->waiters.head; w != NULL; w = w->next) {
        oldest = w->since_ms < oldest ? w->since_ms : oldest;
    }
    b->deadline_ms = oldest + ADM_QUOTA_WAIT_MS;
    /*
     * The quotas as the first request sees them (every request holds the same cluster state). The
     * cache's objects are read only until the writes are sent, within this turn of the loop; the
     * names, which the answers need, are copied.
     */
    if (adm_quota_list(r, b->waiters.head->attrs, a, &b->quotas, &b->n) != 0) {
        fail_all_nomem(b);
        return b;
    }
    for (size_t i = 0; i < b->n; i++) {
        b->quotas[i].name = adm_arena_strndup(a, b->quotas[i].name, strlen(b->quotas[i].name));
        if (b->quotas[i].name == NULL) {
            fail_all_nomem(b);
            b->n = 0;
            break;
        }
    }
    return b;
}

/* How long a call may take: the live-call bound, within the batch's deadline. */
static uint64_t call_timeout(const adm_quota_reserver_t *r, const batch_t *b)
{
    uint64_t now = now_ms(r);

    if (b->deadline_ms <= now) {
        return 1;
    }
    return b->deadline_ms - now < ADM_LIVE_CALL_TIMEOUT_MS ? b->deadline_ms - now : ADM_LIVE_CALL_TIMEOUT_MS;
}

static bool after_writes(adm_quota_reserver_t *r, batch_t *b);
static void finish(adm_quota_reserver_t *r, batch_t *b);

/* Parses a call's answer into the batch's arena; NULL when it has no JSON body. */
static yyjson_val *answer_json(batch_t *b, const adm_call_result_t *res)
{
    yyjson_read_err err;
    yyjson_doc *d;

    if (res->error != ADM_CALL_OK || res->body_len == 0) {
        return NULL;
    }
    d = adm_json_read(b->arena, (const char *)res->body, res->body_len, &err);
    return d != NULL ? yyjson_doc_get_root(d) : NULL;
}

static const char *put_path(batch_t *b, const adm_quota_t *q)
{
    return adm_arena_printf(b->arena, "/api/v1/namespaces/%s/resourcequotas/%s/status", b->ns->name, q->name);
}

static void on_put(const adm_call_result_t *res, void *arg)
{
    put_t *p = arg;
    batch_t *b = p->b;
    adm_quota_reserver_t *r = b->r;
    yyjson_val *body = answer_json(b, res);

    p->call = NULL;
    b->outstanding--;
    if (res->error == ADM_CALL_OK && res->status / 100 == 2) {
        if (body != NULL) {
            remember_written(r, b->ns->name, body, b->arena);
        }
    } else {
        const char *path = put_path(b, &b->quotas[p->quota]);

        if (res->error == ADM_CALL_OK && res->status == 401 && api_of(r) != NULL) {
            adm_api_unauthorized(api_of(r), p->started_ms);
        }
        p->failed = true;
        set_error(r, b, res, body, "Put", path != NULL ? path : "");
    }
    if (b->outstanding == 0 && after_writes(r, b)) {
        finish(r, b);
    }
}

/*
 * One round of kube's checkQuotas: each request still waiting is checked against the running
 * quotas (a refusal is its answer; a request that charges nothing, or a dry run, is admitted), then
 * every quota that changed is written. Returns true when the batch is over (nothing to write).
 */
static bool round_start(adm_quota_reserver_t *r, batch_t *b)
{
    adm_api_client_t *api = api_of(r);
    size_t nchanged = 0;

    for (size_t i = 0; i < b->n; i++) {
        b->quotas[i].changed = false;
    }
    for (waiter_t *w = b->waiters.head; w != NULL; w = w->next) {
        adm_status_t st = {0};
        bool charged = false;
        int rc;

        if (w->rc != ADM_AGAIN) {
            continue;
        }
        rc = r->check(r->arg, w->attrs, b->arena, b->quotas, b->n, &st, &charged);
        if (rc != ADM_OK) {
            decide(w, rc, &st);
        } else if (!charged || w->attrs->req->dry_run) {
            decide(w, ADM_OK, NULL);
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        nchanged += b->quotas[i].changed;
    }
    if (nchanged == 0) {
        return true;
    }
    b->puts = adm_arena_calloc(b->arena, nchanged, sizeof(*b->puts));
    if (b->puts == NULL) {
        fail_all_nomem(b);
        return true;
    }
    b->nputs = 0;
    b->outstanding = 0;
    for (size_t i = 0; i < b->n; i++) {
        put_t *p = &b->puts[b->nputs];
        const char *path, *body = NULL;
        size_t len = 0;

        if (!b->quotas[i].changed) {
            continue;
        }
        b->nputs++;
        p->b = b;
        p->quota = i;
        path = url_name(b->quotas[i].name) ? put_path(b, &b->quotas[i]) : NULL;
        body = path != NULL ? status_body(b->arena, &b->quotas[i], &len) : NULL;
        if (path != NULL && body != NULL && api != NULL) {
            p->call = adm_api_put(api, path, body, len, call_timeout(r, b), on_put, p, &p->started_ms);
        }
        if (p->call == NULL) {
            p->failed = true;
            b->err = (api_err_t){500, NULL, "out of memory", NULL};
            if (api == NULL) {
                b->err.message = "no connection to the API server";
            } else if (!url_name(b->quotas[i].name)) {
                b->err.message = "the quota's name cannot be written in a URL";
            }
            continue;
        }
        b->outstanding++;
    }
    return b->outstanding == 0 ? after_writes(r, b) : false;
}

static void on_list(const adm_call_result_t *res, void *arg);

/*
 * Every write has answered. All went through: the requests waiting for them are admitted. Some
 * failed: with retries and time left, the quotas are read again live (kube reads its cache) and
 * the ones whose write failed are checked again; otherwise the requests waiting get lastErr.
 * Returns true when the batch is over.
 */
static bool after_writes(adm_quota_reserver_t *r, batch_t *b)
{
    adm_api_client_t *api = api_of(r);
    bool failed = false;
    const char *path;

    for (size_t i = 0; i < b->nputs; i++) {
        failed = failed || b->puts[i].failed;
    }
    if (!failed) {
        for (waiter_t *w = b->waiters.head; w != NULL; w = w->next) {
            if (w->rc == ADM_AGAIN) {
                decide(w, ADM_OK, NULL);
            }
        }
        return true;
    }
    if (b->retries <= 0 || now_ms(r) >= b->deadline_ms || api == NULL) {
        fail_waiting(r, b);
        return true;
    }
    path = adm_arena_printf(b->arena, "/api/v1/namespaces/%s/resourcequotas", b->ns->name);
    b->list_call =
        path != NULL ? adm_api_get(api, path, call_timeout(r, b), on_list, b, &b->list_started_ms) : NULL;
    if (b->list_call == NULL) {
        fail_waiting(r, b);
        return true;
    }
    return false;
}

/* Whether name is one of the quotas whose write failed in the round that just ended. */
static bool write_failed(const batch_t *b, const char *name)
{
    for (size_t i = 0; i < b->nputs; i++) {
        if (b->puts[i].failed && strcmp(b->quotas[b->puts[i].quota].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The live re-read answered: the new versions of the quotas whose write failed, checked again. */
static void on_list(const adm_call_result_t *res, void *arg)
{
    batch_t *b = arg;
    adm_quota_reserver_t *r = b->r;
    yyjson_val *body = answer_json(b, res), *items = adm_json_get(body, "items");
    size_t nitems = yyjson_arr_size(items), n = 0;
    adm_quota_t *quotas;
    bool over = true;

    b->list_call = NULL;
    if (res->error == ADM_CALL_OK && res->status == 401 && api_of(r) != NULL) {
        adm_api_unauthorized(api_of(r), b->list_started_ms);
    }
    if (res->error != ADM_CALL_OK || res->status / 100 != 2 || !yyjson_is_arr(items)) {
        /* kube keeps the write's error as lastErr when the re-read fails */
        fail_waiting(r, b);
        finish(r, b);
        return;
    }
    quotas = adm_arena_calloc(b->arena, nitems + 1, sizeof(*quotas));
    if (quotas == NULL) {
        fail_all_nomem(b);
        finish(r, b);
        return;
    }
    /* a quota removed since is not checked again: after all, it was removed */
    for (size_t i = 0; i < nitems; i++) {
        yyjson_val *item = yyjson_arr_get(items, i);

        if (!write_failed(b, adm_json_str(adm_json_get(item, "metadata"), "name"))) {
            continue;
        }
        if (adm_quota_read(b->arena, item, &quotas[n]) != 0) {
            fail_all_nomem(b);
            finish(r, b);
            return;
        }
        n++;
    }
    b->quotas = quotas;
    b->n = n;
    b->retries--;
    over = round_start(r, b);
    if (over) {
        finish(r, b);
    }
}

/*
 * Runs ns's queued requests as batches until one has to wait for the API server or none are left;
 * an idle namespace is forgotten. Answers are left in r->decided.
 */
static void kick(adm_quota_reserver_t *r, ns_work_t *ns)
{
    while (ns->batch == NULL && ns->queued.head != NULL) {
        batch_t *b = batch_begin(r, ns);

        if (b != NULL && round_start(r, b)) {
            batch_end(r, b);
        }
    }
    ns_release_if_idle(r, ns);
}

/* A batch whose calls are over: its answers, then the namespace's next batch, then the callbacks. */
static void finish(adm_quota_reserver_t *r, batch_t *b)
{
    ns_work_t *ns = b->ns;

    batch_end(r, b);
    kick(r, ns);
    notify(r);
}

/* The earliest wait limit of the requests still waiting, or UINT64_MAX. */
static uint64_t earliest_limit(const adm_quota_reserver_t *r)
{
    uint64_t min = UINT64_MAX;

    for (size_t i = 0; i < NS_BUCKETS; i++) {
        for (const ns_work_t *ns = r->buckets[i]; ns != NULL; ns = ns->next) {
            for (const waiter_t *w = ns->queued.head; w != NULL; w = w->next) {
                min = w->limit_ms < min ? w->limit_ms : min;
            }
            for (const waiter_t *w = ns->batch != NULL ? ns->batch->waiters.head : NULL; w != NULL;
                 w = w->next) {
                min = w->rc == ADM_AGAIN && w->limit_ms < min ? w->limit_ms : min;
            }
        }
    }
    return min;
}

/* Arms the timer for due, unless it is already due no later. */
static void arm_for(adm_quota_reserver_t *r, uint64_t due)
{
    uint64_t now = now_ms(r);

    if (!r->has_timer || due == UINT64_MAX || (r->timer_due != 0 && r->timer_due <= due)) {
        return;
    }
    r->timer_due = due;
    uv_timer_start(&r->timer, on_timer, due > now ? due - now : 0, 0);
}

/* Takes w out of its list as timed out, its answer to be handed back. */
static void time_out(adm_quota_reserver_t *r, waiter_t *w)
{
    wl_remove(w);
    decide_timeout(w);
    wl_push(&r->decided, w);
}

/*
 * Requests whose wait is over are answered as kube answers a waiter after its 10 s (500 "resource
 * quota evaluation timed out"), or at their own deadline when that comes first; their batch goes
 * on without them, as kube's work does.
 */
static void on_timer(uv_timer_t *t)
{
    adm_quota_reserver_t *r = t->data;
    uint64_t now = now_ms(r);

    r->timer_due = 0;
    for (size_t i = 0; i < NS_BUCKETS; i++) {
        ns_work_t *ns = r->buckets[i];

        while (ns != NULL) {
            ns_work_t *next_ns = ns->next;
            waiter_t *w = ns->queued.head;

            while (w != NULL) {
                waiter_t *next = w->next;

                if (w->limit_ms <= now) {
                    time_out(r, w);
                }
                w = next;
            }
            w = ns->batch != NULL ? ns->batch->waiters.head : NULL;
            while (w != NULL) {
                waiter_t *next = w->next;

                if (w->rc == ADM_AGAIN && w->limit_ms <= now) {
                    time_out(r, w);
                }
                w = next;
            }
            ns_release_if_idle(r, ns);
            ns = next_ns;
        }
    }
    arm_for(r, earliest_limit(r));
    notify(r);
}

/* The chain gave up on the request (deadline, closed connection): it leaves whatever list it is on. */
static void on_cancel(void *arg)
{
    waiter_t *w = arg;
    ns_work_t *ns = w->ns;
    bool queued = w->list == &ns->queued;

    wl_remove(w);
    if (queued) {
        ns_release_if_idle(w->r, ns);
    }
}

int adm_quota_reserver_submit(adm_quota_reserver_t *r, adm_attrs_t *attrs, adm_async_t *async)
{
    waiter_t *w = adm_arena_calloc(attrs->arena, 1, sizeof(*w));
    ns_work_t *ns;

    if (w == NULL) {
        return ADM_ENOMEM;
    }
    if (r->cs == NULL) {
        adm_api_client_t *api = adm_cluster_state_api(adm_plugin_cluster(attrs));

        r->cs = adm_plugin_cluster(attrs);
        r->clock = attrs->clock;
        if (api != NULL && uv_timer_init(adm_api_client_loop(api), &r->timer) == 0) {
            r->timer.data = r;
            uv_unref((uv_handle_t *)&r->timer); /* the requests keep the loop running, not this */
            r->has_timer = true;
        }
    }
    ns = ns_get(r, attrs->req->namespace_);
    if (ns == NULL) {
        return ADM_ENOMEM;
    }
    w->r = r;
    w->attrs = attrs;
    w->async = async;
    w->ns = ns;
    w->since_ms = now_ms(r);
    w->limit_ms = w->since_ms + ADM_QUOTA_WAIT_MS < async->deadline_ms ? w->since_ms + ADM_QUOTA_WAIT_MS
                                                                       : async->deadline_ms;
    w->rc = ADM_AGAIN;
    wl_push(&ns->queued, w);
    async->cancel = on_cancel;
    async->cancel_arg = w;
    if (ns->batch == NULL) {
        kick(r, ns);
        notify(r);
    }
    if (w->list != NULL) {
        arm_for(r, w->limit_ms); /* it waits: in a batch's writes or in the queue */
    }
    return ADM_AGAIN;
}

adm_quota_reserver_t *adm_quota_reserver_create(adm_quota_check_fn check, void *arg)
{
    adm_quota_reserver_t *r = calloc(1, sizeof(*r));

    if (r != NULL) {
        r->check = check;
        r->arg = arg;
    }
    return r;
}

static void on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

void adm_quota_reserver_free(adm_quota_reserver_t *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < NS_BUCKETS; i++) {
        ns_work_t *ns = r->buckets[i];

        while (ns != NULL) {
            ns_work_t *next = ns->next;

            if (ns->batch != NULL) {
                for (size_t k = 0; k < ns->batch->nputs; k++) {
                    adm_call_cancel(ns->batch->puts[k].call);
                }
                adm_call_cancel(ns->batch->list_call);
                adm_arena_destroy(ns->batch->arena);
            }
            free(ns);
            ns = next;
        }
    }
    for (size_t i = 0; i < ADM_QUOTA_WRITTEN_MAX; i++) {
        forget_written(&r->written[i]);
    }
    adm_arena_destroy(r->spare);
    if (r->has_timer) {
        uv_timer_stop(&r->timer);
        uv_close((uv_handle_t *)&r->timer, on_timer_closed); /* r goes with it */
        return;
    }
    free(r);
}

void adm_quota_reserver_set_source(adm_quota_reserver_t *r, adm_quota_source_fn fn)
{
    r->source = fn;
}

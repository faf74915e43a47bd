/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer caches: per kind, a chained hash of namespace/name to a compact immutable copy of
 * the object, an arrival-order list for listing, and lazily built list arrays; plus the epoch
 * machinery that defers every free until no request can hold the pointer (see the header).
 */
#include "adm/cluster/cluster_store.h"

#include "adm/base/error.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define MIN_BUCKETS 64u
/* kubectl apply's copy of the object as last applied: no plugin reads it, and it is often the
 * largest annotation */
#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/*
 * The kinds of which the plugins read only part (what every kind drops is in copy_metadata): the
 * top-level fields not kept, and of status the members kept when status is kept in part.
 * PodSecurity reads a pod's metadata and spec, never its status, which is a quarter or more of a
 * running pod. PodTopologyLabels reads a Node's labels and PodResizeValidator its
 * status.allocatable, never the rest of its status (conditions, addresses, the list of every
 * image on the node: most of a Node).
 */
static const char *const status_drops[] = {"status", NULL};
static const char *const node_status_keeps[] = {"allocatable", NULL};
static const struct {
    const char *group, *kind;
    const char *const *drops;
    const char *const *status_keeps; /* NULL: status is kept whole (unless dropped) */
} partial_kinds[] = {
    {"", "Pod", status_drops, NULL},
    {"", "Node", NULL, node_status_keeps},
};

/* A block whose free waits for the pins that may see it. First member of what it heads. */
typedef struct retired_s {
    struct retired_s *next;
    uint64_t epoch;
    void (*free_fn)(struct retired_s *r);
} retired_t;

typedef struct obj_s {
    retired_t r;
    yyjson_doc *doc;
    size_t bytes;
} obj_t;

typedef struct larr_s {
    retired_t r;
    size_t n;
    yyjson_val *items[];
} larr_t;

typedef struct entry_s {
    struct entry_s *next;                    /* bucket chain */
    struct entry_s *order_prev, *order_next; /* arrival order */
    uint64_t hash;
    obj_t *obj;
    const char *name; /* into key, after the namespace's NUL */
    char key[];       /* namespace NUL name NUL */
} entry_t;

typedef struct lcache_s {
    struct lcache_s *next;
    bool all; /* every namespace */
    larr_t *arr;
    char ns[];
} lcache_t;

struct adm_kind_store_s {
    adm_cluster_store_t *store;
    char *group, *kind;
    const char *const *drops;        /* top-level fields not kept (partial_kinds), or NULL */
    const char *const *status_keeps; /* the members of status kept (partial_kinds), or NULL: all */
    bool namespaced;
    bool synced;
    entry_t **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    size_t bytes;
    entry_t *first, *last;
    lcache_t *lists;
};

struct adm_cluster_store_s {
    adm_kind_store_t **kinds;
    size_t nkinds;
    uint64_t epoch;
    adm_cluster_pin_t *pin_head, *pin_tail; /* oldest first */
    retired_t *ret_head, *ret_tail;         /* oldest first */
    size_t nretired;
    struct adm_api_client_s *api; /* borrowed from the informer; NULL once it stops */
};

static uint64_t hash_key(const char *ns, const char *name)
{
    uint64_t h = FNV_OFFSET;

    for (const unsigned char *p = (const unsigned char *)ns; *p != '\0'; p++) {
        h = (h ^ *p) * FNV_PRIME;
    }
    h = (h ^ 0xff) * FNV_PRIME;
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
        h = (h ^ *p) * FNV_PRIME;
    }
    return h;
}

static void free_obj(retired_t *r)
{
    obj_t *o = (obj_t *)r;

    yyjson_doc_free(o->doc);
    free(o);
}

static void free_larr(retired_t *r)
{
    free(r);
}

static void reclaim(adm_cluster_store_t *s)
{
    while (s->ret_head != NULL && (s->pin_head == NULL || s->pin_head->epoch > s->ret_head->epoch)) {
        retired_t *r = s->ret_head;

        s->ret_head = r->next;
        if (s->ret_head == NULL) {
            s->ret_tail = NULL;
        }
        s->nretired--;
        r->free_fn(r);
    }
}

/* r leaves the store now: pins taken so far may hold it, later ones cannot. */
static void retire(adm_cluster_store_t *s, retired_t *r)
{
    if (s->pin_head == NULL) {
        r->free_fn(r);
        return;
    }
    r->epoch = s->epoch++;
    r->next = NULL;
    if (s->ret_tail != NULL) {
        s->ret_tail->next = r;
    } else {
        s->ret_head = r;
    }
    s->ret_tail = r;
    s->nretired++;
}

void adm_cluster_store_pin(adm_cluster_store_t *s, adm_cluster_pin_t *p)
{
    p->epoch = s->epoch;
    p->next = NULL;
    p->prev = s->pin_tail;
    if (s->pin_tail != NULL) {
        s->pin_tail->next = p;
    } else {
        s->pin_head = p;
    }
    s->pin_tail = p;
    p->pinned = true;
}

void adm_cluster_store_unpin(adm_cluster_store_t *s, adm_cluster_pin_t *p)
{
    if (!p->pinned) {
        return;
    }
    if (p->prev != NULL) {
        p->prev->next = p->next;
    } else {
        s->pin_head = p->next;
    }
    if (p->next != NULL) {
        p->next->prev = p->prev;
    } else {
        s->pin_tail = p->prev;
    }
    p->pinned = false;
    p->prev = p->next = NULL;
    reclaim(s);
}

size_t adm_cluster_store_retired(const adm_cluster_store_t *s)
{
    return s->nretired;
}

adm_cluster_store_t *adm_cluster_store_create(void)
{
    return calloc(1, sizeof(adm_cluster_store_t));
}

void adm_cluster_store_set_api(adm_cluster_store_t *s, struct adm_api_client_s *api)
{
    s->api = api;
}

struct adm_api_client_s *adm_cluster_store_api(const adm_cluster_store_t *s)
{
    return s->api;
}

static void drop_lists(adm_kind_store_t *k)
{
    lcache_t *l = k->lists;

    while (l != NULL) {
        lcache_t *next = l->next;

        retire(k->store, &l->arr->r);
        free(l);
        l = next;
    }
    k->lists = NULL;
}

static void free_entries(adm_kind_store_t *k, entry_t *first)
{
    entry_t *e = first;

    while (e != NULL) {
        entry_t *next = e->order_next;

        retire(k->store, &e->obj->r);
        free(e);
        e = next;
    }
}

void adm_cluster_store_free(adm_cluster_store_t *s)
{
    if (s == NULL) {
        return;
    }
    s->pin_head = s->pin_tail = NULL; /* no request remains: everything goes now */
    for (size_t i = 0; i < s->nkinds; i++) {
        adm_kind_store_t *k = s->kinds[i];

        drop_lists(k);
        free_entries(k, k->first);
        free(k->buckets);
        free(k->group);
        free(k->kind);
        free(k);
    }
    reclaim(s);
    free(s->kinds);
    free(s);
}

adm_kind_store_t *adm_cluster_store_kind(adm_cluster_store_t *s, const char *group, const char *kind,
                                         bool namespaced)
{
    adm_kind_store_t *k, **kinds;

    for (size_t i = 0; i < s->nkinds; i++) {
        if (strcmp(s->kinds[i]->group, group) == 0 && strcmp(s->kinds[i]->kind, kind) == 0) {
            return s->kinds[i];
        }
    }
    kinds = realloc(s->kinds, (s->nkinds + 1) * sizeof(*kinds));
    if (kinds == NULL) {
        return NULL;
    }
    s->kinds = kinds;
    k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return NULL;
    }
    k->store = s;
    k->namespaced = namespaced;
    for (size_t i = 0; i < sizeof(partial_kinds) / sizeof(partial_kinds[0]); i++) {
        if (strcmp(partial_kinds[i].group, group) == 0 && strcmp(partial_kinds[i].kind, kind) == 0) {
            k->drops = partial_kinds[i].drops;
            k->status_keeps = partial_kinds[i].status_keeps;
        }
    }
    k->group = strdup(group);
    k->kind = strdup(kind);
    k->buckets = calloc(MIN_BUCKETS, sizeof(*k->buckets));
    k->nbuckets = MIN_BUCKETS;
    if (k->group == NULL || k->kind == NULL || k->buckets == NULL) {
        free(k->group);
        free(k->kind);
        free(k->buckets);
        free(k);
        return NULL;
    }
    s->kinds[s->nkinds++] = k;
    return k;
}

static adm_kind_store_t *find_kind(const adm_cluster_store_t *s, const char *group, const char *kind)
{
    if (s == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < s->nkinds; i++) {
        adm_kind_store_t *k = s->kinds[i];

        if (k->synced && strcmp(k->kind, kind) == 0 && strcmp(k->group, group != NULL ? group : "") == 0) {
            return k;
        }
    }
    return NULL;
}

bool adm_cluster_store_serves(const adm_cluster_store_t *s, const char *group, const char *kind)
{
    return find_kind(s, group, kind) != NULL;
}

bool adm_kind_store_synced(const adm_kind_store_t *k)
{
    return k->synced;
}

size_t adm_kind_store_count(const adm_kind_store_t *k)
{
    return k->count;
}

size_t adm_kind_store_bytes(const adm_kind_store_t *k)
{
    return k->bytes + k->nbuckets * sizeof(entry_t *);
}

static bool dropped(const char *const *drops, yyjson_val *key)
{
    for (size_t i = 0; drops != NULL && drops[i] != NULL; i++) {
        if (yyjson_equals_str(key, drops[i])) {
            return true;
        }
    }
    return false;
}

/*
 * The members of obj into a new object of m, but those named in drops (keep false) or only those
 * (keep true); NULL when out of memory.
 */
static yyjson_mut_val *copy_members(yyjson_mut_doc *m, yyjson_val *obj, const char *const *drops, bool keep)
{
    yyjson_mut_val *out = yyjson_mut_obj(m);
    yyjson_obj_iter it;
    yyjson_val *key;

    if (out == NULL || !yyjson_obj_iter_init(obj, &it)) {
        return out;
    }
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        if (dropped(drops, key) == keep &&
            !yyjson_mut_obj_add(out, yyjson_val_mut_copy(m, key),
                                yyjson_val_mut_copy(m, yyjson_obj_iter_get_val(key)))) {
            return NULL;
        }
    }
    return out;
}

/* metadata without managedFields, and its annotations without kubectl's last-applied copy. */
static yyjson_mut_val *copy_metadata(yyjson_mut_doc *m, yyjson_val *meta)
{
    static const char *const annotation_drops[] = {LAST_APPLIED, NULL};
    yyjson_mut_val *out = yyjson_mut_obj(m);
    yyjson_obj_iter it;
    yyjson_val *key;

    yyjson_obj_iter_init(meta, &it);
    for (key = yyjson_obj_iter_next(&it); out != NULL && key != NULL; key = yyjson_obj_iter_next(&it)) {
        yyjson_val *val = yyjson_obj_iter_get_val(key);
        yyjson_mut_val *kept;

        if (yyjson_equals_str(key, "managedFields")) {
            continue;
        }
        kept = yyjson_equals_str(key, "annotations") && yyjson_is_obj(val)
                   ? copy_members(m, val, annotation_drops, false)
                   : yyjson_val_mut_copy(m, val);
        if (kept == NULL || !yyjson_mut_obj_add(out, yyjson_val_mut_copy(m, key), kept)) {
            out = NULL;
        }
    }
    return out;
}

/*
 * A compact immutable copy of obj with what k keeps: every top-level field but k's drops,
 * metadata through copy_metadata, and of status k's status_keeps when it has them.
 */
static obj_t *copy_object(const adm_kind_store_t *k, yyjson_val *obj)
{
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *root = NULL;
    yyjson_obj_iter it;
    yyjson_val *key;
    obj_t *o;

    if (m == NULL) {
        return NULL;
    }
    if (yyjson_obj_iter_init(obj, &it)) {
        root = yyjson_mut_obj(m);
    }
    for (key = root != NULL ? yyjson_obj_iter_next(&it) : NULL; root != NULL && key != NULL;
         key = yyjson_obj_iter_next(&it)) {
        yyjson_val *val = yyjson_obj_iter_get_val(key);
        yyjson_mut_val *kept;

        if (dropped(k->drops, key)) {
            continue;
        }
        if (yyjson_equals_str(key, "metadata") && yyjson_is_obj(val)) {
            kept = copy_metadata(m, val);
        } else if (k->status_keeps != NULL && yyjson_equals_str(key, "status") && yyjson_is_obj(val)) {
            kept = copy_members(m, val, k->status_keeps, true);
        } else {
            kept = yyjson_val_mut_copy(m, val);
        }
        if (kept == NULL || !yyjson_mut_obj_add(root, yyjson_val_mut_copy(m, key), kept)) {
            root = NULL;
        }
    }
    if (root == NULL) {
        yyjson_mut_doc_free(m);
        return NULL;
    }
    yyjson_mut_doc_set_root(m, root);
    o = calloc(1, sizeof(*o));
    if (o != NULL) {
        o->doc = yyjson_mut_doc_imut_copy(m, NULL);
        if (o->doc == NULL) {
            free(o);
            o = NULL;
        }
    }
    yyjson_mut_doc_free(m);
    if (o != NULL) {
        o->r.free_fn = free_obj;
        o->bytes = sizeof(*o) + sizeof(yyjson_doc) + o->doc->val_read * sizeof(yyjson_val) + o->doc->dat_read;
    }
    return o;
}

static const char *meta_str(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_obj_get(yyjson_obj_get(obj, "metadata"), key);

    return yyjson_is_str(v) ? yyjson_get_str(v) : NULL;
}

static entry_t *find_entry(const adm_kind_store_t *k, const char *ns, const char *name, uint64_t h,
                           entry_t ***slot)
{
    entry_t **p = &k->buckets[h & (k->nbuckets - 1)];

    for (; *p != NULL; p = &(*p)->next) {
        if ((*p)->hash == h && strcmp((*p)->key, ns) == 0 && strcmp((*p)->name, name) == 0) {
            break;
        }
    }
    if (slot != NULL) {
        *slot = p;
    }
    return *p;
}

static void grow(adm_kind_store_t *k)
{
    size_t n = k->nbuckets * 2;
    entry_t **b = calloc(n, sizeof(*b));

    if (b == NULL) {
        return; /* longer chains, still correct */
    }
    for (entry_t *e = k->first; e != NULL; e = e->order_next) {
        e->next = b[e->hash & (n - 1)];
        b[e->hash & (n - 1)] = e;
    }
    free(k->buckets);
    k->buckets = b;
    k->nbuckets = n;
}

static size_t entry_size(const char *ns, const char *name)
{
    return sizeof(entry_t) + strlen(ns) + strlen(name) + 2;
}

/* Adds a new entry at the end of the arrival order; the caller checked it is absent. */
static int insert(adm_kind_store_t *k, const char *ns, const char *name, uint64_t h, obj_t *o)
{
    size_t nslen = strlen(ns), size = entry_size(ns, name);
    entry_t *e = malloc(size);

    if (e == NULL) {
        return ADM_ENOMEM;
    }
    memcpy(e->key, ns, nslen + 1);
    memcpy(e->key + nslen + 1, name, strlen(name) + 1);
    e->name = e->key + nslen + 1;
    e->hash = h;
    e->obj = o;
    e->order_next = NULL;
    e->order_prev = k->last;
    if (k->last != NULL) {
        k->last->order_next = e;
    } else {
        k->first = e;
    }
    k->last = e;
    e->next = k->buckets[h & (k->nbuckets - 1)];
    k->buckets[h & (k->nbuckets - 1)] = e;
    k->count++;
    k->bytes += size + o->bytes;
    if (k->count > k->nbuckets) {
        grow(k);
    }
    return 0;
}

int adm_kind_store_put(adm_kind_store_t *k, yyjson_val *obj)
{
    const char *name = meta_str(obj, "name");
    const char *ns = k->namespaced ? meta_str(obj, "namespace") : "";
    uint64_t h;
    entry_t *e;
    obj_t *o;
    int rc;

    if (name == NULL || name[0] == '\0') {
        return ADM_EINVAL;
    }
    if (ns == NULL) {
        ns = "";
    }
    o = copy_object(k, obj);
    if (o == NULL) {
        return ADM_ENOMEM;
    }
    h = hash_key(ns, name);
    e = find_entry(k, ns, name, h, NULL);
    if (e != NULL) {
        k->bytes = k->bytes - e->obj->bytes + o->bytes;
        retire(k->store, &e->obj->r);
        e->obj = o;
        drop_lists(k);
        return 0;
    }
    rc = insert(k, ns, name, h, o);
    if (rc != 0) {
        free_obj(&o->r);
        return rc;
    }
    drop_lists(k);
    return 0;
}

void adm_kind_store_delete(adm_kind_store_t *k, const char *namespace_, const char *name)
{
    const char *ns = k->namespaced && namespace_ != NULL ? namespace_ : "";
    uint64_t h = hash_key(ns, name);
    entry_t **slot, *e = find_entry(k, ns, name, h, &slot);

    if (e == NULL) {
        return;
    }
    *slot = e->next;
    if (e->order_prev != NULL) {
        e->order_prev->order_next = e->order_next;
    } else {
        k->first = e->order_next;
    }
    if (e->order_next != NULL) {
        e->order_next->order_prev = e->order_prev;
    } else {
        k->last = e->order_prev;
    }
    k->count--;
    k->bytes -= entry_size(e->key, e->name) + e->obj->bytes;
    retire(k->store, &e->obj->r);
    free(e);
    drop_lists(k);
}

int adm_kind_store_replace(adm_kind_store_t *k, yyjson_val *const *pages, size_t npages)
{
    adm_kind_store_t fresh = {
        .store = k->store, .drops = k->drops, .status_keeps = k->status_keeps, .namespaced = k->namespaced};
    yyjson_val *it;
    size_t i, n;
    int rc = 0;

    fresh.nbuckets = MIN_BUCKETS;
    fresh.buckets = calloc(fresh.nbuckets, sizeof(entry_t *));
    if (fresh.buckets == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t p = 0; p < npages && rc == 0; p++) {
        yyjson_arr_foreach(pages[p], i, n, it)
        {
            rc = adm_kind_store_put(&fresh, it);
            if (rc != 0) {
                break;
            }
        }
    }
    if (rc != 0) {
        /* nothing of fresh was ever visible: free it at once */
        for (entry_t *e = fresh.first, *next; e != NULL; e = next) {
            next = e->order_next;
            free_obj(&e->obj->r);
            free(e);
        }
        free(fresh.buckets);
        return rc;
    }
    drop_lists(k);
    free_entries(k, k->first);
    free(k->buckets);
    k->buckets = fresh.buckets;
    k->nbuckets = fresh.nbuckets;
    k->first = fresh.first;
    k->last = fresh.last;
    k->count = fresh.count;
    k->bytes = fresh.bytes;
    k->synced = true;
    return 0;
}

yyjson_val *adm_cluster_store_get(adm_cluster_store_t *s, const char *group, const char *kind,
                                  const char *namespace_, const char *name)
{
    adm_kind_store_t *k = find_kind(s, group, kind);
    const char *ns;
    entry_t *e;

    if (k == NULL || name == NULL) {
        return NULL;
    }
    ns = k->namespaced && namespace_ != NULL ? namespace_ : "";
    e = find_entry(k, ns, name, hash_key(ns, name), NULL);
    return e != NULL ? yyjson_doc_get_root(e->obj->doc) : NULL;
}

yyjson_val *const *adm_cluster_store_list(adm_cluster_store_t *s, const char *group, const char *kind,
                                          const char *namespace_, size_t *n)
{
    adm_kind_store_t *k = find_kind(s, group, kind);
    bool all = namespace_ == NULL;
    const char *ns = all ? "" : k != NULL && k->namespaced ? namespace_ : "";
    lcache_t *l;
    larr_t *arr;
    size_t count = 0;

    *n = 0;
    if (k == NULL) {
        return NULL;
    }
    for (l = k->lists; l != NULL; l = l->next) {
        if (l->all == all && (all || strcmp(l->ns, ns) == 0)) {
            *n = l->arr->n;
            return l->arr->n > 0 ? l->arr->items : NULL;
        }
    }
    for (entry_t *e = k->first; e != NULL; e = e->order_next) {
        count += all || strcmp(e->key, ns) == 0;
    }
    arr = malloc(sizeof(*arr) + count * sizeof(yyjson_val *));
    l = malloc(sizeof(*l) + strlen(ns) + 1);
    if (arr == NULL || l == NULL) {
        free(arr);
        free(l);
        return NULL;
    }
    arr->r.free_fn = free_larr;
    arr->n = 0;
    for (entry_t *e = k->first; e != NULL; e = e->order_next) {
        if (all || strcmp(e->key, ns) == 0) {
            arr->items[arr->n++] = yyjson_doc_get_root(e->obj->doc);
        }
    }
    l->all = all;
    l->arr = arr;
    memcpy(l->ns, ns, strlen(ns) + 1);
    l->next = k->lists;
    k->lists = l;
    *n = arr->n;
    return arr->n > 0 ? arr->items : NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit: token buckets on core-group Event creates and updates, so a crash-looping
 * controller cannot flood etcd with events. Configured limits each charge one bucket per request:
 * Server (one bucket), Namespace, User, SourceAndObject (buckets by key in an LRU of cacheSize,
 * default 4096; an evicted key comes back with a full bucket). Every limit is charged even when an
 * earlier one refuses, and the last refusal is reported, as kube-apiserver does. Buckets start full
 * with `burst` tokens and refill at `qps` per second (golang.org/x/time/rate).
 *
 * kube-apiserver charges dry-run requests too (the plugin does not look at dryRun), and so does
 * admitd. Buckets are per process: with --workers N or several replicas the limit multiplies.
 */
#include "adm/error.h"
#include "adm/eventratelimit.h"
#include "adm/log.h"
#include "adm/plugin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_CACHE_SIZE 4096
#define NIL UINT32_MAX

typedef enum limit_type_e { LIMIT_SERVER, LIMIT_NAMESPACE, LIMIT_USER, LIMIT_SOURCE_AND_OBJECT } limit_type_t;

static const char *const type_names[] = {"Server", "Namespace", "User", "SourceAndObject"};

typedef struct bucket_s {
    double tokens;
    uint64_t last_ns; /* when tokens was last brought up to date */
} bucket_t;

/* One LRU entry: its key (owned), bucket, list links and hash chain, by index. */
typedef struct entry_s {
    char *key;
    size_t key_len;
    uint64_t hash;
    bucket_t bucket;
    uint32_t prev, next, chain;
} entry_t;

typedef struct enforcer_s {
    limit_type_t type;
    double qps;
    double burst;
    bucket_t server;   /* LIMIT_SERVER */
    entry_t *entries;  /* the LRU, capacity cap */
    uint32_t *buckets; /* hash heads, nbuckets (a power of two) */
    uint32_t cap, used, nbuckets;
    uint32_t head, tail; /* most and least recently used */
} enforcer_t;

typedef struct state_s {
    enforcer_t *enforcers;
    size_t nenforcers;
    uint64_t (*now_ns)(void);
} state_t;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void adm_event_rate_limit_set_clock(void *state, uint64_t (*now_ns)(void))
{
    ((state_t *)state)->now_ns = now_ns;
}

static void free_state(void *p)
{
    state_t *s = p;

    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->nenforcers; i++) {
        enforcer_t *e = &s->enforcers[i];

        for (uint32_t k = 0; k < e->used; k++) {
            free(e->entries[k].key);
        }
        free(e->entries);
        free(e->buckets);
    }
    free(s->enforcers);
    free(s);
}

/* ---- configuration ---- */

/* Reads an int32 member the way Go's JSON decoder would; integral reals are accepted (YAML 5.0). */
static int get_int32(yyjson_val *limit, const char *name, int32_t *out, bool *present, const char *source, size_t i,
                     char *err, size_t err_len)
{
    yyjson_val *v = yyjson_obj_get(limit, name);
    double d;

    *present = v != NULL && !yyjson_is_null(v);
    *out = 0;
    if (!*present) {
        return 0;
    }
    d = yyjson_is_num(v) ? yyjson_get_num(v) : NAN;
    if (!yyjson_is_num(v) || d != floor(d) || d < INT32_MIN || d > INT32_MAX) {
        snprintf(err, err_len, "%s: limits[%zu].%s: must be a whole number (int32), not %s", source, i, name,
                 yyjson_is_str(v) ? "a string" : yyjson_is_num(v) ? "this value" : yyjson_get_type_desc(v));
        return ADM_EINVAL;
    }
    *out = (int32_t)d;
    return 0;
}

static int make_lru(enforcer_t *e, uint32_t cap)
{
    e->cap = cap;
    e->nbuckets = 16;
    while (e->nbuckets < cap) {
        e->nbuckets *= 2;
    }
    e->entries = calloc(cap, sizeof(*e->entries));
    e->buckets = malloc(e->nbuckets * sizeof(*e->buckets));
    if (e->entries == NULL || e->buckets == NULL) {
        return ADM_ENOMEM;
    }
    memset(e->buckets, 0xff, e->nbuckets * sizeof(*e->buckets));
    e->head = e->tail = NIL;
    return 0;
}

static int parse_limit(yyjson_val *limit, size_t i, enforcer_t *e, const char *source, char *err, size_t err_len)
{
    yyjson_val *type = yyjson_obj_get(limit, "type");
    int32_t qps, burst, cache_size;
    bool has_qps, has_burst, has_cache;
    int rc;

    if (!yyjson_is_obj(limit)) {
        snprintf(err, err_len, "%s: limits[%zu]: must be an object", source, i);
        return ADM_EINVAL;
    }
    if (type != NULL && !yyjson_is_str(type)) {
        snprintf(err, err_len, "%s: limits[%zu].type: must be a string", source, i);
        return ADM_EINVAL;
    }
    if ((rc = get_int32(limit, "qps", &qps, &has_qps, source, i, err, err_len)) != 0 ||
        (rc = get_int32(limit, "burst", &burst, &has_burst, source, i, err, err_len)) != 0 ||
        (rc = get_int32(limit, "cacheSize", &cache_size, &has_cache, source, i, err, err_len)) != 0) {
        return rc;
    }
    for (e->type = LIMIT_SERVER; e->type <= LIMIT_SOURCE_AND_OBJECT; e->type++) {
        if (type != NULL && strcmp(yyjson_get_str(type), type_names[e->type]) == 0) {
            break;
        }
    }
    /* kube's validation, in its order */
    if (e->type > LIMIT_SOURCE_AND_OBJECT) {
        snprintf(err, err_len,
                 "%s: limits[%zu].type: Unsupported value: \"%s\": supported values: \"Namespace\", \"Server\", "
                 "\"SourceAndObject\", \"User\"",
                 source, i, type != NULL ? yyjson_get_str(type) : "");
        return ADM_EINVAL;
    }
    if (burst <= 0) {
        snprintf(err, err_len, "%s: limits[%zu].burst: Invalid value: %d: must be positive", source, i, burst);
        return ADM_EINVAL;
    }
    if (qps <= 0) {
        snprintf(err, err_len, "%s: limits[%zu].qps: Invalid value: %d: must be positive", source, i, qps);
        return ADM_EINVAL;
    }
    if (e->type != LIMIT_SERVER && cache_size < 0) {
        snprintf(err, err_len, "%s: limits[%zu].cacheSize: Invalid value: %d: must not be negative", source, i,
                 cache_size);
        return ADM_EINVAL;
    }
    e->qps = qps;
    e->burst = burst;
    e->server.tokens = burst;
    e->server.last_ns = 0;
    if (e->type == LIMIT_SERVER) {
        return 0;
    }
    return make_lru(e, cache_size == 0 ? DEFAULT_CACHE_SIZE : (uint32_t)cache_size);
}

static void warn_unknown(yyjson_val *obj, const char *const *known, const char *source, const char *where)
{
    yyjson_val *key;
    yyjson_obj_iter it;

    /* kube decodes this file leniently: unknown fields are dropped. Say so, since it is usually a typo. */
    yyjson_obj_iter_init(obj, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        bool found = false;

        for (const char *const *k = known; *k != NULL; k++) {
            found = found || strcmp(*k, yyjson_get_str(key)) == 0;
        }
        if (!found) {
            adm_log_warn("%s: %sunknown field \"%s\" ignored", source, where, yyjson_get_str(key));
        }
    }
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    static const char *const top_fields[] = {"apiVersion", "kind", "limits", NULL};
    static const char *const limit_fields[] = {"type", "qps", "burst", "cacheSize", NULL};
    yyjson_val *c = cfg->config;
    yyjson_val *api_version, *kind, *limits;
    state_t *s;
    int rc = 0;

    if (c == NULL) {
        /* kube starts from an empty default configuration, which its validation then refuses */
        snprintf(err, err_len, "%s: EventRateLimit needs a configuration: limits: Invalid value: null: must not be empty",
                 cfg->source);
        return ADM_EINVAL;
    }
    api_version = yyjson_obj_get(c, "apiVersion");
    kind = yyjson_obj_get(c, "kind");
    if (!yyjson_is_str(api_version) || strcmp(yyjson_get_str(api_version), "eventratelimit.admission.k8s.io/v1alpha1") != 0) {
        snprintf(err, err_len, "%s: apiVersion: want eventratelimit.admission.k8s.io/v1alpha1", cfg->source);
        return ADM_EINVAL;
    }
    if (!yyjson_is_str(kind) || strcmp(yyjson_get_str(kind), "Configuration") != 0) {
        snprintf(err, err_len, "%s: kind: want Configuration", cfg->source);
        return ADM_EINVAL;
    }
    warn_unknown(c, top_fields, cfg->source, "");
    limits = yyjson_obj_get(c, "limits");
    if (limits != NULL && !yyjson_is_null(limits) && !yyjson_is_arr(limits)) {
        snprintf(err, err_len, "%s: limits: must be a list", cfg->source);
        return ADM_EINVAL;
    }
    if (yyjson_arr_size(limits) == 0) {
        snprintf(err, err_len, "%s: limits: Invalid value: %s: must not be empty", cfg->source,
                 yyjson_is_arr(limits) ? "[]" : "null");
        return ADM_EINVAL;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->enforcers = calloc(yyjson_arr_size(limits), sizeof(*s->enforcers))) == NULL) {
        free(s);
        return ADM_ENOMEM;
    }
    s->now_ns = monotonic_ns;
    for (size_t i = 0; i < yyjson_arr_size(limits) && rc == 0; i++) {
        yyjson_val *limit = yyjson_arr_get(limits, i);
        char where[32];

        rc = parse_limit(limit, i, &s->enforcers[i], cfg->source, err, err_len);
        s->nenforcers++;
        if (rc == 0) {
            snprintf(where, sizeof(where), "limits[%zu]: ", i);
            warn_unknown(limit, limit_fields, cfg->source, where);
        }
    }
    if (rc != 0) {
        free_state(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* ---- buckets ---- */

/* rate.Limiter.AllowN(now, 1): refill for the time since the last call, then take a token if any. */
static bool take(const enforcer_t *e, bucket_t *b, uint64_t now)
{
    if (now > b->last_ns) {
        b->tokens += (double)(now - b->last_ns) / 1e9 * e->qps;
        if (b->tokens > e->burst) {
            b->tokens = e->burst;
        }
        b->last_ns = now;
    }
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        return true;
    }
    return false;
}

static uint64_t hash_key(const char *k, size_t len)
{
    uint64_t h = 1469598103934665603u;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)k[i]) * 1099511628211u;
    }
    return h;
}

static void unlink_entry(enforcer_t *e, uint32_t i)
{
    entry_t *x = &e->entries[i];

    if (x->prev != NIL) {
        e->entries[x->prev].next = x->next;
    } else {
        e->head = x->next;
    }
    if (x->next != NIL) {
        e->entries[x->next].prev = x->prev;
    } else {
        e->tail = x->prev;
    }
}

static void push_front(enforcer_t *e, uint32_t i)
{
    entry_t *x = &e->entries[i];

    x->prev = NIL;
    x->next = e->head;
    if (e->head != NIL) {
        e->entries[e->head].prev = i;
    }
    e->head = i;
    if (e->tail == NIL) {
        e->tail = i;
    }
}

static void unchain(enforcer_t *e, uint32_t i)
{
    uint32_t *link = &e->buckets[e->entries[i].hash & (e->nbuckets - 1)];

    while (*link != i) {
        link = &e->entries[*link].chain;
    }
    *link = e->entries[i].chain;
}

/*
 * The bucket of key, most recently used now; a new key gets a full bucket, taking the least
 * recently used entry's place when the cache is full. NULL when a new key cannot be stored.
 */
static bucket_t *lookup(enforcer_t *e, const char *key, size_t len, uint64_t now)
{
    uint64_t h = hash_key(key, len);
    uint32_t *head = &e->buckets[h & (e->nbuckets - 1)];
    uint32_t i;
    char *copy;

    for (i = *head; i != NIL; i = e->entries[i].chain) {
        entry_t *x = &e->entries[i];

        if (x->hash == h && x->key_len == len && memcmp(x->key, key, len) == 0) {
            unlink_entry(e, i);
            push_front(e, i);
            return &x->bucket;
        }
    }
    copy = malloc(len + 1);
    if (copy == NULL) {
        return NULL;
    }
    memcpy(copy, key, len);
    copy[len] = '\0';
    if (e->used < e->cap) {
        i = e->used++;
    } else {
        i = e->tail;
        unlink_entry(e, i);
        unchain(e, i);
        free(e->entries[i].key);
    }
    e->entries[i].key = copy;
    e->entries[i].key_len = len;
    e->entries[i].hash = h;
    e->entries[i].bucket.tokens = e->burst;
    e->entries[i].bucket.last_ns = now;
    e->entries[i].chain = *head;
    *head = i;
    push_front(e, i);
    return &e->entries[i].bucket;
}

/* The key of a limit for this request, in the arena. */
static const char *key_of(const enforcer_t *e, adm_attrs_t *attrs)
{
    yyjson_val *ev, *src, *obj;

    switch (e->type) {
    case LIMIT_NAMESPACE:
        return attrs->req->namespace_;
    case LIMIT_USER:
        return attrs->req->user_info.username;
    case LIMIT_SOURCE_AND_OBJECT:
        ev = adm_attrs_object(attrs);
        src = adm_json_get(ev, "source");
        obj = adm_json_get(ev, "involvedObject");
        if (ev == NULL) {
            return "";
        }
        return adm_arena_printf(attrs->arena, "%s%s%s%s%s%s%s", adm_json_str(src, "component"),
                                adm_json_str(src, "host"), adm_json_str(obj, "kind"), adm_json_str(obj, "namespace"),
                                adm_json_str(obj, "name"), adm_json_str(obj, "uid"), adm_json_str(obj, "apiVersion"));
    default:
        return "";
    }
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    state_t *s = state;
    uint64_t now;
    const enforcer_t *refused = NULL;
    const char *refused_key = NULL;

    if (!adm_attrs_kind_is(attrs, "", "Event")) {
        return ADM_OK;
    }
    now = s->now_ns();
    for (size_t i = 0; i < s->nenforcers; i++) {
        enforcer_t *e = &s->enforcers[i];
        const char *key = key_of(e, attrs);
        bucket_t *b;

        if (key == NULL) {
            return ADM_ENOMEM;
        }
        b = e->type == LIMIT_SERVER ? &e->server : lookup(e, key, strlen(key), now);
        if (b == NULL) {
            return ADM_ENOMEM;
        }
        if (e->type == LIMIT_SERVER && b->last_ns == 0) {
            b->last_ns = now; /* the server bucket is made full at configure; its clock starts here */
        }
        if (!take(e, b, now)) {
            refused = e;
            refused_key = key;
        }
    }
    if (refused == NULL) {
        return ADM_OK;
    }
    return adm_status_too_many_requests(st, attrs->arena, "limit reached on type %s for key %s",
                                        type_names[refused->type], refused_key);
}

const adm_plugin_t adm_plugin_event_rate_limit = {
    .name = "EventRateLimit",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .configure = configure,
    .free_state = free_state,
    .validate = validate,
};

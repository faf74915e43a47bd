/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit: token buckets on writes (CREATE, UPDATE) of core-group Events, as
 * kube-apiserver's plugin/pkg/admission/eventratelimit. Each configured limit is one enforcer:
 * Server has a single bucket; Namespace, User and SourceAndObject keep an LRU cache of buckets, one
 * per key. Every enforcer is charged on every request, and the refusals are reported together as
 * one 429. Dry-run requests are not charged.
 *
 * Memory: an enforcer's cache (adm/base/lru.h) is allocated at configure time (kube's default 4096
 * entries) and grows by doubling up to cacheSize, so it never allocates once full. A slot's key
 * buffer is reused when the slot is, and only grows, so the steady state of a full cache allocates
 * nothing.
 *
 * Time is the chain's monotonic clock (adm_plugin_now_ns), so tests refill buckets by moving it.
 */
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/lru.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define API_GROUP "eventratelimit.admission.k8s.io"
#define API_VERSION "v1alpha1"
#define DEFAULT_CACHE_SIZE 4096 /* kube's, when cacheSize is 0 */
#define NS_PER_SEC UINT64_C(1000000000)

typedef enum limit_type_e {
    LIMIT_SERVER,
    LIMIT_NAMESPACE,
    LIMIT_USER,
    LIMIT_SOURCE_AND_OBJECT,
    LIMIT_TYPES,
} limit_type_t;

/* Kube lists the supported values from a map, in random order; admitd uses declaration order. */
static const char *const type_names[LIMIT_TYPES] = {"Server", "Namespace", "User", "SourceAndObject"};

/* golang.org/x/time/rate.Limiter's state; a bucket never used is full. */
typedef struct bucket_s {
    double tokens;
    uint64_t last;
    bool used;
} bucket_t;

typedef struct enforcer_s {
    limit_type_t type;
    double qps; /* as client-go passes it: float32(qps) */
    double burst;
    bucket_t server; /* LIMIT_SERVER */
    adm_lru_t cache; /* the other types: a bucket_t per key */
} enforcer_t;

typedef struct state_s {
    uint64_t seed[2]; /* keys are chosen by clients: a keyed hash keeps chains short */
    bool need_object;
    size_t count;
    enforcer_t enforcers[];
} state_t;

/* One limit as decoded, before validation. */
typedef struct limit_cfg_s {
    const char *type;
    int32_t qps;
    int32_t burst;
    int32_t cache_size;
} limit_cfg_t;

/* ---- token bucket ---- */

/*
 * client-go's token bucket limiter is rate.Limiter.AllowN(now, 1): refill for the time elapsed
 * since the last granted request, cap at burst, and grant when the wait for the missing fraction of
 * a token truncates to 0 ns (so a bucket can go a hair below zero, as in Go). A refusal changes
 * nothing.
 */
static bool bucket_take(bucket_t *b, double qps, double burst, uint64_t now)
{
    double tokens = burst;

    if (b->used) {
        uint64_t elapsed = now > b->last ? now - b->last : 0;
        double seconds = (double)(elapsed / NS_PER_SEC) + (double)(elapsed % NS_PER_SEC) / 1e9;

        tokens = b->tokens + seconds * qps;
        if (tokens > burst) {
            tokens = burst;
        }
    }
    tokens -= 1;
    if (tokens < 0 && (int64_t)(-tokens / qps * 1e9) > 0) {
        return false;
    }
    b->tokens = tokens;
    b->last = now;
    b->used = true;
    return true;
}

/* ---- configuration: kube's non-strict decode of v1alpha1.Configuration, then its validation ---- */

/* What the decoding helpers return when the scratch arena is exhausted (NULL means no problem). */
static const char out_of_memory[] = "out of memory";

static const char *or_nomem(const char *s)
{
    return s != NULL ? s : out_of_memory;
}

/*
 * A number as kube's YAML-to-JSON step prints it (Go's encoding/json float format: shortest
 * round-trip digits, exponent form outside [1e-6, 1e21)); integers print as they are.
 */
static const char *number_text(adm_arena_t *a, yyjson_val *v)
{
    double d = yyjson_get_real(v);
    double mag = d < 0 ? -d : d;
    char buf[64];
    const char *out;
    int digits;
    size_t n;

    if (!yyjson_is_real(v)) {
        return adm_json_text(a, v);
    }
    for (digits = 1; digits < 17; digits++) {
        snprintf(buf, sizeof(buf), "%.*e", digits - 1, d);
        if (strtod(buf, NULL) == d) {
            break;
        }
    }
    snprintf(buf, sizeof(buf), "%.*e", digits - 1, d);
    if (mag != 0 && (mag < 1e-6 || mag >= 1e21)) {
        n = strlen(buf);
        if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
            buf[n - 2] = buf[n - 1]; /* Go writes e-7 where C writes e-07 */
            buf[n - 1] = '\0';
        }
    } else {
        int decimals = digits - 1 - (int)strtol(strchr(buf, 'e') + 1, NULL, 10);

        snprintf(buf, sizeof(buf), "%.*f", decimals > 0 ? decimals : 0, d);
    }
    out = adm_arena_strndup(a, buf, strlen(buf));
    return out != NULL ? out : "";
}

static const char *type_error(adm_arena_t *a, yyjson_val *v, const char *field, const char *go_type)
{
    return or_nomem(adm_arena_printf(a, "json: cannot unmarshal %s into Go struct field %s of type %s",
                                     adm_json_go_type(v), field, go_type));
}

/*
 * An int32 member. Go refuses fractions and overflow; YAML numbers reach us as reals, and kube's
 * YAML-to-JSON step prints an integral float as an integer, so an integral real is accepted. null
 * leaves the value alone, as in Go. Returns NULL or the error text.
 */
static const char *decode_int32(adm_arena_t *a, yyjson_val *v, const char *name, int32_t *out)
{
    int64_t n = 0;
    bool ok;

    if (yyjson_is_null(v)) {
        return NULL;
    }
    if (!yyjson_is_num(v)) {
        const char *field = adm_arena_printf(a, "Limit.limits.%s", name);

        return field != NULL ? type_error(a, v, field, "int32") : out_of_memory;
    }
    if (yyjson_is_uint(v)) {
        ok = yyjson_get_uint(v) <= INT32_MAX;
        n = ok ? (int64_t)yyjson_get_uint(v) : 0;
    } else if (yyjson_is_sint(v)) {
        n = yyjson_get_sint(v);
        ok = n >= INT32_MIN && n <= INT32_MAX;
    } else {
        double d = yyjson_get_real(v);

        ok = d >= INT32_MIN && d <= INT32_MAX && (double)(int64_t)d == d;
        n = ok ? (int64_t)d : 0;
    }
    if (!ok) {
        return or_nomem(adm_arena_printf(
            a, "json: cannot unmarshal number %s into Go struct field Limit.limits.%s of type int32",
            number_text(a, v), name));
    }
    *out = (int32_t)n;
    return NULL;
}

static const char *decode_limit(adm_arena_t *a, yyjson_val *obj, limit_cfg_t *l)
{
    yyjson_obj_iter it;
    yyjson_val *k;
    const char *problem = NULL;

    if (yyjson_is_null(obj)) {
        return NULL;
    }
    if (!yyjson_is_obj(obj)) {
        return type_error(a, obj, "Configuration.limits", "v1alpha1.Limit");
    }
    yyjson_obj_iter_init(obj, &it);
    for (k = yyjson_obj_iter_next(&it); problem == NULL && k != NULL; k = yyjson_obj_iter_next(&it)) {
        const char *name = yyjson_get_str(k);
        yyjson_val *v = yyjson_obj_iter_get_val(k);

        /* Member names match case-sensitively (sigs.k8s.io/json); others are ignored, not refused. */
        if (strcmp(name, "type") == 0) {
            if (yyjson_is_str(v)) {
                l->type = yyjson_get_str(v);
            } else if (!yyjson_is_null(v)) {
                problem = type_error(a, v, "Limit.limits.type", "v1alpha1.LimitType");
            }
        } else if (strcmp(name, "qps") == 0) {
            problem = decode_int32(a, v, "qps", &l->qps);
        } else if (strcmp(name, "burst") == 0) {
            problem = decode_int32(a, v, "burst", &l->burst);
        } else if (strcmp(name, "cacheSize") == 0) {
            problem = decode_int32(a, v, "cacheSize", &l->cache_size);
        }
    }
    return problem;
}

/*
 * `limits`, decoded as Go decodes into a slice: null makes it nil; a repeated member refills the
 * same elements in place.
 */
static const char *decode_limits(adm_arena_t *a, yyjson_val *v, limit_cfg_t **limits, size_t *n, size_t *cap,
                                 bool *nil)
{
    yyjson_arr_iter it;
    yyjson_val *item;
    const char *problem = NULL;
    size_t len = yyjson_arr_size(v);
    size_t i = 0;

    if (yyjson_is_null(v)) {
        *limits = NULL;
        *n = 0;
        *cap = 0;
        *nil = true;
        return NULL;
    }
    if (!yyjson_is_arr(v)) {
        return type_error(a, v, "Configuration.limits", "[]v1alpha1.Limit");
    }
    if (len > *cap) {
        limit_cfg_t *grown = adm_arena_realloc(a, *limits, *cap * sizeof(**limits), len * sizeof(**limits));

        if (grown == NULL) {
            return out_of_memory;
        }
        memset(grown + *cap, 0, (len - *cap) * sizeof(*grown));
        *limits = grown;
        *cap = len;
    }
    *n = len;
    *nil = false;
    yyjson_arr_iter_init(v, &it);
    for (item = yyjson_arr_iter_next(&it); problem == NULL && item != NULL;
         item = yyjson_arr_iter_next(&it)) {
        problem = decode_limit(a, item, &(*limits)[i++]);
    }
    return problem;
}

/*
 * The scheme's view of the document (SimpleMetaFactory.Interpret, then the kind checks of the JSON
 * serializer and of the scheme): apiVersion and kind, matched case-insensitively as encoding/json
 * does. Returns NULL when the document is a v1alpha1 Configuration, else the error text.
 */
static const char *check_type_meta(adm_arena_t *a, yyjson_val *root)
{
    const char *api_version = "";
    const char *kind = "";
    const char *slash;
    const char *group = "";
    const char *version;
    yyjson_obj_iter it;
    yyjson_val *k;

    if (!yyjson_is_obj(root) && !yyjson_is_null(root)) {
        return or_nomem(
            adm_arena_printf(a,
                             "couldn't get version/kind; json parse error: json: cannot unmarshal %s "
                             "into Go value of type " ADM_JSON_GO_TYPE_META,
                             adm_json_go_type(root)));
    }
    yyjson_obj_iter_init(root, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        const char *name = yyjson_get_str(k);
        yyjson_val *v = yyjson_obj_iter_get_val(k);
        const char **slot = strcasecmp(name, "apiVersion") == 0 ? &api_version
                            : strcasecmp(name, "kind") == 0     ? &kind
                                                                : NULL;

        if (slot == NULL || yyjson_is_null(v)) {
            continue;
        }
        if (!yyjson_is_str(v)) {
            return or_nomem(
                adm_arena_printf(a,
                                 "couldn't get version/kind; json parse error: json: cannot unmarshal %s "
                                 "into Go struct field .%s of type string",
                                 adm_json_go_type(v), slot == &kind ? "kind" : "apiVersion"));
        }
        *slot = yyjson_get_str(v);
    }
    /* schema.ParseGroupVersion */
    version = api_version;
    slash = strchr(api_version, '/');
    if (slash != NULL && strchr(slash + 1, '/') != NULL) {
        return or_nomem(adm_arena_printf(a, "unexpected GroupVersion string: %s", api_version));
    }
    if (slash != NULL) {
        group = adm_arena_strndup(a, api_version, (size_t)(slash - api_version));
        version = slash + 1;
        if (group == NULL) {
            return out_of_memory;
        }
    }
    if (kind[0] == '\0') {
        return or_nomem(adm_arena_printf(a, "Object 'Kind' is missing in '%s'", adm_json_text(a, root)));
    }
    if (version[0] == '\0') {
        return or_nomem(
            adm_arena_printf(a, "Object 'apiVersion' is missing in '%s'", adm_json_text(a, root)));
    }
    if (strcmp(group, API_GROUP) != 0 || strcmp(version, API_VERSION) != 0 ||
        strcmp(kind, "Configuration") != 0) {
        const char *qkind = adm_go_quote(a, kind);
        const char *gv = group[0] != '\0' ? adm_arena_printf(a, "%s/%s", group, version) : version;
        const char *qgv = gv != NULL ? adm_go_quote(a, gv) : NULL;

        return qkind != NULL && qgv != NULL
                   ? or_nomem(adm_arena_printf(a, "no kind %s is registered for version %s", qkind, qgv))
                   : out_of_memory;
    }
    return NULL;
}

static int limit_type_of(const char *s)
{
    for (int t = 0; t < LIMIT_TYPES; t++) {
        if (s != NULL && strcmp(s, type_names[t]) == 0) {
            return t;
        }
    }
    return -1;
}

/* validation.ValidateConfiguration, with ErrorList.ToAggregate's text; "" when valid. */
static const char *validate_config(adm_arena_t *a, const limit_cfg_t *limits, size_t n, bool nil)
{
    adm_aggregate_t errs;
    const char *text;

    adm_aggregate_init(&errs, a);
    if (n == 0) {
        adm_aggregate_add(&errs, nil ? "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"
                                     : "limits: Invalid value: []eventratelimit.Limit{}: must not be empty");
    }
    for (size_t i = 0; i < n; i++) {
        const limit_cfg_t *l = &limits[i];

        if (limit_type_of(l->type) < 0) {
            const char *q = adm_go_quote(a, l->type != NULL ? l->type : "");

            adm_aggregate_add(
                &errs, q == NULL ? NULL
                                 : adm_arena_printf(
                                       a,
                                       "limits[%zu].type: Unsupported value: %s: supported values: "
                                       "\"%s\", \"%s\", \"%s\", \"%s\"",
                                       i, q, type_names[0], type_names[1], type_names[2], type_names[3]));
        }
        if (l->burst <= 0) {
            adm_aggregate_add(&errs,
                              adm_arena_printf(a, "limits[%zu].burst: Invalid value: %d: must be positive", i,
                                               (int)l->burst));
        }
        if (l->qps <= 0) {
            adm_aggregate_add(
                &errs,
                adm_arena_printf(a, "limits[%zu].qps: Invalid value: %d: must be positive", i, (int)l->qps));
        }
        if (limit_type_of(l->type) != LIMIT_SERVER && l->cache_size < 0) {
            adm_aggregate_add(
                &errs, adm_arena_printf(a, "limits[%zu].cacheSize: Invalid value: %d: must not be negative",
                                        i, (int)l->cache_size));
        }
    }
    text = adm_aggregate_text(&errs);
    return or_nomem(text);
}

static void free_state(void *state)
{
    state_t *s = state;

    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->count; i++) {
        if (s->enforcers[i].type != LIMIT_SERVER) {
            adm_lru_dispose(&s->enforcers[i].cache);
        }
    }
    free(s);
}

static int build_state(const limit_cfg_t *limits, size_t n, state_t **out)
{
    state_t *s = calloc(1, sizeof(*s) + n * sizeof(s->enforcers[0]));

    if (s == NULL) {
        return ADM_ENOMEM;
    }
    if (getrandom(s->seed, sizeof(s->seed), 0) != (ssize_t)sizeof(s->seed)) {
        /* no entropy to be had (a kernel before 3.17): a heap and a stack address, which ASLR varies */
        s->seed[0] = (uint64_t)(uintptr_t)s;
        s->seed[1] = (uint64_t)(uintptr_t)&s;
    }
    for (size_t i = 0; i < n; i++) {
        enforcer_t *e = &s->enforcers[i];

        e->type = (limit_type_t)limit_type_of(limits[i].type);
        e->qps = (double)(float)limits[i].qps;
        e->burst = (double)limits[i].burst;
        s->count = i + 1;
        if (e->type == LIMIT_SOURCE_AND_OBJECT) {
            s->need_object = true;
        }
        if (e->type != LIMIT_SERVER &&
            adm_lru_init(&e->cache,
                         limits[i].cache_size == 0 ? DEFAULT_CACHE_SIZE : (uint32_t)limits[i].cache_size,
                         sizeof(bucket_t), s->seed) != 0) {
            free_state(s);
            return ADM_ENOMEM;
        }
    }
    *out = s;
    return 0;
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    adm_arena_t *a = adm_arena_create(4096);
    limit_cfg_t *limits = NULL;
    size_t n = 0;
    size_t cap = 0;
    bool nil = true;
    const char *problem = NULL;
    int rc;

    if (a == NULL) {
        return ADM_ENOMEM;
    }
    /* No configuration is kube's empty default, which validation then refuses. */
    if (cfg->config != NULL) {
        problem = check_type_meta(a, cfg->config);
        if (problem == NULL) {
            yyjson_obj_iter it;
            yyjson_val *k;

            yyjson_obj_iter_init(cfg->config, &it);
            for (k = yyjson_obj_iter_next(&it); problem == NULL && k != NULL; k = yyjson_obj_iter_next(&it)) {
                if (strcmp(yyjson_get_str(k), "limits") == 0) {
                    problem = decode_limits(a, yyjson_obj_iter_get_val(k), &limits, &n, &cap, &nil);
                }
            }
        }
    }
    if (problem == NULL) {
        problem = validate_config(a, limits, n, nil);
    }
    if (problem == out_of_memory) {
        rc = ADM_ENOMEM;
    } else if (problem[0] != '\0') {
        snprintf(err, err_len, "%s: %s", cfg->source, problem);
        rc = ADM_EINVAL;
    } else {
        rc = build_state(limits, n, (state_t **)state);
    }
    adm_arena_destroy(a);
    return rc;
}

/* ---- admission ---- */

/*
 * getSourceAndObjectKey: source and involvedObject fields of the (new) event, no separator. Built
 * from the strings' lengths, so a NUL inside a field stays part of the key as in Go. NULL when the
 * arena is exhausted.
 */
static const char *source_and_object_key(adm_attrs_t *attrs, size_t *len)
{
    static const char *const members[7] = {"component", "host", "kind",      "namespace",
                                           "name",      "uid",  "apiVersion"};
    yyjson_val *ev = adm_attrs_object(attrs);
    yyjson_val *src = adm_json_get(ev, "source");
    yyjson_val *obj = adm_json_get(ev, "involvedObject");
    yyjson_val *parts[7];
    char *key;

    *len = 0;
    if (ev == NULL) {
        return attrs->req->object != NULL ? NULL : "";
    }
    for (int i = 0; i < 7; i++) {
        parts[i] = adm_json_get(i < 2 ? src : obj, members[i]);
        *len += yyjson_is_str(parts[i]) ? yyjson_get_len(parts[i]) : 0;
    }
    key = adm_arena_alloc(attrs->arena, *len + 1);
    if (key == NULL) {
        return NULL;
    }
    *len = 0;
    for (int i = 0; i < 7; i++) {
        if (yyjson_is_str(parts[i])) {
            memcpy(key + *len, yyjson_get_str(parts[i]), yyjson_get_len(parts[i]));
            *len += yyjson_get_len(parts[i]);
        }
    }
    key[*len] = '\0';
    return key;
}

static const char *key_of(const enforcer_t *e, const adm_attrs_t *attrs, const char *sao_key, size_t sao_len,
                          size_t *len)
{
    const char *key = "";

    switch (e->type) {
    case LIMIT_NAMESPACE: key = attrs->req->namespace_; break;
    case LIMIT_USER: key = attrs->req->user_info.username; break;
    case LIMIT_SOURCE_AND_OBJECT: *len = sao_len; return sao_key;
    default: break;
    }
    *len = strlen(key);
    return key;
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    state_t *s = state;
    const char *sao_key = "";
    size_t sao_len = 0;
    size_t len;
    const char *msg = NULL;
    uint32_t *failed = NULL;
    size_t nfailed = 0;
    adm_aggregate_t agg;
    uint64_t now;

    if (!adm_attrs_kind_is(attrs, "", "Event")) {
        return ADM_OK;
    }
    /* A dry run never reaches storage, so it must not spend tokens either. */
    if (attrs->req->dry_run) {
        return ADM_OK;
    }
    if (s->need_object) {
        sao_key = source_and_object_key(attrs, &sao_len);
        if (sao_key == NULL) {
            return ADM_ENOMEM;
        }
    }
    now = adm_plugin_now_ns(attrs);
    for (size_t i = 0; i < s->count; i++) {
        enforcer_t *e = &s->enforcers[i];
        bucket_t *b = &e->server;

        if (e->type != LIMIT_SERVER) {
            const char *key = key_of(e, attrs, sao_key, sao_len, &len);

            b = adm_lru_get(&e->cache, key, len);
            if (b == NULL) {
                return ADM_ENOMEM;
            }
        }
        if (!bucket_take(b, e->qps, e->burst, now)) {
            if (failed == NULL) {
                failed = adm_arena_alloc(attrs->arena, s->count * sizeof(*failed));
                if (failed == NULL) {
                    return ADM_ENOMEM;
                }
            }
            failed[nfailed++] = (uint32_t)i;
        }
    }
    if (nfailed == 0) {
        return ADM_OK;
    }
    /* Two enforcers of one type derive the same key, so their messages repeat: the aggregate drops it. */
    adm_aggregate_init(&agg, attrs->arena);
    for (size_t i = 0; i < nfailed; i++) {
        const enforcer_t *e = &s->enforcers[failed[i]];

        adm_aggregate_add(&agg,
                          adm_arena_printf(attrs->arena, "limit reached on type %s for key %s",
                                           type_names[e->type], key_of(e, attrs, sao_key, sao_len, &len)));
    }
    msg = adm_aggregate_text(&agg);
    if (msg == NULL) {
        return ADM_ENOMEM;
    }
    return adm_status_too_many_requests(st, attrs->arena, "%s", msg);
}

const adm_plugin_t adm_plugin_event_rate_limit = {
    .name = "EventRateLimit",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .configure = configure,
    .free_state = free_state,
    .validate = validate,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceLifecycle: the immortal namespaces (default, kube-system, kube-public) cannot be
 * deleted, and nothing is created in a namespace that does not exist or is Terminating (updates
 * and deletes of what is inside are always allowed, as in the newest kube-apiserver). Deleting
 * a namespace puts its name, for 30 s, in a cache of at most 100 names whose cached copy is not
 * trusted while it still says Active: a create in it then asks the storage (a live GET).
 *
 * With an API connection (--kubeconfig, --in-cluster) the lister is the informer cache and the
 * live GET goes to the API server (live_call.h, with its own short timeout, as an ADM_AGAIN phase:
 * the loop never waits); its 404 is kube's NotFound and any other failure kube's InternalError
 * with the client's message. With --cluster-state files only, the lister and the storage are both
 * the files, so the live GET answers what the lister answered. Where admitd differs: kube's 50 ms
 * wait for a missing namespace to reach the cache before the live GET is not made (the GET that
 * follows answers the same question without holding the request for nothing).
 */
#include "adm/plugins/namespace_lifecycle.h"
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/plugins/live_call.h"

#include <stdlib.h>
#include <string.h>

enum { FORCE_LIVE_MAX = 100 };
static const uint64_t FORCE_LIVE_TTL_MS = 30000;

/* kube's LRUExpireCache of namespace names: an entry is good while now <= expires. */
typedef struct force_entry_s {
    char *name;
    uint64_t expires_ms;
    uint64_t used; /* recency stamp: the smallest is evicted first */
} force_entry_t;

typedef struct state_s {
    adm_live_reader_t live;
    force_entry_t force[FORCE_LIVE_MAX];
    size_t nforce;
    uint64_t stamp;
} state_t;

static const char *const immortal[] = {"default", "kube-system", "kube-public"};

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    state_t *s = calloc(1, sizeof(*s));

    (void)cfg;
    (void)err;
    (void)err_len;
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    s->live = adm_live_reader_files;
    *state = s;
    return 0;
}

static void free_state(void *state)
{
    state_t *s = state;

    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->nforce; i++) {
        free(s->force[i].name);
    }
    free(s);
}

void adm_namespace_lifecycle_set_live_reader(void *state, const adm_live_reader_t *r)
{
    ((state_t *)state)->live = *r;
}

static force_entry_t *force_find(state_t *s, const char *name)
{
    for (size_t i = 0; i < s->nforce; i++) {
        if (strcmp(s->force[i].name, name) == 0) {
            return &s->force[i];
        }
    }
    return NULL;
}

/* LRUExpireCache.Add: a new name takes the least recently used place when the cache is full. */
static void force_add(state_t *s, const char *name, uint64_t now_ms)
{
    force_entry_t *e = force_find(s, name);

    if (e == NULL && s->nforce < FORCE_LIVE_MAX) {
        char *copy = strdup(name);

        if (copy == NULL) {
            return; /* the cache is an optimisation of freshness; nothing is wrong without it */
        }
        e = &s->force[s->nforce++];
        e->name = copy;
    } else if (e == NULL) {
        char *copy = strdup(name);

        if (copy == NULL) {
            return;
        }
        e = &s->force[0];
        for (size_t i = 1; i < s->nforce; i++) {
            if (s->force[i].used < e->used) {
                e = &s->force[i];
            }
        }
        free(e->name);
        e->name = copy;
    }
    e->expires_ms = now_ms + FORCE_LIVE_TTL_MS;
    e->used = ++s->stamp;
}

/* LRUExpireCache.Get: present and not expired (an expired entry is dropped). */
static bool force_get(state_t *s, const char *name, uint64_t now_ms)
{
    force_entry_t *e = force_find(s, name);

    if (e == NULL) {
        return false;
    }
    if (now_ms > e->expires_ms) {
        free(e->name);
        *e = s->force[--s->nforce];
        return false;
    }
    e->used = ++s->stamp;
    return true;
}

static bool is_namespace_kind(const adm_attrs_t *attrs)
{
    return attrs->req->kind.group[0] == '\0' && strcmp(attrs->req->kind.kind, "Namespace") == 0;
}

static bool is_immortal(const char *name)
{
    for (size_t i = 0; i < sizeof(immortal) / sizeof(immortal[0]); i++) {
        if (strcmp(name, immortal[i]) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * The storage must be asked when the lister does not have the namespace, or when it was deleted
 * lately and the cached copy still says Active.
 */
static bool need_live(state_t *s, adm_attrs_t *attrs, yyjson_val *cached)
{
    bool forced = force_get(s, attrs->req->namespace_, adm_plugin_now_ms(attrs));

    if (cached == NULL) {
        return true;
    }
    return forced && strcmp(adm_json_str(adm_json_get(cached, "status"), "phase"), "Active") == 0;
}

static int terminating(adm_status_t *st, adm_attrs_t *attrs)
{
    const char *ns = attrs->req->namespace_;
    const char *cause;
    int rc = adm_status_forbidden(st, attrs,
                                  "unable to create new content in namespace %s because it is being "
                                  "terminated",
                                  ns);

    if (rc != ADM_DECLINED) {
        return rc;
    }
    cause = adm_arena_printf(attrs->arena, "namespace %s is being terminated", ns);
    if (cause == NULL) {
        return ADM_ENOMEM;
    }
    return adm_status_add_cause(st, attrs->arena, "NamespaceTerminating", cause, "metadata.namespace");
}

/* The namespace found (cached or live): creates in a Terminating one are refused. */
static int judge(adm_attrs_t *attrs, yyjson_val *ns, adm_status_t *st)
{
    if (strcmp(adm_json_str(adm_json_get(ns, "status"), "phase"), "Terminating") == 0) {
        return terminating(st, attrs);
    }
    return ADM_OK;
}

/* The API server answered the live GET of the request's namespace. */
static void on_live_namespace(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res,
                              yyjson_val *body, const char *err, void *arg)
{
    adm_status_t st;
    yyjson_val *ns;
    int rc;

    (void)arg;
    memset(&st, 0, sizeof(st));
    rc = adm_live_namespace_result(attrs, res, body, err, &st, &ns);
    if (rc == ADM_OK) {
        rc = judge(attrs, ns, &st);
    }
    adm_async_done(async, rc, &st);
}

/* The live GET: from the API server when there is a connection and the chain can wait, else files. */
static int live_lookup(state_t *s, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const char *name = attrs->req->namespace_;
    const char *err = NULL;
    yyjson_val *ns = NULL;

    if (async != NULL && adm_live_call_possible(attrs)) {
        if (!adm_live_namespace_name(name)) {
            return adm_status_not_found(st, attrs->arena, "", "namespaces", name);
        }
        return adm_live_get_namespace(attrs, async, on_live_namespace, NULL);
    }
    switch (s->live.get(s->live.arg, attrs, "", "Namespace", "", name, &ns, &err)) {
    case ADM_LIVE_FOUND: return judge(attrs, ns, st);
    case ADM_LIVE_NOT_FOUND: return adm_status_not_found(st, attrs->arena, "", "namespaces", name);
    default: return adm_status_internal(st, attrs->arena, "%s", err != NULL ? err : "unknown error");
    }
}

static int decide(state_t *s, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const adm_review_request_t *req = attrs->req;
    yyjson_val *ns;

    if (req->operation == ADM_OP_DELETE && is_namespace_kind(attrs) && is_immortal(req->name)) {
        return adm_status_forbidden_named(st, attrs->arena, req->resource.group, req->resource.resource,
                                          req->name, "this namespace may not be deleted");
    }
    if (req->namespace_[0] == '\0' && !is_namespace_kind(attrs)) {
        return ADM_OK;
    }
    if (is_namespace_kind(attrs)) {
        if (req->operation == ADM_OP_DELETE) {
            force_add(s, req->name, adm_plugin_now_ms(attrs));
        }
        return ADM_OK;
    }
    /* Objects may outlive their namespace in storage; only creates are refused (newest kube). */
    if (req->operation == ADM_OP_DELETE || req->operation == ADM_OP_UPDATE) {
        return ADM_OK;
    }
    /* Answering "not found" for an access review would tell which namespaces exist. */
    if (strcmp(req->resource.group, "authorization.k8s.io") == 0 &&
        strcmp(req->resource.resource, "localsubjectaccessreviews") == 0) {
        return ADM_OK;
    }
    ns = adm_lookup(attrs, "", "Namespace", "", req->namespace_);
    if (need_live(s, attrs, ns)) {
        return live_lookup(s, attrs, st, async);
    }
    return judge(attrs, ns, st);
}

/* Without a chain to resume (unit tests, file state): the live GET is the files' answer. */
static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return decide(state, attrs, st, NULL);
}

static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    return decide(state, attrs, st, async);
}

static const char *const reads[] = {"/Namespace", NULL};

const adm_plugin_t adm_plugin_namespace_lifecycle = {
    .name = "NamespaceLifecycle",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE,
    .reads = reads,
    .configure = configure,
    .free_state = free_state,
    .admit = admit,
    .admit_async = admit_async,
};

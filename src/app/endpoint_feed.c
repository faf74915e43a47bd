/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The feed of endpoint_feed.h: the Service ports the running webhooks call, the route last given to
 * each, and the two moments a route is (re)applied: a watch told of a change (every live
 * generation gets it, so a request that started before a reload spreads over the same endpoints),
 * and a reload's commit (the new generation gets the routes known so far).
 */
#include "adm/app/endpoint_feed.h"

#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/service_watch.h"
#include "adm/webhook/webhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One Service port the running webhooks call, and the route its upstreams were given last. */
typedef struct target_s {
    char namespace_[254], name[254], host[256];
    uint16_t port;
    adm_service_route_t route;
} target_t;

struct adm_endpoint_feed_s {
    uv_loop_t *loop;
    adm_live_config_t *lc;
    adm_service_watch_t *sw;
    target_t *targets; /* heap, deduplicated */
    size_t ntargets, cap;
    bool ready; /* every Service watched from start was listed once */
    bool stopped;
};

/* Gives w's upstreams of t the route r. */
static void apply(const target_t *t, const adm_service_route_t *r, adm_webhooks_t *w)
{
    int rc = 0;

    switch (r->kind) {
    case ADM_ROUTE_UNKNOWN: return;
    case ADM_ROUTE_BY_NAME: rc = adm_webhooks_resolve_by_name(w, t->host, t->port); break;
    case ADM_ROUTE_REFUSE: rc = adm_webhooks_refuse_calls(w, t->host, t->port, r->label, r->reason); break;
    case ADM_ROUTE_ENDPOINTS: rc = adm_webhooks_set_addresses(w, t->host, t->port, r->addrs, r->n); break;
    }
    if (rc < 0) {
        adm_log_warn("webhook Service %s/%s port %u: the calls keep their endpoints: %s", t->namespace_,
                     t->name, (unsigned)t->port, adm_strerror(rc));
    }
}

typedef struct apply_arg_s {
    const target_t *t;
    const adm_service_route_t *r;
} apply_arg_t;

static void apply_one(void *arg, adm_webhooks_t *w)
{
    const apply_arg_t *a = arg;

    apply(a->t, a->r, w);
}

static void log_route(const target_t *t)
{
    char words[1024];

    adm_service_route_describe(&t->route, words, sizeof(words));
    adm_log_info("webhook Service %s/%s port %u: %s", t->namespace_, t->name, (unsigned)t->port, words);
}

static void on_changed(void *arg, const char *namespace_, const char *name)
{
    adm_endpoint_feed_t *feed = arg;
    adm_service_route_t r;

    for (size_t i = 0; i < feed->ntargets; i++) {
        target_t *t = &feed->targets[i];
        apply_arg_t a = {t, &r};

        if (strcmp(t->namespace_, namespace_) != 0 || strcmp(t->name, name) != 0) {
            continue;
        }
        adm_service_watch_route(feed->sw, namespace_, name, t->port, &r);
        if (adm_service_route_equal(&r, &t->route)) {
            continue;
        }
        t->route = r;
        adm_live_config_each_webhooks(feed->lc, apply_one, &a);
        log_route(t);
    }
}

static void add_target(void *arg, const char *namespace_, const char *name, uint16_t port, const char *host)
{
    adm_endpoint_feed_t *feed = arg;
    target_t *t;

    for (size_t i = 0; i < feed->ntargets; i++) {
        t = &feed->targets[i];
        if (t->port == port && strcmp(t->namespace_, namespace_) == 0 && strcmp(t->name, name) == 0) {
            return;
        }
    }
    if (feed->ntargets == feed->cap) {
        size_t cap = feed->cap == 0 ? 4 : feed->cap * 2;
        target_t *grown = realloc(feed->targets, cap * sizeof(*grown));

        if (grown == NULL) {
            adm_log_warn("webhook Service %s/%s: out of memory; its calls go by name", namespace_, name);
            return;
        }
        feed->targets = grown;
        feed->cap = cap;
    }
    t = &feed->targets[feed->ntargets++];
    memset(t, 0, sizeof(*t));
    snprintf(t->namespace_, sizeof(t->namespace_), "%s", namespace_);
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->host, sizeof(t->host), "%s", host);
    t->port = port;
}

/* The running webhooks' Service ports become the targets, their Services the watched set, and
   the running generation gets every route already known. */
static void follow(adm_endpoint_feed_t *feed)
{
    adm_webhooks_t *w = adm_live_config_webhooks(feed->lc);
    adm_service_ref_t *refs;
    size_t nrefs = 0;
    int rc;

    if (w == NULL || feed->stopped) {
        return;
    }
    feed->ntargets = 0;
    adm_webhooks_services(w, add_target, feed);
    refs = calloc(feed->ntargets + 1, sizeof(*refs));
    if (refs == NULL) {
        adm_log_warn("webhook Services: out of memory; the watches stay as they were");
        return;
    }
    for (size_t i = 0; i < feed->ntargets; i++) {
        refs[nrefs].namespace_ = feed->targets[i].namespace_;
        refs[nrefs].name = feed->targets[i].name;
        nrefs++;
    }
    rc = adm_service_watch_set(feed->sw, refs, nrefs);
    free(refs);
    if (rc == ADM_ETOOBIG) {
        adm_log_warn("webhooks call more than %d Services: the first %d are watched, the calls to the "
                     "others go by name",
                     ADM_SERVICE_WATCH_MAX, ADM_SERVICE_WATCH_MAX);
    } else if (rc != 0) {
        adm_log_warn("webhook Services: %s; the calls to those not watched go by name", adm_strerror(rc));
    }
    for (size_t i = 0; i < feed->ntargets; i++) {
        target_t *t = &feed->targets[i];

        adm_service_watch_route(feed->sw, t->namespace_, t->name, t->port, &t->route);
        apply(t, &t->route, w);
    }
}

static void on_commit(void *arg)
{
    follow(arg);
}

int adm_endpoint_feed_create(uv_loop_t *loop, adm_api_client_t *api, adm_live_config_t *lc,
                             adm_endpoint_feed_t **out)
{
    adm_endpoint_feed_t *feed = calloc(1, sizeof(*feed));

    *out = NULL;
    if (feed == NULL || adm_service_watch_create(loop, api, on_changed, feed, &feed->sw) != 0) {
        free(feed);
        return ADM_ENOMEM;
    }
    feed->loop = loop;
    feed->lc = lc;
    follow(feed);
    adm_live_config_on_commit(lc, on_commit, feed);
    *out = feed;
    return 0;
}

bool adm_endpoint_feed_synced(void *arg)
{
    adm_endpoint_feed_t *feed = arg;

    if (!feed->ready) {
        feed->ready = adm_service_watch_synced(feed->sw);
    }
    return feed->ready;
}

int adm_endpoint_feed_metrics(void *arg, adm_buf_t *out)
{
    const adm_endpoint_feed_t *feed = arg;
    int err;

    if (feed->ntargets == 0) {
        return 0;
    }
    err = adm_service_watch_metrics(feed->sw, out);
    err |= adm_buf_appendf(out, "# HELP admitd_webhook_service_endpoints Endpoints the calls to a webhook "
                                "Service port spread over (0: they fail at once, or go by name)\n"
                                "# TYPE admitd_webhook_service_endpoints gauge\n");
    for (size_t i = 0; i < feed->ntargets; i++) {
        const target_t *t = &feed->targets[i];

        err |=
            adm_buf_appendf(out,
                            "admitd_webhook_service_endpoints{namespace=\"%s\",service=\"%s\",port=\"%u\"} "
                            "%zu\n",
                            t->namespace_, t->name, (unsigned)t->port, t->route.n);
    }
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_endpoint_feed_stop(adm_endpoint_feed_t *feed)
{
    if (feed == NULL || feed->stopped) {
        return;
    }
    feed->stopped = true;
    adm_live_config_on_commit(feed->lc, NULL, feed);
    adm_service_watch_stop(feed->sw);
}

void adm_endpoint_feed_destroy(adm_endpoint_feed_t *feed)
{
    if (feed == NULL) {
        return;
    }
    adm_endpoint_feed_stop(feed);
    adm_service_watch_destroy(feed->sw);
    free(feed->targets);
    free(feed);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-Service watches of service_watch.h. Each watched Service owns a store of two kinds (its
 * Service, its EndpointSlices) that only its two reflectors fill; nothing else reads those stores,
 * and only on the loop between events, so no request ever pins them and what a change replaces is
 * freed at once.
 */
#include "adm/cluster/service_watch.h"

#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/cluster_store.h"
#include "adm/cluster/reflector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const adm_watched_kind_t service_kind = {"", "v1", "services", "Service", true};
static const adm_watched_kind_t slice_kind = {"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice",
                                              true};

typedef struct watched_s {
    adm_service_watch_t *owner;
    char *namespace_, *name;
    adm_cluster_store_t *store; /* its Service and its EndpointSlices, nothing else */
    adm_kind_store_t *services, *slices;
    adm_reflector_t *service_reflector, *slice_reflector;
    bool keep; /* still named by the set being applied */
} watched_t;

struct adm_service_watch_s {
    uv_loop_t *loop;
    adm_api_client_t *api;
    adm_service_changed_fn changed;
    void *arg;
    watched_t *watched[ADM_SERVICE_WATCH_MAX];
    size_t n;
    bool observing; /* told of the API client's reload changes (adm_api_client_observe) */
};

/*
 * A reload gave the API client new credentials or another server: these watches are not the
 * informer's, so they reconnect here (another server's resourceVersions mean nothing: list again).
 */
static void on_api_changed(void *arg, adm_api_change_t change)
{
    adm_service_watch_t *sw = arg;

    for (size_t i = 0; i < sw->n; i++) {
        adm_reflector_reconnect(sw->watched[i]->service_reflector, change == ADM_API_SERVER);
        adm_reflector_reconnect(sw->watched[i]->slice_reflector, change == ADM_API_SERVER);
    }
}

int adm_service_watch_create(uv_loop_t *loop, adm_api_client_t *api, adm_service_changed_fn changed,
                             void *arg, adm_service_watch_t **out)
{
    adm_service_watch_t *sw = calloc(1, sizeof(*sw));

    *out = NULL;
    if (sw == NULL) {
        return ADM_ENOMEM;
    }
    sw->loop = loop;
    sw->api = api;
    sw->changed = changed;
    sw->arg = arg;
    if (adm_api_client_observe(api, on_api_changed, sw) != 0) {
        free(sw);
        return ADM_ENOMEM;
    }
    sw->observing = true;
    *out = sw;
    return 0;
}

static void on_changed(void *arg)
{
    watched_t *wd = arg;

    wd->owner->changed(wd->owner->arg, wd->namespace_, wd->name);
}

static void watched_free(watched_t *wd)
{
    if (wd == NULL) {
        return;
    }
    /* a stopped reflector neither calls back nor touches its store again */
    adm_reflector_stop(wd->service_reflector);
    adm_reflector_stop(wd->slice_reflector);
    adm_cluster_store_free(wd->store);
    free(wd->namespace_);
    free(wd->name);
    free(wd);
}

static watched_t *watched_start(adm_service_watch_t *sw, const adm_service_ref_t *ref)
{
    watched_t *wd = calloc(1, sizeof(*wd));
    char label[320], field[320];
    adm_reflector_scope_t scope = {.label_selector = label, .field_selector = field, .changed = on_changed};

    if (wd == NULL) {
        return NULL;
    }
    wd->owner = sw;
    wd->namespace_ = strdup(ref->namespace_);
    wd->name = strdup(ref->name);
    wd->store = adm_cluster_store_create();
    if (wd->namespace_ == NULL || wd->name == NULL || wd->store == NULL) {
        goto fail;
    }
    wd->services = adm_cluster_store_kind(wd->store, service_kind.group, service_kind.kind, true);
    wd->slices = adm_cluster_store_kind(wd->store, slice_kind.group, slice_kind.kind, true);
    if (wd->services == NULL || wd->slices == NULL) {
        goto fail;
    }
    snprintf(label, sizeof(label), "kubernetes.io/service-name=%s", ref->name);
    snprintf(field, sizeof(field), "metadata.name=%s", ref->name);
    scope.namespace_ = ref->namespace_;
    scope.arg = wd;
    scope.label_selector = NULL;
    if (adm_reflector_start_scoped(sw->loop, sw->api, &service_kind, &scope, wd->services,
                                   &wd->service_reflector) != 0) {
        goto fail;
    }
    scope.label_selector = label;
    scope.field_selector = NULL;
    if (adm_reflector_start_scoped(sw->loop, sw->api, &slice_kind, &scope, wd->slices,
                                   &wd->slice_reflector) != 0) {
        goto fail;
    }
    adm_log_info("watching Service %s/%s and its EndpointSlices (a webhook calls it)", wd->namespace_,
                 wd->name);
    return wd;
fail:
    watched_free(wd);
    return NULL;
}

static watched_t *find(const adm_service_watch_t *sw, const char *namespace_, const char *name)
{
    for (size_t i = 0; i < sw->n; i++) {
        if (strcmp(sw->watched[i]->namespace_, namespace_) == 0 && strcmp(sw->watched[i]->name, name) == 0) {
            return sw->watched[i];
        }
    }
    return NULL;
}

int adm_service_watch_set(adm_service_watch_t *sw, const adm_service_ref_t *refs, size_t n)
{
    size_t kept = 0;
    int rc = 0;

    for (size_t i = 0; i < sw->n; i++) {
        sw->watched[i]->keep = false;
    }
    for (size_t i = 0; i < n; i++) {
        watched_t *wd = find(sw, refs[i].namespace_, refs[i].name);

        if (wd == NULL && sw->n == ADM_SERVICE_WATCH_MAX) {
            rc = rc != 0 ? rc : ADM_ETOOBIG;
            continue;
        }
        if (wd == NULL) {
            wd = watched_start(sw, &refs[i]);
            if (wd == NULL) {
                rc = ADM_ENOMEM;
                continue;
            }
            sw->watched[sw->n++] = wd;
        }
        wd->keep = true;
    }
    for (size_t i = 0; i < sw->n; i++) {
        watched_t *wd = sw->watched[i];

        if (wd->keep) {
            sw->watched[kept++] = wd;
            continue;
        }
        adm_log_info("no longer watching Service %s/%s (no webhook calls it)", wd->namespace_, wd->name);
        watched_free(wd);
    }
    sw->n = kept;
    return rc;
}

void adm_service_watch_route(adm_service_watch_t *sw, const char *namespace_, const char *name, uint16_t port,
                             adm_service_route_t *out)
{
    watched_t *wd = find(sw, namespace_, name);
    yyjson_val *const *slices;
    yyjson_val *service;
    size_t n = 0;

    if (wd == NULL || !adm_kind_store_synced(wd->services) || !adm_kind_store_synced(wd->slices)) {
        memset(out, 0, sizeof(*out));
        out->kind = ADM_ROUTE_UNKNOWN;
        return;
    }
    service = adm_cluster_store_get(wd->store, service_kind.group, service_kind.kind, namespace_, name);
    slices = adm_cluster_store_list(wd->store, slice_kind.group, slice_kind.kind, namespace_, &n);
    adm_service_route(name, port, service, slices, n, out);
}

bool adm_service_watch_synced(const adm_service_watch_t *sw)
{
    for (size_t i = 0; i < sw->n; i++) {
        if (!adm_kind_store_synced(sw->watched[i]->services) ||
            !adm_kind_store_synced(sw->watched[i]->slices)) {
            return false;
        }
    }
    return true;
}

int adm_service_watch_metrics(const adm_service_watch_t *sw, adm_buf_t *out)
{
    int err = 0;

    if (sw->n == 0) {
        return 0;
    }
    err |= adm_buf_appendf(out, "# HELP admitd_webhook_service_synced 1 once the Service and its "
                                "EndpointSlices were listed (a Service a webhook calls)\n"
                                "# TYPE admitd_webhook_service_synced gauge\n");
    for (size_t i = 0; i < sw->n; i++) {
        const watched_t *wd = sw->watched[i];

        err |= adm_buf_appendf(
            out, "admitd_webhook_service_synced{namespace=\"%s\",service=\"%s\"} %d\n", wd->namespace_,
            wd->name, adm_kind_store_synced(wd->services) && adm_kind_store_synced(wd->slices) ? 1 : 0);
    }
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_service_watch_stop(adm_service_watch_t *sw)
{
    if (sw == NULL) {
        return;
    }
    for (size_t i = 0; i < sw->n; i++) {
        watched_free(sw->watched[i]);
    }
    sw->n = 0;
    /* stopped at shutdown before the API client closes: it must not be told of anything after */
    if (sw->observing) {
        adm_api_client_unobserve(sw->api, on_api_changed, sw);
        sw->observing = false;
    }
}

void adm_service_watch_destroy(adm_service_watch_t *sw)
{
    if (sw == NULL) {
        return;
    }
    adm_service_watch_stop(sw);
    free(sw);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Services webhooks are named by, watched one at a time (issue 18): for each, a reflector on
 * the Service itself (fieldSelector metadata.name=NAME in its namespace) and one on its
 * EndpointSlices (labelSelector kubernetes.io/service-name=NAME in its namespace), each keeping
 * its own small cache, with client-go's list, watch, relist and back-off (reflector.h). Only the
 * objects of the watched Services reach admitd, and a change in the set starts or stops the
 * watches of the Services that came or went, touching no other. When one of a Service's objects
 * changes, the owner is told and asks for the route of each port it calls (service_route.h).
 */
#ifndef ADM_SERVICE_WATCH_H
#define ADM_SERVICE_WATCH_H

#include "adm/base/buf.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/service_route.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Services watched at most: two watch connections each, on the API client's watch pool. */
#define ADM_SERVICE_WATCH_MAX 24

typedef struct adm_service_watch_s adm_service_watch_t;

/* A Service by namespace and name. */
typedef struct adm_service_ref_s {
    const char *namespace_;
    const char *name;
} adm_service_ref_t;

/* Told after a LIST or an event changed what is known of Service namespace_/name. */
typedef void (*adm_service_changed_fn)(void *arg, const char *namespace_, const char *name);

/** A set watching nothing yet, calling through api (retained: it must outlive the set). */
int adm_service_watch_create(uv_loop_t *loop, adm_api_client_t *api, adm_service_changed_fn changed,
                             void *arg, adm_service_watch_t **out);

/**
 * From now on watches exactly the n Services of refs (strings copied; repeats count once): a
 * watch already running goes on untouched, a Service no longer named stops being watched, a new
 * one starts at once (its first LISTs go out on the next loop turn). Returns 0; ADM_ETOOBIG when
 * more than ADM_SERVICE_WATCH_MAX are named (the first ones are watched, the rest not: their calls
 * go by name); ADM_ENOMEM (some of the new ones are not watched).
 */
int adm_service_watch_set(adm_service_watch_t *sw, const adm_service_ref_t *refs, size_t n);

/**
 * The route of a call to namespace_/name on port now: ADM_ROUTE_UNKNOWN while the Service is not
 * watched or either of its LISTs has not been applied yet.
 */
void adm_service_watch_route(adm_service_watch_t *sw, const char *namespace_, const char *name, uint16_t port,
                             adm_service_route_t *out);

/** True when every watched Service's two LISTs have been applied once. */
bool adm_service_watch_synced(const adm_service_watch_t *sw);

/**
 * Appends admitd_webhook_service_synced{namespace,service} (1 once both LISTs were applied), one
 * sample per watched Service; nothing when none is watched. 0 or ADM_ENOMEM.
 */
int adm_service_watch_metrics(const adm_service_watch_t *sw, adm_buf_t *out);

/**
 * Stops every watch (calls in flight cancelled) and stops listening to the API client (which may
 * close after this); the set stays readable, watching nothing, and is not set again.
 */
void adm_service_watch_stop(adm_service_watch_t *sw);

/** Frees it (after stop, or with watches running: they are stopped first). NULL: no-op. */
void adm_service_watch_destroy(adm_service_watch_t *sw);

#endif

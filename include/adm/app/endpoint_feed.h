/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Endpoint spreading from the API server (issue 18): with --kubeconfig or --in-cluster, the
 * Services the running webhook configuration names (clientConfig.service, unless --resolve pins
 * NAME.NAMESPACE.svc:PORT) are watched one at a time (service_watch.h), and each one's route
 * (service_route.h) is given to the webhooks' upstreams (webhooks.h): a change of its
 * EndpointSlices or of the Service reaches every generation of webhooks that may still start a
 * call, at once. A reload that names other Services starts and stops their watches. Before a
 * Service's objects are listed, its calls go by name, as without an API connection.
 */
#ifndef ADM_ENDPOINT_FEED_H
#define ADM_ENDPOINT_FEED_H

#include "adm/app/live_config.h"
#include "adm/base/buf.h"
#include "adm/cluster/api_client.h"

#include <stdbool.h>
#include <uv.h>

typedef struct adm_endpoint_feed_s adm_endpoint_feed_t;

/**
 * Watches the Services of lc's running webhooks through api (both retained: they must outlive the
 * feed) and follows lc's reloads (adm_live_config_on_commit). Returns 0 or ADM_ENOMEM.
 */
int adm_endpoint_feed_create(uv_loop_t *loop, adm_api_client_t *api, adm_live_config_t *lc,
                             adm_endpoint_feed_t **out);

/**
 * A readiness check (arg: the feed): true once every Service watched since start has been listed
 * (its Service and its EndpointSlices), and from then on; Services a reload adds later do not take
 * it back (their calls go by name until they are listed).
 */
bool adm_endpoint_feed_synced(void *arg);

/**
 * Appends admitd_webhook_service_synced{namespace,service} and
 * admitd_webhook_service_endpoints{namespace,service,port} (the endpoints calls spread over now;
 * 0 when they fail at once or go by name). arg: the feed. 0 or ADM_ENOMEM.
 */
int adm_endpoint_feed_metrics(void *arg, adm_buf_t *out);

/** Stops the watches (before the API client closes); the webhooks keep the routes they have. */
void adm_endpoint_feed_stop(adm_endpoint_feed_t *feed);

/** Frees the feed (stopping it first). NULL: no-op. */
void adm_endpoint_feed_destroy(adm_endpoint_feed_t *feed);

#endif

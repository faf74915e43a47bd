/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a webhook call to a Service goes (issue 18), decided from the Service object and its
 * EndpointSlices as the default kube-apiserver and kube-proxy decide it. kube-apiserver without
 * --enable-aggregator-routing resolves a webhook's service through its ClusterIP resolver
 * (k8s.io/apiserver pkg/util/proxy ResolveCluster): the Service must exist, a ClusterIP "None"
 * cannot be routed to, an ExternalName is called by that name, and the webhook's port must be one
 * of spec.ports[].port. kube-proxy then sends the connection to one of the endpoints of that
 * service port: the EndpointSlice port with the same name, the endpoints whose conditions.ready
 * is true or absent, and, only when none is, those both serving and terminating (pkg/proxy
 * CategorizeEndpoints; serving absent counts as true, terminating absent as false); a ClusterIP
 * without either refuses the connection. admitd goes straight to those endpoints, one call at a
 * time, so the same set takes the calls; and where kube's call would fail, admitd's fails with the
 * same words, so the webhook's failurePolicy decides as kube's would (Decision D19).
 */
#ifndef ADM_SERVICE_ROUTE_H
#define ADM_SERVICE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <yyjson.h>

/* Endpoints one route spreads over at most (the first ones in address order). */
#define ADM_ROUTE_ADDRS_MAX 32

typedef enum adm_route_kind_e {
    ADM_ROUTE_UNKNOWN,   /* not known yet (not listed): calls go by the name, as before */
    ADM_ROUTE_BY_NAME,   /* an ExternalName Service: by the name (DNS), as kube calls the external name */
    ADM_ROUTE_ENDPOINTS, /* spread over addrs */
    ADM_ROUTE_REFUSE,    /* every call fails at once with reason, as kube's call would */
} adm_route_kind_t;

typedef struct adm_service_route_s {
    adm_route_kind_t kind;
    size_t n;                                           /* ENDPOINTS: addresses in addrs and text */
    struct sockaddr_storage addrs[ADM_ROUTE_ADDRS_MAX]; /* endpoint address and port, sorted */
    char text[ADM_ROUTE_ADDRS_MAX][48];                 /* each as "10.0.0.1:8443" or "[fd00::1]:8443" */
    size_t left_out;                                    /* usable endpoints past ADM_ROUTE_ADDRS_MAX */
    bool terminating; /* no endpoint was ready: these are the serving, terminating ones */
    char label[64];   /* REFUSE: the ClusterIP:port kube's call would have gone to, or "" */
    char reason[256]; /* REFUSE: what the call fails with, e.g. `service "x" not found` */
} adm_service_route_t;

/**
 * The route for calls to Service name on port, from service (the Service object, NULL when there is
 * none) and the n EndpointSlices of slices (those labelled kubernetes.io/service-name=name in its
 * namespace; others are ignored). Only the endpoints of the Service's primary IP family count
 * (spec.ipFamilies[0], else its ClusterIP's family), as only they are behind its ClusterIP; an
 * endpoint is its first address, once however many slices list it. Reasons for REFUSE, in
 * kube's words: `service "NAME" not found`, `cannot route to service with ClusterIP "None"`,
 * `unsupported service type "T"`, `no service port P found for service "NAME"`, and, for a
 * Service with no usable endpoint, `dial tcp CLUSTERIP:P: connect: connection refused` (what
 * kube-proxy's REJECT answers).
 */
void adm_service_route(const char *name, uint16_t port, yyjson_val *service, yyjson_val *const *slices,
                       size_t n, adm_service_route_t *out);

/** True when a and b send calls the same way. */
bool adm_service_route_equal(const adm_service_route_t *a, const adm_service_route_t *b);

/** The route in words for a log line: "3 endpoints: 10.0.0.1:8443 ...", "refused: ...". */
void adm_service_route_describe(const adm_service_route_t *r, char *out, size_t out_len);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Routes: which handler answers a path on a listener. The server chooses a request's route once,
 * when its head has arrived, and keeps it for the exchange. A route also declares what can be
 * checked from the head alone, so the server refuses those requests itself, after reading and
 * dropping their body, and the handler never sees them:
 *   no route for the path                                  404
 *   a method the route does not take                       405, with Allow
 *   no verified client certificate under --client-ca-file  401 (D11; the probes and /metrics
 *                                                              never ask for one)
 *   a Content-Type other than application/json             415
 * in that order. The route's label names it in admitd_requests_total{endpoint}.
 *
 * The table is small (a server has a few paths) and fixed once the server starts, so lookup is a
 * scan of one listener's routes with a string compare each.
 */
#ifndef ADM_ROUTE_H
#define ADM_ROUTE_H

#include "adm/net/http.h"
#include "adm/server/exchange.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits of adm_route_t.listeners. */
#define ADM_ON_ADMISSION (1u << ADM_LISTENER_ADMISSION)
#define ADM_ON_HEALTH (1u << ADM_LISTENER_HEALTH)
#define ADM_ON_METRICS (1u << ADM_LISTENER_METRICS)

typedef enum adm_route_method_e {
    ADM_ROUTE_ANY_METHOD, /* the handler takes every method */
    ADM_ROUTE_POST,       /* others: 405, Allow: POST */
    ADM_ROUTE_GET,        /* GET and HEAD (the handler omits HEAD's body); others: 405, Allow: GET, HEAD */
} adm_route_method_t;

typedef struct adm_route_s {
    /* The whole path, query excluded ("/validate"); NULL: a catch-all, taking every path of its
       listeners that no other route takes. */
    const char *path;
    const char *label;         /* endpoint label of its metrics ([A-Za-z0-9_-]); NULL: "other" */
    unsigned listeners;        /* ADM_ON_* bits: where the path is served */
    adm_route_method_t method; /* the methods it takes */
    const char *method_text;   /* body of its 405; NULL: "method not allowed: use POST\n" (or GET) */
    bool client_cert;          /* 401 without a verified client certificate under --client-ca-file */
    bool json;                 /* 415 for a Content-Type other than application/json */
    adm_handler_fn handler;    /* answers the requests that pass the checks */
    void *arg;                 /* the handler's; kept, not owned */
} adm_route_t;

/* Routes of one server, all listeners together. */
#define ADM_ROUTES_MAX 16

/* All zero is not an empty table: use adm_route_table_init(). */
typedef struct adm_route_table_s {
    adm_route_t routes[ADM_ROUTES_MAX]; /* copies, in the order added */
    unsigned endpoints[ADM_ROUTES_MAX]; /* metrics slot of each route's label */
    size_t n;
    /* Per listener: its exact paths (indices into routes, in the order added) and its catch-all. */
    uint8_t exact[ADM_LISTENER_KINDS][ADM_ROUTES_MAX];
    uint8_t nexact[ADM_LISTENER_KINDS];
    int8_t fallback[ADM_LISTENER_KINDS]; /* -1: none */
} adm_route_table_t;

/** Makes t an empty table: no route on any listener, no catch-all. */
void adm_route_table_init(adm_route_table_t *t);

/**
 * Adds a copy of route with its metrics slot. The strings and arg it points to are kept, not
 * copied: they must outlive the table. Returns 0; ADM_EINVAL when the route has no handler, no
 * listener, a path not starting with '/', or a path (or a catch-all) that one of its listeners
 * already has; ADM_ETOOBIG when the table is full. The table is unchanged on error.
 */
int adm_route_table_add(adm_route_table_t *t, const adm_route_t *route, unsigned endpoint);

/**
 * The route serving path on a listener: its exact path, else its catch-all, else NULL. *endpoint
 * gets the route's metrics slot (left alone when NULL is returned).
 */
const adm_route_t *adm_route_table_find(const adm_route_table_t *t, adm_listener_kind_t listener,
                                        const char *path, unsigned *endpoint);

/**
 * Makes the checks route declares on a request's head; route NULL means none was found.
 * client_ca: the server asks for client certificates (--client-ca-file); peer_verified: this
 * client's verified. Returns 0 when the handler may have the request, else ADM_DECLINED with the
 * refusal in *resp (static strings).
 */
int adm_route_check(const adm_route_t *route, const adm_http_request_t *r, bool client_ca, bool peer_verified,
                    adm_http_response_t *resp);

#endif

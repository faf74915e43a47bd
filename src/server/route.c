/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The route table and the checks a route declares on a request's head. Routes are added while the
 * server is set up and never change afterwards; each listener keeps its own list of indices, so a
 * lookup compares the path with that listener's routes only, and the catch-all is tried last
 * whatever the order routes were added in.
 */
#include "adm/server/route.h"

#include "adm/base/error.h"

#include <string.h>
#include <strings.h>

void adm_route_table_init(adm_route_table_t *t)
{
    memset(t, 0, sizeof(*t));
    for (int k = 0; k < ADM_LISTENER_KINDS; k++) {
        t->fallback[k] = -1;
    }
}

static const adm_route_t *find_exact(const adm_route_table_t *t, int listener, const char *path,
                                     size_t *index)
{
    for (size_t i = 0; i < t->nexact[listener]; i++) {
        const adm_route_t *rt = &t->routes[t->exact[listener][i]];

        if (strcmp(rt->path, path) == 0) {
            *index = t->exact[listener][i];
            return rt;
        }
    }
    return NULL;
}

/* The listeners a route names, each one it may be added to (the path or catch-all still free). */
static bool fits(const adm_route_table_t *t, const adm_route_t *route)
{
    size_t unused;

    for (int k = 0; k < ADM_LISTENER_KINDS; k++) {
        if ((route->listeners & (1u << k)) == 0) {
            continue;
        }
        if (route->path == NULL ? t->fallback[k] >= 0 : find_exact(t, k, route->path, &unused) != NULL) {
            return false;
        }
    }
    return true;
}

int adm_route_table_add(adm_route_table_t *t, const adm_route_t *route, unsigned endpoint)
{
    unsigned all = (1u << ADM_LISTENER_KINDS) - 1;
    size_t i = t->n;

    if (route->handler == NULL || route->listeners == 0 || (route->listeners & ~all) != 0 ||
        (route->path != NULL && route->path[0] != '/') || !fits(t, route)) {
        return ADM_EINVAL;
    }
    if (t->n == ADM_ROUTES_MAX) {
        return ADM_ETOOBIG;
    }
    t->routes[i] = *route;
    t->endpoints[i] = endpoint;
    t->n++;
    for (int k = 0; k < ADM_LISTENER_KINDS; k++) {
        if ((route->listeners & (1u << k)) == 0) {
            continue;
        }
        if (route->path == NULL) {
            t->fallback[k] = (int8_t)i;
        } else {
            t->exact[k][t->nexact[k]++] = (uint8_t)i;
        }
    }
    return 0;
}

const adm_route_t *adm_route_table_find(const adm_route_table_t *t, adm_listener_kind_t listener,
                                        const char *path, unsigned *endpoint)
{
    const adm_route_t *rt;
    size_t i;

    if ((int)listener < 0 || listener >= ADM_LISTENER_KINDS) {
        return NULL;
    }
    rt = find_exact(t, (int)listener, path, &i);
    if (rt == NULL && t->fallback[listener] >= 0) {
        i = (size_t)t->fallback[listener];
        rt = &t->routes[i];
    }
    if (rt != NULL) {
        *endpoint = t->endpoints[i];
    }
    return rt;
}

static void refuse(adm_http_response_t *resp, int status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = text;
    resp->body_len = strlen(text);
}

/* "application/json", optionally with parameters ("; charset=utf-8"), any letter case. */
static bool is_json_content_type(const char *ct)
{
    size_t n = strlen("application/json");

    if (ct == NULL) {
        return false;
    }
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    if (strncasecmp(ct, "application/json", n) != 0) {
        return false;
    }
    ct += n;
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    return *ct == '\0' || *ct == ';';
}

/* 405 for a method the route does not take; false when the method is fine. */
static bool wrong_method(const adm_route_t *route, uint8_t method, adm_http_response_t *resp)
{
    /* The answers are whole static strings: a 405 costs no formatting and no memory. */
    static const char *const texts[][2] = {
        [ADM_ROUTE_POST] = {"method not allowed: use POST\n", "POST"},
        [ADM_ROUTE_GET] = {"method not allowed: use GET\n", "GET, HEAD"},
    };
    bool ok;

    switch (route->method) {
    case ADM_ROUTE_POST: ok = method == HTTP_POST; break;
    case ADM_ROUTE_GET: ok = method == HTTP_GET || method == HTTP_HEAD; break;
    default: return false;
    }
    if (ok) {
        return false;
    }
    refuse(resp, 405, route->method_text != NULL ? route->method_text : texts[route->method][0]);
    resp->allow = texts[route->method][1];
    return true;
}

int adm_route_check(const adm_route_t *route, const adm_http_request_t *r, bool client_ca, bool peer_verified,
                    adm_http_response_t *resp)
{
    if (route == NULL) {
        refuse(resp, 404, "404 page not found\n");
        return ADM_DECLINED;
    }
    if (wrong_method(route, r->method, resp)) {
        return ADM_DECLINED;
    }
    if (route->client_cert && client_ca && !peer_verified) {
        refuse(resp, 401, "a verified client certificate is required\n");
        return ADM_DECLINED;
    }
    if (route->json && !is_json_content_type(r->content_type)) {
        refuse(resp, 415, "Content-Type must be application/json\n");
        return ADM_DECLINED;
    }
    return 0;
}

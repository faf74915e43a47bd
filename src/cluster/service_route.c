/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The route of service_route.h: kube-apiserver's ClusterIP resolver's checks on the Service, then
 * kube-proxy's choice of endpoints for the service port (ready ones, else serving terminating
 * ones), read from the objects as the API serves them. Runs only when a watch event changed one of
 * them, so it may allocate.
 */
#include "adm/cluster/service_route.h"

#include "adm/base/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE_NAME_LABEL "kubernetes.io/service-name"

/* One endpoint found in a slice. */
typedef struct candidate_s {
    struct sockaddr_storage sa;
    bool fallback; /* not ready, but serving and terminating */
} candidate_t;

static const char *str_of(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    return yyjson_is_str(v) ? yyjson_get_str(v) : NULL;
}

/* An EndpointConditions member: absent or null reads as dflt (the API's documented defaults). */
static bool condition(yyjson_val *conditions, const char *key, bool dflt)
{
    yyjson_val *v = yyjson_obj_get(conditions, key);

    return yyjson_is_bool(v) ? yyjson_get_bool(v) : dflt;
}

static void refuse(adm_service_route_t *out, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(adm_service_route_t *out, const char *label, const char *fmt, ...)
{
    va_list ap;

    out->kind = ADM_ROUTE_REFUSE;
    snprintf(out->label, sizeof(out->label), "%s", label);
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
    va_end(ap);
}

/* ip with port into sa when it is an address of family; false otherwise. */
static bool parse_ip(const char *ip, int family, uint16_t port, struct sockaddr_storage *sa)
{
    memset(sa, 0, sizeof(*sa));
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)sa;

        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        return inet_pton(AF_INET, ip, &in->sin_addr) == 1;
    }
    {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1;
    }
}

/* The Service's primary IP family: spec.ipFamilies[0], else its ClusterIP's, else IPv4. */
static int primary_family(yyjson_val *spec, const char *cluster_ip)
{
    const char *first = yyjson_get_str(yyjson_arr_get_first(yyjson_obj_get(spec, "ipFamilies")));
    struct in6_addr scratch;

    if (first != NULL) {
        return strcmp(first, "IPv6") == 0 ? AF_INET6 : AF_INET;
    }
    return inet_pton(AF_INET6, cluster_ip, &scratch) == 1 ? AF_INET6 : AF_INET;
}

/* The number of the slice's port named port_name (TCP), or 0 when it has none. */
static uint16_t slice_port(yyjson_val *slice, const char *port_name)
{
    yyjson_val *p;
    size_t i, max;

    yyjson_arr_foreach(yyjson_obj_get(slice, "ports"), i, max, p)
    {
        const char *name = str_of(p, "name");
        const char *protocol = str_of(p, "protocol");
        yyjson_val *number = yyjson_obj_get(p, "port");

        /* a port without a name, or without a number, serves no service port (RandomEndpoint) */
        if (name == NULL || strcmp(name, port_name) != 0 || !yyjson_is_int(number) ||
            (protocol != NULL && strcmp(protocol, "TCP") != 0)) {
            continue;
        }
        if (yyjson_get_sint(number) > 0 && yyjson_get_sint(number) <= 65535) {
            return (uint16_t)yyjson_get_sint(number);
        }
    }
    return 0;
}

static int compare_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return a->ss_family == AF_INET ? -1 : 1;
    }
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)a, *y = (const struct sockaddr_in *)b;
        int c = memcmp(&x->sin_addr, &y->sin_addr, sizeof(x->sin_addr));

        return c != 0 ? c : (int)ntohs(x->sin_port) - (int)ntohs(y->sin_port);
    }
    {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a, *y = (const struct sockaddr_in6 *)b;
        int c = memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));

        return c != 0 ? c : (int)ntohs(x->sin6_port) - (int)ntohs(y->sin6_port);
    }
}

/* Ready ones first, each group in address order. */
static int compare_candidates(const void *pa, const void *pb)
{
    const candidate_t *a = pa, *b = pb;

    if (a->fallback != b->fallback) {
        return a->fallback ? 1 : -1;
    }
    return compare_addr(&a->sa, &b->sa);
}

static size_t count_endpoints(yyjson_val *const *slices, size_t n)
{
    size_t total = 0;

    for (size_t i = 0; i < n; i++) {
        total += yyjson_arr_size(yyjson_obj_get(slices[i], "endpoints"));
    }
    return total;
}

/* The usable endpoints of the slices for port_name, of family, into c; returns how many. */
static size_t gather(const char *name, const char *port_name, int family, yyjson_val *const *slices, size_t n,
                     candidate_t *c)
{
    const char *address_type = family == AF_INET6 ? "IPv6" : "IPv4";
    size_t found = 0;

    for (size_t s = 0; s < n; s++) {
        const char *owner =
            str_of(yyjson_obj_get(yyjson_obj_get(slices[s], "metadata"), "labels"), SERVICE_NAME_LABEL);
        const char *type = str_of(slices[s], "addressType");
        uint16_t port = slice_port(slices[s], port_name);
        yyjson_val *ep;
        size_t i, max;

        if (owner == NULL || strcmp(owner, name) != 0 || type == NULL || strcmp(type, address_type) != 0 ||
            port == 0) {
            continue; /* another Service's, an FQDN slice, or one without that port */
        }
        yyjson_arr_foreach(yyjson_obj_get(slices[s], "endpoints"), i, max, ep)
        {
            yyjson_val *conditions = yyjson_obj_get(ep, "conditions");
            const char *ip = yyjson_get_str(yyjson_arr_get_first(yyjson_obj_get(ep, "addresses")));
            bool ready = condition(conditions, "ready", true);
            bool serving = condition(conditions, "serving", true);
            bool terminating = condition(conditions, "terminating", false);

            if (ip == NULL || (!ready && !(serving && terminating)) ||
                !parse_ip(ip, family, port, &c[found].sa)) {
                continue;
            }
            c[found].fallback = !ready;
            found++;
        }
    }
    return found;
}

/* kube-proxy's endpoints for the port: the ready ones, else the serving terminating ones. */
static void choose(adm_service_route_t *out, candidate_t *c, size_t found)
{
    bool fallback;

    qsort(c, found, sizeof(*c), compare_candidates);
    fallback = found > 0 && c[0].fallback;
    for (size_t i = 0; i < found && c[i].fallback == fallback; i++) {
        if (out->n > 0 && compare_addr(&out->addrs[out->n - 1], &c[i].sa) == 0) {
            continue; /* listed by two slices (a move between them) */
        }
        if (out->n == ADM_ROUTE_ADDRS_MAX) {
            out->left_out++;
            continue;
        }
        out->addrs[out->n] = c[i].sa;
        adm_format_addr((const struct sockaddr *)&c[i].sa, out->text[out->n], sizeof(out->text[0]));
        out->n++;
    }
    out->terminating = fallback;
}

void adm_service_route(const char *name, uint16_t port, yyjson_val *service, yyjson_val *const *slices,
                       size_t n, adm_service_route_t *out)
{
    yyjson_val *spec = yyjson_obj_get(service, "spec"), *p;
    const char *type = str_of(spec, "type"), *cluster_ip = str_of(spec, "clusterIP");
    const char *port_name = NULL;
    candidate_t *c;
    size_t i, max, found;
    char label[64];

    memset(out, 0, sizeof(*out));
    if (service == NULL) {
        refuse(out, "", "service \"%s\" not found", name);
        return;
    }
    type = type != NULL ? type : "ClusterIP"; /* the API's default */
    cluster_ip = cluster_ip != NULL ? cluster_ip : "";
    if (strcmp(type, "ClusterIP") == 0 && strcmp(cluster_ip, "None") == 0) {
        refuse(out, "", "cannot route to service with ClusterIP \"None\"");
        return;
    }
    if (strcmp(type, "ExternalName") == 0) {
        out->kind = ADM_ROUTE_BY_NAME;
        return;
    }
    if (strcmp(type, "ClusterIP") != 0 && strcmp(type, "NodePort") != 0 &&
        strcmp(type, "LoadBalancer") != 0) {
        refuse(out, "", "unsupported service type \"%.64s\"", type);
        return;
    }
    yyjson_arr_foreach(yyjson_obj_get(spec, "ports"), i, max, p)
    {
        if (port_name == NULL && yyjson_is_int(yyjson_obj_get(p, "port")) &&
            yyjson_get_sint(yyjson_obj_get(p, "port")) == port) {
            port_name = str_of(p, "name") != NULL ? str_of(p, "name") : "";
        }
    }
    if (port_name == NULL) {
        refuse(out, "", "no service port %u found for service \"%s\"", (unsigned)port, name);
        return;
    }
    c = calloc(count_endpoints(slices, n) + 1, sizeof(*c));
    found = c != NULL ? gather(name, port_name, primary_family(spec, cluster_ip), slices, n, c) : 0;
    out->kind = ADM_ROUTE_ENDPOINTS;
    choose(out, c, found);
    free(c);
    if (out->n > 0) {
        return;
    }
    if (cluster_ip[0] == '\0') {
        /* a Service the API always gives one; the endpoint resolver's words for want of it */
        refuse(out, "", "no endpoints available for service \"%s\"", name);
        return;
    }
    snprintf(label, sizeof(label), strchr(cluster_ip, ':') != NULL ? "[%.45s]:%u" : "%.45s:%u", cluster_ip,
             (unsigned)port);
    refuse(out, label, "dial tcp %s: connect: connection refused", label);
}

bool adm_service_route_equal(const adm_service_route_t *a, const adm_service_route_t *b)
{
    if (a->kind != b->kind || a->n != b->n || strcmp(a->reason, b->reason) != 0 ||
        strcmp(a->label, b->label) != 0) {
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (compare_addr(&a->addrs[i], &b->addrs[i]) != 0) {
            return false;
        }
    }
    return true;
}

void adm_service_route_describe(const adm_service_route_t *r, char *out, size_t out_len)
{
    size_t used;

    switch (r->kind) {
    case ADM_ROUTE_UNKNOWN: snprintf(out, out_len, "not known yet: calls go by name"); return;
    case ADM_ROUTE_BY_NAME: snprintf(out, out_len, "ExternalName: calls go by name"); return;
    case ADM_ROUTE_REFUSE: snprintf(out, out_len, "no endpoint: calls fail with: %s", r->reason); return;
    case ADM_ROUTE_ENDPOINTS: break;
    }
    snprintf(out, out_len, "%zu %sendpoint%s:", r->n, r->terminating ? "terminating " : "",
             r->n == 1 ? "" : "s");
    for (size_t i = 0; i < r->n; i++) {
        used = strlen(out);
        if (used + strlen(r->text[i]) + 8 >= out_len) {
            snprintf(out + used, out_len - used, " ...");
            return;
        }
        snprintf(out + used, out_len - used, " %s", r->text[i]);
    }
    if (r->left_out > 0) {
        used = strlen(out);
        snprintf(out + used, out_len - used, " (%zu more left out)", r->left_out);
    }
}

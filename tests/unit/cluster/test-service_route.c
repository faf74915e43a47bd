/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A webhook Service's route (service_route.h) against kube's rules: the ClusterIP resolver's checks
 * on the Service (missing, ClusterIP "None", ExternalName, another type, a port it does not have),
 * the EndpointSlice port found by the service port's name, ready endpoints (an absent condition is
 * ready), the serving-terminating fallback when none is ready, the primary IP family only, one
 * entry per address across slices, other Services' and FQDN slices ignored, the cap, and the
 * refusal of a Service with no usable endpoint in kube-proxy's words.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/cluster/service_route.h"

#define SVC                                                                                                  \
    "{\"metadata\":{\"name\":\"hook\",\"namespace\":\"ns\"},\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":" \
    "\"10.96.0.10\",\"ipFamilies\":[\"IPv4\"],\"ports\":[{\"name\":\"metrics\",\"port\":9090},{\"name\":"    \
    "\"https\",\"port\":443,\"targetPort\":8443}]}}"

/* A slice of Service hook with port https=8443 and the given endpoints (a JSON array). */
#define SLICE(name, eps)                                                                                     \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"labels\":{\"kubernetes.io/service-name\":"  \
    "\"hook\"}},\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"metrics\",\"port\":9090,\"protocol\":"       \
    "\"TCP\"},{\"name\":\"https\",\"port\":8443,\"protocol\":\"TCP\"}],\"endpoints\":" eps "}"

static yyjson_doc *docs[64];
static size_t ndocs;

static yyjson_val *parse(const char *text)
{
    yyjson_doc *d = yyjson_read(text, strlen(text), 0);

    assert_non_null(d);
    docs[ndocs++] = d;
    return yyjson_doc_get_root(d);
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < ndocs; i++) {
        yyjson_doc_free(docs[i]);
    }
    ndocs = 0;
    return 0;
}

/* The route for port 443 of Service text (NULL: none) with the slices' texts. */
static void route(const char *service, const char *const *slices, size_t n, adm_service_route_t *out)
{
    yyjson_val *vals[4];

    for (size_t i = 0; i < n; i++) {
        vals[i] = parse(slices[i]);
    }
    adm_service_route("hook", 443, service != NULL ? parse(service) : NULL, vals, n, out);
}

static void test_ready_endpoints_of_the_named_port(void **state)
{
    static const char *const slices[] = {
        SLICE("a", "[{\"addresses\":[\"10.0.0.2\"],\"conditions\":{\"ready\":true}},"
                   "{\"addresses\":[\"10.0.0.1\"]},"
                   "{\"addresses\":[\"10.0.0.3\"],\"conditions\":{\"ready\":false,\"serving\":true,"
                   "\"terminating\":true}},"
                   "{\"addresses\":[\"10.0.0.4\"],\"conditions\":{\"ready\":false}}]"),
        SLICE("b", "[{\"addresses\":[\"10.0.0.2\"],\"conditions\":{\"ready\":true}},"
                   "{\"addresses\":[\"10.0.0.10\",\"10.9.9.9\"],\"conditions\":{\"ready\":null}}]"),
    };
    adm_service_route_t r;
    char words[256];

    (void)state;
    route(SVC, slices, 2, &r);
    assert_int_equal(r.kind, ADM_ROUTE_ENDPOINTS);
    assert_false(r.terminating);
    /* absent and null ready are ready; the first address only; 10.0.0.2 once; address order */
    assert_int_equal(r.n, 3);
    assert_string_equal(r.text[0], "10.0.0.1:8443");
    assert_string_equal(r.text[1], "10.0.0.2:8443");
    assert_string_equal(r.text[2], "10.0.0.10:8443");
    adm_service_route_describe(&r, words, sizeof(words));
    assert_string_equal(words, "3 endpoints: 10.0.0.1:8443 10.0.0.2:8443 10.0.0.10:8443");
}

static void test_terminating_fallback_then_refusal(void **state)
{
    static const char *const terminating[] = {
        SLICE("a", "[{\"addresses\":[\"10.0.0.3\"],\"conditions\":{\"ready\":false,\"serving\":true,"
                   "\"terminating\":true}},"
                   "{\"addresses\":[\"10.0.0.4\"],\"conditions\":{\"ready\":false,\"terminating\":true}},"
                   "{\"addresses\":[\"10.0.0.5\"],\"conditions\":{\"ready\":false,\"serving\":false,"
                   "\"terminating\":true}},"
                   "{\"addresses\":[\"10.0.0.6\"],\"conditions\":{\"ready\":false,\"serving\":true}}]"),
    };
    static const char *const none[] = {SLICE("a", "[]")};
    adm_service_route_t r;

    (void)state;
    route(SVC, terminating, 1, &r);
    /* no ready endpoint: the serving terminating ones (serving absent is serving); not-ready
       endpoints that are not terminating never */
    assert_int_equal(r.kind, ADM_ROUTE_ENDPOINTS);
    assert_true(r.terminating);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.text[0], "10.0.0.3:8443");
    assert_string_equal(r.text[1], "10.0.0.4:8443");
    route(SVC, none, 1, &r);
    assert_int_equal(r.kind, ADM_ROUTE_REFUSE);
    assert_string_equal(r.label, "10.96.0.10:443");
    assert_string_equal(r.reason, "dial tcp 10.96.0.10:443: connect: connection refused");
    route(SVC, NULL, 0, &r);
    assert_int_equal(r.kind, ADM_ROUTE_REFUSE);
}

static void test_service_checks(void **state)
{
    static const char *const slices[] = {SLICE("a", "[{\"addresses\":[\"10.0.0.1\"]}]")};
    adm_service_route_t r;

    (void)state;
    route(NULL, slices, 1, &r);
    assert_int_equal(r.kind, ADM_ROUTE_REFUSE);
    assert_string_equal(r.reason, "service \"hook\" not found");
    route("{\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"port\":443}]}}", slices, 1, &r);
    assert_string_equal(r.reason, "cannot route to service with ClusterIP \"None\"");
    route("{\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"hooks.example.com\"}}", slices, 1, &r);
    assert_int_equal(r.kind, ADM_ROUTE_BY_NAME);
    route("{\"spec\":{\"type\":\"Weird\",\"ports\":[{\"port\":443}]}}", slices, 1, &r);
    assert_string_equal(r.reason, "unsupported service type \"Weird\"");
    route("{\"spec\":{\"clusterIP\":\"10.96.0.1\",\"ports\":[{\"name\":\"https\",\"port\":8443}]}}", slices,
          1, &r);
    assert_string_equal(r.reason, "no service port 443 found for service \"hook\"");
    /* NodePort and LoadBalancer are called through their ClusterIP too; an unnamed port is "" */
    route("{\"spec\":{\"type\":\"NodePort\",\"clusterIP\":\"10.96.0.1\",\"ports\":[{\"port\":443}]}}", slices,
          1, &r);
    assert_int_equal(r.kind, ADM_ROUTE_REFUSE); /* the slice's port is named https, not "" */
    assert_string_equal(r.reason, "dial tcp 10.96.0.1:443: connect: connection refused");
}

static void test_families_owners_and_cap(void **state)
{
    static const char v6svc[] = "{\"spec\":{\"clusterIP\":\"fd00::10\",\"ipFamilies\":[\"IPv6\",\"IPv4\"],"
                                "\"ports\":[{\"name\":\"https\",\"port\":443}]}}";
    static const char *const mixed[] = {
        SLICE("v4", "[{\"addresses\":[\"10.0.0.1\"]}]"),
        "{\"metadata\":{\"name\":\"v6\",\"labels\":{\"kubernetes.io/"
        "service-name\":\"hook\"}},\"addressType\":"
        "\"IPv6\",\"ports\":[{\"name\":\"https\",\"port\":8443}],\"endpoints\":[{\"addresses\":[\"fd00::1\"]}"
        "]}",
        "{\"metadata\":{\"name\":\"other\",\"labels\":{\"kubernetes.io/service-name\":\"other\"}},"
        "\"addressType\":\"IPv6\",\"ports\":[{\"name\":\"https\",\"port\":8443}],\"endpoints\":[{"
        "\"addresses\":[\"fd00::2\"]}]}",
        "{\"metadata\":{\"name\":\"fqdn\",\"labels\":{\"kubernetes.io/"
        "service-name\":\"hook\"}},\"addressType\":"
        "\"FQDN\",\"ports\":[{\"name\":\"https\",\"port\":8443}],\"endpoints\":[{\"addresses\":[\"a."
        "example\"]}]}",
    };
    static char big[16384];
    const char *one[1] = {big};
    adm_service_route_t r;
    size_t used;

    (void)state;
    route(v6svc, mixed, 4, &r);
    assert_int_equal(r.kind, ADM_ROUTE_ENDPOINTS);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.text[0], "[fd00::1]:8443");
    route(v6svc, mixed, 1, &r); /* only IPv4 endpoints: none behind an IPv6 ClusterIP */
    assert_string_equal(r.reason, "dial tcp [fd00::10]:443: connect: connection refused");
    assert_string_equal(r.label, "[fd00::10]:443");

    used = (size_t)snprintf(big, sizeof(big), "%s", SLICE("big", "["));
    used -= 1; /* the slice's closing "}" comes after the endpoints */
    for (int i = 0; i < ADM_ROUTE_ADDRS_MAX + 5; i++) {
        used += (size_t)snprintf(big + used, sizeof(big) - used, "%s{\"addresses\":[\"10.1.0.%d\"]}",
                                 i > 0 ? "," : "", i + 1);
    }
    snprintf(big + used, sizeof(big) - used, "]}");
    route(SVC, one, 1, &r);
    assert_int_equal(r.n, ADM_ROUTE_ADDRS_MAX);
    assert_int_equal(r.left_out, 5);
}

static void test_equal(void **state)
{
    static const char *const two[] = {
        SLICE("a", "[{\"addresses\":[\"10.0.0.1\"]},{\"addresses\":[\"10.0.0.2\"]}]")};
    static const char *const swapped[] = {
        SLICE("a", "[{\"addresses\":[\"10.0.0.2\"]},{\"addresses\":[\"10.0.0.1\"]}]")};
    static const char *const one[] = {SLICE("a", "[{\"addresses\":[\"10.0.0.1\"]}]")};
    adm_service_route_t a, b;

    (void)state;
    route(SVC, two, 1, &a);
    route(SVC, swapped, 1, &b);
    assert_true(adm_service_route_equal(&a, &b));
    route(SVC, one, 1, &b);
    assert_false(adm_service_route_equal(&a, &b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_ready_endpoints_of_the_named_port, teardown),
        cmocka_unit_test_teardown(test_terminating_fallback_then_refusal, teardown),
        cmocka_unit_test_teardown(test_service_checks, teardown),
        cmocka_unit_test_teardown(test_families_owners_and_cap, teardown),
        cmocka_unit_test_teardown(test_equal, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

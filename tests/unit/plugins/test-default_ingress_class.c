/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DefaultIngressClass: the table of kube's network/defaultingressclass admission_test.go replayed
 * with IngressClasses in cluster-state files: default chosen (newest wins), ingresses that name a
 * class or carry kubernetes.io/ingress.class left alone, a non-Ingress object refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_default_ingress_class;

static adm_arena_t *arena;

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_arena_destroy(arena);
    return 0;
}

#define IC(name, def, created)                                                                               \
    "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: " name                      \
    ", annotations: {ingressclass.kubernetes.io/is-default-class: '" def "'}" created "}\n"

static pt_result_t ingress(const char *classes, const char *kind, const char *obj)
{
    adm_cluster_state_t *cs = pt_load_cluster(classes);
    pt_request_t r = {.operation = "CREATE",
                      .group = "networking.k8s.io",
                      .resource = "ingresses",
                      .kind = kind,
                      .namespace_ = "ns",
                      .name = "i",
                      .object = obj};
    pt_result_t res;

    pt_set_cluster(cs);
    res = pt_run(arena, &adm_plugin_default_ingress_class, NULL, 'm', &r);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
    return res;
}

static void test_ingress_class(void **state)
{
    pt_result_t r;

    (void)state;
    r = ingress(IC("a", "false", "") IC("b", "true", ""), "Ingress", "{\"spec\":{}}");
    assert_json_equal(r.object, "{\"spec\":{\"ingressClassName\":\"b\"}}");
    r = ingress(IC("a", "true", ", creationTimestamp: '2022-01-01T00:00:00Z'") IC("b", "true", ""), "Ingress",
                "{}");
    assert_json_equal(r.object, "{\"spec\":{\"ingressClassName\":\"a\"}}");
    r = ingress(IC("a", "false", ""), "Ingress", "{\"spec\":{}}");
    assert_false(r.changed);
    r = ingress(IC("b", "true", ""), "Ingress", "{\"spec\":{\"ingressClassName\":\"mine\"}}");
    assert_false(r.changed);
    r = ingress(IC("b", "true", ""), "Ingress",
                "{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress.class\":\"nginx\"}},\"spec\":{}}");
    assert_false(r.changed);
    r = ingress(IC("b", "true", ""), "Service", "{}");
    assert_int_equal(r.status.code, 500);
    assert_string_equal(
        r.status.message,
        "Internal error occurred: Expected Ingress resource, got: networking.k8s.io/v1, Kind=Service");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ingress_class),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

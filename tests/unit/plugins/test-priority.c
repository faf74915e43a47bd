/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Priority: the cases of kube's priority/admission_test.go (TestPriorityClassAdmission,
 * TestDefaultPriority, TestPodAdmission) replayed with PriorityClasses in cluster-state files.
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

extern const adm_plugin_t adm_plugin_priority;

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

#define PC(name, value, extra)                                                                               \
    "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " name "}\nvalue: " value  \
    "\n" extra

static const char classes[] =
    PC("default1", "1000", "globalDefault: true\npreemptionPolicy: PreemptLowerPriority\n")
        PC("default2", "2000", "globalDefault: true\n")
            PC("nondefault1", "2000", "preemptionPolicy: PreemptLowerPriority\n")
                PC("neverpreempt", "1000", "preemptionPolicy: Never\n") PC("nopolicy", "7", "");

static pt_result_t pod(const char *op, const char *spec, const char *old_spec)
{
    pt_request_t r = {.operation = op, .resource = "pods", .kind = "Pod", .namespace_ = "ns", .name = "p"};

    r.object = adm_arena_printf(arena, "{\"metadata\":{\"name\":\"p\"},\"spec\":%s}", spec);
    r.old_object = old_spec != NULL ? adm_arena_printf(arena, "{\"spec\":%s}", old_spec) : NULL;
    return pt_run(arena, &adm_plugin_priority, NULL, 'm', &r);
}

static void expect_spec(pt_result_t r, const char *spec)
{
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object, adm_arena_printf(arena, "{\"metadata\":{\"name\":\"p\"},\"spec\":%s}", spec));
}

static void expect_forbidden(pt_result_t r, const char *msg)
{
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message, adm_arena_printf(arena, "pods \"p\" is forbidden: %s", msg));
}

/* TestPodAdmission */
static void test_pods(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster(classes);

    (void)state;
    pt_set_cluster(cs);
    /* the lowest-valued of two defaults */
    expect_spec(pod("CREATE", "{}", NULL), "{\"priorityClassName\":\"default1\",\"priority\":1000,"
                                           "\"preemptionPolicy\":\"PreemptLowerPriority\"}");
    expect_spec(pod("CREATE", "{\"priorityClassName\":\"nondefault1\"}", NULL),
                "{\"priorityClassName\":\"nondefault1\",\"priority\":2000,\"preemptionPolicy\":"
                "\"PreemptLowerPriority\"}");
    expect_spec(
        pod("CREATE", "{\"priorityClassName\":\"system-cluster-critical\"}", NULL),
        "{\"priorityClassName\":\"system-cluster-critical\",\"priority\":2000000000,\"preemptionPolicy\":"
        "\"PreemptLowerPriority\"}");
    expect_spec(
        pod("CREATE", "{\"priorityClassName\":\"system-node-critical\",\"priority\":2000001000}", NULL),
        "{\"priorityClassName\":\"system-node-critical\",\"priority\":2000001000,\"preemptionPolicy\":"
        "\"PreemptLowerPriority\"}");
    expect_forbidden(pod("CREATE", "{\"priorityClassName\":\"foo\"}", NULL),
                     "no PriorityClass with name foo was found");
    expect_forbidden(
        pod("CREATE", "{\"priorityClassName\":\"nondefault1\",\"priority\":10}", NULL),
        "the integer value of priority (10) must not be provided in pod spec; priority admission "
        "controller computed 2000 from the given PriorityClass name");
    expect_spec(
        pod("CREATE", "{\"priorityClassName\":\"neverpreempt\",\"preemptionPolicy\":\"Never\"}", NULL),
        "{\"priorityClassName\":\"neverpreempt\",\"preemptionPolicy\":\"Never\",\"priority\":1000}");
    expect_forbidden(
        pod("CREATE",
            "{\"priorityClassName\":\"neverpreempt\",\"preemptionPolicy\":"
            "\"PreemptLowerPriority\"}",
            NULL),
        "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; "
        "priority admission controller computed Never from the given PriorityClass name");
    /* a class without a policy leaves the pod's as it is */
    expect_spec(pod("CREATE", "{\"priorityClassName\":\"nopolicy\",\"preemptionPolicy\":\"Never\"}", NULL),
                "{\"priorityClassName\":\"nopolicy\",\"preemptionPolicy\":\"Never\",\"priority\":7}");
    /* updates only restore what was dropped */
    expect_spec(pod("UPDATE", "{}", "{\"priority\":1000,\"preemptionPolicy\":\"Never\"}"),
                "{\"priority\":1000,\"preemptionPolicy\":\"Never\"}");
    expect_spec(pod("UPDATE", "{\"priority\":5}", "{\"priority\":1000}"), "{\"priority\":5}");
    assert_int_equal(pod("DELETE", "{}", NULL).rc, ADM_OK);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* TestDefaultPriority: no default class */
static void test_no_default(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster(PC("nondefault1", "2000", ""));

    (void)state;
    pt_set_cluster(cs);
    expect_spec(pod("CREATE", "{}", NULL), "{\"priority\":0,\"preemptionPolicy\":\"PreemptLowerPriority\"}");
    expect_forbidden(pod("CREATE", "{\"priority\":3}", NULL),
                     "the integer value of priority (3) must not be provided in pod spec; priority admission "
                     "controller computed 0 from the given PriorityClass name");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static pt_result_t class_req(const char *op, const char *name, bool def)
{
    pt_request_t r = {.operation = op,
                      .group = "scheduling.k8s.io",
                      .resource = "priorityclasses",
                      .kind = "PriorityClass",
                      .name = name};

    r.object = adm_arena_printf(arena, "{\"metadata\":{\"name\":\"%s\"},\"value\":1,\"globalDefault\":%s}",
                                name, def ? "true" : "false");
    return pt_run(arena, &adm_plugin_priority, NULL, 'v', &r);
}

/* TestPriorityClassAdmission */
static void test_classes(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster(PC("default1", "1000", "globalDefault: true\n"));
    pt_result_t r;

    (void)state;
    pt_set_cluster(cs);
    assert_int_equal(class_req("CREATE", "nondefault", false).rc, ADM_OK);
    r = class_req("CREATE", "second", true);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message,
                        "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass "
                        "default1 is already marked as default. Only one default can exist");
    assert_int_equal(class_req("UPDATE", "second", true).status.code, 403);
    assert_int_equal(class_req("UPDATE", "default1", true).rc, ADM_OK);
    pt_set_cluster(NULL);
    assert_int_equal(class_req("CREATE", "second", true).rc, ADM_OK);
    adm_cluster_state_free(cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pods),
        cmocka_unit_test(test_no_default),
        cmocka_unit_test(test_classes),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

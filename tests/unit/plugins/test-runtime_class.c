/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RuntimeClass: the cases of kube's runtimeclass/admission_test.go (TestSetOverhead,
 * TestSetScheduling, TestValidateOverhead, TestAdmit) replayed with RuntimeClasses in
 * cluster-state files; quantities compared as resource.Quantity ("1000m" equals "1").
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

extern const adm_plugin_t adm_plugin_runtime_class;

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;

static const char classes[] =
    "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: plain}\nhandler: h\n"
    "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: heavy}\nhandler: h\n"
    "overhead: {podFixed: {cpu: 100m, memory: 100Mi}}\n"
    "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: sched}\nhandler: h\n"
    "scheduling:\n  nodeSelector: {foo: bar, fizz: buzz}\n"
    "  tolerations: [{key: foo, operator: Equal, value: bar, effect: NoSchedule},"
    " {key: fizz, operator: Exists, effect: NoExecute}]\n";

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(65536);
    cluster = pt_load_cluster(classes);
    pt_set_cluster(cluster);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

static pt_result_t run(char phase, const char *spec)
{
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = "ns", .name = "p"};

    r.object = adm_arena_printf(arena, "{\"spec\":%s}", spec);
    return pt_run(arena, &adm_plugin_runtime_class, NULL, phase, &r);
}

static void expect_spec(pt_result_t r, const char *spec)
{
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object, adm_arena_printf(arena, "{\"spec\":%s}", spec));
}

static void expect_forbidden(pt_result_t r, const char *msg)
{
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message, adm_arena_printf(arena, "pods \"p\" is forbidden: %s", msg));
}

#define MISMATCH "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"

/* TestSetOverhead */
static void test_set_overhead(void **state)
{
    (void)state;
    expect_spec(run('m', "{\"runtimeClassName\":\"heavy\"}"),
                "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}");
    expect_spec(
        run('m', "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"0.1\",\"memory\":\"100Mi\"}}"),
        "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}");
    expect_forbidden(
        run('m', "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"101m\",\"memory\":\"100Mi\"}}"),
        MISMATCH);
    expect_forbidden(run('m', "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"100m\"}}"), MISMATCH);
    expect_spec(run('m', "{\"runtimeClassName\":\"plain\"}"), "{\"runtimeClassName\":\"plain\"}");
    expect_spec(run('m', "{}"), "{}");
}

/* TestSetScheduling */
static void test_set_scheduling(void **state)
{
    (void)state;
    expect_spec(run('m', "{\"runtimeClassName\":\"sched\"}"),
                "{\"runtimeClassName\":\"sched\",\"nodeSelector\":{\"foo\":\"bar\",\"fizz\":\"buzz\"},"
                "\"tolerations\":[{\"key\":\"foo\",\"operator\":\"Equal\",\"value\":\"bar\",\"effect\":"
                "\"NoSchedule\"},"
                "{\"key\":\"fizz\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]}");
    /* the pod's own selector and a broader toleration of its own stay; the covered one goes */
    expect_spec(
        run('m', "{\"runtimeClassName\":\"sched\",\"nodeSelector\":{\"foo\":\"bar\",\"mine\":\"x\"},"
                 "\"tolerations\":[{\"key\":\"foo\",\"operator\":\"Exists\"}]}"),
        "{\"runtimeClassName\":\"sched\",\"nodeSelector\":{\"foo\":\"bar\",\"mine\":\"x\",\"fizz\":\"buzz\"},"
        "\"tolerations\":[{\"key\":\"foo\",\"operator\":\"Exists\"},{\"key\":\"fizz\",\"operator\":"
        "\"Exists\","
        "\"effect\":\"NoExecute\"}]}");
    expect_forbidden(
        run('m', "{\"runtimeClassName\":\"sched\",\"nodeSelector\":{\"foo\":\"other\"}}"),
        "conflict: runtimeClass.scheduling.nodeSelector[foo] = bar; pod.spec.nodeSelector[foo] = other");
}

/* TestValidateOverhead and the not-found case of TestAdmit */
static void test_validate(void **state)
{
    (void)state;
    assert_int_equal(
        run('v', "{\"runtimeClassName\":\"heavy\",\"overhead\":{\"cpu\":\"0.1\",\"memory\":\"104857600\"}}")
            .rc,
        ADM_OK);
    expect_forbidden(run('v', "{\"runtimeClassName\":\"heavy\"}"), MISMATCH);
    expect_forbidden(run('v', "{\"runtimeClassName\":\"plain\",\"overhead\":{\"cpu\":\"1\"}}"),
                     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
    expect_forbidden(run('v', "{\"overhead\":{\"cpu\":\"1\"}}"),
                     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
    assert_int_equal(run('v', "{\"runtimeClassName\":\"plain\"}").rc, ADM_OK);
    expect_forbidden(run('m', "{\"runtimeClassName\":\"nope\"}"),
                     "pod rejected: RuntimeClass \"nope\" not found");
    expect_forbidden(run('v', "{\"runtimeClassName\":\"nope\"}"),
                     "pod rejected: RuntimeClass \"nope\" not found");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_overhead),
        cmocka_unit_test(test_set_scheduling),
        cmocka_unit_test(test_validate),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

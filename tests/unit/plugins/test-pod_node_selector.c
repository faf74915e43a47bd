/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodNodeSelector: the cases of kube's podnodeselector/admission_test.go (TestPodAdmission,
 * TestHandles) replayed with namespaces in cluster-state files and the plugin's configuration
 * file, plus its configuration errors, malformed selectors and a missing namespace.
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

extern const adm_plugin_t adm_plugin_pod_node_selector;

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;

#define NS(name, sel)                                                                                        \
    "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: " name                                         \
    "\n  annotations: {scheduler.alpha.kubernetes.io/node-selector: \"" sel "\"}\n"

static const char namespaces[] =
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: none}\n" NS("spaces", " infra = false ")
        NS("infra", "infra=true") NS("empty", "") NS("multi", "infra=false, env = test")
            NS("dev", "infra=false, env = dev") NS("bad", "a=b=c,d") NS("badkey", "-x=1");

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(65536);
    cluster = pt_load_cluster(namespaces);
    pt_set_cluster(cluster);
    return arena == NULL || cluster == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

/* One request against a plugin configured with default (the cluster default) and the namespace's whitelist.
 */
static pt_result_t run(char phase, const char *op, const char *ns, const char *def, const char *whitelist,
                       const char *selector)
{
    pt_request_t r = {
        .operation = op, .resource = "pods", .kind = "Pod", .namespace_ = ns, .name = "testPod"};
    char err[256] = "";
    void *st = NULL;
    pt_result_t res;
    const char *cfg = adm_arena_printf(
        arena, "{\"podNodeSelectorPluginConfig\":{\"clusterDefaultNodeSelector\":\"%s\",\"%s\":\"%s\"}}", def,
        ns, whitelist);

    assert_int_equal(pt_configure(&adm_plugin_pod_node_selector, cfg, NULL, &st, err, sizeof(err)), 0);
    r.object =
        adm_arena_printf(arena, "{\"metadata\":{\"name\":\"testPod\"},\"spec\":{%s%s%s}}",
                         selector != NULL ? "\"nodeSelector\":" : "", selector != NULL ? selector : "", "");
    res = pt_run(arena, &adm_plugin_pod_node_selector, st, phase, &r);
    adm_plugin_pod_node_selector.free_state(st);
    return res;
}

static void expect_selector(pt_result_t r, const char *selector)
{
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object,
                      adm_arena_printf(arena, "{\"metadata\":{\"name\":\"testPod\"},\"spec\":{%s%s}}",
                                       selector != NULL ? "\"nodeSelector\":" : "",
                                       selector != NULL ? selector : ""));
}

static void expect_forbidden(pt_result_t r, const char *msg)
{
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message, adm_arena_printf(arena, "pods \"testPod\" is forbidden: %s", msg));
}

#define CONFLICT "pod node label selector conflicts with its namespace node label selector"
#define WHITELIST "pod node label selector labels conflict with its namespace whitelist"

/* TestPodAdmission, in its order */
static void test_pod_admission(void **state)
{
    (void)state;
    expect_selector(run('m', "CREATE", "none", "", "", "{}"), "{}");
    expect_selector(run('m', "CREATE", "none", "infra = false", "", NULL), "{\"infra\":\"false\"}");
    expect_selector(run('m', "CREATE", "spaces", "", "", NULL), "{\"infra\":\"false\"}");
    expect_selector(run('m', "CREATE", "infra", "infra = false", "", NULL), "{\"infra\":\"true\"}");
    expect_selector(run('m', "CREATE", "empty", "infra = false", "", NULL), NULL);
    expect_selector(run('m', "CREATE", "infra", "infra = false", "", "{\"env\":\"test\"}"),
                    "{\"env\":\"test\",\"infra\":\"true\"}");
    expect_forbidden(run('m', "CREATE", "infra", "env = test", "", "{\"infra\":\"false\"}"), CONFLICT);
    expect_forbidden(run('m', "CREATE", "multi", "env=dev", "", "{\"env\":\"dev\",\"color\":\"blue\"}"),
                     CONFLICT);
    expect_selector(run('m', "CREATE", "dev", "env=dev", "env=dev, infra=false, color=blue",
                        "{\"env\":\"dev\",\"color\":\"blue\"}"),
                    "{\"env\":\"dev\",\"color\":\"blue\",\"infra\":\"false\"}");
    expect_forbidden(run('m', "CREATE", "dev", "env=dev", "env=dev, infra=true, color=blue",
                         "{\"env\":\"dev\",\"color\":\"blue\"}"),
                     WHITELIST);
}

/* Validate alone: the conflict and the whitelist on the pod's own selector. */
static void test_validate(void **state)
{
    (void)state;
    assert_int_equal(run('v', "CREATE", "infra", "", "", "{\"infra\":\"true\"}").rc, ADM_OK);
    assert_int_equal(run('v', "CREATE", "infra", "", "", NULL).rc, ADM_OK);
    expect_forbidden(run('v', "CREATE", "infra", "", "", "{\"infra\":\"no\"}"), CONFLICT);
    expect_forbidden(run('v', "CREATE", "none", "", "a=1", "{\"b\":\"1\"}"), WHITELIST);
    expect_forbidden(run('v', "CREATE", "none", "", "a=1", "{\"a\":\"2\"}"), WHITELIST);
    assert_int_equal(run('v', "CREATE", "none", "", "a=1,b=2", "{\"a\":\"1\"}").rc, ADM_OK);
}

/* TestHandles: only CREATE; other resources and subresources pass untouched. */
static void test_handles(void **state)
{
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .sub_resource = "status",
                      .kind = "Pod",
                      .namespace_ = "infra",
                      .name = "p",
                      .object = "{\"spec\":{}}"};
    void *st = NULL;
    char err[128];

    (void)state;
    assert_true(adm_plugin_pod_node_selector.operations == ADM_OPS_CREATE);
    assert_int_equal(pt_configure(&adm_plugin_pod_node_selector, NULL, NULL, &st, err, sizeof(err)), 0);
    assert_false(pt_run(arena, &adm_plugin_pod_node_selector, st, 'm', &r).changed);
    r.sub_resource = NULL;
    r.resource = "services";
    r.kind = "Service";
    assert_false(pt_run(arena, &adm_plugin_pod_node_selector, st, 'm', &r).changed);
    /* no configuration: the namespace's annotation still applies */
    r.resource = "pods";
    r.kind = "Pod";
    assert_string_equal(pt_run(arena, &adm_plugin_pod_node_selector, st, 'm', &r).object,
                        "{\"spec\":{\"nodeSelector\":{\"infra\":\"true\"}}}");
    adm_plugin_pod_node_selector.free_state(st);
}

/* Malformed selectors are plain errors (500) as in kube; a namespace nowhere to be read is an internal error.
 */
static void test_errors(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", "bad", "", "", NULL);
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 500);
    assert_string_equal(r.status.message, "invalid selector: [a b c]");
    r = run('v', "CREATE", "none", "x", "", NULL);
    assert_string_equal(r.status.message, "invalid selector: [x]");
    r = run('v', "CREATE", "none", "", "a=1,", NULL);
    assert_string_equal(r.status.message, "invalid selector: []");
    r = run('v', "CREATE", "badkey", "", "", NULL);
    assert_int_equal(r.status.code, 500);
    assert_string_equal(r.status.message, "Invalid value: \"-x\": invalid label key");
    r = run('v', "CREATE", "none", "a=-", "", NULL);
    assert_string_equal(r.status.message, "Invalid value: \"-\": invalid label value");
    r = run('m', "CREATE", "missing", "", "", NULL);
    assert_int_equal(r.status.code, 500);
    assert_string_equal(r.status.message, "Internal error occurred: namespace missing does not exist");
}

static void test_configure(void **state)
{
    char err[256] = "";
    void *st = NULL;

    (void)state;
    assert_int_equal(pt_configure(&adm_plugin_pod_node_selector,
                                  "{\"PodNodeSelectorPluginConfig\":{\"a\":\"x=1\"}}", NULL, &st, err,
                                  sizeof(err)),
                     0);
    adm_plugin_pod_node_selector.free_state(st);
    assert_int_equal(pt_configure(&adm_plugin_pod_node_selector,
                                  "{\"podNodeSelectorPluginConfig\":{\"a\":1}}", NULL, &st, err, sizeof(err)),
                     ADM_EINVAL);
    assert_non_null(strstr(err, ": podNodeSelectorPluginConfig.a: want a node selector string"));
    assert_int_equal(pt_configure(&adm_plugin_pod_node_selector, "{\"podNodeSelectorPluginConfig\":[]}", NULL,
                                  &st, err, sizeof(err)),
                     ADM_EINVAL);
    assert_non_null(strstr(err, ": podNodeSelectorPluginConfig: want a map"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_admission), cmocka_unit_test(test_validate),
        cmocka_unit_test(test_handles),       cmocka_unit_test(test_errors),
        cmocka_unit_test(test_configure),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

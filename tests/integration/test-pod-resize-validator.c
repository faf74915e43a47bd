/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodResizeValidator through the real admitd over HTTPS with kube-apiserver's default plugin set:
 * a pods/resize UPDATE that no longer fits its Node's allocatable, or lands on a Windows Node, is
 * refused on /validate and /admit with kube's 403 and its StatusCause; one that fits passes. With
 * Nodes from an API server (adm-fake-apiserver, list+watch) the informer keeps their
 * status.allocatable, so the same refusal follows the Node's allocatable as the API server changes
 * it. --list-plugins says implemented and the startup log no longer leaves it out.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t server;

static const char cluster[] =
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\nstatus: {phase: Active}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels: {kubernetes.io/os: linux}\n"
    "status:\n  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n  images: [{names: [nginx]}]\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-w\n  labels: {kubernetes.io/os: windows}\n"
    "status:\n  allocatable: {cpu: '4', memory: 8Gi}\n";

static int setup(void **state)
{
    static const char *const files[] = {"cluster.yaml", cluster, NULL};
    static const char *const args[] = {"--cluster-state", "@cluster.yaml", "--shutdown-delay", "0s", NULL};

    (void)state;
    return h_files_setup(&server, files, args) != 0;
}

static int teardown(void **state)
{
    (void)state;
    return h_files_teardown(&server);
}

static const char *pod_object(adm_arena_t *arena, int generation, const char *node, const char *cpu)
{
    return adm_arena_printf(
        arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
        "\"namespace\":\"apps\",\"generation\":%d},\"spec\":{\"nodeName\":\"%s\","
        "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\",\"resources\":{\"requests\":"
        "{\"cpu\":\"%s\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"%s\",\"memory\":\"1Gi\"}}}]}}",
        generation, node, cpu, cpu);
}

/* The review of a resize of pod web on node to cpu (generation 1 -> 2). */
static const char *resize_review(adm_arena_t *arena, const char *node, const char *cpu)
{
    pt_request_t r = {.operation = "UPDATE",
                      .resource = "pods",
                      .sub_resource = "resize",
                      .kind = "Pod",
                      .namespace_ = "apps",
                      .name = "web"};

    r.object = pod_object(arena, 2, node, cpu);
    r.old_object = pod_object(arena, 1, node, "1");
    return pt_review_json(arena, &r);
}

/* Posts the review to path on s and checks kube's 403 with message and one cause of type cause. */
static void expect_refused(const h_server_t *s, const char *path, const char *review, const char *message,
                           const char *cause)
{
    h_answer_t a = h_post_answer(s, path, review);
    yyjson_val *st = yyjson_obj_get(a.response, "status");
    yyjson_val *details = yyjson_obj_get(st, "details");
    yyjson_val *causes = yyjson_obj_get(details, "causes");

    assert_false(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(st, "code")), 403);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "reason")), "Forbidden");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "message")), message);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(details, "name")), "web");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(details, "kind")), "pods");
    assert_int_equal(yyjson_arr_size(causes), 1);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_arr_get(causes, 0), "reason")), cause);
    assert_int_equal(yyjson_obj_size(yyjson_arr_get(causes, 0)), 1);
    h_answer_free(&a);
}

static void expect_allowed(const h_server_t *s, const char *path, const char *review)
{
    h_answer_t a = h_post_answer(s, path, review);

    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    h_answer_free(&a);
}

#define NO_CPU                                                                                               \
    "pods \"web\" is forbidden: Node didn't have enough allocatable resources: cpu, requested: 4500, "

static void test_resize_checked(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);

    (void)state;
    expect_refused(&server, "/validate", resize_review(arena, "node-a", "4500m"), NO_CPU "allocatable: 4000",
                   "NodeCapacity");
    expect_refused(&server, "/admit", resize_review(arena, "node-a", "4500m"), NO_CPU "allocatable: 4000",
                   "NodeCapacity");
    expect_allowed(&server, "/admit", resize_review(arena, "node-a", "4"));
    expect_refused(
        &server, "/admit", resize_review(arena, "node-w", "2"),
        "pods \"web\" is forbidden: pod resize is only supported on linux nodes, node \"node-w\" is "
        "\"windows\"",
        "UnsupportedPlatform");
    adm_arena_destroy(arena);
}

static void test_listed(void **state)
{
    const char *list[] = {"--list-plugins", NULL};
    char out[8192];

    (void)state;
    assert_int_equal(h_run(list, out, sizeof(out), 10000), 0);
    assert_non_null(
        strstr(out, "PodResizeValidator                    validating            on       yes\n"));
    assert_int_equal(h_log_count(&server, "admission plugins, in order: "), 1);
    assert_int_equal(h_log_count(&server, "PodTopologyLabels, PodResizeValidator, "), 1);
    assert_int_equal(h_log_count(&server, "not implemented by admitd yet: "), 1);
    assert_int_equal(h_log_count(&server, "JobValidation, PodResizeValidator"), 0);
}

/* Nodes from an API server: the informer's copy keeps status.allocatable, and follows it. */
static void test_nodes_from_api_server(void **state)
{
    const char *api_args[] = {"--insecure-http", NULL};
    char dir[256], kubeconfig[320];
    const char *args[] = {"--kubeconfig", kubeconfig, "--health-listen", "127.0.0.1:0", NULL};
    adm_arena_t *arena = adm_arena_create(65536);
    h_server_t api, live;
    h_answer_t a;
    long long end;
    bool allowed = false;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    assert_int_equal(h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, api_args), 0);
    h_write_kubeconfig(kubeconfig, api.port, "{}");
    h_api_put_namespace(&api, "apps", "Active");
    h_api_control(&api,
                  "{\"op\":\"put\",\"resource\":\"nodes\",\"object\":{\"apiVersion\":\"v1\",\"kind\":"
                  "\"Node\",\"metadata\":{\"name\":\"node-a\",\"labels\":{\"kubernetes.io/os\":\"linux\"}},"
                  "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\"},\"images\":[]}}}");
    assert_int_equal(h_start(&live, NULL, args), 0);
    assert_true(h_wait_ready(&live, 15000));
    expect_refused(&live, "/validate", resize_review(arena, "node-a", "4500m"), NO_CPU "allocatable: 4000",
                   "NodeCapacity");

    /* the Node grows: the watch brings the new allocatable and the same resize fits */
    h_api_control(&api,
                  "{\"op\":\"put\",\"resource\":\"nodes\",\"object\":{\"apiVersion\":\"v1\",\"kind\":"
                  "\"Node\",\"metadata\":{\"name\":\"node-a\",\"labels\":{\"kubernetes.io/os\":\"linux\"}},"
                  "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\"}}}}");
    end = h_now_ms() + 5000;
    while (!allowed && h_now_ms() < end) {
        a = h_post_answer(&live, "/validate", resize_review(arena, "node-a", "4500m"));
        allowed = yyjson_get_bool(yyjson_obj_get(a.response, "allowed"));
        h_answer_free(&a);
    }
    assert_true(allowed);
    assert_int_equal(h_stop(&live, SIGTERM, 10000), 0);
    h_cleanup(&live);
    h_api_stop(&api);
    certgen_rmdir(dir);
    adm_arena_destroy(arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_checked),
        cmocka_unit_test(test_listed),
        cmocka_unit_test(test_nodes_from_api_server),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

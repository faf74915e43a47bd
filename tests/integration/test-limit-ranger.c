/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LimitRanger through the real binary: admitd started with a --cluster-state file holding a
 * LimitRange and kube's default plugin set; /admit on a pod without resources answers with a
 * patch adding the defaults and the kubernetes.io/limit-ranger annotation, and on a pod past the
 * range's max with kube's 403.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "adm/net/tls.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t server;

#define CLUSTER                                                                                              \
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n---\n"                                        \
    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: default\n  namespace: team\n---\n"             \
    "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: defaults\n  namespace: team\nspec:\n  limits:\n"   \
    "  - type: Container\n    default: {cpu: 500m, memory: 256Mi}\n    defaultRequest: {cpu: 100m, memory: " \
    "128Mi}\n    max: {cpu: '1', memory: 1Gi}\n"

static int setup(void **state)
{
    static const char *const files[] = {"cluster.yaml", CLUSTER, NULL};
    static const char *const args[] = {"--cluster-state", "@cluster.yaml", NULL};

    return h_files_setup(&server, files, args);
}

static int teardown(void **state)
{
    return h_files_teardown(&server);
}

/* POSTs a pod CREATE review in namespace team to /admit; returns the parsed answer (caller frees). */
static yyjson_doc *admit(const char *pod)
{
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = "team", .object = pod};

    return h_post_review(&server, "/admit", &r);
}

static void test_defaults_patched(void **state)
{
    yyjson_doc *doc =
        admit("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\",\"namespace\":"
              "\"team\"},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\"}]}}");
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    char *patch = h_answer_patch(doc);

    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    assert_non_null(patch);
    assert_non_null(strstr(patch, "LimitRanger plugin set: cpu, memory request for container app; cpu, "
                                  "memory limit for container app"));
    assert_non_null(strstr(patch, "\"128Mi\""));
    assert_non_null(strstr(patch, "\"500m\""));
    free(patch);
    yyjson_doc_free(doc);
}

static void test_max_rejected(void **state)
{
    yyjson_doc *doc =
        admit("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big\",\"namespace\":"
              "\"team\"},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\",\"resources\":"
              "{\"limits\":{\"cpu\":\"2\"}}}]}}");
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    yyjson_val *status = yyjson_obj_get(resp, "status");

    assert_false(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 403);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(status, "message")),
                        "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2");
    yyjson_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_patched),
        cmocka_unit_test(test_max_rejected),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

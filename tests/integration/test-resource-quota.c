/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota through the real binary: admitd started with kube's default plugin set and a
 * --cluster-state file holding a ResourceQuota (status.used as the quota controller wrote it,
 * quantities as bare YAML numbers too); /admit admits a pod that fits and refuses one that does
 * not with kube's 403 and message.
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
    "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: compute\n  namespace: team\nspec:\n"            \
    "  hard: {pods: 2, requests.cpu: '1'}\nstatus:\n  hard: {pods: 2, requests.cpu: '1'}\n"                  \
    "  used: {pods: 1, requests.cpu: 800m}\n"

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

static const char *pod(const char *name, const char *cpu)
{
    static char buf[512];

    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"team\"},"
             "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%s\"}}}]}}",
             name, cpu);
    return buf;
}

static void test_fits(void **state)
{
    yyjson_doc *doc = admit(pod("small", "200m"));
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");

    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    yyjson_doc_free(doc);
}

static void test_exceeded(void **state)
{
    yyjson_doc *doc = admit(pod("big", "300m"));
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    yyjson_val *status = yyjson_obj_get(resp, "status");

    assert_false(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 403);
    assert_string_equal(
        yyjson_get_str(yyjson_obj_get(status, "message")),
        "pods \"big\" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: "
        "requests.cpu=800m, limited: requests.cpu=1");
    yyjson_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_exceeded),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

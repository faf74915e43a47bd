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
static char dir[] = "/tmp/admitd-rq-XXXXXX";

#define CLUSTER                                                                                              \
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n---\n"                                        \
    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: default\n  namespace: team\n---\n"             \
    "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: compute\n  namespace: team\nspec:\n"            \
    "  hard: {pods: 2, requests.cpu: '1'}\nstatus:\n  hard: {pods: 2, requests.cpu: '1'}\n"                  \
    "  used: {pods: 1, requests.cpu: 800m}\n"

static int setup(void **state)
{
    char path[300];
    FILE *f;
    const char *args[] = {"--cluster-state", path, NULL};

    if (adm_tls_global_init() != 0 || mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(path, sizeof(path), "%s/cluster.yaml", dir);
    f = fopen(path, "w");
    if (f == NULL || fputs(CLUSTER, f) < 0 || fclose(f) != 0) {
        return -1;
    }
    return h_start(&server, NULL, args) != 0;
}

static int teardown(void **state)
{
    char path[300];
    int rc = h_stop(&server, SIGTERM, 10000);

    h_cleanup(&server);
    snprintf(path, sizeof(path), "%s/cluster.yaml", dir);
    unlink(path);
    rmdir(dir);
    adm_tls_global_cleanup();
    return rc != 0;
}

/* POSTs a pod CREATE review to /admit; returns the parsed answer (caller frees). */
static yyjson_doc *admit(const char *pod)
{
    adm_arena_t *arena = adm_arena_create(65536);
    pt_request_t r = {0};
    const char *body;
    h_conn_t c;
    h_response_t resp;
    size_t len;
    char *req;
    yyjson_doc *doc;

    r.operation = "CREATE";
    r.group = "";
    r.resource = "pods";
    r.kind = "Pod";
    r.namespace_ = "team";
    r.object = pod;
    body = pt_review_json(arena, &r);
    req = h_request("POST", "/admit", "application/json", body, strlen(body), &len);
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &resp, 10000, NULL), 0);
    assert_int_equal(resp.status, 200);
    doc = yyjson_read((const char *)resp.body.data, resp.body.len, 0);
    assert_non_null(doc);
    h_response_free(&resp);
    h_close(&c);
    free(req);
    adm_arena_destroy(arena);
    return doc;
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

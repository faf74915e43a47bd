/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube-apiserver's default plugins that read cluster state, through the real binary over HTTPS
 * with --cluster-state: /admit on pods in a live, a Terminating and a missing namespace (kube's
 * Statuses, the NamespaceTerminating cause), the ServiceAccount token volume, the default
 * PriorityClass and StorageClass in the patch, the plugins marked implemented in --list-plugins,
 * and NamespaceAutoProvision refused at start.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t server;

static const char cluster[] =
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\nstatus: {phase: Active}\n"
    "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: leaving}\nstatus: {phase: Terminating}\n"
    "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: apps}\n"
    "imagePullSecrets: [{name: registry}]\n"
    "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: normal}\nvalue: 1000\n"
    "globalDefault: true\npreemptionPolicy: PreemptLowerPriority\n"
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nprovisioner: x\n"
    "metadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: 'true'}}\n";

static int setup(void **state)
{
    static const char *const files[] = {"cluster.yaml", cluster, NULL};
    static const char *const args[] = {"--cluster-state", "@cluster.yaml", NULL};

    (void)state;
    return h_files_setup(&server, files, args);
}

static int teardown(void **state)
{
    (void)state;
    return h_files_teardown(&server);
}

/* POSTs body to /admit and parses the AdmissionReview answer. */
static h_answer_t admit(const char *body)
{
    return h_post_answer(&server, "/admit", body);
}

static const char *pod_review(adm_arena_t *arena, const char *ns)
{
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = ns, .name = "web"};

    r.object = adm_arena_printf(
        arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
        "\"namespace\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
        ns);
    return pt_review_json(arena, &r);
}

static yyjson_val *status_of(const h_answer_t *a)
{
    assert_false(yyjson_get_bool(yyjson_obj_get(a->response, "allowed")));
    return yyjson_obj_get(a->response, "status");
}

static void test_namespaces(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    h_answer_t a;
    yyjson_val *st;
    yyjson_val *cause;

    (void)state;
    a = admit(pod_review(arena, "leaving"));
    st = status_of(&a);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(st, "code")), 403);
    assert_string_equal(
        yyjson_get_str(yyjson_obj_get(st, "message")),
        "pods \"web\" is forbidden: unable to create new content in namespace leaving because it "
        "is being terminated");
    cause = yyjson_arr_get(yyjson_obj_get(yyjson_obj_get(st, "details"), "causes"), 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(cause, "reason")), "NamespaceTerminating");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(cause, "field")), "metadata.namespace");
    h_answer_free(&a);

    a = admit(pod_review(arena, "nowhere"));
    st = status_of(&a);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(st, "code")), 404);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "reason")), "NotFound");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "message")), "namespaces \"nowhere\" not found");
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_pod_defaults(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    h_answer_t a;

    (void)state;
    a = admit(pod_review(arena, "apps"));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_non_null(a.patch);
    /* ServiceAccount, Priority and DefaultTolerationSeconds each left their mark */
    assert_non_null(strstr(a.patch, "\"path\":\"/spec/serviceAccountName\",\"value\":\"default\""));
    assert_non_null(strstr(a.patch, "\"name\":\"kube-api-access-"));
    assert_non_null(strstr(a.patch, "\"expirationSeconds\":3607"));
    assert_non_null(strstr(a.patch, "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\""));
    assert_non_null(
        strstr(a.patch, "\"path\":\"/spec/imagePullSecrets\",\"value\":[{\"name\":\"registry\"}]"));
    assert_non_null(strstr(a.patch, "\"path\":\"/spec/priorityClassName\",\"value\":\"normal\""));
    assert_non_null(strstr(a.patch, "\"path\":\"/spec/priority\",\"value\":1000"));
    assert_non_null(strstr(a.patch, "node.kubernetes.io/not-ready"));
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_claim_gets_default_class(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    pt_request_t r = {.operation = "CREATE",
                      .resource = "persistentvolumeclaims",
                      .kind = "PersistentVolumeClaim",
                      .namespace_ = "apps",
                      .name = "data",
                      .object =
                          "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
                          "\"data\",\"namespace\":\"apps\"},\"spec\":{\"resources\":{\"requests\":"
                          "{\"storage\":\"1Gi\"}}}}"};
    h_answer_t a;

    (void)state;
    a = admit(pt_review_json(arena, &r));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_non_null(a.patch);
    assert_non_null(strstr(a.patch, "\"path\":\"/spec/storageClassName\",\"value\":\"fast\""));
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_listed_and_refused(void **state)
{
    static const char *const implemented[] = {"NamespaceLifecycle",
                                              "ServiceAccount",
                                              "Priority",
                                              "RuntimeClass",
                                              "DefaultStorageClass",
                                              "DefaultIngressClass",
                                              "PersistentVolumeClaimResize"};
    const char *list[] = {"--list-plugins", NULL};
    const char *provision[] = {"--enable-admission-plugins", "NamespaceAutoProvision", NULL};
    char out[8192];

    (void)state;
    assert_int_equal(h_run(list, out, sizeof(out), 10000), 0);
    for (size_t i = 0; i < sizeof(implemented) / sizeof(implemented[0]); i++) {
        const char *line = strstr(out, implemented[i]);

        assert_non_null(line);
        assert_true(strncmp(strchr(line, '\n') - 3, "yes", 3) == 0);
    }
    assert_int_equal(h_run(provision, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "NamespaceAutoProvision creates namespaces through the API server"));
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespaces),
        cmocka_unit_test(test_pod_defaults),
        cmocka_unit_test(test_claim_gets_default_class),
        cmocka_unit_test(test_listed_and_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

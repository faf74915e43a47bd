/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission chain through the real binary over HTTPS: /mutate, /validate and /admit on v1 and
 * v1beta1 reviews, the returned patch applied to the sent object and compared with the expected
 * object, kube Status answers, and the plugin flags' and config file's exit-2 errors.
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

#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t server;

static int setup(void **state)
{
    const char *args[] = {"--enable-admission-plugins",
                          "AlwaysPullImages,DenyServiceExternalIPs,ExtendedResourceToleration",
                          "--cluster-state", h_fixture_path("cluster-state.yaml"), NULL};

    return adm_tls_global_init() != 0 || h_start(&server, NULL, args) != 0;
}

static int teardown(void **state)
{
    int rc = h_stop(&server, SIGTERM, 10000);

    h_cleanup(&server);
    adm_tls_global_cleanup();
    return rc != 0;
}

/* POSTs body to path on the server and parses the AdmissionReview answer. */
static h_answer_t post(const char *path, const char *body)
{
    return h_post_answer(&server, path, body);
}

static const char *review(adm_arena_t *arena, const char *api_version, const pt_request_t *r)
{
    const char *v1 = pt_review_json(arena, r);

    if (strcmp(api_version, "admission.k8s.io/v1") == 0) {
        return v1;
    }
    return adm_arena_printf(arena, "{\"apiVersion\":\"admission.k8s.io/v1beta1\"%s", strchr(v1, ','));
}

/* Applies a's patch to object (JSON text) and compares with want. */
static void assert_patched(const h_answer_t *a, const char *object, const char *want)
{
    adm_arena_t *arena = adm_arena_create(65536);
    yyjson_doc *patch;
    yyjson_doc *obj = yyjson_read(object, strlen(object), 0);
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    const char *error = NULL;
    char *got;

    assert_non_null(a->patch);
    patch = yyjson_read(a->patch, strlen(a->patch), 0);
    assert_non_null(patch);
    yyjson_mut_doc_set_root(doc, yyjson_val_mut_copy(doc, yyjson_doc_get_root(obj)));
    /* kube-apiserver applies webhook patches in its (json-patch v4) mode; the result must not depend on it.
     */
    assert_int_equal(
        adm_jsonpatch_apply(doc, yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, arena, &error), 0);
    got = yyjson_mut_write(doc, 0, NULL);
    assert_json_equal(got, want);
    free(got);
    yyjson_mut_doc_free(doc);
    yyjson_doc_free(patch);
    yyjson_doc_free(obj);
    adm_arena_destroy(arena);
}

#define POD_SENT                                                                                             \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gpu-1\",\"namespace\":\"ml\"},"        \
    "\"spec\":{\"initContainers\":[{\"name\":\"init\",\"image\":\"busybox\",\"imagePullPolicy\":"            \
    "\"IfNotPresent\"}],"                                                                                    \
    "\"containers\":[{\"name\":\"train\",\"image\":\"trainer:v2\",\"imagePullPolicy\":\"Never\","            \
    "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"2\"}}}],"                               \
    "\"automountServiceAccountToken\":false,\"serviceAccountName\":\"default\"}}"
/* ServiceAccount finds the account (no token: the pod opts out), Priority gives the priority of a
   cluster without a default class. */
#define POD_FINAL                                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gpu-1\",\"namespace\":\"ml\"},"        \
    "\"spec\":{\"initContainers\":[{\"name\":\"init\",\"image\":\"busybox\",\"imagePullPolicy\":\"Always\"}" \
    "],"                                                                                                     \
    "\"containers\":[{\"name\":\"train\",\"image\":\"trainer:v2\",\"imagePullPolicy\":\"Always\","           \
    "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"2\"}}}],"                               \
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/"                                                        \
    "not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","                                          \
    "\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","        \
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300},{\"key\":\"nvidia.com/"                             \
    "gpu\",\"operator\":\"Exists\","                                                                         \
    "\"effect\":\"NoSchedule\"}],\"automountServiceAccountToken\":false,\"serviceAccountName\":\"default\"," \
    "\"priority\":0,\"preemptionPolicy\":\"PreemptLowerPriority\"}}"

static void test_pod_through_each_endpoint(void **state)
{
    static const char *const versions[] = {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"};
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "ml",
                      .name = "gpu-1",
                      .object = POD_SENT};
    adm_arena_t *arena = adm_arena_create(65536);

    for (size_t v = 0; v < 2; v++) {
        const char *body = review(arena, versions[v], &r);
        h_answer_t a;

        /* /mutate: DefaultTolerationSeconds, AlwaysPullImages, ExtendedResourceToleration in kube's order. */
        a = post("/mutate", body);
        assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
        assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_doc_get_root(a.doc), "apiVersion")),
                            versions[v]);
        assert_patched(&a, POD_SENT, POD_FINAL);
        h_answer_free(&a);

        /* /admit: the same patch, and validation of the mutated object passes. */
        a = post("/admit", body);
        assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
        assert_patched(&a, POD_SENT, POD_FINAL);
        h_answer_free(&a);

        /* /validate alone sees the received policies: AlwaysPullImages' aggregate, HTTP 500 without a reason.
         */
        a = post("/validate", body);
        assert_false(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
        assert_null(a.patch);
        {
            yyjson_val *status = yyjson_obj_get(a.response, "status");

            assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 500);
            assert_null(yyjson_obj_get(status, "reason"));
            assert_string_equal(
                yyjson_get_str(yyjson_obj_get(status, "message")),
                "[pods \"gpu-1\" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported "
                "value: \"IfNotPresent\": supported values: \"Always\", pods \"gpu-1\" is forbidden: "
                "spec.containers[0].imagePullPolicy: Unsupported value: \"Never\": supported values: "
                "\"Always\"]");
        }
        h_answer_free(&a);

        /* The mutated object itself validates, with no patch to send. */
        r.object = POD_FINAL;
        body = review(arena, versions[v], &r);
        a = post("/validate", body);
        assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
        h_answer_free(&a);
        a = post("/admit", body);
        assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
        assert_null(a.patch);
        h_answer_free(&a);
        r.object = POD_SENT;
    }
    adm_arena_destroy(arena);
}

static void test_service_and_node(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    pt_request_t svc = {
        .operation = "UPDATE",
        .resource = "services",
        .kind = "Service",
        .namespace_ = "web",
        .name = "front",
        .object = "{\"metadata\":{\"name\":\"front\"},\"spec\":{\"externalIPs\":[\"203.0.113.9\"]}}",
        .old_object = "{\"metadata\":{\"name\":\"front\"},\"spec\":{}}"};
    pt_request_t node = {.operation = "CREATE",
                         .resource = "nodes",
                         .kind = "Node",
                         .name = "n1",
                         .object = "{\"metadata\":{\"name\":\"n1\"}}"};
    h_answer_t a;
    yyjson_val *status;

    a = post("/admit", pt_review_json(arena, &svc));
    assert_false(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    status = yyjson_obj_get(a.response, "status");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(status, "status")), "Failure");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 403);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(status, "reason")), "Forbidden");
    assert_string_equal(
        yyjson_get_str(yyjson_obj_get(status, "message")),
        "services \"front\" is forbidden: Use of external IPs is denied by admission control");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_obj_get(status, "details"), "kind")),
                        "services");
    h_answer_free(&a);
    /* A validating plugin does nothing in the mutating phase. */
    a = post("/mutate", pt_review_json(arena, &svc));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_null(a.patch);
    h_answer_free(&a);

    a = post("/mutate", pt_review_json(arena, &node));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_patched(
        &a, node.object,
        "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\","
        "\"effect\":\"NoSchedule\"}]}}");
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_flag_and_config_errors(void **state)
{
    char out[8192];
    char dir[256], path[512], bad[320];
    const char *list[] = {"--list-plugins", NULL};
    const char *unknown[] = {"--enable-admission-plugins", "AlwaysAdmit,Nope", NULL};
    const char *unimplemented[] = {"--enable-admission-plugins", "ImagePolicyWebhook", NULL};
    const char *bad_config[] = {"--admission-control-config-file", bad, NULL};
    FILE *f;

    assert_int_equal(h_run(list, out, sizeof(out), 10000), 0);
    assert_non_null(
        strstr(out, "DefaultTolerationSeconds              mutating              on       yes\n"));
    assert_non_null(strstr(
        out, "ImagePolicyWebhook                    validating            off      not implemented\n"));

    assert_int_equal(h_run(unknown, out, sizeof(out), 10000), 2);
    assert_non_null(
        strstr(out, "admitd: --enable-admission-plugins: plugin \"Nope\" is unknown; known plugins: "));
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */

    assert_int_equal(h_run(unimplemented, out, sizeof(out), 10000), 2);
    assert_string_equal(
        out, "admitd: --enable-admission-plugins: plugin \"ImagePolicyWebhook\" is known to kube-apiserver "
             "but not implemented by admitd yet (see --list-plugins)\n");

    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(bad, sizeof(bad), "%s/admission.yaml", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: "
          "AlwaysAdmit\n"
          "  path: [oops]\n",
          f);
    fclose(f);
    assert_int_equal(h_run(bad_config, out, sizeof(out), 10000), 2);
    snprintf(path, sizeof(path), "admitd: %s: plugins[0].path: must be a string\n", bad);
    assert_string_equal(out, path);

    /* A plugin configuration with a field of the wrong type: the plugin's file, field and problem. */
    {
        char erl[320];
        const char *erl_args[] = {"--enable-admission-plugins", "EventRateLimit",
                                  "--admission-control-config-file", bad, NULL};

        snprintf(erl, sizeof(erl), "%s/erl.yaml", dir);
        f = fopen(erl, "w");
        assert_non_null(f);
        fputs("apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n"
              "- type: Namespace\n  qps: \"5\"\n  burst: 10\n",
              f);
        fclose(f);
        f = fopen(bad, "w");
        assert_non_null(f);
        fputs("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
              "- name: EventRateLimit\n  path: erl.yaml\n",
              f);
        fclose(f);
        assert_int_equal(h_run(erl_args, out, sizeof(out), 10000), 2);
        snprintf(
            path, sizeof(path),
            "admitd: %s: json: cannot unmarshal string into Go struct field Limit.limits.qps of type int32\n",
            erl);
        assert_string_equal(out, path);
        remove(erl);
    }
    /* WebhookAdmissionConfiguration (downstream client credentials, D13): a kubeconfig that cannot be
       read stops start-up, naming it. */
    {
        const char *hook_args[] = {"--admission-control-config-file", bad, NULL};

        f = fopen(bad, "w");
        assert_non_null(f);
        fputs(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
            "- name: ValidatingAdmissionWebhook\n  configuration:\n    apiVersion: "
            "apiserver.config.k8s.io/v1\n"
            "    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: /etc/kubernetes/kubeconfig.yaml\n",
            f);
        fclose(f);
        assert_int_equal(h_run(hook_args, out, sizeof(out), 10000), 2);
        snprintf(
            path, sizeof(path),
            "admitd: %s: plugins[0].configuration: kubeConfigFile: /etc/kubernetes/kubeconfig.yaml: No such "
            "file or directory\n",
            bad);
        assert_string_equal(out, path);
    }
    remove(bad);
    remove(dir);
}

/* EventRateLimit configured inline through the config file: the third event in a burst of 2 gets 429. */
static void test_event_rate_limit(void **state)
{
    char dir[256], config[320];
    const char *args[] = {"--enable-admission-plugins", "EventRateLimit", "--admission-control-config-file",
                          config, NULL};
    h_server_t limited;
    adm_arena_t *arena = adm_arena_create(16384);
    pt_request_t ev = {.operation = "CREATE",
                       .resource = "events",
                       .kind = "Event",
                       .namespace_ = "busy",
                       .name = "e",
                       .object = "{\"metadata\":{\"name\":\"e\"}}"};
    h_server_t saved = server;
    FILE *f;

    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(config, sizeof(config), "%s/admission.yaml", dir);
    f = fopen(config, "w");
    assert_non_null(f);
    fputs("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: "
          "EventRateLimit\n"
          "  configuration:\n    apiVersion: eventratelimit.admission.k8s.io/v1alpha1\n    kind: "
          "Configuration\n"
          "    limits:\n    - {type: Namespace, qps: 1, burst: 2}\n",
          f);
    fclose(f);
    assert_int_equal(h_start(&limited, NULL, args), 0);
    server = limited; /* post() talks to the global server */
    for (int i = 0; i < 3; i++) {
        h_answer_t a = post("/validate", pt_review_json(arena, &ev));
        yyjson_val *status = yyjson_obj_get(a.response, "status");

        assert_int_equal(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")), i < 2);
        if (i == 2) {
            assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 429);
            assert_string_equal(yyjson_get_str(yyjson_obj_get(status, "reason")), "TooManyRequests");
            assert_string_equal(yyjson_get_str(yyjson_obj_get(status, "message")),
                                "Too many requests: limit reached on type Namespace for key busy");
        }
        h_answer_free(&a);
    }
    server = saved;
    assert_int_equal(h_stop(&limited, SIGTERM, 10000), 0);
    h_cleanup(&limited);
    remove(config);
    remove(dir);
    adm_arena_destroy(arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_through_each_endpoint),
        cmocka_unit_test(test_service_and_node),
        cmocka_unit_test(test_flag_and_config_errors),
        cmocka_unit_test(test_event_rate_limit),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

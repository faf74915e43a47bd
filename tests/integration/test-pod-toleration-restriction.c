/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTolerationRestriction through the real binary: admitd started with kube's default set plus
 * the plugin, its Configuration in a `path:` file of the AdmissionConfiguration and namespaces
 * with the two annotations in a --cluster-state file. /admit merges the namespace's defaults (or
 * the configured ones) and memory pressure into the pod's tolerations, refuses a pod outside the
 * whitelist with kube's 500; an inline configuration works as well, and one that does not parse
 * stops admitd with one line naming the file and field (exit 2). --list-plugins marks it
 * implemented.
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

#include "adm/net/tls.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t server;

#define SA(ns) "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: " ns "}\n---\n"
#define CLUSTER                                                                                              \
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  annotations:\n"                             \
    "    scheduler.alpha.kubernetes.io/defaultTolerations: '[{\"key\":\"team\",\"operator\":\"Exists\","     \
    "\"effect\":\"NoSchedule\"}]'\n---\n" SA("team") "apiVersion: v1\nkind: Namespace\nmetadata: {name: "    \
                                                     "open}\n---\n" SA(                                      \
                                                         "open") "apiVersion: v1\nkind: "                    \
                                                                 "Namespace\nmetadata:\n  name: locked\n  "  \
                                                                 "annotations:\n"                            \
                                                                 "    "                                      \
                                                                 "scheduler.alpha.kubernetes.io/"            \
                                                                 "tolerationsWhitelist: "                    \
                                                                 "'[{\"key\":\"gpu\",\"operator\":"          \
                                                                 "\"Exists\"}]'\n---\n" SA("locked")

#define CONFIGURATION                                                                                        \
    "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n"                  \
    "default:\n- {key: dedicated, operator: Equal, value: web, effect: NoSchedule}\n"

#define ADMISSION                                                                                            \
    "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"                       \
    "- name: PodTolerationRestriction\n  path: ptr.yaml\n"

static int setup(void **state)
{
    static const char *const files[] = {"cluster.yaml", CLUSTER, "admission.yaml", ADMISSION, "ptr.yaml",
                                        CONFIGURATION,  NULL};
    static const char *const args[] = {"--cluster-state",
                                       "@cluster.yaml",
                                       "--admission-control-config-file",
                                       "@admission.yaml",
                                       "--enable-admission-plugins",
                                       "PodTolerationRestriction",
                                       NULL};

    return h_files_setup(&server, files, args);
}

static int teardown(void **state)
{
    return h_files_teardown(&server);
}

static yyjson_doc *admit(const char *ns, const char *spec)
{
    pt_request_t r = {.operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = ns};

    r.object = adm_arena_printf(pt_arena,
                                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
                                "\"namespace\":\"%s\"},\"spec\":%s}",
                                ns, spec);
    return h_post_review(&server, "/admit", &r);
}

#define BURSTABLE                                                                                            \
    "{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]"

static bool allowed(yyjson_doc *doc)
{
    return yyjson_get_bool(yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(doc), "response"), "allowed"));
}

/* The namespace's defaults and memory pressure are added (after DefaultTolerationSeconds' two). */
static void test_namespace_defaults(void **state)
{
    yyjson_doc *doc = admit("team", BURSTABLE "}");
    char *patch = h_answer_patch(doc);

    assert_true(allowed(doc));
    assert_non_null(patch);
    assert_non_null(strstr(patch, "{\"key\":\"team\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}"));
    assert_non_null(strstr(patch, "{\"key\":\"node.kubernetes.io/memory-pressure\",\"operator\":\"Exists\","
                                  "\"effect\":\"NoSchedule\"}"));
    assert_null(strstr(patch, "dedicated"));
    free(patch);
    yyjson_doc_free(doc);
}

/* Without the annotation the configured default applies; a BestEffort pod gets no memory pressure. */
static void test_configured_defaults(void **state)
{
    yyjson_doc *doc = admit("open", "{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\"}]}");
    char *patch = h_answer_patch(doc);

    assert_true(allowed(doc));
    assert_non_null(patch);
    assert_non_null(strstr(patch,
                           "{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"web\",\"effect\":"
                           "\"NoSchedule\"}"));
    assert_null(strstr(patch, "memory-pressure"));
    free(patch);
    yyjson_doc_free(doc);
}

/* A toleration outside the namespace's whitelist: kube's plain error, a 500. */
static void test_whitelist_refused(void **state)
{
    yyjson_doc *doc =
        admit("locked", BURSTABLE ",\"tolerations\":[{\"key\":\"other\",\"operator\":\"Exists\"}]}");
    yyjson_val *status = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(doc), "response"), "status");

    assert_false(allowed(doc));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(status, "code")), 500);
    assert_string_equal(
        yyjson_get_str(yyjson_obj_get(status, "message")),
        "pod tolerations (possibly merged with namespace default tolerations) conflict with its "
        "namespace whitelist");
    yyjson_doc_free(doc);
}

/* Runs admitd on an admission configuration (and --list-plugins when NULL); its exit code, output in out. */
static int run_with(const char *admission, const char *ptr, char *out, size_t out_len)
{
    const char *files[] = {"admission.yaml", admission, "ptr.yaml", ptr, NULL};
    char dir[256], path[320];
    const char *args[] = {"--admission-control-config-file",
                          path,
                          "--enable-admission-plugins",
                          "PodTolerationRestriction",
                          "--listen",
                          "127.0.0.1:0",
                          NULL};
    int rc;

    if (admission == NULL) {
        const char *list[] = {"--list-plugins", NULL};

        return h_run(list, out, out_len, 10000);
    }
    assert_int_equal(h_files_dir(dir, sizeof(dir), files), 0);
    snprintf(path, sizeof(path), "%s/admission.yaml", dir);
    rc = h_run(args, out, out_len, 10000);
    certgen_rmdir(dir);
    return rc;
}

static void test_bad_configuration(void **state)
{
    char out[4096];

    assert_int_equal(
        run_with(ADMISSION, CONFIGURATION "whitelist:\n- {operator: Equal, value: x}\n", out, sizeof(out)),
        2);
    assert_non_null(strstr(out, "ptr.yaml: whitelist[0].operator: Invalid value: \"Equal\": operator must be "
                                "Exists when `key` is empty"));
    assert_int_equal(run_with(ADMISSION, "apiVersion: v1\nkind: Configuration\n", out, sizeof(out)), 2);
    assert_non_null(
        strstr(out, "ptr.yaml: apiVersion: \"v1\" is not podtolerationrestriction.admission.k8s.io/v1"));
    assert_int_equal(
        run_with("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
                 "- name: PodTolerationRestriction\n  configuration:\n"
                 "    apiVersion: podtolerationrestriction.admission.k8s.io/v1\n"
                 "    kind: Configuration\n    default: {}\n",
                 "", out, sizeof(out)),
        2);
    assert_non_null(strstr(out,
                           "plugins[0].configuration: default: json: cannot unmarshal object into Go value "
                           "of type []v1.Toleration"));
    assert_int_equal(run_with(NULL, NULL, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "PodTolerationRestriction              mutating, validating  off      yes"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespace_defaults),
        cmocka_unit_test(test_configured_defaults),
        cmocka_unit_test(test_whitelist_refused),
        cmocka_unit_test(test_bad_configuration),
    };
    int rc;

    pt_group_setup(NULL);
    rc = cmocka_run_group_tests(tests, setup, teardown);
    pt_group_teardown(NULL);
    return rc;
}

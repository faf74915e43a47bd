/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTolerationRestriction: the cases of kube's podtolerationrestriction/admission_test.go
 * (TestPodAdmission with its reinvocation check, TestHandles, TestIgnoreUpdatingInitializedPod)
 * replayed with the namespace in cluster-state files and the plugin's configuration, plus the
 * whitelist's scope word, malformed annotations, a missing namespace, what is ignored, and the
 * configuration's errors.
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

extern const adm_plugin_t adm_plugin_pod_toleration_restriction;
#define PLUGIN adm_plugin_pod_toleration_restriction

#define TOL(v) "{\"key\":\"testKey\",\"operator\":\"Equal\",\"value\":\"" v "\",\"effect\":\"NoSchedule\"}"
#define T TOL("testValue")
#define T1 TOL("testValue1")
#define T2 TOL("testValue2")
#define MEM                                                                                                  \
    "{\"key\":\"node.kubernetes.io/memory-pressure\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}"
#define WHITELIST_MSG                                                                                        \
    "pod tolerations (possibly merged with namespace default tolerations) conflict with its "

#define BEST_EFFORT "[{\"name\":\"test\"}]"
#define BURSTABLE                                                                                            \
    "[{\"name\":\"test\",\"resources\":{\"limits\":{\"cpu\":\"1\"},\"requests\":{\"cpu\":\"500m\"}}}]"
#define GUARANTEED                                                                                           \
    "[{\"name\":\"test\",\"resources\":{\"limits\":{\"cpu\":\"1\"},\"requests\":{\"cpu\":\"1\"}}}]"

/* One table row: NULL lists are absent (nil), "" is an annotation set to the empty string. */
typedef struct row_s {
    const char *name;
    const char *containers;
    const char *cluster_defaults, *ns_defaults, *ns_whitelist, *cluster_whitelist;
    const char *pod;    /* the pod's tolerations */
    const char *merged; /* the pod's tolerations after Admit, or NULL for a refusal */
} row_t;

static const char *annotation(const char *key, const char *list)
{
    return list == NULL
               ? ""
               : adm_arena_printf(pt_arena, "%s%s: '%s'\n", "    scheduler.alpha.kubernetes.io/", key, list);
}

static adm_cluster_state_t *namespace_state(const char *defaults, const char *whitelist)
{
    return pt_load_cluster(adm_arena_printf(
        pt_arena,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: testNamespace\n"
        "  annotations:\n%s%s    other: x\n",
        annotation("defaultTolerations", defaults), annotation("tolerationsWhitelist", whitelist)));
}

static void *configured(const char *defaults, const char *whitelist)
{
    char err[256];
    void *st = NULL;
    const char *cfg =
        adm_arena_printf(pt_arena,
                         "{\"apiVersion\":\"podtolerationrestriction.admission.k8s.io/"
                         "v1alpha1\",\"kind\":\"Configuration\"%s%s%s%s}",
                         defaults != NULL ? ",\"default\":" : "", defaults != NULL ? defaults : "",
                         whitelist != NULL ? ",\"whitelist\":" : "", whitelist != NULL ? whitelist : "");

    assert_int_equal(pt_configure(&PLUGIN, cfg, NULL, &st, err, sizeof(err)), 0);
    return st;
}

static const char *pod_json(const char *containers, const char *tolerations)
{
    return adm_arena_printf(pt_arena,
                            "{\"metadata\":{\"name\":\"testPod\",\"namespace\":\"testNamespace\"},"
                            "\"spec\":{\"containers\":%s%s%s}}",
                            containers, tolerations != NULL ? ",\"tolerations\":" : "",
                            tolerations != NULL ? tolerations : "");
}

static pt_result_t run(void *st, char phase, const char *op, const char *object)
{
    pt_request_t r = {.operation = op,
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "testNamespace",
                      .name = "testPod",
                      .object = object,
                      .old_object = strcmp(op, "UPDATE") == 0 ? object : NULL};

    return pt_run(pt_arena, &PLUGIN, st, phase, &r);
}

static void expect_refused(pt_result_t r, const char *scope)
{
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 500);
    assert_true(r.status.reason == NULL || r.status.reason[0] == '\0'); /* a plain error */
    assert_string_equal(r.status.message, adm_arena_printf(pt_arena, WHITELIST_MSG "%s whitelist", scope));
}

static void replay(const row_t *row)
{
    adm_cluster_state_t *cs = namespace_state(row->ns_defaults, row->ns_whitelist);
    void *st = configured(row->cluster_defaults, row->cluster_whitelist);
    pt_result_t r;
    const char *want;

    print_message("%s\n", row->name);
    pt_set_cluster(cs);
    r = run(st, 'm', "CREATE", pod_json(row->containers, row->pod));
    if (row->merged == NULL) {
        expect_refused(r, "namespace");
    } else {
        assert_int_equal(r.rc, ADM_OK);
        want = pod_json(row->containers, row->merged);
        assert_json_equal(r.object, want);
        /* WithReinvocationTesting: admitting the result again changes nothing */
        r = run(st, 'm', "CREATE", r.object);
        assert_int_equal(r.rc, ADM_OK);
        assert_json_equal(r.object, want);
        assert_int_equal(run(st, 'v', "CREATE", r.object).rc, ADM_OK);
    }
    PLUGIN.free_state(st);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* TestPodAdmission, in its order (kube compares with ElementsMatch; admitd's order is the merge's). */
static void test_pod_admission(void **state)
{
    static const row_t rows[] = {
        {"default cluster tolerations with empty pod tolerations and nil namespace tolerations", BEST_EFFORT,
         "[" T "]", NULL, NULL, NULL, "[]", "[" T "]"},
        {"default cluster tolerations with pod tolerations specified", BEST_EFFORT, "[" T "]", "[]", NULL,
         NULL, "[" T "]", "[" T "]"},
        {"namespace tolerations", BEST_EFFORT, "[]", "[" T "]", NULL, NULL, "[" T "]", "[" T "]"},
        {"no pod tolerations", BEST_EFFORT, "[]", "[" T "]", NULL, NULL, "[]", "[" T "]"},
        {"duplicate key pod and namespace tolerations", BEST_EFFORT, "[]", "[" T "]", NULL, NULL, "[" T1 "]",
         "[" T1 "," T "]"},
        {"conflicting pod and default cluster tolerations but overridden by empty namespace tolerations",
         BEST_EFFORT, "[" T2 "]", "[]", NULL, NULL, "[" T1 "]", "[" T1 "]"},
        {"merged pod tolerations satisfy whitelist", BEST_EFFORT, "[]", "[" T "]", "[" T "]", NULL, "[]",
         "[" T "]"},
        {"Override default cluster toleration by empty namespace level toleration", BEST_EFFORT, "[" T "]",
         "[]", NULL, NULL, "[]", "[]"},
        {"pod toleration conflicts with default cluster white list which is overridden by empty namespace "
         "whitelist",
         BEST_EFFORT, NULL, NULL, "[]", "[" T1 "]", "[" T "]", "[" T "]"},
        {"merged pod tolerations conflict with the whitelist", BEST_EFFORT, "[]", "[" T "]", "[" T1 "]", NULL,
         "[]", NULL},
        {"added memoryPressure/DiskPressure for Burstable pod", BURSTABLE, "[]", "[" T "]", "[]", NULL, "[]",
         "[" T "," MEM "]"},
        {"Pod with duplicate key tolerations should not be modified", BEST_EFFORT, "[]", "[]", "[]", NULL,
         "[" T "," T1 "]", "[" T "," T1 "]"},
        {"added memoryPressure/DiskPressure for Guaranteed pod", GUARANTEED, "[]", "[" T "]", "[]", NULL,
         "[]", "[" T "," MEM "]"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        replay(&rows[i]);
    }
}

/* TestHandles: CREATE and UPDATE only. */
static void test_handles(void **state)
{
    (void)state;
    assert_int_equal(PLUGIN.operations, ADM_OPS_CREATE | ADM_OPS_UPDATE);
}

/* TestIgnoreUpdatingInitializedPod: an update gets no namespace defaults, so no conflict either. */
static void test_update_gets_no_defaults(void **state)
{
    adm_cluster_state_t *cs = namespace_state("[" T2 "]", NULL);
    const char *pod = pod_json("[]", "[" T1 "]");
    pt_result_t r;

    (void)state;
    pt_set_cluster(cs);
    r = run(NULL, 'm', "UPDATE", pod);
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object, pod);
    /* a Burstable pod still gets memory pressure on an update */
    r = run(NULL, 'm', "UPDATE", pod_json(BURSTABLE, NULL));
    assert_json_equal(r.object, pod_json(BURSTABLE, "[" MEM "]"));
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* The whitelist's scope: "cluster" when the configured one decided; Validate alone on the pod's own list. */
static void test_whitelist_scope(void **state)
{
    adm_cluster_state_t *cs = namespace_state(NULL, NULL);
    void *st =
        configured(NULL, "[" T1 ",{\"key\":\"node.kubernetes.io/memory-pressure\",\"operator\":\"Exists\"}]");

    (void)state;
    pt_set_cluster(cs);
    expect_refused(run(st, 'v', "CREATE", pod_json(BEST_EFFORT, "[" T "]")), "cluster");
    expect_refused(run(st, 'v', "UPDATE", pod_json(BEST_EFFORT, "[" T "]")), "cluster");
    assert_int_equal(run(st, 'v', "CREATE", pod_json(BEST_EFFORT, "[" T1 "]")).rc, ADM_OK);
    /* covered by a superset: Exists on the key covers every effect */
    assert_int_equal(run(st, 'm', "CREATE", pod_json(BURSTABLE, NULL)).rc, ADM_OK);
    /* no tolerations: nothing to check */
    assert_int_equal(run(st, 'v', "CREATE", pod_json(BEST_EFFORT, NULL)).rc, ADM_OK);
    PLUGIN.free_state(st);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* Annotations in Go's encoding/json: case-insensitive members, unknown ones dropped, its errors. */
static void test_annotations(void **state)
{
    static const struct {
        const char *annotation, *message;
    } bad[] = {
        {"[x]", "invalid character 'x' looking for beginning of value"},
        {"{}", "json: cannot unmarshal object into Go value of type []v1.Toleration"},
        {"[1]", "json: cannot unmarshal number into Go value of type v1.Toleration"},
        {"[{\"key\":1}]", "json: cannot unmarshal number into Go struct field Toleration.key of type string"},
        {"[{\"effect\":\"NoExecute\",\"tolerationSeconds\":1.5}]",
         "json: cannot unmarshal number 1.5 into Go struct field Toleration.tolerationSeconds of type int64"},
    };
    adm_cluster_state_t *cs;
    pt_result_t r;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs = namespace_state(bad[i].annotation, NULL);
        pt_set_cluster(cs);
        r = run(NULL, 'm', "CREATE", pod_json(BEST_EFFORT, NULL));
        assert_int_equal(r.rc, ADM_DECLINED);
        assert_int_equal(r.status.code, 500);
        assert_string_equal(r.status.message, bad[i].message);
        pt_set_cluster(NULL);
        adm_cluster_state_free(cs);
    }
    cs = namespace_state("[{\"KEY\":\"k\",\"Operator\":\"Exists\",\"extra\":1,\"effect\":\"NoExecute\","
                         "\"tolerationSeconds\":30},null]",
                         NULL);
    pt_set_cluster(cs);
    r = run(NULL, 'm', "CREATE", pod_json(BEST_EFFORT, NULL));
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object, pod_json(BEST_EFFORT, "[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":"
                                                      "\"NoExecute\",\"tolerationSeconds\":30},{}]"));
    /* annotation "null": an empty list, which still overrides the configuration */
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
    cs = namespace_state("null", NULL);
    pt_set_cluster(cs);
    {
        void *st = configured("[" T "]", NULL);

        r = run(st, 'm', "CREATE", pod_json(BEST_EFFORT, NULL));
        assert_json_equal(r.object, pod_json(BEST_EFFORT, NULL));
        PLUGIN.free_state(st);
    }
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* A missing namespace is kube's NotFound; other resources, subresources and BestEffort by status are ignored.
 */
static void test_ignored_and_missing(void **state)
{
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "nowhere",
                      .name = "testPod",
                      .object = "{\"spec\":{\"containers\":" BURSTABLE "}}"};
    pt_result_t res;

    (void)state;
    res = pt_run(pt_arena, &PLUGIN, NULL, 'm', &r);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 404);
    assert_string_equal(res.status.message, "namespaces \"nowhere\" not found");
    r.sub_resource = "status";
    assert_int_equal(pt_run(pt_arena, &PLUGIN, NULL, 'm', &r).rc, ADM_OK);
    assert_false(pt_run(pt_arena, &PLUGIN, NULL, 'm', &r).changed);
    r.sub_resource = NULL;
    r.resource = "services";
    r.kind = "Service";
    assert_false(pt_run(pt_arena, &PLUGIN, NULL, 'm', &r).changed);
    /* an update reads no defaults: a Burstable pod gets memory pressure, a pod BestEffort by status not */
    r.namespace_ = "default";
    r.resource = "pods";
    r.kind = "Pod";
    r.operation = "UPDATE";
    r.old_object = r.object;
    res = pt_run(pt_arena, &PLUGIN, NULL, 'm', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_json_equal(res.object, "{\"spec\":{\"containers\":" BURSTABLE ",\"tolerations\":[" MEM "]}}");
    r.object = "{\"spec\":{\"containers\":" BURSTABLE "},\"status\":{\"qosClass\":\"BestEffort\"}}";
    assert_false(pt_run(pt_arena, &PLUGIN, NULL, 'm', &r).changed);
}

static void expect_config_error(const char *cfg, const char *want)
{
    char err[512];
    void *st = NULL;

    assert_int_equal(pt_configure(&PLUGIN, cfg, NULL, &st, err, sizeof(err)), ADM_EINVAL);
    assert_null(st);
    assert_string_equal(err, want);
}

#define CFG(body)                                                                                            \
    "{\"apiVersion\":\"podtolerationrestriction.admission.k8s.io/v1\",\"kind\":\"Configuration\"," body "}"

static void test_configuration(void **state)
{
    char err[256];
    void *st = NULL;

    (void)state;
    assert_int_equal(
        pt_configure(&PLUGIN, CFG("\"default\":[" T "],\"whitelist\":[]"), NULL, &st, err, sizeof(err)), 0);
    PLUGIN.free_state(st);
    expect_config_error(
        "{\"apiVersion\":\"v1\",\"kind\":\"Configuration\"}",
        "test.yaml: apiVersion: \"v1\" is not podtolerationrestriction.admission.k8s.io/v1 or "
        "v1alpha1");
    expect_config_error(
        "{\"apiVersion\":\"podtolerationrestriction.admission.k8s.io/v1alpha1\",\"kind\":\"X\"}",
        "test.yaml: kind: \"X\" is not Configuration");
    expect_config_error("[]", "test.yaml: the configuration must be an object");
    expect_config_error(
        CFG("\"default\":{}"),
        "test.yaml: default: json: cannot unmarshal object into Go value of type []v1.Toleration");
    expect_config_error(CFG("\"whitelist\":[{\"value\":true}]"),
                        "test.yaml: whitelist[0]: json: cannot unmarshal bool into Go struct field "
                        "Toleration.value of type string");
    expect_config_error(
        CFG("\"default\":[{\"key\":\"a\",\"effect\":\"NoSchedule\",\"tolerationSeconds\":5}]"),
        "test.yaml: default[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
        "when `tolerationSeconds` is set");
    expect_config_error(
        CFG("\"whitelist\":[" T ",{\"operator\":\"Equal\"}]"),
        "test.yaml: whitelist[1].operator: Invalid value: \"Equal\": operator must be Exists when "
        "`key` is empty, which means \"match all values and all keys\"");
    expect_config_error(
        CFG("\"default\":[{\"key\":\"a\",\"operator\":\"Lt\"}]"),
        "test.yaml: default[0].operator: Unsupported value: \"Lt\": supported values: \"Equal\", "
        "\"Exists\"");
    expect_config_error(CFG("\"default\":[{\"key\":\"a\",\"effect\":\"Never\"}]"),
                        "test.yaml: default[0].effect: Unsupported value: \"Never\": supported values: "
                        "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
    expect_config_error(CFG("\"default\":[{\"key\":\"a b\"}]"),
                        "test.yaml: default[0].key: Invalid value: \"a b\": must be a qualified name");
    expect_config_error(
        CFG("\"default\":[{\"key\":\"a\",\"operator\":\"Exists\",\"value\":\"v\"}]"),
        "test.yaml: default[0].operator: Invalid value: value must be empty when `operator` is "
        "'Exists'");
    expect_config_error(
        CFG("\"default\":[{\"key\":\"a\",\"value\":\"-v\"}]"),
        "test.yaml: default[0].operator: Invalid value: \"-v\": a valid label must be an empty "
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_admission),
        cmocka_unit_test(test_handles),
        cmocka_unit_test(test_update_gets_no_defaults),
        cmocka_unit_test(test_whitelist_scope),
        cmocka_unit_test(test_annotations),
        cmocka_unit_test(test_ignored_and_missing),
        cmocka_unit_test(test_configuration),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

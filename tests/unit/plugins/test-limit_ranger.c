/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LimitRanger with LimitRanges from cluster state: kube's admission_test.go tables
 * (TestPodLimitFunc's success and error cases, TestMergePodResourceRequirements, the PVC cases)
 * replayed through the plugin's hooks, with the messages kube's constraint functions print; plus
 * what the tables do not cover: the request kinds and operations it skips, several LimitRanges,
 * sidecar totals, and a LimitRange whose quantity does not parse.
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

extern const adm_plugin_t adm_plugin_limit_ranger;

/* A LimitRange "abc" in namespace test with the given spec.limits (JSON). */
static adm_cluster_state_t *ranges(const char *limits_json)
{
    char *text =
        adm_arena_printf(pt_arena,
                         "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"abc\","
                         "\"namespace\":\"test\"},\"spec\":{\"limits\":%s}}",
                         limits_json);

    return pt_load_cluster(text);
}

/* A pod of n containers foo-0.. with the same resources, and init containers (JSON array or NULL). */
static const char *pod(const char *name, int n, const char *resources, const char *init)
{
    char *containers = "";

    for (int i = 0; i < n; i++) {
        containers =
            adm_arena_printf(pt_arena, "%s%s{\"name\":\"foo-%d\",\"image\":\"foo:V%d\",\"resources\":%s}",
                             containers, i > 0 ? "," : "", i, i, resources);
    }
    return adm_arena_printf(
        pt_arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
        "\"test\"},\"spec\":{\"containers\":[%s]%s%s%s}}",
        name, containers, init != NULL ? ",\"initContainers\":" : "", init != NULL ? init : "", "");
}

/*
 * The plugin's state, configured once for all the tests as a chain does: its parsed LimitRanges
 * are kept across the requests, and across the cluster states the tests load and free one after
 * another (a new state may take a freed one's address and its LimitRange's).
 */
static void *lr_state;

static pt_result_t run(char phase, const char *op, const char *resource, const char *kind, const char *obj,
                       const char *old)
{
    pt_request_t r = pt_core_request(op, resource, kind, "test", obj, old);

    return pt_run(pt_arena, &adm_plugin_limit_ranger, lr_state, phase, &r);
}

/* Mutate, then validate the mutated pod, as kube-apiserver runs the two phases. */
static pt_result_t admit_pod(const char *obj)
{
    pt_result_t m = run('m', "CREATE", "pods", "Pod", obj, NULL);

    assert_int_equal(m.rc, ADM_OK);
    return run('v', "CREATE", "pods", "Pod", m.object, NULL);
}

#define CPU(x) "{\"cpu\":\"" x "\"}"
#define MEM(x) "{\"memory\":\"" x "\"}"
#define EPH(x) "{\"ephemeral-storage\":\"" x "\"}"
#define RES(req, lim) "{\"requests\":" req ",\"limits\":" lim "}"
#define NONE "{}"
#define ITEM(type, field, list) "[{\"type\":\"" type "\",\"" field "\":" list "}]"

static const struct lr_case {
    const char *name;
    int containers;
    const char *resources, *init, *limits, *message; /* message "" admits */
} CASES[] = {
    /* TestPodLimitFunc successCases */
    {"ctr-min-cpu-request", 1, RES(CPU("100m"), NONE), NULL, ITEM("Container", "min", CPU("50m")), ""},
    {"ctr-min-cpu-request-limit", 1, RES(CPU("100m"), CPU("200m")), NULL,
     ITEM("Container", "min", CPU("50m")), ""},
    {"ctr-min-memory-request", 1, RES(MEM("60Mi"), NONE), NULL, ITEM("Container", "min", MEM("50Mi")), ""},
    {"ctr-min-memory-request-limit", 1, RES(MEM("60Mi"), MEM("100Mi")), NULL,
     ITEM("Container", "min", MEM("50Mi")), ""},
    {"ctr-max-cpu-request-limit", 1, RES(CPU("500m"), CPU("1")), NULL, ITEM("Container", "max", CPU("2")),
     ""},
    {"ctr-max-cpu-limit", 1, RES(NONE, CPU("1")), NULL, ITEM("Container", "max", CPU("2")), ""},
    {"ctr-max-mem-request-limit", 1, RES(MEM("250Mi"), MEM("500Mi")), NULL,
     ITEM("Container", "max", MEM("1Gi")), ""},
    {"ctr-max-cpu-ratio", 1, RES(CPU("500m"), CPU("750m")), NULL,
     ITEM("Container", "maxLimitRequestRatio", CPU("1.5")), ""},
    {"ctr-max-mem-limit", 1, RES(NONE, MEM("500Mi")), NULL, ITEM("Container", "max", MEM("1Gi")), ""},
    {"pod-min-cpu-request", 2, RES(CPU("75m"), NONE), NULL, ITEM("Pod", "min", CPU("100m")), ""},
    {"pod-min-cpu-request-limit", 2, RES(CPU("75m"), CPU("200m")), NULL, ITEM("Pod", "min", CPU("100m")), ""},
    {"pod-min-memory-request", 2, RES(MEM("60Mi"), NONE), NULL, ITEM("Pod", "min", MEM("100Mi")), ""},
    {"pod-min-memory-request-limit", 2, RES(MEM("60Mi"), MEM("100Mi")), NULL,
     ITEM("Pod", "min", MEM("100Mi")), ""},
    {"pod-init-min-memory-request", 2, RES(MEM("60Mi"), NONE),
     "[{\"name\":\"init-0\",\"resources\":" RES(MEM("100Mi"), NONE) "}]", ITEM("Pod", "min", MEM("100Mi")),
     ""},
    {"pod-init-min-memory-request-limit", 2, RES(MEM("60Mi"), MEM("100Mi")),
     "[{\"name\":\"init-0\",\"resources\":" RES(MEM("80Mi"), MEM("100Mi")) "}]",
     ITEM("Pod", "min", MEM("100Mi")), ""},
    {"pod-max-cpu-request-limit", 2, RES(CPU("500m"), CPU("1")), NULL, ITEM("Pod", "max", CPU("2")), ""},
    {"pod-max-cpu-limit", 2, RES(NONE, CPU("1")), NULL, ITEM("Pod", "max", CPU("2")), ""},
    {"pod-init-max-cpu-request-limit", 2, RES(CPU("500m"), CPU("1")),
     "[{\"name\":\"i0\",\"resources\":" RES(CPU("1"), CPU("2")) "},{\"name\":\"i1\",\"resources\":" RES(
         CPU("1"), CPU("1")) "}]",
     ITEM("Pod", "max", CPU("2")), ""},
    {"pod-max-mem-request-limit", 2, RES(MEM("250Mi"), MEM("500Mi")), NULL, ITEM("Pod", "max", MEM("1Gi")),
     ""},
    {"pod-max-mem-ratio", 3, RES(MEM("300Mi"), MEM("450Mi")), NULL,
     "[{\"type\":\"Pod\",\"max\":" MEM("2Gi") ",\"maxLimitRequestRatio\":" MEM("1.5") "}]", ""},
    {"ctr-1-min-local-ephemeral-storage-request", 1, RES(EPH("60Mi"), NONE), NULL,
     ITEM("Container", "min", EPH("50Mi")), ""},
    {"pod-max-local-ephemeral-storage-ratio", 3, RES(EPH("300Mi"), EPH("450Mi")), NULL,
     "[{\"type\":\"Pod\",\"max\":" EPH("2Gi") ",\"maxLimitRequestRatio\":" EPH("1.5") "}]", ""},
    /* at the edge of the milli-units: compared in milli-units, then in whole units rounded up */
    {"ctr-max-mem-milli-edge", 1, RES(NONE, MEM("9223372036854775m")), NULL,
     ITEM("Container", "max", MEM("9223372036854775m")), ""},
    {"ctr-max-mem-whole-units-round-up", 1, RES(NONE, MEM("9223372036854776")), NULL,
     ITEM("Container", "max", MEM("9223372036854775.5")), ""},
    {"ctr-max-mem-milli-edge-over", 1, RES(NONE, MEM("9223372036854776m")), NULL,
     ITEM("Container", "max", MEM("9223372036854775m")),
     "maximum memory usage per Container is 9223372036854775m, but limit is 9223372036854776m"},
    {"ctr-max-mem-whole-units-over", 1, RES(NONE, MEM("9223372036854777")), NULL,
     ITEM("Container", "max", MEM("9223372036854776")),
     "maximum memory usage per Container is 9223372036854776, but limit is 9223372036854777"},
    /* TestPodLimitFunc errorCases, with the messages kube's constraints print */
    {"ctr-min-cpu-request", 1, RES(CPU("40m"), NONE), NULL, ITEM("Container", "min", CPU("50m")),
     "minimum cpu usage per Container is 50m, but request is 40m"},
    {"ctr-min-cpu-request-limit", 1, RES(CPU("40m"), CPU("200m")), NULL, ITEM("Container", "min", CPU("50m")),
     "minimum cpu usage per Container is 50m, but request is 40m"},
    {"ctr-min-cpu-no-request-limit", 1, RES(NONE, NONE), NULL, ITEM("Container", "min", CPU("50m")),
     "minimum cpu usage per Container is 50m.  No request is specified"},
    {"ctr-min-memory-request", 1, RES(MEM("40Mi"), NONE), NULL, ITEM("Container", "min", MEM("50Mi")),
     "minimum memory usage per Container is 50Mi, but request is 40Mi"},
    {"ctr-min-memory-no-request-limit", 1, RES(NONE, NONE), NULL, ITEM("Container", "min", MEM("50Mi")),
     "minimum memory usage per Container is 50Mi.  No request is specified"},
    {"ctr-max-cpu-request-limit", 1, RES(CPU("500m"), CPU("2500m")), NULL, ITEM("Container", "max", CPU("2")),
     "maximum cpu usage per Container is 2, but limit is 2500m"},
    {"ctr-max-cpu-no-request-limit", 1, RES(NONE, NONE), NULL, ITEM("Container", "max", CPU("2")),
     "maximum cpu usage per Container is 2.  No limit is specified"},
    {"ctr-max-cpu-ratio", 1, RES(CPU("1250m"), CPU("2500m")), NULL,
     ITEM("Container", "maxLimitRequestRatio", CPU("1")),
     "cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000"},
    {"ctr-max-mem-request-limit", 1, RES(MEM("250Mi"), MEM("2Gi")), NULL,
     ITEM("Container", "max", MEM("1Gi")), "maximum memory usage per Container is 1Gi, but limit is 2Gi"},
    {"ctr-max-mem-no-request-limit", 1, RES(NONE, NONE), NULL, ITEM("Container", "max", MEM("1Gi")),
     "maximum memory usage per Container is 1Gi.  No limit is specified"},
    {"pod-min-cpu-request", 1, RES(CPU("75m"), NONE), NULL, ITEM("Pod", "min", CPU("100m")),
     "minimum cpu usage per Pod is 100m, but request is 75m"},
    {"pod-min-memory-request-limit", 1, RES(MEM("60Mi"), MEM("100Mi")), NULL,
     ITEM("Pod", "min", MEM("100Mi")), "minimum memory usage per Pod is 100Mi, but request is 60Mi"},
    {"pod-max-cpu-request-limit", 3, RES(CPU("500m"), CPU("1")), NULL, ITEM("Pod", "max", CPU("2")),
     "maximum cpu usage per Pod is 2, but limit is 3"},
    {"pod-max-cpu-limit", 3, RES(NONE, CPU("1")), NULL, ITEM("Pod", "max", CPU("2")),
     "maximum cpu usage per Pod is 2, but limit is 3"},
    {"pod-max-mem-request-limit", 3, RES(MEM("250Mi"), MEM("500Mi")), NULL, ITEM("Pod", "max", MEM("1Gi")),
     "maximum memory usage per Pod is 1Gi, but limit is 1500Mi"},
    {"pod-init-max-mem-limit", 1, RES(NONE, MEM("500Mi")),
     "[{\"name\":\"init-0\",\"resources\":" RES(NONE, MEM("1.5Gi")) "}]", ITEM("Pod", "max", MEM("1Gi")),
     "maximum memory usage per Pod is 1Gi, but limit is 1536Mi"},
    {"pod-max-mem-ratio", 3, RES(MEM("250Mi"), MEM("500Mi")), NULL,
     "[{\"type\":\"Pod\",\"max\":" MEM("2Gi") ",\"maxLimitRequestRatio\":" MEM("1.5") "}]",
     "memory max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000"},
    {"ctr-1-min-local-ephemeral-storage-request", 1, RES(EPH("40Mi"), NONE), NULL,
     ITEM("Container", "min", EPH("50Mi")),
     "minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi"},
    /* Several violations of one LimitRange are reported together, in order. */
    {"two-violations", 2, RES(CPU("40m"), NONE), NULL, ITEM("Container", "min", CPU("50m")),
     "minimum cpu usage per Container is 50m, but request is 40m"},
    {"min-and-max", 1, RES(CPU("40m"), CPU("3")), NULL,
     "[{\"type\":\"Container\",\"min\":" CPU("50m") ",\"max\":" CPU("2") "}]",
     "[minimum cpu usage per Container is 50m, but request is 40m, maximum cpu usage per Container is 2, but "
     "limit "
     "is 3]"},
    /*
     * The plain comparisons of small milli amounts (cpu, memory and ephemeral-storage in their
     * slots) and the full checks (other names, amounts past the milli-units) give kube's answers
     * at their edges alike.
     */
    {"ctr-min-equal", 1, RES(CPU("50m"), CPU("50m")), NULL, ITEM("Container", "min", CPU("0.05")), ""},
    {"ctr-min-limit-below", 1, RES(CPU("60m"), CPU("40m")), NULL, ITEM("Container", "min", CPU("50m")),
     "minimum cpu usage per Container is 50m, but limit is 40m"},
    {"ctr-min-negative", 1, RES(CPU("-1"), NONE), NULL, ITEM("Container", "min", CPU("0")),
     "minimum cpu usage per Container is 0, but request is -1"},
    {"ctr-max-request-over-no-limit", 1, RES(MEM("2Gi"), MEM("1Gi")), NULL,
     ITEM("Container", "max", MEM("1Gi")), "maximum memory usage per Container is 1Gi, but request is 2Gi"},
    {"ctr-ratio-just-over", 1, RES(CPU("1"), CPU("1501m")), NULL,
     ITEM("Container", "maxLimitRequestRatio", CPU("1.5")),
     "cpu max limit to request ratio per Container is 1500m, but provided ratio is 1.501000"},
    {"ctr-ratio-zero-request", 1, RES(CPU("0"), CPU("1")), NULL,
     ITEM("Container", "maxLimitRequestRatio", CPU("2")),
     "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"},
    {"ctr-extended-min-ok", 1, RES("{\"example.com/gpu\":\"2\"}", NONE), NULL,
     ITEM("Container", "min", "{\"example.com/gpu\":\"1\"}"), ""},
    {"ctr-extended-min-missing", 1, RES(CPU("1"), NONE), NULL,
     ITEM("Container", "min", "{\"example.com/gpu\":\"1\"}"),
     "minimum example.com/gpu usage per Container is 1.  No request is specified"},
    {"ctr-storage-not-a-slot", 1, RES(NONE, "{\"requests.cpu\":\"3\"}"), NULL,
     ITEM("Container", "max", "{\"requests.cpu\":\"2\"}"),
     "maximum requests.cpu usage per Container is 2, but limit is 3"},
    {"ctr-max-huge-request", 1, RES(CPU("9223372036854776"), CPU("9223372036854776")), NULL,
     ITEM("Container", "max", CPU("2")),
     "maximum cpu usage per Container is 2, but limit is 9223372036854776"},
    {"ctr-max-huge-request-only", 1, RES(CPU("9223372036854776"), CPU("1")), NULL,
     ITEM("Container", "max", CPU("2")),
     "maximum cpu usage per Container is 2, but request is 9223372036854776"},
    {"ctr-min-huge-bound", 1, RES(CPU("2"), NONE), NULL, ITEM("Container", "min", CPU("9223372036854776")),
     "minimum cpu usage per Container is 9223372036854776, but request is 2"},
    {"pod-hugepages-sum", 2, RES(NONE, "{\"hugepages-2Mi\":\"2Mi\",\"cpu\":\"1\"}"), NULL,
     ITEM("Pod", "max", "{\"hugepages-2Mi\":\"3Mi\"}"),
     "maximum hugepages-2Mi usage per Pod is 3Mi, but limit is 4Mi"},
    /* Sidecars (restartPolicy Always) add to the regular containers. */
    {"sidecar-sum", 1, RES(NONE, CPU("1")),
     "[{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":" RES(NONE, CPU("1500m")) "}]",
     ITEM("Pod", "max", CPU("2")), "maximum cpu usage per Pod is 2, but limit is 2500m"},
};

static void test_pod_limit_func(void **state)
{
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct lr_case *c = &CASES[i];
        adm_cluster_state_t *cs = ranges(c->limits);
        pt_result_t res;

        pt_set_cluster(cs);
        res = admit_pod(pod(c->name, c->containers, c->resources, c->init));
        if (c->message[0] == '\0') {
            if (res.rc != ADM_OK) {
                fail_msg("%s: %s", c->name, res.status.message);
            }
        } else {
            const char *want =
                adm_arena_printf(pt_arena, "pods \"%s\" is forbidden: %s", c->name, c->message);

            if (res.rc != ADM_DECLINED) {
                fail_msg("%s: admitted", c->name);
            }
            assert_int_equal(res.status.code, 403);
            assert_string_equal(res.status.reason, "Forbidden");
            assert_string_equal(res.status.message, want);
        }
        pt_set_cluster(NULL);
        adm_cluster_state_free(cs);
        adm_arena_reset(pt_arena);
    }
}

/* validLimitRange() of admission_test.go. */
#define VALID_LIMIT_RANGE                                                                                    \
    "[{\"type\":\"Pod\",\"max\":{\"cpu\":\"200m\",\"memory\":\"4Gi\"},\"min\":{\"cpu\":\"50m\",\"memory\":"  \
    "\"2Mi\"}},"                                                                                             \
    "{\"type\":\"Container\",\"max\":{\"cpu\":\"100m\",\"memory\":\"2Gi\"},\"min\":{\"cpu\":\"25m\","        \
    "\"memory\":"                                                                                            \
    "\"1Mi\"},\"default\":{\"cpu\":\"75m\",\"memory\":\"10Mi\"},\"defaultRequest\":{\"cpu\":\"50m\","        \
    "\"memory\":"                                                                                            \
    "\"5Mi\"}}]"

static void test_merge_defaults(void **state)
{
    adm_cluster_state_t *cs = ranges(VALID_LIMIT_RANGE);
    pt_result_t res;

    pt_set_cluster(cs);
    /* No resources: every default, and the annotation naming them. */
    res = run('m', "CREATE", "pods", "Pod", pod("empty-resources", 1, "{}", NULL), NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_json_equal(
        res.object,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"empty-resources\","
        "\"namespace\":\"test\",\"annotations\":{\"kubernetes.io/limit-ranger\":\"LimitRanger plugin "
        "set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"foo-0\",\"image\":\"foo:V0\",\"resources\":{"
        "\"requests\":{\"cpu\":\"50m\",\"memory\":\"5Mi\"},\"limits\":{\"cpu\":\"75m\",\"memory\":"
        "\"10Mi\"}}}]}}");
    /* Some set: only the others, for init containers too (kube's table shares one map between the
     * container and the init container, so it sees the init container already defaulted). */
    res = run('m', "CREATE", "pods", "Pod",
              pod("limit-memory", 1, RES(MEM("512Mi"), NONE),
                  "[{\"name\":\"foo-0\",\"resources\":" RES(MEM("512Mi"), NONE) "}]"),
              NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_non_null(strstr(res.object,
                           "\"kubernetes.io/limit-ranger\":\"LimitRanger plugin set: cpu request for "
                           "container foo-0; cpu, memory limit for container foo-0; cpu request for init "
                           "container foo-0; cpu, memory limit for init container foo-0\""));
    assert_non_null(strstr(res.object, "\"requests\":{\"memory\":\"512Mi\",\"cpu\":\"50m\"}"));
    /* Everything given: no change, no annotation. */
    res = run('m', "CREATE", "pods", "Pod",
              pod("limit-memory", 1,
                  "{\"requests\":{\"cpu\":\"100m\",\"memory\":\"512Mi\"},\"limits\":{\"cpu\":"
                  "\"200m\",\"memory\":\"1G\"}}",
                  NULL),
              NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_null(strstr(res.object, "limit-ranger"));
    /* The defaulted pod then validates against the same range. */
    res = admit_pod(pod("defaulted", 1, "{}", NULL));
    assert_int_equal(res.rc, ADM_OK);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/*
 * Where the defaults land, as the mutable form put them: a null resources, requests or annotations
 * filled in place, a pod without metadata given one at the end, a limits list that has one default
 * gets the other appended; resources that are not an object fail the request.
 */
static void test_defaults_in_place(void **state)
{
    adm_cluster_state_t *cs = ranges(VALID_LIMIT_RANGE);
    pt_result_t res;

    (void)state;
    pt_set_cluster(cs);
    res = run('m', "CREATE", "pods", "Pod",
              "{\"metadata\":{\"annotations\":null,\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":"
              "null,\"name\":\"c\"},{\"name\":\"d\",\"resources\":{\"requests\":null,\"limits\":{\"cpu\":"
              "\"80m\"}}}]}}",
              NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_json_equal(res.object,
                      "{\"metadata\":{\"annotations\":{\"kubernetes.io/limit-ranger\":\"LimitRanger plugin "
                      "set: cpu, memory request for container c; cpu, memory limit for container c; cpu, "
                      "memory request for container d; memory limit for container d\"},\"name\":\"a\"},"
                      "\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":"
                      "\"5Mi\"},\"limits\":{\"cpu\":\"75m\",\"memory\":\"10Mi\"}},\"name\":\"c\"},{\"name\":"
                      "\"d\",\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"5Mi\"},\"limits\":{"
                      "\"cpu\":\"80m\",\"memory\":\"10Mi\"}}}]}}");
    res = run('m', "CREATE", "pods", "Pod",
              "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" CPU(
                  "1m") ",\"limits\":"
                        "{\"cpu\":\"1m\",\"memory\":\"1Mi\"}}}]}}",
              NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_json_equal(res.object,
                      "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
                      "\"1m\",\"memory\":\"5Mi\"},\"limits\":{\"cpu\":\"1m\",\"memory\":\"1Mi\"}}}]},"
                      "\"metadata\":{\"annotations\":{\"kubernetes.io/limit-ranger\":\"LimitRanger plugin "
                      "set: memory request for container c\"}}}");
    res = run('m', "CREATE", "pods", "Pod",
              "{\"metadata\":{\"annotations\":{\"kubernetes.io/limit-ranger\":\"old\",\"x\":\"y\"}},"
              "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1m\","
              "\"memory\":\"1Mi\"},\"limits\":{\"cpu\":\"1m\"}}}]}}",
              NULL);
    assert_json_equal(res.object,
                      "{\"metadata\":{\"annotations\":{\"x\":\"y\",\"kubernetes.io/limit-ranger\":"
                      "\"LimitRanger plugin set: memory limit for container c\"}},\"spec\":{\"containers\":"
                      "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1m\",\"memory\":\"1Mi\"},"
                      "\"limits\":{\"cpu\":\"1m\",\"memory\":\"10Mi\"}}}]}}");
    res = run('m', "CREATE", "pods", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":7}]}}",
              NULL);
    assert_int_equal(res.rc, ADM_ENOMEM);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static void test_pvc(void **state)
{
    static const char *const pvc_fmt = "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
                                       "\"metadata\":{\"name\":\"claim\",\"namespace\":"
                                       "\"test\"},\"spec\":{\"resources\":{\"requests\":%s}}}";
    adm_cluster_state_t *cs = ranges(
        "[{\"type\":\"PersistentVolumeClaim\",\"min\":{\"storage\":\"1Gi\"},\"max\":{\"storage\":\"5Gi\"}}]");
    pt_result_t res;

    pt_set_cluster(cs);
    res = run('v', "CREATE", "persistentvolumeclaims", "PersistentVolumeClaim",
              adm_arena_printf(pt_arena, pvc_fmt, "{\"storage\":\"2Gi\"}"), NULL);
    assert_int_equal(res.rc, ADM_OK);
    res = run('v', "CREATE", "persistentvolumeclaims", "PersistentVolumeClaim",
              adm_arena_printf(pt_arena, pvc_fmt, "{\"storage\":\"500Mi\"}"), NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(res.status.message,
                        "persistentvolumeclaims \"claim\" is forbidden: minimum storage usage "
                        "per PersistentVolumeClaim is 1Gi, but request is 500Mi");
    /* Expansion past max is an UPDATE, checked too. */
    res = run('v', "UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim",
              adm_arena_printf(pt_arena, pvc_fmt, "{\"storage\":\"10Gi\"}"),
              adm_arena_printf(pt_arena, pvc_fmt, "{\"storage\":\"2Gi\"}"));
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(res.status.message,
                        "persistentvolumeclaims \"claim\" is forbidden: maximum storage usage "
                        "per PersistentVolumeClaim is 5Gi, but request is 10Gi");
    res = run('v', "CREATE", "persistentvolumeclaims", "PersistentVolumeClaim",
              adm_arena_printf(pt_arena, pvc_fmt, "{}"), NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(res.status.message,
                        "persistentvolumeclaims \"claim\" is forbidden: [minimum storage usage per "
                        "PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per "
                        "PersistentVolumeClaim is 5Gi.  No request is specified]");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static void test_skipped_requests(void **state)
{
    adm_cluster_state_t *cs = ranges(ITEM("Container", "min", CPU("50m")));
    const char *bad = pod("bad", 1, RES(NONE, NONE), NULL);
    const char *deleting =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bad\",\"namespace\":"
        "\"test\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{}}";
    pt_result_t res;

    pt_set_cluster(cs);
    /* Pod updates are skipped (containers are immutable)... */
    assert_int_equal(run('v', "UPDATE", "pods", "Pod", bad, bad).rc, ADM_OK);
    /* ... but not pods/resize. */
    {
        pt_request_t r = {0};

        r.operation = "UPDATE";
        r.group = "";
        r.resource = "pods";
        r.sub_resource = "resize";
        r.kind = "Pod";
        r.namespace_ = "test";
        r.object = bad;
        r.old_object = bad;
        res = pt_run(pt_arena, &adm_plugin_limit_ranger, NULL, 'v', &r);
        assert_int_equal(res.rc, ADM_DECLINED);
        r.sub_resource = "status";
        assert_int_equal(pt_run(pt_arena, &adm_plugin_limit_ranger, NULL, 'v', &r).rc, ADM_OK);
    }
    /* Other namespaces and other kinds see no range. */
    {
        pt_request_t r = {0};

        r.operation = "CREATE";
        r.group = "";
        r.resource = "pods";
        r.kind = "Pod";
        r.namespace_ = "other";
        r.object = bad;
        assert_int_equal(pt_run(pt_arena, &adm_plugin_limit_ranger, NULL, 'v', &r).rc, ADM_OK);
        r.namespace_ = "test";
        r.resource = "configmaps";
        r.kind = "ConfigMap";
        assert_int_equal(pt_run(pt_arena, &adm_plugin_limit_ranger, NULL, 'v', &r).rc, ADM_OK);
    }
    /* An object being deleted is left alone. */
    assert_int_equal(
        run('v', "UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim", deleting, deleting).rc, ADM_OK);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static void test_several_ranges(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster(
        "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
        "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"broken\",\"namespace\":"
        "\"test\"},"
        "\"spec\":{\"limits\":[{\"type\":\"Container\",\"min\":{\"cpu\":\"lots\"}}]}},"
        "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"first\",\"namespace\":"
        "\"test\"},"
        "\"spec\":{\"limits\":[{\"type\":\"Container\",\"defaultRequest\":{\"cpu\":\"10m\"}}]}},"
        "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"second\",\"namespace\":"
        "\"test\"},"
        "\"spec\":{\"limits\":[{\"type\":\"Container\",\"defaultRequest\":{\"cpu\":\"20m\",\"memory\":"
        "\"1Mi\"},"
        "\"min\":{\"cpu\":\"15m\"}}]}}]}");
    pt_result_t res;

    pt_set_cluster(cs);
    /* The first range defaults cpu; the second adds memory only and writes the annotation last. */
    res = run('m', "CREATE", "pods", "Pod", pod("p", 1, "{}", NULL), NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_non_null(strstr(res.object, "\"requests\":{\"cpu\":\"10m\",\"memory\":\"1Mi\"}"));
    assert_non_null(strstr(res.object, "\"LimitRanger plugin set: memory request for container foo-0\""));
    /* The malformed range is skipped; the second one rejects what the first defaulted. */
    res = run('v', "CREATE", "pods", "Pod", res.object, NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(
        res.status.message,
        "pods \"p\" is forbidden: minimum cpu usage per Container is 15m, but request is 10m");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* YAML numbers are quantities (Quantity.UnmarshalJSON takes bare numbers); a pod's bad quantity is a 400. */
static void test_numbers_and_bad_values(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster("apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: nums\n"
                                              "  namespace: test\nspec:\n  limits:\n  - type: Container\n"
                                              "    max: {cpu: 1, memory: 0.5}\n");
    pt_result_t res;

    pt_set_cluster(cs);
    res = run('v', "CREATE", "pods", "Pod", pod("p", 1, RES(NONE, "{\"cpu\":\"2\",\"memory\":\"1\"}"), NULL),
              NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(res.status.message,
                        "pods \"p\" is forbidden: [maximum cpu usage per Container is 1, but "
                        "limit is 2, maximum memory usage per Container is 500m, but limit is 1]");
    res = run('v', "CREATE", "pods", "Pod", pod("p", 1, RES(NONE, CPU("2i")), NULL), NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 400);
    assert_string_equal(
        res.status.message,
        "Pod in version \"v1\" cannot be handled as a Pod: unable to parse quantity's suffix");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* A pod of the given containers (a JSON array) in namespace test. */
static const char *pod_of(const char *containers)
{
    return adm_arena_printf(
        pt_arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"test\"},\"spec\":{\"containers\":%s}}",
        containers);
}

/*
 * Container items read the containers' lists in order, requests before limits, and the first one
 * that is not a ResourceList answers (kube-apiserver's decoding of the pod would have failed on
 * it); a pod whose totals do not add up is still checked by Container items alone, which need no
 * totals (they are summed in the same walk that reads the lists).
 */
static void test_container_lists_in_order(void **state)
{
    static const char format[] = "Pod in version \"v1\" cannot be handled as a Pod: "
                                 "quantities must match the regular expression "
                                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    static const char suffix[] =
        "Pod in version \"v1\" cannot be handled as a Pod: unable to parse quantity's suffix";
    /* 1e30 + 1n needs 40 digits */
    static const char sum_too_big[] =
        "[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1e30\"}}},"
        "{\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1n\"}}}]";
    adm_cluster_state_t *cs = ranges(ITEM("Container", "max", CPU("2")));
    pt_result_t res;

    (void)state;
    pt_set_cluster(cs);
    /* the first container's limits come before the second's requests */
    res = run('v', "CREATE", "pods", "Pod",
              pod_of("[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"2i\"}}},"
                     "{\"name\":\"b\",\"resources\":{\"requests\":{\"memory\":\"abc\"}}}]"),
              NULL);
    assert_int_equal(res.status.code, 400);
    assert_string_equal(res.status.message, suffix);
    /* within a container, its requests before its limits */
    res = run('v', "CREATE", "pods", "Pod",
              pod_of("[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"2i\"},"
                     "\"requests\":{\"memory\":\"abc\"}}}]"),
              NULL);
    assert_int_equal(res.status.code, 400);
    assert_string_equal(res.status.message, format);
    /* two limits whose sum leaves the 128-bit form: no Pod item, no totals needed */
    res = run('v', "CREATE", "pods", "Pod", pod_of(sum_too_big), NULL);
    assert_int_equal(res.rc, ADM_OK);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
    /* with a Pod item the same pod's totals are refused */
    cs = ranges("[{\"type\":\"Container\",\"max\":" CPU("2") "},{\"type\":\"Pod\",\"max\":" CPU("4") "}]");
    pt_set_cluster(cs);
    res = run('v', "CREATE", "pods", "Pod", pod_of(sum_too_big), NULL);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_string_equal(res.status.message,
                        "pods \"p\" is forbidden: resource totals exceed what admitd can add up");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
    adm_arena_reset(pt_arena);
}

/* Several Container items: the later ones' defaults win, from the first request and the next. */
static void test_container_items_merged(void **state)
{
    adm_cluster_state_t *cs =
        ranges("[{\"type\":\"Container\",\"default\":{\"cpu\":\"75m\",\"memory\":\"10Mi\"},"
               "\"defaultRequest\":{\"cpu\":\"50m\"}},"
               "{\"type\":\"Container\",\"default\":{\"cpu\":\"100m\"},\"defaultRequest\":{\"memory\":"
               "\"5Mi\"}}]");

    (void)state;
    pt_set_cluster(cs);
    for (int i = 0; i < 2; i++) {
        pt_result_t res = run('m', "CREATE", "pods", "Pod", pod("merged", 1, "{}", NULL), NULL);

        assert_int_equal(res.rc, ADM_OK);
        assert_non_null(strstr(res.object, "\"requests\":{\"cpu\":\"50m\",\"memory\":\"5Mi\"}"));
        assert_non_null(strstr(res.object, "\"limits\":{\"cpu\":\"100m\",\"memory\":\"10Mi\"}"));
        adm_arena_reset(pt_arena);
    }
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static int setup(void **state)
{
    char err[256];

    if (pt_group_setup(state) != 0) {
        return -1;
    }
    return pt_configure(&adm_plugin_limit_ranger, NULL, NULL, &lr_state, err, sizeof(err));
}

static int teardown(void **state)
{
    adm_plugin_limit_ranger.free_state(lr_state);
    return pt_group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_items_merged),
        cmocka_unit_test(test_pod_limit_func),
        cmocka_unit_test(test_merge_defaults),
        cmocka_unit_test(test_defaults_in_place),
        cmocka_unit_test(test_pvc),
        cmocka_unit_test(test_skipped_requests),
        cmocka_unit_test(test_several_ranges),
        cmocka_unit_test(test_numbers_and_bad_values),
        cmocka_unit_test(test_container_lists_in_order),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ResourceList helpers the counting plugins share (include/adm/plugins/resources.h): reading
 * quantities as Quantity.UnmarshalJSON does, sums and maxima, a pod's totals with sidecars and
 * pod-level resources, and the BestEffort QoS class as kube's qos.GetPodQOS decides it (the
 * cases of its qos_test.go that separate BestEffort from the rest, with the newest gates).
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
#include "adm/base/json.h"
#include "adm/plugins/resources.h"
#include "plugintest.h"

static yyjson_val *json(const char *text)
{
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(pt_arena, text, strlen(text), &err);

    assert_non_null(doc);
    return yyjson_doc_get_root(doc);
}

static const char *qtext(const adm_rlist_t *l, const char *name)
{
    char *buf = adm_arena_alloc(pt_arena, ADM_QTY_STR_MAX);
    const adm_quantity_t *q = adm_rlist_find(l, name);

    if (q == NULL) {
        return "(none)";
    }
    adm_quantity_format(q, buf, ADM_QTY_STR_MAX);
    return buf;
}

static void test_read(void **state)
{
    adm_rlist_t l;
    const char *bad = NULL;

    (void)state;
    assert_int_equal(
        adm_rlist_read(pt_arena, json("{\"cpu\":\"100m\",\"memory\":1024,\"x\":\"1e3\"}"), &l, &bad), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(qtext(&l, "cpu"), "100m");
    assert_string_equal(qtext(&l, "memory"), "1024");
    assert_string_equal(qtext(&l, "x"), "1e3");
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":\"1x\"}"), &l, &bad), ADM_EINVAL);
    assert_non_null(bad);
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":true}"), &l, &bad), ADM_EINVAL);
    assert_string_equal(bad, "quantities must be strings or numbers");
    assert_int_equal(adm_rlist_read(pt_arena, NULL, &l, &bad), 0);
    assert_int_equal(l.n, 0);
    /* a name given twice keeps its first place and takes the later value, as adm_rlist_set does */
    assert_int_equal(adm_rlist_read(pt_arena,
                                    json("{\"cpu\":\"1\",\"memory\":\"2Gi\",\"cpu\":\"3\",\"c\":\"4\"}"), &l,
                                    &bad),
                     0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.names[0], "cpu");
    assert_string_equal(l.names[1], "memory");
    assert_string_equal(l.names[2], "c");
    assert_string_equal(qtext(&l, "cpu"), "3");
    assert_string_equal(qtext(&l, "c"), "4");
    /* the list read can still grow */
    assert_int_equal(adm_rlist_set(pt_arena, &l, "pods", adm_rlist_find(&l, "c")), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(qtext(&l, "pods"), "4");
    assert_string_equal(qtext(&l, "memory"), "2Gi");
}

static void test_add_max(void **state)
{
    adm_rlist_t a, b;
    const char *bad;

    (void)state;
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":\"1\",\"memory\":\"1Gi\"}"), &a, &bad), 0);
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":\"500m\",\"pods\":\"2\"}"), &b, &bad), 0);
    assert_int_equal(adm_rlist_add(pt_arena, &a, &b), 0);
    assert_string_equal(qtext(&a, "cpu"), "1500m");
    assert_string_equal(qtext(&a, "pods"), "2");
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":\"2\",\"memory\":\"1Mi\"}"), &b, &bad), 0);
    assert_int_equal(adm_rlist_max(pt_arena, &a, &b), 0);
    assert_string_equal(qtext(&a, "cpu"), "2");
    assert_string_equal(qtext(&a, "memory"), "1Gi");
}

/* Sidecars run with the regular containers; a plain init container with the sidecars before it. */
static void test_pod_total(void **state)
{
    adm_rlist_t t;
    const char *bad;
    yyjson_val *pod = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
                           "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
                           "{\"cpu\":\"200m\"}}},{\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":"
                           "\"1Gi\"}}}]}}");

    (void)state;
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "requests", &t, &bad), 0);
    assert_string_equal(qtext(&t, "cpu"), "3200m");
    assert_string_equal(qtext(&t, "memory"), "1Gi");
    pod = json("{\"spec\":{\"resources\":{\"requests\":{\"cpu\":\"4\"}},\"containers\":[{\"resources\":"
               "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Mi\"}}}]}}");
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "requests", &t, &bad), 0);
    assert_string_equal(qtext(&t, "cpu"), "4");
    assert_string_equal(qtext(&t, "memory"), "1Mi");
}

/*
 * Totals asked again for the same pod in the same arena come from memory: the same lists (each
 * caller its own copy, free to change), the same error; another pod, the other list, or the same
 * address after the arena was reset (another pod there now) are computed afresh.
 */
static void test_pod_total_remembered(void **state)
{
    static const char one[] = "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"},"
                              "\"limits\":{\"cpu\":\"2\"}}}]}}";
    static const char two[] = "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"5\"},"
                              "\"limits\":{\"cpu\":\"6\"}}}]}}";
    adm_rlist_t t, u;
    const char *bad = NULL;
    yyjson_val *a, *b;

    (void)state;
    adm_arena_reset(pt_arena);
    a = json(one);
    b = json(two);
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "requests", &t, &bad), 0);
    assert_string_equal(qtext(&t, "cpu"), "1");
    /* a caller's change stays its own */
    assert_int_equal(adm_rlist_set(pt_arena, &t, "memory", adm_rlist_find(&t, "cpu")), 0);
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "requests", &u, &bad), 0);
    assert_int_equal(u.n, 1);
    assert_string_equal(qtext(&u, "cpu"), "1");
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "limits", &u, &bad), 0);
    assert_string_equal(qtext(&u, "cpu"), "2");
    assert_int_equal(adm_pod_resource_total(pt_arena, b, "requests", &u, &bad), 0);
    assert_string_equal(qtext(&u, "cpu"), "5");
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "limits", &u, &bad), 0);
    assert_string_equal(qtext(&u, "cpu"), "2");
    /* an error is remembered with its reason */
    a = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1x\"}}}]}}");
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "requests", &u, &bad), ADM_EINVAL);
    assert_non_null(bad);
    bad = NULL;
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "requests", &u, &bad), ADM_EINVAL);
    assert_non_null(bad);
    /* after a reset the same address may hold another pod */
    adm_arena_reset(pt_arena);
    a = json(one);
    assert_int_equal(adm_pod_resource_total(pt_arena, a, "requests", &t, &bad), 0);
    adm_arena_reset(pt_arena);
    b = json(two);
    assert_int_equal(adm_pod_resource_total(pt_arena, b, "requests", &t, &bad), 0);
    assert_string_equal(qtext(&t, "cpu"), "5");
}

/*
 * Requests and limits are summed in one walk, each keeping its own answer: a bad limit does not
 * spoil the requests, and the kept pair (not copies: the same lists at every call) reports the
 * requests' error first, else the limits'.
 */
static void test_pod_totals_both(void **state)
{
    adm_rlist_t t;
    const adm_rlist_t *req, *lim, *req2, *lim2;
    const char *bad = NULL;
    yyjson_val *pod;

    (void)state;
    adm_arena_reset(pt_arena);
    pod = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"},\"limits\":"
               "{\"cpu\":\"1x\"}}},{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "limits", &t, &bad), ADM_EINVAL);
    assert_non_null(bad);
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "requests", &t, &bad), 0);
    assert_string_equal(qtext(&t, "cpu"), "3");
    bad = NULL;
    assert_int_equal(adm_pod_resource_totals_kept(pt_arena, pod, &req, &lim, &bad), ADM_EINVAL);
    assert_non_null(bad);
    pod = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1y\"},\"limits\":"
               "{\"cpu\":true}}}]}}");
    bad = NULL;
    assert_int_equal(adm_pod_resource_totals_kept(pt_arena, pod, &req, &lim, &bad), ADM_EINVAL);
    assert_non_null(bad);
    assert_string_equal(bad, "quantities must match the regular expression "
                             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    pod = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"},\"limits\":"
               "{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}],\"initContainers\":[{\"resources\":{\"limits\":"
               "{\"memory\":\"3Gi\"}}}]}}");
    assert_int_equal(adm_pod_resource_totals_kept(pt_arena, pod, &req, &lim, &bad), 0);
    assert_string_equal(qtext(req, "cpu"), "1");
    assert_string_equal(qtext(lim, "cpu"), "2");
    assert_string_equal(qtext(lim, "memory"), "3Gi");
    assert_int_equal(adm_pod_resource_totals_kept(pt_arena, pod, &req2, &lim2, &bad), 0);
    assert_ptr_equal(req, req2);
    assert_ptr_equal(lim, lim2);
}

/* A plain init container before any sidecar counts alone; one after a sidecar runs with it. */
static void test_pod_total_init_order(void **state)
{
    adm_rlist_t t;
    const char *bad;
    yyjson_val *pod = json("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
                           "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":"
                           "\"1Gi\"}}},{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
                           "\"500m\"}}},{\"resources\":{\"requests\":{\"cpu\":\"1800m\"}}}]}}");

    (void)state;
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "requests", &t, &bad), 0);
    /* containers 1 + sidecar 500m = 1500m; first init 2; last init 1800m + 500m = 2300m */
    assert_string_equal(qtext(&t, "cpu"), "2300m");
    assert_string_equal(qtext(&t, "memory"), "1Gi");
}

static void test_best_effort(void **state)
{
    (void)state;
    /* containers decide: any cpu or memory above zero, in requests or limits, init containers too */
    assert_true(adm_pod_qos_best_effort(json("{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}")));
    assert_true(adm_pod_qos_best_effort(json("{}")));
    assert_false(adm_pod_qos_best_effort(
        json("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"memory\":\"1Mi\"}}}]}}")));
    assert_false(adm_pod_qos_best_effort(
        json("{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":1}}}]}}")));
    assert_true(adm_pod_qos_best_effort(json(
        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"0\",\"memory\":\"-1\"}}}]}}")));
    assert_true(adm_pod_qos_best_effort(json(
        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"ephemeral-storage\":\"1Gi\"}}}]}}")));
    /* pod-level cpu, memory or hugepages: only spec.resources counts */
    assert_false(adm_pod_qos_best_effort(json("{\"spec\":{\"resources\":{\"limits\":{\"cpu\":\"1\"}}}}")));
    assert_true(adm_pod_qos_best_effort(
        json("{\"spec\":{\"resources\":{\"requests\":{\"hugepages-2Mi\":\"2Mi\"}},\"containers\":[{"
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}")));
    /* an empty or unsupported pod-level list leaves it to the containers
     * (PodLevelResourcesFixKubeletQOSClass) */
    assert_false(
        adm_pod_qos_best_effort(json("{\"spec\":{\"resources\":{\"requests\":{\"pids\":\"1\"}},"
                                     "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}")));
    /* status.qosClass, when set, is the answer */
    assert_false(adm_pod_qos_best_effort(json("{\"status\":{\"qosClass\":\"Burstable\"}}")));
    assert_true(
        adm_pod_qos_best_effort(json("{\"status\":{\"qosClass\":\"BestEffort\"},\"spec\":{"
                                     "\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}")));
}

/* Names read are interned; any string of the same text still finds them, and they find it. */
static void test_interned_names(void **state)
{
    adm_rlist_t l, mine;
    const char *bad = NULL;
    char cpu[] = "cpu", memory[] = "memory";
    adm_quantity_t q = adm_quantity_scaled(1, 0, ADM_QTY_DECIMAL_SI);

    (void)state;
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\":\"1\",\"example.com/gpu\":\"2\"}"), &l, &bad),
                     0);
    assert_ptr_equal(l.names[0], adm_res(ADM_RES_CPU));
    assert_string_equal(l.names[1], "example.com/gpu");
    assert_ptr_equal(adm_res_intern("limits.memory"), adm_res(ADM_RES_LIMITS_MEMORY));
    assert_ptr_equal(adm_res_intern(memory), adm_res(ADM_RES_MEMORY));
    assert_string_equal(adm_res_intern("cpus"), "cpus");
    assert_non_null(adm_rlist_find(&l, cpu));
    assert_non_null(adm_rlist_find(&l, adm_res(ADM_RES_CPU)));
    assert_null(adm_rlist_find(&l, adm_res(ADM_RES_MEMORY)));
    assert_non_null(adm_rlist_find(&l, "example.com/gpu"));
    /* a list of names not interned answers interned ones */
    memset(&mine, 0, sizeof(mine));
    assert_int_equal(adm_rlist_append(pt_arena, &mine, memory, &q), 0);
    assert_non_null(adm_rlist_find(&mine, adm_res(ADM_RES_MEMORY)));
    assert_null(adm_rlist_find(&mine, adm_res(ADM_RES_CPU)));
    /* owned copies keep interned names as they are and copy the others */
    assert_int_equal(adm_rlist_own(pt_arena, &l), 0);
    assert_ptr_equal(l.names[0], adm_res(ADM_RES_CPU));
    assert_string_equal(l.names[1], "example.com/gpu");
}

/* A list read kept is read once per arena life: the same list again, a fresh one after a reset. */
static void test_read_kept(void **state)
{
    yyjson_val *obj = json("{\"cpu\":\"250m\"}");
    yyjson_val *bad_obj = json("{\"cpu\":\"1x\"}");
    const adm_rlist_t *one, *two;
    const char *bad = NULL;

    (void)state;
    assert_int_equal(adm_rlist_read_kept(pt_arena, obj, &one, &bad), 0);
    assert_int_equal(adm_rlist_read_kept(pt_arena, obj, &two, &bad), 0);
    assert_ptr_equal(one, two);
    assert_string_equal(qtext(one, "cpu"), "250m");
    assert_int_equal(adm_rlist_read_kept(pt_arena, bad_obj, &one, &bad), ADM_EINVAL);
    assert_non_null(bad);
    bad = NULL;
    assert_int_equal(adm_rlist_read_kept(pt_arena, bad_obj, &one, &bad), ADM_EINVAL);
    assert_non_null(bad);
    assert_int_equal(one->n, 0);
    assert_int_equal(adm_rlist_read_kept(pt_arena, NULL, &one, &bad), 0);
    assert_int_equal(one->n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_add_max),
        cmocka_unit_test(test_pod_total),
        cmocka_unit_test(test_pod_total_remembered),
        cmocka_unit_test(test_best_effort),
        cmocka_unit_test(test_interned_names),
        cmocka_unit_test(test_read_kept),
        cmocka_unit_test(test_pod_totals_both),
        cmocka_unit_test(test_pod_total_init_order),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

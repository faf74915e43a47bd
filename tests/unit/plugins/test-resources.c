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

#include "adm/admission/admission.h"
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

/*
 * cpu, memory and ephemeral-storage have slots (their interned pointers); names of the same length
 * or first letter, the other interned names and a key with a NUL after "cpu" are told apart as
 * adm_res_intern tells them (by the C string).
 */
static void test_slot_names(void **state)
{
    adm_rlist_t l;
    const char *bad = NULL;

    (void)state;
    assert_int_equal(adm_rlist_read(pt_arena,
                                    json("{\"cpx\":\"1\",\"memorz\":\"2\",\"ephemeral-storage\":\"3\","
                                         "\"requests.cpu\":\"4\",\"count/pods\":\"5\",\"memory\":\"6\","
                                         "\"cpu\":\"7\",\"c\":\"8\",\"\":\"9\"}"),
                                    &l, &bad),
                     0);
    assert_int_equal(l.n, 9);
    assert_string_equal(l.names[0], "cpx");
    assert_int_equal(adm_res_slot(l.names[0]), -1);
    assert_string_equal(l.names[1], "memorz");
    assert_int_equal(adm_res_slot(l.names[1]), -1);
    assert_ptr_equal(l.names[2], adm_res(ADM_RES_EPHEMERAL_STORAGE));
    assert_int_equal(adm_res_slot(l.names[2]), ADM_RES_EPHEMERAL_STORAGE);
    assert_ptr_equal(l.names[3], adm_res(ADM_RES_REQUESTS_CPU));
    assert_int_equal(adm_res_slot(l.names[3]), -1);
    assert_ptr_equal(l.names[4], adm_res(ADM_RES_COUNT_PODS));
    assert_ptr_equal(l.names[5], adm_res(ADM_RES_MEMORY));
    assert_int_equal(adm_res_slot(l.names[5]), ADM_RES_MEMORY);
    assert_ptr_equal(l.names[6], adm_res(ADM_RES_CPU));
    assert_int_equal(adm_res_slot(l.names[6]), ADM_RES_CPU);
    assert_string_equal(l.names[7], "c");
    assert_string_equal(l.names[8], "");
    assert_int_equal(adm_res_slot("cpu"), -1); /* the text, not the interned pointer */
    assert_int_equal(adm_res_slot(adm_res(ADM_RES_PODS)), -1);
    assert_int_equal(adm_res_slot(adm_res(ADM_RES_CPU) + 1), -1);
    assert_ptr_equal(adm_res_intern("requests.storage"), adm_res(ADM_RES_REQUESTS_STORAGE));
    assert_ptr_equal(adm_res_intern("limits.ephemeral-storage"), adm_res(ADM_RES_LIMITS_EPHEMERAL_STORAGE));
    assert_ptr_equal(adm_res_intern("storage"), adm_res(ADM_RES_STORAGE));
    assert_ptr_equal(adm_res_intern("pods"), adm_res(ADM_RES_PODS));
    assert_string_equal(adm_res_intern("limits.cpus"), "limits.cpus");
    /* a key with a NUL inside reads as its C string, as before: "cpu" */
    assert_int_equal(adm_rlist_read(pt_arena, json("{\"cpu\\u0000x\":\"1\"}"), &l, &bad), 0);
    assert_ptr_equal(l.names[0], adm_res(ADM_RES_CPU));
    /* a key given twice: one entry, the later value */
    assert_int_equal(
        adm_rlist_read(pt_arena, json("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"cpu\":\"2\"}"), &l, &bad), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(qtext(&l, "cpu"), "2");
}

/*
 * Totals keep the order in which names first appear, whether a name has a slot or not, and grow
 * past the room a sum starts with; init containers and sidecars as before.
 */
static void test_pod_totals_order_and_growth(void **state)
{
    yyjson_val *pod =
        json("{\"spec\":{\"containers\":["
             "{\"resources\":{\"requests\":{\"example.com/gpu\":\"1\",\"cpu\":\"1\"}}},"
             "{\"resources\":{\"requests\":{\"memory\":\"1Gi\",\"cpu\":\"2\",\"ephemeral-storage\":\"1Gi\","
             "\"x/a\":\"1\",\"x/b\":\"1\",\"x/c\":\"1\",\"x/d\":\"1\",\"x/e\":\"1\",\"x/f\":\"1\"}}}],"
             "\"initContainers\":["
             "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"x/"
             "g\":\"1\",\"cpu\":\"1\"}}},"
             "{\"name\":\"i\",\"resources\":{\"requests\":{\"hugepages-2Mi\":\"2Mi\",\"cpu\":\"5\"}}}]}}");
    static const char *const want[] = {"example.com/gpu",
                                       "cpu",
                                       "memory",
                                       "ephemeral-storage",
                                       "x/a",
                                       "x/b",
                                       "x/c",
                                       "x/d",
                                       "x/e",
                                       "x/f",
                                       "x/g",
                                       "hugepages-2Mi"};
    adm_rlist_t total;
    const char *bad = NULL;

    (void)state;
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "requests", &total, &bad), 0);
    assert_int_equal(total.n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < total.n; i++) {
        assert_string_equal(total.names[i], want[i]);
    }
    /* cpu: 1 + 2 + the sidecar's 1, against the init container's 5 with the sidecar's 1 */
    assert_string_equal(qtext(&total, "cpu"), "6");
    assert_string_equal(qtext(&total, "x/g"), "1");
    assert_string_equal(qtext(&total, "hugepages-2Mi"), "2Mi");
    /* the caller's copy may grow */
    assert_int_equal(adm_rlist_append(pt_arena, &total, "x/h", &total.qs[0]), 0);
    adm_arena_reset(pt_arena);
}

/*
 * The containers' lists kept with the totals: every container's requests and limits in order,
 * each with its own answer (a list after a malformed one is still read), while the totals keep
 * the first error of each kind.
 */
#define FORMAT_WRONG                                                                                         \
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

static void test_container_lists_kept(void **state)
{
    yyjson_val *pod = json("{\"spec\":{\"containers\":["
                           "{\"resources\":{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}},"
                           "{\"resources\":{\"requests\":{\"cpu\":\"1x\"}}},"
                           "\"not a container\"],"
                           "\"initContainers\":[{\"resources\":{\"requests\":{\"memory\":\"abc\"},"
                           "\"limits\":{\"memory\":1}}}]}}");
    yyjson_val *c0 = yyjson_arr_get(adm_json_path(pod, "spec", "containers", NULL), 0);
    const adm_kept_rlist_t *lists, *again;
    const adm_rlist_t *req, *lim;
    adm_rlist_t total;
    const char *bad = NULL;
    size_t n, n2;

    (void)state;
    assert_int_equal(adm_pod_container_lists_kept(pt_arena, pod, &lists, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(lists[0].err, 0);
    assert_string_equal(qtext(lists[0].list, "cpu"), "1");
    assert_string_equal(qtext(lists[1].list, "cpu"), "2");
    assert_int_equal(lists[2].err, ADM_EINVAL);
    assert_string_equal(lists[2].bad, FORMAT_WRONG);
    assert_int_equal(lists[2].list->n, 0);
    assert_int_equal(lists[3].err, 0);
    assert_int_equal(lists[3].list->n, 0);
    assert_int_equal(lists[4].err, 0); /* a string where a container should be: nothing */
    assert_int_equal(lists[5].list->n, 0);
    assert_int_equal(lists[6].err, ADM_EINVAL); /* read though requests failed before */
    assert_int_equal(lists[7].err, 0);          /* a bare number, as YAML writes it */
    assert_string_equal(qtext(lists[7].list, "memory"), "1");
    /* the same lists as adm_rlist_read_kept keeps, and the same answer again */
    assert_int_equal(
        adm_rlist_read_kept(pt_arena, adm_json_path(c0, "resources", "limits", NULL), &lim, &bad), 0);
    assert_ptr_equal(lim, lists[1].list);
    assert_int_equal(adm_pod_container_lists_kept(pt_arena, pod, &again, &n2), 0);
    assert_ptr_equal(again, lists);
    assert_int_equal(n2, n);
    /* the totals: requests fail at the first malformed list, limits add up */
    assert_int_equal(adm_pod_resource_totals_kept(pt_arena, pod, &req, &lim, &bad), ADM_EINVAL);
    assert_string_equal(bad, FORMAT_WRONG);
    assert_int_equal(adm_pod_resource_total(pt_arena, pod, "limits", &total, &bad), 0);
    assert_int_equal(total.n, 2);
    assert_string_equal(qtext(&total, "cpu"), "2");
    assert_string_equal(qtext(&total, "memory"), "1");
    adm_arena_reset(pt_arena);
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
        cmocka_unit_test(test_slot_names),
        cmocka_unit_test(test_pod_totals_order_and_growth),
        cmocka_unit_test(test_container_lists_kept),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

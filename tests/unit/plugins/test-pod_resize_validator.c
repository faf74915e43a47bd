/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodResizeValidator: the table of kube's podresize admission_test.go (TestResizeAdmission)
 * replayed with its two Nodes in a cluster-state file and the whole messages (kube's table checks
 * a prefix of most), then what the table leaves out: the StatusCauses, how the requests are
 * totalled (init containers, sidecars, overhead, pod-level resources, rounding), the requests it
 * skips and kube's errors for what is not a pod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_pod_resize_validator;

#define PLUGIN (&adm_plugin_pod_resize_validator)

/* kube's linuxNode and windowsNode, plus Nodes for the cases the table leaves out. */
static const char nodes_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: linux-node\n  labels: {kubernetes.io/os: linux}\n"
    "status:\n  allocatable: {cpu: '4', memory: 8Gi}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: windows-node\n  labels: {kubernetes.io/os: "
    "windows}\n"
    "status:\n  allocatable: {cpu: '4', memory: 8Gi}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: unlabelled-node\n"
    "status:\n  allocatable: {cpu: '4', memory: 8Gi}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: bare-node\n  labels: {kubernetes.io/os: linux}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: small-windows-node\n"
    "  labels: {kubernetes.io/os: windows}\nstatus:\n  allocatable: {cpu: 100m, memory: 1Mi}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: odd-node\n  labels: {kubernetes.io/os: linux}\n"
    "status:\n  allocatable: {cpu: 1500u, memory: 1500m}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: broken-node\n  labels: {kubernetes.io/os: linux}\n"
    "status:\n  allocatable: {cpu: lots}\n";

static adm_cluster_state_t *nodes;

static int setup(void **state)
{
    int rc = pt_group_setup(state);

    nodes = pt_load_cluster(nodes_yaml);
    pt_set_cluster(nodes);
    return rc;
}

static int teardown(void **state)
{
    int rc = pt_group_teardown(state);

    adm_cluster_state_free(nodes);
    return rc;
}

/* kube's testPod with spec (after nodeName) and generation as given. */
static const char *pod(long generation, const char *node_name, const char *spec)
{
    return adm_arena_printf(
        pt_arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"test-pod\","
        "\"namespace\":\"default\",\"generation\":%ld},\"spec\":{\"nodeName\":\"%s\"%s%s}}",
        generation, node_name, spec[0] != '\0' ? "," : "", spec);
}

/* One container "main" requesting cpu and memory. */
static const char *main_container(const char *cpu, const char *memory)
{
    return adm_arena_printf(pt_arena,
                            "\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":"
                            "{\"cpu\":\"%s\",\"memory\":\"%s\"}}}]",
                            cpu, memory);
}

static pt_result_t resize(const char *sub_resource, const char *old_pod, const char *new_pod)
{
    pt_request_t r = pt_core_request("UPDATE", "pods", "Pod", "default", new_pod, old_pod);

    r.name = "test-pod";
    r.sub_resource = sub_resource;
    return pt_run(pt_arena, PLUGIN, NULL, 'v', &r);
}

/* A 403 from admission.NewForbidden on pod test-pod, with causes (a JSON array) or none (NULL). */
static void expect_forbidden(pt_result_t res, const char *message, const char *causes)
{
    const char *details = causes != NULL ? adm_arena_printf(pt_arena,
                                                            "{\"name\":\"test-pod\",\"kind\":\"pods\","
                                                            "\"causes\":%s}",
                                                            causes)
                                         : "{\"name\":\"test-pod\",\"kind\":\"pods\"}";

    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 403);
    assert_string_equal(res.status.reason, "Forbidden");
    assert_string_equal(res.status.message,
                        adm_arena_printf(pt_arena, "pods \"test-pod\" is forbidden: %s", message));
    assert_json_equal(adm_json_text(pt_arena, res.status.details), details);
}

#define CAPACITY "[{\"reason\":\"NodeCapacity\"}]"
#define PLATFORM "[{\"reason\":\"UnsupportedPlatform\"}]"

typedef struct row_s {
    const char *name;
    const char *sub_resource;
    const char *node; /* the pods' spec.nodeName, old and new */
    long generation;  /* the new pod's (the old one's is 1) */
    const char *cpu, *memory;
    const char *message; /* NULL: admitted */
    const char *causes;  /* NULL: none */
} row_t;

static const row_t table[] = {
    {"Successful cpu resize on Linux node", "resize", "linux-node", 2, "2", "1Gi", NULL, NULL},
    {"Successful memory resize on Linux node", "resize", "linux-node", 2, "1", "2Gi", NULL, NULL},
    {"Skip validation if not resize subresource", "", "linux-node", 2, "10", "1Gi", NULL, NULL},
    {"Skip validation if generation is unchanged", "", "linux-node", 1, "10", "1Gi", NULL, NULL},
    {"Skip validation if pod not bound to a node", "resize", "", 2, "10", "1Gi", NULL, NULL},
    {"Reject resize exceeding CPU allocatable", "resize", "linux-node", 2, "10", "1Gi",
     "Node didn't have enough allocatable resources: cpu, requested: 10000, allocatable: 4000", CAPACITY},
    {"Reject resize exceeding memory allocatable", "resize", "linux-node", 2, "1", "10Gi",
     "Node didn't have enough allocatable resources: memory, requested: 10737418240, allocatable: 8589934592",
     CAPACITY},
    {"Reject resize exceeding both CPU and memory allocatable", "resize", "linux-node", 2, "10", "10Gi",
     "Node didn't have enough allocatable resources: cpu, requested: 10000, allocatable: 4000; memory, "
     "requested: 10737418240, allocatable: 8589934592",
     CAPACITY},
    {"Reject resize on non-Linux node", "resize", "windows-node", 2, "2", "1Gi",
     "pod resize is only supported on linux nodes, node \"windows-node\" is \"windows\"", PLATFORM},
    {"Reject if node not found", "resize", "missing-node", 2, "1", "1Gi", "node \"missing-node\" not found",
     NULL},
    /* kube's "generation is unchanged" row sends no subresource; on pods/resize itself too */
    {"Skip validation if generation is unchanged (resize)", "resize", "linux-node", 1, "10", "1Gi", NULL,
     NULL},
    {"a generation going back is a change too", "resize", "linux-node", 0, "10", "1Gi",
     "Node didn't have enough allocatable resources: cpu, requested: 10000, allocatable: 4000", CAPACITY},
    {"a Node without the os label is not linux", "resize", "unlabelled-node", 2, "1", "1Gi",
     "pod resize is only supported on linux nodes, node \"unlabelled-node\" is \"\"", PLATFORM},
    {"a Node without allocatable fits nothing", "resize", "bare-node", 2, "1m", "1",
     "Node didn't have enough allocatable resources: cpu, requested: 1, allocatable: 0; memory, requested: "
     "1, "
     "allocatable: 0",
     CAPACITY},
    {"capacity is checked before the platform", "resize", "small-windows-node", 2, "200m", "1Mi",
     "Node didn't have enough allocatable resources: cpu, requested: 200, allocatable: 100", CAPACITY},
    /* MilliValue and Value round up: 1500u is 2m, 1500m bytes is 2 */
    {"allocatable rounds up", "resize", "odd-node", 2, "2m", "2", NULL, NULL},
    {"requests round up", "resize", "odd-node", 2, "2001u", "2",
     "Node didn't have enough allocatable resources: cpu, requested: 3, allocatable: 2", CAPACITY},
    {"a Node whose allocatable kube cannot decode is not in its cache", "resize", "broken-node", 2, "1", "1",
     "node \"broken-node\" not found", NULL},
};

static void test_table(void **state)
{
    (void)state;
    /* kube's admission.NewHandler(admission.Update): the chain never calls it for another operation */
    assert_int_equal(PLUGIN->operations, ADM_OPS_UPDATE);
    assert_null(PLUGIN->admit);
    assert_non_null(PLUGIN->validate);
    assert_string_equal(PLUGIN->reads[0], "/Node");
    assert_null(PLUGIN->reads[1]);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const row_t *t = &table[i];
        pt_result_t res;

        print_message("%s\n", t->name);
        res = resize(t->sub_resource, pod(1, t->node, main_container("1", "1Gi")),
                     pod(t->generation, t->node, main_container(t->cpu, t->memory)));
        if (t->message == NULL) {
            assert_int_equal(res.rc, ADM_OK);
        } else {
            expect_forbidden(res, t->message, t->causes);
        }
    }
}

/* The pod's cpu and memory requests as GetResourceRequest totals them, against linux-node (4, 8Gi). */
typedef struct total_s {
    const char *name;
    const char *spec;    /* after nodeName */
    const char *message; /* NULL: fits */
} total_t;

#define REQ(name, cpu, mem)                                                                                  \
    "{\"name\":\"" name "\",\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"
#define SIDECAR(name, cpu, mem)                                                                              \
    "{\"name\":\"" name "\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"" cpu        \
    "\",\"memory\":\"" mem "\"}}}"
#define NO_ROOM "Node didn't have enough allocatable resources: "

static const total_t totals[] = {
    {"containers add up", "\"containers\":[" REQ("a", "2", "4Gi") "," REQ("b", "2", "4Gi") "]", NULL},
    {"containers add up past the Node",
     "\"containers\":[" REQ("a", "2", "4Gi") "," REQ("b", "2001m", "4Gi") "]",
     NO_ROOM "cpu, requested: 4001, allocatable: 4000"},
    {"an init container counts alone, the larger wins",
     "\"initContainers\":[" REQ("i", "5", "1Gi") "],\"containers\":[" REQ("a", "1", "1Gi") "]",
     NO_ROOM "cpu, requested: 5000, allocatable: 4000"},
    {"a smaller init container changes nothing",
     "\"initContainers\":[" REQ("i", "3", "1Gi") "],\"containers\":[" REQ("a", "4", "8Gi") "]", NULL},
    {"a sidecar runs with the containers",
     "\"initContainers\":[" SIDECAR("s", "1", "1Gi") "],\"containers\":[" REQ("a", "3500m", "1Gi") "]",
     NO_ROOM "cpu, requested: 4500, allocatable: 4000"},
    {"an init container after a sidecar runs with it",
     "\"initContainers\":[" SIDECAR("s", "1", "5Gi") "," REQ("i", "1", "4Gi") "],\"containers\":[" REQ(
         "a", "1", "1Gi") "]",
     NO_ROOM "memory, requested: 9663676416, allocatable: 8589934592"},
    {"overhead is added", "\"containers\":[" REQ("a", "3900m", "1Gi") "],\"overhead\":{\"cpu\":\"200m\"}",
     NO_ROOM "cpu, requested: 4100, allocatable: 4000"},
    {"overhead is not added to a zero total",
     "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
     "\"overhead\":{\"cpu\":\"5\",\"memory\":\"8Gi\"}",
     NO_ROOM "memory, requested: 9663676416, allocatable: 8589934592"},
    {"pod-level requests replace the containers'",
     "\"resources\":{\"requests\":{\"cpu\":\"5\"}},\"containers\":[" REQ("a", "1", "100Gi") "]",
     NO_ROOM "cpu, requested: 5000, allocatable: 4000"},
    {"pod-level limits alone: the containers do not count",
     "\"resources\":{\"limits\":{\"memory\":\"1Gi\"}},\"containers\":[" REQ("a", "10", "100Gi") "]", NULL},
    {"pod-level hugepages alone: the containers do not count",
     "\"resources\":{\"limits\":{\"hugepages-2Mi\":\"2Mi\"}},\"containers\":[" REQ("a", "10", "100Gi") "]",
     NULL},
    {"other pod-level names leave the containers counted",
     "\"resources\":{\"requests\":{\"example.com/gpu\":\"1\"}},\"containers\":[" REQ("a", "10", "1Gi") "]",
     NO_ROOM "cpu, requested: 10000, allocatable: 4000"},
    {"pod-level requests with overhead",
     "\"resources\":{\"requests\":{\"memory\":\"8Gi\"}},\"overhead\":{\"memory\":\"1\"}",
     NO_ROOM "memory, requested: 8589934593, allocatable: 8589934592"},
    {"no requests at all", "\"containers\":[{\"name\":\"a\"}]", NULL},
    {"a bare-number quantity is read as its text",
     "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":5}}}]",
     NO_ROOM "cpu, requested: 5000, allocatable: 4000"},
};

static void test_totals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
        const total_t *t = &totals[i];
        pt_result_t res;

        print_message("%s\n", t->name);
        res = resize("resize", pod(1, "linux-node", ""), pod(2, "linux-node", t->spec));
        if (t->message == NULL) {
            assert_int_equal(res.rc, ADM_OK);
        } else {
            expect_forbidden(res, t->message, CAPACITY);
        }
    }
}

static void test_skipped_requests(void **state)
{
    const char *big = pod(2, "linux-node", main_container("10", "1Gi"));
    const char *old = pod(1, "linux-node", main_container("1", "1Gi"));
    pt_request_t other_group = pt_core_request("UPDATE", "pods", "Pod", "default", big, old);
    pt_request_t other_sub = pt_core_request("UPDATE", "pods", "Pod", "default", big, old);
    pt_request_t nodes_req = pt_core_request("UPDATE", "nodes", "Node", "", "{}", "{}");

    (void)state;
    other_group.group = "metrics.k8s.io";
    other_group.sub_resource = "resize";
    assert_int_equal(pt_run(pt_arena, PLUGIN, NULL, 'v', &other_group).rc, ADM_OK);
    other_sub.sub_resource = "status";
    assert_int_equal(pt_run(pt_arena, PLUGIN, NULL, 'v', &other_sub).rc, ADM_OK);
    nodes_req.sub_resource = "resize";
    assert_int_equal(pt_run(pt_arena, PLUGIN, NULL, 'v', &nodes_req).rc, ADM_OK);
    /* the same pod bound nowhere: no old pod needed either */
    assert_int_equal(resize("resize", NULL, pod(2, "", main_container("10", "1Gi"))).rc, ADM_OK);
}

/* apierrors.NewBadRequest with Go's %T of what came instead of a pod. */
static void expect_bad_request(pt_result_t res, const char *message)
{
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 400);
    assert_string_equal(res.status.reason, "BadRequest");
    assert_string_equal(res.status.message, message);
}

static void test_not_a_pod(void **state)
{
    pt_request_t r = pt_core_request("UPDATE", "pods", "Binding", "default", "{}", "{}");

    (void)state;
    r.sub_resource = "resize";
    expect_bad_request(pt_run(pt_arena, PLUGIN, NULL, 'v', &r), "expected a pod but got a *core.Binding");
    r.kind = "Pod";
    r.object = NULL;
    expect_bad_request(pt_run(pt_arena, PLUGIN, NULL, 'v', &r), "expected a pod but got a <nil>");
    /* the old pod is looked at only for a bound pod */
    expect_bad_request(resize("resize", NULL, pod(2, "linux-node", "")),
                       "expected an old pod but got a <nil>");
    /* a quantity kube-apiserver could not have decoded */
    expect_bad_request(
        resize("resize", pod(1, "linux-node", ""), pod(2, "linux-node", main_container("1", "1x"))),
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_skipped_requests),
        cmocka_unit_test(test_not_a_pod),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

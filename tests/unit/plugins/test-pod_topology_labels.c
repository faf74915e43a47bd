/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTopologyLabels: the table of kube's podtopologylabels admission_test.go replayed with the
 * Node in a cluster-state file, each case through its three ways in (a pods/binding CREATE, a pod
 * CREATE with spec.nodeName, a pod UPDATE, which the plugin does not handle), with the label keys
 * of 1.34+ (topology.kubernetes.io/); then what the table leaves out: the Node missing, a Binding
 * to something else, the reinvocation round that finds the labels in place, the requests it skips
 * and kube's errors for an object of the wrong kind.
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
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_pod_topology_labels;

#define PLUGIN (&adm_plugin_pod_topology_labels)
#define ZONE "topology.kubernetes.io/zone"
#define REGION "topology.kubernetes.io/region"

/* One row of kube's table: the Node's labels, the object's labels before, what they must be after. */
typedef struct row_s {
    const char *name;
    const char *node_labels; /* YAML flow map */
    const char *existing;    /* JSON object, or NULL: the object has no labels */
    const char *expected;    /* JSON object; "{}" also stands for no labels (kube's Semantic.DeepEqual) */
} row_t;

static const row_t table[] = {
    {"copies the zone and region labels to binding labels",
     "{" ZONE ": zone1, " REGION ": region1, topology.kubernetes.io/arbitrary: something, "
     "non-topology.kubernetes.io/label: something}",
     NULL, "{\"" ZONE "\":\"zone1\",\"" REGION "\":\"region1\"}"},
    {"does not copy arbitrary topology labels",
     "{" ZONE ": zone1, topology.kubernetes.io/arbitrary: something}", NULL, "{\"" ZONE "\":\"zone1\"}"},
    {"does not copy topology labels that use a subdomain",
     "{" REGION ": region1, sub.topology.kubernetes.io/zone: value}", NULL, "{\"" REGION "\":\"region1\"}"},
    {"does not copy label keys that don't contain a / character", "{topology.kubernetes.io: value}", "{}",
     "{}"},
    {"overwrites existing topology labels", "{" ZONE ": newValue}", "{\"" ZONE "\":\"oldValue\"}",
     "{\"" ZONE "\":\"newValue\"}"},
    /* 1.33's keys are not copied any more (kubernetes/kubernetes#132462) */
    {"does not copy the topology.k8s.io labels of 1.33",
     "{topology.k8s.io/zone: zone1, topology.k8s.io/region: r}", NULL, "{}"},
    {"keeps the object's other labels", "{" ZONE ": z}", "{\"app\":\"web\"}",
     "{\"app\":\"web\",\"" ZONE "\":\"z\"}"},
    {"labels: null is a nil map, made", "{" REGION ": r}", "null", "{\"" REGION "\":\"r\"}"},
};

static adm_cluster_state_t *node_state(const char *labels)
{
    char *text = adm_arena_printf(pt_arena,
                                  "apiVersion: v1\nkind: Node\nmetadata:\n  name: valid-test-node\n"
                                  "  labels: %s\n",
                                  labels);

    assert_non_null(text);
    return pt_load_cluster(text);
}

/* The labels of the object a hook left, as JSON ("{}" when it has none). */
static const char *labels_of(const char *object)
{
    yyjson_doc *doc = yyjson_read(object, strlen(object), 0);
    yyjson_val *labels;
    char *text;
    const char *out = "{}";

    assert_non_null(doc);
    labels = yyjson_ptr_get(yyjson_doc_get_root(doc), "/metadata/labels");
    if (labels != NULL && !yyjson_is_null(labels)) {
        text = yyjson_val_write(labels, 0, NULL);
        assert_non_null(text);
        out = adm_arena_strndup(pt_arena, text, strlen(text));
        free(text);
    }
    yyjson_doc_free(doc);
    return out;
}

static const char *meta(const char *labels)
{
    return labels != NULL ? adm_arena_printf(pt_arena,
                                             "\"metadata\":{\"name\":\"testPod\",\"namespace\":\"test-ns\","
                                             "\"labels\":%s}",
                                             labels)
                          : "\"metadata\":{\"name\":\"testPod\",\"namespace\":\"test-ns\"}";
}

static pt_result_t binding(const char *labels, const char *target)
{
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .sub_resource = "binding",
                      .kind = "Binding",
                      .namespace_ = "test-ns",
                      .name = "testPod"};

    r.object = adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",%s,\"target\":%s}",
                                meta(labels), target);
    return pt_run(pt_arena, PLUGIN, NULL, 'm', &r);
}

static pt_result_t pod(const char *operation, const char *labels, const char *node_name)
{
    pt_request_t r = {.operation = operation,
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "test-ns",
                      .name = "testPod"};

    r.object = adm_arena_printf(
        pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",%s,\"spec\":{%s}}", meta(labels),
        node_name != NULL ? adm_arena_printf(pt_arena, "\"nodeName\":\"%s\"", node_name) : "");
    return pt_run(pt_arena, PLUGIN, NULL, 'm', &r);
}

#define NODE_TARGET "{\"kind\":\"Node\",\"name\":\"valid-test-node\"}"

static void test_table(void **state)
{
    (void)state;
    /* kube's Handler(admission.Create): the chain never calls it for an UPDATE */
    assert_int_equal(PLUGIN->operations, ADM_OPS_CREATE);
    assert_string_equal(PLUGIN->reads[0], "/Node");
    assert_null(PLUGIN->reads[1]);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const row_t *t = &table[i];
        adm_cluster_state_t *cs = node_state(t->node_labels);
        pt_result_t res;

        print_message("%s\n", t->name);
        pt_set_cluster(cs);
        res = binding(t->existing, NODE_TARGET);
        assert_int_equal(res.rc, ADM_OK);
        assert_json_equal(labels_of(res.object), t->expected);
        res = pod("CREATE", t->existing, "valid-test-node");
        assert_int_equal(res.rc, ADM_OK);
        assert_json_equal(labels_of(res.object), t->expected);
        /* the object changes exactly when the labels do */
        assert_int_equal(
            res.changed,
            !pt_json_equal(labels_of(res.object),
                           t->existing != NULL && strcmp(t->existing, "null") != 0 ? t->existing : "{}"));
        pt_set_cluster(NULL);
        adm_cluster_state_free(cs);
    }
}

static void test_no_change(void **state)
{
    adm_cluster_state_t *cs = node_state("{" ZONE ": z1, " REGION ": r1}");
    pt_result_t res;

    (void)state;
    pt_set_cluster(cs);
    /* a pod not scheduled yet, a Node the state does not hold: nothing to copy */
    res = pod("CREATE", NULL, NULL);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = pod("CREATE", NULL, "missing-node");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = binding(NULL, "{\"kind\":\"Node\",\"name\":\"missing-node\"}");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = binding(NULL, "{\"kind\":\"Node\"}");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    /* a Binding to anything but a Node (the kind alone decides, as kube) */
    res = binding(NULL, "{\"kind\":\"Pod\",\"name\":\"valid-test-node\"}");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = binding(NULL, "{\"name\":\"valid-test-node\"}");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = binding(NULL, "{\"kind\":\"Node\",\"apiVersion\":\"v9\",\"name\":\"valid-test-node\"}");
    assert_int_equal(res.rc, ADM_OK);
    assert_true(res.changed);
    /* the reinvocation round: the labels are there already, the object is not touched */
    res = pod("CREATE", "{\"" REGION "\":\"r1\",\"" ZONE "\":\"z1\"}", "valid-test-node");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = binding("{\"" REGION "\":\"r1\",\"" ZONE "\":\"z1\",\"x\":\"y\"}", NODE_TARGET);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    /* one of the two differs: both written, the other as it was */
    res = pod("CREATE", "{\"" REGION "\":\"r1\",\"" ZONE "\":\"webhook-set\"}", "valid-test-node");
    assert_true(res.changed);
    assert_json_equal(labels_of(res.object), "{\"" REGION "\":\"r1\",\"" ZONE "\":\"z1\"}");
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

static void test_skipped_requests(void **state)
{
    adm_cluster_state_t *cs = node_state("{" ZONE ": z1}");
    const char *scheduled = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"valid-test-node\"}}";
    pt_request_t status = {.operation = "CREATE",
                           .resource = "pods",
                           .sub_resource = "status",
                           .kind = "Pod",
                           .name = "p",
                           .object = scheduled};
    pt_request_t other_group = {.operation = "CREATE",
                                .group = "metrics.k8s.io",
                                .resource = "pods",
                                .kind = "Pod",
                                .object = scheduled};
    pt_request_t nodes = {.operation = "CREATE", .resource = "nodes", .kind = "Node", .object = scheduled};
    pt_request_t eviction = {.operation = "CREATE",
                             .resource = "pods",
                             .sub_resource = "eviction",
                             .kind = "Eviction",
                             .object = "{}"};
    pt_result_t res;

    (void)state;
    pt_set_cluster(cs);
    res = pt_run(pt_arena, PLUGIN, NULL, 'm', &status);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = pt_run(pt_arena, PLUGIN, NULL, 'm', &other_group);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = pt_run(pt_arena, PLUGIN, NULL, 'm', &nodes);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    res = pt_run(pt_arena, PLUGIN, NULL, 'm', &eviction);
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    /* labels or metadata that kube could not have decoded: left alone */
    res = pod("CREATE", "\"a string\"", "valid-test-node");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
}

/* kube's fmt.Errorf texts reach the API as they are: 500, no reason. */
static void expect_plain(pt_request_t *r, const char *message)
{
    pt_result_t res = pt_run(pt_arena, PLUGIN, NULL, 'm', r);

    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 500);
    assert_null(res.status.reason);
    assert_string_equal(res.status.message, message);
    assert_null(res.status.details);
}

static void test_wrong_kind(void **state)
{
    pt_request_t r = {.operation = "CREATE", .resource = "pods", .kind = "Binding", .object = "{}"};

    (void)state;
    expect_plain(&r, "expected Pod but got *core.Binding");
    r.object = NULL;
    r.kind = "Pod";
    expect_plain(&r, "expected Pod but got <nil>");
    r.object = "{}";
    r.kind = "Node";
    expect_plain(&r, "expected Pod but got *core.Node");
    /* pods of another group are not core pods */
    r.group = "metrics.k8s.io";
    r.kind = "PodMetrics";
    assert_int_equal(pt_run(pt_arena, PLUGIN, NULL, 'm', &r).rc, ADM_OK);

    r.group = NULL;
    r.sub_resource = "binding";
    r.kind = "Pod";
    expect_plain(&r, "expected Binding but got Pod");
    r.kind = "Binding";
    r.object = NULL;
    expect_plain(&r, "expected Binding but got Binding");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_no_change),
        cmocka_unit_test(test_skipped_requests),
        cmocka_unit_test(test_wrong_kind),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

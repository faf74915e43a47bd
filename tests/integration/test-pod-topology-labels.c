/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodTopologyLabels through the real admitd over HTTPS, with a Node in --cluster-state and
 * kube-apiserver's default plugin set: the scheduler's Binding (pods/binding) and a pod created
 * with spec.nodeName get the Node's topology.kubernetes.io/zone and region in a JSON Patch that,
 * applied to the object sent, gives the object kube's plugin leaves (a label already there
 * overwritten); an UPDATE, a Binding to a missing Node and v1beta1 reviews are answered too; a
 * Binding request carrying a Pod is kube's plain 500; --list-plugins says implemented, the startup
 * log no longer leaves it out, and --disable-admission-plugins turns it off.
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
#include "harness.h"
#include "plugintest.h"

static h_server_t server;
static char state_file[320]; /* the cluster state file admitd was started with */

static const char cluster[] =
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\nstatus: {phase: Active}\n"
    "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: apps}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels:\n"
    "    topology.kubernetes.io/zone: eu-west-1a\n    topology.kubernetes.io/region: eu-west-1\n"
    "    topology.k8s.io/zone: old-key\n    kubernetes.io/hostname: node-a\n";

static int setup(void **state)
{
    static const char *const files[] = {"cluster.yaml", cluster, NULL};
    static const char *const args[] = {"--cluster-state", "@cluster.yaml", "--shutdown-delay", "0s", NULL};

    (void)state;
    if (h_files_setup(&server, files, args) != 0) {
        return 1;
    }
    h_path(state_file, sizeof(state_file), server.dir, "cluster.yaml");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return h_files_teardown(&server);
}

/* object with the answer's patch applied as kube-apiserver applies a webhook's, as compact JSON. */
static const char *patched(adm_arena_t *arena, const char *object, const h_answer_t *a)
{
    yyjson_doc *in = yyjson_read(object, strlen(object), 0);
    yyjson_doc *patch = yyjson_read(a->patch, strlen(a->patch), 0);
    yyjson_mut_doc *doc = yyjson_doc_mut_copy(in, NULL);
    const char *error = NULL;
    char *text;
    const char *out;

    assert_non_null(patch);
    assert_int_equal(adm_jsonpatch_apply(doc, yyjson_doc_get_root(patch), ADM_JSONPATCH_KUBE, arena, &error),
                     0);
    text = yyjson_mut_write(doc, 0, NULL);
    out = adm_arena_strndup(arena, text, strlen(text));
    free(text);
    yyjson_mut_doc_free(doc);
    yyjson_doc_free(patch);
    yyjson_doc_free(in);
    return out;
}

static const char *binding_object(adm_arena_t *arena, const char *labels, const char *node)
{
    return adm_arena_printf(arena,
                            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web\","
                            "\"namespace\":\"apps\"%s%s},\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
                            labels != NULL ? ",\"labels\":" : "", labels != NULL ? labels : "", node);
}

static const char *binding_review(adm_arena_t *arena, const char *object)
{
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .sub_resource = "binding",
                      .kind = "Binding",
                      .namespace_ = "apps",
                      .name = "web",
                      .object = object};

    return pt_review_json(arena, &r);
}

static const char *pod_object(adm_arena_t *arena, const char *node)
{
    return adm_arena_printf(
        arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
        "\"namespace\":\"apps\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"%s\","
        "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
        node);
}

static void test_binding_gets_node_labels(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    const char *object = binding_object(arena, NULL, "node-a");
    h_answer_t a;

    (void)state;
    /* no default plugin but this one touches a Binding: the patch is its change alone */
    a = h_post_answer(&server, "/admit", binding_review(arena, object));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_non_null(a.patch);
    assert_json_equal(a.patch, "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{"
                               "\"topology.kubernetes.io/region\":\"eu-west-1\","
                               "\"topology.kubernetes.io/zone\":\"eu-west-1a\"}}]");
    assert_json_equal(patched(arena, object, &a),
                      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web\","
                      "\"namespace\":\"apps\",\"labels\":{\"topology.kubernetes.io/region\":\"eu-west-1\","
                      "\"topology.kubernetes.io/zone\":\"eu-west-1a\"}},"
                      "\"target\":{\"kind\":\"Node\",\"name\":\"node-a\"}}");
    h_answer_free(&a);

    /* a label the scheduler (or a webhook) set is overwritten with the Node's, others kept */
    object = binding_object(arena, "{\"topology.kubernetes.io/zone\":\"stale\",\"team\":\"x\"}", "node-a");
    a = h_post_answer(&server, "/mutate", binding_review(arena, object));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_non_null(a.patch);
    assert_json_equal(patched(arena, object, &a),
                      binding_object(arena,
                                     "{\"topology.kubernetes.io/zone\":\"eu-west-1a\",\"team\":\"x\","
                                     "\"topology.kubernetes.io/region\":\"eu-west-1\"}",
                                     "node-a"));
    h_answer_free(&a);

    /* a Node the cluster state does not hold: no change, no patch */
    a = h_post_answer(&server, "/admit", binding_review(arena, binding_object(arena, NULL, "node-b")));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_null(a.patch);
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_v1beta1_binding(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    const char *object = binding_object(arena, NULL, "node-a");
    const char *v1 = binding_review(arena, object);
    const char *tail = strstr(v1, "\"kind\":\"AdmissionReview\"");
    const char *beta;
    h_answer_t a;

    (void)state;
    assert_non_null(tail);
    beta = adm_arena_printf(arena, "{\"apiVersion\":\"admission.k8s.io/v1beta1\",%s", tail);
    a = h_post_answer(&server, "/mutate", beta);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_doc_get_root(a.doc), "apiVersion")),
                        "admission.k8s.io/v1beta1");
    assert_non_null(a.patch);
    assert_non_null(strstr(patched(arena, object, &a), "\"topology.kubernetes.io/zone\":\"eu-west-1a\""));
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_pod_created_on_node(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    const char *object = pod_object(arena, "node-a");
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "apps",
                      .name = "web",
                      .object = object};
    h_answer_t a;
    yyjson_doc *out;
    yyjson_val *labels;
    const char *text;

    (void)state;
    /* the whole default set runs (ServiceAccount, tolerations ... patch too): read the labels back */
    a = h_post_answer(&server, "/admit", pt_review_json(arena, &r));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_non_null(a.patch);
    assert_non_null(strstr(a.patch, "\"path\":\"/metadata/labels/topology.kubernetes.io~1zone\""));
    text = patched(arena, object, &a);
    out = yyjson_read(text, strlen(text), 0);
    labels = yyjson_ptr_get(yyjson_doc_get_root(out), "/metadata/labels");
    assert_int_equal(yyjson_obj_size(labels), 3);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(labels, "app")), "web");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(labels, "topology.kubernetes.io/zone")), "eu-west-1a");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(labels, "topology.kubernetes.io/region")), "eu-west-1");
    yyjson_doc_free(out);
    h_answer_free(&a);

    /* an UPDATE is not this plugin's (kube's handler takes CREATE only) */
    r.operation = "UPDATE";
    r.old_object = pod_object(arena, "");
    a = h_post_answer(&server, "/mutate", pt_review_json(arena, &r));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_true(a.patch == NULL || strstr(a.patch, "topology.kubernetes.io") == NULL);
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_binding_of_wrong_kind(void **state)
{
    adm_arena_t *arena = adm_arena_create(65536);
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .sub_resource = "binding",
                      .kind = "Pod",
                      .namespace_ = "apps",
                      .name = "web"};
    h_answer_t a;
    yyjson_val *st;

    (void)state;
    r.object = pod_object(arena, "node-a");
    a = h_post_answer(&server, "/admit", pt_review_json(arena, &r));
    assert_false(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    st = yyjson_obj_get(a.response, "status");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(st, "code")), 500);
    assert_null(yyjson_obj_get(st, "reason"));
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "message")), "expected Binding but got Pod");
    h_answer_free(&a);
    adm_arena_destroy(arena);
}

static void test_listed_and_disabled(void **state)
{
    const char *list[] = {"--list-plugins", NULL};
    const char *args[] = {
        "--cluster-state",   state_file, "--shutdown-delay", "0s", "--disable-admission-plugins",
        "PodTopologyLabels", NULL};
    adm_arena_t *arena = adm_arena_create(65536);
    h_server_t off;
    h_answer_t a;
    char out[8192];

    (void)state;
    assert_int_equal(h_run(list, out, sizeof(out), 10000), 0);
    assert_non_null(
        strstr(out, "PodTopologyLabels                     mutating              on       yes\n"));
    assert_int_equal(h_log_count(&server, "admission plugins, in order: "), 1);
    assert_int_equal(h_log_count(&server, "DefaultIngressClass, PodTopologyLabels, "), 1);
    assert_int_equal(h_log_count(&server, "not implemented by admitd yet: PodTopologyLabels"), 0);

    /* off, the Binding goes through unchanged (kube with the feature gate off) */
    assert_int_equal(h_start(&off, NULL, args), 0);
    a = h_post_answer(&off, "/admit", binding_review(arena, binding_object(arena, NULL, "node-a")));
    assert_true(yyjson_get_bool(yyjson_obj_get(a.response, "allowed")));
    assert_null(a.patch);
    h_answer_free(&a);
    assert_int_equal(h_stop(&off, SIGTERM, 10000), 0);
    h_cleanup(&off);
    adm_arena_destroy(arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binding_gets_node_labels), cmocka_unit_test(test_v1beta1_binding),
        cmocka_unit_test(test_pod_created_on_node),      cmocka_unit_test(test_binding_of_wrong_kind),
        cmocka_unit_test(test_listed_and_disabled),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer store: put/replace/delete keyed by namespace and name, lists per namespace and for
 * all, in arrival order, what each kind keeps (no managedFields, no kubectl last-applied copy, no
 * pod or node status), relist replacing (not merging), and the epoch rule:
 * an object or list a pinned request obtained stays readable after events replace or delete it
 * (ASan would report a use after free), and is freed once the last such pin is gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/chain.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/options.h"
#include "adm/cluster/cluster_state.h"
#include "adm/cluster/cluster_store.h"
#include "plugintest.h"

static yyjson_doc *parse(const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);

    assert_non_null(d);
    return d;
}

static void put(adm_kind_store_t *k, const char *json)
{
    yyjson_doc *d = parse(json);

    assert_int_equal(adm_kind_store_put(k, yyjson_doc_get_root(d)), 0);
    yyjson_doc_free(d);
}

static const char *label(yyjson_val *obj, const char *key)
{
    return yyjson_get_str(yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "labels"), key));
}

static void relist(adm_kind_store_t *k, const char *items)
{
    yyjson_doc *d = parse(items);
    yyjson_val *pages[1] = {yyjson_doc_get_root(d)};

    assert_int_equal(adm_kind_store_replace(k, pages, 1), 0);
    yyjson_doc_free(d);
}

static void test_namespaces(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    yyjson_val *const *list;
    yyjson_val *ns;
    size_t n;

    (void)state;
    assert_non_null(k);
    assert_false(adm_cluster_store_serves(s, "", "Namespace"));
    put(k, "{\"metadata\":{\"name\":\"early\"}}");
    assert_null(adm_cluster_store_get(s, "", "Namespace", NULL, "early")); /* not synced: not served */
    relist(k, "[{\"metadata\":{\"name\":\"a\",\"labels\":{\"env\":\"prod\"},\"managedFields\":[{\"m\":1}]}},"
              "{\"metadata\":{\"name\":\"b\"}}]");
    assert_true(adm_kind_store_synced(k));
    assert_true(adm_cluster_store_serves(s, "", "Namespace"));
    assert_null(adm_cluster_store_get(s, "", "Namespace", NULL, "early")); /* replaced, not merged */
    ns = adm_cluster_store_get(s, "", "Namespace", NULL, "a");
    assert_non_null(ns);
    assert_string_equal(label(ns, "env"), "prod");
    assert_null(yyjson_obj_get(yyjson_obj_get(ns, "metadata"), "managedFields"));
    list = adm_cluster_store_list(s, "", "Namespace", NULL, &n);
    assert_int_equal(n, 2);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_obj_get(list[0], "metadata"), "name")), "a");
    put(k, "{\"metadata\":{\"name\":\"c\"}}");
    put(k, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"env\":\"dev\"}}}");
    list = adm_cluster_store_list(s, "", "Namespace", NULL, &n);
    assert_int_equal(n, 3);
    assert_string_equal(label(list[0], "env"), "dev"); /* keeps its place */
    adm_kind_store_delete(k, NULL, "b");
    adm_kind_store_delete(k, NULL, "never-seen"); /* a relist race: ignored */
    assert_int_equal(adm_kind_store_count(k), 2);
    assert_null(adm_cluster_store_get(s, "", "Namespace", NULL, "b"));
    assert_int_equal(adm_cluster_store_retired(s), 0); /* nobody pinned: freed at once */
    assert_true(adm_kind_store_bytes(k) > 0);
    adm_cluster_store_free(s);
}

static void test_namespaced_lists(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "LimitRange", true);
    size_t n;

    (void)state;
    relist(k, "[{\"metadata\":{\"name\":\"l\",\"namespace\":\"x\"}},{\"metadata\":{\"name\":\"l\","
              "\"namespace\":\"y\"}},"
              "{\"metadata\":{\"name\":\"m\",\"namespace\":\"x\"}}]");
    assert_non_null(adm_cluster_store_list(s, "", "LimitRange", "x", &n));
    assert_int_equal(n, 2);
    assert_non_null(adm_cluster_store_list(s, "", "LimitRange", "y", &n));
    assert_int_equal(n, 1);
    assert_null(adm_cluster_store_list(s, "", "LimitRange", "z", &n));
    assert_int_equal(n, 0);
    assert_non_null(adm_cluster_store_list(s, "", "LimitRange", NULL, &n));
    assert_int_equal(n, 3);
    assert_non_null(adm_cluster_store_get(s, "", "LimitRange", "y", "l"));
    assert_null(adm_cluster_store_get(s, "", "LimitRange", "y", "m"));
    assert_null(adm_cluster_store_get(s, "apps", "LimitRange", "y", "l"));
    adm_cluster_store_free(s);
}

static void test_pins_defer_frees(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    adm_cluster_pin_t p1 = {0}, p2 = {0};
    yyjson_val *held, *held2;
    yyjson_val *const *list;
    size_t n;

    (void)state;
    relist(k, "[{\"metadata\":{\"name\":\"a\",\"labels\":{\"v\":\"1\"}}}]");
    adm_cluster_store_pin(s, &p1); /* a request starts and reads */
    held = adm_cluster_store_get(s, "", "Namespace", NULL, "a");
    list = adm_cluster_store_list(s, "", "Namespace", NULL, &n);
    put(k, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"v\":\"2\"}}}"); /* a watch event meanwhile */
    adm_cluster_store_pin(s, &p2);                                      /* a second request */
    held2 = adm_cluster_store_get(s, "", "Namespace", NULL, "a");
    adm_kind_store_delete(k, NULL, "a");
    relist(k, "[]");
    /* both still read what they obtained */
    assert_string_equal(label(held, "v"), "1");
    assert_string_equal(label(list[0], "v"), "1");
    assert_string_equal(label(held2, "v"), "2");
    assert_true(adm_cluster_store_retired(s) >= 3);
    adm_cluster_store_unpin(s, &p1);
    /* what only p1 could see is gone; p2's object stays */
    assert_string_equal(label(held2, "v"), "2");
    assert_int_equal(adm_cluster_store_retired(s), 1);
    adm_cluster_store_unpin(s, &p2);
    assert_int_equal(adm_cluster_store_retired(s), 0);
    adm_cluster_store_unpin(s, &p2); /* twice: no-op */
    adm_cluster_store_free(s);
}

static void test_unpin_out_of_order(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    adm_cluster_pin_t p1 = {0}, p2 = {0};
    yyjson_val *held;

    (void)state;
    relist(k, "[{\"metadata\":{\"name\":\"a\",\"labels\":{\"v\":\"1\"}}}]");
    adm_cluster_store_pin(s, &p1);
    held = adm_cluster_store_get(s, "", "Namespace", NULL, "a");
    adm_cluster_store_pin(s, &p2);
    put(k, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"v\":\"2\"}}}");
    adm_cluster_store_unpin(s, &p2); /* the younger request ends first: p1 still holds v1 */
    assert_int_equal(adm_cluster_store_retired(s), 1);
    assert_string_equal(label(held, "v"), "1");
    adm_cluster_store_unpin(s, &p1);
    assert_int_equal(adm_cluster_store_retired(s), 0);
    adm_cluster_store_free(s);
}

/* What each kind keeps: no managedFields and no kubectl last-applied copy anywhere; Pods and Nodes no
 * status. */
static void test_what_is_kept(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *pods = adm_cluster_store_kind(s, "", "Pod", true);
    adm_kind_store_t *nss = adm_cluster_store_kind(s, "", "Namespace", false);
    yyjson_val *pod, *ns, *ann;
    char *text;

    (void)state;
    relist(pods, "[{\"metadata\":{\"name\":\"p\",\"namespace\":\"x\",\"managedFields\":[{\"m\":1}],"
                 "\"annotations\":{\"a\":\"1\",\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\","
                 "\"b\":\"2\"}},\"spec\":{\"hostNetwork\":true},\"status\":{\"phase\":\"Running\"}}]");
    relist(nss, "[{\"metadata\":{\"name\":\"x\",\"annotations\":{"
                "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}},\"status\":{\"phase\":"
                "\"Terminating\"}}]");
    pod = adm_cluster_store_get(s, "", "Pod", "x", "p");
    text = yyjson_val_write(pod, 0, NULL);
    assert_string_equal(text, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"x\",\"annotations\":"
                              "{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"hostNetwork\":true}}");
    free(text);
    ns = adm_cluster_store_get(s, "", "Namespace", NULL, "x");
    ann = yyjson_obj_get(yyjson_obj_get(ns, "metadata"), "annotations");
    assert_true(yyjson_is_obj(ann) && yyjson_obj_size(ann) == 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_obj_get(ns, "status"), "phase")), "Terminating");
    /* an event goes the same way as a list */
    put(pods, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"x\",\"annotations\":7},\"status\":{}}");
    pod = adm_cluster_store_get(s, "", "Pod", "x", "q");
    assert_null(yyjson_obj_get(pod, "status"));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(yyjson_obj_get(pod, "metadata"), "annotations")), 7);
    /* Nodes keep their labels (PodTopologyLabels) and of their status only allocatable
     * (PodResizeValidator); a status that is not an object is kept as it came */
    relist(adm_cluster_store_kind(s, "", "Node", false),
           "[{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":\"z\"}},"
           "\"spec\":{},\"status\":{\"images\":[],\"allocatable\":{\"cpu\":\"4\"},\"capacity\":{}}},"
           "{\"metadata\":{\"name\":\"m\"},\"status\":{\"conditions\":[]}},"
           "{\"metadata\":{\"name\":\"o\"},\"status\":7}]");
    text = yyjson_val_write(adm_cluster_store_get(s, "", "Node", NULL, "n"), 0, NULL);
    assert_string_equal(text, "{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":"
                              "\"z\"}},\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}");
    free(text);
    text = yyjson_val_write(adm_cluster_store_get(s, "", "Node", NULL, "m"), 0, NULL);
    assert_string_equal(text, "{\"metadata\":{\"name\":\"m\"},\"status\":{}}");
    free(text);
    text = yyjson_val_write(adm_cluster_store_get(s, "", "Node", NULL, "o"), 0, NULL);
    assert_string_equal(text, "{\"metadata\":{\"name\":\"o\"},\"status\":7}");
    free(text);
    adm_cluster_store_free(s);
}

static void test_bad_objects(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    yyjson_doc *d = parse("{\"metadata\":{}}");
    yyjson_doc *bad = parse("[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{}}]");
    yyjson_val *pages[1] = {yyjson_doc_get_root(bad)};

    (void)state;
    assert_int_equal(adm_kind_store_put(k, yyjson_doc_get_root(d)), ADM_EINVAL);
    relist(k, "[{\"metadata\":{\"name\":\"keep\"}}]");
    assert_int_equal(adm_kind_store_replace(k, pages, 1), ADM_EINVAL);
    assert_non_null(adm_cluster_store_get(s, "", "Namespace", NULL, "keep")); /* old content stays */
    assert_ptr_equal(adm_cluster_store_kind(s, "", "Namespace", false), k);
    yyjson_doc_free(d);
    yyjson_doc_free(bad);
    adm_cluster_store_free(s);
}

static void test_many(void **state)
{
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    char json[128], name[32];
    size_t n;

    (void)state;
    relist(k, "[]");
    for (int i = 0; i < 5000; i++) {
        snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"ns-%d\"}}", i);
        put(k, json);
    }
    for (int i = 0; i < 5000; i += 2) {
        snprintf(name, sizeof(name), "ns-%d", i);
        adm_kind_store_delete(k, NULL, name);
    }
    assert_int_equal(adm_kind_store_count(k), 2500);
    assert_non_null(adm_cluster_store_get(s, "", "Namespace", NULL, "ns-4999"));
    assert_null(adm_cluster_store_get(s, "", "Namespace", NULL, "ns-4998"));
    adm_cluster_store_list(s, "", "Namespace", NULL, &n);
    assert_int_equal(n, 2500);
    adm_cluster_store_free(s);
}

/* File state and the store together: watched kinds from the store only, the rest from files. */
static void test_state_uses_store(void **state)
{
    adm_cluster_state_t *cs =
        pt_load_cluster("apiVersion: v1\nkind: Namespace\nmetadata: {name: from-file}\n---\n"
                        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                        "metadata: {name: high}\nvalue: 1000\n");
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    size_t n;

    (void)state;
    adm_cluster_state_use_store(cs, s);
    /* not listed yet: the files still answer */
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", NULL, "from-file"));
    relist(k, "[{\"metadata\":{\"name\":\"live\"}}]");
    assert_null(adm_cluster_state_get(cs, "", "Namespace", NULL, "from-file"));
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", NULL, "live"));
    assert_non_null(adm_cluster_state_list(cs, "", "Namespace", NULL, &n));
    assert_int_equal(n, 1);
    assert_non_null(adm_cluster_state_get(cs, "scheduling.k8s.io", "PriorityClass", NULL, "high"));
    assert_non_null(adm_cluster_state_list(cs, "scheduling.k8s.io", "PriorityClass", NULL, &n));
    assert_int_equal(n, 1);
    adm_cluster_state_free(cs);
    adm_cluster_store_free(s);
}

static void on_done(void *arg, adm_review_response_t *resp)
{
    *(bool *)arg = resp->allowed;
}

/* A request run by a chain holds a pin until its arena goes: what it read is freed only then. */
static void test_chain_pins_per_request(void **state)
{
    adm_options_t opts;
    adm_chain_t *c = NULL;
    adm_cluster_store_t *s = adm_cluster_store_create();
    adm_kind_store_t *k = adm_cluster_store_kind(s, "", "Namespace", false);
    adm_arena_t *a = adm_arena_create(4096);
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "a",
                      .name = "p",
                      .object = "{}"};
    adm_review_request_t *req = adm_arena_calloc(a, 1, sizeof(*req));
    const char *body = pt_review_json(a, &r), *problem;
    char err[256];
    bool allowed = false;

    (void)state;
    adm_options_defaults(&opts);
    /* ServiceAccount would deny: this store holds no ServiceAccount "default" */
    snprintf(opts.disable_plugins, sizeof(opts.disable_plugins), "ServiceAccount");
    assert_int_equal(adm_chain_create(&opts, &c, err, sizeof(err)), 0);
    adm_chain_use_cluster_store(c, s);
    relist(k, "[{\"metadata\":{\"name\":\"a\"}}]");
    assert_int_equal(adm_review_decode(a, body, strlen(body), req, &problem), 0);
    assert_non_null(adm_chain_start(c, ADM_PHASE_VALIDATING, req, a, UINT64_MAX, on_done, &allowed));
    assert_true(allowed);
    put(k, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"v\":\"2\"}}}");
    assert_int_equal(adm_cluster_store_retired(s), 1); /* the request's arena is alive */
    adm_arena_reset(a);
    assert_int_equal(adm_cluster_store_retired(s), 0);
    adm_arena_destroy(a);
    adm_chain_destroy(c);
    adm_cluster_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespaces),       cmocka_unit_test(test_namespaced_lists),
        cmocka_unit_test(test_pins_defer_frees), cmocka_unit_test(test_unpin_out_of_order),
        cmocka_unit_test(test_bad_objects),      cmocka_unit_test(test_many),
        cmocka_unit_test(test_state_uses_store), cmocka_unit_test(test_chain_pins_per_request),
        cmocka_unit_test(test_what_is_kept),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceLifecycle, NamespaceExists and NamespaceAutoProvision: the tables of kube's
 * lifecycle/admission_test.go replayed with the namespaces in cluster-state files (the lister) and
 * a fake live reader counting its GETs (the storage), with kube's exact Statuses.
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
#include "adm/plugins/namespace_lifecycle.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_namespace_lifecycle;
extern const adm_plugin_t adm_plugin_namespace_exists;
extern const adm_plugin_t adm_plugin_namespace_auto_provision;

static adm_arena_t *arena;
static uint64_t clock_ms;

static uint64_t hand_ms(void *arg)
{
    return *(uint64_t *)arg;
}

static uint64_t hand_ns(void *arg)
{
    return *(uint64_t *)arg * 1000000u;
}

static int setup(void **state)
{
    static const adm_clock_t hand = {hand_ms, hand_ns, &clock_ms};

    (void)state;
    clock_ms = 1000;
    pt_set_clock(&hand);
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_clock(NULL);
    pt_set_cluster(NULL);
    adm_arena_destroy(arena);
    return 0;
}

#define POD                                                                                                  \
    "{\"metadata\":{\"name\":\"123\",\"namespace\":\"test\"},\"spec\":{\"volumes\":[{\"name\":\"vol\"}],"    \
    "\"containers\":[{\"name\":\"ctr\",\"image\":\"image\"}]}}"

static pt_result_t pod(void *st, const char *op, const char *ns)
{
    pt_request_t r = {.operation = op,
                      .group = "",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = ns,
                      .name = "123",
                      .object = strcmp(op, "DELETE") == 0 ? NULL : POD};

    return pt_run(arena, &adm_plugin_namespace_lifecycle, st, 'm', &r);
}

static pt_result_t ns_delete(void *st, const char *name)
{
    pt_request_t r = {
        .operation = "DELETE", .group = "", .resource = "namespaces", .kind = "Namespace", .name = name};

    return pt_run(arena, &adm_plugin_namespace_lifecycle, st, 'm', &r);
}

static void *configured(const adm_plugin_t *p)
{
    void *st = NULL;
    char err[256];

    assert_int_equal(pt_configure(p, NULL, NULL, &st, err, sizeof(err)), 0);
    return st;
}

static adm_cluster_state_t *cluster_with(const char *phase)
{
    char text[256];

    if (phase == NULL) {
        return pt_load_cluster(
            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"other\"}}");
    }
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"test\"},"
             "\"status\":{\"phase\":\"%s\"}}",
             phase);
    return pt_load_cluster(text);
}

/* A storage that knows namespace "test" in live_phase (NULL: not found), counting GETs. */
static const char *live_phase;
static int live_gets;

static adm_live_result_t fake_get(void *arg, adm_attrs_t *attrs, const char *group, const char *kind,
                                  const char *namespace_, const char *name, yyjson_val **obj,
                                  const char **err)
{
    yyjson_doc *doc;
    const char *text;

    (void)arg;
    (void)group;
    (void)kind;
    (void)namespace_;
    live_gets++;
    *err = NULL;
    if (live_phase == NULL) {
        return ADM_LIVE_NOT_FOUND;
    }
    if (strcmp(live_phase, "error") == 0) {
        *err = "nope, out of luck";
        return ADM_LIVE_ERROR;
    }
    text = adm_arena_printf(attrs->arena, "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"phase\":\"%s\"}}",
                            name, live_phase);
    doc = yyjson_read(text, strlen(text), 0);
    assert_non_null(doc);
    adm_arena_on_free(attrs->arena, (adm_arena_cleanup_cb)yyjson_doc_free, doc);
    *obj = yyjson_doc_get_root(doc);
    return ADM_LIVE_FOUND;
}

static const adm_live_reader_t fake = {fake_get, NULL};

/* TestAdmissionNamespaceDoesNotExist and TestAdmissionNamespaceFullyDeleted. */
static void test_does_not_exist(void **state)
{
    adm_cluster_state_t *cs = cluster_with(NULL);
    void *st = configured(&adm_plugin_namespace_lifecycle);
    pt_result_t r;

    (void)state;
    pt_set_cluster(cs);
    r = pod(st, "CREATE", "test");
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 404);
    assert_string_equal(r.status.reason, "NotFound");
    assert_string_equal(r.status.message, "namespaces \"test\" not found");
    assert_json_equal(adm_json_text(arena, r.status.details), "{\"name\":\"test\",\"kind\":\"namespaces\"}");
    assert_int_equal(pod(st, "UPDATE", "test").rc, ADM_OK);
    assert_int_equal(pod(st, "DELETE", "test").rc, ADM_OK);

    /* a storage error other than NotFound is a 500 */
    adm_namespace_lifecycle_set_live_reader(st, &fake);
    live_phase = "error";
    r = pod(st, "CREATE", "test");
    assert_int_equal(r.status.code, 500);
    assert_string_equal(r.status.message, "Internal error occurred: nope, out of luck");
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

/* TestAccessReviewCheckOnMissingNamespace */
static void test_access_review(void **state)
{
    adm_cluster_state_t *cs = cluster_with(NULL);
    void *st = configured(&adm_plugin_namespace_lifecycle);
    pt_request_t r = {.operation = "CREATE",
                      .group = "authorization.k8s.io",
                      .resource = "localsubjectaccessreviews",
                      .kind = "LocalSubjectAccessReview",
                      .namespace_ = "test",
                      .object = "{}"};

    (void)state;
    pt_set_cluster(cs);
    assert_int_equal(pt_run(arena, &adm_plugin_namespace_lifecycle, st, 'm', &r).rc, ADM_OK);
    r.resource = "subjectaccessreviews";
    assert_int_equal(pt_run(arena, &adm_plugin_namespace_lifecycle, st, 'm', &r).status.code, 404);
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

/* TestAdmissionNamespaceActive; a cluster-scoped object never needs a namespace. */
static void test_active(void **state)
{
    adm_cluster_state_t *cs = cluster_with("Active");
    void *st = configured(&adm_plugin_namespace_lifecycle);
    pt_request_t node = {
        .operation = "CREATE", .resource = "nodes", .kind = "Node", .name = "n", .object = "{}"};

    (void)state;
    pt_set_cluster(cs);
    assert_int_equal(pod(st, "CREATE", "test").rc, ADM_OK);
    assert_int_equal(pt_run(arena, &adm_plugin_namespace_lifecycle, st, 'm', &node).rc, ADM_OK);
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

/* TestAdmissionNamespaceTerminating */
static void test_terminating(void **state)
{
    adm_cluster_state_t *cs = cluster_with("Terminating");
    void *st = configured(&adm_plugin_namespace_lifecycle);
    pt_result_t r;

    (void)state;
    pt_set_cluster(cs);
    r = pod(st, "CREATE", "test");
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.reason, "Forbidden");
    assert_string_equal(r.status.message,
                        "pods \"123\" is forbidden: unable to create new content in namespace "
                        "test because it is being terminated");
    assert_json_equal(
        adm_json_text(arena, r.status.details),
        "{\"name\":\"123\",\"kind\":\"pods\",\"causes\":[{\"reason\":\"NamespaceTerminating\","
        "\"message\":\"namespace test is being terminated\",\"field\":\"metadata.namespace\"}]}");
    assert_int_equal(pod(st, "UPDATE", "test").rc, ADM_OK);
    assert_int_equal(pod(st, "DELETE", "test").rc, ADM_OK);

    r = ns_delete(st, "default");
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message,
                        "namespaces \"default\" is forbidden: this namespace may not be deleted");
    assert_json_equal(adm_json_text(arena, r.status.details),
                      "{\"name\":\"default\",\"kind\":\"namespaces\"}");
    assert_int_equal(ns_delete(st, "kube-system").status.code, 403);
    assert_int_equal(ns_delete(st, "kube-public").status.code, 403);
    assert_int_equal(ns_delete(st, "kube-node-lease").rc, ADM_OK);
    assert_int_equal(ns_delete(st, "other").rc, ADM_OK);
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

/* TestAdmissionNamespaceForceLiveLookup: the cache says Active, the storage says Terminating. */
static void test_force_live_lookup(void **state)
{
    adm_cluster_state_t *cs = cluster_with("Active");
    void *st = configured(&adm_plugin_namespace_lifecycle);

    (void)state;
    pt_set_cluster(cs);
    adm_namespace_lifecycle_set_live_reader(st, &fake);
    live_phase = "Active";
    live_gets = 0;
    assert_int_equal(pod(st, "CREATE", "test").rc, ADM_OK);
    assert_int_equal(live_gets, 0);
    assert_int_equal(ns_delete(st, "test").rc, ADM_OK);
    assert_int_equal(live_gets, 0);

    live_phase = "Terminating";
    assert_int_equal(pod(st, "CREATE", "test").status.code, 403);
    assert_int_equal(live_gets, 1);
    clock_ms += 30000; /* forceLiveLookupTTL: still forced */
    assert_int_equal(pod(st, "CREATE", "test").status.code, 403);
    assert_int_equal(live_gets, 2);
    clock_ms += 1; /* expired: the cache is believed again */
    assert_int_equal(pod(st, "CREATE", "test").rc, ADM_OK);
    assert_int_equal(live_gets, 2);
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

/* The forced-lookup cache keeps 100 names, the least recently used going first. */
static void test_force_cache_bound(void **state)
{
    adm_cluster_state_t *cs = cluster_with("Active");
    void *st = configured(&adm_plugin_namespace_lifecycle);
    char name[32];

    (void)state;
    pt_set_cluster(cs);
    adm_namespace_lifecycle_set_live_reader(st, &fake);
    live_phase = "Terminating";
    assert_int_equal(ns_delete(st, "test").rc, ADM_OK);
    for (int i = 0; i < 99; i++) {
        snprintf(name, sizeof(name), "ns-%d", i);
        assert_int_equal(ns_delete(st, name).rc, ADM_OK);
    }
    assert_int_equal(pod(st, "CREATE", "test").status.code, 403); /* still there; now the most recent */
    assert_int_equal(ns_delete(st, "ns-100").rc, ADM_OK);         /* evicts ns-0, not test */
    assert_int_equal(pod(st, "CREATE", "test").status.code, 403);
    for (int i = 101; i < 201; i++) {
        snprintf(name, sizeof(name), "ns-%d", i);
        assert_int_equal(ns_delete(st, name).rc, ADM_OK);
    }
    assert_int_equal(pod(st, "CREATE", "test").rc, ADM_OK); /* evicted */
    adm_plugin_namespace_lifecycle.free_state(st);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

static pt_result_t exists_run(const char *op, const char *ns, const char *kind)
{
    pt_request_t r = {.operation = op,
                      .resource = strcmp(kind, "Pod") == 0 ? "pods" : "namespaces",
                      .kind = kind,
                      .namespace_ = ns,
                      .name = "x",
                      .object = "{}"};

    return pt_run(arena, &adm_plugin_namespace_exists, NULL, 'v', &r);
}

static void test_exists(void **state)
{
    adm_cluster_state_t *cs = cluster_with("Terminating");
    pt_result_t r;

    (void)state;
    pt_set_cluster(cs);
    assert_int_equal(exists_run("CREATE", "test", "Pod").rc, ADM_OK); /* Terminating does not matter */
    assert_int_equal(exists_run("CREATE", "", "Namespace").rc, ADM_OK);
    r = exists_run("UPDATE", "missing", "Pod");
    assert_int_equal(r.status.code, 404);
    assert_string_equal(r.status.message, "namespaces \"missing\" not found");
    assert_int_equal(exists_run("DELETE", "missing", "Pod").status.code, 404);
    adm_cluster_state_free(cs);
    pt_set_cluster(NULL);
}

static void test_auto_provision_refused(void **state)
{
    void *st = NULL;
    char err[256];

    (void)state;
    assert_int_equal(pt_configure(&adm_plugin_namespace_auto_provision, NULL, NULL, &st, err, sizeof(err)),
                     ADM_EINVAL);
    assert_non_null(strstr(err, "NamespaceAutoProvision creates namespaces through the API server"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_does_not_exist),
        cmocka_unit_test(test_access_review),
        cmocka_unit_test(test_active),
        cmocka_unit_test(test_terminating),
        cmocka_unit_test(test_force_live_lookup),
        cmocka_unit_test(test_force_cache_bound),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_auto_provision_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

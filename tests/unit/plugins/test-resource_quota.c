/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota with quotas from cluster state: the cases of kube's resourcequota admission_test.go
 * with the exact messages, and for the ones that check the usage kube writes into status.used, that
 * usage as the check adds it to the quotas a batch holds (src/plugins/resource_quota.c is included
 * to reach the check); plus the evaluators' details: PVC storage classes, services' node ports,
 * object counts, hugepages and extended resources, scopes and scope selectors, status unknown,
 * negative usage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../../src/plugins/resource_quota.c"
#include "adm/base/error.h"
#include "plugintest.h"

static adm_cluster_state_t *cluster;

/*
 * The plugin as admitd configures it without an API connection: its quotas parsed once into its
 * parsed cache with what a check needs prepared (the tracked names of each evaluator, the scopes),
 * and reused by the next request. run_full checks each request through it too (twice: parsed,
 * then from the cache) against the plugin without a state, which reads its quotas itself.
 */
static void *cached;

/* After each test (pt_group_setup before it): pt_group_teardown, and the test's cluster state freed. */
static int teardown(void **state)
{
    int rc = pt_group_teardown(state);

    adm_cluster_state_free(cluster);
    cluster = NULL;
    adm_plugin_resource_quota.free_state(cached);
    cached = NULL;
    return rc;
}

/* A ResourceQuota NAME in namespace test: spec (JSON object body, may be ""), status.hard and .used. */
static const char *quota(const char *name, const char *spec, const char *hard, const char *used)
{
    return adm_arena_printf(pt_arena,
                            "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"%s\","
                            "\"namespace\":\"test\",\"resourceVersion\":\"124\"},\"spec\":{%s},"
                            "\"status\":{\"hard\":%s,\"used\":%s}}",
                            name, spec, hard, used);
}

/* Makes docs the cluster state of the following runs. */
static void state(const char *docs)
{
    adm_cluster_state_t *cs = pt_load_cluster(docs);

    pt_set_cluster(cs);
    adm_cluster_state_free(cluster);
    cluster = cs;
}

/* kube's validPod: n containers with the same resources; extra spec fields (JSON, may be ""). */
static const char *pod(const char *name, int n, const char *resources, const char *extra)
{
    char *containers = "";

    for (int i = 0; i < n; i++) {
        containers =
            adm_arena_printf(pt_arena, "%s%s{\"name\":\"c%d\",\"image\":\"foo:V%d\",\"resources\":%s}",
                             containers, i > 0 ? "," : "", i, i, resources);
    }
    return adm_arena_printf(pt_arena,
                            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                            "\"namespace\":\"test\"},\"spec\":{\"containers\":[%s]%s}}",
                            name, containers, extra);
}

static pt_result_t run_full(const char *op, const char *resource, const char *sub, const char *kind,
                            const char *group, const char *obj, const char *old)
{
    pt_request_t r = pt_core_request(op, resource, kind, "test", obj, old);

    pt_result_t plain, kept;
    char err[256];

    r.group = group;
    r.sub_resource = sub;
    plain = pt_run(pt_arena, &adm_plugin_resource_quota, NULL, 'v', &r);
    if (cached == NULL) {
        assert_int_equal(pt_configure(&adm_plugin_resource_quota, NULL, NULL, &cached, err, sizeof(err)), 0);
    }
    for (int i = 0; i < 2; i++) {
        kept = pt_run(pt_arena, &adm_plugin_resource_quota, cached, 'v', &r);
        assert_int_equal(kept.rc, plain.rc);
        assert_int_equal(kept.status.code, plain.status.code);
        assert_string_equal(kept.status.message != NULL ? kept.status.message : "",
                            plain.status.message != NULL ? plain.status.message : "");
    }
    return plain;
}

static pt_result_t run(const char *op, const char *resource, const char *kind, const char *obj,
                       const char *old)
{
    return run_full(op, resource, NULL, kind, "", obj, old);
}

static void expect_ok(pt_result_t res)
{
    if (res.rc != ADM_OK) {
        fail_msg("unexpected rejection: %s", res.status.message);
    }
}

static void expect_denied(pt_result_t res, const char *message)
{
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 403);
    assert_string_equal(res.status.message, message);
}

#define RES(req, lim) "{\"requests\":" req ",\"limits\":" lim "}"
#define CM(cpu, mem) "{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}"
#define CPU(x) "{\"cpu\":\"" x "\"}"
#define NONE "{}"
#define BASIC_HARD "{\"cpu\":\"3\",\"memory\":\"100Gi\",\"pods\":\"5\"}"
#define BASIC_USED "{\"cpu\":\"1\",\"memory\":\"50Gi\",\"pods\":\"3\"}"

/* TestAdmissionIgnoresDelete, TestAdmissionIgnoresSubresources. */
static void test_ignores_delete_and_subresources(void **st)
{
    (void)st;
    state(quota("quota", "", "{\"memory\":\"2Gi\"}", "{\"memory\":\"1Gi\"}"));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("123", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL),
        "pods \"123\" is forbidden: exceeded quota: quota, requested: memory=2Gi, used: memory=1Gi, "
        "limited: memory=2Gi");
    expect_ok(run_full("CREATE", "pods", "subresource", "Pod", "",
                       pod("123", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL));
    expect_ok(run("DELETE", "pods", "Pod", NULL, pod("123", 1, RES(CM("100m", "2Gi"), NONE), "")));
}

/* TestAdmitBelowQuotaLimit, TestAdmitExceedQuotaLimit, TestAdmitPodInNamespaceWithoutQuota. */
static void test_below_and_above_limit(void **st)
{
    (void)st;
    state(quota("quota", "", BASIC_HARD, BASIC_USED));
    expect_ok(run("CREATE", "pods", "Pod", pod("allowed-pod", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("not-allowed-pod", 1, RES(CM("3", "2Gi"), NONE), ""), NULL),
        "pods \"not-allowed-pod\" is forbidden: exceeded quota: quota, requested: cpu=3, used: cpu=1, "
        "limited: cpu=3");
    /* several resources exceeded at once: sorted by name */
    expect_denied(run("CREATE", "pods", "Pod", pod("big", 2, RES(CM("1500m", "30Gi"), NONE), ""), NULL),
                  "pods \"big\" is forbidden: exceeded quota: quota, requested: cpu=3,memory=60Gi, used: "
                  "cpu=1,memory=50Gi, limited: cpu=3,memory=100Gi");
    /* a quota in another namespace does not apply */
    state("{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"quota\",\"namespace\":"
          "\"other\"},\"status\":{\"hard\":{\"cpu\":\"1\"},\"used\":{\"cpu\":\"1\"}}}");
    expect_ok(run("CREATE", "pods", "Pod", pod("allowed-pod", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL));
}

/* TestAdmitEnforceQuotaConstraints and the backward-compatibility rule's message. */
static void test_enforce_constraints(void **st)
{
    (void)st;
    state(quota("quota", "",
                "{\"cpu\":\"3\",\"memory\":\"100Gi\",\"limits.memory\":\"200Gi\",\"pods\":\"5\"}",
                "{\"cpu\":\"1\",\"memory\":\"50Gi\",\"limits.memory\":\"100Gi\",\"pods\":\"3\"}"));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("not-allowed-pod", 1, RES(CM("100m", "2Gi"), CPU("200m")), ""),
            NULL),
        "pods \"not-allowed-pod\" is forbidden: failed quota: quota: must specify limits.memory for: c0");
    expect_denied(
        run("CREATE", "pods", "Pod", pod("p", 2, RES(NONE, NONE), ""), NULL),
        "pods \"p\" is forbidden: failed quota: quota: must specify cpu for: c0,c1; limits.memory for: "
        "c0,c1; memory for: c0,c1");
    expect_ok(
        run("CREATE", "pods", "Pod", pod("p", 1, RES(CM("100m", "2Gi"), "{\"memory\":\"2Gi\"}"), ""), NULL));
}

/* TestAdmitBelowTerminatingQuotaLimit / TestAdmitBelowBestEffortQuotaLimit: scopes pick the quota. */
static void test_scopes(void **st)
{
    (void)st;
    state(
        adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
                         quota("quota-non-terminating", "\"scopes\":[\"NotTerminating\"]", BASIC_HARD,
                               "{\"cpu\":\"3\",\"memory\":\"100Gi\",\"pods\":\"5\"}"),
                         quota("quota-terminating", "\"scopes\":[\"Terminating\"]", BASIC_HARD, BASIC_USED)));
    /* terminating pod: charged to quota-terminating only (quota-non-terminating is full) */
    expect_ok(
        run("CREATE", "pods", "Pod",
            pod("allowed-pod", 1, RES(CM("100m", "2Gi"), CM("200m", "2Gi")), ",\"activeDeadlineSeconds\":60"),
            NULL));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("nt", 1, RES(CM("100m", "2Gi"), CM("200m", "2Gi")), ""), NULL),
        "pods \"nt\" is forbidden: exceeded quota: quota-non-terminating, requested: "
        "cpu=100m,memory=2Gi,pods=1, "
        "used: cpu=3,memory=100Gi,pods=5, limited: cpu=3,memory=100Gi,pods=5");
    /* a best-effort pod is charged to quota-besteffort (full), not quota-not-besteffort */
    state(adm_arena_printf(
        pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
        quota("quota-besteffort", "\"scopes\":[\"BestEffort\"]", "{\"pods\":\"5\"}", "{\"pods\":\"5\"}"),
        quota("quota-not-besteffort", "\"scopes\":[\"NotBestEffort\"]", "{\"pods\":\"5\"}",
              "{\"pods\":\"3\"}")));
    expect_ok(run("CREATE", "pods", "Pod", pod("nbe", 1, RES(CPU("1"), NONE), ""), NULL));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("be", 1, RES(NONE, NONE), ",\"activeDeadlineSeconds\":60"), NULL),
        "pods \"be\" is forbidden: exceeded quota: quota-besteffort, requested: pods=1, used: pods=5, "
        "limited: pods=5");
}

/* TestAdmitBelowPriorityClassQuotaLimit-style scopeSelector cases, and CrossNamespacePodAffinity. */
static void test_scope_selector(void **st)
{
    const char *sel_in =
        "\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"PriorityClass\",\"operator\":"
        "\"In\",\"values\":[\"cluster-services\"]}]}";
    const char *sel_exists = "\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"PriorityClass\","
                             "\"operator\":\"Exists\"}]}";
    const char *sel_notin = "\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"PriorityClass\","
                            "\"operator\":\"NotIn\",\"values\":[\"cluster-services\"]}]}";

    (void)st;
    state(quota("quota", sel_in, "{\"pods\":\"5\"}", "{\"pods\":\"5\"}"));
    expect_denied(
        run("CREATE", "pods", "Pod",
            pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"cluster-services\""), NULL),
        "pods \"p\" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=5, limited: pods=5");
    expect_ok(
        run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"other\""), NULL));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL));
    state(quota("quota", sel_exists, "{\"pods\":\"5\"}", "{\"pods\":\"5\"}"));
    assert_int_equal(
        run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"any\""), NULL).rc,
        ADM_DECLINED);
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL));
    state(quota("quota", sel_notin, "{\"pods\":\"5\"}", "{\"pods\":\"5\"}"));
    assert_int_equal(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL).rc, ADM_DECLINED);
    expect_ok(run("CREATE", "pods", "Pod",
                  pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"cluster-services\""), NULL));
    state(
        quota("quota", "\"scopes\":[\"CrossNamespacePodAffinity\"]", "{\"pods\":\"1\"}", "{\"pods\":\"1\"}"));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL));
    assert_int_equal(
        run("CREATE", "pods", "Pod",
            pod("p", 1, RES(NONE, NONE),
                ",\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                "[{\"topologyKey\":\"k\",\"namespaces\":[\"a\"]}]}}"),
            NULL)
            .rc,
        ADM_DECLINED);
    /* a scope never matches a non-pod object */
    state(quota("quota", "\"scopes\":[\"NotTerminating\"]", "{\"services\":\"1\"}", "{\"services\":\"1\"}"));
    expect_ok(run("CREATE", "services", "Service", "{\"metadata\":{\"name\":\"s\"},\"spec\":{}}", NULL));
}

#define PVC(name, storage, extra)                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"" name               \
    "\",\"namespace\":\"test\"" extra "},\"spec\":{\"resources\":{\"requests\":{\"storage\":\"" storage      \
    "\"}}}}"

/* TestAdmitHandlesNegativePVCUpdates, TestAdmitHandlesPVCUpdates, storage classes. */
static void test_pvc(void **st)
{
    (void)st;
    state(quota("quota", "", "{\"persistentvolumeclaims\":\"3\",\"requests.storage\":\"100Gi\"}",
                "{\"persistentvolumeclaims\":\"1\",\"requests.storage\":\"95Gi\"}"));
    /* shrinking charges nothing */
    expect_ok(run("UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim", PVC("pvc", "5Gi", ""),
                  PVC("pvc", "10Gi", ",\"resourceVersion\":\"1\"")));
    /* growing by 5Gi fits exactly; by 6Gi does not (only the delta is charged, and not the count) */
    expect_ok(run("UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim", PVC("pvc", "15Gi", ""),
                  PVC("pvc", "10Gi", ",\"resourceVersion\":\"1\"")));
    expect_denied(run("UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim", PVC("pvc", "16Gi", ""),
                      PVC("pvc", "10Gi", ",\"resourceVersion\":\"1\"")),
                  "persistentvolumeclaims \"pvc\" is forbidden: exceeded quota: quota, requested: "
                  "requests.storage=6Gi, used: requests.storage=95Gi, limited: requests.storage=100Gi");
    expect_denied(
        run("CREATE", "persistentvolumeclaims", "PersistentVolumeClaim", PVC("pvc", "10Gi", ""), NULL),
        "persistentvolumeclaims \"pvc\" is forbidden: exceeded quota: quota, requested: "
        "requests.storage=10Gi, used: requests.storage=95Gi, limited: requests.storage=100Gi");
    state(quota("quota", "",
                "{\"gold.storageclass.storage.k8s.io/requests.storage\":\"10Gi\","
                "\"gold.storageclass.storage.k8s.io/persistentvolumeclaims\":\"1\"}",
                "{\"gold.storageclass.storage.k8s.io/requests.storage\":\"0\","
                "\"gold.storageclass.storage.k8s.io/persistentvolumeclaims\":\"1\"}"));
    expect_ok(run("CREATE", "persistentvolumeclaims", "PersistentVolumeClaim", PVC("pvc", "20Gi", ""), NULL));
    expect_denied(
        run("CREATE", "persistentvolumeclaims", "PersistentVolumeClaim",
            PVC("pvc", "20Gi", ",\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":\"gold\"}"),
            NULL),
        "persistentvolumeclaims \"pvc\" is forbidden: exceeded quota: quota, requested: "
        "gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/"
        "requests.storage=20Gi, used: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,"
        "gold.storageclass.storage.k8s.io/requests.storage=0, limited: "
        "gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/"
        "requests.storage=10Gi");
}

#define SVC(name, type, ports, extra)                                                                        \
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"" name                             \
    "\",\"namespace\":\"test\"" extra "},\"spec\":{\"type\":\"" type "\",\"ports\":" ports "}}"

/* TestAdmitHandlesOldObjects, TestAdmitHandlesCreatingUpdates, load balancers and node ports. */
static void test_services(void **st)
{
    (void)st;
    state(quota("quota", "",
                "{\"services\":\"10\",\"services.loadbalancers\":\"10\",\"services.nodeports\":\"1\"}",
                "{\"services\":\"10\",\"services.loadbalancers\":\"1\",\"services.nodeports\":\"0\"}"));
    /* LoadBalancer to NodePort with an old version: the service is not counted again */
    expect_ok(run("UPDATE", "services", "Service", SVC("service", "NodePort", "[{\"port\":1234}]", ""),
                  SVC("service", "LoadBalancer", "[]", ",\"resourceVersion\":\"1\"")));
    /* an update without a previous version is a create: services is full */
    expect_denied(run("UPDATE", "services", "Service", SVC("service", "NodePort", "[{\"port\":1234}]", ""),
                      SVC("service", "LoadBalancer", "[]", "")),
                  "services \"service\" is forbidden: exceeded quota: quota, requested: services=1, used: "
                  "services=10, limited: services=10");
    state(quota("quota", "", "{\"services.loadbalancers\":\"10\",\"services.nodeports\":\"1\"}",
                "{\"services.loadbalancers\":\"1\",\"services.nodeports\":\"0\"}"));
    expect_denied(
        run("CREATE", "services", "Service", SVC("lb", "LoadBalancer", "[{\"port\":1},{\"port\":2}]", ""),
            NULL),
        "services \"lb\" is forbidden: exceeded quota: quota, requested: services.nodeports=2, used: "
        "services.nodeports=0, limited: services.nodeports=1");
    /* without allocated node ports only the ones asked for count */
    expect_ok(run("CREATE", "services", "Service",
                  "{\"metadata\":{\"name\":\"lb\"},\"spec\":{\"type\":\"LoadBalancer\","
                  "\"allocateLoadBalancerNodePorts\":false,\"ports\":[{\"port\":1},{\"port\":2,\"nodePort\":"
                  "30001}]}}",
                  NULL));
    expect_ok(
        run("CREATE", "services", "Service", SVC("c", "ClusterIP", "[{\"port\":1},{\"port\":2}]", ""), NULL));
}

/* The object count evaluator: count/<resource>.<group>, the legacy names, creates only. */
static void test_object_counts(void **st)
{
    (void)st;
    state(quota("quota", "",
                "{\"count/deployments.apps\":\"2\",\"configmaps\":\"1\",\"count/secrets\":\"4\"}",
                "{\"count/deployments.apps\":\"2\",\"configmaps\":\"1\",\"count/secrets\":\"3\"}"));
    expect_denied(
        run_full("CREATE", "deployments", NULL, "Deployment", "apps",
                 "{\"metadata\":{\"name\":\"d\"},\"spec\":{}}", NULL),
        "deployments.apps \"d\" is forbidden: exceeded quota: quota, requested: count/deployments.apps=1, "
        "used: count/deployments.apps=2, limited: count/deployments.apps=2");
    expect_ok(run_full("UPDATE", "deployments", NULL, "Deployment", "apps",
                       "{\"metadata\":{\"name\":\"d\"},\"spec\":{}}", "{\"metadata\":{\"name\":\"d\"}}"));
    expect_denied(run("CREATE", "configmaps", "ConfigMap", "{\"metadata\":{\"name\":\"cm\"}}", NULL),
                  "configmaps \"cm\" is forbidden: exceeded quota: quota, requested: configmaps=1, used: "
                  "configmaps=1, limited: configmaps=1");
    expect_ok(run("CREATE", "secrets", "Secret", "{\"metadata\":{\"name\":\"s\"}}", NULL));
    expect_ok(run("CREATE", "services", "Service", SVC("s", "ClusterIP", "[]", ""), NULL));
}

/* Pod details: count/pods counts terminal pods, hugepages and extended resources, status unknown. */
static void test_pod_resources(void **st)
{
    (void)st;
    state(
        quota("quota", "", "{\"pods\":\"1\",\"count/pods\":\"2\"}", "{\"pods\":\"0\",\"count/pods\":\"2\"}"));
    expect_denied(
        run("CREATE", "pods", "Pod",
            "{\"metadata\":{\"name\":\"done\"},\"spec\":{\"containers\":[]},\"status\":{\"phase\":"
            "\"Succeeded\"}}",
            NULL),
        "pods \"done\" is forbidden: exceeded quota: quota, requested: count/pods=1, used: count/pods=2, "
        "limited: count/pods=2");
    state(quota("quota", "",
                "{\"requests.hugepages-2Mi\":\"4Mi\",\"requests.example.com/gpu\":\"2\","
                "\"requests.ephemeral-storage\":\"1Gi\"}",
                "{\"requests.hugepages-2Mi\":\"2Mi\",\"requests.example.com/gpu\":\"1\","
                "\"requests.ephemeral-storage\":\"0\"}"));
    expect_denied(
        run("CREATE", "pods", "Pod",
            pod("p", 2,
                RES("{\"hugepages-2Mi\":\"2Mi\",\"example.com/gpu\":\"1\",\"ephemeral-storage\":\"100Mi\"}",
                    NONE),
                ""),
            NULL),
        "pods \"p\" is forbidden: exceeded quota: quota, requested: requests.example.com/gpu=2,"
        "requests.hugepages-2Mi=4Mi, used: requests.example.com/gpu=1,requests.hugepages-2Mi=2Mi, "
        "limited: requests.example.com/gpu=2,requests.hugepages-2Mi=4Mi");
    state(quota("quota", "", "{\"pods\":\"5\",\"cpu\":\"1\"}", "{\"pods\":\"1\"}"));
    expect_denied(run("CREATE", "pods", "Pod", pod("p", 1, RES(CPU("1"), NONE), ""), NULL),
                  "pods \"p\" is forbidden: status unknown for quota: quota, resources: cpu,pods");
    /* pod updates other than resize are not charged */
    expect_ok(run("UPDATE", "pods", "Pod", pod("p", 1, RES(CPU("1"), NONE), ""),
                  pod("p", 1, RES(CPU("1"), NONE), "")));
}

/* A stored pod p of one container with resources, as the old object of an update. */
static const char *stored_pod(const char *resources, const char *extra)
{
    return adm_arena_printf(
        pt_arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"test\",\"resourceVersion\":\"1\"},\"spec\":{\"containers\":[{\"name\":\"c0\","
        "\"image\":\"foo:V0\",\"resources\":%s}]%s}}",
        resources, extra);
}

/*
 * A pod's resize is charged what it adds over the old pod (pods and what did not grow: nothing), to
 * the quotas the old pod matched too; in full without an old version or to a quota the old pod
 * did not match.
 */
static void test_pod_resize(void **st)
{
    (void)st;
    state(quota("quota", "", "{\"cpu\":\"3\",\"requests.cpu\":\"3\",\"memory\":\"10Gi\",\"pods\":\"5\"}",
                "{\"pods\":\"5\",\"requests.cpu\":\"2\",\"memory\":\"1Gi\",\"cpu\":\"2\"}"));
    expect_ok(run_full("UPDATE", "pods", "resize", "Pod", "", pod("p", 1, RES(CM("2", "1Gi"), NONE), ""),
                       stored_pod(RES(CM("1", "1Gi"), NONE), "")));
    expect_denied(run_full("UPDATE", "pods", "resize", "Pod", "", pod("p", 1, RES(CM("3", "1Gi"), NONE), ""),
                           stored_pod(RES(CM("1", "1Gi"), NONE), "")),
                  "pods \"p\" is forbidden: exceeded quota: quota, requested: cpu=2,requests.cpu=2, used: "
                  "cpu=2,requests.cpu=2, limited: cpu=3,requests.cpu=3");
    expect_denied(
        run_full("UPDATE", "pods", "resize", "Pod", "", pod("p", 1, RES(CM("3", "1Gi"), NONE), ""),
                 pod("p", 1, RES(CM("1", "1Gi"), NONE), "")),
        "pods \"p\" is forbidden: exceeded quota: quota, requested: cpu=3,pods=1,requests.cpu=3, used: "
        "cpu=2,pods=5,requests.cpu=2, limited: cpu=3,pods=5,requests.cpu=3");
    state(quota("terminating", "\"scopes\":[\"Terminating\"]", "{\"pods\":\"5\",\"cpu\":\"10\"}",
                "{\"pods\":\"5\",\"cpu\":\"0\"}"));
    expect_denied(run_full("UPDATE", "pods", "resize", "Pod", "",
                           pod("p", 1, RES(CM("2", "1Gi"), NONE), ",\"activeDeadlineSeconds\":60"),
                           stored_pod(RES(CM("1", "1Gi"), NONE), "")),
                  "pods \"p\" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=5, "
                  "limited: pods=5");
    expect_ok(run_full("UPDATE", "pods", "resize", "Pod", "",
                       pod("p", 1, RES(CM("2", "1Gi"), NONE), ",\"activeDeadlineSeconds\":60"),
                       stored_pod(RES(CM("1", "1Gi"), NONE), ",\"activeDeadlineSeconds\":60")));
}

#define CONFIG(limited)                                                                                      \
    "{\"apiVersion\":\"resourcequota.admission.k8s.io/"                                                      \
    "v1beta1\",\"kind\":\"Configuration\",\"limitedResources\":" limited "}"
#define PC_IN "{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":[\"cluster-services\"]}"

static void *configured(const char *config)
{
    char err[512];
    void *st = NULL;

    if (pt_configure(&adm_plugin_resource_quota, config, NULL, &st, err, sizeof(err)) != 0) {
        fail_msg("configure: %s", err);
    }
    assert_non_null(st);
    return st;
}

static pt_result_t run_with(void *cfg, const char *obj)
{
    pt_request_t r = pt_core_request("CREATE", "pods", "Pod", "test", obj, NULL);

    return pt_run(pt_arena, &adm_plugin_resource_quota, cfg, 'v', &r);
}

/* TestAdmitLimitedScopeWithCoverQuota's cases: matchScopes need a quota with the scope. */
static void test_limited_scopes(void **st)
{
    void *cfg = configured(CONFIG("[{\"resource\":\"pods\",\"matchScopes\":[" PC_IN "]}]"));
    void *cfg_exists = configured(CONFIG("[{\"resource\":\"pods\",\"matchScopes\":[{\"scopeName\":"
                                         "\"PriorityClass\",\"operator\":\"Exists\"}]}]"));
    const char *critical = pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"cluster-services\"");
    pt_result_t res;

    (void)st;
    /* no quota at all in the namespace: still refused, as a plain error (500, bare message) */
    pt_set_cluster(NULL);
    res = run_with(cfg, critical);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 500);
    assert_string_equal(res.status.message,
                        "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]");
    expect_ok(run_with(cfg, pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"other\"")));
    expect_ok(run_with(cfg, pod("p", 1, RES(NONE, NONE), "")));
    res = run_with(cfg_exists, pod("p", 1, RES(NONE, NONE), ",\"priorityClassName\":\"fake-priority\""));
    assert_int_equal(res.status.code, 500);
    assert_string_equal(res.status.message,
                        "insufficient quota to match these scopes: [{PriorityClass Exists []}]");
    /* a quota whose scope selector matches the pod covers it (and charges it) */
    state(quota("quota", "\"scopeSelector\":{\"matchExpressions\":[" PC_IN "]}", "{\"pods\":\"10\"}",
                "{\"pods\":\"1\"}"));
    expect_ok(run_with(cfg, critical));
    /* a quota with another scope does not */
    state(quota("quota", "\"scopes\":[\"BestEffort\"]", "{\"pods\":\"10\"}", "{\"pods\":\"1\"}"));
    assert_int_equal(run_with(cfg, critical).status.code, 500);
    adm_plugin_resource_quota.free_state(cfg);
    adm_plugin_resource_quota.free_state(cfg_exists);
}

/* TestAdmitLimitedResourceNoQuota / WithQuota / WithMultipleQuota: matchContains. */
static void test_limited_resources(void **st)
{
    void *cfg = configured(CONFIG("[{\"resource\":\"pods\",\"matchContains\":[\"cpu\"]},"
                                  "{\"resource\":\"pods\",\"matchContains\":[\"cpu\",\"requests\"]}]"));

    (void)st;
    pt_set_cluster(NULL);
    expect_denied(run_with(cfg, pod("p", 1, RES(CPU("1"), NONE), "")),
                  "pods \"p\" is forbidden: insufficient quota to consume: cpu,requests.cpu");
    expect_ok(run_with(cfg, pod("p", 1, RES(NONE, NONE), "")));
    state(quota("quota", "", "{\"cpu\":\"10\"}", "{\"cpu\":\"1\"}"));
    expect_denied(run_with(cfg, pod("p", 1, RES(CPU("1"), NONE), "")),
                  "pods \"p\" is forbidden: insufficient quota to consume: requests.cpu");
    state(adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
                           quota("a", "", "{\"cpu\":\"10\"}", "{\"cpu\":\"1\"}"),
                           quota("b", "", "{\"requests.cpu\":\"10\"}", "{\"requests.cpu\":\"1\"}")));
    expect_ok(run_with(cfg, pod("p", 1, RES(CPU("1"), NONE), "")));
    adm_plugin_resource_quota.free_state(cfg);
}

/* A bad configuration: one line naming the source and the field. */
static void test_bad_config(void **st)
{
    static const struct {
        const char *config, *want;
    } cases[] = {
        {"{\"apiVersion\":\"v9\",\"kind\":\"Configuration\"}",
         "apiVersion: \"v9\" is not resourcequota.admission.k8s.io/v1, v1beta1 or v1alpha1"},
        {"{\"apiVersion\":\"resourcequota.admission.k8s.io/v1\",\"kind\":\"Other\"}",
         "kind: \"Other\" is not Configuration"},
        {CONFIG("[{\"matchContains\":[\"cpu\"]}]"), "limitedResources[0].resource: Required value"},
        {CONFIG("[{\"resource\":\"pods\"}]"), "limitedResources[0].matchContains: Required value: must at "
                                              "least specify matchContains or matchScopes"},
        {CONFIG(
             "[{\"resource\":\"pods\",\"matchScopes\":[{\"scopeName\":\"Nope\",\"operator\":\"Exists\"}]}]"),
         "limitedResources[0].matchScopes[0].scopeName: unsupported scope"},
        {CONFIG("[{\"resource\":\"pods\",\"matchScopes\":[{\"scopeName\":\"PriorityClass\",\"operator\":"
                "\"In\"}]}]"),
         "limitedResources[0].matchScopes[0].values: must be at least one value when `operator` is 'In' or "
         "'NotIn' for scope selector"},
        {CONFIG("{}"), "limitedResources: must be a list"},
    };

    (void)st;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[512];
        void *state_ = NULL;
        const char *at;

        assert_int_equal(
            pt_configure(&adm_plugin_resource_quota, cases[i].config, NULL, &state_, err, sizeof(err)),
            ADM_EINVAL);
        assert_null(state_);
        at = strstr(err, ": ");
        assert_non_null(at);
        assert_string_equal(at + 2, cases[i].want);
    }
    /* no configuration: no limits; the state holds the quotas' parses only */
    {
        char err[64];
        void *state_ = NULL;

        assert_int_equal(pt_configure(&adm_plugin_resource_quota, NULL, NULL, &state_, err, sizeof(err)), 0);
        assert_non_null(state_);
        adm_plugin_resource_quota.free_state(state_);
    }
}

/* Objects of odd shapes: no crash, and kube's outcome where it has one. */
static void test_odd_shapes(void **st)
{
    (void)st;
    /* a quota whose quantity does not parse is one kube-apiserver never stored: skipped */
    state(quota("quota", "", "{\"pods\":\"abc\"}", "{\"pods\":\"0\"}"));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL));
    state(quota("quota", "\"scopes\":[1,null],\"scopeSelector\":{\"matchExpressions\":\"x\"}", "\"hard\"",
                "[1]"));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL));
    /* bare numbers are quantities, as Quantity.UnmarshalJSON reads them */
    state(quota("quota", "", "{\"pods\":1,\"requests.cpu\":0.5}", "{\"pods\":0,\"requests.cpu\":0.25}"));
    expect_denied(run("CREATE", "pods", "Pod", pod("p", 1, RES("{\"cpu\":0.5}", NONE), ""), NULL),
                  "pods \"p\" is forbidden: exceeded quota: quota, requested: requests.cpu=500m, used: "
                  "requests.cpu=250m, limited: requests.cpu=500m");
    /* a pod of the wrong shape counts what it can; a malformed quantity is left to decoding */
    expect_ok(run(
        "CREATE", "pods", "Pod",
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":{\"a\":1},\"initContainers\":[1,\"x\"]}}",
        NULL));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES("{\"cpu\":\"lots\"}", NONE), ""), NULL));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, RES("{\"cpu\":[1]}", NONE), ""), NULL));
    /* a negative request is refused before anything is charged */
    state(quota("quota", "", "{\"requests.cpu\":\"1\"}", "{\"requests.cpu\":\"0\"}"));
    expect_denied(run("CREATE", "pods", "Pod", pod("p", 1, RES(CPU("-1"), NONE), ""), NULL),
                  "pods \"p\" is forbidden: quota usage is negative for resource(s): cpu,requests.cpu");
    /* an UPDATE kube-apiserver sends without the old object */
    state(quota("quota", "", "{\"services\":\"5\"}", "{\"services\":\"0\"}"));
    expect_denied(
        run("UPDATE", "services", "Service", SVC("s", "ClusterIP", "[]", ""), NULL),
        "services \"s\" is forbidden: unable to get previous usage since prior version of object was not "
        "found");
}

/* ---- the usage reserved: the check as a batch runs it, on quotas it holds ---- */

static adm_quota_t *running;
static size_t nrunning;
static bool charged;

static int probe_validate(void *cfg, adm_attrs_t *attrs, adm_status_t *st)
{
    return check_request(cfg, attrs, pt_arena, running, nrunning, st, &charged);
}

static const adm_plugin_t probe = {
    .name = "ResourceQuota",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .validate = probe_validate,
};

/* Makes docs the state, and its quotas of namespace test the ones a batch holds. */
static void hold(const char *docs)
{
    yyjson_val *const *items;

    state(docs);
    items = adm_cluster_state_list(cluster, "", "ResourceQuota", "test", &nrunning);
    running = adm_arena_calloc(pt_arena, nrunning + 1, sizeof(*running));
    assert_non_null(running);
    for (size_t i = 0; i < nrunning; i++) {
        assert_int_equal(adm_quota_read(pt_arena, items[i], &running[i]), 0);
    }
}

static pt_result_t charge_run(const char *op, const char *resource, const char *kind, const char *obj,
                              const char *old)
{
    pt_request_t r = pt_core_request(op, resource, kind, "test", obj, old);

    charged = false;
    return pt_run(pt_arena, &probe, NULL, 'v', &r);
}

/* The held quota's status.used as "name=value,..." in name order, and whether it changed. */
static const char *used_of(const char *name, bool *changed)
{
    for (size_t i = 0; i < nrunning; i++) {
        if (strcmp(running[i].name, name) == 0) {
            const char **keys = adm_arena_alloc(pt_arena, (running[i].used.n + 1) * sizeof(*keys));

            memcpy(keys, running[i].used.names, running[i].used.n * sizeof(*keys));
            *changed = running[i].changed;
            return pretty(pt_arena, &running[i].used, keys, running[i].used.n);
        }
    }
    fail_msg("no quota %s", name);
    return NULL;
}

static void expect_used(const char *name, const char *want, bool want_changed)
{
    bool changed = false;

    assert_string_equal(used_of(name, &changed), want);
    assert_int_equal(changed, want_changed);
}

/* TestAdmitBelowQuotaLimit; then the next request sees the first one's usage (the running quota). */
static void test_reserved_below_limit(void **st)
{
    (void)st;
    hold(quota("quota", "", BASIC_HARD, BASIC_USED));
    expect_ok(
        charge_run("CREATE", "pods", "Pod", pod("allowed-pod", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL));
    assert_true(charged);
    expect_used("quota", "cpu=1100m,memory=52Gi,pods=4", true);
    expect_ok(
        charge_run("CREATE", "pods", "Pod", pod("second", 1, RES(CM("1900m", "48Gi"), NONE), ""), NULL));
    expect_used("quota", "cpu=3,memory=100Gi,pods=5", true);
    expect_denied(
        charge_run("CREATE", "pods", "Pod", pod("third", 1, RES(CM("1m", "1"), NONE), ""), NULL),
        "pods \"third\" is forbidden: exceeded quota: quota, requested: cpu=1m,memory=1,pods=1, used: "
        "cpu=3,memory=100Gi,pods=5, limited: cpu=3,memory=100Gi,pods=5");
    assert_false(charged);
    expect_used("quota", "cpu=3,memory=100Gi,pods=5", true); /* a refusal changes nothing */
}

/* Only what the quota limits is charged (quota.Mask), and a quota the pod does not match not at all. */
static void test_reserved_masked(void **st)
{
    (void)st;
    hold(
        adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
                         quota("pods-only", "", "{\"pods\":\"5\"}", "{\"pods\":\"3\",\"cpu\":\"7\"}"),
                         quota("quota-terminating", "\"scopes\":[\"Terminating\"]", BASIC_HARD, BASIC_USED)));
    expect_ok(charge_run("CREATE", "pods", "Pod", pod("p", 1, RES(CM("100m", "2Gi"), NONE), ""), NULL));
    expect_used("pods-only", "cpu=7,pods=4", true);
    expect_used("quota-terminating", "cpu=1,memory=50Gi,pods=3", false);
}

/* TestAdmitBelowTerminatingQuotaLimit, TestAdmitBelowBestEffortQuotaLimit: the matching quota only. */
static void test_reserved_scopes(void **st)
{
    (void)st;
    hold(adm_arena_printf(
        pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
        quota("quota-non-terminating", "\"scopes\":[\"NotTerminating\"]", BASIC_HARD, BASIC_USED),
        quota("quota-terminating", "\"scopes\":[\"Terminating\"]", BASIC_HARD, BASIC_USED)));
    expect_ok(charge_run("CREATE", "pods", "Pod",
                         pod("allowed-pod", 1, RES(CM("100m", "2Gi"), NONE), ",\"activeDeadlineSeconds\":30"),
                         NULL));
    expect_used("quota-terminating", "cpu=1100m,memory=52Gi,pods=4", true);
    expect_used("quota-non-terminating", "cpu=1,memory=50Gi,pods=3", false);
    hold(adm_arena_printf(
        pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}",
        quota("quota-besteffort", "\"scopes\":[\"BestEffort\"]", "{\"pods\":\"5\"}", "{\"pods\":\"3\"}"),
        quota("quota-not-besteffort", "\"scopes\":[\"NotBestEffort\"]", "{\"pods\":\"5\"}",
              "{\"pods\":\"3\"}")));
    expect_ok(charge_run("CREATE", "pods", "Pod", pod("allowed-pod", 1, RES(NONE, NONE), ""), NULL));
    expect_used("quota-besteffort", "pods=4", true);
    expect_used("quota-not-besteffort", "pods=3", false);
}

/*
 * TestAdmitHandlesOldObjects, TestAdmitHandlesCreatingUpdates, TestAdmitHandlesPVCUpdates,
 * TestAdmitHandlesNegativePVCUpdates: an update is charged what it adds over the old object, an
 * update without a previous version in full, one that adds nothing not at all.
 */
static void test_reserved_updates(void **st)
{
    static const char *const hard =
        "{\"services\":\"10\",\"services.loadbalancers\":\"10\",\"services.nodeports\":\"10\"}";
    static const char *const used =
        "{\"services\":\"1\",\"services.loadbalancers\":\"1\",\"services.nodeports\":\"0\"}";

    (void)st;
    hold(quota("quota", "", hard, used));
    expect_ok(charge_run("UPDATE", "services", "Service", SVC("service", "NodePort", "[{\"port\":1234}]", ""),
                         SVC("service", "LoadBalancer", "[]", ",\"resourceVersion\":\"1\"")));
    expect_used("quota", "services=1,services.loadbalancers=1,services.nodeports=1", true);
    hold(quota("quota", "", hard, used));
    expect_ok(charge_run("UPDATE", "services", "Service", SVC("service", "NodePort", "[{\"port\":1234}]", ""),
                         SVC("service", "LoadBalancer", "[]", ",\"resourceVersion\":\"\"")));
    expect_used("quota", "services=2,services.loadbalancers=1,services.nodeports=1", true);

    hold(quota("quota", "", "{\"persistentvolumeclaims\":\"3\",\"requests.storage\":\"100Gi\"}",
               "{\"persistentvolumeclaims\":\"1\",\"requests.storage\":\"10Gi\"}"));
    expect_ok(charge_run("UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim",
                         PVC("pvc-to-update", "5Gi", ""),
                         PVC("pvc-to-update", "10Gi", ",\"resourceVersion\":\"1\"")));
    assert_false(charged);
    expect_used("quota", "persistentvolumeclaims=1,requests.storage=10Gi", false);
    expect_ok(charge_run("UPDATE", "persistentvolumeclaims", "PersistentVolumeClaim",
                         PVC("pvc-to-update", "15Gi", ""),
                         PVC("pvc-to-update", "10Gi", ",\"resourceVersion\":\"1\"")));
    assert_true(charged);
    expect_used("quota", "persistentvolumeclaims=1,requests.storage=15Gi", true);
}

/*
 * A quota's names in any order and form: bare and requests. names, limits., hugepages, extended
 * resources and names the pod evaluator does not track, each found in the pod's usage whatever its
 * place there; a quota whose scopes the pod does not match is not looked at, one with an empty
 * scope list is.
 */
static void test_tracked_names_any_order(void **st)
{
    static const char *const hard =
        "{\"configmaps\":\"1\",\"requests.example.com/gpu\":\"2\",\"limits.memory\":\"1Gi\","
        "\"hugepages-2Mi\":\"4Mi\",\"count/pods\":\"10\",\"example.com/fpga\":\"1\","
        "\"requests.hugepages-2Mi\":\"4Mi\",\"ephemeral-storage\":\"1Gi\",\"requests.cpu\":\"1\","
        "\"cpu\":\"1\",\"limits.ephemeral-storage\":\"1Gi\"}";
    static const char *const used =
        "{\"cpu\":\"0\",\"limits.ephemeral-storage\":\"0\",\"requests.cpu\":\"0\","
        "\"ephemeral-storage\":\"0\",\"requests.hugepages-2Mi\":\"2Mi\",\"count/pods\":\"1\","
        "\"hugepages-2Mi\":\"2Mi\",\"limits.memory\":\"0\",\"requests.example.com/gpu\":\"1\"}";
    const char *full = quota("full", "\"scopeSelector\":{\"matchExpressions\":[" PC_IN "]}",
                             "{\"pods\":\"1\"}", "{\"pods\":\"1\"}");
    const char *fits = RES("{\"example.com/gpu\":\"1\",\"ephemeral-storage\":\"1Gi\",\"cpu\":\"500m\","
                           "\"hugepages-2Mi\":\"2Mi\"}",
                           "{\"hugepages-2Mi\":\"2Mi\",\"ephemeral-storage\":\"1Gi\",\"memory\":\"512Mi\"}");

    (void)st;
    state(adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}", full,
                           quota("quota", "\"scopes\":[]", hard, used)));
    expect_ok(run("CREATE", "pods", "Pod", pod("p", 1, fits, ""), NULL));
    expect_denied(
        run("CREATE", "pods", "Pod", pod("p", 2, fits, ""), NULL),
        "pods \"p\" is forbidden: exceeded quota: quota, requested: ephemeral-storage=2Gi,"
        "hugepages-2Mi=4Mi,limits.ephemeral-storage=2Gi,requests.example.com/gpu=2,"
        "requests.hugepages-2Mi=4Mi, used: ephemeral-storage=0,hugepages-2Mi=2Mi,"
        "limits.ephemeral-storage=0,requests.example.com/gpu=1,requests.hugepages-2Mi=2Mi, limited: "
        "ephemeral-storage=1Gi,hugepages-2Mi=4Mi,limits.ephemeral-storage=1Gi,"
        "requests.example.com/gpu=2,requests.hugepages-2Mi=4Mi");
    /* the constraints follow the tracked names: requests.cpu and limits.memory */
    expect_denied(
        run("CREATE", "pods", "Pod", pod("p", 1, RES(NONE, NONE), ""), NULL),
        "pods \"p\" is forbidden: failed quota: quota: must specify cpu for: c0; limits.memory for: "
        "c0; requests.cpu for: c0");
    /* the one tracked name status.used lacks (requests.ephemeral-storage) makes it unknown */
    state(quota("quota", "",
                "{\"requests.ephemeral-storage\":\"1Gi\",\"count/pods\":\"10\",\"requests.storage\":\"1\"}",
                "{\"count/pods\":\"1\",\"requests.storage\":\"0\"}"));
    expect_denied(run("CREATE", "pods", "Pod", pod("p", 1, fits, ""), NULL),
                  "pods \"p\" is forbidden: status unknown for quota: quota, resources: "
                  "count/pods,requests.ephemeral-storage");
    /* the same quota in a batch, charged */
    hold(adm_arena_printf(pt_arena, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s]}", full,
                          quota("quota", "\"scopes\":[]", hard, used)));
    expect_ok(charge_run("CREATE", "pods", "Pod", pod("p", 1, fits, ""), NULL));
    expect_used("quota",
                "count/pods=2,cpu=500m,ephemeral-storage=1Gi,hugepages-2Mi=4Mi,limits.ephemeral-storage=1Gi,"
                "limits.memory=512Mi,requests.cpu=500m,requests.example.com/gpu=2,requests.hugepages-2Mi=4Mi",
                true);
    expect_used("full", "pods=1", false);
    expect_denied(
        charge_run("CREATE", "pods", "Pod", pod("q", 1, fits, ""), NULL),
        "pods \"q\" is forbidden: exceeded quota: quota, requested: ephemeral-storage=1Gi,"
        "hugepages-2Mi=2Mi,limits.ephemeral-storage=1Gi,requests.example.com/gpu=1,"
        "requests.hugepages-2Mi=2Mi, used: ephemeral-storage=1Gi,hugepages-2Mi=4Mi,"
        "limits.ephemeral-storage=1Gi,requests.example.com/gpu=2,requests.hugepages-2Mi=4Mi, limited: "
        "ephemeral-storage=1Gi,hugepages-2Mi=4Mi,limits.ephemeral-storage=1Gi,"
        "requests.example.com/gpu=2,requests.hugepages-2Mi=4Mi");
    assert_false(charged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ignores_delete_and_subresources, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_below_and_above_limit, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_enforce_constraints, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_scopes, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_scope_selector, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_pvc, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_services, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_counts, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_resources, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_resize, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_limited_scopes, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_limited_resources, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_config, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_shapes, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_below_limit, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_masked, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_scopes, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_updates, pt_group_setup, teardown),
        cmocka_unit_test_setup_teardown(test_tracked_names_any_order, pt_group_setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

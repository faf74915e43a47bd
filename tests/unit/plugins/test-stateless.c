/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table tests of the plugins that need no cluster state: each row is one request through one hook,
 * with the expected decision, Status (code, reason, exact message) and the object afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_always_admit, adm_plugin_always_deny, adm_plugin_always_pull_images,
    adm_plugin_default_toleration_seconds, adm_plugin_deny_service_external_ips,
    adm_plugin_extended_resource_toleration, adm_plugin_limit_pod_hard_anti_affinity_topology,
    adm_plugin_storage_object_in_use_protection, adm_plugin_taint_nodes_by_condition;

typedef struct row_s {
    const char *title;
    char phase; /* 'm' admit, 'v' validate */
    pt_request_t req;
    int rc;              /* ADM_OK or ADM_DECLINED */
    int code;            /* when declined */
    const char *reason;  /* when declined; NULL for kube's empty reason */
    const char *message; /* when declined */
    const char *object;  /* expected object afterwards (JSON), NULL: unchanged */
    const char *details; /* expected details (JSON), NULL: not checked */
} row_t;

static adm_arena_t *arena;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

static void run_rows(const adm_plugin_t *p, const char *config, const adm_options_t *opts, const row_t *rows,
                     size_t n)
{
    void *st = NULL;
    char err[512];

    assert_int_equal(pt_configure(p, config, opts, &st, err, sizeof(err)), 0);
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        pt_result_t res;

        adm_arena_reset(arena);
        res = pt_run(arena, p, st, r->phase, &r->req);
        if (res.rc != r->rc) {
            fail_msg("%s: %s: rc %d, want %d (%s)", p->name, r->title, res.rc, r->rc,
                     res.rc == ADM_DECLINED ? res.status.message : "");
        }
        if (r->rc == ADM_DECLINED) {
            if (res.status.code != r->code || strcmp(res.status.message, r->message) != 0 ||
                (r->reason == NULL) != (res.status.reason == NULL) ||
                (r->reason != NULL && strcmp(r->reason, res.status.reason) != 0)) {
                fail_msg("%s: %s:\n  got  %d %s %s\n  want %d %s %s", p->name, r->title, res.status.code,
                         res.status.reason != NULL ? res.status.reason : "-", res.status.message, r->code,
                         r->reason != NULL ? r->reason : "-", r->message);
            }
            if (r->details != NULL) {
                yyjson_alc alc;
                const char *got;

                adm_json_alc_init(&alc, arena);
                got = res.status.details != NULL
                          ? yyjson_val_write_opts(res.status.details, 0, &alc, NULL, NULL)
                          : "null";
                assert_json_equal(got, r->details);
            }
        }
        assert_json_equal(res.object,
                          r->object != NULL ? r->object : (r->req.object != NULL ? r->req.object : "null"));
    }
    if (p->free_state != NULL) {
        p->free_state(st);
    }
}

#define POD(spec) "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"ns\"},\"spec\":" spec "}"
#define PODREQ(op, obj)                                                                                      \
    {                                                                                                        \
        .operation = op, .resource = "pods", .kind = "Pod", .namespace_ = "ns", .name = "web-1",             \
        .object = obj                                                                                        \
    }

/* ---- DefaultTolerationSeconds ---- */

#define NR300                                                                                                \
    "{\"key\":\"node.kubernetes.io/"                                                                         \
    "not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}"
#define UR300                                                                                                \
    "{\"key\":\"node.kubernetes.io/"                                                                         \
    "unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}"

static void test_default_toleration_seconds(void **state)
{
    static const row_t rows[] = {
        {"adds both, not-ready first", 'm', PODREQ("CREATE", POD("{\"containers\":[]}")), ADM_OK, 0, NULL,
         NULL, POD("{\"containers\":[],\"tolerations\":[" NR300 "," UR300 "]}")},
        {"update too", 'm', PODREQ("UPDATE", POD("{\"tolerations\":[]}")), ADM_OK, 0, NULL, NULL,
         POD("{\"tolerations\":[" NR300 "," UR300 "]}")},
        {"dry run mutates the same (kube admits dry runs in full)",
         'm',
         {.operation = "CREATE",
          .resource = "pods",
          .kind = "Pod",
          .name = "web-1",
          .object = POD("{}"),
          .dry_run = true},
         ADM_OK,
         0,
         NULL,
         NULL,
         POD("{\"tolerations\":[" NR300 "," UR300 "]}")},
        {"keeps an existing not-ready toleration", 'm',
         PODREQ("CREATE",
                POD("{\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
                    "\"effect\":\"NoExecute\",\"tolerationSeconds\":10}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
             "\"effect\":\"NoExecute\",\"tolerationSeconds\":10}," UR300 "]}")},
        /* the pod's other members kept as they are, a null list replaced where it stands, a pod
           without spec given one: what the mutable form did, now made by one edit */
        {"a null list filled in place", 'm',
         PODREQ("CREATE", POD("{\"tolerations\":null,\"containers\":[{\"name\":\"c\"}]}")), ADM_OK, 0, NULL,
         NULL, POD("{\"tolerations\":[" NR300 "," UR300 "],\"containers\":[{\"name\":\"c\"}]}")},
        {"a null spec filled in place", 'm',
         PODREQ("CREATE", "{\"spec\":null,\"metadata\":{\"name\":\"web-1\"}}"), ADM_OK, 0, NULL, NULL,
         "{\"spec\":{\"tolerations\":[" NR300 "," UR300 "]},\"metadata\":{\"name\":\"web-1\"}}"},
        {"no spec: one appended", 'm', PODREQ("CREATE", "{\"metadata\":{\"name\":\"web-1\"}}"), ADM_OK, 0,
         NULL, NULL, "{\"metadata\":{\"name\":\"web-1\"},\"spec\":{\"tolerations\":[" NR300 "," UR300 "]}}"},
        {"a list that is not one cannot take them", 'm', PODREQ("CREATE", POD("{\"tolerations\":{}}")),
         ADM_ENOMEM, 0, NULL, NULL, NULL},
        {"empty key tolerates both", 'm',
         PODREQ("CREATE", POD("{\"tolerations\":[{\"operator\":\"Exists\"}]}")), ADM_OK, 0, NULL, NULL, NULL},
        {"empty effect counts (operator and value ignored)", 'm',
         PODREQ("CREATE",
                POD("{\"tolerations\":[{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Equal\","
                    "\"value\":\"x\"}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"tolerations\":[{\"key\":\"node.kubernetes.io/"
             "unreachable\",\"operator\":\"Equal\",\"value\":\"x\"}," NR300 "]}")},
        {"NoSchedule does not count", 'm',
         PODREQ("CREATE", POD("{\"tolerations\":[{\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"tolerations\":[{\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}," NR300 "," UR300 "]}")},
        {"subresource skipped",
         'm',
         {.operation = "UPDATE",
          .resource = "pods",
          .sub_resource = "status",
          .kind = "Pod",
          .object = POD("{}")},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"other resource skipped",
         'm',
         {.operation = "CREATE", .resource = "configmaps", .kind = "ConfigMap", .object = "{}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"pods with another kind: 400",
         'm',
         {.operation = "CREATE", .resource = "pods", .kind = "Node", .object = "{}"},
         ADM_DECLINED,
         400,
         "BadRequest",
         "expected *api.Pod but got Node",
         NULL},
    };
    char *argv[] = {"admitd", "--default-not-ready-toleration-seconds=60",
                    "--default-unreachable-toleration-seconds", "0"};
    adm_options_action_t action;
    adm_options_t opts;
    char err[256];

    run_rows(&adm_plugin_default_toleration_seconds, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));

    /* The two flags, the plugin's own, from the command line. */
    adm_options_defaults(&opts);
    adm_plugin_declare_options(&opts);
    assert_int_equal(adm_options_parse(&opts, 4, argv, &action, err, sizeof(err)), 0);
    {
        static const row_t flag_rows[] = {
            {"flag values", 'm', PODREQ("CREATE", POD("{}")), ADM_OK, 0, NULL, NULL,
             POD("{\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
                 "\"effect\":\"NoExecute\",\"tolerationSeconds\":60},{\"key\":\"node.kubernetes.io/"
                 "unreachable\","
                 "\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":0}]}")},
        };
        run_rows(&adm_plugin_default_toleration_seconds, NULL, &opts, flag_rows, 1);
    }
}

/* ---- TaintNodesByCondition ---- */

static void test_taint_nodes_by_condition(void **state)
{
#define NODEREQ(op, obj)                                                                                     \
    {                                                                                                        \
        .operation = op, .resource = "nodes", .kind = "Node", .name = "n1", .object = obj                    \
    }
    static const row_t rows[] = {
        {"adds the taint", 'm', NODEREQ("CREATE", "{\"metadata\":{\"name\":\"n1\"}}"), ADM_OK, 0, NULL, NULL,
         "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\","
         "\"effect\":\"NoSchedule\"}]}}"},
        {"appends to existing taints", 'm',
         NODEREQ("CREATE", "{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"NoExecute\"}]}}"), ADM_OK, 0,
         NULL, NULL,
         "{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"NoExecute\"},{\"key\":\"node.kubernetes.io/"
         "not-ready\","
         "\"effect\":\"NoSchedule\"}]}}"},
        {"same key and effect kept, value ignored", 'm',
         NODEREQ("CREATE", "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"value\":\"x\","
                           "\"effect\":\"NoSchedule\"}]}}"),
         ADM_OK, 0, NULL, NULL, NULL},
        {"same key, other effect: added", 'm',
         NODEREQ(
             "CREATE",
             "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"}]}}"),
         ADM_OK, 0, NULL, NULL,
         "{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"},"
         "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]}}"},
        {"status subresource skipped",
         'm',
         {.operation = "CREATE",
          .resource = "nodes",
          .sub_resource = "status",
          .kind = "Node",
          .object = "{}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
    };
    run_rows(&adm_plugin_taint_nodes_by_condition, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));
    assert_int_equal(adm_plugin_taint_nodes_by_condition.operations, ADM_OPS_CREATE);
}

/* ---- StorageObjectInUseProtection ---- */

static void test_storage_object_in_use_protection(void **state)
{
    static const row_t rows[] = {
        {"pvc",
         'm',
         {.operation = "CREATE",
          .resource = "persistentvolumeclaims",
          .kind = "PersistentVolumeClaim",
          .object = "{\"metadata\":{\"name\":\"c\"}}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"kubernetes.io/pvc-protection\"]}}"},
        {"pv keeps other finalizers",
         'm',
         {.operation = "CREATE",
          .resource = "persistentvolumes",
          .kind = "PersistentVolume",
          .object = "{\"metadata\":{\"finalizers\":[\"x\"]}}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         "{\"metadata\":{\"finalizers\":[\"x\",\"kubernetes.io/pv-protection\"]}}"},
        {"already there",
         'm',
         {.operation = "CREATE",
          .resource = "persistentvolumes",
          .kind = "PersistentVolume",
          .object = "{\"metadata\":{\"finalizers\":[\"kubernetes.io/pv-protection\"]}}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"volumeattributesclass",
         'm',
         {.operation = "CREATE",
          .group = "storage.k8s.io",
          .resource = "volumeattributesclasses",
          .kind = "VolumeAttributesClass",
          .object = "{}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         "{\"metadata\":{\"finalizers\":[\"kubernetes.io/vac-protection\"]}}"},
        {"other resources untouched",
         'm',
         {.operation = "CREATE", .resource = "configmaps", .kind = "ConfigMap", .object = "{}"},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
    };
    run_rows(&adm_plugin_storage_object_in_use_protection, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));
    assert_int_equal(adm_plugin_storage_object_in_use_protection.operations, ADM_OPS_CREATE);
}

/* ---- AlwaysPullImages ---- */

static void test_always_pull_images(void **state)
{
    static const row_t rows[] = {
        {"every container kind", 'm',
         PODREQ("CREATE",
                POD("{\"initContainers\":[{\"name\":\"i\",\"image\":\"a\",\"imagePullPolicy\":\"Never\"}],"
                    "\"containers\":[{\"name\":\"c\",\"image\":\"b\"}],"
                    "\"ephemeralContainers\":[{\"name\":\"e\",\"image\":\"c\",\"imagePullPolicy\":"
                    "\"IfNotPresent\"}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"initContainers\":[{\"name\":\"i\",\"image\":\"a\",\"imagePullPolicy\":\"Always\"}],"
             "\"containers\":[{\"name\":\"c\",\"image\":\"b\",\"imagePullPolicy\":\"Always\"}],"
             "\"ephemeralContainers\":[{\"name\":\"e\",\"image\":\"c\",\"imagePullPolicy\":\"Always\"}]}")},
        {"update with a new image",
         'm',
         {.operation = "UPDATE",
          .resource = "pods",
          .kind = "Pod",
          .name = "web-1",
          .object = POD("{\"containers\":[{\"image\":\"new\",\"imagePullPolicy\":\"Never\"}]}"),
          .old_object = POD("{\"containers\":[{\"image\":\"old\",\"imagePullPolicy\":\"Never\"}]}")},
         ADM_OK,
         0,
         NULL,
         NULL,
         POD("{\"containers\":[{\"image\":\"new\",\"imagePullPolicy\":\"Always\"}]}")},
        {"update without a new image is skipped",
         'm',
         {.operation = "UPDATE",
          .resource = "pods",
          .kind = "Pod",
          .name = "web-1",
          .object = POD("{\"containers\":[{\"image\":\"old\",\"imagePullPolicy\":\"Never\"}]}"),
          .old_object = POD("{\"initContainers\":[{\"image\":\"old\"}]}")},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"ephemeralcontainers subresource is not touched",
         'm',
         {.operation = "UPDATE",
          .resource = "pods",
          .sub_resource = "ephemeralcontainers",
          .kind = "Pod",
          .object = POD("{\"ephemeralContainers\":[{\"image\":\"x\"}]}")},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"not a pod: 400",
         'm',
         {.operation = "CREATE", .resource = "pods", .kind = "Service", .object = "{}"},
         ADM_DECLINED,
         400,
         "BadRequest",
         "Resource was marked with kind Pod but was unable to be converted",
         NULL},
        {"validate: all Always", 'v',
         PODREQ("CREATE", POD("{\"containers\":[{\"imagePullPolicy\":\"Always\"}]}")), ADM_OK, 0, NULL, NULL,
         NULL},
        {"validate: one offender, 500 without reason", 'v',
         PODREQ("CREATE",
                POD("{\"containers\":[{\"imagePullPolicy\":\"Always\"},{\"imagePullPolicy\":\"Never\"}]}")),
         ADM_DECLINED, 500, NULL,
         "pods \"web-1\" is forbidden: spec.containers[1].imagePullPolicy: Unsupported value: \"Never\": "
         "supported "
         "values: \"Always\"",
         NULL},
        {"validate: several offenders aggregate",
         'v',
         {.operation = "CREATE",
          .resource = "pods",
          .kind = "Pod",
          .object = "{\"metadata\":{\"generateName\":\"web-\"},\"spec\":{\"initContainers\":[{}],"
                    "\"ephemeralContainers\":[{\"imagePullPolicy\":\"IfNotPresent\"}]}}"},
         ADM_DECLINED,
         500,
         NULL,
         "[pods \"web-\" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: \"\": "
         "supported "
         "values: \"Always\", pods \"web-\" is forbidden: spec.ephemeralContainers[0].imagePullPolicy: "
         "Unsupported "
         "value: \"IfNotPresent\": supported values: \"Always\"]",
         NULL},
    };
    run_rows(&adm_plugin_always_pull_images, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));
    /* DELETE and CONNECT never reach it: the chain filters on these bits (tested in test-chain). */
    assert_int_equal(adm_plugin_always_pull_images.operations, ADM_OPS_CREATE | ADM_OPS_UPDATE);
}

/* ---- ExtendedResourceToleration ---- */

static void test_extended_resource_toleration(void **state)
{
#define GPU_TOL(k) "{\"key\":\"" k "\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}"
    static const row_t rows[] = {
        {"sorted, deduplicated, init containers too", 'm',
         PODREQ(
             "CREATE",
             POD("{\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"1\"}}},"
                 "{\"resources\":{\"requests\":{\"example.com/fpga\":\"1\",\"nvidia.com/gpu\":\"2\"}}}],"
                 "\"initContainers\":[{\"resources\":{\"requests\":{\"acme.io/x\":\"1\"}}}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"1\"}}},"
             "{\"resources\":{\"requests\":{\"example.com/fpga\":\"1\",\"nvidia.com/gpu\":\"2\"}}}],"
             "\"initContainers\":[{\"resources\":{\"requests\":{\"acme.io/x\":\"1\"}}}],"
             "\"tolerations\":[" GPU_TOL("acme.io/x") "," GPU_TOL("example.com/fpga") "," GPU_TOL(
                 "nvidia.com/gpu") "]}")},
        {"native and kubernetes.io resources are not extended", 'm',
         PODREQ(
             "CREATE",
             POD("{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1\",\"kubernetes.io/x\":\"1\","
                 "\"hugepages-2Mi\":\"1\",\"requests.a/b\":\"1\",\"Bad_Prefix/x\":\"1\"}}}]}")),
         ADM_OK, 0, NULL, NULL, NULL},
        {"ephemeral containers are ignored", 'm',
         PODREQ("CREATE",
                POD("{\"ephemeralContainers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}")),
         ADM_OK, 0, NULL, NULL, NULL},
        {"an equal toleration is kept, a differing match replaced", 'm',
         PODREQ("UPDATE",
                POD("{\"containers\":[{\"resources\":{\"requests\":{\"a.io/x\":\"1\",\"b.io/y\":\"1\"}}}],"
                    "\"tolerations\":[" GPU_TOL(
                        "a.io/x") ",{\"key\":\"b.io/y\",\"operator\":\"Exists\","
                                  "\"effect\":\"NoSchedule\",\"tolerationSeconds\":5}]}")),
         ADM_OK, 0, NULL, NULL,
         POD("{\"containers\":[{\"resources\":{\"requests\":{\"a.io/x\":\"1\",\"b.io/y\":\"1\"}}}],"
             "\"tolerations\":[" GPU_TOL("a.io/x") "," GPU_TOL("b.io/y") "]}")},
    };
    run_rows(&adm_plugin_extended_resource_toleration, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));
}

/* ---- LimitPodHardAntiAffinityTopology ---- */

#define ANTI(key)                                                                                            \
    "{\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"              \
    "\"topologyKey\":\"" key "\"}]}}}"

static void test_limit_pod_hard_anti_affinity(void **state)
{
    static const row_t rows[] = {
        {"hostname allowed", 'v', PODREQ("CREATE", POD(ANTI("kubernetes.io/hostname"))), ADM_OK, 0, NULL,
         NULL, NULL},
        {"zone forbidden", 'v', PODREQ("CREATE", POD(ANTI("topology.kubernetes.io/zone"))), ADM_DECLINED, 403,
         "Forbidden",
         "pods \"web-1\" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey "
         "topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed",
         NULL, "{\"name\":\"web-1\",\"kind\":\"pods\"}"},
        {"generateName pods print no name (pod.Name)",
         'v',
         {.operation = "CREATE",
          .resource = "pods",
          .kind = "Pod",
          .object = "{\"metadata\":{\"generateName\":\"w-\"},\"spec\":" ANTI("") "}"},
         ADM_DECLINED,
         403,
         "Forbidden",
         "pods is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey  but only key "
         "kubernetes.io/hostname is allowed",
         NULL,
         "{\"kind\":\"pods\"}"},
        {"preferred terms ignored", 'v',
         PODREQ("UPDATE",
                POD("{\"affinity\":{\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
                    "[{\"weight\":1,\"podAffinityTerm\":{\"topologyKey\":\"zone\"}}]}}}")),
         ADM_OK, 0, NULL, NULL, NULL},
    };
    run_rows(&adm_plugin_limit_pod_hard_anti_affinity_topology, NULL, NULL, rows,
             sizeof(rows) / sizeof(rows[0]));
}

/* ---- DenyServiceExternalIPs ---- */

static void test_deny_service_external_ips(void **state)
{
#define SVC(ips) "{\"metadata\":{\"name\":\"svc\"},\"spec\":{\"externalIPs\":" ips "}}"
#define SVCREQ(op, obj, old)                                                                                 \
    {                                                                                                        \
        .operation = op, .resource = "services", .kind = "Service", .namespace_ = "ns", .name = "svc",       \
        .object = obj, .old_object = old                                                                     \
    }
    static const row_t rows[] = {
        {"none", 'v', SVCREQ("CREATE", SVC("[]"), NULL), ADM_OK, 0, NULL, NULL, NULL},
        {"create with one", 'v', SVCREQ("CREATE", SVC("[\"1.2.3.4\"]"), NULL), ADM_DECLINED, 403, "Forbidden",
         "services \"svc\" is forbidden: Use of external IPs is denied by admission control", NULL,
         "{\"name\":\"svc\",\"kind\":\"services\"}"},
        {"update keeping a subset", 'v',
         SVCREQ("UPDATE", SVC("[\"1.2.3.4\"]"), SVC("[\"5.6.7.8\",\"1.2.3.4\"]")), ADM_OK, 0, NULL, NULL,
         NULL},
        {"update adding one", 'v', SVCREQ("UPDATE", SVC("[\"1.2.3.4\",\"9.9.9.9\"]"), SVC("[\"1.2.3.4\"]")),
         ADM_DECLINED, 403, "Forbidden",
         "services \"svc\" is forbidden: Use of external IPs is denied by admission control", NULL, NULL},
        {"dry run rejects the same",
         'v',
         {.operation = "CREATE",
          .resource = "services",
          .kind = "Service",
          .name = "svc",
          .object = SVC("[\"1.2.3.4\"]"),
          .dry_run = true},
         ADM_DECLINED,
         403,
         "Forbidden",
         "services \"svc\" is forbidden: Use of external IPs is denied by admission control",
         NULL,
         NULL},
        {"status subresource ignored",
         'v',
         {.operation = "UPDATE",
          .resource = "services",
          .sub_resource = "status",
          .kind = "Service",
          .object = SVC("[\"1.1.1.1\"]")},
         ADM_OK,
         0,
         NULL,
         NULL,
         NULL},
        {"wrong kind: internal error",
         'v',
         {.operation = "CREATE", .resource = "services", .kind = "Pod", .object = "{}"},
         ADM_DECLINED,
         500,
         "InternalError",
         "Internal error occurred: Expected Service resource, got: /v1, Kind=Pod",
         NULL,
         "{\"causes\":[{\"message\":\"Expected Service resource, got: /v1, Kind=Pod\"}]}"},
    };
    run_rows(&adm_plugin_deny_service_external_ips, NULL, NULL, rows, sizeof(rows) / sizeof(rows[0]));
}

/* ---- AlwaysDeny / AlwaysAdmit ---- */

static void test_always_deny_and_admit(void **state)
{
    static const row_t deny_rows[] = {
        {"create", 'm', PODREQ("CREATE", POD("{}")), ADM_DECLINED, 403, "Forbidden",
         "pods \"web-1\" is forbidden: admission control is denying all modifications", NULL, NULL},
        {"connect, core subresource",
         'v',
         {.operation = "CONNECT",
          .resource = "pods",
          .sub_resource = "exec",
          .kind = "PodExecOptions",
          .name = "p"},
         ADM_DECLINED,
         403,
         "Forbidden",
         "pods \"p\" is forbidden: admission control is denying all modifications",
         NULL,
         NULL},
        {"generateName fallback in the mutating phase",
         'm',
         {.operation = "CREATE",
          .resource = "pods",
          .kind = "Pod",
          .object = "{\"metadata\":{\"generateName\":\"g-\"}}"},
         ADM_DECLINED,
         403,
         "Forbidden",
         "pods \"g-\" is forbidden: admission control is denying all modifications",
         NULL,
         "{\"name\":\"g-\",\"kind\":\"pods\"}"},
        {"no name at all: Unknown",
         'v',
         {.operation = "CREATE",
          .group = "apps",
          .resource = "deployments",
          .kind = "Deployment",
          .object = "{\"metadata\":{}}"},
         ADM_DECLINED,
         403,
         "Forbidden",
         "deployments.apps \"Unknown\" is forbidden: admission control is denying all modifications",
         NULL,
         "{\"name\":\"Unknown\",\"group\":\"apps\",\"kind\":\"deployments\"}"},
        {"Go quoting of odd names",
         'v',
         {.operation = "DELETE", .resource = "configmaps", .kind = "ConfigMap", .name = "a\\\"b\\u0001"},
         ADM_DECLINED,
         403,
         "Forbidden",
         "configmaps \"a\\\"b\\x01\" is forbidden: admission control is denying all modifications",
         NULL,
         NULL},
    };

    run_rows(&adm_plugin_always_deny, NULL, NULL, deny_rows, sizeof(deny_rows) / sizeof(deny_rows[0]));
    assert_int_equal(adm_plugin_always_deny.operations, ADM_OPS_ALL);
    assert_null(adm_plugin_always_admit.admit);
    assert_null(adm_plugin_always_admit.validate);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_toleration_seconds),
        cmocka_unit_test(test_taint_nodes_by_condition),
        cmocka_unit_test(test_storage_object_in_use_protection),
        cmocka_unit_test(test_always_pull_images),
        cmocka_unit_test(test_extended_resource_toleration),
        cmocka_unit_test(test_limit_pod_hard_anti_affinity),
        cmocka_unit_test(test_deny_service_external_ips),
        cmocka_unit_test(test_always_deny_and_admit),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

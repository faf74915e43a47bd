/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NodeRestriction, table by table: who counts as a node, mirror pods, pod status, evictions and
 * other pod subresources, Nodes and their labels, leases, CSINodes, ResourceSlices, kubelet CSRs
 * (made at run time with mbedTLS), service account tokens, PVC status and PodCertificateRequests.
 * Each row names the exact kube message it expects, or that the request is admitted.
 *
 * JSON in the tables is written with single quotes and turned into JSON before use.
 */
#include "adm/admission/admission.h"
#include "adm/admission/plugin.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/base64.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_csr.h>

typedef struct nr_case_s {
    const char *what;
    const char *op;    /* "CREATE" when NULL */
    const char *group; /* of the resource (and of the kind unless kind_group is set) */
    const char *resource;
    const char *sub;
    const char *kind_group; /* NULL: group */
    const char *kind;
    const char *ns;
    const char *name;
    const char *user;   /* NULL: system:node:n1 */
    const char *groups; /* NULL: ['system:nodes','system:authenticated'] */
    const char *object; /* NULL: none */
    const char *old;    /* NULL: none */
    const char *want;   /* NULL: admitted; else the exact message of the 403 */
} nr_case_t;

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

/* The text with single quotes turned into double quotes. */
static char *dq(adm_arena_t *a, const char *s)
{
    char *out = adm_arena_strndup(a, s, strlen(s));

    for (char *p = out; p != NULL && *p != '\0'; p++) {
        if (*p == '\'') {
            *p = '"';
        }
    }
    return out;
}

static const adm_plugin_t *plugin(void)
{
    const adm_plugin_info_t *info = adm_plugin_find("NodeRestriction");

    assert_non_null(info);
    assert_non_null(info->plugin);
    return info->plugin;
}

typedef struct nr_result_s {
    int rc;
    adm_status_t st;
    bool changed;
} nr_result_t;

static nr_result_t run(adm_arena_t *a, const nr_case_t *c)
{
    const char *body = adm_arena_printf(
        a,
        "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{'uid':'u-1',"
        "'kind':{'group':'%s','version':'v1','kind':'%s'},'resource':{'group':'%s','version':'v1','resource':"
        "'%s'},"
        "'subResource':'%s','name':'%s','namespace':'%s','operation':'%s',"
        "'userInfo':{'username':'%s','groups':%s},'object':%s,'oldObject':%s}}",
        c->kind_group != NULL ? c->kind_group : or_empty(c->group), or_empty(c->kind), or_empty(c->group),
        or_empty(c->resource), or_empty(c->sub), or_empty(c->name), or_empty(c->ns),
        c->op != NULL ? c->op : "CREATE", c->user != NULL ? c->user : "system:node:n1",
        c->groups != NULL ? c->groups : "['system:nodes','system:authenticated']",
        c->object != NULL ? c->object : "null", c->old != NULL ? c->old : "null");
    adm_review_request_t *req = adm_arena_calloc(a, 1, sizeof(*req));
    adm_attrs_t attrs;
    nr_result_t res;
    const char *problem = NULL;
    char *json;

    assert_non_null(body);
    json = dq(a, body);
    if (adm_review_decode(a, json, strlen(json), req, &problem) != 0) {
        fail_msg("%s: the test request does not decode: %s\n%s", c->what, problem, json);
    }
    memset(&res, 0, sizeof(res));
    adm_attrs_init(&attrs, req, a);
    res.rc = plugin()->admit(NULL, &attrs, &res.st);
    res.changed = attrs.changed;
    return res;
}

/* Runs every row, reports each one that does not behave, and fails when any did not. */
static void run_table(const nr_case_t *rows, size_t n)
{
    size_t bad = 0;

    for (size_t i = 0; i < n; i++) {
        const nr_case_t *c = &rows[i];
        adm_arena_t *a = adm_arena_create(1 << 16);
        nr_result_t res;
        bool ok;

        assert_non_null(a);
        res = run(a, c);
        if (c->want == NULL) {
            ok = res.rc == ADM_OK;
        } else {
            ok = res.rc == ADM_DECLINED && res.st.code == 403 && res.st.reason != NULL &&
                 strcmp(res.st.reason, "Forbidden") == 0 && res.st.message != NULL &&
                 strcmp(res.st.message, c->want) == 0;
        }
        if (res.changed) {
            ok = false; /* NodeRestriction never changes the object */
        }
        if (!ok) {
            print_error("row %zu (%s):\n  want: %s\n  got:  rc=%d code=%d %s%s\n", i, c->what,
                        c->want != NULL ? c->want : "(admitted)", res.rc, (int)res.st.code,
                        res.rc == ADM_DECLINED && res.st.message != NULL ? res.st.message : "",
                        res.changed ? " (object changed)" : "");
            bad++;
        }
        adm_arena_destroy(a);
    }
    assert_int_equal(bad, 0);
}

#define RUN_TABLE(rows) run_table((rows), sizeof(rows) / sizeof((rows)[0]))

/* ---- pods ---- */

#define OWNER_OK "{'apiVersion':'v1','kind':'Node','name':'n1','uid':'u1','controller':true}"
#define OWNERS(list) ",'ownerReferences':[" list "]"
#define MIRROR_ANN ",'annotations':{'kubernetes.io/config.mirror':'x'}"
#define POD_OBJ(ann, owners, node, spec)                                                                     \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p1','namespace':'ns'" ann owners "},"               \
    "'spec':{'nodeName':'" node "','containers':[{'name':'c','image':'i'}]" spec "}}"
#define MIRROR(spec) POD_OBJ(MIRROR_ANN, OWNERS(OWNER_OK), "n1", spec)
#define VOL(v) ",'volumes':[{'name':'v'," v "}]"
#define POD_CREATE .resource = "pods", .kind = "Pod", .ns = "ns"
#define P1 "pods \"p1\" is forbidden: "
#define REFS P1 "node \"n1\" can not create pods that reference "

static void test_who_is_a_node(void **state)
{
    static const nr_case_t rows[] = {
        {"node user without system:nodes", .op = "UPDATE", POD_CREATE, .name = "p1",
         .groups = "['system:authenticated']", .object = MIRROR(""), .old = MIRROR("")},
        {"system:nodes member without the node prefix", .op = "UPDATE", POD_CREATE, .name = "p1",
         .user = "alice", .groups = "['system:nodes']", .object = MIRROR(""), .old = MIRROR("")},
        {"ordinary user creates a plain pod", POD_CREATE, .user = "alice", .groups = "[]",
         .object = POD_OBJ("", "", "n2", ",'serviceAccountName':'sa'")},
        {"empty node name", .op = "UPDATE", POD_CREATE, .name = "p1",
         .user = "system:node:", .object = MIRROR(""), .old = MIRROR(""),
         .want = P1 "could not determine node from user \"system:node:\""},
        {"a node updates a pod", .op = "UPDATE", POD_CREATE, .name = "p1", .object = MIRROR(""),
         .old = MIRROR(""),
         .want = P1 "unexpected operation \"UPDATE\", node \"n1\" can only create and delete mirror pods"},
        {"a node creates an object the plugin does not restrict", .resource = "configmaps",
         .kind = "ConfigMap", .ns = "ns", .object = "{'metadata':{'name':'cm'}}"},
    };

    RUN_TABLE(rows);
}

static void test_mirror_pods(void **state)
{
    static const nr_case_t rows[] = {
        {"a valid mirror pod", POD_CREATE, .object = MIRROR("")},
        {"mirror annotation with an empty value", POD_CREATE,
         .object = POD_OBJ(",'annotations':{'kubernetes.io/config.mirror':''}", OWNERS(OWNER_OK), "n1", "")},
        {"not a mirror pod", POD_CREATE, .object = POD_OBJ("", OWNERS(OWNER_OK), "n1", ""),
         .want =
             P1 "pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create "
                "mirror pods"},
        {"bound to another node", POD_CREATE, .object = POD_OBJ(MIRROR_ANN, OWNERS(OWNER_OK), "n2", ""),
         .want = P1 "node \"n1\" can only create pods with spec.nodeName set to itself"},
        {"not bound", POD_CREATE, .object = POD_OBJ(MIRROR_ANN, OWNERS(OWNER_OK), "", ""),
         .want = P1 "node \"n1\" can only create pods with spec.nodeName set to itself"},
        {"two owners", POD_CREATE, .object = POD_OBJ(MIRROR_ANN, OWNERS(OWNER_OK "," OWNER_OK), "n1", ""),
         .want = P1 "node \"n1\" can only create pods with a single owner reference set to itself"},
        {"no owner", POD_CREATE, .object = POD_OBJ(MIRROR_ANN, "", "n1", ""),
         .want = P1 "node \"n1\" can only create pods with an owner reference set to itself"},
        {"owner apiVersion", POD_CREATE,
         .object = POD_OBJ(
             MIRROR_ANN, OWNERS("{'apiVersion':'v2','kind':'Node','name':'n1','controller':true}"), "n1", ""),
         .want = P1 "node \"n1\" can only create pods with an owner reference set to itself"},
        {"owner kind", POD_CREATE,
         .object = POD_OBJ(
             MIRROR_ANN, OWNERS("{'apiVersion':'v1','kind':'Pod','name':'n1','controller':true}"), "n1", ""),
         .want = P1 "node \"n1\" can only create pods with an owner reference set to itself"},
        {"owner name", POD_CREATE,
         .object = POD_OBJ(
             MIRROR_ANN, OWNERS("{'apiVersion':'v1','kind':'Node','name':'n2','controller':true}"), "n1", ""),
         .want = P1 "node \"n1\" can only create pods with an owner reference set to itself"},
        {"owner not controller", POD_CREATE,
         .object = POD_OBJ(MIRROR_ANN, OWNERS("{'apiVersion':'v1','kind':'Node','name':'n1'}"), "n1", ""),
         .want = P1 "node \"n1\" can only create pods with a controller owner reference set to itself"},
        {"owner controller false", POD_CREATE,
         .object =
             POD_OBJ(MIRROR_ANN, OWNERS("{'apiVersion':'v1','kind':'Node','name':'n1','controller':false}"),
                     "n1", ""),
         .want = P1 "node \"n1\" can only create pods with a controller owner reference set to itself"},
        {"blockOwnerDeletion true", POD_CREATE,
         .object = POD_OBJ(MIRROR_ANN,
                           OWNERS("{'apiVersion':'v1','kind':'Node','name':'n1','controller':true,"
                                  "'blockOwnerDeletion':true}"),
                           "n1", ""),
         .want = P1 "node \"n1\" must not set blockOwnerDeletion on an owner reference"},
        {"blockOwnerDeletion false", POD_CREATE,
         .object = POD_OBJ(MIRROR_ANN,
                           OWNERS("{'apiVersion':'v1','kind':'Node','name':'n1','controller':true,"
                                  "'blockOwnerDeletion':false}"),
                           "n1", "")},
        {"owner uid is not checked (needs cluster state)", POD_CREATE,
         .object =
             POD_OBJ(MIRROR_ANN,
                     OWNERS("{'apiVersion':'v1','kind':'Node','name':'n1','uid':'other','controller':true}"),
                     "n1", "")},
        {"owner checked before references", POD_CREATE,
         .object = POD_OBJ(MIRROR_ANN, "", "n1", ",'serviceAccountName':'sa'"),
         .want = P1 "node \"n1\" can only create pods with an owner reference set to itself"},
        {"not a Pod", .resource = "pods", .kind = "Node", .ns = "ns", .object = MIRROR(""),
         .want = P1 "unexpected type *core.Node"},
    };

    RUN_TABLE(rows);
}

static void test_mirror_pod_references(void **state)
{
    static const nr_case_t rows[] = {
        {"service account", POD_CREATE, .object = MIRROR(",'serviceAccountName':'sa'"),
         .want = REFS "serviceaccounts"},
        {"image pull secret", POD_CREATE, .object = MIRROR(",'imagePullSecrets':[{'name':'s'}]"),
         .want = REFS "secrets"},
        {"image pull secret without a name", POD_CREATE,
         .object = MIRROR(",'imagePullSecrets':[{'name':''}]")},
        {"env secretKeyRef in an init container", POD_CREATE,
         .object = MIRROR(",'initContainers':[{'name':'i','env':[{'name':'E','valueFrom':{'secretKeyRef':"
                          "{'name':'s','key':'k'}}}]}]"),
         .want = REFS "secrets"},
        {"envFrom secretRef in an ephemeral container", POD_CREATE,
         .object = MIRROR(",'ephemeralContainers':[{'name':'e','envFrom':[{'secretRef':{'name':'s'}}]}]"),
         .want = REFS "secrets"},
        {"env configMapKeyRef", POD_CREATE,
         .object = MIRROR(",'initContainers':[{'name':'i','env':[{'name':'E','valueFrom':{'configMapKeyRef':"
                          "{'name':'c','key':'k'}}}]}]"),
         .want = REFS "configmaps"},
        {"envFrom configMapRef", POD_CREATE,
         .object = MIRROR(",'initContainers':[{'name':'i','envFrom':[{'configMapRef':{'name':'c'}}]}]"),
         .want = REFS "configmaps"},
        {"secret before configmap", POD_CREATE,
         .object =
             MIRROR(",'imagePullSecrets':[{'name':'s'}],'volumes':[{'name':'v','configMap':{'name':'c'}}]"),
         .want = REFS "secrets"},
        {"service account before secret", POD_CREATE,
         .object = MIRROR(",'serviceAccountName':'sa','imagePullSecrets':[{'name':'s'}]"),
         .want = REFS "serviceaccounts"},
        {"secret volume", POD_CREATE, .object = MIRROR(VOL("'secret':{'secretName':'s'}")),
         .want = REFS "secrets"},
        {"secret volume without a name", POD_CREATE, .object = MIRROR(VOL("'secret':{}")),
         .want = REFS "secrets (via secret volumes)"},
        {"configMap volume", POD_CREATE, .object = MIRROR(VOL("'configMap':{'name':'c'}")),
         .want = REFS "configmaps"},
        {"configMap volume without a name", POD_CREATE, .object = MIRROR(VOL("'configMap':{}")),
         .want = REFS "configmaps (via configmap volumes)"},
        {"projected secret", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'secret':{'name':'s'}}]}")), .want = REFS "secrets"},
        {"projected configMap", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'configMap':{'name':'c'}}]}")),
         .want = REFS "configmaps"},
        {"projected configMap without a name", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'configMap':{}}]}")),
         .want = REFS "configmaps (via projected volumes)"},
        {"projected service account token", POD_CREATE,
         .object =
             MIRROR(VOL("'projected':{'sources':[{'downwardAPI':{}},{'serviceAccountToken':{'path':'t'}}]}")),
         .want = REFS "serviceaccounts (via projected volumes)"},
        {"projected cluster trust bundle", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'clusterTrustBundle':{'name':'b','path':'p'}}]}")),
         .want = REFS "clustertrustbundles"},
        {"projected pod certificate", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'podCertificate':{'signerName':'x/y'}}]}")),
         .want = REFS "podcertificates"},
        {"projected downward API only", POD_CREATE,
         .object = MIRROR(VOL("'projected':{'sources':[{'downwardAPI':{'items':[]}}]}"))},
        {"projected unknown source", POD_CREATE, .object = MIRROR(VOL("'projected':{'sources':[{}]}")),
         .want =
             P1 "error checking mirror pod for API references: unknown source for projected volume \"v\""},
        {"CSI volume", POD_CREATE, .object = MIRROR(VOL("'csi':{'driver':'d'}")),
         .want = REFS "csidrivers (via CSI volumes)"},
        {"CSI volume with a publish secret", POD_CREATE,
         .object = MIRROR(VOL("'csi':{'driver':'d','nodePublishSecretRef':{'name':'s'}}")),
         .want = REFS "secrets"},
        {"glusterfs volume", POD_CREATE, .object = MIRROR(VOL("'glusterfs':{'endpoints':'e','path':'p'}")),
         .want = REFS "endpoints (via glusterFS volumes)"},
        {"PVC volume", POD_CREATE, .object = MIRROR(VOL("'persistentVolumeClaim':{'claimName':'c'}")),
         .want = REFS "persistentvolumeclaims"},
        {"ephemeral volume", POD_CREATE,
         .object = MIRROR(VOL("'ephemeral':{'volumeClaimTemplate':{'spec':{}}}")),
         .want = REFS "persistentvolumeclaims (via ephemeral volumes)"},
        {"azureFile volume", POD_CREATE,
         .object = MIRROR(VOL("'azureFile':{'secretName':'s','shareName':'x'}")), .want = REFS "secrets"},
        {"azureFile volume without a secret", POD_CREATE,
         .object = MIRROR(VOL("'azureFile':{'shareName':'x'}")),
         .want = REFS "secrets (via azureFile volumes)"},
        {"cephfs secretRef", POD_CREATE,
         .object = MIRROR(VOL("'cephfs':{'monitors':['m'],'secretRef':{'name':'s'}}")),
         .want = REFS "secrets"},
        {"rbd secretRef", POD_CREATE, .object = MIRROR(VOL("'rbd':{'image':'i','secretRef':{'name':'s'}}")),
         .want = REFS "secrets"},
        {"iscsi secretRef", POD_CREATE, .object = MIRROR(VOL("'iscsi':{'iqn':'q','secretRef':{'name':'s'}}")),
         .want = REFS "secrets"},
        {"flexVolume secretRef", POD_CREATE,
         .object = MIRROR(VOL("'flexVolume':{'driver':'d','secretRef':{'name':'s'}}")),
         .want = REFS "secrets"},
        {"cephfs without a secret", POD_CREATE, .object = MIRROR(VOL("'cephfs':{'monitors':['m']}"))},
        {"the first source set decides, as kube's switch", POD_CREATE,
         .object = MIRROR(VOL("'cephfs':{'monitors':['m']},'secret':{'secretName':'s'}"))},
        {"resource claims", POD_CREATE,
         .object = MIRROR(",'resourceClaims':[{'name':'r','resourceClaimName':'c'}]"),
         .want = REFS "resourceclaims"},
        {"resource claims before volumes", POD_CREATE,
         .object =
             MIRROR(",'resourceClaims':[{'name':'r'}]" VOL("'persistentVolumeClaim':{'claimName':'c'}")),
         .want = REFS "resourceclaims"},
        {"local volumes", POD_CREATE,
         .object = MIRROR(",'volumes':[{'name':'a','hostPath':{'path':'/x'}},{'name':'b','emptyDir':{}},"
                          "{'name':'c','image':{'reference':'r'}},{'name':'d','downwardAPI':{}}]")},
        {"a volume with no source is a defaulted emptyDir", POD_CREATE,
         .object = MIRROR(",'volumes':[{'name':'v'}]")},
        {"unknown volume type", POD_CREATE, .object = MIRROR(VOL("'fancy':{}")),
         .want = P1 "error checking mirror pod for API references: unknown volume type for volume  \"v\""},
    };

    RUN_TABLE(rows);
}

#define STATUS_POD(node, labels, status)                                                                     \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p1','namespace':'ns'" labels                        \
    "},'spec':{'nodeName':'" node "'},'status':{'phase':'Running'" status "}}"
#define POD_STATUS                                                                                           \
    .op = "UPDATE", .resource = "pods", .sub = "status", .kind = "Pod", .ns = "ns", .name = "p1"
#define CLAIMS(list) ",'resourceClaimStatuses':[" list "]"
#define EXT(s) ",'extendedResourceClaimStatus':" s
#define EXT_A                                                                                                \
    "{'resourceClaimName':'x','requestMappings':[{'containerName':'c','resourceName':'r','requestName':'q'}" \
    "]}"

static void test_pod_status(void **state)
{
    static const nr_case_t rows[] = {
        {"own pod, status changed", POD_STATUS, .old = STATUS_POD("n1", ",'labels':{'a':'1'}", ""),
         .object = "{'metadata':{'name':'p1','labels':{'a':'1'}},'spec':{'nodeName':'n1'},'status':{'phase':'"
                   "Failed'}}"},
        {"another node's pod", POD_STATUS, .old = STATUS_POD("n2", "", ""),
         .object = STATUS_POD("n1", "", ""),
         .want = P1 "node \"n1\" can only update pod status for pods with spec.nodeName set to itself"},
        {"label changed", POD_STATUS, .old = STATUS_POD("n1", ",'labels':{'a':'1'}", ""),
         .object = STATUS_POD("n1", ",'labels':{'a':'2'}", ""),
         .want = P1 "node \"n1\" cannot update labels through pod status"},
        {"label added", POD_STATUS, .old = STATUS_POD("n1", "", ""),
         .object = STATUS_POD("n1", ",'labels':{'a':'1'}", ""),
         .want = P1 "node \"n1\" cannot update labels through pod status"},
        {"empty labels equal absent ones", POD_STATUS, .old = STATUS_POD("n1", "", ""),
         .object = STATUS_POD("n1", ",'labels':{}", "")},
        {"claim status unchanged", POD_STATUS,
         .old = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':'c'}")),
         .object = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':'c'}"))},
        {"claim status renamed", POD_STATUS,
         .old = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':'c'}")),
         .object = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':'d'}")),
         .want = P1 "node \"n1\" cannot update resource claim statues"},
        {"claim status added", POD_STATUS, .old = STATUS_POD("n1", "", ""),
         .object = STATUS_POD("n1", "", CLAIMS("{'name':'a'}")),
         .want = P1 "node \"n1\" cannot update resource claim statues"},
        {"claim name null equals absent", POD_STATUS, .old = STATUS_POD("n1", "", CLAIMS("{'name':'a'}")),
         .object = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':null}"))},
        {"claim name empty differs from absent", POD_STATUS,
         .old = STATUS_POD("n1", "", CLAIMS("{'name':'a'}")),
         .object = STATUS_POD("n1", "", CLAIMS("{'name':'a','resourceClaimName':''}")),
         .want = P1 "node \"n1\" cannot update resource claim statues"},
        {"extended claim status unchanged", POD_STATUS, .old = STATUS_POD("n1", "", EXT(EXT_A)),
         .object = STATUS_POD("n1", "", EXT(EXT_A))},
        {"extended claim status added", POD_STATUS, .old = STATUS_POD("n1", "", ""),
         .object = STATUS_POD("n1", "", EXT(EXT_A)),
         .want = P1 "node \"n1\" cannot update extended resource claim status"},
        {"extended claim mapping changed", POD_STATUS, .old = STATUS_POD("n1", "", EXT(EXT_A)),
         .object = STATUS_POD(
             "n1", "",
             EXT("{'resourceClaimName':'x','requestMappings':[{'containerName':'c','resourceName':'r',"
                 "'requestName':'other'}]}")),
         .want = P1 "node \"n1\" cannot update extended resource claim status"},
        {"delete through status", .op = "DELETE", .resource = "pods", .sub = "status", .kind = "Pod",
         .ns = "ns", .name = "p1", .old = STATUS_POD("n1", "", ""),
         .want = P1 "unexpected operation \"DELETE\""},
        {"no old pod", POD_STATUS, .object = STATUS_POD("n1", "", ""), .want = P1 "unexpected type <nil>"},
    };

    RUN_TABLE(rows);
}

#define EVICTION .resource = "pods", .sub = "eviction", .kind_group = "policy", .kind = "Eviction", .ns = "ns"
#define EVICT_OBJ(name)                                                                                      \
    "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'" name "','namespace':'ns'}}"

static void test_pod_delete_eviction_subresources(void **state)
{
    static const nr_case_t rows[] = {
        {"delete own pod (oldObject)", .op = "DELETE", POD_CREATE, .name = "p1",
         .old = STATUS_POD("n1", "", "")},
        {"delete another node's pod", .op = "DELETE", POD_CREATE, .name = "p1",
         .old = STATUS_POD("n2", "", ""),
         .want = P1 "node \"n1\" can only delete pods with spec.nodeName set to itself"},
        {"delete without oldObject", .op = "DELETE", POD_CREATE, .name = "p1",
         .want = P1
         "admitd cannot verify without cluster state that the pod is bound to node \"n1\": the review has "
         "no oldObject"},
        {"evict (needs cluster state)", EVICTION, .name = "p1", .object = EVICT_OBJ("p1"),
         .want = P1 "admitd cannot verify without cluster state that pod \"p1\" is bound to node \"n1\""},
        {"evict, pod named by the object", EVICTION, .object = EVICT_OBJ("p2"),
         .want = "pods \"p2\" is forbidden: admitd cannot verify without cluster state that pod \"p2\" is "
                 "bound to "
                 "node \"n1\""},
        {"evict, pod named nowhere", EVICTION,
         .object = "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{}}",
         .want = "pods \"Unknown\" is forbidden: could not determine pod from request data"},
        {"evict with another type", .resource = "pods", .sub = "eviction", .kind = "Pod", .ns = "ns",
         .name = "p1", .object = STATUS_POD("n1", "", ""), .want = P1 "unexpected type *core.Pod"},
        {"update an eviction", .op = "UPDATE", EVICTION, .name = "p1", .object = EVICT_OBJ("p1"),
         .old = EVICT_OBJ("p1"), .want = P1 "unexpected operation UPDATE"},
        {"other subresource", .op = "UPDATE", .resource = "pods", .sub = "ephemeralcontainers", .kind = "Pod",
         .ns = "ns", .name = "p1", .object = STATUS_POD("n1", "", ""), .old = STATUS_POD("n1", "", ""),
         .want = P1
         "unexpected pod subresource \"ephemeralcontainers\", only 'status' and 'eviction' are allowed"},
        {"binding subresource", POD_CREATE, .sub = "binding", .name = "p1",
         .object = "{'metadata':{'name':'p1'},'target':{'kind':'Node','name':'n1'}}",
         .want = P1 "unexpected pod subresource \"binding\", only 'status' and 'eviction' are allowed"},
    };

    RUN_TABLE(rows);
}

/* ---- nodes ---- */

#define NODE_OBJ(name, labels, spec)                                                                         \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'" name "'" labels "},'spec':{" spec "}}"
#define NODE_OWNED(owner)                                                                                    \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n1','ownerReferences':[" owner "]},'spec':{}}"
#define NODES .resource = "nodes", .kind = "Node"
#define NODE_N1 "nodes \"n1\" is forbidden: "
#define CONFIG_A "'configSource':{'configMap':{'name':'a','namespace':'kube-system','kubeletConfigKey':'k'}}"
#define CONFIG_B "'configSource':{'configMap':{'name':'b','namespace':'kube-system','kubeletConfigKey':'k'}}"
#define TAINT_A "'taints':[{'key':'a','effect':'NoSchedule'}]"
#define OK_LABELS                                                                                            \
    ",'labels':{'kubernetes.io/hostname':'n1','kubernetes.io/os':'linux','kubernetes.io/arch':'amd64',"      \
    "'beta.kubernetes.io/os':'linux','beta.kubernetes.io/arch':'amd64','beta.kubernetes.io/"                 \
    "instance-type':'m',"                                                                                    \
    "'node.kubernetes.io/instance-type':'m','topology.kubernetes.io/zone':'z','topology.kubernetes.io/"      \
    "region':'r',"                                                                                           \
    "'failure-domain.beta.kubernetes.io/zone':'z','failure-domain.beta.kubernetes.io/region':'r',"           \
    "'node.kubernetes.io/exclude-from-external-load-balancers':'','x.kubelet.kubernetes.io/y':'1',"          \
    "'sub.node.kubernetes.io/z':'1','example.com/a':'1','plain':'1','notkubernetes.io/b':'1'}"

static void test_nodes(void **state)
{
    static const nr_case_t rows[] = {
        {"register with kubelet labels", NODES, .name = "n1", .object = NODE_OBJ("n1", OK_LABELS, "")},
        {"register another node", NODES, .name = "n2", .object = NODE_OBJ("n2", "", ""),
         .want = "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""},
        {"register with a config source", NODES, .name = "n1", .object = NODE_OBJ("n1", "", CONFIG_A),
         .want = NODE_N1 "node \"n1\" is not allowed to create pods with a non-nil configSource"},
        {"register with forbidden labels", NODES, .name = "n1",
         .object = NODE_OBJ("n1",
                            ",'labels':{'node-restriction.kubernetes.io/a':'1','kubernetes.io/custom':'1',"
                            "'a.node-restriction.kubernetes.io/b':'1','foo.k8s.io/x':'1','k8s.io/y':'1',"
                            "'node.kubernetes.io/ok':'1','node-role.kubernetes.io/worker':''}",
                            ""),
         .want = NODE_N1
         "node \"n1\" is not allowed to set the following labels: a.node-restriction.kubernetes.io/b, "
         "foo.k8s.io/x, k8s.io/y, kubernetes.io/custom, node-restriction.kubernetes.io/a, "
         "node-role.kubernetes.io/worker"},
        {"register as another type", .resource = "nodes", .kind = "Pod", .name = "n1",
         .object = NODE_OBJ("n1", "", ""), .want = NODE_N1 "unexpected type *core.Pod"},
        {"update unchanged", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", OK_LABELS, TAINT_A), .old = NODE_OBJ("n1", OK_LABELS, TAINT_A)},
        {"update another node", .op = "UPDATE", NODES, .name = "n2", .object = NODE_OBJ("n2", "", ""),
         .old = NODE_OBJ("n2", "", ""),
         .want = "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""},
        {"status update of another node", .op = "UPDATE", NODES, .sub = "status", .name = "n2",
         .object = NODE_OBJ("n2", "", ""), .old = NODE_OBJ("n2", "", ""),
         .want = "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""},
        {"new config source", .op = "UPDATE", NODES, .name = "n1", .object = NODE_OBJ("n1", "", CONFIG_B),
         .old = NODE_OBJ("n1", "", CONFIG_A),
         .want = NODE_N1 "node \"n1\" is not allowed to update configSource to a new non-nil configSource"},
        {"config source set where there was none", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", "", CONFIG_A), .old = NODE_OBJ("n1", "", ""),
         .want = NODE_N1 "node \"n1\" is not allowed to update configSource to a new non-nil configSource"},
        {"same config source", .op = "UPDATE", NODES, .name = "n1", .object = NODE_OBJ("n1", "", CONFIG_A),
         .old = NODE_OBJ("n1", "", CONFIG_A)},
        {"config source dropped", .op = "UPDATE", NODES, .name = "n1", .object = NODE_OBJ("n1", "", ""),
         .old = NODE_OBJ("n1", "", CONFIG_A)},
        {"taint removed", .op = "UPDATE", NODES, .sub = "status", .name = "n1",
         .object = NODE_OBJ("n1", "", ""), .old = NODE_OBJ("n1", "", TAINT_A),
         .want = NODE_N1 "node \"n1\" is not allowed to modify taints"},
        {"taint value changed", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", "", "'taints':[{'key':'a','value':'v','effect':'NoSchedule'}]"),
         .old = NODE_OBJ("n1", "", TAINT_A), .want = NODE_N1 "node \"n1\" is not allowed to modify taints"},
        {"empty taints equal none", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", "", "'taints':[]"), .old = NODE_OBJ("n1", "", "")},
        {"owner reference added", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OWNED("{'apiVersion':'v1','kind':'ConfigMap','name':'x','uid':'u'}"),
         .old = NODE_OBJ("n1", "", ""),
         .want = NODE_N1 "node \"n1\" is not allowed to modify ownerReferences"},
        {"owner references unchanged", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OWNED("{'apiVersion':'v1','kind':'ConfigMap','name':'x','uid':'u'}"),
         .old = NODE_OWNED("{'apiVersion':'v1','kind':'ConfigMap','name':'x','uid':'u'}")},
        {"taints checked before labels", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", ",'labels':{'kubernetes.io/custom':'1'}", ""),
         .old = NODE_OBJ("n1", "", TAINT_A), .want = NODE_N1 "node \"n1\" is not allowed to modify taints"},
        {"forbidden label added", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", ",'labels':{'kubernetes.io/custom':'1','zone':'a'}", ""),
         .old = NODE_OBJ("n1", "", ""),
         .want = NODE_N1 "is not allowed to modify labels: kubernetes.io/custom"},
        {"forbidden label removed", .op = "UPDATE", NODES, .name = "n1", .object = NODE_OBJ("n1", "", ""),
         .old = NODE_OBJ("n1", ",'labels':{'node-restriction.kubernetes.io/pool':'a'}", ""),
         .want = NODE_N1 "is not allowed to modify labels: node-restriction.kubernetes.io/pool"},
        {"forbidden label changed", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", ",'labels':{'k8s.io/a':'2','kubernetes.io/hostname':'h2'}", ""),
         .old = NODE_OBJ("n1", ",'labels':{'k8s.io/a':'1','kubernetes.io/hostname':'h1'}", ""),
         .want = NODE_N1 "is not allowed to modify labels: k8s.io/a"},
        {"forbidden label kept as it was", .op = "UPDATE", NODES, .name = "n1",
         .object = NODE_OBJ("n1", ",'labels':{'k8s.io/a':'1','kubernetes.io/hostname':'h2'}", ""),
         .old = NODE_OBJ("n1", ",'labels':{'k8s.io/a':'1','kubernetes.io/hostname':'h1'}", "")},
        {"update without old node", .op = "UPDATE", NODES, .name = "n1", .object = NODE_OBJ("n1", "", ""),
         .want = NODE_N1 "unexpected type *core.Node"},
        {"delete itself", .op = "DELETE", NODES, .name = "n1", .old = NODE_OBJ("n1", "", "")},
        {"delete another node", .op = "DELETE", NODES, .name = "n2", .old = NODE_OBJ("n2", "", ""),
         .want = "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""},
    };

    RUN_TABLE(rows);
}

/* ---- leases, CSINodes, ResourceSlices ---- */

#define LEASES .group = "coordination.k8s.io", .resource = "leases", .kind = "Lease"
#define LEASE_OBJ(name)                                                                                      \
    "{'apiVersion':'coordination.k8s.io/v1','kind':'Lease','metadata':{'name':'" name "'}}"
#define LEASE_MSG "can only access node lease with the same name as the requesting node"
#define CSINODES .group = "storage.k8s.io", .resource = "csinodes", .kind = "CSINode"
#define CSINODE_OBJ(name) "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'" name "'}}"
#define CSINODE_MSG "can only access CSINode with the same name as the requesting node"
#define SLICES .group = "resource.k8s.io", .resource = "resourceslices", .kind = "ResourceSlice"
#define SLICE_OBJ(spec)                                                                                      \
    "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'s1'},'spec':{" spec "}}"
#define SLICE_S1 "resourceslices.resource.k8s.io \"s1\" is forbidden: "

static void test_leases_csinodes_resourceslices(void **state)
{
    static const nr_case_t rows[] = {
        {"own lease", LEASES, .ns = "kube-node-lease", .object = LEASE_OBJ("n1")},
        {"another node's lease", LEASES, .ns = "kube-node-lease", .object = LEASE_OBJ("n2"),
         .want = "leases.coordination.k8s.io \"n2\" is forbidden: " LEASE_MSG},
        {"lease in another namespace", LEASES, .ns = "default", .object = LEASE_OBJ("n1"),
         .want = "leases.coordination.k8s.io \"n1\" is forbidden: can only access leases in the "
                 "\"kube-node-lease\" "
                 "system namespace"},
        {"renew own lease", .op = "UPDATE", LEASES, .ns = "kube-node-lease", .name = "n1",
         .object = LEASE_OBJ("n1"), .old = LEASE_OBJ("n1")},
        {"renew another node's lease", .op = "UPDATE", LEASES, .ns = "kube-node-lease", .name = "n2",
         .object = LEASE_OBJ("n2"), .old = LEASE_OBJ("n2"),
         .want = "leases.coordination.k8s.io \"n2\" is forbidden: " LEASE_MSG},
        {"delete another node's lease", .op = "DELETE", LEASES, .ns = "kube-node-lease", .name = "n2",
         .want = "leases.coordination.k8s.io \"n2\" is forbidden: " LEASE_MSG},
        {"lease of another type", .group = "coordination.k8s.io", .resource = "leases", .kind = "ConfigMap",
         .ns = "kube-node-lease", .object = LEASE_OBJ("n1"),
         .want = "leases.coordination.k8s.io \"n1\" is forbidden: unexpected type *coordination.ConfigMap"},
        {"own CSINode", CSINODES, .object = CSINODE_OBJ("n1")},
        {"another node's CSINode", CSINODES, .object = CSINODE_OBJ("n2"),
         .want = "csinodes.storage.k8s.io \"n2\" is forbidden: " CSINODE_MSG},
        {"update another node's CSINode", .op = "UPDATE", CSINODES, .name = "n2", .object = CSINODE_OBJ("n2"),
         .old = CSINODE_OBJ("n2"), .want = "csinodes.storage.k8s.io \"n2\" is forbidden: " CSINODE_MSG},
        {"delete own CSINode", .op = "DELETE", CSINODES, .name = "n1"},
        {"own ResourceSlice", SLICES, .object = SLICE_OBJ("'nodeName':'n1','driver':'d'")},
        {"another node's ResourceSlice", SLICES, .object = SLICE_OBJ("'nodeName':'n2','driver':'d'"),
         .want = SLICE_S1 "can only create ResourceSlice with the same NodeName as the requesting node"},
        {"ResourceSlice for all nodes", SLICES, .object = SLICE_OBJ("'allNodes':true,'driver':'d'"),
         .want = SLICE_S1 "can only create ResourceSlice with the same NodeName as the requesting node"},
        {"delete own ResourceSlice", .op = "DELETE", SLICES, .name = "s1",
         .old = SLICE_OBJ("'nodeName':'n1'")},
        {"delete another node's ResourceSlice", .op = "DELETE", SLICES, .name = "s1",
         .old = SLICE_OBJ("'nodeName':'n2'"),
         .want = SLICE_S1 "can only delete ResourceSlice with the same NodeName as the requesting node"},
        {"delete a ResourceSlice without oldObject", .op = "DELETE", SLICES, .name = "s1",
         .want = SLICE_S1 "unexpected type <nil>"},
        {"update is left to the node authorizer", .op = "UPDATE", SLICES, .name = "s1",
         .object = SLICE_OBJ("'nodeName':'n2'"), .old = SLICE_OBJ("'nodeName':'n2'")},
    };

    RUN_TABLE(rows);
}

/* ---- service account tokens, PVC status, PodCertificateRequests ---- */

#define TOKEN                                                                                                \
    .resource = "serviceaccounts", .sub = "token", .kind_group = "authentication.k8s.io",                    \
    .kind = "TokenRequest", .ns = "ns", .name = "sa"
#define TOKEN_OBJ(spec)                                                                                      \
    "{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest','metadata':{'name':'sa'},'spec':{" spec  \
    "}}"
#define BOUND(ref) "'boundObjectRef':" ref
#define POD_REF "{'kind':'Pod','apiVersion':'v1','name':'p1','uid':'uid-1'}"
#define SA "serviceaccounts \"sa\" is forbidden: "

static void test_tokens(void **state)
{
    static const nr_case_t rows[] = {
        {"token bound to a pod (needs cluster state)", TOKEN,
         .object = TOKEN_OBJ(BOUND(POD_REF) ",'audiences':['a']"),
         .want = SA
         "admitd cannot verify without cluster state that the bound pod \"p1\" with uid \"uid-1\" runs on "
         "node \"n1\" and uses the requested audience"},
        {"unbound token", TOKEN, .object = TOKEN_OBJ("'audiences':['a']"),
         .want = SA "node requested token not bound to a pod"},
        {"token bound to a secret", TOKEN,
         .object = TOKEN_OBJ(BOUND("{'kind':'Secret','apiVersion':'v1','name':'s','uid':'u'}")),
         .want = SA "node requested token not bound to a pod"},
        {"token bound to a pod of another apiVersion", TOKEN,
         .object = TOKEN_OBJ(BOUND("{'kind':'Pod','apiVersion':'v2','name':'p1','uid':'u'}")),
         .want = SA "node requested token not bound to a pod"},
        {"token bound to an unnamed pod", TOKEN,
         .object = TOKEN_OBJ(BOUND("{'kind':'Pod','apiVersion':'v1','uid':'u'}")),
         .want = SA "node requested token not bound to a pod"},
        {"token bound to a pod without uid", TOKEN,
         .object = TOKEN_OBJ(BOUND("{'kind':'Pod','apiVersion':'v1','name':'p1'}")),
         .want = SA "node requested token with a pod binding without a uid"},
        {"two audiences", TOKEN, .object = TOKEN_OBJ(BOUND(POD_REF) ",'audiences':['a','b']"),
         .want = SA "node may only request 0 or 1 audiences"},
        {"token request of another type", .resource = "serviceaccounts", .sub = "token", .kind = "Pod",
         .ns = "ns", .name = "sa", .object = TOKEN_OBJ(BOUND(POD_REF)),
         .want = SA "unexpected type *core.Pod"},
        {"service account itself", .resource = "serviceaccounts", .kind = "ServiceAccount", .ns = "ns",
         .object = "{'metadata':{'name':'sa'}}"},
        {"service account update", .op = "UPDATE", .resource = "serviceaccounts", .kind = "ServiceAccount",
         .ns = "ns", .name = "sa", .object = "{'metadata':{'name':'sa'}}",
         .old = "{'metadata':{'name':'sa'}}"},
    };

    RUN_TABLE(rows);
}

#define PVC(labels, spec, status)                                                                            \
    "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c1','namespace':'ns'" labels "}," \
    "'spec':{'volumeName':'pv1','resources':{'requests':{'storage':'1Gi'}}" spec                             \
    "},'status':{'phase':'Bound'" status "}}"
#define PVC_STATUS                                                                                           \
    .op = "UPDATE", .resource = "persistentvolumeclaims", .sub = "status", .kind = "PersistentVolumeClaim",  \
    .ns = "ns", .name = "c1"
#define C1 "persistentvolumeclaims \"c1\" is forbidden: "
#define PVC_MSG                                                                                              \
    C1 "node \"n1\" is not allowed to update fields other than status.quantity and status.conditions: "

#define PCR                                                                                                  \
    .group = "certificates.k8s.io", .resource = "podcertificaterequests", .kind = "PodCertificateRequest",   \
    .ns = "ns"
#define PCR_OBJ(node)                                                                                        \
    "{'apiVersion':'certificates.k8s.io/v1beta1','kind':'PodCertificateRequest','metadata':{'name':'pcr1'}," \
    "'spec':{'signerName':'x/"                                                                               \
    "y','podName':'p1','podUID':'u','serviceAccountName':'sa','serviceAccountUID':'s',"                      \
    "'nodeName':'" node "','nodeUID':'nu'}}"
#define PCR1 "podcertificaterequests.certificates.k8s.io \"pcr1\" is forbidden: "

static void test_pvc_status_and_pod_certificates(void **state)
{
    static const nr_case_t rows[] = {
        {"capacity, conditions, allocations and bookkeeping", PVC_STATUS,
         .old = PVC(",'resourceVersion':'1'", "", ",'capacity':{'storage':'1Gi'}"),
         .object = PVC(",'resourceVersion':'2','managedFields':[{'manager':'kubelet'}]", "",
                       ",'capacity':{'storage':'2Gi'},'conditions':[{'type':'Resizing','status':'True'}],"
                       "'allocatedResources':{'storage':'2Gi'},'allocatedResourceStatuses':{'storage':'x'}")},
        {"status from nothing to ignored fields only", PVC_STATUS,
         .old = "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c1'}}",
         .object = "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c1'},"
                   "'status':{'capacity':{'storage':'1Gi'}}}"},
        {"label added", PVC_STATUS, .old = PVC("", "", ""), .object = PVC(",'labels':{'a':'1'}", "", ""),
         .want = PVC_MSG "differing fields: metadata.labels"},
        {"phase and spec changed", PVC_STATUS, .old = PVC("", "", ""),
         .object =
             "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c1','namespace':'ns'},"
             "'spec':{'volumeName':'pv2','resources':{'requests':{'storage':'1Gi'}}},'status':{'phase':'Lost'"
             "}}",
         .want = PVC_MSG "differing fields: spec.volumeName, status.phase"},
        {"the claim itself", .op = "UPDATE", .resource = "persistentvolumeclaims",
         .kind = "PersistentVolumeClaim", .ns = "ns", .name = "c1", .object = PVC("", "", ""),
         .old = PVC("", "", ""), .want = C1 "may only update PVC status"},
        {"creating a claim", .resource = "persistentvolumeclaims", .kind = "PersistentVolumeClaim",
         .ns = "ns", .object = PVC("", "", ""), .want = C1 "may only update PVC status"},
        {"deleting through status", .op = "DELETE", .resource = "persistentvolumeclaims", .sub = "status",
         .kind = "PersistentVolumeClaim", .ns = "ns", .name = "c1", .old = PVC("", "", ""),
         .want = C1 "unexpected operation \"DELETE\""},
        {"pod certificate for itself (needs cluster state)", PCR, .object = PCR_OBJ("n1"),
         .want = PCR1
         "admitd cannot verify without cluster state that pod \"ns/p1\" runs on node \"n1\" with the "
         "node, pod and service account uids the request names"},
        {"pod certificate for another node", PCR, .object = PCR_OBJ("n2"),
         .want = PCR1 "PodCertificateRequest.Spec.NodeName=\"n2\", which is not the requesting node \"n1\""},
        {"pod certificate update", .op = "UPDATE", PCR, .name = "pcr1", .object = PCR_OBJ("n1"),
         .old = PCR_OBJ("n1"), .want = PCR1 "unexpected operation UPDATE"},
        {"pod certificate subresource", PCR, .sub = "status", .object = PCR_OBJ("n1"),
         .want = PCR1 "unexpected subresource status"},
    };

    RUN_TABLE(rows);
}

/* ---- kubelet CSRs ---- */

static mbedtls_entropy_context entropy;
static mbedtls_ctr_drbg_context rng;
static mbedtls_pk_context key;

static int csr_setup(void **state)
{
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&rng);
    mbedtls_pk_init(&key);
    if (mbedtls_ctr_drbg_seed(&rng, mbedtls_entropy_func, &entropy, NULL, 0) != 0 ||
        mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
        mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key), mbedtls_ctr_drbg_random, &rng) !=
            0) {
        return -1;
    }
    return 0;
}

static int csr_teardown(void **state)
{
    mbedtls_pk_free(&key);
    mbedtls_ctr_drbg_free(&rng);
    mbedtls_entropy_free(&entropy);
    return 0;
}

/* A PEM CSR for subject (mbedTLS's "CN=...,O=..." syntax), into the arena. */
static const char *csr_pem(adm_arena_t *a, const char *subject)
{
    mbedtls_x509write_csr w;
    unsigned char buf[4096];
    int ret;

    mbedtls_x509write_csr_init(&w);
    mbedtls_x509write_csr_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_csr_set_key(&w, &key);
    ret = mbedtls_x509write_csr_set_subject_name(&w, subject);
    if (ret == 0) {
        ret = mbedtls_x509write_csr_pem(&w, buf, sizeof(buf), mbedtls_ctr_drbg_random, &rng);
    }
    mbedtls_x509write_csr_free(&w);
    assert_int_equal(ret, 0);
    return adm_arena_strndup(a, (const char *)buf, strlen((const char *)buf));
}

static const char *b64(adm_arena_t *a, const char *text)
{
    size_t len = strlen(text);
    size_t cap = 4 * ((len + 2) / 3) + 1;
    size_t out_len = 0;
    unsigned char *out = adm_arena_alloc(a, cap);

    assert_non_null(out);
    assert_int_equal(mbedtls_base64_encode(out, cap, &out_len, (const unsigned char *)text, len), 0);
    return (const char *)out;
}

/* text with the first occurrence of from replaced by to. */
static const char *replace(adm_arena_t *a, const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);

    assert_non_null(at);
    return adm_arena_printf(a, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

#define CSR_FORBIDDEN "certificatesigningrequests.certificates.k8s.io \"csr-1\" is forbidden: "
#define KUBELET_CLIENT "kubernetes.io/kube-apiserver-client-kubelet"
#define KUBELET_SERVING "kubernetes.io/kubelet-serving"

static const char *csr_object(adm_arena_t *a, const char *signer, const char *request_b64)
{
    return adm_arena_printf(a,
                            "{'apiVersion':'certificates.k8s.io/v1','kind':'CertificateSigningRequest',"
                            "'metadata':{'name':'csr-1'},'spec':{'signerName':'%s','request':'%s',"
                            "'usages':['digital signature','client auth']}}",
                            signer, request_b64);
}

static void test_kubelet_csrs(void **state)
{
    adm_arena_t *a = adm_arena_create(1 << 16);
    const char *good = csr_pem(a, "CN=system:node:n1,O=system:nodes");
    const char *other = csr_pem(a, "CN=system:node:n2,O=system:nodes");
    const char *no_cn = csr_pem(a, "O=system:nodes");
    const char *prefix_only = csr_pem(a, "CN=system:node:n1x,O=system:nodes");
    /* a PEM whose base64 body is intact but whose DER is not a CSR */
    const char *bad_der = replace(a, good, "REQUEST-----\nM", "REQUEST-----\nA");
    const char *pem_err = CSR_FORBIDDEN "unable to parse csr: PEM block type must be CERTIFICATE REQUEST";
    const char *cn_err = CSR_FORBIDDEN "can only create a node CSR with CN=system:node:n1";
    struct {
        const char *what;
        const char *op;
        const char *signer;
        const char *request; /* base64 */
        const char *want;
    } cases[] = {
        {"client CSR for itself", "CREATE", KUBELET_CLIENT, b64(a, good), NULL},
        {"serving CSR for itself", "CREATE", KUBELET_SERVING, b64(a, good), NULL},
        {"client CSR for another node", "CREATE", KUBELET_CLIENT, b64(a, other), cn_err},
        {"serving CSR for another node", "CREATE", KUBELET_SERVING, b64(a, other), cn_err},
        {"CSR without a CN", "CREATE", KUBELET_CLIENT, b64(a, no_cn), cn_err},
        {"CN with the node name as a prefix", "CREATE", KUBELET_CLIENT, b64(a, prefix_only), cn_err},
        {"other signers are not checked", "CREATE", "kubernetes.io/kube-apiserver-client", b64(a, other),
         NULL},
        {"updates are not checked", "UPDATE", KUBELET_CLIENT, b64(a, other), NULL},
        {"text before the PEM block", "CREATE", KUBELET_CLIENT,
         b64(a, adm_arena_printf(a, "comment line\n%s", good)), NULL},
        {"not PEM", "CREATE", KUBELET_CLIENT, b64(a, "this is not a CSR"), pem_err},
        {"empty request", "CREATE", KUBELET_CLIENT, "", pem_err},
        {"NEW CERTIFICATE REQUEST block", "CREATE", KUBELET_CLIENT,
         b64(a, replace(a, replace(a, good, "BEGIN CERTIFICATE REQUEST", "BEGIN NEW CERTIFICATE REQUEST"),
                        "END CERTIFICATE REQUEST", "END NEW CERTIFICATE REQUEST")),
         pem_err},
        {"a CERTIFICATE block before the CSR", "CREATE", KUBELET_CLIENT,
         b64(a,
             adm_arena_printf(a, "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n%s", good)),
         pem_err},
        {"PEM body that is not base64", "CREATE", KUBELET_CLIENT,
         b64(a, "-----BEGIN CERTIFICATE REQUEST-----\n!!!!\n-----END CERTIFICATE REQUEST-----\n"), pem_err},
        {"request that is not base64", "CREATE", KUBELET_CLIENT, "%%%",
         CSR_FORBIDDEN "unable to parse csr: spec.request is not valid base64"},
    };
    nr_case_t rows[sizeof(cases) / sizeof(cases[0])];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *obj = csr_object(a, cases[i].signer, cases[i].request);
        bool update = strcmp(cases[i].op, "UPDATE") == 0;

        rows[i] = (nr_case_t){cases[i].what,
                              .op = cases[i].op,
                              .group = "certificates.k8s.io",
                              .resource = "certificatesigningrequests",
                              .kind = "CertificateSigningRequest",
                              .name = update ? "csr-1" : NULL,
                              .object = obj,
                              .old = update ? obj : NULL,
                              .want = cases[i].want};
    }
    RUN_TABLE(rows);

    /* DER that does not parse: mbedTLS's reason, not Go's, follows the prefix */
    {
        nr_case_t c = {"DER that is not a CSR", .group = "certificates.k8s.io",
                       .resource = "certificatesigningrequests", .kind = "CertificateSigningRequest",
                       .object = csr_object(a, KUBELET_CLIENT, b64(a, bad_der))};
        nr_result_t res = run(a, &c);
        const char *prefix = CSR_FORBIDDEN "unable to parse csr: ";

        assert_int_equal(res.rc, ADM_DECLINED);
        assert_int_equal(res.st.code, 403);
        assert_true(strncmp(res.st.message, prefix, strlen(prefix)) == 0);
        assert_string_not_equal(res.st.message, pem_err);
        assert_string_not_equal(res.st.message, cn_err);
    }
    adm_arena_destroy(a);
}

/*
 * A PEM CSR whose subject has two CNs: subject names one CN and one OU, and the OU's OID (2.5.4.11)
 * is then rewritten to CN's (2.5.4.3) in the DER. mbedTLS's writer keeps one value per attribute,
 * and neither Go's parser nor mbedTLS's checks the signature this breaks.
 */
static const char *csr_pem_two_cns(adm_arena_t *a, const char *subject)
{
    static const unsigned char ou_oid[] = {0x06, 0x03, 0x55, 0x04, 0x0b};
    mbedtls_x509write_csr w;
    unsigned char der[2048];
    unsigned char pem[4096];
    unsigned char *start;
    size_t pem_len = 0;
    int len;
    bool patched = false;

    mbedtls_x509write_csr_init(&w);
    mbedtls_x509write_csr_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_csr_set_key(&w, &key);
    assert_int_equal(mbedtls_x509write_csr_set_subject_name(&w, subject), 0);
    len = mbedtls_x509write_csr_der(&w, der, sizeof(der), mbedtls_ctr_drbg_random, &rng);
    mbedtls_x509write_csr_free(&w);
    assert_true(len > 0);
    start = der + sizeof(der) - len;
    for (int i = 0; i + (int)sizeof(ou_oid) <= len && !patched; i++) {
        if (memcmp(start + i, ou_oid, sizeof(ou_oid)) == 0) {
            start[i + sizeof(ou_oid) - 1] = 0x03;
            patched = true;
        }
    }
    assert_true(patched);
    assert_int_equal(mbedtls_pem_write_buffer("-----BEGIN CERTIFICATE REQUEST-----\n",
                                              "-----END CERTIFICATE REQUEST-----\n", start, (size_t)len, pem,
                                              sizeof(pem), &pem_len),
                     0);
    return adm_arena_strndup(a, (const char *)pem, strlen((const char *)pem));
}

/* Go's pkix.Name keeps the last CN of the DER subject, whichever order mbedTLS's writer chose. */
static void test_kubelet_csr_last_common_name_counts(void **state)
{
    static const char *const subjects[] = {"CN=system:node:n1,OU=system:node:n2",
                                           "CN=system:node:n2,OU=system:node:n1"};
    size_t admitted = 0;

    for (size_t i = 0; i < 2; i++) {
        adm_arena_t *a = adm_arena_create(1 << 16);
        const char *pem = csr_pem_two_cns(a, subjects[i]);
        mbedtls_x509_csr parsed;
        char dn[256];
        bool n1_last;
        nr_case_t c = {subjects[i], .group = "certificates.k8s.io", .resource = "certificatesigningrequests",
                       .kind = "CertificateSigningRequest",
                       .object = csr_object(a, KUBELET_CLIENT, b64(a, pem))};
        nr_result_t res;

        /* the DER order, read independently of the plugin: dn_gets prints the names in DER order */
        mbedtls_x509_csr_init(&parsed);
        assert_int_equal(mbedtls_x509_csr_parse(&parsed, (const unsigned char *)pem, strlen(pem) + 1), 0);
        assert_true(mbedtls_x509_dn_gets(dn, sizeof(dn), &parsed.subject) > 0);
        mbedtls_x509_csr_free(&parsed);
        assert_non_null(strstr(dn, "CN=system:node:n1"));
        assert_non_null(strstr(dn, "CN=system:node:n2"));
        n1_last = strcmp(dn + strlen(dn) - strlen("CN=system:node:n1"), "CN=system:node:n1") == 0;

        res = run(a, &c);
        if (n1_last) {
            assert_int_equal(res.rc, ADM_OK);
            admitted++;
        } else {
            assert_int_equal(res.rc, ADM_DECLINED);
            assert_string_equal(res.st.message,
                                CSR_FORBIDDEN "can only create a node CSR with CN=system:node:n1");
        }
        adm_arena_destroy(a);
    }
    assert_int_equal(admitted, 1);
}

/* ---- registration and the Status ---- */

static void test_registered_as_kube_does(void **state)
{
    const adm_plugin_info_t *info = adm_plugin_find("NodeRestriction");

    assert_non_null(info);
    assert_non_null(info->plugin);
    assert_string_equal(info->plugin->name, "NodeRestriction");
    assert_string_equal(info->type, "mutating");
    assert_false(info->default_on);
    /* admission.NewHandler(Create, Update, Delete): CONNECT requests never reach it */
    assert_int_equal(info->plugin->operations, ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE);
    assert_non_null(info->plugin->admit);
    assert_null(info->plugin->validate);
    assert_null(info->plugin->configure);
}

static void test_status_details(void **state)
{
    adm_arena_t *a = adm_arena_create(1 << 16);
    nr_case_t c = {"lease of another node", LEASES, .ns = "kube-node-lease", .object = LEASE_OBJ("n2")};
    nr_result_t res = run(a, &c);
    char *details;

    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.st.code, 403);
    assert_string_equal(res.st.reason, "Forbidden");
    assert_non_null(res.st.details);
    details = yyjson_val_write(res.st.details, 0, NULL);
    assert_string_equal(details, "{\"name\":\"n2\",\"group\":\"coordination.k8s.io\",\"kind\":\"leases\"}");
    free(details);
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered_as_kube_does),
        cmocka_unit_test(test_who_is_a_node),
        cmocka_unit_test(test_mirror_pods),
        cmocka_unit_test(test_mirror_pod_references),
        cmocka_unit_test(test_pod_status),
        cmocka_unit_test(test_pod_delete_eviction_subresources),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_leases_csinodes_resourceslices),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_pvc_status_and_pod_certificates),
        cmocka_unit_test(test_kubelet_csrs),
        cmocka_unit_test(test_kubelet_csr_last_common_name_counts),
        cmocka_unit_test(test_status_details),
    };

    return cmocka_run_group_tests(tests, csr_setup, csr_teardown);
}

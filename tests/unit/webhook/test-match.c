/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Webhook matching, spec/webhook-dispatch.md 1.1-1.4, one table: the resource table (pods,
 * pods/status, star, pods/star, star/scale, star/star), operations, groups, versions, scopes with the
 * namespaces special case, namespaceSelector (own labels on namespace CREATE/UPDATE, stored labels otherwise,
 * 404 only when the rules match and the object selector does not rule the webhook out),
 * objectSelector on the object or the old one, and matchPolicy Equivalent (CONVERT with its exact
 * reason) versus Exact. Also: the exempt kinds, and that no match allocates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/cluster_state.h"
#include "adm/webhook/match.h"
#include "plugintest.h"

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;

static int setup(void **state)
{
    char path[] = "/tmp/adm-wh-match-XXXXXX";
    int fd = mkstemp(path);
    const char *p = path;
    char err[256];
    static const char text[] =
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Namespace, metadata: {name: prod, labels: {env: prod}}}\n"
        "- {apiVersion: v1, kind: Namespace, metadata: {name: dev, labels: {env: dev}}}\n"
        "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n";
    int rc;

    if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
        return -1;
    }
    close(fd);
    rc = adm_cluster_state_load(&p, 1, &cluster, err, sizeof(err));
    unlink(path);
    arena = adm_arena_create(1 << 16);
    return rc != 0 || arena == NULL;
}

static int teardown(void **state)
{
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

/* Lists are comma-separated; NULL is the empty list, "" the list holding only the core group. */
typedef struct rule_spec_s {
    unsigned ops;
    const char *groups;
    const char *versions;
    const char *resources;
    adm_rule_scope_t scope;
} rule_spec_t;

static size_t split(const char *list, const char ***out)
{
    size_t n = 1;
    const char **v;
    const char *p;

    if (list == NULL) {
        *out = NULL;
        return 0;
    }
    for (p = list; *p != '\0'; p++) {
        n += *p == ',';
    }
    v = adm_arena_calloc(arena, n, sizeof(*v));
    assert_non_null(v);
    p = list;
    for (size_t i = 0; i < n; i++) {
        const char *c = strchr(p, ',');
        size_t len = c != NULL ? (size_t)(c - p) : strlen(p);

        v[i] = adm_arena_strndup(arena, p, len);
        p += len + 1;
    }
    *out = v;
    return n;
}

/* What the loader does with rules[].resources: split at the first '/'. */
static void make_rule(adm_rule_t *r, const rule_spec_t *s)
{
    const char **res;

    memset(r, 0, sizeof(*r));
    r->operations = s->ops;
    r->napi_groups = split(s->groups, &r->api_groups);
    r->napi_versions = split(s->versions, &r->api_versions);
    r->nresources = split(s->resources, &res);
    r->resources = adm_arena_calloc(arena, r->nresources + 1, sizeof(*r->resources));
    for (size_t i = 0; i < r->nresources; i++) {
        const char *slash = strchr(res[i], '/');

        r->resources[i].resource =
            slash != NULL ? adm_arena_strndup(arena, res[i], (size_t)(slash - res[i])) : res[i];
        r->resources[i].subresource = slash != NULL ? slash + 1 : "";
    }
    r->scope = s->scope;
}

static const char *v_prod[] = {"prod"};
static const char *v_web[] = {"web"};
static const char *v_none[] = {NULL};
static adm_selector_req_t q_env_prod[] = {{"env", ADM_SEL_IN, v_prod, 1}};
static adm_selector_req_t q_env_notin_prod[] = {{"env", ADM_SEL_NOT_IN, v_prod, 1}};
static adm_selector_req_t q_nsname_prod[] = {{"kubernetes.io/metadata.name", ADM_SEL_IN, v_prod, 1}};
static adm_selector_req_t q_app_web[] = {{"app", ADM_SEL_IN, v_web, 1}};
static adm_selector_req_t q_app_notin_web[] = {{"app", ADM_SEL_NOT_IN, v_web, 1}};
static adm_selector_req_t q_no_app[] = {{"app", ADM_SEL_DOES_NOT_EXIST, v_none, 0}};
static const adm_selector_t env_prod = {false, q_env_prod, 1};
static const adm_selector_t env_notin_prod = {false, q_env_notin_prod, 1};
static const adm_selector_t nsname_prod = {false, q_nsname_prod, 1};
static const adm_selector_t app_web = {false, q_app_web, 1};
static const adm_selector_t app_notin_web = {false, q_app_notin_web, 1};
static const adm_selector_t no_app = {false, q_no_app, 1};

#define ALL_OPS ADM_OPS_ALL
static const rule_spec_t r_pods = {ALL_OPS, "", "v1", "pods", ADM_SCOPE_ALL};
static const rule_spec_t r_star = {ALL_OPS, "*", "*", "*", ADM_SCOPE_ALL};
static const rule_spec_t r_pods_star = {ALL_OPS, "", "v1", "pods/*", ADM_SCOPE_ALL};
static const rule_spec_t r_pods_status = {ALL_OPS, "", "v1", "pods/status", ADM_SCOPE_ALL};
static const rule_spec_t r_star_scale = {ALL_OPS, "*", "*", "*/scale", ADM_SCOPE_ALL};
static const rule_spec_t r_star_star = {ALL_OPS, "*", "*", "*/*", ADM_SCOPE_ALL};
static const rule_spec_t r_two_slashes = {ALL_OPS, "", "v1", "pods/log/extra", ADM_SCOPE_ALL};
static const rule_spec_t r_svc_pods = {ALL_OPS, "", "v1", "services,pods", ADM_SCOPE_ALL};
static const rule_spec_t r_no_resources = {ALL_OPS, "", "v1", NULL, ADM_SCOPE_ALL};
static const rule_spec_t r_create_only = {ADM_OPS_CREATE, "", "v1", "pods", ADM_SCOPE_ALL};
static const rule_spec_t r_no_ops = {0, "", "v1", "pods", ADM_SCOPE_ALL};
static const rule_spec_t r_apps = {ALL_OPS, "apps", "v1", "*", ADM_SCOPE_ALL};
static const rule_spec_t r_core_apps = {ALL_OPS, ",apps", "v1", "*", ADM_SCOPE_ALL};
static const rule_spec_t r_no_groups = {ALL_OPS, NULL, "v1", "*", ADM_SCOPE_ALL};
static const rule_spec_t r_no_versions = {ALL_OPS, "*", NULL, "*", ADM_SCOPE_ALL};
static const rule_spec_t r_any_version = {ALL_OPS, "", "*", "pods", ADM_SCOPE_ALL};
static const rule_spec_t r_namespaced = {ALL_OPS, "*", "*", "*/*", ADM_SCOPE_NAMESPACED};
static const rule_spec_t r_cluster = {ALL_OPS, "*", "*", "*/*", ADM_SCOPE_CLUSTER};
static const rule_spec_t r_deploy_beta = {ALL_OPS, "apps", "v1beta1,v1beta2", "deployments", ADM_SCOPE_ALL};
static const rule_spec_t r_deploy_v1 = {ALL_OPS, "apps", "v1", "deployments", ADM_SCOPE_ALL};
static const rule_spec_t r_pods_beta = {ALL_OPS, "", "v1beta1", "pods", ADM_SCOPE_ALL};
static const rule_spec_t r_ext_deploy = {ALL_OPS, "extensions", "v1beta1", "deployments", ADM_SCOPE_ALL};
static const rule_spec_t r_events_new = {ALL_OPS, "events.k8s.io", "v1", "events", ADM_SCOPE_ALL};
static const rule_spec_t r_events_core = {ALL_OPS, "", "v1", "events", ADM_SCOPE_NAMESPACED};
static const rule_spec_t r_events_new_delete = {ADM_OPS_DELETE, "events.k8s.io", "v1", "events",
                                                ADM_SCOPE_ALL};
static const rule_spec_t r_deploy_beta_delete = {ADM_OPS_DELETE, "apps", "v1beta1", "deployments",
                                                 ADM_SCOPE_ALL};
static const rule_spec_t r_scale_beta = {ALL_OPS, "apps", "v1beta1", "deployments/scale", ADM_SCOPE_ALL};
static const rule_spec_t r_ns_beta_cluster = {ALL_OPS, "", "v1beta1", "namespaces", ADM_SCOPE_CLUSTER};

#define POD_WEB                                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\"}}}"
#define POD_DB                                                                                               \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"db\"}}}"
#define POD_NOLABELS "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}"
#define EXEC_OPTS "{\"apiVersion\":\"v1\",\"kind\":\"PodExecOptions\",\"command\":[\"sh\"]}"
#define NS_OBJ(name, env)                                                                                    \
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" name                           \
    "\",\"labels\":{\"env\":\"" env "\"}}}"

/*
 * One request and one webhook. Defaults (NULL): CREATE of core v1 pods in namespace "prod", object
 * POD_WEB, no old object ("null" means none for object), a match-everything rule, matchPolicy
 * Equivalent (the API default), selectors {} (everything).
 */
typedef struct mcase_s {
    const char *name;
    const char *op;
    const char *group;
    const char *version;
    const char *resource;
    const char *sub;
    const char *ns;
    const char *object;
    const char *old_object;
    const rule_spec_t *rule;
    const rule_spec_t *rule2;
    adm_match_policy_t policy;
    const adm_selector_t *ns_sel;
    const adm_selector_t *obj_sel;
    adm_wh_match_t want;
    const char *text; /* CONVERT: the reason; ERROR: the status message */
} mcase_t;

#define NOTFOUND(ns) "namespaces \"" ns "\" not found"

static const mcase_t cases[] = {
    /* 1.3 resources */
    {"pods matches pods", .rule = &r_pods, .want = ADM_WH_CALL},
    {"pods does not match pods/status", .sub = "status", .rule = &r_pods, .want = ADM_WH_SKIP},
    {"* matches pods", .rule = &r_star, .want = ADM_WH_CALL},
    {"* matches services", .resource = "services", .rule = &r_star, .want = ADM_WH_CALL},
    {"* does not match pods/status", .sub = "status", .rule = &r_star, .want = ADM_WH_SKIP},
    {"pods/* matches plain pods", .rule = &r_pods_star, .want = ADM_WH_CALL},
    {"pods/* matches pods/status", .sub = "status", .rule = &r_pods_star, .want = ADM_WH_CALL},
    {"pods/* does not match services", .resource = "services", .rule = &r_pods_star, .want = ADM_WH_SKIP},
    {"pods/status matches pods/status", .sub = "status", .rule = &r_pods_status, .want = ADM_WH_CALL},
    {"pods/status does not match pods", .rule = &r_pods_status, .want = ADM_WH_SKIP},
    {"pods/status does not match pods/exec", .sub = "exec", .rule = &r_pods_status, .want = ADM_WH_SKIP},
    {"*/scale matches deployments/scale", .group = "apps", .resource = "deployments", .sub = "scale",
     .rule = &r_star_scale, .want = ADM_WH_CALL},
    {"*/scale matches replicationcontrollers/scale", .resource = "replicationcontrollers", .sub = "scale",
     .rule = &r_star_scale, .want = ADM_WH_CALL},
    {"*/scale does not match deployments", .group = "apps", .resource = "deployments", .rule = &r_star_scale,
     .want = ADM_WH_SKIP},
    {"*/* matches pods/exec", .op = "CONNECT", .sub = "exec", .object = EXEC_OPTS, .rule = &r_star_star,
     .want = ADM_WH_CALL},
    {"*/* matches plain pods", .rule = &r_star_star, .want = ADM_WH_CALL},
    {"pods/log/extra: sub log/extra, not log", .sub = "log", .rule = &r_two_slashes, .want = ADM_WH_SKIP},
    {"pods/log/extra matches sub log/extra", .sub = "log/extra", .rule = &r_two_slashes, .want = ADM_WH_CALL},
    {"second resource of a rule", .rule = &r_svc_pods, .want = ADM_WH_CALL},
    {"empty resource list", .rule = &r_no_resources, .want = ADM_WH_SKIP},
    {"any of several rules", .rule = &r_pods_status, .rule2 = &r_svc_pods, .want = ADM_WH_CALL},

    /* 1.3 operations, groups, versions */
    {"operation listed", .rule = &r_create_only, .want = ADM_WH_CALL},
    {"operation not listed", .op = "UPDATE", .old_object = POD_WEB, .rule = &r_create_only,
     .want = ADM_WH_SKIP},
    {"no operations", .rule = &r_no_ops, .want = ADM_WH_SKIP},
    {"* operations include CONNECT", .op = "CONNECT", .sub = "exec", .object = EXEC_OPTS,
     .rule = &r_pods_star, .want = ADM_WH_CALL},
    {"group not listed", .rule = &r_apps, .want = ADM_WH_SKIP},
    {"group listed", .group = "apps", .resource = "deployments", .rule = &r_apps, .want = ADM_WH_CALL},
    {"core group listed as \"\"", .rule = &r_core_apps, .want = ADM_WH_CALL},
    {"no groups", .rule = &r_no_groups, .want = ADM_WH_SKIP},
    {"no versions", .rule = &r_no_versions, .want = ADM_WH_SKIP},
    {"* versions", .version = "v2", .rule = &r_any_version, .want = ADM_WH_CALL},

    /* 1.3 scope */
    {"Namespaced: namespaced object", .rule = &r_namespaced, .want = ADM_WH_CALL},
    {"Namespaced: cluster-scoped object", .resource = "nodes", .ns = "", .rule = &r_namespaced,
     .want = ADM_WH_SKIP},
    {"Cluster: cluster-scoped object", .resource = "nodes", .ns = "", .rule = &r_cluster,
     .want = ADM_WH_CALL},
    {"Cluster: namespaced object", .rule = &r_cluster, .want = ADM_WH_SKIP},
    {"Namespaced: a namespace is not namespaced", .resource = "namespaces", .object = NS_OBJ("prod", "prod"),
     .rule = &r_namespaced, .want = ADM_WH_SKIP},
    {"Cluster: a namespace is cluster-scoped", .resource = "namespaces", .object = NS_OBJ("prod", "prod"),
     .rule = &r_cluster, .want = ADM_WH_CALL},
    {"Cluster: namespaces/finalize too", .op = "UPDATE", .resource = "namespaces", .sub = "finalize",
     .object = NS_OBJ("prod", "prod"), .rule = &r_cluster, .want = ADM_WH_CALL},
    {"Namespaced: only exactly /v1/namespaces is special", .version = "v2", .resource = "namespaces",
     .object = NS_OBJ("prod", "prod"), .rule = &r_namespaced, .want = ADM_WH_CALL},
    {"Cluster: other-group namespaces in a namespace are namespaced", .group = "example.com",
     .resource = "namespaces", .object = NS_OBJ("prod", "prod"), .rule = &r_cluster, .want = ADM_WH_SKIP},

    /* 1.1 namespaceSelector */
    {"ns selector matches stored labels", .ns_sel = &env_prod, .want = ADM_WH_CALL},
    {"ns selector does not match", .ns = "dev", .ns_sel = &env_prod, .want = ADM_WH_SKIP},
    {"ns selector on the name label set by the state", .ns_sel = &nsname_prod, .want = ADM_WH_CALL},
    {"ns selector NotIn, key absent", .ns = "default", .ns_sel = &env_notin_prod, .want = ADM_WH_CALL},
    {"ns selector NotIn, listed", .ns_sel = &env_notin_prod, .want = ADM_WH_SKIP},
    {"unknown namespace: 404", .ns = "gone", .ns_sel = &env_prod, .want = ADM_WH_ERROR,
     .text = NOTFOUND("gone")},
    {"unknown namespace, rules do not match: skip", .ns = "gone", .rule = &r_apps, .ns_sel = &env_prod,
     .want = ADM_WH_SKIP},
    {"unknown namespace, object selector rules out: skip", .ns = "gone", .ns_sel = &env_prod,
     .obj_sel = &no_app, .want = ADM_WH_SKIP},
    {"unknown namespace, selector {}: no lookup", .ns = "gone", .want = ADM_WH_CALL},
    {"unknown namespace, NotIn selector still looks it up", .ns = "gone", .ns_sel = &env_notin_prod,
     .want = ADM_WH_ERROR, .text = NOTFOUND("gone")},
    {"cluster-scoped object is never exempted", .resource = "nodes", .ns = "", .ns_sel = &env_prod,
     .want = ADM_WH_CALL},
    {"namespace CREATE uses its own labels", .resource = "namespaces", .ns = "new",
     .object = NS_OBJ("new", "prod"), .ns_sel = &env_prod, .want = ADM_WH_CALL},
    {"namespace CREATE: own labels, not the stored ones", .resource = "namespaces",
     .object = NS_OBJ("prod", "dev"), .ns_sel = &env_prod, .want = ADM_WH_SKIP},
    {"namespace CREATE without a namespace field", .resource = "namespaces", .ns = "",
     .object = NS_OBJ("x", "prod"), .ns_sel = &env_prod, .want = ADM_WH_CALL},
    {"namespace UPDATE uses its own labels", .op = "UPDATE", .resource = "namespaces", .ns = "prod",
     .object = NS_OBJ("prod", "dev"), .old_object = NS_OBJ("prod", "prod"), .ns_sel = &env_prod,
     .want = ADM_WH_SKIP},
    {"namespace DELETE uses the stored labels", .op = "DELETE", .resource = "namespaces", .object = "null",
     .old_object = NS_OBJ("prod", "dev"), .ns_sel = &env_prod, .want = ADM_WH_CALL},
    {"namespace DELETE of an unknown namespace: 404", .op = "DELETE", .resource = "namespaces", .ns = "gone",
     .object = "null", .old_object = NS_OBJ("gone", "prod"), .ns_sel = &env_prod, .want = ADM_WH_ERROR,
     .text = NOTFOUND("gone")},
    {"namespaces/status UPDATE uses the stored labels", .op = "UPDATE", .resource = "namespaces",
     .sub = "status", .object = NS_OBJ("prod", "dev"), .rule = &r_star_star, .ns_sel = &env_prod,
     .want = ADM_WH_CALL},
    {"namespace CREATE with no object: 500", .resource = "namespaces", .object = "null", .ns_sel = &env_prod,
     .want = ADM_WH_ERROR,
     .text = "Internal error occurred: object does not implement the Object interfaces"},

    /* 1.2 objectSelector */
    {"object selector matches the object", .obj_sel = &app_web, .want = ADM_WH_CALL},
    {"object selector does not match", .object = POD_DB, .obj_sel = &app_web, .want = ADM_WH_SKIP},
    {"object selector matches the old object", .op = "UPDATE", .object = POD_DB, .old_object = POD_WEB,
     .obj_sel = &app_web, .want = ADM_WH_CALL},
    {"object selector: NotIn matches the new one", .op = "UPDATE", .object = POD_DB, .old_object = POD_WEB,
     .obj_sel = &app_notin_web, .want = ADM_WH_CALL},
    {"object selector on DELETE: old object", .op = "DELETE", .object = "null", .old_object = POD_WEB,
     .obj_sel = &app_web, .want = ADM_WH_CALL},
    {"object selector: no objects never match", .op = "DELETE", .object = "null", .obj_sel = &app_notin_web,
     .want = ADM_WH_SKIP},
    {"object selector: no metadata never matches", .op = "CONNECT", .sub = "exec", .object = EXEC_OPTS,
     .obj_sel = &no_app, .want = ADM_WH_SKIP},
    {"object selector: metadata without labels", .object = POD_NOLABELS, .obj_sel = &no_app,
     .want = ADM_WH_CALL},
    {"object selector {}: no object is fine", .op = "DELETE", .object = "null", .want = ADM_WH_CALL},
    {"object selector {}: no metadata is fine", .op = "CONNECT", .sub = "exec", .object = EXEC_OPTS,
     .want = ADM_WH_CALL},

    /* 1.3 matchPolicy */
    {"Equivalent: other version of apps deployments", .group = "apps", .resource = "deployments",
     .rule = &r_deploy_beta, .want = ADM_WH_CONVERT,
     .text = "cannot convert apps/v1, Resource=deployments for matchPolicy Equivalent"},
    {"Exact: other version skips", .group = "apps", .resource = "deployments", .rule = &r_deploy_beta,
     .policy = ADM_MATCH_EXACT, .want = ADM_WH_SKIP},
    {"Equivalent: core group prints /v1", .rule = &r_pods_beta, .want = ADM_WH_CONVERT,
     .text = "cannot convert /v1, Resource=pods for matchPolicy Equivalent"},
    {"Equivalent: an exact later rule wins", .group = "apps", .resource = "deployments",
     .rule = &r_deploy_beta, .rule2 = &r_deploy_v1, .want = ADM_WH_CALL},
    {"Equivalent: another group is not a version", .group = "apps", .resource = "deployments",
     .rule = &r_ext_deploy, .want = ADM_WH_SKIP},
    {"Equivalent: core events through events.k8s.io, a call failure", .resource = "events",
     .rule = &r_events_new, .want = ADM_WH_CONVERT,
     .text = "cannot convert /v1, Resource=events for matchPolicy Equivalent"},
    {"Equivalent: events.k8s.io events through core", .group = "events.k8s.io", .resource = "events",
     .rule = &r_events_core, .want = ADM_WH_CONVERT,
     .text = "cannot convert events.k8s.io/v1, Resource=events for matchPolicy Equivalent"},
    {"Exact: another group skips", .resource = "events", .rule = &r_events_new, .policy = ADM_MATCH_EXACT,
     .want = ADM_WH_SKIP},
    {"Equivalent: the other group's rule must match the operation", .resource = "events",
     .rule = &r_events_new_delete, .want = ADM_WH_SKIP},
    {"Equivalent: other parts must still match", .group = "apps", .resource = "deployments",
     .rule = &r_deploy_beta_delete, .want = ADM_WH_SKIP},
    {"Equivalent: selectors must still match", .group = "apps", .resource = "deployments", .ns = "dev",
     .rule = &r_deploy_beta, .ns_sel = &env_prod, .want = ADM_WH_SKIP},
    {"Equivalent: object selector too", .group = "apps", .resource = "deployments", .rule = &r_deploy_beta,
     .obj_sel = &no_app, .want = ADM_WH_SKIP},
    {"Equivalent: pending 404 surfaces", .group = "apps", .resource = "deployments", .ns = "gone",
     .rule = &r_deploy_beta, .ns_sel = &env_prod, .want = ADM_WH_ERROR, .text = NOTFOUND("gone")},
    {"Equivalent: subresource, reason without it", .group = "apps", .resource = "deployments", .sub = "scale",
     .rule = &r_scale_beta, .want = ADM_WH_CONVERT,
     .text = "cannot convert apps/v1, Resource=deployments for matchPolicy Equivalent"},
    {"Equivalent: scope judged at the substituted version", .resource = "namespaces",
     .object = NS_OBJ("prod", "prod"), .rule = &r_ns_beta_cluster, .want = ADM_WH_SKIP},
};

static const char *or_default(const char *s, const char *def)
{
    return s != NULL ? s : def;
}

static void run_case(const mcase_t *c)
{
    pt_request_t r = {0};
    adm_review_request_t req;
    adm_webhook_t wh;
    adm_rule_t rules[2];
    adm_match_input_t in;
    adm_status_t st = {0};
    const char *reason = NULL;
    const char *problem = NULL;
    const char *body;
    adm_wh_match_t got;
    size_t used;

    r.operation = or_default(c->op, "CREATE");
    r.group = or_default(c->group, "");
    r.version = or_default(c->version, "v1");
    r.resource = or_default(c->resource, "pods");
    r.sub_resource = c->sub;
    r.kind = "Pod";
    r.namespace_ = or_default(c->ns, "prod");
    r.name = "p";
    r.object = or_default(c->object, POD_WEB);
    r.old_object = c->old_object;
    body = pt_review_json(arena, &r);
    assert_non_null(body);
    if (adm_review_decode(arena, body, strlen(body), &req, &problem) != 0) {
        fail_msg("case \"%s\": request does not decode: %s", c->name, problem);
    }

    memset(&wh, 0, sizeof(wh));
    wh.name = "hook.example.com";
    make_rule(&rules[0], c->rule != NULL ? c->rule : &r_star_star);
    wh.nrules = 1;
    if (c->rule2 != NULL) {
        make_rule(&rules[1], c->rule2);
        wh.nrules = 2;
    }
    wh.rules = rules;
    wh.match_policy = c->policy;
    wh.namespace_selector = c->ns_sel != NULL ? *c->ns_sel : (adm_selector_t){true, NULL, 0};
    wh.object_selector = c->obj_sel != NULL ? *c->obj_sel : (adm_selector_t){true, NULL, 0};

    in.req = &req;
    in.object = req.object;
    in.old_object = req.old_object;
    in.cluster = cluster;

    used = adm_arena_used(arena);
    got = adm_webhook_match(&wh, &in, arena, &st, &reason);
    if (got != c->want) {
        fail_msg("case \"%s\": got %d, want %d", c->name, got, c->want);
    }
    switch (got) {
    case ADM_WH_CALL:
    case ADM_WH_SKIP:
        /* the hot path leaves the arena alone */
        if (adm_arena_used(arena) != used) {
            fail_msg("case \"%s\": the match allocated %zu bytes", c->name, adm_arena_used(arena) - used);
        }
        break;
    case ADM_WH_CONVERT:
        assert_non_null(reason);
        if (strcmp(reason, c->text) != 0) {
            fail_msg("case \"%s\": reason \"%s\", want \"%s\"", c->name, reason, c->text);
        }
        break;
    case ADM_WH_ERROR:
        assert_non_null(st.message);
        if (strcmp(st.message, c->text) != 0) {
            fail_msg("case \"%s\": message \"%s\", want \"%s\"", c->name, st.message, c->text);
        }
        break;
    }
}

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_arena_reset(arena);
        run_case(&cases[i]);
    }
}

/* apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name) in full. */
static void test_not_found_status(void **state)
{
    static const mcase_t c = {"404", .ns = "gone", .ns_sel = &env_prod, .want = ADM_WH_ERROR};
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = "gone", .object = POD_WEB};
    const char *body, *problem = NULL, *reason = NULL;
    adm_review_request_t req;
    adm_webhook_t wh;
    adm_rule_t rule;
    adm_match_input_t in;
    adm_status_t st = {0};
    yyjson_alc alc;

    adm_arena_reset(arena);
    body = pt_review_json(arena, &r);
    assert_int_equal(adm_review_decode(arena, body, strlen(body), &req, &problem), 0);
    memset(&wh, 0, sizeof(wh));
    make_rule(&rule, &r_star_star);
    wh.rules = &rule;
    wh.nrules = 1;
    wh.namespace_selector = *c.ns_sel;
    wh.object_selector.everything = true;
    in = (adm_match_input_t){&req, req.object, req.old_object, cluster};

    assert_int_equal(adm_webhook_match(&wh, &in, arena, &st, &reason), ADM_WH_ERROR);
    assert_int_equal(st.code, 404);
    assert_string_equal(st.reason, "NotFound");
    assert_string_equal(st.message, "namespaces \"gone\" not found");
    adm_json_alc_init(&alc, arena);
    assert_json_equal(yyjson_val_write_opts(st.details, 0, &alc, NULL, NULL),
                      "{\"name\":\"gone\",\"kind\":\"namespaces\"}");

    /* no cluster state at all: every namespace is unknown */
    in.cluster = NULL;
    in.req = &req;
    memset(&st, 0, sizeof(st));
    assert_int_equal(adm_webhook_match(&wh, &in, arena, &st, &reason), ADM_WH_ERROR);
    assert_int_equal(st.code, 404);
}

/* Mutating webhooks match against the object as patched so far, not the request's. */
static void test_patched_object(void **state)
{
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = "prod", .object = POD_DB};
    const char *body, *problem = NULL, *reason = NULL;
    adm_review_request_t req;
    adm_webhook_t wh;
    adm_rule_t rule;
    adm_match_input_t in;
    adm_status_t st = {0};
    yyjson_doc *patched;

    adm_arena_reset(arena);
    body = pt_review_json(arena, &r);
    assert_int_equal(adm_review_decode(arena, body, strlen(body), &req, &problem), 0);
    patched = yyjson_read(POD_WEB, strlen(POD_WEB), 0);
    assert_non_null(patched);
    memset(&wh, 0, sizeof(wh));
    make_rule(&rule, &r_pods);
    wh.rules = &rule;
    wh.nrules = 1;
    wh.namespace_selector.everything = true;
    wh.object_selector = app_web;
    in = (adm_match_input_t){&req, req.object, req.old_object, cluster};
    assert_int_equal(adm_webhook_match(&wh, &in, arena, &st, &reason), ADM_WH_SKIP);
    in.object = yyjson_doc_get_root(patched);
    assert_int_equal(adm_webhook_match(&wh, &in, arena, &st, &reason), ADM_WH_CALL);
    yyjson_doc_free(patched);
}

static void test_exempt(void **state)
{
    static const struct {
        const char *group, *kind;
        bool want;
    } cases_[] = {
        {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", true},
        {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", true},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", true},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", true},
        {"admissionregistration.k8s.io", "MutatingAdmissionPolicy", true},
        {"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", true},
        {"admissionregistration.k8s.io", "SomethingElse", false},
        {"", "MutatingWebhookConfiguration", false},
        {"example.com", "ValidatingWebhookConfiguration", false},
        {"", "Pod", false},
    };

    for (size_t i = 0; i < sizeof(cases_) / sizeof(cases_[0]); i++) {
        adm_review_request_t req;

        memset(&req, 0, sizeof(req));
        req.kind.group = cases_[i].group;
        req.kind.version = "v1";
        req.kind.kind = cases_[i].kind;
        if (adm_webhook_request_exempt(&req) != cases_[i].want) {
            fail_msg("%s/%s: want %d", cases_[i].group, cases_[i].kind, cases_[i].want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_not_found_status),
        cmocka_unit_test(test_patched_object),
        cmocka_unit_test(test_exempt),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity as a plugin: its configuration (defaults, exemptions, every apiVersion, kube's
 * errors), the namespace label rules (fallbacks, warn inheriting enforce), what it answers for
 * pods, pod updates, subresources, controllers and namespaces, with the audit annotations and
 * warnings kube gives (texts of pod-security-admission's admission tests).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/podsecurity/policy.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_pod_security;

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;

static const char state_yaml[] =
    "apiVersion: v1\nkind: NamespaceList\nitems:\n"
    "- metadata: {name: open}\n"
    "- metadata: {name: strict, labels: {pod-security.kubernetes.io/enforce: restricted}}\n"
    "- metadata: {name: base, labels: {pod-security.kubernetes.io/enforce: baseline, "
    "pod-security.kubernetes.io/audit: restricted, pod-security.kubernetes.io/audit-version: v1.24, "
    "pod-security.kubernetes.io/warn: restricted}}\n"
    "- metadata: {name: bogus, labels: {pod-security.kubernetes.io/enforce: bogus, "
    "pod-security.kubernetes.io/warn-version: v1.x}}\n"
    "- metadata: {name: skip}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: old, namespace: open}\n"
    "spec: {containers: [{name: c, image: i}]}\n";

static const char config[] =
    "{\"apiVersion\":\"pod-security.admission.config.k8s.io/v1\",\"kind\":\"PodSecurityConfiguration\","
    "\"defaults\":{\"audit\":\"baseline\"},"
    "\"exemptions\":{\"usernames\":[\"admin\"],\"namespaces\":[\"skip\"],\"runtimeClasses\":[\"kata\"]}}";

static const char privileged_pod[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                                     "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                                     "\"securityContext\":{\"privileged\":true}}]}}";

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    cluster = pt_load_cluster(state_yaml);
    pt_set_cluster(cluster);
    return 0;
}

static int teardown(void **state)
{
    pt_set_cluster(NULL);
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

static void *configured(const char *cfg)
{
    void *st = NULL;
    char err[512];

    assert_int_equal(pt_configure(&adm_plugin_pod_security, cfg, NULL, &st, err, sizeof(err)), 0);
    return st;
}

/* s starts with prefix */
static bool starts(const char *s, const char *prefix)
{
    if (s == NULL || strncmp(s, prefix, strlen(prefix)) != 0) {
        print_error("want a text starting with\n  %s\ngot\n  %s\n", prefix, s != NULL ? s : "(none)");
        return false;
    }
    return true;
}

static const char *annotation(const pt_result_t *r, const char *key)
{
    for (size_t i = 0; i < r->attrs->nannotations; i++) {
        if (strcmp(r->attrs->annotations[i].key, key) == 0) {
            return r->attrs->annotations[i].value;
        }
    }
    return NULL;
}

static pt_result_t run_pod(void *st, const char *ns, const char *user, const char *object)
{
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = ns,
                      .name = "p",
                      .username = user,
                      .object = object};

    adm_arena_reset(arena);
    return pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
}

static void test_config(void **state)
{
    static const struct {
        const char *config, *error;
    } bad[] = {
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/v1\",\"kind\":\"PodSecurityConfiguration\","
         "\"defaults\":{\"enforce\":\"x\"}}",
         "defaults.enforce: Invalid value: \"x\": must be one of privileged, baseline, restricted"},
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/"
         "v1beta1\",\"kind\":\"PodSecurityConfiguration\","
         "\"defaults\":{\"warn-version\":\"v1.01\"}}",
         "defaults.warn-version: Invalid value: \"v1.01\": must be \"latest\" or \"v1.x\""},
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/"
         "v1alpha1\",\"kind\":\"PodSecurityConfiguration\","
         "\"exemptions\":{\"usernames\":[\"a\",\"\"]}}",
         "exemptions.usernames[1]: Invalid value: \"\": username must not be empty"},
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/v1\",\"kind\":\"PodSecurityConfiguration\","
         "\"exemptions\":{\"namespaces\":[\"a\",\"a\"]}}",
         "exemptions.namespaces[1]: Duplicate value: \"a\""},
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/v1\",\"kind\":\"PodSecurityConfiguration\","
         "\"exemptions\":{\"runtimeClasses\":[\"Bad_Name\"]}}",
         "exemptions.runtimeClasses[0]: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"},
        {"{\"apiVersion\":\"pod-security.admission.config.k8s.io/v2\",\"kind\":\"PodSecurityConfiguration\"}",
         "apiVersion: unsupported \"pod-security.admission.config.k8s.io/v2\""},
    };
    void *st = NULL;
    char err[1024];

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(pt_configure(&adm_plugin_pod_security, bad[i].config, NULL, &st, err, sizeof(err)),
                         ADM_EINVAL);
        if (strstr(err, bad[i].error) == NULL) {
            fail_msg("config %zu: want %s, got %s", i, bad[i].error, err);
        }
    }
    st = configured(NULL);
    adm_plugin_pod_security.free_state(st);
    st = configured(config);
    adm_plugin_pod_security.free_state(st);
}

static void test_labels(void **state)
{
    static const char labels[] =
        "{\"pod-security.kubernetes.io/enforce\":\"bogus\",\"pod-security.kubernetes.io/"
        "enforce-version\":\"v2.0\","
        "\"pod-security.kubernetes.io/audit\":\"nope\"}";
    yyjson_doc *doc = yyjson_read(labels, strlen(labels), 0);
    adm_psa_policy_t defaults = {
        {ADM_PSA_PRIVILEGED, {true, 0}}, {ADM_PSA_BASELINE, {false, 3}}, {ADM_PSA_PRIVILEGED, {true, 0}}};
    adm_psa_policy_t p;
    adm_psa_version_t v;
    const char *errs;

    /* enforce fails closed (restricted), audit fails open (privileged), warn does not inherit a bad enforce
     */
    adm_arena_reset(arena);
    p = adm_psa_policy_resolve(arena, yyjson_doc_get_root(doc), &defaults, &errs);
    assert_int_equal(p.enforce.level, ADM_PSA_RESTRICTED);
    assert_true(p.enforce.version.latest);
    assert_int_equal(p.audit.level, ADM_PSA_PRIVILEGED);
    assert_int_equal(p.warn.level, ADM_PSA_PRIVILEGED);
    assert_string_equal(
        errs, "[metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"bogus\": must "
              "be one of privileged, baseline, restricted, "
              "metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: \"v2.0\": "
              "must be \"latest\" or \"v1.x\", metadata.labels[pod-security.kubernetes.io/audit]: "
              "Invalid value: \"nope\": must be one of privileged, baseline, restricted]");
    yyjson_doc_free(doc);

    assert_true(adm_psa_parse_version("v1.0", &v) && !v.latest && v.minor == 0);
    assert_true(adm_psa_parse_version("v1.123", &v) && v.minor == 123);
    assert_false(adm_psa_parse_version("v1.01", &v));
    assert_false(adm_psa_parse_version("v1.", &v));
    assert_false(adm_psa_parse_version("1.2", &v));
    assert_false(adm_psa_parse_version("v1.99999999999999999999", &v));
    assert_true(v.latest);
}

static void test_pods(void **state)
{
    void *st = configured(config);
    pt_result_t r;

    /* no labels: the configured defaults (audit baseline) annotate a privileged pod */
    r = run_pod(st, "open", "bob", privileged_pod);
    assert_int_equal(r.rc, ADM_OK);
    assert_string_equal(annotation(&r, "pod-security.kubernetes.io/enforce-policy"), "privileged:latest");
    assert_string_equal(
        annotation(&r, "pod-security.kubernetes.io/audit-violations"),
        "would violate PodSecurity \"baseline:latest\": privileged (container \"c\" must not set "
        "securityContext.privileged=true)");
    assert_int_equal(r.attrs->nwarnings, 0);

    /* enforce restricted: denied with kube's 403, no warning */
    r = run_pod(st, "strict", "bob", privileged_pod);
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.reason, "Forbidden");
    assert_true(
        starts(r.status.message,
               "pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": privileged (container "
               "\"c\" must not set securityContext.privileged=true), allowPrivilegeEscalation != false"));
    assert_int_equal(r.attrs->nwarnings, 0);
    assert_string_equal(annotation(&r, "pod-security.kubernetes.io/enforce-policy"), "restricted:latest");

    /* enforce baseline, audit restricted:v1.24, warn restricted */
    r = run_pod(
        st, "base", "bob",
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
    assert_int_equal(r.rc, ADM_OK);
    assert_int_equal(r.attrs->nwarnings, 1);
    assert_true(starts(r.attrs->warnings[0],
                       "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation"));
    assert_true(starts(annotation(&r, "pod-security.kubernetes.io/audit-violations"),
                       "would violate PodSecurity \"restricted:v1.24\": "));

    /* bad labels: enforce evaluated as restricted, the parse error annotated */
    r = run_pod(st, "bogus", "bob", privileged_pod);
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_true(strstr(r.status.message, "violates PodSecurity \"restricted:latest\"") != NULL);
    assert_string_equal(
        annotation(&r, "pod-security.kubernetes.io/error"),
        "Failed to parse policy: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "
        "\"bogus\": must be one of privileged, baseline, restricted, "
        "metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"v1.x\": must be "
        "\"latest\" or \"v1.x\"]");

    /* exemptions: namespace, user, runtime class */
    r = run_pod(st, "skip", "bob", privileged_pod);
    assert_int_equal(r.rc, ADM_OK);
    assert_string_equal(annotation(&r, "pod-security.kubernetes.io/exempt"), "namespace");
    r = run_pod(st, "strict", "admin", privileged_pod);
    assert_int_equal(r.rc, ADM_OK);
    assert_string_equal(annotation(&r, "pod-security.kubernetes.io/exempt"), "user");
    r = run_pod(st, "strict", "bob",
                "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"runtimeClassName\":\"kata\",\"hostPID\":true}}");
    assert_int_equal(r.rc, ADM_OK);
    assert_string_equal(annotation(&r, "pod-security.kubernetes.io/exempt"), "runtimeClass");

    /* a namespace the cluster state lacks: kube's 500 */
    r = run_pod(st, "ghost", "bob", privileged_pod);
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 500);
    assert_string_equal(r.status.message, "Internal error occurred: failed to lookup namespace \"ghost\"");
    adm_plugin_pod_security.free_state(st);
}

static void test_updates_and_subresources(void **state)
{
    static const char running[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                                  "\"image\":\"i\",\"securityContext\":{\"privileged\":true}}]}}";
    static const char relabelled[] =
        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":"
        "[{\"name\":\"c\",\"image\":\"i\",\"securityContext\":{\"privileged\":true}}]}}";
    static const char new_image[] =
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
        "\"image\":\"j\",\"securityContext\":{\"privileged\":true}}]}}";
    static const char debug[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                                "\"image\":\"i\",\"securityContext\":{\"privileged\":true}}],"
                                "\"ephemeralContainers\":[{\"name\":\"dbg\",\"image\":\"busybox\"}]}}";
    void *st = configured(NULL);
    pt_request_t r = {.operation = "UPDATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "strict",
                      .name = "p",
                      .object = relabelled,
                      .old_object = running};
    pt_result_t res;

    /* labels only: allowed even though the pod violates the policy */
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    r.object = new_image;
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_DECLINED);
    /* an ephemeral container added through the subresource is evaluated */
    r.object = debug;
    r.sub_resource = "ephemeralcontainers";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_true(strstr(res.status.message, "containers \"c\", \"dbg\" must set "
                                           "securityContext.allowPrivilegeEscalation=false") != NULL);
    /* status and other ignored subresources are never evaluated */
    r.sub_resource = "status";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nannotations, 0);
    adm_plugin_pod_security.free_state(st);
}

static void test_controllers(void **state)
{
    static const char cronjob[] =
        "{\"metadata\":{\"name\":\"cj\"},\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{"
        "\"hostNetwork\":true,\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}}}";
    void *st = configured(NULL);
    pt_request_t r = {.operation = "CREATE",
                      .group = "batch",
                      .resource = "cronjobs",
                      .kind = "CronJob",
                      .namespace_ = "strict",
                      .name = "cj",
                      .object = cronjob};
    pt_result_t res;

    /* enforce=restricted alone: never denied, warned through warn's inheritance of enforce */
    adm_arena_reset(arena);
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nwarnings, 1);
    assert_true(
        starts(res.attrs->warnings[0],
               "would violate PodSecurity \"restricted:latest\": host namespaces (hostNetwork=true), "));
    assert_null(annotation(&res, "pod-security.kubernetes.io/enforce-policy"));
    /* a ReplicationController without a template is allowed */
    r.group = "";
    r.resource = "replicationcontrollers";
    r.kind = "ReplicationController";
    r.object = "{\"metadata\":{\"name\":\"rc\"},\"spec\":{}}";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nwarnings, 0);
    adm_plugin_pod_security.free_state(st);
}

static void test_namespaces(void **state)
{
    void *st = configured(config);
    pt_request_t r = {.operation = "CREATE", .resource = "namespaces", .kind = "Namespace", .name = "skip"};
    pt_result_t res;

    r.namespace_ = "skip";
    r.object =
        "{\"metadata\":{\"name\":\"skip\",\"labels\":{\"pod-security.kubernetes.io/enforce\":\"restricted\","
        "\"pod-security.kubernetes.io/enforce-version\":\"v1.0\",\"pod-security.kubernetes.io/audit\":"
        "\"restricted\",\"pod-security.kubernetes.io/warn\":\"baseline\"}}}";
    adm_arena_reset(arena);
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nwarnings, 1);
    assert_string_equal(
        res.attrs->warnings[0],
        "namespace \"skip\" is exempt from Pod Security, and the policy (enforce=restricted:v1.0, "
        "audit=restricted:latest, warn=baseline:latest) will be ignored");

    /* bad labels: 422 with each field */
    r.name = r.namespace_ = "n";
    r.object =
        "{\"metadata\":{\"name\":\"n\",\"labels\":{\"pod-security.kubernetes.io/enforce\":\"privileged\","
        "\"pod-security.kubernetes.io/enforce-version\":\"unknown\"}}}";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_DECLINED);
    assert_int_equal(res.status.code, 422);
    assert_string_equal(res.status.reason, "Invalid");
    assert_string_equal(
        res.status.message,
        "Namespace \"n\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: "
        "Invalid value: \"unknown\": must be \"latest\" or \"v1.x\"");

    /* an update keeping the same bad labels is not blocked */
    r.operation = "UPDATE";
    r.old_object = r.object;
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);

    /* tightening "open": its one pod (no controller) is listed */
    r.name = r.namespace_ = "open";
    r.old_object = "{\"metadata\":{\"name\":\"open\"}}";
    r.object = "{\"metadata\":{\"name\":\"open\",\"labels\":{\"pod-security.kubernetes.io/"
               "enforce\":\"restricted\"}}}";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nwarnings, 2);
    assert_string_equal(res.attrs->warnings[0],
                        "existing pods in namespace \"open\" violate the new PodSecurity "
                        "enforce level \"restricted:latest\"");
    assert_string_equal(res.attrs->warnings[1],
                        "old: allowPrivilegeEscalation != false, unrestricted capabilities, "
                        "runAsNonRoot != true, seccompProfile");
    /* loosening does not look at pods */
    r.old_object = r.object;
    r.object =
        "{\"metadata\":{\"name\":\"open\",\"labels\":{\"pod-security.kubernetes.io/enforce\":\"baseline\"}}}";
    res = pt_run(arena, &adm_plugin_pod_security, st, 'v', &r);
    assert_int_equal(res.rc, ADM_OK);
    assert_int_equal(res.attrs->nwarnings, 0);
    adm_plugin_pod_security.free_state(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),      cmocka_unit_test(test_labels),
        cmocka_unit_test(test_pods),        cmocka_unit_test(test_updates_and_subresources),
        cmocka_unit_test(test_controllers), cmocka_unit_test(test_namespaces),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

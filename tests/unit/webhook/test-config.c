/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adm_webhook_set_load: every field of a full configuration, the v1 defaults, hook-list order
 * across configurations and files, List and folder forms, the matchPolicy Equivalent warnings (one
 * line per webhook, only where kube-apiserver would convert), and one case per validation rule with
 * the text of its error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adm/admission/admission.h"
#include "adm/base/error.h"
#include "adm/webhook/config.h"

static char dir[64];

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/adm-whcfg-XXXXXX");
    return mkdtemp(dir) == NULL;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes text to dir/name and returns the full path (static storage, one per slot). */
static const char *write_file(const char *name, const char *text)
{
    static char paths[8][256];
    static size_t slot;
    char *path = paths[slot++ % 8];
    FILE *f;

    snprintf(path, 256, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return path;
}

static adm_webhook_set_t *load_ok(const char *path, bool insecure)
{
    adm_webhook_set_t *set = NULL;
    char err[512] = "";
    int rc = adm_webhook_set_load(&path, 1, insecure, &set, err, sizeof(err));

    if (rc != 0) {
        fail_msg("load failed (%d): %s", rc, err);
    }
    assert_non_null(set);
    return set;
}

static const char full_yaml[] =
    "apiVersion: admissionregistration.k8s.io/v1\n"
    "kind: MutatingWebhookConfiguration\n"
    "metadata:\n"
    "  name: full\n"
    "  uid: 1234\n"
    "  labels: {team: a}\n"
    "webhooks:\n"
    "- name: pods.full.example.com\n"
    "  clientConfig:\n"
    "    service: {namespace: hooks, name: svc, path: /mutate/pods, port: 8443}\n"
    "    caBundle: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmFiYwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==\n"
    "  rules:\n"
    "  - operations: [CREATE, UPDATE]\n"
    "    apiGroups: [\"\", apps]\n"
    "    apiVersions: [\"*\"]\n"
    "    resources: [pods, pods/status, deployments/*]\n"
    "    scope: Namespaced\n"
    "  - operations: [\"*\"]\n"
    "    apiGroups: [\"*\"]\n"
    "    apiVersions: [v1]\n"
    "    resources: [\"*/scale\", nodes]\n"
    "    scope: Cluster\n"
    "  failurePolicy: Ignore\n"
    "  matchPolicy: Exact\n"
    "  namespaceSelector:\n"
    "    matchLabels: {env: prod}\n"
    "    matchExpressions:\n"
    "    - {key: skip, operator: DoesNotExist}\n"
    "  objectSelector:\n"
    "    matchExpressions:\n"
    "    - {key: app, operator: NotIn, values: [a, b]}\n"
    "  sideEffects: NoneOnDryRun\n"
    "  timeoutSeconds: 5\n"
    "  admissionReviewVersions: [v2, v1beta1, v1]\n"
    "  reinvocationPolicy: IfNeeded\n"
    "  matchConditions: []\n";

static void test_full(void **state)
{
    adm_webhook_set_t *set = load_ok(write_file("full.yaml", full_yaml), false);
    const adm_webhook_t *h;

    assert_int_equal(set->nmutating, 1);
    assert_int_equal(set->nvalidating, 0);
    assert_int_equal(set->nwarnings, 0);
    h = &set->mutating[0];
    assert_int_equal(h->type, ADM_WEBHOOK_MUTATING);
    assert_string_equal(h->config_name, "full");
    assert_string_equal(h->name, "pods.full.example.com");
    assert_string_equal(h->id, "full/pods.full.example.com/0");
    assert_int_equal(h->index, 0);
    assert_null(h->url);
    assert_non_null(h->service);
    assert_string_equal(h->service->namespace_, "hooks");
    assert_string_equal(h->service->name, "svc");
    assert_string_equal(h->service->path, "/mutate/pods");
    assert_int_equal(h->service->port, 8443);
    assert_string_equal(h->ca_bundle, "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
    assert_int_equal(h->ca_bundle_len, strlen(h->ca_bundle));

    assert_int_equal(h->nrules, 2);
    assert_int_equal(h->rules[0].operations, ADM_OPS_CREATE | ADM_OPS_UPDATE);
    assert_int_equal(h->rules[0].napi_groups, 2);
    assert_string_equal(h->rules[0].api_groups[0], "");
    assert_string_equal(h->rules[0].api_groups[1], "apps");
    assert_int_equal(h->rules[0].napi_versions, 1);
    assert_string_equal(h->rules[0].api_versions[0], "*");
    assert_int_equal(h->rules[0].nresources, 3);
    assert_string_equal(h->rules[0].resources[0].resource, "pods");
    assert_string_equal(h->rules[0].resources[0].subresource, "");
    assert_string_equal(h->rules[0].resources[1].resource, "pods");
    assert_string_equal(h->rules[0].resources[1].subresource, "status");
    assert_string_equal(h->rules[0].resources[2].resource, "deployments");
    assert_string_equal(h->rules[0].resources[2].subresource, "*");
    assert_int_equal(h->rules[0].scope, ADM_SCOPE_NAMESPACED);
    assert_int_equal(h->rules[1].operations, ADM_OPS_ALL);
    assert_string_equal(h->rules[1].api_groups[0], "*");
    assert_string_equal(h->rules[1].api_versions[0], "v1");
    assert_string_equal(h->rules[1].resources[0].resource, "*");
    assert_string_equal(h->rules[1].resources[0].subresource, "scale");
    assert_string_equal(h->rules[1].resources[1].resource, "nodes");
    assert_int_equal(h->rules[1].scope, ADM_SCOPE_CLUSTER);

    assert_int_equal(h->failure_policy, ADM_FAILURE_IGNORE);
    assert_int_equal(h->match_policy, ADM_MATCH_EXACT);
    assert_false(h->namespace_selector.everything);
    assert_int_equal(h->namespace_selector.nreqs, 2);
    assert_string_equal(h->namespace_selector.reqs[0].key, "env");
    assert_int_equal(h->namespace_selector.reqs[0].op, ADM_SEL_IN);
    assert_string_equal(h->namespace_selector.reqs[0].values[0], "prod");
    assert_int_equal(h->namespace_selector.reqs[1].op, ADM_SEL_DOES_NOT_EXIST);
    assert_false(h->object_selector.everything);
    assert_int_equal(h->object_selector.nreqs, 1);
    assert_int_equal(h->object_selector.reqs[0].op, ADM_SEL_NOT_IN);
    assert_int_equal(h->object_selector.reqs[0].nvalues, 2);
    assert_int_equal(h->side_effects, ADM_SIDE_EFFECTS_NONE_ON_DRY_RUN);
    assert_int_equal(h->timeout_seconds, 5);
    assert_int_equal(h->review_version, ADM_REVIEW_V1BETA1);
    assert_int_equal(h->reinvocation, ADM_REINVOKE_IF_NEEDED);
    adm_webhook_set_free(set);
}

static void test_defaults(void **state)
{
    adm_webhook_set_t *set =
        load_ok(write_file("min.yaml", "apiVersion: admissionregistration.k8s.io/v1\n"
                                       "kind: ValidatingWebhookConfiguration\n"
                                       "metadata: {name: min}\n"
                                       "webhooks:\n"
                                       "- name: a.min.example\n"
                                       "  clientConfig: {url: \"https://h.example:9443/v\"}\n"
                                       "  rules:\n"
                                       "  - operations: [DELETE]\n"
                                       "    apiGroups: [\"\"]\n"
                                       "    apiVersions: [\"*\"]\n"
                                       "    resources: [\"*\"]\n"
                                       "  sideEffects: None\n"
                                       "  admissionReviewVersions: [v1]\n"
                                       "- name: b.min.example\n"
                                       "  clientConfig:\n"
                                       "    service: {namespace: ns, name: s}\n"
                                       "  sideEffects: None\n"
                                       "  admissionReviewVersions: [v1beta1, v1]\n"),
                false);
    const adm_webhook_t *h = &set->validating[0];

    assert_int_equal(set->nvalidating, 2);
    assert_int_equal(h->type, ADM_WEBHOOK_VALIDATING);
    assert_string_equal(h->url, "https://h.example:9443/v");
    assert_null(h->service);
    assert_null(h->ca_bundle);
    assert_int_equal(h->ca_bundle_len, 0);
    assert_int_equal(h->rules[0].operations, ADM_OPS_DELETE);
    assert_int_equal(h->rules[0].scope, ADM_SCOPE_ALL);
    assert_int_equal(h->failure_policy, ADM_FAILURE_FAIL);
    assert_int_equal(h->match_policy, ADM_MATCH_EQUIVALENT);
    assert_true(h->namespace_selector.everything);
    assert_true(h->object_selector.everything);
    assert_int_equal(h->side_effects, ADM_SIDE_EFFECTS_NONE);
    assert_int_equal(h->timeout_seconds, 10);
    assert_int_equal(h->review_version, ADM_REVIEW_V1);
    assert_int_equal(h->reinvocation, ADM_REINVOKE_NEVER);

    h = &set->validating[1];
    assert_int_equal(h->index, 1);
    assert_int_equal(h->nrules, 0);
    assert_int_equal(h->service->port, 443);
    assert_string_equal(h->service->path, "");
    assert_int_equal(h->review_version, ADM_REVIEW_V1BETA1);
    /*
     * Every core resource includes core events, whose events.k8s.io/v1 twin kube-apiserver would
     * send converted: the one warning. The webhook without rules has nothing to warn about.
     */
    assert_int_equal(set->nwarnings, 1);
    assert_non_null(strstr(set->warnings[0], "webhooks[0] (\"a.min.example\"): "));
    assert_non_null(strstr(set->warnings[0],
                           "requests for events.k8s.io/v1 events (via \"\"/v1 events) match "
                           "only through another group"));
    adm_webhook_set_free(set);
}

/* A configuration document with one webhook per name, kind 'm' or 'v'. */
static void add_config(char *buf, size_t cap, char kind, const char *cfg, const char *hook1,
                       const char *hook2)
{
    size_t used = strlen(buf);

    used +=
        (size_t)snprintf(buf + used, cap - used,
                         "---\napiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\n"
                         "metadata: {name: %s}\nwebhooks:\n",
                         kind == 'm' ? "Mutating" : "Validating", cfg);
    for (size_t i = 0; i < 2; i++) {
        const char *h = i == 0 ? hook1 : hook2;

        if (h != NULL) {
            used += (size_t)snprintf(
                buf + used, cap - used,
                "- {name: %s, clientConfig: {url: \"https://x.example\"}, sideEffects: None, "
                "admissionReviewVersions: [v1]}\n",
                h);
        }
    }
}

static void test_order(void **state)
{
    char a[4096] = "", b[4096] = "";
    const char *paths[2];
    adm_webhook_set_t *set = NULL;
    char err[256];
    static const char *const want_m[] = {"alpha/one.a.example/0", "alpha/two.a.example/0",
                                         "beta/one.b.example/0", "zeta/one.z.example/0"};

    add_config(a, sizeof(a), 'm', "zeta", "one.z.example", NULL);
    add_config(a, sizeof(a), 'v', "zeta", "v.z.example", NULL); /* same name, other kind: fine */
    add_config(a, sizeof(a), 'm', "beta", "one.b.example", NULL);
    add_config(b, sizeof(b), 'm', "alpha", "one.a.example", "two.a.example");
    add_config(b, sizeof(b), 'v', "a-later-file", "x.y.z", NULL);
    paths[0] = write_file("a.yaml", a);
    paths[1] = write_file("b.yaml", b);
    assert_int_equal(adm_webhook_set_load(paths, 2, false, &set, err, sizeof(err)), 0);
    assert_int_equal(set->nmutating, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(set->mutating[i].id, want_m[i]);
        assert_int_equal(set->mutating[i].index, i);
    }
    assert_int_equal(set->nvalidating, 2);
    assert_string_equal(set->validating[0].config_name, "a-later-file");
    assert_string_equal(set->validating[1].id, "zeta/v.z.example/0");
    assert_int_equal(set->validating[1].index, 1);
    adm_webhook_set_free(set);
}

static void test_list_forms(void **state)
{
    const char *path = write_file(
        "list.yaml", "apiVersion: v1\n"
                     "kind: List\n"
                     "metadata: {resourceVersion: \"\"}\n"
                     "items:\n"
                     "- apiVersion: admissionregistration.k8s.io/v1\n"
                     "  kind: ValidatingWebhookConfiguration\n"
                     "  metadata: {name: b}\n"
                     "  webhooks: [{name: b.x.y, clientConfig: {url: \"https://h\"}, sideEffects: None, "
                     "admissionReviewVersions: [v1]}]\n"
                     "- apiVersion: admissionregistration.k8s.io/v1\n"
                     "  kind: MutatingWebhookConfiguration\n"
                     "  metadata: {name: m}\n"
                     "  webhooks: [{name: m.x.y, clientConfig: {url: \"https://h\"}, sideEffects: None, "
                     "admissionReviewVersions: [v1]}]\n"
                     "---\n"
                     "apiVersion: admissionregistration.k8s.io/v1\n"
                     "kind: ValidatingWebhookConfigurationList\n"
                     "items:\n"
                     "- metadata: {name: a}\n"
                     "  webhooks: [{name: a.x.y, clientConfig: {url: \"https://h\"}, sideEffects: None, "
                     "admissionReviewVersions: [v1]}]\n");
    adm_webhook_set_t *set = load_ok(path, false);

    assert_int_equal(set->nmutating, 1);
    assert_string_equal(set->mutating[0].id, "m/m.x.y/0");
    assert_int_equal(set->nvalidating, 2);
    assert_string_equal(set->validating[0].id, "a/a.x.y/0");
    assert_string_equal(set->validating[1].id, "b/b.x.y/0");
    adm_webhook_set_free(set);
}

static void test_json_and_folder(void **state)
{
    char sub[128];
    const char *path = dir;
    adm_webhook_set_t *set = NULL;
    char err[256];
    char one[2048] = "", two[2048] = "";

    add_config(one, sizeof(one), 'v', "two", "w.two.example", NULL);
    add_config(two, sizeof(two), 'v', "one", "w.one.example", NULL);
    write_file("2-second.yml", one);
    write_file("10-first.yaml", two); /* name order is byte order: "10-" < "2-" */
    write_file("3.json",
               "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", "
               "\"kind\": \"ValidatingWebhookConfiguration\", \"metadata\": {\"name\": \"json\"}, "
               "\"webhooks\": [{\"name\": \"j.json.example\", \"clientConfig\": {\"url\": \"https://j\", "
               "\"caBundle\": \"YWJj\"}, \"sideEffects\": \"None\", "
               "\"admissionReviewVersions\": [\"v1\"]}]}");
    write_file(".hidden.yaml", "not: [valid");
    write_file("notes.txt", "not: [valid");
    snprintf(sub, sizeof(sub), "%s/nested.yaml", dir);
    assert_int_equal(mkdir(sub, 0700), 0); /* folders are not entered, even with a matching name */
    assert_int_equal(adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err)), 0);
    assert_int_equal(set->nvalidating, 3);
    assert_string_equal(set->validating[0].config_name, "json");
    assert_string_equal(set->validating[0].ca_bundle, "abc");
    assert_int_equal(set->validating[0].ca_bundle_len, 3);
    assert_string_equal(set->validating[1].config_name, "one");
    assert_string_equal(set->validating[2].config_name, "two");
    adm_webhook_set_free(set);
}

/*
 * Loads one ValidatingWebhookConfiguration "w" with a webhook per entry of hooks: the text after
 * "rules: " (a flow-style list), optionally followed by more lines of the webhook. Webhook k is
 * named "hk.w.example".
 */
static adm_webhook_set_t *load_hooks(const char *const *hooks, size_t n)
{
    static char doc[8192];
    size_t used = (size_t)snprintf(doc, sizeof(doc),
                                   "apiVersion: admissionregistration.k8s.io/v1\n"
                                   "kind: ValidatingWebhookConfiguration\n"
                                   "metadata: {name: w}\n"
                                   "webhooks:\n");

    for (size_t k = 0; k < n; k++) {
        used += (size_t)snprintf(doc + used, sizeof(doc) - used,
                                 "- name: h%zu.w.example\n"
                                 "  clientConfig: {url: \"https://h\"}\n"
                                 "  sideEffects: None\n"
                                 "  admissionReviewVersions: [v1]\n"
                                 "  rules: %s\n",
                                 k, hooks[k]);
        assert_true(used < sizeof(doc));
    }
    return load_ok(write_file("w.yaml", doc), false);
}

#define LOAD_HOOKS(...)                                                                                      \
    load_hooks((const char *const[]){__VA_ARGS__},                                                           \
               sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* The text of the only warning, which must name webhook k of load_hooks and be one line. */
static const char *only_warning(const adm_webhook_set_t *set, size_t k)
{
    char who[96];

    assert_int_equal(set->nwarnings, 1);
    snprintf(who, sizeof(who),
             "w.yaml: ValidatingWebhookConfiguration \"w\": webhooks[%zu] (\"h%zu.w.example\"): ", k, k);
    assert_non_null(strstr(set->warnings[0], who));
    assert_non_null(strstr(set->warnings[0], "matchPolicy Equivalent"));
    assert_non_null(strstr(set->warnings[0], "or set matchPolicy: Exact"));
    assert_null(strchr(set->warnings[0], '\n'));
    return set->warnings[0];
}

/* Core pods are served in v1 only: nothing can need a conversion. */
static void test_equivalent_core_pods(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS("[{operations: [\"*\"], apiGroups: [\"\"], apiVersions: [v1], "
                                        "resources: [pods, pods/status, pods/exec]}]");

    assert_int_equal(set->nwarnings, 0);
    adm_webhook_set_free(set);
}

/* autoscaling v1 and v2 share storage: a v2 request reaches the webhook only as v1, which admitd cannot make.
 */
static void test_equivalent_same_group(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS("[{operations: [CREATE, UPDATE], apiGroups: [autoscaling], "
                                        "apiVersions: [v1], resources: [horizontalpodautoscalers]}]");
    const char *w = only_warning(set, 0);

    assert_non_null(strstr(w, "requests for autoscaling/v2 horizontalpodautoscalers (via autoscaling/v1 "
                              "horizontalpodautoscalers) match only through another version of their group"));
    assert_non_null(strstr(w, "the call fails and failurePolicy decides (D6)"));
    assert_null(strstr(w, "events"));
    assert_null(strstr(w, "does not call"));
    adm_webhook_set_free(set);
}

/* events.k8s.io/v1 events and core v1 events share storage across groups: a call failure too (D6). */
static void test_equivalent_other_group(void **state)
{
    adm_webhook_set_t *set =
        LOAD_HOOKS("[{operations: [CREATE], apiGroups: [events.k8s.io], apiVersions: [v1], "
                   "resources: [events]}]");
    const char *w = only_warning(set, 0);

    assert_non_null(
        strstr(w, "requests for \"\"/v1 events (via events.k8s.io/v1 events) match only through "
                  "another group, where kube-apiserver would call the webhook with a converted object, "
                  "so the call fails and failurePolicy decides (D6)"));
    assert_null(strstr(w, "autoscaling"));
    adm_webhook_set_free(set);
}

/* Every member listed, in one rule or across rules: no conversion. */
static void test_equivalent_all_listed(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS(
        "[{operations: [\"*\"], apiGroups: [\"\", events.k8s.io], apiVersions: [v1], resources: [events]}]",
        "[{operations: [\"*\"], apiGroups: [events.k8s.io], apiVersions: [v1], resources: [events]}, "
        "{operations: [\"*\"], apiGroups: [\"\"], apiVersions: [v1], resources: [\"*\"]}]",
        "[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v2, v1], "
        "resources: [horizontalpodautoscalers/*]}]");

    assert_int_equal(set->nwarnings, 0);
    adm_webhook_set_free(set);
}

/* "*" versions reach every member alike; one listed version of every group does not. */
static void test_equivalent_wildcards(void **state)
{
    adm_webhook_set_t *set =
        LOAD_HOOKS("[{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]",
                   "[{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [v1], resources: [\"*\"]}]",
                   "[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [\"*\"], resources: "
                   "[horizontalpodautoscalers]}]");
    const char *w = only_warning(set, 1);

    /* Core and events.k8s.io events are both v1: only autoscaling/v2 is left out. */
    assert_non_null(strstr(w, "requests for autoscaling/v2 horizontalpodautoscalers (via autoscaling/v1 "
                              "horizontalpodautoscalers) match only"));
    assert_null(strstr(w, "events"));
    adm_webhook_set_free(set);
}

static void test_equivalent_exact(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS("[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v1], "
                                        "resources: [horizontalpodautoscalers]}]\n"
                                        "  matchPolicy: Exact",
                                        "[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v1], "
                                        "resources: [horizontalpodautoscalers]}]");

    assert_non_null(strstr(only_warning(set, 1), "autoscaling/v2 horizontalpodautoscalers"));
    adm_webhook_set_free(set);
}

/* Several rules needing conversions still make one line, each member named once. */
static void test_equivalent_one_line(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS(
        "[{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v1], "
        "resources: [horizontalpodautoscalers]}, "
        "{operations: [UPDATE], apiGroups: [autoscaling], apiVersions: [v1], "
        "resources: [horizontalpodautoscalers/status]}, "
        "{operations: [CREATE], apiGroups: [events.k8s.io], apiVersions: [v1], resources: [events]}]");
    const char *w = only_warning(set, 0);
    const char *first = strstr(w, "autoscaling/v2 horizontalpodautoscalers (via");

    assert_non_null(first);
    assert_null(strstr(first + 1, "autoscaling/v2 horizontalpodautoscalers (via"));
    assert_non_null(
        strstr(w, "failurePolicy decides (D6); requests for \"\"/v1 events (via events.k8s.io/v1 events)"));
    adm_webhook_set_free(set);
}

/*
 * Only requests that exist count: HPAs have no scale subresource and are namespaced, and the
 * newest release serves flowcontrol v1 only (1.29 to 1.31 also serve v1beta3; D1). A status
 * subresource listed in one version, a create listed in one version, do need conversions.
 */
static void test_equivalent_existing_requests(void **state)
{
    adm_webhook_set_t *set = LOAD_HOOKS(
        "[{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [v1], resources: [\"*/scale\"]}]",
        "[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v1], resources: "
        "[horizontalpodautoscalers], "
        "scope: Cluster}]",
        "[{operations: [\"*\"], apiGroups: [flowcontrol.apiserver.k8s.io], apiVersions: [v1], "
        "resources: [flowschemas, prioritylevelconfigurations/status]}]",
        "[{operations: [CONNECT], apiGroups: [autoscaling], apiVersions: [v1], resources: [\"*\"]}]",
        "[{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v2], resources: [\"*\"]}, "
        "{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v1], resources: [\"*\"]}, "
        "{operations: [\"*\"], apiGroups: [autoscaling], apiVersions: [v1, v2], resources: [\"*/status\"]}]");

    assert_int_equal(set->nwarnings, 1);
    /* Webhook 4 lists v1 for creates only: updates and deletes of v1 HPAs would be converted to v2. */
    assert_non_null(strstr(only_warning(set, 4), "requests for autoscaling/v1 horizontalpodautoscalers (via "
                                                 "autoscaling/v2 horizontalpodautoscalers)"));
    adm_webhook_set_free(set);
}

static void test_insecure_url(void **state)
{
    static const char doc[] =
        "apiVersion: admissionregistration.k8s.io/v1\n"
        "kind: ValidatingWebhookConfiguration\n"
        "metadata: {name: i}\n"
        "webhooks:\n"
        "- {name: a.b.c, clientConfig: {url: \"http://127.0.0.1:8080/x\"}, sideEffects: None, "
        "admissionReviewVersions: [v1]}\n";
    const char *path = write_file("i.yaml", doc);
    adm_webhook_set_t *set = NULL;
    char err[512];

    assert_int_equal(adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err)), ADM_EINVAL);
    assert_null(set);
    assert_non_null(strstr(err, "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only "
                                "allowed URL scheme; desired format: https://host[/path]"));
    set = load_ok(path, true);
    assert_string_equal(set->validating[0].url, "http://127.0.0.1:8080/x");
    adm_webhook_set_free(set);
}

static void test_io_errors(void **state)
{
    char missing[128];
    const char *path = missing;
    adm_webhook_set_t *set = NULL;
    char err[256];

    snprintf(missing, sizeof(missing), "%s/none.yaml", dir);
    assert_int_equal(adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err)), ADM_EIO);
    assert_null(set);
    assert_non_null(strstr(err, "none.yaml: No such file or directory"));
    /* nothing to load is not an error */
    path = write_file("empty.yaml", "# only a comment\n");
    set = load_ok(path, false);
    assert_int_equal(set->nmutating + set->nvalidating, 0);
    adm_webhook_set_free(set);
    adm_webhook_set_free(NULL);
}

/* ---- validation table ---- */

#define HDR                                                                                                  \
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: "   \
    "x}\n"
#define MHDR                                                                                                 \
    "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: x}\n"
#define NAME "name: a.b.c"
#define CC "clientConfig: {url: \"https://h.example/p\"}"
#define SE "sideEffects: None"
#define ARV "admissionReviewVersions: [v1]"
#define HOOK(...) HDR "webhooks:\n- {" __VA_ARGS__ "}\n"
#define MHOOK(...) MHDR "webhooks:\n- {" __VA_ARGS__ "}\n"
#define OK3 NAME ", " CC ", " SE ", " ARV
#define RULE(...) HOOK(OK3 ", rules: [{" __VA_ARGS__ "}]")
#define RULE_OK "operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1]"
#define SVC(...) HOOK(NAME ", " SE ", " ARV ", clientConfig: {service: {" __VA_ARGS__ "}}")
#define URL(u) HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"" u "\"}")

static const struct {
    const char *yaml;
    const char *want; /* substring of the error, after "PATH: " */
} bad[] = {
    /* the documented example, in full */
    {HOOK(OK3 ", timeoutSeconds: 31"), "t.yaml: ValidatingWebhookConfiguration \"x\": "
                                       "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value "
                                       "must be between 1 and 30 seconds"},
    {HOOK(OK3 ", timeoutSeconds: 0"),
     "timeoutSeconds: Invalid value: 0: the timeout value must be between 1"},
    {HOOK(OK3 ", timeoutSeconds: \"10\""), "webhooks[0].timeoutSeconds: must be an integer"},
    {HOOK(OK3 ", timeoutSeconds: 1.5"), "webhooks[0].timeoutSeconds: must be an integer"},
    {HOOK(OK3 ", timeoutSeconds: 99999999999"), "webhooks[0].timeoutSeconds: must be an integer"},
    /* document level */
    {"apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingWebhookConfiguration\nmetadata: "
     "{name: x}\n",
     "document 1: apiVersion: Unsupported value: \"admissionregistration.k8s.io/v1beta1\": supported values: "
     "\"admissionregistration.k8s.io/v1\""},
    {"kind: ValidatingWebhookConfiguration\nmetadata: {name: x}\n", "document 1: apiVersion: Required value"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "document 1: kind: Unsupported value: \"Pod\""},
    {"apiVersion: v1\nmetadata: {name: x}\n", "document 1: kind: Required value"},
    {"- a\n- b\n", "document 1: must be an object"},
    {HDR "---\n" HDR, "ValidatingWebhookConfiguration \"x\": metadata.name: Duplicate value: \"x\""},
    {"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {}\n",
     "document 1 ValidatingWebhookConfiguration: metadata.name: Required value"},
    {"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: "
     "X_y}\n",
     "metadata.name: Invalid value: \"X_y\": a lowercase RFC 1123 subdomain"},
    {"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: []\n",
     "metadata: must be an object"},
    {HDR "webhook: []\n", "ValidatingWebhookConfiguration \"x\": unknown field \"webhook\""},
    {HDR "webhooks: {}\n", "webhooks: must be an array"},
    {HDR "webhooks: [x]\n", "webhooks[0]: must be an object"},
    {"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
     "document 1 items[0]: kind: Unsupported value: \"ConfigMap\""},
    {"apiVersion: admissionregistration.k8s.io/v1\nkind: List\nitems: []\n",
     "document 1: apiVersion: Unsupported value: \"admissionregistration.k8s.io/v1\": supported values for "
     "kind List"},
    {"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfigurationList\n"
     "items:\n- {kind: ValidatingWebhookConfiguration, metadata: {name: c}}\n",
     "document 1 items[0]: kind: Unsupported value: \"ValidatingWebhookConfiguration\""},
    {"apiVersion: v1\nkind: List\nitems: {}\n", "items: must be an array"},
    {"a: [b\n", "t.yaml: line "},
    /* strict fields */
    {HOOK(OK3 ", namespaceSelectr: {}"), "webhooks[0]: unknown field \"namespaceSelectr\""},
    {HOOK(OK3 ", reinvocationPolicy: Never"),
     "webhooks[0]: unknown field \"reinvocationPolicy\" (only mutating webhooks have reinvocationPolicy)"},
    {HOOK(OK3 ", sideEffects: Some"), "webhooks[0]: duplicate field \"sideEffects\""},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", cabundle: x}"),
     "webhooks[0].clientConfig: unknown field \"cabundle\""},
    {SVC("namespace: ns, name: s, prot: 1"), "webhooks[0].clientConfig.service: unknown field \"prot\""},
    {RULE(RULE_OK ", resources: [pods], scopes: Cluster"), "webhooks[0].rules[0]: unknown field \"scopes\""},
    {HOOK(OK3 ", objectSelector: {matchLabel: {a: b}}"),
     "webhooks[0].objectSelector: unknown field \"matchLabel\""},
    /* name */
    {HOOK(CC ", " SE ", " ARV), "webhooks[0].name: Required value"},
    {HOOK("name: a.b, " CC ", " SE ", " ARV), "webhooks[0].name: Invalid value: \"a.b\": should be a domain "
                                              "with at least three segments separated by dots"},
    {HOOK("name: A.b.c, " CC ", " SE ", " ARV),
     "webhooks[0].name: Invalid value: \"A.b.c\": a lowercase RFC 1123"},
    {HOOK("name: 5, " CC ", " SE ", " ARV), "webhooks[0].name: must be a string"},
    {HDR "webhooks:\n- {" OK3 "}\n- {" OK3 "}\n", "webhooks[1].name: Duplicate value: \"a.b.c\""},
    /* clientConfig */
    {HOOK(NAME ", " SE ", " ARV),
     "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {}"),
     "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", service: {namespace: ns, name: s}}"),
     "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: x"), "webhooks[0].clientConfig: must be an object"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: [x]}"),
     "webhooks[0].clientConfig.url: must be a string"},
    {URL("http://h/x"), "clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme"},
    {URL("h.example/x"), "clientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme"},
    {URL("https:///x"), "clientConfig.url: Invalid value: \"\": host must be specified; desired format"},
    {URL("https:h"), "clientConfig.url: Invalid value: \"\": host must be specified"},
    {URL("https://user:secret@h/x"),
     "clientConfig.url: Invalid value: \"user:xxxxx\": user information is not permitted in the URL"},
    {URL("https://h/x#frag"),
     "clientConfig.url: Invalid value: \"frag\": fragments are not permitted in the URL"},
    {URL("https://h/x?a=b"), "clientConfig.url: Invalid value: \"a=b\": query parameters are not permitted"},
    {URL("https://h:port/x"), "url must be a valid URL: invalid port \":port\" after host"},
    {URL("https://h x/"), "url must be a valid URL: a space or control character"},
    {URL("https://h/%zz"), "url must be a valid URL: invalid URL escape"},
    {URL("https://[::1/x"), "url must be a valid URL: missing ']' in host"},
    {URL("://h"), "url must be a valid URL: missing protocol scheme"},
    {SVC("namespace: ns"), "clientConfig.service.name: Required value: service name is required"},
    {SVC("name: s"), "clientConfig.service.namespace: Required value: service namespace is required"},
    {SVC("namespace: ns, name: s, port: 0"),
     "clientConfig.service.port: Invalid value: 0: port is not valid: "
     "must be between 1 and 65535, inclusive"},
    {SVC("namespace: ns, name: s, port: 65536"), "clientConfig.service.port: Invalid value: 65536"},
    {SVC("namespace: ns, name: s, port: \"443\""), "clientConfig.service.port: must be an integer"},
    {SVC("namespace: ns, name: s, path: x"),
     "clientConfig.service.path: Invalid value: \"x\": must start with a '/'"},
    {SVC("namespace: ns, name: s, path: //"),
     "clientConfig.service.path: Invalid value: \"//\": segment[0] may not "
     "be empty"},
    {SVC("namespace: ns, name: s, path: /a//b"),
     "path: Invalid value: \"/a//b\": segment[1] may not be empty"},
    {SVC("namespace: ns, name: s, path: /a/Up"),
     "path: Invalid value: \"/a/Up\": segment[1]: a lowercase RFC 1123 subdomain"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", caBundle: \"-----BEGIN\"}"),
     "webhooks[0].clientConfig.caBundle: illegal base64 data at input byte 0"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", caBundle: \"YWJ\"}"),
     "clientConfig.caBundle: illegal base64 data at input byte 3"},
    {HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", caBundle: \"YW=j\"}"),
     "clientConfig.caBundle: illegal base64 data"},
    /* rules */
    {HOOK(OK3 ", rules: {}"), "webhooks[0].rules: must be an array"},
    {HOOK(OK3 ", rules: [x]"), "webhooks[0].rules[0]: must be an object"},
    {RULE("apiGroups: [\"\"], apiVersions: [v1], resources: [pods]"),
     "webhooks[0].rules[0].operations: Required value"},
    {RULE("operations: CREATE, apiGroups: [\"\"], apiVersions: [v1], resources: [pods]"),
     "webhooks[0].rules[0].operations: must be an array of strings"},
    {RULE("operations: [\"*\", CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]"),
     "rules[0].operations: Invalid value: [\"*\",\"CREATE\"]: if '*' is present, must not specify other "
     "operations"},
    {RULE("operations: [GET], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]"),
     "rules[0].operations[0]: Unsupported value: \"GET\": supported values: \"*\", \"CONNECT\", \"CREATE\", "
     "\"DELETE\", \"UPDATE\""},
    {RULE("operations: [CREATE], apiVersions: [v1], resources: [pods]"),
     "rules[0].apiGroups: Required value"},
    {RULE("operations: [CREATE], apiGroups: [\"*\", apps], apiVersions: [v1], resources: [pods]"),
     "rules[0].apiGroups: Invalid value: [\"*\",\"apps\"]: if '*' is present, must not specify other API "
     "groups"},
    {RULE("operations: [CREATE], apiGroups: [\"\"], resources: [pods]"),
     "rules[0].apiVersions: Required value"},
    {RULE("operations: [CREATE], apiGroups: [\"\"], apiVersions: [\"*\", v1], resources: [pods]"),
     "rules[0].apiVersions: Invalid value: [\"*\",\"v1\"]: if '*' is present, must not specify other API "
     "versions"},
    {RULE("operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1, \"\"], resources: [pods]"),
     "rules[0].apiVersions[1]: Required value"},
    {RULE(RULE_OK), "rules[0].resources: Required value"},
    {RULE(RULE_OK ", resources: [pods, \"\"]"), "rules[0].resources[1]: Required value"},
    {RULE(RULE_OK ", resources: [\"*/*\", pods]"),
     "rules[0].resources: Invalid value: [\"*/*\",\"pods\"]: if "
     "'*/*' is present, must not specify other resources"},
    {RULE(RULE_OK ", resources: [\"*\", pods]"),
     "rules[0].resources: Invalid value: [\"*\",\"pods\"]: if '*' "
     "is present, must not specify other resources "
     "without subresources"},
    {RULE(RULE_OK ", resources: [pods/*, pods/status]"),
     "rules[0].resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify "
     "pods/status"},
    {RULE(RULE_OK ", resources: [\"*/status\", pods/status]"),
     "rules[0].resources[1]: Invalid value: \"pods/status\": if '*/status' is present, must not specify "
     "pods/status"},
    {RULE(RULE_OK ", resources: [pods], scope: Global"),
     "rules[0].scope: Unsupported value: \"Global\": supported values: \"*\", \"Cluster\", \"Namespaced\""},
    /* policies */
    {HOOK(OK3 ", failurePolicy: Never"),
     "webhooks[0].failurePolicy: Unsupported value: \"Never\": supported values: \"Fail\", \"Ignore\""},
    {HOOK(OK3 ", matchPolicy: Fuzzy"),
     "webhooks[0].matchPolicy: Unsupported value: \"Fuzzy\": supported values: \"Equivalent\", \"Exact\""},
    {HOOK(NAME ", " CC ", " ARV),
     "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"},
    {HOOK(NAME ", " CC ", " ARV ", sideEffects: Sometimes"),
     "webhooks[0].sideEffects: Unsupported value: \"Sometimes\": supported values: \"None\", "
     "\"NoneOnDryRun\", \"Some\", \"Unknown\""},
    {HOOK(NAME ", " CC ", " ARV ", sideEffects: [None]"), "webhooks[0].sideEffects: must be a string"},
    {MHOOK(OK3 ", reinvocationPolicy: Always"),
     "MutatingWebhookConfiguration \"x\": webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": "
     "supported "
     "values: \"IfNeeded\", \"Never\""},
    /* selectors */
    {HOOK(OK3 ", namespaceSelector: {matchExpressions: [{key: a, operator: In}]}"),
     "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when "
     "`operator` "
     "is 'In' or 'NotIn'"},
    {HOOK(OK3 ", objectSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}"),
     "webhooks[0].objectSelector.matchExpressions[0].values: Forbidden"},
    {HOOK(OK3 ", objectSelector: {matchLabels: {a: \"b c\"}}"),
     "webhooks[0].objectSelector.matchLabels: Invalid value: \"b c\""},
    {HOOK(OK3 ", namespaceSelector: []"), "webhooks[0].namespaceSelector: must be an object"},
    /* admissionReviewVersions */
    {HOOK(NAME ", " CC ", " SE),
     "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"},
    {HOOK(NAME ", " CC ", " SE ", admissionReviewVersions: []"),
     "webhooks[0].admissionReviewVersions: Required value"},
    {HOOK(NAME ", " CC ", " SE ", admissionReviewVersions: [v1, v1]"),
     "webhooks[0].admissionReviewVersions[1]: Invalid value: \"v1\": duplicate version"},
    {HOOK(NAME ", " CC ", " SE ", admissionReviewVersions: [v2]"),
     "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, "
     "v1beta1"},
    {HOOK(NAME ", " CC ", " SE ", admissionReviewVersions: [V1, v1]"),
     "webhooks[0].admissionReviewVersions[0]: Invalid value: \"V1\": a DNS-1035 label must consist of"},
    {HOOK(NAME ", " CC ", " SE ", admissionReviewVersions: v1"),
     "webhooks[0].admissionReviewVersions: must be an array of strings"},
    /* matchConditions */
    {HOOK(OK3 ", matchConditions: [{name: x, expression: \"true\"}]"),
     "webhooks[0].matchConditions: Forbidden: matchConditions (CEL) are not supported yet by admitd"},
    {HOOK(OK3 ", matchConditions: {}"), "webhooks[0].matchConditions: must be an array"},
};

static void test_validation(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *path = write_file("t.yaml", bad[i].yaml);
        adm_webhook_set_t *set = NULL;
        char err[512] = "";
        int rc = adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err));

        if (rc != ADM_EINVAL || strstr(err, bad[i].want) == NULL || strncmp(err, path, strlen(path)) != 0) {
            fail_msg("case %zu: rc %d\n  got:  %s\n  want: %s\n  yaml:\n%s", i, rc, err, bad[i].want,
                     bad[i].yaml);
        }
        assert_null(set);
        assert_null(strchr(err, '\n'));
    }
}

/* Accepted edge cases that look like errors. */
static const char *const good[] = {
    RULE(RULE_OK ", resources: [pods, \"*\"]"), /* kube looks only at the last subresource-less entry */
    RULE(RULE_OK ", resources: [\"*/*\"]"),
    RULE(RULE_OK ", resources: [\"*\", \"*/scale\", pods/status]"),
    RULE(RULE_OK ", resources: [pods/status, pods/log, deployments/*]"),
    RULE(RULE_OK ", resources: [pods], scope: \"*\""),
    SVC("namespace: ns, name: s, path: /"),
    SVC("namespace: ns, name: s, path: \"\""),
    SVC("namespace: ns, name: s, path: /a/b/"),
    SVC("namespace: ns, name: s, path: /v1.x/a-b, port: 65535"),
    URL("https://h"),
    URL("HTTPS://h.example:443/a%20b"),
    URL("https://[::1]:8443/x"),
    HOOK(OK3 ", timeoutSeconds: 30, failurePolicy: null, matchConditions: []"),
    HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", caBundle: \"\"}"),
    HOOK(NAME ", " SE ", " ARV ", clientConfig: {url: \"https://h\", caBundle: \"YW\\nJj\\r\\n\"}"),
    HDR "webhooks:\n",
    HDR "webhooks: []\n",
};

static void test_valid_edges(void **state)
{
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        const char *path = write_file("g.yaml", good[i]);
        adm_webhook_set_t *set = NULL;
        char err[512] = "";
        int rc = adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err));

        if (rc != 0) {
            fail_msg("case %zu: rc %d: %s\n%s", i, rc, err, good[i]);
        }
        adm_webhook_set_free(set);
    }
}

/* Every prefix of a full document: each is valid or a one-line error, never a crash or a leak. */
static void test_truncations(void **state)
{
    size_t n = strlen(full_yaml);

    for (size_t len = 0; len <= n; len += 7) {
        char *text = strndup(full_yaml, len);
        const char *path = write_file("trunc.yaml", text);
        adm_webhook_set_t *set = NULL;
        char err[96] = "";
        int rc = adm_webhook_set_load(&path, 1, false, &set, err, sizeof(err));

        assert_true(rc == 0 || rc == ADM_EINVAL);
        assert_true(rc == 0 ? set != NULL : set == NULL && err[0] != '\0' && strchr(err, '\n') == NULL);
        adm_webhook_set_free(set);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_and_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_core_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_same_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_other_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_all_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_wildcards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_one_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equivalent_existing_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insecure_url, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_valid_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncations, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

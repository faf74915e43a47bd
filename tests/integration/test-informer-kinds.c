/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kinds the plugins declare in adm_plugin_t.reads, watched by admitd --kubeconfig against
 * adm-fake-apiserver: the default plugin set watches exactly its nine kinds (not Pods: PodSecurity
 * lists a namespace's pods live when its labels change, test-podsecurity-live.c), and Namespaces only
 * when a plugin reads them (each plugin off by default that does brings them) or a webhook has a
 * namespaceSelector (also one a reload brings). A
 * change on the API server reaches admission within 1 s for a LimitRange (LimitRanger), a
 * PriorityClass (Priority), a ServiceAccount (ServiceAccount), a namespace label (PodSecurity, and
 * a webhook's namespaceSelector). /readyz stays 503 while one kind's LIST fails though the others
 * synced; meanwhile --cluster-state still answers for that kind, and once it syncs the API server
 * alone does.
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/net/tls.h"
#include "certgen.h"
#include "harness.h"

#define TOKEN "kinds-t0ken"
#define WITHIN_MS 1000

static h_server_t api, server;
static char dir[256], kubeconfig[320];
static char scrape[1 << 20]; /* a /metrics answer */

/*
 * The nine kinds kube-apiserver's default plugin set reads (plugins.def, each plugin's reads).
 * kube-apiserver's PodSecurity also reads a pod informer, for the existing pods of a namespace whose
 * enforce label tightens; admitd, a webhook, lists them live then as kube's standalone
 * pod-security webhook does, and caches no pods.
 */
static const char *const default_kinds[] = {
    "group=\"\",kind=\"Namespace\"",
    "group=\"\",kind=\"LimitRange\"",
    "group=\"\",kind=\"ServiceAccount\"",
    "group=\"scheduling.k8s.io\",kind=\"PriorityClass\"",
    "group=\"storage.k8s.io\",kind=\"StorageClass\"",
    "group=\"node.k8s.io\",kind=\"RuntimeClass\"",
    "group=\"networking.k8s.io\",kind=\"IngressClass\"",
    "group=\"\",kind=\"ResourceQuota\"",
    "group=\"\",kind=\"Node\"",
};
#define NDEFAULT_KINDS (sizeof(default_kinds) / sizeof(default_kinds[0]))

static int setup(void **state)
{
    const char *args[] = {"--insecure-http", "--token", TOKEN, NULL};

    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return 1;
    }
    if (h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, args) != 0) {
        return 1;
    }
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    h_write_kubeconfig(kubeconfig, api.port, "{token: " TOKEN "}");
    /* what every pod below needs to pass the default set: its namespace, and its service account */
    h_api_control(
        &api, "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"team\","
              "\"labels\":{\"kubernetes.io/metadata.name\":\"team\"}},\"status\":{\"phase\":\"Active\"}}}");
    h_api_control(&api, "{\"op\":\"put\",\"resource\":\"serviceaccounts\",\"object\":{\"metadata\":{\"name\":"
                        "\"default\",\"namespace\":\"team\"}}}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return h_api_cleanup(&api, dir);
}

/* admitd's /metrics into out. */
static void metrics(char *out, size_t out_len)
{
    h_call_200(&server, "GET", "/metrics", NULL, out, out_len);
}

/* How many kinds admitd watches (admitd_informer_synced samples), and whether labels is one. */
static int watched(const char *text, const char *labels, bool *found)
{
    char want[256];
    int n = 0;

    snprintf(want, sizeof(want), "admitd_informer_synced{%s} ", labels != NULL ? labels : "");
    *found = labels != NULL && strstr(text, want) != NULL;
    for (const char *p = strstr(text, "\nadmitd_informer_synced{"); p != NULL;
         p = strstr(p + 1, "\nadmitd_informer_synced{")) {
        n++;
    }
    return n;
}

static bool wait_ready(int ms)
{
    return h_wait_ready(&server, ms);
}

/* /admit on a pod in namespace ns with spec (JSON); the answer's allowed and message into msg. */
static bool admit_pod(const char *ns, const char *spec, char *msg, size_t msg_len, char **patch)
{
    char object[2048];
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = ns,
                      .name = "p",
                      .object = object};
    yyjson_doc *answer;
    yyjson_val *resp;
    bool allowed;

    snprintf(object, sizeof(object), "{\"metadata\":{\"name\":\"p\",\"namespace\":\"%s\"},\"spec\":%s}", ns,
             spec);
    answer = h_post_review(&server, "/admit", &r);
    resp = yyjson_obj_get(yyjson_doc_get_root(answer), "response");
    allowed = yyjson_get_bool(yyjson_obj_get(resp, "allowed"));
    if (msg != NULL) {
        const char *m = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message"));

        snprintf(msg, msg_len, "%s", m != NULL ? m : "");
    }
    if (patch != NULL) {
        *patch = h_answer_patch(answer);
    }
    yyjson_doc_free(answer);
    return allowed;
}

#define PLAIN_POD "{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}"

/* Polls admit_pod until its outcome is allowed and, when part is not NULL, its patch holds part. */
static long long wait_admission(const char *ns, const char *spec, bool allowed, const char *part, int ms)
{
    long long t0 = h_now_ms(), end = t0 + ms;

    while (h_now_ms() < end) {
        char *patch = NULL;
        bool ok = admit_pod(ns, spec, NULL, 0, &patch) == allowed &&
                  (part == NULL || (patch != NULL && strstr(patch, part) != NULL));

        free(patch);
        if (ok) {
            return h_now_ms() - t0;
        }
    }
    return -1;
}

static void start(const char *const *files, const char *const *extra)
{
    const char *args[32] = {"--kubeconfig", kubeconfig, "--health-listen", "127.0.0.1:0"};
    size_t n = 4;

    for (; extra != NULL && *extra != NULL; extra++) {
        args[n++] = *extra;
    }
    args[n] = NULL;
    assert_int_equal(files != NULL ? h_start_with_files(&server, files, args) : h_start(&server, NULL, args),
                     0);
}

static void stop(void)
{
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
}

/* The default plugin set watches exactly its nine kinds, each listed, each in /readyz; not Pods. */
static void test_default_kinds(void **state)
{
    bool found;

    (void)state;
    start(NULL, NULL);
    assert_true(wait_ready(15000));
    metrics(scrape, sizeof(scrape));
    assert_int_equal(watched(scrape, NULL, &found), (int)NDEFAULT_KINDS);
    for (size_t i = 0; i < NDEFAULT_KINDS; i++) {
        watched(scrape, default_kinds[i], &found);
        if (!found) {
            fail_msg("not watched: %s", default_kinds[i]);
        }
    }
    watched(scrape, "group=\"\",kind=\"Pod\"", &found);
    assert_false(found);
    stop();
}

/*
 * The plugins off by default that read Namespaces each bring the Namespace watch alone (with the
 * default ones that read them disabled).
 */
static void test_namespace_readers(void **state)
{
    static const char *const readers[] = {"NamespaceExists", "NamespaceAutoProvision", "PodNodeSelector",
                                          "PodTolerationRestriction"};
    bool found;

    (void)state;
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
        const char *extra[] = {"--disable-admission-plugins", "NamespaceLifecycle,PodSecurity",
                               "--enable-admission-plugins", readers[i], NULL};

        start(NULL, extra);
        assert_true(wait_ready(15000));
        metrics(scrape, sizeof(scrape));
        assert_int_equal(watched(scrape, "group=\"\",kind=\"Pod\"", &found), (int)NDEFAULT_KINDS);
        assert_false(found);
        watched(scrape, "group=\"\",kind=\"Namespace\"", &found);
        if (!found) {
            fail_msg("%s does not bring the Namespace watch", readers[i]);
        }
        stop();
    }
}

/*
 * One kind's LIST fails: /readyz is 503 though the others synced, and --cluster-state answers for
 * that kind meanwhile (a PriorityClass only the file has). Once its LIST works the kind is the API
 * server's alone: the file's class is no more, the server's is.
 */
static void test_one_kind_not_synced(void **state)
{
    static const char *const files[] = {
        "state.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: from-file}\nvalue: 777\n",
        NULL};
    static const char *const extra[] = {"--cluster-state", "@state.yaml", NULL};
    char body[64], msg[1024], *patch = NULL;
    bool found;

    (void)state;
    h_api_control(&api, "{\"op\":\"put\",\"resource\":\"priorityclasses\",\"object\":{\"metadata\":{\"name\":"
                        "\"from-api\"},\"value\":555}}");
    h_api_control(
        &api,
        "{\"op\":\"fail\",\"status\":500,\"count\":100000,\"on\":\"list\",\"resource\":\"priorityclasses\"}");
    start(files, extra);
    assert_true(h_log_wait(
        &server, "informer PriorityClass: list /apis/scheduling.k8s.io/v1/priorityclasses failed", 1, 10000));
    assert_true(h_log_wait(&server, "informer Namespace: synced", 1, 10000));
    assert_true(h_log_wait(&server, "informer LimitRange: synced", 1, 10000));
    assert_int_equal(h_get(server.health_port, "/readyz", body, sizeof(body)), 503);
    assert_string_equal(body, "not synced\n");
    metrics(scrape, sizeof(scrape));
    watched(scrape, "group=\"scheduling.k8s.io\",kind=\"PriorityClass\"", &found);
    assert_true(found);
    assert_non_null(
        strstr(scrape, "admitd_informer_synced{group=\"scheduling.k8s.io\",kind=\"PriorityClass\"} 0"));
    assert_non_null(strstr(scrape, "admitd_informer_synced{group=\"\",kind=\"Namespace\"} 1"));

    /* not served by the informer yet: the file answers for PriorityClasses */
    assert_true(admit_pod("team", "{\"priorityClassName\":\"from-file\",\"containers\":[{\"name\":\"c\"}]}",
                          msg, sizeof(msg), &patch));
    assert_non_null(patch);
    assert_non_null(strstr(patch, "777"));
    free(patch);

    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":0,\"on\":\"list\"}");
    assert_true(wait_ready(40000)); /* the back-off may have reached 12.8 s by now (800 ms doubling) */
    assert_false(admit_pod("team", "{\"priorityClassName\":\"from-file\",\"containers\":[{\"name\":\"c\"}]}",
                           msg, sizeof(msg), NULL));
    assert_string_equal(msg, "pods \"p\" is forbidden: no PriorityClass with name from-file was found");
    assert_true(admit_pod("team", "{\"priorityClassName\":\"from-api\",\"containers\":[{\"name\":\"c\"}]}",
                          msg, sizeof(msg), &patch));
    assert_non_null(strstr(patch, "555"));
    free(patch);
    stop();
}

/* Changes made on the API server reach admission within 1 s, kind by kind. */
static void test_changes_reach_admission(void **state)
{
    char msg[1024];
    long long ms;

    (void)state;
    start(NULL, NULL);
    assert_true(wait_ready(15000));

    /* LimitRange -> LimitRanger: the namespace's default request is set on the container */
    assert_true(admit_pod("team", PLAIN_POD, NULL, 0, NULL));
    h_api_control(&api,
                  "{\"op\":\"put\",\"resource\":\"limitranges\",\"object\":{\"metadata\":{\"name\":\"lr\","
                  "\"namespace\":\"team\"},\"spec\":{\"limits\":[{\"type\":\"Container\","
                  "\"defaultRequest\":{\"cpu\":\"123m\"}}]}}}");
    ms = wait_admission("team", PLAIN_POD, true, "123m", WITHIN_MS);
    assert_true(ms >= 0);
    print_message("LimitRange seen by LimitRanger after %lld ms\n", ms);

    /* PriorityClass -> Priority: an unknown class is refused, then resolved to its value */
    assert_false(admit_pod("team", "{\"priorityClassName\":\"urgent\",\"containers\":[{\"name\":\"c\"}]}",
                           msg, sizeof(msg), NULL));
    assert_string_equal(msg, "pods \"p\" is forbidden: no PriorityClass with name urgent was found");
    h_api_control(&api, "{\"op\":\"put\",\"resource\":\"priorityclasses\",\"object\":{\"metadata\":{\"name\":"
                        "\"urgent\"},\"value\":4242}}");
    ms = wait_admission("team", "{\"priorityClassName\":\"urgent\",\"containers\":[{\"name\":\"c\"}]}", true,
                        "4242", WITHIN_MS);
    assert_true(ms >= 0);
    print_message("PriorityClass seen by Priority after %lld ms\n", ms);

    /* ServiceAccount -> ServiceAccount: a pod naming a missing account is refused until it exists */
    assert_false(admit_pod("team", "{\"serviceAccountName\":\"web\",\"containers\":[{\"name\":\"c\"}]}", msg,
                           sizeof(msg), NULL));
    assert_non_null(strstr(msg, "serviceaccount \"web\" not found"));
    h_api_control(&api, "{\"op\":\"put\",\"resource\":\"serviceaccounts\",\"object\":{\"metadata\":{\"name\":"
                        "\"web\",\"namespace\":\"team\"}}}");
    ms = wait_admission("team", "{\"serviceAccountName\":\"web\",\"containers\":[{\"name\":\"c\"}]}", true,
                        NULL, WITHIN_MS);
    assert_true(ms >= 0);
    print_message("ServiceAccount seen by ServiceAccount after %lld ms\n", ms);

    /* a namespace label -> PodSecurity: enforce=restricted refuses a pod that runs as root */
    h_api_control(&api,
                  "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"team\","
                  "\"labels\":{\"kubernetes.io/metadata.name\":\"team\",\"pod-security.kubernetes.io/"
                  "enforce\":\"restricted\"}},\"status\":{\"phase\":\"Active\"}}}");
    ms = wait_admission("team", PLAIN_POD, false, NULL, WITHIN_MS);
    assert_true(ms >= 0);
    print_message("namespace label seen by PodSecurity after %lld ms\n", ms);
    assert_false(admit_pod("team", PLAIN_POD, msg, sizeof(msg), NULL));
    assert_non_null(strstr(msg, "violates PodSecurity \"restricted:latest\""));
    h_api_control(
        &api, "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"team\","
              "\"labels\":{\"kubernetes.io/metadata.name\":\"team\"}},\"status\":{\"phase\":\"Active\"}}}");
    assert_true(wait_admission("team", PLAIN_POD, true, NULL, WITHIN_MS) >= 0);

    h_api_control(&api,
                  "{\"op\":\"delete\",\"resource\":\"limitranges\",\"namespace\":\"team\",\"name\":\"lr\"}");
    stop();
}

#define HOOK_PREFIX                                                                                          \
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"                    \
    "metadata: {name: sel}\nwebhooks:\n"                                                                     \
    "- name: sel.example.com\n  clientConfig: {url: \"https://127.0.0.1:1/\"}\n"                             \
    "  rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]\n"           \
    "  failurePolicy: Fail\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  timeoutSeconds: 2\n"
#define HOOK_EVERYTHING HOOK_PREFIX
#define HOOK_SELECTOR HOOK_PREFIX "  namespaceSelector: {matchLabels: {hook: \"on\"}}\n"

static void label_team(const char *hook)
{
    char cmd[512];

    snprintf(
        cmd, sizeof(cmd),
        "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"team\","
        "\"labels\":{\"kubernetes.io/metadata.name\":\"team\"%s%s%s}},\"status\":{\"phase\":\"Active\"}}}",
        hook != NULL ? ",\"hook\":\"" : "", hook != NULL ? hook : "", hook != NULL ? "\"" : "");
    h_api_control(&api, cmd);
}

/*
 * With no plugin reading Namespaces, they are watched only for a webhook whose namespaceSelector
 * selects less than everything; a reload that brings the first such webhook starts the watch, and
 * the selector then follows the labels on the API server within 1 s (the webhook, which nothing
 * answers, fails closed only where it is selected).
 */
static void test_namespace_selector(void **state)
{
    static const char *const files[] = {"hooks.yaml", HOOK_EVERYTHING, NULL};
    static const char *const extra[] = {"--webhook-config", "@hooks.yaml", "--disable-admission-plugins",
                                        "NamespaceLifecycle,PodSecurity", NULL};
    char path[512], msg[1024];
    bool found;
    long long ms, end;

    (void)state;
    label_team(NULL);
    start(files, extra);
    assert_true(wait_ready(15000));
    metrics(scrape, sizeof(scrape));
    assert_int_equal(watched(scrape, "group=\"\",kind=\"Namespace\"", &found), (int)NDEFAULT_KINDS - 1);
    assert_false(found); /* nothing reads them: neither the plugins left nor this webhook */
    assert_false(admit_pod("team", PLAIN_POD, msg, sizeof(msg), NULL));
    assert_non_null(strstr(msg, "failed calling webhook \"sel.example.com\""));

    snprintf(path, sizeof(path), "%s/hooks.yaml", server.dir);
    h_write_file(path, HOOK_SELECTOR);
    kill(server.pid, SIGHUP);
    end = h_now_ms() + 10000;
    do {
        metrics(scrape, sizeof(scrape));
        watched(scrape, "group=\"\",kind=\"Namespace\"", &found);
    } while (!found && h_now_ms() < end && poll(NULL, 0, 20) == 0);
    assert_true(found);
    assert_true(wait_ready(15000));
    assert_true(admit_pod("team", PLAIN_POD, NULL, 0, NULL)); /* not labelled: not selected */

    label_team("on");
    ms = wait_admission("team", PLAIN_POD, false, NULL, WITHIN_MS);
    assert_true(ms >= 0);
    print_message("namespace label seen by a namespaceSelector after %lld ms\n", ms);
    label_team("off");
    assert_true(wait_admission("team", PLAIN_POD, true, NULL, WITHIN_MS) >= 0);
    label_team(NULL);
    stop();
}

/* Started with a namespaceSelector already there, Namespaces are watched from the start. */
static void test_namespace_selector_at_start(void **state)
{
    static const char *const files[] = {"hooks.yaml", HOOK_SELECTOR, NULL};
    static const char *const extra[] = {"--webhook-config", "@hooks.yaml", "--disable-admission-plugins",
                                        "NamespaceLifecycle,PodSecurity", NULL};
    bool found;

    (void)state;
    start(files, extra);
    assert_true(wait_ready(15000));
    metrics(scrape, sizeof(scrape));
    assert_int_equal(watched(scrape, "group=\"\",kind=\"Namespace\"", &found), (int)NDEFAULT_KINDS);
    assert_true(found);
    stop();
}

/* After each test, passed or not: no admitd left running, no fault left armed on the fake. */
static int after_test(void **state)
{
    (void)state;
    h_cleanup(&server);
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":0,\"on\":\"any\"}");
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_default_kinds, after_test),
        cmocka_unit_test_teardown(test_namespace_readers, after_test),
        cmocka_unit_test_teardown(test_one_kind_not_synced, after_test),
        cmocka_unit_test_teardown(test_changes_reach_admission, after_test),
        cmocka_unit_test_teardown(test_namespace_selector, after_test),
        cmocka_unit_test_teardown(test_namespace_selector_at_start, after_test),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

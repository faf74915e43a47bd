/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd with --kubeconfig against adm-fake-apiserver: /readyz is 503 "not synced" while the
 * Namespace LIST fails and 200 once it is applied; a namespace created on the API server turns a
 * pod's denial by NamespaceLifecycle into an admission within 1 s, and its move to Terminating
 * turns it back; /metrics carries admitd_informer_*. A namespace not yet in the cache is read
 * live (NamespaceLifecycle's GET). And a kubeconfig that cannot be used (a
 * missing file, an exec plugin) stops admitd with one line naming the file and field, exit 2.
 */
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

#include "adm/base/arena.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t api, server;
static char dir[256], kubeconfig[320], token_file[320];

static int setup(void **state)
{
    const char *extra[] = {"--namespaces", "3", NULL};

    (void)state;
    return h_api_setup(&api, extra, dir, sizeof(dir), token_file, kubeconfig, sizeof(kubeconfig));
}

static int teardown(void **state)
{
    (void)state;
    return h_api_cleanup(&api, dir);
}

/* The AdmissionReview /admit answers for a pod created (maybe on dry run) in ns, copied into out. */
static void pod_review_dry(const char *ns, bool dry_run, char *out, size_t out_len)
{
    adm_arena_t *a = adm_arena_create(4096);
    pt_request_t pr = {.operation = "CREATE",
                       .resource = "pods",
                       .kind = "Pod",
                       .namespace_ = ns,
                       .name = "p",
                       .object = "{}",
                       .dry_run = dry_run};

    h_call_200(&server, "POST", "/admit", pt_review_json(a, &pr), out, out_len);
    adm_arena_destroy(a);
}

static void pod_review(const char *ns, char *out, size_t out_len)
{
    pod_review_dry(ns, false, out, out_len);
}

/* Is a pod in namespace ns allowed by /admit? */
static bool pod_allowed(const char *ns)
{
    char body[4096];

    pod_review(ns, body, sizeof(body));
    return strstr(body, "\"allowed\":true") != NULL;
}

static bool wait_allowed(const char *ns, bool want, int ms)
{
    long long end = h_now_ms() + ms;

    while (h_now_ms() < end) {
        if (pod_allowed(ns) == want) {
            return true;
        }
    }
    return false;
}

static void test_live_state(void **state)
{
    const char *args[] = {
        "--kubeconfig",   kubeconfig, "--health-listen", "127.0.0.1:0", "--disable-admission-plugins",
        "ServiceAccount", NULL};
    char body[8192];
    long long t0;

    (void)state;
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1000,\"on\":\"list\"}");
    assert_int_equal(h_start(&server, NULL, args), 0);
    assert_int_equal(h_get(server.health_port, "/readyz", body, sizeof(body)), 503);
    assert_string_equal(body, "not synced\n");
    assert_true(h_log_wait(&server, "informer Namespace: list /api/v1/namespaces failed: HTTP 500", 1, 5000));
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":0,\"on\":\"list\"}");
    assert_true(h_wait_ready(&server, 15000));

    assert_false(pod_allowed("fresh"));
    h_api_put_namespace(&api, "fresh", "Active");
    t0 = h_now_ms();
    assert_true(wait_allowed("fresh", true, 1000));
    print_message("namespace seen by admission after %lld ms\n", h_now_ms() - t0);
    h_api_put_namespace(&api, "fresh", "Terminating");
    assert_true(wait_allowed("fresh", false, 1000));

    {
        h_conn_t c;

        assert_int_equal(h_connect_to(&c, &server), 0);
        h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
                 "admitd_informer_synced{group=\"\",kind=\"Namespace\"} 1");
        h_expect(&c, "GET", "/metrics", NULL, NULL, 200,
                 "admitd_informer_errors_total{group=\"\",kind=\"Namespace\"}");
        h_close(&c);
    }
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
}

static void test_unusable_kubeconfig(void **state)
{
    char missing[400], out[2048], line[512];
    const char *run_missing[] = {"--insecure-http", "--kubeconfig", missing, NULL};
    const char *run_exec[] = {"--insecure-http", "--kubeconfig", kubeconfig, NULL};
    const char *run_both[] = {"--insecure-http", "--kubeconfig", kubeconfig, "--in-cluster", NULL};

    (void)state;
    snprintf(missing, sizeof(missing), "%s/nope.yaml", dir);
    assert_int_equal(h_run(run_missing, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, missing));
    assert_null(strchr(strchr(out, '\n') + 1, '\n')); /* one line */

    h_write_kubeconfig(kubeconfig, api.port,
                       "{exec: {command: get-token, apiVersion: client.authentication.k8s.io/v1}}");
    assert_int_equal(h_run(run_exec, out, sizeof(out), 10000), 2);
    snprintf(line, sizeof(line), "admitd: %s: users[0].user.exec: ", kubeconfig);
    assert_non_null(strstr(out, line));
    assert_null(strchr(strchr(out, '\n') + 1, '\n'));

    assert_int_equal(h_run(run_both, out, sizeof(out), 10000), 2);
    assert_string_equal(out, "admitd: --kubeconfig and --in-cluster: give one of them\n");
}

/*
 * NamespaceLifecycle's live GET (issue 13 item 3): a namespace the API server has but the informer
 * cache does not yet (its watch events held back) admits a pod after one GET; an unknown one is
 * kube's NotFound; a GET that fails is kube's InternalError wrapping the server's message.
 * PodSecurity reads the namespace live too (kube's lister-then-client namespace getter).
 */
static void test_live_namespace_lookup(void **state)
{
    const char *args[] = {
        "--kubeconfig",   kubeconfig, "--health-listen", "127.0.0.1:0", "--disable-admission-plugins",
        "ServiceAccount", NULL};
    char body[4096], user[400];
    long gets;

    (void)state;
    snprintf(user, sizeof(user), "{tokenFile: %s}", token_file);
    h_write_kubeconfig(kubeconfig, api.port, user); /* test_unusable_kubeconfig left an exec plugin in it */
    assert_int_equal(h_start(&server, NULL, args), 0);
    assert_true(h_wait_ready(&server, 15000));
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":600000}"); /* the cache sees nothing new */
    h_api_put_namespace(&api, "late", "Active");
    gets = h_api_stat(&api, "gets");
    assert_true(pod_allowed("late"));
    assert_int_equal(h_api_stat(&api, "gets"),
                     gets + 2); /* NamespaceLifecycle's and PodSecurity's, as in kube */

    h_api_put_namespace(&api, "late-gone", "Terminating");
    pod_review("late-gone", body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"pods \\\"p\\\" is forbidden: unable to create new content in "
                                 "namespace late-gone because it is being terminated\""));

    pod_review("nope", body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":false"));
    assert_non_null(strstr(body, "\"message\":\"namespaces \\\"nope\\\" not found\","
                                 "\"reason\":\"NotFound\""));
    assert_non_null(strstr(body, "\"code\":404"));

    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"get\"}");
    pod_review("broken", body, sizeof(body));
    assert_non_null(
        strstr(body, "\"message\":\"Internal error occurred: Internal error occurred: injected\""));
    assert_non_null(strstr(body, "\"code\":500"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 4); /* the injected failure is not a GET served */

    h_api_control(&api, "{\"op\":\"slow\",\"ms\":0}");
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
}

/*
 * NamespaceAutoProvision with an API connection: a pod in a namespace nobody has creates it on the
 * API server (then NamespaceLifecycle finds it live), one the server has but the cache lacks is
 * posted too and its 409 AlreadyExists admitted, and a dry run creates nothing.
 */
static void test_auto_provision(void **state)
{
    const char *args[] = {"--kubeconfig",
                          kubeconfig,
                          "--health-listen",
                          "127.0.0.1:0",
                          "--disable-admission-plugins",
                          "ServiceAccount",
                          "--enable-admission-plugins",
                          "NamespaceAutoProvision",
                          NULL};
    char body[4096];
    long creates;

    (void)state;
    assert_int_equal(h_start(&server, NULL, args), 0);
    assert_true(h_wait_ready(&server, 15000));
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":600000}"); /* the cache sees nothing new */
    creates = h_api_stat(&api, "creates");
    assert_true(pod_allowed("auto"));
    assert_int_equal(h_api_stat(&api, "creates"), creates + 1);
    /* admitted means NamespaceLifecycle's live GET found it on the API server */

    h_api_put_namespace(&api, "known", "Active");
    assert_true(pod_allowed("known")); /* 409 AlreadyExists is fine */
    assert_int_equal(h_api_stat(&api, "creates"), creates + 2);

    pod_review_dry("dry", true, body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"namespaces \\\"dry\\\" not found\""));
    assert_int_equal(h_api_stat(&api, "creates"), creates + 2);

    h_api_control(&api, "{\"op\":\"slow\",\"ms\":0}");
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_state),
        cmocka_unit_test(test_unusable_kubeconfig),
        cmocka_unit_test(test_live_namespace_lookup),
        cmocka_unit_test(test_auto_provision),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

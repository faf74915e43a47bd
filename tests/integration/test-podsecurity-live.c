/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity's existing-pod check with an API connection: admitd --kubeconfig against
 * adm-fake-apiserver, kube's default plugin set. A namespace label change that raises the enforce
 * level lists that namespace's pods live (GET /api/v1/namespaces/NS/pods, paged by 500), as kube's
 * standalone pod-security webhook does, and warns about the violating ones in kube's words; no
 * pod is ever listed or watched otherwise (nothing caches pods). A LIST that fails, or does not
 * answer within min(1 s, half the request's time left), gives kube's one warning, and the request
 * is answered within its deadline. Without an API connection the same time limit bounds the
 * evaluation of --cluster-state's pods.
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
#include <sys/socket.h>

#include <cmocka.h>

#include "adm/net/tls.h"
#include "certgen.h"
#include "harness.h"

#define TOKEN "psa-live-t0ken"
#define LIST_FAILED "failed to list pods while checking new PodSecurity enforce level"

static h_server_t api, server, files_only;
static char dir[256], kubeconfig[320];

static void put_namespace(const char *name)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"}},\"status\":{\"phase\":\"Active\"}}}",
             name, name);
    h_api_control(&api, cmd);
}

/* A pod in ns; owner: its ReplicaSet's UID, or NULL. */
static void put_pod(const char *ns, const char *name, const char *owner, const char *spec)
{
    char cmd[1024], refs[256] = "";

    if (owner != NULL) {
        snprintf(refs, sizeof(refs),
                 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web\","
                 "\"uid\":\"%s\",\"controller\":true}]",
                 owner);
    }
    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"pods\",\"object\":{\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"%s\"%s},\"spec\":%s,\"status\":{\"phase\":\"Running\"}}}",
             name, ns, refs, spec);
    h_api_control(&api, cmd);
}

#define PRIVILEGED                                                                                           \
    "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"securityContext\":{\"privileged\":true}}]}"
#define HOST_NET "{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}"
#define PLAIN "{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}"

static int setup(void **state)
{
    const char *args[] = {"--insecure-http", "--token", TOKEN, NULL};
    const char *admitd[] = {"--kubeconfig", kubeconfig, "--health-listen", "127.0.0.1:0", NULL};
    char name[32];

    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return 1;
    }
    if (h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, args) != 0) {
        return 1;
    }
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    h_write_kubeconfig(kubeconfig, api.port, "{token: " TOKEN "}");

    /* busy: three privileged pods of one ReplicaSet, one on the host network, one that passes */
    put_namespace("busy");
    put_pod("busy", "web-1", "rs-web", PRIVILEGED);
    put_pod("busy", "web-0", "rs-web", PRIVILEGED);
    put_pod("busy", "web-2", "rs-web", PRIVILEGED);
    put_pod("busy", "loner", NULL, HOST_NET);
    put_pod("busy", "fine", NULL, PLAIN);
    /* big: 520 passing pods and a violating one listed last, two pages of 500 */
    put_namespace("big");
    for (int i = 0; i < 520; i++) {
        snprintf(name, sizeof(name), "ok-%03d", i);
        put_pod("big", name, NULL, PLAIN);
    }
    put_pod("big", "zz-bad", NULL, HOST_NET);
    put_namespace("quiet");
    put_pod("quiet", "q", NULL, HOST_NET);

    if (h_start(&server, NULL, admitd) != 0) {
        return 1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    h_stop(&server, SIGTERM, 10000);
    h_cleanup(&server);
    h_stop(&api, SIGTERM, 5000);
    h_cleanup(&api);
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

/* After each test: no fault left armed on the fake, no files-only admitd left running. */
static int after_test(void **state)
{
    (void)state;
    h_cleanup(&files_only);
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":0,\"on\":\"any\"}");
    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":0}");
    return 0;
}

/* The fake's count of LISTs (what "listsOf") or WATCHes ("watchesOf") of pods. */
static long pod_calls(const char *what)
{
    static char body[8192];
    yyjson_doc *d;
    long n;

    assert_int_equal(h_api_call(&api, "GET", "/_control/stats", NULL, body, sizeof(body)), 200);
    d = yyjson_read(body, strlen(body), 0);
    assert_non_null(d);
    n = (long)yyjson_get_uint(yyjson_ptr_get(yyjson_doc_get_root(d), what));
    yyjson_doc_free(d);
    return n;
}

/*
 * An UPDATE of namespace ns from no labels to enforce=baseline, POSTed to path on s; the answer's
 * warnings joined by newlines into out, and how long it took. Fails unless it is allowed.
 */
static long long label_change_on(h_server_t *s, const char *path, const char *ns, char *out, size_t out_len)
{
    char object[512], old[256];
    pt_request_t r = {.operation = "UPDATE",
                      .resource = "namespaces",
                      .kind = "Namespace",
                      .namespace_ = ns,
                      .name = ns,
                      .object = object,
                      .old_object = old};
    yyjson_doc *answer;
    yyjson_val *resp, *w;
    long long t0;
    size_t len = 0;

    snprintf(object, sizeof(object),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"kubernetes.io/metadata.name\":\"%s\",\"pod-security.kubernetes.io/enforce\":\"baseline\"}}}",
             ns, ns);
    snprintf(old, sizeof(old),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"kubernetes.io/metadata.name\":\"%s\"}}}",
             ns, ns);
    t0 = h_now_ms();
    answer = h_post_review(s, path, &r);
    t0 = h_now_ms() - t0;
    resp = yyjson_obj_get(yyjson_doc_get_root(answer), "response");
    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    w = yyjson_obj_get(resp, "warnings");
    out[0] = '\0';
    for (size_t i = 0; i < yyjson_arr_size(w); i++) {
        len += (size_t)snprintf(out + len, out_len - len, "%s%s", i > 0 ? "\n" : "",
                                yyjson_get_str(yyjson_arr_get(w, i)));
    }
    yyjson_doc_free(answer);
    return t0;
}

static long long label_change(const char *path, const char *ns, char *out, size_t out_len)
{
    return label_change_on(&server, path, ns, out, out_len);
}

/*
 * The label change lists its namespace's pods once (one page) and warns about the violating ones
 * as kube does; the informer never lists or watches pods, before or after.
 */
static void test_label_change_lists_pods(void **state)
{
    static char got[4096];

    (void)state;
    assert_true(h_wait_ready(&server, 15000));
    assert_int_equal(pod_calls("/listsOf/pods"), 0);
    label_change("/validate", "busy", got, sizeof(got));
    assert_string_equal(got, "existing pods in namespace \"busy\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\n"
                             "loner: host namespaces\n"
                             "web-0 (and 2 other pods): privileged");
    assert_int_equal(pod_calls("/listsOf/pods"), 1);

    /* 521 pods: two pages (limit=500, then the continue token), the violating pod on the second */
    label_change("/validate", "big", got, sizeof(got));
    assert_string_equal(got, "existing pods in namespace \"big\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\n"
                             "zz-bad: host namespaces");
    assert_int_equal(pod_calls("/listsOf/pods"), 3);
    assert_int_equal(pod_calls("/watchesOf/pods"), 0);
    assert_true(pod_calls("/watchesOf/namespaces") >= 1); /* the counters count */
}

/* The LIST fails (500): kube's one warning, the request allowed, the reason logged. */
static void test_list_failure(void **state)
{
    static char got[4096];

    (void)state;
    assert_true(h_wait_ready(&server, 15000));
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"list\",\"resource\":\"pods\"}");
    label_change("/validate", "quiet", got, sizeof(got));
    assert_string_equal(got, LIST_FAILED);
    assert_true(h_log_wait(
        &server, "PodSecurity: failed to list pods in namespace quiet: Internal error occurred: injected", 1,
        5000));
    /* the next change lists again */
    label_change("/validate", "quiet", got, sizeof(got));
    assert_string_equal(got, "existing pods in namespace \"quiet\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\nq: host namespaces");
}

/*
 * A LIST that does not answer: it gets half of what is left of the request's deadline (?timeout
 * less admitd's 250 ms margin) when that is under kube's 1 s, and the answer is kube's warning,
 * sent within the request's deadline.
 */
static void test_list_obeys_the_deadline(void **state)
{
    static char got[4096];
    long long ms;

    (void)state;
    assert_true(h_wait_ready(&server, 15000));
    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":10000,\"resource\":\"pods\"}");

    /* timeout=1s: 750 ms to answer, 375 ms for the LIST */
    ms = label_change("/validate?timeout=1s", "quiet", got, sizeof(got));
    assert_string_equal(got, LIST_FAILED);
    print_message("timeout=1s: answered after %lld ms\n", ms);
    assert_true(ms >= 375);
    assert_true(ms < 750);
    assert_true(
        h_log_wait(&server, "/api/v1/namespaces/quiet/pods?limit=500\": context deadline exceeded", 1, 5000));

    /* timeout=10s: kube's 1 s */
    ms = label_change("/validate?timeout=10s", "quiet", got, sizeof(got));
    assert_string_equal(got, LIST_FAILED);
    print_message("timeout=10s: answered after %lld ms\n", ms);
    assert_true(ms >= 1000);
    assert_true(ms < 9750);
}

/*
 * No time left (?timeout=1ms: half of nothing): with an API connection no LIST is sent and kube's
 * warning comes at once, as client-go's List fails on a context past its deadline; from
 * --cluster-state, kube's loop evaluates one pod before it sees the deadline.
 */
static void test_no_time_left(void **state)
{
    static const char *const files[] = {
        "state.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: busy}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: busy}\n"
        "spec: {containers: [{name: c, image: i, securityContext: {privileged: true}}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: busy}\n"
        "spec: {containers: [{name: c, image: i, securityContext: {privileged: true}}]}\n",
        NULL};
    static const char *const args[] = {"--cluster-state", "@state.yaml", NULL};
    static char got[4096];
    long lists;

    (void)state;
    assert_true(h_wait_ready(&server, 15000));
    lists = pod_calls("/listsOf/pods");
    label_change("/validate?timeout=1ms", "busy", got, sizeof(got));
    assert_string_equal(got, LIST_FAILED);
    assert_int_equal(pod_calls("/listsOf/pods"), lists);

    assert_int_equal(h_start_with_files(&files_only, files, args), 0);
    label_change_on(&files_only, "/validate?timeout=1ms", "busy", got, sizeof(got));
    assert_string_equal(got,
                        "new PodSecurity enforce level only checked against the first 1 of 2 existing pods\n"
                        "existing pods in namespace \"busy\" violate the new PodSecurity enforce level "
                        "\"baseline:latest\"\na: privileged");
    label_change_on(&files_only, "/validate", "busy", got, sizeof(got));
    assert_string_equal(got, "existing pods in namespace \"busy\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\na (and 1 other pod): privileged");
    assert_int_equal(h_stop(&files_only, SIGTERM, 10000), 0);
    h_cleanup(&files_only);
}

/*
 * The client resets its connection while the LIST is held: the request is cancelled, and with it
 * the page in flight (nothing logged for it, as its 1 s would have logged), while another
 * request's LIST runs to its own end; the next label change lists as before.
 */
static void test_cancelled_mid_list(void **state)
{
    static char got[4096];
    adm_arena_t *arena = adm_arena_create(65536);
    pt_request_t r = {.operation = "UPDATE",
                      .resource = "namespaces",
                      .kind = "Namespace",
                      .namespace_ = "big",
                      .name = "big",
                      .object =
                          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"big\","
                          "\"labels\":{\"pod-security.kubernetes.io/enforce\":\"baseline\"}}}",
                      .old_object = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                                    "\"big\"}}"};
    const char *body;
    char *req;
    size_t len;
    h_conn_t c;
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    long lists;
    long long end;

    (void)state;
    assert_true(h_wait_ready(&server, 15000));
    assert_non_null(arena);
    body = pt_review_json(arena, &r);
    req = h_request("POST", "/validate?timeout=10s", "application/json", body, strlen(body), &len);
    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":10000,\"resource\":\"pods\"}");
    lists = pod_calls("/listsOf/pods");
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    end = h_now_ms() + 5000;
    while (pod_calls("/listsOf/pods") == lists && h_now_ms() < end) {
        (void)poll(NULL, 0, 10); /* a pause between polls of a condition */
    }
    assert_int_equal(pod_calls("/listsOf/pods"), lists + 1);
    /* the LIST of big is in flight: reset (a client that only half-closes still gets its answer) */
    assert_int_equal(setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)), 0);
    h_close(&c);
    free(req);
    adm_arena_destroy(arena);

    /* started after it, ended by its own 1 s: the cancelled one would have logged first */
    label_change("/validate?timeout=10s", "quiet", got, sizeof(got));
    assert_string_equal(got, LIST_FAILED);
    assert_true(h_log_wait(&server, "failed to list pods in namespace quiet", 1, 5000));
    assert_int_equal(h_log_count(&server, "failed to list pods in namespace big"), 0);

    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":0}");
    label_change("/validate", "big", got, sizeof(got));
    assert_string_equal(got, "existing pods in namespace \"big\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\n"
                             "zz-bad: host namespaces");
}

/* admitd stops cleanly after all of the above (under ASan: no page's arena leaked, none freed twice). */
static void test_clean_exit(void **state)
{
    (void)state;
    if (h_stop(&server, SIGTERM, 10000) != 0) {
        h_dump_log(&server);
        fail_msg("admitd did not exit cleanly");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_label_change_lists_pods, after_test),
        cmocka_unit_test_teardown(test_list_failure, after_test),
        cmocka_unit_test_teardown(test_list_obeys_the_deadline, after_test),
        cmocka_unit_test_teardown(test_no_time_left, after_test),
        cmocka_unit_test_teardown(test_cancelled_mid_list, after_test),
        cmocka_unit_test(test_clean_exit),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

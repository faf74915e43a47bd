/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Endpoint spreading from EndpointSlices (issue 18), the real binaries over TLS on 127.0.0.1:
 * admitd with --kubeconfig against adm-fake-apiserver, one validating webhook named by Service
 * hooks/spread (port 443, which the Service maps to the port named "https"), whose EndpointSlice
 * lists admitd-mockhook processes on 127.0.0.1, .2 and .3 (one port, one certificate for
 * spread.hooks.svc, so TLS still verifies the name), later .4:
 *  - /readyz is 503 until the Service's EndpointSlices have been listed;
 *  - the three get within 10% of a third of the calls each;
 *  - a fourth added to the slice takes calls within 1 s of the change, then its quarter;
 *  - one set not ready while admitd-bench runs (the slow one: it has calls in flight) gets no new
 *    call after the change (the calls it got are exactly those admitd had sent before, as its log
 *    says), its calls in flight finish, and no request fails; one removed from the slice likewise;
 *  - with no ready endpoint left, the call fails as kube-apiserver's through the ClusterIP would
 *    (failurePolicy Fail: the 500 with kube-proxy's refusal), and calls resume when one is back;
 *  - a reload naming another Service (hooks/other, a fifth mockhook with its own certificate)
 *    starts its watches, stops those of hooks/spread, and its calls reach the new endpoint.
 */
#include "harness.h"

#include "certgen.h"

#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define NMOCKS 5 /* .1 to .4 serve spread.hooks.svc, .5 other.hooks.svc */

static char dir[256], records[NMOCKS][320], ca_b64[8192], config[320], kubeconfig[320];
static h_server_t mocks[NMOCKS], api, api2, admitd;
static h_server_t *target = &api; /* the fake API server put_slice and put_service write to */
static int port;

/* Mockhook i on 127.0.0.(i+1):port (the first picks the port), serving name's certificate. */
static void start_mock(int i, const char *name)
{
    const char *args[] = {"--behavior", "allow", "--delay",
                          i == 1 ? "20ms" : "1ms", /* .2 holds its calls: some are in flight when it goes */
                          NULL};

    snprintf(records[i], sizeof(records[i]), "%s/record-%d.jsonl", dir, i);
    h_start_loopback_mock(&mocks[i], i, &port, dir, name, records[i], args);
}

/* The endpoints member of a slice: "127.0.0.N" ready, or "127.0.0.N:notready". */
static void put_slice(const char *service, const char *name, const char *const *eps, size_t n)
{
    char cmd[4096];
    size_t used;

    used =
        (size_t)snprintf(cmd, sizeof(cmd),
                         "{\"op\":\"put\",\"resource\":\"endpointslices\",\"object\":{\"metadata\":{\"name\":"
                         "\"%s\",\"namespace\":\"hooks\",\"labels\":{\"kubernetes.io/service-name\":\"%s\"}},"
                         "\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"https\",\"port\":%d,\"protocol\":"
                         "\"TCP\"}],\"endpoints\":[",
                         name, service, port);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(eps[i], ':');

        used += (size_t)snprintf(
            cmd + used, sizeof(cmd) - used, "%s{\"addresses\":[\"%.*s\"],\"conditions\":{\"ready\":%s}}",
            i > 0 ? "," : "", colon != NULL ? (int)(colon - eps[i]) : (int)strlen(eps[i]), eps[i],
            colon != NULL ? "false" : "true");
    }
    snprintf(cmd + used, sizeof(cmd) - used, "]}}");
    h_api_control(target, cmd);
}

static void put_service(const char *name)
{
    char cmd[1024];

    snprintf(
        cmd, sizeof(cmd),
        "{\"op\":\"put\",\"resource\":\"services\",\"object\":{\"metadata\":{\"name\":\"%s\",\"namespace\":"
        "\"hooks\"},\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"10.96.0.10\",\"ipFamilies\":[\"IPv4\"],"
        "\"ports\":[{\"name\":\"https\",\"port\":443,\"targetPort\":%d}]}}}",
        name, port);
    h_api_control(target, cmd);
}

static void write_config(const char *service)
{
    char text[12288];

    snprintf(
        text, sizeof(text),
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        "metadata: {name: spread}\nwebhooks:\n- name: eq.spread.example.com\n  clientConfig:\n"
        "    service: {namespace: hooks, name: %s, path: /eq}\n    caBundle: %s\n"
        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]\n"
        "  sideEffects: None\n  admissionReviewVersions: [v1]\n  failurePolicy: Fail\n",
        service, ca_b64);
    h_write_file(config, text);
}

static int setup(void **state)
{
    const char *api_args[] = {"--insecure-http", NULL};
    char ca[320];

    (void)state;
    assert_int_equal(adm_tls_global_init(), 0);
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(certgen_make(dir, "ca", "slices test CA", NULL, false), 0);
    assert_int_equal(certgen_make(dir, "spread", "spread.hooks.svc", "ca", false), 0);
    assert_int_equal(certgen_make(dir, "other", "other.hooks.svc", "ca", false), 0);
    snprintf(ca, sizeof(ca), "%s/ca.crt.pem", dir);
    h_file_b64(ca, ca_b64, sizeof(ca_b64));
    for (int i = 0; i < NMOCKS; i++) {
        start_mock(i, i < 4 ? "spread" : "other");
    }
    assert_int_equal(h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, api_args), 0);
    h_api_put_namespace(&api, "default", "Active");
    h_api_put_namespace(&api, "hooks", "Active");
    /* the fixture pod's account: with --kubeconfig, ServiceAccount reads it from the API server */
    h_api_control(&api, "{\"op\":\"put\",\"resource\":\"serviceaccounts\",\"object\":{\"metadata\":{\"name\":"
                        "\"web\",\"namespace\":\"default\"}}}");
    put_service("spread");
    put_service("other");
    {
        const char *three[] = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
        const char *five[] = {"127.0.0.5"};

        put_slice("spread", "spread-a", three, 3);
        put_slice("other", "other-a", five, 1);
    }
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    h_write_kubeconfig(kubeconfig, api.port, "{}");
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    write_config("spread");
    return 0;
}

static int teardown(void **state)
{
    int rc = admitd.pid > 0 ? h_stop(&admitd, SIGTERM, 30000) : 0;

    (void)state;
    if (rc != 0) {
        h_dump_log(&admitd);
    }
    h_cleanup(&admitd);
    h_api_stop(&api);
    h_api_stop(&api2);
    for (int i = 0; i < NMOCKS; i++) {
        h_stop(&mocks[i], SIGTERM, 10000);
        h_cleanup(&mocks[i]);
    }
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    if (rc != 0) {
        fail_msg("admitd did not exit cleanly: %d", rc);
    }
    return 0;
}

/* One GET on the health listener; the status. */
static int readyz(void)
{
    char body[64];

    return h_get(admitd.health_port, "/readyz", body, sizeof(body));
}

/* POSTs the fixture review to /validate on c; the answer's body (heap). */
static char *validate(h_conn_t *c)
{
    static char *body;
    static size_t body_len;
    h_response_t r = {0};
    size_t len;
    char *req, *out;

    if (body == NULL) {
        body = h_fixture("pod-create.v1.review.json", &body_len);
    }
    req = h_request("POST", "/validate", "application/json", body, body_len, &len);
    assert_int_equal(h_send(c, req, len), 0);
    assert_int_equal(h_read(c, &r, 15000, NULL), 0);
    assert_int_equal(r.status, 200);
    out = strndup((const char *)r.body.data, r.body.len);
    h_response_free(&r);
    free(req);
    return out;
}

static void validate_allowed(h_conn_t *c)
{
    char *answer = validate(c);

    if (strstr(answer, "\"allowed\":true") == NULL) {
        fail_msg("not allowed: %s", answer);
    }
    free(answer);
}

static int calls(int i)
{
    return h_count_lines(records[i], "\"path\":\"/");
}

static void test_ready_waits_for_the_slices(void **state)
{
    const char *args[] = {"--kubeconfig",
                          kubeconfig,
                          "--webhook-config",
                          config,
                          "--health-listen",
                          "127.0.0.1:0",
                          "--cluster-state",
                          h_fixture_path("cluster-state.yaml"),
                          NULL};

    (void)state;
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1000,\"on\":\"list\",\"resource\":"
                        "\"endpointslices\"}");
    assert_int_equal(h_start(&admitd, NULL, args), 0);
    assert_true(h_log_wait(&admitd,
                           "informer EndpointSlice kubernetes.io/service-name=spread: list "
                           "/apis/discovery.k8s.io/v1/namespaces/hooks/endpointslices failed: HTTP 500",
                           1, 10000));
    assert_true(h_log_wait(&admitd, "informer Namespace: synced", 1, 10000));
    assert_int_equal(readyz(), 503);
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":0}");
    assert_true(h_wait_ready(&admitd, 15000));
    assert_true(h_log_wait(&admitd, "webhook Service hooks/spread port 443: 3 endpoints:", 1, 5000));
}

static void test_three_endpoints_get_a_third_each(void **state)
{
    char review[320], url[128], out[8192];
    const char *args[] = {"--url",         url, "--cacert",   admitd.ca, "--review", review, "--closed",
                          "--connections", "1", "--duration", "3s",      NULL};
    int counts[3], total = 0;

    (void)state;
    snprintf(review, sizeof(review), "%s", h_fixture_path("pod-create.v1.review.json"));
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/validate", admitd.port);
    if (h_run_prog(h_bin("BENCH_BIN"), args, out, sizeof(out), 60000) != 0) {
        fail_msg("admitd-bench failed: %s", out);
    }
    for (int i = 0; i < 3; i++) {
        counts[i] = calls(i);
        total += counts[i];
    }
    print_message("calls per endpoint: %d %d %d\n", counts[0], counts[1], counts[2]);
    assert_int_equal(calls(3), 0);
    assert_true(total >= 30);
    for (int i = 0; i < 3; i++) {
        double share = (double)counts[i] / total;

        if (share < 0.9 / 3 || share > 1.1 / 3) {
            fail_msg("endpoint %d got %.3f of the calls", i, share);
        }
    }
}

static void test_added_endpoint_takes_its_share_at_once(void **state)
{
    const char *four[] = {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"};
    int before[4], after[4], sent = 0;
    long long t0, took;
    h_conn_t c;

    (void)state;
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    validate_allowed(&c); /* the connection is warm */
    put_slice("spread", "spread-a", four, 4);
    t0 = h_now_ms();
    while (calls(3) == 0 && h_now_ms() - t0 < 5000) {
        validate_allowed(&c);
        sent++;
    }
    took = h_now_ms() - t0;
    print_message("the new endpoint took its first call %lld ms after the change (%d calls)\n", took, sent);
    assert_true(calls(3) > 0);
    assert_true(took < 1000);
    for (int i = 0; i < 4; i++) {
        before[i] = calls(i);
    }
    for (int k = 0; k < 40; k++) {
        validate_allowed(&c);
    }
    for (int i = 0; i < 4; i++) {
        after[i] = calls(i) - before[i];
    }
    print_message("the next 40 calls: %d %d %d %d\n", after[0], after[1], after[2], after[3]);
    /* one call at a time: none outstanding anywhere, so the turn alone decides */
    assert_in_range(after[3], 9, 11);
    h_close(&c);
}

/* Starts admitd-bench (closed loop, 4 connections, for seconds) with its output in path; the pid. */
static pid_t spawn_bench(const char *seconds, const char *path)
{
    static char url[128];
    const char *argv[] = {h_bin("BENCH_BIN"),
                          "--url",
                          url,
                          "--cacert",
                          admitd.ca,
                          "--review",
                          h_fixture_path("pod-create.v1.review.json"),
                          "--closed",
                          "--connections",
                          "4",
                          "--duration",
                          seconds,
                          NULL};
    pid_t pid;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d/validate", admitd.port);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for the bench to end; fails the test unless every request was answered and allowed. */
static void bench_all_allowed(pid_t pid, const char *path)
{
    unsigned long long sent = 0, allowed = 0, denied = 0, errors = 0;
    char text[8192] = "";
    int status = 0;
    FILE *f;
    const char *line;

    assert_int_equal(waitpid(pid, &status, 0), pid);
    f = fopen(path, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
    fclose(f);
    line = strstr(text, "requests: ");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || line == NULL ||
        sscanf(line, "requests: %llu sent, %llu allowed, %llu denied, %llu errors", &sent, &allowed, &denied,
               &errors) != 4) {
        fail_msg("admitd-bench: %s", text);
    }
    print_message("during the change: %llu sent, %llu allowed, %llu denied, %llu errors\n", sent, allowed,
                  denied, errors);
    assert_true(allowed > 0);
    assert_int_equal(denied, 0);
    assert_int_equal(errors, 0);
}

/* The calls admitd's log says endpoint 127.0.0.(i+1) got before it was removed (and in *in_flight,
   those still running then). */
static int calls_before_removal(int i, int *in_flight)
{
    char needle[128], text[512];
    FILE *f = fopen(admitd.log, "r");
    int n = -1;

    snprintf(needle, sizeof(needle), "endpoint 127.0.0.%d:%d removed after ", i + 1, port);
    assert_non_null(f);
    while (fgets(text, sizeof(text), f) != NULL) {
        const char *at = strstr(text, needle);

        if (at != NULL) {
            char *end;

            n = (int)strtol(at + strlen(needle), &end, 10);
            *in_flight = (int)strtol(end + strlen(" calls; "), NULL, 10);
        }
    }
    fclose(f);
    return n;
}

static void test_not_ready_and_removed_endpoints_drain(void **state)
{
    const char *two_not_ready[] = {"127.0.0.1", "127.0.0.2:notready", "127.0.0.3", "127.0.0.4"};
    const char *four_gone[] = {"127.0.0.1", "127.0.0.2:notready", "127.0.0.3"};
    char out[320], needle[128];
    long long start;
    pid_t pid;
    int sent, in_flight = 0;

    (void)state;
    snprintf(out, sizeof(out), "%s/bench.txt", dir);
    sent = calls(1);
    pid = spawn_bench("6s", out);
    /* under load first: the change meets calls in flight */
    start = h_now_ms();
    while (calls(1) < sent + 10 && h_now_ms() - start < 10000) {
        poll(NULL, 0, 10); /* waiting for the load to reach the endpoint */
    }
    put_slice("spread", "spread-a", two_not_ready, 4);
    snprintf(needle, sizeof(needle), "endpoint 127.0.0.2:%d removed after", port);
    assert_true(h_log_wait(&admitd, needle, 1, 5000));
    /* the fourth takes some of the load before it goes */
    start = h_now_ms();
    sent = calls(3);
    while (calls(3) < sent + 10 && h_now_ms() - start < 10000) {
        poll(NULL, 0, 10); /* waiting for the load to reach the endpoint */
    }
    put_slice("spread", "spread-a", four_gone, 3);
    snprintf(needle, sizeof(needle), "endpoint 127.0.0.4:%d removed after", port);
    assert_true(h_log_wait(&admitd, needle, 1, 5000));
    bench_all_allowed(pid, out);
    /* what each got is exactly what admitd had sent it before the change, nothing after (a call
       the bench left unfinished may still be on its way: it counts once it arrives) */
    sent = calls_before_removal(1, &in_flight);
    h_wait_lines(records[1], "\"path\":\"/", sent, 5000);
    print_message(
        "127.0.0.2: %d calls sent before it turned not ready (%d of them in flight then), %d received\n",
        sent, in_flight, calls(1));
    assert_true(sent > 0);
    assert_int_equal(calls(1), sent);
    sent = calls_before_removal(3, &in_flight);
    h_wait_lines(records[3], "\"path\":\"/", sent, 5000);
    print_message("127.0.0.4: %d calls sent before it was removed (%d of them in flight then), %d received\n",
                  sent, in_flight, calls(3));
    assert_int_equal(calls(3), sent);
}

static void test_no_ready_endpoint_fails_as_kube_would(void **state)
{
    const char *none_ready[] = {"127.0.0.1:notready", "127.0.0.3:notready"};
    const char *back[] = {"127.0.0.1", "127.0.0.3"};
    h_conn_t c;
    char *answer;

    (void)state;
    put_slice("spread", "spread-a", none_ready, 2);
    assert_true(h_log_wait(&admitd,
                           "webhook Service hooks/spread port 443: no endpoint: calls fail with: dial tcp "
                           "10.96.0.10:443: connect: connection refused",
                           1, 5000));
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    answer = validate(&c);
    if (strstr(answer, "\"allowed\":false") == NULL || strstr(answer, "\"code\":500") == NULL ||
        strstr(answer,
               "failed calling webhook \\\"eq.spread.example.com\\\": failed to call webhook: Post "
               "\\\"https://spread.hooks.svc:443/eq?timeout=10s\\\": dial tcp 10.96.0.10:443: connect: "
               "connection refused") == NULL) {
        fail_msg("answer: %s", answer);
    }
    free(answer);
    put_slice("spread", "spread-a", back, 2);
    assert_true(h_log_wait(&admitd, "webhook Service hooks/spread port 443: 2 endpoints:", 1, 5000));
    validate_allowed(&c);
    h_close(&c);
}

static void test_reload_follows_the_services(void **state)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req;

    (void)state;
    write_config("other");
    kill(admitd.pid, SIGHUP);
    assert_true(h_log_wait(&admitd, "watching Service hooks/other and its EndpointSlices", 1, 10000));
    assert_true(h_log_wait(&admitd, "no longer watching Service hooks/spread", 1, 10000));
    assert_true(h_log_wait(&admitd, "webhook Service hooks/other port 443: 1 endpoint:", 1, 10000));
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    validate_allowed(&c);
    assert_int_equal(calls(4), 1);

    req = h_request("GET", "/metrics", NULL, NULL, 0, &len);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    for (size_t i = 0; i < 3; i++) {
        static const char *const lines[] = {
            "admitd_webhook_service_synced{namespace=\"hooks\",service=\"other\"} 1\n",
            "admitd_webhook_service_endpoints{namespace=\"hooks\",service=\"other\",port=\"443\"} 1\n",
            "service=\"spread\"",
        };
        void *at = memmem(r.body.data, r.body.len, lines[i], strlen(lines[i]));

        if ((i < 2) != (at != NULL)) {
            fail_msg("/metrics %s %s:\n%.*s", i < 2 ? "lacks" : "still has", lines[i], (int)r.body.len,
                     (const char *)r.body.data);
        }
    }
    h_response_free(&r);
    free(req);
    h_close(&c);
}

/*
 * The kubeconfig now names another API server, where the watched Service has no ready endpoint.
 * The Service's watches are not the informer's: they too must list again from the new server (its
 * resourceVersions mean nothing to the old one), or the calls would go on to the old server's
 * endpoints until their watch timed out minutes later.
 */
static void test_new_api_server_moves_the_service_watches(void **state)
{
    const char *api_args[] = {"--insecure-http", NULL};
    const char *none_ready[] = {"127.0.0.5:notready"};
    h_conn_t c;
    char *answer;

    (void)state;
    assert_int_equal(h_start_prog(&api2, h_bin("FAKE_APISERVER_BIN"), NULL, api_args), 0);
    h_api_put_namespace(&api2, "default", "Active");
    h_api_put_namespace(&api2, "hooks", "Active");
    h_api_control(&api2,
                  "{\"op\":\"put\",\"resource\":\"serviceaccounts\",\"object\":{\"metadata\":{\"name\":"
                  "\"web\",\"namespace\":\"default\"}}}");
    target = &api2;
    put_service("other");
    put_slice("other", "other-a", none_ready, 1);
    target = &api;
    h_write_kubeconfig(kubeconfig, api2.port, "{}");
    assert_true(h_log_wait(&admitd, "API connection: the server is now", 1, 10000));
    assert_true(h_log_wait(&admitd, "webhook Service hooks/other port 443: no endpoint", 1, 10000));
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    answer = validate(&c);
    if (strstr(answer, "\"allowed\":false") == NULL || strstr(answer, "connection refused") == NULL) {
        fail_msg("answer: %s", answer);
    }
    free(answer);
    h_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_waits_for_the_slices),
        cmocka_unit_test(test_three_endpoints_get_a_third_each),
        cmocka_unit_test(test_added_endpoint_takes_its_share_at_once),
        cmocka_unit_test(test_not_ready_and_removed_endpoints_drain),
        cmocka_unit_test(test_no_ready_endpoint_fails_as_kube_would),
        cmocka_unit_test(test_reload_follows_the_services),
        cmocka_unit_test(test_new_api_server_moves_the_service_watches),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubeconfig and the files it names as reload parts (issue 13 item 4), end to end: admitd
 * with --kubeconfig against adm-fake-apiserver over TLS with client certificates and bearer
 * tokens, its CA, client certificate, key and token file in a kubelet-style Secret mount (each
 * update a `..data` link swap):
 *  - the token rotated three times: each swap reloads, the watches reconnect with the new token,
 *    and once the fake server refuses the old one admitd keeps watching and stays ready with not
 *    one 401 (so the new token was used at once, not after client-go's minute or a 401);
 *  - the server's CA rotated (the fake server's certificate from another CA) and the client
 *    certificate rotated (the fake server trusting another client CA): the watches reconnect on
 *    the new TLS settings, no handshake fails;
 *  - a kubeconfig that cannot be used (an exec plugin, read on its change and on SIGHUP; an empty
 *    token file) keeps the running connection, names the file and field, counts
 *    admitd_config_reloads_total{result="failure"};
 *  - another server URL lists every kind from that server;
 *  - --in-cluster: the service account's token in its mount rotated the same way (own servers);
 * while a steady stream of /admit requests runs through all of it, not one lost or refused.
 */
#include "certgen.h"
#include "harness.h"

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define WAIT_MS 15000
/*
 * The plugins that call the API server on their own (ServiceAccount's GET of a missing account,
 * LimitRanger's and ResourceQuota's LIST of a namespace with none, every 30 s): off, so that the
 * connections these tests count are the watches'. In the window between the fake taking a new
 * certificate and admitd's reload such a call would fail its handshake, rightly, and the load's
 * /admit with it.
 */
#define LIVE_CALLERS "ServiceAccount,LimitRanger,ResourceQuota"

static char dir[256], mount[320], kubeconfig[320], fake_tokens[320];
static h_server_t api, api2, server;
static int token_version = 1;
static const char *client_cert = "client1"; /* what the mount holds now */
static const char *server_ca = "caS1";

/* ---- files ------------------------------------------------------------------------------------ */

/* Copies certgen's NAME.KIND.pem over the file to (the fake server's own files). */
static void install(const char *name, const char *kind, const char *to)
{
    char *text = h_pem(dir, name, kind), path[400];

    h_path(path, sizeof(path), dir, to);
    h_replace_file(path, text);
    free(text);
}

/* The admitd mount: the server CA, the client certificate and key, and token (a kubelet swap). */
static void publish_mount(const char *mnt, const char *token)
{
    char *ca = h_pem(dir, server_ca, "crt"), *crt = h_pem(dir, client_cert, "crt"),
         *key = h_pem(dir, client_cert, "key");
    h_mount_file_t files[] = {{"ca.crt", ca}, {"tls.crt", crt}, {"tls.key", key}, {"token", token}};

    h_publish(mnt, files, 4);
    free(ca);
    free(crt);
    free(key);
}

static void write_kubeconfig(int port, const char *user_extra)
{
    char yaml[2048];

    /* relative file names: the kubeconfig's folder's, as clientcmd resolves them */
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
             "clusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:%d\", "
             "certificate-authority: mount/ca.crt}\n"
             "users:\n- name: u\n  user: {tokenFile: mount/token, client-certificate: mount/tls.crt, "
             "client-key: mount/tls.key%s}\n"
             "contexts:\n- name: t\n  context: {cluster: c, user: u}\n",
             port, user_extra);
    h_replace_file(kubeconfig, yaml);
}

/* ---- talking to the servers -------------------------------------------------------------------- */

static void ready(const h_server_t *s)
{
    char body[64];

    assert_int_equal(h_get(s->health_port, "/readyz", body, sizeof(body)), 200);
}

/* admitd_config_reloads_total{result=...} from /metrics. */
static long reloads(const h_server_t *s, const char *result)
{
    char series[128];
    h_conn_t c;
    long value;

    snprintf(series, sizeof(series), "admitd_config_reloads_total{result=\"%s\"}", result);
    assert_int_equal(h_connect_to(&c, s), 0);
    value = h_metric_value(&c, series);
    h_close(&c);
    return value;
}

/* The /admit answer for a pod created in ns, or NULL when no answer came (heap). */
static char *admit_pod(h_conn_t *c, adm_arena_t *a, const char *ns, int *status)
{
    pt_request_t pr = {.operation = "CREATE",
                       .resource = "pods",
                       .kind = "Pod",
                       .namespace_ = ns,
                       .name = "p",
                       .object = "{}"};
    const char *body = pt_review_json(a, &pr);
    h_response_t r = {0};
    size_t len;
    char *req = h_request("POST", "/admit", "application/json", body, strlen(body), &len);
    char *out = NULL;

    *status = -1;
    if (h_send(c, req, len) == 0 && h_read(c, &r, 10000, NULL) == 0) {
        *status = r.status;
        out = calloc(1, r.body.len + 1);
        if (out != NULL && r.body.len > 0) {
            memcpy(out, r.body.data, r.body.len);
        }
    }
    h_response_free(&r);
    free(req);
    return out;
}

static bool pod_allowed(const h_server_t *s, const char *ns)
{
    adm_arena_t *a = adm_arena_create(4096);
    h_conn_t c;
    int status;
    char *body;
    bool allowed;

    assert_int_equal(h_connect_to(&c, s), 0);
    body = admit_pod(&c, a, ns, &status);
    assert_int_equal(status, 200);
    allowed = strstr(body, "\"allowed\":true") != NULL;
    free(body);
    h_close(&c);
    adm_arena_destroy(a);
    return allowed;
}

static void wait_allowed(const h_server_t *s, const char *ns, bool want)
{
    long long end = h_now_ms() + WAIT_MS;

    while (h_now_ms() < end) {
        if (pod_allowed(s, ns) == want) {
            return;
        }
        (void)poll(NULL, 0, 20);
    }
    h_dump_log(s);
    fail_msg("a pod in %s is still %s", ns, want ? "refused" : "allowed");
}

/* The fake server's accepted tokens, one a line. */
static void accept_tokens(const char *lines)
{
    h_replace_file(fake_tokens, lines);
}

/* ---- the steady stream of requests ------------------------------------------------------------ */

static struct {
    pthread_t thread;
    atomic_bool stop;
    atomic_long sent, failed;
    char first_failure[600]; /* written once, by the thread, before failed turns 1 */
} load;

/* /admit for a pod in ns-0 over keep-alive connections (a new one every 50 requests), paced. */
static void *load_main(void *arg)
{
    adm_arena_t *a = adm_arena_create(4096);
    h_conn_t c;
    bool connected = false;
    long n = 0;

    (void)arg;
    while (!atomic_load(&load.stop)) {
        int status = -1;
        char *body = NULL;

        if (!connected && h_connect_to(&c, &server) == 0) {
            connected = true;
        }
        if (connected) {
            body = admit_pod(&c, a, "ns-0", &status);
        }
        if (status != 200 || body == NULL || strstr(body, "\"allowed\":true") == NULL) {
            if (atomic_fetch_add(&load.failed, 1) == 0) {
                snprintf(load.first_failure, sizeof(load.first_failure), "status %d: %.500s", status,
                         body != NULL ? body : "(no answer)");
            }
            if (connected) {
                h_close(&c);
                connected = false;
            }
        }
        free(body);
        adm_arena_reset(a);
        atomic_fetch_add(&load.sent, 1);
        if (connected && ++n % 50 == 0) {
            h_close(&c); /* new handshakes too, not only kept-alive connections */
            connected = false;
        }
        (void)poll(NULL, 0, 3); /* pacing: a steady stream, not a flood on a shared machine */
    }
    if (connected) {
        h_close(&c);
    }
    adm_arena_destroy(a);
    return NULL;
}

/* ---- set-up ------------------------------------------------------------------------------------ */

static int start_fake(h_server_t *a, const char *extra_ns)
{
    char crt[400], key[400], ca[400];
    const char *args[] = {"--tls-cert-file",
                          crt,
                          "--tls-private-key-file",
                          key,
                          "--client-ca-file",
                          ca,
                          "--token-file",
                          fake_tokens,
                          "--namespaces",
                          "3",
                          NULL};

    h_path(crt, sizeof(crt), dir, "fake-tls.crt");
    h_path(key, sizeof(key), dir, "fake-tls.key");
    h_path(ca, sizeof(ca), dir, "fake-client-ca.crt");
    if (h_start_prog(a, h_bin("FAKE_APISERVER_BIN"), NULL, args) != 0) {
        return -1;
    }
    if (extra_ns != NULL) {
        h_api_put_namespace(a, extra_ns, "Active");
    }
    return 0;
}

static int setup(void **state)
{
    char token[64];
    const char *args[] = {"--kubeconfig",
                          kubeconfig,
                          "--health-listen",
                          "127.0.0.1:0",
                          "--disable-admission-plugins",
                          LIVE_CALLERS,
                          "--v",
                          "1",
                          NULL};

    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0 ||
        h_make_rotation_certs(dir, "API server CA", "admitd") != 0) {
        return -1;
    }
    h_path(mount, sizeof(mount), dir, "mount");
    h_path(kubeconfig, sizeof(kubeconfig), dir, "kubeconfig.yaml");
    h_path(fake_tokens, sizeof(fake_tokens), dir, "fake-tokens");
    install("server1", "crt", "fake-tls.crt");
    install("server1", "key", "fake-tls.key");
    install("caC1", "crt", "fake-client-ca.crt");
    accept_tokens("token-1\n");
    if (start_fake(&api, "only-on-first") != 0) {
        return -1;
    }
    snprintf(token, sizeof(token), "token-%d\n", token_version);
    publish_mount(mount, token);
    write_kubeconfig(api.port, "");
    if (h_start(&server, NULL, args) != 0 || !h_wait_ready(&server, WAIT_MS)) {
        return -1;
    }
    atomic_store(&load.stop, false);
    return pthread_create(&load.thread, NULL, load_main, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    int rc;

    (void)state;
    atomic_store(&load.stop, true);
    pthread_join(load.thread, NULL);
    /* a clean exit: under ASan a leak of the replaced connections or configurations would fail it */
    rc = h_stop(&server, SIGTERM, 10000);
    if (rc != 0) {
        h_dump_log(&server);
    }
    h_cleanup(&server);
    h_api_stop(&api);
    h_api_stop(&api2);
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return rc;
}

/* ---- tests ------------------------------------------------------------------------------------- */

/*
 * Three rotations of the token, each as kubelet rotates a projected token: the new one valid on
 * the server, then published (a ..data swap), then the old one refused. Each swap reloads; the
 * watches reconnect with the new token (the fake server counts a new watch), and after the old
 * token is refused a watch cut by the server comes back at once: no 401 at all.
 */
static void test_token_rotation(void **state)
{
    long unauthorized = h_api_stat(&api, "unauthorized");

    (void)state;
    for (int i = 0; i < 3; i++) {
        char both[64], token[64], ns[32];
        long watches = h_api_stat(&api, "watches");

        snprintf(both, sizeof(both), "token-%d\ntoken-%d\n", token_version, token_version + 1);
        accept_tokens(both);
        token_version++;
        snprintf(token, sizeof(token), "token-%d\n", token_version);
        publish_mount(mount, token);
        h_expect_log(&server, "API connection: new bearer token", i + 1, WAIT_MS);
        assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
        accept_tokens(token); /* the old token is refused from now on */
        watches = h_api_stat(&api, "watches");
        h_api_control(&api, "{\"op\":\"cut-watches\"}");
        assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
        snprintf(ns, sizeof(ns), "after-token-%d", token_version);
        h_api_put_namespace(&api, ns, "Active");
        wait_allowed(&server, ns, true);
        ready(&server);
    }
    assert_int_equal(h_api_stat(&api, "unauthorized"), unauthorized);
    assert_int_equal(h_api_stat(&api, "tlsErrors"), 0);
}

/*
 * The API server's certificate now comes from another CA (new handshakes only; the open watch
 * keeps its session), then admitd's mount gets that CA: the reload makes a new TLS context and
 * the watches reconnect on it. A reconnect with the old CA would fail its handshake.
 */
static void test_ca_rotation(void **state)
{
    char token[64];
    long watches = h_api_stat(&api, "watches"), tls_errors;

    (void)state;
    install("server2", "crt", "fake-tls.crt");
    install("server2", "key", "fake-tls.key");
    h_api_control(&api, "{\"op\":\"reload-tls\"}");
    server_ca = "caS2";
    snprintf(token, sizeof(token), "token-%d\n", token_version);
    publish_mount(mount, token);
    h_expect_log(&server, "API connection: new TLS settings for https://127.0.0.1:", 1, WAIT_MS);
    tls_errors = h_api_stat(&api, "tlsErrors"); /* before the reload a new connection may fail, rightly */
    assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
    /* the replaced connections close once no call runs on them */
    h_expect_log(&server, "from before the reload are closed", 1, WAIT_MS);
    h_api_put_namespace(&api, "after-ca", "Active");
    wait_allowed(&server, "after-ca", true);
    ready(&server);
    assert_int_equal(h_api_stat(&api, "tlsErrors"), tls_errors);
}

/* The fake server trusts only another client CA; admitd's mount gets a certificate from it. */
static void test_client_certificate_rotation(void **state)
{
    char token[64];
    long watches = h_api_stat(&api, "watches"), tls_errors;
    long unauthorized = h_api_stat(&api, "unauthorized");

    (void)state;
    install("caC2", "crt", "fake-client-ca.crt");
    h_api_control(&api, "{\"op\":\"reload-tls\"}");
    client_cert = "client2";
    snprintf(token, sizeof(token), "token-%d\n", token_version);
    publish_mount(mount, token);
    h_expect_log(&server, "API connection: new TLS settings for https://127.0.0.1:", 2, WAIT_MS);
    tls_errors = h_api_stat(&api, "tlsErrors");
    assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
    h_api_put_namespace(&api, "after-client-cert", "Active");
    wait_allowed(&server, "after-client-cert", true);
    ready(&server);
    assert_int_equal(h_api_stat(&api, "unauthorized"), unauthorized);
    assert_int_equal(h_api_stat(&api, "tlsErrors"), tls_errors);
}

/*
 * A kubeconfig admitd cannot use, then a token file left empty: each reload fails, names the file
 * and field, is counted, and the running connection goes on (a watch cut by the server comes back
 * on the old credentials). The fixed files reload.
 */
static void test_broken_kubeconfig_keeps_the_old(void **state)
{
    long failures = reloads(&server, "failure"), successes = reloads(&server, "success");
    long watches;
    int changes;
    char line[1200], token[64];

    (void)state;
    write_kubeconfig(api.port, ", exec: {command: get-token, apiVersion: client.authentication.k8s.io/v1}");
    snprintf(line, sizeof(line),
             "reload failed, the running configuration stays: API connection: %s: users[0].user.exec: exec "
             "credential plugins are not supported",
             kubeconfig);
    h_expect_log(&server, line, 1, WAIT_MS);
    assert_int_equal(reloads(&server, "failure"), failures + 1);
    kill(server.pid, SIGHUP); /* read again, failed again */
    h_expect_log(&server, line, 2, WAIT_MS);
    assert_int_equal(reloads(&server, "failure"), failures + 2);
    watches = h_api_stat(&api, "watches");
    h_api_control(&api, "{\"op\":\"cut-watches\"}");
    assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
    h_api_put_namespace(&api, "after-broken", "Active");
    wait_allowed(&server, "after-broken", true);
    ready(&server);

    /* the same kubeconfig as the one running: nothing a call is made from changed, nothing reconnects */
    watches = h_api_stat(&api, "watches");
    changes = h_log_count(&server, "API connection: ");
    write_kubeconfig(api.port, "");
    h_expect_log(&server, "configuration reloaded", (int)successes + 1, WAIT_MS);
    assert_int_equal(h_log_count(&server, "API connection: "), changes);
    assert_int_equal(h_api_stat(&api, "watches"), watches);
    publish_mount(mount, " \n");
    snprintf(
        line, sizeof(line),
        "reload failed, the running configuration stays: API connection: %s: users[0].user.tokenFile: read "
        "empty token from file %s/mount/token",
        kubeconfig, dir);
    h_expect_log(&server, line, 1, WAIT_MS);
    assert_true(reloads(&server, "failure") >= failures + 3);
    /* the token that runs is the last good one: the server still takes it */
    watches = h_api_stat(&api, "watches");
    h_api_control(&api, "{\"op\":\"cut-watches\"}");
    assert_true(h_api_wait_stat_above(&api, "watches", watches, WAIT_MS));
    h_api_put_namespace(&api, "after-empty-token", "Active");
    wait_allowed(&server, "after-empty-token", true);
    snprintf(token, sizeof(token), "token-%d\n", token_version);
    publish_mount(mount, token);
    ready(&server);
}

/*
 * Another server URL: every kind is listed from the new server (its resourceVersions have nothing
 * to do with the old one's), and a namespace only the old server had leaves the cache.
 */
static void test_new_server_lists_again(void **state)
{
    long lists;

    (void)state;
    wait_allowed(&server, "only-on-first", true);
    assert_int_equal(start_fake(&api2, "only-on-second"), 0);
    lists = h_api_stat(&api2, "lists");
    write_kubeconfig(api2.port, "");
    h_expect_log(&server, "API connection: the server is now https://127.0.0.1:", 1, WAIT_MS);
    assert_true(h_api_wait_stat_above(&api2, "lists", lists, WAIT_MS));
    wait_allowed(&server, "only-on-first", false);
    wait_allowed(&server, "only-on-second", true);
    ready(&server);
}

/* What the stream of requests met through every reload above: nothing lost, nothing refused. */
static void test_no_request_lost(void **state)
{
    (void)state;
    atomic_store(&load.stop, true);
    pthread_join(load.thread, NULL);
    print_message("%ld /admit requests during the reloads, %ld failed\n", atomic_load(&load.sent),
                  atomic_load(&load.failed));
    if (atomic_load(&load.failed) != 0) {
        fail_msg("first failure: %s", load.first_failure);
    }
    assert_true(atomic_load(&load.sent) > 50);
}

/*
 * --in-cluster: the service account's folder as kubelet mounts it (token, ca.crt, namespace), the
 * API server taking bearer tokens alone; a new token published there is used at once, as above,
 * and a ca.crt that cannot be loaded keeps the running one.
 */
static void test_in_cluster_token_rotation(void **state)
{
    char sa[400], port[16], crt[400], key[400], tokens[400], *ca = h_pem(dir, "caS1", "crt");
    const char *fake_args[] = {"--tls-cert-file",
                               crt,
                               "--tls-private-key-file",
                               key,
                               "--token-file",
                               tokens,
                               "--namespaces",
                               "3",
                               NULL};
    const char *args[] = {
        "--in-cluster", "--health-listen", "127.0.0.1:0", "--disable-admission-plugins", LIVE_CALLERS, NULL};
    h_mount_file_t files[] = {{"token", "sa-token-1\n"}, {"ca.crt", ca}, {"namespace", "admitd\n"}};
    h_server_t sa_api, ic;
    long unauthorized, watches;

    (void)state;
    snprintf(crt, sizeof(crt), "%s/server1.crt.pem", dir);
    snprintf(key, sizeof(key), "%s/server1.key.pem", dir);
    h_path(tokens, sizeof(tokens), dir, "sa-tokens");
    h_replace_file(tokens, "sa-token-1\n");
    assert_int_equal(h_start_prog(&sa_api, h_bin("FAKE_APISERVER_BIN"), NULL, fake_args), 0);
    h_path(sa, sizeof(sa), dir, "serviceaccount");
    h_publish(sa, files, 3);
    snprintf(port, sizeof(port), "%d", sa_api.port);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
    setenv("ADM_SERVICEACCOUNT_DIR", sa, 1);
    assert_int_equal(h_start(&ic, NULL, args), 0);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("ADM_SERVICEACCOUNT_DIR");
    if (!h_wait_ready(&ic, WAIT_MS)) {
        h_dump_log(&ic);
        fail_msg("in-cluster admitd never synced");
    }
    unauthorized = h_api_stat(&sa_api, "unauthorized");
    watches = h_api_stat(&sa_api, "watches");
    h_replace_file(tokens, "sa-token-1\nsa-token-2\n");
    files[0].text = "sa-token-2\n";
    h_publish(sa, files, 3);
    h_expect_log(&ic, "API connection: new bearer token", 1, WAIT_MS);
    assert_true(h_api_wait_stat_above(&sa_api, "watches", watches, WAIT_MS));
    h_replace_file(tokens, "sa-token-2\n"); /* sa-token-1 refused */
    watches = h_api_stat(&sa_api, "watches");
    h_api_control(&sa_api, "{\"op\":\"cut-watches\"}");
    assert_true(h_api_wait_stat_above(&sa_api, "watches", watches, WAIT_MS));
    h_api_put_namespace(&sa_api, "after-sa-token", "Active");
    wait_allowed(&ic, "after-sa-token", true);
    assert_int_equal(h_api_stat(&sa_api, "unauthorized"), unauthorized);
    /* a ca.crt that cannot be loaded: client-go would go on with the system roots at start; a
       reload keeps the running CA instead */
    files[1].text = "not a certificate\n";
    h_publish(sa, files, 3);
    h_expect_log(&ic,
                 "reload failed, the running configuration stays: API connection: in-cluster: ca.crt: ", 1,
                 WAIT_MS);
    watches = h_api_stat(&sa_api, "watches");
    h_api_control(&sa_api, "{\"op\":\"cut-watches\"}");
    assert_true(h_api_wait_stat_above(&sa_api, "watches", watches, WAIT_MS));
    h_api_put_namespace(&sa_api, "after-bad-ca", "Active");
    wait_allowed(&ic, "after-bad-ca", true);
    assert_int_equal(h_api_stat(&sa_api, "tlsErrors"), 0);
    assert_int_equal(h_stop(&ic, SIGTERM, 10000), 0);
    h_cleanup(&ic);
    h_api_stop(&sa_api);
    free(ca);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_ca_rotation),
        cmocka_unit_test(test_client_certificate_rotation),
        cmocka_unit_test(test_broken_kubeconfig_keeps_the_old),
        cmocka_unit_test(test_new_server_lists_again),
        cmocka_unit_test(test_no_request_lost),
        cmocka_unit_test(test_in_cluster_token_rotation),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

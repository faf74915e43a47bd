/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hot reload end to end: a real admitd whose files change under it. Each kind of file reloads,
 * by a change seen through its folder (written in place, renamed over, or published as kubelet
 * publishes a mounted Secret or ConfigMap: a new timestamped folder, then the `..data` link swapped
 * to it) and by SIGHUP: the server certificate and key (new handshakes get the new one, open
 * connections keep working), the client CA, webhook configurations, the AdmissionConfiguration's
 * `path:` file, and cluster state. A reload that fails validation keeps the running configuration,
 * names the file and field, and is counted in admitd_config_reloads_total{result="failure"}.
 *
 * The reload-under-load test keeps /validate requests flowing over keep-alive connections (and new
 * handshakes on fresh ones) while certificates, the client CA and every configuration file are
 * swapped 100 times, with a SIGHUP every tenth time: no request may be lost or answered with an
 * error the configuration did not ask for, and admitd's resident memory must stay flat after a
 * warm-up.
 */
#include "certgen.h"
#include "harness.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yyjson.h>

#include <cmocka.h>

static char dir[256];   /* certificates and everything else of the run */
static h_server_t mock; /* the downstream webhook: /allow and /deny */
static char mock_ca_b64[8192];

/* ---- configuration texts ------------------------------------------------------------------------ */

/* One validating webhook, named name, posting to the mockhook's path for namespaces labelled env=prod. */
static char *hooks_yaml(const char *name, const char *path)
{
    static char text[16384];

    snprintf(text, sizeof(text),
             "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
             "metadata: {name: %s}\nwebhooks:\n"
             "- name: %s\n  clientConfig:\n    url: https://127.0.0.1:%d%s\n    caBundle: %s\n"
             "  rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]\n"
             "  namespaceSelector: {matchLabels: {env: prod}}\n"
             "  failurePolicy: Fail\n  sideEffects: None\n  admissionReviewVersions: [v1]\n",
             name, name, mock.port, path, mock_ca_b64);
    return text;
}

static char *namespace_yaml(const char *env, int rev)
{
    static char text[768];

    /* with the service accounts its pods name, which the default ServiceAccount plugin looks up */
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: Namespace\nmetadata: {name: web, labels: {env: %s, rev: \"%d\"}}\n---\n"
             "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: web}\n---\n"
             "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: web}\n",
             env, rev);
    return text;
}

static const char admission_yaml[] = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                                     "plugins:\n- name: EventRateLimit\n  path: limits.yaml\n";

static char *limits_yaml(int burst)
{
    static char text[512];

    snprintf(text, sizeof(text),
             "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n"
             "limits:\n- type: Server\n  qps: 1\n  burst: %d\n",
             burst);
    return text;
}

/* ---- requests -------------------------------------------------------------------------------- */

/* The pod fixture with our uid, in namespace ns. */
static char *pod_review(const char *uid, const char *ns)
{
    size_t len;
    char *text = h_fixture("pod-create.v1.review.json", &len);
    yyjson_doc *doc = yyjson_read(text, len, 0);
    yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);
    yyjson_mut_val *req = yyjson_mut_obj_get(yyjson_mut_doc_get_root(m), "request");
    char *out;

    yyjson_mut_obj_put(req, yyjson_mut_strcpy(m, "uid"), yyjson_mut_strcpy(m, uid));
    yyjson_mut_obj_put(req, yyjson_mut_strcpy(m, "namespace"), yyjson_mut_strcpy(m, ns));
    out = yyjson_mut_write(m, 0, NULL);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(doc);
    free(text);
    return out;
}

static char *event_review(const char *uid)
{
    adm_buf_t b = ADM_BUF_INIT;

    adm_buf_appendf(
        &b,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"
        "\"%s\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Event\"},\"resource\":{"
        "\"group\":\"\",\"version\":\"v1\",\"resource\":\"events\"},\"name\":\"e\",\"namespace\":"
        "\"default\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"u\"},\"object\":{"
        "\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\",\"namespace\":"
        "\"default\"}}}}",
        uid);
    adm_buf_append(&b, "", 1);
    return (char *)b.data;
}

typedef struct client_s {
    char ca[400];   /* trust */
    char cert[400]; /* client certificate, or "" */
    char key[400];
} client_t;

static int connect_as(h_conn_t *c, int port, const client_t *who)
{
    adm_tls_client_opts_t o = {.ca_file = who->ca};
    int rc;

    if (who->cert[0] != '\0') {
        o.cert_file = who->cert;
        o.key_file = who->key;
    }
    rc = h_connect_tls(c, port, &o, "localhost");
    if (rc != 0) {
        h_close(c); /* what the failed handshake had set up */
    }
    return rc;
}

/* Sends body to path on c; returns the HTTP status (-1: no answer) and fills *allowed / message. */
static int post(h_conn_t *c, const char *path, const char *body, bool *allowed, char *message, size_t len)
{
    size_t n;
    char *req = h_request("POST", path, "application/json", body, strlen(body), &n);
    h_response_t r = {0};
    int status = -1;

    if (h_send(c, req, n) == 0 && h_read(c, &r, 10000, NULL) == 0) {
        const char *text = r.body.data != NULL ? (const char *)r.body.data : "";

        status = r.status;
        *allowed = strstr(text, "\"allowed\":true") != NULL;
        if (message != NULL) {
            snprintf(message, len, "%.*s", (int)r.body.len, text);
        }
    }
    h_response_free(&r);
    free(req);
    return status;
}

/* One request on a fresh connection as who: the status, or -1 when no connection or answer. */
static int post_once(int port, const client_t *who, const char *path, const char *body, bool *allowed,
                     char *message, size_t len)
{
    h_conn_t c;
    int status;

    if (connect_as(&c, port, who) != 0) {
        return -1;
    }
    status = post(&c, path, body, allowed, message, len);
    h_close(&c);
    return status;
}

/* The value of admitd_config_reloads_total{result=...}, read from /metrics. */
static long reloads(int port, const client_t *who, const char *result)
{
    char series[128];
    h_conn_t c;
    long value = -1;

    snprintf(series, sizeof(series), "admitd_config_reloads_total{result=\"%s\"}", result);
    if (connect_as(&c, port, who) == 0) {
        value = h_metric_value(&c, series);
        h_close(&c);
    }
    return value;
}

/* The mockhook's open server connections (its admitd_connections gauge), -1 when unreadable. */
static long mock_connections(void)
{
    h_conn_t c;
    long value = -1;

    if (h_connect_to(&c, &mock) == 0) {
        value = h_metric_value(&c, "admitd_connections{side=\"server\"}");
    }
    h_close(&c);
    return value;
}

/*
 * Waits until a new connection as who is answered 200: the reload that the log announced may be
 * followed by one more from the same burst of changes.
 */
static void wait_served(h_server_t *s, const client_t *who)
{
    char *body = h_review("probe");
    long long deadline = h_now_ms() + 15000;
    bool allowed = false;
    int status = -1;

    while (status != 200 && h_now_ms() < deadline) {
        status = post_once(s->port, who, "/validate", body, &allowed, NULL, 0);
        if (status != 200) {
            usleep(20000);
        }
    }
    free(body);
    if (status != 200) {
        h_dump_log(s);
        fail_msg("no answer as %s after the reload", who->ca);
    }
}

/* ---- set-up ------------------------------------------------------------------------------------ */

/* Writes the certificates of CAs first and second into one file, name, in dir. */
static void write_bundle(const char *name, const char *first, const char *second)
{
    char *a = h_pem(dir, first, "crt"), *b = h_pem(dir, second, "crt");
    adm_buf_t both = ADM_BUF_INIT;
    char path[400];

    adm_buf_appendf(&both, "%s%s", a, b);
    adm_buf_append(&both, "", 1);
    h_path(path, sizeof(path), dir, name);
    h_write_file(path, (const char *)both.data);
    adm_buf_free(&both);
    free(a);
    free(b);
}

static int setup(void **state)
{
    const char *mock_args[] = {"--route", "/deny=deny:reloaded config says no", NULL};

    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0 ||
        h_make_rotation_certs(dir, "server CA", "kube-apiserver") != 0) {
        return -1;
    }
    /* trust bundles of both server CAs (clients that must get through every swap) and both client CAs */
    write_bundle("caS-both.crt.pem", "caS1", "caS2");
    write_bundle("caC-both.crt.pem", "caC1", "caC2");
    if (h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, mock_args) != 0) {
        return -1;
    }
    h_file_b64(mock.ca, mock_ca_b64, sizeof(mock_ca_b64));
    return 0;
}

static int teardown(void **state)
{
    h_stop(&mock, SIGTERM, 10000);
    h_cleanup(&mock);
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

static void client(client_t *c, const char *trust, const char *name)
{
    snprintf(c->ca, sizeof(c->ca), "%s/%s.crt.pem", dir, trust);
    c->cert[0] = c->key[0] = '\0';
    if (name != NULL) {
        snprintf(c->cert, sizeof(c->cert), "%s/%s.crt.pem", dir, name);
        snprintf(c->key, sizeof(c->key), "%s/%s.key.pem", dir, name);
    }
}

static void tls_mount(const char *mount, const char *server, const char *client_ca)
{
    char *crt = h_pem(dir, server, "crt"), *key = h_pem(dir, server, "key"),
         *ca = h_pem(dir, client_ca, "crt");
    h_mount_file_t files[] = {{"tls.crt", crt}, {"tls.key", key}, {"ca.crt", ca}};

    h_publish(mount, files, 3);
    free(crt);
    free(key);
    free(ca);
}

/* ---- tests ------------------------------------------------------------------------------------- */

/*
 * The certificate and key in a kubelet-style Secret mount: each ..data swap reloads, new
 * handshakes get the new certificate, and a connection opened before keeps working.
 */
static void test_certificate_kubelet_swap(void **state)
{
    char mount[320], crt[400], key[400];
    const char *args[] = {
        "--tls-cert-file", crt, "--tls-private-key-file", key, "--shutdown-delay", "0s", NULL};
    client_t trust1, trust2, both;
    h_server_t s;
    h_conn_t old;
    bool allowed;
    char *body = h_review("cert");

    h_path(mount, sizeof(mount), dir, "secret-cert");
    snprintf(crt, sizeof(crt), "%s/tls.crt", mount);
    snprintf(key, sizeof(key), "%s/tls.key", mount);
    client(&trust1, "caS1", NULL);
    client(&trust2, "caS2", NULL);
    client(&both, "caS-both", NULL);
    tls_mount(mount, "server1", "caC1");
    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_int_equal(connect_as(&old, s.port, &trust1), 0);
    assert_int_equal(post(&old, "/validate", body, &allowed, NULL, 0), 200);
    assert_int_equal(post_once(s.port, &trust2, "/validate", body, &allowed, NULL, 0), -1);

    for (int round = 1; round <= 3; round++) {
        const client_t *now = round % 2 == 1 ? &trust2 : &trust1;
        const client_t *before = round % 2 == 1 ? &trust1 : &trust2;

        tls_mount(mount, round % 2 == 1 ? "server2" : "server1", "caC1");
        h_expect_log(&s, "configuration reloaded", round, 15000);
        wait_served(&s, now);
        assert_int_equal(post_once(s.port, before, "/validate", body, &allowed, NULL, 0), -1);
        /* the connection from before the first swap still has its session */
        assert_int_equal(post(&old, "/validate", body, &allowed, NULL, 0), 200);
    }
    /* a burst of kubelet's renames may be seen as two, never as none */
    assert_true(reloads(s.port, &both, "success") >= 3);
    assert_true(h_log_count(&s, "reloading the configuration (change in ") >= 3);
    h_close(&old);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(body);
}

/* The client CA, rewritten in place and reloaded by SIGHUP: a client of the new CA gets in. */
static void test_client_ca_sighup(void **state)
{
    char ca[400], crt[400], key[400];
    const char *args[] = {"--tls-cert-file",
                          crt,
                          "--tls-private-key-file",
                          key,
                          "--client-ca-file",
                          ca,
                          "--shutdown-delay",
                          "0s",
                          NULL};
    client_t c1, c2;
    h_server_t s;
    bool allowed;
    char *body = h_review("ca");
    char *ca2 = h_pem(dir, "caC2", "crt");
    int before;

    h_path(ca, sizeof(ca), dir, "client-ca.pem");
    h_path(crt, sizeof(crt), dir, "server1.crt.pem");
    h_path(key, sizeof(key), dir, "server1.key.pem");
    {
        char *ca1 = h_pem(dir, "caC1", "crt");

        h_write_file(ca, ca1);
        free(ca1);
    }
    client(&c1, "caS1", "client1");
    client(&c2, "caS1", "client2");
    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_true(h_log_wait(&s, " ready\n", 1, 10000));
    assert_int_equal(post_once(s.port, &c1, "/validate", body, &allowed, NULL, 0), 200);
    assert_int_equal(post_once(s.port, &c2, "/validate", body, &allowed, NULL, 0), 401);

    before = h_log_count(&s, "configuration reloaded");
    h_write_file(ca, ca2); /* in place: the watch may reload too, SIGHUP does at once */
    assert_int_equal(kill(s.pid, SIGHUP), 0);
    h_expect_log(&s, "reloading the configuration (SIGHUP)", 1, 15000);
    h_expect_log(&s, "configuration reloaded", before + 1, 15000);
    assert_int_equal(post_once(s.port, &c2, "/validate", body, &allowed, NULL, 0), 200);
    assert_true(allowed);
    assert_int_equal(post_once(s.port, &c1, "/validate", body, &allowed, NULL, 0), 401);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(body);
    free(ca2);
}

/*
 * Webhook configurations in a folder and cluster state in a kubelet-style ConfigMap mount: a label
 * change brings a namespace under a webhook's namespaceSelector, a webhook configuration
 * rewritten in place changes where it posts, and a new file in the folder adds a webhook.
 */
static void test_webhooks_and_cluster_state(void **state)
{
    char hooks_dir[320], hooks[400], extra[400], mount[320], cluster[400];
    const char *args[] = {
        "--webhook-config", hooks_dir, "--cluster-state", cluster, "--shutdown-delay", "0s", NULL};
    h_mount_file_t ns = {"namespaces.yaml", NULL};
    h_server_t s;
    bool allowed;
    char message[4096];
    char *body = pod_review("hooks", "web");

    h_path(hooks_dir, sizeof(hooks_dir), dir, "hooks");
    h_path(mount, sizeof(mount), dir, "cluster-mount");
    snprintf(hooks, sizeof(hooks), "%s/a.yaml", hooks_dir);
    snprintf(extra, sizeof(extra), "%s/b.yaml", hooks_dir);
    snprintf(cluster, sizeof(cluster), "%s/namespaces.yaml", mount);
    assert_int_equal(mkdir(hooks_dir, 0700), 0);
    h_write_file(hooks, hooks_yaml("deny.example.com", "/deny"));
    ns.text = namespace_yaml("dev", 0);
    h_publish(mount, &ns, 1);
    assert_int_equal(h_start(&s, NULL, args), 0);
    {
        h_conn_t c;

        assert_int_equal(h_connect_to(&c, &s), 0);
        assert_int_equal(post(&c, "/validate", body, &allowed, message, sizeof(message)), 200);
        assert_true(allowed); /* env=dev: the webhook's selector does not match */

        ns.text = namespace_yaml("prod", 1);
        h_publish(mount, &ns, 1);
        h_expect_log(&s, "configuration reloaded", 1, 15000);
        assert_int_equal(post(&c, "/validate", body, &allowed, message, sizeof(message)), 200);
        assert_false(allowed);
        assert_non_null(strstr(message, "reloaded config says no"));

        h_write_file(hooks, hooks_yaml("deny.example.com", "/allow")); /* in place */
        h_expect_log(&s, "configuration reloaded", 2, 15000);
        assert_int_equal(post(&c, "/validate", body, &allowed, message, sizeof(message)), 200);
        assert_true(allowed);

        h_replace_file(extra, hooks_yaml("second.example.com", "/deny")); /* a new file in the folder */
        h_expect_log(&s, "configuration reloaded", 3, 15000);
        h_expect_log(&s, "downstream webhooks: 0 mutating, 2 validating", 1, 15000);
        assert_int_equal(post(&c, "/validate", body, &allowed, message, sizeof(message)), 200);
        assert_false(allowed);
        h_close(&c);
    }
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(body);
}

/* The AdmissionConfiguration's path: file: EventRateLimit's burst raised by a rewrite. */
static void test_admission_config_path_file(void **state)
{
    char config[400], limits[400];
    const char *args[] = {"--enable-admission-plugins",
                          "EventRateLimit",
                          "--admission-control-config-file",
                          config,
                          "--shutdown-delay",
                          "0s",
                          NULL};
    h_server_t s;
    h_conn_t c;
    bool allowed;
    int limited = 0;
    char *body = event_review("event");

    h_path(config, sizeof(config), dir, "admission.yaml");
    h_path(limits, sizeof(limits), dir, "limits.yaml");
    h_write_file(config, admission_yaml);
    h_write_file(limits, limits_yaml(1));
    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_int_equal(h_connect_to(&c, &s), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(post(&c, "/validate", body, &allowed, NULL, 0), 200);
        limited += !allowed;
    }
    assert_true(limited >= 1); /* burst 1 at 1 qps: three at once cannot all pass */

    h_replace_file(limits, limits_yaml(1000));
    h_expect_log(&s, "configuration reloaded", 1, 15000);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(post(&c, "/validate", body, &allowed, NULL, 0), 200);
        assert_true(allowed);
    }
    h_close(&c);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(body);
}

/*
 * A reload that fails validation (a webhook file with an unknown field, then a key that does not
 * match the certificate) keeps what runs, logs the file and field, and counts a failure; fixing
 * the file reloads.
 */
static void test_failed_reload_keeps_config(void **state)
{
    char hooks[400], crt[400], key[400];
    const char *args[] = {"--webhook-config",
                          hooks,
                          "--tls-cert-file",
                          crt,
                          "--tls-private-key-file",
                          key,
                          "--cluster-state",
                          h_fixture_path("cluster-state.yaml"),
                          "--shutdown-delay",
                          "0s",
                          NULL};
    client_t trust1;
    h_server_t s;
    bool allowed;
    char message[4096];
    char *body = pod_review("fail", "default");
    char *good_key, *other_key;

    h_path(hooks, sizeof(hooks), dir, "failing-hooks.yaml");
    h_path(crt, sizeof(crt), dir, "failing.crt.pem");
    h_path(key, sizeof(key), dir, "failing.key.pem");
    good_key = h_pem(dir, "server1", "key");
    other_key = h_pem(dir, "server2", "key");
    {
        char *c = h_pem(dir, "server1", "crt");

        h_write_file(crt, c);
        free(c);
    }
    h_write_file(key, good_key);
    h_write_file(hooks, hooks_yaml("deny.example.com", "/deny"));
    client(&trust1, "caS1", NULL);
    assert_int_equal(h_start(&s, NULL, args), 0);

    h_replace_file(hooks,
                   "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
                   "metadata: {name: broken}\nwebhooks:\n- name: x.example.com\n  typo: 1\n");
    h_expect_log(&s, "reload failed, the running configuration stays", 1, 15000);
    h_expect_log(&s, "failing-hooks.yaml", 1, 15000);
    assert_true(h_log_count(&s, "typo") >= 1);
    assert_int_equal(reloads(s.port, &trust1, "failure"), 1);
    assert_int_equal(reloads(s.port, &trust1, "success"), 0);
    /* the webhook of the running configuration still answers (default has no env=prod: allowed) */
    assert_int_equal(post_once(s.port, &trust1, "/validate", body, &allowed, message, sizeof(message)), 200);
    assert_true(allowed);

    h_replace_file(key, other_key);
    h_expect_log(&s, "reload failed, the running configuration stays", 2, 15000);
    h_expect_log(&s, "key does not match the certificate", 1, 15000);
    assert_int_equal(post_once(s.port, &trust1, "/validate", body, &allowed, NULL, 0), 200);

    h_replace_file(key, good_key);
    h_replace_file(hooks, hooks_yaml("deny.example.com", "/allow"));
    h_expect_log(&s, "configuration reloaded", 1, 15000);
    assert_true(reloads(s.port, &trust1, "failure") >= 2);
    assert_int_equal(post_once(s.port, &trust1, "/validate", body, &allowed, NULL, 0), 200);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(body);
    free(good_key);
    free(other_key);
}

/* ---- reload under load ---------------------------------------------------------------------- */

#define LOAD_THREADS 4
#define RELOADS 100
#define WARMUP 20

typedef struct load_s {
    int port;
    client_t who;
    bool fresh_connections; /* a new connection (and handshake) per request */
    atomic_bool *stop;
    atomic_long answered;
    atomic_long errors;
    char first_error[512];
} load_t;

static void *load_loop(void *arg)
{
    load_t *l = arg;
    h_conn_t c;
    bool connected = false;
    char uid[64], message[2048];
    long n = 0;

    while (!atomic_load(l->stop)) {
        bool allowed = false;
        char *body;
        int status;

        if (!connected) {
            if (connect_as(&c, l->port, &l->who) != 0) {
                if (atomic_fetch_add(&l->errors, 1) == 0) {
                    snprintf(l->first_error, sizeof(l->first_error), "connect/handshake failed");
                }
                continue;
            }
            connected = true;
        }
        snprintf(uid, sizeof(uid), "load-%p-%ld", (void *)l, n++);
        body = pod_review(uid, "web");
        status = post(&c, "/validate", body, &allowed, message, sizeof(message));
        free(body);
        if (status != 200 || !allowed || strstr(message, uid) == NULL) {
            if (atomic_fetch_add(&l->errors, 1) == 0) {
                snprintf(l->first_error, sizeof(l->first_error), "status %d: %.400s", status, message);
            }
            h_close(&c);
            connected = false;
            continue;
        }
        atomic_fetch_add(&l->answered, 1);
        if (l->fresh_connections) {
            h_close(&c);
            connected = false;
        }
    }
    if (connected) {
        h_close(&c);
    }
    return NULL;
}

static void config_mount(const char *mount, int i)
{
    h_mount_file_t files[] = {{"hooks.yaml", NULL},
                              {"namespaces.yaml", NULL},
                              {"admission.yaml", admission_yaml},
                              {"limits.yaml", NULL}};
    char name[64];
    char *hooks;

    snprintf(name, sizeof(name), "hook-%d.example.com", i % 2);
    hooks = strdup(hooks_yaml(name, "/allow"));
    files[0].text = hooks;
    files[1].text = namespace_yaml("prod", i);
    files[3].text = limits_yaml(1000 + i);
    h_publish(mount, files, 4);
    free(hooks);
}

static void test_reload_under_load(void **state)
{
    char tls[320], conf[320], crt[400], key[400], ca[400], hooks[400], cluster[400], admission[400];
    const char *args[] = {"--tls-cert-file",
                          crt,
                          "--tls-private-key-file",
                          key,
                          "--client-ca-file",
                          ca,
                          "--webhook-config",
                          hooks,
                          "--cluster-state",
                          cluster,
                          "--enable-admission-plugins",
                          "EventRateLimit",
                          "--admission-control-config-file",
                          admission,
                          "--shutdown-delay",
                          "0s",
                          NULL};
    atomic_bool stop = false;
    load_t loads[LOAD_THREADS + 1];
    pthread_t threads[LOAD_THREADS + 1];
    client_t metrics_client;
    h_server_t s;
    long rss_warm = 0, rss_end, answered_before = 0, answered_after = 0, errors = 0;
    int reloaded = 0;

    h_path(tls, sizeof(tls), dir, "load-tls");
    h_path(conf, sizeof(conf), dir, "load-config");
    snprintf(crt, sizeof(crt), "%s/tls.crt", tls);
    snprintf(key, sizeof(key), "%s/tls.key", tls);
    snprintf(ca, sizeof(ca), "%s/ca.crt", tls);
    snprintf(hooks, sizeof(hooks), "%s/hooks.yaml", conf);
    snprintf(cluster, sizeof(cluster), "%s/namespaces.yaml", conf);
    snprintf(admission, sizeof(admission), "%s/admission.yaml", conf);
    tls_mount(tls, "server1", "caC1");
    config_mount(conf, 0);
#if H_UNDER_ASAN
    {
        /* a quarantine of 256 MiB (the default) would hide a flat RSS: admitd gets 16 MiB */
        const char *old = getenv("ASAN_OPTIONS");
        char opts[1024];

        snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=16", old != NULL ? old : "",
                 old != NULL && old[0] != '\0' ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
    }
#endif
    assert_int_equal(h_start(&s, NULL, args), 0);
    client(&metrics_client, "caS-both", "client1");

    for (int i = 0; i <= LOAD_THREADS; i++) {
        memset(&loads[i], 0, sizeof(loads[i]));
        loads[i].port = s.port;
        client(&loads[i].who, "caS-both", "client1");
        loads[i].fresh_connections = i == LOAD_THREADS;
        loads[i].stop = &stop;
        assert_int_equal(pthread_create(&threads[i], NULL, load_loop, &loads[i]), 0);
    }
    for (int i = 1; i <= RELOADS; i++) {
        long seen;
        long deadline = h_now_ms() + 15000;

        /* server certificates from alternating CAs; the client CA alternates between two bundles */
        tls_mount(tls, i % 2 == 1 ? "server2" : "server1", i % 2 == 1 ? "caC-both" : "caC1");
        config_mount(conf, i);
        if (i % 10 == 0) {
            assert_int_equal(kill(s.pid, SIGHUP), 0);
        }
        /* every swap is reloaded before the next (a burst may give more than one reload) */
        do {
            seen = h_log_count(&s, "configuration reloaded");
            if (seen > reloaded) {
                break;
            }
            usleep(10000);
        } while (h_now_ms() < deadline);
        assert_true(seen > reloaded);
        reloaded = (int)seen;
        if (i == WARMUP) {
            rss_warm = h_rss_kib(s.pid);
            assert_true(rss_warm > 0);
            for (int t = 0; t <= LOAD_THREADS; t++) {
                answered_before += atomic_load(&loads[t].answered);
            }
        }
    }
    rss_end = h_rss_kib(s.pid);
    assert_true(rss_end > 0);
    atomic_store(&stop, true);
    for (int i = 0; i <= LOAD_THREADS; i++) {
        pthread_join(threads[i], NULL);
        answered_after += atomic_load(&loads[i].answered);
        errors += atomic_load(&loads[i].errors);
        if (atomic_load(&loads[i].errors) > 0) {
            print_message("load thread %d: %ld errors, first: %s\n", i, atomic_load(&loads[i].errors),
                          loads[i].first_error);
        }
    }
    print_message("reload under load: %d reloads, %ld requests answered (%ld after warm-up), %ld errors; "
                  "RSS %ld KiB after %d swaps, %ld KiB after %d\n",
                  reloaded, answered_after, answered_after - answered_before, errors, rss_warm, WARMUP,
                  rss_end, RELOADS);
    assert_int_equal(errors, 0);
    assert_true(answered_after - answered_before > RELOADS);
    assert_int_equal(reloads(s.port, &metrics_client, "failure"), 0);
    assert_true(reloads(s.port, &metrics_client, "success") >= RELOADS);
    assert_int_equal(h_log_count(&s, "reload failed"), 0);
    /*
     * The webhooks of the 100 replaced configurations drained: their pools closed their idle
     * connections, so the mockhook holds about what the running configuration's pool uses (one
     * per load thread at most) and this query's own, not a pool's worth per reload.
     */
    {
        long open = mock_connections();

        print_message("mockhook connections open after the reloads: %ld\n", open);
        assert_true(open >= 1 && open <= LOAD_THREADS + 2);
    }
    /* flat: 80 more swaps may not grow the resident set by more than a few MiB (sanitizers keep
       freed memory in quarantine, so their bound is looser) */
#if H_UNDER_ASAN
    assert_true(rss_end - rss_warm < 64 * 1024);
#else
    assert_true(rss_end - rss_warm < 4 * 1024);
#endif
    assert_int_equal(h_stop(&s, SIGTERM, 20000), 0);
    h_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_certificate_kubelet_swap),   cmocka_unit_test(test_client_ca_sighup),
        cmocka_unit_test(test_webhooks_and_cluster_state), cmocka_unit_test(test_admission_config_path_file),
        cmocka_unit_test(test_failed_reload_keeps_config), cmocka_unit_test(test_reload_under_load),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

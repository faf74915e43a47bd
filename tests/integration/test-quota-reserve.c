/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota with an API connection (admitd --kubeconfig against adm-fake-apiserver, which
 * holds the quotas and takes their status PUTs with kube's resourceVersion checks): a pod create
 * reserves its usage by a PUT of the quota's status with the resourceVersion read and the new
 * status.used; a dry run writes nothing; a write that conflicts (the informer cache is held back
 * while the quota changes) reads the quota again live and succeeds, or, when the quota is now
 * full, is refused with kube's exceeded message; conflicts that persist past kube's 3 retries are
 * kube's 409 Conflict; two concurrent creates against room for one admit exactly one, with one
 * write; three that fit are all admitted and all counted.
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
#include <yyjson.h>

#include "adm/base/arena.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t api, server;
static char dir[256], kubeconfig[320];

/* The namespaces of the tests, each with a quota "compute" of its own, made before admitd starts. */
static const struct {
    const char *ns, *hard;
} quotas[] = {
    {"reserve", "{\"pods\":\"2\",\"requests.cpu\":\"1\"}"},
    {"dry", "{\"pods\":\"2\"}"},
    {"conflict", "{\"pods\":\"2\"}"},
    {"reread", "{\"pods\":\"1\"}"},
    {"persist", "{\"pods\":\"2\"}"},
    {"race", "{\"pods\":\"1\"}"},
    {"batch", "{\"pods\":\"3\"}"},
    {"leave", "{\"pods\":\"3\"}"},
    {"drain", "{\"pods\":\"3\"}"},
    {"reload", "{\"pods\":\"3\"}"},
};

/* Puts the quota "compute" of ns on the API server: hard, used; returns its new resourceVersion. */
static long put_quota(const char *ns, const char *hard, const char *used, const char *label)
{
    char cmd[1024], out[256];
    const char *at;

    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"resourcequotas\",\"object\":{\"metadata\":{\"name\":\"compute\","
             "\"namespace\":\"%s\",\"labels\":{\"l\":\"%s\"}},\"spec\":{\"hard\":%s},\"status\":{\"hard\":%s,"
             "\"used\":%s}}}",
             ns, label, hard, hard, used);
    assert_int_equal(h_api_call(&api, "POST", "/_control", cmd, out, sizeof(out)), 200);
    at = strstr(out, "\"resourceVersion\":\"");
    assert_non_null(at);
    return strtol(at + strlen("\"resourceVersion\":\""), NULL, 10);
}

/* The quota "compute" of ns as the API server holds it. */
static yyjson_doc *get_quota(const char *ns)
{
    char path[256], out[4096];
    yyjson_doc *d;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/resourcequotas/compute", ns);
    assert_int_equal(h_api_call(&api, "GET", path, NULL, out, sizeof(out)), 200);
    d = yyjson_read(out, strlen(out), 0);
    assert_non_null(d);
    return d;
}

/* The resourceVersion of ns's quota on the API server. */
static long server_rv(const char *ns)
{
    yyjson_doc *d = get_quota(ns);
    long rv = strtol(
        yyjson_get_str(yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "metadata"), "resourceVersion")),
        NULL, 10);

    yyjson_doc_free(d);
    return rv;
}

/* status.used[name] of ns's quota on the API server ("" when absent). */
static void server_used(const char *ns, const char *name, char *out, size_t out_len)
{
    yyjson_doc *d = get_quota(ns);
    yyjson_val *used = yyjson_obj_getn(
        yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "status"), "used"), name, strlen(name));

    snprintf(out, out_len, "%s", yyjson_is_str(used) ? yyjson_get_str(used) : "");
    yyjson_doc_free(d);
}

/* The status PUTs the API server received for ns's quota, in order (caller frees). */
static yyjson_doc *puts_of(const char *ns, size_t *n)
{
    static char out[1 << 20];
    char path[256];
    yyjson_doc *all, *mine;
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *arr = yyjson_mut_arr(m);
    yyjson_arr_iter it;
    yyjson_val *p;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/resourcequotas/compute/status", ns);
    assert_int_equal(h_api_call(&api, "GET", "/_control/puts", NULL, out, sizeof(out)), 200);
    all = yyjson_read(out, strlen(out), 0);
    assert_non_null(all);
    yyjson_arr_iter_init(yyjson_doc_get_root(all), &it);
    for (p = yyjson_arr_iter_next(&it); p != NULL; p = yyjson_arr_iter_next(&it)) {
        if (strcmp(yyjson_get_str(yyjson_obj_get(p, "path")), path) == 0) {
            yyjson_mut_arr_append(arr, yyjson_val_mut_copy(m, p));
        }
    }
    yyjson_mut_doc_set_root(m, arr);
    mine = yyjson_mut_doc_imut_copy(m, NULL);
    *n = yyjson_arr_size(yyjson_doc_get_root(mine));
    yyjson_mut_doc_free(m);
    yyjson_doc_free(all);
    return mine;
}

/* The review of a pod "name" created in ns asking for cpu, as a request to path. */
static char *pod_request_to(const char *path, const char *ns, const char *name, const char *cpu, bool dry_run,
                            size_t *len)
{
    adm_arena_t *a = adm_arena_create(4096);
    char pod[512];
    pt_request_t pr = {.operation = "CREATE",
                       .resource = "pods",
                       .kind = "Pod",
                       .namespace_ = ns,
                       .name = name,
                       .object = pod,
                       .dry_run = dry_run};
    const char *body;
    char *req;

    snprintf(pod, sizeof(pod),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%s\"},\"limits\":{\"cpu\":\"%s\"}}}]}}",
             name, ns, cpu, cpu);
    body = pt_review_json(a, &pr);
    req = h_request("POST", path, "application/json", body, strlen(body), len);
    adm_arena_destroy(a);
    return req;
}

/* The same to /admit. */
static char *pod_request(const char *ns, const char *name, const char *cpu, bool dry_run, size_t *len)
{
    return pod_request_to("/admit", ns, name, cpu, dry_run, len);
}

/* Reads one /admit answer from c and returns its response object's JSON (caller frees the doc). */
static yyjson_doc *read_answer(h_conn_t *c)
{
    h_response_t r = {0};
    yyjson_doc *d;

    assert_int_equal(h_read(c, &r, 15000, NULL), 0);
    assert_int_equal(r.status, 200);
    d = yyjson_read((const char *)r.body.data, r.body.len, 0);
    assert_non_null(d);
    h_response_free(&r);
    return d;
}

static yyjson_val *response_of(yyjson_doc *d)
{
    return yyjson_obj_get(yyjson_doc_get_root(d), "response");
}

/* One pod create through /admit; the answer (caller frees). */
static yyjson_doc *admit_pod(const char *ns, const char *name, const char *cpu, bool dry_run)
{
    h_conn_t c;
    size_t len;
    char *req = pod_request(ns, name, cpu, dry_run, &len);
    yyjson_doc *d;

    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    d = read_answer(&c);
    h_close(&c);
    free(req);
    return d;
}

static bool allowed(yyjson_doc *d)
{
    return yyjson_get_bool(yyjson_obj_get(response_of(d), "allowed"));
}

static const char *message(yyjson_doc *d)
{
    const char *m = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(response_of(d), "status"), "message"));

    return m != NULL ? m : "";
}

static long code(yyjson_doc *d)
{
    return (long)yyjson_get_int(yyjson_obj_get(yyjson_obj_get(response_of(d), "status"), "code"));
}

static int setup(void **state)
{
    const char *fake_args[] = {"--insecure-http", NULL};
    /* LimitRanger's live LIST (no LimitRange in these namespaces) would count among the LISTs checked */
    const char *args[] = {"--kubeconfig",
                          kubeconfig,
                          "--health-listen",
                          "127.0.0.1:0",
                          "--disable-admission-plugins",
                          "ServiceAccount,LimitRanger",
                          NULL};

    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return 1;
    }
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    if (h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, fake_args) != 0) {
        return 1;
    }
    h_write_kubeconfig(kubeconfig, api.port, "{}");
    for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++) {
        h_api_put_namespace(&api, quotas[i].ns, "Active");
        put_quota(quotas[i].ns, quotas[i].hard,
                  strstr(quotas[i].hard, "cpu") != NULL ? "{\"pods\":\"0\",\"requests.cpu\":\"0\"}"
                                                        : "{\"pods\":\"0\"}",
                  "a");
    }
    if (h_start(&server, NULL, args) != 0 || !h_wait_ready(&server, 15000)) {
        return 1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    h_stop(&server, SIGTERM, 10000);
    h_cleanup(&server);
    return h_api_cleanup(&api, dir);
}

/* A pod create reserves its usage: one PUT with the resourceVersion read and the new status.used. */
static void test_reserves(void **state)
{
    yyjson_doc *d, *log;
    yyjson_val *p;
    size_t n;
    char used[64], *text;
    long rv;

    (void)state;
    rv = server_rv("reserve");
    d = admit_pod("reserve", "p1", "200m", false);
    assert_true(allowed(d));
    yyjson_doc_free(d);
    log = puts_of("reserve", &n);
    assert_int_equal(n, 1);
    p = yyjson_arr_get(yyjson_doc_get_root(log), 0);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(p, "code")), 200);
    assert_int_equal(strtol(yyjson_get_str(yyjson_obj_get(p, "resourceVersion")), NULL, 10), rv);
    text = yyjson_val_write(yyjson_obj_get(p, "used"), 0, NULL);
    pt_assert_json_equal(text, "{\"pods\":\"1\",\"requests.cpu\":\"200m\"}", __FILE__, __LINE__);
    free(text);
    yyjson_doc_free(log);
    server_used("reserve", "requests.cpu", used, sizeof(used));
    assert_string_equal(used, "200m");

    /* the next one starts from what the first wrote (admitd's own write, or the watch's event) */
    d = admit_pod("reserve", "p2", "700m", false);
    assert_true(allowed(d));
    yyjson_doc_free(d);
    server_used("reserve", "requests.cpu", used, sizeof(used));
    assert_string_equal(used, "900m");
    server_used("reserve", "pods", used, sizeof(used));
    assert_string_equal(used, "2");
    log = puts_of("reserve", &n);
    assert_int_equal(n, 2);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(yyjson_arr_get(yyjson_doc_get_root(log), 1), "code")),
                     200);
    yyjson_doc_free(log);

    /* and the quota is now full: refused with kube's message, nothing written */
    d = admit_pod("reserve", "p3", "200m", false);
    assert_false(allowed(d));
    assert_int_equal(code(d), 403);
    assert_string_equal(message(d), "pods \"p3\" is forbidden: exceeded quota: compute, requested: "
                                    "pods=1,requests.cpu=200m, used: pods=2,requests.cpu=900m, limited: "
                                    "pods=2,requests.cpu=1");
    yyjson_doc_free(d);
    log = puts_of("reserve", &n);
    assert_int_equal(n, 2);
    yyjson_doc_free(log);
}

/* A dry run is checked but writes nothing. */
static void test_dry_run(void **state)
{
    yyjson_doc *d, *log;
    size_t n;
    long puts = h_api_stat(&api, "puts");

    (void)state;
    d = admit_pod("dry", "p", "100m", true);
    assert_true(allowed(d));
    yyjson_doc_free(d);
    assert_int_equal(h_api_stat(&api, "puts"), puts);
    log = puts_of("dry", &n);
    assert_int_equal(n, 0);
    yyjson_doc_free(log);
}

/*
 * The informer cache is held back while the quota changes on the API server: the write with the
 * old resourceVersion conflicts, the quota is read again live, and the write with the new one
 * succeeds.
 */
static void test_conflict_retried(void **state)
{
    yyjson_doc *d, *log;
    yyjson_val *first, *second;
    long lists = h_api_stat(&api, "lists"), old_rv, new_rv;
    size_t n;
    char used[64];

    (void)state;
    old_rv = server_rv("conflict");
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":600000}");
    new_rv = put_quota("conflict", "{\"pods\":\"2\"}", "{\"pods\":\"0\"}", "b");
    d = admit_pod("conflict", "p", "100m", false);
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":0}");
    assert_true(allowed(d));
    yyjson_doc_free(d);
    log = puts_of("conflict", &n);
    assert_int_equal(n, 2);
    first = yyjson_arr_get(yyjson_doc_get_root(log), 0);
    second = yyjson_arr_get(yyjson_doc_get_root(log), 1);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(first, "code")), 409);
    assert_int_equal(strtol(yyjson_get_str(yyjson_obj_get(first, "resourceVersion")), NULL, 10), old_rv);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(second, "code")), 200);
    assert_int_equal(strtol(yyjson_get_str(yyjson_obj_get(second, "resourceVersion")), NULL, 10), new_rv);
    yyjson_doc_free(log);
    assert_int_equal(h_api_stat(&api, "lists"), lists + 1); /* the live re-read */
    server_used("conflict", "pods", used, sizeof(used));
    assert_string_equal(used, "1");
}

/* The quota filled up meanwhile: after the conflict, the re-read quota refuses the pod. */
static void test_exceeded_after_reread(void **state)
{
    yyjson_doc *d, *log;
    size_t n;

    (void)state;
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":600000}");
    put_quota("reread", "{\"pods\":\"1\"}", "{\"pods\":\"1\"}", "b");
    d = admit_pod("reread", "p", "100m", false);
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":0}");
    assert_false(allowed(d));
    assert_int_equal(code(d), 403);
    assert_string_equal(message(d), "pods \"p\" is forbidden: exceeded quota: compute, requested: pods=1, "
                                    "used: pods=1, limited: pods=1");
    yyjson_doc_free(d);
    log = puts_of("reread", &n);
    assert_int_equal(n, 1);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(yyjson_arr_get(yyjson_doc_get_root(log), 0), "code")),
                     409);
    yyjson_doc_free(log);
}

/* Every write conflicts: 1 + 3 retries, then kube's 409 Conflict as the API server worded it. */
static void test_conflict_persists(void **state)
{
    yyjson_doc *d, *log;
    yyjson_val *details;
    long lists = h_api_stat(&api, "lists");
    size_t n;
    char used[64];

    (void)state;
    h_api_control(&api, "{\"op\":\"fail\",\"status\":409,\"count\":100,\"on\":\"put\"}");
    d = admit_pod("persist", "p", "100m", false);
    h_api_control(&api, "{\"op\":\"fail\",\"status\":409,\"count\":0,\"on\":\"put\"}");
    assert_false(allowed(d));
    assert_int_equal(code(d), 409);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_obj_get(response_of(d), "status"), "reason")),
                        "Conflict");
    assert_string_equal(message(d), "Operation cannot be fulfilled on resourcequotas \"compute\": the object "
                                    "has been modified; please apply your changes to the latest version and "
                                    "try again");
    details = yyjson_obj_get(yyjson_obj_get(response_of(d), "status"), "details");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(details, "name")), "compute");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(details, "kind")), "resourcequotas");
    yyjson_doc_free(d);
    log = puts_of("persist", &n);
    assert_int_equal(n, 4);
    yyjson_doc_free(log);
    assert_int_equal(h_api_stat(&api, "lists"), lists + 3);
    server_used("persist", "pods", used, sizeof(used));
    assert_string_equal(used, "0");
}

/*
 * Concurrent creates in one namespace, with the writes held 300 ms by the API server so that they
 * overlap in admitd. Room for one: exactly one is admitted, the other refused from what the first
 * wrote, with one write and no conflict. Room for all three: all admitted, all counted.
 */
static void concurrent(const char *ns, int count, int *nallowed, char *denial, size_t denial_len)
{
    h_conn_t c[3];
    char *req[3];
    size_t len[3];

    *nallowed = 0;
    denial[0] = '\0';
    for (int i = 0; i < count; i++) {
        char name[16];

        snprintf(name, sizeof(name), "p%d", i);
        req[i] = pod_request(ns, name, "100m", false, &len[i]);
        assert_int_equal(h_connect_to(&c[i], &server), 0);
    }
    for (int i = 0; i < count; i++) {
        assert_int_equal(h_send(&c[i], req[i], len[i]), 0);
    }
    for (int i = 0; i < count; i++) {
        yyjson_doc *d = read_answer(&c[i]);

        if (allowed(d)) {
            (*nallowed)++;
        } else {
            snprintf(denial, denial_len, "%s", message(d));
        }
        yyjson_doc_free(d);
        h_close(&c[i]);
        free(req[i]);
    }
}

static void test_concurrent_room_for_one(void **state)
{
    yyjson_doc *log;
    long conflicts = h_api_stat(&api, "conflicts");
    int nallowed;
    size_t n;
    char denial[512], used[64];

    (void)state;
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":300}");
    concurrent("race", 2, &nallowed, denial, sizeof(denial));
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":0}");
    assert_int_equal(nallowed, 1);
    assert_non_null(strstr(denial, "is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, "
                                   "limited: pods=1"));
    log = puts_of("race", &n);
    assert_int_equal(n, 1);
    yyjson_doc_free(log);
    assert_int_equal(h_api_stat(&api, "conflicts"), conflicts);
    server_used("race", "pods", used, sizeof(used));
    assert_string_equal(used, "1");
}

static void test_concurrent_all_fit(void **state)
{
    yyjson_doc *log;
    long conflicts = h_api_stat(&api, "conflicts");
    int nallowed;
    size_t n;
    char denial[512], used[64];

    (void)state;
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":300}");
    concurrent("batch", 3, &nallowed, denial, sizeof(denial));
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":0}");
    assert_int_equal(nallowed, 3);
    log = puts_of("batch", &n);
    /* the first alone, then the two that queued behind it in one write (3 if they came apart) */
    print_message("3 concurrent creates: %zu status writes\n", n);
    assert_true(n >= 2 && n <= 3);
    yyjson_doc_free(log);
    assert_int_equal(h_api_stat(&api, "conflicts"), conflicts);
    server_used("batch", "pods", used, sizeof(used));
    assert_string_equal(used, "3");
}

/*
 * A request that leaves (its client closes the connection) while its write is in flight: the write
 * goes on and stays, as kube's does, and the namespace's next request starts from it.
 */
static void test_request_leaves(void **state)
{
    yyjson_doc *d, *log;
    yyjson_val *second;
    h_conn_t c;
    size_t len, n;
    char *req = pod_request("leave", "gone", "100m", false, &len);
    char *text, used[64];

    (void)state;
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":500}");
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    h_close(&c);
    free(req);
    d = admit_pod("leave", "stays", "100m", false);
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":0}");
    assert_true(allowed(d));
    yyjson_doc_free(d);
    log = puts_of("leave", &n);
    assert_int_equal(n, 2);
    second = yyjson_arr_get(yyjson_doc_get_root(log), 1);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(second, "code")), 200);
    text = yyjson_val_write(yyjson_obj_get(second, "used"), 0, NULL);
    assert_string_equal(text, "{\"pods\":\"2\"}");
    free(text);
    yyjson_doc_free(log);
    server_used("leave", "pods", used, sizeof(used));
    assert_string_equal(used, "2");
}

/*
 * A request whose deadline (kube-apiserver's ?timeout=1s, less admitd's 250 ms margin) comes while
 * its write is held: answered then with kube's timeout, its write going on. A reload meanwhile
 * frees the old chain with that write still out (it is cancelled); the new chain serves on.
 */
static void test_deadline_mid_write(void **state)
{
    yyjson_doc *d;
    h_conn_t c;
    size_t len;
    char *req = pod_request_to("/admit?timeout=1s", "reload", "late", "100m", false, &len);
    int reloads = h_log_count(&server, "configuration reloaded");
    long long t0;

    (void)state;
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":1500}");
    assert_int_equal(h_connect_to(&c, &server), 0);
    t0 = h_now_ms();
    assert_int_equal(h_send(&c, req, len), 0);
    d = read_answer(&c);
    print_message("answered after %lld ms\n", h_now_ms() - t0);
    assert_false(allowed(d));
    assert_int_equal(code(d), 500);
    assert_string_equal(message(d), "Internal error occurred: resource quota evaluation timed out");
    yyjson_doc_free(d);
    h_close(&c);
    free(req);
    kill(server.pid, SIGHUP);
    assert_true(h_log_wait(&server, "configuration reloaded", reloads + 1, 10000));
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":0}");
    d = admit_pod("reload", "after", "100m", false);
    assert_true(allowed(d));
    yyjson_doc_free(d);
}

/* SIGTERM while a write is in flight: the drain waits for it, the pod is admitted, admitd exits 0. */
static void test_drain_mid_write(void **state)
{
    yyjson_doc *d;
    h_conn_t c;
    size_t len;
    char *req = pod_request("drain", "p", "100m", false, &len);
    long puts = h_api_stat(&api, "puts");
    char used[64];

    (void)state;
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":1000}");
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    h_api_wait_stat_above(&api, "puts", puts, 10000); /* until the write is held by the API server */
    assert_int_equal(h_api_stat(&api, "puts"), puts + 1);
    kill(server.pid, SIGTERM);
    d = read_answer(&c);
    assert_true(allowed(d));
    yyjson_doc_free(d);
    h_close(&c);
    free(req);
    assert_int_equal(h_stop(&server, 0, 15000), 0);
    h_api_control(&api, "{\"op\":\"delay-puts\",\"ms\":0}");
    server_used("drain", "pods", used, sizeof(used));
    assert_string_equal(used, "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserves),           cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_conflict_retried),   cmocka_unit_test(test_exceeded_after_reread),
        cmocka_unit_test(test_conflict_persists),  cmocka_unit_test(test_concurrent_room_for_one),
        cmocka_unit_test(test_concurrent_all_fit), cmocka_unit_test(test_request_leaves),
        cmocka_unit_test(test_deadline_mid_write), cmocka_unit_test(test_drain_mid_write),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

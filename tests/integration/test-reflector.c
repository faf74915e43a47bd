/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reflector (src/cluster/reflector.c) through the API client and the upstream pool against
 * adm-fake-apiserver, run on the test's own loop: a paged LIST fills the store, a label change is
 * in the store within 1 s (as a namespaceSelector would see it), an ERROR 410 relists and the
 * relist sees what changed meanwhile, a cut watch and 500/429 answers are recovered with back-off,
 * a token file rotated mid-run is read again after the 401, and garbage on the stream never
 * crashes it. Each wait drives the loop until a condition holds, under a deadline.
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
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>

#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_store.h"
#include "adm/cluster/kubeconfig.h"
#include "adm/cluster/reflector.h"
#include "certgen.h"
#include "harness.h"

static const adm_watched_kind_t namespaces = {"", "v1", "namespaces", "Namespace", false};

typedef struct fixture_s {
    h_server_t api;
    char dir[256];
    char token_file[320];
    uv_loop_t loop;
    uv_timer_t deadline;
    bool deadline_passed;
    adm_kube_config_t *kc;
    adm_api_client_t *client;
    adm_cluster_store_t *store;
    adm_reflector_t *r;
    bool started;
} fixture_t;

static fixture_t fx;

static void on_deadline(uv_timer_t *t)
{
    (void)t;
    fx.deadline_passed = true;
}

/* Drives the loop until cond holds; fails the test if ms pass first. */
#define WAIT_UNTIL(cond, ms)                                                                                 \
    do {                                                                                                     \
        fx.deadline_passed = false;                                                                          \
        uv_timer_start(&fx.deadline, on_deadline, (ms), 0);                                                  \
        while (!(cond) && !fx.deadline_passed) {                                                             \
            uv_run(&fx.loop, UV_RUN_ONCE);                                                                   \
        }                                                                                                    \
        uv_timer_stop(&fx.deadline);                                                                         \
        if (!(cond)) {                                                                                       \
            fail_msg("%s:%d: still not %s after %d ms", __FILE__, __LINE__, #cond, (int)(ms));               \
        }                                                                                                    \
    } while (0)

/* Starts the fake with nns namespaces and a reflector of Namespaces against it. */
static void start(int nns)
{
    char kubeconfig[400], user[400], count[16], err[256];
    const char *args[] = {"--insecure-http",        "--token-file", fx.token_file, "--namespaces", count,
                          "--bookmark-interval-ms", "300",          NULL};

    assert_int_equal(certgen_tempdir(fx.dir, sizeof(fx.dir)), 0);
    snprintf(fx.token_file, sizeof(fx.token_file), "%s/token", fx.dir);
    h_write_file(fx.token_file, "one\n");
    snprintf(count, sizeof(count), "%d", nns);
    fx.started = true;
    assert_int_equal(uv_loop_init(&fx.loop), 0);
    uv_timer_init(&fx.loop, &fx.deadline);
    assert_int_equal(h_start_prog(&fx.api, h_bin("FAKE_APISERVER_BIN"), NULL, args), 0);
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", fx.dir);
    snprintf(user, sizeof(user), "{tokenFile: %s}", fx.token_file);
    h_write_kubeconfig(kubeconfig, fx.api.port, user);
    if (adm_kube_config_load(kubeconfig, &fx.kc, err, sizeof(err)) != 0) {
        fail_msg("kubeconfig: %s", err);
    }
    assert_int_equal(adm_api_client_create(&fx.loop, fx.kc, &fx.client, err, sizeof(err)), 0);
    fx.store = adm_cluster_store_create();
    assert_int_equal(adm_reflector_start(&fx.loop, fx.client, &namespaces,
                                         adm_cluster_store_kind(fx.store, "", "Namespace", false), &fx.r),
                     0);
}

static int teardown(void **state)
{
    (void)state;
    if (!fx.started) {
        return 0;
    }
    adm_reflector_stop(fx.r);
    if (fx.client != NULL) {
        adm_api_client_close(fx.client);
    }
    uv_close((uv_handle_t *)&fx.deadline, NULL);
    uv_run(&fx.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&fx.loop), 0);
    adm_cluster_store_free(fx.store);
    adm_kube_config_free(fx.kc);
    h_stop(&fx.api, SIGTERM, 5000);
    h_cleanup(&fx.api);
    certgen_rmdir(fx.dir);
    memset(&fx, 0, sizeof(fx));
    return 0;
}

static const adm_reflector_stats_t *stats(void)
{
    return adm_reflector_stats(fx.r);
}

/* The value of label key on namespace name in the store, or NULL (no namespace or no label). */
static const char *label(const char *name, const char *key)
{
    yyjson_val *ns = adm_cluster_store_get(fx.store, "", "Namespace", NULL, name);

    return ns != NULL ? yyjson_get_str(yyjson_ptr_get(ns, "/metadata/labels") != NULL
                                           ? yyjson_obj_get(yyjson_ptr_get(ns, "/metadata/labels"), key)
                                           : NULL)
                      : NULL;
}

static bool has(const char *name)
{
    return adm_cluster_store_get(fx.store, "", "Namespace", NULL, name) != NULL;
}

static bool label_is(const char *name, const char *key, const char *want)
{
    const char *v = label(name, key);

    return v != NULL && strcmp(v, want) == 0;
}

static void put_label(const char *name, const char *value)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"team\":\"%s\"}}}}",
             name, value);
    h_api_control(&fx.api, cmd);
}

/* Synced, and the watch is open (a change made now comes through it). */
static void watching(void)
{
    WAIT_UNTIL(stats()->synced, 10000);
    put_label("probe", "1");
    WAIT_UNTIL(has("probe"), 5000);
}

/* 1,200 namespaces come in three pages of 500; a label change is in the store within 1 s. */
static void test_list_then_watch(void **state)
{
    (void)state;
    start(1200);
    WAIT_UNTIL(stats()->synced, 10000);
    assert_int_equal(adm_kind_store_count(adm_cluster_store_kind(fx.store, "", "Namespace", false)), 1200);
    assert_true(label_is("ns-1199", "kubernetes.io/metadata.name", "ns-1199"));
    put_label("ns-7", "blue");
    WAIT_UNTIL(label_is("ns-7", "team", "blue"), 1000);
    put_label("ns-7", "green");
    WAIT_UNTIL(label_is("ns-7", "team", "green"), 1000);
    h_api_control(&fx.api, "{\"op\":\"delete\",\"resource\":\"namespaces\",\"name\":\"ns-8\"}");
    WAIT_UNTIL(!has("ns-8"), 1000);
    assert_int_equal(stats()->relists, 0);
    assert_int_equal(stats()->errors, 0);
}

/* An ERROR 410 relists; the relist sees what changed while the watch was gone. */
static void test_relist_after_410(void **state)
{
    uint64_t events;

    (void)state;
    start(20);
    watching();
    /* the relist's first attempt fails, so the changes below land while no watch is open */
    h_api_control(&fx.api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"list\"}");
    h_api_control(&fx.api, "{\"op\":\"error-410\"}");
    WAIT_UNTIL(stats()->errors == 1, 5000);
    events = stats()->events;
    put_label("meanwhile", "x");
    h_api_control(&fx.api, "{\"op\":\"delete\",\"resource\":\"namespaces\",\"name\":\"ns-3\"}");
    WAIT_UNTIL(stats()->relists == 1 && has("meanwhile") && !has("ns-3"), 10000);
    assert_int_equal(stats()->events, events); /* the list, not the watch, brought them */
    put_label("after", "y");
    WAIT_UNTIL(has("after"), 5000);
}

/* A watch cut mid-stream is opened again from its resourceVersion; 500s and a 429 back off. */
static void test_cut_and_failures(void **state)
{
    (void)state;
    start(5);
    WAIT_UNTIL(stats()->synced, 10000);
    put_label("ns-1", "a");
    WAIT_UNTIL(label_is("ns-1", "team", "a"), 5000);
    h_api_control(&fx.api, "{\"op\":\"cut-watches\"}");
    put_label("ns-1", "b");
    WAIT_UNTIL(label_is("ns-1", "team", "b"), 5000);
    assert_int_equal(stats()->relists, 0);

    h_api_control(&fx.api, "{\"op\":\"fail\",\"status\":500,\"count\":2,\"on\":\"watch\"}");
    h_api_control(&fx.api, "{\"op\":\"cut-watches\"}");
    put_label("ns-1", "c");
    WAIT_UNTIL(label_is("ns-1", "team", "c") && stats()->errors >= 2, 15000);

    h_api_control(&fx.api, "{\"op\":\"fail\",\"status\":429,\"count\":1,\"retryAfter\":1,\"on\":\"list\"}");
    h_api_control(&fx.api, "{\"op\":\"error-410\"}");
    put_label("ns-2", "d");
    WAIT_UNTIL(stats()->relists >= 1 && label_is("ns-2", "team", "d"), 15000);
    assert_true(stats()->errors >= 3);
}

/* The token file is rotated (the server takes only the new token): the 401 makes it be read again. */
static void test_token_rotated(void **state)
{
    uint64_t errors;

    (void)state;
    start(3);
    WAIT_UNTIL(stats()->synced, 10000);
    h_write_file(fx.token_file, "two\n");
    h_api_control(&fx.api, "{\"op\":\"cut-watches\"}");
    errors = stats()->errors;
    put_label("ns-0", "rotated");
    WAIT_UNTIL(label_is("ns-0", "team", "rotated"), 15000);
    assert_true(stats()->errors > errors); /* one 401 before the new token was read */
}

/* Bytes that are not JSON on the stream: the watch ends, a relist follows, nothing crashes. */
static void test_garbage(void **state)
{
    (void)state;
    start(3);
    watching();
    h_api_control(&fx.api, "{\"op\":\"garbage\"}");
    WAIT_UNTIL(stats()->errors >= 1, 5000);
    put_label("ns-0", "clean");
    WAIT_UNTIL(label_is("ns-0", "team", "clean"), 15000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_list_then_watch, teardown),
        cmocka_unit_test_teardown(test_relist_after_410, teardown),
        cmocka_unit_test_teardown(test_cut_and_failures, teardown),
        cmocka_unit_test_teardown(test_token_rotated, teardown),
        cmocka_unit_test_teardown(test_garbage, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

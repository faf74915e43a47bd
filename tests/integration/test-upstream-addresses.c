/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run-time address set of an upstream (adm_webhooks_set_addresses, issue 18), in process: the
 * webhook pools of admitd's library on a loop of this test, calling four real admitd-mockhook
 * processes over TLS, all behind one service name (addr.hooks.svc:443, whose certificate they all
 * serve, so TLS still verifies the name):
 *  - three addresses get within 10% of a third of the calls each;
 *  - a fourth added takes its share at once: within the first second after it, a quarter (10%);
 *  - a removed address whose calls are still running (the fourth answers after 100 ms) lets them
 *    finish, allowed, gets no new call afterwards, and its pool is closed once they are done;
 *  - an empty set is refused and a name no webhook has changes nothing;
 *  - a refusal fails each call at once with its words (no connection made), and going back to the
 *    name leaves one endpoint resolved by name while the refusal drains;
 *  - the Services whose EndpointSlices are to be watched are listed, unless --resolve pins them.
 * The calls go one at a time in the share phases, so each finds none outstanding and the picker's
 * turn alone decides, whatever the machine's load does to the mockhooks' speed.
 */
#include "../../src/webhook/webhooks_internal.h"
#include "adm/base/error.h"
#include "adm/net/tls.h"
#include "certgen.h"
#include "harness.h"

#include <mbedtls/base64.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NMOCKS 4

static char dir[256], records[NMOCKS][320];
static h_server_t mocks[NMOCKS];
static uv_loop_t loop;
static adm_options_t opts;
static adm_webhooks_t *w;
static adm_arena_t *req_arena;
static adm_review_request_t req;

static void write_config(const char *path)
{
    static unsigned char pem[16384];
    static char ca[8192];
    char ca_path[320];
    size_t n, olen = 0;
    FILE *f;

    snprintf(ca_path, sizeof(ca_path), "%s/ca.crt.pem", dir);
    f = fopen(ca_path, "rb");
    assert_non_null(f);
    n = fread(pem, 1, sizeof(pem), f);
    fclose(f);
    assert_int_equal(mbedtls_base64_encode((unsigned char *)ca, sizeof(ca), &olen, pem, n), 0);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(
        f,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        "metadata: {name: addresses}\nwebhooks:\n- name: addr.hooks.example.com\n"
        "  clientConfig:\n    service: {name: addr, namespace: hooks, port: 443, path: /addr}\n"
        "    caBundle: %s\n"
        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]\n"
        "  sideEffects: None\n  admissionReviewVersions: [v1]\n  failurePolicy: Fail\n",
        ca);
    fclose(f);
}

static int setup(void **state)
{
    static char config[320], cert[320], key[320];
    const char *problem = NULL;
    char err[512], *fixture;
    size_t len;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(certgen_make(dir, "ca", "addresses-ca", NULL, false), 0);
    assert_int_equal(certgen_make(dir, "server", "addr.hooks.svc", "ca", false), 0);
    snprintf(cert, sizeof(cert), "%s/server.crt.pem", dir);
    snprintf(key, sizeof(key), "%s/server.key.pem", dir);
    for (int i = 0; i < NMOCKS; i++) {
        const char *args[] = {
            "--tls-cert-file", cert, "--tls-private-key-file", key, "--record", records[i], "--delay",
            "100ms",           NULL};

        snprintf(records[i], sizeof(records[i]), "%s/record-%d.jsonl", dir, i);
        if (i < NMOCKS - 1) {
            args[6] = NULL; /* only the last answers slowly */
        }
        assert_int_equal(h_start_prog(&mocks[i], h_bin("MOCKHOOK_BIN"), NULL, args), 0);
    }
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    write_config(config);
    assert_int_equal(adm_tls_global_init(), 0);
    assert_int_equal(uv_loop_init(&loop), 0);
    adm_options_defaults(&opts);
    opts.webhook_configs[0] = config;
    opts.nwebhook_configs = 1;
    if (adm_webhooks_create(&loop, &opts, &w, err, sizeof(err)) != 0) {
        fail_msg("adm_webhooks_create: %s", err);
    }
    req_arena = adm_arena_create(65536);
    fixture = h_fixture("pod-create.v1.review.json", &len);
    assert_int_equal(adm_review_decode(req_arena, fixture, len, &req, &problem), 0);
    free(fixture);
    return 0;
}

static int teardown(void **state)
{
    long long deadline = h_now_ms() + 10000;

    (void)state;
    adm_webhooks_destroy(w);
    while (uv_loop_alive(&loop) && h_now_ms() < deadline) {
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    assert_int_equal(uv_loop_close(&loop), 0);
    adm_arena_destroy(req_arena);
    adm_tls_global_cleanup();
    for (int i = 0; i < NMOCKS; i++) {
        h_stop(&mocks[i], 15, 10000);
        h_cleanup(&mocks[i]);
    }
    certgen_rmdir(dir);
    return 0;
}

typedef struct tally_s {
    int done, allowed;
    char reason[512]; /* the last failure's */
} tally_t;

static void on_done(void *arg, adm_hook_result_t *r)
{
    tally_t *t = arg;

    t->done++;
    t->allowed += r->outcome == ADM_HOOK_ALLOWED;
    if (r->outcome == ADM_HOOK_FAILED) {
        snprintf(t->reason, sizeof(t->reason), "%s", r->reason);
    }
}

/* Starts n calls at once, then runs the loop until all have answered (20 s at most). */
static void call_batch(int n, tally_t *t, void (*between)(void))
{
    adm_arena_t *a = adm_arena_create(65536);
    const adm_webhook_t *wh = &adm_webhooks_set(w)->validating[0];
    long long deadline = h_now_ms() + 20000;
    adm_hook_body_t body;
    int want = t->done + n;

    adm_hook_body_init(&body, req.object);
    for (int i = 0; i < n; i++) {
        adm_hook_result_t now;

        if (adm_hook_call_start(w, wh, &req, &body, a, uv_now(&loop) + 10000, on_done, t, &now) == NULL) {
            fail_msg("call %d not started: %s", i, now.reason != NULL ? now.reason : "(no reason)");
        }
    }
    if (between != NULL) {
        between();
    }
    while (t->done < want && h_now_ms() < deadline) {
        uv_run(&loop, UV_RUN_ONCE);
    }
    assert_int_equal(t->done, want);
    adm_arena_destroy(a);
}

static int calls_at(int i)
{
    return h_count_lines(records[i], "\"path\":\"/addr\"");
}

static void set_mocks(int first, int count)
{
    struct sockaddr_storage addrs[NMOCKS];

    memset(addrs, 0, sizeof(addrs));
    for (int i = 0; i < count; i++) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&addrs[i];

        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)mocks[first + i].port);
        sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    assert_int_equal(adm_webhooks_set_addresses(w, "addr.hooks.svc", 443, addrs, (size_t)count), 1);
}

static void assert_share(int got, int total, int parts)
{
    double want = (double)total / parts;

    if (got < want * 0.9 || got > want * 1.1) {
        fail_msg("%d of %d calls, want %.1f (within 10%%)", got, total, want);
    }
}

static void test_three_then_four(void **state)
{
    tally_t t = {0};
    int before[NMOCKS], total;
    long long start;

    (void)state;
    set_mocks(0, 3);
    for (int i = 0; i < 60; i++) {
        call_batch(1, &t, NULL);
    }
    assert_int_equal(t.allowed, 60);
    for (int i = 0; i < 3; i++) {
        assert_share(calls_at(i), 60, 3);
    }
    assert_int_equal(calls_at(3), 0);

    /* a fourth: its share from the first second on */
    for (int i = 0; i < NMOCKS; i++) {
        before[i] = calls_at(i);
    }
    set_mocks(0, 4);
    start = h_now_ms();
    total = 0;
    /* the calls of the first second, in whole turns of four (one at a time, a turn gives each one) */
    while (h_now_ms() - start < 1000 || total % NMOCKS != 0) {
        call_batch(1, &t, NULL);
        total++;
    }
    assert_int_equal(t.allowed, t.done);
    assert_true(total >= 8);
    for (int i = 0; i < NMOCKS; i++) {
        assert_share(calls_at(i) - before[i], total, 4);
    }
}

static void remove_the_slow_one(void)
{
    set_mocks(0, 3);
}

static void test_removed_address_drains_then_closes(void **state)
{
    tally_t t = {0};
    int slow_before = calls_at(3), slow_after;
    const adm_hook_upstream_t *u = adm_webhooks_set(w) != NULL ? &w->upstreams[0] : NULL;
    char slow[64];
    bool open = true;
    long long deadline;

    (void)state;
    snprintf(slow, sizeof(slow), "127.0.0.1:%d", mocks[3].port);
    /* 8 calls at once over 4 idle addresses: 2 go to the slow one, which is removed while they run */
    call_batch(8, &t, remove_the_slow_one);
    assert_int_equal(t.allowed, 8); /* none cut short */
    slow_after = calls_at(3);
    assert_int_equal(slow_after - slow_before, 2);
    for (int i = 0; i < 30; i++) {
        call_batch(1, &t, NULL);
    }
    assert_int_equal(calls_at(3), slow_after);
    /* drained: its pool is closed on a later turn of the loop */
    deadline = h_now_ms() + 5000;
    while (open && h_now_ms() < deadline) {
        open = false;
        for (size_t k = 0; k < u->nendpoints; k++) {
            open = open || (u->endpoints[k].up != NULL && strcmp(u->endpoints[k].address, slow) == 0);
        }
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    assert_false(open);
}

static void test_bad_sets(void **state)
{
    struct sockaddr_storage one = {0};

    (void)state;
    assert_int_equal(adm_webhooks_set_addresses(w, "addr.hooks.svc", 443, &one, 0), ADM_EINVAL);
    assert_int_equal(adm_webhooks_set_addresses(w, "other.hooks.svc", 443, &one, 1), 0);
    assert_int_equal(adm_webhooks_set_addresses(w, "addr.hooks.svc", 8443, &one, 1), 0);
}

static void test_refusal_then_name(void **state)
{
    const adm_hook_upstream_t *u = &w->upstreams[0];
    tally_t t = {0};
    int before[NMOCKS];
    size_t live = 0;
    long long deadline;

    (void)state;
    for (int i = 0; i < NMOCKS; i++) {
        before[i] = calls_at(i);
    }
    assert_int_equal(adm_webhooks_refuse_calls(w, "addr.hooks.svc", 443, "10.96.0.10:443",
                                               "dial tcp 10.96.0.10:443: connect: connection refused"),
                     1);
    call_batch(2, &t, NULL);
    assert_int_equal(t.allowed, 0);
    assert_string_equal(t.reason,
                        "failed to call webhook: Post \"https://addr.hooks.svc:443/addr?timeout=10s\": "
                        "dial tcp 10.96.0.10:443: connect: connection refused");
    for (int i = 0; i < NMOCKS; i++) {
        assert_int_equal(calls_at(i), before[i]);
    }
    /* the same refusal again changes nothing; back to the name: one endpoint, resolved by name */
    assert_int_equal(adm_webhooks_refuse_calls(w, "addr.hooks.svc", 443, "10.96.0.10:443",
                                               "dial tcp 10.96.0.10:443: connect: connection refused"),
                     1);
    assert_int_equal(adm_webhooks_resolve_by_name(w, "addr.hooks.svc", 443), 1);
    deadline = h_now_ms() + 5000;
    do {
        uv_run(&loop, UV_RUN_NOWAIT);
        live = 0;
        for (size_t k = 0; k < u->nendpoints; k++) {
            live += u->endpoints[k].up != NULL;
        }
    } while (live != 1 && h_now_ms() < deadline);
    assert_int_equal(live, 1);
    for (size_t k = 0; k < u->nendpoints; k++) {
        if (u->endpoints[k].up != NULL) {
            assert_string_equal(u->endpoints[k].address, "");
            assert_null(u->endpoints[k].refuse);
        }
    }
    /* and addresses again take calls */
    set_mocks(0, 3);
    call_batch(3, &t, NULL);
    assert_int_equal(t.allowed, 3);
}

typedef struct seen_s {
    int n;
    char what[256];
} seen_t;

static void on_service(void *arg, const char *namespace_, const char *name, uint16_t port, const char *host)
{
    seen_t *seen = arg;

    seen->n++;
    snprintf(seen->what, sizeof(seen->what), "%s/%s:%u %s", namespace_, name, (unsigned)port, host);
}

static void test_services_unless_pinned(void **state)
{
    adm_options_t pinned = opts;
    struct sockaddr_in *sin = (struct sockaddr_in *)&pinned.resolve[0].addr;
    adm_webhooks_t *other;
    seen_t seen = {0};
    char err[512];

    (void)state;
    adm_webhooks_services(w, on_service, &seen);
    assert_int_equal(seen.n, 1);
    assert_string_equal(seen.what, "hooks/addr:443 addr.hooks.svc");
    snprintf(pinned.resolve[0].host, sizeof(pinned.resolve[0].host), "addr.hooks.svc");
    pinned.resolve[0].port = 443;
    sin->sin_family = AF_INET;
    sin->sin_port = htons(443);
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    pinned.nresolve = 1;
    if (adm_webhooks_create(&loop, &pinned, &other, err, sizeof(err)) != 0) {
        fail_msg("adm_webhooks_create: %s", err);
    }
    seen.n = 0;
    adm_webhooks_services(other, on_service, &seen);
    assert_int_equal(seen.n, 0); /* --resolve wins: nothing to watch */
    adm_webhooks_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_then_four),
        cmocka_unit_test(test_removed_address_drains_then_closes),
        cmocka_unit_test(test_bad_sets),
        cmocka_unit_test(test_refusal_then_name),
        cmocka_unit_test(test_services_unless_pinned),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit: configuration errors with kube's validation messages, which requests are limited,
 * each limit type's key, burst then refill over a hand-moved clock, several limits charged at once
 * with the last refusal reported, and the LRU handing evicted keys a full bucket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/error.h"
#include "adm/eventratelimit.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_event_rate_limit;

static adm_arena_t *arena;
static uint64_t fake_now;

static uint64_t fake_clock(void)
{
    return fake_now;
}

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

#define CONFIG(limits) "{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"kind\":\"Configuration\",\"limits\":" limits "}"

static void *make(const char *config)
{
    void *st = NULL;
    char err[512];

    if (pt_configure(&adm_plugin_event_rate_limit, config, NULL, &st, err, sizeof(err)) != 0) {
        fail_msg("configure failed: %s", err);
    }
    adm_event_rate_limit_set_clock(st, fake_clock);
    fake_now = 1000000000u;
    return st;
}

static void config_error(const char *config, const char *want)
{
    void *st = NULL;
    char err[512];

    assert_int_equal(pt_configure(&adm_plugin_event_rate_limit, config, NULL, &st, err, sizeof(err)), ADM_EINVAL);
    assert_null(st);
    if (strcmp(err, want) != 0) {
        fail_msg("got  %s\nwant %s", err, want);
    }
}

static void test_configuration_errors(void **state)
{
    config_error(NULL, "test.yaml: EventRateLimit needs a configuration: limits: Invalid value: null: must not be empty");
    config_error("{\"kind\":\"Configuration\",\"limits\":[]}",
                 "test.yaml: apiVersion: want eventratelimit.admission.k8s.io/v1alpha1");
    config_error("{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"kind\":\"Config\"}",
                 "test.yaml: kind: want Configuration");
    config_error(CONFIG("[]"), "test.yaml: limits: Invalid value: []: must not be empty");
    config_error(CONFIG("{}"), "test.yaml: limits: must be a list");
    config_error(CONFIG("[{\"type\":\"Pod\",\"qps\":1,\"burst\":1}]"),
                 "test.yaml: limits[0].type: Unsupported value: \"Pod\": supported values: \"Namespace\", \"Server\", "
                 "\"SourceAndObject\", \"User\"");
    config_error(CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1},{\"type\":\"User\",\"qps\":1,\"burst\":0}]"),
                 "test.yaml: limits[1].burst: Invalid value: 0: must be positive");
    config_error(CONFIG("[{\"type\":\"User\",\"qps\":-3,\"burst\":2}]"),
                 "test.yaml: limits[0].qps: Invalid value: -3: must be positive");
    config_error(CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":2,\"cacheSize\":-1}]"),
                 "test.yaml: limits[0].cacheSize: Invalid value: -1: must not be negative");
    config_error(CONFIG("[{\"type\":\"Namespace\",\"qps\":\"5\",\"burst\":2}]"),
                 "test.yaml: limits[0].qps: must be a whole number (int32), not a string");
    config_error(CONFIG("[{\"type\":\"Namespace\",\"qps\":1.5,\"burst\":2}]"),
                 "test.yaml: limits[0].qps: must be a whole number (int32), not this value");
    config_error(CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":3000000000}]"),
                 "test.yaml: limits[0].burst: must be a whole number (int32), not this value");
    config_error(CONFIG("[{\"type\":7,\"qps\":1,\"burst\":1}]"), "test.yaml: limits[0].type: must be a string");
    {
        /* A negative cacheSize is only checked on the cached types; YAML's 5.0 is an int32. */
        void *st = make(CONFIG("[{\"type\":\"Server\",\"qps\":5.0,\"burst\":1,\"cacheSize\":-1}]"));

        adm_plugin_event_rate_limit.free_state(st);
    }
}

static pt_request_t event(const char *op, const char *ns, const char *user, const char *object)
{
    pt_request_t r = {.operation = op, .resource = "events", .kind = "Event", .namespace_ = ns, .name = "e1",
                      .username = user, .object = object != NULL ? object : "{\"metadata\":{\"name\":\"e1\"}}"};
    return r;
}

static int run(void *st, const pt_request_t *r, const char **message)
{
    pt_result_t res;

    adm_arena_reset(arena);
    res = pt_run(arena, &adm_plugin_event_rate_limit, st, 'v', r);
    if (res.rc == ADM_DECLINED) {
        assert_int_equal(res.status.code, 429);
        assert_string_equal(res.status.reason, "TooManyRequests");
        assert_null(res.status.details);
        *message = res.status.message;
    }
    return res.rc;
}

static void test_server_burst_and_refill(void **state)
{
    void *st = make(CONFIG("[{\"type\":\"Server\",\"qps\":2,\"burst\":3}]"));
    pt_request_t r = event("CREATE", "a", "u", NULL);
    pt_request_t other = {.operation = "CREATE", .group = "events.k8s.io", .resource = "events", .kind = "Event",
                          .object = "{}"};
    pt_request_t pod = {.operation = "CREATE", .resource = "pods", .kind = "Pod", .object = "{}"};
    const char *msg = NULL;

    for (int i = 0; i < 3; i++) {
        assert_int_equal(run(st, &r, &msg), ADM_OK);
    }
    assert_int_equal(run(st, &r, &msg), ADM_DECLINED);
    assert_string_equal(msg, "Too many requests: limit reached on type Server for key ");
    /* Other kinds, and events.k8s.io Events, are never limited. */
    assert_int_equal(run(st, &other, &msg), ADM_OK);
    assert_int_equal(run(st, &pod, &msg), ADM_OK);
    /* Half a second at 2 qps: one token. */
    fake_now += 500000000u;
    assert_int_equal(run(st, &r, &msg), ADM_OK);
    assert_int_equal(run(st, &r, &msg), ADM_DECLINED);
    /* Refill is capped at burst. */
    fake_now += 60ull * 1000000000u;
    r.operation = "UPDATE"; /* updates count too */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(run(st, &r, &msg), ADM_OK);
    }
    r.dry_run = true; /* kube charges dry-run requests as well */
    assert_int_equal(run(st, &r, &msg), ADM_DECLINED);
    assert_int_equal(adm_plugin_event_rate_limit.operations, ADM_OPS_CREATE | ADM_OPS_UPDATE);
    adm_plugin_event_rate_limit.free_state(st);
}

static void test_keys(void **state)
{
    void *st = make(CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1},{\"type\":\"User\",\"qps\":1,\"burst\":2},"
                           "{\"type\":\"SourceAndObject\",\"qps\":1,\"burst\":5}]"));
    const char *msg = NULL;
    pt_request_t a = event("CREATE", "ns-a", "alice", NULL);
    pt_request_t b = event("CREATE", "ns-b", "alice", NULL);
    pt_request_t c = event("CREATE", "ns-c", "bob",
                           "{\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},\"involvedObject\":{\"kind\":\"Pod\","
                           "\"namespace\":\"ns-c\",\"name\":\"p\",\"uid\":\"u1\",\"apiVersion\":\"v1\"}}");

    assert_int_equal(run(st, &a, &msg), ADM_OK);
    /* ns-a is empty; alice still has one token: every limit is charged, the namespace one refuses. */
    assert_int_equal(run(st, &a, &msg), ADM_DECLINED);
    assert_string_equal(msg, "Too many requests: limit reached on type Namespace for key ns-a");
    /* alice's bucket was charged by the refused request too, so now both refuse: the last is reported. */
    assert_int_equal(run(st, &b, &msg), ADM_DECLINED);
    assert_string_equal(msg, "Too many requests: limit reached on type User for key alice");
    /* The SourceAndObject key concatenates source and involvedObject fields. */
    for (int i = 0; i < 2; i++) {
        c.namespace_ = i == 0 ? "ns-c" : "ns-d";
        c.username = i == 0 ? "bob" : "carol";
        assert_int_equal(run(st, &c, &msg), ADM_OK);
    }
    {
        void *st2 = make(CONFIG("[{\"type\":\"SourceAndObject\",\"qps\":1,\"burst\":1}]"));

        assert_int_equal(run(st2, &c, &msg), ADM_OK);
        assert_int_equal(run(st2, &c, &msg), ADM_DECLINED);
        assert_string_equal(msg, "Too many requests: limit reached on type SourceAndObject for key kubeletn1Podns-cpu1v1");
        adm_plugin_event_rate_limit.free_state(st2);
    }
    adm_plugin_event_rate_limit.free_state(st);
}

static void test_lru_eviction(void **state)
{
    void *st = make(CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":2}]"));
    const char *msg = NULL;
    pt_request_t a = event("CREATE", "a", "u", NULL);
    pt_request_t b = event("CREATE", "b", "u", NULL);
    pt_request_t c = event("CREATE", "c", "u", NULL);

    assert_int_equal(run(st, &a, &msg), ADM_OK);
    assert_int_equal(run(st, &b, &msg), ADM_OK);
    assert_int_equal(run(st, &a, &msg), ADM_DECLINED); /* a is now the most recently used */
    assert_int_equal(run(st, &c, &msg), ADM_OK);       /* evicts b, the least recently used */
    assert_int_equal(run(st, &a, &msg), ADM_DECLINED); /* a stayed, still empty */
    assert_int_equal(run(st, &b, &msg), ADM_OK);       /* b came back with a full bucket (evicting c) */
    assert_int_equal(run(st, &c, &msg), ADM_OK);       /* and so did c */
    /* Many keys through a small cache: no growth, no leak (ASan checks the frees). */
    for (int i = 0; i < 1000; i++) {
        char ns[16];

        snprintf(ns, sizeof(ns), "n%d", i);
        a.namespace_ = ns;
        assert_int_equal(run(st, &a, &msg), ADM_OK);
    }
    adm_plugin_event_rate_limit.free_state(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configuration_errors),
        cmocka_unit_test(test_server_burst_and_refill),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_lru_eviction),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

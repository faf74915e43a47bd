/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit: configuration decoding and validation with kube's messages, which requests are
 * limited, each limit type's burst and refill on a clock moved by hand (down to rate.Limiter's
 * nanosecond truncation), several limits charged together with the aggregated 429, and the LRU of
 * buckets (recency, eviction restoring a full bucket, growth past the preallocated slots).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/plugin.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_event_rate_limit;

#define PLUGIN (&adm_plugin_event_rate_limit)
#define HEAD "\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"kind\":\"Configuration\""
#define CONFIG(limits) "{" HEAD ",\"limits\":" limits "}"
#define SEC UINT64_C(1000000000)
#define ALL_TYPES "supported values: \"Server\", \"Namespace\", \"User\", \"SourceAndObject\""

/* Events for the SourceAndObject key: kubeletnode-1Podns1pod-1uid-1v1 and a second object. */
#define EVENT_X                                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"x.1\",\"namespace\":\"ns1\"},"       \
    "\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"                                            \
    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"ns1\",\"name\":\"pod-1\",\"uid\":\"uid-1\","       \
    "\"apiVersion\":\"v1\",\"resourceVersion\":\"7\",\"fieldPath\":\"spec\"},\"reason\":\"Started\"}"
#define EVENT_Y                                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"y.1\",\"namespace\":\"ns1\"},"       \
    "\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"                                            \
    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"ns1\",\"name\":\"pod-2\",\"uid\":\"uid-2\","       \
    "\"apiVersion\":\"v1\"}}"
/* Names that differ only after an escaped NUL: Go keeps the whole string, so they are two keys. */
#define EVENT_NUL(c)                                                                                         \
    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"  \
    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"ns1\",\"name\":\"p\\u0000" c "\"}}"
#define EVENT_NO_SOURCE                                                                                      \
    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"z.1\"},"                             \
    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"ns1\",\"name\":\"pod-1\",\"uid\":\"uid-1\","       \
    "\"apiVersion\":\"v1\"}}"

static adm_arena_t *arena;
static uint64_t clock_ns; /* what the plugin reads as the time (adm_plugin_now_ns) */

static uint64_t hand_ns(void *arg)
{
    return *(const uint64_t *)arg;
}

static uint64_t hand_ms(void *arg)
{
    return *(const uint64_t *)arg / 1000000;
}

static int setup(void **state)
{
    static const adm_clock_t hand = {hand_ms, hand_ns, &clock_ns};

    pt_set_clock(&hand);
    arena = adm_arena_create(16384);
    return arena == NULL;
}

static int teardown(void **state)
{
    pt_set_clock(NULL);
    adm_arena_destroy(arena);
    return 0;
}

/* Configures the plugin, with the clock at 0. */
static void *start(const char *config)
{
    char err[1024];
    void *st = NULL;
    int rc = pt_configure(PLUGIN, config, NULL, &st, err, sizeof(err));

    if (rc != 0) {
        fail_msg("configure failed (%d): %s\n  config: %s", rc, err, config);
    }
    assert_non_null(st);
    clock_ns = 0;
    return st;
}

/* A core v1 Event write. */
static pt_request_t event(const char *op, const char *ns, const char *user, const char *object)
{
    pt_request_t r = {0};

    r.operation = op != NULL ? op : "CREATE";
    r.group = "";
    r.resource = "events";
    r.kind = "Event";
    r.namespace_ = ns;
    r.name = "e";
    r.username = user;
    r.object = object != NULL ? object : EVENT_X;
    return r;
}

/* Runs validate; want NULL: allowed, else the exact 429 message after "Too many requests: ". */
static void expect(void *st, const pt_request_t *r, const char *want, const char *what)
{
    pt_result_t res;

    adm_arena_reset(arena);
    res = pt_run(arena, PLUGIN, st, 'v', r);
    if (want == NULL) {
        if (res.rc != ADM_OK) {
            fail_msg("%s: want allowed, got rc %d: %s", what, res.rc,
                     res.rc == ADM_DECLINED ? res.status.message : "(no status)");
        }
        return;
    }
    if (res.rc != ADM_DECLINED) {
        fail_msg("%s: want \"%s\", got rc %d", what, want, res.rc);
    }
    assert_int_equal(res.status.code, 429);
    assert_string_equal(res.status.reason, "TooManyRequests");
    if (strncmp(res.status.message, "Too many requests: ", 19) != 0 ||
        strcmp(res.status.message + 19, want) != 0) {
        fail_msg("%s:\n  got:  %s\n  want: Too many requests: %s", what, res.status.message, want);
    }
    assert_false(res.changed);
}

/* ---- registration ---- */

static void test_registration(void **state)
{
    const adm_plugin_info_t *info = adm_plugin_find("EventRateLimit");

    assert_non_null(info);
    assert_ptr_equal(info->plugin, PLUGIN);
    assert_false(info->default_on);
    assert_string_equal(info->type, "validating");
    assert_string_equal(PLUGIN->name, "EventRateLimit");
    /* admission.NewHandler(Create, Update): DELETE and CONNECT never reach the plugin. */
    assert_int_equal(PLUGIN->operations, ADM_OPS_CREATE | ADM_OPS_UPDATE);
    assert_null(PLUGIN->admit);
    assert_non_null(PLUGIN->validate);
    assert_non_null(PLUGIN->configure);
    assert_non_null(PLUGIN->free_state);
}

/* ---- configuration ---- */

typedef struct config_case_s {
    const char *config; /* NULL: no configuration at all */
    const char *want;   /* NULL: accepted; else the whole error line */
} config_case_t;

static const config_case_t config_cases[] = {
    /* LoadConfiguration(nil) is an empty Configuration, which validation refuses. */
    {NULL, "test.yaml: limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
    {"{" HEAD "}", "test.yaml: limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
    {CONFIG("null"), "test.yaml: limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
    {CONFIG("[]"), "test.yaml: limits: Invalid value: []eventratelimit.Limit{}: must not be empty"},
    /* type */
    {CONFIG("[{\"type\":\"Cluster\",\"qps\":1,\"burst\":1}]"),
     "test.yaml: limits[0].type: Unsupported value: \"Cluster\": " ALL_TYPES},
    {CONFIG("[{\"type\":\"server\",\"qps\":1,\"burst\":1}]"),
     "test.yaml: limits[0].type: Unsupported value: \"server\": " ALL_TYPES},
    {CONFIG("[{\"qps\":1,\"burst\":1}]"), "test.yaml: limits[0].type: Unsupported value: \"\": " ALL_TYPES},
    {CONFIG("[{\"type\":\"a\\\"b\\n\",\"qps\":1,\"burst\":1}]"),
     "test.yaml: limits[0].type: Unsupported value: \"a\\\"b\\n\": " ALL_TYPES},
    /* burst, qps */
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":0}]"),
     "test.yaml: limits[0].burst: Invalid value: 0: must be positive"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1}]"),
     "test.yaml: limits[0].burst: Invalid value: 0: must be positive"},
    {CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":-3}]"),
     "test.yaml: limits[0].burst: Invalid value: -3: must be positive"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":0,\"burst\":1}]"),
     "test.yaml: limits[0].qps: Invalid value: 0: must be positive"},
    {CONFIG("[{\"type\":\"Namespace\",\"qps\":-1,\"burst\":1}]"),
     "test.yaml: limits[0].qps: Invalid value: -1: must be positive"},
    /* cacheSize: not negative, and not even looked at for Server */
    {CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":-1}]"),
     "test.yaml: limits[0].cacheSize: Invalid value: -1: must not be negative"},
    {CONFIG("[{\"type\":\"SourceAndObject\",\"qps\":1,\"burst\":1,\"cacheSize\":-2147483648}]"),
     "test.yaml: limits[0].cacheSize: Invalid value: -2147483648: must not be negative"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1,\"cacheSize\":-1}]"), NULL},
    {CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":1,\"cacheSize\":0}]"), NULL},
    /* several errors: the ErrorList aggregate, in validation order, with the limit's index */
    {CONFIG("[{\"type\":\"Server\",\"qps\":5,\"burst\":5},{\"type\":\"X\",\"cacheSize\":-1}]"),
     "test.yaml: [limits[1].type: Unsupported value: \"X\": " ALL_TYPES
     ", limits[1].burst: Invalid value: 0: must be positive, limits[1].qps: Invalid value: 0: must be "
     "positive, "
     "limits[1].cacheSize: Invalid value: -1: must not be negative]"},
    {CONFIG("[{\"type\":\"User\",\"qps\":0,\"burst\":1},{\"type\":\"Server\",\"qps\":1,\"burst\":0}]"),
     "test.yaml: [limits[0].qps: Invalid value: 0: must be positive, "
     "limits[1].burst: Invalid value: 0: must be positive]"},
    {CONFIG("[null]"), "test.yaml: [limits[0].type: Unsupported value: \"\": " ALL_TYPES
                       ", limits[0].burst: Invalid value: 0: must be positive, "
                       "limits[0].qps: Invalid value: 0: must be positive]"},
    /* wrong JSON types: Go's UnmarshalTypeError, first one only */
    {CONFIG("[{\"type\":\"Server\",\"qps\":\"5\",\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal string into Go struct field Limit.limits.qps of type int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":true}]"),
     "test.yaml: json: cannot unmarshal bool into Go struct field Limit.limits.burst of type int32"},
    {CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":1,\"cacheSize\":[1]}]"),
     "test.yaml: json: cannot unmarshal array into Go struct field Limit.limits.cacheSize of type int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":{},\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal object into Go struct field Limit.limits.qps of type int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1.5}]"),
     "test.yaml: json: cannot unmarshal number 1.5 into Go struct field Limit.limits.burst of type int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":2147483648,\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal number 2147483648 into Go struct field Limit.limits.qps of type "
     "int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":-2147483649}]"),
     "test.yaml: json: cannot unmarshal number -2147483649 into Go struct field Limit.limits.burst of type "
     "int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1e10,\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal number 10000000000 into Go struct field Limit.limits.qps of type "
     "int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":2.5e21}]"),
     "test.yaml: json: cannot unmarshal number 2.5e+21 into Go struct field Limit.limits.burst of type "
     "int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":-1.25e-7}]"),
     "test.yaml: json: cannot unmarshal number -1.25e-7 into Go struct field Limit.limits.burst of type "
     "int32"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":0.1,\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal number 0.1 into Go struct field Limit.limits.qps of type int32"},
    {CONFIG("[{\"type\":5,\"qps\":1,\"burst\":1}]"),
     "test.yaml: json: cannot unmarshal number into Go struct field Limit.limits.type of type "
     "v1alpha1.LimitType"},
    {CONFIG("[{\"type\":\"Server\",\"qps\":\"x\",\"burst\":\"y\"}]"),
     "test.yaml: json: cannot unmarshal string into Go struct field Limit.limits.qps of type int32"},
    {CONFIG("{\"type\":\"Server\"}"), "test.yaml: json: cannot unmarshal object into Go struct field "
                                      "Configuration.limits of type []v1alpha1.Limit"},
    {CONFIG("\"Server\""), "test.yaml: json: cannot unmarshal string into Go struct field "
                           "Configuration.limits of type []v1alpha1.Limit"},
    {CONFIG("[\"Server\"]"), "test.yaml: json: cannot unmarshal string into Go struct field "
                             "Configuration.limits of type v1alpha1.Limit"},
    {CONFIG("[[]]"), "test.yaml: json: cannot unmarshal array into Go struct field Configuration.limits of "
                     "type v1alpha1.Limit"},
    /* apiVersion and kind */
    {"{\"kind\":\"Configuration\",\"limits\":[]}",
     "test.yaml: Object 'apiVersion' is missing in '{\"kind\":\"Configuration\",\"limits\":[]}'"},
    {"{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\"}",
     "test.yaml: Object 'Kind' is missing in "
     "'{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\"}'"},
    {"{}", "test.yaml: Object 'Kind' is missing in '{}'"},
    {"{\"apiVersion\":\"eventratelimit.admission.k8s.io/\",\"kind\":\"Configuration\"}",
     "test.yaml: Object 'apiVersion' is missing in "
     "'{\"apiVersion\":\"eventratelimit.admission.k8s.io/\",\"kind\":\"Configuration\"}'"},
    {"{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1\",\"kind\":\"Configuration\",\"limits\":[]}",
     "test.yaml: no kind \"Configuration\" is registered for version \"eventratelimit.admission.k8s.io/v1\""},
    {"{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"kind\":\"EventRateLimit\"}",
     "test.yaml: no kind \"EventRateLimit\" is registered for version "
     "\"eventratelimit.admission.k8s.io/v1alpha1\""},
    {"{\"apiVersion\":\"v1alpha1\",\"kind\":\"Configuration\"}",
     "test.yaml: no kind \"Configuration\" is registered for version \"v1alpha1\""},
    {"{\"apiVersion\":\"/v1alpha1\",\"kind\":\"Configuration\"}",
     "test.yaml: no kind \"Configuration\" is registered for version \"v1alpha1\""},
    {"{\"apiVersion\":\"a/b/c\",\"kind\":\"Configuration\"}",
     "test.yaml: unexpected GroupVersion string: a/b/c"},
    {"{\"apiVersion\":1,\"kind\":\"Configuration\"}",
     "test.yaml: couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct "
     "field "
     ".apiVersion of type string"},
    {"[]",
     "test.yaml: couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of "
     "type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
     "Kind string \"json:\\\"kind,omitempty\\\"\" }"},
    /* encoding/json matches apiVersion and kind case-insensitively; the limits are case-sensitive */
    {"{\"APIVERSION\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"Kind\":\"Configuration\","
     "\"limits\":[{\"type\":\"Server\",\"qps\":1,\"burst\":1}]}",
     NULL},
    {CONFIG("[{\"type\":\"Server\",\"QPS\":5,\"burst\":1}]"),
     "test.yaml: limits[0].qps: Invalid value: 0: must be positive"},
    {"{" HEAD ",\"Limits\":[{\"type\":\"Server\",\"qps\":5,\"burst\":1}]}",
     "test.yaml: limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
    /* kube decodes this configuration non-strictly: unknown members are ignored */
    {"{" HEAD ",\"extra\":{\"a\":1},\"limits\":[{\"type\":\"Server\",\"qps\":1,\"burst\":1,\"bogus\":true}]}",
     NULL},
    /* YAML numbers arrive as reals; integral ones are int32s */
    {CONFIG("[{\"type\":\"Namespace\",\"qps\":5.0,\"burst\":10.0,\"cacheSize\":100.0}]"), NULL},
    /* null leaves a member at its zero value; a repeated member: the last one counts */
    {CONFIG("[{\"type\":null,\"qps\":1,\"burst\":1}]"),
     "test.yaml: limits[0].type: Unsupported value: \"\": " ALL_TYPES},
    {CONFIG("[{\"type\":\"Server\",\"qps\":0,\"qps\":3,\"burst\":1}]"), NULL},
    {CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1}],\"limits\":[]"),
     "test.yaml: limits: Invalid value: []eventratelimit.Limit{}: must not be empty"},
    /* every type, at once */
    {CONFIG(
         "[{\"type\":\"Server\",\"qps\":1,\"burst\":1},{\"type\":\"Namespace\",\"qps\":1,\"burst\":1},"
         "{\"type\":\"User\",\"qps\":1,\"burst\":1},{\"type\":\"SourceAndObject\",\"qps\":1,\"burst\":1}]"),
     NULL},
};

static void test_config(void **state)
{
    for (size_t i = 0; i < sizeof(config_cases) / sizeof(config_cases[0]); i++) {
        const config_case_t *c = &config_cases[i];
        char err[1024];
        void *st = NULL;
        int rc = pt_configure(PLUGIN, c->config, NULL, &st, err, sizeof(err));

        if (c->want == NULL) {
            if (rc != 0 || st == NULL) {
                fail_msg("case %zu: want accepted, got %d: %s\n  config: %s", i, rc, err, c->config);
            }
        } else if (rc != ADM_EINVAL || strcmp(err, c->want) != 0 || st != NULL) {
            fail_msg("case %zu: rc %d\n  got:  %s\n  want: %s\n  config: %s", i, rc, err, c->want,
                     c->config != NULL ? c->config : "(none)");
        }
        PLUGIN->free_state(st);
    }
}

/* ---- what is limited ---- */

static void test_not_limited(void **state)
{
    void *st = start(CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1}]"));
    pt_request_t core = event(NULL, "ns1", "u", NULL);
    pt_request_t others[6];
    const char *what[6] = {"events.k8s.io Event", "Pod",
                           "core kind Events",    "dry-run CREATE",
                           "dry-run UPDATE",      "core Event sent as another resource"};

    for (size_t i = 0; i < 6; i++) {
        others[i] = event(NULL, "ns1", "u", NULL);
    }
    others[0].group = "events.k8s.io";
    others[0].object =
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"}}";
    others[1].resource = "pods";
    others[1].kind = "Pod";
    others[1].object = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}";
    others[2].kind = "Events";
    others[3].dry_run = true;
    others[4].operation = "UPDATE";
    others[4].old_object = EVENT_X;
    others[4].dry_run = true;
    /* The kind decides, as kube's GetKind().GroupKind(): a resource name does not exempt an Event. */
    others[5].resource = "widgets";

    expect(st, &core, NULL, "first core Event");
    for (size_t i = 0; i < 5; i++) {
        expect(st, &others[i], NULL, what[i]);
    }
    expect(st, &others[5], "limit reached on type Server for key ", what[5]);
    /* None of the exempt requests took or refilled anything: the bucket is still empty. */
    expect(st, &core, "limit reached on type Server for key ", "core Event after the exempt ones");
    PLUGIN->free_state(st);
}

/* ---- per-type burst and refill ---- */

typedef struct step_s {
    uint64_t at;    /* clock, ns */
    const char *op; /* NULL: CREATE */
    const char *ns; /* NULL ends the scenario */
    const char *user;
    const char *object; /* NULL: EVENT_X */
    const char *old_object;
    const char *want; /* NULL: allowed */
} step_t;

typedef struct scenario_s {
    const char *name;
    const char *config;
    step_t steps[24];
} scenario_t;

#define SERVER_FULL "limit reached on type Server for key "

static const scenario_t scenarios[] = {
    /*
     * At 1 s - 1 ns the bucket holds 0.999999999 tokens: the missing 1e-9 token is a wait that
     * truncates to 0 ns, so rate.Limiter (and so kube) already grants; at 1 s - 2 ns it does not.
     */
    {"Server: burst, partial refill refused, one token per second, capped at burst",
     CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":3}]"),
     {{0, NULL, "a", "u1", NULL, NULL, NULL},
      {0, NULL, "b", "u2", NULL, NULL, NULL},
      {0, "UPDATE", "c", "u3", NULL, EVENT_X, NULL},
      {0, NULL, "d", "u4", NULL, NULL, SERVER_FULL},
      {SEC / 2, NULL, "a", "u1", NULL, NULL, SERVER_FULL},
      {SEC - 2, NULL, "a", "u1", NULL, NULL, SERVER_FULL},
      {SEC - 1, NULL, "a", "u1", NULL, NULL, NULL},
      {SEC, NULL, "a", "u1", NULL, NULL, SERVER_FULL},
      {2 * SEC - 1, NULL, "a", "u1", NULL, NULL, NULL},
      {2 * SEC - 1, NULL, "a", "u1", NULL, NULL, SERVER_FULL},
      {100 * SEC, NULL, "a", "u1", NULL, NULL, NULL},
      {100 * SEC, NULL, "a", "u1", NULL, NULL, NULL},
      {100 * SEC, NULL, "a", "u1", NULL, NULL, NULL},
      {100 * SEC, NULL, "a", "u1", NULL, NULL, SERVER_FULL},
      {0}}},
    {"Namespace: one bucket per namespace, half a second per token at qps 2 (burst given as 2.0)",
     CONFIG("[{\"type\":\"Namespace\",\"qps\":2,\"burst\":2.0}]"),
     {{0, NULL, "a", "u", NULL, NULL, NULL},
      {0, NULL, "a", "v", NULL, NULL, NULL},
      {0, NULL, "a", "w", NULL, NULL, "limit reached on type Namespace for key a"},
      {0, NULL, "b", "u", NULL, NULL, NULL},
      {0, NULL, "b", "u", NULL, NULL, NULL},
      {0, NULL, "b", "u", NULL, NULL, "limit reached on type Namespace for key b"},
      {0, NULL, "", "u", NULL, NULL, NULL},
      {0, NULL, "", "u", NULL, NULL, NULL},
      {0, NULL, "", "u", NULL, NULL, "limit reached on type Namespace for key "},
      {SEC / 2 - 1, NULL, "a", "u", NULL, NULL, "limit reached on type Namespace for key a"},
      {SEC / 2, NULL, "a", "u", NULL, NULL, NULL},
      {SEC / 2, NULL, "a", "u", NULL, NULL, "limit reached on type Namespace for key a"},
      {SEC / 2, NULL, "b", "u", NULL, NULL, NULL},
      {0}}},
    {"User: one bucket per username",
     CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":1}]"),
     {{0, NULL, "a", "alice", NULL, NULL, NULL},
      {0, NULL, "b", "alice", NULL, NULL, "limit reached on type User for key alice"},
      {0, NULL, "a", "bob", NULL, NULL, NULL},
      {0, NULL, "a", "system:serviceaccount:kube-system:x", NULL, NULL, NULL},
      {0, NULL, "a", "system:serviceaccount:kube-system:x", NULL, NULL,
       "limit reached on type User for key system:serviceaccount:kube-system:x"},
      {0, NULL, "a", NULL, NULL, NULL, NULL},
      {0, NULL, "a", NULL, NULL, NULL, "limit reached on type User for key "},
      {SEC, NULL, "c", "alice", NULL, NULL, NULL},
      {SEC, NULL, "c", "bob", NULL, NULL, NULL},
      {SEC, NULL, "c", "bob", NULL, NULL, "limit reached on type User for key bob"},
      {0}}},
    {"SourceAndObject: source and involvedObject of the new object, no separator",
     CONFIG("[{\"type\":\"SourceAndObject\",\"qps\":1,\"burst\":1}]"),
     {{0, NULL, "ns1", "u", EVENT_X, NULL, NULL},
      {0, NULL, "other", "v", EVENT_X, NULL,
       "limit reached on type SourceAndObject for key kubeletnode-1Podns1pod-1uid-1v1"},
      {0, NULL, "ns1", "u", EVENT_Y, NULL, NULL},
      {0, "UPDATE", "ns1", "u", EVENT_X, EVENT_Y,
       "limit reached on type SourceAndObject for key kubeletnode-1Podns1pod-1uid-1v1"},
      {0, "UPDATE", "ns1", "u", EVENT_Y, EVENT_X,
       "limit reached on type SourceAndObject for key kubeletnode-1Podns1pod-2uid-2v1"},
      {0, NULL, "ns1", "u", EVENT_NO_SOURCE, NULL, NULL},
      {0, NULL, "ns1", "u", EVENT_NO_SOURCE, NULL,
       "limit reached on type SourceAndObject for key Podns1pod-1uid-1v1"},
      {0, NULL, "ns1", "u", EVENT_NUL("a"), NULL, NULL},
      {0, NULL, "ns1", "u", EVENT_NUL("b"), NULL, NULL},
      /* the Status message is a C string: it ends at the NUL */
      {0, NULL, "ns1", "u", EVENT_NUL("a"), NULL,
       "limit reached on type SourceAndObject for key kubeletnode-1Podns1p"},
      {SEC, NULL, "ns1", "u", EVENT_X, NULL, NULL},
      {0}}},
    {"UPDATE is charged like CREATE",
     CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":2}]"),
     {{0, "CREATE", "a", "u", NULL, NULL, NULL},
      {0, "UPDATE", "a", "u", NULL, EVENT_X, NULL},
      {0, "UPDATE", "a", "u", NULL, EVENT_X, "limit reached on type Namespace for key a"},
      {0, "CREATE", "a", "u", NULL, NULL, "limit reached on type Namespace for key a"},
      {0}}},
    {"rate.Limiter grants when the wait truncates to 0 ns (qps 3: a token every 333333333.3 ns)",
     CONFIG("[{\"type\":\"Server\",\"qps\":3,\"burst\":1}]"),
     {{0, NULL, "a", "u", NULL, NULL, NULL},
      {333333332, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {333333333, NULL, "a", "u", NULL, NULL, NULL},
      {333333333, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {0}}},
    {"a clock that goes back refills nothing",
     CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1}]"),
     {{10 * SEC, NULL, "a", "u", NULL, NULL, NULL},
      {5 * SEC, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {11 * SEC - 2, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {11 * SEC, NULL, "a", "u", NULL, NULL, NULL},
      {0}}},
    /*
     * Every enforcer is charged, even when another refuses; the refusals are aggregated in the
     * configured order. Namespace first, to show the order is the configuration's.
     */
    {"several limits: all charged, refusals aggregated",
     CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1},{\"type\":\"Server\",\"qps\":1,\"burst\":2},"
            "{\"type\":\"User\",\"qps\":1,\"burst\":3}]"),
     {{0, NULL, "a", "alice", NULL, NULL, NULL},
      {0, NULL, "a", "alice", NULL, NULL, "limit reached on type Namespace for key a"},
      /* the refused request above spent the Server's second token */
      {0, NULL, "b", "bob", NULL, NULL, SERVER_FULL},
      {0, NULL, "a", "alice", NULL, NULL,
       "[limit reached on type Namespace for key a, limit reached on type Server for key ]"},
      /* alice's three tokens went to three requests, two of them refused */
      {0, NULL, "c", "alice", NULL, NULL,
       "[limit reached on type Server for key , limit reached on type User for key alice]"},
      {0, NULL, "a", "alice", NULL, NULL,
       "[limit reached on type Namespace for key a, limit reached on type Server for key , "
       "limit reached on type User for key alice]"},
      {SEC, NULL, "a", "alice", NULL, NULL, NULL},
      {SEC, NULL, "d", "carol", NULL, NULL, SERVER_FULL},
      {0}}},
    {"two limits of one type: the repeated message is reported once",
     CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":1},{\"type\":\"User\",\"qps\":1,\"burst\":5},"
            "{\"type\":\"Server\",\"qps\":1,\"burst\":2}]"),
     {{0, NULL, "a", "u", NULL, NULL, NULL},
      {0, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {0, NULL, "a", "u", NULL, NULL, SERVER_FULL},
      {0}}},
    {"LRU: a hit makes a key recent; an evicted key comes back with a full bucket",
     CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":2}]"),
     {{0, NULL, "a", "u", NULL, NULL, NULL},
      {0, NULL, "b", "u", NULL, NULL, NULL},
      {0, NULL, "a", "u", NULL, NULL, "limit reached on type Namespace for key a"},
      {0, NULL, "c", "u", NULL, NULL, NULL}, /* evicts b, not a */
      {0, NULL, "a", "u", NULL, NULL, "limit reached on type Namespace for key a"},
      {0, NULL, "c", "u", NULL, NULL, "limit reached on type Namespace for key c"},
      {0, NULL, "b", "u", NULL, NULL, NULL}, /* full again; evicts a */
      {0, NULL, "b", "u", NULL, NULL, "limit reached on type Namespace for key b"},
      {0, NULL, "a", "u", NULL, NULL, NULL}, /* full again; evicts c */
      {0, NULL, "c", "u", NULL, NULL, NULL},
      {0}}},
    {"LRU of one",
     CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":1,\"cacheSize\":1}]"),
     {{0, NULL, "a", "x", NULL, NULL, NULL},
      {0, NULL, "a", "x", NULL, NULL, "limit reached on type User for key x"},
      {0, NULL, "a", "y", NULL, NULL, NULL},
      {0, NULL, "a", "x", NULL, NULL, NULL},
      {0, NULL, "a", "x", NULL, NULL, "limit reached on type User for key x"},
      {0}}},
    {"Server ignores cacheSize",
     CONFIG("[{\"type\":\"Server\",\"qps\":1,\"burst\":2,\"cacheSize\":-5}]"),
     {{0, NULL, "a", "x", NULL, NULL, NULL},
      {0, NULL, "b", "y", NULL, NULL, NULL},
      {0, NULL, "c", "z", NULL, NULL, SERVER_FULL},
      {0}}},
};

static void test_scenarios(void **state)
{
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        const scenario_t *sc = &scenarios[i];
        void *st = start(sc->config);

        for (size_t j = 0; sc->steps[j].ns != NULL; j++) {
            const step_t *s = &sc->steps[j];
            pt_request_t r = event(s->op, s->ns, s->user, s->object);
            char what[256];

            r.old_object = s->old_object;
            clock_ns = s->at;
            snprintf(what, sizeof(what), "%s, step %zu", sc->name, j);
            expect(st, &r, s->want, what);
        }
        PLUGIN->free_state(st);
    }
}

/* ---- cache capacity, past the preallocated slots ---- */

typedef struct capacity_case_s {
    const char *config;
    unsigned size;
} capacity_case_t;

static void test_cache_capacity(void **state)
{
    static const capacity_case_t cases[] = {
        {CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1}]"), 4096}, /* kube's default */
        {CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":5000}]"), 5000},
        {CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":10000}]"), 10000},
        {CONFIG("[{\"type\":\"Namespace\",\"qps\":1,\"burst\":1,\"cacheSize\":3}]"), 3},
    };

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        void *st = start(cases[c].config);
        unsigned n = cases[c].size;
        char ns[32];
        char want[96];
        pt_request_t r;

        /* Fill the cache, then refuse every key again: nothing was evicted. */
        for (unsigned pass = 0; pass < 2; pass++) {
            for (unsigned i = 0; i < n; i++) {
                snprintf(ns, sizeof(ns), "ns-%u", i);
                snprintf(want, sizeof(want), "limit reached on type Namespace for key %s", ns);
                r = event(NULL, ns, "u", NULL);
                expect(st, &r, pass == 0 ? NULL : want, "fill");
            }
        }
        /* One more key evicts the least recent, ns-0, which then comes back full and evicts ns-1. */
        r = event(NULL, "new", "u", NULL);
        expect(st, &r, NULL, "new key");
        r = event(NULL, "ns-0", "u", NULL);
        expect(st, &r, NULL, "ns-0 evicted");
        if (n > 2) {
            r = event(NULL, "ns-2", "u", NULL);
            expect(st, &r, "limit reached on type Namespace for key ns-2", "ns-2 still cached");
        }
        r = event(NULL, "ns-1", "u", NULL);
        expect(st, &r, NULL, "ns-1 evicted");
        PLUGIN->free_state(st);
    }
}

/* Long keys and keys that outgrow a reused slot's buffer. */
static void test_key_storage(void **state)
{
    void *st = start(CONFIG("[{\"type\":\"User\",\"qps\":1,\"burst\":1,\"cacheSize\":2}]"));
    char user[3][600];
    char want[700];
    pt_request_t r;

    for (int i = 0; i < 3; i++) {
        memset(user[i], 'a' + i, (size_t)(100 + 200 * i));
        user[i][100 + 200 * i] = '\0';
    }
    r = event(NULL, "a", "s", NULL);
    expect(st, &r, NULL, "short");
    r = event(NULL, "a", "t", NULL);
    expect(st, &r, NULL, "short");
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++) {
            r = event(NULL, "a", user[i], NULL);
            expect(st, &r, NULL, "long key, fresh bucket");
        }
    }
    r = event(NULL, "a", user[2], NULL);
    snprintf(want, sizeof(want), "limit reached on type User for key %s", user[2]);
    expect(st, &r, want, "long key cached");
    /* A key that is a prefix of a cached key is another key. */
    user[2][10] = '\0';
    r = event(NULL, "a", user[2], NULL);
    expect(st, &r, NULL, "prefix of a cached key");
    PLUGIN->free_state(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registration),   cmocka_unit_test(test_config),
        cmocka_unit_test(test_not_limited),    cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_cache_capacity), cmocka_unit_test(test_key_storage),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

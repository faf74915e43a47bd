/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision trace: steps render in order with their outcome, latency, code and reason; the
 * first rejecting step named stays the decider; a NULL trace records nothing; a trace of many
 * long steps is cut to ADM_TRACE_MAX_BYTES and says so, still valid JSON; texts are escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/trace.h"
#include "adm/base/arena.h"
#include "adm/base/json.h"

static adm_review_request_t request(void)
{
    adm_review_request_t req;

    memset(&req, 0, sizeof(req));
    req.uid = "0d5c1c3e-1111-2222-3333-444455556666";
    req.operation_name = "CREATE";
    req.kind.kind = "Pod";
    req.resource.resource = "pods";
    req.sub_resource = "";
    req.namespace_ = "team-a";
    req.name = "web \"1\"";
    return req;
}

static yyjson_doc *parse(const char *json, size_t len)
{
    yyjson_doc *d = yyjson_read(json, len, 0);

    if (d == NULL) {
        fail_msg("not JSON: %.*s", (int)len, json);
    }
    return d;
}

static void test_two_webhooks_and_the_decider(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_trace_t *t = adm_trace_start(a);
    adm_review_request_t req = request();
    adm_review_response_t resp = {.allowed = false, .code = 403, .message = "denied: nope"};
    adm_trace_step_t plugin = {.name = "AlwaysAdmit", .outcome = "allowed", .latency_ns = 1500};
    adm_trace_step_t allow = {.name = "a.example.com",
                              .outcome = "allowed",
                              .latency_ns = 2000000,
                              .webhook = true,
                              .validate = true};
    adm_trace_step_t deny = {.name = "b.example.com",
                             .outcome = "denied",
                             .reason = "denied: nope",
                             .code = 403,
                             .latency_ns = 3000000,
                             .webhook = true,
                             .validate = true};
    yyjson_doc *d;
    yyjson_val *root, *steps, *s;
    const char *json;
    size_t len;

    (void)state;
    assert_non_null(t);
    adm_trace_add(NULL, &plugin); /* no trace: nothing */
    adm_trace_decided_by(NULL, "x");
    adm_trace_add(t, &plugin);
    adm_trace_add(t, &allow);
    adm_trace_add(t, &deny);
    adm_trace_decided_by(t, "b.example.com");
    adm_trace_decided_by(t, "ValidatingAdmissionWebhook"); /* the first name wins */
    json = adm_trace_render(t, &req, "validate", &resp, 5000000, &len);
    assert_non_null(json);
    d = parse(json, len);
    root = yyjson_doc_get_root(d);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "uid")), req.uid);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "endpoint")), "validate");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "name")), "web \"1\"");
    assert_false(yyjson_get_bool(yyjson_obj_get(root, "allowed")));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(root, "code")), 403);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "decidedBy")), "b.example.com");
    assert_null(yyjson_obj_get(root, "truncated"));
    steps = yyjson_obj_get(root, "steps");
    assert_int_equal(yyjson_arr_size(steps), 3);
    s = yyjson_arr_get(steps, 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "kind")), "plugin");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "phase")), "admit");
    s = yyjson_arr_get(steps, 1);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "name")), "a.example.com");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "kind")), "webhook");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "outcome")), "allowed");
    assert_null(yyjson_obj_get(s, "code"));
    assert_true(yyjson_get_real(yyjson_obj_get(s, "latencySeconds")) == 0.002);
    s = yyjson_arr_get(steps, 2);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "outcome")), "denied");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(s, "code")), 403);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "reason")), "denied: nope");
    yyjson_doc_free(d);
    adm_arena_destroy(a);
}

/* Latencies are written as "%.9f" writes ns / 1e9: whole seconds, a dot, nine digits. */
static void test_latency_digits(void **state)
{
    static const uint64_t durations[] = {
        0,          1,          999,         1000,           123456789,        999999999,
        1000000000, 1000000001, 12345678901, 86400000000000, 4503599627370495u};
    adm_review_request_t req = request();
    adm_review_response_t resp = {.allowed = true};

    (void)state;
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        adm_arena_t *a = adm_arena_create(4096);
        adm_trace_t *t = adm_trace_start(a);
        adm_trace_step_t step = {.name = "AlwaysAdmit", .outcome = "allowed", .latency_ns = durations[i]};
        char want[64];
        const char *json;
        size_t len;

        adm_trace_add(t, &step);
        json = adm_trace_render(t, &req, "validate", &resp, durations[i], &len);
        assert_non_null(json);
        snprintf(want, sizeof(want), "\"latencySeconds\":%.9f}", (double)durations[i] / 1e9);
        /* the step's, then the request's after the steps */
        assert_non_null(strstr(json, want));
        snprintf(want, sizeof(want), "\"latencySeconds\":%.9f,", (double)durations[i] / 1e9);
        assert_non_null(strstr(json, want));
        adm_arena_destroy(a);
    }
}

static void test_long_traces_are_cut(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_trace_t *t = adm_trace_start(a);
    adm_review_request_t req = request();
    adm_review_response_t resp = {.allowed = true};
    char *reason = malloc(20000), *message = malloc(100000);
    yyjson_doc *d;
    const char *json;
    size_t len;

    (void)state;
    memset(reason, 'r', 19999);
    reason[19999] = '\0';
    reason[10] = '\x01'; /* a control character is escaped */
    for (int i = 0; i < 500; i++) {
        adm_trace_step_t step = {
            .name = "slow.example.com", .outcome = "failed-open", .reason = reason, .webhook = true};

        adm_trace_add(t, &step);
    }
    json = adm_trace_render(t, &req, "mutate", &resp, 1, &len);
    assert_non_null(json);
    assert_true(len <= ADM_TRACE_MAX_BYTES);
    d = parse(json, len);
    assert_true(yyjson_get_bool(yyjson_obj_get(yyjson_doc_get_root(d), "truncated")));
    assert_true(yyjson_arr_size(yyjson_obj_get(yyjson_doc_get_root(d), "steps")) > 0);
    yyjson_doc_free(d);

    /* a huge rejection message: the head is cut short, the result is still a bounded, valid object */
    memset(message, 'm', 99999);
    message[99999] = '\0';
    resp.allowed = false;
    resp.code = 500;
    resp.message = message;
    req.name = message;
    req.namespace_ = message;
    req.kind.kind = message;
    json = adm_trace_render(t, &req, "mutate", &resp, 1, &len);
    assert_non_null(json);
    assert_true(len <= ADM_TRACE_MAX_BYTES);
    d = parse(json, len);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(yyjson_doc_get_root(d), "code")), 500);
    yyjson_doc_free(d);
    free(reason);
    free(message);
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_webhooks_and_the_decider),
        cmocka_unit_test(test_latency_digits),
        cmocka_unit_test(test_long_traces_are_cut),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

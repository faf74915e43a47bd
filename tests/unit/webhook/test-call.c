/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a downstream webhook's answer (call.c) without a network: the call failures whose text
 * names a JSON type take Go's words for it (a body that is not an object, a patch that is not a
 * string, a decoded patch that is not an array), next to an allowed answer, a patch and a denial.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../../src/webhook/webhooks_internal.h"
#include "adm/base/arena.h"

#define UID "4a9c2e8f-6b1d-4f3a-8e7c-2d5b9a1f0c36"
#define ANSWER(response)                                                                                     \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":" response "}"
#define TYPE_META_ERROR(type)                                                                                \
    "failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal " type      \
    " into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "  \
    "\"json:\\\"kind,omitempty\\\"\" }"

static void interpret(adm_arena_t *a, adm_webhook_type_t type, const char *body, adm_hook_result_t *r)
{
    adm_webhook_t wh = {.name = "hook.example.com", .type = type};
    adm_call_result_t res = {.error = ADM_CALL_OK, .status = 200, .content_type = "application/json"};

    res.body = (const uint8_t *)body;
    res.body_len = strlen(body);
    adm__hook_interpret(a, &wh, ADM_REVIEW_V1, UID, &res, r);
}

static void test_type_words(void **state)
{
    static const struct {
        adm_webhook_type_t type;
        const char *body;
        const char *reason;
    } cases[] = {
        {ADM_WEBHOOK_VALIDATING, "[1]", TYPE_META_ERROR("array")},
        {ADM_WEBHOOK_VALIDATING, "\"text\"", TYPE_META_ERROR("string")},
        {ADM_WEBHOOK_VALIDATING, "12", TYPE_META_ERROR("number")},
        {ADM_WEBHOOK_VALIDATING, "true", TYPE_META_ERROR("bool")},
        {ADM_WEBHOOK_MUTATING, ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patch\":[]}"),
         "failed to call webhook: json: cannot unmarshal array into Go struct field "
         "AdmissionResponse.response.patch of type []uint8"},
        {ADM_WEBHOOK_MUTATING, ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patch\":{}}"),
         "failed to call webhook: json: cannot unmarshal object into Go struct field "
         "AdmissionResponse.response.patch of type []uint8"},
        {ADM_WEBHOOK_MUTATING, ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patch\":7}"),
         "failed to call webhook: json: cannot unmarshal number into Go struct field "
         "AdmissionResponse.response.patch of type []uint8"},
        {ADM_WEBHOOK_MUTATING, ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patch\":false}"),
         "failed to call webhook: json: cannot unmarshal bool into Go struct field "
         "AdmissionResponse.response.patch of type []uint8"},
        /* base64 of {} , "x" and 1 */
        {ADM_WEBHOOK_MUTATING,
         ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"e30=\"}"),
         "received undecodable patch in webhook response: json: cannot unmarshal object into Go value of "
         "type "
         "jsonpatch.Patch"},
        {ADM_WEBHOOK_MUTATING,
         ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"Ingi\"}"),
         "received undecodable patch in webhook response: json: cannot unmarshal string into Go value of "
         "type "
         "jsonpatch.Patch"},
        {ADM_WEBHOOK_MUTATING,
         ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"MQ==\"}"),
         "received undecodable patch in webhook response: json: cannot unmarshal number into Go value of "
         "type "
         "jsonpatch.Patch"},
    };
    adm_arena_t *a = adm_arena_create(4096);
    adm_hook_result_t r;

    assert_non_null(a);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        interpret(a, cases[i].type, cases[i].body, &r);
        assert_int_equal(r.outcome, ADM_HOOK_FAILED);
        assert_string_equal(r.reason, cases[i].reason);
    }
    adm_arena_destroy(a);
}

static void test_answers(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_hook_result_t r;

    assert_non_null(a);
    interpret(a, ADM_WEBHOOK_VALIDATING, ANSWER("{\"uid\":\"" UID "\",\"allowed\":true}"), &r);
    assert_int_equal(r.outcome, ADM_HOOK_ALLOWED);
    assert_null(r.patch);

    /* base64 of [{"op":"add","path":"/a","value":1}] */
    interpret(a, ADM_WEBHOOK_MUTATING,
              ANSWER("{\"uid\":\"" UID "\",\"allowed\":true,\"patchType\":\"JSONPatch\","
                     "\"patch\":\"W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d\"}"),
              &r);
    assert_int_equal(r.outcome, ADM_HOOK_ALLOWED);
    assert_int_equal(yyjson_arr_size(r.patch), 1);
    assert_string_equal(r.patch_type, "JSONPatch");

    interpret(a, ADM_WEBHOOK_VALIDATING,
              ANSWER("{\"uid\":\"" UID "\",\"allowed\":false,\"status\":{\"code\":403,\"message\":\"no\"}}"),
              &r);
    assert_int_equal(r.outcome, ADM_HOOK_DENIED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message, "admission webhook \"hook.example.com\" denied the request: no");

    interpret(a, ADM_WEBHOOK_VALIDATING, ANSWER("{\"uid\":\"other\",\"allowed\":true}"), &r);
    assert_int_equal(r.outcome, ADM_HOOK_FAILED);
    assert_string_equal(r.reason, "received invalid webhook response: expected response.uid=\"" UID
                                  "\", got \"other\"");
    adm_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_words),
        cmocka_unit_test(test_answers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AdmissionReview codec: every AdmissionRequest field in v1 and v1beta1, the defaults of absent
 * fields, each class of malformed input with its exact message, the depth guard, the fixtures,
 * and the encoder (exact bytes of the common answers, every response field parsed back, string
 * escaping and UTF-8 repair, base64 round trips), and the request sent downstream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#define HEAD_V1 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
#define REQ_V1(members) HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"," members "}}"

static adm_arena_t *arena;

static int setup(void **state)
{
    arena = adm_arena_create(16384);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

static int decode_n(const char *body, size_t len, adm_review_request_t *r, const char **problem)
{
    adm_arena_reset(arena);
    return adm_review_decode(arena, body, len, r, problem);
}

static int decode(const char *body, adm_review_request_t *r, const char **problem)
{
    return decode_n(body, strlen(body), r, problem);
}

/* ---- decoding ---- */

#define FULL_REQUEST                                                                                         \
    "\"request\":{"                                                                                          \
    "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","                                                      \
    "\"kind\":{\"group\":\"autoscaling\",\"version\":\"v1\",\"kind\":\"Scale\"},"                            \
    "\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"deployments\"},"                     \
    "\"subResource\":\"scale\","                                                                             \
    "\"requestKind\":{\"group\":\"autoscaling\",\"version\":\"v1beta1\",\"kind\":\"ScaleB\"},"               \
    "\"requestResource\":{\"group\":\"extensions\",\"version\":\"v1beta1\","                                 \
    "\"resource\":\"deploymentsb\"},"                                                                        \
    "\"requestSubResource\":\"scaleb\","                                                                     \
    "\"name\":\"my-deployment\",\"namespace\":\"my-namespace\",\"operation\":\"UPDATE\","                    \
    "\"userInfo\":{\"username\":\"admin\",\"uid\":\"014fbff9a07c\","                                         \
    "\"groups\":[\"system:authenticated\",\"my-admin-group\"],"                                              \
    "\"extra\":{\"some-key\":[\"some-value1\",\"some-value2\"]}},"                                           \
    "\"object\":{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\"},"                                     \
    "\"oldObject\":{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\","                                   \
    "\"spec\":{\"replicas\":1}},"                                                                            \
    "\"options\":{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"UpdateOptions\"},"                            \
    "\"dryRun\":true,\"unknownField\":[1,2,3]}}"

static void test_decode_every_field(void **state)
{
    static const struct {
        const char *body;
        adm_review_version_t version;
    } cases[] = {
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"," FULL_REQUEST, ADM_REVIEW_V1},
        {"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\"," FULL_REQUEST,
         ADM_REVIEW_V1BETA1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_review_request_t r;
        const char *problem = NULL;

        assert_int_equal(decode(cases[i].body, &r, &problem), 0);
        assert_null(problem);
        assert_int_equal(r.version, cases[i].version);
        assert_non_null(r.doc);
        assert_string_equal(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
        assert_string_equal(r.kind.group, "autoscaling");
        assert_string_equal(r.kind.version, "v1");
        assert_string_equal(r.kind.kind, "Scale");
        assert_string_equal(r.resource.group, "apps");
        assert_string_equal(r.resource.version, "v1");
        assert_string_equal(r.resource.resource, "deployments");
        assert_string_equal(r.sub_resource, "scale");
        assert_string_equal(r.request_kind.group, "autoscaling");
        assert_string_equal(r.request_kind.version, "v1beta1");
        assert_string_equal(r.request_kind.kind, "ScaleB");
        assert_string_equal(r.request_resource.group, "extensions");
        assert_string_equal(r.request_resource.version, "v1beta1");
        assert_string_equal(r.request_resource.resource, "deploymentsb");
        assert_string_equal(r.request_sub_resource, "scaleb");
        assert_string_equal(r.name, "my-deployment");
        assert_string_equal(r.namespace_, "my-namespace");
        assert_int_equal(r.operation, ADM_OP_UPDATE);
        assert_string_equal(r.operation_name, "UPDATE");
        assert_string_equal(r.user_info.username, "admin");
        assert_string_equal(r.user_info.uid, "014fbff9a07c");
        assert_int_equal(r.user_info.ngroups, 2);
        assert_string_equal(r.user_info.groups[0], "system:authenticated");
        assert_string_equal(r.user_info.groups[1], "my-admin-group");
        assert_non_null(r.user_info.extra);
        assert_string_equal(yyjson_get_str(yyjson_ptr_get(r.user_info.extra, "/some-key/1")), "some-value2");
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r.object, "kind")), "Scale");
        assert_int_equal(yyjson_get_int(yyjson_ptr_get(r.old_object, "/spec/replicas")), 1);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r.options, "kind")), "UpdateOptions");
        assert_true(r.dry_run);
    }
}

static void test_decode_operations(void **state)
{
    static const struct {
        const char *body;
        adm_operation_t op;
        const char *name;
    } cases[] = {
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}", ADM_OP_CREATE, "CREATE"},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"UPDATE\"}}", ADM_OP_UPDATE, "UPDATE"},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\"}}", ADM_OP_DELETE, "DELETE"},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CONNECT\"}}", ADM_OP_CONNECT, "CONNECT"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_review_request_t r;
        const char *problem;

        assert_int_equal(decode(cases[i].body, &r, &problem), 0);
        assert_int_equal(r.operation, cases[i].op);
        assert_string_equal(r.operation_name, cases[i].name);
    }
}

static void test_decode_defaults(void **state)
{
    adm_review_request_t r;
    const char *problem;
    const char *minimal = HEAD_V1 "\"request\":{\"uid\":\"u1\",\"operation\":\"CREATE\"}}";
    const char *nulls = "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\","
                        "\"request\":{\"uid\":\"u1\",\"operation\":\"DELETE\","
                        "\"kind\":{\"version\":\"v1\",\"kind\":\"Pod\",\"group\":null},"
                        "\"resource\":{\"version\":\"v1\",\"resource\":\"pods\"},"
                        "\"subResource\":\"status\",\"requestKind\":null,\"requestResource\":null,"
                        "\"requestSubResource\":null,\"name\":null,\"namespace\":null,"
                        "\"userInfo\":{\"username\":null,\"groups\":null,\"extra\":null},"
                        "\"object\":null,\"oldObject\":{\"kind\":\"Pod\"},\"options\":null,"
                        "\"dryRun\":null}}";

    assert_int_equal(decode(minimal, &r, &problem), 0);
    assert_int_equal(r.version, ADM_REVIEW_V1);
    assert_string_equal(r.kind.group, "");
    assert_string_equal(r.kind.version, "");
    assert_string_equal(r.kind.kind, "");
    assert_string_equal(r.resource.resource, "");
    assert_string_equal(r.sub_resource, "");
    assert_string_equal(r.request_kind.kind, "");
    assert_string_equal(r.request_resource.resource, "");
    assert_string_equal(r.request_sub_resource, "");
    assert_string_equal(r.name, "");
    assert_string_equal(r.namespace_, "");
    assert_string_equal(r.user_info.username, "");
    assert_string_equal(r.user_info.uid, "");
    assert_int_equal(r.user_info.ngroups, 0);
    assert_null(r.user_info.extra);
    assert_null(r.object);
    assert_null(r.old_object);
    assert_null(r.options);
    assert_false(r.dry_run);

    assert_int_equal(decode(nulls, &r, &problem), 0);
    assert_int_equal(r.version, ADM_REVIEW_V1BETA1);
    assert_int_equal(r.operation, ADM_OP_DELETE);
    /* requestKind and friends default to the request's own */
    assert_string_equal(r.kind.group, "");
    assert_string_equal(r.request_kind.version, "v1");
    assert_string_equal(r.request_kind.kind, "Pod");
    assert_string_equal(r.request_resource.version, "v1");
    assert_string_equal(r.request_resource.resource, "pods");
    assert_string_equal(r.request_sub_resource, "status");
    assert_string_equal(r.name, "");
    assert_string_equal(r.namespace_, "");
    assert_string_equal(r.user_info.username, "");
    assert_int_equal(r.user_info.ngroups, 0);
    assert_null(r.user_info.extra);
    assert_null(r.object);
    assert_non_null(r.old_object);
    assert_null(r.options);
    assert_false(r.dry_run);
}

static void test_decode_go_like_details(void **state)
{
    adm_review_request_t r;
    const char *problem;
    /* Duplicate members: the last wins. Null group entries read as "". */
    const char *dups = REQ_V1("\"name\":\"first\",\"name\":\"second\",\"uid\":\"u2\","
                              "\"userInfo\":{\"groups\":[\"a\",null,\"c\"]},\"dryRun\":false");
    /* A key with an escaped NUL is not the member of the shorter name. */
    const char *nul_key = REQ_V1("\"name\\u0000x\":5");
    /* Strings with escapes and UTF-8 come back unescaped. */
    const char *escapes = REQ_V1("\"name\":\"a\\\"b\\\\c\\u00e9\\n\xe2\x82\xac\"");

    assert_int_equal(decode(dups, &r, &problem), 0);
    assert_string_equal(r.name, "second");
    assert_string_equal(r.uid, "u2");
    assert_int_equal(r.user_info.ngroups, 3);
    assert_string_equal(r.user_info.groups[1], "");
    assert_string_equal(r.user_info.groups[2], "c");
    assert_false(r.dry_run);

    assert_int_equal(decode(nul_key, &r, &problem), 0);
    assert_string_equal(r.name, "");

    assert_int_equal(decode(escapes, &r, &problem), 0);
    assert_string_equal(r.name, "a\"b\\c\xc3\xa9\n\xe2\x82\xac");
}

static void test_decode_errors(void **state)
{
    static const char *const bad_op =
        "AdmissionReview request.operation must be CREATE, UPDATE, DELETE or CONNECT";
    static const char *const not_review_api =
        "request body is not an AdmissionReview: apiVersion must be admission.k8s.io/v1 or v1beta1";
    static const char *const not_review_kind =
        "request body is not an AdmissionReview: kind must be AdmissionReview";
    static const char *const not_object = "request body is not an AdmissionReview: not a JSON object";
    static const struct {
        const char *body;
        const char *problem;
    } cases[] = {
        /* not JSON, truncated JSON: yyjson's message and the byte position */
        {"", "request body is not valid JSON: input length is 0 at byte 0"},
        {"not json", "request body is not valid JSON: invalid literal, expected a valid literal such as "
                     "'null' at byte 0"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\"",
         "request body is not valid JSON: unexpected end of data at byte 35"},
        {"{\"a\":}", "request body is not valid JSON: unexpected character, expected a valid JSON value "
                     "at byte 5"},
        {"{}x", "request body is not valid JSON: unexpected content after document at byte 2"},
        {"{\"a\":\"\xff\"}", "request body is not valid JSON: invalid UTF-8 encoding in string at "
                             "byte 6"},
        {"{\"a\":1,}", "request body is not valid JSON: *"},
        {"{\"a\":NaN}", "request body is not valid JSON: *"},
        {"// comment\n{}", "request body is not valid JSON: *"},
        /* not an object */
        {"[1,2]", not_object},
        {"\"AdmissionReview\"", not_object},
        {"42", not_object},
        {"null", not_object},
        /* apiVersion, kind */
        {"{\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":\"v1\",\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":\"admission.k8s.io/v1 \",\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":\"admission.k8s.io/v1\\u0000\",\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":7,\"kind\":\"AdmissionReview\"}", not_review_api},
        {"{\"apiVersion\":\"admission.k8s.io/v1\"}", not_review_kind},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\"}", not_review_kind},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":[\"AdmissionReview\"]}", not_review_kind},
        /* request */
        {HEAD_V1 "\"response\":{}}", "AdmissionReview has no request"},
        {HEAD_V1 "\"request\":null}", "AdmissionReview has no request"},
        {HEAD_V1 "\"request\":[]}", "AdmissionReview request must be an object"},
        {HEAD_V1 "\"request\":\"x\"}", "AdmissionReview request must be an object"},
        /* uid */
        {HEAD_V1 "\"request\":{\"operation\":\"CREATE\"}}", "AdmissionReview request has no uid"},
        {HEAD_V1 "\"request\":{\"uid\":null,\"operation\":\"CREATE\"}}",
         "AdmissionReview request has no uid"},
        {HEAD_V1 "\"request\":{\"uid\":\"\",\"operation\":\"CREATE\"}}",
         "AdmissionReview request has no uid"},
        {HEAD_V1 "\"request\":{\"uid\":5,\"operation\":\"CREATE\"}}", "request.uid must be a string"},
        {HEAD_V1 "\"request\":{\"uid\":[\"u\"],\"operation\":\"CREATE\"}}", "request.uid must be a string"},
        {HEAD_V1 "\"request\":{\"uid\":\"a\\u0000b\",\"operation\":\"CREATE\"}}",
         "request.uid must not contain a NUL character"},
        /* operation */
        {HEAD_V1 "\"request\":{\"uid\":\"u\"}}", bad_op},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":null}}", bad_op},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"GET\"}}", bad_op},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"create\"}}", bad_op},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\\u0000\"}}", bad_op},
        {HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":1}}", bad_op},
        /* wrong types of known fields */
        {REQ_V1("\"kind\":\"Pod\""), "request.kind must be an object"},
        {REQ_V1("\"kind\":{\"group\":1}"), "request.kind.group must be a string"},
        {REQ_V1("\"kind\":{\"version\":false}"), "request.kind.version must be a string"},
        {REQ_V1("\"kind\":{\"kind\":{}}"), "request.kind.kind must be a string"},
        {REQ_V1("\"kind\":{\"resource\":1,\"kind\":\"Pod\"}"), NULL}, /* not a GVK member */
        {REQ_V1("\"resource\":[]"), "request.resource must be an object"},
        {REQ_V1("\"resource\":{\"group\":[]}"), "request.resource.group must be a string"},
        {REQ_V1("\"resource\":{\"version\":1.5}"), "request.resource.version must be a string"},
        {REQ_V1("\"resource\":{\"resource\":[]}"), "request.resource.resource must be a string"},
        {REQ_V1("\"subResource\":2"), "request.subResource must be a string"},
        {REQ_V1("\"requestKind\":true"), "request.requestKind must be an object"},
        {REQ_V1("\"requestKind\":{\"group\":1}"), "request.requestKind.group must be a string"},
        {REQ_V1("\"requestKind\":{\"version\":true}"), "request.requestKind.version must be a string"},
        {REQ_V1("\"requestKind\":{\"kind\":2}"), "request.requestKind.kind must be a string"},
        {REQ_V1("\"requestResource\":\"pods\""), "request.requestResource must be an object"},
        {REQ_V1("\"requestResource\":{\"group\":0}"), "request.requestResource.group must be a string"},
        {REQ_V1("\"requestResource\":{\"version\":0}"), "request.requestResource.version must be a string"},
        {REQ_V1("\"requestResource\":{\"resource\":0}"), "request.requestResource.resource must be a string"},
        {REQ_V1("\"requestSubResource\":{}"), "request.requestSubResource must be a string"},
        {REQ_V1("\"name\":1"), "request.name must be a string"},
        {REQ_V1("\"name\":\"a\\u0000b\""), "request.name must not contain a NUL character"},
        {REQ_V1("\"namespace\":{}"), "request.namespace must be a string"},
        {REQ_V1("\"userInfo\":\"bob\""), "request.userInfo must be an object"},
        {REQ_V1("\"userInfo\":{\"username\":1}"), "request.userInfo.username must be a string"},
        {REQ_V1("\"userInfo\":{\"uid\":1}"), "request.userInfo.uid must be a string"},
        {REQ_V1("\"userInfo\":{\"groups\":\"a\"}"), "request.userInfo.groups must be an array of strings"},
        {REQ_V1("\"userInfo\":{\"groups\":[\"a\",1]}"),
         "request.userInfo.groups must be an array of strings"},
        {REQ_V1("\"userInfo\":{\"groups\":[[\"a\"]]}"),
         "request.userInfo.groups must be an array of strings"},
        {REQ_V1("\"userInfo\":{\"extra\":[]}"), "request.userInfo.extra must be an object of string arrays"},
        {REQ_V1("\"userInfo\":{\"extra\":{\"k\":\"v\"}}"),
         "request.userInfo.extra must be an object of string arrays"},
        {REQ_V1("\"userInfo\":{\"extra\":{\"k\":[\"v\",2]}}"),
         "request.userInfo.extra must be an object of string arrays"},
        {REQ_V1("\"dryRun\":\"yes\""), "request.dryRun must be a boolean"},
        {REQ_V1("\"dryRun\":1"), "request.dryRun must be a boolean"},
        /* object, oldObject and options take any JSON */
        {REQ_V1("\"object\":[1],\"oldObject\":\"x\",\"options\":3"), NULL},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_review_request_t r;
        const char *problem = NULL;
        const char *want = cases[i].problem;
        int rc = decode(cases[i].body, &r, &problem);

        if (want == NULL) {
            if (rc != 0) {
                fail_msg("case %zu: rc %d \"%s\", want success", i, rc, problem);
            }
            continue;
        }
        if (rc != ADM_EPARSE || problem == NULL) {
            fail_msg("case %zu: rc %d, want ADM_EPARSE with \"%s\"", i, rc, want);
        }
        if (want[strlen(want) - 1] == '*') {
            if (strncmp(problem, want, strlen(want) - 1) != 0 || strstr(problem, " at byte ") == NULL) {
                fail_msg("case %zu: got \"%s\", want \"%s\"", i, problem, want);
            }
        } else if (strcmp(problem, want) != 0) {
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, problem, want);
        }
    }
}

static void test_decode_respects_length(void **state)
{
    const char *text = HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}";
    size_t len = strlen(text);
    char *buf = malloc(len + 8);
    char *copy = malloc(len + 8);
    adm_review_request_t r;
    const char *problem;

    /* The body is not NUL-terminated and is followed by bytes that are not JSON. */
    memcpy(buf, text, len);
    memcpy(buf + len, "garbage!", 8);
    memcpy(copy, buf, len + 8);
    assert_int_equal(decode_n(buf, len, &r, &problem), 0);
    assert_string_equal(r.uid, "u");
    /* Not in situ: the caller's bytes are left as they were. */
    assert_memory_equal(buf, copy, len + 8);
    /* A body cut short is invalid, whatever follows in memory. */
    assert_int_equal(decode_n(buf, len - 1, &r, &problem), ADM_EPARSE);
    assert_int_equal(decode_n(NULL, 0, &r, &problem), ADM_EPARSE);
    free(buf);
    free(copy);
}

/* A review whose object nests arrays (or objects) so the whole document is depth levels deep. */
static char *nested(size_t depth, bool objects, size_t *len)
{
    const char *head = HEAD_V1 "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":";
    const char *open = objects ? "{\"a\":" : "[";
    size_t inner = depth - 2; /* the review and request objects are two levels */
    size_t nh = strlen(head), no = strlen(open);
    char *s = malloc(nh + inner * (no + 1) + 4);
    char *w = s;

    memcpy(w, head, nh);
    w += nh;
    for (size_t i = 0; i < inner; i++) {
        memcpy(w, open, no);
        w += no;
    }
    if (objects) {
        *w++ = '0';
    }
    for (size_t i = 0; i < inner; i++) {
        *w++ = objects ? '}' : ']';
    }
    memcpy(w, "}}", 3);
    *len = (size_t)(w + 2 - s);
    return s;
}

static void test_depth_limit(void **state)
{
    static const char *const too_deep = "request body nests deeper than 10000 levels";
    adm_review_request_t r;
    const char *problem;
    size_t len;
    char *body;

    for (int objects = 0; objects < 2; objects++) {
        body = nested(ADM_JSON_MAX_DEPTH, objects, &len);
        assert_int_equal(decode_n(body, len, &r, &problem), 0);
        assert_non_null(r.object);
        free(body);
        body = nested(ADM_JSON_MAX_DEPTH + 1, objects, &len);
        assert_int_equal(decode_n(body, len, &r, &problem), ADM_EPARSE);
        assert_string_equal(problem, too_deep);
        free(body);
    }

    /* Brackets inside strings, also after escaped quotes, do not count. */
    {
        const char *head = REQ_V1("\"name\":\"\\\"");
        size_t nh = strlen(head) - 2; /* up to the string's opening, before the closing "}}" */
        size_t n = 30000;

        body = malloc(nh + n + 8);
        memcpy(body, head, nh);
        memset(body + nh, '[', n);
        memcpy(body + nh + n, "\"}}", 4);
        assert_int_equal(decode(body, &r, &problem), 0);
        assert_int_equal(strlen(r.name), n + 1);
        free(body);
    }

    /* 100k unclosed brackets: refused before the parser, no crash. */
    len = 100000;
    body = malloc(len);
    memset(body, '[', len);
    assert_int_equal(decode_n(body, len, &r, &problem), ADM_EPARSE);
    assert_string_equal(problem, too_deep);
    /* Bracket soup under the limit reaches the parser and is invalid JSON. */
    assert_int_equal(decode_n(body, ADM_JSON_MAX_DEPTH, &r, &problem), ADM_EPARSE);
    assert_non_null(strstr(problem, "not valid JSON"));
    free(body);
}

static char *read_fixture(const char *name, size_t *len)
{
    const char *dir = getenv("ADM_FIXTURES_DIR");
    char path[512];
    char *body;
    long n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir != NULL ? dir : "tests/fixtures", name);
    f = fopen(path, "rb");
    if (f == NULL) {
        fail_msg("cannot open %s", path);
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    body = malloc((size_t)n);
    assert_int_equal(fread(body, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return body;
}

static void test_fixtures(void **state)
{
    static const struct {
        const char *file;
        adm_review_version_t version;
        adm_operation_t op;
        const char *kind, *resource, *name;
        bool object, old_object;
        const char *options_kind;
    } cases[] = {
        {"pod-create.v1.review.json", ADM_REVIEW_V1, ADM_OP_CREATE, "Pod", "pods", "web-7d9f8b6c5-x2k4p",
         true, false, "CreateOptions"},
        {"pod-create.v1beta1.review.json", ADM_REVIEW_V1BETA1, ADM_OP_CREATE, "Pod", "pods",
         "web-7d9f8b6c5-x2k4p", true, false, "CreateOptions"},
        {"pod-update.v1.review.json", ADM_REVIEW_V1, ADM_OP_UPDATE, "Pod", "pods", NULL, true, true,
         "UpdateOptions"},
        {"configmap-delete.v1.review.json", ADM_REVIEW_V1, ADM_OP_DELETE, "ConfigMap", "configmaps",
         "web-config", false, true, "DeleteOptions"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_review_request_t r;
        const char *problem = NULL;
        size_t len;
        char *body = read_fixture(cases[i].file, &len);
        const char *out;
        size_t out_len;
        adm_review_response_t allow = {.allowed = true};
        yyjson_doc *doc;

        if (decode_n(body, len, &r, &problem) != 0) {
            fail_msg("%s: %s", cases[i].file, problem);
        }
        assert_int_equal(r.version, cases[i].version);
        assert_int_equal(strlen(r.uid), 36); /* RFC 4122 text form */
        assert_int_equal(r.operation, cases[i].op);
        assert_string_equal(r.kind.group, "");
        assert_string_equal(r.kind.version, "v1");
        assert_string_equal(r.kind.kind, cases[i].kind);
        assert_string_equal(r.resource.resource, cases[i].resource);
        assert_string_equal(r.request_kind.kind, cases[i].kind);
        assert_string_equal(r.request_resource.resource, cases[i].resource);
        assert_string_equal(r.namespace_, "default");
        if (cases[i].name != NULL) {
            assert_string_equal(r.name, cases[i].name);
        }
        assert_true(r.user_info.ngroups > 0);
        assert_true(strlen(r.user_info.username) > 0);
        assert_int_equal(r.object != NULL, cases[i].object);
        assert_int_equal(r.old_object != NULL, cases[i].old_object);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r.options, "kind")), cases[i].options_kind);
        assert_false(r.dry_run);

        /* The answer echoes uid and version. */
        assert_int_equal(adm_review_encode(arena, r.version, r.uid, &allow, &out, &out_len), 0);
        doc = yyjson_read(out, out_len, 0);
        assert_non_null(doc);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_doc_get_root(doc), "apiVersion")),
                            adm_review_api_version(cases[i].version));
        assert_string_equal(yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(doc), "/response/uid")), r.uid);
        yyjson_doc_free(doc);
        free(body);
    }
}

/* ---- encoding ---- */

static const char *encode(adm_review_version_t v, const char *uid, const adm_review_response_t *resp,
                          size_t *len)
{
    const char *out = NULL;

    assert_int_equal(adm_review_encode(arena, v, uid, resp, &out, len), 0);
    assert_non_null(out);
    return out;
}

/* Encodes, checks the output is strict JSON and returns its "response" object. */
static yyjson_val *encode_parse(adm_review_version_t v, const char *uid, const adm_review_response_t *resp,
                                yyjson_doc **doc)
{
    size_t len;
    const char *out = encode(v, uid, resp, &len);
    yyjson_val *root;

    *doc = yyjson_read(out, len, YYJSON_READ_NOFLAG);
    if (*doc == NULL) {
        fail_msg("not valid JSON: %.*s", (int)len, out);
    }
    root = yyjson_doc_get_root(*doc);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "apiVersion")), adm_review_api_version(v));
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "kind")), "AdmissionReview");
    assert_int_equal(yyjson_obj_size(root), 3);
    return yyjson_obj_get(root, "response");
}

static void test_encode_exact(void **state)
{
    static const char *const warnings[] = {"w1", "w2"};
    static const adm_review_annotation_t notes[] = {{"k1", "v1"}, {"k2", "v2"}};
    static const uint8_t patch[] = "[]";
    static const struct {
        adm_review_version_t version;
        adm_review_response_t resp;
        const char *want;
    } cases[] = {
        {ADM_REVIEW_V1,
         {.allowed = true},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":true}}"},
        {ADM_REVIEW_V1BETA1,
         {.allowed = true},
         "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":true}}"},
        {ADM_REVIEW_V1,
         {.allowed = false, .code = 403, .reason = "Forbidden", .message = "no"},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":false,\"status\":{\"metadata\":{},"
         "\"status\":\"Failure\",\"message\":\"no\",\"reason\":\"Forbidden\",\"code\":403}}}"},
        {ADM_REVIEW_V1,
         {.allowed = false},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":false,\"status\":{\"metadata\":{},"
         "\"status\":\"Failure\"}}}"},
        {ADM_REVIEW_V1,
         {.allowed = false, .message = "", .reason = ""},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":false,\"status\":{\"metadata\":{},"
         "\"status\":\"Failure\"}}}"},
        {ADM_REVIEW_V1,
         {.allowed = true, .code = 200},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":true,\"status\":{\"code\":200}}}"},
        {ADM_REVIEW_V1,
         {.allowed = false, .code = -2147483647 - 1},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":false,\"status\":{\"metadata\":{},"
         "\"status\":\"Failure\",\"code\":-2147483648}}}"},
        /* every member, in AdmissionResponse's order */
        {ADM_REVIEW_V1,
         {.allowed = true,
          .patch = patch,
          .patch_len = 2,
          .warnings = warnings,
          .nwarnings = 2,
          .audit_annotations = notes,
          .naudit_annotations = 2},
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"abc\",\"allowed\":true,\"patch\":\"W10=\","
         "\"patchType\":\"JSONPatch\",\"auditAnnotations\":{\"k1\":\"v1\",\"k2\":\"v2\"},"
         "\"warnings\":[\"w1\",\"w2\"]}}"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len;
        const char *out;

        adm_arena_reset(arena);
        out = encode(cases[i].version, "abc", &cases[i].resp, &len);
        if (len != strlen(cases[i].want) || memcmp(out, cases[i].want, len) != 0) {
            fail_msg("case %zu:\n got %.*s\nwant %s", i, (int)len, out, cases[i].want);
        }
    }
}

static void test_encode_deny_everything(void **state)
{
    static const char *const warnings[] = {"first \"warning\"", "second\twarning", ""};
    static const adm_review_annotation_t notes[] = {
        {"admitd.example.key", "va\\lue"},
        {"other", "x\ny"},
    };
    static const uint8_t patch[] = "[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"b\"}]";
    const char *details_json = "{\"name\":\"web-1\",\"kind\":\"pods\",\"causes\":"
                               "[{\"reason\":\"FieldValueInvalid\",\"field\":\"spec\"}]}";
    yyjson_doc *details = yyjson_read(details_json, strlen(details_json), 0);
    const char *uid = "q\"uo\\te\x01\n";
    adm_review_response_t resp = {
        .allowed = false,
        .code = 422,
        .reason = "Invalid",
        .message = "pods \"web-1\" is invalid: spec: Invalid value",
        .details = yyjson_doc_get_root(details),
        .patch = patch,
        .patch_len = sizeof(patch) - 1,
        .warnings = warnings,
        .nwarnings = 3,
        .audit_annotations = notes,
        .naudit_annotations = 2,
    };
    yyjson_doc *doc;
    yyjson_val *r;
    yyjson_val *st;

    adm_arena_reset(arena);
    r = encode_parse(ADM_REVIEW_V1BETA1, uid, &resp, &doc);
    assert_int_equal(yyjson_obj_size(r), 7);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "uid")), uid);
    assert_true(yyjson_is_false(yyjson_obj_get(r, "allowed")));
    st = yyjson_obj_get(r, "status");
    assert_int_equal(yyjson_obj_size(st), 6);
    assert_true(yyjson_is_obj(yyjson_obj_get(st, "metadata")));
    assert_int_equal(yyjson_obj_size(yyjson_obj_get(st, "metadata")), 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "status")), "Failure");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "message")), resp.message);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(st, "reason")), "Invalid");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(st, "code")), 422);
    assert_true(yyjson_equals(yyjson_obj_get(st, "details"), yyjson_doc_get_root(details)));
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "patch")),
                        "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscy9hIiwidmFsdWUiOiJiIn1d");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "patchType")), "JSONPatch");
    assert_int_equal(yyjson_arr_size(yyjson_obj_get(r, "warnings")), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(yyjson_get_str(yyjson_arr_get(yyjson_obj_get(r, "warnings"), i)), warnings[i]);
    }
    assert_int_equal(yyjson_obj_size(yyjson_obj_get(r, "auditAnnotations")), 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(
            yyjson_get_str(yyjson_obj_get(yyjson_obj_get(r, "auditAnnotations"), notes[i].key)),
            notes[i].value);
    }
    yyjson_doc_free(doc);
    yyjson_doc_free(details);
}

static void test_encode_strings(void **state)
{
    /* Every string the caller can hand in must come back as it was (or repaired, below). */
    static const char *const strings[] = {
        "",
        "plain-uid-705ab4f5-6393-11e8-b7cc-42010a800002",
        "\"",
        "\\",
        "\"\\\"\\",
        "a\"b\\c/d",
        ("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16"
         "\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"),
        "\x7f",
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbf \xf4\x8f\xbf\xbf",
        "0123456789abcdef\"0123456789abcdef\\0123456789abcdef\n0123456789",
        "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97\xe7\xac\xa6\xe4\xb8\xb2\xe5\xbe\x88\xe9\x95\xbf",
    };
    static const struct {
        const char *in, *out; /* invalid UTF-8: each bad byte becomes U+FFFD */
    } repaired[] = {
        {"a\xff"
         "b",
         "a\xef\xbf\xbd"
         "b"},
        {"\x80", "\xef\xbf\xbd"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                                 /* overlong '/' */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                 /* UTF-16 surrogate */
        {"\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"},                                 /* truncated */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* > U+10FFFF */
        {"\xf0\x8f\xbf\xbf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong */
        {"abcdefgh\xfe"
         "abcdefgh",
         "abcdefgh\xef\xbf\xbd"
         "abcdefgh"},
    };

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        adm_review_response_t resp = {.allowed = false,
                                      .message = strings[i],
                                      .reason = strings[i],
                                      .warnings = &strings[i],
                                      .nwarnings = 1};
        yyjson_doc *doc;
        yyjson_val *r;

        adm_arena_reset(arena);
        r = encode_parse(ADM_REVIEW_V1, strings[i], &resp, &doc);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "uid")), strings[i]);
        if (strings[i][0] != '\0') {
            assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/status/message")), strings[i]);
            assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/status/reason")), strings[i]);
        }
        assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/warnings/0")), strings[i]);
        yyjson_doc_free(doc);
    }

    /* A special byte at every offset of a string longer than a word: covers the 8-byte copy. */
    for (size_t at = 0; at < 24; at++) {
        static const char specials[] = "\"\\\n\x1f\xc3";
        for (size_t k = 0; k < sizeof(specials) - 1; k++) {
            char s[32];
            yyjson_doc *doc;
            yyjson_val *r;
            adm_review_response_t resp = {.allowed = true};

            memset(s, 'a', 26);
            s[26] = '\0';
            s[at] = specials[k];
            if ((unsigned char)specials[k] == 0xc3) {
                s[at + 1] = (char)0xa9; /* make it a whole é */
            }
            adm_arena_reset(arena);
            r = encode_parse(ADM_REVIEW_V1, s, &resp, &doc);
            assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "uid")), s);
            yyjson_doc_free(doc);
        }
    }

    for (size_t i = 0; i < sizeof(repaired) / sizeof(repaired[0]); i++) {
        adm_review_annotation_t note = {repaired[i].in, repaired[i].in};
        adm_review_response_t resp = {.allowed = true, .audit_annotations = &note, .naudit_annotations = 1};
        yyjson_doc *doc;
        yyjson_val *r;

        adm_arena_reset(arena);
        r = encode_parse(ADM_REVIEW_V1, repaired[i].in, &resp, &doc);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "uid")), repaired[i].out);
        assert_string_equal(
            yyjson_get_str(yyjson_obj_get(yyjson_obj_get(r, "auditAnnotations"), repaired[i].out)),
            repaired[i].out);
        yyjson_doc_free(doc);
    }
}

/* Standard base64 with padding, decoded here independently of the encoder. Returns the length. */
static size_t base64_decode(const char *in, uint8_t *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in);
    size_t o = 0;

    assert_int_equal(n % 4, 0);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int pad = 0;

        for (int j = 0; j < 4; j++) {
            const char *pos;

            if (in[i + j] == '=') {
                pad++;
                v <<= 6;
                continue;
            }
            assert_int_equal(pad, 0);
            pos = strchr(alphabet, in[i + j]);
            assert_non_null(pos);
            v = v << 6 | (uint32_t)(pos - alphabet);
        }
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2) {
            out[o++] = (uint8_t)(v >> 8);
        }
        if (pad < 1) {
            out[o++] = (uint8_t)v;
        }
    }
    return o;
}

static void test_encode_patch_base64(void **state)
{
    static const struct {
        const char *in, *out;
    } vectors[] = {{"f", "Zg=="},           {"fo", "Zm8="},        {"foo", "Zm9v"},
                   {"foob", "Zm9vYg=="},    {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
                   {"\xff\xfe\xfd", "//79"}};
    uint8_t bytes[300];
    uint8_t back[300];

    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        adm_review_response_t resp = {
            .allowed = true, .patch = (const uint8_t *)vectors[i].in, .patch_len = strlen(vectors[i].in)};
        yyjson_doc *doc;
        yyjson_val *r;

        adm_arena_reset(arena);
        r = encode_parse(ADM_REVIEW_V1, "u", &resp, &doc);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "patch")), vectors[i].out);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "patchType")), "JSONPatch");
        yyjson_doc_free(doc);
    }
    /* Round trip of every length up to 300 bytes of every byte value. */
    for (size_t i = 0; i < sizeof(bytes); i++) {
        bytes[i] = (uint8_t)(i * 151 + 7);
    }
    for (size_t n = 1; n <= sizeof(bytes); n++) {
        adm_review_response_t resp = {.allowed = true, .patch = bytes, .patch_len = n};
        yyjson_doc *doc;
        yyjson_val *r;

        adm_arena_reset(arena);
        r = encode_parse(ADM_REVIEW_V1, "u", &resp, &doc);
        assert_int_equal(base64_decode(yyjson_get_str(yyjson_obj_get(r, "patch")), back), n);
        assert_memory_equal(back, bytes, n);
        yyjson_doc_free(doc);
    }
    /* Patches in buffers of exactly their length (ASan sees a read past the end, as the
       sixteen-byte steps near the end would make one), of random bytes. */
    for (size_t n = 1; n <= 100; n++) {
        uint8_t *exact = malloc(n);
        uint32_t seed = (uint32_t)n * 2654435761u;
        adm_review_response_t resp = {.allowed = true, .patch = exact, .patch_len = n};
        yyjson_doc *doc;
        yyjson_val *r;

        assert_non_null(exact);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            exact[i] = (uint8_t)(seed >> 16);
        }
        adm_arena_reset(arena);
        r = encode_parse(ADM_REVIEW_V1, "u", &resp, &doc);
        assert_int_equal(strlen(yyjson_get_str(yyjson_obj_get(r, "patch"))), (n + 2) / 3 * 4);
        assert_int_equal(base64_decode(yyjson_get_str(yyjson_obj_get(r, "patch")), back), n);
        assert_memory_equal(back, exact, n);
        yyjson_doc_free(doc);
        free(exact);
    }
    /* No patch: neither member. */
    {
        adm_review_response_t resp = {.allowed = true, .patch = bytes, .patch_len = 0};
        yyjson_doc *doc;
        yyjson_val *r = encode_parse(ADM_REVIEW_V1, "u", &resp, &doc);

        assert_null(yyjson_obj_get(r, "patch"));
        assert_null(yyjson_obj_get(r, "patchType"));
        yyjson_doc_free(doc);
    }
}

static void test_encode_details_repaired(void **state)
{
    /* A mutable document can hold strings that are not UTF-8; the answer stays valid JSON. */
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *obj = yyjson_mut_obj(m);
    yyjson_doc *details;
    adm_review_response_t resp = {.allowed = false, .code = 400};
    yyjson_doc *doc;
    yyjson_val *r;

    yyjson_mut_doc_set_root(m, obj);
    yyjson_mut_obj_add_strn(m, obj, "name", "bad\xff", 4);
    yyjson_mut_obj_add_str(m, obj, "kind", "caf\xc3\xa9");
    details = yyjson_mut_doc_imut_copy(m, NULL);
    resp.details = yyjson_doc_get_root(details);
    adm_arena_reset(arena);
    r = encode_parse(ADM_REVIEW_V1, "u", &resp, &doc);
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/status/details/name")), "bad\xef\xbf\xbd");
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/status/details/kind")), "caf\xc3\xa9");
    yyjson_doc_free(doc);
    yyjson_doc_free(details);
    yyjson_mut_doc_free(m);
}

static void test_encode_large(void **state)
{
    /* Long strings and many warnings: the size bound holds and the arena grows as needed. */
    size_t n = 200000;
    char *big = malloc(n + 1);
    const char *warnings[64];
    adm_review_response_t resp = {.allowed = false, .code = 500, .warnings = warnings, .nwarnings = 64};
    yyjson_doc *doc;
    yyjson_val *r;

    for (size_t i = 0; i < n; i++) {
        big[i] = (char)(1 + i % 31); /* control bytes: the worst case of six bytes each */
    }
    big[n] = '\0';
    resp.message = big;
    for (size_t i = 0; i < 64; i++) {
        warnings[i] = big + i * 1000;
    }
    adm_arena_reset(arena);
    r = encode_parse(ADM_REVIEW_V1, big, &resp, &doc);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "uid")), big);
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/status/message")), big);
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(r, "/warnings/63")), big + 63000);
    yyjson_doc_free(doc);
    free(big);
}

static void test_api_version(void **state)
{
    assert_string_equal(adm_review_api_version(ADM_REVIEW_V1), "admission.k8s.io/v1");
    assert_string_equal(adm_review_api_version(ADM_REVIEW_V1BETA1), "admission.k8s.io/v1beta1");
}

/* ---- the request sent downstream ---- */

static void test_encode_request(void **state)
{
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"from-the-apiserver\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        "\"operation\":\"CREATE\",\"object\":{\"a\":1},\"dryRun\":false,\"x-unknown\":[1,\"\\u00e9\"],"
        "\"namespace\":\"ns\"}}";
    adm_review_request_t r;
    const char *problem, *out;
    size_t len, uid_off;
    yyjson_doc *other;

    assert_int_equal(decode(body, &r, &problem), 0);
    /* v1: members as received, in their order, minus uid/object/dryRun, which come where noted. */
    assert_int_equal(adm_review_encode_request(arena, &r, r.object, ADM_REVIEW_V1, &out, &len, &uid_off), 0);
    assert_string_equal(
        out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
             "\"uid\":\"00000000-0000-4000-8000-000000000000\","
             "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\","
             "\"x-unknown\":[1,\"\xc3\xa9\"],\"namespace\":\"ns\",\"object\":{\"a\":1},"
             "\"dryRun\":false}}");
    assert_int_equal(len, strlen(out));
    assert_memory_equal(out + uid_off, ADM_REVIEW_UID_PLACEHOLDER, ADM_REVIEW_UID_LEN);
    assert_int_equal(out[uid_off + ADM_REVIEW_UID_LEN], '"');

    /* v1beta1, another object (the mutated one), none at all, and a dry run. */
    other = yyjson_read("[true]", 6, 0);
    assert_non_null(other);
    assert_int_equal(adm_review_encode_request(arena, &r, yyjson_doc_get_root(other), ADM_REVIEW_V1BETA1,
                                               &out, &len, &uid_off),
                     0);
    assert_non_null(strstr(out, "\"apiVersion\":\"admission.k8s.io/v1beta1\""));
    assert_non_null(strstr(out, ",\"object\":[true],\"dryRun\":false}}"));
    assert_memory_equal(out + uid_off, ADM_REVIEW_UID_PLACEHOLDER, ADM_REVIEW_UID_LEN);
    yyjson_doc_free(other);
    r.dry_run = true;
    assert_int_equal(adm_review_encode_request(arena, &r, NULL, ADM_REVIEW_V1, &out, &len, &uid_off), 0);
    assert_non_null(strstr(out, ",\"object\":null,\"dryRun\":true}}"));
}

/* Every member kube-apiserver sends fits; a request padded past what the encoder holds is refused. */
static void test_encode_request_members(void **state)
{
    char body[4096];
    adm_review_request_t r;
    const char *problem, *out;
    size_t len, uid_off;
    yyjson_doc *doc;

    /* every member kube-apiserver sends, and one unknown member besides */
    assert_int_equal(decode(HEAD_V1 FULL_REQUEST, &r, &problem), 0);
    assert_int_equal(adm_review_encode_request(arena, &r, r.object, ADM_REVIEW_V1, &out, &len, &uid_off), 0);
    doc = yyjson_read(out, len, 0);
    assert_non_null(doc);
    assert_int_equal(yyjson_obj_size(yyjson_obj_get(yyjson_doc_get_root(doc), "request")), 16);
    yyjson_doc_free(doc);
    for (int extra = 0; extra <= 40; extra++) {
        size_t used = (size_t)snprintf(body, sizeof(body),
                                       "%s\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"", HEAD_V1);
        int rc;

        for (int i = 0; i < extra; i++) {
            used += (size_t)snprintf(body + used, sizeof(body) - used, ",\"m%d\":%d", i, i);
        }
        snprintf(body + used, sizeof(body) - used, "}}");
        assert_int_equal(decode(body, &r, &problem), 0);
        rc = adm_review_encode_request(arena, &r, NULL, ADM_REVIEW_V1, &out, &len, &uid_off);
        /* operation and the padding are copied: 14 members fit in the encoder's pieces */
        assert_int_equal(rc, 1 + extra <= 14 ? 0 : ADM_ENOMEM);
        if (rc == 0) {
            doc = yyjson_read(out, len, 0);
            assert_non_null(doc);
            assert_int_equal(yyjson_obj_size(yyjson_obj_get(yyjson_doc_get_root(doc), "request")),
                             (size_t)extra + 4);
            yyjson_doc_free(doc);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_every_field),
        cmocka_unit_test(test_decode_operations),
        cmocka_unit_test(test_decode_defaults),
        cmocka_unit_test(test_decode_go_like_details),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_decode_respects_length),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_encode_exact),
        cmocka_unit_test(test_encode_deny_everything),
        cmocka_unit_test(test_encode_strings),
        cmocka_unit_test(test_encode_patch_base64),
        cmocka_unit_test(test_encode_details_repaired),
        cmocka_unit_test(test_encode_large),
        cmocka_unit_test(test_api_version),
        cmocka_unit_test(test_encode_request),
        cmocka_unit_test(test_encode_request_members),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

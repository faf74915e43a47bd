/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch: every record of the conformance suite ($ADM_CONFORMANCE_DIR/jsonpatch, default
 * ../shared/conformance) in strict mode, the records whose outcome differs in kube mode with
 * kube's outcome, kube-mode cases from spec/webhook-dispatch.md 3.4, and the diff: for 10,000
 * random pairs of documents, apply(a, diff(a, b)) == b. Depth: equality and copies 200,000 levels
 * deep at the default stack size, and no patch leaves a document deeper than 10,000 levels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

static adm_arena_t *arena;

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

/* Applies patch to doc; returns 0 and the result (heap JSON text in *out) or the error code. */
static int run(yyjson_val *doc, yyjson_val *patch, adm_jsonpatch_mode_t mode, char **out, const char **error)
{
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    int rc;

    yyjson_mut_doc_set_root(m, yyjson_val_mut_copy(m, doc));
    rc = adm_jsonpatch_apply(m, patch, mode, arena, error);
    *out = rc == 0 ? yyjson_mut_write(m, 0, NULL) : NULL;
    yyjson_mut_doc_free(m);
    return rc;
}

static bool same_json(const char *text, yyjson_val *expected)
{
    yyjson_doc *got = yyjson_read(text, strlen(text), 0);
    yyjson_mut_doc *a = yyjson_mut_doc_new(NULL);
    yyjson_mut_doc *b = yyjson_mut_doc_new(NULL);
    bool same =
        yyjson_mut_equals(yyjson_val_mut_copy(a, yyjson_doc_get_root(got)), yyjson_val_mut_copy(b, expected));

    yyjson_doc_free(got);
    yyjson_mut_doc_free(a);
    yyjson_mut_doc_free(b);
    return same;
}

/*
 * Records whose outcome in kube mode (json-patch v4) differs from RFC 6902, by comment:
 * v4 reads array indices with strconv.Atoi and counts negative ones from the end; its findObject
 * finds no container for the path "" (the whole document cannot be replaced); a missing "value"
 * is JSON null to add and replace, and so is the copy of a missing member.
 */
static const struct {
    const char *comment;
    const char *patch_json; /* to tell records with the same (or no) comment apart */
    bool kube_succeeds;
} kube_differences[] = {
    {NULL, "[{\"op\":\"add\",\"path\":\"/bar/-1\",\"value\":\"5\"}]", true},
    {"test with bad array number that has leading zeros",
     "[{\"op\":\"test\",\"path\":\"/00\",\"value\":\"foo\"}]", true},
    {"test with bad array number that has leading zeros",
     "[{\"op\":\"test\",\"path\":\"/01\",\"value\":\"bar\"}]", true},
    {"replace object document with array document?", "[{\"op\":\"add\",\"path\":\"\",\"value\":[]}]", false},
    {"replace array document with object document?", "[{\"op\":\"add\",\"path\":\"\",\"value\":{}}]", false},
    {"replace whole document", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"baz\":\"qux\"}}]", false},
    {"replacing the root of the document is possible with add",
     "[{\"op\":\"add\",\"path\":\"\",\"value\":{\"baz\":\"qux\"}}]", false},
    {"missing 'value' parameter to add", "[{\"op\":\"add\",\"path\":\"/-\"}]", true},
    {"missing 'value' parameter to replace", "[{\"op\":\"replace\",\"path\":\"/0\"}]", true},
    {"missing from location to copy", "[{\"op\":\"copy\",\"from\":\"/bar\",\"path\":\"/foo\"}]", true},
};

static int kube_expectation(yyjson_val *record, yyjson_val *patch)
{
    const char *comment = yyjson_get_str(yyjson_obj_get(record, "comment"));
    char *patch_text = yyjson_val_write(patch, 0, NULL);
    int found = -1;

    for (size_t i = 0; i < sizeof(kube_differences) / sizeof(kube_differences[0]); i++) {
        bool comment_ok = kube_differences[i].comment == NULL
                              ? comment == NULL
                              : comment != NULL && strcmp(comment, kube_differences[i].comment) == 0;

        if (comment_ok && strcmp(patch_text, kube_differences[i].patch_json) == 0) {
            found = kube_differences[i].kube_succeeds;
        }
    }
    free(patch_text);
    return found;
}

static void run_suite(const char *file, int *records, int *kube_checked)
{
    const char *dir = getenv("ADM_CONFORMANCE_DIR");
    char path[1024];
    yyjson_doc *suite;
    yyjson_arr_iter it;
    yyjson_val *record;
    size_t index = 0;

    if (dir == NULL || dir[0] == '\0') {
        dir = getenv("ADM_CONFORMANCE_DEFAULT");
    }
    snprintf(path, sizeof(path), "%s/jsonpatch/%s", dir != NULL ? dir : "../shared/conformance", file);
    suite = yyjson_read_file(path, 0, NULL, NULL);
    if (suite == NULL) {
        const char *ci = getenv("CI");

        if (ci != NULL && strcmp(ci, "true") == 0) {
            fail_msg("conformance corpus %s not found (CI=true: it must be there)", path);
        }
        print_message("SKIPPED: conformance corpus %s not found (set ADM_CONFORMANCE_DIR)\n", path);
        skip();
    }
    yyjson_arr_iter_init(yyjson_doc_get_root(suite), &it);
    for (record = yyjson_arr_iter_next(&it); record != NULL; record = yyjson_arr_iter_next(&it)) {
        yyjson_val *doc = yyjson_obj_get(record, "doc");
        yyjson_val *patch = yyjson_obj_get(record, "patch");
        yyjson_val *expected = yyjson_obj_get(record, "expected");
        bool wants_error = yyjson_obj_get(record, "error") != NULL;
        const char *comment = yyjson_get_str(yyjson_obj_get(record, "comment"));
        const char *error = NULL;
        char *out = NULL;
        int rc, kube;

        index++;
        if (yyjson_get_bool(yyjson_obj_get(record, "disabled"))) {
            continue;
        }
        (*records)++;
        adm_arena_reset(arena);
        rc = run(doc, patch, ADM_JSONPATCH_STRICT, &out, &error);
        if (wants_error && rc == 0) {
            fail_msg("%s #%zu (%s): should fail, gave %s", file, index, comment ? comment : "", out);
        }
        if (!wants_error && rc != 0) {
            fail_msg("%s #%zu (%s): failed: %s", file, index, comment ? comment : "", error);
        }
        if (expected != NULL && rc == 0 && !same_json(out, expected)) {
            fail_msg("%s #%zu (%s): got %s", file, index, comment ? comment : "", out);
        }
        free(out);
        /* kube mode: the same outcome, except for the known differences */
        kube = kube_expectation(record, patch);
        rc = run(doc, patch, ADM_JSONPATCH_KUBE, &out, &error);
        if (kube >= 0) {
            (*kube_checked)++;
            if ((rc == 0) != (kube == 1)) {
                fail_msg("%s #%zu (%s) in kube mode: rc %d", file, index, comment ? comment : "", rc);
            }
        } else if ((rc != 0) != wants_error || (expected != NULL && rc == 0 && !same_json(out, expected))) {
            fail_msg("%s #%zu (%s): kube mode differs: rc %d %s", file, index, comment ? comment : "", rc,
                     out != NULL ? out : error);
        }
        free(out);
    }
    yyjson_doc_free(suite);
}

static void test_conformance(void **state)
{
    int records = 0, kube_checked = 0;

    run_suite("tests.json", &records, &kube_checked);
    run_suite("spec_tests.json", &records, &kube_checked);
    print_message("%d conformance records passed; %d checked for kube mode's own outcome\n", records,
                  kube_checked);
    assert_int_equal(records, 95 - 3 + 17 - 1);
    assert_int_equal(kube_checked, 10);
}

static void expect_kube(const char *doc_json, const char *patch_json, const char *want_json)
{
    yyjson_doc *doc = yyjson_read(doc_json, strlen(doc_json), 0);
    yyjson_doc *patch = yyjson_read(patch_json, strlen(patch_json), 0);
    const char *error = NULL;
    char *out = NULL;
    int rc;

    adm_arena_reset(arena);
    rc = run(yyjson_doc_get_root(doc), yyjson_doc_get_root(patch), ADM_JSONPATCH_KUBE, &out, &error);
    if (want_json == NULL) {
        if (rc == 0) {
            fail_msg("%s on %s: should fail, gave %s", patch_json, doc_json, out);
        }
        assert_non_null(error);
    } else if (rc != 0 || strcmp(out, want_json) != 0) {
        fail_msg("%s on %s: got %s (%s), want %s", patch_json, doc_json, out, error, want_json);
    }
    free(out);
    yyjson_doc_free(doc);
    yyjson_doc_free(patch);
}

static void test_kube_mode(void **state)
{
    /* replace of a missing member creates it; of a missing index fails */
    expect_kube("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]", "{\"a\":1,\"b\":2}");
    expect_kube("[1]", "[{\"op\":\"replace\",\"path\":\"/3\",\"value\":2}]", NULL);
    /* negative indices count from the end; for add, -1 means after the last element */
    expect_kube("[1,2,3]", "[{\"op\":\"remove\",\"path\":\"/-1\"}]", "[1,2]");
    expect_kube("[1,2,3]", "[{\"op\":\"replace\",\"path\":\"/-3\",\"value\":0}]", "[0,2,3]");
    expect_kube("[1,2,3]", "[{\"op\":\"add\",\"path\":\"/-1\",\"value\":4}]", "[1,2,3,4]");
    expect_kube("[1,2,3]", "[{\"op\":\"add\",\"path\":\"/-2\",\"value\":4}]", "[1,2,4,3]");
    expect_kube("[1,2,3]", "[{\"op\":\"remove\",\"path\":\"/-4\"}]", NULL);
    /* remove of a missing member, add under a missing parent, unknown op, failed test */
    expect_kube("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", NULL);
    expect_kube("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/x/y\",\"value\":1}]", NULL);
    expect_kube("{\"a\":1}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", NULL);
    expect_kube("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]", NULL);
    /* escapes, "-" on objects, a typical webhook patch */
    expect_kube("{\"metadata\":{\"labels\":{}}}",
                "[{\"op\":\"add\",\"path\":\"/metadata/labels/app.kubernetes.io~1name\",\"value\":\"web\"},"
                "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"a~b\":\"c\"}},"
                "{\"op\":\"copy\",\"from\":\"/metadata/annotations/a~0b\",\"path\":\"/metadata/labels/-\"}]",
                "{\"metadata\":{\"labels\":{\"app.kubernetes.io/"
                "name\":\"web\",\"-\":\"c\"},\"annotations\":{\"a~b\":\"c\"}}}");
}

static void test_error_messages(void **state)
{
    yyjson_doc *doc = yyjson_read("{\"a\":[1]}", 9, 0);
    const char *patch_json =
        "[{\"op\":\"test\",\"path\":\"/a/0\",\"value\":1},{\"op\":\"remove\",\"path\":\"/nope\"}]";
    yyjson_doc *patch = yyjson_read(patch_json, strlen(patch_json), 0);
    const char *error = NULL;
    char *out = NULL;

    assert_int_equal(
        run(yyjson_doc_get_root(doc), yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, &out, &error),
        ADM_EINVAL);
    assert_string_equal(error, "operation 1 (remove /nope): missing value");
    yyjson_doc_free(doc);
    yyjson_doc_free(patch);
}

static int apply_text(const char *doc_json, const char *patch_json, char **out, const char **error);

/* Kube mode's errors are json-patch v4's texts, which kube-apiserver reports as they are. */
static void test_kube_error_texts(void **state)
{
    static const struct {
        const char *patch;
        const char *error;
    } cases[] = {
        {"[{\"op\":\"remove\",\"path\":\"/metadata/labels/x\"}]",
         "error in remove for path: '/metadata/labels/x': Unable to remove nonexistent key: x: missing "
         "value"},
        {"[{\"op\":\"remove\",\"path\":\"/nope/x\"}]",
         "remove operation does not apply: doc is missing path: \"/nope/x\": missing value"},
        {"[{\"op\":\"remove\",\"path\":\"/list/5\"}]",
         "error in remove for path: '/list/5': Unable to access invalid index: 5: invalid index referenced"},
        {"[{\"op\":\"remove\",\"path\":\"/list/x\"}]",
         "error in remove for path: '/list/x': strconv.Atoi: parsing \"x\": invalid syntax"},
        {"[{\"op\":\"remove\"}]", "remove operation failed to decode path: missing value"},
        {"[{\"op\":\"add\",\"path\":\"/nope/x\",\"value\":1}]",
         "add operation does not apply: doc is missing path: \"/nope/x\": missing value"},
        {"[{\"op\":\"add\",\"path\":\"\",\"value\":1}]",
         "add operation does not apply: doc is missing path: \"\": missing value"},
        {"[{\"op\":\"add\",\"path\":\"/list/9\",\"value\":1}]",
         "error in add for path: '/list/9': Unable to access invalid index: 9: invalid index referenced"},
        {"[{\"op\":\"add\",\"path\":\"/list/-9\",\"value\":1}]",
         "error in add for path: '/list/-9': Unable to access invalid index: -9: invalid index referenced"},
        {"[{\"op\":\"add\",\"path\":\"/list/x\",\"value\":1}]",
         "error in add for path: '/list/x': value was not a proper array index: 'x': strconv.Atoi: parsing "
         "\"x\": invalid syntax"},
        {"[{\"op\":\"add\",\"path\":\"/list/99999999999999999999\",\"value\":1}]",
         "error in add for path: '/list/99999999999999999999': value was not a proper array index: "
         "'99999999999999999999': strconv.Atoi: parsing \"99999999999999999999\": value out of range"},
        {"[{\"op\":\"replace\",\"path\":\"/nope/x\",\"value\":1}]",
         "replace operation does not apply: doc is missing path: /nope/x: missing value"},
        {"[{\"op\":\"replace\",\"path\":\"/list/3\",\"value\":1}]",
         "replace operation does not apply: doc is missing key: /list/3: missing value"},
        {"[{\"op\":\"replace\",\"value\":1}]",
         "replace operation failed to decode path: operation missing path field: missing value"},
        {"[{\"op\":\"replace\",\"path\":7,\"value\":1}]",
         "replace operation failed to decode path: json: cannot unmarshal number into Go value of type "
         "string"},
        {"[{\"op\":\"move\",\"from\":\"/nope/x\",\"path\":\"/b\"}]",
         "move operation does not apply: doc is missing from path: /nope/x: missing value"},
        {"[{\"op\":\"move\",\"from\":\"/metadata/x\",\"path\":\"/b\"}]",
         "error in move for path: 'x': Unable to remove nonexistent key: x: missing value"},
        {"[{\"op\":\"move\",\"from\":\"/metadata\",\"path\":\"/metadata/labels\"}]",
         "move operation does not apply: doc is missing destination path: /metadata/labels: missing value"},
        {"[{\"op\":\"move\",\"from\":\"/list/0\",\"path\":\"/list/7\"}]",
         "error in move for path: '/list/7': Unable to access invalid index: 7: invalid index referenced"},
        {"[{\"op\":\"move\",\"path\":\"/b\"}]",
         "move operation failed to decode from: operation, missing from field: missing value"},
        {"[{\"op\":\"copy\",\"from\":\"/nope/x\",\"path\":\"/b\"}]",
         "copy operation does not apply: doc is missing from path: /nope/x: missing value"},
        {"[{\"op\":\"copy\",\"from\":\"/list/4\",\"path\":\"/b\"}]",
         "error in copy for from: '/list/4': Unable to access invalid index: 4: invalid index referenced"},
        {"[{\"op\":\"copy\",\"from\":\"/list/0\",\"path\":\"/nope/x\"}]",
         "copy operation does not apply: doc is missing destination path: /nope/x: missing value"},
        {"[{\"op\":\"copy\",\"from\":\"/list/0\",\"path\":\"/list/8\"}]",
         "error while adding value during copy: Unable to access invalid index: 8: invalid index referenced"},
        {"[{\"op\":\"copy\",\"from\":\"/list/0\"}]", "copy operation failed to decode path: missing value"},
        {"[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"other\"}]",
         "testing value /metadata/name failed: test failed"},
        {"[{\"op\":\"test\",\"path\":\"/nope/x\",\"value\":1}]",
         "test operation does not apply: is missing path: /nope/x: missing value"},
        {"[{\"op\":\"test\",\"path\":\"/list/9\",\"value\":1}]",
         "error in test for path: '/list/9': Unable to access invalid index: 9: invalid index referenced"},
        {"[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", "Unexpected kind: frobnicate"},
        {"[{\"path\":\"/a\"}]", "Unexpected kind: unknown"},
    };
    static const char doc[] = "{\"metadata\":{\"name\":\"web\",\"labels\":{}},\"list\":[1,2]}";

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *error = NULL;
        char *out = NULL;

        if (apply_text(doc, cases[i].patch, &out, &error) != ADM_EINVAL) {
            fail_msg("%s: applied: %s", cases[i].patch, out);
        }
        if (strcmp(error, cases[i].error) != 0) {
            fail_msg("%s:\n  got  %s\n  want %s", cases[i].patch, error, cases[i].error);
        }
    }
}

/* Where v4 differs from RFC 6902 in what succeeds: null for a missing value, ~ kept, text before '/'. */
static void test_kube_v4_outcomes(void **state)
{
    static const struct {
        const char *patch;
        const char *want;
    } cases[] = {
        {"[{\"op\":\"add\",\"path\":\"/a\"}]", "{\"b\":[1],\"a\":null}"},
        {"[{\"op\":\"copy\",\"from\":\"/nope\",\"path\":\"/c\"}]", "{\"b\":[1],\"c\":null}"},
        {"[{\"op\":\"add\",\"path\":\"/a~2b\",\"value\":1}]", "{\"b\":[1],\"a~2b\":1}"},
        {"[{\"op\":\"add\",\"path\":\"x/a\",\"value\":1}]", "{\"b\":[1],\"a\":1}"},
        {"[{\"op\":\"test\",\"path\":\"/nope\",\"value\":null}]", "{\"b\":[1]}"},
        {"[{\"op\":\"add\",\"path\":\"/b/-1\",\"value\":2}]", "{\"b\":[1,2]}"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *error = NULL;
        char *out = NULL;
        yyjson_doc *want = yyjson_read(cases[i].want, strlen(cases[i].want), 0);

        if (apply_text("{\"b\":[1]}", cases[i].patch, &out, &error) != 0) {
            fail_msg("%s: %s", cases[i].patch, error);
        }
        if (!same_json(out, yyjson_doc_get_root(want))) {
            fail_msg("%s: got %s, want %s", cases[i].patch, out, cases[i].want);
        }
        free(out);
        yyjson_doc_free(want);
    }
}

/* ---- depth ---- */

/* Heap text: n arrays (or objects {"a":...}) around leaf; yyjson reads any depth without recursion. */
static char *nested(size_t n, bool objects, const char *leaf)
{
    size_t lo = strlen(leaf), per = objects ? 5 : 1;
    char *s = malloc(n * (per + 1) + lo + 1);
    char *w = s;

    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        memcpy(w, objects ? "{\"a\":" : "[", per);
        w += per;
    }
    memcpy(w, leaf, lo);
    w += lo;
    for (size_t i = 0; i < n; i++) {
        *w++ = objects ? '}' : ']';
    }
    *w = '\0';
    return s;
}

/* Applies a patch text to a document text in kube mode; returns the code, *out the result text. */
static int apply_text(const char *doc_json, const char *patch_json, char **out, const char **error)
{
    yyjson_doc *doc = yyjson_read(doc_json, strlen(doc_json), 0);
    yyjson_doc *patch = yyjson_read(patch_json, strlen(patch_json), 0);
    int rc;

    assert_non_null(doc);
    assert_non_null(patch);
    adm_arena_reset(arena);
    rc = run(yyjson_doc_get_root(doc), yyjson_doc_get_root(patch), ADM_JSONPATCH_KUBE, out, error);
    yyjson_doc_free(doc);
    yyjson_doc_free(patch);
    return rc;
}

/* A "test" of two values 200,000 levels deep: equality walks a worklist, not the C stack. */
static void test_deep_equality(void **state)
{
    char *value = nested(200000, true, "1");
    char *doc = malloc(strlen(value) + 16);
    char *patch = malloc(strlen(value) + 64);
    const char *error = NULL;
    char *out = NULL;

    snprintf(doc, strlen(value) + 16, "{\"v\":%s}", value);
    snprintf(patch, strlen(value) + 64, "[{\"op\":\"test\",\"path\":\"/v\",\"value\":%s}]", value);
    assert_int_equal(apply_text(doc, patch, &out, &error), 0);
    free(out);
    /* the same shape with another leaf: not equal */
    patch[strlen(patch) - 200000 - 3] = '2';
    assert_int_equal(apply_text(doc, patch, &out, &error), ADM_EINVAL);
    assert_non_null(strstr(error, "test failed"));
    free(value);
    free(doc);
    free(patch);
}

/*
 * A patch may not leave the document deeper than kube-apiserver decodes (10,000 levels): a value
 * of depth d put at a path of k tokens reaches k + d.
 */
static void test_patch_depth_limit(void **state)
{
    const char *error = NULL;
    char *out = NULL;
    size_t cap = 2 * 1000 * 1000;
    char *patch = malloc(cap);

    for (int objects = 0; objects < 2; objects++) {
        /* /spec/x: 2 tokens, so a value 9,998 deep makes the object exactly 10,000 deep */
        char *fits = nested(ADM_JSON_MAX_DEPTH - 2, objects, "1");
        char *over = nested(ADM_JSON_MAX_DEPTH - 1, objects, "1");

        snprintf(patch, cap, "[{\"op\":\"add\",\"path\":\"/spec/x\",\"value\":%s}]", fits);
        assert_int_equal(apply_text("{\"spec\":{}}", patch, &out, &error), 0);
        free(out);
        snprintf(patch, cap, "[{\"op\":\"add\",\"path\":\"/spec/x\",\"value\":%s}]", over);
        assert_int_equal(apply_text("{\"spec\":{}}", patch, &out, &error), ADM_ETOOBIG);
        assert_string_equal(error, objects ? "invalid character '{' exceeded max depth"
                                           : "invalid character '[' exceeded max depth");
        /* replace counts the same */
        snprintf(patch, cap, "[{\"op\":\"replace\",\"path\":\"/spec\",\"value\":{\"x\":%s}}]", over);
        assert_int_equal(apply_text("{\"spec\":{}}", patch, &out, &error), ADM_ETOOBIG);
        /* a later operation that removes the deep part leaves a document that decodes */
        snprintf(
            patch, cap,
            "[{\"op\":\"add\",\"path\":\"/spec/x\",\"value\":%s},{\"op\":\"remove\",\"path\":\"/spec/x\"}]",
            over);
        assert_int_equal(apply_text("{\"spec\":{}}", patch, &out, &error), 0);
        assert_string_equal(out, "{\"spec\":{}}");
        free(out);
        free(fits);
        free(over);
    }
    free(patch);
}

/* copy and move take values already in the document deeper: the same limit holds. */
static void test_copy_and_move_depth(void **state)
{
    char *half = nested(6000, false, "1");
    char *doc = malloc(2 * strlen(half) + 32);
    char *patch = malloc(64 * 1024);
    size_t off;
    const char *error = NULL;
    char *out = NULL;

    snprintf(doc, 2 * strlen(half) + 32, "{\"a\":%s,\"b\":%s}", half, half);
    /* into b's innermost array (6,000 levels down): 6,001 + 6,000 > 10,000 */
    for (int op = 0; op < 2; op++) {
        off = (size_t)snprintf(patch, 64 * 1024, "[{\"op\":\"%s\",\"from\":\"/a\",\"path\":\"/b",
                               op == 0 ? "copy" : "move");
        for (int i = 0; i < 5999; i++) {
            off += (size_t)snprintf(patch + off, 64 * 1024 - off, "/0");
        }
        snprintf(patch + off, 64 * 1024 - off, "/-\"}]");
        assert_int_equal(apply_text(doc, patch, &out, &error), ADM_ETOOBIG);
        assert_string_equal(error, "invalid character '[' exceeded max depth");
    }
    /* a shallow copy is fine */
    assert_int_equal(apply_text(doc, "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"}]", &out, &error), 0);
    free(out);
    free(half);
    free(doc);
    free(patch);
}

/* The diff recurses only so far; past that the differing subtree is replaced, and the patch is exact. */
static void test_diff_deep_documents(void **state)
{
    for (size_t depth = 9000; depth <= 200000; depth += 191000) {
        char *ta = nested(depth, depth % 2 == 0, "1");
        char *tb = nested(depth, depth % 2 == 0, "2");
        yyjson_doc *a = yyjson_read(ta, strlen(ta), 0);
        yyjson_doc *b = yyjson_read(tb, strlen(tb), 0);
        yyjson_mut_doc *mb = yyjson_doc_mut_copy(b, NULL);
        const char *diff, *error = NULL;
        size_t len, nops;
        char *out = NULL;
        yyjson_doc *patch;

        adm_arena_reset(arena);
        assert_int_equal(adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(mb), arena, &diff,
                                            &len, &nops),
                         0);
        assert_int_equal(nops, 1);
        assert_non_null(strstr(diff, "\"op\":\"replace\""));
        patch = yyjson_read(diff, len, 0);
        if (depth <= ADM_JSON_MAX_DEPTH) {
            /* apply(a, diff(a, b)) == b, compared as text (the writer is iterative) */
            assert_int_equal(
                run(yyjson_doc_get_root(a), yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, &out, &error),
                0);
            assert_string_equal(out, tb);
            free(out);
        }
        yyjson_doc_free(patch);
        yyjson_mut_doc_free(mb);
        yyjson_doc_free(a);
        yyjson_doc_free(b);
        free(ta);
        free(tb);
    }
}

/* ---- diff ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    /* xorshift64*: deterministic per seed, so a failure can be replayed */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 33) % n;
}

static const char *const keys[] = {"a", "b", "metadata", "with/slash", "with~tilde", "", "-", "0", "x~1y"};

static yyjson_mut_val *random_value(yyjson_mut_doc *d, int depth)
{
    uint32_t kind = rnd(depth > 3 ? 6 : 8);

    switch (kind) {
    case 0: return yyjson_mut_null(d);
    case 1: return yyjson_mut_bool(d, rnd(2));
    case 2: return yyjson_mut_sint(d, (int64_t)rnd(2000) - 1000);
    case 3: return yyjson_mut_real(d, (double)rnd(1000) / 8.0);
    case 4: return yyjson_mut_strcpy(d, keys[rnd(sizeof(keys) / sizeof(keys[0]))]);
    case 5: return yyjson_mut_str(d, "text with \"quotes\"");
    case 6: {
        yyjson_mut_val *arr = yyjson_mut_arr(d);

        for (uint32_t i = rnd(5); i > 0; i--) {
            yyjson_mut_arr_append(arr, random_value(d, depth + 1));
        }
        return arr;
    }
    default: {
        yyjson_mut_val *obj = yyjson_mut_obj(d);

        for (uint32_t i = rnd(5); i > 0; i--) {
            const char *k = keys[rnd(sizeof(keys) / sizeof(keys[0]))];

            yyjson_mut_obj_put(obj, yyjson_mut_strcpy(d, k), random_value(d, depth + 1));
        }
        return obj;
    }
    }
}

/* Changes a few things anywhere in v (a copy of the original), so diffs are small and varied. */
static yyjson_mut_val *mutate(yyjson_mut_doc *d, yyjson_mut_val *v, int depth)
{
    if (rnd(10) == 0 || depth > 6) {
        return random_value(d, depth);
    }
    if (yyjson_mut_is_obj(v)) {
        yyjson_mut_obj_iter it;
        yyjson_mut_val *key;

        yyjson_mut_obj_iter_init(v, &it);
        for (key = yyjson_mut_obj_iter_next(&it); key != NULL; key = yyjson_mut_obj_iter_next(&it)) {
            uint32_t r = rnd(6);

            if (r == 0) {
                yyjson_mut_obj_iter_remove(&it);
            } else if (r == 1) {
                yyjson_mut_val *val = yyjson_mut_obj_iter_get_val(key);

                yyjson_mut_obj_replace(v, key, mutate(d, val, depth + 1));
            }
        }
        if (rnd(3) == 0) {
            yyjson_mut_obj_put(v, yyjson_mut_strcpy(d, keys[rnd(sizeof(keys) / sizeof(keys[0]))]),
                               random_value(d, depth + 1));
        }
    } else if (yyjson_mut_is_arr(v)) {
        size_t n = yyjson_mut_arr_size(v);

        if (n > 0 && rnd(3) == 0) {
            yyjson_mut_arr_remove(v, rnd((uint32_t)n));
            n--;
        }
        if (rnd(3) == 0) {
            yyjson_mut_arr_insert(v, random_value(d, depth + 1), rnd((uint32_t)n + 1));
            n++;
        }
        if (n > 0 && rnd(2) == 0) {
            size_t i = rnd((uint32_t)n);

            yyjson_mut_arr_replace(v, i, mutate(d, yyjson_mut_arr_get(v, i), depth + 1));
        }
    } else if (rnd(2) == 0) {
        return random_value(d, depth);
    }
    return v;
}

/* apply(a, diff(a, b)) == b, and the diff of equal documents is empty. */
static void check_pair(yyjson_doc *a, yyjson_mut_doc *b, uint64_t seed)
{
    const char *patch_text, *error = NULL;
    size_t patch_len, nops;
    yyjson_doc *patch;
    yyjson_mut_doc *work = yyjson_mut_doc_new(NULL);
    yyjson_mut_doc *expect = yyjson_mut_doc_new(NULL);

    adm_arena_reset(arena);
    assert_int_equal(adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(b), arena,
                                        &patch_text, &patch_len, &nops),
                     0);
    patch = yyjson_read(patch_text, patch_len, 0);
    assert_non_null(patch);
    assert_int_equal(yyjson_arr_size(yyjson_doc_get_root(patch)), nops);
    yyjson_mut_doc_set_root(work, yyjson_val_mut_copy(work, yyjson_doc_get_root(a)));
    if (adm_jsonpatch_apply(work, yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, arena, &error) != 0) {
        fail_msg("seed %llu: patch %.*s does not apply: %s", (unsigned long long)seed, (int)patch_len,
                 patch_text, error);
    }
    yyjson_mut_doc_set_root(expect, yyjson_mut_val_mut_copy(expect, yyjson_mut_doc_get_root(b)));
    if (!yyjson_mut_equals(yyjson_mut_doc_get_root(work), yyjson_mut_doc_get_root(expect))) {
        fail_msg("seed %llu: patch %.*s gives %s", (unsigned long long)seed, (int)patch_len, patch_text,
                 yyjson_mut_write(work, 0, NULL));
    }
    yyjson_doc_free(patch);
    yyjson_mut_doc_free(work);
    yyjson_mut_doc_free(expect);
}

static void test_diff_property(void **state)
{
    size_t total_ops = 0;

    for (uint64_t seed = 1; seed <= 10000; seed++) {
        yyjson_mut_doc *gen = yyjson_mut_doc_new(NULL);
        yyjson_mut_doc *b;
        yyjson_doc *a;
        const char *text;
        size_t len, nops;

        rng_state = seed * 0x9E3779B97F4A7C15ULL;
        yyjson_mut_doc_set_root(gen, random_value(gen, 0));
        a = yyjson_mut_doc_imut_copy(gen, NULL);
        b = yyjson_mut_doc_mut_copy(gen, NULL);
        /* half the pairs are close relatives, half are unrelated documents */
        if (seed % 2 == 0) {
            yyjson_mut_doc_set_root(b, mutate(b, yyjson_mut_doc_get_root(b), 0));
        } else {
            yyjson_mut_doc_set_root(b, random_value(b, 0));
        }
        check_pair(a, b, seed);
        adm_arena_reset(arena);
        assert_int_equal(adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(gen), arena,
                                            &text, &len, &nops),
                         0);
        assert_int_equal(nops, 0); /* a document against itself */
        assert_memory_equal(text, "[]", 2);
        total_ops += yyjson_mut_equals(yyjson_mut_doc_get_root(b), yyjson_mut_doc_get_root(gen)) ? 0 : 1;
        yyjson_doc_free(a);
        yyjson_mut_doc_free(b);
        yyjson_mut_doc_free(gen);
    }
    print_message("10000 random pairs: apply(a, diff(a, b)) == b; %zu pairs differed\n", total_ops);
    assert_true(total_ops > 5000);
}

/* The diff of a to b is want, in nops operations; a and b are freed. */
static void assert_diff_frees(yyjson_doc *a, yyjson_mut_doc *b, const char *want, size_t want_nops)
{
    const char *text;
    size_t len, nops;

    adm_arena_reset(arena);
    assert_int_equal(
        adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(b), arena, &text, &len, &nops), 0);
    assert_int_equal(nops, want_nops);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(text, want, len);
    yyjson_doc_free(a);
    yyjson_mut_doc_free(b);
}

static void test_diff_is_small(void **state)
{
    const char *a_json = "{\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\"}},"
                         "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\"},{\"name\":\"b\"}]}}";
    yyjson_doc *a = yyjson_read(a_json, strlen(a_json), 0);
    yyjson_mut_doc *b = yyjson_doc_mut_copy(a, NULL);
    yyjson_mut_val *labels = yyjson_mut_doc_ptr_get(b, "/metadata/labels");
    yyjson_mut_val *containers = yyjson_mut_doc_ptr_get(b, "/spec/containers");
    const char *want = "[{\"op\":\"add\",\"path\":\"/metadata/labels/team~1owner\",\"value\":\"web\"},"
                       "{\"op\":\"replace\",\"path\":\"/spec/containers/0/image\",\"value\":\"x:2\"},"
                       "{\"op\":\"add\",\"path\":\"/spec/containers/2\",\"value\":{\"name\":\"sidecar\"}}]";

    yyjson_mut_obj_add_str(b, labels, "team/owner", "web");
    yyjson_mut_obj_put(yyjson_mut_arr_get(containers, 0), yyjson_mut_str(b, "image"),
                       yyjson_mut_str(b, "x:2"));
    {
        yyjson_mut_val *sidecar = yyjson_mut_obj(b);

        yyjson_mut_obj_add_str(b, sidecar, "name", "sidecar");
        yyjson_mut_arr_append(containers, sidecar);
    }
    assert_diff_frees(a, b, want, 3);
}

/* Keys longer than eight bytes: the path is copied a word at a time, '~' and '/' found wherever they are. */
static void test_diff_escapes_long_keys(void **state)
{
    const char *a_json = "{\"metadata\":{\"annotations\":{}}}";
    yyjson_doc *a = yyjson_read(a_json, strlen(a_json), 0);
    yyjson_mut_doc *b = yyjson_doc_mut_copy(a, NULL);
    yyjson_mut_val *ann = yyjson_mut_doc_ptr_get(b, "/metadata/annotations");
    const char *want =
        "[{\"op\":\"add\",\"path\":\"/metadata/annotations/kubernetes.io~1limit-ranger\",\"value\":\"x\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/abcdefghijklmnop\",\"value\":1},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/abcdefgh~0ijklmnopq~1r\",\"value\":-2},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/~1~1~0~0~1~1~0~0~1\",\"value\":null},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/quoted \\\"key\\\" here\",\"value\":[]}]";

    yyjson_mut_obj_add_str(b, ann, "kubernetes.io/limit-ranger", "x");
    yyjson_mut_obj_add_int(b, ann, "abcdefghijklmnop", 1);
    yyjson_mut_obj_add_int(b, ann, "abcdefgh~ijklmnopq/r", -2);
    yyjson_mut_obj_add_null(b, ann, "//~~//~~/");
    yyjson_mut_obj_add_val(b, ann, "quoted \"key\" here", yyjson_mut_arr(b));
    assert_diff_frees(a, b, want, 5);
}

/*
 * A key goes into the path whole when it holds no '~' and no '/', tested in words (eight bytes,
 * four, or one at a time by its length, the last word overlapping): a '~' or a '/' at any place of
 * a key of any length up to 17 is still escaped.
 */
static void test_diff_escapes_at_every_place(void **state)
{
    for (size_t n = 1; n <= 17; n++) {
        for (size_t at = 0; at < n; at++) {
            for (int tilde = 0; tilde < 2; tilde++) {
                const char *a_json = "{\"o\":{}}";
                yyjson_doc *a = yyjson_read(a_json, strlen(a_json), 0);
                yyjson_mut_doc *b = yyjson_doc_mut_copy(a, NULL);
                char key[18], want[128];
                const char *text;
                size_t len, nops;

                memset(key, 'k', n);
                key[n] = '\0';
                key[at] = tilde ? '~' : '/';
                yyjson_mut_obj_add_int(b, yyjson_mut_obj_get(yyjson_mut_doc_get_root(b), "o"), key, 1);
                snprintf(want, sizeof(want), "[{\"op\":\"add\",\"path\":\"/o/%.*s%s%s\",\"value\":1}]",
                         (int)at, key, tilde ? "~0" : "~1", key + at + 1);
                adm_arena_reset(arena);
                assert_int_equal(adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(b), arena,
                                                    &text, &len, &nops),
                                 0);
                assert_int_equal(nops, 1);
                assert_int_equal(len, strlen(want));
                assert_memory_equal(text, want, len);
                yyjson_doc_free(a);
                yyjson_mut_doc_free(b);
            }
        }
    }
}

/* Large objects diff through a hash index: linear, and the same ops as the small path would give. */
static void test_diff_large_objects(void **state)
{
    yyjson_mut_doc *ma = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *ra = yyjson_mut_obj(ma);
    yyjson_doc *a;
    yyjson_mut_doc *b;
    yyjson_mut_val *rb;
    char key[32];

    for (int i = 0; i < 50000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        yyjson_mut_obj_add(ra, yyjson_mut_strcpy(ma, key), yyjson_mut_sint(ma, i));
    }
    yyjson_mut_doc_set_root(ma, ra);
    a = yyjson_mut_doc_imut_copy(ma, NULL);
    b = yyjson_doc_mut_copy(a, NULL);
    rb = yyjson_mut_doc_get_root(b);
    yyjson_mut_obj_remove_key(rb, "k17");
    yyjson_mut_obj_put(rb, yyjson_mut_str(b, "k40000"), yyjson_mut_str(b, "changed"));
    yyjson_mut_obj_add_str(b, rb, "new", "member");
    check_pair(a, b, 0); /* quadratic lookups would take minutes here */
    {
        const char *text;
        size_t len, nops;

        adm_arena_reset(arena);
        assert_int_equal(adm_jsonpatch_diff(yyjson_doc_get_root(a), rb, arena, &text, &len, &nops), 0);
        assert_int_equal(nops, 3);
    }
    yyjson_doc_free(a);
    yyjson_mut_doc_free(b);
    yyjson_mut_doc_free(ma);
}

/* A key present twice makes paths ambiguous: the object is replaced whole, small or large. */
static void test_diff_duplicate_keys(void **state)
{
    static const char *const docs[] = {
        "{\"o\":{\"x\":1,\"x\":2},\"keep\":true}",
        "{\"o\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"a\":0},\"keep\":"
        "true}",
        /* the same key again after keys of its length and of its length plus 64 */
        "{\"o\":{\"ab\":1,\"cd\":2,\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":3,"
        "\"ab\":4},\"keep\":true}",
        /* the same key again after keys of its length and first byte */
        "{\"o\":{\"ab\":1,\"ac\":2,\"ad\":3,\"ab\":4},\"keep\":true}",
    };
    /* keys alike in length, or in length modulo 64, but none twice: no duplicate */
    const char *unique =
        "{\"o\":{\"ab\":1,\"cd\":2,\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":3,"
        "\"y\":4,\"ef\":5},\"keep\":true}";

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        yyjson_doc *a = yyjson_read(docs[i], strlen(docs[i]), 0);
        yyjson_mut_doc *b = yyjson_doc_mut_copy(a, NULL);
        yyjson_mut_val *o = yyjson_mut_obj_get(yyjson_mut_doc_get_root(b), "o");
        const char *text;
        size_t len, nops;

        yyjson_mut_obj_add_str(b, o, "added", "v");
        adm_arena_reset(arena);
        assert_int_equal(
            adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(b), arena, &text, &len, &nops),
            0);
        assert_int_equal(nops, 1);
        assert_non_null(strstr(text, "\"op\":\"replace\",\"path\":\"/o\""));
        check_pair(a, b, i);
        yyjson_doc_free(a);
        yyjson_mut_doc_free(b);
    }
    {
        yyjson_doc *a = yyjson_read(unique, strlen(unique), 0);
        yyjson_mut_doc *b = yyjson_doc_mut_copy(a, NULL);
        const char *text;
        size_t len, nops;

        yyjson_mut_obj_add_str(b, yyjson_mut_obj_get(yyjson_mut_doc_get_root(b), "o"), "added", "v");
        adm_arena_reset(arena);
        assert_int_equal(
            adm_jsonpatch_diff(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(b), arena, &text, &len, &nops),
            0);
        assert_int_equal(nops, 1);
        assert_non_null(strstr(text, "\"op\":\"add\",\"path\":\"/o/added\""));
        yyjson_doc_free(a);
        yyjson_mut_doc_free(b);
    }
}

/*
 * The flat diff of a changed copy's view, with the view's lineage, gives byte for byte what the
 * plain diff of the copy gives.
 */
static void diff_both_ways(yyjson_val *a, yyjson_mut_val *b, const adm_json_origin_t *o, uint64_t seed)
{
    const char *plain, *fast;
    size_t plain_len, fast_len, plain_ops, fast_ops;
    adm_json_lineage_t lin;
    yyjson_alc alc;
    yyjson_val *view;

    adm_arena_reset(arena);
    adm_json_alc_init(&alc, arena);
    view = adm_json_view_traced(&alc, b, o, &lin);
    assert_non_null(view);
    assert_int_equal(adm_jsonpatch_diff(a, b, arena, &plain, &plain_len, &plain_ops), 0);
    assert_int_equal(adm_jsonpatch_diff_flat(a, view, &lin, arena, &fast, &fast_len, &fast_ops), 0);
    if (plain_ops != fast_ops || plain_len != fast_len || memcmp(plain, fast, plain_len) != 0) {
        fail_msg("seed %llu: the diff of the copy differs:\n plain %.*s\n copy  %.*s",
                 (unsigned long long)seed, (int)plain_len, plain, (int)fast_len, fast);
    }
}

/*
 * adm_jsonpatch_diff_flat, which skips what the view copied from a: for 10,000
 * random documents, copied and then changed as the property test changes them (or left alone),
 * and for documents with a key twice (whose objects the diff replaces whole, changed or not), the
 * patch is the plain diff's, byte for byte.
 */
static void test_diff_of_a_copy(void **state)
{
    static const char *const dups[] = {
        "{\"o\":{\"x\":1,\"x\":2},\"keep\":true}",
        ("{\"o\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"a\":0},\"keep\":"
         "true}"),
        "{\"spec\":{\"list\":[{\"k\":1,\"k\":1}],\"inner\":{\"deep\":{\"y\":1,\"y\":1}}},\"meta\":{\"n\":1}}",
        /* keys alike in length and first byte, none twice, then one twice among them */
        "{\"spec\":{\"inner\":{\"ab\":1,\"ac\":2,\"ad\":{\"ab\":1,\"ac\":2,\"ab\":3}}},\"meta\":{\"n\":1}}",
        /* objects past the masked size (33 keys), inside a member left as copied: one with a key
           twice, one without */
        "{\"spec\":{\"big\":{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":"
        "8,"
        "\"k9\":9,\"k10\":0,\"k11\":1,\"k12\":2,\"k13\":3,\"k14\":4,\"k15\":5,\"k16\":6,\"k17\":7,\"k18\":8,"
        "\"k19\":9,\"k20\":0,\"k21\":1,\"k22\":2,\"k23\":3,\"k24\":4,\"k25\":5,\"k26\":6,\"k27\":7,\"k28\":8,"
        "\"k29\":9,\"k30\":0,\"k31\":1,\"k7\":2,\"in\":{\"x\":1}}},\"meta\":{\"n\":1}}",
        "{\"spec\":{\"big\":{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":"
        "8,"
        "\"k9\":9,\"k10\":0,\"k11\":1,\"k12\":2,\"k13\":3,\"k14\":4,\"k15\":5,\"k16\":6,\"k17\":7,\"k18\":8,"
        "\"k19\":9,\"k20\":0,\"k21\":1,\"k22\":2,\"k23\":3,\"k24\":4,\"k25\":5,\"k26\":6,\"k27\":7,\"k28\":8,"
        "\"k29\":9,\"k30\":0,\"k31\":1,\"k32\":2,\"in\":{\"x\":1,\"x\":2}}},\"meta\":{\"n\":1}}",
    };
    adm_arena_t *docs = adm_arena_create(65536);
    yyjson_alc alc;

    assert_non_null(docs);
    adm_json_alc_init(&alc, docs);
    for (uint64_t seed = 1; seed <= 10000; seed++) {
        yyjson_mut_doc *gen = yyjson_mut_doc_new(NULL);
        yyjson_mut_doc *m;
        yyjson_mut_val *copy;
        adm_json_origin_t o;
        yyjson_doc *a;

        adm_arena_reset(docs);
        rng_state = seed * 0x9E3779B97F4A7C15ULL;
        yyjson_mut_doc_set_root(gen, random_value(gen, 0));
        a = yyjson_mut_doc_imut_copy(gen, &alc);
        m = yyjson_mut_doc_new(&alc);
        copy = adm_json_mut_share_kept(m, yyjson_doc_get_root(a), &o);
        assert_non_null(copy);
        yyjson_mut_doc_set_root(m, seed % 4 == 0 ? copy : mutate(m, copy, 0));
        diff_both_ways(yyjson_doc_get_root(a), yyjson_mut_doc_get_root(m), &o, seed);
        /* and the view of the changed copy, made with the same shortcut, is what a plain view gives */
        {
            const char *plain = yyjson_val_write(adm_json_view(&alc, yyjson_mut_doc_get_root(m)), 0, NULL);
            const char *fast =
                yyjson_val_write(adm_json_view_from(&alc, yyjson_mut_doc_get_root(m), &o), 0, NULL);

            assert_non_null(plain);
            assert_non_null(fast);
            if (strcmp(plain, fast) != 0) {
                fail_msg("seed %llu: view %s, with the shortcut %s", (unsigned long long)seed, plain, fast);
            }
            free((void *)plain);
            free((void *)fast);
        }
        yyjson_mut_doc_free(gen);
    }
    for (size_t i = 0; i < sizeof(dups) / sizeof(dups[0]); i++) {
        for (int change = 0; change < 3; change++) {
            yyjson_read_err err;
            yyjson_doc *a;
            yyjson_mut_doc *m;
            yyjson_mut_val *copy, *root;
            adm_json_origin_t o;

            adm_arena_reset(docs);
            a = adm_json_read(docs, dups[i], strlen(dups[i]), &err);
            m = yyjson_mut_doc_new(&alc);
            copy = adm_json_mut_share_kept(m, yyjson_doc_get_root(a), &o);
            root = copy;
            yyjson_mut_doc_set_root(m, root);
            if (change == 1) {
                yyjson_mut_obj_add_str(m, root, "added", "v");
            } else if (change == 2) {
                yyjson_mut_obj_put(root, yyjson_mut_str(m, "keep"), yyjson_mut_false(m));
            }
            diff_both_ways(yyjson_doc_get_root(a), root, &o, i);
        }
    }
    adm_arena_destroy(docs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_large_objects),
        cmocka_unit_test(test_diff_duplicate_keys),
        cmocka_unit_test(test_conformance),
        cmocka_unit_test(test_kube_mode),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_kube_error_texts),
        cmocka_unit_test(test_kube_v4_outcomes),
        cmocka_unit_test(test_deep_equality),
        cmocka_unit_test(test_patch_depth_limit),
        cmocka_unit_test(test_copy_and_move_depth),
        cmocka_unit_test(test_diff_deep_documents),
        cmocka_unit_test(test_diff_property),
        cmocka_unit_test(test_diff_is_small),
        cmocka_unit_test(test_diff_escapes_long_keys),
        cmocka_unit_test(test_diff_escapes_at_every_place),
        cmocka_unit_test(test_diff_of_a_copy),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch: every record of the conformance suite ($ADM_CONFORMANCE_DIR/jsonpatch, default
 * ../shared/conformance) in strict mode, the records whose outcome differs in kube mode with
 * kube's outcome, and kube-mode cases from spec/webhook-dispatch.md 3.4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/arena.h"
#include "adm/error.h"
#include "adm/jsonpatch.h"

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
    bool same = yyjson_mut_equals(yyjson_val_mut_copy(a, yyjson_doc_get_root(got)), yyjson_val_mut_copy(b, expected));

    yyjson_doc_free(got);
    yyjson_mut_doc_free(a);
    yyjson_mut_doc_free(b);
    return same;
}

/*
 * Records whose outcome in kube mode (json-patch v4) differs from RFC 6902, by comment:
 * v4 reads array indices with strconv.Atoi and counts negative ones from the end.
 */
static const struct {
    const char *comment;
    const char *patch_json; /* to tell records with the same (or no) comment apart */
    bool kube_succeeds;
} kube_differences[] = {
    {NULL, "[{\"op\":\"add\",\"path\":\"/bar/-1\",\"value\":\"5\"}]", true},
    {"test with bad array number that has leading zeros", "[{\"op\":\"test\",\"path\":\"/00\",\"value\":\"foo\"}]", true},
    {"test with bad array number that has leading zeros", "[{\"op\":\"test\",\"path\":\"/01\",\"value\":\"bar\"}]", true},
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
    while ((record = yyjson_arr_iter_next(&it)) != NULL) {
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
    assert_int_equal(kube_checked, 3);
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
                "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"web\",\"-\":\"c\"},\"annotations\":{\"a~b\":\"c\"}}}");
}

static void test_error_messages(void **state)
{
    yyjson_doc *doc = yyjson_read("{\"a\":[1]}", 9, 0);
    const char *patch_json = "[{\"op\":\"test\",\"path\":\"/a/0\",\"value\":1},{\"op\":\"remove\",\"path\":\"/nope\"}]";
    yyjson_doc *patch = yyjson_read(patch_json, strlen(patch_json), 0);
    const char *error = NULL;
    char *out = NULL;

    assert_int_equal(run(yyjson_doc_get_root(doc), yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, &out, &error),
                     ADM_EINVAL);
    assert_string_equal(error, "operation 1 (remove /nope): missing value");
    yyjson_doc_free(doc);
    yyjson_doc_free(patch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance),
        cmocka_unit_test(test_kube_mode),
        cmocka_unit_test(test_error_messages),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

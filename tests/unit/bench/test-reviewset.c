/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Review sets for the load generator: a file or a directory of AdmissionReviews loads in name order,
 * every stamped body still decodes with the stamped uid, uids are distinct v4 UUIDs, and bad inputs
 * are refused naming the file.
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
#include "certgen.h"
#include "reviewset.h"

static const char *fixtures(void)
{
    const char *dir = getenv("ADM_FIXTURES_DIR");

    return dir != NULL ? dir : "tests/fixtures";
}

static int cmp_uid(const void *a, const void *b)
{
    return memcmp(a, b, ADM_UID_LEN);
}

static void test_directory_and_stamps(void **state)
{
    adm_reviewset_t set;
    char err[512];
    adm_arena_t *a = adm_arena_create(65536);
    enum { N = 20000 };
    char(*uids)[ADM_UID_LEN + 1] = malloc(N * sizeof(*uids));

    assert_non_null(uids);
    assert_int_equal(adm_reviewset_load(fixtures(), &set, err, sizeof(err)), 0);
    assert_true(set.n >= 5);
    for (size_t i = 1; i < set.n; i++) {
        assert_true(strcmp(set.bodies[i - 1].name, set.bodies[i].name) < 0);
    }
    for (int seq = 0; seq < N; seq++) {
        adm_review_body_t *b = &set.bodies[(size_t)seq % set.n];
        adm_review_request_t req;
        const char *problem;

        adm_reviewset_stamp(b, 0x1234, (uint64_t)seq, uids[seq]);
        assert_int_equal(uids[seq][14], '4');
        assert_non_null(strchr("89ab", uids[seq][19]));
        if (seq < 200) {
            adm_arena_reset(a);
            assert_int_equal(adm_review_decode(a, b->data, b->len, &req, &problem), 0);
            assert_string_equal(req.uid, uids[seq]);
        }
    }
    qsort(uids, N, sizeof(*uids), cmp_uid);
    for (int i = 1; i < N; i++) {
        assert_true(memcmp(uids[i - 1], uids[i], ADM_UID_LEN) != 0);
    }
    adm_reviewset_free(&set);
    adm_arena_destroy(a);
    free(uids);
}

static void test_single_file_and_errors(void **state)
{
    adm_reviewset_t set;
    char err[512], path[512], dir[256], bad[300];
    FILE *f;

    snprintf(path, sizeof(path), "%s/pod-create.v1beta1.review.json", fixtures());
    assert_int_equal(adm_reviewset_load(path, &set, err, sizeof(err)), 0);
    assert_int_equal(set.n, 1);
    adm_reviewset_free(&set);

    assert_int_equal(adm_reviewset_load("/nonexistent/reviews", &set, err, sizeof(err)), ADM_EINVAL);
    assert_string_equal(err, "/nonexistent/reviews: No such file or directory");
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(adm_reviewset_load(dir, &set, err, sizeof(err)), ADM_EINVAL);
    assert_non_null(strstr(err, "no review files in the directory"));
    /* files other than *.json (a README, the generator) are not reviews */
    snprintf(bad, sizeof(bad), "%s/notes.txt", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("not a review", f);
    fclose(f);
    assert_int_equal(adm_reviewset_load(dir, &set, err, sizeof(err)), ADM_EINVAL);
    assert_non_null(strstr(err, "no review files in the directory"));
    remove(bad);
    snprintf(bad, sizeof(bad), "%s/pod.json", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", f);
    fclose(f);
    assert_int_equal(adm_reviewset_load(dir, &set, err, sizeof(err)), ADM_EINVAL);
    assert_non_null(strstr(err, "pod.json: request body is not an AdmissionReview"));
    assert_null(set.bodies);
    remove(bad);
    remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directory_and_stamps),
        cmocka_unit_test(test_single_file_and_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

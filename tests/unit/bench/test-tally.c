/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench's per-thread tallies (bench/loadgen/tally.c) and the report built from them: the
 * merge of N threads' tallies gives the same counts, statuses, min/max/mean and every percentile
 * as one tally that saw every sample; each thread's CPU is reported, and a thread above 90% busy
 * (and only such a thread) gets the warning, in the text and in the JSON.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

#include "report.h"
#include "tally.h"

#define NTHREADS 3

/* rand_r with a fixed seed: a failure reproduces */
static unsigned seed = 17;

static uint64_t next(void)
{
    return (uint64_t)rand_r(&seed);
}

/* One request's outcome into t, as a lane counts it. */
static void count(tally_t *t, outcome_t out, int status, uint64_t latency_ns)
{
    t->sent++;
    t->outcomes[out]++;
    if (out == OUT_HTTP_ERROR) {
        t->http_status[status]++;
    }
    if (out <= OUT_UID_MISMATCH) {
        adm_hist_record(&t->hist, latency_ns);
    }
}

static void test_merge_equals_one_tally(void **state)
{
    static tally_t threads[NTHREADS], all, merged;
    static const double qs[] = {0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1};

    (void)state;
    tally_init(&all);
    tally_init(&merged);
    for (int i = 0; i < NTHREADS; i++) {
        tally_init(&threads[i]);
    }
    /* uneven shares and latency ranges per thread: thread 2 sees the slow tail alone */
    for (int k = 0; k < 90000; k++) {
        int th = k % 7 < 4 ? 0 : k % 7 < 6 ? 1 : 2;
        uint64_t lat = th == 2 ? 50000000 + next() % 200000000 : 100000 + next() % 900000;
        outcome_t out = (outcome_t)(next() % OUT_COUNT);
        int status = out == OUT_HTTP_ERROR ? (next() % 2 ? 503 : 429) : 0;

        count(&threads[th], out, status, lat);
        count(&all, out, status, lat);
        if (k % 5 == 0) {
            threads[th].completed_in_window++;
            all.completed_in_window++;
        }
    }
    threads[1].unfinished = 3;
    all.unfinished = 3;
    for (int i = 0; i < NTHREADS; i++) {
        tally_merge(&merged, &threads[i]);
    }
    assert_int_equal(merged.sent, all.sent);
    assert_memory_equal(merged.outcomes, all.outcomes, sizeof(all.outcomes));
    assert_memory_equal(merged.http_status, all.http_status, sizeof(all.http_status));
    assert_int_equal(merged.http_status[503] + merged.http_status[429], merged.outcomes[OUT_HTTP_ERROR]);
    assert_int_equal(merged.completed_in_window, all.completed_in_window);
    assert_int_equal(merged.unfinished, 3);
    assert_int_equal(tally_errors(&merged), tally_errors(&all));
    assert_memory_equal(merged.hist.counts, all.hist.counts, sizeof(all.hist.counts));
    assert_int_equal(merged.hist.total, all.hist.total);
    assert_int_equal(merged.hist.min_ns, all.hist.min_ns);
    assert_int_equal(merged.hist.max_ns, all.hist.max_ns);
    assert_true(fabsl(merged.hist.sum_ns - all.hist.sum_ns) < 1);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        assert_int_equal(adm_hist_quantile(&merged.hist, qs[i]), adm_hist_quantile(&all.hist, qs[i]));
    }
    /* the tail is thread 2's alone, and the merge keeps it where one tally has it */
    assert_true(adm_hist_quantile(&merged.hist, 0.99) >= 50000000);
    assert_true(adm_hist_quantile(&threads[0].hist, 0.99) < 1000000);
}

static void test_merge_of_empty_threads(void **state)
{
    static tally_t a, b;

    (void)state;
    tally_init(&a);
    tally_init(&b);
    tally_merge(&a, &b);
    assert_int_equal(a.hist.total, 0);
    assert_int_equal(adm_hist_quantile(&a.hist, 0.5), 0);
    count(&b, OUT_ALLOWED, 0, 777);
    tally_merge(&a, &b);
    assert_int_equal(a.hist.min_ns, 777);
    assert_int_equal(a.hist.max_ns, 777);
}

/* Renders r's text and JSON reports into memory. */
static void render(const report_t *r, char **text, yyjson_doc **json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(text, &len);

    assert_non_null(f);
    report_text(r, f);
    assert_int_equal(fclose(f), 0);
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(report_json(r, f), 0);
    *json = yyjson_read(buf, len, 0);
    if (*json == NULL) {
        fprintf(stderr, "not JSON:\n%s\n", buf);
    }
    assert_non_null(*json);
    free(buf);
}

static void test_report_per_thread_cpu_and_busy_warning(void **state)
{
    static tally_t total;
    thread_report_t threads[2] = {
        {.sent = 600, .answered = 600, .usage = {.cpu_ns = 950000000, .wall_ns = 1000000000}},
        {.sent = 400, .answered = 399, .usage = {.cpu_ns = 450000000, .wall_ns = 1000000000}},
    };
    report_t r = {.url = "https://127.0.0.1:1/",
                  .closed = true,
                  .connections = 4,
                  .duration_s = 1,
                  .reviews = "r.json",
                  .nreviews = 1,
                  .tally = &total,
                  .nthreads = 2,
                  .threads = threads,
                  .throughput = 999,
                  .cpu_percent = 140};
    yyjson_doc *d;
    yyjson_val *root, *arr, *warnings;
    char *text;

    (void)state;
    tally_init(&total);
    count(&total, OUT_ALLOWED, 0, 1000);
    render(&r, &text, &d);
    assert_non_null(strstr(text, "client CPU: 140% of one core; busy by thread: 95% 45%\n"));
    assert_non_null(strstr(text, "sent by thread: 600 400\n"));
    assert_non_null(strstr(text, "warning: thread 0 was 95% busy: the figure is the generator's limit, "
                                 "not the server's\n"));
    assert_null(strstr(text, "thread 1 was"));
    root = yyjson_doc_get_root(d);
    arr = yyjson_obj_get(root, "threads");
    assert_int_equal(yyjson_arr_size(arr), 2);
    assert_int_equal(yyjson_get_uint(yyjson_obj_get(yyjson_arr_get(arr, 0), "sent")), 600);
    assert_int_equal(yyjson_get_uint(yyjson_obj_get(yyjson_arr_get(arr, 1), "answered")), 399);
    assert_true(fabs(yyjson_get_real(yyjson_obj_get(yyjson_arr_get(arr, 0), "busy_percent")) - 95) < 0.01);
    assert_true(fabs(yyjson_get_real(yyjson_obj_get(yyjson_arr_get(arr, 1), "cpu_seconds")) - 0.45) < 0.001);
    warnings = yyjson_obj_get(root, "warnings");
    assert_int_equal(yyjson_arr_size(warnings), 1);
    assert_non_null(strstr(yyjson_get_str(yyjson_arr_get(warnings, 0)), "thread 0 was 95% busy"));
    yyjson_doc_free(d);
    free(text);

    /* both at or below 90%: no warning anywhere */
    threads[0].usage.cpu_ns = 900000000;
    render(&r, &text, &d);
    assert_null(strstr(text, "warning"));
    assert_int_equal(yyjson_arr_size(yyjson_obj_get(yyjson_doc_get_root(d), "warnings")), 0);
    yyjson_doc_free(d);
    free(text);

    /* one thread: no per-thread share line, and the warning suggests more threads */
    r.nthreads = 1;
    threads[0].usage.cpu_ns = 990000000;
    render(&r, &text, &d);
    assert_null(strstr(text, "sent by thread"));
    assert_non_null(strstr(text, "busy by thread: 99%\n"));
    assert_non_null(strstr(text, "(try --threads)"));
    yyjson_doc_free(d);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_equals_one_tally),
        cmocka_unit_test(test_merge_of_empty_threads),
        cmocka_unit_test(test_report_per_thread_cpu_and_busy_warning),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

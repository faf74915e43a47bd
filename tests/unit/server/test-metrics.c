/* SPDX-License-Identifier: Apache-2.0 */
/* Metrics: one series per status code, histogram buckets (cumulative on output), exposition format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/server/metrics.h"

static adm_metrics_t metrics;

static const char *render(adm_buf_t *out)
{
    out->len = 0;
    assert_int_equal(adm_metrics_render(&metrics, out), 0);
    adm_buf_append(out, "", 1); /* NUL for strstr */
    return (const char *)out->data;
}

static void test_render(void **state)
{
    adm_buf_t out = ADM_BUF_INIT;
    const char *text;

    int mutate, validate;

    memset(&metrics, 0, sizeof(metrics));
    mutate = adm_metrics_endpoint(&metrics, "mutate");
    validate = adm_metrics_endpoint(&metrics, "validate");
    assert_true(mutate >= 0 && validate >= 0 && mutate != validate);
    adm_metrics_observe(&metrics, (unsigned)validate, 200, 50 * 1000);          /* 50 µs */
    adm_metrics_observe(&metrics, (unsigned)validate, 200, 2 * 1000 * 1000);    /* 2 ms */
    adm_metrics_observe(&metrics, (unsigned)validate, 400, 20ULL * 1000000000); /* 20 s: +Inf only */
    adm_metrics_observe(&metrics, ADM_METRICS_OTHER, 404, 1000);
    metrics.server_connections = 3;
    text = render(&out);
    assert_non_null(strstr(text, "# TYPE admitd_requests_total counter\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"validate\",code=\"200\"} 2\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"validate\",code=\"400\"} 1\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"other\",code=\"404\"} 1\n"));
    assert_non_null(
        strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.0001\"} 1\n"));
    assert_non_null(
        strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.0025\"} 2\n"));
    assert_non_null(
        strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"10\"} 2\n"));
    assert_non_null(
        strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_count{endpoint=\"validate\"} 3\n"));
    assert_null(strstr(text, "endpoint=\"mutate\"")); /* nothing observed, nothing written */
    assert_non_null(strstr(text, "admitd_connections{side=\"server\"} 3\n"));
    adm_buf_free(&out);
}

/* The count of the series {endpoint="admit",code="CODE"}, or -1 when there is no such line. */
static long long admit_count(const char *text, const char *code)
{
    char needle[96];
    const char *p;

    snprintf(needle, sizeof(needle), "admitd_requests_total{endpoint=\"admit\",code=\"%s\"} ", code);
    p = strstr(text, needle);
    return p != NULL ? (long long)strtoull(p + strlen(needle), NULL, 10) : -1;
}

static void test_many_codes(void **state)
{
    adm_buf_t out = ADM_BUF_INIT;
    const char *text;
    char code[16];

    unsigned admit;

    memset(&metrics, 0, sizeof(metrics));
    admit = (unsigned)adm_metrics_endpoint(&metrics, "admit");
    /* 40 distinct codes, code N seen N-399 times: each keeps its own label and its own count */
    for (int c = 400; c < 440; c++) {
        for (int k = 0; k < c - 399; k++) {
            adm_metrics_observe(&metrics, admit, c, 1000);
        }
    }
    /* every valid HTTP code, the bounds included */
    adm_metrics_observe(&metrics, admit, 100, 1000);
    adm_metrics_observe(&metrics, admit, 599, 1000);
    /* anything else is counted, under code="other" */
    adm_metrics_observe(&metrics, admit, 99, 1000);
    adm_metrics_observe(&metrics, admit, 600, 1000);
    adm_metrics_observe(&metrics, admit, 0, 1000);
    adm_metrics_observe(&metrics, admit, -1, 1000);
    text = render(&out);
    for (int c = 400; c < 440; c++) {
        snprintf(code, sizeof(code), "%d", c);
        if (admit_count(text, code) != c - 399) {
            fail_msg("code %d: count %lld, want %d\n%s", c, admit_count(text, code), c - 399, text);
        }
    }
    assert_int_equal(admit_count(text, "100"), 1);
    assert_int_equal(admit_count(text, "599"), 1);
    assert_int_equal(admit_count(text, "other"), 4);
    /* nothing else: no code seen is written, nor any other endpoint */
    assert_int_equal(admit_count(text, "440"), -1);
    assert_int_equal(admit_count(text, "200"), -1);
    assert_null(strstr(text, "endpoint=\"validate\""));
    assert_null(strstr(text, "code=\"99\""));
    assert_null(strstr(text, "code=\"600\""));
    assert_null(strstr(text, "code=\"0\""));
    /* codes ascending, "other" last, so scrapes diff cleanly */
    assert_true(strstr(text, "code=\"100\"") < strstr(text, "code=\"400\""));
    assert_true(strstr(text, "code=\"439\"") < strstr(text, "code=\"599\""));
    assert_true(strstr(text, "code=\"599\"") < strstr(text, "code=\"other\""));
    adm_buf_free(&out);
}

/* Labels come from the routes: added in order, found again by name, "other" always last. */
static void test_endpoint_labels(void **state)
{
    static const char *const names[] = {"l0", "l1", "l2",  "l3",  "l4",  "l5",  "l6",  "l7",
                                        "l8", "l9", "l10", "l11", "l12", "l13", "l14", "l15"};
    adm_buf_t out = ADM_BUF_INIT;
    const char *text;

    memset(&metrics, 0, sizeof(metrics));
    assert_int_equal(adm_metrics_endpoint(&metrics, NULL), ADM_METRICS_OTHER);
    assert_int_equal(adm_metrics_endpoint(&metrics, "other"), ADM_METRICS_OTHER);
    assert_int_equal(adm_metrics_endpoint(&metrics, "validate"), 0);
    assert_int_equal(adm_metrics_endpoint(&metrics, "healthz"), 1);
    assert_int_equal(adm_metrics_endpoint(&metrics, "validate"), 0);
    /* written without escaping, so only characters that never need it */
    assert_int_equal(adm_metrics_endpoint(&metrics, "a\"b"), ADM_EINVAL);
    assert_int_equal(adm_metrics_endpoint(&metrics, ""), ADM_EINVAL);
    assert_int_equal(adm_metrics_endpoint(&metrics, "a b"), ADM_EINVAL);
    adm_metrics_observe(&metrics, ADM_METRICS_OTHER, 404, 1000);
    adm_metrics_observe(&metrics, 1, 200, 1000);
    adm_metrics_observe(&metrics, 0, 200, 1000);
    adm_metrics_observe(&metrics, 7, 200, 1000);    /* a slot no label holds counts as "other" */
    adm_metrics_observe(&metrics, 1000, 200, 1000); /* and so does one out of range */
    text = render(&out);
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"other\",code=\"200\"} 2\n"));
    assert_true(strstr(text, "endpoint=\"validate\"") < strstr(text, "endpoint=\"healthz\""));
    assert_true(strstr(text, "endpoint=\"healthz\"") < strstr(text, "endpoint=\"other\""));
    /* full: every slot but "other" taken */
    for (size_t i = 0; i < ADM_METRICS_OTHER - 2; i++) {
        assert_int_equal(adm_metrics_endpoint(&metrics, names[i]), (int)i + 2);
    }
    assert_int_equal(adm_metrics_endpoint(&metrics, "one-more"), ADM_ETOOBIG);
    assert_int_equal(adm_metrics_endpoint(&metrics, "healthz"), 1);
    adm_buf_free(&out);
}

static void test_server_metrics_add_by_label(void **state)
{
    adm_metrics_t a = {0}, b = {0}, sum = {0};
    int a_validate = adm_metrics_endpoint(&a, "validate");
    int b_validate;

    (void)state;
    adm_metrics_endpoint(&a, "mutate");
    adm_metrics_endpoint(&b, "mutate");
    b_validate = adm_metrics_endpoint(&b, "validate");
    assert_int_not_equal(a_validate, b_validate);
    adm_metrics_observe(&a, (unsigned)a_validate, 200, 1000);
    adm_metrics_observe(&b, (unsigned)b_validate, 200, 1000);
    adm_metrics_observe(&b, (unsigned)b_validate, 400, 1000);
    a.server_connections = 1;
    b.server_connections = 2;
    adm_metrics_add(&sum, &a);
    adm_metrics_add(&sum, &b);
    assert_int_equal(sum.codes[a_validate][200 - ADM_METRICS_CODE_MIN], 2);
    assert_int_equal(sum.codes[a_validate][400 - ADM_METRICS_CODE_MIN], 1);
    assert_int_equal(sum.count[a_validate], 3);
    assert_int_equal(sum.server_connections, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_many_codes),
        cmocka_unit_test(test_endpoint_labels),
        cmocka_unit_test(test_server_metrics_add_by_label),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

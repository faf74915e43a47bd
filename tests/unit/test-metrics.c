/* SPDX-License-Identifier: Apache-2.0 */
/* Metrics: code folding, histogram buckets (cumulative on output), exposition format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/buf.h"
#include "adm/metrics.h"

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

    memset(&metrics, 0, sizeof(metrics));
    adm_metrics_observe(&metrics, ADM_EP_VALIDATE, 200, 50 * 1000);         /* 50 µs */
    adm_metrics_observe(&metrics, ADM_EP_VALIDATE, 200, 2 * 1000 * 1000);   /* 2 ms */
    adm_metrics_observe(&metrics, ADM_EP_VALIDATE, 400, 20ULL * 1000000000); /* 20 s: +Inf only */
    adm_metrics_observe(&metrics, ADM_EP_OTHER, 404, 1000);
    metrics.server_connections = 3;
    text = render(&out);
    assert_non_null(strstr(text, "# TYPE admitd_requests_total counter\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"validate\",code=\"200\"} 2\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"validate\",code=\"400\"} 1\n"));
    assert_non_null(strstr(text, "admitd_requests_total{endpoint=\"other\",code=\"404\"} 1\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.0001\"} 1\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.0025\"} 2\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"10\"} 2\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_bucket{endpoint=\"validate\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(text, "admitd_request_duration_seconds_count{endpoint=\"validate\"} 3\n"));
    assert_null(strstr(text, "endpoint=\"mutate\"")); /* nothing observed, nothing written */
    assert_non_null(strstr(text, "admitd_connections{side=\"server\"} 3\n"));
    adm_buf_free(&out);
}

static void test_many_codes_fold(void **state)
{
    adm_buf_t out = ADM_BUF_INIT;
    uint64_t total = 0;
    const char *p;

    memset(&metrics, 0, sizeof(metrics));
    for (int code = 400; code < 440; code++) {
        adm_metrics_observe(&metrics, ADM_EP_ADMIT, code, 1000);
    }
    /* Every request is still counted once, whatever the number of distinct codes. */
    p = render(&out);
    while ((p = strstr(p, "admitd_requests_total{endpoint=\"admit\"")) != NULL) {
        p = strchr(p, '}') + 2;
        total += strtoull(p, NULL, 10);
    }
    assert_int_equal(total, 40);
    adm_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_many_codes_fold),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

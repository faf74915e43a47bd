/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission metrics registry: names are interned and bounded (the overflow is name="other"),
 * every family of INTERFACE.md renders under its exact name with its labels, histograms are
 * cumulative with sub-millisecond buckets and a count equal to what was observed, rejection codes
 * outside HTTP's range count as 0, label values are escaped, and reset forgets everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/admission_metrics.h"

static char *render(void)
{
    adm_buf_t out = ADM_BUF_INIT;
    char *text;

    assert_int_equal(adm_metrics_render_admission(&out), 0);
    text = calloc(1, out.len + 1);
    assert_non_null(text);
    memcpy(text, out.data, out.len);
    adm_buf_free(&out);
    return text;
}

static void assert_has(const char *text, const char *line)
{
    if (strstr(text, line) == NULL) {
        fail_msg("missing from /metrics: %s\n--- got ---\n%s", line, text);
    }
}

static int reset(void **state)
{
    (void)state;
    adm_metrics_reset();
    return 0;
}

static void test_names_are_interned_and_bounded(void **state)
{
    char name[32];
    int first = adm_metrics_name("AlwaysPullImages");
    int last = 0;
    char *text;

    (void)state;
    assert_true(first > 0);
    assert_int_equal(adm_metrics_name("AlwaysPullImages"), first);
    assert_int_not_equal(adm_metrics_name("DefaultTolerationSeconds"), first);
    assert_int_equal(adm_metrics_name(NULL), 0);
    for (int i = 0; i < ADM_METRICS_NAMES + 10; i++) {
        snprintf(name, sizeof(name), "hook-%d.example.com", i);
        last = adm_metrics_name(name);
    }
    assert_int_equal(last, 0); /* past the bound: "other" */
    adm_metrics_webhook(last, ADM_MX_VALIDATE, 0, false, 1000);
    text = render();
    assert_has(text, "admitd_webhook_admission_duration_seconds_count{name=\"other\",type=\"validate\","
                     "operation=\"CREATE\",rejected=\"false\"} 1\n");
    free(text);
}

static void test_every_family_renders(void **state)
{
    int plugin = adm_metrics_name("AlwaysDeny");
    int hook = adm_metrics_name("deny.example.com");
    char *text;

    (void)state;
    adm_metrics_step(ADM_MX_ADMIT, 1, false, 3000);
    adm_metrics_controller(plugin, ADM_MX_VALIDATE, 0, true, 2000);
    adm_metrics_webhook(hook, ADM_MX_VALIDATE, 0, true, 250000);
    adm_metrics_webhook_rejection(hook, ADM_MX_VALIDATE, 0, ADM_MX_NO_ERROR, 403);
    adm_metrics_webhook_rejection(hook, ADM_MX_VALIDATE, 0, ADM_MX_NO_ERROR, 403);
    adm_metrics_webhook_rejection(hook, ADM_MX_ADMIT, 2, ADM_MX_CALLING_WEBHOOK_ERROR, 500);
    adm_metrics_webhook_rejection(hook, ADM_MX_ADMIT, 3, ADM_MX_APISERVER_INTERNAL_ERROR, 7000);
    adm_metrics_webhook_fail_open(hook, ADM_MX_ADMIT);
    adm_metrics_config_reload(true);
    adm_metrics_config_reload(false);
    adm_metrics_config_reload(false);
    text = render();
    assert_has(text, "# TYPE admitd_admission_step_duration_seconds histogram\n");
    /* 3 µs falls in the first bucket, 5 µs */
    assert_has(text, "admitd_admission_step_duration_seconds_bucket{type=\"admit\",operation=\"UPDATE\","
                     "rejected=\"false\",le=\"5e-06\"} 1\n");
    assert_has(text, "admitd_admission_step_duration_seconds_count{type=\"admit\",operation=\"UPDATE\","
                     "rejected=\"false\"} 1\n");
    assert_has(text, "# TYPE admitd_admission_controller_duration_seconds histogram\n");
    assert_has(text,
               "admitd_admission_controller_duration_seconds_count{name=\"AlwaysDeny\",type=\"validate\","
               "operation=\"CREATE\",rejected=\"true\"} 1\n");
    /* 250 µs: not in the 100 µs bucket, in the 250 µs one, and cumulative after it */
    assert_has(text, "admitd_webhook_admission_duration_seconds_bucket{name=\"deny.example.com\","
                     "type=\"validate\",operation=\"CREATE\",rejected=\"true\",le=\"0.0001\"} 0\n");
    assert_has(text, "admitd_webhook_admission_duration_seconds_bucket{name=\"deny.example.com\","
                     "type=\"validate\",operation=\"CREATE\",rejected=\"true\",le=\"0.00025\"} 1\n");
    assert_has(text, "admitd_webhook_admission_duration_seconds_bucket{name=\"deny.example.com\","
                     "type=\"validate\",operation=\"CREATE\",rejected=\"true\",le=\"+Inf\"} 1\n");
    assert_has(text, "admitd_webhook_rejection_count{name=\"deny.example.com\",type=\"validate\","
                     "operation=\"CREATE\",error_type=\"no_error\",rejection_code=\"403\"} 2\n");
    assert_has(text, "admitd_webhook_rejection_count{name=\"deny.example.com\",type=\"admit\","
                     "operation=\"DELETE\",error_type=\"calling_webhook_error\",rejection_code=\"500\"} 1\n");
    assert_has(text,
               "admitd_webhook_rejection_count{name=\"deny.example.com\",type=\"admit\","
               "operation=\"CONNECT\",error_type=\"apiserver_internal_error\",rejection_code=\"0\"} 1\n");
    assert_has(text, "admitd_webhook_fail_open_count{name=\"deny.example.com\",type=\"admit\"} 1\n");
    assert_has(text, "admitd_connections{side=\"client\"} 0\n");
    assert_has(text, "admitd_config_reloads_total{result=\"success\"} 1\n");
    assert_has(text, "admitd_config_reloads_total{result=\"failure\"} 2\n");
    /* the client side of admitd_connections comes first, to follow the server's side */
    assert_memory_equal(text, "admitd_connections{side=\"client\"}", 33);
    free(text);
}

static size_t three(void *arg)
{
    return *(size_t *)arg;
}

static void test_client_gauge_and_escaping(void **state)
{
    size_t n = 3;
    int odd = adm_metrics_name("we\"ird\\name\n");
    char *text;

    (void)state;
    adm_metrics_client_gauge(three, &n);
    adm_metrics_webhook_fail_open(odd, ADM_MX_VALIDATE);
    adm_metrics_step(ADM_MX_ADMIT, 9, false, 1); /* an operation out of range is dropped */
    text = render();
    assert_has(text, "admitd_connections{side=\"client\"} 3\n");
    assert_has(text, "admitd_webhook_fail_open_count{name=\"we\\\"ird\\\\name\\n\",type=\"validate\"} 1\n");
    assert_null(strstr(text, "admitd_admission_step_duration_seconds_count"));
    free(text);
    adm_metrics_client_gauge(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_names_are_interned_and_bounded, reset),
        cmocka_unit_test_setup(test_every_family_renders, reset),
        cmocka_unit_test_setup(test_client_gauge_and_escaping, reset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    adm_metrics_reset();
    return rc;
}

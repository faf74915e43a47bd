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

/*
 * Durations are placed in buckets by comparing nanoseconds with each bound in nanoseconds: a value
 * on a bound is in that bound's bucket, one nanosecond more in the next, as when compared in
 * seconds; past the last bound only +Inf counts it; the sum is rendered in seconds.
 */
static void test_bucket_bounds_in_nanoseconds(void **state)
{
    int plugin = adm_metrics_name("Bounds");
    char *text;

    (void)state;
    adm_metrics_controller(plugin, ADM_MX_ADMIT, 0, false, 5000);        /* le="5e-06" */
    adm_metrics_controller(plugin, ADM_MX_ADMIT, 0, false, 5001);        /* le="1e-05" */
    adm_metrics_controller(plugin, ADM_MX_ADMIT, 0, false, 2500000000);  /* le="2.5" */
    adm_metrics_controller(plugin, ADM_MX_ADMIT, 0, false, 60000000001); /* +Inf only */
    text = render();
#define BOUNDS_SERIES                                                                                        \
    "admitd_admission_controller_duration_seconds_bucket{name=\"Bounds\",type=\"admit\","                    \
    "operation=\"CREATE\",rejected=\"false\","
    assert_has(text, BOUNDS_SERIES "le=\"5e-06\"} 1\n");
    assert_has(text, BOUNDS_SERIES "le=\"1e-05\"} 2\n");
    assert_has(text, BOUNDS_SERIES "le=\"1\"} 2\n");
    assert_has(text, BOUNDS_SERIES "le=\"2.5\"} 3\n");
    assert_has(text, BOUNDS_SERIES "le=\"60\"} 3\n");
    assert_has(text, BOUNDS_SERIES "le=\"+Inf\"} 4\n");
#undef BOUNDS_SERIES
    assert_has(text, "admitd_admission_controller_duration_seconds_sum{name=\"Bounds\",type=\"admit\","
                     "operation=\"CREATE\",rejected=\"false\"} 62.50001\n");
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

/* kube's label values; every series counts exactly what was recorded under it. */
static void test_pod_security_counters(void **state)
{
    char *text;

    (void)state;
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 2, 30, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD, "");
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 2, 30, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD, NULL);
    adm_metrics_psa_evaluation(ADM_MX_PSA_ALLOW, 1, ADM_MX_PSA_LATEST, ADM_MX_PSA_ENFORCE, 1, ADM_MX_PSA_POD,
                               "ephemeralcontainers");
    /* privileged is always "latest"; a version past the bound is "future" */
    adm_metrics_psa_evaluation(ADM_MX_PSA_ALLOW, 0, 12, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD, "");
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 1, ADM_MX_PSA_MINORS, ADM_MX_PSA_WARN, 0,
                               ADM_MX_PSA_CONTROLLER, "");
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 2, ADM_MX_PSA_FUTURE, ADM_MX_PSA_AUDIT, 0,
                               ADM_MX_PSA_CONTROLLER, "");
    adm_metrics_psa_error(true, 0, ADM_MX_PSA_POD, "");
    adm_metrics_psa_error(false, 1, ADM_MX_PSA_CONTROLLER, "scale"); /* unknown subresource: "other" */
    /* out of range: dropped (DELETE, a fourth level, a fourth resource) */
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 2, 30, ADM_MX_PSA_ENFORCE, 2, ADM_MX_PSA_POD, "");
    adm_metrics_psa_evaluation(ADM_MX_PSA_DENY, 3, 30, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD, "");
    adm_metrics_psa_error(true, 0, (adm_mx_psa_resource_t)3, "");
    text = render();
    assert_has(text, "# TYPE admitd_pod_security_evaluations_total counter\n");
    assert_has(text, "# TYPE admitd_pod_security_errors_total counter\n");
    assert_has(text, "admitd_pod_security_evaluations_total{decision=\"deny\",policy_level=\"restricted\","
                     "policy_version=\"v1.30\",mode=\"enforce\",request_operation=\"create\","
                     "resource=\"pod\",subresource=\"\"} 2\n");
    assert_has(text, "admitd_pod_security_evaluations_total{decision=\"allow\",policy_level=\"baseline\","
                     "policy_version=\"latest\",mode=\"enforce\",request_operation=\"update\","
                     "resource=\"pod\",subresource=\"ephemeralcontainers\"} 1\n");
    assert_has(text, "admitd_pod_security_evaluations_total{decision=\"allow\",policy_level=\"privileged\","
                     "policy_version=\"latest\",mode=\"enforce\",request_operation=\"create\","
                     "resource=\"pod\",subresource=\"\"} 1\n");
    assert_has(text, "admitd_pod_security_evaluations_total{decision=\"deny\",policy_level=\"baseline\","
                     "policy_version=\"future\",mode=\"warn\",request_operation=\"create\","
                     "resource=\"controller\",subresource=\"\"} 1\n");
    assert_has(text, "admitd_pod_security_evaluations_total{decision=\"deny\",policy_level=\"restricted\","
                     "policy_version=\"future\",mode=\"audit\",request_operation=\"create\","
                     "resource=\"controller\",subresource=\"\"} 1\n");
    assert_has(text, "admitd_pod_security_errors_total{fatal=\"true\",request_operation=\"create\","
                     "resource=\"pod\",subresource=\"\"} 1\n");
    assert_has(text, "admitd_pod_security_errors_total{fatal=\"false\",request_operation=\"update\","
                     "resource=\"controller\",subresource=\"other\"} 1\n");
    assert_null(strstr(text, "request_operation=\"delete\""));
    assert_null(strstr(text, "policy_version=\"v1.12\""));
    {
        /* five evaluation series and two error series, nothing else */
        size_t evals = 0, errs = 0;

        for (const char *p = text; (p = strstr(p, "\nadmitd_pod_security_evaluations_total{")) != NULL; p++) {
            evals++;
        }
        for (const char *p = text; (p = strstr(p, "\nadmitd_pod_security_errors_total{")) != NULL; p++) {
            errs++;
        }
        assert_int_equal(evals, 5);
        assert_int_equal(errs, 2);
    }
    free(text);
    adm_metrics_reset();
    text = render();
    assert_null(strstr(text, "admitd_pod_security_evaluations_total{"));
    assert_null(strstr(text, "admitd_pod_security_errors_total{"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_names_are_interned_and_bounded, reset),
        cmocka_unit_test_setup(test_every_family_renders, reset),
        cmocka_unit_test_setup(test_bucket_bounds_in_nanoseconds, reset),
        cmocka_unit_test_setup(test_client_gauge_and_escaping, reset),
        cmocka_unit_test_setup(test_pod_security_counters, reset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    adm_metrics_reset();
    return rc;
}

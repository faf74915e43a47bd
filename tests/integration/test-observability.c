/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Operating admitd: after traffic through a real admitd-mockhook, every metric family of
 * INTERFACE.md is on /metrics and its counters agree with the requests sent; the decision trace of
 * a request through two webhooks shows both with their outcomes (on GET /debug/requests and in the
 * --v 2 JSON log line); /debug/requests is served on --metrics-listen only (D18), keeps the last
 * ADM_TRACE_RING requests, and picks one by ?uid=. The proxy's own steps are in the trace too: a
 * call refused by an open circuit breaker ("circuit":"open"), its half-open probe, and shadow
 * webhooks (marked "shadow", with what they would have done: a denial, a patch) that decide nothing.
 */
#include "adm/admission/trace.h"
#include "certgen.h"
#include "harness.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

static h_server_t mock, admitd;
static char dir[256];
static int metrics_port;

/*
 * What admitd adds to kube's dispatch, on pods labelled p=breaker or p=shadow: a failing webhook
 * with its own breaker (1 failure opens it for 1 s), and shadow webhooks that deny (validating) and
 * patch (mutating).
 */
static void write_proxy_configs(FILE *f, const char *ca)
{
    static const struct {
        const char *kind, *annotation, *name, *route, *p;
    } hooks[] = {
        {"Validating", "proxy.admitd.io/circuit-breaker: \"1/1s\"", "breaker.obs.example.com", "/error",
         "breaker"},
        {"Validating", "proxy.admitd.io/shadow: \"true\"", "shadow-deny.obs.example.com", "/deny", "shadow"},
        {"Mutating", "proxy.admitd.io/shadow: \"true\"", "shadow-patch.obs.example.com", "/patch", "shadow"},
    };

    for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
        fprintf(f,
                "---\napiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\n"
                "metadata:\n  name: proxy-%zu\n  annotations: {%s}\nwebhooks:\n"
                "- name: %s\n  clientConfig: {url: \"https://127.0.0.1:%d%s\", caBundle: \"%s\"}\n"
                "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: "
                "[\"*/*\"]}]\n"
                "  objectSelector: {matchLabels: {p: %s}}\n  failurePolicy: Ignore\n  sideEffects: None\n"
                "  admissionReviewVersions: [v1]\n",
                hooks[i].kind, i, hooks[i].annotation, hooks[i].name, mock.port, hooks[i].route, ca,
                hooks[i].p);
    }
}

/*
 * Two validating webhooks see every pod but those labelled t=deny: one allows, one fails (HTTP 500)
 * under failurePolicy Ignore. Two see only t=deny pods: one denies at once, one allows after 300 ms,
 * so its answer comes after the request was decided (D3) and is counted late.
 */
static void write_config(const char *path)
{
    static char ca[8192];
    static const struct {
        const char *name, *route, *policy, *selector;
    } hooks[] = {
        {"allow.obs.example.com", "/allow", "Fail",
         "{matchExpressions: [{key: t, operator: NotIn, values: [deny]}]}"},
        {"broken.obs.example.com", "/error", "Ignore",
         "{matchExpressions: [{key: t, operator: NotIn, values: [deny]}]}"},
        {"deny.obs.example.com", "/deny", "Fail", "{matchLabels: {t: deny}}"},
        {"late.obs.example.com", "/slow", "Fail", "{matchLabels: {t: deny}}"},
    };
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    h_file_b64(mock.ca, ca, sizeof(ca));
    fprintf(f, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
               "metadata: {name: obs}\nwebhooks:\n");
    for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
        fprintf(f,
                "- name: %s\n  clientConfig: {url: \"https://127.0.0.1:%d%s\", caBundle: \"%s\"}\n"
                "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: "
                "[\"*/*\"]}]\n"
                "  objectSelector: %s\n  failurePolicy: %s\n  sideEffects: None\n"
                "  admissionReviewVersions: [v1]\n",
                hooks[i].name, mock.port, hooks[i].route, ca, hooks[i].selector, hooks[i].policy);
    }
    write_proxy_configs(f, ca);
    fclose(f);
}

/* The pod fixture with uid and label t. */
static char *review(const char *uid, const char *t)
{
    size_t len;
    char *text = h_fixture("pod-create.v1.review.json", &len);
    yyjson_doc *doc = yyjson_read(text, len, 0);
    yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);
    yyjson_mut_val *req = yyjson_mut_obj_get(yyjson_mut_doc_get_root(m), "request");
    yyjson_mut_val *labels =
        yyjson_mut_obj_get(yyjson_mut_obj_get(yyjson_mut_obj_get(req, "object"), "metadata"), "labels");
    char *out;

    /* "p=V" labels the pod p=V (the proxy's webhooks), anything else t=<t> */
    if (strncmp(t, "p=", 2) == 0) {
        yyjson_mut_obj_put(labels, yyjson_mut_strcpy(m, "p"), yyjson_mut_strcpy(m, t + 2));
    } else {
        yyjson_mut_obj_put(labels, yyjson_mut_strcpy(m, "t"), yyjson_mut_strcpy(m, t));
    }
    yyjson_mut_obj_put(req, yyjson_mut_strcpy(m, "uid"), yyjson_mut_strcpy(m, uid));
    out = yyjson_mut_write(m, 0, NULL);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(doc);
    free(text);
    return out;
}

/* POSTs a review on c to endpoint; returns whether it was allowed. */
static bool send_review_to(h_conn_t *c, const char *endpoint, const char *uid, const char *t)
{
    char *body = review(uid, t);
    size_t len;
    char *req = h_request("POST", endpoint, "application/json", body, strlen(body), &len);
    h_response_t r = {0};
    bool allowed;

    assert_int_equal(h_send(c, req, len), 0);
    assert_int_equal(h_read(c, &r, 20000, NULL), 0);
    assert_int_equal(r.status, 200);
    allowed = h_is_answer(&r, "admission.k8s.io/v1", uid, true);
    assert_true(allowed || h_is_answer(&r, "admission.k8s.io/v1", uid, false));
    h_response_free(&r);
    free(req);
    free(body);
    return allowed;
}

static bool send_review(h_conn_t *c, const char *uid, const char *t)
{
    return send_review_to(c, "/validate", uid, t);
}

/* GET path on the plain listener at port: status, and the body (heap, NUL-terminated) in *body. */
static int get(int port, const char *path, char **body)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request("GET", path, NULL, NULL, 0, &len);
    int status;

    assert_int_equal(h_connect(&c, port, NULL, "127.0.0.1", NULL, NULL), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
    status = r.status;
    if (body != NULL) {
        *body = calloc(1, r.body.len + 1);
        assert_non_null(*body);
        memcpy(*body, r.body.data, r.body.len);
    }
    h_response_free(&r);
    h_close(&c);
    free(req);
    return status;
}

/* The value of one series ("name{labels}") in a scrape; 0 when absent. */
static double value(const char *scrape, const char *series)
{
    size_t n = strlen(series);

    for (const char *p = scrape; (p = strstr(p, series)) != NULL; p += n) {
        if ((p == scrape || p[-1] == '\n') && p[n] == ' ') {
            return strtod(p + n + 1, NULL);
        }
    }
    return 0;
}

static char *scrape(void)
{
    char *text;

    assert_int_equal(get(metrics_port, "/metrics", &text), 200);
    return text;
}

#define LATE_SERIES                                                                                          \
    "admitd_webhook_admission_duration_seconds_count{name=\"late.obs.example.com\",type=\"validate\","       \
    "operation=\"CREATE\",rejected=\"false\"}"

/* Waits (10 s at most) until the late webhook's answers have all been counted: n in all. */
static void wait_late_answers(double n)
{
    long long deadline = h_now_ms() + 10000;
    double seen = 0;

    while (h_now_ms() < deadline) {
        char *text = scrape();

        seen = value(text, LATE_SERIES);
        free(text);
        if (seen >= n) {
            assert_true(seen == n);
            return;
        }
        poll(NULL, 0, 20);
    }
    fail_msg("%g late answers counted, want %g", seen, n);
}

static int setup(void **state)
{
    const char *mock_args[] = {
        "--route",
        "/deny=deny:nope",
        "--route",
        "/error=error:500",
        "--route",
        "/slow=allow",
        "--route-delay",
        "/slow=300ms",
        "--route",
        "/patch=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/s\",\"value\":\"1\"}]",
        NULL};
    char config[320], line[1024];
    FILE *log;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, mock_args), 0);
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    write_config(config);
    {
        const char *args[] = {"--webhook-config",
                              config,
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              "--metrics-listen",
                              "127.0.0.1:0",
                              "--v",
                              "2",
                              "--log-format",
                              "json",
                              NULL};

        if (h_start(&admitd, NULL, args) != 0) {
            return -1;
        }
    }
    assert_true(h_log_wait(&admitd, "serving metrics on 127.0.0.1:", 1, 10000));
    log = fopen(admitd.log, "r");
    assert_non_null(log);
    while (fgets(line, sizeof(line), log) != NULL) {
        char *p = strstr(line, "serving metrics on 127.0.0.1:");

        if (p != NULL) {
            metrics_port = (int)strtol(p + strlen("serving metrics on 127.0.0.1:"), NULL, 10);
        }
    }
    fclose(log);
    assert_true(metrics_port > 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (h_stop(&admitd, 15, 30000) != 0) {
        h_dump_log(&admitd);
        fail_msg("admitd did not exit cleanly");
    }
    h_cleanup(&admitd);
    h_stop(&mock, 15, 10000);
    h_cleanup(&mock);
    certgen_rmdir(dir);
    return 0;
}

static yyjson_val *step_named(yyjson_val *steps, const char *name)
{
    size_t i, n;
    yyjson_val *s;

    yyjson_arr_foreach(steps, i, n, s)
    {
        if (strcmp(yyjson_get_str(yyjson_obj_get(s, "name")), name) == 0) {
            return s;
        }
    }
    return NULL;
}

static void test_trace_through_two_webhooks(void **state)
{
    const char *uid = "7e0b1f52-0000-4000-8000-000000000001";
    char path[128], *text;
    yyjson_doc *d;
    yyjson_val *requests, *trace, *steps, *s;
    h_conn_t c;

    (void)state;
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_true(send_review(&c, uid, "plain"));
    h_close(&c);

    snprintf(path, sizeof(path), "/debug/requests?uid=%s", uid);
    assert_int_equal(get(metrics_port, path, &text), 200);
    d = yyjson_read(text, strlen(text), 0);
    assert_non_null(d);
    requests = yyjson_obj_get(yyjson_doc_get_root(d), "requests");
    assert_int_equal(yyjson_arr_size(requests), 1);
    trace = yyjson_arr_get(requests, 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(trace, "uid")), uid);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(trace, "endpoint")), "validate");
    assert_true(yyjson_get_bool(yyjson_obj_get(trace, "allowed")));
    assert_null(yyjson_obj_get(trace, "decidedBy"));
    steps = yyjson_obj_get(trace, "steps");
    s = step_named(steps, "allow.obs.example.com");
    assert_non_null(s);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "kind")), "webhook");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "outcome")), "allowed");
    assert_true(yyjson_get_real(yyjson_obj_get(s, "latencySeconds")) > 0);
    s = step_named(steps, "broken.obs.example.com");
    assert_non_null(s);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(s, "outcome")), "failed-open");
    /* why the call failed: client-go's words for the HTTP 500 */
    assert_non_null(strstr(yyjson_get_str(yyjson_obj_get(s, "reason")), "500"));
    assert_non_null(step_named(steps, "CertificateSubjectRestriction")); /* the built-in plugins too */
    assert_non_null(step_named(steps, "ResourceQuota")); /* with an asynchronous hook beside its own */
    yyjson_doc_free(d);
    free(text);

    /* the same trace as one structured log line at --v 2 */
    snprintf(path, sizeof(path), "\"trace\":{\"uid\":\"%s\"", uid);
    assert_true(h_log_wait(&admitd, path, 1, 10000));
    assert_true(h_log_wait(&admitd, "\"outcome\":\"failed-open\"", 1, 10000));

    /* a denial names its decider */
    uid = "7e0b1f52-0000-4000-8000-000000000002";
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_false(send_review(&c, uid, "deny"));
    h_close(&c);
    snprintf(path, sizeof(path), "/debug/requests?uid=%s", uid);
    assert_int_equal(get(metrics_port, path, &text), 200);
    assert_non_null(strstr(text, "\"decidedBy\":\"deny.obs.example.com\""));
    assert_non_null(strstr(text, "\"outcome\":\"denied\""));
    /* the slow webhook had not answered: it is not in the trace, and is counted when it does */
    assert_null(strstr(text, "late.obs.example.com"));
    free(text);
    wait_late_answers(1);
}

static void test_counters_agree_with_requests(void **state)
{
    enum { PLAIN = 7, DENIED = 3 };
    static const char *const families[] = {
        "admitd_requests_total",
        "admitd_request_duration_seconds",
        "admitd_admission_step_duration_seconds",
        "admitd_admission_controller_duration_seconds",
        "admitd_webhook_admission_duration_seconds",
        "admitd_webhook_rejection_count",
        "admitd_webhook_fail_open_count",
        "admitd_connections",
        "admitd_config_reloads_total",
    };
    static const char *const series[] = {
        "admitd_requests_total{endpoint=\"validate\",code=\"200\"}",
        "admitd_webhook_admission_duration_seconds_count{name=\"allow.obs.example.com\",type=\"validate\","
        "operation=\"CREATE\",rejected=\"false\"}",
        "admitd_webhook_admission_duration_seconds_count{name=\"broken.obs.example.com\",type=\"validate\","
        "operation=\"CREATE\",rejected=\"false\"}",
        "admitd_webhook_fail_open_count{name=\"broken.obs.example.com\",type=\"validate\"}",
        "admitd_webhook_admission_duration_seconds_count{name=\"deny.obs.example.com\",type=\"validate\","
        "operation=\"CREATE\",rejected=\"true\"}",
        "admitd_webhook_rejection_count{name=\"deny.obs.example.com\",type=\"validate\",operation=\"CREATE\","
        "error_type=\"no_error\",rejection_code=\"403\"}",
        "admitd_admission_step_duration_seconds_count{type=\"validate\",operation=\"CREATE\",rejected="
        "\"false\"}",
        "admitd_admission_step_duration_seconds_count{type=\"validate\",operation=\"CREATE\",rejected="
        "\"true\"}",
        "admitd_admission_controller_duration_seconds_count{name=\"ValidatingAdmissionWebhook\",type="
        "\"validate\","
        "operation=\"CREATE\",rejected=\"false\"}",
        "admitd_admission_controller_duration_seconds_count{name=\"ValidatingAdmissionWebhook\",type="
        "\"validate\","
        "operation=\"CREATE\",rejected=\"true\"}",
    };
    /* what PLAIN allowed and DENIED denied requests add to each series above, in order */
    static const int expected[] = {PLAIN + DENIED, PLAIN, PLAIN,  PLAIN, DENIED,
                                   DENIED,         PLAIN, DENIED, PLAIN, DENIED};
    double before[sizeof(series) / sizeof(series[0])];
    char uid[64], type[128], *text;
    h_conn_t c;

    (void)state;
    text = scrape();
    for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
        before[i] = value(text, series[i]);
    }
    free(text);
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    for (int i = 0; i < PLAIN + DENIED; i++) {
        snprintf(uid, sizeof(uid), "c0ffee00-0000-4000-8000-%012d", i);
        assert_true(send_review(&c, uid, i < PLAIN ? "plain" : "deny") == (i < PLAIN));
    }
    h_close(&c);
    /* the answers that came after their requests were decided count too (D3) */
    wait_late_answers(1 + DENIED);

    text = scrape();
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        snprintf(type, sizeof(type), "# TYPE %s ", families[i]);
        if (strstr(text, type) == NULL) {
            fail_msg("family %s is not on /metrics:\n%s", families[i], text);
        }
    }
    for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
        if (value(text, series[i]) - before[i] != expected[i]) {
            fail_msg("%s went from %g to %g, expected +%d", series[i], before[i], value(text, series[i]),
                     expected[i]);
        }
    }
    /* keep-alive connections to the mockhook stay open in the pool */
    assert_true(value(text, "admitd_connections{side=\"client\"}") >= 1);
    assert_non_null(strstr(text, "admitd_config_reloads_total{result=\"success\"} 0\n"));
    /* sub-millisecond buckets */
    assert_non_null(strstr(text, "le=\"5e-06\""));
    /* no unbounded label: no uid, no namespace */
    assert_null(strstr(text, "c0ffee00"));
    assert_null(strstr(text, "namespace="));
    free(text);
}

static void test_debug_requests_only_on_the_metrics_listener(void **state)
{
    char uid[64], *text;
    const char *first = "ab000000-0000-4000-8000-000000000000";
    yyjson_doc *d;
    h_conn_t c;

    (void)state;
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    h_expect(&c, "GET", "/debug/requests", NULL, NULL, 404, NULL);
    h_close(&c);
    assert_int_equal(get(metrics_port, "/debug/requests?uid=not-a-request", NULL), 404);

    /* the ring keeps the last ADM_TRACE_RING requests */
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    for (int i = 0; i < ADM_TRACE_RING + 2; i++) {
        snprintf(uid, sizeof(uid), "ab000000-0000-4000-8000-%012d", i);
        assert_true(send_review(&c, uid, "plain"));
    }
    h_close(&c);
    assert_int_equal(get(metrics_port, "/debug/requests", &text), 200);
    d = yyjson_read(text, strlen(text), 0);
    assert_non_null(d);
    assert_int_equal(yyjson_arr_size(yyjson_obj_get(yyjson_doc_get_root(d), "requests")), ADM_TRACE_RING);
    /* newest first */
    assert_string_equal(yyjson_get_str(yyjson_obj_get(
                            yyjson_arr_get(yyjson_obj_get(yyjson_doc_get_root(d), "requests"), 0), "uid")),
                        uid);
    yyjson_doc_free(d);
    free(text);
    snprintf(uid, sizeof(uid), "/debug/requests?uid=%s", first);
    assert_int_equal(get(metrics_port, uid, NULL), 404);
}

/* The one trace of uid from /debug/requests, its step named name as text (heap), or NULL. */
static char *traced_step(const char *uid, const char *name, bool *allowed, bool *decided)
{
    char path[128], *text, *out = NULL;
    yyjson_doc *d;
    yyjson_val *trace, *s;

    snprintf(path, sizeof(path), "/debug/requests?uid=%s", uid);
    assert_int_equal(get(metrics_port, path, &text), 200);
    d = yyjson_read(text, strlen(text), 0);
    assert_non_null(d);
    trace = yyjson_arr_get(yyjson_obj_get(yyjson_doc_get_root(d), "requests"), 0);
    *allowed = yyjson_get_bool(yyjson_obj_get(trace, "allowed"));
    *decided = yyjson_obj_get(trace, "decidedBy") != NULL;
    s = step_named(yyjson_obj_get(trace, "steps"), name);
    if (s != NULL) {
        out = yyjson_val_write(s, 0, NULL);
    }
    yyjson_doc_free(d);
    free(text);
    return out;
}

static void test_trace_shows_breaker_and_shadows(void **state)
{
    char uid[64], *step;
    bool allowed, decided, probed = false;
    long long deadline;
    h_conn_t c;
    int i = 0;

    (void)state;
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    /* the first call fails (HTTP 500) and opens the circuit: the next is refused at once */
    snprintf(uid, sizeof(uid), "b7000000-0000-4000-8000-%012d", i++);
    assert_true(send_review(&c, uid, "p=breaker"));
    step = traced_step(uid, "breaker.obs.example.com", &allowed, &decided);
    assert_non_null(step);
    assert_non_null(strstr(step, "\"outcome\":\"failed-open\""));
    assert_null(strstr(step, "\"circuit\""));
    free(step);
    snprintf(uid, sizeof(uid), "b7000000-0000-4000-8000-%012d", i++);
    assert_true(send_review(&c, uid, "p=breaker"));
    step = traced_step(uid, "breaker.obs.example.com", &allowed, &decided);
    assert_non_null(step);
    assert_non_null(strstr(step, "\"circuit\":\"open\""));
    assert_non_null(strstr(step, "\"outcome\":\"failed-open\""));
    free(step);
    assert_true(h_log_wait(&admitd, "\"circuit\":\"open\"", 1, 10000)); /* the --v 2 line too */
    /* after the 1 s cool-down one call is the half-open probe */
    deadline = h_now_ms() + 10000;
    while (!probed && h_now_ms() < deadline) {
        snprintf(uid, sizeof(uid), "b7000000-0000-4000-8000-%012d", i++);
        assert_true(send_review(&c, uid, "p=breaker"));
        step = traced_step(uid, "breaker.obs.example.com", &allowed, &decided);
        assert_non_null(step);
        probed = strstr(step, "\"circuit\":\"half-open-probe\"") != NULL;
        if (!probed) {
            assert_non_null(strstr(step, "\"circuit\":\"open\""));
            poll(NULL, 0, 50);
        }
        free(step);
    }
    assert_true(probed);

    /* a shadow webhook that denies decides nothing, and its denial is in the trace */
    snprintf(uid, sizeof(uid), "5a000000-0000-4000-8000-%012d", 1);
    assert_true(send_review(&c, uid, "p=shadow"));
    step = traced_step(uid, "shadow-deny.obs.example.com", &allowed, &decided);
    assert_non_null(step);
    assert_true(allowed);
    assert_false(decided);
    assert_non_null(strstr(step, "\"shadow\":true"));
    assert_non_null(strstr(step, "\"outcome\":\"denied\""));
    assert_non_null(strstr(step, "nope"));
    assert_non_null(strstr(step, "\"latencySeconds\":"));
    free(step);
    /* a mutating shadow webhook's patch is shown, not applied */
    snprintf(uid, sizeof(uid), "5a000000-0000-4000-8000-%012d", 2);
    assert_true(send_review_to(&c, "/mutate", uid, "p=shadow"));
    step = traced_step(uid, "shadow-patch.obs.example.com", &allowed, &decided);
    assert_non_null(step);
    assert_non_null(strstr(step, "\"shadow\":true"));
    assert_non_null(strstr(step, "\"outcome\":\"patched\""));
    assert_non_null(strstr(step, "/metadata/labels/s"));
    free(step);
    h_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_through_two_webhooks),
        cmocka_unit_test(test_counters_agree_with_requests),
        cmocka_unit_test(test_debug_requests_only_on_the_metrics_listener),
        cmocka_unit_test(test_trace_shows_breaker_and_shadows), /* last: its pods match the others too */
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

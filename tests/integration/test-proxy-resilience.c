/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook proxy's resilience and wording (issue 18) end to end, admitd in front of
 * admitd-mockhook:
 *  - a malformed answer is reported in Go's words with the first line %q-quoted;
 *  - with --webhook-circuit-breaker 2/1s, a webhook that hangs costs its timeoutSeconds twice and
 *    then nothing: calls fail at once, failurePolicy Ignore lets the request through with the
 *    fail-open annotation, the mockhook sees no more calls, and /metrics shows the open circuit;
 *  - a configuration annotated proxy.admitd.io/circuit-breaker: "off" keeps waiting every time;
 *  - under Fail, an upstream that refuses connections opens the circuit (refused calls carry the
 *    same connect error), and once a server listens there again, requests are allowed within one
 *    cool-down;
 *  - shadow webhooks (proxy.admitd.io/shadow: "true") decide nothing: a denial, a failure under
 *    Fail, a patch and a mutating denial all leave the request allowed and unpatched, each recorded
 *    in its audit annotation, the log and the shadow metrics;
 *  - client-go's Retry-After retries: 429 with "Retry-After: 0" is sent 11 times in all, a 503
 *    whose wait would pass the call's deadline fails with context deadline exceeded;
 *  - matchPolicy Equivalent across groups (D6): a core event matching only through an
 *    events.k8s.io rule is a call failure, the webhook not called;
 *  - a bad flag or annotation value stops admitd with exit 2 and one line.
 */
#include "harness.h"

#include "certgen.h"

#include <mbedtls/base64.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

static char dir[256], config[320], mock_ca_b64[8192];
static h_server_t mock, admitd, revived;
static int gone_port;

static void hook(FILE *f, const char *name, const char *t, const char *url, const char *extra)
{
    fprintf(
        f,
        "- name: %s\n  clientConfig:\n    url: %s\n%s%s%s"
        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]\n"
        "  objectSelector: {matchLabels: {t: %s}}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n%s",
        name, url, strncmp(url, "https", 5) == 0 ? "    caBundle: " : "",
        strncmp(url, "https", 5) == 0 ? mock_ca_b64 : "", strncmp(url, "https", 5) == 0 ? "\n" : "", t,
        extra);
}

static void write_config(void)
{
    char url[128];
    FILE *f = fopen(config, "w");

    assert_non_null(f);
    fputs("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata: {name: a-breaker}\nwebhooks:\n",
          f);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/bad", mock.port);
    hook(f, "malformed.hooks.example.com", "malformed", url, "");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/badcode", mock.port);
    hook(f, "badcode.hooks.example.com", "badcode", url, "");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/hang", mock.port);
    hook(f, "hang.hooks.example.com", "hang", url, "  failurePolicy: Ignore\n  timeoutSeconds: 1\n");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/allow", gone_port);
    hook(f, "gone.hooks.example.com", "gone", url, "  failurePolicy: Fail\n");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/events", mock.port);
    fprintf(
        f,
        "- name: events-new.hooks.example.com\n  clientConfig:\n    url: %s\n    caBundle: %s\n"
        "  rules: [{operations: [CREATE], apiGroups: [events.k8s.io], apiVersions: [v1], resources: "
        "[events]}]\n"
        "  objectSelector: {matchLabels: {t: events}}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n"
        "  failurePolicy: Fail\n",
        url, mock_ca_b64);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/429", mock.port);
    hook(f, "retry-429.hooks.example.com", "retry429", url, "  failurePolicy: Fail\n");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/503", mock.port);
    hook(f, "retry-503.hooks.example.com", "retry503", url, "  failurePolicy: Fail\n  timeoutSeconds: 2\n");
    fputs("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata:\n  name: b-no-breaker\n  annotations: {proxy.admitd.io/circuit-breaker: \"off\"}\n"
          "webhooks:\n",
          f);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/hang-off", mock.port);
    hook(f, "hang-off.hooks.example.com", "hangoff", url, "  failurePolicy: Ignore\n  timeoutSeconds: 1\n");
    fputs("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata:\n  name: c-shadow\n  annotations: {proxy.admitd.io/shadow: \"true\"}\nwebhooks:\n",
          f);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/deny", mock.port);
    hook(f, "shadow-deny.hooks.example.com", "shadow", url, "");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/bad", mock.port);
    hook(f, "shadow-broken.hooks.example.com", "shadowfail", url, "  failurePolicy: Fail\n");
    fputs("---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
          "metadata:\n  name: d-shadow\n  annotations: {proxy.admitd.io/shadow: \"true\"}\nwebhooks:\n",
          f);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/patch", mock.port);
    hook(f, "shadow-patch.hooks.example.com", "shadowm", url, "");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/deny", mock.port);
    hook(f, "shadow-mdeny.hooks.example.com", "shadowm", url, "");
    fclose(f);
}

static int setup(void **state)
{
    const char *mock_args[] = {
        "--route",
        "/bad=raw:bad-http",
        "--route",
        "/badcode=raw:HTTP/1.1 2000 OK\\r\\nContent-Length: 0\\r\\n\\r\\n",
        "--route",
        "/hang=hang",
        "--route",
        "/hang-off=hang",
        "--route",
        "/deny=deny:not yet",
        "--route",
        "/patch=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/s\",\"value\":\"1\"}]",
        "--route",
        "/429=raw:HTTP/1.1 429 Too Many Requests\\r\\nRetry-After: 0\\r\\nContent-Length: 0\\r\\n\\r\\n",
        "--route",
        "/503=raw:HTTP/1.1 503 Service Unavailable\\r\\nRetry-After: 1\\r\\nContent-Length: 0\\r\\n\\r\\n",
        "--record",
        NULL,
        NULL};
    char record[320];
    const char *none[] = {NULL};
    h_server_t other;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(record, sizeof(record), "%s/record.jsonl", dir);
    mock_args[17] = record;
    assert_int_equal(h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, mock_args), 0);
    h_file_b64(mock.ca, mock_ca_b64, sizeof(mock_ca_b64));
    /* a port nobody listens on, until the recovery test starts a mockhook there */
    assert_int_equal(h_start_prog(&other, h_bin("MOCKHOOK_BIN"), NULL, none), 0);
    gone_port = other.port;
    h_stop(&other, 15, 5000);
    h_cleanup(&other);
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    write_config();
    {
        const char *args[] = {"--webhook-config",
                              config,
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              "--webhook-circuit-breaker",
                              "2/1s",
                              "--allow-insecure-webhook-urls",
                              NULL};

        if (h_start(&admitd, NULL, args) != 0) {
            return -1;
        }
    }
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
    if (revived.pid > 0) {
        h_stop(&revived, 15, 10000);
        h_cleanup(&revived);
    }
    certgen_rmdir(dir);
    return 0;
}

typedef struct answer_s {
    bool allowed;
    int code;
    char message[1024];
    bool failed_open;
    char patch[4096];       /* the answer's JSON Patch, decoded ("" when none) */
    char annotations[2048]; /* the auditAnnotations object as text */
    long long ms;
} answer_t;

/* Posts body (heap; freed here) to endpoint and reads the answer into a. */
static void ask_body(const char *endpoint, char *body, answer_t *a)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req;
    long long t0;
    yyjson_doc *doc;
    yyjson_val *resp, *ann;

    req = h_request("POST", endpoint, "application/json", body, strlen(body), &len);
    memset(a, 0, sizeof(*a));
    t0 = h_now_ms();
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
    a->ms = h_now_ms() - t0;
    doc = yyjson_read((const char *)r.body.data, r.body.len, 0);
    resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    a->allowed = yyjson_get_bool(yyjson_obj_get(resp, "allowed"));
    a->code = (int)yyjson_get_int(yyjson_obj_get(yyjson_obj_get(resp, "status"), "code"));
    snprintf(a->message, sizeof(a->message), "%s",
             yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message")) != NULL
                 ? yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message"))
                 : "");
    ann = yyjson_obj_get(resp, "auditAnnotations");
    a->failed_open =
        yyjson_obj_get(ann, "failed-open.validating.webhook.admission.k8s.io.round_0_index_0") != NULL;
    if (yyjson_get_str(yyjson_obj_get(resp, "patch")) != NULL) {
        const char *b64 = yyjson_get_str(yyjson_obj_get(resp, "patch"));
        size_t n = 0;

        assert_int_equal(mbedtls_base64_decode((unsigned char *)a->patch, sizeof(a->patch) - 1, &n,
                                               (const unsigned char *)b64, strlen(b64)),
                         0);
        a->patch[n] = '\0';
    }
    if (ann != NULL) {
        char *text = yyjson_val_write(ann, 0, NULL);

        snprintf(a->annotations, sizeof(a->annotations), "%s", text != NULL ? text : "");
        free(text);
    }
    yyjson_doc_free(doc);
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(body);
}

/* The fixture's pod, labelled t=<t> so exactly that webhook matches. */
static void ask_at(const char *endpoint, const char *t, answer_t *a)
{
    size_t flen;
    char *fixture = h_fixture("pod-create.v1.review.json", &flen);
    const char *key = "\"labels\":{";
    char *at = strstr(fixture, key);
    char *body;

    assert_non_null(at);
    body = calloc(1, flen + 128);
    snprintf(body, flen + 128, "%.*s\"t\":\"%s\",%s", (int)(at - fixture + (ptrdiff_t)strlen(key)), fixture,
             t, at + strlen(key));
    free(fixture);
    ask_body(endpoint, body, a);
}

static void ask(const char *t, answer_t *a)
{
    ask_at("/validate", t, a);
}

/* The /metrics text (heap). */
static char *metrics(void)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request("GET", "/metrics", NULL, NULL, 0, &len), *text;

    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    text = strndup((const char *)r.body.data, r.body.len);
    h_response_free(&r);
    h_close(&c);
    free(req);
    return text;
}

static int calls(const char *path)
{
    char record[320], needle[128];

    snprintf(record, sizeof(record), "%s/record.jsonl", dir);
    snprintf(needle, sizeof(needle), "{\"path\":\"%s\",", path);
    return h_count_lines(record, needle);
}

static void test_malformed_answers_in_gos_words(void **state)
{
    answer_t a;
    char want[256];

    (void)state;
    ask("malformed", &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    snprintf(
        want, sizeof(want),
        "Internal error occurred: failed calling webhook \"malformed.hooks.example.com\": failed to call "
        "webhook: Post \"https://127.0.0.1:%d/bad?timeout=10s\": net/http: HTTP/1.x transport connection "
        "broken: malformed HTTP response \"bad-http\"",
        mock.port);
    assert_string_equal(a.message, want);
    ask("badcode", &a);
    assert_int_equal(a.code, 500);
    assert_non_null(strstr(a.message, "connection broken: malformed HTTP status code \"2000\""));
}

static void test_breaker_stops_waiting_for_a_dead_webhook(void **state)
{
    answer_t a;
    char *m;

    (void)state;
    for (int i = 0; i < 2; i++) {
        ask("hang", &a);
        assert_true(a.allowed);
        assert_true(a.failed_open);
        assert_true(a.ms >= 900);
    }
    assert_true(h_log_wait(
        &admitd, "webhook hang.hooks.example.com: circuit open after: failed to call webhook", 1, 5000));
    ask("hang", &a);
    assert_true(a.allowed);
    assert_true(a.failed_open); /* failurePolicy Ignore, as for the failure itself */
    assert_true(a.ms < 500);
    assert_int_equal(calls("/hang"), 2); /* the open circuit made no call */
    m = metrics();
    assert_non_null(
        strstr(m, "admitd_webhook_circuit_state{name=\"hang.hooks.example.com\",type=\"validating\"} 1"));
    assert_non_null(strstr(
        m, "admitd_webhook_circuit_refused_total{name=\"hang.hooks.example.com\",type=\"validating\"} 1"));
    /* the configuration annotated "off" has no breaker and no series */
    assert_null(strstr(m, "hang-off.hooks.example.com"));
    free(m);
}

static void test_annotation_off_keeps_waiting(void **state)
{
    answer_t a;

    (void)state;
    for (int i = 0; i < 3; i++) {
        ask("hangoff", &a);
        assert_true(a.allowed);
        assert_true(a.ms >= 900);
    }
    assert_int_equal(calls("/hang-off"), 3);
}

static void test_fail_closed_then_recovers_within_a_cool_down(void **state)
{
    answer_t a;
    char listen[64];
    long long back, t_allowed = -1;
    const char *args[] = {"--listen", listen, "--insecure-http", NULL};
    char first[1024];

    (void)state;
    for (int i = 0; i < 2; i++) {
        ask("gone", &a);
        assert_false(a.allowed);
        assert_int_equal(a.code, 500);
        assert_non_null(strstr(a.message, ": connect: connection refused"));
    }
    snprintf(first, sizeof(first), "%s", a.message);
    assert_true(h_log_wait(&admitd, "webhook gone.hooks.example.com: circuit open", 1, 5000));
    ask("gone", &a);
    assert_int_equal(a.code, 500);
    assert_string_equal(a.message, first); /* refused at once, in the words of the failure */

    snprintf(listen, sizeof(listen), "127.0.0.1:%d", gone_port);
    assert_int_equal(h_start_prog(&revived, h_bin("MOCKHOOK_BIN"), NULL, args), 0);
    back = h_now_ms();
    while (h_now_ms() - back < 5000) {
        ask("gone", &a);
        if (a.allowed) {
            t_allowed = h_now_ms() - back;
            break;
        }
        poll(NULL, 0, 20); /* the next try, not a wait for luck: the loop ends on the condition */
    }
    assert_true(t_allowed >= 0);
    assert_true(t_allowed <= 1800); /* one cool-down (1 s), and the probe */
    assert_true(h_log_wait(&admitd, "webhook gone.hooks.example.com: circuit closed", 1, 1000));
}

/* client-go's Retry-After: sent again at once on "0", up to 10 retries; a wait past the deadline fails. */
static void test_retry_after(void **state)
{
    answer_t a;

    (void)state;
    ask("retry429", &a);
    assert_int_equal(a.code, 500);
    assert_non_null(strstr(a.message,
                           "failed calling webhook \"retry-429.hooks.example.com\": failed to call "
                           "webhook: the server has received too many requests and has asked us to "
                           "try again later"));
    assert_int_equal(calls("/429"), 11);
    ask("retry503", &a);
    assert_int_equal(a.code, 500);
    assert_string_equal(a.message,
                        "Internal error occurred: failed calling webhook \"retry-503.hooks.example.com\": "
                        "failed to call webhook: context deadline exceeded");
    assert_int_equal(calls("/503"), 2); /* at 0 s and 1 s; a third at 2 s would be past the 2 s deadline */
    assert_true(a.ms >= 900 && a.ms < 1900);
}

/* D6 across groups: a core event matching only through events.k8s.io's rule is a call failure. */
static void test_equivalent_across_groups(void **state)
{
    answer_t a;
    char *body = strdup(
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"e-1\","
        "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Event\"},"
        "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"events\"},"
        "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Event\"},"
        "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"events\"},"
        "\"name\":\"e1\",\"namespace\":\"default\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"u\"}"
        ","
        "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\","
        "\"namespace\":\"default\",\"labels\":{\"t\":\"events\"}}},\"oldObject\":null,\"dryRun\":false}}");

    (void)state;
    ask_body("/validate", body, &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    assert_string_equal(a.message,
                        "Internal error occurred: failed calling webhook \"events-new.hooks.example.com\": "
                        "cannot convert /v1, Resource=events for matchPolicy Equivalent");
    assert_int_equal(calls("/events"), 0);
}

static void test_bad_settings_exit_2(void **state)
{
    char out[2048], bad[320];
    const char *flag_args[] = {"--webhook-circuit-breaker", "5", NULL};
    const char *ann_args[] = {"--webhook-config", bad, NULL};
    FILE *f;

    (void)state;
    assert_int_equal(h_run(flag_args, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "--webhook-circuit-breaker: \"5\": want K/COOLDOWN"));
    snprintf(bad, sizeof(bad), "%s/bad.yaml", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata:\n  name: x\n  annotations: {proxy.admitd.io/circuit-breaker: \"3/never\"}\n"
          "webhooks:\n- name: a.hooks.example.com\n  clientConfig: {url: \"https://a.example.com/\"}\n"
          "  sideEffects: None\n  admissionReviewVersions: [v1]\n",
          f);
    fclose(f);
    assert_int_equal(h_run(ann_args, out, sizeof(out), 10000), 2);
    assert_non_null(
        strstr(out, "metadata.annotations.proxy.admitd.io/circuit-breaker: Invalid value: \"3/never\""));
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata:\n  name: x\n  annotations: {proxy.admitd.io/shadow: \"maybe\"}\n"
          "webhooks:\n- name: a.hooks.example.com\n  clientConfig: {url: \"https://a.example.com/\"}\n"
          "  sideEffects: None\n  admissionReviewVersions: [v1]\n",
          f);
    fclose(f);
    assert_int_equal(h_run(ann_args, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "metadata.annotations.proxy.admitd.io/shadow: Invalid value: \"maybe\""));
}

static void test_shadow_webhooks_decide_nothing(void **state)
{
    answer_t a;
    char *m;

    (void)state;
    /* a shadow that denies: allowed, and the denial is in the record */
    ask("shadow", &a);
    assert_true(a.allowed);
    assert_non_null(strstr(a.annotations,
                           "\"shadow.validating.webhook.admitd.io.round_0_index_0\":\"{\\\"configuration\\\":"
                           "\\\"c-shadow\\\",\\\"webhook\\\":\\\"shadow-deny.hooks.example.com\\\","
                           "\\\"outcome\\\":\\\"denied\\\""));
    assert_non_null(strstr(a.annotations, "denied the request: not yet"));
    assert_true(h_log_wait(
        &admitd, "shadow validating webhook shadow-deny.hooks.example.com would have denied", 1, 5000));
    /* a shadow that fails under failurePolicy Fail: still allowed */
    ask("shadowfail", &a);
    assert_true(a.allowed);
    assert_non_null(strstr(a.annotations, "\\\"outcome\\\":\\\"failed\\\""));
    assert_non_null(strstr(a.annotations, "malformed HTTP response"));
    /* mutating shadows: the patch is recorded, not applied; the denial after it decides nothing */
    ask_at("/mutate", "shadowm", &a);
    assert_true(a.allowed);
    /* the default plugins may patch (Priority, ServiceAccount); the shadow's label never comes back */
    assert_null(strstr(a.patch, "/metadata/labels/s"));
    assert_non_null(strstr(a.annotations, "shadow.mutation.webhook.admitd.io.round_0_index_0"));
    assert_non_null(strstr(a.annotations, "shadow.mutation.webhook.admitd.io.round_0_index_1"));
    assert_non_null(strstr(a.annotations, "\\\"patch\\\":[{\\\"op\\\":\\\"add\\\""));
    m = metrics();
    assert_non_null(strstr(m, "admitd_webhook_shadow_calls_total{name=\"shadow-deny.hooks.example.com\","
                              "type=\"validating\",outcome=\"denied\"} 1"));
    assert_non_null(strstr(m, "admitd_webhook_shadow_calls_total{name=\"shadow-broken.hooks.example.com\","
                              "type=\"validating\",outcome=\"failed\"} 1"));
    assert_non_null(strstr(m, "admitd_webhook_shadow_patches_total{name=\"shadow-patch.hooks.example.com\","
                              "type=\"admit\"} 1"));
    assert_non_null(
        strstr(m, "admitd_webhook_shadow_latency_seconds_count{name=\"shadow-mdeny.hooks.example.com\","
                  "type=\"admit\"} 1"));
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_answers_in_gos_words),
        cmocka_unit_test(test_breaker_stops_waiting_for_a_dead_webhook),
        cmocka_unit_test(test_annotation_off_keeps_waiting),
        cmocka_unit_test(test_fail_closed_then_recovers_within_a_cool_down),
        cmocka_unit_test(test_shadow_webhooks_decide_nothing),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_equivalent_across_groups),
        cmocka_unit_test(test_bad_settings_exit_2),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

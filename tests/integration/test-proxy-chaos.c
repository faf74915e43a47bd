/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook proxy under load with misbehaving upstreams (the webhook-proxy issue's "no request
 * is lost"): two admitd-mockhook processes answer with a weighted mix of allow, hang, TCP reset,
 * close and HTTP 500, a third port refuses connections, and admitd calls five validating webhooks
 * (Fail and Ignore, timeoutSeconds 1) and two mutating ones on every /admit. admitd-bench drives it
 * in closed loop over TLS keep-alive with a deadline far above the webhooks' (10 s against 1 s),
 * and every request it sent must have come back as exactly one well-formed AdmissionReview answer
 * (allowed or denied; no HTTP error, malformed body, wrong uid, timeout or transport error, none
 * left unanswered), which admitd's own request counter confirms. admitd's resident memory after a
 * warm-up run and after a second equal run must be flat, and admitd must drain and exit 0 (under
 * ASan that includes the leak check).
 */
#include "adm/base/buf.h"
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
#include <sys/socket.h>
#include <yyjson.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define WARMUP_SECONDS "6s" /* long enough for the pools and buffers to reach their working size */
#define RUN_SECONDS "4s"
#define CONNECTIONS_N 48
#define STR_(x) #x
#define STR(x) STR_(x)
#define CONNECTIONS STR(CONNECTIONS_N)

/* The mix of every chaotic upstream: a fifth of the calls misbehave, each way as often. */
#define CHAOS_MIX "mix:allow=80,hang=5,reset=5,close=5,error:500=5"

static char dir[256];
static h_server_t mock1, mock2, admitd;
static int refused_port;

/* base64 of the PEM file at path (heap). */
static char *ca_bundle(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char pem[8192];
    size_t n, olen = 0;
    char *out;

    assert_non_null(f);
    n = fread(pem, 1, sizeof(pem), f);
    fclose(f);
    assert_true(n > 0 && n < sizeof(pem));
    out = malloc(n * 2 + 4);
    assert_non_null(out);
    assert_int_equal(mbedtls_base64_encode((unsigned char *)out, n * 2 + 4, &olen, pem, n), 0);
    out[olen] = '\0';
    return out;
}

static void hook(adm_buf_t *b, const char *name, int port, const char *ca, const char *path,
                 const char *policy)
{
    assert_int_equal(
        adm_buf_appendf(b,
                        "- name: %s\n"
                        "  clientConfig: {url: \"https://127.0.0.1:%d%s\", caBundle: \"%s\"}\n"
                        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], "
                        "resources: [\"*\"]}]\n"
                        "  sideEffects: None\n"
                        "  admissionReviewVersions: [\"v1\"]\n"
                        "  timeoutSeconds: 1\n"
                        "  failurePolicy: %s\n",
                        name, port, path, ca, policy),
        0);
}

static void write_file(const char *path, const adm_buf_t *b)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    const char *chaos[] = {
        "--behavior", CHAOS_MIX, "--delay", "1ms..5ms",
        /* a mutating webhook that always patches (the mix cannot hold a patch) */
        "--route", "/patch=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/chaos\",\"value\":\"yes\"}]",
        NULL};
    const char *plain[] = {NULL};
    h_server_t gone;
    char config[320], *ca1, *ca2, *ca3;
    adm_buf_t b = ADM_BUF_INIT;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(h_start_prog(&mock1, h_bin("MOCKHOOK_BIN"), NULL, chaos), 0);
    assert_int_equal(h_start_prog(&mock2, h_bin("MOCKHOOK_BIN"), NULL, chaos), 0);
    /* connection refused: the port of a server that has stopped */
    assert_int_equal(h_start_prog(&gone, h_bin("MOCKHOOK_BIN"), NULL, plain), 0);
    assert_int_equal(h_stop(&gone, 15, 5000), 0);
    refused_port = gone.port;
    ca1 = ca_bundle(mock1.ca);
    ca2 = ca_bundle(mock2.ca);
    ca3 = ca_bundle(gone.ca);
    h_cleanup(&gone);

    assert_int_equal(adm_buf_append_str(&b, "apiVersion: admissionregistration.k8s.io/v1\n"
                                            "kind: ValidatingWebhookConfiguration\n"
                                            "metadata: {name: chaos}\n"
                                            "webhooks:\n"),
                     0);
    hook(&b, "v1.chaos.example", mock1.port, ca1, "/v1", "Fail");
    hook(&b, "v2.chaos.example", mock1.port, ca1, "/v2", "Ignore");
    hook(&b, "v3.chaos.example", mock2.port, ca2, "/v3", "Fail");
    hook(&b, "v4.chaos.example", mock2.port, ca2, "/v4", "Ignore");
    hook(&b, "v5.chaos.example", refused_port, ca3, "/v5", "Ignore");
    assert_int_equal(adm_buf_append_str(&b, "---\n"
                                            "apiVersion: admissionregistration.k8s.io/v1\n"
                                            "kind: MutatingWebhookConfiguration\n"
                                            "metadata: {name: chaos-mutating}\n"
                                            "webhooks:\n"),
                     0);
    hook(&b, "m1.chaos.example", mock2.port, ca2, "/m1", "Ignore");
    hook(&b, "m2.chaos.example", mock1.port, ca1, "/patch", "Fail");
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    write_file(config, &b);
    adm_buf_free(&b);
    free(ca1);
    free(ca2);
    free(ca3);
    {
        const char *args[] = {"--webhook-config",
                              config,
                              "--shutdown-delay",
                              "0s",
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              NULL};

        assert_int_equal(h_start(&admitd, dir, args), 0);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    h_cleanup(&admitd); /* also removes dir */
    h_stop(&mock1, 15, 5000);
    h_stop(&mock2, 15, 5000);
    h_cleanup(&mock1);
    h_cleanup(&mock2);
    return 0;
}

typedef struct counts_s {
    long long sent, unfinished, allowed, denied, errors;
    char error_text[512];
} counts_t;

static long long num(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    assert_true(yyjson_is_uint(v));
    return (long long)yyjson_get_uint(v);
}

/* One admitd-bench run against admitd's /admit; its JSON report, counted. */
static void drive(counts_t *c, const char *label, const char *duration)
{
    char url[128], json[320], out[8192];
    const char *review = getenv("ADM_BENCH_REVIEWS");
    char review_path[512];
    const char *args[] = {"--url",     url,          "--cacert", admitd.ca,
                          "--review",  review_path,  "--closed", "--connections",
                          CONNECTIONS, "--duration", duration,   "--timeout",
                          "10s",       "--json",     json,       NULL};
    yyjson_doc *doc;
    yyjson_val *req, *key, *val;
    yyjson_obj_iter it;
    int rc;

    assert_non_null(review);
    snprintf(review_path, sizeof(review_path), "%s/pod-4k.v1.json", review);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/admit", admitd.port);
    snprintf(json, sizeof(json), "%s/%s.json", dir, label);
    rc = h_run_prog(h_bin("BENCH_BIN"), args, out, sizeof(out), 40000);
    print_message("admitd-bench (%s): %s", label, out);
    assert_int_equal(rc, 0);
    doc = yyjson_read_file(json, 0, NULL, NULL);
    assert_non_null(doc);
    req = yyjson_obj_get(yyjson_doc_get_root(doc), "requests");
    assert_true(yyjson_is_obj(req));
    memset(c, 0, sizeof(*c));
    yyjson_obj_iter_init(req, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *k = yyjson_get_str(key);
        long long n;

        val = yyjson_obj_iter_get_val(key);
        assert_true(yyjson_is_uint(val));
        n = (long long)yyjson_get_uint(val);
        if (strcmp(k, "sent") == 0) {
            c->sent = n;
        } else if (strcmp(k, "unfinished") == 0) {
            c->unfinished = n;
        } else if (strcmp(k, "allowed") == 0) {
            c->allowed = n;
        } else if (strcmp(k, "denied") == 0) {
            c->denied = n;
        } else if (n > 0) {
            size_t used = strlen(c->error_text);

            c->errors += n;
            snprintf(c->error_text + used, sizeof(c->error_text) - used, " %s=%lld", k, n);
        }
    }
    assert_int_equal(num(req, "sent"), c->sent);
    yyjson_doc_free(doc);
}

/* admitd's VmRSS in KiB; fails the test when it cannot be read. */
static long rss_kib(pid_t pid)
{
    long kib = h_rss_kib(pid);

    assert_true(kib > 0);
    return kib;
}

/* From admitd's /metrics: admitd_requests_total for /admit, with code 200 and with any other code. */
static void admit_counts(long long *ok, long long *other)
{
    h_conn_t c;
    h_response_t r;
    size_t len;
    char *req = h_request("GET", "/metrics", NULL, NULL, 0, &len);
    const char *needle = "admitd_requests_total{endpoint=\"admit\",code=\"";
    const char *p;

    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(adm_buf_append(&r.body, "", 1), 0);
    *ok = *other = 0;
    for (p = strstr((const char *)r.body.data, needle); p != NULL; p = strstr(p + 1, needle)) {
        char *end;
        long code = strtol(p + strlen(needle), &end, 10);
        long long n = strtoll(end + 3, NULL, 10); /* past "\"} " */

        if (code == 200) {
            *ok += n;
        } else {
            *other += n;
        }
    }
    h_response_free(&r);
    h_close(&c);
    free(req);
}

static void check(const counts_t *c, const char *label)
{
    print_message("%s: sent %lld = allowed %lld + denied %lld; errors %lld%s; unfinished %lld\n", label,
                  c->sent, c->allowed, c->denied, c->errors, c->error_text, c->unfinished);
    assert_true(c->sent > 0);
    assert_int_equal(c->errors, 0);
    assert_int_equal(c->unfinished, 0);
    assert_int_equal(c->sent, c->allowed + c->denied);
    /* the chaos showed on both sides: fail-closed webhooks denied some, the rest went through */
    assert_true(c->allowed > 0);
    assert_true(c->denied > 0);
}

static void test_every_request_answered_memory_flat(void **state)
{
    counts_t warm, first, second, third;
    long rss_warm, rss_first, rss_after, rss_third, growth, bound, step_bound, step;
    long long total, other, sent;

    (void)state;
    drive(&warm, "warmup", WARMUP_SECONDS);
    check(&warm, "warm-up");
    rss_warm = rss_kib(admitd.pid);
    drive(&first, "run1", RUN_SECONDS);
    check(&first, "run 1");
    rss_first = rss_kib(admitd.pid);
    drive(&second, "run2", RUN_SECONDS);
    check(&second, "run 2");
    rss_after = rss_kib(admitd.pid);
    drive(&third, "run3", RUN_SECONDS);
    check(&third, "run 3");
    rss_third = rss_kib(admitd.pid);

    /*
     * admitd's own count agrees: every /admit request was answered with 200. admitd-bench counts
     * the requests sent inside the measured window; each run also sends one request first to
     * check the target, and in closed loop each connection may send one more in the moment
     * between the window's end and the stop (not counted, but answered before admitd-bench exits:
     * unfinished is 0). So admitd answered sent + 4 plus at most one per connection and run.
     */
    admit_counts(&total, &other);
    sent = warm.sent + first.sent + second.sent + third.sent;
    print_message(
        "admitd answered %lld /admit requests with 200 and %lld otherwise; admitd-bench sent %lld\n", total,
        other, sent);
    assert_int_equal(other, 0);
    assert_true(total >= sent + 4);
    assert_true(total <= sent + 4 + 4 * CONNECTIONS_N);

    /*
     * Flat memory. The warm-up brings the pools, connection buffers (kept up to 256 KiB each) and
     * request arenas near their working size; the first run after it still moves by high-water
     * marks (the most connections held open at once by hanging upstreams, ~40 KiB of TLS buffers
     * each): 0.3-2.9 MiB measured, on ~22 MiB. A later, equal run may still move a mark (up to 2.1
     * MiB seen on a run 2, with code that leaks nothing under ASan's leak check), but a leak adds to
     * every run: one of a 4.4 KiB review copy per request ~3 MiB (~700 requests a run), one of a
     * TLS connection per reset or hang ~4 MiB (~100 a run). So of runs 2 and 3 the smaller growth
     * must be under 2 MiB, and over runs 1 and 2 the growth under 6 MiB or 10%, whichever is
     * larger. ASan's quarantine keeps freed memory mapped, so there the bounds are loose and the
     * leak check at exit does the work.
     */
    growth = rss_after - rss_warm;
    step = rss_after - rss_first < rss_third - rss_after ? rss_after - rss_first : rss_third - rss_after;
    bound = rss_warm / 10 > 6144 ? rss_warm / 10 : 6144;
    step_bound = 2048;
    if (UNDER_ASAN) {
        bound = step_bound = 256 * 1024;
    }
    print_message(
        "admitd VmRSS: %ld KiB after the warm-up, %ld after run 1 (%+ld), %ld after run 2 (%+ld), %ld "
        "after run 3 (%+ld; bounds %ld on the smaller of the last two, %ld over runs 1 and 2)\n",
        rss_warm, rss_first, rss_first - rss_warm, rss_after, rss_after - rss_first, rss_third,
        rss_third - rss_after, step_bound, bound);
    assert_true(step < step_bound);
    assert_true(growth < bound);

    /* a clean drain: exit 0 (and no leak under ASan) */
    assert_int_equal(h_stop(&admitd, 15, 20000), 0);
}

static void post_mutate(h_conn_t *c, int port)
{
    size_t body_len, len;
    char *body = h_fixture("pod-create.v1.review.json", &body_len);
    char *req = h_request("POST", "/mutate", "application/json", body, body_len, &len);

    assert_int_equal(h_connect(c, port, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(h_send(c, req, len), 0);
    free(req);
    free(body);
}

/*
 * A call whose dial fails at once (connect(2) refuses 255.255.255.255 with ENETUNREACH before any
 * packet; so do EMFILE and ENOBUFS under load) used to end inside adm_upstream_post, before the
 * webhook code had the call: the mutating walk went on from inside the post, started the next
 * webhook's call, and then overwrote its handle with the finished one. A client that reset its
 * connection then cancelled the wrong call, and the hanging one came back later into the released
 * request (UBSan caught the garbage; a plain build logged a fail-open for a request long gone).
 * Now the next webhook's call is the one cancelled: it never reports.
 */
static void test_cancel_after_immediate_dial_failure(void **state)
{
    const char *mock_args[] = {"--behavior", "hang", "--record", NULL, NULL};
    char mdir[256], record[320], config[320], *ca;
    h_server_t hang, ad;
    h_conn_t c1, c2;
    h_response_t r;
    adm_buf_t b = ADM_BUF_INIT;
    struct linger lg = {1, 0};

    (void)state;
    assert_int_equal(certgen_tempdir(mdir, sizeof(mdir)), 0);
    snprintf(record, sizeof(record), "%s/requests.jsonl", mdir);
    mock_args[3] = record;
    assert_int_equal(h_start_prog(&hang, h_bin("MOCKHOOK_BIN"), mdir, mock_args), 0);
    ca = ca_bundle(hang.ca);
    assert_int_equal(adm_buf_append_str(&b, "apiVersion: admissionregistration.k8s.io/v1\n"
                                            "kind: MutatingWebhookConfiguration\n"
                                            "metadata: {name: dial}\n"
                                            "webhooks:\n"),
                     0);
    hook(&b, "m0.dial.example", 443, ca, "/unreachable", "Ignore");
    hook(&b, "m1.dial.example", hang.port, ca, "/hang", "Ignore");
    /* m0 dials the broadcast address, m1 hangs for its whole 1 s */
    {
        const char *from = "https://127.0.0.1:443/unreachable";
        char *p = strstr((char *)b.data, from);

        assert_non_null(p);
        memcpy(p, "https://255.255.255.255:443/x/y/z", strlen(from));
    }
    free(ca);
    snprintf(config, sizeof(config), "%s/dial.yaml", hang.dir);
    write_file(config, &b);
    adm_buf_free(&b);
    {
        const char *args[] = {"--webhook-config",
                              config,
                              "--insecure-http",
                              "--shutdown-delay",
                              "0s",
                              "--v",
                              "1",
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              NULL};

        assert_int_equal(h_start(&ad, NULL, args), 0);
    }

    /* first request: reset by the client while m1 hangs */
    post_mutate(&c1, ad.port);
    assert_true(h_wait_lines(record, "\"/hang\"", 1, 5000));
    assert_int_equal(setsockopt(c1.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
    h_close(&c1);
    /* second request, answered once m1's 1 s is up (it failed open): by then the first request's
       m1 call, had it not been cancelled, has timed out as well */
    post_mutate(&c2, ad.port);
    assert_int_equal(h_read(&c2, &r, 5000, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(adm_buf_append(&r.body, "", 1), 0);
    assert_non_null(strstr((const char *)r.body.data, "\"allowed\":true"));
    h_response_free(&r);
    h_close(&c2);
    assert_true(h_wait_lines(record, "\"/hang\"", 2, 5000));
    /* m1 failed open once: for the second request only */
    if (h_count_lines(ad.log, "mutating webhook m1.dial.example failed open") != 1) {
        h_dump_log(&ad);
    }
    assert_int_equal(h_count_lines(ad.log, "mutating webhook m1.dial.example failed open"), 1);
    assert_int_equal(h_count_lines(ad.log, "mutating webhook m0.dial.example failed open"), 2);
    assert_int_equal(h_stop(&ad, 15, 20000), 0);
    h_cleanup(&ad);
    h_stop(&hang, 15, 5000);
    h_cleanup(&hang);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_request_answered_memory_flat),
        cmocka_unit_test(test_cancel_after_immediate_dial_failure),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

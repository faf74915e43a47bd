/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench: a load generator for AdmissionReview webhooks, on one libuv loop with admitd's
 * own client (keep-alive pool, mbedTLS, llhttp).
 *
 * Open loop (--rate N): request k is due at start + k/N whatever happened before, and its latency
 * runs from that intended time, so a server that stalls is charged for every request it held up
 * (no coordinated omission). Requests wait for a free connection in FIFO order, and that wait
 * counts. Closed loop (--closed): each connection sends its next request as soon as it has an
 * answer; latency runs from the send.
 *
 * Every request carries a fresh uid, and the answer is checked: allowed, denied, HTTP error,
 * malformed, answer for another uid, or the transport failure, each counted apart.
 */
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/histogram.h"
#include "adm/base/json.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/net/tls.h"
#include "adm/net/upstream.h"
#include "cli.h"
#include "report.h"
#include "reviewset.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#include <yyjson.h>

/*
 * Open loop: at most one pacer wake-up per PACE_NS. Every wake-up sends what is due, never early, so
 * a request can leave up to this late, and that wait counts in its latency. Each sleep and wake-up
 * costs ~20 us of CPU on these VMs, so waking for every request at tens of thousands a second would
 * take half the generator's core.
 */
#define PACE_NS 100000ull
/* After the run, unanswered requests get this long (beyond their own timeout they fail anyway). */
#define DRAIN_EXTRA_MS 1000
/* Tries of the first request when the connection is closed or reset, or the answer is not HTTP. */
#define PROBE_TRIES 5

typedef struct bench_s bench_t;

typedef struct request_s {
    bench_t *b;
    uint64_t start_ns; /* intended (open loop) or actual (closed loop) send time */
    bool measured;
    char uid[ADM_UID_LEN + 1];
    struct request_s *next;
} request_t;

struct bench_s {
    uv_loop_t *loop;
    adm_upstream_t *up;
    adm_tls_ctx_t *tls;
    adm_reviewset_t reviews;
    const char *url;
    const char *review_path;
    char *path; /* path and query of the URL */
    bool closed;
    double rate;
    uint64_t connections;
    uint64_t duration_ms, warmup_ms, timeout_ms;
    uint64_t t0_ns;      /* run start */
    uint64_t measure_ns; /* end of warmup */
    uint64_t end_ns;     /* end of the measured window */
    uint64_t seq;
    uint64_t salt;
    uint64_t next_due; /* open loop: requests issued so far */
    uint64_t outstanding;
    uint64_t measured_outstanding; /* of those, sent inside the measured window */
    bool stopping;
    report_t report;
    adm_hist_t *hist;
    adm_arena_t *scratch; /* parsing answers, reset after each */
    request_t *free_requests;
    uv_poll_t pacer; /* open loop: a timerfd armed for the next request's due time */
    int pacer_fd;
    bool closed_handles;
    uv_timer_t stop;
    uv_signal_t sigint;
    struct rusage usage_at_measure;
    uint64_t measured_cpu_ns;
    bool probe_done;
    adm_call_result_t probe;
    char probe_detail[256];
};

static const char usage[] =
    "usage: admitd-bench --url URL --review FILE|DIR [flags]\n"
    "Load generator for AdmissionReview webhooks (admitd or any other).\n\n"
    "  --url URL            https://HOST:PORT/PATH (or http://) of the webhook\n"
    "  --review FILE|DIR    an AdmissionReview, or a folder of *.json ones cycled through; every\n"
    "                       request gets a fresh uid\n"
    "  --rate N             open loop at N requests/s; latency from each intended send time\n"
    "  --closed             closed loop: every connection sends again as soon as it is answered\n"
    "                       (the default when --rate is not given)\n"
    "  --connections N      connections (open loop: at most; default 16)\n"
    "  --duration D         measured time (default 30s)\n"
    "  --warmup D           run this long first without counting (default 0s)\n"
    "  --timeout D          per-request deadline (default 10s)\n"
    "  --cacert F           PEM CA bundle to verify the server (default: system CAs)\n"
    "  --cert F, --key F    client certificate and key (mTLS)\n"
    "  --insecure           do not verify the server's certificate\n"
    "  --tls12              offer TLS 1.2 only\n"
    "  --json OUT           write the results with the full histogram as JSON\n"
    "  --html OUT           write a self-contained HTML page with a latency-by-percentile plot\n"
    "  --help, --version\n\n"
    "Exit status: 0 after a run; 1 when the target cannot be reached (or refuses TLS) before the\n"
    "run, or when nothing in the run was allowed or denied; 2 for bad flags or files.\n";

static uint64_t now_ns(void)
{
    return uv_hrtime();
}

static uint64_t cpu_ns(const struct rusage *u)
{
    return (uint64_t)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1000000000ull +
           (uint64_t)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) * 1000ull;
}

static outcome_t classify_error(adm_call_error_t e)
{
    switch (e) {
    case ADM_CALL_TIMEOUT: return OUT_TIMEOUT;
    case ADM_CALL_DNS:
    case ADM_CALL_CONNECT: return OUT_CONNECT;
    case ADM_CALL_TLS: return OUT_TLS;
    case ADM_CALL_PROTOCOL: return OUT_PROTOCOL;
    default: return OUT_IO;
    }
}

/* Reads an answer: allowed, denied, malformed, or someone else's. */
static outcome_t classify_answer(bench_t *b, const adm_call_result_t *res, const char *uid)
{
    yyjson_read_err err;
    yyjson_doc *doc;
    yyjson_val *response, *got_uid, *allowed;
    outcome_t out;

    if (res->status != 200) {
        return OUT_HTTP_ERROR;
    }
    doc = adm_json_read(b->scratch, (const char *)res->body, res->body_len, &err);
    response = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    got_uid = yyjson_obj_get(response, "uid");
    allowed = yyjson_obj_get(response, "allowed");
    if (!yyjson_is_str(got_uid) || !yyjson_is_bool(allowed)) {
        out = OUT_MALFORMED;
    } else if (strcmp(yyjson_get_str(got_uid), uid) != 0) {
        out = OUT_UID_MISMATCH;
    } else {
        out = yyjson_get_bool(allowed) ? OUT_ALLOWED : OUT_DENIED;
    }
    adm_arena_reset(b->scratch);
    return out;
}

static void issue(bench_t *b, uint64_t start_ns);
static void maybe_finish(bench_t *b);

static void on_answer(const adm_call_result_t *res, void *arg)
{
    request_t *rq = arg;
    bench_t *b = rq->b;
    uint64_t t = now_ns();
    outcome_t out = res->error == ADM_CALL_OK ? classify_answer(b, res, rq->uid) : classify_error(res->error);

    b->outstanding--;
    if (rq->measured) {
        b->measured_outstanding--;
        b->report.outcomes[out]++;
        if (out == OUT_HTTP_ERROR && res->status >= 0 && res->status < 600) {
            b->report.http_status[res->status]++;
        }
        if (res->error == ADM_CALL_OK) {
            adm_hist_record(b->hist, t > rq->start_ns ? t - rq->start_ns : 0);
        } else if (b->report.outcomes[out] == 1) {
            fprintf(stderr, "admitd-bench: first %s error: %s\n", outcome_name(out), res->detail);
        }
    }
    if (t >= b->measure_ns && t < b->end_ns) {
        b->report.completed_in_window++;
    }
    rq->next = b->free_requests;
    b->free_requests = rq;
    if (b->closed && !b->stopping) {
        issue(b, t);
    }
    maybe_finish(b);
}

static void issue(bench_t *b, uint64_t start_ns)
{
    adm_review_body_t *body = &b->reviews.bodies[b->seq % b->reviews.n];
    request_t *rq = b->free_requests;

    if (rq != NULL) {
        b->free_requests = rq->next;
    } else {
        rq = calloc(1, sizeof(*rq));
    }
    if (rq == NULL) {
        return;
    }
    rq->b = b;
    rq->start_ns = start_ns;
    rq->measured = start_ns >= b->measure_ns && start_ns < b->end_ns;
    adm_reviewset_stamp(body, b->salt, b->seq++, rq->uid);
    /* counted first: a call that fails at once (out of memory) answers inside adm_upstream_post */
    b->outstanding++;
    if (rq->measured) {
        b->report.sent++;
        b->measured_outstanding++;
    }
    if (adm_upstream_post(b->up, b->path, NULL, body->data, body->len, b->timeout_ms, on_answer, rq) ==
        NULL) {
        b->outstanding--;
        if (rq->measured) {
            b->report.sent--;
            b->measured_outstanding--;
        }
        rq->next = b->free_requests;
        b->free_requests = rq;
    }
}

static uint64_t due_ns(const bench_t *b, uint64_t k)
{
    return b->t0_ns + (uint64_t)((double)k * (1e9 / b->rate));
}

/* Arms the pacer for an absolute uv_hrtime() instant (CLOCK_MONOTONIC, as uv_hrtime reads). */
static void pacer_arm(bench_t *b, uint64_t at_ns)
{
    struct itimerspec its = {{0, 0}, {(time_t)(at_ns / 1000000000ull), (long)(at_ns % 1000000000ull)}};

    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) {
        its.it_value.tv_nsec = 1; /* zero would disarm */
    }
    timerfd_settime(b->pacer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * Open loop: sends every request whose time has come, then sleeps until the next one is due. A
 * timerfd rather than a libuv timer: libuv's are whole milliseconds, and a request held back to
 * the next millisecond tick is charged that wait (up to 1 ms) as if the server had taken it, and is
 * sent in a burst with the others of its tick. Here that wait is at most PACE_NS.
 */
static void on_pace(uv_poll_t *h, int status, int events)
{
    bench_t *b = h->data;
    uint64_t expirations, now = now_ns();

    (void)status;
    (void)events;
    if (read(b->pacer_fd, &expirations, sizeof(expirations)) < 0) {
        /* EAGAIN: nothing to consume */
    }
    for (;;) {
        uint64_t due = due_ns(b, b->next_due);

        if (due >= b->end_ns || b->stopping) {
            uv_poll_stop(&b->pacer);
            return;
        }
        if (due > now) {
            pacer_arm(b, due > now + PACE_NS ? due : now + PACE_NS);
            return;
        }
        b->next_due++;
        issue(b, due);
    }
}

static void report_and_close(bench_t *b)
{
    struct rusage u;

    getrusage(RUSAGE_SELF, &u);
    b->measured_cpu_ns = cpu_ns(&u) - cpu_ns(&b->usage_at_measure);
    b->closed_handles = true;
    uv_timer_stop(&b->stop);
    if (b->pacer_fd >= 0) {
        uv_poll_stop(&b->pacer);
        uv_close((uv_handle_t *)&b->pacer, NULL);
    }
    uv_close((uv_handle_t *)&b->stop, NULL);
    uv_close((uv_handle_t *)&b->sigint, NULL);
    b->report.unfinished = b->measured_outstanding; /* warmup requests are not in sent either */
    adm_upstream_close(b->up);
}

static void maybe_finish(bench_t *b)
{
    if (b->stopping && b->outstanding == 0 && !b->closed_handles) {
        report_and_close(b);
    }
}

static void on_stop(uv_timer_t *t)
{
    bench_t *b = t->data;

    if (!b->stopping) {
        /* the measured window is over: send nothing more, wait for the answers owed */
        b->stopping = true;
        if (b->pacer_fd >= 0) {
            uv_poll_stop(&b->pacer);
        }
        if (b->outstanding > 0) {
            uv_timer_start(&b->stop, on_stop, b->timeout_ms + DRAIN_EXTRA_MS, 0);
        }
        maybe_finish(b);
        return;
    }
    report_and_close(b); /* gave up waiting */
}

static void on_measure(uv_timer_t *t)
{
    bench_t *b = t->data;

    getrusage(RUSAGE_SELF, &b->usage_at_measure);
    uv_timer_start(&b->stop, on_stop, b->duration_ms, 0);
}

static void on_sigint(uv_signal_t *h, int signum)
{
    bench_t *b = h->data;

    (void)signum;
    fprintf(stderr, "admitd-bench: interrupted; reporting what was measured\n");
    b->end_ns = now_ns();
    b->duration_ms = b->end_ns > b->measure_ns ? (b->end_ns - b->measure_ns) / 1000000 : 0;
    if (!b->stopping) {
        on_stop(&b->stop);
    }
}

static void on_probe(const adm_call_result_t *res, void *arg)
{
    bench_t *b = arg;

    b->probe_done = true;
    b->probe = *res;
    snprintf(b->probe_detail, sizeof(b->probe_detail), "%s", res->detail != NULL ? res->detail : "");
    b->probe.detail = b->probe_detail;
}

/* URL: http[s]://HOST[:PORT][/PATH[?QUERY]] with HOST a name, IPv4 or [IPv6]. */
static void parse_url(cli_t *cli, const char *url, bool *tls, char *host, size_t host_len, uint16_t *port,
                      char **path)
{
    const char *rest, *problem;

    if (adm_url_split(url, tls, host, host_len, port, &rest, &problem) != 0) {
        cli_fail(cli, "--url: \"%s\": %s", url, problem);
    }
    if (*rest == '\0') {
        *path = strdup("/");
    } else if (*rest == '?') {
        if (asprintf(path, "/%s", rest) < 0) {
            *path = NULL;
        }
    } else {
        *path = strdup(rest);
    }
}

/* Frees what main made, the loop included (its handles are all closed by now). */
static void bench_free(bench_t *b)
{
    uv_loop_close(b->loop);
    if (b->pacer_fd >= 0) {
        close(b->pacer_fd);
    }
    while (b->free_requests != NULL) {
        request_t *rq = b->free_requests;

        b->free_requests = rq->next;
        free(rq);
    }
    adm_reviewset_free(&b->reviews);
    adm_tls_ctx_unref(b->tls);
    adm_arena_destroy(b->scratch);
    free(b->hist);
    free(b->path);
    adm_tls_global_cleanup();
}

/* No run, no report: an output opened before the run is removed rather than left empty. */
static void discard_output(FILE *f, const char *path)
{
    if (f != NULL) {
        fclose(f);
        remove(path);
    }
}

int main(int argc, char **argv)
{
    static bench_t bench;
    bench_t *b = &bench;
    adm_tls_client_opts_t tls_opts = {0};
    adm_upstream_opts_t up_opts = {0};
    uv_loop_t loop;
    cli_t cli;
    const char *flag, *json_out = NULL, *html_out = NULL;
    FILE *json_f = NULL, *html_f = NULL;
    char host[256], err[512];
    uint16_t port;
    bool use_tls = false, has_rate = false;
    struct rusage u0;
    int rc;

    b->pacer_fd = -1;
    b->connections = 16;
    b->duration_ms = 30000;
    b->timeout_ms = 10000;
    cli_init(&cli, "admitd-bench", argc, argv);
    for (flag = cli_next(&cli); flag != NULL; flag = cli_next(&cli)) {
        if (cli_is(&cli, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (cli_is(&cli, "--version")) {
            printf("admitd-bench %s\n", ADM_VERSION);
            return 0;
        } else if (cli_is(&cli, "--url")) {
            b->url = cli_value(&cli);
        } else if (cli_is(&cli, "--review")) {
            b->review_path = cli_value(&cli);
        } else if (cli_is(&cli, "--rate")) {
            b->rate = (double)cli_uint(&cli, 1, 10000000);
            has_rate = true;
        } else if (cli_is(&cli, "--closed")) {
            cli_no_value(&cli);
            b->closed = true;
        } else if (cli_is(&cli, "--connections")) {
            b->connections = cli_uint(&cli, 1, 100000);
        } else if (cli_is(&cli, "--duration")) {
            b->duration_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--warmup")) {
            b->warmup_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--timeout")) {
            b->timeout_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--cacert")) {
            tls_opts.ca_file = cli_value(&cli);
        } else if (cli_is(&cli, "--cert")) {
            tls_opts.cert_file = cli_value(&cli);
        } else if (cli_is(&cli, "--key")) {
            tls_opts.key_file = cli_value(&cli);
        } else if (cli_is(&cli, "--insecure")) {
            cli_no_value(&cli);
            tls_opts.insecure = true;
        } else if (cli_is(&cli, "--tls12")) {
            cli_no_value(&cli);
            tls_opts.max_tls12 = true;
        } else if (cli_is(&cli, "--json")) {
            json_out = cli_value(&cli);
        } else if (cli_is(&cli, "--html")) {
            html_out = cli_value(&cli);
        } else {
            cli_fail(&cli, "unknown flag %s (see --help)", flag);
        }
    }
    if (b->url == NULL || b->review_path == NULL) {
        cli_fail(&cli, "--url and --review are required (see --help)");
    }
    if (has_rate && b->closed) {
        cli_fail(&cli, "--rate and --closed exclude each other");
    }
    b->closed = !has_rate;
    if (b->duration_ms == 0 || b->timeout_ms == 0) {
        cli_fail(&cli, "--duration and --timeout must be positive");
    }
    if ((tls_opts.cert_file == NULL) != (tls_opts.key_file == NULL)) {
        cli_fail(&cli, "--cert and --key go together");
    }
    parse_url(&cli, b->url, &use_tls, host, sizeof(host), &port, &b->path);
    if (b->path == NULL) {
        return 1;
    }
    if (adm_reviewset_load(b->review_path, &b->reviews, err, sizeof(err)) != 0) {
        cli_fail(&cli, "--review %s", err);
    }
    signal(SIGPIPE, SIG_IGN);
    adm_log_configure(ADM_LOG_TEXT, 0);
    if (adm_tls_global_init() != 0) {
        fprintf(stderr, "admitd-bench: cannot initialise the crypto library\n");
        return 1;
    }
    if (use_tls && adm_tls_client_ctx_create(&tls_opts, &b->tls, err, sizeof(err)) != 0) {
        cli_fail(&cli, "%s", err);
    }
    /* outputs are opened now: a path that cannot be written fails before the run, not after it */
    if (json_out != NULL) {
        json_f = fopen(json_out, "w");
        if (json_f == NULL) {
            cli_fail(&cli, "--json %s: cannot write: %s", json_out, strerror(errno));
        }
    }
    if (html_out != NULL) {
        html_f = fopen(html_out, "w");
        if (html_f == NULL) {
            cli_fail(&cli, "--html %s: cannot write: %s", html_out, strerror(errno));
        }
    }
    b->hist = calloc(1, sizeof(*b->hist));
    b->scratch = adm_arena_create(256 * 1024);
    if (b->hist == NULL || b->scratch == NULL) {
        fprintf(stderr, "admitd-bench: out of memory\n");
        return 1;
    }
    adm_hist_init(b->hist);
    uv_loop_init(&loop);
    b->loop = &loop;
    up_opts.host = host;
    up_opts.port = port;
    up_opts.tls = b->tls;
    up_opts.max_conns = b->connections;
    up_opts.max_body_bytes = 64u * 1024 * 1024;
    if (adm_upstream_create(&loop, &up_opts, &b->up) != 0) {
        fprintf(stderr, "admitd-bench: out of memory\n");
        return 1;
    }
    b->salt = now_ns();

    /* One request first: an unreachable target or a TLS failure is one clear line, not a run of
       errors. A connection closed or reset, or a malformed answer, may be a chaotic target
       (mix:allow=90,reset=10) rather than a broken one: it gets a few more tries. */
    for (int attempt = 0;; attempt++) {
        adm_review_body_t *body = &b->reviews.bodies[0];
        char uid[ADM_UID_LEN + 1];

        adm_reviewset_stamp(body, b->salt, b->seq++, uid);
        b->probe_done = false;
        if (adm_upstream_post(b->up, b->path, NULL, body->data, body->len, b->timeout_ms, on_probe, b) ==
            NULL) {
            fprintf(stderr, "admitd-bench: out of memory\n");
            return 1;
        }
        while (!b->probe_done && uv_run(&loop, UV_RUN_ONCE) != 0) {
        }
        if (b->probe.error == ADM_CALL_OK || b->probe.error == ADM_CALL_TIMEOUT) {
            break;
        }
        if ((b->probe.error != ADM_CALL_IO && b->probe.error != ADM_CALL_PROTOCOL) ||
            attempt + 1 == PROBE_TRIES) {
            fprintf(stderr, "admitd-bench: %s: %s\n", b->url, b->probe.detail);
            discard_output(json_f, json_out);
            discard_output(html_f, html_out);
            adm_upstream_close(b->up);
            uv_run(&loop, UV_RUN_DEFAULT);
            bench_free(b);
            return 1;
        }
    }

    b->t0_ns = now_ns();
    b->measure_ns = b->t0_ns + b->warmup_ms * 1000000ull;
    b->end_ns = b->measure_ns + b->duration_ms * 1000000ull;
    b->pacer_fd = -1;
    uv_timer_init(&loop, &b->stop);
    b->stop.data = b;
    uv_signal_init(&loop, &b->sigint);
    b->sigint.data = b;
    uv_signal_start(&b->sigint, on_sigint, SIGINT);
    getrusage(RUSAGE_SELF, &u0);
    b->usage_at_measure = u0;
    if (b->warmup_ms > 0) {
        uv_timer_start(&b->stop, on_measure, b->warmup_ms, 0);
    } else {
        uv_timer_start(&b->stop, on_stop, b->duration_ms, 0);
    }
    if (b->closed) {
        for (uint64_t i = 0; i < b->connections; i++) {
            issue(b, now_ns());
        }
    } else {
        b->pacer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (b->pacer_fd < 0 || uv_poll_init(&loop, &b->pacer, b->pacer_fd) != 0) {
            fprintf(stderr, "admitd-bench: cannot create the open-loop pacer (timerfd)\n");
            return 1;
        }
        b->pacer.data = b;
        uv_poll_start(&b->pacer, UV_READABLE, on_pace);
        pacer_arm(b, b->t0_ns);
    }
    uv_run(&loop, UV_RUN_DEFAULT);

    b->report.url = b->url;
    b->report.closed = b->closed;
    b->report.rate = b->rate;
    b->report.connections = b->connections;
    b->report.duration_s = (double)b->duration_ms / 1e3;
    b->report.warmup_s = (double)b->warmup_ms / 1e3;
    b->report.reviews = b->review_path;
    b->report.nreviews = b->reviews.n;
    b->report.throughput =
        b->duration_ms > 0 ? (double)b->report.completed_in_window * 1e3 / (double)b->duration_ms : 0;
    b->report.cpu_percent =
        b->duration_ms > 0 ? (double)b->measured_cpu_ns / ((double)b->duration_ms * 1e6) * 100.0 : 0;
    b->report.hist = b->hist;
    report_text(&b->report, stdout);
    rc = b->report.sent > 0 && b->report.outcomes[OUT_ALLOWED] + b->report.outcomes[OUT_DENIED] == 0 ? 1 : 0;
    if (json_f != NULL && report_json(&b->report, json_f) != 0) {
        fprintf(stderr, "admitd-bench: --json %s: cannot write: %s\n", json_out, strerror(errno));
        rc = 1;
    }
    if (html_f != NULL && report_html(&b->report, html_f) != 0) {
        fprintf(stderr, "admitd-bench: --html %s: cannot write: %s\n", html_out, strerror(errno));
        rc = 1;
    }
    bench_free(b);
    return rc;
}

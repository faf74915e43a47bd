/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench: a load generator for AdmissionReview webhooks. This file reads the flags, checks
 * the target with one request, runs the lanes (lane.h: one libuv loop each; the first on the main
 * thread, the others on threads of their own), adds up what they counted and reports it.
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/net/tls.h"
#include "cli.h"
#include "lane.h"
#include "report.h"
#include "reviewset.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define MAX_THREADS 64

typedef struct bench_s {
    const char *url;
    const char *review_path;
    uint64_t connections;
    uint64_t duration_ms;
    unsigned nthreads;
    plan_t plan;
    size_t nreviews;
    lane_t *lanes[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
} bench_t;

static const char usage[] =
    "usage: admitd-bench --url URL --review FILE|DIR [flags]\n"
    "Load generator for AdmissionReview webhooks (admitd or any other).\n\n"
    "  --url URL            https://HOST:PORT/PATH (or http://) of the webhook\n"
    "  --review FILE|DIR    an AdmissionReview, or a folder of *.json ones cycled through; every\n"
    "                       request gets a fresh uid\n"
    "  --rate N             open loop at N requests/s; latency from each intended send time\n"
    "  --closed             closed loop: every connection sends again as soon as it is answered\n"
    "                       (the default when --rate is not given)\n"
    "  --connections N      connections (open loop: at most; default 16), split over the threads\n"
    "  --threads N          N event loops, one per thread (1..64, at most --connections; default\n"
    "                       1), sharing the connections and the --rate schedule; the report gives\n"
    "                       each thread's CPU and warns when one was above 90% busy (the\n"
    "                       generator's limit, not the server's)\n"
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

/* No run, no report: an output opened before the run is removed rather than left empty. */
static void discard_output(FILE *f, const char *path)
{
    if (f != NULL) {
        fclose(f);
        remove(path);
    }
}

static void *lane_thread(void *arg)
{
    lane_run(arg);
    return NULL;
}

/* Runs lanes 1.. on threads of their own, lane 0 on this one, and waits for all. */
static int run_lanes(bench_t *b)
{
    unsigned started = 1;
    int rc = 0;

    for (; started < b->nthreads; started++) {
        int err = pthread_create(&b->tids[started], NULL, lane_thread, b->lanes[started]);

        if (err != 0) {
            fprintf(stderr, "admitd-bench: cannot start thread %u: %s\n", started, strerror(err));
            /* the lanes already running finish their window; the run is not reported */
            rc = 1;
            break;
        }
    }
    if (rc == 0) {
        lane_run(b->lanes[0]);
    }
    for (unsigned i = 1; i < started; i++) {
        pthread_join(b->tids[i], NULL);
    }
    return rc;
}

/* Lane i of n gets connections / n, and one more while the remainder lasts. */
static uint64_t lane_connections(const bench_t *b, unsigned i)
{
    return b->connections / b->nthreads + (i < b->connections % b->nthreads ? 1 : 0);
}

/* Adds up the lanes into the report (total, one row per thread) and writes its outputs. */
static int report(bench_t *b, FILE *json_f, const char *json_out, FILE *html_f, const char *html_out)
{
    static tally_t total;
    thread_report_t threads[MAX_THREADS];
    report_t r = {0};
    uint64_t interrupted = atomic_load(&b->plan.interrupted_ns), cpu = 0, wall = 0;
    int rc;

    tally_init(&total);
    for (unsigned i = 0; i < b->nthreads; i++) {
        const tally_t *t = lane_tally(b->lanes[i]);

        tally_merge(&total, t);
        threads[i].sent = t->sent;
        threads[i].answered = t->sent - t->unfinished;
        threads[i].usage = lane_usage(b->lanes[i]);
        cpu += threads[i].usage.cpu_ns;
        wall = threads[i].usage.wall_ns > wall ? threads[i].usage.wall_ns : wall;
    }
    if (interrupted != 0) {
        b->duration_ms = interrupted > b->plan.measure_ns ? (interrupted - b->plan.measure_ns) / 1000000 : 0;
    }
    r.url = b->url;
    r.closed = b->plan.closed;
    r.rate = b->plan.rate;
    r.connections = b->connections;
    r.duration_s = (double)b->duration_ms / 1e3;
    r.warmup_s = (double)b->plan.warmup_ms / 1e3;
    r.reviews = b->review_path;
    r.nreviews = b->nreviews;
    r.tally = &total;
    r.nthreads = b->nthreads;
    r.threads = threads;
    r.throughput = b->duration_ms > 0 ? (double)total.completed_in_window * 1e3 / (double)b->duration_ms : 0;
    /* every thread's CPU over the longest thread's measured time (the window and its drain) */
    r.cpu_percent = wall > 0 ? (double)cpu / (double)wall * 100.0 : 0;
    report_text(&r, stdout);
    rc = total.sent > 0 && total.outcomes[OUT_ALLOWED] + total.outcomes[OUT_DENIED] == 0 ? 1 : 0;
    if (json_f != NULL && report_json(&r, json_f) != 0) {
        fprintf(stderr, "admitd-bench: --json %s: cannot write: %s\n", json_out, strerror(errno));
        rc = 1;
    }
    if (html_f != NULL && report_html(&r, html_f) != 0) {
        fprintf(stderr, "admitd-bench: --html %s: cannot write: %s\n", html_out, strerror(errno));
        rc = 1;
    }
    return rc;
}

static void free_lanes(bench_t *b)
{
    for (unsigned i = 0; i < b->nthreads; i++) {
        lane_free(b->lanes[i]);
        b->lanes[i] = NULL;
    }
    adm_tls_global_cleanup();
}

int main(int argc, char **argv)
{
    static bench_t bench;
    bench_t *b = &bench;
    plan_t *p = &b->plan;
    adm_tls_client_opts_t tls_opts = {0};
    cli_t cli;
    const char *flag, *json_out = NULL, *html_out = NULL;
    FILE *json_f = NULL, *html_f = NULL;
    char host[256], err[512];
    char *path = NULL;
    uint16_t port;
    bool use_tls = false, has_rate = false;
    int rc;

    b->connections = 16;
    b->duration_ms = 30000;
    b->nthreads = 1;
    p->timeout_ms = 10000;
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
            p->rate = (double)cli_uint(&cli, 1, 10000000);
            has_rate = true;
        } else if (cli_is(&cli, "--closed")) {
            cli_no_value(&cli);
            p->closed = true;
        } else if (cli_is(&cli, "--connections")) {
            b->connections = cli_uint(&cli, 1, 100000);
        } else if (cli_is(&cli, "--threads")) {
            b->nthreads = (unsigned)cli_uint(&cli, 1, MAX_THREADS);
        } else if (cli_is(&cli, "--duration")) {
            b->duration_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--warmup")) {
            p->warmup_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--timeout")) {
            p->timeout_ms = cli_duration_ms(&cli);
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
    if (has_rate && p->closed) {
        cli_fail(&cli, "--rate and --closed exclude each other");
    }
    p->closed = !has_rate;
    if (b->duration_ms == 0 || p->timeout_ms == 0) {
        cli_fail(&cli, "--duration and --timeout must be positive");
    }
    if (b->nthreads > b->connections) {
        cli_fail(&cli,
                 "--threads %u is more than --connections %llu: each thread needs a connection of its own",
                 b->nthreads, (unsigned long long)b->connections);
    }
    if ((tls_opts.cert_file == NULL) != (tls_opts.key_file == NULL)) {
        cli_fail(&cli, "--cert and --key go together");
    }
    parse_url(&cli, b->url, &use_tls, host, sizeof(host), &port, &path);
    if (path == NULL) {
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    adm_log_configure(ADM_LOG_TEXT, 0);
    if (adm_tls_global_init() != 0) {
        fprintf(stderr, "admitd-bench: cannot initialise the crypto library\n");
        return 1;
    }
    p->path = path;
    p->nlanes = b->nthreads;
    p->salt = uv_hrtime();
    /* each lane its own TLS context and review bodies: no lock between the loops */
    for (unsigned i = 0; i < b->nthreads; i++) {
        adm_tls_ctx_t *tls = NULL;
        adm_reviewset_t reviews = {0};

        if (adm_reviewset_load(b->review_path, &reviews, err, sizeof(err)) != 0) {
            cli_fail(&cli, "--review %s", err);
        }
        b->nreviews = reviews.n;
        if (use_tls && adm_tls_client_ctx_create(&tls_opts, &tls, err, sizeof(err)) != 0) {
            cli_fail(&cli, "%s", err);
        }
        rc = lane_create(p, i, lane_connections(b, i), host, port, tls, &reviews, &b->lanes[i]);
        adm_tls_ctx_unref(tls); /* the lane's pool holds its own reference */
        adm_reviewset_free(&reviews);
        if (rc != 0) {
            fprintf(stderr, "admitd-bench: %s\n",
                    rc == ADM_EIO ? "cannot create the open-loop pacer (timerfd)" : "out of memory");
            free_lanes(b);
            free(path);
            return 1;
        }
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

    /* One request first: an unreachable target or a TLS failure is one clear line, not a run of
       errors. */
    if (lane_probe(b->lanes[0], err, sizeof(err)) != 0) {
        fprintf(stderr, "admitd-bench: %s: %s\n", b->url, err);
        discard_output(json_f, json_out);
        discard_output(html_f, html_out);
        free_lanes(b);
        free(path);
        return 1;
    }

    p->t0_ns = uv_hrtime();
    p->measure_ns = p->t0_ns + p->warmup_ms * 1000000ull;
    p->end_ns = p->measure_ns + b->duration_ms * 1000000ull;
    if (run_lanes(b) != 0) {
        discard_output(json_f, json_out);
        discard_output(html_f, html_out);
        rc = 1;
    } else {
        rc = report(b, json_f, json_out, html_f, html_out);
    }
    free_lanes(b);
    free(path);
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench (BENCH_BIN) against real admitd-mockhook (MOCKHOOK_BIN) processes on 127.0.0.1:
 * one-line errors and exit codes for bad flags and bad targets (never a hang), every outcome
 * counted apart in --json, a fresh uid per request (checked on the mockhook's --record), the
 * open loop charging a stalling server for the requests it held up where a closed loop does not
 * (coordinated omission), a self-contained --html page, and --threads: the threads together send
 * exactly the requests one would, each its share, in one merged report. Runs are 0.5-3 s each;
 * every wait is on a process exit or a file with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yyjson.h>

#include <cmocka.h>

#include "certgen.h"
#include "harness.h"

#define RUN_TIMEOUT_MS 30000
#define MAX_ARGS 48

static h_server_t mock;       /* TLS, one route per behaviour */
static char review_file[512]; /* one AdmissionReview */
static char review_dir[512];  /* the bench corpus */
static char url_base[64];     /* https://127.0.0.1:PORT */

typedef struct run_s {
    int rc; /* exit code, 128+signal, or -1 when it did not finish in time */
    long long elapsed_ms;
    char err[8192]; /* its stderr */
    int err_lines;
} run_t;

/* Runs admitd-bench with args (NULL-terminated); stdout goes to /dev/null, stderr is captured. */
static void run_bench(const char *const *args, run_t *r, int timeout_ms)
{
    const char *argv[MAX_ARGS + 2];
    int n = 0, pipefd[2], status;
    size_t got = 0;
    long long t0 = h_now_ms(), deadline = t0 + timeout_ms;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    argv[n++] = h_bin("BENCH_BIN");
    for (; *args != NULL && n < MAX_ARGS; args++) {
        argv[n++] = *args;
    }
    argv[n] = NULL;
    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);

        dup2(devnull, STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    /* stderr until EOF (the process is gone) or the deadline */
    for (;;) {
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        long long left = deadline - h_now_ms();
        ssize_t k;

        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            break;
        }
        k = read(pipefd[0], r->err + got, sizeof(r->err) - 1 - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        got += (size_t)k;
        if (got == sizeof(r->err) - 1) {
            got = 0; /* keep reading so the child never blocks on a full pipe; the test fails on lines */
            r->err_lines = 1000;
        }
    }
    r->err[got] = '\0';
    close(pipefd[0]);
    r->rc = -1;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);

        if (w == pid) {
            r->rc =
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            break;
        }
        if (h_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            break;
        }
        poll(NULL, 0, 5); /* the pipe is closed: only the exit is left to wait for */
    }
    r->elapsed_ms = h_now_ms() - t0;
    for (const char *p = r->err; *p != '\0'; p++) {
        r->err_lines += *p == '\n';
    }
    if (got > 0 && r->err[got - 1] != '\n') {
        r->err_lines++;
    }
}

/* Asserts a usage or target error: exit code want, exactly one line on stderr containing needle. */
static void expect_one_line(const run_t *r, int want, const char *needle)
{
    if (r->rc != want || r->err_lines != 1 || strstr(r->err, needle) == NULL) {
        fprintf(stderr, "exit %d (want %d), %d lines (want 1) containing \"%s\":\n%s", r->rc, want,
                r->err_lines, needle, r->err);
    }
    assert_int_equal(r->rc, want);
    assert_int_equal(r->err_lines, 1);
    assert_non_null(strstr(r->err, needle));
    assert_true(strncmp(r->err, "admitd-bench: ", 14) == 0);
}

static yyjson_doc *read_json(const char *path)
{
    yyjson_read_err e;
    yyjson_doc *doc = yyjson_read_file(path, 0, NULL, &e);

    if (doc == NULL) {
        fprintf(stderr, "%s: %s at %zu\n", path, e.msg, e.pos);
    }
    assert_non_null(doc);
    return doc;
}

static uint64_t count(yyjson_doc *d, const char *outcome)
{
    yyjson_val *v = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "requests"), outcome);

    assert_true(yyjson_is_uint(v));
    return yyjson_get_uint(v);
}

static uint64_t latency(yyjson_doc *d, const char *key)
{
    yyjson_val *v = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "latency_ns"), key);

    assert_true(yyjson_is_uint(v));
    return yyjson_get_uint(v);
}

static const char *const outcomes[] = {"allowed", "denied",  "http_error", "malformed", "uid_mismatch",
                                       "timeout", "connect", "tls",        "io",        "protocol"};
#define NOUTCOMES (sizeof(outcomes) / sizeof(outcomes[0]))

/* Every measured request has exactly one outcome, or is still unfinished. */
static void check_accounting(yyjson_doc *d)
{
    uint64_t sum = count(d, "unfinished");
    yyjson_val *hist = yyjson_obj_get(yyjson_doc_get_root(d), "histogram");
    yyjson_val *row;
    size_t i, max;
    uint64_t in_hist = 0;

    for (i = 0; i < NOUTCOMES; i++) {
        sum += count(d, outcomes[i]);
    }
    assert_int_equal(count(d, "sent"), sum);
    /* the full histogram: [low, high, count] rows adding up to the latency count */
    assert_true(yyjson_is_arr(hist));
    yyjson_arr_foreach(hist, i, max, row)
    {
        assert_int_equal(yyjson_arr_size(row), 3);
        assert_true(yyjson_get_uint(yyjson_arr_get(row, 0)) <= yyjson_get_uint(yyjson_arr_get(row, 1)));
        in_hist += yyjson_get_uint(yyjson_arr_get(row, 2));
    }
    assert_int_equal(in_hist, latency(d, "count"));
}

/* Runs against mock's path with --cacert and --json; appends extra (NULL-terminated). */
static yyjson_doc *run_json(const char *path, const char *review, const char *const *extra, int want_rc,
                            run_t *r)
{
    char url[256], out[400];
    const char *args[MAX_ARGS];
    int n = 0;

    snprintf(url, sizeof(url), "%s%s", url_base, path);
    snprintf(out, sizeof(out), "%s/out.json", mock.dir);
    unlink(out);
    args[n++] = "--url";
    args[n++] = url;
    args[n++] = "--cacert";
    args[n++] = mock.ca;
    args[n++] = "--review";
    args[n++] = review;
    args[n++] = "--json";
    args[n++] = out;
    for (; *extra != NULL && n < MAX_ARGS - 1; extra++) {
        args[n++] = *extra;
    }
    args[n] = NULL;
    run_bench(args, r, RUN_TIMEOUT_MS);
    if (r->rc != want_rc) {
        fprintf(stderr, "%s: exit %d, want %d; stderr:\n%s", url, r->rc, want_rc, r->err);
    }
    assert_int_equal(r->rc, want_rc);
    return read_json(out);
}

static int setup(void **state)
{
    const char *args[] = {"--route", "/deny=deny:x",
                          "--route", "/error=error:500",
                          "--route", "/garbage=invalid-json",
                          "--route", "/wrong-uid=wrong-uid",
                          "--route", "/hang=hang",
                          "--route", "/mix=mix:allow=60,deny=10,close=10,reset=10,error:503=10",
                          NULL};
    const char *dir = getenv("ADM_BENCH_REVIEWS");

    (void)state;
    if (dir == NULL || *dir == '\0') {
        fprintf(stderr, "ADM_BENCH_REVIEWS is not set (ctest sets it)\n");
        return -1;
    }
    snprintf(review_dir, sizeof(review_dir), "%s", dir);
    snprintf(review_file, sizeof(review_file), "%s/pod-1k.v1.json", dir);
    if (h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, args) != 0) {
        return -1;
    }
    snprintf(url_base, sizeof(url_base), "https://127.0.0.1:%d", mock.port);
    return 0;
}

static int teardown(void **state)
{
    int rc;

    (void)state;
    rc = h_stop(&mock, SIGTERM, 5000);
    h_cleanup(&mock);
    return rc == 0 ? 0 : -1;
}

/* ---- flags ---------------------------------------------------------------------------------- */

static void test_flags(void **state)
{
    char url[128], json_bad[400];
    run_t r;

    (void)state;
    snprintf(url, sizeof(url), "%s/", url_base);
    snprintf(json_bad, sizeof(json_bad), "%s/no-such-dir/out.json", mock.dir);
    {
        const char *args[] = {"--help", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.err_lines, 0);
    }
    {
        const char *args[] = {"--version", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        assert_int_equal(r.rc, 0);
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--bogus", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--bogus");
    }
    {
        const char *args[] = {"--review", review_file, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--url");
    }
    {
        const char *args[] = {"--url", url, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--review");
    }
    {
        const char *bad_rates[] = {"abc", "0", "-5", "10x", ""};

        for (size_t i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
            const char *args[] = {"--url", url, "--review", review_file, "--rate", bad_rates[i], NULL};

            run_bench(args, &r, RUN_TIMEOUT_MS);
            expect_one_line(&r, 2, "--rate");
        }
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--rate", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--rate");
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--rate", "100", "--closed", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--closed");
        assert_non_null(strstr(r.err, "--rate"));
    }
    {
        const char *bad_threads[] = {"0", "-1", "65", "two", ""};

        for (size_t i = 0; i < sizeof(bad_threads) / sizeof(bad_threads[0]); i++) {
            const char *args[] = {"--url", url, "--review", review_file, "--threads", bad_threads[i], NULL};

            run_bench(args, &r, RUN_TIMEOUT_MS);
            expect_one_line(&r, 2, "--threads");
        }
    }
    {
        /* each thread needs a connection of its own, in either loop */
        const char *closed[] = {"--url",         url, "--review", review_file, "--threads", "3",
                                "--connections", "2", NULL};
        const char *open[] = {"--url",  url,   "--review",      review_file, "--threads", "5",
                              "--rate", "100", "--connections", "4",         NULL};

        run_bench(closed, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--threads 3 is more than --connections 2");
        run_bench(open, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--threads 5 is more than --connections 4");
    }
    {
        const char *args[] = {"--url", "ftp://127.0.0.1/", "--review", review_file, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--url");
    }
    {
        const char *args[] = {"--url", "https://127.0.0.1:99999/", "--review", review_file, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--url");
    }
    {
        const char *args[] = {"--url", url, "--review", "/nonexistent/review.json", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--review /nonexistent/review.json");
    }
    {
        /* a file that is not an AdmissionReview */
        const char *args[] = {"--url", url, "--review", mock.ca, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--review");
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--duration", "soon", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--duration");
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--cacert", "/nonexistent/ca.pem", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--cacert");
    }
    {
        const char *args[] = {"--url", url, "--review", review_file, "--cert", mock.ca, NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--key");
    }
    {
        /* an output that cannot be written is found before the run, not after it */
        const char *args[] = {"--url",  url,      "--cacert",   mock.ca, "--review", review_file,
                              "--json", json_bad, "--duration", "30s",   NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 2, "--json");
        assert_true(r.elapsed_ms < 5000);
    }
}

/* ---- targets that cannot be benchmarked: one line, exit 1, at once ----------------------------- */

/* A TCP server that answers every connection with bytes that are not HTTP (a child process). */
static pid_t start_garbage_server(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    pid_t pid;

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static const char garbage[] = "SSH-2.0-OpenSSH_9.6 this is not HTTP\r\n\r\n";

        for (;;) {
            char buf[4096];
            int c = accept(fd, NULL, NULL);

            if (c < 0) {
                continue;
            }
            (void)!read(c, buf, sizeof(buf));
            (void)!write(c, garbage, sizeof(garbage) - 1);
            close(c);
        }
    }
    close(fd);
    return pid;
}

static void test_bad_targets(void **state)
{
    h_server_t stopped, plain;
    char url[128];
    int port;
    pid_t garbage;
    run_t r;
    const char *no_args[] = {NULL};
    const char *plain_args[] = {"--insecure-http", NULL};

    (void)state;
    /* nobody listens: the port of a mockhook that has stopped */
    assert_int_equal(h_start_prog(&stopped, h_bin("MOCKHOOK_BIN"), NULL, no_args), 0);
    assert_int_equal(h_stop(&stopped, SIGTERM, 5000), 0);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", stopped.port);
    {
        const char *args[] = {"--url", url, "--insecure", "--review", review_file, "--duration", "2s", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 1, "connection refused");
        assert_true(r.elapsed_ms < 5000);
    }
    h_cleanup(&stopped);

    /* the mockhook's self-signed certificate against the system CAs */
    snprintf(url, sizeof(url), "%s/", url_base);
    {
        const char *args[] = {"--url", url, "--review", review_file, "--duration", "2s", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 1, "tls");
        assert_true(strncmp(r.err, "admitd-bench: https://", 22) == 0);
        assert_true(r.elapsed_ms < 5000);
    }

    /* https:// to a plain-HTTP server: the handshake fails */
    assert_int_equal(h_start_prog(&plain, h_bin("MOCKHOOK_BIN"), NULL, plain_args), 0);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", plain.port);
    {
        const char *args[] = {"--url", url, "--insecure", "--review", review_file, "--duration", "2s", NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 1, "tls");
        assert_true(r.elapsed_ms < 5000);
    }
    assert_int_equal(h_stop(&plain, SIGTERM, 5000), 0);
    h_cleanup(&plain);

    /* http:// to the TLS server: no HTTP answer comes back */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", mock.port);
    {
        const char *args[] = {"--url", url,         "--review", review_file, "--duration",
                              "2s",    "--timeout", "2s",       NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        expect_one_line(&r, 1, url);
        assert_true(r.elapsed_ms < 5000);
    }

    /* a server that answers with bytes that are not HTTP */
    garbage = start_garbage_server(&port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
    {
        const char *args[] = {"--url", url,         "--review", review_file, "--duration",
                              "2s",    "--timeout", "2s",       NULL};

        run_bench(args, &r, RUN_TIMEOUT_MS);
        kill(garbage, SIGKILL);
        waitpid(garbage, NULL, 0);
        expect_one_line(&r, 1, url);
        assert_true(r.elapsed_ms < 5000);
    }
}

/* ---- outcomes -------------------------------------------------------------------------------- */

static void expect_only(const char *path, const char *outcome, int want_rc, const char *const *extra)
{
    run_t r;
    yyjson_doc *d = run_json(path, review_file, extra, want_rc, &r);
    uint64_t sent = count(d, "sent");

    check_accounting(d);
    assert_true(sent > 0);
    assert_int_equal(count(d, outcome), sent - count(d, "unfinished"));
    for (size_t i = 0; i < NOUTCOMES; i++) {
        if (strcmp(outcomes[i], outcome) != 0) {
            assert_int_equal(count(d, outcomes[i]), 0);
        }
    }
    if (strcmp(outcome, "http_error") == 0) {
        yyjson_val *errs = yyjson_obj_get(yyjson_doc_get_root(d), "http_errors");

        assert_int_equal(yyjson_obj_size(errs), 1);
        assert_int_equal(yyjson_get_uint(yyjson_obj_get(errs, "500")), count(d, "http_error"));
    }
    if (strcmp(outcome, "timeout") == 0) {
        /* 4 connections, each request hung up on after 200 ms: about 20 in a second */
        assert_true(sent >= 4 && sent <= 40);
    }
    yyjson_doc_free(d);
}

static void test_outcomes(void **state)
{
    const char *fast[] = {"--duration", "1s", "--connections", "4", NULL};
    const char *hang[] = {"--duration", "1s", "--connections", "4", "--timeout", "200ms", NULL};

    (void)state;
    expect_only("/allow", "allowed", 0, fast);
    expect_only("/deny", "denied", 0, fast);
    /* nothing was answered allowed or denied: the run is a failure (exit 1), but counted */
    expect_only("/error", "http_error", 1, fast);
    expect_only("/garbage", "malformed", 1, fast);
    expect_only("/wrong-uid", "uid_mismatch", 1, fast);
    expect_only("/hang", "timeout", 1, hang);
}

/* A chaotic target (some connections closed or reset) is a run with errors, not a refusal to run. */
static void test_mixed_outcomes(void **state)
{
    const char *extra[] = {"--duration", "1s", "--connections", "4", "--rate", "500", NULL};
    yyjson_doc *d;
    run_t r;

    (void)state;
    for (int i = 0; i < 3; i++) {
        d = run_json("/mix", review_file, extra, 0, &r);
        check_accounting(d);
        assert_true(count(d, "sent") >= 400);
        assert_true(count(d, "allowed") > 0);
        assert_true(count(d, "denied") > 0);
        assert_true(count(d, "http_error") > 0);
        assert_true(count(d, "io") > 0);
        assert_int_equal(
            count(d, "malformed") + count(d, "uid_mismatch") + count(d, "tls") + count(d, "connect"), 0);
        assert_int_equal(
            yyjson_get_uint(yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "http_errors"), "503")),
            count(d, "http_error"));
        yyjson_doc_free(d);
    }
}

/* ---- fresh uids ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_fresh_uids(void **state)
{
    h_server_t rec;
    char record[400], line[256 * 1024], url[128], out[400];
    char **uids = NULL;
    const char *kinds[32];
    size_t n = 0, cap = 0, nkinds = 0;
    uint64_t sent = 0;
    FILE *f;

    (void)state;
    /* a directory of its own, so the record's path is known before the mockhook starts */
    {
        const char *args[] = {"--record", record, NULL};
        char dir[256];

        assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
        snprintf(record, sizeof(record), "%s/requests.jsonl", dir);
        assert_int_equal(h_start_prog(&rec, h_bin("MOCKHOOK_BIN"), dir, args), 0);
    }
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", rec.port);
    snprintf(out, sizeof(out), "%s/uids.json", mock.dir);
    /* two runs against the same server: uids are fresh across runs too, the first request included */
    for (int i = 0; i < 2; i++) {
        /* the second run on two threads: their uids are distinct from each other's too */
        const char *args[] = {
            "--url",  url, "--cacert",   rec.ca,  "--review",  review_dir,         "--rate", "300",
            "--json", out, "--duration", "700ms", "--threads", i == 0 ? "1" : "2", NULL};
        run_t r;
        yyjson_doc *d;

        run_bench(args, &r, RUN_TIMEOUT_MS);
        assert_int_equal(r.rc, 0);
        d = read_json(out);
        check_accounting(d);
        sent += count(d, "sent");
        assert_int_equal(count(d, "allowed"), count(d, "sent"));
        yyjson_doc_free(d);
    }
    assert_true(sent >= 300);
    /* the mockhook writes and flushes each line before it answers: all are there once the bench exits */
    f = fopen(record, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        yyjson_doc *d = yyjson_read(line, strlen(line), 0);
        yyjson_val *req = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "review"), "request");
        const char *uid = yyjson_get_str(yyjson_obj_get(req, "uid"));
        const char *kind = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(req, "kind"), "kind"));
        size_t k;

        assert_non_null(d);
        assert_non_null(uid);
        assert_int_equal(strlen(uid), 36);
        assert_true(uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-' && uid[14] == '4');
        if (n == cap) {
            cap = cap != 0 ? cap * 2 : 1024;
            uids = realloc(uids, cap * sizeof(*uids));
            assert_non_null(uids);
        }
        uids[n] = strdup(uid);
        assert_non_null(uids[n]);
        n++;
        for (k = 0; kind != NULL && k < nkinds && strcmp(kinds[k], kind) != 0; k++) {
        }
        if (kind != NULL && k == nkinds && nkinds < 32) {
            kinds[nkinds++] = strdup(kind);
        }
        yyjson_doc_free(d);
    }
    fclose(f);
    /* every measured request, plus at most one connection check per run */
    assert_true(n >= sent && n <= sent + 2);
    qsort(uids, n, sizeof(*uids), cmp_str);
    for (size_t i = 0; i + 1 < n; i++) {
        if (strcmp(uids[i], uids[i + 1]) == 0) {
            fprintf(stderr, "uid %s sent twice\n", uids[i]);
        }
        assert_true(strcmp(uids[i], uids[i + 1]) != 0);
    }
    /* --review DIR cycles through the corpus: pods, deployments, services, ... */
    assert_true(nkinds >= 4);
    for (size_t i = 0; i < n; i++) {
        free(uids[i]);
    }
    for (size_t i = 0; i < nkinds; i++) {
        free((void *)kinds[i]);
    }
    free(uids);
    assert_int_equal(h_stop(&rec, SIGTERM, 5000), 0);
    h_cleanup(&rec);
}

/* ---- coordinated omission -------------------------------------------------------------------- */

static void test_coordinated_omission(void **state)
{
    h_server_t stall;
    const char *stall_args[] = {"--stall", "200ms/1s", NULL};
    char url[128], out[400];
    uint64_t open_p99, open_max, closed_p99, closed_max, closed_count;

    (void)state;
    assert_int_equal(h_start_prog(&stall, h_bin("MOCKHOOK_BIN"), NULL, stall_args), 0);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", stall.port);
    snprintf(out, sizeof(out), "%s/co.json", stall.dir);
    {
        /* open loop: the requests due during a 200 ms pause wait up to 200 ms from their due time */
        const char *args[] = {"--url",      url,      "--cacert",      stall.ca, "--review",
                              review_file,  "--rate", "200",           "--json", out,
                              "--duration", "3s",     "--connections", "4",      NULL};
        run_t r;
        yyjson_doc *d;

        run_bench(args, &r, RUN_TIMEOUT_MS);
        assert_int_equal(r.rc, 0);
        d = read_json(out);
        check_accounting(d);
        assert_int_equal(count(d, "allowed"), count(d, "sent"));
        assert_true(count(d, "sent") >= 550 && count(d, "sent") <= 601);
        open_p99 = latency(d, "p99");
        open_max = latency(d, "max");
        yyjson_doc_free(d);
    }
    {
        /* closed loop: the same pauses hold up only the 4 requests in flight */
        const char *args[] = {"--url",  url, "--cacert",   stall.ca, "--review",      review_file, "--closed",
                              "--json", out, "--duration", "3s",     "--connections", "4",         NULL};
        run_t r;
        yyjson_doc *d;

        run_bench(args, &r, RUN_TIMEOUT_MS);
        assert_int_equal(r.rc, 0);
        d = read_json(out);
        check_accounting(d);
        assert_int_equal(count(d, "allowed"), count(d, "sent"));
        closed_p99 = latency(d, "p99");
        closed_max = latency(d, "max");
        closed_count = latency(d, "count");
        yyjson_doc_free(d);
    }
    fprintf(stderr, "open loop p99 %.1f ms max %.1f ms; closed loop p99 %.1f ms max %.1f ms over %llu\n",
            (double)open_p99 / 1e6, (double)open_max / 1e6, (double)closed_p99 / 1e6,
            (double)closed_max / 1e6, (unsigned long long)closed_count);
    /* both runs met the pauses ... */
    assert_true(open_max >= 150000000ull);
    assert_true(closed_max >= 100000000ull);
    /* ... but only the open loop shows them in its tail */
    assert_true(open_p99 >= 100000000ull);
    assert_true(closed_p99 < 50000000ull);
    assert_true(closed_p99 * 3 <= open_p99);
    assert_int_equal(h_stop(&stall, SIGTERM, 5000), 0);
    h_cleanup(&stall);
}

/* ---- threads -------------------------------------------------------------------------------- */

/* The "threads" array of a --json report: n rows, their sent and answered into the totals. */
static void check_threads(yyjson_doc *d, size_t n, uint64_t *sent)
{
    yyjson_val *arr = yyjson_obj_get(yyjson_doc_get_root(d), "threads");
    uint64_t sum_sent = 0, sum_answered = 0;

    assert_int_equal(yyjson_arr_size(arr), n);
    for (size_t i = 0; i < n; i++) {
        yyjson_val *row = yyjson_arr_get(arr, i);

        sent[i] = yyjson_get_uint(yyjson_obj_get(row, "sent"));
        sum_sent += sent[i];
        sum_answered += yyjson_get_uint(yyjson_obj_get(row, "answered"));
        assert_true(yyjson_get_num(yyjson_obj_get(row, "cpu_seconds")) > 0);
        assert_true(yyjson_is_num(yyjson_obj_get(row, "busy_percent")));
    }
    assert_int_equal(sum_sent, count(d, "sent"));
    assert_int_equal(sum_answered, count(d, "sent") - count(d, "unfinished"));
    assert_true(yyjson_is_arr(yyjson_obj_get(yyjson_doc_get_root(d), "warnings")));
}

static void test_threads(void **state)
{
    uint64_t sent[2];
    run_t r;
    yyjson_doc *d;

    (void)state;
    {
        /* open loop: 400/s for 1 s after a 300 ms warmup is requests 120..519 of the schedule,
           exactly 400 whichever thread sends them, and each thread sends every other one */
        const char *extra[] = {"--rate",    "400", "--duration",    "1s", "--warmup", "300ms",
                               "--threads", "2",   "--connections", "4",  NULL};

        d = run_json("/allow", review_file, extra, 0, &r);
        check_accounting(d);
        check_threads(d, 2, sent);
        assert_int_equal(count(d, "sent"), 400);
        assert_int_equal(count(d, "allowed"), 400);
        assert_int_equal(latency(d, "count"), 400);
        assert_int_equal(sent[0], 200);
        assert_int_equal(sent[1], 200);
        yyjson_doc_free(d);
    }
    {
        /* closed loop: both threads busy for the whole second, one report adding them up */
        const char *extra[] = {"--closed", "--duration", "1s", "--threads", "2", "--connections", "4", NULL};

        d = run_json("/deny", review_file, extra, 0, &r);
        check_accounting(d);
        check_threads(d, 2, sent);
        assert_true(sent[0] >= 20 && sent[1] >= 20);
        assert_int_equal(count(d, "denied"), count(d, "sent") - count(d, "unfinished"));
        assert_int_equal(latency(d, "count"), count(d, "denied"));
        assert_true(yyjson_get_num(yyjson_obj_get(yyjson_doc_get_root(d), "duration_seconds")) == 1.0);
        assert_true(r.elapsed_ms >= 1000 && r.elapsed_ms < 10000);
        yyjson_doc_free(d);
    }
}

/* ---- HTML ------------------------------------------------------------------------------------ */

static void test_html(void **state)
{
    char url[128], out[400], html_path[400];
    const char *args[] = {"--url",      url,   "--cacert", mock.ca, "--review", review_file,
                          "--rate",     "300", "--json",   out,     "--html",   html_path,
                          "--duration", "1s",  "--warmup", "300ms", NULL};
    const char *xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
    char *page, *points, *p;
    size_t len, npoints = 0;
    run_t r;
    FILE *f;

    (void)state;
    snprintf(url, sizeof(url), "%s/", url_base);
    snprintf(out, sizeof(out), "%s/html.json", mock.dir);
    snprintf(html_path, sizeof(html_path), "%s/report.html", mock.dir);
    run_bench(args, &r, RUN_TIMEOUT_MS);
    assert_int_equal(r.rc, 0);
    {
        /* the warmup's requests are neither sent nor answered in the report */
        yyjson_doc *d = read_json(out);

        check_accounting(d);
        assert_true(count(d, "sent") >= 250 && count(d, "sent") <= 301);
        yyjson_doc_free(d);
    }
    f = fopen(html_path, "r");
    assert_non_null(f);
    page = calloc(1, 1024 * 1024);
    assert_non_null(page);
    len = fread(page, 1, 1024 * 1024 - 1, f);
    fclose(f);
    assert_true(len > 0 && len < 1024 * 1024 - 1);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(page, "</html>"));
    assert_non_null(strstr(page, "<svg"));
    assert_non_null(strstr(page, "</svg>"));
    /* no external assets: the only http:// is the SVG namespace, nothing is fetched */
    p = strstr(page, "http://");
    assert_non_null(p);
    assert_true(p - page >= 7 && strncmp(p - 7, xmlns, strlen(xmlns)) == 0);
    assert_null(strstr(p + 1, "http://"));
    assert_null(strstr(page, "<script"));
    assert_null(strstr(page, "src="));
    assert_null(strstr(page, "href="));
    assert_null(strstr(page, "<link"));
    assert_null(strstr(page, "@import"));
    assert_null(strstr(page, "url("));
    /* the plot has a line with points */
    points = strstr(page, "<polyline");
    assert_non_null(points);
    points = strstr(points, "points=\"");
    assert_non_null(points);
    for (p = points + 8; *p != '"' && *p != '\0'; p++) {
        npoints += *p == ',';
    }
    assert_true(npoints >= 2);
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),      cmocka_unit_test(test_bad_targets),
        cmocka_unit_test(test_outcomes),   cmocka_unit_test(test_mixed_outcomes),
        cmocka_unit_test(test_fresh_uids), cmocka_unit_test(test_coordinated_omission),
        cmocka_unit_test(test_html),       cmocka_unit_test(test_threads),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

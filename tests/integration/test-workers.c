/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --workers 2 (INTERFACE D12) with the real binary over TLS on 127.0.0.1: both workers take
 * connections on the one port; /metrics, whichever worker answers, is the exact sum over the
 * workers (server, admission and PodSecurity families); SIGHUP reaches both (two reloads counted
 * per SIGHUP); SIGTERM drains both with every request in flight answered; a worker killed with
 * SIGKILL is logged and restarted, with a back-off when it dies again soon, its counts kept, and
 * serving goes on; bad --workers values are refused.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define NWORKERS 2

static int setup(void **state)
{
    return adm_tls_global_init();
}

static int teardown(void **state)
{
    adm_tls_global_cleanup();
    return 0;
}

static const char *const worker_args[] = {
    "--workers",
    "2",
    "--cluster-state",
    NULL /* set in start() */,
    "--shutdown-delay",
    "1s",
    "--shutdown-grace",
    "10s",
    NULL,
};

static void start(h_server_t *s)
{
    const char *args[sizeof(worker_args) / sizeof(worker_args[0])];

    memcpy(args, worker_args, sizeof(args));
    args[3] = h_fixture_path("cluster-state.yaml");
    assert_int_equal(h_start(s, NULL, args), 0);
    /* h_start returns at the first worker's listener: wait for every worker's */
    assert_true(h_log_wait(s, "serving admission on", NWORKERS, 10000));
}

/* The pid of the newest start of worker `index`, from the parent's log line. */
static int worker_pid(const h_server_t *s, unsigned index)
{
    char needle[64];
    char line[512];
    FILE *f = fopen(s->log, "r");
    int pid = 0;

    assert_non_null(f);
    snprintf(needle, sizeof(needle), "worker %u started (pid ", index);
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = strstr(line, needle);

        if (p != NULL) {
            pid = (int)strtol(p + strlen(needle), NULL, 10);
        }
    }
    fclose(f);
    assert_true(pid > 0);
    return pid;
}

/* Open sockets of a process (listeners and connections). */
static int sockets_of(int pid)
{
    char path[64];
    struct dirent *e;
    DIR *d;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    d = opendir(path);
    assert_non_null(d);
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        char link[320];
        char target[64];
        ssize_t len;

        snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
        len = readlink(link, target, sizeof(target) - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strncmp(target, "socket:", 7) == 0;
        }
    }
    closedir(d);
    return n;
}

/* Each worker's pid and its open sockets now, before the test opens connections. */
static void count_sockets(const h_server_t *s, int pids[NWORKERS], int sockets[NWORKERS])
{
    for (unsigned i = 0; i < NWORKERS; i++) {
        pids[i] = worker_pid(s, i);
        sockets[i] = sockets_of(pids[i]);
    }
}

static char *pod_request(size_t *len)
{
    size_t body_len;
    char *body = h_fixture("pod-create.v1.review.json", &body_len);
    char *req = h_request("POST", "/validate", "application/json", body, body_len, len);

    free(body);
    return req;
}

/* n admission requests, each on its own connection (so the kernel spreads them over the workers). */
static void send_requests(const h_server_t *s, int n)
{
    size_t len;
    char *req = pod_request(&len);

    for (int i = 0; i < n; i++) {
        h_conn_t c;
        h_response_t r = {0};

        assert_int_equal(h_connect_to(&c, s), 0);
        assert_int_equal(h_send(&c, req, len), 0);
        assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
        assert_int_equal(r.status, 200);
        h_response_free(&r);
        h_close(&c);
    }
    free(req);
}

/* /metrics on the admission listener, a new connection each time (heap, NUL-terminated). */
static char *scrape(const h_server_t *s)
{
    size_t len;
    char *req = h_request("GET", "/metrics", NULL, NULL, 0, &len);
    h_conn_t c;
    h_response_t r = {0};
    char *text;

    assert_int_equal(h_connect_to(&c, s), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(adm_buf_append(&r.body, "", 1), 0);
    text = (char *)r.body.data; /* the body, NUL-terminated, is the caller's now */
    h_close(&c);
    free(req);
    return text;
}

/* The sum of every series of a scrape whose line starts with prefix. */
static double sum_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    double sum = 0;

    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');

        if (strncmp(p, prefix, n) == 0) {
            const char *space = strchr(p, ' ');

            assert_non_null(space);
            sum += strtod(space + 1, NULL);
        }
        if (eol == NULL) {
            break;
        }
        p = eol + 1;
    }
    return sum;
}

static double scraped(const h_server_t *s, const char *prefix)
{
    char *text = scrape(s);
    double v = sum_of(text, prefix);

    free(text);
    return v;
}

#define REQUESTS_200 "admitd_requests_total{endpoint=\"validate\",code=\"200\"}"
#define STEPS "admitd_admission_step_duration_seconds_count{type=\"validate\""
#define PSA "admitd_pod_security_evaluations_total{"
#define RELOADS "admitd_config_reloads_total{result=\"success\"}"

static void test_both_workers_serve_and_metrics_sum_exactly(void **state)
{
    enum { HELD = 24, K = 40 };
    h_server_t s;
    h_conn_t held[HELD];
    int pids[NWORKERS], before[NWORKERS];
    double psa_one;

    start(&s);
    count_sockets(&s, pids, before);
    /* connections held open at once: each worker has some (24 all on one: odds 2^-23) */
    for (int i = 0; i < HELD; i++) {
        assert_int_equal(h_connect_to(&held[i], &s), 0);
    }
    for (unsigned i = 0; i < NWORKERS; i++) {
        long long deadline = h_now_ms() + 10000;

        while (sockets_of(pids[i]) <= before[i] && h_now_ms() < deadline) {
            usleep(10000); /* polling a condition with a deadline */
        }
        assert_true(sockets_of(pids[i]) > before[i]);
    }
    for (int i = 0; i < HELD; i++) {
        h_close(&held[i]);
    }

    /* one request gives the PodSecurity evaluations one request makes, whichever worker took it */
    send_requests(&s, 1);
    psa_one = scraped(&s, PSA);
    assert_true(psa_one >= 1);
    send_requests(&s, K - 1);
    /* every scrape, on a new connection (so both workers answer some), gives the same sums */
    for (int i = 0; i < 8; i++) {
        char *text = scrape(&s);

        assert_int_equal((int)sum_of(text, REQUESTS_200), K);
        assert_int_equal((int)sum_of(text, STEPS), K);
        assert_int_equal((int)sum_of(text, PSA), (int)psa_one * K);
        free(text);
    }
    assert_int_equal(h_stop(&s, SIGTERM, 20000), 0);
    h_cleanup(&s);
}

static void test_sighup_reaches_every_worker(void **state)
{
    h_server_t s;
    int pid;

    start(&s);
    pid = s.pid;
    assert_int_equal((int)scraped(&s, RELOADS), 0);
    assert_int_equal(kill(pid, SIGHUP), 0);
    assert_true(h_log_wait(&s, "configuration reloaded", NWORKERS, 10000));
    assert_int_equal((int)scraped(&s, RELOADS), NWORKERS);
    assert_int_equal(kill(pid, SIGHUP), 0);
    assert_true(h_log_wait(&s, "configuration reloaded", 2 * NWORKERS, 10000));
    assert_int_equal((int)scraped(&s, RELOADS), 2 * NWORKERS);
    /* and the workers serve on */
    send_requests(&s, 4);
    assert_int_equal(h_stop(&s, SIGTERM, 20000), 0);
    h_cleanup(&s);
}

static void test_sigterm_drains_every_worker(void **state)
{
    enum { INFLIGHT = 16 };
    h_server_t s;
    h_conn_t c[INFLIGHT];
    int pids[NWORKERS], before[NWORKERS];
    size_t len;
    char *req = pod_request(&len);

    start(&s);
    count_sockets(&s, pids, before);
    /* requests in flight on both workers: head and part of the body sent */
    for (int i = 0; i < INFLIGHT; i++) {
        assert_int_equal(h_connect_to(&c[i], &s), 0);
        assert_int_equal(h_send(&c[i], req, len - 20), 0);
    }
    for (unsigned i = 0; i < NWORKERS; i++) {
        assert_true(sockets_of(pids[i]) > before[i]);
    }
    assert_int_equal(kill(s.pid, SIGTERM), 0);
    assert_true(h_log_wait(&s, "shutting down: /readyz now fails", NWORKERS, 10000));
    for (int i = 0; i < INFLIGHT; i++) {
        h_response_t r = {0};

        assert_int_equal(h_send(&c[i], req + len - 20, 20), 0);
        assert_int_equal(h_read(&c[i], &r, 20000, NULL), 0);
        assert_int_equal(r.status, 200);
        assert_true(r.close);
        h_response_free(&r);
        h_close(&c[i]);
    }
    assert_int_equal(h_stop(&s, 0, 20000), 0);
    for (unsigned i = 0; i < NWORKERS; i++) {
        char line[64];

        snprintf(line, sizeof(line), "worker %u (pid %d) exited with status 0", i, pids[i]);
        assert_int_equal(h_log_count(&s, line), 1);
    }
    assert_int_equal(h_log_count(&s, "every worker has exited"), 1);
    free(req);
    h_cleanup(&s);
}

static void test_killed_worker_is_restarted(void **state)
{
    enum { K1 = 10, K2 = 12 };
    h_server_t s;
    char line[128];
    int pid;

    start(&s);
    send_requests(&s, K1);
    pid = worker_pid(&s, 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    snprintf(line, sizeof(line), "worker 0 (pid %d) killed by signal 9", pid);
    assert_true(h_log_wait(&s, line, 1, 10000));
    assert_true(h_log_wait(&s, "worker 0 started (pid", 2, 10000));
    assert_true(h_log_wait(&s, "serving admission on", NWORKERS + 1, 10000));
    assert_int_not_equal(worker_pid(&s, 0), pid);
    /* serving goes on, and the dead worker's counts were kept: the sum never goes backwards */
    send_requests(&s, K2);
    assert_int_equal((int)scraped(&s, REQUESTS_200), K1 + K2);

    /* dying again soon after its start: the restart waits longer each time */
    pid = worker_pid(&s, 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    snprintf(line, sizeof(line), "worker 0 (pid %d) killed by signal 9 (Killed); restarting it in 200 ms",
             pid);
    assert_true(h_log_wait(&s, line, 1, 10000));
    assert_true(h_log_wait(&s, "serving admission on", NWORKERS + 2, 10000));
    send_requests(&s, 2);
    assert_int_equal((int)scraped(&s, REQUESTS_200), K1 + K2 + 2);
    assert_int_equal(h_stop(&s, SIGTERM, 20000), 0);
    h_cleanup(&s);
}

static void test_bad_worker_counts_are_refused(void **state)
{
    const char *zero[] = {"--workers", "0", NULL};
    const char *many[] = {"--workers", "65", NULL};
    char out[4096];

    assert_int_equal(h_run(zero, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "--workers"));
    assert_int_equal(h_run(many, out, sizeof(out), 10000), 2);
    assert_non_null(strstr(out, "--workers"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_workers_serve_and_metrics_sum_exactly),
        cmocka_unit_test(test_sighup_reaches_every_worker),
        cmocka_unit_test(test_sigterm_drains_every_worker),
        cmocka_unit_test(test_killed_worker_is_restarted),
        cmocka_unit_test(test_bad_worker_counts_are_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

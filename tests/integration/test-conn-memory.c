/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory per idle TLS keep-alive connection, and memory given back once connections close (issue
 * 17, item 5). 500 connections each have one AdmissionReview answered and then sit idle: admitd's
 * RSS must grow by well under the ~57-67 KB per connection it used to keep (record buffers, a 32 KB
 * input buffer, the head arena, TLS 1.3's leftover handshake state), and every connection must
 * still work after its buffers were given back. Once they close, RSS must come back near where it
 * started instead of staying at the high-water mark. RSS is read from /proc; under AddressSanitizer
 * (whose allocator keeps freed memory in quarantine) only the behaviour is checked.
 *
 * The other side of that trade (issue 17, item 4): while idle connections are few, a connection used
 * again after its idle trim must not fault its record pages back in. Giving the pages back and
 * faulting them in cost ~0.35 ms of loop time per connection on the benchmark VM, which a keep-alive
 * client going back to a connection every second or so pays at every request.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "adm/base/buf.h"
#include "harness.h"

#define CONNECTIONS 500
/* Bytes of RSS per idle connection allowed: the goal is 20 KB, it was ~57-67 KB. */
#define PER_CONNECTION_BOUND (24 * 1024)
/* RSS allowed above the start once every connection has closed (it used to stay ~30 MB up). */
#define AFTER_CLOSE_BOUND_KB (6 * 1024)

static h_server_t server;

static long rss_kb(void)
{
    long kb = h_rss_kib(server.pid);

    assert_true(kb > 0);
    return kb;
}

/* One review on c, answered 200 for its uid. */
static void review_once(h_conn_t *c, int i)
{
    char uid[32];
    char *body;

    snprintf(uid, sizeof(uid), "idle-%d", i);
    body = h_review(uid);
    h_expect(c, "POST", "/validate", "application/json", body, 200, uid);
    free(body);
}

/*
 * Waits until RSS is at most limit_kb (idle connections give their buffers back a second after
 * their last request; closed ones once the heap is trimmed), up to 20 s. Returns the last reading.
 */
static long wait_rss_at_most(long limit_kb)
{
    long long deadline = h_now_ms() + 20000;
    struct timespec tick = {.tv_nsec = 50 * 1000 * 1000};
    long kb = rss_kb();

    while (kb > limit_kb && h_now_ms() < deadline) {
        nanosleep(&tick, NULL);
        kb = rss_kb();
    }
    return kb;
}

static void test_idle_connections_and_after_close(void **state)
{
    /* --v 2: the log says when freed heap memory was given back. */
    const char *args[] = {"--v", "2", NULL};
    h_conn_t *conns = calloc(CONNECTIONS, sizeof(*conns));
    h_conn_t warm;
    long start, idle, after;

    assert_non_null(conns);
    assert_int_equal(adm_tls_global_init(), 0);
    assert_int_equal(h_start(&server, NULL, args), 0);
    /* The first request sets up what any request needs once (arenas, plugin state): not per connection. */
    assert_int_equal(h_connect_to(&warm, &server), 0);
    review_once(&warm, -1);
    h_close(&warm);
    start = rss_kb();

    for (int i = 0; i < CONNECTIONS; i++) {
        assert_int_equal(h_connect_to(&conns[i], &server), 0);
        review_once(&conns[i], i);
    }
    idle = wait_rss_at_most(start + (long)CONNECTIONS * PER_CONNECTION_BOUND / 1024);
    print_message("RSS %ld KB at the start, %ld KB with %d idle connections: %ld B each\n", start, idle,
                  CONNECTIONS, (idle - start) * 1024 / CONNECTIONS);
    if (!H_UNDER_ASAN) {
        assert_true((idle - start) * 1024 / CONNECTIONS <= PER_CONNECTION_BOUND);
    }

    /* Every connection goes on as before once its buffers are back in use. */
    for (int i = 0; i < CONNECTIONS; i++) {
        review_once(&conns[i], CONNECTIONS + i);
    }
    for (int i = 0; i < CONNECTIONS; i++) {
        h_close(&conns[i]);
    }
    assert_true(h_log_wait(&server, "free heap memory after connections fell from", 1, 20000));
    after = wait_rss_at_most(start + AFTER_CLOSE_BOUND_KB);
    print_message("RSS %ld KB once they closed\n", after);
    if (!H_UNDER_ASAN) {
        assert_true(after <= start + AFTER_CLOSE_BOUND_KB);
    }

    /* And new connections are served after the trim. */
    assert_int_equal(h_connect_to(&warm, &server), 0);
    review_once(&warm, -2);
    h_close(&warm);
    free(conns);
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
    adm_tls_global_cleanup();
}

/* Page faults admitd has taken (minflt of /proc/PID/stat). */
static long long minor_faults(pid_t pid)
{
    char path[64], text[1024];
    long long faults = -1;
    const char *after_name;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    /* after "pid (comm) ": state ppid pgrp session tty_nr tpgid flags minflt */
    after_name = strrchr(text, ')');
    assert_non_null(after_name);
    assert_int_equal(sscanf(after_name + 1, " %*c %*d %*d %*d %*d %*d %*u %lld", &faults), 1);
    return faults;
}

#define FEW_CONNECTIONS 16

static void test_few_idle_connections_keep_their_pages(void **state)
{
    const char *args[] = {NULL};
    h_conn_t conns[FEW_CONNECTIONS];
    struct timespec past_trim = {.tv_sec = 2, .tv_nsec = 500 * 1000 * 1000};
    long long before, faults;

    assert_int_equal(adm_tls_global_init(), 0);
    assert_int_equal(h_start(&server, NULL, args), 0);
    for (int i = 0; i < FEW_CONNECTIONS; i++) {
        assert_int_equal(h_connect_to(&conns[i], &server), 0);
        review_once(&conns[i], i);
        review_once(&conns[i], FEW_CONNECTIONS + i);
    }
    /* Idle for longer than the trim's second: their buffers were given back, their record pages kept
       (a later trim would only make this pass without testing anything, never fail it). */
    nanosleep(&past_trim, NULL);
    before = minor_faults(server.pid);
    for (int i = 0; i < FEW_CONNECTIONS; i++) {
        review_once(&conns[i], 2 * FEW_CONNECTIONS + i);
    }
    faults = minor_faults(server.pid) - before;
    print_message("%lld page faults for %d connections used again after their idle trim\n", faults,
                  FEW_CONNECTIONS);
    /* Giving the record pages back cost ~3 faults per connection here (the request's and the
       answer's record pages); ASan's allocator and shadow memory fault on their own. */
    if (!H_UNDER_ASAN) {
        assert_true(faults < FEW_CONNECTIONS);
    }
    for (int i = 0; i < FEW_CONNECTIONS; i++) {
        h_close(&conns[i]);
    }
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
    adm_tls_global_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_connections_and_after_close),
        cmocka_unit_test(test_few_idle_connections_keep_their_pages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SIGTERM/SIGINT drain: /readyz fails at once, answers during --shutdown-delay carry
 * Connection: close, idle connections are closed, the listener closes after the delay, requests
 * in flight (half a body, a pipelined batch) are all answered, and admitd exits 0. SIGHUP reloads
 * (test-reload.c) and never ends the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/buf.h"
#include "certgen.h"
#include "harness.h"

static int setup(void **state)
{
    return adm_tls_global_init();
}

static int teardown(void **state)
{
    adm_tls_global_cleanup();
    return 0;
}

static char *review_request(const char *uid, size_t *len)
{
    char *body = h_review(uid);
    char *req = h_request("POST", "/validate", "application/json", body, strlen(body), len);

    free(body);
    return req;
}

static void drain(int sig)
{
    const char *args[] = {"--shutdown-delay", "1s", "--shutdown-grace", "5s", NULL};
    h_server_t s;
    h_conn_t idle, half, pipelined, probe, late;
    h_response_t r;
    adm_buf_t batch = ADM_BUF_INIT;
    size_t len;
    char *req = review_request("half", &len);
    char *probe_req;
    size_t probe_len;
    long long t0;

    assert_int_equal(h_start(&s, NULL, args), 0);
    /* an idle keep-alive connection (one request done) */
    assert_int_equal(h_connect_to(&idle, &s), 0);
    probe_req = h_request("GET", "/healthz", NULL, NULL, 0, &probe_len);
    assert_int_equal(h_send(&idle, probe_req, probe_len), 0);
    assert_int_equal(h_read(&idle, &r, 10000, NULL), 0);
    h_response_free(&r);
    free(probe_req);
    /* a request whose head and half its body have arrived */
    assert_int_equal(h_connect_to(&half, &s), 0);
    assert_int_equal(h_send(&half, req, len - 40), 0);
    t0 = h_now_ms();
    assert_int_equal(kill(s.pid, sig), 0);

    /* idle connections are closed at once */
    assert_true(h_wait_closed(&idle, 3000));
    /* new connections are still accepted during the delay (endpoints may still send some) */
    assert_int_equal(h_connect_to(&pipelined, &s), 0);
    assert_int_equal(h_connect_to(&probe, &s), 0);
    /* /readyz fails during the delay, and the answer closes the connection */
    probe_req = h_request("GET", "/readyz", NULL, NULL, 0, &probe_len);
    assert_int_equal(h_send(&probe, probe_req, probe_len), 0);
    assert_int_equal(h_read(&probe, &r, 3000, NULL), 0);
    assert_int_equal(r.status, 503);
    assert_true(r.close);
    h_response_free(&r);
    free(probe_req);
    /* ten pipelined requests sent during the delay are all answered (the first with close) */
    for (int i = 0; i < 10; i++) {
        char uid[16];
        char *one;
        size_t one_len;

        snprintf(uid, sizeof(uid), "p%d", i);
        one = review_request(uid, &one_len);
        adm_buf_append(&batch, one, one_len);
        free(one);
    }
    assert_int_equal(h_send(&pipelined, batch.data, batch.len), 0);
    assert_int_equal(h_read(&pipelined, &r, 3000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "p0", true));
    assert_true(r.close); /* draining: the connection ends after this answer */
    h_response_free(&r);
    assert_true(h_wait_closed(&pipelined, 5000));

    /* after the delay the listener is closed */
    while (h_now_ms() - t0 < 3000) {
        if (h_connect(&late, s.port, NULL, NULL, NULL, NULL) != 0) {
            break;
        }
        h_close(&late);
        late.fd = 0;
        poll(NULL, 0, 50);
    }
    h_close(&late);
    assert_true(h_now_ms() - t0 >= 900);
    assert_true(h_now_ms() - t0 < 3000);

    /* the half-sent request is still answered, then admitd exits 0 */
    assert_int_equal(h_send(&half, req + len - 40, 40), 0);
    assert_int_equal(h_read(&half, &r, 5000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "half", true));
    assert_true(r.close);
    h_response_free(&r);
    h_close(&half);
    h_close(&idle);
    h_close(&pipelined);
    h_close(&probe);
    assert_int_equal(h_stop(&s, 0, 10000), 0);
    h_cleanup(&s);
    adm_buf_free(&batch);
    free(req);
}

static void test_sigterm(void **state)
{
    drain(SIGTERM);
}

static void test_sigint(void **state)
{
    drain(SIGINT);
}

static void test_sighup_keeps_serving(void **state)
{
    const char *args[] = {"--shutdown-delay", "0s", NULL};
    h_server_t s;
    h_conn_t c;
    h_response_t r;
    size_t len;
    char *req = review_request("after-hup", &len);

    assert_int_equal(h_start(&s, NULL, args), 0);
    /* "ready" is logged after the signal handlers are installed */
    assert_true(h_log_wait(&s, " ready\n", 1, 10000));
    assert_int_equal(kill(s.pid, SIGHUP), 0);
    if (!h_log_wait(&s, "configuration reloaded", 1, 5000)) {
        h_dump_log(&s);
        fail_msg("no SIGHUP line in the log");
    }
    /* still serving, on a connection opened after the signal */
    assert_int_equal(h_connect_to(&c, &s), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "after-hup", true));
    assert_false(r.close);
    h_response_free(&r);
    h_close(&c);
    /* and SIGTERM still drains and exits 0 */
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(req);
}

/*
 * A SIGHUP during start-up, before the loop's handler exists: the admission configuration is a
 * FIFO, so admitd is held inside its configuration loading until the test writes the file, and the
 * signal is sent exactly then. admitd must start anyway.
 */
static void test_sighup_during_startup(void **state)
{
    static const char config[] =
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n";
    char dir[256], fifo[320];
    const char *args[] = {"--admission-control-config-file", fifo, "--shutdown-delay", "0s", NULL};
    h_server_t s;
    h_conn_t c;
    h_response_t r;
    size_t len;
    char *req = review_request("started", &len);
    long long deadline;
    int fd = -1;

    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(fifo, sizeof(fifo), "%s/admission.yaml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(h_spawn(&s, dir, args), 0);
    /* A non-blocking open for writing succeeds only once admitd has opened the FIFO to read it. */
    deadline = h_now_ms() + 20000;
    while (fd < 0 && h_now_ms() < deadline) {
        fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd < 0) {
            assert_int_equal(errno, ENXIO);
            assert_int_equal(waitpid(s.pid, NULL, WNOHANG), 0);
            poll(NULL, 0, 5);
        }
    }
    assert_true(fd >= 0);
    /* admitd now waits in its configuration read, before any handler of its own is installed */
    assert_int_equal(kill(s.pid, SIGHUP), 0);
    assert_int_equal(write(fd, config, sizeof(config) - 1), (ssize_t)(sizeof(config) - 1));
    close(fd);
    assert_int_equal(h_wait_serving(&s, 20000), 0);
    assert_int_equal(h_connect_to(&c, &s), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    assert_true(h_is_answer(&r, "admission.k8s.io/v1", "started", true));
    h_response_free(&r);
    h_close(&c);
    assert_int_equal(h_stop(&s, SIGTERM, 10000), 0);
    h_cleanup(&s);
    free(req);
}

static void test_grace_expires(void **state)
{
    const char *args[] = {"--shutdown-delay", "0s", "--shutdown-grace", "500ms", NULL};
    h_server_t s;
    h_conn_t stuck;
    long long t0;

    assert_int_equal(h_start(&s, NULL, args), 0);
    assert_int_equal(h_connect_to(&stuck, &s), 0);
    assert_int_equal(h_send(&stuck, "POST /validate HTTP/1.1\r\n", 25), 0); /* never finished */
    t0 = h_now_ms();
    assert_int_equal(h_stop(&s, SIGTERM, 5000), 0);
    assert_true(h_now_ms() - t0 < 3000);
    assert_true(h_wait_closed(&stuck, 1000));
    h_close(&stuck);
    h_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_sigint),
        cmocka_unit_test(test_grace_expires),
        cmocka_unit_test(test_sighup_keeps_serving),
        cmocka_unit_test(test_sighup_during_startup),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

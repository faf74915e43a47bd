/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The --workers metrics memory with real processes: names interned before the fork and by
 * different workers in different orders render once, with every worker's counts added (admission
 * histograms, reloads, PodSecurity counters, downstream connections); a slot a worker never made
 * reads as absent; a restarted worker goes on from its slot's counts and starts its connection
 * gauge at 0; and a slot that is full gives NULL instead of memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/admission_metrics.h"
#include "adm/base/shared_metrics.h"

#define SERIES(name)                                                                                         \
    "admitd_admission_controller_duration_seconds_count{name=\"" name                                        \
    "\",type=\"admit\",operation=\"CREATE\","                                                                \
    "rejected=\"false\"} "

/* Renders the admission families and checks that every line of the NULL-terminated list is there. */
static void expect_lines(const char *const *lines)
{
    adm_buf_t out = ADM_BUF_INIT;

    assert_int_equal(adm_metrics_render_admission(&out), 0);
    assert_int_equal(adm_buf_append(&out, "", 1), 0);
    for (; *lines != NULL; lines++) {
        if (strstr((const char *)out.data, *lines) == NULL) {
            fail_msg("missing from /metrics: %s\n--- got ---\n%s", *lines, (const char *)out.data);
        }
    }
    adm_buf_free(&out);
}

/* Runs fn as worker `index` in a child process, as a forked worker would, and waits for it. */
static void as_worker(unsigned index, void (*fn)(void))
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        adm_shm_select(index);
        adm_metrics_attach_worker();
        fn();
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void record(const char *name, int times)
{
    int id = adm_metrics_name(name);

    for (int i = 0; i < times; i++) {
        adm_metrics_controller(id, ADM_MX_ADMIT, 0, false, 1000);
    }
}

static void first_worker_one(void)
{
    record("late.example.com", 3); /* a name only this worker interned, before "A" is counted here */
    record("A", 2);
    adm_metrics_config_reload(true);
    adm_metrics_psa_evaluation(ADM_MX_PSA_ALLOW, 0, ADM_MX_PSA_LATEST, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD,
                               "");
    adm_metrics_client_conn(2);
}

static void restarted_worker_one(void)
{
    record("A", 1);
}

static void test_workers_slots_are_summed(void **state)
{
    (void)state;
    assert_int_equal(adm_shm_create(2), 0);
    assert_int_equal(adm_metrics_share(), 0);
    /* the parent interns while it loads the configuration, before any fork */
    assert_true(adm_metrics_name("A") > 0);

    as_worker(1, first_worker_one);
    /* this process plays worker 0 */
    adm_shm_select(0);
    assert_null(adm_shm_part(1, ADM_SHM_SERVER, 64)); /* worker 1 never made it */
    adm_metrics_attach_worker();
    record("A", 1);
    adm_metrics_psa_evaluation(ADM_MX_PSA_ALLOW, 0, ADM_MX_PSA_LATEST, ADM_MX_PSA_ENFORCE, 0, ADM_MX_PSA_POD,
                               "");
    adm_metrics_config_reload(true);

    expect_lines((const char *const[]){
        SERIES("A") "3\n",
        SERIES("late.example.com") "3\n",
        "admitd_config_reloads_total{result=\"success\"} 2\n",
        "admitd_connections{side=\"client\"} 2\n",
        "admitd_pod_security_evaluations_total{decision=\"allow\",policy_level=\"privileged\",policy_version="
        "\"latest\",mode=\"enforce\",request_operation=\"create\",resource=\"pod\",subresource=\"\"} 2\n",
        NULL,
    });

    /* worker 1 dies and is restarted: its counts stay, its connections are gone */
    as_worker(1, restarted_worker_one);
    expect_lines((const char *const[]){
        SERIES("A") "4\n",
        SERIES("late.example.com") "3\n",
        "admitd_connections{side=\"client\"} 0\n",
        NULL,
    });

    /* a full slot gives no memory rather than someone else's */
    assert_null(adm_shm_alloc(ADM_SHM_SLOT_BYTES));
    assert_non_null(adm_shm_alloc(64));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_slots_are_summed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

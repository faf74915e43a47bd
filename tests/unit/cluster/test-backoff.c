/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reflector's back-off against client-go's numbers: steps of 800 ms doubling to a 30 s cap,
 * each wait within [step, 2*step), a reset after two quiet minutes, Retry-After taking over, and
 * one log line per step (a run stuck at the cap logs once).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "adm/cluster/backoff.h"

static void test_steps_and_cap(void **state)
{
    static const uint64_t steps[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000};
    adm_backoff_t b;
    uint64_t now = 1000;
    int logs = 0;

    (void)state;
    adm_backoff_init(&b, 42);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        bool log_it;
        uint64_t d = adm_backoff_next(&b, now, 0, &log_it);

        assert_true(d >= steps[i]);
        assert_true(d < 2 * steps[i]);
        logs += log_it;
        now += d;
    }
    assert_int_equal(logs, 7); /* 800 ... 25600, then 30000 once */
}

static void test_reset_and_retry_after(void **state)
{
    adm_backoff_t b;
    bool log_it;
    uint64_t d;

    (void)state;
    adm_backoff_init(&b, 7);
    adm_backoff_next(&b, 0, 0, &log_it);
    adm_backoff_next(&b, 1000, 0, &log_it);
    d = adm_backoff_next(&b, 3000, 0, &log_it);
    assert_true(d >= 3200);
    /* two minutes and a bit without a failure: back to 800 ms, logged again */
    d = adm_backoff_next(&b, 3000 + 120001, 0, &log_it);
    assert_true(d >= 800 && d < 1600);
    assert_true(log_it);
    /* a 429's Retry-After is the wait */
    assert_int_equal(adm_backoff_next(&b, 3000 + 120002, 5, &log_it), 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_cap),
        cmocka_unit_test(test_reset_and_retry_after),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The circuit breaker's states on a hand-moved clock: K consecutive failures open it, a success
 * in between resets the count, an open circuit refuses with the reason that opened it, one probe
 * after the cool-down (the others still refused), the probe's failure reopens and its success
 * closes; "K/COOLDOWN" and "off" parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adm/webhook/breaker.h"

static void test_parse(void **state)
{
    uint32_t k = 9;
    uint64_t ms = 9;

    (void)state;
    assert_int_equal(adm_breaker_parse("5/10s", &k, &ms), 0);
    assert_int_equal(k, 5);
    assert_int_equal(ms, 10000);
    assert_int_equal(adm_breaker_parse("off", &k, &ms), 0);
    assert_int_equal(k, 0);
    assert_int_equal(adm_breaker_parse("1/250ms", &k, &ms), 0);
    assert_int_equal(ms, 250);
    assert_int_not_equal(adm_breaker_parse("0/10s", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("5", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("5/", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("/5s", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("5/0s", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("x/5s", &k, &ms), 0);
    assert_int_not_equal(adm_breaker_parse("5/5 s", &k, &ms), 0);
}

static void test_opens_after_k_consecutive_failures(void **state)
{
    adm_breaker_t b;
    bool probe;

    (void)state;
    adm_breaker_init(&b, 3, 1000);
    for (int i = 0; i < 2; i++) {
        assert_true(adm_breaker_admit(&b, 0, &probe));
        adm_breaker_record(&b, 0, probe, true, "boom");
    }
    /* a success resets the count */
    assert_true(adm_breaker_admit(&b, 0, &probe));
    adm_breaker_record(&b, 0, probe, false, NULL);
    for (int i = 0; i < 2; i++) {
        assert_true(adm_breaker_admit(&b, 0, &probe));
        adm_breaker_record(&b, 0, probe, true, "boom");
    }
    assert_int_equal(b.state, ADM_BREAKER_CLOSED);
    assert_true(adm_breaker_admit(&b, 10, &probe));
    assert_false(probe);
    adm_breaker_record(&b, 10, probe, true, "failed to call webhook: dead");
    assert_int_equal(b.state, ADM_BREAKER_OPEN);
    assert_int_equal(b.opened, 1);
    assert_false(adm_breaker_admit(&b, 500, &probe));
    assert_string_equal(b.reason, "failed to call webhook: dead");
    assert_int_equal(b.refused, 1);
}

static void test_half_open_probe(void **state)
{
    adm_breaker_t b;
    bool probe, other;

    (void)state;
    adm_breaker_init(&b, 1, 1000);
    assert_true(adm_breaker_admit(&b, 0, &probe));
    adm_breaker_record(&b, 0, probe, true, "first");
    assert_false(adm_breaker_admit(&b, 999, &probe));
    /* the cool-down is over: one probe, the others still refused */
    assert_true(adm_breaker_admit(&b, 1000, &probe));
    assert_true(probe);
    assert_int_equal(b.state, ADM_BREAKER_HALF_OPEN);
    assert_false(adm_breaker_admit(&b, 1001, &other));
    /* the probe fails: open for another cool-down, with its reason */
    adm_breaker_record(&b, 1100, true, true, "second");
    assert_int_equal(b.state, ADM_BREAKER_OPEN);
    assert_string_equal(b.reason, "second");
    assert_false(adm_breaker_admit(&b, 2099, &probe));
    assert_true(adm_breaker_admit(&b, 2100, &probe));
    assert_true(probe);
    /* a probe that could not be sent lets the next call probe */
    adm_breaker_probe_dropped(&b);
    assert_true(adm_breaker_admit(&b, 2101, &probe));
    assert_true(probe);
    adm_breaker_record(&b, 2200, true, false, NULL);
    assert_int_equal(b.state, ADM_BREAKER_CLOSED);
    assert_true(adm_breaker_admit(&b, 2201, &probe));
    assert_false(probe);
    assert_int_equal(b.opened, 2);
}

static void test_off_never_refuses(void **state)
{
    adm_breaker_t b;
    bool probe;

    (void)state;
    adm_breaker_init(&b, 0, 0);
    for (int i = 0; i < 100; i++) {
        assert_true(adm_breaker_admit(&b, (uint64_t)i, &probe));
        adm_breaker_record(&b, (uint64_t)i, probe, true, "x");
    }
    assert_int_equal(b.state, ADM_BREAKER_CLOSED);
    assert_string_equal(adm_breaker_state_name(ADM_BREAKER_HALF_OPEN), "half-open");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_opens_after_k_consecutive_failures),
        cmocka_unit_test(test_half_open_probe),
        cmocka_unit_test(test_off_never_refuses),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

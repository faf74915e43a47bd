/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The handshake pacer (src/server/handshake_pacer.c) on a real libuv loop: within one turn,
 * handshake work runs until the budget is spent and later connections are held; each following
 * turn hands the held ones back oldest first, as many as the budget allows, without the loop
 * blocking in between; a closing connection leaves the line; closing the pacer lets everyone
 * through and closes its handles so the loop can end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "../../../src/server/handshake_pacer.h"

#define NODES 6
#define COST_NS (600 * 1000) /* each handshake: 0.6 ms of a 1 ms budget, so two per turn */

static adm__pacer_node_t nodes[NODES];
static int order[NODES], nresumed, closes;

static void on_resume(adm__pacer_t *p, adm__pacer_node_t *node)
{
    order[nresumed++] = (int)(node - nodes);
    adm__pacer_charge(p, COST_NS);
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
    closes++;
}

static void fresh(adm__pacer_t *p, uv_loop_t *loop)
{
    assert_int_equal(uv_loop_init(loop), 0);
    adm__pacer_init(p, loop, ADM_HANDSHAKE_BUDGET_NS, on_resume);
    memset(nodes, 0, sizeof(nodes));
    nresumed = 0;
    closes = 0;
}

static void finish(adm__pacer_t *p, uv_loop_t *loop, int want_closes)
{
    assert_int_equal(adm__pacer_close(p, on_closed, NULL), want_closes);
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(closes, want_closes);
    assert_int_equal(uv_loop_close(loop), 0);
}

static void budget_then_fifo_over_turns(void **state)
{
    uv_loop_t loop;
    adm__pacer_t p;

    (void)state;
    fresh(&p, &loop);
    /* The turn's first handshakes run until the budget is spent... */
    assert_true(adm__pacer_may_run(&p));
    adm__pacer_charge(&p, COST_NS);
    assert_true(adm__pacer_may_run(&p));
    adm__pacer_charge(&p, COST_NS);
    assert_false(adm__pacer_may_run(&p));
    /* ...then connections are held, in arrival order. */
    for (int i = 0; i < NODES; i++) {
        assert_int_equal(adm__pacer_hold(&p, &nodes[i]), 0);
        assert_true(nodes[i].queued);
    }
    /* Each turn hands back two (the budget), oldest first; the poll does not block meanwhile. */
    for (int turn = 1; turn <= 3; turn++) {
        /* uv_run's answer: is the loop still alive (someone still waits)? */
        assert_int_equal(uv_run(&loop, UV_RUN_ONCE), turn < 3 ? 1 : 0);
        assert_int_equal(nresumed, 2 * turn);
    }
    for (int i = 0; i < NODES; i++) {
        assert_int_equal(order[i], i);
        assert_false(nodes[i].queued);
    }
    /* Nothing waits: the pacer no longer keeps the loop up. */
    assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
    finish(&p, &loop, 2);
}

static void newcomers_queue_behind_the_held(void **state)
{
    uv_loop_t loop;
    adm__pacer_t p;

    (void)state;
    fresh(&p, &loop);
    adm__pacer_charge(&p, ADM_HANDSHAKE_BUDGET_NS);
    assert_int_equal(adm__pacer_hold(&p, &nodes[0]), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0); /* node 0 goes through: budget 0.6 of 1 ms */
    assert_int_equal(nresumed, 1);
    assert_int_equal(adm__pacer_hold(&p, &nodes[1]), 0);
    /* While someone waits, a newcomer may not jump the line even with budget left. */
    assert_false(adm__pacer_may_run(&p));
    finish(&p, &loop, 2); /* closing hands node 1 back at once */
    assert_int_equal(nresumed, 2);
    assert_int_equal(order[1], 1);
}

static void cancelled_connections_leave_the_line(void **state)
{
    uv_loop_t loop;
    adm__pacer_t p;

    (void)state;
    fresh(&p, &loop);
    adm__pacer_charge(&p, ADM_HANDSHAKE_BUDGET_NS);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(adm__pacer_hold(&p, &nodes[i]), 0);
    }
    adm__pacer_cancel(&p, &nodes[1]);
    adm__pacer_cancel(&p, &nodes[1]); /* twice is harmless */
    adm__pacer_cancel(&p, &nodes[4]); /* never held: harmless */
    assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
    assert_int_equal(nresumed, 2);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 2);
    finish(&p, &loop, 2);
}

static void never_used_needs_no_close(void **state)
{
    uv_loop_t loop;
    adm__pacer_t p;

    (void)state;
    fresh(&p, &loop);
    finish(&p, &loop, 0);
    /* Closed, it never holds anyone again. */
    adm__pacer_charge(&p, 10 * ADM_HANDSHAKE_BUDGET_NS);
    assert_true(adm__pacer_may_run(&p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_then_fifo_over_turns),
        cmocka_unit_test(newcomers_queue_behind_the_held),
        cmocka_unit_test(cancelled_connections_leave_the_line),
        cmocka_unit_test(never_used_needs_no_close),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

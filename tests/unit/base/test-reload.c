/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reload coordinator: every part prepared, then all committed, or all discarded when one
 * fails (the failing part named in the log, the running state untouched); outcomes counted and
 * reported; each part's files watched again after every reload.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/reload.h"

typedef struct part_state_s {
    int running; /* the committed "configuration" */
    int next;    /* what prepare builds */
    bool fail;
    int prepared, committed, discarded, watched;
    int pending_value;
} part_state_t;

static int prepare(void *arg, void **pending, char *err, size_t err_len)
{
    part_state_t *p = arg;

    p->prepared++;
    if (p->fail) {
        snprintf(err, err_len, "part.yaml: field: broken");
        return ADM_EINVAL;
    }
    p->pending_value = p->next;
    *pending = &p->pending_value;
    return 0;
}

static void commit(void *arg, void *pending)
{
    part_state_t *p = arg;

    p->committed++;
    p->running = *(int *)pending;
}

static void discard(void *arg, void *pending)
{
    part_state_t *p = arg;

    assert_ptr_equal(pending, &p->pending_value);
    p->discarded++;
}

static void watch(void *arg, adm_reload_t *r)
{
    ((part_state_t *)arg)->watched++;
    adm_reload_watch(r, "/nonexistent-admitd-folder/part.yaml"); /* logged and skipped */
}

static int outcomes[2];

static void on_done(void *arg, bool ok)
{
    outcomes[ok]++;
}

static void test_all_or_nothing(void **state)
{
    uv_loop_t loop;
    adm_reload_t *r;
    part_state_t a = {.running = 1, .next = 2}, b = {.running = 10, .next = 20};
    adm_reload_part_t pa = {"A", prepare, commit, discard, watch, &a};
    adm_reload_part_t pb = {"B", prepare, commit, discard, watch, &b};

    uv_loop_init(&loop);
    assert_int_equal(adm_reload_create(&loop, 50, on_done, NULL, &r), 0);
    assert_int_equal(adm_reload_add_part(r, &pa), 0);
    assert_int_equal(adm_reload_add_part(r, &pb), 0);
    assert_int_equal(a.watched, 1);

    b.fail = true;
    assert_false(adm_reload_now(r, "test"));
    assert_int_equal(a.running, 1);
    assert_int_equal(b.running, 10);
    assert_int_equal(a.discarded, 1);
    assert_int_equal(b.discarded, 0); /* its prepare failed: nothing to discard */
    assert_int_equal(a.committed + b.committed, 0);
    assert_int_equal(adm_reload_count(r, false), 1);
    assert_int_equal(outcomes[0], 1);
    assert_int_equal(a.watched, 2);

    b.fail = false;
    assert_true(adm_reload_now(r, "test"));
    assert_int_equal(a.running, 2);
    assert_int_equal(b.running, 20);
    assert_int_equal(adm_reload_count(r, true), 1);
    assert_int_equal(outcomes[1], 1);
    assert_int_equal(b.watched, 3);

    adm_reload_close(r);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_or_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the server accepts as routes: the application's paths beside its own probes and /metrics,
 * only before it starts, within ADM_ROUTES_MAX; and a server that starts and drains on its loop
 * without a route of the application. (Serving requests through routes is tested end to end by
 * tests/integration: admitd's endpoints and the mockhook's catch-all.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/options.h"
#include "adm/base/util.h"
#include "adm/server/server.h"

static void handler(adm_exchange_t *x, void *arg)
{
}

static void on_done(adm_server_t *s, void *arg)
{
    *(int *)arg += 1;
}

static void test_routes(void **state)
{
    adm_options_t opts;
    uv_loop_t loop;
    adm_server_t *s;
    char err[256] = "";
    char paths[ADM_ROUTES_MAX][16];
    adm_route_t r = {
        .path = "/validate", .label = "validate", .listeners = ADM_ON_ADMISSION, .handler = handler};
    int done = 0;
    size_t added = 0;

    adm_options_defaults(&opts);
    opts.insecure_http = true;
    opts.shutdown_delay_ms = 0;
    assert_int_equal(adm_parse_hostport("127.0.0.1:0", &opts.listen), 0);
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(adm_server_create(&loop, &opts, &s, err, sizeof(err)), 0);

    assert_int_equal(adm_server_add_route(s, &r), 0);
    added++;
    assert_int_equal(adm_server_add_route(s, &r), ADM_EINVAL); /* taken */
    /* the server's own paths, on the listeners where it serves them */
    r.path = "/healthz";
    assert_int_equal(adm_server_add_route(s, &r), ADM_EINVAL);
    r.path = "/metrics";
    assert_int_equal(adm_server_add_route(s, &r), ADM_EINVAL);
    r.listeners = ADM_ON_HEALTH; /* /metrics is not served on the health listener */
    assert_int_equal(adm_server_add_route(s, &r), 0);
    added++;
    /* a catch-all never hides the probes: they are exact paths */
    r.path = NULL;
    r.listeners = ADM_ON_ADMISSION;
    r.label = "webhook";
    assert_int_equal(adm_server_add_route(s, &r), 0);
    added++;
    r.label = "not a label";
    r.path = "/x";
    assert_int_equal(adm_server_add_route(s, &r), ADM_EINVAL);
    /* room is kept for the server's own four */
    r.label = NULL;
    for (size_t i = 0; added + 4 < ADM_ROUTES_MAX; i++, added++) {
        snprintf(paths[i], sizeof(paths[i]), "/p%zu", i);
        r.path = paths[i];
        assert_int_equal(adm_server_add_route(s, &r), 0);
    }
    r.path = "/one-more";
    assert_int_equal(adm_server_add_route(s, &r), ADM_ETOOBIG);

    assert_int_equal(adm_server_start(s, on_done, &done, err, sizeof(err)), 0);
    r.path = "/late";
    assert_int_equal(adm_server_add_route(s, &r), ADM_EINVAL);
    adm_server_shutdown(s);
    adm_server_shutdown(s); /* skip the rest of the drain */
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(done, 1);
    adm_server_destroy(s);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

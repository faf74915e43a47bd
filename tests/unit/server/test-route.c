/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The route table and the head checks: lookup per listener (exact path, then the catch-all), the
 * rules of adding, and the refusals a route declares (404, 405 with Allow, 401, 415) in their order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/server/route.h"

static void handler_a(adm_exchange_t *x, void *arg)
{
}

static void handler_b(adm_exchange_t *x, void *arg)
{
}

static const adm_route_t admission = {
    .path = "/validate",
    .label = "validate",
    .listeners = ADM_ON_ADMISSION,
    .method = ADM_ROUTE_POST,
    .method_text = "method not allowed: admission endpoints take POST\n",
    .client_cert = true,
    .json = true,
    .handler = handler_a,
};

static const adm_route_t probe = {
    .path = "/healthz",
    .label = "healthz",
    .listeners = ADM_ON_ADMISSION | ADM_ON_HEALTH,
    .method = ADM_ROUTE_GET,
    .handler = handler_b,
};

static void test_find(void **state)
{
    adm_route_table_t t;
    adm_route_t catch_all = {.listeners = ADM_ON_ADMISSION, .handler = handler_b};
    unsigned ep = 99;

    adm_route_table_init(&t);
    assert_null(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/validate", &ep));
    assert_int_equal(ep, 99); /* left alone without a route */
    /* the catch-all comes first here, and still only takes what no exact path does */
    assert_int_equal(adm_route_table_add(&t, &catch_all, 7), 0);
    assert_int_equal(adm_route_table_add(&t, &admission, 1), 0);
    assert_int_equal(adm_route_table_add(&t, &probe, 2), 0);

    assert_ptr_equal(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/validate", &ep)->handler, handler_a);
    assert_int_equal(ep, 1);
    assert_string_equal(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/healthz", &ep)->path, "/healthz");
    assert_int_equal(ep, 2);
    assert_null(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/anything", &ep)->path);
    assert_int_equal(ep, 7);
    /* exact: neither a prefix nor a longer path */
    assert_null(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/validat", &ep)->path);
    assert_null(adm_route_table_find(&t, ADM_LISTENER_ADMISSION, "/validate/", &ep)->path);
    /* each listener has its own routes: the health listener has the probe, and no catch-all */
    assert_non_null(adm_route_table_find(&t, ADM_LISTENER_HEALTH, "/healthz", &ep));
    assert_null(adm_route_table_find(&t, ADM_LISTENER_HEALTH, "/validate", &ep));
    assert_null(adm_route_table_find(&t, ADM_LISTENER_METRICS, "/healthz", &ep));
    assert_null(adm_route_table_find(&t, ADM_LISTENER_KINDS, "/healthz", &ep));
}

static void test_add_rules(void **state)
{
    adm_route_table_t t;
    adm_route_t r = admission;
    adm_route_t catch_all = {.listeners = ADM_ON_ADMISSION, .handler = handler_b};
    char path[ADM_ROUTES_MAX][16];

    adm_route_table_init(&t);
    r.handler = NULL;
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_EINVAL);
    r = admission;
    r.listeners = 0;
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_EINVAL);
    r.listeners = 1u << ADM_LISTENER_KINDS;
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_EINVAL);
    r = admission;
    r.path = "validate";
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_EINVAL);
    assert_int_equal(t.n, 0);

    assert_int_equal(adm_route_table_add(&t, &probe, 0), 0);
    /* a path taken on one of the route's listeners */
    r = probe;
    r.listeners = ADM_ON_HEALTH | ADM_ON_METRICS;
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_EINVAL);
    /* ...is free on another */
    r.listeners = ADM_ON_METRICS;
    assert_int_equal(adm_route_table_add(&t, &r, 0), 0);
    /* one catch-all per listener */
    assert_int_equal(adm_route_table_add(&t, &catch_all, 0), 0);
    assert_int_equal(adm_route_table_add(&t, &catch_all, 0), ADM_EINVAL);
    catch_all.listeners = ADM_ON_HEALTH;
    assert_int_equal(adm_route_table_add(&t, &catch_all, 0), 0);
    assert_int_equal(t.n, 4);

    /* full */
    for (size_t i = t.n; i < ADM_ROUTES_MAX; i++) {
        snprintf(path[i], sizeof(path[i]), "/p%zu", i);
        r = admission;
        r.path = path[i];
        assert_int_equal(adm_route_table_add(&t, &r, 0), 0);
    }
    r = admission;
    assert_int_equal(adm_route_table_add(&t, &r, 0), ADM_ETOOBIG);
    assert_int_equal(t.n, ADM_ROUTES_MAX);
}

/* Runs the head checks of route on a request; returns the status (0: the handler's). */
static int check(const adm_route_t *route, uint8_t method, const char *ctype, bool client_ca, bool verified,
                 adm_http_response_t *resp)
{
    adm_http_request_t r = {.method = method, .path = "/p", .query = "", .content_type = ctype};

    memset(resp, 0, sizeof(*resp));
    if (adm_route_check(route, &r, client_ca, verified, resp) != ADM_DECLINED) {
        return 0;
    }
    assert_non_null(resp->body);
    assert_int_equal(resp->body_len, strlen(resp->body));
    return resp->status;
}

static void test_checks(void **state)
{
    adm_route_t any = {.listeners = ADM_ON_ADMISSION, .handler = handler_b};
    adm_route_t post = admission;
    adm_http_response_t resp;

    assert_int_equal(check(NULL, HTTP_GET, NULL, false, false, &resp), 404);
    assert_string_equal(resp.body, "404 page not found\n");

    /* an admission path: POST, a verified client certificate under --client-ca-file, JSON */
    assert_int_equal(check(&admission, HTTP_POST, "application/json", false, false, &resp), 0);
    assert_int_equal(check(&admission, HTTP_POST, "application/json", true, true, &resp), 0);
    assert_int_equal(check(&admission, HTTP_POST, " Application/JSON ; charset=utf-8", false, false, &resp),
                     0);
    assert_int_equal(check(&admission, HTTP_GET, "application/json", false, false, &resp), 405);
    assert_string_equal(resp.body, "method not allowed: admission endpoints take POST\n");
    assert_string_equal(resp.allow, "POST");
    assert_int_equal(check(&admission, HTTP_POST, "application/json", true, false, &resp), 401);
    assert_int_equal(check(&admission, HTTP_POST, "text/plain", false, false, &resp), 415);
    assert_int_equal(check(&admission, HTTP_POST, NULL, false, false, &resp), 415);
    assert_int_equal(check(&admission, HTTP_POST, "application/jsonx", false, false, &resp), 415);
    assert_int_equal(check(&admission, HTTP_POST, "application/json-patch+json", false, false, &resp), 415);
    /* in order: method, then certificate, then content type */
    assert_int_equal(check(&admission, HTTP_PUT, NULL, true, false, &resp), 405);
    assert_int_equal(check(&admission, HTTP_POST, NULL, true, false, &resp), 401);
    /* without its own text, a 405 says what to use */
    post.method_text = NULL;
    assert_int_equal(check(&post, HTTP_DELETE, NULL, false, false, &resp), 405);
    assert_string_equal(resp.body, "method not allowed: use POST\n");

    /* a probe: GET and HEAD, nothing else checked, and never a certificate (D11) */
    assert_int_equal(check(&probe, HTTP_GET, NULL, true, false, &resp), 0);
    assert_int_equal(check(&probe, HTTP_HEAD, "text/plain", true, false, &resp), 0);
    assert_int_equal(check(&probe, HTTP_POST, "application/json", false, false, &resp), 405);
    assert_string_equal(resp.body, "method not allowed: use GET\n");
    assert_string_equal(resp.allow, "GET, HEAD");

    /* a route that declares nothing takes everything */
    assert_int_equal(check(&any, HTTP_PATCH, "text/plain", true, false, &resp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_add_rules),
        cmocka_unit_test(test_checks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

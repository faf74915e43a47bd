/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure parts of ResourceQuota's reservation (src/plugins/quota_reserve.c, included to reach
 * its statics): resourceVersions as integers, the status PUT's body, the look-aside cache of
 * written quotas (newer wins, caught-up ones forgotten, least recently used evicted), lastErr from
 * an API answer and its copy into a request's refusal, and the namespace table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../../src/plugins/quota_reserve.c"
#include "plugintest.h"

static yyjson_val *parse(const char *json)
{
    yyjson_read_err err;
    yyjson_doc *d = adm_json_read(pt_arena, json, strlen(json), &err);

    assert_non_null(d);
    return yyjson_doc_get_root(d);
}

static const char *quota_json(const char *name, const char *rv, const char *used)
{
    return adm_arena_printf(pt_arena,
                            "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"%s\","
                            "\"labels\":{\"a\":\"b\"}},\"spec\":{\"hard\":{\"pods\":\"2\"}},"
                            "\"status\":{\"hard\":{\"pods\":\"2\",\"requests.cpu\":\"1\"},\"used\":%s}}",
                            name, rv, used);
}

static void test_rv_number(void **state)
{
    (void)state;
    assert_int_equal(rv_number("123"), 123);
    assert_int_equal(rv_number("0"), 0);
    assert_int_equal(rv_number(""), 0);
    assert_int_equal(rv_number(NULL), 0);
    assert_int_equal(rv_number("12a"), 0);
    assert_int_equal(rv_number("-1"), 0);
    assert_int_equal(rv_number("18446744073709551615"), 18446744073709551615ull);
    assert_int_equal(rv_number("18446744073709551616"), 0); /* past uint64: not etcd's */
}

static void test_url_name(void **state)
{
    (void)state;
    assert_true(url_name("compute"));
    assert_true(url_name("compute-1.a"));
    assert_false(url_name(""));
    assert_false(url_name("a/b"));
    assert_false(url_name("a b"));
    assert_false(url_name("A"));
    assert_false(url_name("a?x=1"));
}

static void test_quota_read(void **state)
{
    adm_quota_t q;

    (void)state;
    assert_int_equal(adm_quota_read(pt_arena, parse(quota_json("q", "7", "{\"pods\":\"1\"}")), &q), 0);
    assert_string_equal(q.name, "q");
    assert_string_equal(q.rv, "7");
    assert_true(q.usable);
    assert_int_equal(q.hard.n, 2);
    assert_int_equal(q.used.n, 1);
    assert_false(q.changed);
    /* a status that does not parse: kept, not usable */
    assert_int_equal(adm_quota_read(pt_arena, parse(quota_json("q", "7", "{\"pods\":\"x\"}")), &q), 0);
    assert_false(q.usable);
}

/* The status PUT: kind and apiVersion first, the object as read, status.used in name order. */
static void test_status_body(void **state)
{
    adm_quota_t q;
    adm_quantity_t cpu, pods;
    const char *body;
    size_t len = 0;

    (void)state;
    assert_int_equal(adm_quota_read(pt_arena, parse(quota_json("q", "7", "{\"pods\":\"1\"}")), &q), 0);
    assert_int_equal(adm_quantity_parse_str("100m", &cpu), 0);
    assert_int_equal(adm_quantity_parse_str("2", &pods), 0);
    assert_int_equal(adm_rlist_set(pt_arena, &q.used, "requests.cpu", &cpu), 0);
    assert_int_equal(adm_rlist_set(pt_arena, &q.used, "pods", &pods), 0);
    body = status_body(pt_arena, &q, &len);
    assert_non_null(body);
    assert_int_equal(len, strlen(body));
    assert_string_equal(body,
                        "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"q\","
                        "\"namespace\":\"ns\",\"resourceVersion\":\"7\",\"labels\":{\"a\":\"b\"}},"
                        "\"spec\":{\"hard\":{\"pods\":\"2\"}},\"status\":{\"hard\":{\"pods\":\"2\","
                        "\"requests.cpu\":\"1\"},\"used\":{\"pods\":\"2\",\"requests.cpu\":\"100m\"}}}");

    /* a quota read with kind and apiVersion (a watch event's) keeps one of each; no status at all */
    assert_int_equal(
        adm_quota_read(
            pt_arena,
            parse("{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"}}"), &q),
        0);
    assert_int_equal(adm_rlist_set(pt_arena, &q.used, "pods", &pods), 0);
    assert_string_equal(status_body(pt_arena, &q, &len), "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\","
                                                         "\"metadata\":{\"name\":\"q\"},\"status\":{\"used\":"
                                                         "{\"pods\":\"2\"}}}");
}

static adm_quota_reserver_t *reserver(void)
{
    adm_quota_reserver_t *r = adm_quota_reserver_create(NULL, NULL);

    assert_non_null(r);
    return r;
}

/* kube's checkCache: the written version while the cache is older, the cache's once it caught up. */
static void test_written_newest(void **state)
{
    adm_quota_reserver_t *r = reserver();
    yyjson_val *cached9 = parse(quota_json("q", "9", "{\"pods\":\"0\"}"));
    yyjson_val *cached11 = parse(quota_json("q", "11", "{\"pods\":\"0\"}"));
    yyjson_val *got;

    (void)state;
    assert_ptr_equal(newest(r, "ns", cached9, pt_arena), cached9); /* nothing written */
    remember_written(r, "ns", parse(quota_json("q", "10", "{\"pods\":\"1\"}")), pt_arena);
    got = newest(r, "ns", cached9, pt_arena);
    assert_ptr_not_equal(got, cached9);
    assert_string_equal(adm_json_str(adm_json_get(got, "metadata"), "resourceVersion"), "10");
    /* another namespace's quota of the same name is another quota */
    assert_ptr_equal(newest(r, "other", cached9, pt_arena), cached9);
    /* the cache caught up (or went past): it wins, and the written one is forgotten */
    assert_ptr_equal(newest(r, "ns", cached11, pt_arena), cached11);
    assert_null(find_written(r, "ns", "q"));
    assert_ptr_equal(newest(r, "ns", cached9, pt_arena), cached9);
    /* a write answered with the same resourceVersion as the cache: the cache's */
    remember_written(r, "ns", parse(quota_json("q", "11", "{\"pods\":\"1\"}")), pt_arena);
    assert_ptr_equal(newest(r, "ns", cached11, pt_arena), cached11);
    adm_quota_reserver_free(r);
}

/* At most ADM_QUOTA_WRITTEN_MAX written quotas: the least recently used one makes room. */
static void test_written_evicts_lru(void **state)
{
    adm_quota_reserver_t *r = reserver();
    char name[32];
    size_t count = 0;

    (void)state;
    for (int i = 0; i < ADM_QUOTA_WRITTEN_MAX; i++) {
        snprintf(name, sizeof(name), "q%d", i);
        remember_written(r, "ns", parse(quota_json(name, "5", "{}")), pt_arena);
    }
    assert_non_null(find_written(r, "ns", "q0")); /* q0 is now the most recent, q1 the least */
    remember_written(r, "ns", parse(quota_json("new", "5", "{}")), pt_arena);
    assert_null(find_written(r, "ns", "q1"));
    assert_non_null(find_written(r, "ns", "q0"));
    assert_non_null(find_written(r, "ns", "new"));
    /* writing a known one again replaces it in place */
    remember_written(r, "ns", parse(quota_json("new", "6", "{}")), pt_arena);
    assert_int_equal(find_written(r, "ns", "new")->rv, 6);
    for (size_t i = 0; i < ADM_QUOTA_WRITTEN_MAX; i++) {
        count += r->written[i].ns != NULL;
    }
    assert_int_equal(count, ADM_QUOTA_WRITTEN_MAX);
    adm_quota_reserver_free(r);
}

/* lastErr: the API server's Status as it is, Go's url.Error, client-go's words without a Status. */
static void test_set_error(void **state)
{
    adm_quota_reserver_t *r = reserver();
    batch_t b = {0};
    adm_call_result_t res = {0};
    adm_arena_t *req_arena = adm_arena_create(4096);
    adm_attrs_t attrs = {0};
    waiter_t w = {0};

    (void)state;
    b.arena = pt_arena;
    res.status = 409;
    set_error(
        r, &b, &res,
        parse("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
              "\"message\":\"Operation cannot be fulfilled on resourcequotas \\\"q\\\": the object has been "
              "modified; please apply your changes to the latest version and try again\",\"reason\":"
              "\"Conflict\",\"details\":{\"name\":\"q\",\"kind\":\"resourcequotas\"},\"code\":409}"),
        "Put", "/p");
    assert_int_equal(b.err.code, 409);
    assert_string_equal(b.err.reason, "Conflict");
    assert_string_equal(b.err.details, "{\"name\":\"q\",\"kind\":\"resourcequotas\"}");

    /* copied into the request's arena as its refusal */
    attrs.arena = req_arena;
    w.attrs = &attrs;
    decide_error(&w, &b.err);
    assert_int_equal(w.rc, ADM_DECLINED);
    assert_int_equal(w.st.code, 409);
    assert_string_equal(w.st.reason, "Conflict");
    assert_string_equal(w.st.message,
                        "Operation cannot be fulfilled on resourcequotas \"q\": the object has "
                        "been modified; please apply your changes to the latest version and try "
                        "again");
    assert_string_equal(adm_json_str(w.st.details, "kind"), "resourcequotas");
    assert_ptr_not_equal(w.st.message, b.err.message);

    res.error = ADM_CALL_TIMEOUT;
    set_error(r, &b, &res, NULL, "Put", "/api/v1/namespaces/ns/resourcequotas/q/status");
    assert_int_equal(b.err.code, 500);
    assert_null(b.err.reason);
    assert_string_equal(b.err.message,
                        "Put \"/api/v1/namespaces/ns/resourcequotas/q/status\": context deadline exceeded");
    res.error = ADM_CALL_CONNECT;
    res.detail = "dial tcp 127.0.0.1:1: connect: connection refused";
    set_error(r, &b, &res, NULL, "Get", "/x");
    assert_string_equal(b.err.message, "Get \"/x\": dial tcp 127.0.0.1:1: connect: connection refused");

    res.error = ADM_CALL_OK;
    res.status = 502;
    set_error(r, &b, &res, parse("{\"not\":\"a status\"}"), "Put", "/p");
    assert_int_equal(b.err.code, 502);
    assert_string_equal(b.err.message, "an error on the server (\"unknown\") has prevented the request from "
                                       "succeeding (status 502)");
    adm_arena_destroy(req_arena);
    adm_quota_reserver_free(r);
}

/* The namespace table: one entry per name, gone once idle. */
static void test_namespaces(void **state)
{
    adm_quota_reserver_t *r = reserver();
    ns_work_t *a, *b2, *again;
    waiter_t w = {0};

    (void)state;
    a = ns_get(r, "a");
    b2 = ns_get(r, "b");
    again = ns_get(r, "a");
    assert_ptr_equal(a, again);
    assert_ptr_not_equal(a, b2);
    wl_push(&a->queued, &w);
    ns_release_if_idle(r, a); /* still has a request queued */
    assert_ptr_equal(ns_get(r, "a"), a);
    wl_remove(&w);
    assert_null(a->queued.head);
    ns_release_if_idle(r, a);
    ns_release_if_idle(r, b2);
    for (size_t i = 0; i < NS_BUCKETS; i++) {
        assert_null(r->buckets[i]);
    }
    adm_quota_reserver_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rv_number),      cmocka_unit_test(test_url_name),
        cmocka_unit_test(test_quota_read),     cmocka_unit_test(test_status_body),
        cmocka_unit_test(test_written_newest), cmocka_unit_test(test_written_evicts_lru),
        cmocka_unit_test(test_set_error),      cmocka_unit_test(test_namespaces),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

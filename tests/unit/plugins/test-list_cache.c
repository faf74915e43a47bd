/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The live LIST cache (list_cache.h) without an API server: a List put is fresh until its TTL has
 * passed (kube's expiry.Before(now): fresh at the expiry itself), a namespace not put or expired
 * needs a LIST, a newer List replaces the older, the cache holds at most max namespaces and forgets
 * the least recently used (a hit counts as a use), a list a request read stays valid after the
 * cache forgot or replaced it until the request's arena goes (ASan checks), and a body that is no
 * List is refused. The LIST itself is the integration test's (test-live-lookup).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/plugins/list_cache.h"

#define ONE "{\"kind\":\"LimitRangeList\",\"items\":[{\"metadata\":{\"name\":\"one\"}}]}"
#define TWO                                                                                                  \
    "{\"kind\":\"LimitRangeList\",\"items\":[{\"metadata\":{\"name\":\"x\"}},{\"metadata\":{\"name\":\"y\"}" \
    "}]}"
#define NONE "{\"kind\":\"LimitRangeList\",\"items\":[]}"

static int put(adm_list_cache_t *c, const char *ns, const char *json, uint64_t now)
{
    return adm_list_cache_put(c, ns, json, strlen(json), now);
}

/* How many items ns has fresh at now, or -1 when a LIST is needed. */
static long fresh(adm_list_cache_t *c, adm_arena_t *a, const char *ns, uint64_t now)
{
    yyjson_val *const *items;
    size_t n;

    if (!adm_list_cache_fresh(c, a, ns, now, &items, &n)) {
        assert_null(items);
        assert_int_equal(n, 0);
        return -1;
    }
    return (long)n;
}

static void test_ttl(void **state)
{
    adm_list_cache_t *c = adm_list_cache_create("limitranges", 10, 30000);
    adm_arena_t *a = adm_arena_create(1024);

    (void)state;
    assert_non_null(c);
    assert_int_equal(fresh(c, a, "ns", 0), -1);
    assert_int_equal(put(c, "ns", ONE, 1000), 0);
    assert_int_equal(fresh(c, a, "ns", 1000), 1);
    assert_int_equal(fresh(c, a, "ns", 31000), 1);
    assert_int_equal(fresh(c, a, "ns", 31001), -1);
    assert_int_equal(fresh(c, a, "other", 1000), -1);
    /* a namespace with none is a fresh empty list, not a miss */
    assert_int_equal(put(c, "empty", NONE, 1000), 0);
    assert_int_equal(fresh(c, a, "empty", 2000), 0);
    /* a newer List replaces the older, with its own expiry */
    assert_int_equal(put(c, "ns", TWO, 40000), 0);
    assert_int_equal(fresh(c, a, "ns", 70000), 2);
    assert_int_equal(adm_list_cache_count(c), 2); /* ns and empty: a miss adds nothing */
    adm_arena_destroy(a);
    adm_list_cache_free(c);
}

static void test_capacity(void **state)
{
    adm_list_cache_t *c = adm_list_cache_create("limitranges", 2, 30000);
    adm_arena_t *a = adm_arena_create(1024);

    (void)state;
    assert_int_equal(put(c, "a", ONE, 0), 0);
    assert_int_equal(put(c, "b", ONE, 0), 0);
    assert_int_equal(fresh(c, a, "a", 0), 1); /* a is now the most recent */
    assert_int_equal(put(c, "c", TWO, 0), 0);
    assert_int_equal(adm_list_cache_count(c), 2);
    assert_int_equal(fresh(c, a, "b", 0), -1);
    assert_int_equal(fresh(c, a, "a", 0), 1);
    assert_int_equal(fresh(c, a, "c", 0), 2);
    for (int i = 0; i < 100; i++) {
        char ns[16];

        snprintf(ns, sizeof(ns), "ns-%d", i);
        assert_int_equal(put(c, ns, TWO, 0), 0);
        assert_int_equal(adm_list_cache_count(c), 2);
    }
    adm_arena_destroy(a);
    adm_list_cache_free(c);
}

static void test_pinned_outlives_cache(void **state)
{
    adm_list_cache_t *c = adm_list_cache_create("limitranges", 1, 30000);
    adm_arena_t *a = adm_arena_create(1024);
    yyjson_val *const *items;
    size_t n;

    (void)state;
    assert_int_equal(put(c, "a", ONE, 0), 0);
    assert_true(adm_list_cache_fresh(c, a, "a", 0, &items, &n));
    assert_int_equal(n, 1);
    assert_int_equal(put(c, "a", TWO, 0), 0); /* replaced */
    assert_int_equal(put(c, "b", TWO, 0), 0); /* and forgotten */
    assert_string_equal(adm_json_str(adm_json_get(items[0], "metadata"), "name"), "one");
    adm_list_cache_free(c);
    assert_string_equal(adm_json_str(adm_json_get(items[0], "metadata"), "name"), "one");
    adm_arena_destroy(a); /* the last holder: the list goes now */
}

static void test_not_a_list(void **state)
{
    adm_list_cache_t *c = adm_list_cache_create("resourcequotas", 4, 30000);
    adm_arena_t *a = adm_arena_create(1024);

    (void)state;
    assert_int_equal(put(c, "a", "not json", 0), ADM_EINVAL);
    assert_int_equal(put(c, "a", "{\"items\":{}}", 0), ADM_EINVAL);
    assert_int_equal(put(c, "a", "[]", 0), ADM_EINVAL);
    assert_int_equal(fresh(c, a, "a", 0), -1);
    assert_int_equal(put(c, "a", "{\"kind\":\"ResourceQuotaList\"}", 0), 0); /* items omitted: none */
    assert_int_equal(fresh(c, a, "a", 0), 0);
    adm_arena_destroy(a);
    adm_list_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ttl),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_pinned_outlives_cache),
        cmocka_unit_test(test_not_a_list),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

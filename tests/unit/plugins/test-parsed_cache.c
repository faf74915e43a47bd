/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parses of cluster-state objects kept across requests (include/adm/plugins/parsed_cache.h):
 * one parse per object and state, a new state (even at a freed one's address) parsed afresh,
 * errors kept, the least recently used leaving a full cache first, and entries held by requests
 * outliving their eviction and the cache (ASan and the leak checker see to the memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/parsed_cache.h"
#include "plugintest.h"

static int parses;

/* The parse: a copy of spec.value (never a pointer into the object), or ADM_EINVAL without one. */
static int parse_value(adm_arena_t *a, yyjson_val *obj, void **out)
{
    const char *v = adm_json_str(adm_json_get(obj, "spec"), "value");

    parses++;
    *out = adm_arena_strndup(a, v, strlen(v));
    if (*out == NULL) {
        return ADM_ENOMEM;
    }
    return *v == '\0' ? ADM_EINVAL : 0;
}

static adm_cluster_state_t *state_with(const char *values)
{
    char text[1024];
    int n = 0;

    /* one ConfigMap per character of values, named after its position, its value that character ('-': "") */
    for (size_t i = 0; values[i] != '\0'; i++) {
        char value[2] = {values[i] == '-' ? '\0' : values[i], '\0'};

        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%zu, namespace: ns}\n"
                      "spec: {value: \"%s\"}\n",
                      i, value);
    }
    return pt_load_cluster(text);
}

/* A request's attrs: its own arena, reading cs. */
static adm_attrs_t request(adm_arena_t *a, const adm_cluster_state_t *cs)
{
    adm_attrs_t attrs;

    memset(&attrs, 0, sizeof(attrs));
    attrs.arena = a;
    attrs.cluster = cs;
    return attrs;
}

static yyjson_val *object(const adm_cluster_state_t *cs, size_t i)
{
    char name[16];

    snprintf(name, sizeof(name), "c%zu", i);
    return adm_cluster_state_get(cs, "", "ConfigMap", "ns", name);
}

static const char *get(adm_parsed_cache_t *c, adm_attrs_t *attrs, yyjson_val *obj, int want)
{
    const void *v = NULL;

    assert_int_equal(adm_parsed_cache_get(c, attrs, obj, &v), want);
    assert_non_null(v);
    return v;
}

static void test_once_per_object(void **state)
{
    adm_parsed_cache_t *c = adm_parsed_cache_create(parse_value, 8);
    adm_cluster_state_t *cs = state_with("ab");
    adm_arena_t *a = adm_arena_create(1024);
    adm_attrs_t r1, r2;
    const char *v;

    (void)state;
    assert_non_null(c);
    assert_non_null(a);
    parses = 0;
    r1 = request(a, cs);
    v = get(c, &r1, object(cs, 0), 0);
    assert_string_equal(v, "a");
    assert_string_equal(get(c, &r1, object(cs, 1), 0), "b");
    assert_int_equal(parses, 2);
    adm_arena_reset(a);
    /* the next request: the same parses, not made again */
    r2 = request(a, cs);
    assert_ptr_equal(get(c, &r2, object(cs, 0), 0), v);
    assert_string_equal(get(c, &r2, object(cs, 1), 0), "b");
    assert_int_equal(parses, 2);
    adm_arena_destroy(a);
    adm_parsed_cache_free(c);
    adm_cluster_state_free(cs);
}

static void test_new_state_parsed_again(void **state)
{
    adm_parsed_cache_t *c = adm_parsed_cache_create(parse_value, 8);
    adm_arena_t *a = adm_arena_create(1024);

    (void)state;
    parses = 0;
    /* states loaded one after another, each freed first: the same addresses may come back */
    for (char v = 'a'; v <= 'e'; v++) {
        char values[2] = {v, '\0'};
        adm_cluster_state_t *cs = state_with(values);
        adm_attrs_t r = request(a, cs);

        assert_string_equal(get(c, &r, object(cs, 0), 0), values);
        adm_arena_reset(a);
        adm_cluster_state_free(cs);
    }
    assert_int_equal(parses, 5);
    adm_arena_destroy(a);
    adm_parsed_cache_free(c);
}

static void test_errors_kept(void **state)
{
    adm_parsed_cache_t *c = adm_parsed_cache_create(parse_value, 8);
    adm_cluster_state_t *cs = state_with("-");
    adm_arena_t *a = adm_arena_create(1024);
    adm_attrs_t r = request(a, cs);

    (void)state;
    parses = 0;
    get(c, &r, object(cs, 0), ADM_EINVAL);
    get(c, &r, object(cs, 0), ADM_EINVAL);
    assert_int_equal(parses, 1);
    adm_arena_destroy(a);
    adm_parsed_cache_free(c);
    adm_cluster_state_free(cs);
}

static void test_held_entries_outlive_eviction_and_cache(void **state)
{
    adm_parsed_cache_t *c = adm_parsed_cache_create(parse_value, 1);
    adm_cluster_state_t *cs = state_with("ab");
    adm_arena_t *a1 = adm_arena_create(1024), *a2 = adm_arena_create(1024);
    adm_attrs_t r1 = request(a1, cs), r2 = request(a2, cs);
    const char *v1, *v2;

    (void)state;
    parses = 0;
    v1 = get(c, &r1, object(cs, 0), 0);
    /* room for one: the second object evicts the first, which the first request still reads */
    v2 = get(c, &r2, object(cs, 1), 0);
    assert_string_equal(v1, "a");
    assert_string_equal(v2, "b");
    assert_string_equal(get(c, &r2, object(cs, 0), 0), "a");
    assert_int_equal(parses, 3);
    adm_arena_reset(a1); /* frees the evicted first parse */
    /* the cache goes (a reload's old chain) while the second request holds both of its parses */
    adm_parsed_cache_free(c);
    assert_string_equal(v2, "b");
    adm_arena_destroy(a2);
    adm_arena_destroy(a1);
    adm_cluster_state_free(cs);
}

/* The least recently given out leaves first, and a full cache keeps working as objects come and go. */
static void test_least_recent_leaves(void **state)
{
    adm_parsed_cache_t *c = adm_parsed_cache_create(parse_value, 2);
    adm_cluster_state_t *cs = state_with("abcdefgh");
    adm_arena_t *a = adm_arena_create(1024);
    adm_attrs_t r = request(a, cs);

    (void)state;
    parses = 0;
    get(c, &r, object(cs, 0), 0);
    get(c, &r, object(cs, 1), 0);
    get(c, &r, object(cs, 0), 0); /* a is the most recent now */
    get(c, &r, object(cs, 2), 0); /* so b leaves */
    assert_int_equal(parses, 3);
    get(c, &r, object(cs, 0), 0);
    assert_int_equal(parses, 3);
    get(c, &r, object(cs, 1), 0);
    assert_int_equal(parses, 4);
    /* eight objects through two places, twice over: past a and b (cached now), each parsed again */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 8; i++) {
            char want[2] = {(char)('a' + i), '\0'};

            assert_string_equal(get(c, &r, object(cs, i), 0), want);
        }
    }
    assert_int_equal(parses, 4 + 6 + 8);
    adm_arena_destroy(a);
    adm_parsed_cache_free(c);
    adm_cluster_state_free(cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_once_per_object),
        cmocka_unit_test(test_new_state_parsed_again),
        cmocka_unit_test(test_errors_kept),
        cmocka_unit_test(test_held_entries_outlive_eviction_and_cache),
        cmocka_unit_test(test_least_recent_leaves),
    };

    return cmocka_run_group_tests(tests, pt_group_setup, pt_group_teardown);
}

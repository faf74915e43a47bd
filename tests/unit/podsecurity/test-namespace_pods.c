/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EvaluatePodsInNamespace fed page by page: kube's order and limit (pods without a controller and
 * each controller's first pod, then the others, the first 3000 checked) whatever the page size,
 * a later primary pushing out a duplicate an earlier page brought; exempt runtime classes left out
 * of the count; remainingItemCount ending the list once kube's first 3000 are known; the time
 * limit stopping the evaluation where kube's stops on the last page, and failing the list before.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/admission/admission.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/podsecurity/namespace_pods.h"

static adm_arena_t *arena;
static uint64_t ticks; /* the fake clock: one tick per reading */

static uint64_t fake_now(void *arg)
{
    (void)arg;
    return ++ticks;
}

static const adm_psa_lv_t baseline = {ADM_PSA_BASELINE, {true, 0}};

/* One kind of pod in a generated list. */
typedef struct run_s {
    const char *prefix; /* names prefix-0000, prefix-0001 ... */
    int count;
    const char *controller; /* the controller's UID, or NULL */
    const char *spec;       /* the pod's spec */
    const char *runtime;    /* spec.runtimeClassName, or NULL */
} run_t;

#define PRIVILEGED "{\"containers\":[{\"name\":\"c\",\"securityContext\":{\"privileged\":true}}]"
#define HOST_NET "{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\"}]"
#define PLAIN "{\"containers\":[{\"name\":\"c\"}]"

/* The pods of the runs, in order, parsed into the arena; *n set to their number. */
static yyjson_val **pods_of(const run_t *runs, size_t nruns, size_t *n)
{
    size_t cap = 4 << 20, len = 0, total = 0;
    char *text = malloc(cap);
    yyjson_read_err err;
    yyjson_doc *doc;
    yyjson_val **out;

    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "[");
    for (size_t r = 0; r < nruns; r++) {
        for (int i = 0; i < runs[r].count; i++) {
            char owner[160] = "", runtime[64] = "";

            if (runs[r].controller != NULL) {
                snprintf(owner, sizeof(owner),
                         ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"%s\","
                         "\"controller\":true}]",
                         runs[r].controller);
            }
            if (runs[r].runtime != NULL) {
                snprintf(runtime, sizeof(runtime), ",\"runtimeClassName\":\"%s\"", runs[r].runtime);
            }
            assert_true(cap - len > 1024);
            len += (size_t)snprintf(text + len, cap - len,
                                    "%s{\"metadata\":{\"name\":\"%s-%04d\"%s},\"spec\":%s%s}}",
                                    total++ > 0 ? "," : "", runs[r].prefix, i, owner, runs[r].spec, runtime);
        }
    }
    len += (size_t)snprintf(text + len, cap - len, "]");
    doc = adm_json_read(arena, text, len, &err);
    free(text);
    assert_non_null(doc);
    *n = yyjson_arr_size(yyjson_doc_get_root(doc));
    out = adm_arena_calloc(arena, *n + 1, sizeof(*out));
    for (size_t i = 0; i < *n; i++) {
        out[i] = yyjson_arr_get(yyjson_doc_get_root(doc), i);
    }
    return out;
}

/*
 * The warnings for pods taken page pods at a time (0: all in one page), joined by newlines, into
 * out; the last adm_psa_pods_add answer is returned.
 */
static int tally(const adm_psa_config_t *cfg, yyjson_val **pods, size_t n, size_t page, char *out,
                 size_t out_len, uint64_t deadline_ticks)
{
    static adm_review_request_t req;
    adm_attrs_t attrs;
    adm_psa_pods_t *t;
    adm_arena_t *scratch = adm_arena_create(4096);
    size_t len = 0, at = 0;
    int rc;

    ticks = 0;
    adm_attrs_init(&attrs, &req, arena);
    t = adm_psa_pods_start(arena, cfg, &baseline, fake_now, NULL, deadline_ticks);
    assert_non_null(t);
    if (page == 0) {
        page = n;
    }
    do {
        size_t k = n - at < page ? n - at : page;

        rc = adm_psa_pods_add(t, scratch, pods + at, k, at + k < n, -1);
        adm_arena_reset(scratch);
        at += k;
    } while (rc == ADM_PSA_PODS_MORE);
    adm_arena_destroy(scratch);
    out[0] = '\0';
    if (rc != ADM_PSA_PODS_DONE) {
        return rc;
    }
    assert_true(adm_psa_pods_warn(t, &attrs, "ns") >= 0);
    for (size_t i = 0; i < attrs.nwarnings; i++) {
        len += (size_t)snprintf(out + len, out_len - len, "%s%s", i > 0 ? "\n" : "", attrs.warnings[i]);
    }
    return rc;
}

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(1 << 20);
    return arena != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    adm_arena_destroy(arena);
    return 0;
}

/*
 * 2000 pods of one ReplicaSet, then 2500 without a controller: kube checks the ReplicaSet's first
 * pod, the 2500, and the ReplicaSet's next 499. In pages, the 2500 arrive after the ReplicaSet's
 * duplicates were taken and push all but 499 of them out, so every page size gives kube's words.
 */
static void test_order_and_limit_whatever_the_pages(void **state)
{
    static const run_t runs[] = {{"c", 2000, "rs-1", HOST_NET, NULL}, {"u", 2500, NULL, PRIVILEGED, NULL}};
    static const size_t pages[] = {0, 500, 7, 1, 2999, 3001};
    static const char want[] =
        "new PodSecurity enforce level only checked against the first 3000 of 4500 existing pods\n"
        "existing pods in namespace \"ns\" violate the new PodSecurity enforce level \"baseline:latest\"\n"
        "c-0000 (and 499 other pods): host namespaces\n"
        "u-0000 (and 2499 other pods): privileged";
    adm_psa_config_t cfg = {0};
    static char got[4096];
    size_t n;
    yyjson_val **pods;

    (void)state;
    adm_arena_reset(arena);
    pods = pods_of(runs, 2, &n);
    assert_int_equal(n, 4500);
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        assert_int_equal(tally(&cfg, pods, n, pages[i], got, sizeof(got), UINT64_MAX), ADM_PSA_PODS_DONE);
        if (strcmp(got, want) != 0) {
            fail_msg("pages of %zu:\n%s", pages[i], got);
        }
    }
}

/* Each controller's first pod comes before the others' duplicates; passing pods only count. */
static void test_groups(void **state)
{
    static const run_t runs[] = {{"a", 3, "rs-a", HOST_NET, NULL},
                                 {"b", 2, "rs-b", PRIVILEGED, NULL},
                                 {"ok", 4, NULL, PLAIN, NULL},
                                 {"solo", 1, NULL, HOST_NET, NULL}};
    static const char want[] =
        "existing pods in namespace \"ns\" violate the new PodSecurity enforce level \"baseline:latest\"\n"
        "a-0000 (and 3 other pods): host namespaces\n"
        "b-0000 (and 1 other pod): privileged";
    adm_psa_config_t cfg = {0};
    static char got[4096];
    size_t n;
    yyjson_val **pods;

    (void)state;
    adm_arena_reset(arena);
    pods = pods_of(runs, 4, &n);
    for (size_t page = 0; page <= 3; page++) {
        assert_int_equal(tally(&cfg, pods, n, page, got, sizeof(got), UINT64_MAX), ADM_PSA_PODS_DONE);
        assert_string_equal(got, want);
    }
    /* no pods: nothing to say */
    assert_int_equal(tally(&cfg, pods, 0, 0, got, sizeof(got), UINT64_MAX), ADM_PSA_PODS_DONE);
    assert_string_equal(got, "");
}

/* Pods of an exempt runtime class are neither checked nor counted. */
static void test_exempt_runtime_class(void **state)
{
    static const run_t runs[] = {{"kata", 2, NULL, PRIVILEGED, "kata"}, {"u", 1, NULL, PRIVILEGED, "runc"}};
    static const char *classes[] = {"kata"};
    adm_psa_config_t cfg = {0};
    static char got[4096];
    size_t n;
    yyjson_val **pods;

    (void)state;
    cfg.runtime_classes = classes;
    cfg.nruntime_classes = 1;
    adm_arena_reset(arena);
    pods = pods_of(runs, 2, &n);
    assert_int_equal(tally(&cfg, pods, n, 1, got, sizeof(got), UINT64_MAX), ADM_PSA_PODS_DONE);
    assert_string_equal(got, "existing pods in namespace \"ns\" violate the new PodSecurity enforce level "
                             "\"baseline:latest\"\nu-0000: privileged");
}

/*
 * Once kube's first 3000 are known, remainingItemCount completes the count and no page follows;
 * not when a runtime class is exempt (the rest might be of it), nor when it is unknown.
 */
static void test_remaining_ends_the_list(void **state)
{
    static const run_t runs[] = {{"u", 3001, NULL, PRIVILEGED, NULL}};
    static const char *classes[] = {"kata"};
    static adm_review_request_t req;
    adm_psa_config_t cfg = {0};
    adm_attrs_t attrs;
    adm_psa_pods_t *t;
    size_t n;
    yyjson_val **pods;

    (void)state;
    adm_arena_reset(arena);
    pods = pods_of(runs, 1, &n);
    adm_attrs_init(&attrs, &req, arena);
    t = adm_psa_pods_start(arena, &cfg, &baseline, fake_now, NULL, UINT64_MAX);
    assert_int_equal(adm_psa_pods_add(t, arena, pods, 2999, true, 1000), ADM_PSA_PODS_MORE);
    assert_int_equal(adm_psa_pods_add(t, arena, pods + 2999, 2, true, 10), ADM_PSA_PODS_DONE);
    assert_int_equal(adm_psa_pods_warn(t, &attrs, "ns"), 3);
    assert_string_equal(
        attrs.warnings[0],
        "new PodSecurity enforce level only checked against the first 3000 of 3011 existing pods");
    assert_string_equal(attrs.warnings[2], "u-0000 (and 2999 other pods): privileged");

    t = adm_psa_pods_start(arena, &cfg, &baseline, fake_now, NULL, UINT64_MAX);
    assert_int_equal(adm_psa_pods_add(t, arena, pods, n, true, -1), ADM_PSA_PODS_MORE);
    cfg.runtime_classes = classes;
    cfg.nruntime_classes = 1;
    t = adm_psa_pods_start(arena, &cfg, &baseline, fake_now, NULL, UINT64_MAX);
    assert_int_equal(adm_psa_pods_add(t, arena, pods, n, true, 10), ADM_PSA_PODS_MORE);
}

/*
 * The time limit: on the last page the evaluation stops after the pod that reached it, and the
 * warnings say how many were checked (kube's checkedPods = i+1); with pages left the list fails.
 */
static void test_time_limit(void **state)
{
    static const run_t runs[] = {{"u", 5, NULL, PRIVILEGED, NULL}};
    adm_psa_config_t cfg = {0};
    static char got[4096];
    size_t n;
    yyjson_val **pods;

    (void)state;
    adm_arena_reset(arena);
    pods = pods_of(runs, 1, &n);
    /* tick 1 is the start; the clock reads 2, 3, 4 after the first three pods */
    assert_int_equal(tally(&cfg, pods, n, 0, got, sizeof(got), 4), ADM_PSA_PODS_DONE);
    assert_string_equal(got,
                        "new PodSecurity enforce level only checked against the first 3 of 5 existing pods\n"
                        "existing pods in namespace \"ns\" violate the new PodSecurity enforce level "
                        "\"baseline:latest\"\nu-0000 (and 2 other pods): privileged");
    assert_int_equal(tally(&cfg, pods, n, 3, got, sizeof(got), 4), -ETIMEDOUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_limit_whatever_the_pages),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_exempt_runtime_class),
        cmocka_unit_test(test_remaining_ends_the_list),
        cmocka_unit_test(test_time_limit),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

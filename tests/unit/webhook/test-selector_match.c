/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adm_selector_matches against k8s.io/apimachinery labels semantics: In, NotIn (true on an absent
 * key), Exists, DoesNotExist, matchLabels as single-value In, ANDing, everything, and objects
 * without labels. Selectors are built by hand; parsing is another module's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/webhook/selector.h"

static const char *v_prod[] = {"prod"};
static const char *v_prod_stage[] = {"prod", "staging"};
static const char *v_none[] = {NULL};

static adm_selector_req_t r_env_in_prod[] = {{"env", ADM_SEL_IN, v_prod, 1}};
static adm_selector_req_t r_env_in_two[] = {{"env", ADM_SEL_IN, v_prod_stage, 2}};
static adm_selector_req_t r_env_notin_prod[] = {{"env", ADM_SEL_NOT_IN, v_prod, 1}};
static adm_selector_req_t r_env_exists[] = {{"env", ADM_SEL_EXISTS, v_none, 0}};
static adm_selector_req_t r_env_dne[] = {{"env", ADM_SEL_DOES_NOT_EXIST, v_none, 0}};
static adm_selector_req_t r_and[] = {
    {"env", ADM_SEL_IN, v_prod, 1},
    {"tier", ADM_SEL_EXISTS, v_none, 0},
    {"skip", ADM_SEL_DOES_NOT_EXIST, v_none, 0},
};

typedef struct tcase_s {
    const char *name;
    adm_selector_t sel;
    const char *labels; /* JSON object text, or NULL for an object without labels */
    bool want;
} tcase_t;

#define SEL(reqs)                                                                                            \
    {                                                                                                        \
        false, reqs, sizeof(reqs) / sizeof(reqs[0])                                                          \
    }

static const tcase_t cases[] = {
    {"everything, no labels", {true, NULL, 0}, NULL, true},
    {"everything, any labels", {true, NULL, 0}, "{\"a\":\"b\"}", true},
    {"nothing (zeroed) never matches", {false, NULL, 0}, "{\"a\":\"b\"}", false},
    {"nothing (zeroed), no labels", {false, NULL, 0}, NULL, false},
    {"In: equal value", SEL(r_env_in_prod), "{\"env\":\"prod\"}", true},
    {"In: other value", SEL(r_env_in_prod), "{\"env\":\"dev\"}", false},
    {"In: key absent", SEL(r_env_in_prod), "{\"team\":\"prod\"}", false},
    {"In: no labels", SEL(r_env_in_prod), NULL, false},
    {"In: empty labels", SEL(r_env_in_prod), "{}", false},
    {"In: second of two values", SEL(r_env_in_two), "{\"env\":\"staging\"}", true},
    {"In: value is case-sensitive", SEL(r_env_in_prod), "{\"env\":\"Prod\"}", false},
    {"In: prefix is not equal", SEL(r_env_in_prod), "{\"env\":\"prod2\"}", false},
    {"NotIn: key absent matches", SEL(r_env_notin_prod), "{\"team\":\"x\"}", true},
    {"NotIn: no labels matches", SEL(r_env_notin_prod), NULL, true},
    {"NotIn: listed value", SEL(r_env_notin_prod), "{\"env\":\"prod\"}", false},
    {"NotIn: other value", SEL(r_env_notin_prod), "{\"env\":\"dev\"}", true},
    {"Exists: present", SEL(r_env_exists), "{\"env\":\"\"}", true},
    {"Exists: absent", SEL(r_env_exists), "{\"other\":\"env\"}", false},
    {"Exists: no labels", SEL(r_env_exists), NULL, false},
    {"DoesNotExist: absent", SEL(r_env_dne), "{\"other\":\"1\"}", true},
    {"DoesNotExist: no labels", SEL(r_env_dne), NULL, true},
    {"DoesNotExist: present", SEL(r_env_dne), "{\"env\":\"x\"}", false},
    {"AND: all hold", SEL(r_and), "{\"env\":\"prod\",\"tier\":\"web\"}", true},
    {"AND: one In fails", SEL(r_and), "{\"env\":\"dev\",\"tier\":\"web\"}", false},
    {"AND: Exists fails", SEL(r_and), "{\"env\":\"prod\"}", false},
    {"AND: DoesNotExist fails", SEL(r_and), "{\"env\":\"prod\",\"tier\":\"web\",\"skip\":\"1\"}", false},
    {"non-string value counts as absent (In)", SEL(r_env_in_prod), "{\"env\":1}", false},
    {"non-string value counts as absent (NotIn)", SEL(r_env_notin_prod), "{\"env\":true}", true},
    {"labels not an object: no labels", SEL(r_env_dne), "[\"env\"]", true},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const tcase_t *c = &cases[i];
        yyjson_doc *doc = NULL;
        yyjson_val *labels = NULL;
        bool got;

        if (c->labels != NULL) {
            doc = yyjson_read(c->labels, strlen(c->labels), 0);
            assert_non_null(doc);
            labels = yyjson_doc_get_root(doc);
        }
        got = adm_selector_matches(&c->sel, labels);
        yyjson_doc_free(doc);
        if (got != c->want) {
            fail_msg("case \"%s\": got %d, want %d", c->name, got, c->want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adm_selector_parse: the accepted forms (absent, {}, matchLabels as In requirements, every
 * operator) and each validation rule of kube's ValidateLabelSelector with its message.
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
#include "adm/base/yaml.h"
#include "adm/webhook/selector.h"

static adm_arena_t *arena;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

/*
 * Parses yaml (NULL: the selector is absent) as the value of a member, as a selector appears in a
 * webhook (text starting with "{" would be read as JSON), and returns adm_selector_parse's result.
 */
static int parse(const char *yaml, adm_selector_t *out, const char **problem)
{
    yyjson_val **docs = NULL;
    size_t n = 0, used = 0;
    char err[256];
    char *text;

    adm_arena_reset(arena);
    if (yaml == NULL) {
        return adm_selector_parse(arena, NULL, out, problem);
    }
    text = adm_arena_alloc(arena, strlen(yaml) * 3 + 16);
    used = (size_t)snprintf(text, 16, "sel:\n  ");
    for (const char *p = yaml; *p != '\0'; p++) {
        text[used++] = *p;
        if (*p == '\n') {
            text[used++] = ' ';
            text[used++] = ' ';
        }
    }
    text[used] = '\0';
    if (adm_yaml_parse(arena, text, used, &docs, &n, err, sizeof(err)) != 0 || n != 1) {
        fail_msg("test YAML did not parse: %s: %s", err, text);
    }
    return adm_selector_parse(arena, yyjson_obj_get(docs[0], "sel"), out, problem);
}

static void test_everything_forms(void **state)
{
    static const char *const forms[] = {NULL, "{}", "null", "{matchLabels: {}, matchExpressions: []}",
                                        "{matchLabels: null}"};

    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        adm_selector_t s;
        const char *problem = "x";

        assert_int_equal(parse(forms[i], &s, &problem), 0);
        assert_true(s.everything);
        assert_int_equal(s.nreqs, 0);
        assert_null(problem);
    }
}

static void test_match_labels_become_in(void **state)
{
    adm_selector_t s;
    const char *problem;

    assert_int_equal(parse("{matchLabels: {app: web, example.com/tier: \"\"}}", &s, &problem), 0);
    assert_false(s.everything);
    assert_int_equal(s.nreqs, 2);
    assert_string_equal(s.reqs[0].key, "app");
    assert_int_equal(s.reqs[0].op, ADM_SEL_IN);
    assert_int_equal(s.reqs[0].nvalues, 1);
    assert_string_equal(s.reqs[0].values[0], "web");
    assert_string_equal(s.reqs[1].key, "example.com/tier");
    assert_string_equal(s.reqs[1].values[0], "");
}

static void test_expressions(void **state)
{
    adm_selector_t s;
    const char *problem;

    assert_int_equal(parse("matchLabels: {a: b}\n"
                           "matchExpressions:\n"
                           "- {key: env, operator: In, values: [prod, staging]}\n"
                           "- {key: env2, operator: NotIn, values: [dev]}\n"
                           "- {key: skip, operator: DoesNotExist}\n"
                           "- {key: team, operator: Exists, values: []}\n",
                           &s, &problem),
                     0);
    assert_false(s.everything);
    assert_int_equal(s.nreqs, 5);
    assert_string_equal(s.reqs[0].key, "a");
    assert_string_equal(s.reqs[1].key, "env");
    assert_int_equal(s.reqs[1].op, ADM_SEL_IN);
    assert_int_equal(s.reqs[1].nvalues, 2);
    assert_string_equal(s.reqs[1].values[0], "prod");
    assert_string_equal(s.reqs[1].values[1], "staging");
    assert_int_equal(s.reqs[2].op, ADM_SEL_NOT_IN);
    assert_string_equal(s.reqs[2].values[0], "dev");
    assert_int_equal(s.reqs[3].op, ADM_SEL_DOES_NOT_EXIST);
    assert_int_equal(s.reqs[3].nvalues, 0);
    assert_int_equal(s.reqs[4].op, ADM_SEL_EXISTS);
    assert_string_equal(s.reqs[4].key, "team");
    assert_int_equal(s.reqs[4].nvalues, 0);
}

static const struct {
    const char *yaml;
    const char *problem;
} errors[] = {
    {"[]", "must be an object"},
    {"\"x\"", "must be an object"},
    {"{matchLabel: {a: b}}", "unknown field \"matchLabel\""},
    {"{matchLabels: [a]}", "matchLabels: must be an object"},
    {"{matchExpressions: {}}", "matchExpressions: must be an array"},
    {"{matchExpressions: [x]}", "matchExpressions[0]: must be an object"},
    {"{matchExpressions: [{key: a, operator: In, value: [b]}]}",
     "matchExpressions[0]: unknown field \"value\""},
    {"{matchExpressions: [{key: a, operator: In, values: [b], key: c}]}",
     "matchExpressions[0]: duplicate field \"key\""},
    {"{matchExpressions: [{key: a, operator: In}]}",
     "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
    {"{matchExpressions: [{key: a, operator: NotIn, values: []}]}",
     "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
    {"{matchExpressions: [{key: a, operator: Exists, values: [b]}]}",
     "matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
     "'DoesNotExist'"},
    {"{matchExpressions: [{key: a, operator: DoesNotExist, values: [b]}]}",
     "matchExpressions[0].values: Forbidden: may not be specified"},
    {"{matchExpressions: [{key: a, operator: in, values: [b]}]}",
     "matchExpressions[0].operator: Invalid value: \"in\": not a valid selector operator"},
    {"{matchExpressions: [{key: a, values: [b]}]}",
     "matchExpressions[0].operator: Invalid value: \"\": not a valid selector operator"},
    {"{matchExpressions: [{key: a, operator: 1, values: [b]}]}",
     "matchExpressions[0].operator: must be a string"},
    {"{matchExpressions: [{operator: Exists}]}",
     "matchExpressions[0].key: Invalid value: \"\": name part must be non-empty"},
    {"{matchExpressions: [{key: -a, operator: Exists}]}",
     "matchExpressions[0].key: Invalid value: \"-a\": name part must consist of alphanumeric characters"},
    {"{matchExpressions: [{key: Bad_Prefix/a, operator: Exists}]}",
     "matchExpressions[0].key: Invalid value: \"Bad_Prefix/a\": prefix part a lowercase RFC 1123 subdomain"},
    {"{matchExpressions: [{key: /a, operator: Exists}]}", "prefix part must be non-empty"},
    {"{matchExpressions: [{key: a/b/c, operator: Exists}]}", "a qualified name must consist of"},
    {"{matchExpressions: [{key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, operator: "
     "Exists}]}",
     "name part must be no more than 63 characters"},
    {"{matchExpressions: [{key: [a], operator: Exists}]}", "matchExpressions[0].key: must be a string"},
    {"{matchExpressions: [{key: a, operator: In, values: b}]}",
     "matchExpressions[0].values: must be an array of strings"},
    {"{matchExpressions: [{key: a, operator: In, values: [ok, 3]}]}",
     "matchExpressions[0].values[1]: must be a string"},
    {"{matchExpressions: [{key: a, operator: In, values: [ok, \"bad value\"]}]}",
     "matchExpressions[0].values[1]: Invalid value: \"bad value\": a valid label must be an empty string or "
     "consist"},
    {"{matchExpressions: [{key: a, operator: In, values: "
     "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]}]}",
     "must be no more than 63 characters"},
    {"{matchLabels: {\"bad key\": x}}", "matchLabels: Invalid value: \"bad key\": name part must consist of"},
    {"{matchLabels: {a: \"-x\"}}",
     "matchLabels: Invalid value: \"-x\": a valid label must be an empty string"},
    {"{matchLabels: {a: true}}", "matchLabels.a: must be a string"},
    {"{matchLabels: {a: x, a: y}}", "matchLabels: duplicate key \"a\""},
};

static void test_errors(void **state)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
        adm_selector_t s;
        const char *problem = NULL;
        int rc = parse(errors[i].yaml, &s, &problem);

        if (rc != ADM_EINVAL || problem == NULL || strstr(problem, errors[i].problem) == NULL) {
            fail_msg("case %zu %s: rc %d, problem \"%s\", want \"%s\"", i, errors[i].yaml, rc,
                     problem != NULL ? problem : "(null)", errors[i].problem);
        }
        if (strchr(problem, '\n') != NULL) {
            fail_msg("case %zu: problem is not one line: %s", i, problem);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_everything_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match_labels_become_in, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expressions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metav1.LabelSelector parsing with kube's validation (ValidateLabelSelector without
 * AllowInvalidLabelValueInSelector, as on create). Matching lives in its own file.
 */
#include "adm/webhook/selector.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LABEL_VALUE_MAX 63

static const char label_value_msg[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
static const char name_part_msg[] =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
static const char prefix_part_msg[] =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The name-part grammar is shared by label keys (after the prefix) and label values. */
static bool is_name_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

/* kube's IsValidLabelValue, first message only. */
static const char *label_value_problem(const char *s, size_t n)
{
    if (n > LABEL_VALUE_MAX) {
        return "must be no more than 63 characters";
    }
    if (n > 0 && !is_name_part(s, n)) {
        return label_value_msg;
    }
    return NULL;
}

/* kube's IsQualifiedName, first message only; the accepted set is adm_is_qualified_name's. */
static const char *qualified_name_problem(const char *s, size_t n)
{
    const char *slash = memchr(s, '/', n);
    const char *name = s;
    size_t name_len = n;

    if (slash != NULL) {
        size_t prefix_len = (size_t)(slash - s);

        name = slash + 1;
        name_len = n - prefix_len - 1;
        if (memchr(name, '/', name_len) != NULL) {
            return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
                   "start "
                   "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                   "regex "
                   "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                   "subdomain prefix and '/' (e.g. 'example.com/MyName')";
        }
        if (prefix_len == 0) {
            return "prefix part must be non-empty";
        }
        if (prefix_len > 253) {
            return "prefix part must be no more than 253 characters";
        }
        if (!adm_is_dns1123_subdomain(s, prefix_len)) {
            return prefix_part_msg;
        }
    }
    if (name_len == 0) {
        return "name part must be non-empty";
    }
    if (name_len > 63) {
        return "name part must be no more than 63 characters";
    }
    if (!is_name_part(name, name_len)) {
        return name_part_msg;
    }
    return NULL;
}

typedef struct ctx_s {
    adm_arena_t *a;
    const char **problem;
} ctx_t;

static int fail(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ctx_t *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    *c->problem = adm_arena_vprintf(c->a, fmt, ap);
    va_end(ap);
    return *c->problem != NULL ? ADM_EINVAL : ADM_ENOMEM;
}

/* Strict decoding: only known members, each once. where is "" or "matchExpressions[i]: ". */
static int check_members(ctx_t *c, yyjson_val *obj, const char *const *known, const char *where)
{
    bool duplicate;
    const char *k = adm_json_check_members(obj, known, &duplicate);

    return k == NULL ? 0 : fail(c, "%s%s field \"%s\"", where, duplicate ? "duplicate" : "unknown", k);
}

static bool absent(yyjson_val *v)
{
    return v == NULL || yyjson_is_null(v);
}

static int parse_match_labels(ctx_t *c, yyjson_val *labels, adm_selector_req_t *reqs, size_t *nreqs)
{
    yyjson_obj_iter it;
    yyjson_val *key;

    yyjson_obj_iter_init(labels, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        yyjson_val *val = yyjson_obj_iter_get_val(key);
        const char *msg;
        adm_selector_req_t *r = &reqs[*nreqs];

        for (size_t j = 0; j < *nreqs; j++) {
            if (strcmp(reqs[j].key, yyjson_get_str(key)) == 0) {
                return fail(c, "matchLabels: duplicate key %s", adm_json_text(c->a, key));
            }
        }
        msg = qualified_name_problem(yyjson_get_str(key), yyjson_get_len(key));
        if (msg != NULL) {
            return fail(c, "matchLabels: Invalid value: %s: %s", adm_json_text(c->a, key), msg);
        }
        if (!yyjson_is_str(val)) {
            return fail(c, "matchLabels.%s: must be a string", yyjson_get_str(key));
        }
        msg = label_value_problem(yyjson_get_str(val), yyjson_get_len(val));
        if (msg != NULL) {
            return fail(c, "matchLabels: Invalid value: %s: %s", adm_json_text(c->a, val), msg);
        }
        r->key = yyjson_get_str(key);
        r->op = ADM_SEL_IN;
        r->values = adm_arena_alloc(c->a, sizeof(*r->values));
        if (r->values == NULL) {
            return ADM_ENOMEM;
        }
        r->values[0] = yyjson_get_str(val);
        r->nvalues = 1;
        (*nreqs)++;
    }
    return 0;
}

static int parse_operator(ctx_t *c, size_t i, yyjson_val *op, adm_selector_op_t *out)
{
    static const struct {
        const char *name;
        adm_selector_op_t op;
    } ops[] = {{"In", ADM_SEL_IN},
               {"NotIn", ADM_SEL_NOT_IN},
               {"Exists", ADM_SEL_EXISTS},
               {"DoesNotExist", ADM_SEL_DOES_NOT_EXIST}};

    if (!absent(op) && !yyjson_is_str(op)) {
        return fail(c, "matchExpressions[%zu].operator: must be a string", i);
    }
    for (size_t k = 0; yyjson_is_str(op) && k < sizeof(ops) / sizeof(ops[0]); k++) {
        if (strcmp(ops[k].name, yyjson_get_str(op)) == 0) {
            *out = ops[k].op;
            return 0;
        }
    }
    return fail(c, "matchExpressions[%zu].operator: Invalid value: %s: not a valid selector operator", i,
                yyjson_is_str(op) ? adm_json_text(c->a, op) : "\"\"");
}

static int parse_expression(ctx_t *c, size_t i, yyjson_val *e, adm_selector_req_t *r)
{
    static const char *const members[] = {"key", "operator", "values", NULL};
    char where[64];
    yyjson_val *key, *values;
    size_t nvalues;
    const char *msg;
    int rc;

    snprintf(where, sizeof(where), "matchExpressions[%zu]: ", i);
    if (!yyjson_is_obj(e)) {
        return fail(c, "matchExpressions[%zu]: must be an object with key, operator and values", i);
    }
    rc = check_members(c, e, members, where);
    if (rc != 0) {
        return rc;
    }
    key = yyjson_obj_get(e, "key");
    values = yyjson_obj_get(e, "values");
    if (!absent(key) && !yyjson_is_str(key)) {
        return fail(c, "matchExpressions[%zu].key: must be a string", i);
    }
    if (!absent(values) && !yyjson_is_arr(values)) {
        return fail(c, "matchExpressions[%zu].values: must be an array of strings", i);
    }
    nvalues = yyjson_arr_size(values);
    rc = parse_operator(c, i, yyjson_obj_get(e, "operator"), &r->op);
    if (rc != 0) {
        return rc;
    }
    if ((r->op == ADM_SEL_IN || r->op == ADM_SEL_NOT_IN) && nvalues == 0) {
        return fail(
            c,
            "matchExpressions[%zu].values: Required value: must be specified when `operator` is 'In' or "
            "'NotIn'",
            i);
    }
    if ((r->op == ADM_SEL_EXISTS || r->op == ADM_SEL_DOES_NOT_EXIST) && nvalues > 0) {
        return fail(
            c,
            "matchExpressions[%zu].values: Forbidden: may not be specified when `operator` is 'Exists' or "
            "'DoesNotExist'",
            i);
    }
    r->key = yyjson_is_str(key) ? yyjson_get_str(key) : "";
    msg = qualified_name_problem(r->key, strlen(r->key));
    if (msg != NULL) {
        return fail(c, "matchExpressions[%zu].key: Invalid value: %s: %s", i,
                    yyjson_is_str(key) ? adm_json_text(c->a, key) : "\"\"", msg);
    }
    r->values = adm_arena_calloc(c->a, nvalues + 1, sizeof(*r->values));
    if (r->values == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t j = 0; j < nvalues; j++) {
        yyjson_val *v = yyjson_arr_get(values, j);

        if (!yyjson_is_str(v)) {
            return fail(c, "matchExpressions[%zu].values[%zu]: must be a string", i, j);
        }
        msg = label_value_problem(yyjson_get_str(v), yyjson_get_len(v));
        if (msg != NULL) {
            return fail(c, "matchExpressions[%zu].values[%zu]: Invalid value: %s: %s", i, j,
                        adm_json_text(c->a, v), msg);
        }
        r->values[j] = yyjson_get_str(v);
    }
    r->nvalues = nvalues;
    return 0;
}

int adm_selector_parse(adm_arena_t *a, yyjson_val *v, adm_selector_t *out, const char **problem)
{
    static const char *const members[] = {"matchLabels", "matchExpressions", NULL};
    ctx_t c = {a, problem};
    yyjson_val *labels, *exprs;
    size_t nlabels, nexprs;
    int rc;

    memset(out, 0, sizeof(*out));
    *problem = NULL;
    if (absent(v)) {
        out->everything = true;
        return 0;
    }
    if (!yyjson_is_obj(v)) {
        return fail(&c, "must be an object (a label selector with matchLabels and/or matchExpressions)");
    }
    rc = check_members(&c, v, members, "");
    if (rc != 0) {
        return rc;
    }
    labels = yyjson_obj_get(v, "matchLabels");
    exprs = yyjson_obj_get(v, "matchExpressions");
    if (!absent(labels) && !yyjson_is_obj(labels)) {
        return fail(&c, "matchLabels: must be an object of label keys and values");
    }
    if (!absent(exprs) && !yyjson_is_arr(exprs)) {
        return fail(&c, "matchExpressions: must be an array");
    }
    nlabels = yyjson_obj_size(labels);
    nexprs = yyjson_arr_size(exprs);
    out->reqs = adm_arena_calloc(a, nlabels + nexprs + 1, sizeof(*out->reqs));
    if (out->reqs == NULL) {
        return ADM_ENOMEM;
    }
    if (nlabels > 0) {
        rc = parse_match_labels(&c, labels, out->reqs, &out->nreqs);
        if (rc != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < nexprs; i++) {
        rc = parse_expression(&c, i, yyjson_arr_get(exprs, i), &out->reqs[out->nreqs]);
        if (rc != 0) {
            return rc;
        }
        out->nreqs++;
    }
    /* kube's LabelSelectorAsSelector: no requirements at all is labels.Everything(). */
    out->everything = out->nreqs == 0;
    return 0;
}

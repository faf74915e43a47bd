/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Webhook configuration loading. Texts of field errors follow kube-apiserver's
 * (pkg/apis/admissionregistration/validation, k8s.io/apiserver/pkg/util/webhook and
 * apimachinery's field.Error) so a message can be searched for upstream; only the first error is
 * reported where kube lists them all.
 */
#include "adm/webhook/config.h"

#include "adm/admission/admission.h"
#include "adm/admission/admission_config.h"
#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/json.h"
#include "adm/base/util.h"
#include "adm/base/yaml.h"
#include "adm/webhook/api_equivalents.h"
#include "adm/webhook/selector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define API_VERSION "admissionregistration.k8s.io/v1"
#define DESIRED_FORM "; desired format: https://host[/path]"

static const char dns1123_subdomain_msg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char dns1035_label_msg[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/* One configuration as validated, before the hook lists are put together. */
typedef struct config_s {
    adm_webhook_type_t type;
    const char *name;
    const char *file;
    size_t seq; /* load order, so sorting by name stays stable */
    adm_webhook_t *hooks;
    size_t nhooks;
} config_t;

typedef struct loader_s {
    adm_webhook_set_t *set;
    adm_arena_t *a;
    bool allow_insecure;
    char *err;
    size_t err_len;
    const char *file; /* the file being read */
    const char *obj;  /* "document 2", or KIND "NAME" once known; NULL for file-level problems */
    config_t *configs;
    size_t nconfigs, configs_cap;
    size_t warnings_cap;
} loader_t;

static const char *const webhook_kinds[] = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"};

/* Messages are single lines whatever a file or key name holds. */
static void one_line(char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            *s = ' ';
        }
    }
}

static int fail(loader_t *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(loader_t *L, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (L->err_len == 0) {
        return ADM_EINVAL;
    }
    if (L->obj != NULL) {
        snprintf(L->err, L->err_len, "%s: %s: %s", L->file, L->obj, msg);
    } else {
        snprintf(L->err, L->err_len, "%s: %s", L->file, msg);
    }
    one_line(L->err);
    return ADM_EINVAL;
}

static int nomem(loader_t *L)
{
    if (L->err_len > 0) {
        snprintf(L->err, L->err_len, "%s: out of memory",
                 L->file != NULL ? L->file : "webhook configuration");
    }
    return ADM_ENOMEM;
}

static bool absent(yyjson_val *v)
{
    return v == NULL || yyjson_is_null(v);
}

static bool str_is(yyjson_val *v, const char *s)
{
    return yyjson_is_str(v) && strcmp(yyjson_get_str(v), s) == 0;
}

/*
 * Strict decoding: only known members, each once. where is the object's field path ("" for the
 * top level). A member that exists in the other webhook type gets a hint, since the error alone
 * would suggest a typo.
 */
static int check_members(loader_t *L, yyjson_val *obj, const char *const *known, const char *where)
{
    bool duplicate;
    const char *k = adm_json_check_members(obj, known, &duplicate);
    const char *sep = where[0] != '\0' ? ": " : "";

    if (k == NULL) {
        return 0;
    }
    if (duplicate) {
        return fail(L, "%s%sduplicate field \"%s\"", where, sep, k);
    }
    return fail(L, "%s%sunknown field \"%s\"%s", where, sep, k,
                strcmp(k, "reinvocationPolicy") == 0 ? " (only mutating webhooks have reinvocationPolicy)" : "");
}

/* An optional string member: *out NULL when absent or null. */
static int get_str(loader_t *L, yyjson_val *obj, const char *where, const char *field, const char **out)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *out = NULL;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return fail(L, "%s%s%s: must be a string", where, where[0] != '\0' ? "." : "", field);
    }
    *out = yyjson_get_str(v);
    return 0;
}

/* An optional int32 member (Go's json refuses fractions and out-of-range numbers for int32). */
static int get_int32(loader_t *L, yyjson_val *obj, const char *where, const char *field, bool *present,
                     int64_t *out)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *present = false;
    if (absent(v)) {
        return 0;
    }
    if (yyjson_is_sint(v) && yyjson_get_sint(v) >= INT32_MIN && yyjson_get_sint(v) <= INT32_MAX) {
        *out = yyjson_get_sint(v);
    } else if (yyjson_is_uint(v) && yyjson_get_uint(v) <= INT32_MAX) {
        *out = (int64_t)yyjson_get_uint(v);
    } else {
        return fail(L, "%s.%s: must be an integer (int32)", where, field);
    }
    *present = true;
    return 0;
}

/* An optional list of strings; *n 0 when absent, null or empty. */
static int get_str_list(loader_t *L, yyjson_val *obj, const char *where, const char *field, const char ***out,
                        size_t *n)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *out = NULL;
    *n = 0;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_arr(v)) {
        return fail(L, "%s.%s: must be an array of strings", where, field);
    }
    *out = adm_arena_calloc(L->a, yyjson_arr_size(v) + 1, sizeof(**out));
    if (*out == NULL) {
        return nomem(L);
    }
    for (size_t i = 0; i < yyjson_arr_size(v); i++) {
        yyjson_val *e = yyjson_arr_get(v, i);

        if (!yyjson_is_str(e)) {
            return fail(L, "%s.%s[%zu]: must be a string", where, field, i);
        }
        (*out)[i] = yyjson_get_str(e);
    }
    *n = yyjson_arr_size(v);
    return 0;
}

/*
 * An optional enumerated string. names[] are the accepted values in the sorted order kube's
 * "supported values" lists use; *idx is the position of the match, or -1 when absent.
 */
static int get_enum(loader_t *L, yyjson_val *obj, const char *where, const char *field,
                    const char *const *names, size_t nnames, int *idx)
{
    const char *s;
    char supported[256] = "";
    size_t used = 0;
    int rc = get_str(L, obj, where, field, &s);

    *idx = -1;
    if (rc != 0 || s == NULL) {
        return rc;
    }
    for (size_t i = 0; i < nnames; i++) {
        if (strcmp(s, names[i]) == 0) {
            *idx = (int)i;
            return 0;
        }
    }
    for (size_t i = 0; i < nnames && used < sizeof(supported); i++) {
        int w = snprintf(supported + used, sizeof(supported) - used, "%s\"%s\"", i > 0 ? ", " : "", names[i]);

        used += w > 0 ? (size_t)w : 0;
    }
    return fail(L, "%s.%s: Unsupported value: %s: supported values: %s", where, field,
                adm_json_text(L->a, yyjson_obj_get(obj, field)), supported);
}

static bool has_star(const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], "*") == 0) {
            return true;
        }
    }
    return false;
}

/* First message of kube's IsDNS1123Subdomain, or NULL. */
static const char *dns1123_subdomain_problem(const char *s, size_t n)
{
    if (n > 253) {
        return "must be no more than 253 characters";
    }
    return adm_is_dns1123_subdomain(s, n) ? NULL : dns1123_subdomain_msg;
}

/* First message of kube's IsDNS1035Label, or NULL. */
static const char *dns1035_label_problem(const char *s)
{
    size_t n = strlen(s);

    if (n > 63) {
        return "must be no more than 63 characters";
    }
    if (n == 0 || s[0] < 'a' || s[0] > 'z' ||
        !((s[n - 1] >= 'a' && s[n - 1] <= 'z') || (s[n - 1] >= '0' && s[n - 1] <= '9'))) {
        return dns1035_label_msg;
    }
    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
            return dns1035_label_msg;
        }
    }
    return NULL;
}

static int add_warning(loader_t *L, const char *line)
{
    adm_webhook_set_t *set = L->set;

    if (line == NULL) {
        return nomem(L);
    }
    if (set->nwarnings == L->warnings_cap) {
        size_t ncap = L->warnings_cap == 0 ? 8 : L->warnings_cap * 2;
        const char **g =
            adm_arena_realloc(L->a, set->warnings, L->warnings_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return nomem(L);
        }
        set->warnings = g;
        L->warnings_cap = ncap;
    }
    set->warnings[set->nwarnings++] = line;
    return 0;
}

/* ---- rules ---- */

/*
 * kube's validateResources. Its "* with other subresource-less entries" test looks only at the
 * last subresource-less entry (["*", "pods"] is refused, ["pods", "*"] accepted); admitd follows
 * it so that every configuration kube-apiserver accepts also loads here.
 */
static int check_resources(loader_t *L, const char *where, yyjson_val *list, const char *const *res, size_t n)
{
    bool double_star = false, single_star = false, plain = false;

    if (n == 0) {
        return fail(L, "%s.resources: Required value", where);
    }
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(res[i], '/');
        size_t rlen;

        if (res[i][0] == '\0') {
            return fail(L, "%s.resources[%zu]: Required value", where, i);
        }
        double_star = double_star || strcmp(res[i], "*/*") == 0;
        single_star = single_star || strcmp(res[i], "*") == 0;
        if (slash == NULL) {
            plain = strcmp(res[i], "*") != 0;
            continue;
        }
        rlen = (size_t)(slash - res[i]);
        for (size_t j = 0; j < i; j++) {
            const char *js = strchr(res[j], '/');

            if (js != NULL && strcmp(js + 1, "*") == 0 && (size_t)(js - res[j]) == rlen &&
                strncmp(res[j], res[i], rlen) == 0) {
                return fail(
                    L, "%s.resources[%zu]: Invalid value: %s: if '%.*s/*' is present, must not specify %s",
                    where, i, adm_json_text(L->a, yyjson_arr_get(list, i)), (int)rlen, res[i], res[i]);
            }
        }
        for (size_t j = 0; j < i; j++) {
            const char *js = strchr(res[j], '/');

            if (js != NULL && js - res[j] == 1 && res[j][0] == '*' && strcmp(js + 1, slash + 1) == 0) {
                return fail(L,
                            "%s.resources[%zu]: Invalid value: %s: if '*/%s' is present, must not specify %s",
                            where, i, adm_json_text(L->a, yyjson_arr_get(list, i)), slash + 1, res[i]);
            }
        }
    }
    if (n > 1 && double_star) {
        return fail(L,
                    "%s.resources: Invalid value: %s: if '*/*' is present, must not specify other resources",
                    where, adm_json_text(L->a, list));
    }
    if (single_star && plain) {
        return fail(
            L,
            "%s.resources: Invalid value: %s: if '*' is present, must not specify other resources without "
            "subresources",
            where, adm_json_text(L->a, list));
    }
    return 0;
}

static int parse_operations(loader_t *L, const char *where, yyjson_val *rule, adm_rule_t *r)
{
    static const struct {
        const char *name;
        unsigned bits;
    } ops[] = {{"*", ADM_OPS_ALL},
               {"CONNECT", ADM_OPS_CONNECT},
               {"CREATE", ADM_OPS_CREATE},
               {"DELETE", ADM_OPS_DELETE},
               {"UPDATE", ADM_OPS_UPDATE}};
    const char **list;
    size_t n;
    int rc = get_str_list(L, rule, where, "operations", &list, &n);

    if (rc != 0) {
        return rc;
    }
    if (n == 0) {
        return fail(L, "%s.operations: Required value", where);
    }
    if (n > 1 && has_star(list, n)) {
        return fail(L,
                    "%s.operations: Invalid value: %s: if '*' is present, must not specify other operations",
                    where, adm_json_text(L->a, yyjson_obj_get(rule, "operations")));
    }
    for (size_t i = 0; i < n; i++) {
        bool known = false;

        for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
            if (strcmp(list[i], ops[k].name) == 0) {
                r->operations |= ops[k].bits;
                known = true;
            }
        }
        if (!known) {
            return fail(L,
                        "%s.operations[%zu]: Unsupported value: %s: supported values: \"*\", \"CONNECT\", "
                        "\"CREATE\", "
                        "\"DELETE\", \"UPDATE\"",
                        where, i, adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(rule, "operations"), i)));
        }
    }
    return 0;
}

static int parse_rule(loader_t *L, const char *hook_where, size_t i, yyjson_val *rule, adm_rule_t *r)
{
    static const char *const members[] = {"operations", "apiGroups", "apiVersions",
                                          "resources",  "scope",     NULL};
    static const char *const scopes[] = {"*", "Cluster", "Namespaced"};
    static const adm_rule_scope_t scope_values[] = {ADM_SCOPE_ALL, ADM_SCOPE_CLUSTER, ADM_SCOPE_NAMESPACED};
    char where[96];
    const char **resources;
    int scope;
    int rc;

    snprintf(where, sizeof(where), "%s.rules[%zu]", hook_where, i);
    if (!yyjson_is_obj(rule)) {
        return fail(L, "%s: must be an object", where);
    }
    if ((rc = check_members(L, rule, members, where)) != 0 ||
        (rc = parse_operations(L, where, rule, r)) != 0 ||
        (rc = get_str_list(L, rule, where, "apiGroups", &r->api_groups, &r->napi_groups)) != 0) {
        return rc;
    }
    if (r->napi_groups == 0) {
        return fail(L, "%s.apiGroups: Required value", where);
    }
    if (r->napi_groups > 1 && has_star(r->api_groups, r->napi_groups)) {
        return fail(L,
                    "%s.apiGroups: Invalid value: %s: if '*' is present, must not specify other API groups",
                    where, adm_json_text(L->a, yyjson_obj_get(rule, "apiGroups")));
    }
    rc = get_str_list(L, rule, where, "apiVersions", &r->api_versions, &r->napi_versions);
    if (rc != 0) {
        return rc;
    }
    if (r->napi_versions == 0) {
        return fail(L, "%s.apiVersions: Required value", where);
    }
    if (r->napi_versions > 1 && has_star(r->api_versions, r->napi_versions)) {
        return fail(
            L, "%s.apiVersions: Invalid value: %s: if '*' is present, must not specify other API versions",
            where, adm_json_text(L->a, yyjson_obj_get(rule, "apiVersions")));
    }
    for (size_t k = 0; k < r->napi_versions; k++) {
        if (r->api_versions[k][0] == '\0') {
            return fail(L, "%s.apiVersions[%zu]: Required value", where, k);
        }
    }
    rc = get_str_list(L, rule, where, "resources", &resources, &r->nresources);
    if (rc != 0 ||
        (rc = check_resources(L, where, yyjson_obj_get(rule, "resources"), resources, r->nresources)) != 0) {
        return rc;
    }
    r->resources = adm_arena_calloc(L->a, r->nresources, sizeof(*r->resources));
    if (r->resources == NULL) {
        return nomem(L);
    }
    for (size_t k = 0; k < r->nresources; k++) {
        const char *slash = strchr(resources[k], '/');

        r->resources[k].resource =
            slash == NULL ? resources[k]
                          : adm_arena_strndup(L->a, resources[k], (size_t)(slash - resources[k]));
        r->resources[k].subresource = slash == NULL ? "" : slash + 1;
        if (r->resources[k].resource == NULL) {
            return nomem(L);
        }
    }
    rc = get_enum(L, rule, where, "scope", scopes, 3, &scope);
    r->scope = scope >= 0 ? scope_values[scope] : ADM_SCOPE_ALL;
    return rc;
}

/* ---- clientConfig ---- */

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Characters Go's net/url refuses in a host name (shouldEscape in host mode, '%' aside). */
static bool bad_host_char(unsigned char c)
{
    if (c >= 0x80 || is_alpha((char)c) || is_digit((char)c)) {
        return false;
    }
    return strchr("-_.~!$&'()*+,;=:[]<>\"%", c) == NULL;
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Go's unescape: every '%' starts two hex digits. */
static bool valid_escapes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            if (i + 2 >= n || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) {
                return false;
            }
            i += 2;
        }
    }
    return true;
}

/* Go lowercases the scheme it parses, so "HTTPS://" passes kube's check as well. */
static bool scheme_allowed(const loader_t *L, const char *url, size_t scheme_len)
{
    return (scheme_len == 5 && strncasecmp(url, "https", 5) == 0) ||
           (L->allow_insecure && scheme_len == 4 && strncasecmp(url, "http", 4) == 0);
}

static int scheme_error(loader_t *L, const char *where, const char *url, size_t scheme_len)
{
    return fail(L, "%s: Invalid value: \"%.*s\": %s" DESIRED_FORM, where, (int)scheme_len, url,
                L->allow_insecure
                    ? "'https' and 'http' (--allow-insecure-webhook-urls) are the only allowed URL schemes"
                    : "'https' is the only allowed URL scheme");
}

/*
 * kube's ValidateWebhookURL over Go's url.Parse, reduced to what a webhook URL can hold. One
 * deviation: a lone trailing "?" (an empty query Go accepts) is refused, since admitd appends
 * "?timeout=" to the URL as written.
 */
static int check_url(loader_t *L, const char *where, const char *url)
{
    const char *hash = strchr(url, '#');
    size_t n = hash != NULL ? (size_t)(hash - url) : strlen(url);
    const char *rest = url;
    size_t scheme_len = 0;
    const char *host = "";
    size_t host_len = 0;
    const char *q;

    for (const char *p = url; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ' ') {
            return fail(L,
                        "%s: Required value: url must be a valid URL: a space or control character at byte "
                        "%zu" DESIRED_FORM,
                        where, (size_t)(p - url));
        }
    }
    if (url[0] == ':') {
        return fail(L, "%s: Required value: url must be a valid URL: missing protocol scheme" DESIRED_FORM,
                    where);
    }
    if (is_alpha(url[0])) {
        size_t i = 1;

        while (i < n &&
               (is_alpha(url[i]) || is_digit(url[i]) || url[i] == '+' || url[i] == '-' || url[i] == '.')) {
            i++;
        }
        if (i < n && url[i] == ':') {
            scheme_len = i;
            rest = url + i + 1;
        }
    }
    q = memchr(rest, '?', (size_t)(url + n - rest));
    if (strncmp(rest, "//", 2) == 0 && scheme_len > 0) {
        const char *auth = rest + 2;
        size_t auth_len = strcspn(auth, "/?#");
        const char *at = NULL;

        for (size_t i = 0; i < auth_len; i++) {
            at = auth[i] == '@' ? auth + i : at;
        }
        host = at != NULL ? at + 1 : auth;
        host_len = (size_t)(auth + auth_len - host);
        if (host_len > 0 && host[0] == '[') {
            const char *close = memchr(host, ']', host_len);
            const char *port = close != NULL ? close + 1 : NULL;

            if (close == NULL) {
                return fail(L,
                            "%s: Required value: url must be a valid URL: missing ']' in host" DESIRED_FORM,
                            where);
            }
            for (const char *p = port; p < host + host_len; p++) {
                if ((p == port && *p != ':') || (p > port && !is_digit(*p))) {
                    return fail(L,
                                "%s: Required value: url must be a valid URL: invalid port \"%.*s\" after "
                                "host" DESIRED_FORM,
                                where, (int)(host + host_len - port), port);
                }
            }
        } else {
            const char *colon = NULL;

            for (size_t i = 0; i < host_len; i++) {
                if (bad_host_char((unsigned char)host[i])) {
                    return fail(
                        L,
                        "%s: Required value: url must be a valid URL: invalid character \"%c\" in host "
                        "name" DESIRED_FORM,
                        where, host[i]);
                }
                colon = host[i] == ':' ? host + i : colon;
            }
            for (const char *p = colon != NULL ? colon + 1 : host + host_len; p < host + host_len; p++) {
                if (!is_digit(*p)) {
                    return fail(L,
                                "%s: Required value: url must be a valid URL: invalid port \"%.*s\" after "
                                "host" DESIRED_FORM,
                                where, (int)(host + host_len - colon), colon);
                }
            }
        }
        if (!valid_escapes(auth + auth_len, (size_t)(url + n - (auth + auth_len)))) {
            return fail(L, "%s: Required value: url must be a valid URL: invalid URL escape" DESIRED_FORM,
                        where);
        }
        if (!scheme_allowed(L, url, scheme_len)) {
            return scheme_error(L, where, url, scheme_len);
        }
        if (host_len == 0) {
            return fail(L, "%s: Invalid value: \"\": host must be specified" DESIRED_FORM, where);
        }
        if (at != NULL) {
            /* Only the user name is echoed: the rest may be a password. */
            size_t ulen = strcspn(auth, ":@");

            return fail(L, "%s: Invalid value: \"%.*s%s\": user information is not permitted in the URL",
                        where, (int)ulen, auth, auth[ulen] == ':' ? ":xxxxx" : "");
        }
    } else {
        if (!scheme_allowed(L, url, scheme_len)) {
            return scheme_error(L, where, url, scheme_len);
        }
        return fail(L, "%s: Invalid value: \"\": host must be specified" DESIRED_FORM, where);
    }
    if (hash != NULL) {
        return fail(L, "%s: Invalid value: \"%s\": fragments are not permitted in the URL", where, hash + 1);
    }
    if (q != NULL) {
        return fail(L, "%s: Invalid value: \"%.*s\": query parameters are not permitted in the URL", where,
                    (int)(url + n - q - 1), q + 1);
    }
    return 0;
}

/* kube's ValidateWebhookService path rules. */
static int check_service_path(loader_t *L, const char *where, yyjson_val *pathv, const char *path)
{
    size_t n = strlen(path), start, end, seg = 0;

    if (n == 0 || strcmp(path, "/") == 0) {
        return 0;
    }
    if (strcmp(path, "//") == 0) {
        return fail(L, "%s.path: Invalid value: %s: segment[0] may not be empty", where,
                    adm_json_text(L->a, pathv));
    }
    if (path[0] != '/') {
        return fail(L, "%s.path: Invalid value: %s: must start with a '/'", where,
                    adm_json_text(L->a, pathv));
    }
    end = path[n - 1] == '/' ? n - 1 : n;
    for (start = 1; start <= end; seg++) {
        const char *slash = memchr(path + start, '/', end - start);
        size_t stop = slash != NULL ? (size_t)(slash - path) : end;
        const char *msg;

        if (stop == start) {
            return fail(L, "%s.path: Invalid value: %s: segment[%zu] may not be empty", where,
                        adm_json_text(L->a, pathv), seg);
        }
        msg = dns1123_subdomain_problem(path + start, stop - start);
        if (msg != NULL) {
            return fail(L, "%s.path: Invalid value: %s: segment[%zu]: %s", where, adm_json_text(L->a, pathv),
                        seg, msg);
        }
        start = stop + 1;
    }
    return 0;
}

static int parse_service(loader_t *L, const char *cc_where, yyjson_val *v, adm_webhook_t *h)
{
    static const char *const members[] = {"namespace", "name", "path", "port", NULL};
    char where[128];
    adm_webhook_service_t *svc;
    const char *ns, *name, *path;
    bool has_port;
    int64_t port = 443;
    int rc;

    snprintf(where, sizeof(where), "%s.service", cc_where);
    if (!yyjson_is_obj(v)) {
        return fail(L, "%s: must be an object with namespace, name, path and port", where);
    }
    if ((rc = check_members(L, v, members, where)) != 0 ||
        (rc = get_str(L, v, where, "namespace", &ns)) != 0 ||
        (rc = get_str(L, v, where, "name", &name)) != 0 || (rc = get_str(L, v, where, "path", &path)) != 0 ||
        (rc = get_int32(L, v, where, "port", &has_port, &port)) != 0) {
        return rc;
    }
    if (name == NULL || name[0] == '\0') {
        return fail(L, "%s.name: Required value: service name is required", where);
    }
    if (ns == NULL || ns[0] == '\0') {
        return fail(L, "%s.namespace: Required value: service namespace is required", where);
    }
    if (!has_port) {
        port = 443;
    }
    if (port < 1 || port > 65535) {
        return fail(L,
                    "%s.port: Invalid value: %lld: port is not valid: must be between 1 and 65535, inclusive",
                    where, (long long)port);
    }
    if (path != NULL && (rc = check_service_path(L, where, yyjson_obj_get(v, "path"), path)) != 0) {
        return rc;
    }
    svc = adm_arena_calloc(L->a, 1, sizeof(*svc));
    if (svc == NULL) {
        return nomem(L);
    }
    svc->namespace_ = ns;
    svc->name = name;
    svc->path = path != NULL ? path : "";
    svc->port = (uint16_t)port;
    h->service = svc;
    return 0;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * caBundle is []byte, so JSON carries it in standard padded base64 (Go's decoder also skips CR and
 * LF). The PEM text is kept NUL-terminated for mbedTLS; an empty bundle means the system roots.
 */
static int parse_ca_bundle(loader_t *L, const char *where, const char *s, adm_webhook_t *h)
{
    size_t n = strlen(s), out_len = 0, q = 0, pad = 0;
    unsigned char *out = adm_arena_alloc(L->a, n / 4 * 3 + 4);
    uint32_t acc = 0;

    if (out == NULL) {
        return nomem(L);
    }
    for (size_t i = 0; i < n; i++) {
        int v;

        if (s[i] == '\r' || s[i] == '\n') {
            continue;
        }
        if (s[i] == '=' && q >= 2 && pad < 4 - q) {
            pad++;
            continue;
        }
        v = b64_value(s[i]);
        if (v < 0 || pad > 0) {
            return fail(
                L, "%s.caBundle: illegal base64 data at input byte %zu (caBundle is base64 of the PEM text)",
                where, i);
        }
        acc = acc << 6 | (uint32_t)v;
        if (++q == 4) {
            out[out_len++] = (unsigned char)(acc >> 16);
            out[out_len++] = (unsigned char)(acc >> 8);
            out[out_len++] = (unsigned char)acc;
            q = 0;
            acc = 0;
        }
    }
    if ((q == 0 && pad != 0) || (q != 0 && q + pad != 4)) {
        return fail(L,
                    "%s.caBundle: illegal base64 data at input byte %zu (caBundle is base64 of the PEM text)",
                    where, n);
    }
    if (q == 2) {
        out[out_len++] = (unsigned char)(acc >> 4);
    } else if (q == 3) {
        out[out_len++] = (unsigned char)(acc >> 10);
        out[out_len++] = (unsigned char)(acc >> 2);
    }
    out[out_len] = '\0';
    h->ca_bundle = out_len > 0 ? (const char *)out : NULL;
    h->ca_bundle_len = out_len;
    return 0;
}

static int parse_client_config(loader_t *L, const char *hook_where, yyjson_val *cc, adm_webhook_t *h)
{
    static const char *const members[] = {"url", "service", "caBundle", NULL};
    char where[96];
    const char *url, *ca;
    yyjson_val *svc;
    int rc;

    snprintf(where, sizeof(where), "%s.clientConfig", hook_where);
    if (absent(cc)) {
        return fail(L, "%s: Required value: exactly one of url or service is required", where);
    }
    if (!yyjson_is_obj(cc)) {
        return fail(L, "%s: must be an object with url or service, and caBundle", where);
    }
    if ((rc = check_members(L, cc, members, where)) != 0 || (rc = get_str(L, cc, where, "url", &url)) != 0 ||
        (rc = get_str(L, cc, where, "caBundle", &ca)) != 0) {
        return rc;
    }
    svc = yyjson_obj_get(cc, "service");
    if ((url == NULL) == absent(svc)) {
        return fail(L, "%s: Required value: exactly one of url or service is required", where);
    }
    if (url != NULL) {
        char url_where[112];

        snprintf(url_where, sizeof(url_where), "%s.url", where);
        rc = check_url(L, url_where, url);
        h->url = url;
    } else {
        rc = parse_service(L, where, svc, h);
    }
    if (rc == 0 && ca != NULL) {
        rc = parse_ca_bundle(L, where, ca, h);
    }
    return rc;
}

/* ---- one webhook ---- */

static int parse_selector(loader_t *L, const char *where, yyjson_val *hook, const char *field,
                          adm_selector_t *out)
{
    const char *problem = NULL;
    int rc = adm_selector_parse(L->a, yyjson_obj_get(hook, field), out, &problem);

    if (rc == ADM_ENOMEM) {
        return nomem(L);
    }
    if (rc != 0) {
        /* problem starts with a member name (".matchLabels...") or is about the selector itself */
        bool member = problem != NULL && strncmp(problem, "match", 5) == 0;

        return fail(L, "%s.%s%s%s", where, field, member ? "." : ": ", problem != NULL ? problem : "invalid");
    }
    return 0;
}

static int parse_review_versions(loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    const char **list;
    size_t n;
    bool found = false;
    int rc = get_str_list(L, hook, where, "admissionReviewVersions", &list, &n);

    if (rc != 0) {
        return rc;
    }
    if (n == 0) {
        return fail(L, "%s.admissionReviewVersions: Required value: must specify one of v1, v1beta1", where);
    }
    for (size_t i = 0; i < n; i++) {
        const char *msg;

        for (size_t j = 0; j < i; j++) {
            if (strcmp(list[i], list[j]) == 0) {
                return fail(
                    L, "%s.admissionReviewVersions[%zu]: Invalid value: %s: duplicate version", where, i,
                    adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(hook, "admissionReviewVersions"), i)));
            }
        }
        msg = dns1035_label_problem(list[i]);
        if (msg != NULL) {
            return fail(
                L, "%s.admissionReviewVersions[%zu]: Invalid value: %s: %s", where, i,
                adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(hook, "admissionReviewVersions"), i)), msg);
        }
        if (!found && (strcmp(list[i], "v1") == 0 || strcmp(list[i], "v1beta1") == 0)) {
            h->review_version = strcmp(list[i], "v1") == 0 ? ADM_REVIEW_V1 : ADM_REVIEW_V1BETA1;
            found = true;
        }
    }
    if (!found) {
        return fail(L,
                    "%s.admissionReviewVersions: Invalid value: %s: must include at least one of v1, v1beta1",
                    where, adm_json_text(L->a, yyjson_obj_get(hook, "admissionReviewVersions")));
    }
    return 0;
}

static int parse_name(loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    const char *name, *msg;
    size_t dots = 0;
    int rc = get_str(L, hook, where, "name", &name);

    if (rc != 0) {
        return rc;
    }
    if (name == NULL || name[0] == '\0') {
        return fail(L, "%s.name: Required value", where);
    }
    msg = dns1123_subdomain_problem(name, strlen(name));
    if (msg != NULL) {
        return fail(L, "%s.name: Invalid value: %s: %s", where,
                    adm_json_text(L->a, yyjson_obj_get(hook, "name")), msg);
    }
    for (const char *p = name; *p != '\0'; p++) {
        dots += *p == '.';
    }
    if (dots < 2) {
        return fail(
            L,
            "%s.name: Invalid value: %s: should be a domain with at least three segments separated by dots",
            where, adm_json_text(L->a, yyjson_obj_get(hook, "name")));
    }
    h->name = name;
    return 0;
}

static int parse_rules(loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    yyjson_val *rules = yyjson_obj_get(hook, "rules");
    int rc;

    if (absent(rules)) {
        return 0;
    }
    if (!yyjson_is_arr(rules)) {
        return fail(L, "%s.rules: must be an array", where);
    }
    h->rules = adm_arena_calloc(L->a, yyjson_arr_size(rules) + 1, sizeof(*h->rules));
    if (h->rules == NULL) {
        return nomem(L);
    }
    for (size_t i = 0; i < yyjson_arr_size(rules); i++) {
        rc = parse_rule(L, where, i, yyjson_arr_get(rules, i), &h->rules[i]);
        if (rc != 0) {
            return rc;
        }
        h->nrules++;
    }
    return 0;
}

/* The policy enums, with their sorted "supported values" lists. */
static int parse_policies(loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    static const char *const failure[] = {"Fail", "Ignore"};
    static const char *const match[] = {"Equivalent", "Exact"};
    static const char *const side_effects[] = {"None", "NoneOnDryRun", "Some", "Unknown"};
    static const adm_side_effects_t side_effect_values[] = {ADM_SIDE_EFFECTS_NONE, ADM_SIDE_EFFECTS_NONE_ON_DRY_RUN,
                                                            ADM_SIDE_EFFECTS_SOME, ADM_SIDE_EFFECTS_UNKNOWN};
    const char *se;
    int idx, rc;
    bool has_timeout;
    int64_t timeout = 10;

    if ((rc = get_enum(L, hook, where, "failurePolicy", failure, 2, &idx)) != 0) {
        return rc;
    }
    h->failure_policy = idx == 1 ? ADM_FAILURE_IGNORE : ADM_FAILURE_FAIL;
    if ((rc = get_enum(L, hook, where, "matchPolicy", match, 2, &idx)) != 0) {
        return rc;
    }
    h->match_policy = idx == 1 ? ADM_MATCH_EXACT : ADM_MATCH_EQUIVALENT;
    if ((rc = get_str(L, hook, where, "sideEffects", &se)) != 0) {
        return rc;
    }
    if (se == NULL) {
        return fail(L, "%s.sideEffects: Required value: must specify one of None, NoneOnDryRun", where);
    }
    /*
     * Some and Unknown survive on objects kept from v1beta1 (a create refuses them, an update keeps
     * them), so a configuration exported from such a cluster carries them: load it, with a warning,
     * and refuse dry-run requests to the webhook as kube-apiserver does.
     */
    if ((rc = get_enum(L, hook, where, "sideEffects", side_effects, 4, &idx)) != 0) {
        return rc;
    }
    h->side_effects = side_effect_values[idx];
    if (idx >= 2 &&
        (rc = add_warning(L, adm_arena_printf(L->a,
                                              "%s: %s: %s.sideEffects: %s: kube-apiserver accepts it only on objects "
                                              "kept from v1beta1; dry-run requests to this webhook are refused",
                                              L->file, L->obj, where, side_effects[idx]))) != 0) {
        return rc;
    }
    if ((rc = get_int32(L, hook, where, "timeoutSeconds", &has_timeout, &timeout)) != 0) {
        return rc;
    }
    if (has_timeout && (timeout < 1 || timeout > 30)) {
        return fail(
            L, "%s.timeoutSeconds: Invalid value: %lld: the timeout value must be between 1 and 30 seconds",
            where, (long long)timeout);
    }
    h->timeout_seconds = has_timeout ? (uint32_t)timeout : 10;
    return 0;
}

static int parse_webhook(loader_t *L, adm_webhook_type_t type, size_t i, yyjson_val *hook, adm_webhook_t *h)
{
    static const char *const mutating_members[] = {"name",
                                                   "clientConfig",
                                                   "rules",
                                                   "failurePolicy",
                                                   "matchPolicy",
                                                   "namespaceSelector",
                                                   "objectSelector",
                                                   "sideEffects",
                                                   "timeoutSeconds",
                                                   "admissionReviewVersions",
                                                   "reinvocationPolicy",
                                                   "matchConditions",
                                                   NULL};
    static const char *const validating_members[] = {"name",
                                                     "clientConfig",
                                                     "rules",
                                                     "failurePolicy",
                                                     "matchPolicy",
                                                     "namespaceSelector",
                                                     "objectSelector",
                                                     "sideEffects",
                                                     "timeoutSeconds",
                                                     "admissionReviewVersions",
                                                     "matchConditions",
                                                     NULL};
    static const char *const reinvocation[] = {"IfNeeded", "Never"};
    char where[48];
    yyjson_val *conds;
    int idx, rc;

    snprintf(where, sizeof(where), "webhooks[%zu]", i);
    h->type = type;
    if (!yyjson_is_obj(hook)) {
        return fail(L, "%s: must be an object", where);
    }
    rc = check_members(L, hook, type == ADM_WEBHOOK_MUTATING ? mutating_members : validating_members, where);
    if (rc != 0 || (rc = parse_name(L, where, hook, h)) != 0 || (rc = parse_rules(L, where, hook, h)) != 0 ||
        (rc = parse_policies(L, where, hook, h)) != 0 ||
        (rc = parse_selector(L, where, hook, "namespaceSelector", &h->namespace_selector)) != 0 ||
        (rc = parse_selector(L, where, hook, "objectSelector", &h->object_selector)) != 0) {
        return rc;
    }
    if (type == ADM_WEBHOOK_MUTATING) {
        if ((rc = get_enum(L, hook, where, "reinvocationPolicy", reinvocation, 2, &idx)) != 0) {
            return rc;
        }
        h->reinvocation = idx == 0 ? ADM_REINVOKE_IF_NEEDED : ADM_REINVOKE_NEVER;
    }
    if ((rc = parse_client_config(L, where, yyjson_obj_get(hook, "clientConfig"), h)) != 0) {
        return rc;
    }
    conds = yyjson_obj_get(hook, "matchConditions");
    if (!absent(conds) && !yyjson_is_arr(conds)) {
        return fail(L, "%s.matchConditions: must be an array", where);
    }
    if (yyjson_arr_size(conds) > 0) {
        return fail(
            L,
            "%s.matchConditions: Forbidden: matchConditions (CEL) are not supported yet by admitd; they are "
            "refused rather than ignored, since ignoring them would send this webhook requests they exclude",
            where);
    }
    return parse_review_versions(L, where, hook, h);
}

/* ---- matchPolicy Equivalent (D6) ---- */

static bool listed(const char *const *list, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], "*") == 0 || strcmp(list[i], want) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * Whether a rule matches a request for gvr/sub with operation bit op: the parts of kube's
 * rules.Matcher that webhook_match.c applies at run time, for a resource of the equivalence table.
 * Its requests carry a namespace exactly when the resource is namespaced, which is all the scope
 * test needs to know.
 */
static bool rule_reaches(const adm_rule_t *r, const adm_gvr_t *gvr, const char *sub, unsigned op,
                         bool namespaced)
{
    if ((r->operations & op) == 0 || r->scope == (namespaced ? ADM_SCOPE_CLUSTER : ADM_SCOPE_NAMESPACED) ||
        !listed(r->api_groups, r->napi_groups, gvr->group) ||
        !listed(r->api_versions, r->napi_versions, gvr->version)) {
        return false;
    }
    for (size_t i = 0; i < r->nresources; i++) {
        const adm_rule_resource_t *rr = &r->resources[i];

        if ((strcmp(rr->resource, "*") == 0 || strcmp(rr->resource, gvr->resource) == 0) &&
            (strcmp(rr->subresource, "*") == 0 || strcmp(rr->subresource, sub) == 0)) {
            return true;
        }
    }
    return false;
}

static bool hook_reaches(const adm_webhook_t *h, const adm_gvr_t *gvr, const char *sub, unsigned op,
                         bool namespaced)
{
    for (size_t r = 0; r < h->nrules; r++) {
        if (rule_reaches(&h->rules[r], gvr, sub, op, namespaced)) {
            return true;
        }
    }
    return false;
}

static bool same_group_resource(const adm_gvr_t *x, const adm_gvr_t *y)
{
    return strcmp(x->group, y->group) == 0 && strcmp(x->resource, y->resource) == 0;
}

/*
 * The member of class c through which the webhook's rules reach requests for member m that they
 * do not match themselves, or NULL when no such request exists. Requests are tried for the
 * resource (create, update, delete) and each subresource (update: the table's subresources are
 * status ones); none of the table's resources takes CONNECT. A member of m's own group and
 * resource is preferred, since admitd's run-time matcher sees that one (D6 call failure) and not a
 * member of another group.
 */
static const adm_api_member_t *reached_through(const adm_webhook_t *h, const adm_api_class_t *c,
                                               const adm_api_member_t *m)
{
    const adm_api_member_t *other = NULL;

    for (size_t s = 0; s <= c->nsubresources; s++) {
        const char *sub = s == 0 ? "" : c->subresources[s - 1];
        unsigned ops = s == 0 ? ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE : ADM_OPS_UPDATE;

        for (unsigned op = 1; op <= ops; op <<= 1) {
            if ((ops & op) == 0 || hook_reaches(h, &m->gvr, sub, op, c->namespaced)) {
                continue;
            }
            for (size_t k = 0; k < c->nmembers; k++) {
                const adm_api_member_t *via = &c->members[k];

                if (via == m || !adm_api_member_served(via) ||
                    !hook_reaches(h, &via->gvr, sub, op, c->namespaced)) {
                    continue;
                }
                if (same_group_resource(&via->gvr, &m->gvr)) {
                    return via;
                }
                if (other == NULL) {
                    other = via;
                }
            }
        }
    }
    return other;
}

/* A group/version/resource as a rule would name it; the core group is "". */
static const char *gvr_text(loader_t *L, const adm_gvr_t *g)
{
    return adm_arena_printf(L->a, "%s/%s %s", g->group[0] == '\0' ? "\"\"" : g->group, g->version,
                            g->resource);
}

/* list + ", " + "<m> (via <via>)"; NULL when out of memory. */
static const char *append_member(loader_t *L, const char *list, const adm_gvr_t *m, const adm_gvr_t *via)
{
    const char *mt = gvr_text(L, m);
    const char *vt = gvr_text(L, via);

    if (mt == NULL || vt == NULL) {
        return NULL;
    }
    return adm_arena_printf(L->a, "%s%s%s (via %s)", list != NULL ? list : "", list != NULL ? ", " : "", mt,
                            vt);
}

/*
 * D6 at load time. kube-apiserver sends an Equivalent webhook the requests for every member of an
 * equivalence class (api_equivalents.h) that one of its rules matches, converted to that member.
 * admitd cannot convert, so where the rules match one member of a class but not another, one line
 * per webhook names the members that would need the conversion and what admitd does with their
 * requests: another version of the same group and resource is a call failure, failurePolicy
 * deciding (webhook_match.c); another group is not seen by the run-time matcher at all, so the
 * webhook is not called. Resources outside the table (custom resources among them) are left to the
 * run-time D6 check, and a rule with "*" versions and groups reaches every member alike.
 */
static int warn_equivalent(loader_t *L, const adm_webhook_t *h, size_t i)
{
    size_t nclasses;
    const adm_api_class_t *classes = adm_api_equivalent_classes(&nclasses);
    const char *fail_call = NULL;  /* same group and resource: the call fails */
    const char *not_called = NULL; /* another group: the webhook is skipped */
    char *line;

    if (h->match_policy != ADM_MATCH_EQUIVALENT) {
        return 0;
    }
    for (size_t c = 0; c < nclasses; c++) {
        for (size_t j = 0; j < classes[c].nmembers; j++) {
            const adm_api_member_t *m = &classes[c].members[j];
            const adm_api_member_t *via;
            const char **list = NULL;

            /* D1: the newest release decides what is served; the README notes where 1.31 differs. */
            if (!adm_api_member_served(m)) {
                continue;
            }
            via = reached_through(h, &classes[c], m);
            if (via == NULL) {
                continue;
            }
            list = same_group_resource(&via->gvr, &m->gvr) ? &fail_call : &not_called;
            *list = append_member(L, *list, &m->gvr, &via->gvr);
            if (*list == NULL) {
                return nomem(L);
            }
        }
    }
    if (fail_call == NULL && not_called == NULL) {
        return 0;
    }
    if (fail_call != NULL) {
        fail_call = adm_arena_printf(L->a,
                                     "requests for %s match only through another version of their group and "
                                     "resource, so the call fails and failurePolicy decides (D6)",
                                     fail_call);
        if (fail_call == NULL) {
            return nomem(L);
        }
    }
    if (not_called != NULL) {
        not_called = adm_arena_printf(L->a,
                                      "requests for %s match only through another group, so admitd does not "
                                      "call the webhook for them where kube-apiserver would call it with a "
                                      "converted object",
                                      not_called);
        if (not_called == NULL) {
            return nomem(L);
        }
    }
    line = adm_arena_printf(
        L->a,
        "%s: %s: webhooks[%zu] (\"%s\"): matchPolicy Equivalent relies on conversions admitd "
        "cannot make (it does not convert objects between API versions): %s%s%s; list those "
        "versions and groups in the rules, or set matchPolicy: Exact to make the choice explicit",
        L->file, L->obj, i, h->name, fail_call != NULL ? fail_call : "",
        fail_call != NULL && not_called != NULL ? "; " : "", not_called != NULL ? not_called : "");
    if (line == NULL) {
        return nomem(L);
    }
    one_line(line);
    return add_warning(L, line);
}

/* ---- configurations, documents, files ---- */

static int add_config(loader_t *L, const config_t *c)
{
    for (size_t i = 0; i < L->nconfigs; i++) {
        if (L->configs[i].type == c->type && strcmp(L->configs[i].name, c->name) == 0) {
            return fail(L, "metadata.name: Duplicate value: \"%s\": another %s has this name (%s)", c->name,
                        webhook_kinds[c->type == ADM_WEBHOOK_MUTATING ? 0 : 1], L->configs[i].file);
        }
    }
    if (L->nconfigs == L->configs_cap) {
        size_t ncap = L->configs_cap == 0 ? 8 : L->configs_cap * 2;
        config_t *g = adm_arena_realloc(L->a, L->configs, L->configs_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return nomem(L);
        }
        L->configs = g;
        L->configs_cap = ncap;
    }
    L->configs[L->nconfigs] = *c;
    L->configs[L->nconfigs].seq = L->nconfigs;
    L->nconfigs++;
    return 0;
}

static int check_metadata_name(loader_t *L, yyjson_val *obj, const char **name)
{
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    yyjson_val *v;
    const char *msg;

    if (!absent(meta) && !yyjson_is_obj(meta)) {
        return fail(L, "metadata: must be an object");
    }
    v = yyjson_obj_get(meta, "name");
    if (!absent(v) && !yyjson_is_str(v)) {
        return fail(L, "metadata.name: must be a string");
    }
    if (!yyjson_is_str(v) || yyjson_get_len(v) == 0) {
        return fail(L, "metadata.name: Required value: name or generateName is required");
    }
    msg = dns1123_subdomain_problem(yyjson_get_str(v), yyjson_get_len(v));
    if (msg != NULL) {
        return fail(L, "metadata.name: Invalid value: %s: %s", adm_json_text(L->a, v), msg);
    }
    *name = yyjson_get_str(v);
    return 0;
}

static int load_config(loader_t *L, yyjson_val *obj, const char *label, const char *item_kind)
{
    static const char *const members[] = {"apiVersion", "kind", "metadata", "webhooks", NULL};
    yyjson_val *kind = yyjson_obj_get(obj, "kind");
    yyjson_val *api = yyjson_obj_get(obj, "apiVersion");
    yyjson_val *hooks;
    const char *kind_name;
    config_t c = {0};
    int rc;

    L->obj = label;
    if (!yyjson_is_obj(obj)) {
        return fail(L, "must be an object (a webhook configuration)");
    }
    if (item_kind != NULL) {
        if (!absent(kind) && !str_is(kind, item_kind)) {
            return fail(L, "kind: Unsupported value: %s: supported values: \"%s\"", adm_json_text(L->a, kind),
                        item_kind);
        }
        kind_name = item_kind;
    } else if (str_is(kind, webhook_kinds[0]) || str_is(kind, webhook_kinds[1])) {
        kind_name = yyjson_get_str(kind);
    } else {
        return fail(L, "kind: %s%s: supported values: \"%s\", \"%s\" (or a List of them)",
                    absent(kind) ? "Required value" : "Unsupported value: ",
                    absent(kind) ? "" : adm_json_text(L->a, kind), webhook_kinds[0], webhook_kinds[1]);
    }
    c.type = strcmp(kind_name, webhook_kinds[0]) == 0 ? ADM_WEBHOOK_MUTATING : ADM_WEBHOOK_VALIDATING;
    if (!str_is(api, API_VERSION) && !(item_kind != NULL && absent(api))) {
        return fail(L, "apiVersion: %s%s: supported values: \"" API_VERSION "\"",
                    absent(api) ? "Required value" : "Unsupported value: ",
                    absent(api) ? "" : adm_json_text(L->a, api));
    }
    L->obj = adm_arena_printf(L->a, "%s %s", label, kind_name);
    if (L->obj == NULL) {
        return nomem(L);
    }
    if ((rc = check_metadata_name(L, obj, &c.name)) != 0) {
        return rc;
    }
    L->obj = adm_arena_printf(L->a, "%s \"%s\"", kind_name, c.name);
    if (L->obj == NULL) {
        return nomem(L);
    }
    if ((rc = check_members(L, obj, members, "")) != 0) {
        return rc;
    }
    hooks = yyjson_obj_get(obj, "webhooks");
    if (!absent(hooks) && !yyjson_is_arr(hooks)) {
        return fail(L, "webhooks: must be an array");
    }
    c.file = L->file;
    c.hooks = adm_arena_calloc(L->a, yyjson_arr_size(hooks) + 1, sizeof(*c.hooks));
    if (c.hooks == NULL) {
        return nomem(L);
    }
    for (size_t i = 0; i < yyjson_arr_size(hooks); i++) {
        adm_webhook_t *h = &c.hooks[i];
        size_t same = 0;

        if ((rc = parse_webhook(L, c.type, i, yyjson_arr_get(hooks, i), h)) != 0) {
            return rc;
        }
        for (size_t j = 0; j < i; j++) {
            same += strcmp(c.hooks[j].name, h->name) == 0;
        }
        if (same > 0) {
            return fail(L, "webhooks[%zu].name: Duplicate value: \"%s\"", i, h->name);
        }
        h->config_name = c.name;
        h->id = adm_arena_printf(L->a, "%s/%s/%zu", c.name, h->name, same);
        if (h->id == NULL) {
            return nomem(L);
        }
        if ((rc = warn_equivalent(L, h, i)) != 0) {
            return rc;
        }
        c.nhooks++;
    }
    return add_config(L, &c);
}

static int load_list(loader_t *L, yyjson_val *obj, const char *label)
{
    static const char *const members[] = {"apiVersion", "kind", "metadata", "items", NULL};
    const char *kind = yyjson_get_str(yyjson_obj_get(obj, "kind"));
    yyjson_val *api = yyjson_obj_get(obj, "apiVersion");
    const char *want_api = strcmp(kind, "List") == 0 ? "v1" : API_VERSION;
    /* Items of a typed list may leave out their kind and apiVersion; a plain List's may not. */
    const char *item_kind = strcmp(kind, "List") == 0                               ? NULL
                            : strcmp(kind, "MutatingWebhookConfigurationList") == 0 ? webhook_kinds[0]
                                                                                    : webhook_kinds[1];
    yyjson_val *items;
    int rc;

    L->obj = label;
    if (!str_is(api, want_api)) {
        return fail(L, "apiVersion: %s%s: supported values for kind %s: \"%s\"",
                    absent(api) ? "Required value" : "Unsupported value: ",
                    absent(api) ? "" : adm_json_text(L->a, api), kind, want_api);
    }
    if ((rc = check_members(L, obj, members, "")) != 0) {
        return rc;
    }
    items = yyjson_obj_get(obj, "items");
    if (!absent(items) && !yyjson_is_arr(items)) {
        return fail(L, "items: must be an array");
    }
    for (size_t i = 0; i < yyjson_arr_size(items); i++) {
        yyjson_val *item = yyjson_arr_get(items, i);
        const char *item_label = adm_arena_printf(L->a, "%s items[%zu]", label, i);

        if (item_label == NULL) {
            return nomem(L);
        }
        if ((rc = load_config(L, item, item_label, item_kind)) != 0) {
            return rc;
        }
    }
    return 0;
}

static bool is_list_kind(const char *kind)
{
    return strcmp(kind, "List") == 0 || strcmp(kind, "MutatingWebhookConfigurationList") == 0 ||
           strcmp(kind, "ValidatingWebhookConfigurationList") == 0;
}

/* One file of --webhook-config (adm_fs_walk's callback). */
static int load_file(void *arg, const char *path)
{
    loader_t *L = arg;
    char sub[512];
    char *data;
    size_t len, ndocs;
    yyjson_val **docs;
    int rc;

    L->file = adm_arena_strndup(L->a, path, strlen(path));
    L->obj = NULL;
    if (L->file == NULL) {
        return nomem(L);
    }
    rc = adm_fs_read(L->a, path, ADM_WEBHOOK_CONFIG_MAX_BYTES, &data, &len, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return nomem(L);
    }
    if (rc != 0) {
        snprintf(L->err, L->err_len, "%s", sub);
        one_line(L->err);
        return rc == ADM_ETOOBIG ? ADM_EINVAL : ADM_EIO;
    }
    rc = adm_yaml_parse(L->a, data, len, &docs, &ndocs, sub, sizeof(sub));
    if (rc == ADM_ENOMEM) {
        return nomem(L);
    }
    if (rc != 0) {
        return fail(L, "%s", sub);
    }
    for (size_t d = 0; d < ndocs; d++) {
        const char *label = adm_arena_printf(L->a, "document %zu", d + 1);
        yyjson_val *kind = yyjson_obj_get(docs[d], "kind");

        if (label == NULL) {
            return nomem(L);
        }
        if (yyjson_is_str(kind) && is_list_kind(yyjson_get_str(kind))) {
            rc = load_list(L, docs[d], label);
        } else {
            rc = load_config(L, docs[d], label, NULL);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int cmp_configs(const void *x, const void *y)
{
    const config_t *a = x, *b = y;
    int c = strcmp(a->name, b->name);

    if (c != 0) {
        return c;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int build_lists(loader_t *L)
{
    adm_webhook_set_t *set = L->set;
    size_t nm = 0, nv = 0;

    if (L->nconfigs > 0) {
        qsort(L->configs, L->nconfigs, sizeof(*L->configs), cmp_configs);
    }
    for (size_t i = 0; i < L->nconfigs; i++) {
        *(L->configs[i].type == ADM_WEBHOOK_MUTATING ? &nm : &nv) += L->configs[i].nhooks;
    }
    set->mutating = adm_arena_calloc(L->a, nm + 1, sizeof(*set->mutating));
    set->validating = adm_arena_calloc(L->a, nv + 1, sizeof(*set->validating));
    if (set->mutating == NULL || set->validating == NULL) {
        return nomem(L);
    }
    for (size_t i = 0; i < L->nconfigs; i++) {
        const config_t *c = &L->configs[i];
        adm_webhook_t *list = c->type == ADM_WEBHOOK_MUTATING ? set->mutating : set->validating;
        size_t *count = c->type == ADM_WEBHOOK_MUTATING ? &set->nmutating : &set->nvalidating;

        for (size_t j = 0; j < c->nhooks; j++) {
            list[*count] = c->hooks[j];
            list[*count].index = *count;
            (*count)++;
        }
    }
    return 0;
}

int adm_webhook_set_load(const char *const *paths, size_t npaths, bool allow_insecure_urls,
                         adm_webhook_set_t **out, char *err, size_t err_len)
{
    adm_arena_t *a = adm_arena_create(65536);
    loader_t L = {0};
    int rc = 0;

    *out = NULL;
    if (err_len > 0) {
        err[0] = '\0';
    }
    if (a == NULL || (L.set = adm_arena_calloc(a, 1, sizeof(*L.set))) == NULL) {
        adm_arena_destroy(a);
        if (err_len > 0) {
            snprintf(err, err_len, "webhook configuration: out of memory");
        }
        return ADM_ENOMEM;
    }
    L.set->arena = a;
    L.a = a;
    L.allow_insecure = allow_insecure_urls;
    L.err = err;
    L.err_len = err_len;
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        L.file = paths[i];
        L.obj = NULL;
        rc = adm_fs_walk(a, paths[i], adm_fs_config_suffixes, load_file, &L, err, err_len);
        if (rc == ADM_ENOMEM && err_len > 0 && err[0] == '\0') {
            snprintf(err, err_len, "webhook configuration: out of memory");
        }
        if (rc == ADM_EIO) {
            one_line(err);
        }
    }
    if (rc == 0) {
        rc = build_lists(&L);
    }
    if (rc != 0) {
        adm_arena_destroy(a);
        return rc;
    }
    *out = L.set;
    return 0;
}

void adm_webhook_set_free(adm_webhook_set_t *set)
{
    if (set != NULL) {
        adm_arena_destroy(set->arena);
    }
}

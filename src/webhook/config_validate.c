/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube-apiserver's validation of one webhook of a MutatingWebhookConfiguration or
 * ValidatingWebhookConfiguration (pkg/apis/admissionregistration/validation,
 * k8s.io/apiserver/pkg/util/webhook), with the v1 defaults applied as each field is read: name,
 * rules, clientConfig (URL or service, caBundle), policies, selectors, admissionReviewVersions;
 * and, once a webhook stands, the load-time warning for matchPolicy Equivalent (D6). Texts of
 * field errors follow kube's (apimachinery's field.Error) so a message can be searched for
 * upstream; only the first error is reported where kube lists them all.
 */
#include "config_internal.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/util.h"
#include "adm/webhook/api_equivalents.h"
#include "adm/webhook/selector.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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
const char *adm__cfg_dns1123_subdomain_problem(const char *s, size_t n)
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

/* ---- rules ---- */

/*
 * kube's validateResources. Its "* with other subresource-less entries" test looks only at the
 * last subresource-less entry (["*", "pods"] is refused, ["pods", "*"] accepted); admitd follows
 * it so that every configuration kube-apiserver accepts also loads here.
 */
static int check_resources(adm__cfg_loader_t *L, const char *where, yyjson_val *list, const char *const *res,
                           size_t n)
{
    bool double_star = false, single_star = false, plain = false;

    if (n == 0) {
        return adm__cfg_fail(L, "%s.resources: Required value", where);
    }
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(res[i], '/');
        size_t rlen;

        if (res[i][0] == '\0') {
            return adm__cfg_fail(L, "%s.resources[%zu]: Required value", where, i);
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
                return adm__cfg_fail(
                    L, "%s.resources[%zu]: Invalid value: %s: if '%.*s/*' is present, must not specify %s",
                    where, i, adm_json_text(L->a, yyjson_arr_get(list, i)), (int)rlen, res[i], res[i]);
            }
        }
        for (size_t j = 0; j < i; j++) {
            const char *js = strchr(res[j], '/');

            if (js != NULL && js - res[j] == 1 && res[j][0] == '*' && strcmp(js + 1, slash + 1) == 0) {
                return adm__cfg_fail(
                    L, "%s.resources[%zu]: Invalid value: %s: if '*/%s' is present, must not specify %s",
                    where, i, adm_json_text(L->a, yyjson_arr_get(list, i)), slash + 1, res[i]);
            }
        }
    }
    if (n > 1 && double_star) {
        return adm__cfg_fail(
            L, "%s.resources: Invalid value: %s: if '*/*' is present, must not specify other resources",
            where, adm_json_text(L->a, list));
    }
    if (single_star && plain) {
        return adm__cfg_fail(
            L,
            "%s.resources: Invalid value: %s: if '*' is present, must not specify other resources without "
            "subresources",
            where, adm_json_text(L->a, list));
    }
    return 0;
}

/*
 * operations, apiGroups or apiVersions of a rule: a list of strings that is required and holds
 * "*" only alone (what names the field in kube's message: "operations", "API groups", ...).
 */
static int get_rule_list(adm__cfg_loader_t *L, const char *where, yyjson_val *rule, const char *field,
                         const char *what, const char ***list, size_t *n)
{
    int rc = adm__cfg_get_str_list(L, rule, where, field, list, n);

    if (rc != 0) {
        return rc;
    }
    if (*n == 0) {
        return adm__cfg_fail(L, "%s.%s: Required value", where, field);
    }
    if (*n > 1 && has_star(*list, *n)) {
        return adm__cfg_fail(L, "%s.%s: Invalid value: %s: if '*' is present, must not specify other %s",
                             where, field, adm_json_text(L->a, yyjson_obj_get(rule, field)), what);
    }
    return 0;
}

static int parse_operations(adm__cfg_loader_t *L, const char *where, yyjson_val *rule, adm_rule_t *r)
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
    int rc = get_rule_list(L, where, rule, "operations", "operations", &list, &n);

    if (rc != 0) {
        return rc;
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
            return adm__cfg_fail(
                L,
                "%s.operations[%zu]: Unsupported value: %s: supported values: \"*\", \"CONNECT\", "
                "\"CREATE\", "
                "\"DELETE\", \"UPDATE\"",
                where, i, adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(rule, "operations"), i)));
        }
    }
    return 0;
}

static int parse_rule(adm__cfg_loader_t *L, const char *hook_where, size_t i, yyjson_val *rule, adm_rule_t *r)
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
        return adm__cfg_fail(L, "%s: must be an object", where);
    }
    rc = adm__cfg_check_members(L, rule, members, where);
    if (rc == 0) {
        rc = parse_operations(L, where, rule, r);
    }
    if (rc == 0) {
        rc = get_rule_list(L, where, rule, "apiGroups", "API groups", &r->api_groups, &r->napi_groups);
    }
    if (rc == 0) {
        rc =
            get_rule_list(L, where, rule, "apiVersions", "API versions", &r->api_versions, &r->napi_versions);
    }
    if (rc != 0) {
        return rc;
    }
    for (size_t k = 0; k < r->napi_versions; k++) {
        if (r->api_versions[k][0] == '\0') {
            return adm__cfg_fail(L, "%s.apiVersions[%zu]: Required value", where, k);
        }
    }
    rc = adm__cfg_get_str_list(L, rule, where, "resources", &resources, &r->nresources);
    if (rc == 0) {
        rc = check_resources(L, where, yyjson_obj_get(rule, "resources"), resources, r->nresources);
    }
    if (rc != 0) {
        return rc;
    }
    r->resources = adm_arena_calloc(L->a, r->nresources, sizeof(*r->resources));
    if (r->resources == NULL) {
        return adm__cfg_nomem(L);
    }
    for (size_t k = 0; k < r->nresources; k++) {
        const char *slash = strchr(resources[k], '/');

        r->resources[k].resource =
            slash == NULL ? resources[k]
                          : adm_arena_strndup(L->a, resources[k], (size_t)(slash - resources[k]));
        r->resources[k].subresource = slash == NULL ? "" : slash + 1;
        if (r->resources[k].resource == NULL) {
            return adm__cfg_nomem(L);
        }
    }
    rc = adm__cfg_get_enum(L, rule, where, "scope", scopes, 3, &scope);
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
static bool scheme_allowed(const adm__cfg_loader_t *L, const char *url, size_t scheme_len)
{
    return (scheme_len == 5 && strncasecmp(url, "https", 5) == 0) ||
           (L->allow_insecure && scheme_len == 4 && strncasecmp(url, "http", 4) == 0);
}

static int scheme_error(adm__cfg_loader_t *L, const char *where, const char *url, size_t scheme_len)
{
    return adm__cfg_fail(
        L, "%s: Invalid value: \"%.*s\": %s" DESIRED_FORM, where, (int)scheme_len, url,
        L->allow_insecure
            ? "'https' and 'http' (--allow-insecure-webhook-urls) are the only allowed URL schemes"
            : "'https' is the only allowed URL scheme");
}

/*
 * kube's ValidateWebhookURL over Go's url.Parse, reduced to what a webhook URL can hold. One
 * deviation: a lone trailing "?" (an empty query Go accepts) is refused, since admitd appends
 * "?timeout=" to the URL as written.
 */
static int check_url(adm__cfg_loader_t *L, const char *where, const char *url)
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
            return adm__cfg_fail(
                L,
                "%s: Required value: url must be a valid URL: a space or control character at byte "
                "%zu" DESIRED_FORM,
                where, (size_t)(p - url));
        }
    }
    if (url[0] == ':') {
        return adm__cfg_fail(
            L, "%s: Required value: url must be a valid URL: missing protocol scheme" DESIRED_FORM, where);
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
                return adm__cfg_fail(
                    L, "%s: Required value: url must be a valid URL: missing ']' in host" DESIRED_FORM,
                    where);
            }
            for (const char *p = port; p < host + host_len; p++) {
                if ((p == port && *p != ':') || (p > port && !is_digit(*p))) {
                    return adm__cfg_fail(
                        L,
                        "%s: Required value: url must be a valid URL: invalid port \"%.*s\" after "
                        "host" DESIRED_FORM,
                        where, (int)(host + host_len - port), port);
                }
            }
        } else {
            const char *colon = NULL;

            for (size_t i = 0; i < host_len; i++) {
                if (bad_host_char((unsigned char)host[i])) {
                    return adm__cfg_fail(
                        L,
                        "%s: Required value: url must be a valid URL: invalid character \"%c\" in host "
                        "name" DESIRED_FORM,
                        where, host[i]);
                }
                colon = host[i] == ':' ? host + i : colon;
            }
            for (const char *p = colon != NULL ? colon + 1 : host + host_len; p < host + host_len; p++) {
                if (!is_digit(*p)) {
                    return adm__cfg_fail(
                        L,
                        "%s: Required value: url must be a valid URL: invalid port \"%.*s\" after "
                        "host" DESIRED_FORM,
                        where, (int)(host + host_len - colon), colon);
                }
            }
        }
        if (!valid_escapes(auth + auth_len, (size_t)(url + n - (auth + auth_len)))) {
            return adm__cfg_fail(
                L, "%s: Required value: url must be a valid URL: invalid URL escape" DESIRED_FORM, where);
        }
        if (!scheme_allowed(L, url, scheme_len)) {
            return scheme_error(L, where, url, scheme_len);
        }
        if (host_len == 0) {
            return adm__cfg_fail(L, "%s: Invalid value: \"\": host must be specified" DESIRED_FORM, where);
        }
        if (at != NULL) {
            /* Only the user name is echoed: the rest may be a password. */
            size_t ulen = strcspn(auth, ":@");

            return adm__cfg_fail(
                L, "%s: Invalid value: \"%.*s%s\": user information is not permitted in the URL", where,
                (int)ulen, auth, auth[ulen] == ':' ? ":xxxxx" : "");
        }
    } else {
        if (!scheme_allowed(L, url, scheme_len)) {
            return scheme_error(L, where, url, scheme_len);
        }
        return adm__cfg_fail(L, "%s: Invalid value: \"\": host must be specified" DESIRED_FORM, where);
    }
    if (hash != NULL) {
        return adm__cfg_fail(L, "%s: Invalid value: \"%s\": fragments are not permitted in the URL", where,
                             hash + 1);
    }
    if (q != NULL) {
        return adm__cfg_fail(L, "%s: Invalid value: \"%.*s\": query parameters are not permitted in the URL",
                             where, (int)(url + n - q - 1), q + 1);
    }
    return 0;
}

/* kube's ValidateWebhookService path rules. */
static int check_service_path(adm__cfg_loader_t *L, const char *where, yyjson_val *pathv, const char *path)
{
    size_t n = strlen(path), start, end, seg = 0;

    if (n == 0 || strcmp(path, "/") == 0) {
        return 0;
    }
    if (strcmp(path, "//") == 0) {
        return adm__cfg_fail(L, "%s.path: Invalid value: %s: segment[0] may not be empty", where,
                             adm_json_text(L->a, pathv));
    }
    if (path[0] != '/') {
        return adm__cfg_fail(L, "%s.path: Invalid value: %s: must start with a '/'", where,
                             adm_json_text(L->a, pathv));
    }
    end = path[n - 1] == '/' ? n - 1 : n;
    for (start = 1; start <= end; seg++) {
        const char *slash = memchr(path + start, '/', end - start);
        size_t stop = slash != NULL ? (size_t)(slash - path) : end;
        const char *msg;

        if (stop == start) {
            return adm__cfg_fail(L, "%s.path: Invalid value: %s: segment[%zu] may not be empty", where,
                                 adm_json_text(L->a, pathv), seg);
        }
        msg = adm__cfg_dns1123_subdomain_problem(path + start, stop - start);
        if (msg != NULL) {
            return adm__cfg_fail(L, "%s.path: Invalid value: %s: segment[%zu]: %s", where,
                                 adm_json_text(L->a, pathv), seg, msg);
        }
        start = stop + 1;
    }
    return 0;
}

static int parse_service(adm__cfg_loader_t *L, const char *cc_where, yyjson_val *v, adm_webhook_t *h)
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
        return adm__cfg_fail(L, "%s: must be an object with namespace, name, path and port", where);
    }
    rc = adm__cfg_check_members(L, v, members, where);
    if (rc == 0) {
        rc = adm__cfg_get_str(L, v, where, "namespace", &ns);
    }
    if (rc == 0) {
        rc = adm__cfg_get_str(L, v, where, "name", &name);
    }
    if (rc == 0) {
        rc = adm__cfg_get_str(L, v, where, "path", &path);
    }
    if (rc == 0) {
        rc = adm__cfg_get_int32(L, v, where, "port", &has_port, &port);
    }
    if (rc != 0) {
        return rc;
    }
    if (name == NULL || name[0] == '\0') {
        return adm__cfg_fail(L, "%s.name: Required value: service name is required", where);
    }
    if (ns == NULL || ns[0] == '\0') {
        return adm__cfg_fail(L, "%s.namespace: Required value: service namespace is required", where);
    }
    if (!has_port) {
        port = 443;
    }
    if (port < 1 || port > 65535) {
        return adm__cfg_fail(
            L, "%s.port: Invalid value: %lld: port is not valid: must be between 1 and 65535, inclusive",
            where, (long long)port);
    }
    if (path != NULL) {
        rc = check_service_path(L, where, yyjson_obj_get(v, "path"), path);
        if (rc != 0) {
            return rc;
        }
    }
    svc = adm_arena_calloc(L->a, 1, sizeof(*svc));
    if (svc == NULL) {
        return adm__cfg_nomem(L);
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
static int parse_ca_bundle(adm__cfg_loader_t *L, const char *where, const char *s, adm_webhook_t *h)
{
    size_t n = strlen(s), out_len = 0, q = 0, pad = 0;
    unsigned char *out = adm_arena_alloc(L->a, n / 4 * 3 + 4);
    uint32_t acc = 0;

    if (out == NULL) {
        return adm__cfg_nomem(L);
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
            return adm__cfg_fail(
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
        return adm__cfg_fail(
            L, "%s.caBundle: illegal base64 data at input byte %zu (caBundle is base64 of the PEM text)",
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

static int parse_client_config(adm__cfg_loader_t *L, const char *hook_where, yyjson_val *cc, adm_webhook_t *h)
{
    static const char *const members[] = {"url", "service", "caBundle", NULL};
    char where[96];
    const char *url, *ca;
    yyjson_val *svc;
    int rc;

    snprintf(where, sizeof(where), "%s.clientConfig", hook_where);
    if (absent(cc)) {
        return adm__cfg_fail(L, "%s: Required value: exactly one of url or service is required", where);
    }
    if (!yyjson_is_obj(cc)) {
        return adm__cfg_fail(L, "%s: must be an object with url or service, and caBundle", where);
    }
    rc = adm__cfg_check_members(L, cc, members, where);
    if (rc == 0) {
        rc = adm__cfg_get_str(L, cc, where, "url", &url);
    }
    if (rc == 0) {
        rc = adm__cfg_get_str(L, cc, where, "caBundle", &ca);
    }
    if (rc != 0) {
        return rc;
    }
    svc = yyjson_obj_get(cc, "service");
    if ((url == NULL) == absent(svc)) {
        return adm__cfg_fail(L, "%s: Required value: exactly one of url or service is required", where);
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

static int parse_selector(adm__cfg_loader_t *L, const char *where, yyjson_val *hook, const char *field,
                          adm_selector_t *out)
{
    const char *problem = NULL;
    int rc = adm_selector_parse(L->a, yyjson_obj_get(hook, field), out, &problem);

    if (rc == ADM_ENOMEM) {
        return adm__cfg_nomem(L);
    }
    if (rc != 0) {
        /* problem starts with a member name (".matchLabels...") or is about the selector itself */
        bool member = problem != NULL && strncmp(problem, "match", 5) == 0;

        return adm__cfg_fail(L, "%s.%s%s%s", where, field, member ? "." : ": ",
                             problem != NULL ? problem : "invalid");
    }
    return 0;
}

static int parse_review_versions(adm__cfg_loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    const char **list;
    size_t n;
    bool found = false;
    int rc = adm__cfg_get_str_list(L, hook, where, "admissionReviewVersions", &list, &n);

    if (rc != 0) {
        return rc;
    }
    if (n == 0) {
        return adm__cfg_fail(L, "%s.admissionReviewVersions: Required value: must specify one of v1, v1beta1",
                             where);
    }
    for (size_t i = 0; i < n; i++) {
        const char *msg;

        for (size_t j = 0; j < i; j++) {
            if (strcmp(list[i], list[j]) == 0) {
                return adm__cfg_fail(
                    L, "%s.admissionReviewVersions[%zu]: Invalid value: %s: duplicate version", where, i,
                    adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(hook, "admissionReviewVersions"), i)));
            }
        }
        msg = dns1035_label_problem(list[i]);
        if (msg != NULL) {
            return adm__cfg_fail(
                L, "%s.admissionReviewVersions[%zu]: Invalid value: %s: %s", where, i,
                adm_json_text(L->a, yyjson_arr_get(yyjson_obj_get(hook, "admissionReviewVersions"), i)), msg);
        }
        if (!found && (strcmp(list[i], "v1") == 0 || strcmp(list[i], "v1beta1") == 0)) {
            h->review_version = strcmp(list[i], "v1") == 0 ? ADM_REVIEW_V1 : ADM_REVIEW_V1BETA1;
            found = true;
        }
    }
    if (!found) {
        return adm__cfg_fail(
            L, "%s.admissionReviewVersions: Invalid value: %s: must include at least one of v1, v1beta1",
            where, adm_json_text(L->a, yyjson_obj_get(hook, "admissionReviewVersions")));
    }
    return 0;
}

static int parse_name(adm__cfg_loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    const char *name, *msg;
    size_t dots = 0;
    int rc = adm__cfg_get_str(L, hook, where, "name", &name);

    if (rc != 0) {
        return rc;
    }
    if (name == NULL || name[0] == '\0') {
        return adm__cfg_fail(L, "%s.name: Required value", where);
    }
    msg = adm__cfg_dns1123_subdomain_problem(name, strlen(name));
    if (msg != NULL) {
        return adm__cfg_fail(L, "%s.name: Invalid value: %s: %s", where,
                             adm_json_text(L->a, yyjson_obj_get(hook, "name")), msg);
    }
    for (const char *p = name; *p != '\0'; p++) {
        dots += *p == '.';
    }
    if (dots < 2) {
        return adm__cfg_fail(
            L,
            "%s.name: Invalid value: %s: should be a domain with at least three segments separated by dots",
            where, adm_json_text(L->a, yyjson_obj_get(hook, "name")));
    }
    h->name = name;
    return 0;
}

static int parse_rules(adm__cfg_loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    yyjson_val *rules = yyjson_obj_get(hook, "rules");
    int rc;

    if (absent(rules)) {
        return 0;
    }
    if (!yyjson_is_arr(rules)) {
        return adm__cfg_fail(L, "%s.rules: must be an array", where);
    }
    h->rules = adm_arena_calloc(L->a, yyjson_arr_size(rules) + 1, sizeof(*h->rules));
    if (h->rules == NULL) {
        return adm__cfg_nomem(L);
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
static int parse_policies(adm__cfg_loader_t *L, const char *where, yyjson_val *hook, adm_webhook_t *h)
{
    static const char *const failure[] = {"Fail", "Ignore"};
    static const char *const match[] = {"Equivalent", "Exact"};
    static const char *const side_effects[] = {"None", "NoneOnDryRun", "Some", "Unknown"};
    static const adm_side_effects_t side_effect_values[] = {ADM_SIDE_EFFECTS_NONE,
                                                            ADM_SIDE_EFFECTS_NONE_ON_DRY_RUN,
                                                            ADM_SIDE_EFFECTS_SOME, ADM_SIDE_EFFECTS_UNKNOWN};
    const char *se;
    int idx, rc;
    bool has_timeout;
    int64_t timeout = 10;

    rc = adm__cfg_get_enum(L, hook, where, "failurePolicy", failure, 2, &idx);
    if (rc != 0) {
        return rc;
    }
    h->failure_policy = idx == 1 ? ADM_FAILURE_IGNORE : ADM_FAILURE_FAIL;
    rc = adm__cfg_get_enum(L, hook, where, "matchPolicy", match, 2, &idx);
    if (rc != 0) {
        return rc;
    }
    h->match_policy = idx == 1 ? ADM_MATCH_EXACT : ADM_MATCH_EQUIVALENT;
    rc = adm__cfg_get_str(L, hook, where, "sideEffects", &se);
    if (rc != 0) {
        return rc;
    }
    if (se == NULL) {
        return adm__cfg_fail(L, "%s.sideEffects: Required value: must specify one of None, NoneOnDryRun",
                             where);
    }
    /*
     * Some and Unknown survive on objects kept from v1beta1 (a create refuses them, an update keeps
     * them), so a configuration exported from such a cluster carries them: load it, with a warning,
     * and refuse dry-run requests to the webhook as kube-apiserver does.
     */
    rc = adm__cfg_get_enum(L, hook, where, "sideEffects", side_effects, 4, &idx);
    if (rc != 0) {
        return rc;
    }
    h->side_effects = side_effect_values[idx];
    if (idx >= 2) {
        rc = adm__cfg_add_warning(
            L, adm_arena_printf(L->a,
                                "%s: %s: %s.sideEffects: %s: kube-apiserver accepts it only "
                                "on objects kept from v1beta1; dry-run requests to this "
                                "webhook are refused",
                                L->file, L->obj, where, side_effects[idx]));
        if (rc != 0) {
            return rc;
        }
    }
    rc = adm__cfg_get_int32(L, hook, where, "timeoutSeconds", &has_timeout, &timeout);
    if (rc != 0) {
        return rc;
    }
    if (has_timeout && (timeout < 1 || timeout > 30)) {
        return adm__cfg_fail(
            L, "%s.timeoutSeconds: Invalid value: %lld: the timeout value must be between 1 and 30 seconds",
            where, (long long)timeout);
    }
    h->timeout_seconds = has_timeout ? (uint32_t)timeout : 10;
    return 0;
}

int adm__cfg_parse_webhook(adm__cfg_loader_t *L, adm_webhook_type_t type, size_t i, yyjson_val *hook,
                           adm_webhook_t *h)
{
    /* A validating webhook has every member of a mutating one but the first. */
    static const char *const members[] = {"reinvocationPolicy",
                                          "name",
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
        return adm__cfg_fail(L, "%s: must be an object", where);
    }
    rc = adm__cfg_check_members(L, hook, type == ADM_WEBHOOK_MUTATING ? members : members + 1, where);
    if (rc == 0) {
        rc = parse_name(L, where, hook, h);
    }
    if (rc == 0) {
        rc = parse_rules(L, where, hook, h);
    }
    if (rc == 0) {
        rc = parse_policies(L, where, hook, h);
    }
    if (rc == 0) {
        rc = parse_selector(L, where, hook, "namespaceSelector", &h->namespace_selector);
    }
    if (rc == 0) {
        rc = parse_selector(L, where, hook, "objectSelector", &h->object_selector);
    }
    if (rc != 0) {
        return rc;
    }
    if (type == ADM_WEBHOOK_MUTATING) {
        rc = adm__cfg_get_enum(L, hook, where, "reinvocationPolicy", reinvocation, 2, &idx);
        if (rc != 0) {
            return rc;
        }
        h->reinvocation = idx == 0 ? ADM_REINVOKE_IF_NEEDED : ADM_REINVOKE_NEVER;
    }
    rc = parse_client_config(L, where, yyjson_obj_get(hook, "clientConfig"), h);
    if (rc != 0) {
        return rc;
    }
    conds = yyjson_obj_get(hook, "matchConditions");
    if (!absent(conds) && !yyjson_is_arr(conds)) {
        return adm__cfg_fail(L, "%s.matchConditions: must be an array", where);
    }
    if (yyjson_arr_size(conds) > 0) {
        return adm__cfg_fail(
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
 * rules.Matcher that match.c applies at run time, for a resource of the equivalence table.
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
static const char *gvr_text(adm__cfg_loader_t *L, const adm_gvr_t *g)
{
    return adm_arena_printf(L->a, "%s/%s %s", g->group[0] == '\0' ? "\"\"" : g->group, g->version,
                            g->resource);
}

/* list + ", " + "<m> (via <via>)"; NULL when out of memory. */
static const char *append_member(adm__cfg_loader_t *L, const char *list, const adm_gvr_t *m,
                                 const adm_gvr_t *via)
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
 * requests: another version of the same group and resource, or another group of the table, is a
 * call failure, failurePolicy deciding (match.c). Resources outside the table (custom resources among them)
 * are left to the run-time D6 check, and a rule with "*" versions and groups reaches every member alike.
 */
int adm__cfg_warn_equivalent(adm__cfg_loader_t *L, const adm_webhook_t *h, size_t i)
{
    size_t nclasses;
    const adm_api_class_t *classes = adm_api_equivalent_classes(&nclasses);
    const char *fail_call = NULL;  /* same group and resource: the call fails */
    const char *not_called = NULL; /* another group: the call fails as well */
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
                return adm__cfg_nomem(L);
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
            return adm__cfg_nomem(L);
        }
    }
    if (not_called != NULL) {
        not_called =
            adm_arena_printf(L->a,
                             "requests for %s match only through another group, where kube-apiserver "
                             "would call the webhook with a converted object, so the call fails and "
                             "failurePolicy decides (D6)",
                             not_called);
        if (not_called == NULL) {
            return adm__cfg_nomem(L);
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
        return adm__cfg_nomem(L);
    }
    adm__cfg_one_line(line);
    return adm__cfg_add_warning(L, line);
}

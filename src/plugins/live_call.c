/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugins' live calls to the API server (include/adm/plugins/live_call.h): one call per
 * request phase, its state in the request's arena, its answer parsed into that arena; or one paged
 * LIST per phase, whose pages are parsed into an arena of its own that holds one page at a time.
 */
#include "adm/plugins/live_call.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/lookup.h"

#include <errno.h>
#include <string.h>

typedef struct live_call_s {
    adm_attrs_t *attrs;
    adm_async_t *async;
    adm_call_t *call;
    const char *verb; /* "Get" or "Post", as Go's url.Error names the method */
    const char *path;
    adm_live_call_cb cb;
    void *arg;
} live_call_t;

static adm_api_client_t *request_api(adm_attrs_t *attrs)
{
    const adm_cluster_state_t *cs = adm_plugin_cluster(attrs);

    return cs != NULL ? adm_cluster_state_api(cs) : NULL;
}

bool adm_live_call_possible(adm_attrs_t *attrs)
{
    return request_api(attrs) != NULL;
}

static void on_cancel(void *arg)
{
    live_call_t *lc = arg;

    adm_call_cancel(lc->call);
}

static void on_answer(const adm_call_result_t *res, void *arg)
{
    live_call_t *lc = arg;
    adm_api_client_t *api = request_api(lc->attrs);
    yyjson_val *body = NULL;
    const char *err = NULL;

    lc->async->cancel = NULL;
    if (res->error == ADM_CALL_OK && res->body_len > 0) {
        yyjson_read_err jerr;
        yyjson_doc *doc = adm_json_read(lc->attrs->arena, (const char *)res->body, res->body_len, &jerr);

        body = doc != NULL ? yyjson_doc_get_root(doc) : NULL;
    } else if (res->error != ADM_CALL_OK) {
        const char *why = res->error == ADM_CALL_TIMEOUT ? "context deadline exceeded"
                          : res->detail != NULL          ? res->detail
                                                         : "EOF";

        err = adm_arena_printf(lc->attrs->arena, "%s \"%s%s\": %s", lc->verb,
                               api != NULL ? adm_api_client_server(api) : "", lc->path, why);
        if (err == NULL) {
            err = "out of memory";
        }
    }
    lc->cb(lc->attrs, lc->async, res, body, err, lc->arg);
}

int adm_live_call(adm_attrs_t *attrs, adm_async_t *async, const char *path, const char *json,
                  adm_live_call_cb cb, void *arg)
{
    adm_api_client_t *api = request_api(attrs);
    live_call_t *lc = adm_arena_calloc(attrs->arena, 1, sizeof(*lc));
    uint64_t now = adm_plugin_now_ms(attrs);
    uint64_t timeout = ADM_LIVE_CALL_TIMEOUT_MS;

    if (lc == NULL || api == NULL) {
        return ADM_ENOMEM;
    }
    if (async->deadline_ms > now && async->deadline_ms - now < timeout) {
        timeout = async->deadline_ms - now;
    }
    lc->attrs = attrs;
    lc->async = async;
    lc->verb = json != NULL ? "Post" : "Get";
    lc->path = adm_arena_strndup(attrs->arena, path, strlen(path));
    lc->cb = cb;
    lc->arg = arg;
    if (lc->path == NULL) {
        return ADM_ENOMEM;
    }
    lc->call = json != NULL ? adm_api_post(api, path, json, strlen(json), timeout, on_answer, lc, NULL)
                            : adm_api_get(api, path, timeout, on_answer, lc, NULL);
    if (lc->call == NULL) {
        return ADM_ENOMEM;
    }
    async->cancel = on_cancel;
    async->cancel_arg = lc;
    return ADM_AGAIN;
}

bool adm_live_namespace_name(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > 63) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
            return false;
        }
    }
    return name[0] != '-' && name[n - 1] != '-';
}

bool adm_live_subdomain_name(const char *name)
{
    size_t n = strlen(name);
    char prev = '.'; /* a label starts at the beginning */

    if (n == 0 || n > 253) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];

        if (c == '.' ? prev == '.' || prev == '-'
                     : !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && prev != '.'))) {
            return false;
        }
        prev = c;
    }
    return prev != '-' && prev != '.';
}

int adm_live_get_namespace(adm_attrs_t *attrs, adm_async_t *async, adm_live_call_cb cb, void *arg)
{
    const char *path = adm_arena_printf(attrs->arena, "/api/v1/namespaces/%s", attrs->req->namespace_);

    return path != NULL ? adm_live_call(attrs, async, path, NULL, cb, arg) : ADM_ENOMEM;
}

int adm_live_namespace_result(adm_attrs_t *attrs, const adm_call_result_t *res, yyjson_val *body,
                              const char *err, adm_status_t *st, yyjson_val **ns)
{
    *ns = NULL;
    if (err != NULL) {
        return adm_status_internal(st, attrs->arena, "%s", err);
    }
    if (res->status == 404) {
        return adm_status_not_found(st, attrs->arena, "", "namespaces", attrs->req->namespace_);
    }
    if (res->status / 100 != 2 || body == NULL) {
        return adm_status_internal(st, attrs->arena, "%s", adm_live_call_error(attrs, res, body));
    }
    *ns = body;
    return ADM_OK;
}

const char *adm_live_call_error(adm_attrs_t *attrs, const adm_call_result_t *res, yyjson_val *body)
{
    const char *msg = adm_json_str(body, "message");

    if (strcmp(adm_json_str(body, "kind"), "Status") == 0 && msg[0] != '\0') {
        return msg;
    }
    return adm_arena_printf(attrs->arena,
                            "an error on the server (\"unknown\") has prevented the request from succeeding "
                            "(status %d)",
                            res->status);
}

int adm_live_call_refuse(adm_attrs_t *attrs, adm_status_t *st, const adm_call_result_t *res, yyjson_val *body,
                         const char *err)
{
    adm_arena_t *a = attrs->arena;
    yyjson_val *code = adm_json_get(body, "code"), *details = adm_json_get(body, "details");
    const char *msg = err;

    memset(st, 0, sizeof(*st));
    st->code = 500;
    if (err == NULL && strcmp(adm_json_str(body, "kind"), "Status") == 0 &&
        *adm_json_str(body, "message") != '\0') {
        const char *reason = adm_json_str(body, "reason");

        st->code =
            yyjson_is_int(code) && yyjson_get_int(code) > 0 ? (int32_t)yyjson_get_int(code) : res->status;
        st->reason = *reason != '\0' ? adm_arena_strndup(a, reason, strlen(reason)) : NULL;
        msg = adm_json_str(body, "message");
        if (yyjson_is_obj(details)) {
            const char *text = adm_json_text(a, details);
            yyjson_read_err rerr;
            yyjson_doc *d = text != NULL ? adm_json_read(a, text, strlen(text), &rerr) : NULL;

            if (d == NULL) {
                return adm_status_nomem(st);
            }
            st->details = yyjson_doc_get_root(d);
        }
        if (*reason != '\0' && st->reason == NULL) {
            return adm_status_nomem(st);
        }
    } else if (err == NULL) {
        st->code = res->status;
        msg = adm_live_call_error(attrs, res, body);
    }
    st->message = msg != NULL ? adm_arena_strndup(a, msg, strlen(msg)) : NULL;
    return st->message != NULL ? ADM_DECLINED : adm_status_nomem(st);
}

/* ---- paged LIST ---------------------------------------------------------------------------- */

typedef struct live_list_s {
    adm_attrs_t *attrs;
    adm_async_t *async;
    adm_call_t *call;
    adm_arena_t *scratch; /* the page being taken; NULL once the list is over */
    const char *path;     /* the collection */
    const char *url;      /* the page asked for, for error texts */
    unsigned limit;
    uint64_t deadline_ms;
    adm_live_page_cb page;
    adm_live_list_cb done;
    void *arg;
} live_list_t;

static void list_release(live_list_t *ll)
{
    adm_arena_destroy(ll->scratch);
    ll->scratch = NULL;
}

/* The list is over: done may end the request, so nothing of ll is touched after it. */
static void list_end(live_list_t *ll, int rc, const char *err)
{
    ll->async->cancel = NULL;
    list_release(ll);
    ll->done(ll->attrs, ll->async, rc, err, ll->arg);
}

static void on_list_cancel(void *arg)
{
    live_list_t *ll = arg;

    adm_call_cancel(ll->call);
    ll->call = NULL;
    list_release(ll);
}

/* Go's url.Error for the page asked for: `Get "https://host/api/...": why`. */
static const char *list_error(live_list_t *ll, const char *why)
{
    adm_api_client_t *api = request_api(ll->attrs);

    return adm_arena_printf(ll->attrs->arena, "Get \"%s%s\": %s",
                            api != NULL ? adm_api_client_server(api) : "", ll->url, why);
}

/* A continue token in a query: every byte but RFC 3986's unreserved ones %-escaped. */
static const char *query_escape(adm_arena_t *a, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(value);
    char *out = adm_arena_alloc(a, 3 * n + 1);
    size_t k = 0;

    if (out == NULL) {
        return NULL;
    }
    for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
            *p == '_' || *p == '.' || *p == '~') {
            out[k++] = (char)*p;
        } else {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = '\0';
    return out;
}

static void on_page_answer(const adm_call_result_t *res, void *arg);

/* Asks for the next page (token NULL: the first). ADM_AGAIN, -ETIMEDOUT or ADM_ENOMEM. */
static int list_next(live_list_t *ll, const char *token)
{
    adm_arena_t *a = ll->attrs->arena;
    uint64_t now = adm_plugin_now_ms(ll->attrs);
    const char *escaped = token != NULL ? query_escape(a, token) : NULL;

    ll->url = token == NULL     ? adm_arena_printf(a, "%s?limit=%u", ll->path, ll->limit)
              : escaped != NULL ? adm_arena_printf(a, "%s?limit=%u&continue=%s", ll->path, ll->limit, escaped)
                                : NULL;
    if (ll->url == NULL) {
        return ADM_ENOMEM;
    }
    if (now >= ll->deadline_ms) {
        return -ETIMEDOUT; /* a context past its deadline: client-go sends nothing */
    }
    ll->call = adm_api_get(request_api(ll->attrs), ll->url, ll->deadline_ms - now, on_page_answer, ll, NULL);
    return ll->call != NULL ? ADM_AGAIN : ADM_ENOMEM;
}

/* The list ends with rc from list_next or a page callback. */
static void list_fail(live_list_t *ll, int rc)
{
    if (rc == ADM_ENOMEM) {
        list_end(ll, rc, NULL);
    } else {
        list_end(ll, rc, list_error(ll, rc == -ETIMEDOUT ? "context deadline exceeded" : adm_strerror(rc)));
    }
}

static void on_page_answer(const adm_call_result_t *res, void *arg)
{
    live_list_t *ll = arg;
    adm_arena_t *a = ll->attrs->arena;
    adm_list_page_t page;
    const char *token;
    char err[300];
    int rc;

    ll->call = NULL;
    if (res->error != ADM_CALL_OK) {
        list_end(ll, ADM_EIO,
                 list_error(ll, res->error == ADM_CALL_TIMEOUT ? "context deadline exceeded"
                                : res->detail != NULL          ? res->detail
                                                               : "EOF"));
        return;
    }
    if (res->status < 200 || res->status > 299) {
        yyjson_read_err jerr;
        yyjson_doc *doc =
            res->body_len > 0 ? adm_json_read(a, (const char *)res->body, res->body_len, &jerr) : NULL;

        list_end(ll, ADM_EIO,
                 adm_live_call_error(ll->attrs, res, doc != NULL ? yyjson_doc_get_root(doc) : NULL));
        return;
    }
    rc = adm_list_page_decode(ll->scratch, (const char *)res->body, res->body_len, &page, err, sizeof(err));
    if (rc != 0) {
        list_end(ll, rc, rc == ADM_ENOMEM ? NULL : adm_arena_strndup(a, err, strlen(err)));
        return;
    }
    rc = ll->page(ll->attrs, &page, ll->scratch, ll->arg);
    if (rc < 0) {
        list_fail(ll, rc);
        return;
    }
    if (rc == ADM_LIVE_LIST_STOP || page.continue_token[0] == '\0') {
        list_end(ll, 0, NULL);
        return;
    }
    token = adm_arena_strndup(a, page.continue_token, strlen(page.continue_token));
    adm_arena_reset(ll->scratch);
    rc = token != NULL ? list_next(ll, token) : ADM_ENOMEM;
    if (rc != ADM_AGAIN) {
        list_fail(ll, rc);
    }
}

int adm_live_list(adm_attrs_t *attrs, adm_async_t *async, const char *path, unsigned limit,
                  uint64_t deadline_ms, adm_live_page_cb page, adm_live_list_cb done, void *arg)
{
    live_list_t *ll = adm_arena_calloc(attrs->arena, 1, sizeof(*ll));
    int rc;

    if (ll == NULL || request_api(attrs) == NULL) {
        return ADM_ENOMEM;
    }
    ll->attrs = attrs;
    ll->async = async;
    ll->path = adm_arena_strndup(attrs->arena, path, strlen(path));
    ll->limit = limit;
    ll->deadline_ms = deadline_ms;
    ll->page = page;
    ll->done = done;
    ll->arg = arg;
    ll->scratch = adm_arena_create(64 * 1024);
    if (ll->path == NULL || ll->scratch == NULL) {
        list_release(ll);
        return ADM_ENOMEM;
    }
    async->cancel = on_list_cancel;
    async->cancel_arg = ll;
    rc = list_next(ll, NULL);
    if (rc == ADM_ENOMEM) {
        async->cancel = NULL;
        list_release(ll);
        return rc;
    }
    if (rc != ADM_AGAIN) {
        list_fail(ll, rc); /* past the deadline already: the phase ends now */
    }
    return ADM_AGAIN;
}

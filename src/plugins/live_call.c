/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugins' live calls to the API server (include/adm/plugins/live_call.h): one call per
 * request phase, its state in the request's arena, its answer parsed into that arena.
 */
#include "adm/plugins/live_call.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_state.h"

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

int adm_live_get_namespace(adm_attrs_t *attrs, adm_async_t *async, adm_live_call_cb cb, void *arg)
{
    const char *path = adm_arena_printf(attrs->arena, "/api/v1/namespaces/%s", attrs->req->namespace_);

    return path != NULL ? adm_live_call(attrs, async, path, NULL, cb, arg) : ADM_ENOMEM;
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API client of api_client.h: a resolved kubeconfig turned into a TLS client context and two
 * upstreams (short calls, watches), and each call's path and headers (server path prefix, bearer
 * token from the token source, Accept, User-Agent) written before it goes to the pool.
 */
#include "adm/cluster/api_client.h"

#include "adm/base/error.h"
#include "adm/cluster/token_source.h"
#include "adm/net/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path with its query (continue tokens, resourceVersions) fits this with room to spare. */
#define API_PATH_MAX 2048
/* Watches of every kind admitd reads, each on its own connection, and then some. */
#define API_WATCH_CONNS 64

struct adm_api_client_s {
    uv_loop_t *loop;
    adm_upstream_t *calls;
    adm_upstream_t *watches;
    adm_token_source_t token;
    char prefix[256]; /* the server URL's path, "" or "/prefix" */
    char server[320];
};

static int make_tls(const adm_kube_config_t *kc, adm_tls_ctx_t **out, char *err, size_t err_len)
{
    adm_tls_client_opts_t o = {0};
    char why[256];
    int rc;

    o.ca_pem = kc->ca_pem;
    o.ca_pem_len = kc->ca_pem_len;
    /* the kubeconfig keeps the PEMs with their NULs; the TLS options count only the text */
    if (kc->cert_pem != NULL && kc->key_pem != NULL) {
        o.cert_pem = kc->cert_pem;
        o.cert_pem_len = kc->cert_pem_len - 1;
        o.key_pem = kc->key_pem;
        o.key_pem_len = kc->key_pem_len - 1;
        o.cert_label = "client-certificate";
    }
    o.insecure = kc->insecure;
    rc = adm_tls_client_ctx_create(&o, out, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s", kc->source, why);
    }
    return rc;
}

int adm_api_client_create(uv_loop_t *loop, const adm_kube_config_t *kc, adm_api_client_t **out, char *err,
                          size_t err_len)
{
    adm_api_client_t *c = calloc(1, sizeof(*c));
    adm_upstream_opts_t o = {0};
    adm_tls_ctx_t *tls = NULL;
    int rc;

    *out = NULL;
    if (c == NULL) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        return ADM_ENOMEM;
    }
    c->loop = loop;
    snprintf(c->prefix, sizeof(c->prefix), "%s", kc->path_prefix != NULL ? kc->path_prefix : "");
    snprintf(c->server, sizeof(c->server), "%s", kc->server != NULL ? kc->server : kc->host);
    if (kc->tls) {
        rc = make_tls(kc, &tls, err, err_len);
        if (rc != 0) {
            free(c);
            return rc;
        }
    }
    /* TLS verifies tls-server-name when given, and connects to the URL's host either way. */
    o.host = kc->tls_server_name != NULL ? kc->tls_server_name : kc->host;
    o.dial_host = kc->host;
    o.port = kc->port;
    o.tls = tls;
    rc = adm_token_source_init(&c->token, kc->token, kc->token_file, uv_now(loop));
    if (rc == 0) {
        rc = adm_upstream_create(loop, &o, &c->calls);
    }
    if (rc == 0) {
        o.max_conns = API_WATCH_CONNS;
        o.idle_timeout_ms = 1000; /* a watch ended: the next one follows at once or not soon */
        rc = adm_upstream_create(loop, &o, &c->watches);
    }
    adm_tls_ctx_unref(tls); /* the upstreams hold their references */
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        adm_api_client_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

void adm_api_client_close(adm_api_client_t *c)
{
    if (c == NULL) {
        return;
    }
    if (c->calls != NULL) {
        adm_upstream_close(c->calls);
    }
    if (c->watches != NULL) {
        adm_upstream_close(c->watches);
    }
    adm_token_source_free(&c->token);
    free(c);
}

/* The full path and the header lines of a call starting now; false when they do not fit. */
static bool prepare(adm_api_client_t *c, const char *path, char *full, size_t full_len, char *headers,
                    size_t headers_len, uint64_t *started_ms)
{
    uint64_t now = uv_now(c->loop);
    const char *token = adm_token_source_get(&c->token, now);
    int n = snprintf(full, full_len, "%s%s", c->prefix, path);
    int m = snprintf(headers, headers_len, "%s%s%sUser-Agent: admitd/" ADM_VERSION "\r\n",
                     token != NULL ? "Authorization: Bearer " : "", token != NULL ? token : "",
                     token != NULL ? "\r\n" : "");

    if (started_ms != NULL) {
        *started_ms = now;
    }
    return n > 0 && (size_t)n < full_len && m > 0 && (size_t)m < headers_len;
}

adm_call_t *adm_api_watch(adm_api_client_t *c, const char *path, uint64_t timeout_ms, adm_call_chunk_cb chunk,
                          adm_call_cb cb, void *arg, uint64_t *started_ms)
{
    char full[API_PATH_MAX], headers[8192];

    if (!prepare(c, path, full, sizeof(full), headers, sizeof(headers), started_ms)) {
        return NULL;
    }
    return adm_upstream_stream(chunk != NULL ? c->watches : c->calls, full, headers, timeout_ms, chunk, cb,
                               arg);
}

adm_call_t *adm_api_get(adm_api_client_t *c, const char *path, uint64_t timeout_ms, adm_call_cb cb, void *arg,
                        uint64_t *started_ms)
{
    return adm_api_watch(c, path, timeout_ms, NULL, cb, arg, started_ms);
}

/* A short call with a JSON body: POST (create) or PUT (update). */
static adm_call_t *send_json(adm_api_client_t *c, const char *method, const char *path, const char *json,
                             size_t len, uint64_t timeout_ms, adm_call_cb cb, void *arg, uint64_t *started_ms)
{
    char full[API_PATH_MAX], headers[8192];

    if (!prepare(c, path, full, sizeof(full), headers, sizeof(headers), started_ms)) {
        return NULL;
    }
    return adm_upstream_send(c->calls, method, full, headers, json, len, timeout_ms, cb, arg);
}

adm_call_t *adm_api_post(adm_api_client_t *c, const char *path, const char *json, size_t len,
                         uint64_t timeout_ms, adm_call_cb cb, void *arg, uint64_t *started_ms)
{
    return send_json(c, "POST", path, json, len, timeout_ms, cb, arg, started_ms);
}

adm_call_t *adm_api_put(adm_api_client_t *c, const char *path, const char *json, size_t len,
                        uint64_t timeout_ms, adm_call_cb cb, void *arg, uint64_t *started_ms)
{
    return send_json(c, "PUT", path, json, len, timeout_ms, cb, arg, started_ms);
}

void adm_api_unauthorized(adm_api_client_t *c, uint64_t started_ms)
{
    adm_token_source_unauthorized(&c->token, started_ms);
}

uv_loop_t *adm_api_client_loop(const adm_api_client_t *c)
{
    return c->loop;
}

const char *adm_api_client_server(const adm_api_client_t *c)
{
    return c->server;
}

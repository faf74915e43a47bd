/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API client of api_client.h: a resolved kubeconfig turned into a TLS client context and two
 * upstreams (short calls, watches), and each call's path and headers (server path prefix, bearer
 * token from the token source, Accept, User-Agent) written before it goes to the pool.
 *
 * What the connections are made from (server, trust, client certificate) is one transport; a
 * reload that changes it makes a new transport and retires the old one, which keeps carrying the
 * calls it has until they end. A timer looks at the retired transports while there are any and
 * closes each once its upstreams carry no call (the upstream pool has no "close when idle" of its
 * own, and a poll every quarter second costs nothing next to a reload).
 */
#include "adm/cluster/api_client.h"

#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/token_source.h"
#include "adm/net/tls.h"

#include <mbedtls/sha256.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path with its query (continue tokens, resourceVersions) fits this with room to spare. */
#define API_PATH_MAX 2048
/* Watches of every kind admitd reads, each on its own connection, and then some. */
#define API_WATCH_CONNS 64
/* How often retired transports are looked at while calls still run on them. */
#define DRAIN_POLL_MS 250

/* One set of connection settings: the server and the TLS context its two upstreams share. */
typedef struct transport_s {
    adm_upstream_t *calls;
    adm_upstream_t *watches;
    char prefix[256];         /* the server URL's path, "" or "/prefix" */
    char server[320];         /* the URL as the kubeconfig gives it, for messages */
    char server_key[320];     /* scheme://host:port/prefix: which API server this is */
    unsigned char digest[32]; /* of everything a connection is made from (secrets included) */
    struct transport_s *next; /* in the client's retired list */
} transport_t;

struct adm_api_client_s {
    uv_loop_t *loop;
    transport_t *current;
    transport_t *retired; /* replaced by a reload, finishing the calls they carry */
    uv_timer_t drain;     /* runs while retired is not empty */
    adm_token_source_t token;
    /* told after a commit that changed something: whoever keeps watches on this client */
    struct {
        adm_api_changed_fn fn;
        void *arg;
    } observers[ADM_API_OBSERVERS_MAX];
};

struct adm_api_update_s {
    transport_t *transport; /* NULL: the connection settings are those of the running transport */
    adm_token_source_t token;
    adm_api_change_t change;
};

static void transport_close(transport_t *t)
{
    if (t == NULL) {
        return;
    }
    if (t->calls != NULL) {
        adm_upstream_close(t->calls);
    }
    if (t->watches != NULL) {
        adm_upstream_close(t->watches);
    }
    free(t);
}

static void digest_field(mbedtls_sha256_context *h, const void *p, size_t len)
{
    unsigned char n[8];

    for (size_t i = 0; i < sizeof(n); i++) {
        n[i] = (unsigned char)((uint64_t)len >> (8 * i));
    }
    mbedtls_sha256_update(h, n, sizeof(n));
    if (len > 0) {
        mbedtls_sha256_update(h, p, len);
    }
}

static void digest_string(mbedtls_sha256_context *h, const char *s)
{
    digest_field(h, s != NULL ? s : "", s != NULL ? strlen(s) + 1 : 0); /* NULL and "" differ */
}

/* A digest of what a connection is made from: a reload compares it rather than keep the secrets. */
static void digest_of(const adm_kube_config_t *kc, const char *server_key, unsigned char out[32])
{
    mbedtls_sha256_context h;
    unsigned char insecure = kc->insecure ? 1 : 0;

    mbedtls_sha256_init(&h);
    mbedtls_sha256_starts(&h, 0);
    digest_string(&h, server_key);
    digest_string(&h, kc->tls_server_name);
    digest_field(&h, &insecure, 1);
    digest_field(&h, kc->ca_pem, kc->ca_pem != NULL ? kc->ca_pem_len : 0);
    digest_field(&h, kc->cert_pem, kc->cert_pem != NULL ? kc->cert_pem_len : 0);
    digest_field(&h, kc->key_pem, kc->key_pem != NULL ? kc->key_pem_len : 0);
    mbedtls_sha256_finish(&h, out);
    mbedtls_sha256_free(&h);
}

static void server_key_of(const adm_kube_config_t *kc, char *out, size_t len)
{
    snprintf(out, len, "%s://%s:%u%s", kc->tls ? "https" : "http", kc->host, (unsigned)kc->port,
             kc->path_prefix != NULL ? kc->path_prefix : "");
}

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

/* The TLS context and the two upstreams of kc. */
static int transport_create(uv_loop_t *loop, const adm_kube_config_t *kc, transport_t **out, char *err,
                            size_t err_len)
{
    transport_t *t = calloc(1, sizeof(*t));
    adm_upstream_opts_t o = {0};
    adm_tls_ctx_t *tls = NULL;
    int rc;

    *out = NULL;
    if (t == NULL) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        return ADM_ENOMEM;
    }
    snprintf(t->prefix, sizeof(t->prefix), "%s", kc->path_prefix != NULL ? kc->path_prefix : "");
    snprintf(t->server, sizeof(t->server), "%s", kc->server != NULL ? kc->server : kc->host);
    server_key_of(kc, t->server_key, sizeof(t->server_key));
    digest_of(kc, t->server_key, t->digest);
    if (kc->tls) {
        rc = make_tls(kc, &tls, err, err_len);
        if (rc != 0) {
            free(t);
            return rc;
        }
    }
    /* TLS verifies tls-server-name when given, and connects to the URL's host either way. */
    o.host = kc->tls_server_name != NULL ? kc->tls_server_name : kc->host;
    o.dial_host = kc->host;
    o.port = kc->port;
    o.tls = tls;
    rc = adm_upstream_create(loop, &o, &t->calls);
    if (rc == 0) {
        o.max_conns = API_WATCH_CONNS;
        o.idle_timeout_ms = 1000; /* a watch ended: the next one follows at once or not soon */
        rc = adm_upstream_create(loop, &o, &t->watches);
    }
    adm_tls_ctx_unref(tls); /* the upstreams hold their references */
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        transport_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int adm_api_client_create(uv_loop_t *loop, const adm_kube_config_t *kc, adm_api_client_t **out, char *err,
                          size_t err_len)
{
    adm_api_client_t *c = calloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    if (c == NULL) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        return ADM_ENOMEM;
    }
    c->loop = loop;
    rc = transport_create(loop, kc, &c->current, err, err_len);
    if (rc == 0) {
        rc = adm_token_source_init(&c->token, kc->token, kc->token_file, uv_now(loop));
        if (rc != 0) {
            snprintf(err, err_len, "%s: out of memory", kc->source);
        }
    }
    if (rc != 0) {
        transport_close(c->current);
        adm_token_source_free(&c->token);
        free(c);
        return rc;
    }
    uv_timer_init(loop, &c->drain);
    c->drain.data = c;
    *out = c;
    return 0;
}

static void on_drain_closed(uv_handle_t *h)
{
    free(h->data);
}

void adm_api_client_close(adm_api_client_t *c)
{
    if (c == NULL) {
        return;
    }
    transport_close(c->current);
    while (c->retired != NULL) {
        transport_t *t = c->retired;

        c->retired = t->next;
        transport_close(t);
    }
    adm_token_source_free(&c->token);
    uv_close((uv_handle_t *)&c->drain, on_drain_closed);
}

/* The full path and the header lines of a call starting now; false when they do not fit. */
static bool prepare(adm_api_client_t *c, const char *path, char *full, size_t full_len, char *headers,
                    size_t headers_len, uint64_t *started_ms)
{
    uint64_t now = uv_now(c->loop);
    const char *token = adm_token_source_get(&c->token, now);
    int n = snprintf(full, full_len, "%s%s", c->current->prefix, path);
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
    return adm_upstream_stream(chunk != NULL ? c->current->watches : c->current->calls, full, headers,
                               timeout_ms, chunk, cb, arg);
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
    return adm_upstream_send(c->current->calls, method, full, headers, json, len, timeout_ms, cb, arg);
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
    return c->current->server;
}

/* ---- reload -------------------------------------------------------------------------------- */

static bool same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int adm_api_client_prepare(adm_api_client_t *c, const adm_kube_config_t *kc, adm_api_update_t **out,
                           char *err, size_t err_len)
{
    adm_api_update_t *u = calloc(1, sizeof(*u));
    char server_key[sizeof(c->current->server_key)];
    unsigned char digest[32];
    int rc;

    *out = NULL;
    if (u == NULL) {
        snprintf(err, err_len, "%s: out of memory", kc->source);
        return ADM_ENOMEM;
    }
    server_key_of(kc, server_key, sizeof(server_key));
    digest_of(kc, server_key, digest);
    if (strcmp(server_key, c->current->server_key) != 0) {
        u->change = ADM_API_SERVER;
    } else if (memcmp(digest, c->current->digest, sizeof(digest)) != 0) {
        u->change = ADM_API_CREDENTIALS;
    } else if (!same_text(kc->token, c->token.token) || !same_text(kc->token_file, c->token.path)) {
        u->change = ADM_API_TOKEN;
    }
    rc = 0;
    if (u->change >= ADM_API_CREDENTIALS) {
        rc = transport_create(c->loop, kc, &u->transport, err, err_len);
    }
    if (rc == 0) {
        /* the token as just read: a rotated token file is used from the commit on */
        rc = adm_token_source_init(&u->token, kc->token, kc->token_file, uv_now(c->loop));
        if (rc != 0) {
            snprintf(err, err_len, "%s: out of memory", kc->source);
        }
    }
    if (rc != 0) {
        adm_api_update_discard(u);
        return rc;
    }
    *out = u;
    return 0;
}

adm_api_change_t adm_api_update_change(const adm_api_update_t *u)
{
    return u->change;
}

static void on_drain(uv_timer_t *timer)
{
    adm_api_client_t *c = timer->data;
    transport_t **link = &c->retired;

    while (*link != NULL) {
        transport_t *t = *link;

        if (adm_upstream_calls(t->calls) == 0 && adm_upstream_calls(t->watches) == 0) {
            *link = t->next;
            adm_log_v(1, "API client: the connections to %s from before the reload are closed", t->server);
            transport_close(t);
        } else {
            link = &t->next;
        }
    }
    if (c->retired == NULL) {
        uv_timer_stop(timer);
    }
}

adm_api_change_t adm_api_client_commit(adm_api_client_t *c, adm_api_update_t *u)
{
    adm_api_change_t change = u->change;

    if (u->transport != NULL) {
        c->current->next = c->retired;
        c->retired = c->current;
        c->current = u->transport;
        u->transport = NULL;
        if (!uv_is_active((uv_handle_t *)&c->drain)) {
            uv_timer_start(&c->drain, on_drain, DRAIN_POLL_MS, DRAIN_POLL_MS);
        }
    }
    if (change != ADM_API_SAME) {
        adm_token_source_free(&c->token);
        c->token = u->token;
        memset(&u->token, 0, sizeof(u->token));
    }
    adm_api_update_discard(u);
    for (size_t i = 0; change != ADM_API_SAME && i < ADM_API_OBSERVERS_MAX; i++) {
        if (c->observers[i].fn != NULL) {
            c->observers[i].fn(c->observers[i].arg, change);
        }
    }
    return change;
}

int adm_api_client_observe(adm_api_client_t *c, adm_api_changed_fn fn, void *arg)
{
    for (size_t i = 0; i < ADM_API_OBSERVERS_MAX; i++) {
        if (c->observers[i].fn == NULL) {
            c->observers[i].fn = fn;
            c->observers[i].arg = arg;
            return 0;
        }
    }
    return ADM_ETOOBIG;
}

void adm_api_client_unobserve(adm_api_client_t *c, adm_api_changed_fn fn, void *arg)
{
    for (size_t i = 0; i < ADM_API_OBSERVERS_MAX; i++) {
        if (c->observers[i].fn == fn && c->observers[i].arg == arg) {
            c->observers[i].fn = NULL;
            c->observers[i].arg = NULL;
        }
    }
}

void adm_api_update_discard(adm_api_update_t *u)
{
    if (u == NULL) {
        return;
    }
    transport_close(u->transport);
    adm_token_source_free(&u->token);
    free(u);
}

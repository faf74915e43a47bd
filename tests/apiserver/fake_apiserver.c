/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adm-fake-apiserver: a small stand-in for kube-apiserver for the informer's tests (no real one can
 * be installed here). It speaks the list/watch wire protocol of ../shared/spec/list-watch.md over
 * plain HTTP/1.1, for every kind admitd's plugins read (core ones under /api/v1, the rest under
 * /apis/GROUP/v1): discovery (/version, /api, /api/v1, /apis, /apis/GROUP, /apis/GROUP/v1), paged
 * LIST (limit/continue, 410 Expired on a continue token older than the last compaction), GET (404
 * Status), POST of a Namespace (201, or 409 AlreadyExists), PUT of a ResourceQuota's status (the
 * status replaced, optimistic concurrency on metadata.resourceVersion: 409 Conflict with kube's
 * Status when it is not the stored one, 404 when the quota is gone; every PUT recorded), WATCH
 * (chunked JSON events from a resourceVersion, synthetic ADDED events for "" and "0", BOOKMARKs, a
 * clean end at timeoutSeconds, an ERROR 410 event for a resourceVersion compacted away), and
 * bearer-token auth (401 Status), with the token re-read from --token-file on every request so a
 * test can rotate it (each line of the file is a token it accepts: old and new both valid while a
 * rotation is under way). With --tls-cert-file and --tls-private-key-file it serves HTTPS (admitd's
 * own TLS sessions), and with --client-ca-file a request also needs a client certificate that
 * verifies against that CA (401 otherwise, as kube-apiserver without another credential); the files
 * are read again by {"op":"reload-tls"}, for new handshakes only, so a test can rotate them.
 *
 * Tests drive it through POST /_control (no auth), one JSON command per request:
 *   {"op":"put","resource":"namespaces","object":{...}}      create or update (ADDED/MODIFIED)
 *   {"op":"delete","resource":"namespaces","namespace":"","name":"x"}
 *   {"op":"compact"}                                        forget history: older RVs are gone
 *   {"op":"cut-watches"}                                    close every watch mid-stream
 *   {"op":"error-410"}                                      ERROR 410 event on every watch, then end
 *   {"op":"fail","status":500|429|410|409,"count":N,"retryAfter":S,"on":"list|watch|continue|get|put|any",
 *    "resource":"priorityclasses"}  (resource: optional, only its requests; 409 on put: kube's
 *                                    Conflict for the quota, as a stale write gets)
 *   {"op":"slow","ms":M}                                    hold every watch event M ms
 *   {"op":"delay-puts","ms":M}                              answer (and apply) each PUT M ms late
 *   {"op":"delay-lists","ms":M,"resource":"pods"}           answer each LIST of one namespace's
 *                                    objects (of that resource only, when given) M ms late, 0
 *                                    ends it: a plugin's live LIST, not the informer's cluster-wide ones
 *   {"op":"garbage"}                                        send bytes that are not JSON on every watch
 *   {"op":"reload-tls"}                                     read the TLS files again (new handshakes)
 * GET /_control/stats answers counters (lists, watches, gets, creates, puts, conflicts, unauthorized,
 * failures injected, TLS handshakes that failed; listsOf and watchesOf count the LISTs and WATCHes
 * of each resource, e.g. listsOf.pods), and GET /_control/puts every status PUT received,
 * in order: [{"path":...,"resourceVersion":"sent","used":{...sent...},"code":answered}, ...]. Under
 * TLS the control paths take any client, certificate or not.
 *
 * Besides what the plugins read it serves Services and EndpointSlices (endpoint spreading, issue
 * 18), and LIST and WATCH honour labelSelector (k=v, k==v, k!=v, k, !k,
 * comma-joined) and fieldSelector (metadata.name and metadata.namespace, = == !=). A watch is sent
 * the events whose object its selectors select; an object whose labels change out of a selector is
 * not turned into a DELETED for that watch, as kube-apiserver's watch cache would.
 *
 * It is our own code on libuv and llhttp, standalone rather than on admitd's server, because the
 * server answers whole responses and a watch is a response that never ends. It keeps every object
 * as compact JSON text; continue tokens page the current state (kube pages an etcd snapshot), which
 * the informer cannot tell apart since it watches from the list's resourceVersion anyway.
 */
#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"

#include <llhttp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <yyjson.h>

#define MAX_OBJECTS 200000
#define HISTORY_MAX 100000
#define PUTS_MAX 4096

typedef struct resource_s {
    const char *group;       /* "" for core (/api/v1), else served under /apis/GROUP/v1 */
    const char *api_version; /* "v1", or "GROUP/v1" */
    const char *name;        /* plural, as in the URL; unique across groups here */
    const char *kind;
    bool namespaced;
} resource_t;

/* Every kind admitd's plugins read (adm_plugin_t.reads), and what webhook Services need. */
static const resource_t resources[] = {
    {"", "v1", "namespaces", "Namespace", false},
    {"", "v1", "limitranges", "LimitRange", true},
    {"", "v1", "serviceaccounts", "ServiceAccount", true},
    {"", "v1", "resourcequotas", "ResourceQuota", true},
    {"", "v1", "nodes", "Node", false},
    {"", "v1", "pods", "Pod", true},
    {"", "v1", "services", "Service", true},
    {"scheduling.k8s.io", "scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", false},
    {"node.k8s.io", "node.k8s.io/v1", "runtimeclasses", "RuntimeClass", false},
    {"storage.k8s.io", "storage.k8s.io/v1", "storageclasses", "StorageClass", false},
    {"networking.k8s.io", "networking.k8s.io/v1", "ingressclasses", "IngressClass", false},
    {"discovery.k8s.io", "discovery.k8s.io/v1", "endpointslices", "EndpointSlice", true},
};
#define NRESOURCES (sizeof(resources) / sizeof(resources[0]))

typedef struct object_s {
    const resource_t *res;
    char *ns, *name;
    char *json; /* without kind/apiVersion, with metadata.resourceVersion */
    uint64_t rv;
} object_t;

typedef struct event_s {
    const resource_t *res;
    char *ns;
    uint64_t rv;
    char *line; /* the whole event, newline-terminated */
} event_t;

typedef struct conn_s conn_t;

struct conn_s {
    uv_tcp_t tcp;
    llhttp_t parser;
    adm_buf_t url, auth, field, body;
    bool in_auth;
    bool watching;
    bool closing;
    /* watch state */
    const resource_t *res;
    char ns[256];
    char label_sel[512], field_sel[512]; /* the watch's selectors, decoded ("" for none) */
    const resource_t *req_res;           /* the resource the request being handled names */
    uint64_t from_rv;                    /* events after this */
    bool bookmarks;
    uv_timer_t timeout, bookmark, slow;
    int timers;
    adm_buf_t pending;      /* slow mode: events held back */
    adm_tls_session_t *tls; /* NULL over plain HTTP */
    adm_buf_t plain;        /* what the last read decrypted */
    conn_t *prev, *next;
    /* a PUT held back by delay-puts: what it was for */
    bool put_held;
    char put_ns[256], put_name[256];
    /* a LIST held back by delay-lists: its namespace and query (heap) */
    char list_ns[256];
    char *list_query;
};

static struct {
    uv_loop_t *loop;
    uv_tcp_t listener;
    const char *token;
    const char *token_file;
    uint64_t bookmark_ms;
    object_t *objects;
    size_t nobjects;
    event_t *history;
    size_t nhistory;
    uint64_t rv;
    uint64_t compacted_rv; /* events at or below are gone */
    conn_t *watchers;
    int fail_status, fail_count, fail_retry;
    char fail_on[16];
    char fail_resource[32]; /* only requests for this resource fail ("" any) */
    uint64_t slow_ms;
    uint64_t put_delay_ms;
    uint64_t list_delay_ms;
    char list_delay_resource[32]; /* only LISTs of this resource are held ("" every LIST) */
    uint64_t lists, watches, unauthorized, injected, gets, creates, puts, conflicts;
    uint64_t lists_of[NRESOURCES], watches_of[NRESOURCES]; /* by resource, as resources[] */
    char *put_log[PUTS_MAX];                               /* one JSON object per status PUT received */
    size_t nput_log;
    adm_tls_ctx_t *tls; /* NULL: plain HTTP */
    adm_tls_server_opts_t tls_opts;
    uint64_t tls_errors;
} srv;

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    if (d == NULL) {
        abort();
    }
    memcpy(d, s, n);
    return d;
}

static void bprintf(adm_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(adm_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    char tmp[4096];
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        adm_buf_append(b, tmp, (size_t)n);
        return;
    }
    {
        char *big = malloc((size_t)n + 1);

        if (big == NULL) {
            abort();
        }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        adm_buf_append(b, big, (size_t)n);
        free(big);
    }
}

static void on_closed(uv_handle_t *h)
{
    conn_t *c = h->data;

    if (--c->timers > 0) {
        return;
    }
    adm_buf_free(&c->url);
    adm_buf_free(&c->auth);
    adm_buf_free(&c->field);
    adm_buf_free(&c->body);
    adm_buf_free(&c->pending);
    adm_buf_free(&c->plain);
    adm_tls_session_destroy(c->tls);
    free(c->list_query);
    free(c);
}

static void conn_close(conn_t *c)
{
    if (c->closing) {
        return;
    }
    c->closing = true;
    if (c->watching) {
        if (c->prev != NULL) {
            c->prev->next = c->next;
        } else {
            srv.watchers = c->next;
        }
        if (c->next != NULL) {
            c->next->prev = c->prev;
        }
    }
    c->timers = 4;
    uv_close((uv_handle_t *)&c->timeout, on_closed);
    uv_close((uv_handle_t *)&c->bookmark, on_closed);
    uv_close((uv_handle_t *)&c->slow, on_closed);
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

typedef struct wreq_s {
    uv_write_t req;
    char *data;
} wreq_t;

static void on_written(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;

    (void)status;
    free(w->data);
    free(w);
}

static void write_raw(conn_t *c, const void *data, size_t len)
{
    wreq_t *w;
    uv_buf_t b;

    if (c->closing || len == 0) {
        return;
    }
    w = malloc(sizeof(*w));
    if (w == NULL) {
        abort();
    }
    w->data = malloc(len);
    if (w->data == NULL) {
        abort();
    }
    memcpy(w->data, data, len);
    b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        free(w->data);
        free(w);
        conn_close(c);
    }
}

/* The ciphertext the TLS session has queued (handshake flights, records) goes out. */
static void flush_tls(conn_t *c)
{
    adm_buf_t *out = adm_tls_session_output(c->tls);

    if (out->len > 0) {
        write_raw(c, out->data, out->len);
        out->len = 0;
    }
}

static void send_bytes(conn_t *c, const void *data, size_t len)
{
    if (c->tls == NULL) {
        write_raw(c, data, len);
        return;
    }
    if (c->closing || len == 0) {
        return;
    }
    if (adm_tls_session_send(c->tls, data, len) != 0) {
        conn_close(c);
        return;
    }
    flush_tls(c);
}

static void reply(conn_t *c, int status, const char *extra, const char *body)
{
    adm_buf_t b = {0};
    static const char *const texts[] = {[200] = "OK",
                                        [201] = "Created",
                                        [409] = "Conflict",
                                        [401] = "Unauthorized",
                                        [404] = "Not Found",
                                        [410] = "Gone",
                                        [429] = "Too Many Requests",
                                        [400] = "Bad Request",
                                        [500] = "Internal Server Error",
                                        [405] = "Method Not Allowed"};
    const char *text = status < 501 && texts[status] != NULL ? texts[status] : "Status";

    bprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n", status,
            text, strlen(body), extra != NULL ? extra : "");
    adm_buf_append(&b, body, strlen(body));
    send_bytes(c, (char *)b.data, b.len);
    adm_buf_free(&b);
}

static void reply_status(conn_t *c, int code, const char *reason, const char *message, const char *extra,
                         int retry_after)
{
    adm_buf_t b = {0};

    bprintf(&b,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
            "\"%s\","
            "\"reason\":\"%s\"",
            message, reason);
    if (retry_after > 0) {
        bprintf(&b, ",\"details\":{\"retryAfterSeconds\":%d}", retry_after);
    }
    bprintf(&b, ",\"code\":%d}", code);
    adm_buf_append(&b, "", 1);
    reply(c, code, extra, (char *)b.data);
    adm_buf_free(&b);
}

/* ---- the store ---- */

static const resource_t *find_resource(const char *name, size_t len)
{
    for (size_t i = 0; i < NRESOURCES; i++) {
        if (strlen(resources[i].name) == len && memcmp(resources[i].name, name, len) == 0) {
            return &resources[i];
        }
    }
    return NULL;
}

static object_t *find_object(const resource_t *res, const char *ns, const char *name)
{
    for (size_t i = 0; i < srv.nobjects; i++) {
        object_t *o = &srv.objects[i];

        if (o->res == res && strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0) {
            return o;
        }
    }
    return NULL;
}

/* ---- API groups and selectors ---- */

/* The API group a resource is served under ("" for core). */
static const char *group_of(const resource_t *res)
{
    return res->group;
}

static const char *api_version_of(const resource_t *res)
{
    return res->api_version;
}

/* Percent-decodes s in place (a query value). */
static void url_decode(char *s)
{
    char *o = s;

    for (const char *p = s; *p != '\0'; p++) {
        unsigned v;

        if (*p == '%' && p[1] != '\0' && p[2] != '\0' && sscanf(p + 1, "%2x", &v) == 1) {
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p == '+' ? ' ' : *p;
        }
    }
    *o = '\0';
}

/* One requirement "k=v", "k==v", "k!=v", "k" or "!k" against value (NULL: the key is absent). */
static bool requirement_holds(const char *req, size_t len,
                              const char *(*value_of)(const char *key, void *arg), void *arg)
{
    char key[256], want[256];
    const char *ne = memmem(req, len, "!=", 2), *eq = memchr(req, '=', len);
    const char *have;

    if (len > 0 && req[0] == '!') {
        snprintf(key, sizeof(key), "%.*s", (int)len - 1, req + 1);
        return value_of(key, arg) == NULL;
    }
    if (eq == NULL) {
        snprintf(key, sizeof(key), "%.*s", (int)len, req);
        return value_of(key, arg) != NULL;
    }
    if (ne != NULL) {
        eq = ne;
    }
    snprintf(key, sizeof(key), "%.*s", (int)(eq - req), req);
    eq += ne != NULL ? 2 : (eq + 1 < req + len && eq[1] == '=' ? 2 : 1);
    snprintf(want, sizeof(want), "%.*s", (int)(req + len - eq), eq);
    have = value_of(key, arg);
    return ne != NULL ? (have == NULL || strcmp(have, want) != 0) : (have != NULL && strcmp(have, want) == 0);
}

/* Every comma-separated requirement of sel holds ("" selects all). */
static bool selector_holds(const char *sel, const char *(*value_of)(const char *key, void *arg), void *arg)
{
    while (*sel != '\0') {
        size_t len = strcspn(sel, ",");

        if (len > 0 && !requirement_holds(sel, len, value_of, arg)) {
            return false;
        }
        sel += len + (sel[len] == ',' ? 1 : 0);
    }
    return true;
}

static const char *label_value(const char *key, void *arg)
{
    return yyjson_get_str(yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(arg, "metadata"), "labels"), key));
}

static const char *field_value(const char *key, void *arg)
{
    yyjson_val *meta = yyjson_obj_get(arg, "metadata");

    if (strcmp(key, "metadata.name") == 0) {
        return yyjson_get_str(yyjson_obj_get(meta, "name"));
    }
    if (strcmp(key, "metadata.namespace") == 0) {
        const char *ns = yyjson_get_str(yyjson_obj_get(meta, "namespace"));

        return ns != NULL ? ns : "";
    }
    return NULL;
}

/* Does an object (its JSON text) satisfy both selectors? */
static bool selected(const char *label_sel, const char *field_sel, const char *json)
{
    yyjson_doc *d;
    bool ok;

    if (label_sel[0] == '\0' && field_sel[0] == '\0') {
        return true;
    }
    d = yyjson_read(json, strlen(json), 0);
    ok = selector_holds(label_sel, label_value, yyjson_doc_get_root(d)) &&
         selector_holds(field_sel, field_value, yyjson_doc_get_root(d));
    yyjson_doc_free(d);
    return ok;
}

/* A watch event's line: does its object satisfy c's selectors? */
static bool watcher_selects(const conn_t *c, const char *line)
{
    yyjson_doc *d;
    char *json;
    bool ok;

    if (c->label_sel[0] == '\0' && c->field_sel[0] == '\0') {
        return true;
    }
    d = yyjson_read(line, strlen(line), 0);
    json = yyjson_val_write(yyjson_obj_get(yyjson_doc_get_root(d), "object"), 0, NULL);
    ok = json != NULL && selected(c->label_sel, c->field_sel, json);
    free(json);
    yyjson_doc_free(d);
    return ok;
}

/* The object with kind and apiVersion in front, as watch events and GET carry it. */
static void with_kind(adm_buf_t *b, const resource_t *res, const char *json)
{
    bprintf(b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\"%s%s", res->kind, api_version_of(res),
            strcmp(json, "{}") == 0 ? "" : ",", json + 1);
}

static void watch_send(conn_t *c, const char *line)
{
    if (srv.slow_ms > 0) {
        adm_buf_append(&c->pending, line, strlen(line));
        return;
    }
    {
        adm_buf_t b = {0};

        bprintf(&b, "%zx\r\n%s\r\n", strlen(line), line);
        send_bytes(c, (char *)b.data, b.len);
        adm_buf_free(&b);
    }
}

static void on_slow(uv_timer_t *t)
{
    conn_t *c = t->data;
    adm_buf_t b = {0};

    if (c->pending.len == 0) {
        return;
    }
    bprintf(&b, "%zx\r\n", c->pending.len);
    adm_buf_append(&b, (char *)c->pending.data, c->pending.len);
    adm_buf_append(&b, "\r\n", 2);
    send_bytes(c, (char *)b.data, b.len);
    adm_buf_free(&b);
    c->pending.len = 0;
}

static bool watcher_wants(const conn_t *c, const resource_t *res, const char *ns)
{
    return c->res == res && (c->ns[0] == '\0' || strcmp(c->ns, ns) == 0);
}

static void record(const resource_t *res, const char *ns, const char *type, const char *json, uint64_t rv)
{
    adm_buf_t b = {0};
    event_t *e;

    bprintf(&b, "{\"type\":\"%s\",\"object\":", type);
    with_kind(&b, res, json);
    bprintf(&b, "}\n");
    adm_buf_append(&b, "", 1);
    if (srv.nhistory == HISTORY_MAX) {
        free(srv.history[0].line);
        free(srv.history[0].ns);
        memmove(srv.history, srv.history + 1, (HISTORY_MAX - 1) * sizeof(event_t));
        srv.nhistory--;
        srv.compacted_rv = srv.history[0].rv - 1;
    }
    e = &srv.history[srv.nhistory++];
    e->res = res;
    e->ns = xstrdup(ns);
    e->rv = rv;
    e->line = xstrdup((char *)b.data);
    for (conn_t *c = srv.watchers; c != NULL; c = c->next) {
        if (watcher_wants(c, res, ns) && watcher_selects(c, e->line)) {
            watch_send(c, e->line);
        }
    }
    adm_buf_free(&b);
}

/* Sets metadata.resourceVersion (and namespace) on obj and returns it as compact JSON text. */
static char *stamp(yyjson_val *obj, const char *ns, uint64_t rv)
{
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *root = yyjson_val_mut_copy(m, obj), *meta;
    char rvtext[32];
    char *out;

    snprintf(rvtext, sizeof(rvtext), "%llu", (unsigned long long)rv);
    yyjson_mut_obj_remove_key(root, "kind");
    yyjson_mut_obj_remove_key(root, "apiVersion");
    meta = yyjson_mut_obj_get(root, "metadata");
    yyjson_mut_obj_remove_key(meta, "resourceVersion");
    yyjson_mut_obj_add_strcpy(m, meta, "resourceVersion", rvtext);
    if (ns[0] != '\0' && yyjson_mut_obj_get(meta, "namespace") == NULL) {
        yyjson_mut_obj_add_strcpy(m, meta, "namespace", ns);
    }
    yyjson_mut_doc_set_root(m, root);
    out = yyjson_mut_write(m, 0, NULL);
    yyjson_mut_doc_free(m);
    return out;
}

static const char *control_put(yyjson_val *cmd)
{
    const char *rname = yyjson_get_str(yyjson_obj_get(cmd, "resource"));
    const resource_t *res = rname != NULL ? find_resource(rname, strlen(rname)) : NULL;
    yyjson_val *obj = yyjson_obj_get(cmd, "object");
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    const char *name = yyjson_get_str(yyjson_obj_get(meta, "name"));
    const char *ns = yyjson_get_str(yyjson_obj_get(meta, "namespace"));
    object_t *o;

    if (res == NULL || !yyjson_is_obj(meta) || name == NULL) {
        return "put needs a known resource and an object with metadata.name";
    }
    ns = res->namespaced && ns != NULL ? ns : "";
    o = find_object(res, ns, name);
    srv.rv++;
    if (o == NULL) {
        if (srv.nobjects == MAX_OBJECTS) {
            return "too many objects";
        }
        o = &srv.objects[srv.nobjects++];
        o->res = res;
        o->ns = xstrdup(ns);
        o->name = xstrdup(name);
        o->json = stamp(obj, ns, srv.rv);
        o->rv = srv.rv;
        record(res, ns, "ADDED", o->json, o->rv);
        return NULL;
    }
    free(o->json);
    o->json = stamp(obj, ns, srv.rv);
    o->rv = srv.rv;
    record(res, ns, "MODIFIED", o->json, o->rv);
    return NULL;
}

static const char *control_delete(yyjson_val *cmd)
{
    const char *rname = yyjson_get_str(yyjson_obj_get(cmd, "resource"));
    const resource_t *res = rname != NULL ? find_resource(rname, strlen(rname)) : NULL;
    const char *name = yyjson_get_str(yyjson_obj_get(cmd, "name"));
    const char *ns = yyjson_get_str(yyjson_obj_get(cmd, "namespace"));
    object_t *o;
    char *json;
    yyjson_doc *d;

    if (res == NULL || name == NULL) {
        return "delete needs a known resource and a name";
    }
    o = find_object(res, res->namespaced && ns != NULL ? ns : "", name);
    if (o == NULL) {
        return "no such object";
    }
    srv.rv++;
    /* DELETED carries the last state with the deletion's resourceVersion */
    d = yyjson_read(o->json, strlen(o->json), 0);
    json = stamp(yyjson_doc_get_root(d), o->ns, srv.rv);
    yyjson_doc_free(d);
    record(res, o->ns, "DELETED", json, srv.rv);
    free(json);
    free(o->json);
    free(o->ns);
    free(o->name);
    *o = srv.objects[--srv.nobjects];
    return NULL;
}

static void end_watch(conn_t *c)
{
    if (c->pending.len > 0) {
        on_slow(&c->slow);
    }
    send_bytes(c, "0\r\n\r\n", 5);
    conn_close(c);
}

static const char *control(const char *body, size_t len, char *out, size_t out_len)
{
    yyjson_doc *d = yyjson_read(body, len, 0);
    yyjson_val *cmd = yyjson_doc_get_root(d);
    const char *op = yyjson_get_str(yyjson_obj_get(cmd, "op"));
    const char *problem = NULL;

    out[0] = '\0';
    if (op == NULL) {
        problem = "no op";
    } else if (strcmp(op, "put") == 0) {
        problem = control_put(cmd);
    } else if (strcmp(op, "delete") == 0) {
        problem = control_delete(cmd);
    } else if (strcmp(op, "compact") == 0) {
        srv.compacted_rv = srv.rv;
    } else if (strcmp(op, "cut-watches") == 0) {
        while (srv.watchers != NULL) {
            conn_close(srv.watchers); /* no terminating chunk: cut mid-stream */
        }
    } else if (strcmp(op, "error-410") == 0) {
        while (srv.watchers != NULL) {
            conn_t *c = srv.watchers;
            char line[256];

            snprintf(
                line, sizeof(line),
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                "\"status\":\"Failure\",\"message\":\"too old resource version: %llu (%llu)\","
                "\"reason\":\"Expired\",\"code\":410}}\n",
                (unsigned long long)c->from_rv, (unsigned long long)srv.rv);
            watch_send(c, line);
            end_watch(c);
        }
    } else if (strcmp(op, "reload-tls") == 0) {
        static char why[512];
        adm_tls_ctx_t *ctx = NULL;

        if (srv.tls == NULL) {
            problem = "not serving TLS";
        } else if (adm_tls_server_ctx_create(&srv.tls_opts, &ctx, why, sizeof(why)) != 0) {
            problem = why;
        } else {
            adm_tls_ctx_unref(srv.tls); /* sessions keep the old one while they last */
            srv.tls = ctx;
        }
    } else if (strcmp(op, "garbage") == 0) {
        for (conn_t *c = srv.watchers; c != NULL; c = c->next) {
            watch_send(c, "}{not json at all\n");
        }
    } else if (strcmp(op, "fail") == 0) {
        const char *on = yyjson_get_str(yyjson_obj_get(cmd, "on"));

        srv.fail_status = (int)yyjson_get_int(yyjson_obj_get(cmd, "status"));
        srv.fail_count = (int)yyjson_get_int(yyjson_obj_get(cmd, "count"));
        srv.fail_retry = (int)yyjson_get_int(yyjson_obj_get(cmd, "retryAfter"));
        snprintf(srv.fail_on, sizeof(srv.fail_on), "%s", on != NULL ? on : "any");
        snprintf(srv.fail_resource, sizeof(srv.fail_resource), "%s",
                 yyjson_get_str(yyjson_obj_get(cmd, "resource")) != NULL
                     ? yyjson_get_str(yyjson_obj_get(cmd, "resource"))
                     : "");
    } else if (strcmp(op, "delay-puts") == 0) {
        srv.put_delay_ms = (uint64_t)yyjson_get_int(yyjson_obj_get(cmd, "ms"));
    } else if (strcmp(op, "delay-lists") == 0) {
        const char *r = yyjson_get_str(yyjson_obj_get(cmd, "resource"));

        srv.list_delay_ms = (uint64_t)yyjson_get_int(yyjson_obj_get(cmd, "ms"));
        snprintf(srv.list_delay_resource, sizeof(srv.list_delay_resource), "%s", r != NULL ? r : "");
    } else if (strcmp(op, "slow") == 0) {
        srv.slow_ms = (uint64_t)yyjson_get_int(yyjson_obj_get(cmd, "ms"));
        for (conn_t *c = srv.watchers; c != NULL; c = c->next) {
            if (srv.slow_ms > 0) {
                uv_timer_start(&c->slow, on_slow, srv.slow_ms, srv.slow_ms);
            } else {
                uv_timer_stop(&c->slow);
            }
        }
    } else {
        problem = "unknown op";
    }
    yyjson_doc_free(d);
    if (problem == NULL) {
        snprintf(out, out_len, "{\"resourceVersion\":\"%llu\"}", (unsigned long long)srv.rv);
    }
    return problem;
}

/* ---- requests ---- */

static bool bearer_is(const conn_t *c, const char *token, size_t len)
{
    return c->auth.len == len + 7 && memcmp(c->auth.data, "Bearer ", 7) == 0 &&
           memcmp(c->auth.data + 7, token, len) == 0;
}

static bool authorized(conn_t *c)
{
    char want[4096];

    if (srv.tls_opts.client_ca_file != NULL && (c->tls == NULL || !adm_tls_session_peer_verified(c->tls))) {
        return false;
    }
    if (srv.token_file != NULL) {
        FILE *f = fopen(srv.token_file, "r");
        size_t n = 0;

        if (f != NULL) {
            n = fread(want, 1, sizeof(want) - 1, f);
            fclose(f);
        }
        want[n] = '\0';
        /* every line a token: a rotation keeps the old one valid until the test drops it */
        for (char *line = want; line != NULL && *line != '\0';) {
            char *nl = strchr(line, '\n');
            size_t len = nl != NULL ? (size_t)(nl - line) : strlen(line);

            while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r')) {
                len--;
            }
            if (len > 0 && bearer_is(c, line, len)) {
                return true;
            }
            line = nl != NULL ? nl + 1 : NULL;
        }
        return false;
    }
    return srv.token == NULL || bearer_is(c, srv.token, strlen(srv.token));
}

/* The value of query parameter key in q ("" when absent). */
static void query(const char *q, const char *key, char *out, size_t out_len)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    while (q != NULL && *q != '\0') {
        const char *amp = strchr(q, '&');
        size_t len = amp != NULL ? (size_t)(amp - q) : strlen(q);

        if (len > klen && strncmp(q, key, klen) == 0 && q[klen] == '=') {
            size_t vlen = len - klen - 1 < out_len - 1 ? len - klen - 1 : out_len - 1;

            memcpy(out, q + klen + 1, vlen);
            out[vlen] = '\0';
            return;
        }
        q = amp != NULL ? amp + 1 : NULL;
    }
}

static bool inject(conn_t *c, const char *what)
{
    if (srv.fail_count <= 0 || (strcmp(srv.fail_on, "any") != 0 && strcmp(srv.fail_on, what) != 0)) {
        return false;
    }
    if (srv.fail_resource[0] != '\0' &&
        (c->req_res == NULL || strcmp(c->req_res->name, srv.fail_resource) != 0)) {
        return false;
    }
    srv.fail_count--;
    srv.injected++;
    if (srv.fail_status == 429) {
        char extra[64];

        snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", srv.fail_retry);
        reply_status(c, 429, "TooManyRequests",
                     "the server has received too many requests and has asked us to "
                     "try again later",
                     extra, srv.fail_retry);
    } else if (srv.fail_status == 410) {
        reply_status(c, 410, "Expired",
                     "The provided continue parameter is too old to display a consistent list "
                     "result. You can start a new list without the continue parameter.",
                     NULL, 0);
    } else {
        reply_status(c, srv.fail_status, "InternalError", "Internal error occurred: injected", NULL, 0);
    }
    return true;
}

static int cmp_objects(const void *a, const void *b)
{
    const object_t *x = *(object_t *const *)a, *y = *(object_t *const *)b;
    int r = strcmp(x->ns, y->ns);

    return r != 0 ? r : strcmp(x->name, y->name);
}

static void do_list(conn_t *c, const resource_t *res, const char *ns, const char *q)
{
    char limit_s[32], cont[128], label_sel[512], field_sel[512];
    size_t limit, offset = 0, n = 0, total = 0;
    uint64_t list_rv = srv.rv;
    object_t **sel = malloc((srv.nobjects + 1) * sizeof(*sel));
    adm_buf_t b = {0};

    if (sel == NULL) {
        abort();
    }
    query(q, "limit", limit_s, sizeof(limit_s));
    query(q, "continue", cont, sizeof(cont));
    query(q, "labelSelector", label_sel, sizeof(label_sel));
    query(q, "fieldSelector", field_sel, sizeof(field_sel));
    url_decode(label_sel);
    url_decode(field_sel);
    limit = strtoul(limit_s, NULL, 10);
    if (cont[0] != '\0') {
        unsigned long long rv = 0;
        unsigned long off = 0;

        if (inject(c, "continue")) {
            free(sel);
            return;
        }
        if (sscanf(cont, "%llu-%lu", &rv, &off) != 2) {
            reply_status(c, 400, "BadRequest", "continue key is not valid", NULL, 0);
            free(sel);
            return;
        }
        if (rv <= srv.compacted_rv) {
            reply_status(
                c, 410, "Expired",
                "The provided continue parameter is too old to display a consistent list result. You can "
                "start a new list without the continue parameter.",
                NULL, 0);
            free(sel);
            return;
        }
        list_rv = rv;
        offset = off;
    }
    for (size_t i = 0; i < srv.nobjects; i++) {
        if (srv.objects[i].res == res && (ns[0] == '\0' || strcmp(srv.objects[i].ns, ns) == 0) &&
            selected(label_sel, field_sel, srv.objects[i].json)) {
            sel[total++] = &srv.objects[i];
        }
    }
    qsort(sel, total, sizeof(*sel), cmp_objects);
    bprintf(&b, "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"",
            res->kind, api_version_of(res), (unsigned long long)list_rv);
    if (limit > 0 && offset + limit < total) {
        bprintf(&b, ",\"continue\":\"%llu-%zu\",\"remainingItemCount\":%zu", (unsigned long long)list_rv,
                offset + limit, total - offset - limit);
    }
    bprintf(&b, "},\"items\":[");
    for (size_t i = offset; i < total && (limit == 0 || n < limit); i++, n++) {
        if (n > 0) {
            adm_buf_append(&b, ",", 1);
        }
        adm_buf_append(&b, sel[i]->json, strlen(sel[i]->json));
    }
    adm_buf_append(&b, "]}", 3);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
    free(sel);
}

static void on_watch_timeout(uv_timer_t *t)
{
    end_watch(t->data);
}

static void on_bookmark(uv_timer_t *t)
{
    conn_t *c = t->data;
    char line[256];

    snprintf(line, sizeof(line),
             "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
             "\"metadata\":{\"resourceVersion\":\"%llu\"}}}\n",
             c->res->kind, api_version_of(c->res), (unsigned long long)srv.rv);
    watch_send(c, line);
}

static void do_watch(conn_t *c, const resource_t *res, const char *ns, const char *q)
{
    char rv_s[32], timeout_s[32], bm[16];
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";

    query(q, "resourceVersion", rv_s, sizeof(rv_s));
    query(q, "timeoutSeconds", timeout_s, sizeof(timeout_s));
    query(q, "allowWatchBookmarks", bm, sizeof(bm));
    query(q, "labelSelector", c->label_sel, sizeof(c->label_sel));
    query(q, "fieldSelector", c->field_sel, sizeof(c->field_sel));
    url_decode(c->label_sel);
    url_decode(c->field_sel);
    srv.watches++;
    srv.watches_of[res - resources]++;
    c->watching = true;
    c->res = res;
    snprintf(c->ns, sizeof(c->ns), "%s", ns);
    c->from_rv = strtoull(rv_s, NULL, 10);
    c->bookmarks = strcmp(bm, "true") == 0;
    send_bytes(c, head, sizeof(head) - 1);
    c->next = srv.watchers;
    c->prev = NULL;
    if (srv.watchers != NULL) {
        srv.watchers->prev = c;
    }
    srv.watchers = c;
    if (rv_s[0] == '\0' || strcmp(rv_s, "0") == 0) {
        /* "" and "0": the current state as synthetic ADDED events */
        for (size_t i = 0; i < srv.nobjects; i++) {
            if (watcher_wants(c, srv.objects[i].res, srv.objects[i].ns) &&
                selected(c->label_sel, c->field_sel, srv.objects[i].json)) {
                adm_buf_t b = {0};

                bprintf(&b, "{\"type\":\"ADDED\",\"object\":");
                with_kind(&b, srv.objects[i].res, srv.objects[i].json);
                bprintf(&b, "}\n");
                adm_buf_append(&b, "", 1);
                watch_send(c, (char *)b.data);
                adm_buf_free(&b);
            }
        }
    } else if (c->from_rv < srv.compacted_rv) {
        char line[256];

        snprintf(line, sizeof(line),
                 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                 "\"status\":\"Failure\",\"message\":\"too old resource version: %llu (%llu)\","
                 "\"reason\":\"Expired\",\"code\":410}}\n",
                 (unsigned long long)c->from_rv, (unsigned long long)srv.compacted_rv + 1);
        watch_send(c, line);
        end_watch(c);
        return;
    } else {
        for (size_t i = 0; i < srv.nhistory; i++) {
            event_t *e = &srv.history[i];

            if (e->rv > c->from_rv && watcher_wants(c, e->res, e->ns) && watcher_selects(c, e->line)) {
                watch_send(c, e->line);
            }
        }
    }
    if (timeout_s[0] != '\0') {
        uv_timer_start(&c->timeout, on_watch_timeout, strtoull(timeout_s, NULL, 10) * 1000, 0);
    }
    if (c->bookmarks && srv.bookmark_ms > 0) {
        uv_timer_start(&c->bookmark, on_bookmark, srv.bookmark_ms, srv.bookmark_ms);
    }
    if (srv.slow_ms > 0) {
        uv_timer_start(&c->slow, on_slow, srv.slow_ms, srv.slow_ms);
    }
}

static void do_get(conn_t *c, const resource_t *res, const char *ns, const char *name)
{
    object_t *o = find_object(res, res->namespaced ? ns : "", name);
    adm_buf_t b = {0};
    char msg[600];

    srv.gets++;
    if (o == NULL) {
        snprintf(msg, sizeof(msg), "%s \\\"%s\\\" not found", res->name, name);
        reply_status(c, 404, "NotFound", msg, NULL, 0);
        return;
    }
    with_kind(&b, res, o->json);
    adm_buf_append(&b, "", 1);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
}

/* POST /api/v1/namespaces: a create, 409 AlreadyExists when the name is taken. */
static void do_create_namespace(conn_t *c)
{
    yyjson_doc *doc = yyjson_read(c->body.data != NULL ? (char *)c->body.data : "", c->body.len, 0);
    yyjson_val *obj = yyjson_doc_get_root(doc);
    const char *name = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "name"));
    const resource_t *res = find_resource("namespaces", 10);
    char msg[600];

    srv.creates++;
    if (name == NULL) {
        reply_status(c, 400, "BadRequest", "the body is not a Namespace with metadata.name", NULL, 0);
    } else if (find_object(res, "", name) != NULL) {
        snprintf(msg, sizeof(msg), "namespaces \\\"%s\\\" already exists", name);
        reply_status(c, 409, "AlreadyExists", msg, NULL, 0);
    } else {
        /* the same path as a test's put, so watchers see it ADDED */
        char *text = yyjson_val_write(obj, 0, NULL);
        adm_buf_t cmd = {0};
        yyjson_doc *cdoc;
        const char *problem = "out of memory";
        object_t *o;

        if (text != NULL) {
            bprintf(&cmd, "{\"resource\":\"namespaces\",\"object\":%s}", text);
            free(text);
            cdoc = yyjson_read((char *)cmd.data, cmd.len, 0);
            problem = cdoc != NULL ? control_put(yyjson_doc_get_root(cdoc)) : "not JSON";
            yyjson_doc_free(cdoc);
        }
        adm_buf_free(&cmd);
        o = problem == NULL ? find_object(res, "", name) : NULL;
        if (o == NULL) {
            reply_status(c, 500, "InternalError", "cannot store the namespace", NULL, 0);
        } else {
            adm_buf_t b = {0};

            with_kind(&b, res, o->json);
            adm_buf_append(&b, "", 1);
            reply(c, 201, NULL, (char *)b.data);
            adm_buf_free(&b);
        }
    }
    yyjson_doc_free(doc);
}

/* Remembers a status PUT as /_control/puts reports it. */
static void log_put(const char *path, yyjson_val *body, int code)
{
    yyjson_val *meta = yyjson_obj_get(body, "metadata");
    const char *rv = yyjson_get_str(yyjson_obj_get(meta, "resourceVersion"));
    yyjson_val *used = yyjson_obj_get(yyjson_obj_get(body, "status"), "used");
    char *used_text = used != NULL ? yyjson_val_write(used, 0, NULL) : NULL;
    adm_buf_t b = {0};

    if (srv.nput_log == PUTS_MAX) {
        free(used_text);
        return;
    }
    bprintf(&b, "{\"path\":\"%s\",\"resourceVersion\":\"%s\",\"used\":%s,\"code\":%d}", path,
            rv != NULL ? rv : "", used_text != NULL ? used_text : "null", code);
    adm_buf_append(&b, "", 1);
    srv.put_log[srv.nput_log++] = xstrdup((char *)b.data);
    adm_buf_free(&b);
    free(used_text);
}

/* kube's answer to a write with a resourceVersion that is not the stored one. */
static void reply_conflict(conn_t *c, const char *name)
{
    adm_buf_t b = {0};

    srv.conflicts++;
    bprintf(
        &b,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
        "\"Operation cannot be fulfilled on resourcequotas \\\"%s\\\": the object has been modified; please "
        "apply your changes to the latest version and try again\",\"reason\":\"Conflict\",\"details\":"
        "{\"name\":\"%s\",\"kind\":\"resourcequotas\"},\"code\":409}",
        name, name);
    adm_buf_append(&b, "", 1);
    reply(c, 409, NULL, (char *)b.data);
    adm_buf_free(&b);
}

/*
 * PUT /api/v1/namespaces/NS/resourcequotas/NAME/status: the status subresource's update, as
 * kube-apiserver's registry does it for a ResourceQuota: the stored object's status replaced by the
 * body's (spec and metadata stay), under the body's resourceVersion when it has one.
 */
static void do_put_status(conn_t *c, const char *ns, const char *name)
{
    const resource_t *res = find_resource("resourcequotas", 14);
    yyjson_doc *doc = yyjson_read(c->body.data != NULL ? (char *)c->body.data : "", c->body.len, 0);
    yyjson_val *body = yyjson_doc_get_root(doc);
    yyjson_val *meta = yyjson_obj_get(body, "metadata");
    const char *rv = yyjson_get_str(yyjson_obj_get(meta, "resourceVersion"));
    const char *body_name = yyjson_get_str(yyjson_obj_get(meta, "name"));
    object_t *o = find_object(res, ns, name);
    char path[600], msg[1200], rvtext[32] = "";
    int code = 200;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/resourcequotas/%s/status", ns, name);
    if (o != NULL) {
        snprintf(rvtext, sizeof(rvtext), "%llu", (unsigned long long)o->rv);
    }
    if (srv.fail_count > 0 && srv.fail_status == 409 &&
        (strcmp(srv.fail_on, "put") == 0 || strcmp(srv.fail_on, "any") == 0)) {
        srv.fail_count--;
        srv.injected++;
        code = 409;
        reply_conflict(c, name);
    } else if (inject(c, "put")) {
        code = srv.fail_status;
    } else if (!yyjson_is_obj(body) || body_name == NULL) {
        code = 400;
        reply_status(c, 400, "BadRequest", "the body is not a ResourceQuota with metadata.name", NULL, 0);
    } else if (strcmp(body_name, name) != 0) {
        code = 400;
        snprintf(msg, sizeof(msg), "the name of the object (%s) does not match the name on the URL (%s)",
                 body_name, name);
        reply_status(c, 400, "BadRequest", msg, NULL, 0);
    } else if (o == NULL) {
        code = 404;
        snprintf(msg, sizeof(msg), "resourcequotas \\\"%s\\\" not found", name);
        reply_status(c, 404, "NotFound", msg, NULL, 0);
    } else if (rv != NULL && rv[0] != '\0' && strcmp(rv, rvtext) != 0) {
        code = 409;
        reply_conflict(c, name);
    } else {
        yyjson_doc *stored = yyjson_read(o->json, strlen(o->json), 0);
        yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
        yyjson_mut_val *root = yyjson_val_mut_copy(m, yyjson_doc_get_root(stored));
        yyjson_val *status = yyjson_obj_get(body, "status");
        yyjson_doc *updated;
        adm_buf_t b = {0};
        char *text;

        yyjson_mut_obj_remove_key(root, "status");
        if (status != NULL) {
            yyjson_mut_obj_add_val(m, root, "status", yyjson_val_mut_copy(m, status));
        }
        yyjson_mut_doc_set_root(m, root);
        text = yyjson_mut_write(m, 0, NULL);
        updated = text != NULL ? yyjson_read(text, strlen(text), 0) : NULL;
        srv.rv++;
        free(o->json);
        o->json = stamp(yyjson_doc_get_root(updated), ns, srv.rv);
        o->rv = srv.rv;
        record(res, ns, "MODIFIED", o->json, o->rv);
        with_kind(&b, res, o->json);
        adm_buf_append(&b, "", 1);
        reply(c, 200, NULL, (char *)b.data);
        adm_buf_free(&b);
        yyjson_doc_free(updated);
        free(text);
        yyjson_mut_doc_free(m);
        yyjson_doc_free(stored);
    }
    log_put(path, body, code);
    yyjson_doc_free(doc);
}

static void on_put_delay(uv_timer_t *t)
{
    conn_t *c = t->data;

    c->put_held = false;
    do_put_status(c, c->put_ns, c->put_name);
}

static void on_list_delay(uv_timer_t *t)
{
    conn_t *c = t->data;

    do_list(c, c->req_res, c->list_ns, c->list_query);
    free(c->list_query);
    c->list_query = NULL;
}

/* A LIST, now or held back by delay-lists. */
static void list_or_hold(conn_t *c, const resource_t *res, const char *ns, const char *q)
{
    if (srv.list_delay_ms == 0 || ns[0] == '\0' ||
        (srv.list_delay_resource[0] != '\0' && strcmp(srv.list_delay_resource, res->name) != 0)) {
        do_list(c, res, ns, q);
        return;
    }
    snprintf(c->list_ns, sizeof(c->list_ns), "%s", ns);
    free(c->list_query);
    c->list_query = xstrdup(q != NULL ? q : "");
    uv_timer_start(&c->timeout, on_list_delay, srv.list_delay_ms, 0);
}

/* GET /_control/stats */
static void stats_reply(conn_t *c)
{
    adm_buf_t b = {0};

    bprintf(&b,
            "{\"lists\":%llu,\"watches\":%llu,\"gets\":%llu,\"creates\":%llu,\"puts\":%llu,"
            "\"conflicts\":%llu,\"unauthorized\":%llu,\"injected\":%llu,\"tlsErrors\":%llu,"
            "\"watchers\":%d,\"resourceVersion\":\"%llu\"",
            (unsigned long long)srv.lists, (unsigned long long)srv.watches, (unsigned long long)srv.gets,
            (unsigned long long)srv.creates, (unsigned long long)srv.puts, (unsigned long long)srv.conflicts,
            (unsigned long long)srv.unauthorized, (unsigned long long)srv.injected,
            (unsigned long long)srv.tls_errors, (int)(srv.watchers != NULL), (unsigned long long)srv.rv);
    for (int w = 0; w < 2; w++) {
        const uint64_t *counts = w == 0 ? srv.lists_of : srv.watches_of;

        bprintf(&b, ",\"%s\":{", w == 0 ? "listsOf" : "watchesOf");
        for (size_t i = 0; i < NRESOURCES; i++) {
            bprintf(&b, "%s\"%s\":%llu", i > 0 ? "," : "", resources[i].name, (unsigned long long)counts[i]);
        }
        bprintf(&b, "}");
    }
    bprintf(&b, "}");
    adm_buf_append(&b, "", 1);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
}

static void put_log_reply(conn_t *c)
{
    adm_buf_t b = {0};

    adm_buf_append(&b, "[", 1);
    for (size_t i = 0; i < srv.nput_log; i++) {
        bprintf(&b, "%s%s", i > 0 ? "," : "", srv.put_log[i]);
    }
    adm_buf_append(&b, "]", 2);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
}

static const char api_versions[] =
    "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],\"serverAddressByClientCIDRs\":"
    "[{\"clientCIDR\":\"0.0.0.0/0\",\"serverAddress\":\"127.0.0.1:6443\"}]}";
static const char version_doc[] =
    "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.0-admitd-fake\",\"gitCommit\":\"0\","
    "\"gitTreeState\":\"clean\",\"buildDate\":\"2026-01-01T00:00:00Z\",\"goVersion\":\"none\","
    "\"compiler\":\"none\",\"platform\":\"linux/amd64\"}";

/* The discovery document of group's version (APIResourceList): what kubectl asks before a get. */
static void api_resources(conn_t *c, const char *group)
{
    adm_buf_t b = {0};

    bprintf(&b,
            "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"%s%sv1\",\"resources\":[",
            group, group[0] != '\0' ? "/" : "");
    for (size_t i = 0, listed = 0; i < NRESOURCES; i++) {
        if (strcmp(group_of(&resources[i]), group) != 0) {
            continue; /* served under its own group */
        }
        bprintf(&b,
                "%s{\"name\":\"%s\",\"singularName\":\"\",\"namespaced\":%s,\"kind\":\"%s\","
                "\"verbs\":[\"get\",\"list\",\"watch\"]}",
                listed++ > 0 ? "," : "", resources[i].name, resources[i].namespaced ? "true" : "false",
                resources[i].kind);
    }
    bprintf(&b, "]}");
    adm_buf_append(&b, "", 1);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
}

/* One APIGroup object (the entries of /apis, and /apis/GROUP itself). */
static void api_group(adm_buf_t *b, const char *group, bool alone)
{
    bprintf(b,
            "{%s\"name\":\"%s\",\"versions\":[{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}],"
            "\"preferredVersion\":{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}}",
            alone ? "\"kind\":\"APIGroup\",\"apiVersion\":\"v1\"," : "", group, group, group);
}

/* /apis: every named group the resources table has, once each, in the table's order. */
static void api_groups(conn_t *c)
{
    adm_buf_t b = {0};
    bool first = true;

    bprintf(&b, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
    for (size_t i = 0; i < NRESOURCES; i++) {
        bool seen = resources[i].group[0] == '\0';

        for (size_t k = 0; k < i && !seen; k++) {
            seen = strcmp(resources[k].group, resources[i].group) == 0;
        }
        if (!seen) {
            bprintf(&b, "%s", first ? "" : ",");
            api_group(&b, resources[i].group, false);
            first = false;
        }
    }
    bprintf(&b, "]}");
    adm_buf_append(&b, "", 1);
    reply(c, 200, NULL, (char *)b.data);
    adm_buf_free(&b);
}

static bool group_known(const char *group)
{
    for (size_t i = 0; i < NRESOURCES; i++) {
        if (group[0] != '\0' && strcmp(resources[i].group, group) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * Discovery below /apis: /apis/GROUP (an APIGroup) and /apis/GROUP/v1 (its resources). Sets
 * *group (into path) and *rest (what follows /apis/GROUP/v1/, or NULL) for a resource path.
 * True when it answered.
 */
static bool group_path(conn_t *c, char *path, const char **group, char **rest)
{
    char *g = path + 6, *slash = strchr(g, '/');

    *group = NULL;
    *rest = NULL;
    if (slash != NULL) {
        *slash = '\0';
    }
    if (!group_known(g)) {
        return false;
    }
    *group = g;
    if (slash == NULL) {
        adm_buf_t b = {0};

        api_group(&b, g, true);
        adm_buf_append(&b, "", 1);
        reply(c, 200, NULL, (char *)b.data);
        adm_buf_free(&b);
        return true;
    }
    if (strcmp(slash + 1, "v1") == 0) {
        api_resources(c, g);
        return true;
    }
    if (strncmp(slash + 1, "v1/", 3) == 0) {
        *rest = slash + 4;
    }
    return false;
}

static void handle(conn_t *c)
{
    const char *method = llhttp_method_name(llhttp_get_method(&c->parser));
    char *url, *q, *path, *rest = NULL;
    const char *group = NULL;
    char ns[256] = "", name[256] = "", watch[16];
    const resource_t *res = NULL;

    adm_buf_append(&c->url, "", 1);
    url = (char *)c->url.data;
    q = strchr(url, '?');
    if (q != NULL) {
        *q++ = '\0';
    }
    path = url;
    if (strcmp(path, "/_control") == 0 && strcmp(method, "POST") == 0) {
        char out[128];
        const char *problem =
            control(c->body.data != NULL ? (char *)c->body.data : "", c->body.len, out, sizeof(out));

        if (problem != NULL) {
            reply_status(c, 400, "BadRequest", problem, NULL, 0);
        } else {
            reply(c, 200, NULL, out);
        }
        return;
    }
    if (strcmp(path, "/_control/stats") == 0) {
        stats_reply(c);
        return;
    }
    if (strcmp(path, "/_control/puts") == 0) {
        put_log_reply(c);
        return;
    }
    if (!authorized(c)) {
        srv.unauthorized++;
        reply_status(c, 401, "Unauthorized", "Unauthorized", NULL, 0);
        return;
    }
    if (strcmp(path, "/api/v1/namespaces") == 0 && strcmp(method, "POST") == 0) {
        do_create_namespace(c);
        return;
    }
    if (strcmp(method, "PUT") == 0) {
        char pns[256], pname[256];

        /* the one update it takes: /api/v1/namespaces/NS/resourcequotas/NAME/status */
        if (sscanf(path, "/api/v1/namespaces/%255[^/]/resourcequotas/%255[^/]/status", pns, pname) == 2 &&
            strlen(path) ==
                strlen("/api/v1/namespaces//resourcequotas//status") + strlen(pns) + strlen(pname)) {
            srv.puts++; /* counted as it arrives, held or not */
            if (srv.put_delay_ms > 0) {
                c->put_held = true;
                snprintf(c->put_ns, sizeof(c->put_ns), "%s", pns);
                snprintf(c->put_name, sizeof(c->put_name), "%s", pname);
                uv_timer_start(&c->timeout, on_put_delay, srv.put_delay_ms, 0);
                return;
            }
            do_put_status(c, pns, pname);
            return;
        }
        reply_status(c, 405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource", NULL, 0);
        return;
    }
    if (strcmp(method, "GET") != 0) {
        reply_status(c, 405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource", NULL, 0);
        return;
    }
    if (strcmp(path, "/version") == 0) {
        reply(c, 200, NULL, version_doc);
        return;
    }
    if (strcmp(path, "/api") == 0) {
        reply(c, 200, NULL, api_versions);
        return;
    }
    if (strcmp(path, "/apis") == 0) {
        api_groups(c);
        return;
    }
    if (strcmp(path, "/api/v1") == 0) {
        api_resources(c, "");
        return;
    }
    if (strncmp(path, "/api/v1/", 8) == 0) {
        group = "";
        rest = path + 8;
    } else if (strncmp(path, "/apis/", 6) == 0 && group_path(c, path, &group, &rest)) {
        return;
    }
    if (rest != NULL) {
        char *seg[4] = {0};
        int n = 0;

        for (char *p = rest; p != NULL && *p != '\0' && n < 4;) {
            char *slash = strchr(p, '/');

            seg[n++] = p;
            if (slash != NULL) {
                *slash = '\0';
                p = slash + 1;
            } else {
                p = NULL;
            }
        }
        /* RES | RES/NAME | namespaces/NS/RES | namespaces/NS/RES/NAME */
        if (n >= 3 && strcmp(seg[0], "namespaces") == 0) {
            res = find_resource(seg[2], strlen(seg[2]));
            snprintf(ns, sizeof(ns), "%s", seg[1]);
            if (n == 4) {
                snprintf(name, sizeof(name), "%s", seg[3]);
            }
            if (res != NULL && !res->namespaced) {
                res = NULL;
            }
        } else if (n <= 2) {
            res = find_resource(seg[0], strlen(seg[0]));
            if (n == 2) {
                snprintf(name, sizeof(name), "%s", seg[1]);
            }
        }
        if (res != NULL && strcmp(group_of(res), group) != 0) {
            res = NULL; /* a resource under another group's path */
        }
    }
    if (res == NULL) {
        reply_status(c, 404, "NotFound", "the server could not find the requested resource", NULL, 0);
        return;
    }
    c->req_res = res;
    if (name[0] != '\0') {
        if (!inject(c, "get")) {
            do_get(c, res, ns, name);
        }
        return;
    }
    query(q, "watch", watch, sizeof(watch));
    if (strcmp(watch, "true") == 0 || strcmp(watch, "1") == 0) {
        if (!inject(c, "watch")) {
            do_watch(c, res, ns, q);
        }
        return;
    }
    srv.lists++;
    srv.lists_of[res - resources]++;
    if (!inject(c, "list")) {
        list_or_hold(c, res, ns, q);
    }
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    adm_buf_append(&((conn_t *)p->data)->url, at, len);
    return 0;
}

static int on_field(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;

    adm_buf_append(&c->field, at, len);
    return 0;
}

static int on_field_done(llhttp_t *p)
{
    conn_t *c = p->data;

    c->in_auth = c->field.len == 13 && strncasecmp((char *)c->field.data, "authorization", 13) == 0;
    c->field.len = 0;
    if (c->in_auth) {
        c->auth.len = 0;
    }
    return 0;
}

static int on_value(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;

    if (c->in_auth) {
        adm_buf_append(&c->auth, at, len);
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    adm_buf_append(&((conn_t *)p->data)->body, at, len);
    return 0;
}

static int on_begin(llhttp_t *p)
{
    conn_t *c = p->data;

    c->url.len = c->auth.len = c->body.len = c->field.len = 0;
    return 0;
}

static int on_complete(llhttp_t *p)
{
    conn_t *c = p->data;

    handle(c);
    return c->watching ? HPE_PAUSED : 0;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_field,
    .on_header_field_complete = on_field_done,
    .on_header_value = on_value,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char space[65536];

    (void)h;
    (void)suggested;
    *buf = uv_buf_init(space, sizeof(space));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = s->data;
    const char *data = buf->base;
    size_t len = nread > 0 ? (size_t)nread : 0;
    int rc = 0;

    if (nread < 0) {
        conn_close(c);
        return;
    }
    if (c->tls != NULL && len > 0) {
        c->plain.len = 0;
        rc = adm_tls_session_recv(c->tls, (const uint8_t *)data, len, &c->plain);
        flush_tls(c); /* the handshake's flights, alerts */
        if (rc != 0 && rc != ADM_EOF) {
            srv.tls_errors++;
            conn_close(c);
            return;
        }
        data = (const char *)c->plain.data;
        len = c->plain.len;
    }
    if (c->watching || len == 0) {
        if (rc == ADM_EOF) {
            conn_close(c);
        }
        return; /* a watch's client sends nothing more that matters */
    }
    if (llhttp_execute(&c->parser, data, len) != HPE_OK && !c->watching) {
        conn_close(c);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    conn_t *c;

    if (status != 0) {
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        abort();
    }
    uv_tcp_init(srv.loop, &c->tcp);
    uv_timer_init(srv.loop, &c->timeout);
    uv_timer_init(srv.loop, &c->bookmark);
    uv_timer_init(srv.loop, &c->slow);
    c->tcp.data = c->timeout.data = c->bookmark.data = c->slow.data = c;
    llhttp_init(&c->parser, HTTP_REQUEST, &settings);
    c->parser.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
        (srv.tls != NULL && adm_tls_session_create(srv.tls, NULL, &c->tls) != 0)) {
        conn_close(c);
        return;
    }
    /* as Go's net package (kube-apiserver) does: a watch event goes out at once, not after the ACK
     * of the one before */
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: adm-fake-apiserver --listen HOST:PORT [--insecure-http] [--token T | --token-file F]\n"
            "                          [--bookmark-interval-ms N] [--namespaces N]\n"
            "                          [--tls-cert-file F --tls-private-key-file F [--client-ca-file F]]\n");
}

int main(int argc, char **argv)
{
    const char *listen = "127.0.0.1:0";
    struct sockaddr_in addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound), nns = 0;
    char host[64];
    int port;

    srv.bookmark_ms = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--token") == 0 && i + 1 < argc) {
            srv.token = argv[++i];
        } else if (strcmp(argv[i], "--token-file") == 0 && i + 1 < argc) {
            srv.token_file = argv[++i];
        } else if (strcmp(argv[i], "--bookmark-interval-ms") == 0 && i + 1 < argc) {
            srv.bookmark_ms = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--namespaces") == 0 && i + 1 < argc) {
            nns = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--tls-cert-file") == 0 && i + 1 < argc) {
            srv.tls_opts.cert_file = argv[++i];
        } else if (strcmp(argv[i], "--tls-private-key-file") == 0 && i + 1 < argc) {
            srv.tls_opts.key_file = argv[++i];
        } else if (strcmp(argv[i], "--client-ca-file") == 0 && i + 1 < argc) {
            srv.tls_opts.client_ca_file = argv[++i];
        } else if (strcmp(argv[i], "--insecure-http") == 0) {
            /* plain HTTP is all it speaks; accepted so the test harness can start it like admitd */
        } else {
            usage();
            return 2;
        }
    }
    if (sscanf(listen, "%63[^:]:%d", host, &port) != 2 || uv_ip4_addr(host, port, &addr) != 0) {
        usage();
        return 2;
    }
    if (srv.tls_opts.cert_file != NULL || srv.tls_opts.key_file != NULL) {
        char why[512];

        if (srv.tls_opts.cert_file == NULL || srv.tls_opts.key_file == NULL || adm_tls_global_init() != 0 ||
            adm_tls_server_ctx_create(&srv.tls_opts, &srv.tls, why, sizeof(why)) != 0) {
            fprintf(stderr, "adm-fake-apiserver: TLS: %s\n",
                    srv.tls_opts.cert_file == NULL || srv.tls_opts.key_file == NULL ? "give both files"
                                                                                    : why);
            return 2;
        }
    }
    srv.objects = calloc(MAX_OBJECTS, sizeof(object_t));
    srv.history = calloc(HISTORY_MAX, sizeof(event_t));
    if (srv.objects == NULL || srv.history == NULL) {
        return 1;
    }
    for (int i = 0; i < nns; i++) {
        char cmd[256], out[128];

        snprintf(cmd, sizeof(cmd),
                 "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":"
                 "{\"name\":\"ns-%d\",\"labels\":{\"kubernetes.io/metadata.name\":\"ns-%d\"}}}}",
                 i, i);
        control(cmd, strlen(cmd), out, sizeof(out));
    }
    srv.loop = uv_default_loop();
    uv_tcp_init(srv.loop, &srv.listener);
    if (uv_tcp_bind(&srv.listener, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&srv.listener, 128, on_connection) != 0) {
        fprintf(stderr, "adm-fake-apiserver: cannot listen on %s\n", listen);
        return 1;
    }
    uv_tcp_getsockname(&srv.listener, (struct sockaddr *)&bound, &len);
    /* the harness waits for admitd's words */
    fprintf(stderr, "serving admission on 127.0.0.1:%d (fake API server, %s)\n",
            ntohs(((struct sockaddr_in *)&bound)->sin_port), srv.tls != NULL ? "https" : "http");
    return uv_run(srv.loop, UV_RUN_DEFAULT);
}

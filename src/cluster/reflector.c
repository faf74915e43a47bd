/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reflector of reflector.h: one kind's LIST, WATCH, relist and back-off, driven by the answers
 * of the API client and one timer. At most one call is in flight per reflector; the timer either
 * waits out a back-off or defers work out of a watch's body reader (a relist asked for by an ERROR
 * event starts on the next loop turn, after the watch's call is cancelled).
 */
#include "adm/cluster/reflector.h"

#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/backoff.h"
#include "adm/cluster/watch_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A LIST page is small; the limit bounds what one waits for. */
#define LIST_TIMEOUT_MS 60000
/* client-go's minWatchTimeout: each watch asks for [5, 10) minutes. */
#define MIN_WATCH_TIMEOUT_S 300
/* A watch that ends this soon with nothing in it is a failure (client-go: "very short watch"). */
#define SHORT_WATCH_MS 1000
#define MAX_PAGES 4096

typedef enum next_step_e {
    STEP_LIST,  /* a full LIST from the first page */
    STEP_WATCH, /* a WATCH from r->rv */
} next_step_t;

struct adm_reflector_s {
    uv_loop_t *loop;
    adm_api_client_t *api;
    const adm_watched_kind_t *w;
    adm_kind_store_t *k;
    uv_timer_t timer; /* back-off, or work deferred out of a body reader */
    adm_call_t *call; /* the call in flight, or NULL */
    uint64_t call_started_ms;
    next_step_t next; /* what the timer starts */
    char path[512];   /* the collection's path */
    char *query;      /* the scope's selectors, "&labelSelector=...": "" when none (heap) */
    char name[192];   /* for log lines: the kind, and a scope's selectors ("Service metadata.name=x") */
    void (*changed)(void *arg); /* the scope's: told after the store changed, or NULL */
    void *changed_arg;
    /* the LIST being gathered: its pages live in list_arena until the store replaces its content */
    adm_arena_t *list_arena;
    yyjson_val **pages;
    size_t npages;
    char *continue_token; /* malloc'd; NULL on the first page */
    /* the watch */
    adm_watch_framer_t framer;
    adm_arena_t *event_arena;
    uint64_t watch_events; /* events of the current watch */
    char rv[128];
    adm_backoff_t backoff;
    adm_reflector_stats_t stats;
    bool stopping;
};

static void start_list(adm_reflector_t *r);
static void list_page(adm_reflector_t *r);
static void start_watch(adm_reflector_t *r);

bool adm_watched_kind_path(const adm_watched_kind_t *w, const char *namespace_, const char *name, char *out,
                           size_t out_len)
{
    int n;
    bool core = w->group[0] == '\0';
    bool in_ns = w->namespaced && name != NULL && namespace_ != NULL && namespace_[0] != '\0';

    n = snprintf(out, out_len, "%s%s%s/%s%s%s/%s%s%s", core ? "/api" : "/apis/", w->group, core ? "" : "",
                 w->version, in_ns ? "/namespaces/" : "", in_ns ? namespace_ : "", w->resource,
                 name != NULL ? "/" : "", name != NULL ? name : "");
    return n > 0 && (size_t)n < out_len;
}

/* Appends value to out percent-encoded as a query value (continue tokens are base64: + / =). */
static bool query_escape(char *out, size_t out_len, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(out);

    for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                     *p == '-' || *p == '_' || *p == '.' || *p == '~';

        if (n + 4 > out_len) {
            return false;
        }
        if (plain) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return true;
}

static const char *kind_name(const adm_reflector_t *r)
{
    return r->name;
}

static void tell_changed(adm_reflector_t *r)
{
    if (r->changed != NULL) {
        r->changed(r->changed_arg);
    }
}

/* ---- pacing -------------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    adm_reflector_t *r = t->data;

    if (r->stopping) {
        return;
    }
    if (r->next == STEP_WATCH) {
        start_watch(r);
    } else {
        start_list(r);
    }
}

/* Starts step on the next loop turn (out of a body reader, or as a fresh start). */
static void soon(adm_reflector_t *r, next_step_t step)
{
    r->next = step;
    uv_timer_start(&r->timer, on_timer, 0, 0);
}

/* A failure of verb: counted, logged once per back-off step, and step tried again after the wait. */
static void fail(adm_reflector_t *r, const char *verb, next_step_t step, uint64_t retry_after_s,
                 const char *detail)
{
    bool log_it = false;
    uint64_t wait = adm_backoff_next(&r->backoff, uv_now(r->loop), retry_after_s, &log_it);

    r->stats.errors++;
    if (log_it) {
        adm_log_warn("informer %s: %s %s failed: %s; retrying in %.1fs", kind_name(r), verb, r->path, detail,
                     (double)wait / 1000.0);
    }
    r->next = step;
    uv_timer_start(&r->timer, on_timer, wait, 0);
}

/* A non-2xx answer to verb: 410 relists at once; the rest wait on the back-off. */
static void http_fail(adm_reflector_t *r, const char *verb, next_step_t step, const adm_call_result_t *res)
{
    adm_arena_t *a = r->event_arena;
    const char *reason = "", *message = "";
    uint64_t retry_after = 0;
    char detail[600];

    if (res->status == 410) {
        soon(r, STEP_LIST);
        return;
    }
    if (res->status == 401) {
        adm_api_unauthorized(r->api, r->call_started_ms); /* the token file is read again */
    }
    if (adm_status_decode(a, (const char *)res->body, res->body_len, &reason, &message, &retry_after) != 0) {
        reason = "";
        message = "";
    }
    if (res->status == 429 && res->retry_after[0] >= '0' && res->retry_after[0] <= '9') {
        retry_after = strtoull(res->retry_after, NULL, 10);
    } else if (res->status != 429) {
        retry_after = 0; /* only a 429 sets the wait (client-go's IsTooManyRequests) */
    }
    snprintf(detail, sizeof(detail), "HTTP %d%s%s%s%.400s", res->status, reason[0] != '\0' ? " " : "", reason,
             message[0] != '\0' ? ": " : "", message);
    adm_arena_reset(a);
    fail(r, verb, step, retry_after, detail);
}

/* ---- LIST ---------------------------------------------------------------------------------- */

static void list_done(adm_reflector_t *r, const char *rv)
{
    int rc = adm_kind_store_replace(r->k, r->pages, r->npages);
    size_t n = adm_kind_store_count(r->k);

    if (rc != 0) {
        fail(r, "list", STEP_LIST, 0, rc == ADM_ENOMEM ? "out of memory" : "an item without metadata.name");
        return;
    }
    snprintf(r->rv, sizeof(r->rv), "%s", rv);
    if (r->stats.lists > 0) {
        r->stats.relists++;
    }
    r->stats.lists++;
    r->stats.last_sync_ms = uv_now(r->loop);
    if (!r->stats.synced) {
        adm_log_info("informer %s: synced, %zu objects at resourceVersion %s", kind_name(r), n, r->rv);
    } else {
        adm_log_v(2, "informer %s: relisted, %zu objects at resourceVersion %s", kind_name(r), n, r->rv);
    }
    r->stats.synced = true;
    adm_arena_reset(r->list_arena);
    r->npages = 0;
    tell_changed(r);
    start_watch(r);
}

static void on_list_answer(const adm_call_result_t *res, void *arg)
{
    adm_reflector_t *r = arg;
    adm_list_page_t page;
    char err[300];
    int rc;

    r->call = NULL;
    if (res->error != ADM_CALL_OK) {
        fail(r, "list", STEP_LIST, 0, res->detail);
        return;
    }
    if (res->status == 410 && r->continue_token != NULL) {
        /* the continue token expired (a compaction): the list starts again from its first page */
        adm_log_v(2, "informer %s: continue token expired; listing again", kind_name(r));
        soon(r, STEP_LIST);
        return;
    }
    if (res->status < 200 || res->status > 299) {
        http_fail(r, "list", STEP_LIST, res);
        return;
    }
    rc = adm_list_page_decode(r->list_arena, (const char *)res->body, res->body_len, &page, err, sizeof(err));
    if (rc == 0 && r->npages == MAX_PAGES) {
        snprintf(err, sizeof(err), "more than %d pages", MAX_PAGES);
        rc = ADM_EINVAL;
    }
    if (rc != 0) {
        fail(r, "list", STEP_LIST, 0, err);
        return;
    }
    r->pages[r->npages++] = page.items;
    free(r->continue_token);
    r->continue_token = NULL;
    if (page.continue_token[0] == '\0') {
        list_done(r, page.resource_version);
        return;
    }
    r->continue_token = strdup(page.continue_token);
    if (r->continue_token == NULL) {
        fail(r, "list", STEP_LIST, 0, "out of memory");
        return;
    }
    list_page(r);
}

static void list_page(adm_reflector_t *r)
{
    char path[2048];

    snprintf(path, sizeof(path), "%s?limit=%d%s%s", r->path, ADM_REFLECTOR_PAGE, r->query,
             r->continue_token != NULL ? "&continue=" : "");
    if (r->continue_token != NULL && !query_escape(path, sizeof(path), r->continue_token)) {
        fail(r, "list", STEP_LIST, 0, "continue token too long");
        return;
    }
    r->call = adm_api_get(r->api, path, LIST_TIMEOUT_MS, on_list_answer, r, &r->call_started_ms);
    if (r->call == NULL) {
        fail(r, "list", STEP_LIST, 0, "out of memory");
    }
}

/* A full LIST, from the first page, unset resourceVersion (a consistent read: right on every server). */
static void start_list(adm_reflector_t *r)
{
    adm_arena_reset(r->list_arena);
    r->npages = 0;
    free(r->continue_token);
    r->continue_token = NULL;
    list_page(r);
}

/* ---- WATCH --------------------------------------------------------------------------------- */

/* Applies one framed event; false when the watch must end (the next step is then scheduled). */
static bool apply_event(adm_reflector_t *r, const char *text, size_t len)
{
    adm_watch_event_t ev;
    char err[300];
    int rc = adm_watch_event_decode(r->event_arena, text, len, &ev, err, sizeof(err));

    if (rc != 0) {
        fail(r, "watch", STEP_LIST, 0, err);
        return false;
    }
    switch (ev.type) {
    case ADM_WATCH_ADDED:
    case ADM_WATCH_MODIFIED: rc = adm_kind_store_put(r->k, ev.object); break;
    case ADM_WATCH_DELETED: adm_kind_store_delete(r->k, ev.namespace_, ev.name); break;
    case ADM_WATCH_BOOKMARK: break;
    case ADM_WATCH_ERROR:
        if (adm_watch_event_expired(&ev)) {
            adm_log_v(2, "informer %s: watch: %s; listing again", kind_name(r), ev.message);
            soon(r, STEP_LIST);
        } else {
            snprintf(err, sizeof(err), "ERROR event %d %s: %.200s", ev.code, ev.reason, ev.message);
            fail(r, "watch", STEP_LIST, 0, err);
        }
        return false;
    }
    if (rc == ADM_ENOMEM) {
        fail(r, "watch", STEP_LIST, 0, "out of memory");
        return false;
    }
    if (rc != 0) {
        adm_log_v(2, "informer %s: an object without metadata.name ignored", kind_name(r));
    }
    snprintf(r->rv, sizeof(r->rv), "%s", ev.resource_version);
    r->watch_events++;
    r->stats.events++;
    r->stats.last_sync_ms = uv_now(r->loop);
    adm_arena_reset(r->event_arena);
    if (ev.type != ADM_WATCH_BOOKMARK && rc == 0) {
        tell_changed(r);
    }
    return true;
}

static int on_watch_piece(const uint8_t *data, size_t len, void *arg)
{
    adm_reflector_t *r = arg;
    const char *p = (const char *)data;

    while (len > 0) {
        const char *event;
        size_t used = 0, event_len = 0;
        adm_frame_result_t fr = adm_watch_framer_feed(&r->framer, p, len, &used, &event, &event_len);

        p += used;
        len -= used;
        if (fr == ADM_FRAME_ERROR) {
            r->call = NULL; /* returning nonzero cancels it */
            fail(r, "watch", STEP_LIST, 0, "the stream is not a sequence of JSON objects");
            return 1;
        }
        if (fr == ADM_FRAME_EVENT && !apply_event(r, event, event_len)) {
            r->call = NULL;
            return 1;
        }
    }
    return 0;
}

static void on_watch_end(const adm_call_result_t *res, void *arg)
{
    adm_reflector_t *r = arg;
    bool short_empty = r->watch_events == 0 && uv_now(r->loop) - r->call_started_ms < SHORT_WATCH_MS;

    r->call = NULL;
    if (res->error == ADM_CALL_OK && res->status >= 200 && res->status <= 299) {
        if (short_empty) {
            fail(r, "watch", STEP_WATCH, 0, "very short watch: ended at once with no events");
        } else {
            start_watch(r); /* the server's timeoutSeconds: on from the last resourceVersion */
        }
        return;
    }
    if (res->error != ADM_CALL_OK) {
        if (r->watch_events > 0 && !short_empty) {
            adm_log_v(2, "informer %s: watch cut (%s); watching again", kind_name(r), res->detail);
            start_watch(r);
        } else {
            fail(r, "watch", STEP_WATCH, 0, res->detail);
        }
        return;
    }
    http_fail(r, "watch", res->status == 429 ? STEP_WATCH : STEP_LIST, res);
}

static void start_watch(adm_reflector_t *r)
{
    char path[1536];
    /* spread so the watches of many admitd replicas do not end together (the clock's low bits) */
    uint64_t timeout_s = MIN_WATCH_TIMEOUT_S + (uv_hrtime() / 1000) % MIN_WATCH_TIMEOUT_S;
    int n = snprintf(path, sizeof(path), "%s?allowWatchBookmarks=true%s&resourceVersion=", r->path, r->query);

    if (n <= 0 || (size_t)n >= sizeof(path) || !query_escape(path, sizeof(path), r->rv)) {
        fail(r, "watch", STEP_LIST, 0, "resourceVersion too long");
        return;
    }
    snprintf(path + strlen(path), sizeof(path) - strlen(path), "&timeoutSeconds=%llu&watch=true",
             (unsigned long long)timeout_s);
    adm_watch_framer_free(&r->framer);
    adm_watch_framer_init(&r->framer);
    r->watch_events = 0;
    /* the client's own deadline leaves the server time to end the stream itself */
    r->call = adm_api_watch(r->api, path, (timeout_s + 30) * 1000, on_watch_piece, on_watch_end, r,
                            &r->call_started_ms);
    if (r->call == NULL) {
        fail(r, "watch", STEP_WATCH, 0, "out of memory");
    }
}

/* ---- lifetime ------------------------------------------------------------------------------ */

/* The collection's path, with the scope's namespace: "/apis/G/V/namespaces/NS/RESOURCE". */
static bool scoped_path(const adm_watched_kind_t *w, const adm_reflector_scope_t *scope, char *out,
                        size_t out_len)
{
    const char *ns = scope != NULL && scope->namespace_ != NULL ? scope->namespace_ : "";
    int n;

    if (!w->namespaced || ns[0] == '\0') {
        return adm_watched_kind_path(w, NULL, NULL, out, out_len);
    }
    if (w->group[0] == '\0') {
        n = snprintf(out, out_len, "/api/%s/namespaces/%s/%s", w->version, ns, w->resource);
    } else {
        n = snprintf(out, out_len, "/apis/%s/%s/namespaces/%s/%s", w->group, w->version, ns, w->resource);
    }
    return n > 0 && (size_t)n < out_len;
}

/* "&labelSelector=V&fieldSelector=V" for the scope's selectors, escaped (heap; "" for none). */
static char *scope_query(const adm_reflector_scope_t *scope)
{
    const char *label = scope != NULL ? scope->label_selector : NULL;
    const char *field = scope != NULL ? scope->field_selector : NULL;
    size_t len = 64 + 3 * (label != NULL ? strlen(label) : 0) + 3 * (field != NULL ? strlen(field) : 0);
    char *q = calloc(1, len);

    if (q == NULL) {
        return NULL;
    }
    if (label != NULL) {
        snprintf(q, len, "&labelSelector=");
        query_escape(q, len, label);
    }
    if (field != NULL) {
        snprintf(q + strlen(q), len - strlen(q), "&fieldSelector=");
        query_escape(q, len, field);
    }
    return q;
}

int adm_reflector_start(uv_loop_t *loop, adm_api_client_t *api, const adm_watched_kind_t *w,
                        adm_kind_store_t *k, adm_reflector_t **out)
{
    return adm_reflector_start_scoped(loop, api, w, NULL, k, out);
}

int adm_reflector_start_scoped(uv_loop_t *loop, adm_api_client_t *api, const adm_watched_kind_t *w,
                               const adm_reflector_scope_t *scope, adm_kind_store_t *k, adm_reflector_t **out)
{
    adm_reflector_t *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (r == NULL) {
        return ADM_ENOMEM;
    }
    r->list_arena = adm_arena_create(64 * 1024);
    r->event_arena = adm_arena_create(16 * 1024);
    r->pages = calloc(MAX_PAGES, sizeof(*r->pages));
    r->query = scope_query(scope);
    if (r->list_arena == NULL || r->event_arena == NULL || r->pages == NULL || r->query == NULL ||
        !scoped_path(w, scope, r->path, sizeof(r->path))) {
        adm_arena_destroy(r->list_arena);
        adm_arena_destroy(r->event_arena);
        free(r->pages);
        free(r->query);
        free(r);
        return ADM_ENOMEM;
    }
    snprintf(r->name, sizeof(r->name), "%s", w->kind);
    if (scope != NULL) {
        r->changed = scope->changed;
        r->changed_arg = scope->arg;
        snprintf(r->name, sizeof(r->name), "%s%s%.80s%s%.80s", w->kind,
                 scope->label_selector != NULL ? " " : "",
                 scope->label_selector != NULL ? scope->label_selector : "",
                 scope->field_selector != NULL ? " " : "",
                 scope->field_selector != NULL ? scope->field_selector : "");
    }
    r->loop = loop;
    r->api = api;
    r->w = w;
    r->k = k;
    adm_watch_framer_init(&r->framer);
    adm_backoff_init(&r->backoff, (uint64_t)(uintptr_t)r ^ uv_hrtime());
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    soon(r, STEP_LIST);
    *out = r;
    return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
    adm_reflector_t *r = h->data;

    adm_arena_destroy(r->list_arena);
    adm_arena_destroy(r->event_arena);
    adm_watch_framer_free(&r->framer);
    free(r->continue_token);
    free(r->pages);
    free(r->query);
    free(r);
}

void adm_reflector_stop(adm_reflector_t *r)
{
    if (r == NULL || r->stopping) {
        return;
    }
    r->stopping = true;
    adm_call_cancel(r->call);
    r->call = NULL;
    uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

const adm_reflector_stats_t *adm_reflector_stats(const adm_reflector_t *r)
{
    return &r->stats;
}

const adm_watched_kind_t *adm_reflector_kind(const adm_reflector_t *r)
{
    return r->w;
}

const char *adm_reflector_resource_version(const adm_reflector_t *r)
{
    return r->rv;
}

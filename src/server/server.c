/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Listeners, routes, the connection limit and the SIGTERM drain. The server serves the probes
 * (/healthz /livez /readyz) and /metrics itself, as routes like any other; every other path
 * belongs to the application, which adds its routes before the server starts (admitd's admission
 * endpoints, admitd-mockhook's catch-all).
 *
 * The drain follows what Kubernetes needs from a webhook pod: first keep serving for
 * --shutdown-delay with /readyz failing (endpoints drop the pod meanwhile) and every answer carrying
 * Connection: close; then close the listeners and let in-flight requests finish within
 * --shutdown-grace. The done callback fires once every handle the server owns has closed.
 */
#include "adm/server/server.h"

#include "adm/base/admission_metrics.h"
#include "adm/base/buf.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/reload.h"
#include "adm/base/shared_metrics.h"
#include "adm/base/util.h"
#include "adm/net/tls.h"
#include "adm/server/metrics.h"
#include "conn_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct adm_server_s {
    uv_loop_t *loop;
    const adm_options_t *opts;
    adm_tls_ctx_t *tls; /* NULL under --insecure-http */
    adm__listener_t listeners[ADM_LISTENER_KINDS];
    int nlisteners;
    adm_route_table_t routes; /* every listener's, the server's own included */
    adm__conns_t conns;
    uv_timer_t drain_timer;
    adm_server_done_cb done;
    void *done_arg;
    int pending_closes;
    bool started;                   /* routes are fixed from here on */
    bool ready;                     /* /readyz answers 200 */
    bool (*ready_check)(void *arg); /* and this says so too (adm_server_set_ready_check) */
    void *ready_arg;
    bool finished;
    adm_metrics_t own_metrics;
    adm_metrics_t *metrics;                /* own_metrics, or under --workers this worker's shared slot */
    adm_buf_t scratch;                     /* reused for rendering /metrics */
    adm_server_metrics_fn more_metrics[4]; /* the application's families (adm_server_add_metrics) */
    void *more_metrics_arg[4];
    size_t nmore_metrics;
};

static void maybe_finish(adm_server_t *s);
static void on_conn_freed(void *arg);

int adm_server_create(uv_loop_t *loop, const adm_options_t *opts, adm_server_t **out, char *err,
                      size_t err_len)
{
    adm_server_t *s = calloc(1, sizeof(*s));
    int rc;

    if (s == NULL) {
        snprintf(err, err_len, "out of memory");
        return ADM_ENOMEM;
    }
    s->loop = loop;
    s->opts = opts;
    adm_route_table_init(&s->routes);
    s->metrics = &s->own_metrics;
    adm__conns_init(&s->conns, loop, opts, s->metrics, on_conn_freed, s);
    if (!opts->insecure_http) {
        adm_tls_server_opts_t tls_opts = {
            .cert_file = opts->tls_cert_file,
            .key_file = opts->tls_key_file,
            .client_ca_file = opts->client_ca_file,
            .self_signed_out = opts->self_signed_ca_out,
        };

        rc = adm_tls_server_ctx_create(&tls_opts, &s->tls, err, err_len);
        if (rc != 0) {
            free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

static int tls_prepare(void *arg, void **pending, char *err, size_t err_len)
{
    adm_server_t *s = arg;
    adm_tls_server_opts_t tls_opts = {
        .cert_file = s->opts->tls_cert_file,
        .key_file = s->opts->tls_key_file,
        .client_ca_file = s->opts->client_ca_file,
        .keep_generated = s->opts->tls_cert_file == NULL ? s->tls : NULL,
    };

    return adm_tls_server_ctx_create(&tls_opts, (adm_tls_ctx_t **)pending, err, err_len);
}

/* New handshakes take the new context; every open session holds a reference to its own. */
static void tls_commit(void *arg, void *pending)
{
    adm_server_t *s = arg;
    adm_tls_ctx_t *old = s->tls;

    s->tls = pending;
    for (int i = 0; i < s->nlisteners; i++) {
        if (s->listeners[i].tls != NULL) {
            s->listeners[i].tls = s->tls;
        }
    }
    adm_tls_ctx_unref(old);
}

static void tls_discard(void *arg, void *pending)
{
    adm_tls_ctx_unref(pending);
}

static void tls_watch(void *arg, adm_reload_t *r)
{
    const adm_options_t *o = ((adm_server_t *)arg)->opts;
    const char *files[] = {o->tls_cert_file, o->tls_key_file, o->client_ca_file};

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (files[i] != NULL) {
            adm_reload_watch(r, files[i]);
        }
    }
}

int adm_server_add_reload(adm_server_t *s, adm_reload_t *r)
{
    adm_reload_part_t part = {
        .name = "TLS",
        .prepare = tls_prepare,
        .commit = tls_commit,
        .discard = tls_discard,
        .watch = tls_watch,
        .arg = s,
    };

    if (s->tls == NULL) {
        return 0;
    }
    return adm_reload_add_part(r, &part);
}

adm_metrics_t *adm_server_metrics(adm_server_t *s)
{
    return s->metrics;
}

int adm_server_share_metrics(adm_server_t *s)
{
    adm_metrics_t *m;

    if (adm_shm_self() < 0) {
        return 0;
    }
    if (s->started || s->routes.n > 0) {
        return ADM_EINVAL; /* endpoint labels are numbered in the slot */
    }
    m = adm_shm_part((unsigned)adm_shm_self(), ADM_SHM_SERVER, sizeof(*m));
    if (m == NULL) {
        return ADM_ENOMEM;
    }
    /* a restarted worker keeps its predecessor's counts; its connections died with it */
    m->server_connections = 0;
    s->metrics = m;
    s->conns.metrics = m;
    return 0;
}

/* What a scrape renders: this process's metrics, or under --workers every worker's summed. */
static const adm_metrics_t *metrics_to_render(adm_server_t *s, adm_metrics_t **sum)
{
    *sum = NULL;
    if (adm_shm_workers() == 0) {
        return s->metrics;
    }
    *sum = calloc(1, sizeof(**sum));
    if (*sum == NULL) {
        return NULL;
    }
    /* this worker's labels first, so the order is the one a single process renders */
    memcpy((*sum)->endpoints, s->metrics->endpoints, sizeof((*sum)->endpoints));
    for (unsigned w = 0; w < adm_shm_workers(); w++) {
        const adm_metrics_t *m = adm_shm_part(w, ADM_SHM_SERVER, sizeof(*m));

        if (m != NULL) {
            adm_metrics_add(*sum, m);
        }
    }
    return *sum;
}

void adm_server_destroy(adm_server_t *s)
{
    if (s == NULL) {
        return;
    }
    if (s->tls != NULL) {
        adm_tls_ctx_unref(s->tls);
    }
    adm_buf_free(&s->scratch);
    adm__conns_dispose(&s->conns);
    free(s);
}

static void text_answer(adm_http_response_t *resp, int status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = text;
    resp->body_len = strlen(text);
}

/* The probes' and /metrics' answer: HEAD gets the headers (and the body's length) only. */
static void reply(adm_exchange_t *x, adm_http_response_t *resp)
{
    resp->omit_body = adm_exchange_request(x)->method == HTTP_HEAD;
    adm_exchange_reply(x, resp);
}

static void serve_alive(adm_exchange_t *x, void *arg)
{
    adm_http_response_t resp = {0};

    text_answer(&resp, 200, "ok");
    reply(x, &resp);
}

static void serve_ready(adm_exchange_t *x, void *arg)
{
    adm_server_t *s = arg;
    adm_http_response_t resp = {0};

    if (!s->ready) {
        text_answer(&resp, 503, s->conns.draining ? "shutting down\n" : "not ready\n");
    } else if (s->ready_check != NULL && !s->ready_check(s->ready_arg)) {
        text_answer(&resp, 503, "not synced\n");
    } else {
        text_answer(&resp, 200, "ok");
    }
    reply(x, &resp);
}

int adm_server_add_metrics(adm_server_t *s, adm_server_metrics_fn fn, void *arg)
{
    if (s->nmore_metrics == sizeof(s->more_metrics) / sizeof(s->more_metrics[0])) {
        return ADM_ETOOBIG;
    }
    s->more_metrics[s->nmore_metrics] = fn;
    s->more_metrics_arg[s->nmore_metrics] = arg;
    s->nmore_metrics++;
    return 0;
}

static void serve_metrics(adm_exchange_t *x, void *arg)
{
    adm_server_t *s = arg;
    adm_http_response_t resp = {0};
    adm_metrics_t *sum;
    const adm_metrics_t *m = metrics_to_render(s, &sum);
    int rc = m != NULL ? 0 : ADM_ENOMEM;

    s->scratch.len = 0;
    /* the admission families follow the server's own: admitd_connections' client side is there */
    if (rc == 0) {
        rc = adm_metrics_render(m, &s->scratch);
    }
    free(sum);
    if (rc == 0) {
        rc = adm_metrics_render_admission(&s->scratch);
    }
    for (size_t i = 0; rc == 0 && i < s->nmore_metrics; i++) {
        rc = s->more_metrics[i](s->more_metrics_arg[i], &s->scratch);
    }
    if (rc != 0) {
        text_answer(&resp, 500, "out of memory\n");
    } else {
        resp.status = 200;
        resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
        resp.body = s->scratch.data;
        resp.body_len = s->scratch.len;
    }
    reply(x, &resp);
}

/*
 * The server's own routes: on the admission listener and on the plain listener of their kind,
 * never asking for a client certificate (D11), so kubelet probes and scrapes work under mTLS.
 */
static const adm_route_t builtin_routes[] = {
    {.path = "/healthz",
     .label = "healthz",
     .listeners = ADM_ON_ADMISSION | ADM_ON_HEALTH,
     .method = ADM_ROUTE_GET,
     .handler = serve_alive},
    {.path = "/livez",
     .label = "livez",
     .listeners = ADM_ON_ADMISSION | ADM_ON_HEALTH,
     .method = ADM_ROUTE_GET,
     .handler = serve_alive},
    {.path = "/readyz",
     .label = "readyz",
     .listeners = ADM_ON_ADMISSION | ADM_ON_HEALTH,
     .method = ADM_ROUTE_GET,
     .handler = serve_ready},
    {.path = "/metrics",
     .label = "metrics",
     .listeners = ADM_ON_ADMISSION | ADM_ON_METRICS,
     .method = ADM_ROUTE_GET,
     .handler = serve_metrics},
};
#define NBUILTIN (sizeof(builtin_routes) / sizeof(builtin_routes[0]))

_Static_assert(ADM_METRICS_ENDPOINTS > ADM_ROUTES_MAX, "a metrics label for every route, and \"other\"");

static int add_route(adm_server_t *s, const adm_route_t *route)
{
    int endpoint = adm_metrics_endpoint(s->metrics, route->label);

    if (endpoint < 0) {
        return endpoint;
    }
    return adm_route_table_add(&s->routes, route, (unsigned)endpoint);
}

int adm_server_add_route(adm_server_t *s, const adm_route_t *route)
{
    if (s->started) {
        return ADM_EINVAL;
    }
    for (size_t i = 0; i < NBUILTIN; i++) {
        const adm_route_t *b = &builtin_routes[i];

        if (route->path != NULL && (b->listeners & route->listeners) != 0 &&
            strcmp(b->path, route->path) == 0) {
            return ADM_EINVAL;
        }
    }
    /* The server's own are added when it starts (after the application's, so the metrics list
       the application's endpoints first): keep room for them. */
    if (s->routes.n + NBUILTIN >= ADM_ROUTES_MAX) {
        return ADM_ETOOBIG;
    }
    return add_route(s, route);
}

static int add_builtin_routes(adm_server_t *s)
{
    for (size_t i = 0; i < NBUILTIN; i++) {
        adm_route_t route = builtin_routes[i];
        int rc;

        route.arg = s;
        rc = add_route(s, &route);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static void accept_one(adm__listener_t *l)
{
    adm_server_t *s = l->owner;

    if (s->conns.open >= s->opts->max_connections) {
        /* Leave it in libuv's hands: libuv stops polling the socket until we accept. */
        if (!l->accept_pending) {
            adm_log_warn("--max-connections %llu reached: not accepting until a connection closes",
                         (unsigned long long)s->opts->max_connections);
        }
        l->accept_pending = true;
        return;
    }
    l->accept_pending = false;
    adm__conn_accept(l);
}

static void on_connection(uv_stream_t *stream, int status)
{
    adm__listener_t *l = stream->data;

    if (status < 0) {
        adm_log_warn("accept: %s", uv_strerror(status));
        return;
    }
    accept_one(l);
}

/* A connection was freed: below --max-connections again, or one step nearer the drain's end. */
static void on_conn_freed(void *arg)
{
    adm_server_t *s = arg;

    for (int i = 0; i < s->nlisteners; i++) {
        adm__listener_t *l = &s->listeners[i];

        if (l->open && l->accept_pending && s->conns.open < s->opts->max_connections) {
            accept_one(l);
        }
    }
    maybe_finish(s);
}

static const char *listener_name(adm_listener_kind_t kind)
{
    switch (kind) {
    case ADM_LISTENER_ADMISSION: return "admission";
    case ADM_LISTENER_HEALTH: return "health";
    default: return "metrics";
    }
}

static const char *listener_flag(adm_listener_kind_t kind)
{
    switch (kind) {
    case ADM_LISTENER_ADMISSION: return "--listen";
    case ADM_LISTENER_HEALTH: return "--health-listen";
    default: return "--metrics-listen";
    }
}

static void on_listener_closed(uv_handle_t *h)
{
    adm_server_t *s = ((adm__listener_t *)h->data)->owner;

    s->pending_closes--;
    maybe_finish(s);
}

/*
 * Under --workers every worker binds its own socket to the same address (SO_REUSEPORT, D12): the
 * kernel spreads new connections over the workers' listeners. The handle is always initialised,
 * so close_listeners can close it whatever failed.
 */
static int init_listen_socket(adm_server_t *s, uv_tcp_t *tcp, const struct sockaddr_storage *addr)
{
    int one = 1;
    uv_os_fd_t fd;
    int rc;

    if (s->opts->workers <= 1) {
        return uv_tcp_init(s->loop, tcp);
    }
    rc = uv_tcp_init_ex(s->loop, tcp, addr->ss_family);
    if (rc != 0) {
        uv_tcp_init(s->loop, tcp);
        return rc;
    }
    rc = uv_fileno((uv_handle_t *)tcp, &fd);
    if (rc == 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
        rc = -errno;
    }
    return rc;
}

static int open_listener(adm_server_t *s, adm_listener_kind_t kind, const struct sockaddr_storage *addr,
                         bool tls, char *err, size_t err_len)
{
    adm__listener_t *l = &s->listeners[s->nlisteners];
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    char where[64];
    int rc;

    adm_format_addr((const struct sockaddr *)addr, where, sizeof(where));
    memset(l, 0, sizeof(*l));
    l->owner = s;
    l->kind = kind;
    l->tls = tls ? s->tls : NULL;
    l->routes = &s->routes;
    l->conns = &s->conns;
    l->tcp.data = l;
    l->open = true;
    s->nlisteners++;
    rc = init_listen_socket(s, &l->tcp, addr);
    if (rc == 0) {
        rc = uv_tcp_bind(&l->tcp, (const struct sockaddr *)addr, 0);
    }
    if (rc == 0) {
        rc = uv_listen((uv_stream_t *)&l->tcp, 511, on_connection);
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s %s: cannot listen: %s", listener_flag(kind), where, uv_strerror(rc));
        return rc;
    }
    uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&bound, &len);
    adm_format_addr((const struct sockaddr *)&bound, where, sizeof(where));
    adm_log_info("serving %s on %s (%s)", listener_name(kind), where, tls ? "https" : "http");
    return 0;
}

static void close_listeners(adm_server_t *s)
{
    for (int i = 0; i < s->nlisteners; i++) {
        adm__listener_t *l = &s->listeners[i];

        if (l->open) {
            l->open = false;
            s->pending_closes++;
            uv_close((uv_handle_t *)&l->tcp, on_listener_closed);
        }
    }
}

static void on_drain_timer_closed(uv_handle_t *h)
{
    adm_server_t *s = h->data;

    if (s->done != NULL) {
        s->done(s, s->done_arg);
    }
}

/* The drain is over once the listeners are closed and every connection has been freed. */
static void maybe_finish(adm_server_t *s)
{
    if (!s->conns.stopping || s->finished || s->conns.alive > 0 || s->pending_closes > 0) {
        return;
    }
    s->finished = true;
    adm_log_info("shutdown complete");
    uv_close((uv_handle_t *)&s->drain_timer, on_drain_timer_closed);
}

static void on_grace_over(uv_timer_t *t)
{
    adm_server_t *s = t->data;

    if (s->conns.open > 0) {
        adm_log_warn("--shutdown-grace over: closing %zu connections with requests still in progress",
                     s->conns.open);
    }
    adm__conns_close_all(&s->conns);
    maybe_finish(s);
}

static void on_pacer_closed(uv_handle_t *h)
{
    adm_server_t *s = h->data;

    s->pending_closes--;
    maybe_finish(s);
}

static void stop_accepting(adm_server_t *s)
{
    s->conns.stopping = true;
    close_listeners(s);
    adm__conns_close_idle(&s->conns);
    /* No new handshakes come: those held go on now, and the pacer's handles close. */
    s->pending_closes += adm__pacer_close(&s->conns.pacer, on_pacer_closed, s);
    s->pending_closes += adm__heap_trim_close(&s->conns.heap_trim, on_pacer_closed, s); /* same bookkeeping */
    if (s->conns.open > 0) {
        adm_log_info("listeners closed; waiting up to %llu ms for %zu connections",
                     (unsigned long long)s->opts->shutdown_grace_ms, s->conns.open);
    }
    uv_timer_start(&s->drain_timer, on_grace_over, s->opts->shutdown_grace_ms, 0);
    maybe_finish(s);
}

static void on_delay_over(uv_timer_t *t)
{
    stop_accepting(t->data);
}

void adm_server_shutdown(adm_server_t *s)
{
    if (s->finished) {
        return;
    }
    if (!s->conns.draining) {
        s->conns.draining = true;
        s->ready = false;
        adm_log_info("shutting down: /readyz now fails; serving with Connection: close for %llu ms",
                     (unsigned long long)s->opts->shutdown_delay_ms);
        adm__conns_close_idle(&s->conns);
        uv_timer_start(&s->drain_timer, on_delay_over, s->opts->shutdown_delay_ms, 0);
        return;
    }
    /* Asked again: skip what is left of the drain. */
    if (!s->conns.stopping) {
        adm_log_info("shutting down now (second signal)");
        stop_accepting(s);
    } else {
        on_grace_over(&s->drain_timer);
    }
}

int adm_server_start(adm_server_t *s, adm_server_done_cb done, void *arg, char *err, size_t err_len)
{
    const adm_options_t *o = s->opts;
    int rc;

    uv_timer_init(s->loop, &s->drain_timer);
    s->drain_timer.data = s;
    s->started = true;
    rc = add_builtin_routes(s);
    if (rc != 0) {
        snprintf(err, err_len, "too many routes: %s", adm_strerror(rc));
    }
    if (rc == 0) {
        rc = open_listener(s, ADM_LISTENER_ADMISSION, &o->listen, !o->insecure_http, err, err_len);
    }
    if (rc == 0 && o->has_health_listen) {
        rc = open_listener(s, ADM_LISTENER_HEALTH, &o->health_listen, false, err, err_len);
    }
    if (rc == 0 && o->has_metrics_listen) {
        rc = open_listener(s, ADM_LISTENER_METRICS, &o->metrics_listen, false, err, err_len);
    }
    if (rc != 0) {
        /* Close what was opened; the caller runs the loop until the handles are gone. */
        s->conns.draining = true;
        s->conns.stopping = true;
        close_listeners(s);
        maybe_finish(s);
        return rc;
    }
    s->done = done;
    s->done_arg = arg;
    s->ready = true;
    return 0;
}

void adm_server_set_ready_check(adm_server_t *s, bool (*fn)(void *arg), void *arg)
{
    s->ready_check = fn;
    s->ready_arg = arg;
}

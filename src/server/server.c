/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Listeners, the connection limit and the SIGTERM drain.
 *
 * The drain follows what Kubernetes needs from a webhook pod: first keep serving for
 * --shutdown-delay with /readyz failing (endpoints drop the pod meanwhile) and every answer carrying
 * Connection: close; then close the listeners and let in-flight requests finish within
 * --shutdown-grace. The done callback fires once every handle the server owns has closed.
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void maybe_finish(adm_server_t *s);

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

void adm_server_destroy(adm_server_t *s)
{
    if (s == NULL) {
        return;
    }
    if (s->tls != NULL) {
        adm_tls_ctx_unref(s->tls);
    }
    adm_buf_free(&s->scratch);
    while (s->narena_pool > 0) {
        adm_arena_destroy(s->arena_pool[--s->narena_pool]);
    }
    free(s);
}

/* 256 KiB holds a 4 KB pod's decode, mutable copy, diff and answer many times over; pages not
   touched cost no memory. */
adm_arena_t *adm__server_arena_get(adm_server_t *s)
{
    if (s->narena_pool > 0) {
        return s->arena_pool[--s->narena_pool];
    }
    return adm_arena_create(ADM_REQUEST_ARENA_BYTES);
}

void adm__server_arena_put(adm_server_t *s, adm_arena_t *a)
{
    if (s->narena_pool == ADM_ARENA_POOL_MAX) {
        adm_arena_destroy(a);
        return;
    }
    adm_arena_reset(a);
    s->arena_pool[s->narena_pool++] = a;
}

void adm_server_set_handler(adm_server_t *s, adm_handler_fn fn, void *arg)
{
    s->handler = fn;
    s->handler_arg = arg;
}

static void accept_one(adm__listener_t *l)
{
    adm_server_t *s = l->server;

    if (s->nconns >= s->opts->max_connections) {
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

void adm__server_conn_freed(adm_server_t *s)
{
    s->nconns_alive--;
    for (int i = 0; i < s->nlisteners; i++) {
        adm__listener_t *l = &s->listeners[i];

        if (l->open && l->accept_pending && s->nconns < s->opts->max_connections) {
            accept_one(l);
        }
    }
    maybe_finish(s);
}

static const char *listener_name(adm__listener_kind_t kind)
{
    switch (kind) {
    case ADM_LISTENER_ADMISSION:
        return "admission";
    case ADM_LISTENER_HEALTH:
        return "health";
    default:
        return "metrics";
    }
}

static const char *listener_flag(adm__listener_kind_t kind)
{
    switch (kind) {
    case ADM_LISTENER_ADMISSION:
        return "--listen";
    case ADM_LISTENER_HEALTH:
        return "--health-listen";
    default:
        return "--metrics-listen";
    }
}

static void on_listener_closed(uv_handle_t *h)
{
    adm_server_t *s = ((adm__listener_t *)h->data)->server;

    s->pending_closes--;
    maybe_finish(s);
}

static int open_listener(adm_server_t *s, adm__listener_kind_t kind, const struct sockaddr_storage *addr,
                         bool tls, char *err, size_t err_len)
{
    adm__listener_t *l = &s->listeners[s->nlisteners];
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    char where[64];
    int rc;

    adm_format_addr((const struct sockaddr *)addr, where, sizeof(where));
    memset(l, 0, sizeof(*l));
    l->server = s;
    l->kind = kind;
    l->tls = tls;
    uv_tcp_init(s->loop, &l->tcp);
    l->tcp.data = l;
    l->open = true;
    s->nlisteners++;
    rc = uv_tcp_bind(&l->tcp, (const struct sockaddr *)addr, 0);
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
    if (!s->stopping || s->finished || s->nconns_alive > 0 || s->pending_closes > 0) {
        return;
    }
    s->finished = true;
    adm_log_info("shutdown complete");
    uv_close((uv_handle_t *)&s->drain_timer, on_drain_timer_closed);
}

static void close_idle_connections(adm_server_t *s)
{
    adm_conn_t *c = s->conns;

    while (c != NULL) {
        adm_conn_t *next = c->next;

        adm__conn_close_if_idle(c);
        c = next;
    }
}

static void on_grace_over(uv_timer_t *t)
{
    adm_server_t *s = t->data;

    if (s->nconns > 0) {
        adm_log_warn("--shutdown-grace over: closing %zu connections with requests still in progress",
                     s->nconns);
    }
    while (s->conns != NULL) {
        adm__conn_close_now(s->conns);
    }
    maybe_finish(s);
}

static void stop_accepting(adm_server_t *s)
{
    s->stopping = true;
    close_listeners(s);
    close_idle_connections(s);
    if (s->nconns > 0) {
        adm_log_info("listeners closed; waiting up to %llu ms for %zu connections",
                     (unsigned long long)s->opts->shutdown_grace_ms, s->nconns);
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
    if (!s->draining) {
        s->draining = true;
        s->ready = false;
        adm_log_info("shutting down: /readyz now fails; serving with Connection: close for %llu ms",
                     (unsigned long long)s->opts->shutdown_delay_ms);
        close_idle_connections(s);
        uv_timer_start(&s->drain_timer, on_delay_over, s->opts->shutdown_delay_ms, 0);
        return;
    }
    /* Asked again: skip what is left of the drain. */
    if (!s->stopping) {
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
    rc = open_listener(s, ADM_LISTENER_ADMISSION, &o->listen, !o->insecure_http, err, err_len);
    if (rc == 0 && o->has_health_listen) {
        rc = open_listener(s, ADM_LISTENER_HEALTH, &o->health_listen, false, err, err_len);
    }
    if (rc == 0 && o->has_metrics_listen) {
        rc = open_listener(s, ADM_LISTENER_METRICS, &o->metrics_listen, false, err, err_len);
    }
    if (rc != 0) {
        /* Close what was opened; the caller runs the loop until the handles are gone. */
        s->draining = true;
        s->stopping = true;
        close_listeners(s);
        maybe_finish(s);
        return rc;
    }
    s->done = done;
    s->done_arg = arg;
    s->ready = true;
    return 0;
}

void adm_server_set_chain(adm_server_t *s, adm_chain_t *chain)
{
    s->chain = chain;
}

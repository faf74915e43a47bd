/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's entry point: parse flags, set up TLS, run the server on one libuv loop until a
 * SIGTERM/SIGINT drain completes. SIGHUP, or a change to a file a flag names, reloads the TLS
 * files, the admission configuration and the kubeconfig (adm/base/reload.h). Under --workers N
 * the configuration and certificate are made once, then N forked workers each go on from there as
 * one process would (adm/app/workers.h); each watches its own files, and the parent relays SIGHUP
 * and SIGTERM. Exit codes: 0 after a clean drain, 2 for bad flags or files, 1 for anything else
 * that stops startup.
 */
#include "adm/admission/endpoint.h"
#include "adm/admission/plugin.h"
#include "adm/admission/trace.h"
#include "adm/app/endpoint_feed.h"
#include "adm/app/live_config.h"
#include "adm/app/workers.h"
#include "adm/base/admission_metrics.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/options.h"
#include "adm/base/reload.h"
#include "adm/base/shared_metrics.h"
#include "adm/cluster/cluster_store.h"
#include "adm/cluster/informer.h"
#include "adm/net/tls.h"
#include "adm/server/metrics.h"
#include "adm/server/server.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

/* The admission paths (INTERFACE.md) and the phases each runs; a path's label is its name. */
static const struct {
    const char *path;
    unsigned phases;
} admission_paths[] = {
    {"/mutate", ADM_PHASE_MUTATING},
    {"/validate", ADM_PHASE_VALIDATING},
    {"/admit", ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING},
};
#define NADMISSION_PATHS (sizeof(admission_paths) / sizeof(admission_paths[0]))

typedef struct app_s {
    adm_server_t *server;
    adm_live_config_t *config;
    adm_reload_t *reload;
    adm_admission_endpoint_t endpoints[NADMISSION_PATHS];
    adm_trace_ring_t *traces; /* with --metrics-listen: the last requests' traces, /debug/requests */
    adm_informer_t *informer; /* with --kubeconfig or --in-cluster; outlives the chains it lends to */
    adm_endpoint_feed_t *service_feed; /* with the informer: webhook Services' EndpointSlices (issue 18) */
    uv_signal_t sigterm;
    uv_signal_t sigint;
    uv_signal_t sighup;
    bool quiet_reload; /* a restarted worker's catch-up reload: not a reload the counter counts */
} app_t;

static void on_signal(uv_signal_t *h, int signum)
{
    app_t *app = h->data;

    adm_log_info("received %s", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    adm_server_shutdown(app->server);
}

static void on_sighup(uv_signal_t *h, int signum)
{
    app_t *app = h->data;

    (void)signum;
    adm_reload_now(app->reload, "SIGHUP");
}

static void on_reloaded(void *arg, bool ok)
{
    const app_t *app = arg;

    if (!app->quiet_reload) {
        adm_metrics_config_reload(ok);
    }
}

/*
 * The coordinator watches the TLS files, the admission configuration's, and with an API connection
 * the kubeconfig's (or the in-cluster token and CA); SIGHUP reloads too.
 */
static int start_reload(app_t *app, uv_loop_t *loop)
{
    /* kubelet's update of a mounted volume is a handful of renames within a millisecond or two */
    int rc = adm_reload_create(loop, 200, on_reloaded, app, &app->reload);

    if (rc == 0) {
        rc = adm_server_add_reload(app->server, app->reload);
    }
    if (rc == 0) {
        rc = adm_live_config_add_reload(app->config, app->reload);
    }
    if (rc == 0 && app->informer != NULL) {
        rc = adm_informer_add_reload(app->informer, app->reload); /* the kubeconfig and its files */
    }
    return rc;
}

/*
 * The admission endpoints are routes like the mockhook's: POST only, JSON only, and under
 * --client-ca-file only for a client with a verified certificate (D11); the server refuses the
 * rest from the request's head.
 */
static int add_admission_routes(app_t *app, const adm_options_t *opts)
{
    for (size_t i = 0; i < NADMISSION_PATHS; i++) {
        adm_admission_endpoint_t *ep = &app->endpoints[i];
        adm_route_t route = {
            .path = admission_paths[i].path,
            .label = admission_paths[i].path + 1,
            .listeners = ADM_ON_ADMISSION,
            .method = ADM_ROUTE_POST,
            .method_text = "method not allowed: admission endpoints take POST\n",
            .client_cert = true,
            .json = true,
            .handler = adm_admission_handle,
            .arg = ep,
        };
        int rc;

        ep->live = adm_live_config_chain(app->config);
        ep->phases = admission_paths[i].phases;
        ep->deadline_margin_ms = opts->deadline_margin_ms;
        ep->label = route.label;
        ep->traces = app->traces;
        rc = adm_server_add_route(app->server, &route);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* GET /debug/requests: the last requests' decision traces, on the metrics listener only (D18). */
static int add_debug_routes(app_t *app, const adm_options_t *opts)
{
    adm_route_t route = {
        .path = "/debug/requests",
        .label = "debug-requests",
        .listeners = ADM_ON_METRICS,
        .method = ADM_ROUTE_GET,
        .handler = adm_trace_ring_serve,
    };
    int rc;

    if (!opts->has_metrics_listen) {
        return 0;
    }
    rc = adm_trace_ring_create(&app->traces);
    if (rc == 0) {
        route.arg = app->traces;
        rc = adm_server_add_route(app->server, &route);
    }
    return rc;
}

static void on_server_done(adm_server_t *s, void *arg)
{
    app_t *app = arg;

    /* The signal handles are the last thing keeping the loop alive. */
    uv_close((uv_handle_t *)&app->sigterm, NULL);
    uv_close((uv_handle_t *)&app->sigint, NULL);
    uv_close((uv_handle_t *)&app->sighup, NULL);
    /*
     * Closing the last SIGHUP handle makes libuv restore the default action (exit), so a SIGHUP
     * during the last steps of a clean exit would turn exit 0 into a kill: ignore it again.
     */
    signal(SIGHUP, SIG_IGN);
    /* watches and idle upstream connections would keep the loop alive */
    adm_reload_close(app->reload);
    app->reload = NULL;
    adm_metrics_client_gauge(NULL, NULL);
    adm_live_config_shutdown(app->config);
    adm_endpoint_feed_stop(app->service_feed); /* its watches use the informer's client */
    adm_informer_stop(app->informer);          /* its watches would keep the loop alive */
}

/*
 * Namespaces are watched when a webhook's namespaceSelector reads their labels; a reload that
 * brings the first such webhook starts the watch (/readyz waits for it again).
 */
static int watch_selected_namespaces(app_t *app, char *err, size_t err_len)
{
    if (app->informer == NULL || !adm_live_config_selects_namespaces(app->config)) {
        return 0;
    }
    return adm_informer_watch(app->informer, "/Namespace", err, err_len);
}

static void on_config_committed(void *arg)
{
    char err[256];

    if (watch_selected_namespaces(arg, err, sizeof(err)) != 0) {
        adm_log_warn("%s (namespaceSelectors read --cluster-state)", err);
    }
}

/*
 * --kubeconfig / --in-cluster: the informer caches of the kinds the enabled plugins read (and of
 * Namespaces for webhooks' namespaceSelectors), lent to every chain generation. Returns 0 (also
 * when neither flag is given), or a code with one line in err.
 */
static int start_informer(app_t *app, uv_loop_t *loop, const adm_options_t *opts, char *err, size_t err_len)
{
    const char *const *plugins;
    size_t n = 0;
    int rc;

    if (opts->kubeconfig == NULL && !opts->in_cluster) {
        return 0;
    }
    if (opts->kubeconfig != NULL && opts->in_cluster) {
        snprintf(err, err_len, "--kubeconfig and --in-cluster: give one of them");
        return ADM_EINVAL;
    }
    plugins = adm_chain_plugins(*adm_live_config_chain(app->config), &n);
    rc = adm_informer_create(loop, opts->kubeconfig, plugins, n, &app->informer, err, err_len);
    if (rc == 0) {
        rc = watch_selected_namespaces(app, err, err_len);
    }
    if (rc == 0) {
        adm_live_config_use_cluster_store(app->config, adm_informer_store(app->informer));
        rc = adm_live_config_on_commit(app->config, on_config_committed, app);
        if (rc != 0) {
            snprintf(err, err_len, "informer: cannot follow reloads: %s", adm_strerror(rc));
        }
    }
    if (rc == 0) {
        rc = adm_endpoint_feed_create(loop, adm_cluster_store_api(adm_informer_store(app->informer)),
                                      app->config, &app->service_feed);
        if (rc != 0) {
            snprintf(err, err_len, "webhook Service watches: %s", adm_strerror(rc));
        }
    }
    return rc;
}

/* /readyz with an API connection: the informer's kinds and the webhook Services listed once. */
static bool cluster_synced(void *arg)
{
    app_t *app = arg;

    return adm_informer_synced(app->informer) && adm_endpoint_feed_synced(app->service_feed);
}

/* /metrics with an API connection: the informer's families and the webhook Services'. */
static int cluster_metrics(void *arg, adm_buf_t *out)
{
    app_t *app = arg;
    int rc = adm_informer_metrics(app->informer, out);

    return rc == 0 ? adm_endpoint_feed_metrics(app->service_feed, out) : rc;
}

/*
 * Start-up stopped at one line's reason: whatever was created is closed, the loop runs until the
 * handles those closes started are gone (so a run under ASan or valgrind leaks nothing), and code
 * is the exit status.
 */
static int teardown(app_t *app, uv_loop_t *loop, int code)
{
    adm_reload_close(app->reload); /* its watches would keep the loop running */
    app->reload = NULL;
    if (app->server != NULL) {
        uv_run(loop, UV_RUN_DEFAULT);
        adm_server_destroy(app->server);
    }
    adm_metrics_client_gauge(NULL, NULL);
    adm_endpoint_feed_destroy(app->service_feed); /* it borrows the configuration */
    adm_live_config_destroy(app->config);
    adm_trace_ring_destroy(app->traces);
    adm_informer_stop(app->informer);
    uv_run(loop, UV_RUN_DEFAULT);
    adm_informer_destroy(app->informer);
    uv_loop_close(loop);
    adm_tls_global_cleanup();
    return code;
}

static int start_failed(app_t *app, uv_loop_t *loop, const char *reason, int code)
{
    fprintf(stderr, "admitd: %s\n", reason);
    return teardown(app, loop, code);
}

/* Before the configuration loads: the metrics memory the workers share, and the ports they share. */
static int prepare_workers(adm_options_t *opts, char *err, size_t err_len)
{
    int rc = adm_shm_create((unsigned)opts->workers);

    if (rc == 0) {
        rc = adm_metrics_share();
    }
    if (rc != 0) {
        snprintf(err, err_len, "--workers: cannot map the shared metrics memory: %s", adm_strerror(rc));
        return rc;
    }
    return adm_workers_reserve_ports(opts, err, err_len);
}

/*
 * In a worker just forked: count in its own metrics slot, give the loop its own epoll instance, and
 * draw randoms no other worker draws.
 */
static int enter_worker(app_t *app, uv_loop_t *loop, unsigned index, char *err, size_t err_len)
{
    int rc;

    adm_shm_select(index);
    adm_metrics_attach_worker();
    rc = uv_loop_fork(loop);
    if (rc == 0) {
        rc = adm_tls_after_fork() == 0 ? 0 : ADM_ETLS;
    }
    if (rc == 0) {
        rc = adm_server_share_metrics(app->server);
    }
    if (rc != 0) {
        snprintf(err, err_len, "worker %u: cannot start: %s", index, adm_strerror(rc));
    }
    return rc;
}

int main(int argc, char **argv)
{
    adm_options_t opts;
    adm_options_action_t action;
    app_t app = {0};
    uv_loop_t loop;
    char err[2048] = "";
    bool restarted = false;
    int rc;

    /*
     * A SIGHUP (a reload attempt) can come while the configuration loads or a key is generated,
     * before the loop's handler exists; its default action would kill admitd. Ignore it until
     * uv_signal_start installs the handler that reloads.
     */
    signal(SIGHUP, SIG_IGN);
    adm_options_defaults(&opts);
    adm_plugin_declare_options(&opts);
    if (adm_options_parse(&opts, argc, argv, &action, err, sizeof(err)) != 0) {
        fprintf(stderr, "admitd: %s\n", err);
        return 2;
    }
    if (action == ADM_OPTIONS_HELP) {
        adm_options_usage(&opts, stdout);
        return 0;
    }
    if (action == ADM_OPTIONS_VERSION) {
        printf("admitd %s\n", ADM_VERSION);
        return 0;
    }
    if (action == ADM_OPTIONS_LIST_PLUGINS) {
        adm_plugin_list(stdout);
        return 0;
    }
    adm_log_configure(opts.log_format, opts.verbosity);
    /* A peer closing mid-write must surface as EPIPE, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    if (adm_tls_global_init() != 0) {
        fprintf(stderr, "admitd: cannot initialise the crypto library\n");
        return 1;
    }
    if (opts.workers > 1 && prepare_workers(&opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "admitd: %s\n", err);
        adm_tls_global_cleanup();
        return 2;
    }
    uv_loop_init(&loop);
    rc = adm_live_config_create(&loop, &opts, &app.config, err, sizeof(err));
    if (rc != 0) {
        return start_failed(&app, &loop, err[0] != '\0' ? err : adm_strerror(rc), rc == ADM_ENOMEM ? 1 : 2);
    }
    rc = start_informer(&app, &loop, &opts, err, sizeof(err));
    if (rc != 0) {
        return start_failed(&app, &loop, err, rc == ADM_ENOMEM ? 1 : 2);
    }
    adm_metrics_client_gauge(adm_live_config_connections, app.config);
    rc = adm_server_create(&loop, &opts, &app.server, err, sizeof(err));
    if (rc != 0) {
        return start_failed(&app, &loop, err, 2);
    }
    if (app.informer != NULL) {
        adm_server_set_ready_check(app.server, cluster_synced, &app);
    }
    if (opts.workers > 1) {
        int index;
        int status = adm_workers_run((unsigned)opts.workers, &index, &restarted);

        if (index < 0) {
            return teardown(&app, &loop, status);
        }
        if (enter_worker(&app, &loop, (unsigned)index, err, sizeof(err)) != 0) {
            return start_failed(&app, &loop, err, 1);
        }
    }
    rc = start_reload(&app, &loop);
    if (rc != 0) {
        snprintf(err, sizeof(err), "cannot set up reloading: %s", adm_strerror(rc));
        return start_failed(&app, &loop, err, 1);
    }
    if (restarted) {
        /* forked from the parent's start-up configuration: read what the files hold now */
        app.quiet_reload = true;
        adm_reload_now(app.reload, "worker restarted");
        app.quiet_reload = false;
    }
    rc = adm_server_add_metrics(app.server, adm_live_config_proxy_metrics, app.config);
    if (rc == 0 && app.informer != NULL) {
        rc = adm_server_add_metrics(app.server, cluster_metrics, &app);
    }
    if (rc == 0) {
        rc = add_debug_routes(&app, &opts);
    }
    if (rc == 0) {
        rc = add_admission_routes(&app, &opts);
    }
    if (rc != 0) {
        snprintf(err, sizeof(err), "cannot serve the admission endpoints: %s", adm_strerror(rc));
    } else {
        rc = adm_server_start(app.server, on_server_done, &app, err, sizeof(err));
    }
    if (rc != 0) {
        return start_failed(&app, &loop, err, 2);
    }
    uv_signal_init(&loop, &app.sigterm);
    uv_signal_init(&loop, &app.sigint);
    uv_signal_init(&loop, &app.sighup);
    app.sigterm.data = &app;
    app.sigint.data = &app;
    app.sighup.data = &app;
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sighup, on_sighup, SIGHUP);
    adm_live_config_log_summary(app.config);
    adm_log_info("admitd %s ready", ADM_VERSION);

    uv_run(&loop, UV_RUN_DEFAULT);

    adm_server_destroy(app.server);
    adm_endpoint_feed_destroy(app.service_feed); /* it borrows the configuration */
    adm_live_config_destroy(app.config);
    adm_trace_ring_destroy(app.traces);
    uv_run(&loop, UV_RUN_DEFAULT); /* the informer's closes */
    adm_informer_destroy(app.informer);
    rc = uv_loop_close(&loop);
    if (rc != 0) {
        adm_log_warn("event loop closed with handles still open: %s", uv_strerror(rc));
    }
    adm_tls_global_cleanup();
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's entry point: parse flags, set up TLS, run the server on one libuv loop until a
 * SIGTERM/SIGINT drain completes. SIGHUP is logged and otherwise ignored until reload exists.
 * Exit codes: 0 after a clean drain, 2 for bad flags or files, 1 for anything else that stops
 * startup.
 */
#include "adm/admission/chain.h"
#include "adm/admission/endpoint.h"
#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/options.h"
#include "adm/net/tls.h"
#include "adm/server/server.h"
#include "adm/webhook/webhooks.h"

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
    adm_chain_t *chain;
    adm_webhooks_t *webhooks;
    adm_admission_endpoint_t endpoints[NADMISSION_PATHS];
    uv_signal_t sigterm;
    uv_signal_t sigint;
    uv_signal_t sighup;
} app_t;

static void on_signal(uv_signal_t *h, int signum)
{
    app_t *app = h->data;

    adm_log_info("received %s", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    adm_server_shutdown(app->server);
}

/*
 * Reload (INTERFACE.md: SIGHUP re-reads certificates and configuration) is not built yet. SIGHUP's
 * default action ends the process without a drain, which is the worst answer to an operator who
 * only wanted a reload; so it is caught, and the log says that nothing changed.
 */
static void on_sighup(uv_signal_t *h, int signum)
{
    (void)h;
    (void)signum;
    adm_log_warn("received SIGHUP: reload not supported yet; configuration unchanged, still serving");
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

        ep->chain = app->chain;
        ep->phases = admission_paths[i].phases;
        ep->deadline_margin_ms = opts->deadline_margin_ms;
        rc = adm_server_add_route(app->server, &route);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
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
    /* idle upstream connections would keep the loop alive */
    adm_webhooks_destroy(app->webhooks);
    app->webhooks = NULL;
}

/*
 * Start-up stopped at one line's reason: whatever was created is closed, the loop runs until the
 * handles those closes started are gone (so a run under ASan or valgrind leaks nothing), and code
 * is the exit status.
 */
static int start_failed(app_t *app, uv_loop_t *loop, const char *reason, int code)
{
    fprintf(stderr, "admitd: %s\n", reason);
    if (app->server != NULL) {
        uv_run(loop, UV_RUN_DEFAULT);
        adm_server_destroy(app->server);
    }
    adm_chain_destroy(app->chain);
    adm_webhooks_destroy(app->webhooks);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    adm_tls_global_cleanup();
    return code;
}

int main(int argc, char **argv)
{
    adm_options_t opts;
    adm_options_action_t action;
    app_t app = {0};
    uv_loop_t loop;
    char err[2048] = "";
    int rc;

    /*
     * A SIGHUP (a reload attempt) can come while the configuration loads or a key is generated,
     * before the loop's handler exists; its default action would kill admitd. Ignore it until
     * uv_signal_start installs the handler that logs it.
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
    uv_loop_init(&loop);
    rc = adm_webhooks_create(&loop, &opts, &app.webhooks, err, sizeof(err));
    if (rc == 0) {
        rc = adm_chain_create_with(&opts, app.webhooks, &app.chain, err, sizeof(err));
    }
    if (rc != 0) {
        return start_failed(&app, &loop, err[0] != '\0' ? err : adm_strerror(rc), rc == ADM_ENOMEM ? 1 : 2);
    }
    adm_chain_use_loop(app.chain, &loop); /* the deadlines the endpoint computes are loop time */
    rc = adm_server_create(&loop, &opts, &app.server, err, sizeof(err));
    if (rc != 0) {
        return start_failed(&app, &loop, err, 2);
    }
    rc = adm_server_add_metrics(app.server, adm_webhooks_proxy_metrics, app.webhooks);
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
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sighup, on_sighup, SIGHUP);
    adm_chain_log_summary(app.chain);
    adm_webhooks_log_summary(app.webhooks);
    adm_log_info("admitd %s ready", ADM_VERSION);

    uv_run(&loop, UV_RUN_DEFAULT);

    adm_server_destroy(app.server);
    adm_webhooks_destroy(app.webhooks);
    adm_chain_destroy(app.chain);
    rc = uv_loop_close(&loop);
    if (rc != 0) {
        adm_log_warn("event loop closed with handles still open: %s", uv_strerror(rc));
    }
    adm_tls_global_cleanup();
    return 0;
}

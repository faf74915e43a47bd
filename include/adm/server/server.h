/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server under admitd and admitd-mockhook: listeners (admission over HTTPS or plain HTTP,
 * optional health and metrics listeners), connections, the probes and /metrics, and the graceful
 * drain, all on one libuv loop. What it serves beyond the probes and /metrics is up to the
 * application: it adds routes whose handlers answer through an exchange (adm/server/exchange.h).
 */
#ifndef ADM_SERVER_H
#define ADM_SERVER_H

#include "adm/base/buf.h"
#include "adm/base/options.h"
#include "adm/server/exchange.h"
#include "adm/server/route.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct adm_server_s adm_server_t;

/** Called once when a drain has finished and the server has closed all its handles. */
typedef void (*adm_server_done_cb)(adm_server_t *s, void *arg);

/**
 * Creates a server on loop from options (which must outlive it): loads or generates the TLS
 * certificate. On failure returns a negative code with one line in err naming the flag/file.
 */
int adm_server_create(uv_loop_t *loop, const adm_options_t *opts, adm_server_t **out, char *err,
                      size_t err_len);

/**
 * Binds and starts the listeners and logs "serving <what> on ADDR (https|http)" for each. Returns 0
 * or a negative code with one line in err.
 */
int adm_server_start(adm_server_t *s, adm_server_done_cb done, void *arg, char *err, size_t err_len);

/**
 * Begins the drain of INTERFACE.md: /readyz turns 503 at once, answers carry Connection: close and
 * idle connections close during --shutdown-delay; then the listeners close and in-flight requests
 * get --shutdown-grace to finish. Calling it again cuts the drain short. done fires at the end.
 */
void adm_server_shutdown(adm_server_t *s);

/**
 * Adds a route (adm/server/route.h) before the server starts: its handler answers the requests for
 * its path on its listeners that pass its checks. The server serves /healthz, /livez, /readyz and
 * /metrics itself; a catch-all (path NULL) takes every other path of its listeners. The route is
 * copied; its strings and arg are kept, not copied, and must outlive the server. Returns 0;
 * ADM_EINVAL after adm_server_start, for an invalid route, a path the server or an earlier route
 * already serves on one of its listeners, or a label that is not [A-Za-z0-9_-]; ADM_ETOOBIG past
 * ADM_ROUTES_MAX routes, the server's own included.
 */
int adm_server_add_route(adm_server_t *s, const adm_route_t *route);

struct adm_reload_s;
struct adm_metrics_s;

/**
 * Registers the server's TLS files (--tls-cert-file, --tls-private-key-file, --client-ca-file) with
 * the reload coordinator: a reload builds a new server context from them (a generated certificate
 * is kept), new handshakes use it and connections already open keep theirs. Nothing under
 * --insecure-http. Returns 0 or a negative code.
 */
int adm_server_add_reload(adm_server_t *s, struct adm_reload_s *r);

/** The server's metrics, for counters kept elsewhere (the reload outcomes). */
struct adm_metrics_s *adm_server_metrics(adm_server_t *s);

/**
 * /readyz also asks fn(arg) (at most one check; NULL removes it): 503 "not synced" while it says
 * false, as for the informer caches before their first LIST. arg must outlive the server.
 */
void adm_server_set_ready_check(adm_server_t *s, bool (*fn)(void *arg), void *arg);

/**
 * Under --workers (D12), in a worker before any route is added: count in this worker's slot of the
 * shared metrics memory (adm/base/shared_metrics.h), and render /metrics as every worker's sum.
 * Without a slot (one process) nothing changes. Returns 0, ADM_EINVAL once routes exist, ADM_ENOMEM.
 */
int adm_server_share_metrics(adm_server_t *s);

/** Frees the server after done has fired (or if it was never started). */
void adm_server_destroy(adm_server_t *s);

/* Appends more metric families to /metrics: 0 or ADM_ENOMEM. */
typedef int (*adm_server_metrics_fn)(void *arg, adm_buf_t *out);

/**
 * Registers fn(arg, out), called after the server's own families on every /metrics answer, in the
 * order registered (at most 4). arg must outlive the server. Returns 0 or ADM_ETOOBIG.
 */
int adm_server_add_metrics(adm_server_t *s, adm_server_metrics_fn fn, void *arg);

#endif

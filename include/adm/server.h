/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission server: listeners (admission over HTTPS or plain HTTP, optional health and metrics
 * listeners), connections and the graceful drain, all on one libuv loop.
 */
#ifndef ADM_SERVER_H
#define ADM_SERVER_H

#include "adm/chain.h"
#include "adm/options.h"

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

/** Sets the admission chain the admission endpoints run (kept by the caller, outliving the server). */
void adm_server_set_chain(adm_server_t *s, adm_chain_t *chain);

/** Frees the server after done has fired (or if it was never started). */
void adm_server_destroy(adm_server_t *s);

#endif

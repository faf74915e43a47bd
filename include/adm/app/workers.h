/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `--workers N` (INTERFACE D12): the parent forks N single-loop worker processes after the
 * configuration is loaded and the certificate made, then only supervises them. It relays SIGHUP
 * (reload) and SIGTERM/SIGINT (the drain) to every worker, restarts a worker that dies (logged with
 * its pid and exit status or signal; a worker that dies within 10 s of its start waits 100 ms, then
 * twice as long at each such death, up to 10 s, so a crash loop does not spin), and returns once
 * every worker has exited after a drain.
 */
#ifndef ADM_APP_WORKERS_H
#define ADM_APP_WORKERS_H

#include "adm/base/options.h"

#include <stdbool.h>
#include <stddef.h>

/**
 * Before the fork: a listener given port 0 gets its port now, so every worker binds the same one.
 * The parent keeps a bound (not listening) SO_REUSEPORT socket on each such port until
 * adm_workers_run returns, so no other program takes it meanwhile. Updates opts; returns 0, or a
 * negative code with one line in err.
 */
int adm_workers_reserve_ports(adm_options_t *opts, char *err, size_t err_len);

/**
 * Forks opts->workers workers and supervises them. Returns in each worker (at its first start and
 * at each restart) with *index its slot (0..N-1), *restarted telling which, and 0. Returns in the
 * parent, with *index -1, once every worker has gone after SIGTERM/SIGINT: 0 when all drained
 * cleanly, 2 when a worker could not start (it exits 2: a listener that cannot bind, say), else 1.
 */
int adm_workers_run(unsigned n, int *index, bool *restarted);

#endif

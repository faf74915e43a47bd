/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reload coordinator: parts of a program that read files (the server's certificate, key and
 * client CA; the admission configuration; the kubeconfig and the files it names) register here,
 * each with the files it reads now. A reload, asked for by SIGHUP (adm_reload_now) or by a change
 * to any of those files (watched by adm/base/watch.h, debounced), runs in two phases: every part
 * prepares its new state from the files, validating it whole; only when all of them succeeded
 * does every part commit (a swap that cannot fail), else every prepared state is discarded and the
 * running configuration stays, with one log line naming the file and field. After either, the
 * files are watched again, with symbolic links resolved anew.
 *
 * Reloads run on the loop, one at a time, synchronously: a part's prepare reads and parses local
 * files (no network, no key generation), which takes milliseconds for configurations of the sizes
 * admitd is given.
 */
#ifndef ADM_RELOAD_H
#define ADM_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct adm_reload_s adm_reload_t;

typedef struct adm_reload_part_s {
    const char *name; /* for logs: "TLS", "admission configuration" */
    /**
     * Builds and validates the new state from the files: 0 with *pending set, or an error with one
     * line in err naming the file and field. Nothing may change in what runs yet.
     */
    int (*prepare)(void *arg, void **pending, char *err, size_t err_len);
    /** Makes pending (from this part's prepare) the running state. */
    void (*commit)(void *arg, void *pending);
    /** Another part failed: frees pending. */
    void (*discard)(void *arg, void *pending);
    /** Calls adm_reload_watch for each file the running state was read from (NULL: none). */
    void (*watch)(void *arg, adm_reload_t *r);
    void *arg;
} adm_reload_part_t;

/** Told the outcome of every reload (for the reload metrics). */
typedef void (*adm_reload_done_cb)(void *arg, bool ok);

/**
 * Creates a coordinator on loop: changes to watched files reload debounce_ms after the last event of
 * a burst. done (may be NULL) hears every outcome. Returns 0 or ADM_ENOMEM.
 */
int adm_reload_create(uv_loop_t *loop, uint64_t debounce_ms, adm_reload_done_cb done, void *arg,
                      adm_reload_t **out);

/** Registers a part (copied; arg kept) and watches its files. Returns 0, or ADM_ETOOBIG past 8 parts. */
int adm_reload_add_part(adm_reload_t *r, const adm_reload_part_t *part);

/**
 * Inside a part's watch hook: watches path (a file or a folder), its parent folder and every link on
 * the way. A path that cannot be watched now (its folder is missing) is logged at --v 1 and skipped.
 */
void adm_reload_watch(adm_reload_t *r, const char *path);

/** Reloads now; why is logged ("SIGHUP"). Returns true when the new configuration runs. */
bool adm_reload_now(adm_reload_t *r, const char *why);

/** Reloads so far, by outcome. */
uint64_t adm_reload_count(const adm_reload_t *r, bool ok);

/** Stops watching and frees once the watch handles have closed (the loop must run). */
void adm_reload_close(adm_reload_t *r);

#endif

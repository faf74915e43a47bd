/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A set of watched files and folders on a libuv loop, with one debounced callback for any change.
 * Files are watched through their parent folders (uv_fs_event on the folder, filtered by name), so
 * a file replaced by a rename, deleted and created again, or not there yet is still seen; every
 * symbolic link met on the way to a file (the file itself or a folder above it) is watched the same
 * way and followed, so a Secret or ConfigMap mounted by kubelet, whose files are links through a
 * `..data` link swapped at each update, is seen at every update. A folder named as such is watched
 * whole (any entry changing in it counts).
 *
 * Links are resolved when a path is added: after a change, call adm_watch_clear and add the paths
 * again (adm_reload does) so the new link targets are watched.
 */
#ifndef ADM_WATCH_H
#define ADM_WATCH_H

#include <stdint.h>
#include <uv.h>

typedef struct adm_watch_s adm_watch_t;

/** Called debounce_ms after the last of a burst of changes; what is the first path that changed. */
typedef void (*adm_watch_cb)(void *arg, const char *what);

/** Creates an empty set on loop. Returns 0 or ADM_ENOMEM. */
int adm_watch_create(uv_loop_t *loop, uint64_t debounce_ms, adm_watch_cb cb, void *arg, adm_watch_t **out);

/**
 * Watches path (a file or a folder, absolute or relative to the working directory), following
 * symbolic links (at most 40). Returns 0, ADM_ENOMEM, or ADM_EIO when no folder on the way could be
 * watched (the reason is logged at --v 1).
 */
int adm_watch_add(adm_watch_t *w, const char *path);

/** Stops watching everything; a change already noticed still calls back. */
void adm_watch_clear(adm_watch_t *w);

/** Stops everything and frees the set once its handles have closed (the loop must run). */
void adm_watch_close(adm_watch_t *w);

#endif

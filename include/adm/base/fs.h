/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Files named by flags: a whole-file reader and the walk of "a file or a folder of files" that
 * every configuration flag accepts (--webhook-config, --cluster-state, admitd-bench --review).
 * Both run at start-up (or, later, on a reload), never on the event loop's request path.
 */
#ifndef ADM_FS_H
#define ADM_FS_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>

/**
 * Reads the whole file at path into a, NUL-terminated (*len excludes the NUL). A regular file is
 * read into one allocation of its size, so no copy of its bytes is left behind in a (a caller
 * holding a key zeroizes the one buffer); pipes and FIFOs are read as they come. Returns 0, or
 * ADM_EIO ("PATH: <strerror>") or ADM_ETOOBIG ("PATH: larger than N bytes") with one line in err,
 * or ADM_ENOMEM.
 */
int adm_fs_read(adm_arena_t *a, const char *path, size_t max_bytes, char **data, size_t *len, char *err,
                size_t err_len);

/** Called for each file of a walk; a nonzero return stops the walk and is returned. */
typedef int (*adm_fs_file_fn)(void *arg, const char *path);

/**
 * Calls fn for path when it is a file, or, when it is a folder, for each regular file in it whose
 * name ends with one of suffixes (NULL-terminated) and does not start with '.', in name order.
 * Links are followed, so a mounted ConfigMap's entries (links into its ..data folder) count as
 * files and the ..data folder itself is skipped. Paths handed to fn live in a. Returns fn's
 * first nonzero result, or ADM_EIO with "PATH: <strerror>" in err, or ADM_ENOMEM.
 */
int adm_fs_walk(adm_arena_t *a, const char *path, const char *const *suffixes, adm_fs_file_fn fn, void *arg,
                char *err, size_t err_len);

/** The suffixes of configuration files: .yaml, .yml and .json. */
extern const char *const adm_fs_config_suffixes[];

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one whole-file reader and the one folder walk (fs.h). Both are plain blocking calls: they
 * serve start-up and configuration loading, where nothing else is waiting on the loop.
 */
#include "adm/base/fs.h"

#include "adm/base/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const adm_fs_config_suffixes[] = {".yaml", ".yml", ".json", NULL};

int adm_fs_read(adm_arena_t *a, const char *path, size_t max_bytes, char **data, size_t *len, char *err,
                size_t err_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int rc = 0;

    if (fd < 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return ADM_EIO;
    }
    /* A regular file's size is known: one allocation, one more byte to see it did not grow. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= max_bytes) {
        cap = (size_t)st.st_size + 2;
        buf = adm_arena_alloc(a, cap);
        if (buf == NULL) {
            close(fd);
            return ADM_ENOMEM;
        }
    }
    for (;;) {
        ssize_t n;

        if (cap - used < 2) {
            size_t ncap = cap < 16384 ? 16384 : cap * 2;
            char *g = adm_arena_realloc(a, buf, cap, ncap);

            if (g == NULL) {
                rc = ADM_ENOMEM;
                break;
            }
            buf = g;
            cap = ncap;
        }
        n = read(fd, buf + used, cap - used - 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
            rc = ADM_EIO;
            break;
        }
        if (n == 0) {
            break;
        }
        used += (size_t)n;
        if (used > max_bytes) {
            snprintf(err, err_len, "%s: larger than %zu bytes", path, max_bytes);
            rc = ADM_ETOOBIG;
            break;
        }
    }
    close(fd);
    if (rc != 0) {
        return rc;
    }
    buf[used] = '\0';
    *data = buf;
    *len = used;
    return 0;
}

static bool has_suffix(const char *name, const char *const *suffixes)
{
    size_t n = strlen(name);

    for (const char *const *s = suffixes; *s != NULL; s++) {
        size_t k = strlen(*s);

        if (n > k && strcmp(name + n - k, *s) == 0) {
            return true;
        }
    }
    return false;
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The wanted regular files of dir, as full paths in name order. */
static int list_dir(adm_arena_t *a, const char *dir, const char *const *suffixes, char ***out, size_t *nout,
                    char *err, size_t err_len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool slash = dir[0] != '\0' && dir[strlen(dir) - 1] == '/';

    if (d == NULL) {
        snprintf(err, err_len, "%s: %s", dir, strerror(errno));
        return ADM_EIO;
    }
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        struct stat st;
        char *full;

        if (e->d_name[0] == '.' || !has_suffix(e->d_name, suffixes)) {
            continue;
        }
        full = adm_arena_printf(a, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        if (full == NULL) {
            closedir(d);
            return ADM_ENOMEM;
        }
        /* stat, not lstat: a mounted ConfigMap's entries are links into its ..data folder. */
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (n == cap) {
            size_t ncap = cap == 0 ? 16 : cap * 2;
            char **g = adm_arena_realloc(a, names, cap * sizeof(*names), ncap * sizeof(*names));

            if (g == NULL) {
                closedir(d);
                return ADM_ENOMEM;
            }
            names = g;
            cap = ncap;
        }
        names[n++] = full;
    }
    closedir(d);
    if (n > 0) {
        qsort(names, n, sizeof(*names), cmp_names);
    }
    *out = names;
    *nout = n;
    return 0;
}

int adm_fs_walk(adm_arena_t *a, const char *path, const char *const *suffixes, adm_fs_file_fn fn, void *arg,
                char *err, size_t err_len)
{
    struct stat st;
    char **names = NULL;
    size_t n = 0;
    int rc;

    if (stat(path, &st) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return ADM_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        return fn(arg, path);
    }
    rc = list_dir(a, path, suffixes, &names, &n, err, err_len);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = fn(arg, names[i]);
    }
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The file-watch set (watch.h): one uv_fs_event per watched folder, each with the names in it that
 * matter (or all of them), and a timer that turns a burst of events into one callback. Paths are
 * resolved here, link by link, with lstat and readlink: a few system calls on local files when the
 * set is built (at start and after each reload), never per request.
 */
#include "adm/base/watch.h"

#include "adm/base/error.h"
#include "adm/base/log.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40 /* as the kernel's own limit on links followed in one lookup */

typedef struct name_s {
    struct name_s *next;
    char name[];
} name_t;

typedef struct dirwatch_s {
    uv_fs_event_t ev;
    struct adm_watch_s *owner;
    struct dirwatch_s *next;
    bool whole;    /* every entry of the folder counts */
    name_t *names; /* otherwise only these */
    char path[];
} dirwatch_t;

struct adm_watch_s {
    uv_loop_t *loop;
    uv_timer_t timer;
    uint64_t debounce_ms;
    adm_watch_cb cb;
    void *arg;
    dirwatch_t *dirs;
    int pending_closes; /* handles closing; the set is freed when this is 0 after adm_watch_close */
    bool closing;
    char what[PATH_MAX]; /* the first change of the current burst; "" when none */
};

static void free_dir(dirwatch_t *d)
{
    name_t *n = d->names;

    while (n != NULL) {
        name_t *next = n->next;

        free(n);
        n = next;
    }
    free(d);
}

static void maybe_free(adm_watch_t *w)
{
    if (w->closing && w->pending_closes == 0) {
        free(w);
    }
}

static void on_dir_closed(uv_handle_t *h)
{
    dirwatch_t *d = h->data;
    adm_watch_t *w = d->owner;

    free_dir(d);
    w->pending_closes--;
    maybe_free(w);
}

static void on_timer_closed(uv_handle_t *h)
{
    adm_watch_t *w = h->data;

    w->pending_closes--;
    maybe_free(w);
}

static void on_quiet(uv_timer_t *t)
{
    adm_watch_t *w = t->data;
    char what[PATH_MAX];

    memcpy(what, w->what, sizeof(what));
    w->what[0] = '\0';
    w->cb(w->arg, what);
}

static bool wanted(const dirwatch_t *d, const char *filename)
{
    if (d->whole || filename == NULL) {
        return true;
    }
    for (const name_t *n = d->names; n != NULL; n = n->next) {
        if (strcmp(n->name, filename) == 0) {
            return true;
        }
    }
    return false;
}

static void on_event(uv_fs_event_t *ev, const char *filename, int events, int status)
{
    dirwatch_t *d = ev->data;
    adm_watch_t *w = d->owner;

    (void)events;
    if (status < 0) {
        adm_log_v(1, "watching %s: %s", d->path, uv_strerror(status));
    } else if (!wanted(d, filename)) {
        return;
    }
    if (w->what[0] == '\0') {
        snprintf(w->what, sizeof(w->what), "%s%s%s", d->path, filename != NULL ? "/" : "",
                 filename != NULL ? filename : "");
    }
    /* every event of a burst pushes the callback back: one reload per burst */
    uv_timer_start(&w->timer, on_quiet, w->debounce_ms, 0);
}

int adm_watch_create(uv_loop_t *loop, uint64_t debounce_ms, adm_watch_cb cb, void *arg, adm_watch_t **out)
{
    adm_watch_t *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (w == NULL) {
        return ADM_ENOMEM;
    }
    w->loop = loop;
    w->debounce_ms = debounce_ms;
    w->cb = cb;
    w->arg = arg;
    uv_timer_init(loop, &w->timer);
    w->timer.data = w;
    *out = w;
    return 0;
}

/* The folder watch for dir, made when missing; NULL when it cannot be watched or out of memory. */
static dirwatch_t *dir_watch(adm_watch_t *w, const char *dir, int *rc)
{
    size_t len = strlen(dir);
    dirwatch_t *d;
    int err;

    for (d = w->dirs; d != NULL; d = d->next) {
        if (strcmp(d->path, dir) == 0) {
            return d;
        }
    }
    d = calloc(1, sizeof(*d) + len + 1);
    if (d == NULL) {
        *rc = ADM_ENOMEM;
        return NULL;
    }
    memcpy(d->path, dir, len + 1);
    d->owner = w;
    uv_fs_event_init(w->loop, &d->ev);
    d->ev.data = d;
    err = uv_fs_event_start(&d->ev, on_event, d->path, 0);
    if (err != 0) {
        adm_log_v(1, "cannot watch %s: %s", dir, uv_strerror(err));
        w->pending_closes++;
        uv_close((uv_handle_t *)&d->ev, on_dir_closed);
        *rc = ADM_EIO;
        return NULL;
    }
    d->next = w->dirs;
    w->dirs = d;
    return d;
}

/* Splits path into its folder and last name and watches that name there (NULL name: all). */
static int watch_entry(adm_watch_t *w, const char *path, bool whole)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *name;
    dirwatch_t *d;
    name_t *n;
    int rc = 0;

    if (whole) {
        snprintf(dir, sizeof(dir), "%s", path);
        name = NULL;
    } else if (slash == NULL || slash == path) {
        snprintf(dir, sizeof(dir), "%s", slash == path ? "/" : ".");
        name = slash == path ? path + 1 : path;
    } else {
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        name = slash + 1;
    }
    d = dir_watch(w, dir, &rc);
    if (d == NULL) {
        return rc;
    }
    if (name == NULL) {
        d->whole = true;
        return 0;
    }
    if (wanted(d, name) && !d->whole) {
        return 0;
    }
    n = malloc(sizeof(*n) + strlen(name) + 1);
    if (n == NULL) {
        return ADM_ENOMEM;
    }
    memcpy(n->name, name, strlen(name) + 1);
    n->next = d->names;
    d->names = n;
    return 0;
}

/*
 * The first symbolic link among the leading folders of path and path itself: its length in path,
 * or 0 when there is none. Checks from the root down, as the kernel resolves.
 */
static size_t first_link(const char *path)
{
    char prefix[PATH_MAX];
    size_t len = strlen(path);
    struct stat st;

    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/') {
            continue;
        }
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        if (lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode)) {
            return i;
        }
    }
    return 0;
}

/* path with its link at [0, link_len) replaced by that link's target; false when unreadable. */
static bool follow(const char *path, size_t link_len, char *out, size_t out_len)
{
    char link[PATH_MAX], target[PATH_MAX];
    ssize_t n;
    int w;

    memcpy(link, path, link_len);
    link[link_len] = '\0';
    n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0) {
        return false;
    }
    target[n] = '\0';
    if (target[0] == '/') {
        w = snprintf(out, out_len, "%s%s", target, path + link_len);
    } else {
        const char *slash = strrchr(link, '/');
        int dir_len = slash != NULL ? (int)(slash - link) : 0;

        w = snprintf(out, out_len, "%.*s/%s%s", dir_len, link, target, path + link_len);
    }
    return w > 0 && (size_t)w < out_len;
}

int adm_watch_add(adm_watch_t *w, const char *path)
{
    char cur[PATH_MAX], next[PATH_MAX];
    struct stat st;
    int rc = 0, first_rc;

    if (path[0] == '/') {
        snprintf(cur, sizeof(cur), "%s", path);
    } else {
        char cwd[PATH_MAX];
        size_t cwd_len = sizeof(cwd);
        int n;

        if (uv_cwd(cwd, &cwd_len) != 0) {
            return ADM_EIO;
        }
        n = snprintf(cur, sizeof(cur), "%s/%s", cwd, path);
        if (n < 0 || (size_t)n >= sizeof(cur)) {
            return ADM_ETOOBIG;
        }
    }
    first_rc = watch_entry(w, cur, false);
    for (int hops = 0; hops < MAX_LINKS; hops++) {
        size_t link_len = first_link(cur);

        if (link_len == 0) {
            break;
        }
        memcpy(next, cur, link_len);
        next[link_len] = '\0';
        rc = watch_entry(w, next, false); /* the link itself: kubelet's ..data swap renames it */
        if (rc == ADM_ENOMEM || !follow(cur, link_len, next, sizeof(next))) {
            break;
        }
        memcpy(cur, next, sizeof(cur));
        rc = watch_entry(w, cur, false);
        if (rc == ADM_ENOMEM) {
            break;
        }
    }
    if (rc != ADM_ENOMEM && stat(cur, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = watch_entry(w, cur, true);
    }
    return rc == ADM_ENOMEM ? rc : first_rc;
}

void adm_watch_clear(adm_watch_t *w)
{
    dirwatch_t *d = w->dirs;

    w->dirs = NULL;
    while (d != NULL) {
        dirwatch_t *next = d->next;

        uv_fs_event_stop(&d->ev);
        w->pending_closes++;
        uv_close((uv_handle_t *)&d->ev, on_dir_closed);
        d = next;
    }
}

void adm_watch_close(adm_watch_t *w)
{
    if (w == NULL) {
        return;
    }
    adm_watch_clear(w);
    w->closing = true;
    w->pending_closes++;
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reload coordinator (reload.h): prepare every part, commit all or discard all, then watch the
 * files of what runs now. The parts are few (a handful per program), kept in a small array.
 */
#include "adm/base/reload.h"

#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 8

struct adm_reload_s {
    adm_watch_t *watch;
    adm_reload_part_t parts[MAX_PARTS];
    size_t nparts;
    adm_reload_done_cb done;
    void *done_arg;
    uint64_t count[2]; /* [0] failures, [1] successes */
};

static void rewatch(adm_reload_t *r)
{
    adm_watch_clear(r->watch);
    for (size_t i = 0; i < r->nparts; i++) {
        if (r->parts[i].watch != NULL) {
            r->parts[i].watch(r->parts[i].arg, r);
        }
    }
}

static void on_change(void *arg, const char *what)
{
    adm_reload_t *r = arg;
    char why[600];

    snprintf(why, sizeof(why), "change in %s", what);
    adm_reload_now(r, why);
}

int adm_reload_create(uv_loop_t *loop, uint64_t debounce_ms, adm_reload_done_cb done, void *arg,
                      adm_reload_t **out)
{
    adm_reload_t *r = calloc(1, sizeof(*r));
    int rc;

    *out = NULL;
    if (r == NULL) {
        return ADM_ENOMEM;
    }
    rc = adm_watch_create(loop, debounce_ms, on_change, r, &r->watch);
    if (rc != 0) {
        free(r);
        return rc;
    }
    r->done = done;
    r->done_arg = arg;
    *out = r;
    return 0;
}

int adm_reload_add_part(adm_reload_t *r, const adm_reload_part_t *part)
{
    if (r->nparts == MAX_PARTS) {
        return ADM_ETOOBIG;
    }
    r->parts[r->nparts++] = *part;
    if (part->watch != NULL) {
        part->watch(part->arg, r);
    }
    return 0;
}

void adm_reload_watch(adm_reload_t *r, const char *path)
{
    int rc = adm_watch_add(r->watch, path);

    if (rc != 0) {
        adm_log_v(1, "%s: not watched for changes: %s (SIGHUP still reloads it)", path, adm_strerror(rc));
    }
}

bool adm_reload_now(adm_reload_t *r, const char *why)
{
    void *pending[MAX_PARTS] = {0};
    char err[2048] = "";
    size_t prepared = 0;
    int rc = 0;

    adm_log_info("reloading the configuration (%s)", why);
    for (; prepared < r->nparts; prepared++) {
        adm_reload_part_t *p = &r->parts[prepared];

        err[0] = '\0';
        rc = p->prepare(p->arg, &pending[prepared], err, sizeof(err));
        if (rc != 0) {
            break;
        }
    }
    if (rc != 0) {
        adm_reload_part_t *failed = &r->parts[prepared];

        for (size_t i = 0; i < prepared; i++) {
            r->parts[i].discard(r->parts[i].arg, pending[i]);
        }
        adm_log_error("reload failed, the running configuration stays: %s: %s", failed->name,
                      err[0] != '\0' ? err : adm_strerror(rc));
    } else {
        for (size_t i = 0; i < r->nparts; i++) {
            r->parts[i].commit(r->parts[i].arg, pending[i]);
        }
        adm_log_info("configuration reloaded");
    }
    r->count[rc == 0]++;
    rewatch(r);
    if (r->done != NULL) {
        r->done(r->done_arg, rc == 0);
    }
    return rc == 0;
}

uint64_t adm_reload_count(const adm_reload_t *r, bool ok)
{
    return r->count[ok];
}

void adm_reload_close(adm_reload_t *r)
{
    if (r == NULL) {
        return;
    }
    adm_watch_close(r->watch);
    free(r);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what an API server sends the informer (cluster/watch_decode.c), and what
 * the informer does with it (cluster/cluster_store.c): the input is a watch stream fed to the
 * framer in chunks whose sizes come from the first byte, every framed event decoded and applied
 * as the reflector applies it (ADDED and MODIFIED put, DELETED delete) to a store of a kind kept
 * whole (Namespace) and of one kept in part (Pod), looked up and listed again; the same bytes are
 * also read as a list page (which replaces both kinds' content) and as a Status. Never a crash, a
 * leak or undefined behaviour, whatever the server sends.
 */
#include "adm/base/arena.h"
#include "adm/cluster/cluster_store.h"
#include "adm/cluster/watch_decode.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the reflector does with one decoded event, to both kinds; then a lookup and a list. */
static void apply(adm_cluster_store_t *s, adm_kind_store_t *const kinds[2], const adm_watch_event_t *ev)
{
    size_t n = 0;

    for (size_t i = 0; i < 2; i++) {
        switch (ev->type) {
        case ADM_WATCH_ADDED:
        case ADM_WATCH_MODIFIED: (void)adm_kind_store_put(kinds[i], ev->object); break;
        case ADM_WATCH_DELETED: adm_kind_store_delete(kinds[i], ev->namespace_, ev->name); break;
        case ADM_WATCH_BOOKMARK: break;
        case ADM_WATCH_ERROR: (void)adm_watch_event_expired(ev); break;
        }
    }
    if (ev->name != NULL) {
        (void)adm_cluster_store_get(s, "", "Pod", ev->namespace_, ev->name);
        (void)adm_cluster_store_get(s, "", "Namespace", NULL, ev->name);
        (void)adm_cluster_store_list(s, "", "Pod", ev->namespace_, &n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_watch_framer_t f;
    adm_arena_t *a;
    adm_list_page_t page;
    adm_cluster_store_t *s;
    adm_kind_store_t *kinds[2];
    adm_cluster_pin_t pin = {0};
    yyjson_val *empty[1] = {NULL};
    const char *reason, *message;
    uint64_t ra;
    size_t step, off;
    char err[256];

    if (size < 1) {
        return 0;
    }
    step = (size_t)data[0] % 17 + 1;
    data++;
    size--;
    a = adm_arena_create(4096);
    s = adm_cluster_store_create();
    kinds[0] = s != NULL ? adm_cluster_store_kind(s, "", "Namespace", false) : NULL;
    kinds[1] = s != NULL ? adm_cluster_store_kind(s, "", "Pod", true) : NULL;
    if (a == NULL || kinds[0] == NULL || kinds[1] == NULL) {
        abort();
    }
    /* served from the start, and pinned as a request would be: retired objects wait for the unpin */
    (void)adm_kind_store_replace(kinds[0], empty, 1);
    (void)adm_kind_store_replace(kinds[1], empty, 1);
    adm_cluster_store_pin(s, &pin);
    adm_watch_framer_init(&f);
    f.max = 64 * 1024;
    off = 0;
    while (off < size) {
        size_t chunk = size - off < step ? size - off : step, pos = 0;
        int broken = 0;

        while (pos < chunk) {
            const char *ev = NULL;
            size_t ev_len = 0, used = 0;
            adm_watch_event_t wev;
            adm_frame_result_t r =
                adm_watch_framer_feed(&f, (const char *)data + off + pos, chunk - pos, &used, &ev, &ev_len);

            if (r == ADM_FRAME_ERROR) {
                broken = 1;
                break;
            }
            if (used == 0 && r == ADM_FRAME_NEED_MORE) {
                abort(); /* the framer must always make progress */
            }
            pos += used;
            if (r == ADM_FRAME_EVENT && adm_watch_event_decode(a, ev, ev_len, &wev, err, sizeof(err)) == 0) {
                apply(s, kinds, &wev);
            }
            adm_arena_reset(a);
        }
        if (broken) {
            break;
        }
        off += chunk;
    }
    adm_watch_framer_free(&f);
    if (adm_list_page_decode(a, (const char *)data, size, &page, err, sizeof(err)) == 0) {
        yyjson_val *pages[1] = {page.items};
        size_t n = 0;

        (void)adm_kind_store_replace(kinds[0], pages, 1);
        (void)adm_kind_store_replace(kinds[1], pages, 1);
        (void)adm_cluster_store_list(s, "", "Pod", NULL, &n);
    }
    (void)adm_status_decode(a, (const char *)data, size, &reason, &message, &ra);
    adm_cluster_store_unpin(s, &pin);
    if (adm_cluster_store_retired(s) != 0) {
        abort(); /* nothing retired may outlive the last pin */
    }
    adm_cluster_store_free(s);
    adm_arena_destroy(a);
    return 0;
}

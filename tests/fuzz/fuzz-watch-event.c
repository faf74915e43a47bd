/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what an API server sends the informer (cluster/watch_decode.c): the input
 * is a watch stream fed to the framer in chunks whose sizes come from the first byte, every framed
 * event decoded; the same bytes are also read as a list page and as a Status. Never a crash, a
 * leak or undefined behaviour, whatever the server sends.
 */
#include "adm/base/arena.h"
#include "adm/cluster/watch_decode.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_watch_framer_t f;
    adm_arena_t *a;
    adm_list_page_t page;
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
    if (a == NULL) {
        abort();
    }
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
                (void)adm_watch_event_expired(&wev);
            }
        }
        if (broken) {
            break;
        }
        off += chunk;
    }
    adm_watch_framer_free(&f);
    (void)adm_list_page_decode(a, (const char *)data, size, &page, err, sizeof(err));
    (void)adm_status_decode(a, (const char *)data, size, &reason, &message, &ra);
    adm_arena_destroy(a);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Heap trimming after connections close (heap_trim.h): a high-water mark of open connections and
 * one timer that calls glibc's malloc_trim when the count has fallen far enough.
 */
#include "heap_trim.h"

#include "adm/base/log.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void adm__heap_trim_init(adm__heap_trim_t *t, uv_loop_t *loop)
{
    *t = (adm__heap_trim_t){.loop = loop};
}

static void on_trim_timer(uv_timer_t *h)
{
    adm__heap_trim_t *t = h->data;
    uint64_t start = uv_hrtime();
    int released = 0;

#if defined(__GLIBC__)
    released = malloc_trim(0);
#endif
    adm_log_v(2, "%s free heap memory after connections fell from %zu to %zu (%.2f ms)",
              released ? "gave back" : "found no", t->high, t->alive, (double)(uv_hrtime() - start) / 1e6);
    t->high = t->alive;
}

void adm__heap_trim_note(adm__heap_trim_t *t, size_t alive)
{
    t->alive = alive;
    if (alive > t->high) {
        t->high = alive;
        return;
    }
    if (t->closed || t->high - alive < ADM_HEAP_TRIM_MIN_DROP || alive > t->high / 8) {
        return;
    }
    if (!t->timer_open) {
        if (uv_timer_init(t->loop, &t->timer) != 0) {
            return;
        }
        t->timer.data = t;
        t->timer_open = true;
        uv_unref((uv_handle_t *)&t->timer); /* never what keeps the loop running */
    }
    if (!uv_is_active((uv_handle_t *)&t->timer)) {
        uv_timer_start(&t->timer, on_trim_timer, ADM_HEAP_TRIM_DELAY_MS, 0);
    }
}

int adm__heap_trim_close(adm__heap_trim_t *t, uv_close_cb on_closed, void *arg)
{
    if (t->closed) {
        return 0;
    }
    t->closed = true;
    if (!t->timer_open) {
        return 0;
    }
    t->timer.data = arg;
    uv_close((uv_handle_t *)&t->timer, on_closed);
    return 1;
}

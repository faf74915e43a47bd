/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory back to the system once connections close (issue 17). What a connection frees goes back
 * to glibc's heap, not to the system: the heap only shrinks from its top, and after thousands of
 * connections something still in use always sits above the freed space (measured: 1,000 idle
 * connections closed left 77 MB of heap holding 0.7 MB in use, and RSS where it was). malloc_trim
 * hands every free page back (madvise), wherever it is in the heap; but it walks the whole heap
 * holding the allocator's lock, and takes long on a big fragmented one (0.1 s after 1,000
 * connections on this shared machine; 13.7 s when it ran with 10,000 connections fallen to 3,934,
 * and 0.35 s from there to none). So it runs only at a low-water mark, when few connections are
 * left for the pause to hold up: the number allocated has fallen to an eighth of its high-water
 * mark (and by at least ADM_HEAP_TRIM_MIN_DROP), one timer ADM_HEAP_TRIM_DELAY_MS later, which lets
 * a wave of closes finish first. Then the high-water mark starts again from the connections left.
 * A partial drop (one kube-apiserver of three restarting) keeps its memory for the connections
 * that come back.
 */
#ifndef ADM_SERVER_HEAP_TRIM_H
#define ADM_SERVER_HEAP_TRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

/* Fewer closed connections than this are not worth a walk of the heap. */
#define ADM_HEAP_TRIM_MIN_DROP 64
#define ADM_HEAP_TRIM_DELAY_MS 1000

typedef struct adm__heap_trim_s {
    uv_loop_t *loop;
    uv_timer_t timer; /* set up at the first trim scheduled */
    size_t alive;     /* connections allocated now */
    size_t high;      /* most connections allocated since the last trim */
    bool timer_open;
    bool closed; /* after adm__heap_trim_close: no more trims */
} adm__heap_trim_t;

void adm__heap_trim_init(adm__heap_trim_t *t, uv_loop_t *loop);

/** The number of connections allocated changed to alive: may schedule a trim. */
void adm__heap_trim_note(adm__heap_trim_t *t, size_t alive);

/**
 * No more trims (the server is stopping). Returns how many close callbacks (on_closed, with the
 * handle's data set to arg) will follow: 0 or 1.
 */
int adm__heap_trim_close(adm__heap_trim_t *t, uv_close_cb on_closed, void *arg);

#endif

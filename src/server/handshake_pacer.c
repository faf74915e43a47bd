/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handshake pacing (handshake_pacer.h): a per-turn budget of handshake CPU time and the FIFO of
 * connections whose handshake input waits for a later turn.
 */
#include "handshake_pacer.h"

#include <stddef.h>

void adm__pacer_init(adm__pacer_t *p, uv_loop_t *loop, uint64_t budget_ns, adm__pacer_resume_cb resume)
{
    *p = (adm__pacer_t){.loop = loop, .budget_ns = budget_ns, .resume = resume};
}

bool adm__pacer_may_run(const adm__pacer_t *p)
{
    if (p->closed) {
        return true;
    }
    /* Newcomers queue behind those already waiting, so the oldest are served first. */
    return p->head == NULL && p->spent_ns < p->budget_ns;
}

void adm__pacer_charge(adm__pacer_t *p, uint64_t ns)
{
    p->spent_ns += ns;
}

static void unlink_node(adm__pacer_t *p, adm__pacer_node_t *n)
{
    if (n->prev != NULL) {
        n->prev->next = n->next;
    } else {
        p->head = n->next;
    }
    if (n->next != NULL) {
        n->next->prev = n->prev;
    } else {
        p->tail = n->prev;
    }
    n->prev = n->next = NULL;
    n->queued = false;
    if (p->head == NULL && p->handles_open) {
        uv_idle_stop(&p->idle);
    }
}

static void on_idle(uv_idle_t *h)
{
    (void)h; /* being active is its whole purpose */
}

/* The start of a loop turn: a fresh budget, spent first on the connections waiting longest. */
static void on_prepare(uv_prepare_t *h)
{
    adm__pacer_t *p = h->data;

    p->spent_ns = 0;
    while (p->head != NULL && p->spent_ns < p->budget_ns) {
        adm__pacer_node_t *n = p->head;

        unlink_node(p, n);
        p->resume(p, n);
    }
}

int adm__pacer_hold(adm__pacer_t *p, adm__pacer_node_t *node)
{
    if (!p->handles_open) {
        int rc = uv_prepare_init(p->loop, &p->prepare);

        if (rc == 0) {
            rc = uv_idle_init(p->loop, &p->idle);
            if (rc != 0) {
                uv_close((uv_handle_t *)&p->prepare, NULL);
            }
        }
        if (rc != 0) {
            return rc;
        }
        p->prepare.data = p;
        p->idle.data = p;
        p->handles_open = true;
        uv_prepare_start(&p->prepare, on_prepare);
        uv_unref(
            (uv_handle_t *)&p->prepare); /* only the idle handle, while someone waits, keeps the loop up */
    }
    node->prev = p->tail;
    node->next = NULL;
    node->queued = true;
    if (p->tail != NULL) {
        p->tail->next = node;
    } else {
        p->head = node;
    }
    p->tail = node;
    uv_idle_start(&p->idle, on_idle); /* fails only on a closing handle, which a held node never meets */
    return 0;
}

void adm__pacer_cancel(adm__pacer_t *p, adm__pacer_node_t *node)
{
    if (node->queued) {
        unlink_node(p, node);
    }
}

int adm__pacer_close(adm__pacer_t *p, uv_close_cb on_closed, void *arg)
{
    if (p->closed) {
        return 0;
    }
    p->closed = true;
    /* Whoever still waits goes on at once: from now on nothing is held. */
    while (p->head != NULL) {
        adm__pacer_node_t *n = p->head;

        unlink_node(p, n);
        p->resume(p, n);
    }
    if (!p->handles_open) {
        return 0;
    }
    p->prepare.data = arg;
    p->idle.data = arg;
    uv_close((uv_handle_t *)&p->prepare, on_closed);
    uv_close((uv_handle_t *)&p->idle, on_closed);
    return 2;
}

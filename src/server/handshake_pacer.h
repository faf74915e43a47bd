/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handshake pacing (issue 17, connection storms): a TLS handshake costs the server 1-2 ms of CPU
 * (ECDSA P-256; ~5 ms with RSA-2048), and libuv hands the loop every readable socket of a poll at
 * once, so 500 connections arriving together used to mean 500 handshakes before any request already
 * in flight was served again. The pacer bounds the handshake work of one loop turn: connections
 * whose ClientHello arrives once the turn's budget is spent are put in a FIFO, and handed back
 * (oldest first) at the start of the following turns, before the poll, within each turn's budget.
 * The rest of a handshake under way is never held (conn.c), so started handshakes finish first and
 * their clients are answered early; requests on established connections are never held either, so
 * they wait at most about one budget.
 * The loop does not sleep while connections wait (an idle handle makes the poll non-blocking).
 */
#ifndef ADM_SERVER_HANDSHAKE_PACER_H
#define ADM_SERVER_HANDSHAKE_PACER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* Handshake CPU time allowed per loop turn: about one ECDSA handshake. */
#define ADM_HANDSHAKE_BUDGET_NS (1000 * 1000)

typedef struct adm__pacer_node_s adm__pacer_node_t;
struct adm__pacer_node_s {
    adm__pacer_node_t *prev, *next;
    bool queued;
};

typedef struct adm__pacer_s adm__pacer_t;

/* Called for each connection handed back; the callee charges the time it spends (adm__pacer_charge). */
typedef void (*adm__pacer_resume_cb)(adm__pacer_t *p, adm__pacer_node_t *node);

struct adm__pacer_s {
    uv_loop_t *loop;
    uv_prepare_t prepare; /* starts each turn: resets the budget and hands waiting connections back */
    uv_idle_t idle;       /* active while connections wait: the poll must not block */
    adm__pacer_node_t *head, *tail;
    uint64_t spent_ns; /* handshake work in this turn */
    uint64_t budget_ns;
    adm__pacer_resume_cb resume;
    bool handles_open; /* the two handles are set up lazily, at the first connection held */
    bool closed;       /* after adm__pacer_close: nothing is held any more */
};

void adm__pacer_init(adm__pacer_t *p, uv_loop_t *loop, uint64_t budget_ns, adm__pacer_resume_cb resume);

/** True when handshake work may be done now (the turn's budget is not spent, or nothing is queued). */
bool adm__pacer_may_run(const adm__pacer_t *p);

/** Adds ns of handshake work to the current turn. */
void adm__pacer_charge(adm__pacer_t *p, uint64_t ns);

/** Queues a connection (last in line). Returns 0, or a libuv error when the handles cannot be set up. */
int adm__pacer_hold(adm__pacer_t *p, adm__pacer_node_t *node);

/** Takes a connection out of the line (it is closing). */
void adm__pacer_cancel(adm__pacer_t *p, adm__pacer_node_t *node);

/**
 * Stops pacing (the server is stopping) and closes the handles, if any were opened: returns how many
 * close callbacks (on_closed, with the handle's data set to arg) will follow, 0 or 2.
 */
int adm__pacer_close(adm__pacer_t *p, uv_close_cb on_closed, void *arg);

#endif

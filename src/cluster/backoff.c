/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client-go's ExponentialBackoffManager for the reflector (see the header), on the caller's clock
 * and with a small private PRNG, so tests pin the jitter.
 */
#include "adm/cluster/backoff.h"

#include <string.h>

void adm_backoff_init(adm_backoff_t *b, uint64_t seed)
{
    memset(b, 0, sizeof(*b));
    b->step_ms = ADM_BACKOFF_INITIAL_MS;
    b->rng = seed != 0 ? seed : 0x9e3779b97f4a7c15ull;
}

static uint64_t next_rand(adm_backoff_t *b)
{
    uint64_t x = b->rng;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b->rng = x;
    return x;
}

uint64_t adm_backoff_next(adm_backoff_t *b, uint64_t now_ms, uint64_t retry_after_s, bool *log_it)
{
    uint64_t d;

    if (b->started && now_ms - b->last_start_ms > ADM_BACKOFF_RESET_MS) {
        b->step_ms = ADM_BACKOFF_INITIAL_MS;
        b->logged_step_ms = 0;
    }
    b->started = true;
    b->last_start_ms = now_ms;
    d = b->step_ms;
    *log_it = d != b->logged_step_ms;
    b->logged_step_ms = d;
    b->step_ms = b->step_ms * 2 > ADM_BACKOFF_CAP_MS ? ADM_BACKOFF_CAP_MS : b->step_ms * 2;
    /* wait.Jitter(d, 1.0): d + rand[0,1) * d */
    d += next_rand(b) % d;
    if (retry_after_s > 0) {
        d = retry_after_s * 1000;
    }
    return d;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit's one public hook: the clock its token buckets read, so tests can move time by
 * hand instead of sleeping. The plugin itself is registered through plugins.def.
 */
#ifndef ADM_EVENTRATELIMIT_H
#define ADM_EVENTRATELIMIT_H

#include <stdint.h>

/* Monotonic time in nanoseconds; only differences matter. */
typedef uint64_t (*adm_erl_clock_fn)(void *arg);

/**
 * Makes the state built by EventRateLimit's configure read time from now(arg) instead of the
 * monotonic clock (uv_hrtime). now == NULL restores the monotonic clock. Call it before the first
 * request: buckets already charged keep timestamps from the old clock.
 */
void adm_event_rate_limit_set_clock(void *state, adm_erl_clock_fn now, void *arg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EventRateLimit's test hook: the plugin reads a monotonic clock, which tests replace to move time
 * by hand. The plugin itself is the descriptor adm_plugin_event_rate_limit.
 */
#ifndef ADM_EVENTRATELIMIT_H
#define ADM_EVENTRATELIMIT_H

#include <stdint.h>

/** Makes the plugin state (from its configure) read time, in nanoseconds, from now_ns. */
void adm_event_rate_limit_set_clock(void *state, uint64_t (*now_ns)(void));

#endif

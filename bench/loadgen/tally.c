/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench's per-loop counts (tally.h) and their sum over the loops of a --threads run.
 */
#include "tally.h"

#include <string.h>

const char *outcome_name(outcome_t o)
{
    static const char *const names[OUT_COUNT] = {
        "allowed", "denied",  "http_error", "malformed", "uid_mismatch",
        "timeout", "connect", "tls",        "io",        "protocol",
    };

    return o < OUT_COUNT ? names[o] : "unknown";
}

void tally_init(tally_t *t)
{
    memset(t, 0, sizeof(*t));
    adm_hist_init(&t->hist);
}

void tally_merge(tally_t *into, const tally_t *from)
{
    into->sent += from->sent;
    for (int o = 0; o < OUT_COUNT; o++) {
        into->outcomes[o] += from->outcomes[o];
    }
    for (int s = 0; s < TALLY_HTTP_STATUSES; s++) {
        into->http_status[s] += from->http_status[s];
    }
    into->completed_in_window += from->completed_in_window;
    into->unfinished += from->unfinished;
    adm_hist_merge(&into->hist, &from->hist);
}

uint64_t tally_errors(const tally_t *t)
{
    uint64_t n = 0;

    for (int o = OUT_HTTP_ERROR; o < OUT_COUNT; o++) {
        n += t->outcomes[o];
    }
    return n;
}

double thread_busy(const thread_usage_t *u)
{
    return u->wall_ns > 0 ? (double)u->cpu_ns / (double)u->wall_ns : 0;
}

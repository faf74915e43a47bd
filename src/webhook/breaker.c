/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-webhook circuit breaker (breaker.h): counting consecutive failures, the open cool-down
 * and the single half-open probe. Pure state on the caller's clock, so tests drive it by hand.
 */
#include "adm/webhook/breaker.h"

#include "adm/base/error.h"
#include "adm/base/util.h"

#include <stdio.h>
#include <string.h>

int adm_breaker_parse(const char *s, uint32_t *threshold, uint64_t *cooldown_ms)
{
    const char *slash;
    char k[16];
    uint64_t n, ms;

    if (strcmp(s, "off") == 0) {
        *threshold = 0;
        *cooldown_ms = 0;
        return 0;
    }
    slash = strchr(s, '/');
    if (slash == NULL || slash == s || (size_t)(slash - s) >= sizeof(k)) {
        return ADM_EINVAL;
    }
    memcpy(k, s, (size_t)(slash - s));
    k[slash - s] = '\0';
    if (adm_parse_uint(k, 1000000, &n) != 0 || n == 0 || adm_parse_duration_ms(slash + 1, &ms) != 0 ||
        ms == 0) {
        return ADM_EINVAL;
    }
    *threshold = (uint32_t)n;
    *cooldown_ms = ms;
    return 0;
}

void adm_breaker_init(adm_breaker_t *b, uint32_t threshold, uint64_t cooldown_ms)
{
    memset(b, 0, sizeof(*b));
    b->threshold = threshold;
    b->cooldown_ms = cooldown_ms;
}

bool adm_breaker_admit(adm_breaker_t *b, uint64_t now_ms, bool *probe)
{
    *probe = false;
    if (b->threshold == 0 || b->state == ADM_BREAKER_CLOSED) {
        return true;
    }
    if (b->state == ADM_BREAKER_OPEN && now_ms >= b->open_until_ms) {
        b->state = ADM_BREAKER_HALF_OPEN;
    }
    if (b->state == ADM_BREAKER_HALF_OPEN && !b->probing) {
        b->probing = true;
        *probe = true;
        return true;
    }
    b->refused++;
    return false;
}

static void open_now(adm_breaker_t *b, uint64_t now_ms, const char *reason)
{
    b->state = ADM_BREAKER_OPEN;
    b->open_until_ms = now_ms + b->cooldown_ms;
    b->opened++;
    snprintf(b->reason, sizeof(b->reason), "%s", reason != NULL ? reason : "call failed");
}

void adm_breaker_record(adm_breaker_t *b, uint64_t now_ms, bool probe, bool failed, const char *reason)
{
    if (b->threshold == 0) {
        return;
    }
    if (probe) {
        b->probing = false;
    }
    if (!failed) {
        b->failures = 0;
        b->state = ADM_BREAKER_CLOSED;
        return;
    }
    if (b->failures < UINT32_MAX) {
        b->failures++;
    }
    if (probe || (b->state == ADM_BREAKER_CLOSED && b->failures >= b->threshold)) {
        open_now(b, now_ms, reason);
    }
    /* a call sent before it opened that fails now changes nothing: it is already open */
}

void adm_breaker_probe_dropped(adm_breaker_t *b)
{
    b->probing = false;
}

const char *adm_breaker_state_name(adm_breaker_state_t s)
{
    return s == ADM_BREAKER_OPEN ? "open" : s == ADM_BREAKER_HALF_OPEN ? "half-open" : "closed";
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A circuit breaker for one downstream webhook (issue 18, INTERFACE D19): after K consecutive call
 * failures (no connection, TLS, deadline, reset or malformed answer, HTTP 5xx) the circuit is open
 * for a cool-down, and calls fail at once with the text of the failure that opened it, so the
 * webhook's failurePolicy applies without anyone waiting out timeoutSeconds. After the cool-down
 * one call goes through as a probe (half-open): its success closes the circuit, its failure opens
 * it for another cool-down. Any success closes it. Off unless configured
 * (--webhook-circuit-breaker K/COOLDOWN, or a configuration's proxy.admitd.io/circuit-breaker
 * annotation). State only: the caller supplies the clock and says what each call came to.
 */
#ifndef ADM_BREAKER_H
#define ADM_BREAKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The configuration annotation that sets the breaker of every webhook of a configuration. */
#define ADM_BREAKER_ANNOTATION "proxy.admitd.io/circuit-breaker"

typedef enum adm_breaker_state_e {
    ADM_BREAKER_CLOSED,    /* calls go through */
    ADM_BREAKER_OPEN,      /* calls fail at once until the cool-down ends */
    ADM_BREAKER_HALF_OPEN, /* one probe call is out; the others fail at once */
} adm_breaker_state_t;

typedef struct adm_breaker_s {
    uint32_t threshold;   /* consecutive failures that open it; 0: no breaker */
    uint64_t cooldown_ms; /* how long it stays open before a probe */
    uint32_t failures;    /* consecutive failures so far */
    adm_breaker_state_t state;
    uint64_t open_until_ms; /* loop time the cool-down ends */
    bool probing;           /* the half-open probe is out */
    uint64_t opened;        /* times it opened */
    uint64_t refused;       /* calls failed at once */
    char reason[720];       /* what the failure that opened it said; refused calls say the same */
} adm_breaker_t;

/**
 * Parses "K/COOLDOWN" (K 1..1000000, COOLDOWN a Go duration of at least 1ms: "5/10s") or "off"
 * (K 0). Returns 0 or ADM_EINVAL.
 */
int adm_breaker_parse(const char *s, uint32_t *threshold, uint64_t *cooldown_ms);

/** A closed breaker with these settings (threshold 0: off). */
void adm_breaker_init(adm_breaker_t *b, uint32_t threshold, uint64_t cooldown_ms);

/**
 * Before a call at loop time now_ms: true when the call may go (*probe true when it is the
 * half-open probe, whose outcome must be reported with probe set); false when it must fail at once
 * with b->reason.
 */
bool adm_breaker_admit(adm_breaker_t *b, uint64_t now_ms, bool *probe);

/**
 * A call admitted before has ended: failed or not (a denial or an allowed answer is a success:
 * the webhook is there), and for a failure the reason its caller was given (kept for the calls
 * refused while open).
 */
void adm_breaker_record(adm_breaker_t *b, uint64_t now_ms, bool probe, bool failed, const char *reason);

/** The probe ended without an outcome (it could not be started): the next call probes instead. */
void adm_breaker_probe_dropped(adm_breaker_t *b);

/** "closed", "open" or "half-open". */
const char *adm_breaker_state_name(adm_breaker_state_t s);

#endif

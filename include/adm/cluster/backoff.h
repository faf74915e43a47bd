/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reflector's retry pacing, as client-go builds it (tools/cache/reflector.go:
 * wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)): each failed LIST or WATCH waits
 * the current step with jitter (a uniform extra of up to one step, so [d, 2d)), the step doubles up
 * to 30 s, and a failure more than two minutes after the previous one starts again at 800 ms. A
 * 429's Retry-After replaces the computed wait. The log rule of the issue ("a watch that keeps
 * failing is logged once per back-off step") is kept here too: adm_backoff_next says whether this
 * failure opens a new step worth a log line.
 */
#ifndef ADM_BACKOFF_H
#define ADM_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define ADM_BACKOFF_INITIAL_MS 800u
#define ADM_BACKOFF_CAP_MS 30000u
#define ADM_BACKOFF_RESET_MS 120000u

typedef struct adm_backoff_s {
    uint64_t step_ms;       /* the next step before jitter */
    uint64_t last_start_ms; /* when the previous back-off began */
    bool started;
    uint64_t rng;            /* xorshift state; seed it (0 is replaced by a constant) */
    uint64_t logged_step_ms; /* the step last logged, so a capped run logs once */
} adm_backoff_t;

/** Readies b; seed feeds the jitter (tests pass a constant). */
void adm_backoff_init(adm_backoff_t *b, uint64_t seed);

/**
 * A failure at now_ms: returns how long to wait. retry_after_s > 0 (a 429's Retry-After) is used
 * as given instead. *log_it is true when this failure should be logged: the first of a run, and
 * each time the step grows (once the step is capped, the run is not logged again until a reset).
 */
uint64_t adm_backoff_next(adm_backoff_t *b, uint64_t now_ms, uint64_t retry_after_s, bool *log_it);

#endif

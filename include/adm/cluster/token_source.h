/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bearer token of the API client, re-read from its file as client-go's cached file token source
 * does (transport/token_source.go), so a projected service-account token that kubelet rotates keeps
 * working: a token read from the file is used for one minute less a ten-second leeway, then the
 * file is read again; a read that fails (or finds the file empty) keeps the last good token; and a
 * 401 answer makes the next call re-read a token that was read before that call started
 * (ResetTokenOlderThan). Without a file the token is fixed.
 *
 * The file is read synchronously on the loop: it is a small file on a kubelet tmpfs, read at most
 * once per 50 s (or once per 401), as client-go reads it inline in its RoundTripper.
 */
#ifndef ADM_TOKEN_SOURCE_H
#define ADM_TOKEN_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* client-go: fileTokenSource's period (1 min) and cachingTokenSource's leeway (10 s). */
#define ADM_TOKEN_PERIOD_MS 60000u
#define ADM_TOKEN_LEEWAY_MS 10000u

typedef struct adm_token_source_s {
    char *path;          /* NULL: the token is fixed */
    char *token;         /* NUL-terminated; NULL when there is none at all */
    uint64_t read_at_ms; /* when token was read from path (the caller's clock) */
    bool fresh;          /* token came from path and has not been reset */
    uint64_t reads;      /* successful reads of the file, for tests and metrics */
} adm_token_source_t;

/**
 * Sets ts up with the token read at start (may be NULL) and the file to re-read (may be NULL).
 * initial is taken as read at now_ms. Returns 0 or ADM_ENOMEM.
 */
int adm_token_source_init(adm_token_source_t *ts, const char *initial, const char *path, uint64_t now_ms);

/** Frees the copies (zeroized). */
void adm_token_source_free(adm_token_source_t *ts);

/**
 * The token to send in a call starting at now_ms (re-reading the file when due), or NULL when
 * there is none. Valid until the next call on ts.
 */
const char *adm_token_source_get(adm_token_source_t *ts, uint64_t now_ms);

/** A call started at started_ms was answered 401: a token read before then is read again. */
void adm_token_source_unauthorized(adm_token_source_t *ts, uint64_t started_ms);

#endif

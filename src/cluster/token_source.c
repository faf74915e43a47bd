/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API client's bearer token: client-go's cachingTokenSource over a fileTokenSource, on the
 * loop's clock. See the header for the rule and why the read is synchronous.
 */
#include "adm/cluster/token_source.h"

#include "adm/base/error.h"

#include <errno.h>
#include <mbedtls/platform_util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKEN_BYTES (64u << 10)

static void drop(char *s)
{
    if (s != NULL) {
        mbedtls_platform_zeroize(s, strlen(s));
        free(s);
    }
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Reads path whole and trims it (strings.TrimSpace); NULL when unreadable, too big or empty. */
static char *read_token_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n, start = 0;

    if (f == NULL) {
        return NULL;
    }
    buf = malloc(MAX_TOKEN_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    n = fread(buf, 1, MAX_TOKEN_BYTES + 1, f);
    fclose(f);
    if (n > MAX_TOKEN_BYTES) {
        mbedtls_platform_zeroize(buf, n);
        free(buf);
        return NULL;
    }
    while (n > 0 && is_space(buf[n - 1])) {
        n--;
    }
    while (start < n && is_space(buf[start])) {
        start++;
    }
    if (start == n) {
        free(buf);
        return NULL;
    }
    memmove(buf, buf + start, n - start);
    buf[n - start] = '\0';
    return buf;
}

int adm_token_source_init(adm_token_source_t *ts, const char *initial, const char *path, uint64_t now_ms)
{
    memset(ts, 0, sizeof(*ts));
    if (path != NULL) {
        ts->path = strdup(path);
        if (ts->path == NULL) {
            return ADM_ENOMEM;
        }
    }
    if (initial != NULL) {
        ts->token = strdup(initial);
        if (ts->token == NULL) {
            adm_token_source_free(ts);
            return ADM_ENOMEM;
        }
    }
    ts->read_at_ms = now_ms;
    ts->fresh = ts->token != NULL;
    return 0;
}

void adm_token_source_free(adm_token_source_t *ts)
{
    free(ts->path);
    drop(ts->token);
    memset(ts, 0, sizeof(*ts));
}

const char *adm_token_source_get(adm_token_source_t *ts, uint64_t now_ms)
{
    char *tok;

    if (ts->path == NULL) {
        return ts->token;
    }
    /* cachingTokenSource: refresh when now + leeway passes the expiry (read time + period) */
    if (ts->fresh && now_ms + ADM_TOKEN_LEEWAY_MS < ts->read_at_ms + ADM_TOKEN_PERIOD_MS) {
        return ts->token;
    }
    tok = read_token_file(ts->path);
    if (tok == NULL) {
        /* client-go keeps serving the cached token when a refresh fails */
        return ts->token;
    }
    drop(ts->token);
    ts->token = tok;
    ts->read_at_ms = now_ms;
    ts->fresh = true;
    ts->reads++;
    return ts->token;
}

void adm_token_source_unauthorized(adm_token_source_t *ts, uint64_t started_ms)
{
    if (ts->path != NULL && ts->read_at_ms < started_ms) {
        ts->fresh = false;
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The per-request decision trace (trace.h): recording steps, and rendering them as one JSON object. */
#include "adm/admission/trace.h"

#include "adm/base/jsonw.h"

#include <stdio.h>
#include <string.h>

/* Room kept for what follows the steps, so a cut trace still closes as valid JSON. */
#define TAIL_RESERVE 64

adm_trace_t *adm_trace_start(adm_arena_t *a)
{
    adm_trace_t *t = adm_arena_calloc(a, 1, sizeof(*t));

    if (t != NULL) {
        t->arena = a;
    }
    return t;
}

void adm_trace_add(adm_trace_t *t, const adm_trace_step_t *step)
{
    if (t == NULL) {
        return;
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap == 0 ? 16 : t->cap * 2;
        adm_trace_step_t *g =
            adm_arena_realloc(t->arena, t->steps, t->cap * sizeof(*t->steps), ncap * sizeof(*t->steps));

        if (g == NULL) {
            t->lost = true;
            return;
        }
        t->steps = g;
        t->cap = ncap;
    }
    t->steps[t->n++] = *step;
}

void adm_trace_decided_by(adm_trace_t *t, const char *name)
{
    if (t != NULL && t->decided_by == NULL) {
        t->decided_by = name;
    }
}

/* Texts longer than this are cut (a cut inside a UTF-8 sequence is written as U+FFFD). */
#define TEXT_MAX 512

static void key_string(adm_jsonw_t *w, const char *key, const char *value)
{
    size_t n = value != NULL ? strlen(value) : 0;

    adm_jsonw_raw(w, key, strlen(key));
    adm_jsonw_string(w, value != NULL ? value : "", n < TEXT_MAX ? n : TEXT_MAX);
}

/* key then an integer */
static void integer(adm_jsonw_t *w, const char *key, long long value)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "%lld", value);

    adm_jsonw_raw(w, key, strlen(key));
    adm_jsonw_raw(w, text, n > 0 ? (size_t)n : 0);
}

/*
 * key then a duration in seconds with nanosecond digits, the text "%.9f" prints for ns / 1e9 (exact
 * for any duration under 2^53 ns). Written out by hand: snprintf's floating-point path cost ~1,100
 * instructions a call, a sixth of a proxied request's CPU with the default plugins' steps
 * (bench/RESULTS.md, callgrind).
 */
static void seconds(adm_jsonw_t *w, const char *key, uint64_t ns)
{
    char text[32];
    char *p = text + sizeof(text);
    uint64_t whole = ns / 1000000000u;
    uint64_t frac = ns % 1000000000u;

    for (int i = 0; i < 9; i++) {
        *--p = (char)('0' + frac % 10);
        frac /= 10;
    }
    *--p = '.';
    do {
        *--p = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole != 0);
    adm_jsonw_raw(w, key, strlen(key));
    adm_jsonw_raw(w, p, (size_t)(text + sizeof(text) - p));
}

static void render_step(adm_jsonw_t *w, const adm_trace_step_t *s, bool first)
{
    adm_jsonw_raw(w, first ? "{" : ",{", first ? 1 : 2);
    key_string(w, "\"name\":", s->name);
    ADM_JSONW_LIT(w, ",\"kind\":");
    adm_jsonw_raw(w, s->webhook ? "\"webhook\"" : "\"plugin\"", s->webhook ? 9 : 8);
    ADM_JSONW_LIT(w, ",\"phase\":");
    adm_jsonw_raw(w, s->validate ? "\"validate\"" : "\"admit\"", s->validate ? 10 : 7);
    integer(w, ",\"round\":", s->round);
    key_string(w, ",\"outcome\":", s->outcome);
    if (s->code != 0) {
        integer(w, ",\"code\":", s->code);
    }
    if (s->reason != NULL) {
        key_string(w, ",\"reason\":", s->reason);
    }
    if (s->circuit != NULL) {
        key_string(w, ",\"circuit\":", s->circuit);
    }
    if (s->shadow) {
        ADM_JSONW_LIT(w, ",\"shadow\":true");
    }
    if (s->patch != NULL) {
        key_string(w, ",\"patch\":", s->patch); /* as text, cut at TEXT_MAX like any text */
    }
    seconds(w, ",\"latencySeconds\":", s->latency_ns);
    ADM_JSONW_LIT(w, "}");
}

const char *adm_trace_render(const adm_trace_t *t, const adm_review_request_t *req, const char *endpoint,
                             const adm_review_response_t *resp, uint64_t total_ns, size_t *len)
{
    adm_jsonw_t w;
    bool truncated = t->lost;

    adm_jsonw_init(&w, t->arena);
    key_string(&w, "{\"uid\":", req->uid);
    key_string(&w, ",\"endpoint\":", endpoint);
    key_string(&w, ",\"operation\":", req->operation_name);
    key_string(&w, ",\"kind\":", req->kind.kind);
    key_string(&w, ",\"resource\":", req->resource.resource);
    key_string(&w, ",\"subResource\":", req->sub_resource);
    key_string(&w, ",\"namespace\":", req->namespace_);
    key_string(&w, ",\"name\":", req->name);
    adm_jsonw_raw(&w, resp->allowed ? ",\"allowed\":true" : ",\"allowed\":false", resp->allowed ? 15 : 16);
    if (!resp->allowed) {
        integer(&w, ",\"code\":", resp->code);
        key_string(&w, ",\"message\":", resp->message);
    }
    if (t->decided_by != NULL) {
        key_string(&w, ",\"decidedBy\":", t->decided_by);
    }
    adm_jsonw_raw(&w, resp->patch != NULL ? ",\"patched\":true" : ",\"patched\":false",
                  resp->patch != NULL ? 15 : 16);
    seconds(&w, ",\"latencySeconds\":", total_ns);
    /* a head that alone is too long (a huge message) keeps its start; the steps matter more */
    if (w.len > ADM_TRACE_MAX_BYTES / 2) {
        w.len = 0;
        key_string(&w, "{\"uid\":", req->uid);
        key_string(&w, ",\"endpoint\":", endpoint);
        adm_jsonw_raw(&w, resp->allowed ? ",\"allowed\":true" : ",\"allowed\":false",
                      resp->allowed ? 15 : 16);
        integer(&w, ",\"code\":", resp->allowed ? 200 : resp->code);
        if (t->decided_by != NULL && strlen(t->decided_by) < 512) {
            key_string(&w, ",\"decidedBy\":", t->decided_by);
        }
        truncated = true;
    }
    ADM_JSONW_LIT(&w, ",\"steps\":[");
    for (size_t i = 0; i < t->n; i++) {
        size_t before = w.len;

        render_step(&w, &t->steps[i], i == 0);
        if (w.len > ADM_TRACE_MAX_BYTES - TAIL_RESERVE) {
            w.len = before;
            truncated = true;
            break;
        }
    }
    ADM_JSONW_LIT(&w, "]");
    if (truncated) {
        ADM_JSONW_LIT(&w, ",\"truncated\":true");
    }
    ADM_JSONW_LIT(&w, "}");
    if (w.failed) {
        return NULL;
    }
    *len = w.len;
    return w.data;
}

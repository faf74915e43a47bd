/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What admitd-mockhook does with a request: the behaviours of INTERFACE.md (allow, deny[:MSG],
 * patch:JSONPATCH, error:CODE, invalid-json, wrong-uid, hang, close, reset, a weighted mix) plus
 * warn:TEXT and annotate:KEY=VALUE, which answer allowed with a warning or an audit annotation, and
 * raw:BYTES, which writes BYTES as they are (\r, \n and \\ escapes) and closes: a malformed answer,
 * or a hand-made one such as a 429 with Retry-After.
 */
#ifndef ADM_MOCKHOOK_BEHAVIOR_H
#define ADM_MOCKHOOK_BEHAVIOR_H

#include "adm/base/arena.h"
#include "adm/net/http.h"

#include <stddef.h>
#include <stdint.h>

typedef enum mock_kind_e {
    MOCK_ALLOW,
    MOCK_DENY,
    MOCK_PATCH,
    MOCK_ERROR,
    MOCK_INVALID_JSON,
    MOCK_WRONG_UID,
    MOCK_HANG,
    MOCK_CLOSE,
    MOCK_RESET,
    MOCK_WARN,
    MOCK_ANNOTATE,
    MOCK_RAW,
    MOCK_MIX,
} mock_kind_t;

#define MOCK_MIX_MAX 16

typedef struct mock_behavior_s mock_behavior_t;

struct mock_behavior_s {
    mock_kind_t kind;
    const char *text;  /* deny message (NULL: none), patch JSON, warning, annotation key */
    const char *value; /* annotation value */
    int code;          /* error:CODE */
    size_t text_len;   /* raw: the bytes at text */
    /* mix: choices with cumulative weights */
    mock_behavior_t *choices;
    unsigned *cumulative;
    size_t nchoices;
    unsigned total_weight;
};

/**
 * Parses a behaviour ("deny:not today", "mix:allow=90,hang=5,reset=5"); memory from a. Returns 0,
 * or -1 with a one-line reason in err.
 */
int mock_behavior_parse(adm_arena_t *a, const char *spec, mock_behavior_t *out, char *err, size_t err_len);

/** Picks the behaviour to play for one request (a mix draws with rnd in [0, 2^32)). */
const mock_behavior_t *mock_behavior_pick(const mock_behavior_t *b, uint32_t rnd);

/**
 * Builds the HTTP answer of an answering behaviour (not hang, close or reset) to the request body;
 * memory from a. A body that is not an AdmissionReview with a request uid gets a 400.
 */
void mock_behavior_answer(const mock_behavior_t *b, adm_arena_t *a, const uint8_t *body, size_t body_len,
                          adm_http_response_t *resp);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API server's list and watch answers as the informer reads them (../shared/spec/list-watch.md):
 * a watch stream cut into its JSON events, each event checked and decoded, and a LIST page decoded
 * into its items, resourceVersion and continue token.
 *
 * Framing follows client-go's JSON framer (a json.Decoder over the stream): one JSON object after
 * another, whatever whitespace separates them, so events split across reads or several in one read
 * both work. kube-apiserver ends each with a newline; nothing here relies on that. An event larger
 * than the framer's limit, or bytes that are not a JSON object, are an error: the caller ends the
 * watch and starts another, as the reflector does on a decode error.
 */
#ifndef ADM_WATCH_DECODE_H
#define ADM_WATCH_DECODE_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

/* client-go accepts any size; admitd bounds one event (an object is at most ~1.5 MiB in etcd). */
#define ADM_WATCH_MAX_EVENT_BYTES (16u << 20)

typedef struct adm_watch_framer_s {
    char *buf; /* bytes of the event being gathered (malloc'd, reused) */
    size_t len, cap;
    size_t max;   /* ADM_WATCH_MAX_EVENT_BYTES unless a test lowers it */
    size_t depth; /* nesting of the current object */
    bool in_string, escape;
    bool started; /* the current object's '{' was seen */
} adm_watch_framer_t;

typedef enum adm_frame_result_e {
    ADM_FRAME_NEED_MORE, /* every byte used; no complete event */
    ADM_FRAME_EVENT,     /* *event and *event_len hold one event (valid until the next call) */
    ADM_FRAME_ERROR,     /* not a stream of JSON objects, or an event over the limit */
} adm_frame_result_t;

void adm_watch_framer_init(adm_watch_framer_t *f);
void adm_watch_framer_free(adm_watch_framer_t *f);

/**
 * Takes bytes from data (len) until an event is complete; *used says how many were taken (call
 * again with the rest). Depth is counted without a stack, so nesting costs nothing here (the JSON
 * reader bounds it when the event is decoded).
 */
adm_frame_result_t adm_watch_framer_feed(adm_watch_framer_t *f, const char *data, size_t len, size_t *used,
                                         const char **event, size_t *event_len);

typedef enum adm_watch_type_e {
    ADM_WATCH_ADDED,
    ADM_WATCH_MODIFIED,
    ADM_WATCH_DELETED,
    ADM_WATCH_BOOKMARK,
    ADM_WATCH_ERROR,
} adm_watch_type_t;

typedef struct adm_watch_event_s {
    adm_watch_type_t type;
    yyjson_val *object;           /* the event's object (in the caller's arena) */
    const char *namespace_;       /* "" for cluster-scoped objects */
    const char *name;             /* NULL for BOOKMARK and ERROR */
    const char *resource_version; /* metadata.resourceVersion (required but for ERROR) */
    /* ERROR: the Status */
    int code;
    const char *reason;  /* "" when absent */
    const char *message; /* "" when absent */
} adm_watch_event_t;

/**
 * Decodes one framed event into a. Returns 0, or ADM_EPARSE with one line in err (bad JSON, an
 * unknown type: client-go's "got invalid watch event type: X", an object without name or
 * resourceVersion), or ADM_ENOMEM.
 */
int adm_watch_event_decode(adm_arena_t *a, const char *text, size_t len, adm_watch_event_t *ev, char *err,
                           size_t err_len);

/** True for an ERROR event (or Status) that means "your resourceVersion is gone": relist. */
bool adm_watch_event_expired(const adm_watch_event_t *ev);

typedef struct adm_list_page_s {
    yyjson_val *items;            /* an array (possibly empty) */
    const char *resource_version; /* metadata.resourceVersion of the list */
    const char *continue_token;   /* "" on the last page */
    /* metadata.remainingItemCount: how many items the pages after this one hold, -1 when the
       server did not say (kube leaves it out with selectors, and on the last page) */
    int64_t remaining_items;
} adm_list_page_t;

/**
 * Decodes a LIST answer (a <Kind>List) into a. Items must be objects with metadata.name. Returns 0
 * or ADM_EPARSE / ADM_ENOMEM with one line in err.
 */
int adm_list_page_decode(adm_arena_t *a, const char *text, size_t len, adm_list_page_t *page, char *err,
                         size_t err_len);

/**
 * Reads a Status answer (an HTTP error body) for its reason, message and retryAfterSeconds; fields
 * absent are "" and 0. Returns 0, or ADM_EPARSE when body is not a Status.
 */
int adm_status_decode(adm_arena_t *a, const char *text, size_t len, const char **reason, const char **message,
                      uint64_t *retry_after_s);

#endif

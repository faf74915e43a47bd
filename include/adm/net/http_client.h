/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client side of HTTP/1.1 for admitd's outgoing calls (downstream webhooks, admitd-bench):
 * writing a request, and parsing responses with llhttp, one at a time even when several arrive in
 * one read (keep-alive, pipelining). Bodies are gathered into a buffer the parser owns and reuses,
 * bounded by a limit (a webhook answer past it is a call failure).
 */
#ifndef ADM_HTTP_CLIENT_H
#define ADM_HTTP_CLIENT_H

#include "adm/base/buf.h"

#include <llhttp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum adm_http_resp_event_e {
    ADM_HTTP_RESP_NEED_MORE, /* all input used; the response is not complete */
    ADM_HTTP_RESP_DONE,      /* a whole response is ready; more input may follow it */
    ADM_HTTP_RESP_ERROR,     /* malformed, or the body is over the limit: close the connection */
} adm_http_resp_event_t;

/*
 * Takes a piece of a streamed body as it arrives (adm_http_resp_stream). Returns 0 to go on, or
 * nonzero to stop: the parse then ends in ADM_HTTP_RESP_ERROR ("stopped by the reader").
 */
typedef int (*adm_http_chunk_fn)(void *arg, const uint8_t *data, size_t len);

typedef struct adm_http_resp_parser_s {
    llhttp_t llhttp;
    size_t max_body_bytes;
    /* the response, valid after ADM_HTTP_RESP_DONE until adm_http_resp_next() */
    int status;
    bool keep_alive; /* the connection may carry the next request */
    adm_buf_t body;
    char content_type[128]; /* the Content-Type header ("" when absent; cut at 127 bytes) */
    char retry_after[32];   /* the Retry-After header ("" when absent; cut at 31 bytes) */
    const char *error;      /* after ADM_HTTP_RESP_ERROR: what was wrong (static text) */
    bool headers_done;      /* status and content_type are known (the body may still be coming) */
    /* the answer's first line as received, without its line end (cut at 511 bytes): Go words a
       malformed answer by it (adm_http_resp_go_error) */
    char first_line[512];
    size_t first_line_len;
    /* private */
    adm_http_chunk_fn on_chunk; /* adm_http_resp_stream: where a 2xx body goes, or NULL */
    void *chunk_arg;
    bool streaming;  /* this response's body goes to on_chunk */
    bool stopped;    /* on_chunk asked to stop */
    bool bad_status; /* a status below 100 */
    bool first_line_done;
    bool line_error;   /* llhttp failed within the first line: the rest of it is awaited */
    int pending_errno; /* llhttp's error then */
    bool done;
    bool too_big;
    bool in_content_type; /* the header value being read is Content-Type's */
    bool in_retry_after;  /* ... or Retry-After's */
    char field[16];       /* the header name being read, as far as it fits */
    size_t field_len;
} adm_http_resp_parser_t;

/** Prepares p for the first response; bodies larger than max_body_bytes are an error. */
void adm_http_resp_parser_init(adm_http_resp_parser_t *p, size_t max_body_bytes);

/**
 * Streams from now on: the body of a 2xx response goes to fn(arg, ...) piece by piece as it is
 * parsed, with no limit and nothing kept (a watch's body never ends); headers_done and status are
 * set before the first piece. Other answers (a 410 or 429 Status) are still gathered whole into
 * body, under the limit. fn NULL gathers every body again.
 */
void adm_http_resp_stream(adm_http_resp_parser_t *p, adm_http_chunk_fn fn, void *arg);

/** Frees the body buffer. */
void adm_http_resp_parser_free(adm_http_resp_parser_t *p);

/**
 * Feeds len bytes; *used is set to how many were taken. After ADM_HTTP_RESP_DONE the bytes past
 * *used belong to the next response: call adm_http_resp_next() and feed them again. 1xx interim
 * responses (100 Continue) are skipped.
 */
adm_http_resp_event_t adm_http_resp_parse(adm_http_resp_parser_t *p, const uint8_t *data, size_t len,
                                          size_t *used);

/**
 * The peer closed: completes a response whose body runs to the end of the connection. Returns
 * ADM_HTTP_RESP_DONE, or ADM_HTTP_RESP_ERROR when the response was cut short (or none began).
 */
adm_http_resp_event_t adm_http_resp_eof(adm_http_resp_parser_t *p);

/**
 * After ADM_HTTP_RESP_ERROR: writes into out what Go's transport says of that answer's first line
 * ("malformed HTTP response \"bad-http\"", or the status code or version forms) and returns true;
 * false when Go would have read the first line (the fault lies later: headers, body, limit).
 */
bool adm_http_resp_go_error(const adm_http_resp_parser_t *p, char *out, size_t cap);

/** Readies the parser for the next response on the same connection (keeps the body's buffer). */
void adm_http_resp_next(adm_http_resp_parser_t *p);

/**
 * Appends "POST path HTTP/1.1" with Host, Content-Type application/json, Content-Length, Accept
 * and any extra header lines (each "Name: value\r\n", or NULL), then the body.
 * Returns 0 or ADM_ENOMEM.
 */
int adm_http_write_post(adm_buf_t *out, const char *host, const char *path, const char *extra_headers,
                        const void *body, size_t body_len);

/** As adm_http_write_post, with method ("PUT") in place of POST. */
int adm_http_write_with_body(adm_buf_t *out, const char *method, const char *host, const char *path,
                             const char *extra_headers, const void *body, size_t body_len);

/**
 * Appends "GET path HTTP/1.1" with Host, Accept application/json and any extra header lines (each
 * "Name: value\r\n", or NULL). Returns 0 or ADM_ENOMEM.
 */
int adm_http_write_get(adm_buf_t *out, const char *host, const char *path, const char *extra_headers);

#endif

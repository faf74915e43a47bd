/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Server side of HTTP/1.1 over llhttp: a parser that turns a connection's input buffer into
 * requests (keep-alive, pipelining, chunked bodies, Expect: 100-continue, size limits), and the
 * writer of responses.
 *
 * The parser works on offsets into a buffer the connection owns and may grow or compact between
 * calls, so nothing points into it across calls except through adm_http_parser_shift(). A body
 * sent with Content-Length is handed back where it lies in that buffer (no copy); a chunked body is
 * assembled in the request's arena.
 */
#ifndef ADM_HTTP_H
#define ADM_HTTP_H

#include "adm/base/arena.h"
#include "adm/base/buf.h"

#include <llhttp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADM_HTTP_MAX_HEADER_BYTES (64 * 1024)

typedef struct adm_http_request_s {
    uint8_t method;           /* llhttp_method_t */
    const char *path;         /* request target up to '?', NUL-terminated (arena) */
    const char *query;        /* after '?', "" when none (arena) */
    const char *content_type; /* NULL when absent (arena) */
    bool expect_continue;     /* Expect: 100-continue */
    bool keep_alive;          /* per HTTP version and Connection header */
    bool chunked;             /* Transfer-Encoding: chunked */
    bool has_content_length;
    uint64_t content_length;
    const uint8_t *body; /* valid after ADM_HTTP_MESSAGE until the buffer changes */
    size_t body_len;

    const char *authorization; /* the Authorization header's value, NULL when absent (arena) */
} adm_http_request_t;

typedef enum adm_http_event_e {
    ADM_HTTP_NEED_MORE, /* all input consumed; the message is not complete */
    ADM_HTTP_HEADERS,   /* the request head is complete (body may follow) */
    ADM_HTTP_MESSAGE,   /* the whole request is complete */
    ADM_HTTP_ERROR,     /* malformed or over a limit: answer error_status and close */
} adm_http_event_t;

typedef struct adm_http_parser_s {
    llhttp_t llhttp;
    adm_http_request_t req;
    adm_arena_t *arena; /* the current request's arena */
    size_t max_body_bytes;
    /* error details, valid after ADM_HTTP_ERROR */
    int error_status; /* 400, 413 or 431 */
    const char *error_message;
    /* private */
    const uint8_t *_base; /* buffer of the running parse call */
    size_t _msg_start;    /* offset of the current message in the buffer */
    size_t _body_rel;     /* body offset relative to _msg_start (Content-Length bodies) */
    size_t _header_bytes;
    size_t _target_len, _ctype_len, _auth_len;
    char *_target;          /* request target being assembled (arena) */
    char *_ctype;           /* Content-Type being assembled (arena) */
    char *_auth;            /* Authorization being assembled (arena) */
    uint8_t *_chunked_body; /* chunked body being assembled (arena) */
    size_t _chunked_cap;
    char _field[32]; /* header name being assembled (only short names matter) */
    size_t _field_len;
    int _current_header; /* which interesting header the value belongs to */
    bool _in_message;
    bool _headers_done;
    bool _value_started;
    adm_http_event_t _pending; /* event raised by a callback */
} adm_http_parser_t;

/** Prepares a parser; max_body_bytes is --max-request-bytes. */
void adm_http_parser_init(adm_http_parser_t *hp, size_t max_body_bytes);

/**
 * Parses buf[*off, len) and stops at the first event. *off advances past what was consumed.
 * The arena receives the request's strings; it must stay the same from the first byte of a
 * request to its ADM_HTTP_MESSAGE. After ADM_HTTP_MESSAGE call adm_http_parser_next() before
 * parsing the following request.
 */
adm_http_event_t adm_http_parse(adm_http_parser_t *hp, adm_arena_t *arena, const uint8_t *buf, size_t len,
                                size_t *off);

/** Starts the next request on the same connection (after ADM_HTTP_MESSAGE). */
void adm_http_parser_next(adm_http_parser_t *hp);

/** True between a request's first byte and its ADM_HTTP_MESSAGE. */
bool adm_http_parser_in_message(const adm_http_parser_t *hp);

/**
 * The connection dropped the first n bytes of its buffer; returns how many of them the parser
 * still needs (a message in progress keeps its own bytes), i.e. the safe amount to drop is
 * adm_http_parser_keep_from(hp, n).
 */
size_t adm_http_parser_keep_from(const adm_http_parser_t *hp, size_t consumed);

/** Tells the parser the buffer's first n bytes were dropped (n <= adm_http_parser_keep_from). */
void adm_http_parser_shift(adm_http_parser_t *hp, size_t n);

typedef struct adm_http_response_s {
    int status;
    const char *content_type; /* NULL for none */
    const void *body;
    size_t body_len;
    const char *allow; /* Allow header for 405, or NULL */
    bool close;        /* send Connection: close */
    bool omit_body;    /* HEAD: headers (with the body's length) only */
} adm_http_response_t;

/** Appends the status line, headers and body. Returns 0 or ADM_ENOMEM. */
int adm_http_write_response(adm_buf_t *out, const adm_http_response_t *r);

/** Appends "HTTP/1.1 100 Continue". */
int adm_http_write_continue(adm_buf_t *out);

/** Standard reason phrase for a status code ("OK", "Not Found"...). */
const char *adm_http_reason(int status);

#endif

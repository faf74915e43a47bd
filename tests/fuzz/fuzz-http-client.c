/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the response parser: arbitrary bytes fed in pieces whose sizes come from the
 * input, responses taken one after another as a keep-alive connection would, then EOF. Every
 * completed response must have a final status and a body within the limit; nothing may loop. The
 * first byte's high bits also stream 2xx bodies to a reader (a watch), which may stop midway: only a
 * 2xx body may reach it, after the status is known, and a streamed response keeps no body. A failed
 * one is worded as Go would (adm_http_resp_go_error): the text must fit its buffer, quoted.
 */
#include "adm/net/http_client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Go's words for a failed answer, when it has some, must be one quoted text within the buffer. */
static void check_go_error(const adm_http_resp_parser_t *p)
{
    char text[200];
    size_t n;

    if (!adm_http_resp_go_error(p, text, sizeof(text))) {
        return;
    }
    n = strlen(text);
    if (n >= sizeof(text) || text[n - 1] != '"' || strncmp(text, "malformed HTTP ", 15) != 0) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader_s {
    const adm_http_resp_parser_t *p;
    size_t bytes;
    bool stop; /* after 100 bytes */
} reader_t;

static int read_piece(void *arg, const uint8_t *piece, size_t len)
{
    reader_t *r = arg;

    (void)piece;
    if (!r->p->headers_done || r->p->status < 200 || r->p->status > 299 || len == 0) {
        abort();
    }
    r->bytes += len;
    return r->stop && r->bytes > 100;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_http_resp_parser_t p;
    size_t off = 1;
    size_t step = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
    int responses = 0;
    reader_t r = {.p = &p, .stop = size > 0 && (data[0] & 0x80) != 0};

    adm_http_resp_parser_init(&p, 4096);
    if (size > 0 && (data[0] & 0x40) != 0) {
        adm_http_resp_stream(&p, read_piece, &r);
    }
    while (off < size) {
        size_t n = size - off < step ? size - off : step;
        size_t used = 0;
        adm_http_resp_event_t ev = adm_http_resp_parse(&p, data + off, n, &used);

        if (used > n) {
            abort();
        }
        off += used;
        if (ev == ADM_HTTP_RESP_ERROR) {
            if (p.error == NULL) {
                abort();
            }
            check_go_error(&p);
            break;
        }
        if (ev == ADM_HTTP_RESP_DONE) {
            if (p.status < 200 || p.status > 999 || p.body.len > 4096 || ++responses > (int)size) {
                abort();
            }
            adm_http_resp_next(&p);
        }
    }
    if (off >= size) {
        adm_http_resp_event_t ev = adm_http_resp_eof(&p);

        if (ev == ADM_HTTP_RESP_ERROR && p.error == NULL) {
            abort();
        }
        if (ev == ADM_HTTP_RESP_ERROR) {
            check_go_error(&p);
        }
    }
    adm_http_resp_parser_free(&p);
    return 0;
}

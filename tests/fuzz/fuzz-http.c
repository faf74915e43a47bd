/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the HTTP request parser as the connection drives it: the input is cut into
 * pieces (sizes taken from the input's first bytes), each piece is appended, every event handled,
 * and the buffer compacted after each piece. Checks that a completed body always lies inside the
 * buffer and that the parser never consumes more than it was given.
 */
#include "adm/base/arena.h"
#include "adm/base/buf.h"
#include "adm/net/http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_http_parser_t hp;
    adm_arena_t *arena = adm_arena_create(4096);
    adm_buf_t in = ADM_BUF_INIT;
    size_t off = 0;
    size_t step = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
    bool failed = false;

    adm_http_parser_init(&hp, 1 << 16);
    for (size_t pos = size > 0 ? 1 : 0; pos < size && !failed; pos += step) {
        size_t n = size - pos < step ? size - pos : step;
        size_t drop;

        adm_buf_append(&in, data + pos, n);
        for (;;) {
            adm_http_event_t ev = adm_http_parse(&hp, arena, in.data, in.len, &off);

            if (off > in.len) {
                abort();
            }
            if (ev == ADM_HTTP_NEED_MORE) {
                break;
            }
            if (ev == ADM_HTTP_ERROR) {
                failed = true;
                break;
            }
            if (ev == ADM_HTTP_MESSAGE) {
                const adm_http_request_t *r = &hp.req;

                if (r->body_len > 0 && !r->chunked &&
                    (r->body < in.data || r->body + r->body_len > in.data + in.len)) {
                    abort();
                }
                if (r->path == NULL || r->query == NULL) {
                    abort();
                }
                adm_http_parser_next(&hp);
                adm_arena_reset(arena);
            }
        }
        drop = adm_http_parser_keep_from(&hp, off);
        adm_buf_consume(&in, drop);
        off -= drop;
        adm_http_parser_shift(&hp, drop);
    }
    adm_buf_free(&in);
    adm_arena_destroy(arena);
    return 0;
}

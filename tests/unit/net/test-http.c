/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP/1.1 request parser: events, pipelining, chunked bodies, limits, buffer compaction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/buf.h"
#include "adm/net/http.h"

typedef struct fixture_s {
    adm_http_parser_t hp;
    adm_arena_t *arena;
    adm_buf_t in;
    size_t off;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    adm_http_parser_init(&f->hp, 1 << 20);
    f->arena = adm_arena_create(4096);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    adm_arena_destroy(f->arena);
    adm_buf_free(&f->in);
    free(f);
    return 0;
}

static void feed(fixture_t *f, const char *s)
{
    assert_int_equal(adm_buf_append(&f->in, s, strlen(s)), 0);
}

static adm_http_event_t next_event(fixture_t *f)
{
    return adm_http_parse(&f->hp, f->arena, f->in.data, f->in.len, &f->off);
}

/* Runs to the end of one message, skipping the HEADERS event. */
static void expect_message(fixture_t *f)
{
    assert_int_equal(next_event(f), ADM_HTTP_HEADERS);
    assert_int_equal(next_event(f), ADM_HTTP_MESSAGE);
}

static void test_post_with_body(void **state)
{
    fixture_t *f = *state;
    adm_http_request_t *r = &f->hp.req;

    feed(f, "POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 7\r\n\r\n{\"a\":1}");
    assert_int_equal(next_event(f), ADM_HTTP_HEADERS);
    assert_int_equal(r->method, HTTP_POST);
    assert_string_equal(r->path, "/validate");
    assert_string_equal(r->query, "timeout=10s");
    assert_string_equal(r->content_type, "application/json");
    assert_true(r->keep_alive);
    assert_true(r->has_content_length);
    assert_int_equal(r->content_length, 7);
    assert_int_equal(next_event(f), ADM_HTTP_MESSAGE);
    assert_int_equal(r->body_len, 7);
    assert_memory_equal(r->body, "{\"a\":1}", 7);
    /* The body was not copied: it points into the input buffer. */
    assert_ptr_equal(r->body, f->in.data + f->in.len - 7);
    assert_int_equal(f->off, f->in.len);
}

static void test_pipelined_in_order(void **state)
{
    fixture_t *f = *state;
    const char *paths[] = {"/a", "/bb", "/ccc"};

    feed(f, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
            "POST /bb HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"
            "GET /ccc HTTP/1.1\r\nConnection: close\r\n\r\n");
    for (int i = 0; i < 3; i++) {
        expect_message(f);
        assert_string_equal(f->hp.req.path, paths[i]);
        if (i == 1) {
            assert_memory_equal(f->hp.req.body, "hi", 2);
        }
        if (i == 2) {
            assert_false(f->hp.req.keep_alive);
        }
        adm_http_parser_next(&f->hp);
        adm_arena_reset(f->arena);
    }
    assert_int_equal(next_event(f), ADM_HTTP_NEED_MORE);
}

static void test_byte_at_a_time_with_compaction(void **state)
{
    fixture_t *f = *state;
    const char *req = "POST /admit HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n"
                      "Content-Length: 11\r\n\r\nhello world";
    adm_http_event_t ev = ADM_HTTP_NEED_MORE;
    int messages = 0;

    /* Two requests, one byte per call, compacting the buffer after every call as the
       connection does: the body must still come out whole and in place. */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; req[i] != '\0'; i++) {
            size_t drop;

            assert_int_equal(adm_buf_append(&f->in, &req[i], 1), 0);
            do {
                ev = next_event(f);
                if (ev == ADM_HTTP_MESSAGE) {
                    assert_int_equal(f->hp.req.body_len, 11);
                    assert_memory_equal(f->hp.req.body, "hello world", 11);
                    assert_string_equal(f->hp.req.content_type, "application/json; charset=utf-8");
                    messages++;
                    adm_http_parser_next(&f->hp);
                    adm_arena_reset(f->arena);
                }
            } while (ev != ADM_HTTP_NEED_MORE);
            drop = adm_http_parser_keep_from(&f->hp, f->off);
            adm_buf_consume(&f->in, drop);
            f->off -= drop;
            adm_http_parser_shift(&f->hp, drop);
        }
    }
    assert_int_equal(messages, 2);
}

static void test_chunked(void **state)
{
    fixture_t *f = *state;

    feed(f, "POST /mutate HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n");
    assert_int_equal(next_event(f), ADM_HTTP_HEADERS);
    assert_true(f->hp.req.chunked);
    assert_true(f->hp.req.expect_continue);
    feed(f, "5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\n\r\n");
    assert_int_equal(next_event(f), ADM_HTTP_MESSAGE);
    assert_int_equal(f->hp.req.body_len, 12);
    assert_memory_equal(f->hp.req.body, "hello world!", 12);
}

static void test_limits(void **state)
{
    fixture_t *f = *state;
    adm_buf_t big = ADM_BUF_INIT;

    adm_http_parser_init(&f->hp, 100);
    feed(f, "POST /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n");
    assert_int_equal(next_event(f), ADM_HTTP_ERROR);
    assert_int_equal(f->hp.error_status, 413);

    adm_http_parser_init(&f->hp, 100);
    f->in.len = 0;
    f->off = 0;
    feed(f, "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_int_equal(next_event(f), ADM_HTTP_HEADERS);
    feed(f, "64\r\n");
    for (int i = 0; i < 100; i++) {
        feed(f, "x");
    }
    feed(f, "\r\n1\r\ny\r\n0\r\n\r\n");
    assert_int_equal(next_event(f), ADM_HTTP_ERROR);
    assert_int_equal(f->hp.error_status, 413);

    adm_http_parser_init(&f->hp, 100);
    f->in.len = 0;
    f->off = 0;
    adm_buf_append_str(&big, "GET / HTTP/1.1\r\nX-Big: ");
    for (int i = 0; i < 70000; i++) {
        adm_buf_append(&big, "a", 1);
    }
    adm_buf_append_str(&big, "\r\n\r\n");
    adm_buf_append(&f->in, big.data, big.len);
    assert_int_equal(next_event(f), ADM_HTTP_ERROR);
    assert_int_equal(f->hp.error_status, 431);
    adm_buf_free(&big);
}

static void test_malformed(void **state)
{
    static const char *const bad[] = {
        "GARBAGE\r\n\r\n",
        "GET / HTTP/9.9\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fixture_t *f = *state;
        adm_http_event_t ev;

        adm_http_parser_init(&f->hp, 1000);
        f->in.len = 0;
        f->off = 0;
        feed(f, bad[i]);
        do {
            ev = next_event(f);
        } while (ev == ADM_HTTP_HEADERS);
        assert_int_equal(ev, ADM_HTTP_ERROR);
        assert_int_equal(f->hp.error_status, 400);
        assert_non_null(f->hp.error_message);
    }
}

static void test_http10_and_head(void **state)
{
    fixture_t *f = *state;

    feed(f, "HEAD /healthz HTTP/1.0\r\n\r\n");
    expect_message(f);
    assert_int_equal(f->hp.req.method, HTTP_HEAD);
    assert_false(f->hp.req.keep_alive);
    assert_null(f->hp.req.content_type);
}

static void test_write_response(void **state)
{
    adm_buf_t out = ADM_BUF_INIT;
    adm_http_response_t r = {.status = 405,
                             .content_type = "text/plain",
                             .body = "no\n",
                             .body_len = 3,
                             .allow = "POST",
                             .close = true};
    const char *want = "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nAllow: POST\r\n"
                       "Connection: close\r\nContent-Length: 3\r\n\r\nno\n";

    assert_int_equal(adm_http_write_response(&out, &r), 0);
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    out.len = 0;
    r.omit_body = true;
    assert_int_equal(adm_http_write_response(&out, &r), 0);
    assert_int_equal(out.len, strlen(want) - 3);
    out.len = 0;
    assert_int_equal(adm_http_write_continue(&out), 0);
    assert_memory_equal(out.data, "HTTP/1.1 100 Continue\r\n\r\n", out.len);
    adm_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_post_with_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipelined_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_byte_at_a_time_with_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http10_and_head, setup, teardown),
        cmocka_unit_test(test_write_response),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client-side HTTP: responses fed whole, byte by byte and back to back, chunked and
 * close-delimited bodies, interim 100 responses, keep-alive rules, the body limit (declared and
 * streamed), malformed input, the POST and GET request texts, and streamed bodies (a watch: pieces
 * to a reader as they come, no limit, a Status answer still gathered whole, the reader stopping).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/net/http_client.h"

#define OK_JSON                                                                                              \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"allowed\":1}"

/* Feeds text in pieces of step bytes; returns the final event and leaves the parser at it. */
static adm_http_resp_event_t feed(adm_http_resp_parser_t *p, const char *text, size_t len, size_t step,
                                  size_t *consumed)
{
    size_t off = 0;

    while (off < len) {
        size_t n = len - off < step ? len - off : step;
        size_t used = 0;
        adm_http_resp_event_t ev = adm_http_resp_parse(p, (const uint8_t *)text + off, n, &used);

        off += used;
        if (ev != ADM_HTTP_RESP_NEED_MORE) {
            *consumed = off;
            return ev;
        }
    }
    *consumed = off;
    return ADM_HTTP_RESP_NEED_MORE;
}

static void test_whole_and_split(void **state)
{
    for (size_t step = 1; step <= sizeof(OK_JSON); step++) {
        adm_http_resp_parser_t p;
        size_t used;

        adm_http_resp_parser_init(&p, 1024);
        assert_int_equal(feed(&p, OK_JSON, strlen(OK_JSON), step, &used), ADM_HTTP_RESP_DONE);
        assert_int_equal(used, strlen(OK_JSON));
        assert_int_equal(p.status, 200);
        assert_true(p.keep_alive);
        assert_int_equal(p.body.len, 13);
        assert_memory_equal(p.body.data, "{\"allowed\":1}", 13);
        adm_http_resp_parser_free(&p);
    }
}

static void test_back_to_back_and_interim(void **state)
{
    const char text[] =
        "HTTP/1.1 100 Continue\r\n\r\n" OK_JSON
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops";
    adm_http_resp_parser_t p;
    size_t used, off = 0;

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(adm_http_resp_parse(&p, (const uint8_t *)text, sizeof(text) - 1, &used),
                     ADM_HTTP_RESP_DONE);
    assert_int_equal(p.status, 200); /* the 100 was skipped */
    off += used;
    adm_http_resp_next(&p);
    assert_int_equal(adm_http_resp_parse(&p, (const uint8_t *)text + off, sizeof(text) - 1 - off, &used),
                     ADM_HTTP_RESP_DONE);
    assert_int_equal(p.status, 500);
    assert_false(p.keep_alive);
    assert_int_equal(p.body.len, 4);
    assert_int_equal(off + used, sizeof(text) - 1);
    adm_http_resp_parser_free(&p);
}

static void test_chunked_and_close_delimited(void **state)
{
    const char chunked[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    const char until_eof[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it";
    const char cut[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
    adm_http_resp_parser_t p;
    size_t used;

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(feed(&p, chunked, sizeof(chunked) - 1, 3, &used), ADM_HTTP_RESP_DONE);
    assert_int_equal(p.body.len, 11);
    assert_memory_equal(p.body.data, "hello world", 11);
    assert_true(p.keep_alive);
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(feed(&p, until_eof, sizeof(until_eof) - 1, 7, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(adm_http_resp_eof(&p), ADM_HTTP_RESP_DONE);
    assert_int_equal(p.body.len, 9);
    assert_false(p.keep_alive);
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(feed(&p, cut, sizeof(cut) - 1, 100, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(adm_http_resp_eof(&p), ADM_HTTP_RESP_ERROR);
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(adm_http_resp_eof(&p), ADM_HTTP_RESP_ERROR); /* closed before anything */
    assert_string_equal(p.error, "connection closed before a response");
    adm_http_resp_parser_free(&p);
}

static void test_limits_and_garbage(void **state)
{
    const char declared[] = "HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n";
    const char streamed[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n";
    adm_http_resp_parser_t p;
    char big[1100];
    size_t used;

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(feed(&p, declared, sizeof(declared) - 1, 1000, &used), ADM_HTTP_RESP_ERROR);
    assert_string_equal(p.error, "response body larger than the limit");
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1000);
    memset(big, 'x', sizeof(big));
    assert_int_equal(feed(&p, streamed, sizeof(streamed) - 1, 1000, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(feed(&p, big, sizeof(big), 1000, &used), ADM_HTTP_RESP_ERROR);
    assert_string_equal(p.error, "response body larger than the limit");
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1000);
    assert_int_equal(feed(&p, "HTTP/1.1 000 OK\r\nContent-Length: 0\r\n\r\n", 38, 100, &used),
                     ADM_HTTP_RESP_ERROR);
    assert_string_equal(p.error, "malformed HTTP status code");
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1000);
    assert_int_equal(feed(&p, "SSH-2.0-OpenSSH\r\n", 17, 100, &used), ADM_HTTP_RESP_ERROR);
    assert_non_null(p.error);
    adm_http_resp_parser_free(&p);
}

static void test_post_text(void **state)
{
    adm_buf_t b = ADM_BUF_INIT;
    const char want[] =
        "POST /validate?timeout=10s HTTP/1.1\r\nHost: hook.example:8443\r\nContent-Type: "
        "application/json\r\nAccept: application/json\r\nContent-Length: 2\r\nAuthorization: Bearer t\r\n"
        "\r\n{}";

    assert_int_equal(adm_http_write_post(&b, "hook.example:8443", "/validate?timeout=10s",
                                         "Authorization: Bearer t\r\n", "{}", 2),
                     0);
    assert_int_equal(b.len, sizeof(want) - 1);
    assert_memory_equal(b.data, want, b.len);
    adm_buf_free(&b);
}

typedef struct reader_s {
    adm_http_resp_parser_t *p;
    char got[4096];
    size_t len;
    size_t calls;
    size_t stop_after; /* bytes; 0: never stop */
} reader_t;

static int read_piece(void *arg, const uint8_t *data, size_t len)
{
    reader_t *r = arg;

    assert_true(r->p->headers_done); /* the status is known before the body */
    assert_int_equal(r->p->status, 200);
    assert_true(r->len + len <= sizeof(r->got));
    memcpy(r->got + r->len, data, len);
    r->len += len;
    r->calls++;
    return r->stop_after != 0 && r->len >= r->stop_after;
}

static void test_streamed_body(void **state)
{
    const char watch[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        "11\r\n{\"type\":\"ADDED\"}\n\r\n"
        "14\r\n{\"type\":\"BOOKMARK\"}\n\r\n";
    const char gone[] = "HTTP/1.1 410 Gone\r\nContent-Length: 15\r\n\r\n{\"code\":410123}";
    const char want[] = "{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n";
    adm_http_resp_parser_t p;
    reader_t r = {0};
    size_t used;

    (void)state;
    /* fed byte by byte, with a limit far below the body: every byte reaches the reader, none kept */
    adm_http_resp_parser_init(&p, 8);
    r.p = &p;
    adm_http_resp_stream(&p, read_piece, &r);
    assert_false(p.headers_done);
    assert_int_equal(feed(&p, watch, sizeof(watch) - 1, 1, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(r.len, sizeof(want) - 1);
    assert_memory_equal(r.got, want, r.len);
    assert_true(r.calls >= 2);
    assert_int_equal(p.body.len, 0);
    assert_string_equal(p.content_type, "application/json");
    adm_http_resp_parser_free(&p);

    /* a Status answer is not streamed: gathered whole, under the limit */
    adm_http_resp_parser_init(&p, 64);
    memset(&r, 0, sizeof(r));
    r.p = &p;
    adm_http_resp_stream(&p, read_piece, &r);
    assert_int_equal(feed(&p, gone, sizeof(gone) - 1, 3, &used), ADM_HTTP_RESP_DONE);
    assert_int_equal(p.status, 410);
    assert_int_equal(r.calls, 0);
    assert_int_equal(p.body.len, 15);
    assert_memory_equal(p.body.data, "{\"code\":410123}", 15);
    adm_http_resp_parser_free(&p);

    /* the reader stops midway: an error that says so */
    adm_http_resp_parser_init(&p, 64);
    memset(&r, 0, sizeof(r));
    r.p = &p;
    r.stop_after = 5;
    adm_http_resp_stream(&p, read_piece, &r);
    assert_int_equal(feed(&p, watch, sizeof(watch) - 1, 1, &used), ADM_HTTP_RESP_ERROR);
    assert_string_equal(p.error, "stopped by the reader");
    assert_int_equal(r.len, 5);
    adm_http_resp_parser_free(&p);
}

static void test_get_text(void **state)
{
    adm_buf_t b = ADM_BUF_INIT;
    const char want[] =
        "GET /api/v1/namespaces?watch=1&allowWatchBookmarks=true HTTP/1.1\r\nHost: 10.0.0.1:6443\r\n"
        "Accept: application/json\r\nAuthorization: Bearer t\r\n\r\n";

    (void)state;
    assert_int_equal(adm_http_write_get(&b, "10.0.0.1:6443",
                                        "/api/v1/namespaces?watch=1&allowWatchBookmarks=true",
                                        "Authorization: Bearer t\r\n"),
                     0);
    assert_int_equal(b.len, sizeof(want) - 1);
    assert_memory_equal(b.data, want, b.len);
    adm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_and_split),
        cmocka_unit_test(test_back_to_back_and_interim),
        cmocka_unit_test(test_chunked_and_close_delimited),
        cmocka_unit_test(test_limits_and_garbage),
        cmocka_unit_test(test_post_text),
        cmocka_unit_test(test_streamed_body),
        cmocka_unit_test(test_get_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

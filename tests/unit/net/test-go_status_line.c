/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's reading of an answer's first line: the three errors in Go's order, lines Go accepts, and
 * strconv.Quote's escapes (quote, backslash, controls, bytes that are not UTF-8, kept UTF-8, a
 * NUL) with truncation that keeps the closing quote. Also the response parser's use of it: a
 * garbage line split over two reads, and one ended by EOF.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adm/net/go_status_line.h"
#include "adm/net/http_client.h"

static const char *line_error(const char *line)
{
    static char out[256];

    if (!adm_go_status_line_error(line, strlen(line), out, sizeof(out))) {
        return NULL;
    }
    return out;
}

static void test_go_errors(void **state)
{
    (void)state;
    assert_string_equal(line_error("bad-http"), "malformed HTTP response \"bad-http\"");
    assert_string_equal(line_error("HTTP/1.1 2000 OK"), "malformed HTTP status code \"2000\"");
    assert_string_equal(line_error("HTTP/1.1 abc OK"), "malformed HTTP status code \"abc\"");
    assert_string_equal(line_error("HTTP/1.1 -01 OK"), "malformed HTTP status code \"-01\"");
    assert_string_equal(line_error("HTTP/1.1  "), "malformed HTTP status code \"\"");
    assert_string_equal(line_error("HTTX/1.1 200 OK"), "malformed HTTP version \"HTTX/1.1\"");
    assert_string_equal(line_error("HTTP/1.10 200 OK"), "malformed HTTP version \"HTTP/1.10\"");
    assert_null(line_error("HTTP/1.1 200 OK"));
    assert_null(line_error("HTTP/1.0 500"));
    assert_null(line_error("HTTP/2.0 200 OK"));
    assert_null(line_error("HTTP/1.1   204 No Content"));
}

static void test_quote(void **state)
{
    char out[64];
    static const char tricky[] = "a\"b\\c\td\x01\xff\xc3\xa9\x00z";

    (void)state;
    adm_go_quote_bytes(out, sizeof(out), tricky, sizeof(tricky) - 1);
    assert_string_equal(out, "\"a\\\"b\\\\c\\td\\x01\\xff\xc3\xa9\\x00z\"");
    adm_go_quote_bytes(out, 8, "abcdefghij", 10);
    assert_string_equal(out, "\"abcde\"");
    adm_go_quote_bytes(out, 8, "ab\x01zzzz", 7);
    assert_string_equal(out, "\"ab\"");
}

static void test_parser_waits_for_the_whole_line(void **state)
{
    adm_http_resp_parser_t p;
    size_t used;
    char out[256];

    (void)state;
    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(adm_http_resp_parse(&p, (const uint8_t *)"bad-", 4, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(adm_http_resp_parse(&p, (const uint8_t *)"http\r\nmore", 10, &used),
                     ADM_HTTP_RESP_ERROR);
    assert_true(adm_http_resp_go_error(&p, out, sizeof(out)));
    assert_string_equal(out, "malformed HTTP response \"bad-http\"");
    adm_http_resp_parser_free(&p);

    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(adm_http_resp_parse(&p, (const uint8_t *)"bad-http", 8, &used), ADM_HTTP_RESP_NEED_MORE);
    assert_int_equal(adm_http_resp_eof(&p), ADM_HTTP_RESP_ERROR);
    assert_true(adm_http_resp_go_error(&p, out, sizeof(out)));
    assert_string_equal(out, "malformed HTTP response \"bad-http\"");
    adm_http_resp_parser_free(&p);

    /* a good first line, a bad header: not a first-line fault */
    adm_http_resp_parser_init(&p, 1024);
    assert_int_equal(
        adm_http_resp_parse(&p, (const uint8_t *)"HTTP/1.1 200 OK\r\nbad header\r\n\r\n", 31, &used),
        ADM_HTTP_RESP_ERROR);
    assert_false(adm_http_resp_go_error(&p, out, sizeof(out)));
    adm_http_resp_parser_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_errors),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_parser_waits_for_the_whole_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

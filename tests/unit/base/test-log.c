/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The logger's JSON lines: stderr is a pipe for the test, and each line must be one JSON object
 * whose msg is the message as given (quotes, backslashes, control characters), with invalid
 * UTF-8 turned into U+FFFD and the longest message kept whole, and text lines must keep their
 * form. Verbosity decides what is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/log.h"

static int saved_stderr = -1;
static int pipe_read = -1;

/* stderr goes to a pipe until the end of the test. */
static int capture(void **state)
{
    int fds[2];

    if (pipe(fds) != 0) {
        return -1;
    }
    saved_stderr = dup(STDERR_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    pipe_read = fds[0];
    return 0;
}

static int restore(void **state)
{
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    close(pipe_read);
    adm_log_configure(ADM_LOG_TEXT, 0);
    return 0;
}

/* One line from the pipe (the logger writes each line with one write). */
static char *read_line(char *buf, size_t cap)
{
    ssize_t n = read(pipe_read, buf, cap - 1);

    assert_true(n > 0);
    buf[n] = '\0';
    assert_int_equal(buf[n - 1], '\n');
    return buf;
}

static yyjson_doc *read_json(char *buf, size_t cap)
{
    yyjson_doc *doc;

    read_line(buf, cap);
    doc = yyjson_read(buf, strlen(buf) - 1, 0);
    assert_non_null(doc);
    return doc;
}

static void test_json_lines(void **state)
{
    static char buf[65536];
    static char big[5000];
    yyjson_doc *doc;
    yyjson_val *root;

    adm_log_configure(ADM_LOG_JSON, 2);
    adm_log_warn("a \"quoted\" \\ path\nnext\tline \x01 %s", "caf\xc3\xa9 \xff");
    doc = read_json(buf, sizeof(buf));
    root = yyjson_doc_get_root(doc);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "level")), "warn");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(root, "v")), 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "msg")),
                        "a \"quoted\" \\ path\nnext\tline \x01 caf\xc3\xa9 \xef\xbf\xbd");
    yyjson_doc_free(doc);

    /* The longest message, all of it needing escapes, stays whole and valid. */
    memset(big, '"', sizeof(big) - 1);
    adm_log_v(2, "%s", big);
    doc = read_json(buf, sizeof(buf));
    root = yyjson_doc_get_root(doc);
    assert_int_equal(yyjson_get_int(yyjson_obj_get(root, "v")), 2);
    assert_int_equal(yyjson_get_len(yyjson_obj_get(root, "msg")), 4095);
    yyjson_doc_free(doc);

    adm_log_v(3, "not written");
    adm_log_info("written");
    doc = read_json(buf, sizeof(buf));
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_doc_get_root(doc), "msg")), "written");
    yyjson_doc_free(doc);
}

static void test_text_lines(void **state)
{
    char buf[8192];

    adm_log_configure(ADM_LOG_TEXT, 0);
    adm_log_error("plain %d", 42);
    read_line(buf, sizeof(buf));
    assert_non_null(strstr(buf, "Z error plain 42\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_lines, capture, restore),
        cmocka_unit_test_setup_teardown(test_text_lines, capture, restore),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

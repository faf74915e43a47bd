/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bearer token source against client-go's rule: cached for 50 s (one minute less the ten-second
 * leeway), re-read after that, kept when a re-read fails or finds an empty file, re-read after a
 * 401 for a token older than the failed call, and fixed without a file. Time is passed by hand.
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

#include "adm/cluster/token_source.h"

static char path[] = "/tmp/adm-token-XXXXXX";

static void write_token(const char *text)
{
    char tmp[64];
    FILE *f;

    /* as kubelet does: a new file renamed over the old one */
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0);
}

static void test_rotation(void **state)
{
    adm_token_source_t ts;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    write_token("one\n");
    assert_int_equal(adm_token_source_init(&ts, "one", path, 1000), 0);
    write_token("two\n");
    assert_string_equal(adm_token_source_get(&ts, 1000), "one");
    assert_string_equal(adm_token_source_get(&ts, 1000 + 49999), "one");
    assert_string_equal(adm_token_source_get(&ts, 1000 + 50000), "two");
    assert_int_equal(ts.reads, 1);
    /* a failed re-read keeps the last good token */
    unlink(path);
    assert_string_equal(adm_token_source_get(&ts, 200000), "two");
    write_token("  \n");
    assert_string_equal(adm_token_source_get(&ts, 300000), "two");
    write_token("three");
    assert_string_equal(adm_token_source_get(&ts, 300001), "three");
    /* 401: a token read before the call started is read again at once */
    write_token("four");
    adm_token_source_unauthorized(&ts, 300001); /* read at 300001: the call used the newest token */
    assert_string_equal(adm_token_source_get(&ts, 300002), "three");
    adm_token_source_unauthorized(&ts, 300002);
    assert_string_equal(adm_token_source_get(&ts, 300003), "four");
    adm_token_source_free(&ts);
    unlink(path);
}

static void test_fixed_token(void **state)
{
    adm_token_source_t ts;

    (void)state;
    assert_int_equal(adm_token_source_init(&ts, "static", NULL, 0), 0);
    adm_token_source_unauthorized(&ts, 10);
    assert_string_equal(adm_token_source_get(&ts, 10000000), "static");
    adm_token_source_free(&ts);
    assert_int_equal(adm_token_source_init(&ts, NULL, NULL, 0), 0);
    assert_null(adm_token_source_get(&ts, 1));
    adm_token_source_free(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_fixed_token),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

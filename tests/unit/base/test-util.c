/* SPDX-License-Identifier: Apache-2.0 */
/* Flag value parsers (durations, counts, host:port) and URLs; the command line is test-options.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <netinet/in.h>

#include "adm/base/error.h"
#include "adm/base/util.h"

static void test_durations(void **state)
{
    static const struct {
        const char *in;
        uint64_t ms;
    } good[] = {
        {"0", 0},     {"250ms", 250}, {"10s", 10000}, {"1m30s", 90000},       {"1.5s", 1500}, {"2h", 7200000},
        {"100us", 1}, {"1ns", 1},     {"0s", 0},      {"1h2m3s4ms", 3723004}, {"0.001s", 1},
    };
    static const char *const bad[] = {"", "10", "s", "1.s.", "-1s", "1x", "1s ", "99999999999999999999h"};
    uint64_t ms;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(adm_parse_duration_ms(good[i].in, &ms), 0);
        assert_int_equal(ms, good[i].ms);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(adm_parse_duration_ms(bad[i], &ms), ADM_EINVAL);
    }
}

static void test_uint(void **state)
{
    uint64_t v;

    assert_int_equal(adm_parse_uint("3145728", UINT64_MAX, &v), 0);
    assert_int_equal(v, 3145728);
    assert_int_equal(adm_parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
    assert_int_equal(adm_parse_uint("18446744073709551616", UINT64_MAX, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("11", 10, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("10", 10, &v), 0);
    assert_int_equal(v, 10);
    /* a single digit above a max under 10 */
    assert_int_equal(adm_parse_uint("6", 5, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("5", 5, &v), 0);
    assert_int_equal(adm_parse_uint("1", 0, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("0", 0, &v), 0);
    assert_int_equal(adm_parse_uint("06", 5, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("1a", 100, &v), ADM_EINVAL);
    assert_int_equal(adm_parse_uint("", 100, &v), ADM_EINVAL);
}

static void test_hostport(void **state)
{
    struct sockaddr_storage ss;
    char text[64];

    assert_int_equal(adm_parse_hostport("127.0.0.1:8443", &ss), 0);
    adm_format_addr((struct sockaddr *)&ss, text, sizeof(text));
    assert_string_equal(text, "127.0.0.1:8443");
    assert_int_equal(adm_parse_hostport("[::1]:9443", &ss), 0);
    adm_format_addr((struct sockaddr *)&ss, text, sizeof(text));
    assert_string_equal(text, "[::1]:9443");
    assert_int_equal(adm_parse_hostport(":0", &ss), 0);
    adm_format_addr((struct sockaddr *)&ss, text, sizeof(text));
    assert_string_equal(text, "0.0.0.0:0");
    assert_int_equal(adm_parse_hostport("localhost:1", &ss), 0);
    adm_format_addr((struct sockaddr *)&ss, text, sizeof(text));
    assert_string_equal(text, "127.0.0.1:1");
    assert_int_equal(adm_parse_hostport("127.0.0.1", &ss), ADM_EINVAL);
    assert_int_equal(adm_parse_hostport("127.0.0.1:65536", &ss), ADM_EINVAL);
    assert_int_equal(adm_parse_hostport("[::1:80", &ss), ADM_EINVAL);
    assert_int_equal(adm_parse_hostport("example.com:80", &ss), ADM_EINVAL);
}

static void test_url_split(void **state)
{
    char host[64];
    uint16_t port;
    const char *rest, *problem;
    bool tls;

    (void)state;
    assert_int_equal(
        adm_url_split("https://hook.example.com/validate", &tls, host, sizeof(host), &port, &rest, &problem),
        0);
    assert_true(tls);
    assert_string_equal(host, "hook.example.com");
    assert_int_equal(port, 443);
    assert_string_equal(rest, "/validate");
    assert_int_equal(adm_url_split("http://[::1]:8080", &tls, host, sizeof(host), &port, &rest, &problem), 0);
    assert_false(tls);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 8080);
    assert_string_equal(rest, "");
    assert_int_equal(adm_url_split("ftp://x/", &tls, host, sizeof(host), &port, &rest, &problem), ADM_EINVAL);
    assert_string_equal(problem, "must start with https:// or http://");
    assert_int_equal(adm_url_split("https://:443/", &tls, host, sizeof(host), &port, &rest, &problem),
                     ADM_EINVAL);
    assert_string_equal(problem, "has no host");
    assert_int_equal(adm_url_split("https://h:0/", &tls, host, sizeof(host), &port, &rest, &problem),
                     ADM_EINVAL);
    assert_int_equal(adm_url_split("https://h:70000/", &tls, host, sizeof(host), &port, &rest, &problem),
                     ADM_EINVAL);
    assert_string_equal(problem, "bad port");
    assert_int_equal(adm_url_split("https://[::1/", &tls, host, sizeof(host), &port, &rest, &problem),
                     ADM_EINVAL);
}

static void assert_uuid_v4(const char *u)
{
    assert_int_equal(strlen(u), 36);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            assert_int_equal(u[i], '-');
        } else {
            assert_non_null(strchr("0123456789abcdef", u[i]));
        }
    }
    assert_int_equal(u[14], '4');           /* version 4 */
    assert_non_null(strchr("89ab", u[19])); /* RFC 4122 variant */
}

static int compare_uids(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Uids come from a generator its owner holds: well formed, never repeated, and one generator's
   state is its own (using one does not advance another). */
static void test_uuid(void **state)
{
    static char uids[1000][37];
    adm_uuid_gen_t a = {0};
    adm_uuid_gen_t b = {0};
    char other[37];

    (void)state;
    for (int i = 0; i < 1000; i++) {
        adm_uuid_v4(&a, uids[i]);
        assert_uuid_v4(uids[i]);
    }
    assert_int_equal(a.counter, 1000);
    assert_int_equal(b.counter, 0);
    adm_uuid_v4(&b, other);
    assert_uuid_v4(other);
    assert_int_equal(b.counter, 1);
    assert_string_not_equal(other, uids[0]); /* its own seed */
    qsort(uids, 1000, sizeof(uids[0]), compare_uids);
    for (int i = 1; i < 1000; i++) {
        assert_string_not_equal(uids[i - 1], uids[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations), cmocka_unit_test(test_uint), cmocka_unit_test(test_hostport),
        cmocka_unit_test(test_url_split), cmocka_unit_test(test_uuid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

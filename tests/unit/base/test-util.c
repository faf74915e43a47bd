/* SPDX-License-Identifier: Apache-2.0 */
/* Flag value parsers and the command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <netinet/in.h>

#include "adm/base/error.h"
#include "adm/base/options.h"
#include "adm/base/util.h"

static void test_durations(void **state)
{
    static const struct {
        const char *in;
        uint64_t ms;
    } good[] = {
        {"0", 0}, {"250ms", 250}, {"10s", 10000}, {"1m30s", 90000}, {"1.5s", 1500}, {"2h", 7200000},
        {"100us", 1}, {"1ns", 1}, {"0s", 0}, {"1h2m3s4ms", 3723004}, {"0.001s", 1},
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

static int parse(adm_options_t *o, adm_options_action_t *action, char *err, size_t err_len, int argc, ...)
{
    char *argv[32] = {"admitd"};
    va_list ap;

    va_start(ap, argc);
    for (int i = 1; i < argc; i++) {
        argv[i] = va_arg(ap, char *);
    }
    va_end(ap);
    adm_options_defaults(o);
    return adm_options_parse(o, argc, argv, action, err, err_len);
}

static void test_options(void **state)
{
    adm_options_t o;
    adm_options_action_t action;
    char err[256];

    assert_int_equal(parse(&o, &action, err, sizeof(err), 1), 0);
    assert_int_equal(action, ADM_OPTIONS_RUN);
    assert_int_equal(o.idle_timeout_ms, 120000);
    assert_int_equal(o.max_request_bytes, 3145728);
    assert_int_equal(o.shutdown_delay_ms, 5000);
    assert_int_equal(o.shutdown_grace_ms, 20000);
    assert_int_equal(ntohs(((struct sockaddr_in *)&o.listen)->sin_port), 8443);

    assert_int_equal(parse(&o, &action, err, sizeof(err), 7, "--idle-timeout", "1s", "--max-request-bytes=65536",
                           "--v", "4", "--insecure-http"),
                     0);
    assert_int_equal(o.idle_timeout_ms, 1000);
    assert_int_equal(o.max_request_bytes, 65536);
    assert_int_equal(o.verbosity, 4);
    assert_true(o.insecure_http);

    assert_int_equal(parse(&o, &action, err, sizeof(err), 2, "--help"), 0);
    assert_int_equal(action, ADM_OPTIONS_HELP);
    assert_int_equal(parse(&o, &action, err, sizeof(err), 2, "--version"), 0);
    assert_int_equal(action, ADM_OPTIONS_VERSION);

    assert_int_equal(parse(&o, &action, err, sizeof(err), 2, "--bogus"), ADM_EINVAL);
    assert_string_equal(err, "--bogus: unknown flag (see --help)");
    assert_int_equal(parse(&o, &action, err, sizeof(err), 3, "--idle-timeout", "soon"), ADM_EINVAL);
    assert_non_null(strstr(err, "--idle-timeout soon: not a duration"));
    assert_int_equal(parse(&o, &action, err, sizeof(err), 2, "--listen"), ADM_EINVAL);
    assert_non_null(strstr(err, "--listen: needs a value"));
    assert_int_equal(parse(&o, &action, err, sizeof(err), 3, "--listen", "nowhere"), ADM_EINVAL);
    assert_int_equal(parse(&o, &action, err, sizeof(err), 3, "--tls-cert-file", "a.pem"), ADM_EINVAL);
    assert_non_null(strstr(err, "go together"));
    assert_int_equal(parse(&o, &action, err, sizeof(err), 3, "--max-connections", "0"), ADM_EINVAL);
    assert_int_equal(parse(&o, &action, err, sizeof(err), 3, "--log-format", "xml"), ADM_EINVAL);
    assert_int_equal(parse(&o, &action, err, sizeof(err), 2, "stray"), ADM_EINVAL);
    assert_null(strchr(err, '\n')); /* every error is one line */
}

static void test_url_split(void **state)
{
    char host[64];
    uint16_t port;
    const char *rest, *problem;
    bool tls;

    (void)state;
    assert_int_equal(adm_url_split("https://hook.example.com/validate", &tls, host, sizeof(host), &port, &rest, &problem), 0);
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
    assert_int_equal(adm_url_split("https://:443/", &tls, host, sizeof(host), &port, &rest, &problem), ADM_EINVAL);
    assert_string_equal(problem, "has no host");
    assert_int_equal(adm_url_split("https://h:0/", &tls, host, sizeof(host), &port, &rest, &problem), ADM_EINVAL);
    assert_int_equal(adm_url_split("https://h:70000/", &tls, host, sizeof(host), &port, &rest, &problem), ADM_EINVAL);
    assert_string_equal(problem, "bad port");
    assert_int_equal(adm_url_split("https://[::1/", &tls, host, sizeof(host), &port, &rest, &problem), ADM_EINVAL);
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
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_uint),
        cmocka_unit_test(test_hostport),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_url_split),
        cmocka_unit_test(test_uuid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

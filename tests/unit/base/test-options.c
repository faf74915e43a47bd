/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command line (base/options.c): the defaults, every kind of flag (durations, counts,
 * host:port, lists, repeatable ones, booleans, strings), every error with its exact one-line
 * message, the --help, --version and --list-plugins actions, the --help text, and the flags other
 * modules declare in tables: the plugins' (DefaultTolerationSeconds' two) and a test table of
 * every declarable type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <netinet/in.h>

#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/options.h"
#include "adm/base/util.h"

#define MAX_ARGS 160

/* The arguments after "admitd", ended by NULL. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* What a test table declares: one flag of each type. */
static const adm_option_t test_rows[] = {
    {.name = "--test-count", .type = ADM_OPT_UINT, .def = "7", .min = 1, .max = 100, .help = "a count"},
    {.name = "--test-wait", .type = ADM_OPT_DURATION, .def = "1m30s", .help = "a duration"},
    {.name = "--test-switch", .type = ADM_OPT_BOOL, .help = "a switch"},
    {.name = "--test-name", .type = ADM_OPT_STRING, .help = "a name"},
    {0},
};

static adm_options_t opts;
static adm_options_action_t action;
static char err[4096];

/* Defaults, the plugins' flags and the test table declared (when asked), then args parsed. */
static int parse_with(bool declare, const char *const *args)
{
    char *argv[MAX_ARGS] = {"admitd"};
    int argc = 1;

    while (args[argc - 1] != NULL) {
        assert_true(argc < MAX_ARGS);
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    adm_options_defaults(&opts);
    if (declare) {
        adm_plugin_declare_options(&opts);
        assert_int_equal(adm_options_declare(&opts, "TestPlugin", test_rows, err, sizeof(err)), 0);
    }
    err[0] = '\0';
    action = ADM_OPTIONS_RUN;
    return adm_options_parse(&opts, argc, argv, &action, err, sizeof(err));
}

static int parse(const char *const *args)
{
    return parse_with(true, args);
}

static const char *addr_text(const struct sockaddr_storage *ss)
{
    static char text[64];

    adm_format_addr((const struct sockaddr *)ss, text, sizeof(text));
    return text;
}

/* The values of the test table's flags in opts. */
static adm_opt_value_t test_value(size_t i)
{
    adm_opt_value_t v[4];

    adm_options_values(&opts, test_rows, v);
    return v[i];
}

static void test_defaults(void **state)
{
    assert_int_equal(parse(ARGS(NULL)), 0);
    assert_int_equal(action, ADM_OPTIONS_RUN);
    assert_string_equal(addr_text(&opts.listen), "127.0.0.1:8443");
    assert_false(opts.has_health_listen);
    assert_false(opts.has_metrics_listen);
    assert_null(opts.tls_cert_file);
    assert_null(opts.tls_key_file);
    assert_null(opts.self_signed_ca_out);
    assert_null(opts.client_ca_file);
    assert_false(opts.insecure_http);
    assert_int_equal(opts.idle_timeout_ms, 120000);
    assert_int_equal(opts.deadline_margin_ms, 250);
    assert_int_equal(opts.max_request_bytes, 3145728);
    assert_int_equal(opts.max_connections, 10000);
    assert_int_equal(opts.shutdown_delay_ms, 5000);
    assert_int_equal(opts.shutdown_grace_ms, 20000);
    assert_string_equal(opts.enable_plugins, "");
    assert_string_equal(opts.disable_plugins, "");
    assert_null(opts.admission_config_file);
    assert_int_equal(opts.nwebhook_configs, 0);
    assert_int_equal(opts.ncluster_states, 0);
    assert_int_equal(opts.nresolve, 0);
    assert_false(opts.allow_insecure_webhook_urls);
    assert_int_equal(opts.log_format, ADM_LOG_TEXT);
    assert_int_equal(opts.verbosity, 0);
    /* declared flags hold their defaults until given */
    assert_int_equal(test_value(0).u, 7);
    assert_int_equal(test_value(1).ms, 90000);
    assert_false(test_value(2).b);
    assert_null(test_value(3).s);
}

static void test_kinds(void **state)
{
    /* durations, in either form */
    assert_int_equal(parse(ARGS("--idle-timeout", "1s", "--deadline-margin=1m30s", "--shutdown-delay", "0s",
                                "--shutdown-grace=2h")),
                     0);
    assert_int_equal(opts.idle_timeout_ms, 1000);
    assert_int_equal(opts.deadline_margin_ms, 90000);
    assert_int_equal(opts.shutdown_delay_ms, 0);
    assert_int_equal(opts.shutdown_grace_ms, 7200000);

    /* counts, at their bounds; the last one given wins */
    assert_int_equal(
        parse(ARGS("--max-request-bytes", "1024", "--max-connections=1000000", "--v", "3", "--v=10")), 0);
    assert_int_equal(opts.max_request_bytes, 1024);
    assert_int_equal(opts.max_connections, 1000000);
    assert_int_equal(opts.verbosity, 10);

    /* host:port, IPv6 included; the optional listeners record that they were given */
    assert_int_equal(parse(ARGS("--listen", "[::1]:9443", "--health-listen=127.0.0.1:0", "--metrics-listen",
                                "0.0.0.0:9090")),
                     0);
    assert_string_equal(addr_text(&opts.listen), "[::1]:9443");
    assert_true(opts.has_health_listen);
    assert_string_equal(addr_text(&opts.health_listen), "127.0.0.1:0");
    assert_true(opts.has_metrics_listen);
    assert_string_equal(addr_text(&opts.metrics_listen), "0.0.0.0:9090");

    /* lists: a repeated flag adds to the list */
    assert_int_equal(parse(ARGS("--enable-admission-plugins", "A,B", "--enable-admission-plugins=C",
                                "--disable-admission-plugins", "D")),
                     0);
    assert_string_equal(opts.enable_plugins, "A,B,C");
    assert_string_equal(opts.disable_plugins, "D");

    /* repeatable files and --resolve, in the order given */
    assert_int_equal(
        parse(ARGS("--webhook-config", "a.yaml", "--webhook-config=dir", "--cluster-state", "ns.yaml",
                   "--resolve", "hook.example.com:443:127.0.0.1", "--resolve=h:8443:[::1]")),
        0);
    assert_int_equal(opts.nwebhook_configs, 2);
    assert_string_equal(opts.webhook_configs[0], "a.yaml");
    assert_string_equal(opts.webhook_configs[1], "dir");
    assert_int_equal(opts.ncluster_states, 1);
    assert_string_equal(opts.cluster_states[0], "ns.yaml");
    assert_int_equal(opts.nresolve, 2);
    assert_string_equal(opts.resolve[0].host, "hook.example.com");
    assert_int_equal(opts.resolve[0].port, 443);
    assert_string_equal(addr_text(&opts.resolve[0].addr), "127.0.0.1:443");
    assert_string_equal(opts.resolve[1].host, "h");
    assert_string_equal(addr_text(&opts.resolve[1].addr), "[::1]:8443");

    /* several addresses for one name: a comma list, or the flag again */
    assert_int_equal(
        parse(ARGS("--resolve", "s.ns.svc:443:10.0.0.1,10.0.0.2", "--resolve", "s.ns.svc:443:[::2]")), 0);
    assert_int_equal(opts.nresolve, 3);
    assert_string_equal(opts.resolve[1].host, "s.ns.svc");
    assert_int_equal(opts.resolve[1].port, 443);
    assert_string_equal(addr_text(&opts.resolve[0].addr), "10.0.0.1:443");
    assert_string_equal(addr_text(&opts.resolve[1].addr), "10.0.0.2:443");
    assert_string_equal(addr_text(&opts.resolve[2].addr), "[::2]:443");

    /* booleans: bare, or =true / =false */
    assert_int_equal(parse(ARGS("--insecure-http", "--allow-insecure-webhook-urls=true")), 0);
    assert_true(opts.insecure_http);
    assert_true(opts.allow_insecure_webhook_urls);
    assert_int_equal(parse(ARGS("--insecure-http", "--insecure-http=false")), 0);
    assert_false(opts.insecure_http);

    /* strings, and the one closed set */
    assert_int_equal(
        parse(ARGS("--tls-cert-file", "c.pem", "--tls-private-key-file=k.pem", "--client-ca-file", "ca.pem",
                   "--admission-control-config-file", "adm.yaml", "--log-format", "json")),
        0);
    assert_string_equal(opts.tls_cert_file, "c.pem");
    assert_string_equal(opts.tls_key_file, "k.pem");
    assert_string_equal(opts.client_ca_file, "ca.pem");
    assert_string_equal(opts.admission_config_file, "adm.yaml");
    assert_int_equal(opts.log_format, ADM_LOG_JSON);
    assert_int_equal(parse(ARGS("--self-signed-ca-out", "ca-out.pem", "--log-format=text")), 0);
    assert_string_equal(opts.self_signed_ca_out, "ca-out.pem");
    assert_int_equal(opts.log_format, ADM_LOG_TEXT);
}

typedef struct error_case_s {
    const char *args[7];
    const char *message;
} error_case_t;

static const error_case_t errors[] = {
    {{"--bogus"}, "--bogus: unknown flag (see --help)"},
    {{"--bogus=1"}, "--bogus: unknown flag (see --help)"},
    {{"--default-toleration-seconds", "5"}, "--default-toleration-seconds: unknown flag (see --help)"},
    {{"stray"}, "stray: unexpected argument (flags start with --; see --help)"},
    {{"-v"}, "-v: unexpected argument (flags start with --; see --help)"},
    /* a missing value names the placeholder --help shows */
    {{"--listen"}, "--listen: needs a value (HOST:PORT)"},
    {{"--idle-timeout"}, "--idle-timeout: needs a value (DURATION)"},
    {{"--max-connections"}, "--max-connections: needs a value (N)"},
    {{"--enable-admission-plugins"}, "--enable-admission-plugins: needs a value (A,B)"},
    {{"--webhook-config"}, "--webhook-config: needs a value (FILE|DIR)"},
    {{"--resolve"}, "--resolve: needs a value (HOST:PORT:ADDR)"},
    {{"--log-format"}, "--log-format: needs a value (text|json)"},
    {{"--tls-cert-file"}, "--tls-cert-file: needs a value (FILE)"},
    /* bad values, one kind after another */
    {{"--listen", "nowhere"},
     "--listen nowhere: want HOST:PORT with an IP address (e.g. 127.0.0.1:8443 or [::1]:8443)"},
    {{"--health-listen=127.0.0.1"},
     "--health-listen 127.0.0.1: want HOST:PORT with an IP address (e.g. 127.0.0.1:8443 or [::1]:8443)"},
    {{"--metrics-listen", "example.com:80"},
     "--metrics-listen example.com:80: want HOST:PORT with an IP address (e.g. 127.0.0.1:8443 or "
     "[::1]:8443)"},
    {{"--idle-timeout", "soon"}, "--idle-timeout soon: not a duration (e.g. 250ms, 10s, 2m)"},
    {{"--shutdown-grace=-1s"}, "--shutdown-grace -1s: not a duration (e.g. 250ms, 10s, 2m)"},
    {{"--deadline-margin", "10"}, "--deadline-margin 10: not a duration (e.g. 250ms, 10s, 2m)"},
    {{"--max-connections", "many"}, "--max-connections many: want a whole number from 1 to 1000000"},
    {{"--log-format", "xml"}, "--log-format xml: want text or json"},
    {{"--tls-cert-file", ""}, "--tls-cert-file: must not be empty"},
    {{"--admission-control-config-file="}, "--admission-control-config-file: must not be empty"},
    {{"--webhook-config="}, "--webhook-config: must not be empty"},
    {{"--cluster-state", ""}, "--cluster-state: must not be empty"},
    {{"--resolve", "a"}, "--resolve a: want HOST:PORT:ADDR (e.g. hook.example.com:443:127.0.0.1)"},
    {{"--resolve", ":443:127.0.0.1"},
     "--resolve :443:127.0.0.1: want HOST:PORT:ADDR (e.g. hook.example.com:443:127.0.0.1)"},
    {{"--resolve", "a:0:1.2.3.4"}, "--resolve a:0:1.2.3.4: bad port"},
    {{"--resolve", "a:65536:1.2.3.4"}, "--resolve a:65536:1.2.3.4: bad port"},
    {{"--resolve", "a:1:localhost"}, "--resolve a:1:localhost: ADDR must be an IPv4 or [IPv6] address"},
    {{"--resolve", "a:1:example.com"}, "--resolve a:1:example.com: ADDR must be an IPv4 or [IPv6] address"},
    {{"--resolve", "a:1:1.2.3.4,"}, "--resolve a:1:1.2.3.4,: ADDR must be an IPv4 or [IPv6] address"},
    {{"--resolve", "a:1:1.2.3.4,x"}, "--resolve a:1:1.2.3.4,x: ADDR must be an IPv4 or [IPv6] address"},
    /* out of range */
    {{"--max-connections", "0"}, "--max-connections 0: want a whole number from 1 to 1000000"},
    {{"--max-connections=1000001"}, "--max-connections 1000001: want a whole number from 1 to 1000000"},
    {{"--max-request-bytes", "1023"},
     "--max-request-bytes 1023: want a whole number from 1024 to 1073741824"},
    {{"--max-request-bytes", "1073741825"},
     "--max-request-bytes 1073741825: want a whole number from 1024 to 1073741824"},
    {{"--v", "11"}, "--v 11: want a whole number from 0 to 10"},
    {{"--v", "-1"}, "--v -1: want a whole number from 0 to 10"},
    /* flags without a value */
    {{"--insecure-http=yes"}, "--insecure-http: takes no value"},
    {{"--allow-insecure-webhook-urls=1"}, "--allow-insecure-webhook-urls: takes no value"},
    {{"--help=1"}, "--help: takes no value"},
    {{"--version=yes"}, "--version: takes no value"},
    {{"--list-plugins="}, "--list-plugins: takes no value"},
    /* flags that go together, or not */
    {{"--tls-cert-file", "c.pem"},
     "--tls-private-key-file: --tls-cert-file and --tls-private-key-file go together"},
    {{"--tls-private-key-file", "k.pem"},
     "--tls-cert-file: --tls-cert-file and --tls-private-key-file go together"},
    {{"--insecure-http", "--client-ca-file", "ca.pem"},
     "--insecure-http: cannot be combined with TLS certificate flags"},
    {{"--insecure-http", "--tls-cert-file", "c", "--tls-private-key-file", "k"},
     "--insecure-http: cannot be combined with TLS certificate flags"},
    {{"--tls-cert-file", "c", "--tls-private-key-file", "k", "--self-signed-ca-out", "o"},
     "--self-signed-ca-out: only applies to the generated certificate, not with --tls-cert-file"},
    /* the first error is the one reported */
    {{"--idle-timeout", "x", "--bogus"}, "--idle-timeout x: not a duration (e.g. 250ms, 10s, 2m)"},
    {{"--list-plugins", "--bogus"}, "--bogus: unknown flag (see --help)"},
    /* the plugins' flags, as before they were declared by the plugin */
    {{"--default-not-ready-toleration-seconds"}, "--default-not-ready-toleration-seconds: needs a value (N)"},
    {{"--default-not-ready-toleration-seconds=x"},
     "--default-not-ready-toleration-seconds x: want a whole number from 0 to 9223372036854775807"},
    {{"--default-not-ready-toleration-seconds", "-1"},
     "--default-not-ready-toleration-seconds -1: want a whole number from 0 to 9223372036854775807"},
    {{"--default-unreachable-toleration-seconds", "9223372036854775808"},
     "--default-unreachable-toleration-seconds 9223372036854775808: want a whole number from 0 to "
     "9223372036854775807"},
    {{"--default-unreachable-toleration-seconds="},
     "--default-unreachable-toleration-seconds : want a whole number from 0 to 9223372036854775807"},
    /* the test table's, one type after another */
    {{"--test-count"}, "--test-count: needs a value (N)"},
    {{"--test-count", "0"}, "--test-count 0: want a whole number from 1 to 100"},
    {{"--test-count=101"}, "--test-count 101: want a whole number from 1 to 100"},
    {{"--test-wait"}, "--test-wait: needs a value (DURATION)"},
    {{"--test-wait", "soon"}, "--test-wait soon: not a duration (e.g. 250ms, 10s, 2m)"},
    {{"--test-switch=maybe"}, "--test-switch: takes no value"},
    {{"--test-name"}, "--test-name: needs a value (VALUE)"},
    {{"--test-name="}, "--test-name: must not be empty"},
};

static void test_errors(void **state)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
        const error_case_t *e = &errors[i];
        int rc = parse(e->args);

        if (rc != ADM_EINVAL || strcmp(err, e->message) != 0) {
            fail_msg("case %zu (%s ...): rc %d\n  got:  %s\n  want: %s", i, e->args[0], rc, err, e->message);
        }
        assert_null(strchr(err, '\n')); /* every error is one line */
    }
}

/* The limits of the lists and of the repeatable flags. */
static void test_limits(void **state)
{
    static char long_list[sizeof(opts.enable_plugins) + 1];
    static char resolve[ADM_MAX_RESOLVE + 1][32];
    const char *args[2 * (ADM_MAX_RESOLVE + 1) + 1];
    size_t n = 0;

    /* a list fills up to its buffer, itself and its commas */
    memset(long_list, 'A', sizeof(opts.enable_plugins) - 1);
    long_list[sizeof(opts.enable_plugins) - 1] = '\0';
    assert_int_equal(parse(ARGS("--enable-admission-plugins", long_list)), 0);
    assert_int_equal(parse(ARGS("--enable-admission-plugins", long_list, "--enable-admission-plugins", "B")),
                     ADM_EINVAL);
    assert_string_equal(err, "--enable-admission-plugins: list too long");
    long_list[sizeof(opts.enable_plugins) - 1] = 'A';
    assert_int_equal(parse(ARGS("--disable-admission-plugins", long_list)), ADM_EINVAL);
    assert_string_equal(err, "--disable-admission-plugins: list too long");

    /* ADM_MAX_PATHS files per repeatable flag */
    for (n = 0; n < 2 * ADM_MAX_PATHS; n += 2) {
        args[n] = "--webhook-config";
        args[n + 1] = "f.yaml";
    }
    args[n] = NULL;
    assert_int_equal(parse(args), 0);
    assert_int_equal(opts.nwebhook_configs, ADM_MAX_PATHS);
    args[n] = "--webhook-config=one-more.yaml";
    args[n + 1] = NULL;
    assert_int_equal(parse(args), ADM_EINVAL);
    assert_string_equal(err, "--webhook-config: at most 32");

    /* ADM_MAX_RESOLVE entries */
    for (n = 0; n <= ADM_MAX_RESOLVE; n++) {
        snprintf(resolve[n], sizeof(resolve[n]), "h%zu:443:127.0.0.1", n);
        args[2 * n] = "--resolve";
        args[2 * n + 1] = resolve[n];
    }
    args[2 * ADM_MAX_RESOLVE] = NULL;
    assert_int_equal(parse(args), 0);
    assert_int_equal(opts.nresolve, ADM_MAX_RESOLVE);
    args[2 * ADM_MAX_RESOLVE] = "--resolve";
    args[2 * ADM_MAX_RESOLVE + 2] = NULL;
    assert_int_equal(parse(args), ADM_EINVAL);
    assert_string_equal(err, "--resolve: at most 64 addresses in all");
}

/* --help and --version end the parse at once; --list-plugins lets the other flags parse. */
static void test_actions(void **state)
{
    assert_int_equal(parse(ARGS("--help")), 0);
    assert_int_equal(action, ADM_OPTIONS_HELP);
    assert_int_equal(parse(ARGS("--idle-timeout", "1s", "--help", "--bogus")), 0);
    assert_int_equal(action, ADM_OPTIONS_HELP);
    assert_int_equal(parse(ARGS("--bogus", "--help")), ADM_EINVAL);

    assert_int_equal(parse(ARGS("--version")), 0);
    assert_int_equal(action, ADM_OPTIONS_VERSION);
    assert_int_equal(parse(ARGS("--version", "stray")), 0);
    assert_int_equal(action, ADM_OPTIONS_VERSION);

    assert_int_equal(parse(ARGS("--list-plugins", "--idle-timeout", "1s")), 0);
    assert_int_equal(action, ADM_OPTIONS_LIST_PLUGINS);
    assert_int_equal(opts.idle_timeout_ms, 1000);
    /* a later --help still wins */
    assert_int_equal(parse(ARGS("--list-plugins", "--help")), 0);
    assert_int_equal(action, ADM_OPTIONS_HELP);
}

/* --help of opts, in a string the caller frees. */
static char *usage_text(const adm_options_t *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    adm_options_usage(o, f);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_usage(void **state)
{
    static const char *const names[] = {
        "--listen HOST:PORT",
        "--tls-cert-file FILE",
        "--tls-private-key-file FILE",
        "--self-signed-ca-out FILE",
        "--client-ca-file FILE",
        "--insecure-http ",
        "--health-listen HOST:PORT",
        "--metrics-listen HOST:PORT",
        "--idle-timeout DURATION",
        "--deadline-margin DURATION",
        "--max-request-bytes N",
        "--max-connections N",
        "--shutdown-delay DURATION",
        "--shutdown-grace DURATION",
        "--enable-admission-plugins A,B",
        "--disable-admission-plugins A,B",
        "--admission-control-config-file FILE",
        "--webhook-config FILE|DIR",
        "--cluster-state FILE|DIR",
        "--resolve HOST:PORT:ADDR",
        "--webhook-circuit-breaker K/COOLDOWN",
        "--allow-insecure-webhook-urls",
        "--default-not-ready-toleration-seconds N",
        "--default-unreachable-toleration-seconds N",
        "--list-plugins ",
        "--log-format text|json",
        "--v N",
        "--help ",
        "--version ",
    };
    /* the plugins' flags where the built-in rows used to be, text unchanged */
    static const char plugins_block[] =
        "  --allow-insecure-webhook-urls      permit http:// downstream webhook URLs (benchmarks only)\n"
        "  --default-not-ready-toleration-seconds N\n"
        "                                     DefaultTolerationSeconds: tolerationSeconds for "
        "node.kubernetes.io/not-ready (default 300)\n"
        "  --default-unreachable-toleration-seconds N\n"
        "                                     DefaultTolerationSeconds: tolerationSeconds for "
        "node.kubernetes.io/unreachable (default 300)\n"
        "  --test-count N                     TestPlugin: a count (default 7)\n"
        "  --test-wait DURATION               TestPlugin: a duration (default 1m30s)\n"
        "  --test-switch                      TestPlugin: a switch\n"
        "  --test-name VALUE                  TestPlugin: a name\n"
        "  --list-plugins                     print every admission plugin";
    char *text;
    const char *at = NULL;

    assert_int_equal(parse(ARGS(NULL)), 0);
    text = usage_text(&opts);
    assert_int_equal(strncmp(text, "Usage: admitd [flags]\n", 22), 0);
    /* every flag in the table's order */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *next = strstr(at != NULL ? at : text, names[i]);

        if (next == NULL) {
            fail_msg("--help lacks \"%s\" (after the previous flag):\n%s", names[i], text);
        }
        at = next;
    }
    if (strstr(text, plugins_block) == NULL) {
        fail_msg("--help lacks the declared flags as expected:\n%s", text);
    }
    free(text);

    /* Without declared flags none is listed. */
    adm_options_defaults(&opts);
    text = usage_text(&opts);
    assert_null(strstr(text, "toleration-seconds"));
    assert_non_null(strstr(text,
                           "  --allow-insecure-webhook-urls      permit http:// downstream webhook URLs "
                           "(benchmarks only)\n  --list-plugins "));
    free(text);
}

/* The plugins' flags reach them through the values of their tables. */
static void test_plugin_flags(void **state)
{
    const adm_plugin_info_t *dts = adm_plugin_find("DefaultTolerationSeconds");
    adm_opt_value_t v[2];

    assert_non_null(dts);
    assert_non_null(dts->plugin);
    assert_int_equal(adm_options_count(dts->plugin->options), 2);

    assert_int_equal(parse(ARGS(NULL)), 0);
    adm_options_values(&opts, dts->plugin->options, v);
    assert_int_equal(v[0].u, 300);
    assert_int_equal(v[1].u, 300);

    assert_int_equal(parse(ARGS("--default-not-ready-toleration-seconds", "60",
                                "--default-unreachable-toleration-seconds=0")),
                     0);
    adm_options_values(&opts, dts->plugin->options, v);
    assert_int_equal(v[0].u, 60);
    assert_int_equal(v[1].u, 0);
    assert_int_equal(parse(ARGS("--default-not-ready-toleration-seconds=9223372036854775807")), 0);
    adm_options_values(&opts, dts->plugin->options, v);
    assert_int_equal(v[0].u, INT64_MAX);

    /* Options that never declared them (a test, a tool): the defaults. */
    assert_int_equal(parse_with(false, ARGS(NULL)), 0);
    adm_options_values(&opts, dts->plugin->options, v);
    assert_int_equal(v[0].u, 300);
    assert_int_equal(v[1].u, 300);
    assert_int_equal(parse_with(false, ARGS("--default-not-ready-toleration-seconds", "60")), ADM_EINVAL);
    assert_string_equal(err, "--default-not-ready-toleration-seconds: unknown flag (see --help)");
    adm_options_values(NULL, dts->plugin->options, v);
    assert_int_equal(v[1].u, 300);

    /* Every implemented plugin's table declares without a fault. */
    {
        size_t count;
        const adm_plugin_info_t *all = adm_plugin_registry(&count);

        adm_options_defaults(&opts);
        for (size_t i = 0; i < count; i++) {
            if (all[i].plugin != NULL &&
                adm_options_declare(&opts, all[i].name, all[i].plugin->options, err, sizeof(err)) != 0) {
                fail_msg("%s: %s", all[i].name, err);
            }
        }
    }
}

/* A table of each type: values given, repeated and defaulted; declaring it again changes nothing. */
static void test_declared(void **state)
{
    size_t n;

    assert_int_equal(adm_options_count(test_rows), 4);
    assert_int_equal(adm_options_count(NULL), 0);
    assert_int_equal(
        parse(ARGS("--test-count=100", "--test-wait", "250ms", "--test-switch", "--test-name", "x")), 0);
    assert_int_equal(test_value(0).u, 100);
    assert_int_equal(test_value(1).ms, 250);
    assert_true(test_value(2).b);
    assert_string_equal(test_value(3).s, "x");
    assert_int_equal(parse(ARGS("--test-count", "1", "--test-count", "4", "--test-switch=true",
                                "--test-switch=false", "--test-name=a", "--test-name=b")),
                     0);
    assert_int_equal(test_value(0).u, 4);
    assert_false(test_value(2).b);
    assert_string_equal(test_value(3).s, "b");
    assert_int_equal(test_value(1).ms, 90000);

    /* the same table again, under any owner: nothing changes */
    n = opts.ndeclared;
    assert_int_equal(adm_options_declare(&opts, "Other", test_rows, err, sizeof(err)), 0);
    assert_int_equal(opts.ndeclared, n);
    assert_int_equal(test_value(0).u, 4);

    /* an empty table, or none, declares nothing */
    assert_int_equal(adm_options_declare(&opts, "Other", NULL, err, sizeof(err)), 0);
    assert_int_equal(adm_options_declare(&opts, "Other", test_rows + 4, err, sizeof(err)), 0);
    assert_int_equal(opts.ndeclared, n);
}

/* A table that cannot be declared: one line naming the owner and the row. */
static void test_declare_errors(void **state)
{
    static const struct {
        adm_option_t row;
        const char *message;
    } bad[] = {
        {{.name = "--listen", .type = ADM_OPT_STRING}, "T: --listen: there is already a flag of that name"},
        {{.name = "--test-name", .type = ADM_OPT_STRING},
         "T: --test-name: there is already a flag of that name"},
        {{.name = "listen", .type = ADM_OPT_STRING}, "T: \"listen\": a flag's name is --NAME"},
        {{.name = "--", .type = ADM_OPT_STRING}, "T: \"--\": a flag's name is --NAME"},
        {{.name = "--a=b", .type = ADM_OPT_STRING}, "T: \"--a=b\": a flag's name is --NAME"},
        {{.name = "--x", .type = ADM_OPT_UINT, .min = 5, .max = 4}, "T: --x: no such type, or min above max"},
        {{.name = "--x", .type = (adm_opt_type_t)9}, "T: --x: no such type, or min above max"},
        {{.name = "--x", .type = ADM_OPT_UINT, .def = "abc", .max = 5},
         "T: the default of --x is not a valid value: --x abc: want a whole number from 0 to 5"},
        {{.name = "--x", .type = ADM_OPT_UINT, .def = "6", .max = 5},
         "T: the default of --x is not a valid value: --x 6: want a whole number from 0 to 5"},
        {{.name = "--x", .type = ADM_OPT_DURATION, .def = "1"},
         "T: the default of --x is not a valid value: --x 1: not a duration (e.g. 250ms, 10s, 2m)"},
        {{.name = "--x", .type = ADM_OPT_BOOL, .def = "yes"},
         "T: the default of --x is not a valid value: --x yes: want true or false"},
        {{.name = "--x", .type = ADM_OPT_STRING, .def = ""},
         "T: the default of --x is not a valid value: --x: must not be empty"},
    };
    static adm_option_t many[ADM_MAX_DECLARED + 2];
    static char names[ADM_MAX_DECLARED + 1][16];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        adm_option_t table[2] = {bad[i].row, {0}};
        size_t n;

        assert_int_equal(parse(ARGS(NULL)), 0);
        n = opts.ndeclared;
        if (adm_options_declare(&opts, "T", table, err, sizeof(err)) != ADM_EINVAL ||
            strcmp(err, bad[i].message) != 0) {
            fail_msg("case %zu:\n  got:  %s\n  want: %s", i, err, bad[i].message);
        }
        assert_int_equal(opts.ndeclared, n);
    }

    /* ADM_MAX_DECLARED flags in all */
    for (size_t i = 0; i <= ADM_MAX_DECLARED; i++) {
        snprintf(names[i], sizeof(names[i]), "--f%zu", i);
        many[i].name = names[i];
        many[i].type = ADM_OPT_BOOL;
    }
    adm_options_defaults(&opts);
    assert_int_equal(adm_options_declare(&opts, "T", many, err, sizeof(err)), ADM_EINVAL);
    assert_string_equal(err, "T: --f32: more than 32 declared flags");
    assert_int_equal(opts.ndeclared, ADM_MAX_DECLARED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_limits),
        cmocka_unit_test(test_actions),        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_plugin_flags),   cmocka_unit_test(test_declared),
        cmocka_unit_test(test_declare_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

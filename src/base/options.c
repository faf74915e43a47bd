/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table-driven flag parsing: each row names a flag, its kind, where the value goes and its help
 * line, so parsing, validation and --help come from one place.
 */
#include "adm/base/options.h"

#include "adm/base/error.h"
#include "adm/base/util.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef enum flag_kind_e {
    FLAG_BOOL,
    FLAG_STRING,
    FLAG_ADDR,
    FLAG_DURATION,
    FLAG_UINT,
    FLAG_LOG_FORMAT,
    FLAG_HELP,
    FLAG_VERSION,
    FLAG_LIST_PLUGINS,
    FLAG_LIST,   /* comma-separated names; repeated flags add to the list */
    FLAG_PATHS,  /* a file or folder; repeated flags add to the list */
    FLAG_RESOLVE,
} flag_kind_t;

typedef struct flag_s {
    const char *name;
    flag_kind_t kind;
    size_t offset;       /* into adm_options_t */
    size_t presence;     /* offset of a bool set when given, or SIZE_MAX */
    uint64_t min, max;   /* FLAG_UINT bounds */
    const char *value;   /* placeholder shown in --help */
    const char *help;
} flag_t;

#define OPT(field) offsetof(adm_options_t, field)
#define NONE SIZE_MAX

static const flag_t flags[] = {
    {"--listen", FLAG_ADDR, OPT(listen), NONE, 0, 0, "HOST:PORT",
     "admission listener (default 127.0.0.1:8443; [::1]:8443 for IPv6; port 0 picks a free one)"},
    {"--tls-cert-file", FLAG_STRING, OPT(tls_cert_file), NONE, 0, 0, "FILE",
     "PEM server certificate chain (RSA or ECDSA); without it a self-signed ECDSA P-256 certificate "
     "for localhost, 127.0.0.1 and ::1 is generated at start"},
    {"--tls-private-key-file", FLAG_STRING, OPT(tls_key_file), NONE, 0, 0, "FILE",
     "PEM private key of --tls-cert-file"},
    {"--self-signed-ca-out", FLAG_STRING, OPT(self_signed_ca_out), NONE, 0, 0, "FILE",
     "write the generated certificate (PEM) here so clients can trust it"},
    {"--client-ca-file", FLAG_STRING, OPT(client_ca_file), NONE, 0, 0, "FILE",
     "mTLS: admission paths require a client certificate verified against this CA (401 otherwise); "
     "health and metrics paths do not"},
    {"--insecure-http", FLAG_BOOL, OPT(insecure_http), NONE, 0, 0, NULL,
     "serve plain HTTP instead of HTTPS (local testing and benchmarks only)"},
    {"--health-listen", FLAG_ADDR, OPT(health_listen), OPT(has_health_listen), 0, 0, "HOST:PORT",
     "also serve /healthz /livez /readyz over plain HTTP here (default off)"},
    {"--metrics-listen", FLAG_ADDR, OPT(metrics_listen), OPT(has_metrics_listen), 0, 0, "HOST:PORT",
     "also serve /metrics over plain HTTP here (default off)"},
    {"--idle-timeout", FLAG_DURATION, OPT(idle_timeout_ms), NONE, 0, 0, "DURATION",
     "close keep-alive connections idle this long (default 120s)"},
    {"--deadline-margin", FLAG_DURATION, OPT(deadline_margin_ms), NONE, 0, 0, "DURATION",
     "answer by the caller's ?timeout= minus this margin (default 250ms)"},
    {"--max-request-bytes", FLAG_UINT, OPT(max_request_bytes), NONE, 1024, (uint64_t)1 << 30, "N",
     "larger request bodies get HTTP 413 (default 3145728)"},
    {"--max-connections", FLAG_UINT, OPT(max_connections), NONE, 1, 1000000, "N",
     "stop accepting past this many open connections until one closes (default 10000)"},
    {"--shutdown-delay", FLAG_DURATION, OPT(shutdown_delay_ms), NONE, 0, 0, "DURATION",
     "after SIGTERM keep serving this long with /readyz 503 and Connection: close (default 5s)"},
    {"--shutdown-grace", FLAG_DURATION, OPT(shutdown_grace_ms), NONE, 0, 0, "DURATION",
     "then stop accepting and give in-flight requests this long to finish (default 20s)"},
    {"--enable-admission-plugins", FLAG_LIST, OPT(enable_plugins), NONE, 0, 0, "A,B",
     "admission plugins to enable besides the default set (see --list-plugins); order does not "
     "matter, they always run in kube-apiserver's order"},
    {"--disable-admission-plugins", FLAG_LIST, OPT(disable_plugins), NONE, 0, 0, "A,B",
     "admission plugins to disable, even default ones"},
    {"--admission-control-config-file", FLAG_STRING, OPT(admission_config_file), NONE, 0, 0, "FILE",
     "AdmissionConfiguration (apiserver.config.k8s.io/v1 or apiserver.k8s.io/v1alpha1), YAML or JSON"},
    {"--webhook-config", FLAG_PATHS, OPT(webhook_configs), OPT(nwebhook_configs), 0, 0, "FILE|DIR",
     "MutatingWebhookConfiguration / ValidatingWebhookConfiguration objects (admissionregistration.k8s.io/v1): "
     "the downstream webhooks admitd calls; repeatable"},
    {"--cluster-state", FLAG_PATHS, OPT(cluster_states), OPT(ncluster_states), 0, 0, "FILE|DIR",
     "Kubernetes objects the plugins and namespace selectors read (default: namespaces default, kube-system, "
     "kube-public, kube-node-lease); repeatable"},
    {"--resolve", FLAG_RESOLVE, 0, NONE, 0, 0, "HOST:PORT:ADDR",
     "connect to ADDR for downstream webhook HOST:PORT (TLS still verifies HOST); repeatable"},
    {"--allow-insecure-webhook-urls", FLAG_BOOL, OPT(allow_insecure_webhook_urls), NONE, 0, 0, NULL,
     "permit http:// downstream webhook URLs (benchmarks only)"},
    {"--default-not-ready-toleration-seconds", FLAG_UINT, OPT(default_not_ready_toleration_seconds), NONE, 0,
     INT64_MAX, "N", "DefaultTolerationSeconds: tolerationSeconds for node.kubernetes.io/not-ready (default 300)"},
    {"--default-unreachable-toleration-seconds", FLAG_UINT, OPT(default_unreachable_toleration_seconds), NONE, 0,
     INT64_MAX, "N", "DefaultTolerationSeconds: tolerationSeconds for node.kubernetes.io/unreachable (default 300)"},
    {"--list-plugins", FLAG_LIST_PLUGINS, 0, NONE, 0, 0, NULL,
     "print every admission plugin: type, on by default or not, implemented or not; then exit"},
    {"--log-format", FLAG_LOG_FORMAT, OPT(log_format), NONE, 0, 0, "text|json",
     "log line format (default text)"},
    {"--v", FLAG_UINT, OPT(verbosity), NONE, 0, 10, "N", "log verbosity (default 0)"},
    {"--help", FLAG_HELP, 0, NONE, 0, 0, NULL, "print this help and exit"},
    {"--version", FLAG_VERSION, 0, NONE, 0, 0, NULL, "print the version and exit"},
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

void adm_options_defaults(adm_options_t *o)
{
    memset(o, 0, sizeof(*o));
    adm_parse_hostport("127.0.0.1:8443", &o->listen);
    o->idle_timeout_ms = 120000;
    o->deadline_margin_ms = 250;
    o->max_request_bytes = 3145728;
    o->max_connections = 10000;
    o->shutdown_delay_ms = 5000;
    o->shutdown_grace_ms = 20000;
    o->default_not_ready_toleration_seconds = 300;
    o->default_unreachable_toleration_seconds = 300;
    o->log_format = ADM_LOG_TEXT;
    o->verbosity = 0;
}

static const flag_t *find_flag(const char *arg, size_t name_len)
{
    for (size_t i = 0; i < NFLAGS; i++) {
        if (strlen(flags[i].name) == name_len && strncmp(flags[i].name, arg, name_len) == 0) {
            return &flags[i];
        }
    }
    return NULL;
}

/* HOST:PORT:ADDR as curl takes it; ADDR an IPv4 or [IPv6] literal. */
static int parse_resolve(adm_options_t *o, const char *value, char *err, size_t err_len)
{
    const char *c1 = strchr(value, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    adm_resolve_t *r;
    char port[8], hostport[80];
    uint64_t p;

    if (o->nresolve == ADM_MAX_RESOLVE) {
        snprintf(err, err_len, "--resolve: at most %d", ADM_MAX_RESOLVE);
        return ADM_EINVAL;
    }
    r = &o->resolve[o->nresolve];
    if (c1 == NULL || c2 == NULL || c1 == value || (size_t)(c1 - value) >= sizeof(r->host) ||
        (size_t)(c2 - c1 - 1) >= sizeof(port)) {
        snprintf(err, err_len, "--resolve %s: want HOST:PORT:ADDR (e.g. hook.example.com:443:127.0.0.1)", value);
        return ADM_EINVAL;
    }
    memcpy(r->host, value, (size_t)(c1 - value));
    r->host[c1 - value] = '\0';
    memcpy(port, c1 + 1, (size_t)(c2 - c1 - 1));
    port[c2 - c1 - 1] = '\0';
    if (adm_parse_uint(port, 65535, &p) != 0 || p == 0) {
        snprintf(err, err_len, "--resolve %s: bad port", value);
        return ADM_EINVAL;
    }
    r->port = (uint16_t)p;
    snprintf(hostport, sizeof(hostport), "%s:%s", c2 + 1, port);
    if (strcmp(c2 + 1, "localhost") == 0 || adm_parse_hostport(hostport, &r->addr) != 0) {
        snprintf(err, err_len, "--resolve %s: ADDR must be an IPv4 or [IPv6] address", value);
        return ADM_EINVAL;
    }
    o->nresolve++;
    return 0;
}

static int set_value(adm_options_t *o, const flag_t *f, const char *value, char *err, size_t err_len)
{
    char *base = (char *)o;
    uint64_t u;

    switch (f->kind) {
    case FLAG_STRING:
        if (*value == '\0') {
            snprintf(err, err_len, "%s: must not be empty", f->name);
            return ADM_EINVAL;
        }
        *(const char **)(base + f->offset) = value;
        break;
    case FLAG_ADDR:
        if (adm_parse_hostport(value, (struct sockaddr_storage *)(base + f->offset)) != 0) {
            snprintf(err, err_len, "%s %s: want HOST:PORT with an IP address (e.g. 127.0.0.1:8443 or [::1]:8443)",
                     f->name, value);
            return ADM_EINVAL;
        }
        break;
    case FLAG_DURATION:
        if (adm_parse_duration_ms(value, (uint64_t *)(base + f->offset)) != 0) {
            snprintf(err, err_len, "%s %s: not a duration (e.g. 250ms, 10s, 2m)", f->name, value);
            return ADM_EINVAL;
        }
        break;
    case FLAG_UINT:
        if (adm_parse_uint(value, f->max, &u) != 0 || u < f->min) {
            snprintf(err, err_len, "%s %s: want a whole number from %llu to %llu", f->name, value,
                     (unsigned long long)f->min, (unsigned long long)f->max);
            return ADM_EINVAL;
        }
        if (f->offset == OPT(verbosity)) {
            o->verbosity = (int)u;
        } else {
            *(uint64_t *)(base + f->offset) = u;
        }
        break;
    case FLAG_LIST: {
        char *list = base + f->offset;
        size_t used = strlen(list);
        size_t need = used + (used > 0 ? 1 : 0) + strlen(value) + 1;

        if (need > sizeof(o->enable_plugins)) {
            snprintf(err, err_len, "%s: list too long", f->name);
            return ADM_EINVAL;
        }
        if (used > 0) {
            list[used++] = ',';
        }
        memcpy(list + used, value, strlen(value) + 1);
        break;
    }
    case FLAG_PATHS: {
        /* offset: the array; presence: its count */
        const char **paths = (const char **)(base + f->offset);
        size_t *n = (size_t *)(base + f->presence);

        if (*value == '\0') {
            snprintf(err, err_len, "%s: must not be empty", f->name);
            return ADM_EINVAL;
        }
        if (*n == ADM_MAX_PATHS) {
            snprintf(err, err_len, "%s: at most %d", f->name, ADM_MAX_PATHS);
            return ADM_EINVAL;
        }
        paths[(*n)++] = value;
        return 0;
    }
    case FLAG_RESOLVE:
        return parse_resolve(o, value, err, err_len);
    case FLAG_LOG_FORMAT:
        if (strcmp(value, "text") == 0) {
            o->log_format = ADM_LOG_TEXT;
        } else if (strcmp(value, "json") == 0) {
            o->log_format = ADM_LOG_JSON;
        } else {
            snprintf(err, err_len, "%s %s: want text or json", f->name, value);
            return ADM_EINVAL;
        }
        break;
    default:
        break;
    }
    if (f->presence != NONE) {
        *(bool *)(base + f->presence) = true;
    }
    return 0;
}

static int check_combinations(const adm_options_t *o, char *err, size_t err_len)
{
    if ((o->tls_cert_file == NULL) != (o->tls_key_file == NULL)) {
        snprintf(err, err_len, "%s: --tls-cert-file and --tls-private-key-file go together",
                 o->tls_cert_file != NULL ? "--tls-private-key-file" : "--tls-cert-file");
        return ADM_EINVAL;
    }
    if (o->insecure_http && (o->tls_cert_file != NULL || o->client_ca_file != NULL)) {
        snprintf(err, err_len, "--insecure-http: cannot be combined with TLS certificate flags");
        return ADM_EINVAL;
    }
    if (o->tls_cert_file != NULL && o->self_signed_ca_out != NULL) {
        snprintf(err, err_len,
                 "--self-signed-ca-out: only applies to the generated certificate, not with --tls-cert-file");
        return ADM_EINVAL;
    }
    return 0;
}

int adm_options_parse(adm_options_t *o, int argc, char **argv, adm_options_action_t *action, char *err,
                      size_t err_len)
{
    _Static_assert(sizeof(o->enable_plugins) == sizeof(o->disable_plugins), "FLAG_LIST buffers share a size");
    *action = ADM_OPTIONS_RUN;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        size_t name_len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        const flag_t *f;
        const char *value;
        int rc;

        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, err_len, "%s: unexpected argument (flags start with --; see --help)", arg);
            return ADM_EINVAL;
        }
        f = find_flag(arg, name_len);
        if (f == NULL) {
            snprintf(err, err_len, "%.*s: unknown flag (see --help)", (int)name_len, arg);
            return ADM_EINVAL;
        }
        if (f->kind == FLAG_HELP || f->kind == FLAG_VERSION || f->kind == FLAG_LIST_PLUGINS || f->kind == FLAG_BOOL) {
            if (eq != NULL && f->kind == FLAG_BOOL && (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, "false") == 0)) {
                *(bool *)((char *)o + f->offset) = strcmp(eq + 1, "true") == 0;
                continue;
            }
            if (eq != NULL) {
                snprintf(err, err_len, "%s: takes no value", f->name);
                return ADM_EINVAL;
            }
            if (f->kind == FLAG_HELP) {
                *action = ADM_OPTIONS_HELP;
                return 0;
            }
            if (f->kind == FLAG_VERSION) {
                *action = ADM_OPTIONS_VERSION;
                return 0;
            }
            if (f->kind == FLAG_LIST_PLUGINS) {
                *action = ADM_OPTIONS_LIST_PLUGINS;
                continue; /* the other flags still parse, so a typo is not hidden */
            }
            *(bool *)((char *)o + f->offset) = true;
            continue;
        }
        if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(err, err_len, "%s: needs a value (%s)", f->name, f->value);
            return ADM_EINVAL;
        }
        rc = set_value(o, f, value, err, err_len);
        if (rc != 0) {
            return rc;
        }
    }
    return check_combinations(o, err, err_len);
}

void adm_options_usage(FILE *out)
{
    fprintf(out, "Usage: admitd [flags]\n\n"
                 "A Kubernetes admission webhook server: one HTTPS endpoint that kube-apiserver calls.\n"
                 "With no flags it serves https://127.0.0.1:8443 with a freshly generated self-signed\n"
                 "certificate (write it out with --self-signed-ca-out to trust it).\n\n"
                 "Endpoints: POST /mutate /validate /admit (AdmissionReview v1 or v1beta1),\n"
                 "           GET /healthz /livez /readyz /metrics.\n\nFlags:\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        char left[64];

        snprintf(left, sizeof(left), "%s%s%s", flags[i].name, flags[i].value != NULL ? " " : "",
                 flags[i].value != NULL ? flags[i].value : "");
        if (strlen(left) > 34) {
            fprintf(out, "  %s\n  %-34s %s\n", left, "", flags[i].help);
        } else {
            fprintf(out, "  %-34s %s\n", left, flags[i].help);
        }
    }
    fprintf(out, "\nSignals: SIGTERM/SIGINT drain (see --shutdown-delay, --shutdown-grace) and exit 0.\n"
                 "SIGHUP is logged and changes nothing: reload is not supported yet.\n");
}

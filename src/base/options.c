/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table-driven flag parsing: each row names a flag, its kind, where the value goes and its help
 * line, so parsing, validation and --help come from one place. Flags that other modules declare
 * (adm_options_declare: a plugin's options) are seen as rows of the same kind whose value lives in
 * adm_options_t.declared, so they parse, fail and print exactly as the built-in ones.
 */
#include "adm/base/options.h"

#include "adm/base/error.h"
#include "adm/base/util.h"

#include <assert.h>
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
    FLAG_LIST,  /* comma-separated names; repeated flags add to the list */
    FLAG_PATHS, /* a file or folder; repeated flags add to the list */
    FLAG_RESOLVE,
    FLAG_DECLARED, /* no flag: where --help lists the declared ones */
} flag_kind_t;

typedef struct flag_s {
    const char *name;
    flag_kind_t kind;
    size_t offset;     /* into adm_options_t */
    size_t presence;   /* offset of a bool set when given, or SIZE_MAX */
    uint64_t min, max; /* FLAG_UINT bounds */
    const char *value; /* placeholder shown in --help */
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
     "also serve /metrics and /debug/requests over plain HTTP here (default off)"},
    {"--idle-timeout", FLAG_DURATION, OPT(idle_timeout_ms), NONE, 0, 0, "DURATION",
     "close keep-alive connections idle this long (default 120s)"},
    {"--deadline-margin", FLAG_DURATION, OPT(deadline_margin_ms), NONE, 0, 0, "DURATION",
     "answer by the caller's ?timeout= minus this margin (default 250ms)"},
    {"--max-request-bytes", FLAG_UINT, OPT(max_request_bytes), NONE, 1024, (uint64_t)1 << 30, "N",
     "larger request bodies get HTTP 413 (default 3145728)"},
    {"--max-connections", FLAG_UINT, OPT(max_connections), NONE, 1, 1000000, "N",
     "stop accepting past this many open connections until one closes (default 10000)"},
    {"--workers", FLAG_UINT, OPT(workers), NONE, 1, ADM_MAX_WORKERS, "N",
     "serve with N processes sharing the ports (SO_REUSEPORT); /metrics sums them all (default 1)"},
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
     "MutatingWebhookConfiguration / ValidatingWebhookConfiguration objects "
     "(admissionregistration.k8s.io/v1): "
     "the downstream webhooks admitd calls; repeatable"},
    {"--cluster-state", FLAG_PATHS, OPT(cluster_states), OPT(ncluster_states), 0, 0, "FILE|DIR",
     "Kubernetes objects the plugins and namespace selectors read (default: namespaces default, kube-system, "
     "kube-public, kube-node-lease); repeatable"},
    {"--kubeconfig", FLAG_STRING, OPT(kubeconfig), NONE, 0, 0, "FILE",
     "read cluster state, and the endpoints of webhook Services, by list+watch from the API server this "
     "kubeconfig names (current context)"},
    {"--in-cluster", FLAG_BOOL, OPT(in_cluster), NONE, 0, 0, NULL,
     "the same, from the pod's service account (KUBERNETES_SERVICE_HOST/PORT, token, ca.crt)"},
    {"--resolve", FLAG_RESOLVE, 0, NONE, 0, 0, "HOST:PORT:ADDR",
     "connect to ADDR for downstream webhook HOST:PORT (TLS still verifies HOST); repeatable, and ADDR may "
     "be a comma list: with several addresses for one HOST:PORT each call goes to the one with the "
     "fewest calls outstanding"},
    {"--webhook-circuit-breaker", FLAG_STRING, OPT(webhook_circuit_breaker), NONE, 0, 0, "K/COOLDOWN",
     "after K consecutive failed calls to a webhook, fail its calls at once for COOLDOWN, then let one "
     "probe through (e.g. 5/10s; default off; a configuration's proxy.admitd.io/circuit-breaker "
     "annotation overrides it)"},
    {"--allow-insecure-webhook-urls", FLAG_BOOL, OPT(allow_insecure_webhook_urls), NONE, 0, 0, NULL,
     "permit http:// downstream webhook URLs (benchmarks only)"},
    {NULL, FLAG_DECLARED, 0, NONE, 0, 0, NULL, NULL},
    {"--list-plugins", FLAG_LIST_PLUGINS, 0, NONE, 0, 0, NULL,
     "print every admission plugin: type, on by default or not, implemented or not; then exit"},
    {"--log-format", FLAG_LOG_FORMAT, OPT(log_format), NONE, 0, 0, "text|json",
     "log line format (default text)"},
    {"--v", FLAG_UINT, OPT(verbosity), NONE, 0, 10, "N",
     "log verbosity; 2 logs each request's decision trace (default 0)"},
    {"--help", FLAG_HELP, 0, NONE, 0, 0, NULL, "print this help and exit"},
    {"--version", FLAG_VERSION, 0, NONE, 0, 0, NULL, "print the version and exit"},
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

/* A declared flag's type as the kind of built-in flag that parses the same way. */
static const flag_kind_t kind_of_type[] = {
    [ADM_OPT_UINT] = FLAG_UINT,
    [ADM_OPT_DURATION] = FLAG_DURATION,
    [ADM_OPT_BOOL] = FLAG_BOOL,
    [ADM_OPT_STRING] = FLAG_STRING,
};

/* What --help shows after a declared flag's name. */
static const char *const placeholder_of_type[] = {
    [ADM_OPT_UINT] = "N",
    [ADM_OPT_DURATION] = "DURATION",
    [ADM_OPT_BOOL] = NULL,
    [ADM_OPT_STRING] = "VALUE",
};

void adm_options_defaults(adm_options_t *o)
{
    memset(o, 0, sizeof(*o));
    adm_parse_hostport("127.0.0.1:8443", &o->listen);
    o->idle_timeout_ms = 120000;
    o->deadline_margin_ms = 250;
    o->max_request_bytes = 3145728;
    o->max_connections = 10000;
    o->workers = 1;
    o->shutdown_delay_ms = 5000;
    o->shutdown_grace_ms = 20000;
    o->log_format = ADM_LOG_TEXT;
    o->verbosity = 0;
}

/* A declared row as a built-in flag whose value is at offset in adm_options_t. */
static void row_flag(const adm_option_t *row, size_t offset, flag_t *f)
{
    assert(row->type <= ADM_OPT_STRING);
    f->name = row->name;
    f->kind = kind_of_type[row->type];
    f->offset = offset;
    f->presence = NONE;
    f->min = row->min;
    f->max = row->max;
    f->value = placeholder_of_type[row->type];
    f->help = row->help;
}

static const adm_declared_t *find_declared(const adm_options_t *o, const adm_option_t *row)
{
    for (size_t i = 0; i < o->ndeclared; i++) {
        if (o->declared[i].row == row) {
            return &o->declared[i];
        }
    }
    return NULL;
}

/* The flag named by arg's first name_len bytes: a row of the table, or a declared one made into *tmp. */
static const flag_t *find_flag(const adm_options_t *o, const char *arg, size_t name_len, flag_t *tmp)
{
    for (size_t i = 0; i < NFLAGS; i++) {
        if (flags[i].name != NULL && strlen(flags[i].name) == name_len &&
            strncmp(flags[i].name, arg, name_len) == 0) {
            return &flags[i];
        }
    }
    for (size_t i = 0; i < o->ndeclared; i++) {
        const char *name = o->declared[i].row->name;

        if (strlen(name) == name_len && strncmp(name, arg, name_len) == 0) {
            row_flag(o->declared[i].row, (size_t)((const char *)&o->declared[i].value - (const char *)o),
                     tmp);
            return tmp;
        }
    }
    return NULL;
}

/*
 * A value of the kinds a declared flag can have into dst: a const char * (FLAG_STRING), a
 * uint64_t (FLAG_DURATION in ms, FLAG_UINT) or a bool (FLAG_BOOL, from "true" or "false").
 */
static int parse_scalar(const flag_t *f, const char *value, void *dst, char *err, size_t err_len)
{
    uint64_t u;

    switch (f->kind) {
    case FLAG_STRING:
        if (*value == '\0') {
            snprintf(err, err_len, "%s: must not be empty", f->name);
            return ADM_EINVAL;
        }
        *(const char **)dst = value;
        return 0;
    case FLAG_DURATION:
        if (adm_parse_duration_ms(value, dst) != 0) {
            snprintf(err, err_len, "%s %s: not a duration (e.g. 250ms, 10s, 2m)", f->name, value);
            return ADM_EINVAL;
        }
        return 0;
    case FLAG_UINT:
        if (adm_parse_uint(value, f->max, &u) != 0 || u < f->min) {
            snprintf(err, err_len, "%s %s: want a whole number from %llu to %llu", f->name, value,
                     (unsigned long long)f->min, (unsigned long long)f->max);
            return ADM_EINVAL;
        }
        *(uint64_t *)dst = u;
        return 0;
    case FLAG_BOOL:
        if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0) {
            snprintf(err, err_len, "%s %s: want true or false", f->name, value);
            return ADM_EINVAL;
        }
        *(bool *)dst = strcmp(value, "true") == 0;
        return 0;
    default:
        snprintf(err, err_len, "%s: not a kind of value a declared flag can have", f->name);
        return ADM_EINVAL;
    }
}

int adm_options_declare(adm_options_t *o, const char *owner, const adm_option_t *rows, char *err,
                        size_t err_len)
{
    for (const adm_option_t *row = rows; row != NULL && row->name != NULL; row++) {
        flag_t f;
        adm_declared_t *d;
        char problem[256];

        if (find_declared(o, row) != NULL) {
            continue;
        }
        if (strncmp(row->name, "--", 2) != 0 || row->name[2] == '\0' || strchr(row->name, '=') != NULL) {
            snprintf(err, err_len, "%s: \"%s\": a flag's name is --NAME", owner, row->name);
            return ADM_EINVAL;
        }
        if (find_flag(o, row->name, strlen(row->name), &f) != NULL) {
            snprintf(err, err_len, "%s: %s: there is already a flag of that name", owner, row->name);
            return ADM_EINVAL;
        }
        if (row->type > ADM_OPT_STRING || (row->type == ADM_OPT_UINT && row->min > row->max)) {
            snprintf(err, err_len, "%s: %s: no such type, or min above max", owner, row->name);
            return ADM_EINVAL;
        }
        if (o->ndeclared == ADM_MAX_DECLARED) {
            snprintf(err, err_len, "%s: %s: more than %d declared flags", owner, row->name, ADM_MAX_DECLARED);
            return ADM_EINVAL;
        }
        d = &o->declared[o->ndeclared];
        memset(d, 0, sizeof(*d));
        d->owner = owner;
        d->row = row;
        row_flag(row, 0, &f);
        if (row->def != NULL && parse_scalar(&f, row->def, &d->value, problem, sizeof(problem)) != 0) {
            snprintf(err, err_len, "%s: the default of %s is not a valid value: %s", owner, row->name,
                     problem);
            return ADM_EINVAL;
        }
        o->ndeclared++;
    }
    return 0;
}

size_t adm_options_count(const adm_option_t *rows)
{
    size_t n = 0;

    while (rows != NULL && rows[n].name != NULL) {
        n++;
    }
    return n;
}

void adm_options_values(const adm_options_t *o, const adm_option_t *rows, adm_opt_value_t *out)
{
    size_t n = adm_options_count(rows);

    for (size_t i = 0; i < n; i++) {
        const adm_declared_t *d = o != NULL ? find_declared(o, &rows[i]) : NULL;
        char problem[256];
        flag_t f;
        int rc;

        memset(&out[i], 0, sizeof(out[i]));
        if (d != NULL) {
            out[i] = d->value;
        } else if (rows[i].def != NULL) {
            row_flag(&rows[i], 0, &f);
            rc = parse_scalar(&f, rows[i].def, &out[i], problem, sizeof(problem));
            /* adm_options_declare refuses a bad default, and the tests declare every plugin's table */
            assert(rc == 0);
            (void)rc;
        }
    }
}

/* HOST:PORT:ADDR as curl takes it; ADDR an IPv4 or [IPv6] literal. */
/* HOST:PORT:ADDR[,ADDR...]: one entry per address, as curl's --resolve takes a list. */
static int parse_resolve(adm_options_t *o, const char *value, char *err, size_t err_len)
{
    const char *c1 = strchr(value, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    const char *addr;
    char host[256], port[8];
    uint64_t p;

    if (c1 == NULL || c2 == NULL || c1 == value || (size_t)(c1 - value) >= sizeof(host) ||
        (size_t)(c2 - c1 - 1) >= sizeof(port)) {
        snprintf(err, err_len, "--resolve %s: want HOST:PORT:ADDR (e.g. hook.example.com:443:127.0.0.1)",
                 value);
        return ADM_EINVAL;
    }
    memcpy(host, value, (size_t)(c1 - value));
    host[c1 - value] = '\0';
    memcpy(port, c1 + 1, (size_t)(c2 - c1 - 1));
    port[c2 - c1 - 1] = '\0';
    if (adm_parse_uint(port, 65535, &p) != 0 || p == 0) {
        snprintf(err, err_len, "--resolve %s: bad port", value);
        return ADM_EINVAL;
    }
    for (addr = c2 + 1;;) {
        const char *comma = strchr(addr, ',');
        size_t n = comma != NULL ? (size_t)(comma - addr) : strlen(addr);
        char hostport[80];
        adm_resolve_t *r;

        if (o->nresolve == ADM_MAX_RESOLVE) {
            snprintf(err, err_len, "--resolve: at most %d addresses in all", ADM_MAX_RESOLVE);
            return ADM_EINVAL;
        }
        r = &o->resolve[o->nresolve];
        snprintf(hostport, sizeof(hostport), "%.*s:%s", (int)(n < 64 ? n : 64), addr, port);
        if (n == 0 || n >= 64 || (n == 9 && strncmp(addr, "localhost", 9) == 0) ||
            adm_parse_hostport(hostport, &r->addr) != 0) {
            snprintf(err, err_len, "--resolve %s: ADDR must be an IPv4 or [IPv6] address", value);
            return ADM_EINVAL;
        }
        memcpy(r->host, host, sizeof(r->host));
        r->port = (uint16_t)p;
        o->nresolve++;
        if (comma == NULL) {
            return 0;
        }
        addr = comma + 1;
    }
}

static int set_value(adm_options_t *o, const flag_t *f, const char *value, char *err, size_t err_len)
{
    char *base = (char *)o;
    uint64_t u;
    int rc;

    switch (f->kind) {
    case FLAG_STRING:
    case FLAG_DURATION:
        rc = parse_scalar(f, value, base + f->offset, err, err_len);
        if (rc != 0) {
            return rc;
        }
        break;
    case FLAG_UINT:
        rc = parse_scalar(f, value, &u, err, err_len);
        if (rc != 0) {
            return rc;
        }
        if (f->offset == OPT(verbosity)) {
            o->verbosity = (int)u;
        } else {
            *(uint64_t *)(base + f->offset) = u;
        }
        break;
    case FLAG_ADDR:
        if (adm_parse_hostport(value, (struct sockaddr_storage *)(base + f->offset)) != 0) {
            snprintf(err, err_len,
                     "%s %s: want HOST:PORT with an IP address (e.g. 127.0.0.1:8443 or [::1]:8443)", f->name,
                     value);
            return ADM_EINVAL;
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
    case FLAG_RESOLVE: return parse_resolve(o, value, err, err_len);
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
    default: break;
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
        flag_t declared;
        const char *value;
        int rc;

        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, err_len, "%s: unexpected argument (flags start with --; see --help)", arg);
            return ADM_EINVAL;
        }
        f = find_flag(o, arg, name_len, &declared);
        if (f == NULL) {
            snprintf(err, err_len, "%.*s: unknown flag (see --help)", (int)name_len, arg);
            return ADM_EINVAL;
        }
        if (f->kind == FLAG_HELP || f->kind == FLAG_VERSION || f->kind == FLAG_LIST_PLUGINS ||
            f->kind == FLAG_BOOL) {
            if (eq != NULL && f->kind == FLAG_BOOL &&
                (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, "false") == 0)) {
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

/* One flag of --help: "NAME PLACEHOLDER", then "OWNER: HELP (default DEF)" (owner, def optional). */
static void print_flag(FILE *out, const char *name, const char *placeholder, const char *owner,
                       const char *help, const char *def)
{
    char left[64];

    snprintf(left, sizeof(left), "%s%s%s", name, placeholder != NULL ? " " : "",
             placeholder != NULL ? placeholder : "");
    if (strlen(left) > 34) {
        fprintf(out, "  %s\n  %-34s ", left, "");
    } else {
        fprintf(out, "  %-34s ", left);
    }
    fprintf(out, "%s%s%s%s%s%s\n", owner != NULL ? owner : "", owner != NULL ? ": " : "", help,
            def != NULL ? " (default " : "", def != NULL ? def : "", def != NULL ? ")" : "");
}

void adm_options_usage(const adm_options_t *o, FILE *out)
{
    fprintf(out, "Usage: admitd [flags]\n\n"
                 "A Kubernetes admission webhook server: one HTTPS endpoint that kube-apiserver calls.\n"
                 "With no flags it serves https://127.0.0.1:8443 with a freshly generated self-signed\n"
                 "certificate (write it out with --self-signed-ca-out to trust it).\n\n"
                 "Endpoints: POST /mutate /validate /admit (AdmissionReview v1 or v1beta1),\n"
                 "           GET /healthz /livez /readyz /metrics.\n\nFlags:\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        if (flags[i].kind != FLAG_DECLARED) {
            print_flag(out, flags[i].name, flags[i].value, NULL, flags[i].help, NULL);
            continue;
        }
        for (size_t k = 0; o != NULL && k < o->ndeclared; k++) {
            const adm_option_t *row = o->declared[k].row;

            print_flag(out, row->name, placeholder_of_type[row->type], o->declared[k].owner, row->help,
                       row->def);
        }
    }
    fprintf(out, "\nSignals: SIGTERM/SIGINT drain (see --shutdown-delay, --shutdown-grace) and exit 0.\n"
                 "SIGHUP, or a change to a file named by a flag (certificate, key, client CA,\n"
                 "webhook configurations, admission configuration and its path: files, cluster\n"
                 "state), reloads them without dropping connections; a reload that fails\n"
                 "validation keeps the running configuration.\n");
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's command line. Flag names follow kube-apiserver where the concept exists and are listed in
 * ../shared/INTERFACE.md; parsing is strict and every error is one line naming the flag. Besides
 * its own flags, the parser takes the flags other modules declare in tables (a plugin's options,
 * plugin.h), parses them the same way and lists them in --help.
 */
#ifndef ADM_OPTIONS_H
#define ADM_OPTIONS_H

#include "adm/base/log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* Repeatable flags that name files or folders (--webhook-config, --cluster-state). */
#define ADM_MAX_PATHS 32
#define ADM_MAX_WORKERS 64 /* --workers bound: slots of the shared metrics memory */
/* --resolve entries at most. */
#define ADM_MAX_RESOLVE 64
/* Declared flags at most, over every table (adm_options_declare). */
#define ADM_MAX_DECLARED 32

/* The kinds of value a declared flag takes; each parses, and fails, as the built-in flags of its kind. */
typedef enum adm_opt_type_e {
    ADM_OPT_UINT,     /* a whole number from min to max: value.u */
    ADM_OPT_DURATION, /* Go-style, e.g. 250ms, 10s, 1m30s: value.ms */
    ADM_OPT_BOOL,     /* --flag, --flag=true or --flag=false: value.b */
    ADM_OPT_STRING,   /* any text but the empty one: value.s (argv's, not copied) */
} adm_opt_type_t;

typedef union adm_opt_value_u {
    uint64_t u;
    uint64_t ms;
    bool b;
    const char *s;
} adm_opt_value_t;

/*
 * One row of a table of flags declared outside this module (Fluent Bit's config_map, nginx's
 * ngx_command_t); a table ends with a row whose name is NULL. --help shows a row as
 * "NAME PLACEHOLDER" (N, DURATION or VALUE by type), then "OWNER: HELP (default DEF)".
 */
typedef struct adm_option_s {
    const char *name; /* with its dashes: "--default-not-ready-toleration-seconds" */
    adm_opt_type_t type;
    const char *def;   /* the default as it would be written after the flag; NULL: none (0, false, NULL) */
    uint64_t min, max; /* ADM_OPT_UINT: the bounds */
    const char *help;
} adm_option_t;

/* A declared flag and its value (private to options.c: use adm_options_values). */
typedef struct adm_declared_s {
    const char *owner;       /* who declared it, e.g. "DefaultTolerationSeconds" */
    const adm_option_t *row; /* in the declarer's table */
    adm_opt_value_t value;   /* the default until the flag is given */
} adm_declared_t;

typedef struct adm_resolve_s {
    char host[256];
    uint16_t port;
    struct sockaddr_storage addr; /* the port set to port */
} adm_resolve_t;

typedef struct adm_options_s {
    struct sockaddr_storage listen; /* --listen */
    bool has_health_listen;
    struct sockaddr_storage health_listen; /* --health-listen */
    bool has_metrics_listen;
    struct sockaddr_storage metrics_listen; /* --metrics-listen */
    const char *tls_cert_file;              /* --tls-cert-file */
    const char *tls_key_file;               /* --tls-private-key-file */
    const char *self_signed_ca_out;         /* --self-signed-ca-out */
    const char *client_ca_file;             /* --client-ca-file */
    bool insecure_http;                     /* --insecure-http */
    uint64_t idle_timeout_ms;               /* --idle-timeout */
    uint64_t deadline_margin_ms;            /* --deadline-margin */
    uint64_t max_request_bytes;             /* --max-request-bytes */
    uint64_t max_connections;               /* --max-connections */
    uint64_t workers;                       /* --workers: processes serving (D12) */
    uint64_t shutdown_delay_ms;             /* --shutdown-delay */
    uint64_t shutdown_grace_ms;             /* --shutdown-grace */
    char enable_plugins[2048];              /* --enable-admission-plugins, repeated flags joined by commas */
    char disable_plugins[2048];             /* --disable-admission-plugins */
    const char *admission_config_file;      /* --admission-control-config-file */
    const char *webhook_configs[ADM_MAX_PATHS]; /* --webhook-config, in the order given */
    size_t nwebhook_configs;
    const char *cluster_states[ADM_MAX_PATHS]; /* --cluster-state */
    size_t ncluster_states;
    const char *kubeconfig; /* --kubeconfig: cluster state by list+watch from this API server */
    bool in_cluster;        /* --in-cluster: the same from the pod's service account */
    adm_resolve_t resolve[ADM_MAX_RESOLVE]; /* --resolve HOST:PORT:ADDR[,ADDR]: one entry per address */
    size_t nresolve;
    bool allow_insecure_webhook_urls;          /* --allow-insecure-webhook-urls */
    const char *webhook_circuit_breaker;       /* --webhook-circuit-breaker K/COOLDOWN or off; NULL: off */
    adm_log_format_t log_format;               /* --log-format */
    int verbosity;                             /* --v */
    adm_declared_t declared[ADM_MAX_DECLARED]; /* adm_options_declare, in the order declared */
    size_t ndeclared;
} adm_options_t;

typedef enum adm_options_action_e {
    ADM_OPTIONS_RUN,          /* start the server */
    ADM_OPTIONS_HELP,         /* --help was given */
    ADM_OPTIONS_VERSION,      /* --version was given */
    ADM_OPTIONS_LIST_PLUGINS, /* --list-plugins was given */
} adm_options_action_t;

/** Fills the defaults of INTERFACE.md; no declared flags yet. */
void adm_options_defaults(adm_options_t *o);

/**
 * Declares the flags of rows for owner, so that adm_options_parse takes them and
 * adm_options_usage lists them; each holds its default until given. rows is retained: it must
 * outlive o (a static table). Declaring a table again changes nothing. Returns 0, or ADM_EINVAL
 * with one line in err when a row cannot be declared (its name is not "--..." or is taken, its
 * default is not a valid value, more than ADM_MAX_DECLARED in all): a mistake in the table.
 */
int adm_options_declare(adm_options_t *o, const char *owner, const adm_option_t *rows, char *err,
                        size_t err_len);

/** The rows of a table, the row whose name is NULL not counted; 0 for rows == NULL. */
size_t adm_options_count(const adm_option_t *rows);

/**
 * The values of the flags of rows, into out (adm_options_count(rows) of them): for each row, what
 * the command line gave, else its default, also when rows was never declared in o or o is NULL
 * (a chain made by a test or a tool).
 */
void adm_options_values(const adm_options_t *o, const adm_option_t *rows, adm_opt_value_t *out);

/**
 * Parses argv (argv[0] is the program). Accepts "--flag value" and "--flag=value". Returns 0 and
 * sets *action, or ADM_EINVAL with one line in err naming the flag and the problem.
 */
int adm_options_parse(adm_options_t *o, int argc, char **argv, adm_options_action_t *action, char *err,
                      size_t err_len);

/** Writes the --help text: the built-in flags and those declared in o. */
void adm_options_usage(const adm_options_t *o, FILE *out);

#endif

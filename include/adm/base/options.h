/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's command line. Flag names follow kube-apiserver where the concept exists and are listed in
 * ../shared/INTERFACE.md; parsing is strict and every error is one line naming the flag.
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
/* --resolve entries at most. */
#define ADM_MAX_RESOLVE 32

typedef struct adm_resolve_s {
    char host[256];
    uint16_t port;
    struct sockaddr_storage addr; /* the port set to port */
} adm_resolve_t;

typedef struct adm_options_s {
    struct sockaddr_storage listen;      /* --listen */
    bool has_health_listen;
    struct sockaddr_storage health_listen; /* --health-listen */
    bool has_metrics_listen;
    struct sockaddr_storage metrics_listen; /* --metrics-listen */
    const char *tls_cert_file;           /* --tls-cert-file */
    const char *tls_key_file;            /* --tls-private-key-file */
    const char *self_signed_ca_out;      /* --self-signed-ca-out */
    const char *client_ca_file;          /* --client-ca-file */
    bool insecure_http;                  /* --insecure-http */
    uint64_t idle_timeout_ms;            /* --idle-timeout */
    uint64_t deadline_margin_ms;         /* --deadline-margin */
    uint64_t max_request_bytes;          /* --max-request-bytes */
    uint64_t max_connections;            /* --max-connections */
    uint64_t shutdown_delay_ms;          /* --shutdown-delay */
    uint64_t shutdown_grace_ms;          /* --shutdown-grace */
    char enable_plugins[2048];           /* --enable-admission-plugins, repeated flags joined by commas */
    char disable_plugins[2048];          /* --disable-admission-plugins */
    const char *admission_config_file;   /* --admission-control-config-file */
    const char *webhook_configs[ADM_MAX_PATHS]; /* --webhook-config, in the order given */
    size_t nwebhook_configs;
    const char *cluster_states[ADM_MAX_PATHS];  /* --cluster-state */
    size_t ncluster_states;
    adm_resolve_t resolve[ADM_MAX_RESOLVE];     /* --resolve HOST:PORT:ADDR */
    size_t nresolve;
    bool allow_insecure_webhook_urls;    /* --allow-insecure-webhook-urls */
    int64_t default_not_ready_toleration_seconds;   /* --default-not-ready-toleration-seconds */
    int64_t default_unreachable_toleration_seconds; /* --default-unreachable-toleration-seconds */
    adm_log_format_t log_format;         /* --log-format */
    int verbosity;                       /* --v */
} adm_options_t;

typedef enum adm_options_action_e {
    ADM_OPTIONS_RUN,     /* start the server */
    ADM_OPTIONS_HELP,    /* --help was given */
    ADM_OPTIONS_VERSION, /* --version was given */
    ADM_OPTIONS_LIST_PLUGINS, /* --list-plugins was given */
} adm_options_action_t;

/** Fills the defaults of INTERFACE.md. */
void adm_options_defaults(adm_options_t *o);

/**
 * Parses argv (argv[0] is the program). Accepts "--flag value" and "--flag=value". Returns 0 and
 * sets *action, or ADM_EINVAL with one line in err naming the flag and the problem.
 */
int adm_options_parse(adm_options_t *o, int argc, char **argv, adm_options_action_t *action, char *err,
                      size_t err_len);

/** Writes the --help text. */
void adm_options_usage(FILE *out);

#endif

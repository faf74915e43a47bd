/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the API server is and how to talk to it: --kubeconfig F (client-go's clientcmd, the
 * current context only) or --in-cluster (client-go's rest.InClusterConfig), resolved at start into
 * one flat description the API client uses: server URL, trust, client certificate, bearer token
 * and token file. Everything is read and checked here, so a configuration that cannot be used is
 * one line naming the file and the field (exit 2) instead of a failure on the first call.
 *
 * What admitd supports of a kubeconfig: clusters[].cluster.{server, certificate-authority(-data),
 * insecure-skip-tls-verify, tls-server-name}; users[].user.{token, tokenFile,
 * client-certificate(-data), client-key(-data)}; contexts[].context.{cluster, user, namespace};
 * current-context. Relative file paths are relative to the kubeconfig's folder, as clientcmd
 * resolves them. exec and auth-provider plugins, basic auth and proxy-url are refused with one
 * line each: they need a Go runtime, were removed from kube-apiserver, or are not implemented.
 * The file itself is read by the one kubeconfig reader (adm/cluster/kubeconfig_file.h); this
 * module resolves the current context from it. A reload (the informer's) loads again and swaps.
 */
#ifndef ADM_KUBECONFIG_H
#define ADM_KUBECONFIG_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The service-account folder of --in-cluster; ADM_SERVICEACCOUNT_DIR overrides it (tests). */
#define ADM_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct adm_kube_config_s {
    adm_arena_t *arena;          /* owns every string below */
    const char *source;          /* the kubeconfig path, or "in-cluster", for messages */
    const char *server;          /* "https://HOST:PORT[/prefix]" as given */
    bool tls;                    /* https (http only for tests against a plain server) */
    char host[256];              /* without brackets for IPv6 */
    uint16_t port;               /* 443 when the URL has none */
    const char *path_prefix;     /* "" or "/prefix" (no trailing slash): goes before /api */
    const char *tls_server_name; /* the name TLS verifies; NULL: host */
    bool insecure;               /* insecure-skip-tls-verify */
    const char *ca_pem;          /* PEM with its NUL (ca_pem_len counts it); NULL: system CAs */
    size_t ca_pem_len;
    const char *cert_pem; /* client certificate and key, PEM with their NULs; NULL: none */
    size_t cert_pem_len;
    const char *key_pem;
    size_t key_pem_len;
    const char *token;      /* the bearer token (a static one, or token_file's first read); NULL */
    const char *token_file; /* absolute or as given; re-read as client-go does (token_source.h) */
    const char *namespace_; /* the context's namespace, or in-cluster's namespace file; "default" */
    const char **files;     /* the kubeconfig and every file it named that was read (or tried): what a
                               reload watches; in-cluster, the token and ca.crt */
    size_t nfiles;
} adm_kube_config_t;

/**
 * Reads the kubeconfig at path and resolves its current context. Returns 0 and *out (free with
 * adm_kube_config_free), or ADM_EINVAL / ADM_EIO / ADM_ENOMEM with one line in err naming the
 * file and the field, e.g. "kc.yaml: users[0].user.exec: exec credential plugins are not supported
 * by admitd (use token, tokenFile or a client certificate)".
 */
int adm_kube_config_load(const char *path, adm_kube_config_t **out, char *err, size_t err_len);

/**
 * rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the token file
 * and ca.crt of the service-account folder (ADM_SERVICEACCOUNT_DIR, or the environment variable
 * of that name). As client-go: both variables are required, the token must be readable, and a
 * ca.crt that cannot be loaded is logged and the system CAs used. Errors as for load.
 */
int adm_kube_config_in_cluster(adm_kube_config_t **out, char *err, size_t err_len);

/** Frees c (secrets zeroized first). NULL is a no-op. */
void adm_kube_config_free(adm_kube_config_t *c);

#endif

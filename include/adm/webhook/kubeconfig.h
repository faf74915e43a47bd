/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decision D13: the client credentials of webhook calls, from the kubeConfigFile of a
 * WebhookAdmissionConfiguration (the plugin configuration of MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook). As kube-apiserver (apiserver/pkg/util/webhook/authentication.go),
 * only the kubeconfig's users matter, and a user's name is the pattern of the servers it is for:
 * "host:port", "host" (port 443 only), "*.suffix" forms and "*", with the current context's user
 * as the last resort. Each user gives a bearer token (token, or tokenFile read at load), a basic
 * username/password, and a client certificate and key (files or inline -data).
 *
 * What admitd cannot do is refused when the file is read, in one line, instead of calling
 * webhooks without the credentials the operator meant: exec and auth-provider plugins, and
 * impersonation. A user whose files cannot be read is not refused: as in kube, every call that
 * would use it fails ("could not get REST client: ...") and failurePolicy applies. The file is
 * read by the one kubeconfig reader (adm/cluster/kubeconfig_file.h); this module makes the
 * credentials of its users and matches them to webhooks.
 */
#ifndef ADM_WEBHOOK_KUBECONFIG_H
#define ADM_WEBHOOK_KUBECONFIG_H

#include "adm/base/arena.h"

#include <stddef.h>

typedef struct adm_kube_user_s {
    const char *name;          /* the server pattern */
    const char *authorization; /* the Authorization header's value ("Bearer T", "Basic B"), or NULL */
    const char *cert_pem;      /* the client certificate (PEM or DER text), or NULL */
    const char *key_pem;       /* its key, or NULL */
    size_t cert_pem_len, key_pem_len;
    const char *cert_label; /* where the certificate came from, for TLS errors */
    const char *error;      /* why calls with this user fail (a file that cannot be read), or NULL */
} adm_kube_user_t;

typedef struct adm_kubeconfig_s {
    adm_kube_user_t *users;
    size_t nusers;
    const adm_kube_user_t *current; /* the current context's user, or NULL */
    const char **files;             /* the kubeconfig and every file it names: what a reload watches */
    size_t nfiles;
} adm_kubeconfig_t;

/**
 * Reads the kubeconfig at path (YAML or JSON); relative file names in it are taken from its
 * folder, as client-go does. Memory (secrets included) comes from a. Returns 0, or ADM_EINVAL /
 * ADM_EIO with one line in err naming the file and the field, or ADM_ENOMEM.
 */
int adm_kubeconfig_load(adm_arena_t *a, const char *path, adm_kubeconfig_t *out, char *err, size_t err_len);

/**
 * The user for a webhook at host_port ("name.namespace.svc:443" for a service, the URL's host and
 * port, with ":443" added when the URL has none), in kube's order: the exact name; "*." + each
 * shorter dot-suffix of host_port; with port 443, the same two for the host alone; "*"; the
 * current context's user. NULL: call without credentials.
 */
const adm_kube_user_t *adm_kubeconfig_user_for(const adm_kubeconfig_t *kc, const char *host_port);

#endif

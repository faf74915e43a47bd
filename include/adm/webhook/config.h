/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --webhook-config: MutatingWebhookConfiguration / ValidatingWebhookConfiguration objects
 * (admissionregistration.k8s.io/v1) read from files and folders, validated as kube-apiserver
 * validates them on create, with the v1 defaults applied, flattened into the two hook lists the
 * dispatcher walks (webhook.h).
 *
 * Strictness: kube-apiserver decodes these objects with strict field validation off unless the
 * client asks for it (kubectl only warns), so an unknown field is dropped there. admitd refuses
 * unknown and duplicate fields instead, at every level of the object (top level, webhooks[],
 * clientConfig, service, rules[], selectors and their requirements): a typo such as
 * "namespaceSelectr" or "objectSelector.matchLabel" would otherwise widen the set of requests a
 * webhook sees, and a typo in a policy field would silently fall back to its default. Only
 * metadata is free-form (objects exported with kubectl carry uid, managedFields and so on), apart
 * from metadata.name which must be a DNS-1123 subdomain. A validating webhook's
 * reinvocationPolicy is therefore an unknown field, as in the Go type.
 *
 * Validation follows kube-apiserver's create path (spec/webhook-dispatch.md section 8):
 * admissionReviewVersions must name v1 or v1beta1, unique webhook names. One exception:
 * sideEffects Some and Unknown, which kube-apiserver keeps on objects from v1beta1 days, load with
 * a warning (dry-run requests to such a webhook are then refused, as kube-apiserver refuses them).
 * matchConditions (CEL) are refused while admitd has no CEL engine: a condition ignored would call the
 * webhook for requests it excluded.
 *
 * Only the first problem found is reported, as one line: "FILE: KIND \"NAME\": FIELD: PROBLEM",
 * with the field path and problem text of kube-apiserver's field errors where there is one.
 *
 * Files, documents, lists and the set are config_load.c; the validation of each webhook is
 * config_validate.c; both decode members through config_decode.c.
 */
#ifndef ADM_WEBHOOK_CONFIG_H
#define ADM_WEBHOOK_CONFIG_H

#include "adm/base/arena.h"
#include "adm/webhook/webhook.h"

#include <stdbool.h>
#include <stddef.h>

/* Largest configuration file read (a guard against a mistaken path, not a format limit). */
#define ADM_WEBHOOK_CONFIG_MAX_BYTES (16u << 20)

typedef struct adm_webhook_set_s {
    adm_arena_t *arena; /* owns everything below, including the parsed documents strings point into */
    /* hook lists: configurations sorted by metadata.name (byte order, stable), webhooks in listed
     * order, hooks[i].index == i */
    adm_webhook_t *mutating;
    size_t nmutating;
    adm_webhook_t *validating;
    size_t nvalidating;
    /* one line each, for the caller to log (e.g. matchPolicy Equivalent needing a conversion) */
    const char **warnings;
    size_t nwarnings;
} adm_webhook_set_t;

/**
 * Loads paths[0 .. npaths-1]: each a file, or a folder whose regular files named *.yaml, *.yml or
 * *.json are read in name order (not recursively; names starting with "." are skipped, which also
 * skips the "..data" links of a mounted ConfigMap). A file holds YAML documents separated by
 * "---", or JSON; each document is one configuration, or a List (kind List, apiVersion v1, or
 * kind MutatingWebhookConfigurationList / ValidatingWebhookConfigurationList) whose items are
 * configurations. Two configurations of the same kind with the same name are an error, even
 * across files. allow_insecure_urls also permits http:// in clientConfig.url.
 *
 * Returns 0 with *out set (free it with adm_webhook_set_free), or ADM_EINVAL with one line in err
 * naming the file, the object and the field, ADM_EIO when a path cannot be read (err says why),
 * or ADM_ENOMEM. *out is NULL on failure.
 */
int adm_webhook_set_load(const char *const *paths, size_t npaths, bool allow_insecure_urls,
                         adm_webhook_set_t **out, char *err, size_t err_len);

/** Frees the set and everything it points to. NULL is a no-op. */
void adm_webhook_set_free(adm_webhook_set_t *set);

#endif

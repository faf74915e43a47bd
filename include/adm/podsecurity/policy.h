/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod Security levels and versions, the namespace labels that choose them, and the plugin's
 * PodSecurityConfiguration (defaults and exemptions), as pod-security-admission's api package and
 * admission/api define them.
 */
#ifndef ADM_PSA_POLICY_H
#define ADM_PSA_POLICY_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

typedef enum adm_psa_level_e { ADM_PSA_PRIVILEGED = 0, ADM_PSA_BASELINE, ADM_PSA_RESTRICTED } adm_psa_level_t;

/* The newest policy version the checks know (v1.37): `latest` and later versions evaluate as it. */
#define ADM_PSA_MAX_MINOR 37

/* A version "v1.<minor>" or "latest"; the major is always 1 (the labels accept nothing else). */
typedef struct adm_psa_version_s {
    bool latest;
    int64_t minor;
} adm_psa_version_t;

typedef struct adm_psa_lv_s {
    adm_psa_level_t level;
    adm_psa_version_t version;
} adm_psa_lv_t;

typedef struct adm_psa_policy_s {
    adm_psa_lv_t enforce, audit, warn;
} adm_psa_policy_t;

/* The PodSecurityConfiguration: defaults and exemption lists (arena or configure-time storage). */
typedef struct adm_psa_config_s {
    adm_psa_policy_t defaults;
    const char **usernames, **namespaces, **runtime_classes;
    size_t nusernames, nnamespaces, nruntime_classes;
} adm_psa_config_t;

/* Label keys. */
#define ADM_PSA_LABEL_PREFIX "pod-security.kubernetes.io/"

/** "privileged", "baseline", "restricted". */
const char *adm_psa_level_name(adm_psa_level_t l);

/** api.ParseLevel: false (and *out restricted) for anything but the three names. */
bool adm_psa_parse_level(const char *s, adm_psa_level_t *out);

/** api.ParseVersion: "latest" or v1.N without leading zeros; false (and *out latest) otherwise. */
bool adm_psa_parse_version(const char *s, adm_psa_version_t *out);

/**
 * "restricted:v1.25" / "baseline:latest", the label text (not clamped): static for latest, else in
 * the arena (NULL when full). It never needs quoting beyond its quotes: letters, ':', '.', digits.
 */
const char *adm_psa_lv_string(adm_arena_t *a, const adm_psa_lv_t *lv);

/** LevelVersion.Equivalent: both privileged, or same level and version. */
bool adm_psa_lv_equivalent(const adm_psa_lv_t *a, const adm_psa_lv_t *b);

/** Same level and same version (the cache key of EvaluatePod). */
bool adm_psa_lv_equal(const adm_psa_lv_t *a, const adm_psa_lv_t *b);

/** The minor version the checks evaluate: latest and anything newer than the newest known clamp. */
int adm_psa_effective_minor(const adm_psa_version_t *v);

/**
 * api.PolicyToEvaluate: the policy for a namespace with labels (an object of strings, or NULL),
 * starting from defaults. Invalid labels fall back as kube's do (enforce to restricted, audit and
 * warn to privileged, versions to latest) and each adds its field error text to errs ("" when
 * none; one error alone, several as "[a, b]": utilerrors.Aggregate). *errs is NULL when the arena
 * is exhausted.
 */
adm_psa_policy_t adm_psa_policy_resolve(adm_arena_t *a, yyjson_val *labels, const adm_psa_policy_t *defaults,
                                        const char **errs);

/**
 * The field errors of the labels alone, one per invalid label in kube's order, as the texts
 * field.Invalid prints (`metadata.labels[KEY]: Invalid value: "V": must be ...`), plus each
 * error's parts for a Status cause. Returns the number (≤ 6) or ADM_ENOMEM.
 */
typedef struct adm_psa_label_error_s {
    const char *field;  /* metadata.labels[pod-security.kubernetes.io/enforce] */
    const char *value;  /* the label value */
    const char *detail; /* must be one of privileged, baseline, restricted */
    const char *text;   /* the whole error */
} adm_psa_label_error_t;
int adm_psa_label_errors(adm_arena_t *a, yyjson_val *labels, adm_psa_label_error_t out[6]);

/** PodSecurity.FullyPrivileged: every mode privileged. */
bool adm_psa_policy_fully_privileged(const adm_psa_policy_t *p);

/** Policy.Equivalent: each mode equivalent. */
bool adm_psa_policy_equivalent(const adm_psa_policy_t *a, const adm_psa_policy_t *b);

/**
 * Decodes a PodSecurityConfiguration (apiVersion pod-security.admission.config.k8s.io/v1, v1beta1
 * or v1alpha1; NULL: all defaults) into cfg, with kube's defaulting and validation. Storage is
 * malloc'd; free with adm_psa_config_free. Returns 0, or ADM_EINVAL/ADM_ENOMEM with one line in
 * err ("defaults.enforce: Invalid value: \"x\": must be one of privileged, baseline, restricted").
 */
int adm_psa_config_decode(yyjson_val *config, adm_psa_config_t *cfg, char *err, size_t err_len);
void adm_psa_config_free(adm_psa_config_t *cfg);

/** Exemption lookups (exact match). */
bool adm_psa_exempt_namespace(const adm_psa_config_t *cfg, const char *ns);
bool adm_psa_exempt_user(const adm_psa_config_t *cfg, const char *user);
bool adm_psa_exempt_runtime_class(const adm_psa_config_t *cfg, const char *rc);

#endif

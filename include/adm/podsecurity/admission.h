/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity's admission decisions (pod-security-admission's admission package) on the chain's
 * request attributes: pods, pod controllers and namespaces, with kube's answers (denials,
 * warnings, audit annotations `pod-security.kubernetes.io/<key>`).
 */
#ifndef ADM_PSA_ADMISSION_H
#define ADM_PSA_ADMISSION_H

#include "adm/admission/admission.h"
#include "adm/podsecurity/policy.h"

/**
 * ValidatePod / ValidatePodController / ValidateNamespace, picked by the request's resource;
 * requests for other resources are admitted untouched. now_ns is a monotonic clock for the
 * namespace check's time limit. Returns ADM_OK, ADM_DECLINED with st, or ADM_ENOMEM.
 */
int adm_psa_admit(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                  void *clock_arg, adm_status_t *st);

/**
 * ValidateNamespace (the namespace request itself; adm_psa_admit dispatches to it), the existing
 * pods read from the request's cluster state (adm_psa_check_namespace_pods) within kube's 1 s.
 */
int adm_psa_validate_namespace(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                               void *clock_arg, adm_status_t *st);

/* Whether a namespace request's existing pods are to be evaluated, and against what. */
typedef struct adm_psa_pods_check_s {
    bool needed;
    const char *namespace_; /* the namespace's name (metadata.name) */
    adm_psa_lv_t enforce;   /* the new enforce level */
} adm_psa_pods_check_t;

/**
 * ValidateNamespace up to its existing pods, for a caller that finds them elsewhere (a live LIST,
 * namespace_pods.h): ADM_OK, with check->needed when the pods are to be evaluated against
 * check->enforce (the warnings to add come from EvaluatePodsInNamespace then), ADM_DECLINED with
 * st, or ADM_ENOMEM.
 */
int adm_psa_namespace_decide(const adm_psa_config_t *cfg, adm_attrs_t *attrs, adm_status_t *st,
                             adm_psa_pods_check_t *check);

/** Adds audit annotation pod-security.kubernetes.io/<key> (value in the arena or static). */
void adm_psa_annotate(adm_attrs_t *attrs, const char *key, const char *value);

#endif

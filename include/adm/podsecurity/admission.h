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

/* The most pods a namespace label change is checked against, and for how long (kube's limits). */
#define ADM_PSA_NAMESPACE_MAX_PODS 3000
#define ADM_PSA_NAMESPACE_CHECK_NS 1000000000ull

/**
 * ValidatePod / ValidatePodController / ValidateNamespace, picked by the request's resource;
 * requests for other resources are admitted untouched. now_ns is a monotonic clock for the
 * namespace check's time limit. Returns ADM_OK, ADM_DECLINED with st, or ADM_ENOMEM.
 */
int adm_psa_admit(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                  void *clock_arg, adm_status_t *st);

/**
 * EvaluatePodsInNamespace: the warnings for the pods of ns (from the request's cluster state)
 * against a new enforce level, in kube's order and words. Returns the number of warnings added to
 * attrs, or ADM_ENOMEM.
 */
int adm_psa_check_namespace_pods(const adm_psa_config_t *cfg, adm_attrs_t *attrs, const char *ns,
                                 const adm_psa_lv_t *enforce, uint64_t (*now_ns)(void *), void *clock_arg);

/** ValidateNamespace (the namespace request itself; adm_psa_admit dispatches to it). */
int adm_psa_validate_namespace(const adm_psa_config_t *cfg, adm_attrs_t *attrs, uint64_t (*now_ns)(void *),
                               void *clock_arg, adm_status_t *st);

/** Adds audit annotation pod-security.kubernetes.io/<key> (value in the arena or static). */
void adm_psa_annotate(adm_attrs_t *attrs, const char *key, const char *value);

#endif

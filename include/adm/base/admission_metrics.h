/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission metrics of INTERFACE.md, beside the server's own (adm/server/metrics.h):
 *   admitd_admission_step_duration_seconds{type,operation,rejected}               histogram
 *   admitd_admission_controller_duration_seconds{name,type,operation,rejected}    histogram, plugins
 *   admitd_webhook_admission_duration_seconds{name,type,operation,rejected}       histogram, webhooks
 *   admitd_webhook_rejection_count{name,type,operation,error_type,rejection_code} counter
 *   admitd_webhook_fail_open_count{name,type}                                     counter
 *   admitd_connections{side="client"}                                             gauge
 *   admitd_config_reloads_total{result}                                           counter
 *   admitd_pod_security_evaluations_total{decision,policy_level,policy_version,mode,request_operation,
 *                                         resource,subresource}                   counter
 *   admitd_pod_security_errors_total{fatal,request_operation,resource,subresource} counter
 * type is "admit" (mutating) or "validate"; operation CREATE, UPDATE, DELETE or CONNECT; error_type
 * kube-apiserver's calling_webhook_error, apiserver_internal_error or no_error.
 *
 * The registry is process-wide, as the log settings are (adm/base/log.h): the chain, the webhook
 * calls and the reload path all record into it whatever object they belong to, so a reload that
 * builds a new chain keeps counting in the same series, and admitd has one loop per process, so
 * nothing here locks. Under --workers each worker counts in its slot of the shared memory
 * (adm/base/shared_metrics.h) and rendering sums the slots; names are interned there once for all.
 * Labels are bounded: a name is a plugin or webhook name from the configuration, interned once; past
 * ADM_METRICS_NAMES distinct names, further ones are counted under name="other". Rejection codes are HTTP
 * codes (100-599) or 0; others count as code 0.
 *
 * Histogram buckets start at 5 µs (a built-in plugin takes microseconds; kube-apiserver's start at
 * 5 ms) and end at 10 s. Recording is an index lookup and a few increments; the first observation
 * of a name allocates its series once.
 */
#ifndef ADM_ADMISSION_METRICS_H
#define ADM_ADMISSION_METRICS_H

#include "adm/base/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADM_METRICS_NAMES 512
#define ADM_METRICS_OPERATIONS 4 /* adm_operation_t: CREATE, UPDATE, DELETE, CONNECT */

typedef enum adm_mx_type_e { ADM_MX_ADMIT, ADM_MX_VALIDATE } adm_mx_type_t;

typedef enum adm_mx_error_e {
    ADM_MX_CALLING_WEBHOOK_ERROR,
    ADM_MX_APISERVER_INTERNAL_ERROR,
    ADM_MX_NO_ERROR,
} adm_mx_error_t;

/**
 * The id of a plugin or webhook name (interned; the text is copied), for the calls below. A name
 * beyond the bound, or a NULL one, gets the id of "other". Never fails.
 */
int adm_metrics_name(const char *name);

/** One phase of one request through the chain, from its first hook to its last. */
void adm_metrics_step(adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns);

/** One built-in plugin's hook (name id from adm_metrics_name). */
void adm_metrics_controller(int name, adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns);

/** One downstream webhook call, whatever its outcome. */
void adm_metrics_webhook(int name, adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns);

/** A webhook answer that rejected the request (a denial, a fail-closed failure, a refusal). */
void adm_metrics_webhook_rejection(int name, adm_mx_type_t type, unsigned operation, adm_mx_error_t error,
                                   int code);

/** A call failure ignored under failurePolicy Ignore. */
void adm_metrics_webhook_fail_open(int name, adm_mx_type_t type);

/** A configuration reload attempt: result="success" when ok, else "failure". */
void adm_metrics_config_reload(bool ok);

/**
 * Where admitd_connections{side="client"} is read at each scrape: fn(arg) is the number of open
 * downstream connections. fn NULL: the gauge is 0. Set by whoever owns the client pools.
 */
void adm_metrics_client_gauge(size_t (*fn)(void *arg), void *arg);

/**
 * Under --workers (D12) only: an open (+1) or closed (-1) downstream connection of this worker,
 * summed over the workers as admitd_connections{side="client"} (one process reads its pools instead,
 * adm_metrics_client_gauge).
 */
void adm_metrics_client_conn(int delta);

/**
 * Under --workers, in the parent before the configuration loads (after adm_shm_create): names are
 * interned in the shared memory, so every worker numbers them alike. Returns 0 or ADM_ENOMEM.
 */
int adm_metrics_share(void);

/**
 * In a worker after adm_shm_select: from now on this process counts in its slot, and a scrape sums
 * every worker's slot. A restarted worker goes on with its slot's counts.
 */
void adm_metrics_attach_worker(void);

/** The PodSecurity half of adm_metrics_attach_worker. */
void adm_metrics_attach_worker_psa(void);

/*
 * PodSecurity's counters, kube's pod_security_evaluations_total and pod_security_errors_total
 * (pod-security-admission's metrics package) with the same label values: decision allow|deny, mode
 * enforce|warn|audit, policy_level privileged|baseline|restricted, policy_version "latest" (also
 * for privileged), "v1.N", or "future" past the newest version the checks know, request_operation
 * create|update, resource pod|controller|namespace. The series are fixed arrays indexed by those
 * values, so recording never allocates; to keep them bounded, a subresource other than "",
 * "ephemeralcontainers" and "resize" (the ones a pod evaluation sees) is counted as "other", and a
 * minor version of ADM_MX_PSA_MINORS or more as "future".
 */
#define ADM_MX_PSA_MINORS 48
#define ADM_MX_PSA_LATEST (-1) /* policy versions besides a minor number */
#define ADM_MX_PSA_FUTURE (-2)

typedef enum adm_mx_psa_decision_e { ADM_MX_PSA_ALLOW, ADM_MX_PSA_DENY } adm_mx_psa_decision_t;
typedef enum adm_mx_psa_mode_e { ADM_MX_PSA_ENFORCE, ADM_MX_PSA_WARN, ADM_MX_PSA_AUDIT } adm_mx_psa_mode_t;
typedef enum adm_mx_psa_resource_e {
    ADM_MX_PSA_POD,
    ADM_MX_PSA_CONTROLLER,
    ADM_MX_PSA_NAMESPACE,
} adm_mx_psa_resource_t;

/**
 * One policy evaluation. level: 0 privileged, 1 baseline, 2 restricted; version: a minor number,
 * ADM_MX_PSA_LATEST or ADM_MX_PSA_FUTURE; operation: adm_operation_t (only CREATE and UPDATE count).
 */
void adm_metrics_psa_evaluation(adm_mx_psa_decision_t decision, unsigned level, int version,
                                adm_mx_psa_mode_t mode, unsigned operation, adm_mx_psa_resource_t resource,
                                const char *subresource);

/** An error that kept PodSecurity from its normal evaluation (fatal: the request was not evaluated). */
void adm_metrics_psa_error(bool fatal, unsigned operation, adm_mx_psa_resource_t resource,
                           const char *subresource);

/** Appends the two PodSecurity families (called by adm_metrics_render_admission). */
int adm_metrics_render_psa(adm_buf_t *out);

/** Forgets the PodSecurity counts (called by adm_metrics_reset). */
void adm_metrics_reset_psa(void);

/**
 * Appends these families in the text exposition format. Its first line is the client side of
 * admitd_connections, so it goes right after the server's own rendering (adm_metrics_render), which
 * ends with that family's declaration and its server side. Returns 0 or ADM_ENOMEM.
 */
int adm_metrics_render_admission(adm_buf_t *out);

/** Forgets every series and name (tests; and nothing may record meanwhile). */
void adm_metrics_reset(void);

#endif

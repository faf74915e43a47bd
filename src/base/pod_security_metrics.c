/* SPDX-License-Identifier: Apache-2.0 */
/* PodSecurity's evaluation and error counters (admission_metrics.h): fixed arrays and their rendering. */
#include "adm/base/admission_metrics.h"

#include "adm/base/error.h"
#include "adm/base/shared_metrics.h"

#include <stdlib.h>
#include <string.h>

#define NLEVELS 3
#define NVERSIONS (ADM_MX_PSA_MINORS + 2) /* the minors, then latest, then future */
#define V_LATEST ADM_MX_PSA_MINORS
#define V_FUTURE (ADM_MX_PSA_MINORS + 1)
#define NMODES 3
#define NOPS 2 /* CREATE, UPDATE: the only operations PodSecurity handles */
#define NRESOURCES 3
#define NSUBS 4

static const char *const decision_names[] = {"allow", "deny"};
static const char *const level_names[NLEVELS] = {"privileged", "baseline", "restricted"};
static const char *const mode_names[NMODES] = {"enforce", "warn", "audit"};
static const char *const op_names[NOPS] = {"create", "update"};
static const char *const resource_names[NRESOURCES] = {"pod", "controller", "namespace"};
static const char *const sub_names[NSUBS] = {"", "ephemeralcontainers", "resize", "other"};

/* Nothing but counters, so the sum of two is the sum of their words (sum_workers). */
typedef struct psa_counts_s {
    uint64_t evaluations[2][NLEVELS][NVERSIONS][NMODES][NOPS][NRESOURCES][NSUBS];
    uint64_t errors[2][NOPS][NRESOURCES][NSUBS];
} psa_counts_t;

static psa_counts_t local_counts;
static psa_counts_t *counts = &local_counts; /* under --workers, this worker's slot */

static size_t sub_index(const char *subresource)
{
    if (subresource == NULL) {
        return 0;
    }
    for (size_t i = 0; i < NSUBS - 1; i++) {
        if (strcmp(subresource, sub_names[i]) == 0) {
            return i;
        }
    }
    return NSUBS - 1;
}

static size_t version_index(unsigned level, int version)
{
    if (level == 0 || version == ADM_MX_PSA_LATEST) {
        return V_LATEST; /* privileged is always effectively latest, as kube labels it */
    }
    if (version < 0 || version >= ADM_MX_PSA_MINORS) {
        return V_FUTURE;
    }
    return (size_t)version;
}

void adm_metrics_psa_evaluation(adm_mx_psa_decision_t decision, unsigned level, int version,
                                adm_mx_psa_mode_t mode, unsigned operation, adm_mx_psa_resource_t resource,
                                const char *subresource)
{
    if ((unsigned)decision >= 2 || level >= NLEVELS || (unsigned)mode >= NMODES || operation >= NOPS ||
        (unsigned)resource >= NRESOURCES) {
        return;
    }
    counts->evaluations[decision][level][version_index(level, version)][mode][operation][resource]
                       [sub_index(subresource)]++;
}

void adm_metrics_psa_error(bool fatal, unsigned operation, adm_mx_psa_resource_t resource,
                           const char *subresource)
{
    if (operation >= NOPS || (unsigned)resource >= NRESOURCES) {
        return;
    }
    counts->errors[fatal ? 1 : 0][operation][resource][sub_index(subresource)]++;
}

static int append_version(adm_buf_t *out, size_t v)
{
    if (v == V_LATEST) {
        return adm_buf_append_str(out, "latest");
    }
    if (v == V_FUTURE) {
        return adm_buf_append_str(out, "future");
    }
    return adm_buf_appendf(out, "v1.%zu", v);
}

static int render_evaluations(adm_buf_t *out, const psa_counts_t *c)
{
    int err = adm_buf_append_str(out, "# HELP admitd_pod_security_evaluations_total Number of policy "
                                      "evaluations that occurred, not counting ignored or exempt requests.\n"
                                      "# TYPE admitd_pod_security_evaluations_total counter\n");

    for (size_t d = 0; d < 2; d++) {
        for (size_t l = 0; l < NLEVELS; l++) {
            for (size_t v = 0; v < NVERSIONS; v++) {
                for (size_t m = 0; m < NMODES; m++) {
                    for (size_t op = 0; op < NOPS; op++) {
                        for (size_t r = 0; r < NRESOURCES; r++) {
                            for (size_t s = 0; s < NSUBS; s++) {
                                uint64_t n = c->evaluations[d][l][v][m][op][r][s];

                                if (n == 0) {
                                    continue;
                                }
                                err |=
                                    adm_buf_appendf(out,
                                                    "admitd_pod_security_evaluations_total{decision=\"%s\","
                                                    "policy_level=\"%s\",policy_version=\"",
                                                    decision_names[d], level_names[l]);
                                err |= append_version(out, v);
                                err |=
                                    adm_buf_appendf(out,
                                                    "\",mode=\"%s\",request_operation=\"%s\",resource=\"%s\","
                                                    "subresource=\"%s\"} %llu\n",
                                                    mode_names[m], op_names[op], resource_names[r],
                                                    sub_names[s], (unsigned long long)n);
                            }
                        }
                    }
                }
            }
        }
    }
    return err;
}

static int render_errors(adm_buf_t *out, const psa_counts_t *c)
{
    int err = adm_buf_append_str(out, "# HELP admitd_pod_security_errors_total Number of errors preventing "
                                      "normal evaluation. Non-fatal errors may result in the latest "
                                      "restricted profile being used for evaluation.\n"
                                      "# TYPE admitd_pod_security_errors_total counter\n");

    for (size_t f = 0; f < 2; f++) {
        for (size_t op = 0; op < NOPS; op++) {
            for (size_t r = 0; r < NRESOURCES; r++) {
                for (size_t s = 0; s < NSUBS; s++) {
                    if (c->errors[f][op][r][s] == 0) {
                        continue;
                    }
                    err |= adm_buf_appendf(out,
                                           "admitd_pod_security_errors_total{fatal=\"%s\",request_operation="
                                           "\"%s\",resource=\"%s\",subresource=\"%s\"} %llu\n",
                                           f != 0 ? "true" : "false", op_names[op], resource_names[r],
                                           sub_names[s], (unsigned long long)c->errors[f][op][r][s]);
                }
            }
        }
    }
    return err;
}

void adm_metrics_attach_worker_psa(void)
{
    psa_counts_t *mine = adm_shm_part((unsigned)adm_shm_self(), ADM_SHM_PSA, sizeof(psa_counts_t));

    if (mine != NULL) {
        counts = mine;
    }
}

/* Under --workers: every worker's counts added up, for one scrape. */
static psa_counts_t *sum_workers(void)
{
    psa_counts_t *sum = calloc(1, sizeof(*sum));
    uint64_t *to = (uint64_t *)sum;

    for (unsigned w = 0; sum != NULL && w < adm_shm_workers(); w++) {
        const uint64_t *from = adm_shm_part(w, ADM_SHM_PSA, sizeof(psa_counts_t));

        for (size_t i = 0; from != NULL && i < sizeof(*sum) / sizeof(uint64_t); i++) {
            to[i] += from[i];
        }
    }
    return sum;
}

int adm_metrics_render_psa(adm_buf_t *out)
{
    psa_counts_t *sum = adm_shm_workers() > 0 ? sum_workers() : NULL;
    const psa_counts_t *c = sum != NULL ? sum : counts;
    int err;

    if (adm_shm_workers() > 0 && sum == NULL) {
        return ADM_ENOMEM;
    }
    err = render_evaluations(out, c);
    err |= render_errors(out, c);
    free(sum);
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_metrics_reset_psa(void)
{
    memset(&local_counts, 0, sizeof(local_counts));
}

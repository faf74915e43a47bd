/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The check registry and evaluator (policy/registry.go): every check with its versioned
 * implementations, in kube's order (baseline IDs sorted, then restricted IDs sorted), and the
 * rule that picks, for a level and version, the implementation each check runs, or none.
 */
#include "adm/podsecurity/evaluate.h"

#include "check_internal.h"

#include <pthread.h>
#include <string.h>

typedef struct psa_impl_s {
    int min_minor;
    psa_check_fn fn;
} psa_impl_t;

/* The checks' indexes in checks[] (kube's order), for the overrides. */
enum check_index_e {
    APPARMOR_PROFILE,
    CAPABILITIES_BASELINE,
    HOST_NAMESPACES,
    HOST_PATH_VOLUMES,
    HOST_PORTS,
    HOST_PROBES_AND_HOST_LIFECYCLE,
    PRIVILEGED,
    PROC_MOUNT,
    SELINUX_OPTIONS,
    SECCOMP_PROFILE_BASELINE,
    SYSCTLS,
    WINDOWS_HOST_PROCESS,
    ALLOW_PRIVILEGE_ESCALATION,
    CAPABILITIES_RESTRICTED,
    PROC_MOUNT_RESTRICTED,
    RESTRICTED_VOLUMES,
    RUN_AS_NON_ROOT,
    RUN_AS_USER,
    SECCOMP_PROFILE_RESTRICTED,
    NO_OVERRIDE = -1
};

typedef struct psa_check_s {
    const char *id;
    adm_psa_level_t level;
    int overrides;       /* restricted only: the baseline check it replaces, whenever it runs */
    psa_impl_t impls[6]; /* by MinimumVersion ascending; a NULL fn ends the list */
} psa_check_t;

static const psa_check_t checks[] = {
    [APPARMOR_PROFILE] = {"appArmorProfile", ADM_PSA_BASELINE, NO_OVERRIDE, {{0, psa_apparmor_1_0}}},
    [CAPABILITIES_BASELINE] = {"capabilities_baseline",
                               ADM_PSA_BASELINE,
                               NO_OVERRIDE,
                               {{0, psa_capabilities_baseline_1_0}}},
    [HOST_NAMESPACES] = {"hostNamespaces", ADM_PSA_BASELINE, NO_OVERRIDE, {{0, psa_host_namespaces_1_0}}},
    [HOST_PATH_VOLUMES] = {"hostPathVolumes",
                           ADM_PSA_BASELINE,
                           NO_OVERRIDE,
                           {{0, psa_host_path_volumes_1_0}}},
    [HOST_PORTS] = {"hostPorts", ADM_PSA_BASELINE, NO_OVERRIDE, {{0, psa_host_ports_1_0}}},
    [HOST_PROBES_AND_HOST_LIFECYCLE] = {"hostProbesAndHostLifecycle",
                                        ADM_PSA_BASELINE,
                                        NO_OVERRIDE,
                                        {{34, psa_host_probes_1_34}}},
    [PRIVILEGED] = {"privileged", ADM_PSA_BASELINE, NO_OVERRIDE, {{0, psa_privileged_1_0}}},
    [PROC_MOUNT] = {"procMount",
                    ADM_PSA_BASELINE,
                    NO_OVERRIDE,
                    {{0, psa_proc_mount_1_0}, {35, psa_proc_mount_1_35}}},
    [SELINUX_OPTIONS] = {"seLinuxOptions",
                         ADM_PSA_BASELINE,
                         NO_OVERRIDE,
                         {{0, psa_selinux_1_0}, {31, psa_selinux_1_31}}},
    [SECCOMP_PROFILE_BASELINE] = {"seccompProfile_baseline",
                                  ADM_PSA_BASELINE,
                                  NO_OVERRIDE,
                                  {{0, psa_seccomp_baseline_1_0}, {19, psa_seccomp_baseline_1_19}}},
    [SYSCTLS] = {"sysctls",
                 ADM_PSA_BASELINE,
                 NO_OVERRIDE,
                 {{0, psa_sysctls_1_0},
                  {27, psa_sysctls_1_27},
                  {29, psa_sysctls_1_29},
                  {32, psa_sysctls_1_32},
                  {37, psa_sysctls_1_37}}},
    [WINDOWS_HOST_PROCESS] = {"windowsHostProcess",
                              ADM_PSA_BASELINE,
                              NO_OVERRIDE,
                              {{0, psa_windows_host_process_1_0}}},
    [ALLOW_PRIVILEGE_ESCALATION] = {"allowPrivilegeEscalation",
                                    ADM_PSA_RESTRICTED,
                                    NO_OVERRIDE,
                                    {{8, psa_allow_privilege_escalation_1_8},
                                     {25, psa_allow_privilege_escalation_1_25}}},
    [CAPABILITIES_RESTRICTED] = {"capabilities_restricted",
                                 ADM_PSA_RESTRICTED,
                                 CAPABILITIES_BASELINE,
                                 {{22, psa_capabilities_restricted_1_22},
                                  {25, psa_capabilities_restricted_1_25}}},
    [PROC_MOUNT_RESTRICTED] = {"procMount_restricted",
                               ADM_PSA_RESTRICTED,
                               PROC_MOUNT,
                               {{35, psa_proc_mount_1_0}}},
    [RESTRICTED_VOLUMES] = {"restrictedVolumes",
                            ADM_PSA_RESTRICTED,
                            HOST_PATH_VOLUMES,
                            {{0, psa_restricted_volumes_1_0}}},
    [RUN_AS_NON_ROOT] = {"runAsNonRoot",
                         ADM_PSA_RESTRICTED,
                         NO_OVERRIDE,
                         {{0, psa_run_as_non_root_1_0}, {35, psa_run_as_non_root_1_35}}},
    [RUN_AS_USER] = {"runAsUser",
                     ADM_PSA_RESTRICTED,
                     NO_OVERRIDE,
                     {{23, psa_run_as_user_1_23}, {35, psa_run_as_user_1_35}}},
    [SECCOMP_PROFILE_RESTRICTED] = {"seccompProfile_restricted",
                                    ADM_PSA_RESTRICTED,
                                    SECCOMP_PROFILE_BASELINE,
                                    {{19, psa_seccomp_restricted_1_19}, {25, psa_seccomp_restricted_1_25}}},
};

#define NCHECKS (sizeof(checks) / sizeof(*checks))
_Static_assert(NCHECKS == ADM_PSA_NCHECKS, "adm_psa_memo_t has a slot per check");

/* The index of the implementation in force at minor, or -1 when the check starts later. */
static int impl_index(const psa_check_t *c, int minor)
{
    int at = -1;

    for (size_t i = 0; i < sizeof(c->impls) / sizeof(*c->impls) && c->impls[i].fn != NULL; i++) {
        if (c->impls[i].min_minor <= minor) {
            at = (int)i;
        }
    }
    return at;
}

void adm_psa_evaluate(adm_arena_t *a, const adm_psa_lv_t *lv, yyjson_val *metadata, yyjson_val *spec,
                      adm_psa_result_t *out)
{
    adm_psa_memo_t memo;

    memset(&memo, 0, sizeof(memo));
    adm_psa_evaluate_memo(a, lv, metadata, spec, &memo, out);
}

/* Runs implementation at of check i, or takes its verdict from memo. */
static psa_verdict_t run_check(psa_ctx_t *cx, size_t i, int at, adm_psa_memo_t *memo)
{
    psa_verdict_t v;

    if (memo->impl[i] == at + 1) {
        v.reason = memo->reason[i];
        v.detail = memo->detail[i];
        cx->nomem = cx->nomem || memo->nomem[i];
        return v;
    }
    {
        bool before = cx->nomem;

        cx->nomem = false;
        v = checks[i].impls[at].fn(cx);
        memo->impl[i] = (unsigned char)(at + 1);
        memo->reason[i] = v.reason;
        memo->detail[i] = v.detail;
        memo->nomem[i] = cx->nomem;
        cx->nomem = cx->nomem || before;
    }
    return v;
}

/* The checks a level runs at one policy version, in check order, with the version of each. */
typedef struct psa_plan_s {
    unsigned char n;
    unsigned char check[NCHECKS];
    signed char impl[NCHECKS];
} psa_plan_t;

/*
 * The plans of baseline and restricted at every minor version up to the newest known. They
 * derive from the const checks[] table alone: built once per process (pthread_once) and only
 * read afterwards, so requests on any thread share them, and no reload or informer update can
 * make them stale.
 */
static psa_plan_t plans[2][ADM_PSA_MAX_MINOR + 1];
static pthread_once_t plans_once = PTHREAD_ONCE_INIT;

static void plan_add(psa_plan_t *p, size_t check, int impl)
{
    p->check[p->n] = (unsigned char)check;
    p->impl[p->n] = (signed char)impl;
    p->n++;
}

static void build_plans(void)
{
    for (int minor = 0; minor <= ADM_PSA_MAX_MINOR; minor++) {
        bool overridden[NCHECKS] = {false};
        int at[NCHECKS];

        for (size_t i = 0; i < NCHECKS; i++) {
            at[i] = impl_index(&checks[i], minor);
            /* a restricted check in force replaces the baseline check it overrides */
            if (at[i] >= 0 && checks[i].overrides != NO_OVERRIDE) {
                overridden[checks[i].overrides] = true;
            }
        }
        for (size_t i = 0; i < NCHECKS; i++) {
            if (at[i] >= 0 && checks[i].level == ADM_PSA_BASELINE) {
                plan_add(&plans[0][minor], i, at[i]);
            }
            if (at[i] >= 0 && !overridden[i]) {
                plan_add(&plans[1][minor], i, at[i]);
            }
        }
    }
}

void adm_psa_evaluate_memo(adm_arena_t *a, const adm_psa_lv_t *lv, yyjson_val *metadata, yyjson_val *spec,
                           adm_psa_memo_t *memo, adm_psa_result_t *out)
{
    psa_ctx_t cx = {a, NULL, false};
    int minor = adm_psa_effective_minor(&lv->version);
    const psa_plan_t *plan;

    out->nfailed = 0; /* the texts are read only up to nfailed: no need to clear them */
    out->nomem = false;
    if (lv->level == ADM_PSA_PRIVILEGED || minor < 0) {
        return; /* minor < 0: before v1.0, no check applies (versions parse as v1.N, N >= 0) */
    }
    if (memo->pod == NULL) {
        psa_pod_t *pod = adm_arena_alloc(a, sizeof(*pod));

        if (pod == NULL || !psa_pod_read(a, metadata, spec, pod)) {
            out->nomem = true;
            return;
        }
        memo->pod = pod;
    }
    cx.pod = memo->pod;
    pthread_once(&plans_once, build_plans);
    /* no check starts after the newest version known (adm_psa_effective_minor clamps to it) */
    plan = &plans[lv->level == ADM_PSA_RESTRICTED ? 1 : 0]
                 [minor < ADM_PSA_MAX_MINOR ? minor : ADM_PSA_MAX_MINOR];
    for (size_t k = 0; k < plan->n; k++) {
        size_t i = plan->check[k];
        psa_verdict_t v;

        v = run_check(&cx, i, plan->impl[k], memo);
        if (v.reason != NULL && out->nfailed < sizeof(out->reasons) / sizeof(*out->reasons)) {
            out->reasons[out->nfailed] = v.reason[0] != '\0' ? v.reason : "unknown forbidden reason";
            out->details[out->nfailed] = v.detail;
            out->nfailed++;
        }
    }
    out->nomem = cx.nomem;
}

/* prefix, then the failures' texts joined ", ", each "reason (detail)" when with_details and it
   has one, in one allocation. */
static const char *join_failures(adm_arena_t *a, const char *prefix, const adm_psa_result_t *r,
                                 bool with_details)
{
    size_t nprefix = strlen(prefix);
    size_t len = nprefix + 1;
    char *out;
    char *p;

    for (size_t i = 0; i < r->nfailed; i++) {
        len += strlen(r->reasons[i]) + 2;
        if (with_details && r->details[i][0] != '\0') {
            len += strlen(r->details[i]) + 3;
        }
    }
    out = adm_arena_alloc(a, len);
    if (out == NULL) {
        return NULL;
    }
    memcpy(out, prefix, nprefix);
    p = out + nprefix;
    for (size_t i = 0; i < r->nfailed; i++) {
        size_t n = strlen(r->reasons[i]);

        if (i > 0) {
            memcpy(p, ", ", 2);
            p += 2;
        }
        memcpy(p, r->reasons[i], n);
        p += n;
        if (with_details && r->details[i][0] != '\0') {
            n = strlen(r->details[i]);
            memcpy(p, " (", 2);
            memcpy(p + 2, r->details[i], n);
            p[n + 2] = ')';
            p += n + 3;
        }
    }
    *p = '\0';
    return out;
}

const char *adm_psa_result_detail(adm_arena_t *a, const adm_psa_result_t *r)
{
    return join_failures(a, "", r, true);
}

const char *adm_psa_result_detail_after(adm_arena_t *a, const char *prefix, const adm_psa_result_t *r)
{
    return join_failures(a, prefix, r, true);
}

const char *adm_psa_result_reason(adm_arena_t *a, const adm_psa_result_t *r)
{
    return join_failures(a, "", r, false);
}

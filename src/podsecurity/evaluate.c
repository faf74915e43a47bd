/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The check registry and evaluator (policy/registry.go): every check with its versioned
 * implementations, in kube's order (baseline IDs sorted, then restricted IDs sorted), and the
 * rule that picks, for a level and version, the implementation each check runs, or none.
 */
#include "adm/podsecurity/evaluate.h"

#include "check_internal.h"

#include <string.h>

typedef struct psa_impl_s {
    int min_minor;
    psa_check_fn fn;
} psa_impl_t;

typedef struct psa_check_s {
    const char *id;
    adm_psa_level_t level;
    const char *overrides; /* restricted only: the baseline check it replaces, whenever it runs */
    psa_impl_t impls[6];   /* by MinimumVersion ascending; a NULL fn ends the list */
} psa_check_t;

static const psa_check_t checks[] = {
    {"appArmorProfile", ADM_PSA_BASELINE, NULL, {{0, psa_apparmor_1_0}}},
    {"capabilities_baseline", ADM_PSA_BASELINE, NULL, {{0, psa_capabilities_baseline_1_0}}},
    {"hostNamespaces", ADM_PSA_BASELINE, NULL, {{0, psa_host_namespaces_1_0}}},
    {"hostPathVolumes", ADM_PSA_BASELINE, NULL, {{0, psa_host_path_volumes_1_0}}},
    {"hostPorts", ADM_PSA_BASELINE, NULL, {{0, psa_host_ports_1_0}}},
    {"hostProbesAndHostLifecycle", ADM_PSA_BASELINE, NULL, {{34, psa_host_probes_1_34}}},
    {"privileged", ADM_PSA_BASELINE, NULL, {{0, psa_privileged_1_0}}},
    {"procMount", ADM_PSA_BASELINE, NULL, {{0, psa_proc_mount_1_0}, {35, psa_proc_mount_1_35}}},
    {"seLinuxOptions", ADM_PSA_BASELINE, NULL, {{0, psa_selinux_1_0}, {31, psa_selinux_1_31}}},
    {"seccompProfile_baseline",
     ADM_PSA_BASELINE,
     NULL,
     {{0, psa_seccomp_baseline_1_0}, {19, psa_seccomp_baseline_1_19}}},
    {"sysctls",
     ADM_PSA_BASELINE,
     NULL,
     {{0, psa_sysctls_1_0},
      {27, psa_sysctls_1_27},
      {29, psa_sysctls_1_29},
      {32, psa_sysctls_1_32},
      {37, psa_sysctls_1_37}}},
    {"windowsHostProcess", ADM_PSA_BASELINE, NULL, {{0, psa_windows_host_process_1_0}}},
    {"allowPrivilegeEscalation",
     ADM_PSA_RESTRICTED,
     NULL,
     {{8, psa_allow_privilege_escalation_1_8}, {25, psa_allow_privilege_escalation_1_25}}},
    {"capabilities_restricted",
     ADM_PSA_RESTRICTED,
     "capabilities_baseline",
     {{22, psa_capabilities_restricted_1_22}, {25, psa_capabilities_restricted_1_25}}},
    {"procMount_restricted", ADM_PSA_RESTRICTED, "procMount", {{35, psa_proc_mount_1_0}}},
    {"restrictedVolumes", ADM_PSA_RESTRICTED, "hostPathVolumes", {{0, psa_restricted_volumes_1_0}}},
    {"runAsNonRoot",
     ADM_PSA_RESTRICTED,
     NULL,
     {{0, psa_run_as_non_root_1_0}, {35, psa_run_as_non_root_1_35}}},
    {"runAsUser", ADM_PSA_RESTRICTED, NULL, {{23, psa_run_as_user_1_23}, {35, psa_run_as_user_1_35}}},
    {"seccompProfile_restricted",
     ADM_PSA_RESTRICTED,
     "seccompProfile_baseline",
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

/* The implementation in force at minor, or NULL when the check starts later. */
static psa_check_fn impl_at(const psa_check_t *c, int minor)
{
    int at = impl_index(c, minor);

    return at >= 0 ? c->impls[at].fn : NULL;
}

static bool overridden(const char *id, int minor)
{
    for (size_t i = 0; i < NCHECKS; i++) {
        if (checks[i].overrides != NULL && checks[i].overrides[0] == id[0] &&
            strcmp(checks[i].overrides, id) == 0 && impl_at(&checks[i], minor)) {
            return true;
        }
    }
    return false;
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

void adm_psa_evaluate_memo(adm_arena_t *a, const adm_psa_lv_t *lv, yyjson_val *metadata, yyjson_val *spec,
                           adm_psa_memo_t *memo, adm_psa_result_t *out)
{
    psa_ctx_t cx = {a, metadata, spec, false, {NULL, NULL, NULL}};
    int minor = adm_psa_effective_minor(&lv->version);

    memset(out, 0, sizeof(*out));
    if (lv->level == ADM_PSA_PRIVILEGED) {
        return;
    }
    psa_ctx_lists(&cx);
    for (size_t i = 0; i < NCHECKS; i++) {
        const psa_check_t *c = &checks[i];
        int at = impl_index(c, minor);
        psa_verdict_t v;

        if (at < 0 || c->level > lv->level) {
            continue;
        }
        if (lv->level == ADM_PSA_RESTRICTED && c->level == ADM_PSA_BASELINE && overridden(c->id, minor)) {
            continue;
        }
        v = run_check(&cx, i, at, memo);
        if (v.reason != NULL && out->nfailed < sizeof(out->reasons) / sizeof(*out->reasons)) {
            out->reasons[out->nfailed] = v.reason[0] != '\0' ? v.reason : "unknown forbidden reason";
            out->details[out->nfailed] = v.detail;
            out->nfailed++;
        }
    }
    out->nomem = cx.nomem;
}

const char *adm_psa_result_detail(adm_arena_t *a, const adm_psa_result_t *r)
{
    psa_ctx_t cx = {a, NULL, NULL, false, {NULL, NULL, NULL}};
    psa_list_t parts = {0};
    const char *s;

    for (size_t i = 0; i < r->nfailed; i++) {
        if (r->details[i][0] != '\0') {
            psa_list_add(&cx, &parts, psa_fmt(&cx, "%s (%s)", r->reasons[i], r->details[i]));
        } else {
            psa_list_add(&cx, &parts, r->reasons[i]);
        }
    }
    s = psa_join(&cx, &parts, ", ", false);
    return cx.nomem ? NULL : s;
}

const char *adm_psa_result_reason(adm_arena_t *a, const adm_psa_result_t *r)
{
    psa_ctx_t cx = {a, NULL, NULL, false, {NULL, NULL, NULL}};
    psa_list_t parts = {0};
    const char *s;

    for (size_t i = 0; i < r->nfailed; i++) {
        psa_list_add(&cx, &parts, r->reasons[i]);
    }
    s = psa_join(&cx, &parts, ", ", false);
    return cx.nomem ? NULL : s;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks on each container's own security settings: capabilities (baseline and restricted),
 * privileged, procMount, Windows hostProcess and allowPrivilegeEscalation
 * (policy/check_capabilities_*.go, check_privileged.go, check_procMount_*.go,
 * check_windowsHostProcess.go, check_allowPrivilegeEscalation.go).
 */
#include "check_internal.h"

#include <string.h>

static const char *const baseline_capabilities[] = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",       "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT",
};

static bool baseline_capability(const char *c)
{
    for (size_t i = 0; i < sizeof(baseline_capabilities) / sizeof(*baseline_capabilities); i++) {
        if (strcmp(c, baseline_capabilities[i]) == 0) {
            return true;
        }
    }
    return false;
}

static const char *sval(yyjson_val *v)
{
    return yyjson_is_str(v) ? yyjson_get_str(v) : "";
}

psa_verdict_t psa_capabilities_baseline_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t caps = {0};

    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_CAPABILITIES)
    {
        yyjson_val *add = psa_get(c->sc[PSA_SC_CAPABILITIES], "add");
        bool valid = true;

        for (size_t i = 0, n = yyjson_arr_size(add); i < n; i++) {
            const char *cap = sval(yyjson_arr_get(add, i));

            if (!baseline_capability(cap)) {
                valid = false;
                psa_set_add(cx, &caps, cap);
            }
        }
        if (!valid) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&caps);
    return psa_deny("non-default capabilities",
                    psa_cat(cx, psa_containers_phrase(cx, &bad), " must not include ",
                            psa_join(cx, &caps, ", ", true), " in securityContext.capabilities.add", NULL));
}

psa_verdict_t psa_privileged_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};

    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_PRIVILEGED)
    {
        if (yyjson_is_true(c->sc[PSA_SC_PRIVILEGED])) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    return psa_deny("privileged",
                    psa_containers_then(cx, &bad, " must not set securityContext.privileged=true"));
}

psa_verdict_t psa_proc_mount_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t types = {0};

    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_PROC_MOUNT)
    {
        yyjson_val *pm = c->sc[PSA_SC_PROC_MOUNT];

        if (pm != NULL && strcmp(sval(pm), "Default") != 0) {
            psa_list_add(cx, &bad, c->name);
            psa_set_add(cx, &types, sval(pm));
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&types);
    return psa_deny("procMount", psa_cat(cx, psa_containers_phrase(cx, &bad),
                                         " must not set securityContext.procMount to ",
                                         psa_join(cx, &types, ", ", true), NULL));
}

psa_verdict_t psa_proc_mount_1_35(psa_ctx_t *cx)
{
    return cx->pod->user_namespaced ? psa_allow() : psa_proc_mount_1_0(cx);
}

psa_verdict_t psa_windows_host_process_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t setters = {0};

    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_WINDOWS_OPTIONS)
    {
        if (psa_is_true(c->sc[PSA_SC_WINDOWS_OPTIONS], "hostProcess")) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (psa_is_true(cx->pod->sc[PSA_SC_WINDOWS_OPTIONS], "hostProcess")) {
        psa_list_add(cx, &setters, "pod");
    }
    if (bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &bad));
    }
    if (setters.n == 0) {
        return psa_allow();
    }
    return psa_deny("hostProcess",
                    psa_cat(cx, psa_join(cx, &setters, " and ", false),
                            " must not set securityContext.windowsOptions.hostProcess=true", NULL));
}

psa_verdict_t psa_allow_privilege_escalation_1_8(psa_ctx_t *cx)
{
    psa_list_t bad = {0};

    PSA_FOR_CONTAINERS(cx, c)
    {
        if (!yyjson_is_false(c->sc[PSA_SC_ALLOW_PRIVILEGE_ESCALATION])) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    return psa_deny(
        "allowPrivilegeEscalation != false",
        psa_containers_then(cx, &bad, " must set securityContext.allowPrivilegeEscalation=false"));
}

psa_verdict_t psa_allow_privilege_escalation_1_25(psa_ctx_t *cx)
{
    return cx->pod->windows ? psa_allow() : psa_allow_privilege_escalation_1_8(cx);
}

psa_verdict_t psa_capabilities_restricted_1_22(psa_ctx_t *cx)
{
    psa_list_t missing_drop = {0};
    psa_list_t adding = {0};
    psa_list_t caps = {0};
    psa_list_t details = {0};

    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *capabilities = c->sc[PSA_SC_CAPABILITIES];
        yyjson_val *drop = psa_get(capabilities, "drop");
        yyjson_val *add = psa_get(capabilities, "add");
        bool dropped_all = false;
        bool added_forbidden = false;

        if (capabilities == NULL) {
            psa_list_add(cx, &missing_drop, c->name);
            continue;
        }
        for (size_t i = 0, n = yyjson_arr_size(drop); i < n && !dropped_all; i++) {
            dropped_all = strcmp(sval(yyjson_arr_get(drop, i)), "ALL") == 0;
        }
        if (!dropped_all) {
            psa_list_add(cx, &missing_drop, c->name);
        }
        for (size_t i = 0, n = yyjson_arr_size(add); i < n; i++) {
            const char *cap = sval(yyjson_arr_get(add, i));

            if (strcmp(cap, "NET_BIND_SERVICE") != 0) {
                added_forbidden = true;
                psa_set_add(cx, &caps, cap);
            }
        }
        if (added_forbidden) {
            psa_list_add(cx, &adding, c->name);
        }
    }
    if (missing_drop.n > 0) {
        psa_list_add(
            cx, &details,
            psa_containers_then(cx, &missing_drop, " must set securityContext.capabilities.drop=[\"ALL\"]"));
    }
    if (adding.n > 0) {
        psa_list_sort(&caps);
        psa_list_add(cx, &details,
                     psa_cat(cx, psa_containers_phrase(cx, &adding), " must not include ",
                             psa_join(cx, &caps, ", ", true), " in securityContext.capabilities.add", NULL));
    }
    if (details.n == 0) {
        return psa_allow();
    }
    return psa_deny("unrestricted capabilities", psa_join(cx, &details, "; ", false));
}

psa_verdict_t psa_capabilities_restricted_1_25(psa_ctx_t *cx)
{
    return cx->pod->windows ? psa_allow() : psa_capabilities_restricted_1_22(cx);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Baseline checks on what a pod shares with its node: host namespaces, hostPath volumes, host
 * ports, probe and lifecycle hosts, and sysctls (policy/check_host*.go, check_sysctls.go).
 */
#include "check_internal.h"

#include <string.h>

psa_verdict_t psa_host_namespaces_1_0(psa_ctx_t *cx)
{
    psa_list_t set = {0};

    if (cx->pod->host_network) {
        psa_list_add(cx, &set, "hostNetwork=true");
    }
    if (cx->pod->host_pid) {
        psa_list_add(cx, &set, "hostPID=true");
    }
    if (cx->pod->host_ipc) {
        psa_list_add(cx, &set, "hostIPC=true");
    }
    if (set.n == 0) {
        return psa_allow();
    }
    return psa_deny("host namespaces", psa_join(cx, &set, ", ", false));
}

psa_verdict_t psa_host_path_volumes_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};

    for (size_t i = 0; i < cx->pod->nvolumes; i++) {
        const psa_volume_t *v = &cx->pod->volumes[i];

        if (v->host_path) {
            psa_list_add(cx, &bad, v->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    return psa_deny("hostPath volumes", psa_cat(cx, psa_plural("volume ", "volumes ", bad.n),
                                                psa_join(cx, &bad, ", ", true), NULL));
}

psa_verdict_t psa_host_ports_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t ports = {0};

    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *list = c->f[PSA_C_PORTS];
        bool valid = true;

        yyjson_arr_iter it = yyjson_arr_iter_with(list);

        for (yyjson_val *port = yyjson_arr_iter_next(&it); port != NULL; port = yyjson_arr_iter_next(&it)) {
            yyjson_val *hp = psa_get(port, "hostPort");

            if (yyjson_is_int(hp) && yyjson_get_sint(hp) != 0) {
                valid = false;
                psa_set_add(cx, &ports, psa_int(cx, yyjson_get_sint(hp)));
            }
        }
        if (!valid) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&ports); /* as strings: "10000" before "8080", as kube's sets.String */
    return psa_deny("hostPort",
                    psa_cat(cx, psa_containers_phrase(cx, &bad), psa_plural(" uses ", " use ", bad.n),
                            psa_plural("hostPort ", "hostPorts ", ports.n), psa_join(cx, &ports, ", ", false),
                            NULL));
}

static inline void add_handler_hosts(psa_ctx_t *cx, yyjson_val *handler, psa_list_t *hosts, bool *bad)
{
    const char *h;

    if (handler == NULL) { /* the usual case: no such probe or hook */
        return;
    }
    h = psa_str(psa_get(handler, "httpGet"), "host");

    if (h[0] != '\0') {
        psa_set_add(cx, hosts, h);
        *bad = true;
    }
    h = psa_str(psa_get(handler, "tcpSocket"), "host");
    if (h[0] != '\0') {
        psa_set_add(cx, hosts, h);
        *bad = true;
    }
}

psa_verdict_t psa_host_probes_1_34(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    psa_list_t hosts = {0};

    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *lifecycle = c->f[PSA_C_LIFECYCLE];
        bool is_bad = false;

        add_handler_hosts(cx, c->f[PSA_C_LIVENESS_PROBE], &hosts, &is_bad);
        add_handler_hosts(cx, c->f[PSA_C_READINESS_PROBE], &hosts, &is_bad);
        add_handler_hosts(cx, c->f[PSA_C_STARTUP_PROBE], &hosts, &is_bad);
        if (lifecycle != NULL) {
            add_handler_hosts(cx, psa_get(lifecycle, "postStart"), &hosts, &is_bad);
            add_handler_hosts(cx, psa_get(lifecycle, "preStop"), &hosts, &is_bad);
        }
        if (is_bad) {
            psa_set_add(cx, &bad, c->name);
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&bad);
    psa_list_sort(&hosts);
    return psa_deny("probe or lifecycle host",
                    psa_cat(cx, psa_containers_phrase(cx, &bad), psa_plural(" uses ", " use ", bad.n),
                            psa_plural("probe or lifecycle host ", "probe or lifecycle hosts ", hosts.n),
                            psa_join(cx, &hosts, ", ", true), NULL));
}

/* Each version's allowed sysctls add to the previous version's; the count marks where it ends. */
static const char *const allowed_sysctls[] = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start", /* v1.0: 5 */
    "net.ipv4.ip_local_reserved_ports",    /* v1.27: 6 */
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes", /* v1.29: 10 */
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem", /* v1.32: 12 */
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_notsent_lowat", /* v1.37: 14 */
};

static psa_verdict_t sysctls(psa_ctx_t *cx, size_t nallowed)
{
    psa_list_t bad = {0};
    yyjson_val *list = cx->pod->sc[PSA_SC_SYSCTLS];

    for (size_t i = 0, n = yyjson_arr_size(list); i < n; i++) {
        const char *name = psa_str(yyjson_arr_get(list, i), "name");
        bool ok = false;

        for (size_t k = 0; k < nallowed && !ok; k++) {
            ok = strcmp(name, allowed_sysctls[k]) == 0;
        }
        if (!ok) {
            psa_list_add(cx, &bad, name); /* spec order, duplicates kept, as kube */
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    return psa_deny("forbidden sysctls", psa_join(cx, &bad, ", ", false));
}

psa_verdict_t psa_sysctls_1_0(psa_ctx_t *cx)
{
    return sysctls(cx, 5);
}

psa_verdict_t psa_sysctls_1_27(psa_ctx_t *cx)
{
    return sysctls(cx, 6);
}

psa_verdict_t psa_sysctls_1_29(psa_ctx_t *cx)
{
    return sysctls(cx, 10);
}

psa_verdict_t psa_sysctls_1_32(psa_ctx_t *cx)
{
    return sysctls(cx, 12);
}

psa_verdict_t psa_sysctls_1_37(psa_ctx_t *cx)
{
    return sysctls(cx, 14);
}

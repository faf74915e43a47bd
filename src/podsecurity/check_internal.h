/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the check files share: the check signature, small arena string lists and sets, and the
 * phrasing helpers of pod-security-admission's policy/helpers.go (joinQuote, pluralize).
 */
#ifndef ADM_PSA_CHECK_INTERNAL_H
#define ADM_PSA_CHECK_INTERNAL_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

/*
 * The fields of a pod the checks read, found in one pass over the pod (psa_pod_read) so that the
 * nineteen checks, run at up to three levels, read struct fields instead of looking keys up again.
 * Each field is what psa_get would return for it: NULL when absent, JSON null, or its parent is
 * not an object; of duplicate keys the first, as yyjson_obj_get. The values point into the
 * request's document, which outlives the evaluation.
 */
enum psa_container_field_e {
    PSA_C_NAME,
    PSA_C_SECURITY_CONTEXT,
    PSA_C_PORTS,
    PSA_C_LIVENESS_PROBE,
    PSA_C_READINESS_PROBE,
    PSA_C_STARTUP_PROBE,
    PSA_C_LIFECYCLE,
    PSA_C_NFIELDS
};

/* securityContext fields, of a container and (those a pod has) of the pod. */
enum psa_sc_field_e {
    PSA_SC_CAPABILITIES,
    PSA_SC_PRIVILEGED,
    PSA_SC_PROC_MOUNT,
    PSA_SC_WINDOWS_OPTIONS,
    PSA_SC_ALLOW_PRIVILEGE_ESCALATION,
    PSA_SC_APPARMOR_PROFILE,
    PSA_SC_SELINUX_OPTIONS,
    PSA_SC_SECCOMP_PROFILE,
    PSA_SC_RUN_AS_NON_ROOT,
    PSA_SC_RUN_AS_USER,
    PSA_SC_SYSCTLS,
    PSA_SC_NFIELDS
};

typedef struct psa_container_s {
    const char *name; /* "" when absent or not a string, as psa_str */
    yyjson_val *f[PSA_C_NFIELDS];
    yyjson_val *sc[PSA_SC_NFIELDS]; /* its securityContext's */
} psa_container_t;

typedef struct psa_volume_s {
    yyjson_val *v;
    const char *name;
    bool allowed; /* one of the sources the restricted level allows is set */
    bool host_path;
} psa_volume_t;

typedef struct psa_pod_s {
    psa_container_t *containers; /* initContainers, containers, ephemeralContainers */
    size_t ncontainers;
    psa_volume_t *volumes;
    size_t nvolumes;
    yyjson_val *annotations;        /* metadata.annotations */
    yyjson_val *sc[PSA_SC_NFIELDS]; /* spec.securityContext's */
    uint32_t containers_sc;         /* bit i: some container's sc[i] is set (PSA_FOR_CONTAINERS_SETTING) */
    bool host_network, host_pid, host_ipc;
    bool user_namespaced; /* spec.hostUsers == false (relaxPolicyForUserNamespacePod) */
    bool windows;         /* spec.os.name == "windows" */
} psa_pod_t;

typedef struct psa_ctx_s {
    adm_arena_t *arena;
    const psa_pod_t *pod;
    bool nomem;
} psa_ctx_t;

/** Reads the fields of the pod (metadata and spec, either may be NULL) into *pod; false: no memory. */
bool psa_pod_read(adm_arena_t *a, yyjson_val *meta, yyjson_val *spec, psa_pod_t *pod);

/* A check's answer: reason NULL means allowed. */
typedef struct psa_verdict_s {
    const char *reason;
    const char *detail;
} psa_verdict_t;

typedef psa_verdict_t (*psa_check_fn)(psa_ctx_t *cx);

/*
 * A growable list of strings: the first PSA_LIST_FIRST items in the list itself (most lists a
 * failing check makes hold one or two names: no arena call), more in the arena. v points into
 * the list itself, so a list is never copied by value; zero-filled ({0}) is empty.
 */
#define PSA_LIST_FIRST 4
typedef struct psa_list_s {
    const char **v;
    size_t n, cap;
    const char *first[PSA_LIST_FIRST];
} psa_list_t;

void psa_list_add(psa_ctx_t *cx, psa_list_t *l, const char *s);
/** Adds s unless present (a set); psa_list_sort makes it sets.List(). */
void psa_set_add(psa_ctx_t *cx, psa_list_t *l, const char *s);
void psa_list_sort(psa_list_t *l);
/** Items joined by sep; quoted `"a", "b"` when quote (joinQuote, no escaping, as kube). */
const char *psa_join(psa_ctx_t *cx, const psa_list_t *l, const char *sep, bool quote);
/** The strings up to a NULL concatenated (arena; "" and nomem when full). */
const char *psa_cat(psa_ctx_t *cx, ...) __attribute__((sentinel));
/** n in decimal (arena). */
const char *psa_int(psa_ctx_t *cx, int64_t n);

static inline const char *psa_plural(const char *one, const char *many, size_t n)
{
    return n == 1 ? one : many;
}

/** `container "a"` / `containers "a", "b"`. */
const char *psa_containers_phrase(psa_ctx_t *cx, const psa_list_t *names);
/** psa_containers_phrase followed by tail, in one allocation. */
const char *psa_containers_then(psa_ctx_t *cx, const psa_list_t *names, const char *tail);

/*
 * The readers of the nested fields psa_pod_t leaves to the checks (a probe's httpGet, a profile's
 * type), read only when the parent is set: inline, the key a literal whose length the compiler
 * then knows.
 */
/** obj[key] unless absent, JSON null, or obj not an object (a nil pointer in Go). */
static inline yyjson_val *psa_get(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_is_obj(obj) ? yyjson_obj_get(obj, key) : NULL;

    return yyjson_is_null(v) ? NULL : v;
}

/** A *bool set to true / set to false. */
static inline bool psa_is_true(yyjson_val *obj, const char *key)
{
    return yyjson_is_true(psa_get(obj, key));
}

static inline bool psa_is_false(yyjson_val *obj, const char *key)
{
    return yyjson_is_false(psa_get(obj, key));
}

/** A string field, "" when absent. */
static inline const char *psa_str(yyjson_val *obj, const char *key)
{
    yyjson_val *v = psa_get(obj, key);

    return yyjson_is_str(v) ? yyjson_get_str(v) : "";
}

/**
 * Runs the body with c (const psa_container_t *) for every container of cx's pod, in order (no
 * arithmetic on the NULL list of a pod without containers).
 */
#define PSA_FOR_CONTAINERS(cx, c)                                                                            \
    for (const psa_container_t *c = (cx)->pod->containers,                                                   \
                               *psa_end_ = c != NULL ? c + (cx)->pod->ncontainers : NULL;                    \
         c != psa_end_; c++)

/* The pod's containers when one of them sets securityContext field (PSA_SC_*), else NULL. */
static inline const psa_container_t *psa_containers_setting(const psa_ctx_t *cx, int field)
{
    return (cx->pod->containers_sc >> field) & 1 ? cx->pod->containers : NULL;
}

/**
 * PSA_FOR_CONTAINERS for a check whose body does nothing for a container without sc[field]: it
 * runs for none when no container sets field, which most pods leave unset (privileged, procMount,
 * seLinuxOptions...), so such a check costs no walk of the containers.
 */
#define PSA_FOR_CONTAINERS_SETTING(cx, c, field)                                                             \
    for (const psa_container_t *c = psa_containers_setting((cx), (field)),                                   \
                               *psa_end_ = c != NULL ? c + (cx)->pod->ncontainers : NULL;                    \
         c != psa_end_; c++)

static inline psa_verdict_t psa_allow(void)
{
    psa_verdict_t v = {NULL, NULL};
    return v;
}

static inline psa_verdict_t psa_deny(const char *reason, const char *detail)
{
    psa_verdict_t v = {reason, detail != NULL ? detail : ""};
    return v;
}

/* The check implementations, one per (check, MinimumVersion). */
psa_verdict_t psa_apparmor_1_0(psa_ctx_t *cx);
psa_verdict_t psa_capabilities_baseline_1_0(psa_ctx_t *cx);
psa_verdict_t psa_host_namespaces_1_0(psa_ctx_t *cx);
psa_verdict_t psa_host_path_volumes_1_0(psa_ctx_t *cx);
psa_verdict_t psa_host_ports_1_0(psa_ctx_t *cx);
psa_verdict_t psa_host_probes_1_34(psa_ctx_t *cx);
psa_verdict_t psa_privileged_1_0(psa_ctx_t *cx);
psa_verdict_t psa_proc_mount_1_0(psa_ctx_t *cx);
psa_verdict_t psa_proc_mount_1_35(psa_ctx_t *cx);
psa_verdict_t psa_selinux_1_0(psa_ctx_t *cx);
psa_verdict_t psa_selinux_1_31(psa_ctx_t *cx);
psa_verdict_t psa_seccomp_baseline_1_0(psa_ctx_t *cx);
psa_verdict_t psa_seccomp_baseline_1_19(psa_ctx_t *cx);
psa_verdict_t psa_sysctls_1_0(psa_ctx_t *cx);
psa_verdict_t psa_sysctls_1_27(psa_ctx_t *cx);
psa_verdict_t psa_sysctls_1_29(psa_ctx_t *cx);
psa_verdict_t psa_sysctls_1_32(psa_ctx_t *cx);
psa_verdict_t psa_sysctls_1_37(psa_ctx_t *cx);
psa_verdict_t psa_windows_host_process_1_0(psa_ctx_t *cx);
psa_verdict_t psa_allow_privilege_escalation_1_8(psa_ctx_t *cx);
psa_verdict_t psa_allow_privilege_escalation_1_25(psa_ctx_t *cx);
psa_verdict_t psa_capabilities_restricted_1_22(psa_ctx_t *cx);
psa_verdict_t psa_capabilities_restricted_1_25(psa_ctx_t *cx);
psa_verdict_t psa_restricted_volumes_1_0(psa_ctx_t *cx);
psa_verdict_t psa_run_as_non_root_1_0(psa_ctx_t *cx);
psa_verdict_t psa_run_as_non_root_1_35(psa_ctx_t *cx);
psa_verdict_t psa_run_as_user_1_23(psa_ctx_t *cx);
psa_verdict_t psa_run_as_user_1_35(psa_ctx_t *cx);
psa_verdict_t psa_seccomp_restricted_1_19(psa_ctx_t *cx);
psa_verdict_t psa_seccomp_restricted_1_25(psa_ctx_t *cx);

#endif

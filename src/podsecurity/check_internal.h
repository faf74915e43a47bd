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
#include <yyjson.h>

typedef struct psa_ctx_s {
    adm_arena_t *arena;
    yyjson_val *meta; /* pod (or template) metadata, may be NULL */
    yyjson_val *spec; /* PodSpec, may be NULL */
    bool nomem;
    /* spec's container lists (psa_container_lists' order), looked up once for all the checks
       (psa_ctx_lists); NULL when absent */
    yyjson_val *lists[3];
} psa_ctx_t;

/* A check's answer: reason NULL means allowed. */
typedef struct psa_verdict_s {
    const char *reason;
    const char *detail;
} psa_verdict_t;

typedef psa_verdict_t (*psa_check_fn)(psa_ctx_t *cx);

/* A growable list of strings in the arena. */
typedef struct psa_list_s {
    const char **v;
    size_t n, cap;
} psa_list_t;

void psa_list_add(psa_ctx_t *cx, psa_list_t *l, const char *s);
/** Adds s unless present (a set); psa_list_sort makes it sets.List(). */
void psa_set_add(psa_ctx_t *cx, psa_list_t *l, const char *s);
void psa_list_sort(psa_list_t *l);
/** Items joined by sep; quoted `"a", "b"` when quote (joinQuote, no escaping, as kube). */
const char *psa_join(psa_ctx_t *cx, const psa_list_t *l, const char *sep, bool quote);
const char *psa_fmt(psa_ctx_t *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline const char *psa_plural(const char *one, const char *many, size_t n)
{
    return n == 1 ? one : many;
}

/** `container "a"` / `containers "a", "b"`. */
const char *psa_containers_phrase(psa_ctx_t *cx, const psa_list_t *names);

/*
 * The field readers are inline: the checks call them a few hundred times per pod, nearly always
 * with a literal key, whose length the compiler then knows.
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
 * Runs the body with c for every container of cx's spec: initContainers, containers,
 * ephemeralContainers (the lists psa_ctx_lists found).
 */
#define PSA_FOR_CONTAINERS(cx, c)                                                                            \
    for (int psa_l_ = 0; psa_l_ < 3; psa_l_++)                                                               \
        for (yyjson_arr_iter psa_it_ = yyjson_arr_iter_with((cx)->lists[psa_l_]), *psa_once_ = &psa_it_;     \
             psa_once_ != NULL; psa_once_ = NULL)                                                            \
            for (yyjson_val *c = yyjson_arr_iter_next(&psa_it_); c != NULL;                                  \
                 c = yyjson_arr_iter_next(&psa_it_))

extern const char *const psa_container_lists[3];

/** Fills cx->lists from cx->spec. */
void psa_ctx_lists(psa_ctx_t *cx);

/** The container's securityContext (NULL when unset). */
static inline yyjson_val *psa_csc(yyjson_val *c)
{
    return psa_get(c, "securityContext");
}

/** spec.hostUsers == false (relaxPolicyForUserNamespacePod). */
bool psa_user_namespaced(const psa_ctx_t *cx);
/** spec.os.name == "windows". */
bool psa_windows(const psa_ctx_t *cx);

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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks on the kernel security profiles a pod asks for: AppArmor, SELinux and seccomp, by
 * field and by the older annotations (policy/check_appArmorProfile.go, check_seLinuxOptions.go,
 * check_seccompProfile_*.go).
 */
#include "adm/admission/admission.h"
#include "check_internal.h"

#include <string.h>

#define APPARMOR_PREFIX "container.apparmor.security.beta.kubernetes.io/"
#define SECCOMP_POD_KEY "seccomp.security.alpha.kubernetes.io/pod"
#define SECCOMP_CONTAINER_PREFIX "container.seccomp.security.alpha.kubernetes.io/"

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* `k="v"` with Go's %q of the value. */
static const char *annotation_pair(psa_ctx_t *cx, const char *k, const char *v)
{
    const char *q = adm_go_quote(cx->arena, v);

    if (q == NULL) {
        cx->nomem = true;
        return "";
    }
    return psa_cat(cx, k, "=", q, NULL);
}

static bool apparmor_type_ok(yyjson_val *profile)
{
    const char *t = psa_str(profile, "type");

    return strcmp(t, "RuntimeDefault") == 0 || strcmp(t, "Localhost") == 0;
}

psa_verdict_t psa_apparmor_1_0(psa_ctx_t *cx)
{
    psa_list_t setters = {0};
    psa_list_t values = {0};
    psa_list_t bad = {0};
    psa_list_t annotations = {0};
    yyjson_val *pod_profile = cx->pod->sc[PSA_SC_APPARMOR_PROFILE];
    yyjson_val *ann = cx->pod->annotations;
    yyjson_val *k;
    yyjson_obj_iter it;

    if (pod_profile != NULL && !apparmor_type_ok(pod_profile)) {
        psa_list_add(cx, &setters, "pod");
        psa_set_add(cx, &values, psa_str(pod_profile, "type"));
    }
    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_APPARMOR_PROFILE)
    {
        yyjson_val *profile = c->sc[PSA_SC_APPARMOR_PROFILE];

        if (profile != NULL && !apparmor_type_ok(profile)) {
            psa_list_add(cx, &bad, c->name);
            psa_set_add(cx, &values, psa_str(profile, "type"));
        }
    }
    if (bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &bad));
    }
    yyjson_obj_iter_init(ann, &it);
    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        const char *key = yyjson_get_str(k);
        yyjson_val *v = yyjson_obj_iter_get_val(k);
        const char *val = yyjson_is_str(v) ? yyjson_get_str(v) : "";

        /* a key shorter than the prefix cannot start with it: no compare for most annotations */
        if (yyjson_get_len(k) >= sizeof(APPARMOR_PREFIX) - 1 && starts_with(key, APPARMOR_PREFIX) &&
            val[0] != '\0' && strcmp(val, "runtime/default") != 0 && !starts_with(val, "localhost/")) {
            psa_list_add(cx, &annotations, annotation_pair(cx, key, val));
        }
    }
    psa_list_sort(&values);
    if (annotations.n > 0) {
        psa_list_sort(&annotations);
        for (size_t i = 0; i < annotations.n; i++) {
            psa_list_add(cx, &values, annotations.v[i]);
        }
        psa_list_add(cx, &setters, psa_plural("annotation", "annotations", annotations.n));
    }
    if (setters.n == 0) {
        return psa_allow();
    }
    return psa_deny(psa_plural("forbidden AppArmor profile", "forbidden AppArmor profiles", values.n),
                    psa_cat(cx, psa_join(cx, &setters, " and ", false),
                            " must not set AppArmor profile type to ", psa_join(cx, &values, ", ", true),
                            NULL));
}

/* SELinux: the allowed types are "" and container_t, container_init_t, container_kvm_t, and
   from v1.31 container_engine_t. */
typedef struct selinux_bad_s {
    psa_list_t types;
    bool user, role;
} selinux_bad_t;

static bool selinux_ok(psa_ctx_t *cx, yyjson_val *opts, bool engine_ok, selinux_bad_t *b)
{
    const char *t = psa_str(opts, "type");
    bool valid = true;

    if (!(t[0] == '\0' || strcmp(t, "container_t") == 0 || strcmp(t, "container_init_t") == 0 ||
          strcmp(t, "container_kvm_t") == 0 || (engine_ok && strcmp(t, "container_engine_t") == 0))) {
        valid = false;
        psa_set_add(cx, &b->types, t);
    }
    if (psa_str(opts, "user")[0] != '\0') {
        valid = false;
        b->user = true;
    }
    if (psa_str(opts, "role")[0] != '\0') {
        valid = false;
        b->role = true;
    }
    return valid;
}

static psa_verdict_t selinux(psa_ctx_t *cx, bool engine_ok)
{
    selinux_bad_t b = {{0}, false, false};
    psa_list_t setters = {0};
    psa_list_t bad = {0};
    psa_list_t data = {0};
    yyjson_val *pod_opts = cx->pod->sc[PSA_SC_SELINUX_OPTIONS];

    if (pod_opts != NULL && !selinux_ok(cx, pod_opts, engine_ok, &b)) {
        psa_list_add(cx, &setters, "pod");
    }
    PSA_FOR_CONTAINERS_SETTING(cx, c, PSA_SC_SELINUX_OPTIONS)
    {
        yyjson_val *opts = c->sc[PSA_SC_SELINUX_OPTIONS];

        if (opts != NULL && !selinux_ok(cx, opts, engine_ok, &b)) {
            psa_list_add(cx, &bad, c->name);
        }
    }
    if (bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &bad));
    }
    if (setters.n == 0) {
        return psa_allow();
    }
    if (b.types.n > 0) {
        psa_list_sort(&b.types);
        psa_list_add(
            cx, &data,
            psa_cat(cx, psa_plural("type ", "types ", b.types.n), psa_join(cx, &b.types, ", ", true), NULL));
    }
    if (b.user) {
        psa_list_add(cx, &data, "user may not be set");
    }
    if (b.role) {
        psa_list_add(cx, &data, "role may not be set");
    }
    return psa_deny("seLinuxOptions", psa_cat(cx, psa_join(cx, &setters, " and ", false),
                                              " set forbidden securityContext.seLinuxOptions: ",
                                              psa_join(cx, &data, "; ", false), NULL));
}

psa_verdict_t psa_selinux_1_0(psa_ctx_t *cx)
{
    return selinux(cx, false);
}

psa_verdict_t psa_selinux_1_31(psa_ctx_t *cx)
{
    return selinux(cx, true);
}

static bool seccomp_annotation_ok(const char *v)
{
    return strcmp(v, "runtime/default") == 0 || strcmp(v, "docker/default") == 0 ||
           starts_with(v, "localhost/");
}

psa_verdict_t psa_seccomp_baseline_1_0(psa_ctx_t *cx)
{
    psa_list_t bad = {0};
    yyjson_val *ann = cx->pod->annotations;
    yyjson_val *v = yyjson_is_obj(ann) ? yyjson_obj_get(ann, SECCOMP_POD_KEY) : NULL;

    if (v != NULL && !seccomp_annotation_ok(yyjson_is_str(v) ? yyjson_get_str(v) : "")) {
        psa_set_add(cx, &bad,
                    annotation_pair(cx, SECCOMP_POD_KEY, yyjson_is_str(v) ? yyjson_get_str(v) : ""));
    }
    PSA_FOR_CONTAINERS(cx, c)
    {
        const char *key = psa_cat(cx, SECCOMP_CONTAINER_PREFIX, c->name, NULL);

        v = yyjson_is_obj(ann) ? yyjson_obj_get(ann, key) : NULL;
        if (v != NULL && !seccomp_annotation_ok(yyjson_is_str(v) ? yyjson_get_str(v) : "")) {
            psa_set_add(cx, &bad, annotation_pair(cx, key, yyjson_is_str(v) ? yyjson_get_str(v) : ""));
        }
    }
    if (bad.n == 0) {
        return psa_allow();
    }
    psa_list_sort(&bad);
    return psa_deny("seccompProfile",
                    psa_cat(cx, psa_plural("forbidden annotation ", "forbidden annotations ", bad.n),
                            psa_join(cx, &bad, ", ", false), NULL));
}

static bool seccomp_type_ok(yyjson_val *profile)
{
    const char *t = psa_str(profile, "type");

    return strcmp(t, "RuntimeDefault") == 0 || strcmp(t, "Localhost") == 0; /* the usual one first */
}

/*
 * Both seccomp field checks: baseline only refuses explicit bad types; restricted also wants a
 * valid type at pod level or on every container without one (explicit failures reported first).
 */
static psa_verdict_t seccomp_fields(psa_ctx_t *cx, bool restricted)
{
    psa_list_t setters = {0};
    psa_list_t values = {0};
    psa_list_t explicit_bad = {0};
    psa_list_t implicit_bad = {0};
    yyjson_val *pod_profile = cx->pod->sc[PSA_SC_SECCOMP_PROFILE];
    bool pod_set = false;

    if (pod_profile != NULL) {
        if (!seccomp_type_ok(pod_profile)) {
            psa_list_add(cx, &setters, "pod");
            psa_set_add(cx, &values, psa_str(pod_profile, "type"));
        } else {
            pod_set = true;
        }
    }
    PSA_FOR_CONTAINERS(cx, c)
    {
        yyjson_val *profile = c->sc[PSA_SC_SECCOMP_PROFILE];

        if (profile != NULL) {
            if (!seccomp_type_ok(profile)) {
                psa_list_add(cx, &explicit_bad, c->name);
                psa_set_add(cx, &values, psa_str(profile, "type"));
            }
        } else if (!pod_set) {
            psa_list_add(cx, &implicit_bad, c->name);
        }
    }
    if (explicit_bad.n > 0) {
        psa_list_add(cx, &setters, psa_containers_phrase(cx, &explicit_bad));
    }
    if (setters.n > 0) {
        psa_list_sort(&values);
        return psa_deny("seccompProfile", psa_cat(cx, psa_join(cx, &setters, " and ", false),
                                                  " must not set securityContext.seccompProfile.type to ",
                                                  psa_join(cx, &values, ", ", true), NULL));
    }
    if (restricted && implicit_bad.n > 0) {
        return psa_deny(
            "seccompProfile",
            psa_cat(cx, "pod or ", psa_containers_phrase(cx, &implicit_bad),
                    " must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                    NULL));
    }
    return psa_allow();
}

psa_verdict_t psa_seccomp_baseline_1_19(psa_ctx_t *cx)
{
    return seccomp_fields(cx, false);
}

psa_verdict_t psa_seccomp_restricted_1_19(psa_ctx_t *cx)
{
    return seccomp_fields(cx, true);
}

psa_verdict_t psa_seccomp_restricted_1_25(psa_ctx_t *cx)
{
    return cx->pod->windows ? psa_allow() : seccomp_fields(cx, true);
}

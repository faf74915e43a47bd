/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one pass over a pod that finds every field the Pod Security checks read (psa_pod_t in
 * check_internal.h): each object of interest is walked once and its keys matched against the names
 * wanted, instead of each check scanning the object for each key again, at each level.
 */
#include "check_internal.h"

#include <string.h>

/* The key (s, len) is lit, compared as yyjson_obj_get compares keys (length, then bytes). */
#define KEY_IS(lit) (len == sizeof(lit) - 1 && memcmp(s, lit, sizeof(lit) - 1) == 0)

/*
 * The classifiers below give the index of a key among the names wanted from one kind of object,
 * or -1. They switch on the key's length first: most keys of a pod are none of the names wanted,
 * and most are told apart by their length alone.
 */
static inline int container_field(const char *s, size_t len)
{
    switch (len) {
    case 4: return KEY_IS("name") ? PSA_C_NAME : -1;
    case 5: return KEY_IS("ports") ? PSA_C_PORTS : -1;
    case 9: return KEY_IS("lifecycle") ? PSA_C_LIFECYCLE : -1;
    case 12: return KEY_IS("startupProbe") ? PSA_C_STARTUP_PROBE : -1;
    case 13: return KEY_IS("livenessProbe") ? PSA_C_LIVENESS_PROBE : -1;
    case 14: return KEY_IS("readinessProbe") ? PSA_C_READINESS_PROBE : -1;
    case 15: return KEY_IS("securityContext") ? PSA_C_SECURITY_CONTEXT : -1;
    default: return -1;
    }
}

static inline __attribute__((always_inline)) int sc_field(const char *s, size_t len)
{
    switch (len) {
    case 7: return KEY_IS("sysctls") ? PSA_SC_SYSCTLS : -1;
    case 9: return KEY_IS("procMount") ? PSA_SC_PROC_MOUNT : KEY_IS("runAsUser") ? PSA_SC_RUN_AS_USER : -1;
    case 10: return KEY_IS("privileged") ? PSA_SC_PRIVILEGED : -1;
    case 12:
        return KEY_IS("capabilities")   ? PSA_SC_CAPABILITIES
               : KEY_IS("runAsNonRoot") ? PSA_SC_RUN_AS_NON_ROOT
                                        : -1;
    case 14:
        return KEY_IS("windowsOptions")   ? PSA_SC_WINDOWS_OPTIONS
               : KEY_IS("seLinuxOptions") ? PSA_SC_SELINUX_OPTIONS
               : KEY_IS("seccompProfile") ? PSA_SC_SECCOMP_PROFILE
                                          : -1;
    case 15: return KEY_IS("appArmorProfile") ? PSA_SC_APPARMOR_PROFILE : -1;
    case 24: return KEY_IS("allowPrivilegeEscalation") ? PSA_SC_ALLOW_PRIVILEGE_ESCALATION : -1;
    default: return -1;
    }
}

enum spec_field_e {
    SPEC_INIT_CONTAINERS,
    SPEC_CONTAINERS,
    SPEC_EPHEMERAL_CONTAINERS,
    SPEC_VOLUMES,
    SPEC_SECURITY_CONTEXT,
    SPEC_HOST_NETWORK,
    SPEC_HOST_PID,
    SPEC_HOST_IPC,
    SPEC_HOST_USERS,
    SPEC_OS,
    SPEC_NFIELDS
};

static inline int spec_field(const char *s, size_t len)
{
    switch (len) {
    case 2: return KEY_IS("os") ? SPEC_OS : -1;
    case 7:
        return KEY_IS("volumes")   ? SPEC_VOLUMES
               : KEY_IS("hostPID") ? SPEC_HOST_PID
               : KEY_IS("hostIPC") ? SPEC_HOST_IPC
                                   : -1;
    case 9: return KEY_IS("hostUsers") ? SPEC_HOST_USERS : -1;
    case 10: return KEY_IS("containers") ? SPEC_CONTAINERS : -1;
    case 11: return KEY_IS("hostNetwork") ? SPEC_HOST_NETWORK : -1;
    case 14: return KEY_IS("initContainers") ? SPEC_INIT_CONTAINERS : -1;
    case 15: return KEY_IS("securityContext") ? SPEC_SECURITY_CONTEXT : -1;
    case 19: return KEY_IS("ephemeralContainers") ? SPEC_EPHEMERAL_CONTAINERS : -1;
    default: return -1;
    }
}

/* A volume's name and sources: first those the restricted level allows (image since kube 1.33,
   for every version), then hostPath, which baseline refuses. */
enum volume_field_e {
    VOL_CONFIG_MAP,
    VOL_CSI,
    VOL_DOWNWARD_API,
    VOL_EMPTY_DIR,
    VOL_EPHEMERAL,
    VOL_IMAGE,
    VOL_PERSISTENT_VOLUME_CLAIM,
    VOL_PROJECTED,
    VOL_SECRET,
    VOL_HOST_PATH,
    VOL_NAME,
    VOL_NFIELDS
};

_Static_assert(VOL_CONFIG_MAP == 0 && VOL_SECRET == 8, "the allowed sources come first, in bits 0 to 8");

static inline int volume_field(const char *s, size_t len)
{
    switch (len) {
    case 3: return KEY_IS("csi") ? VOL_CSI : -1;
    case 4: return KEY_IS("name") ? VOL_NAME : -1;
    case 5: return KEY_IS("image") ? VOL_IMAGE : -1;
    case 6: return KEY_IS("secret") ? VOL_SECRET : -1;
    case 8: return KEY_IS("emptyDir") ? VOL_EMPTY_DIR : KEY_IS("hostPath") ? VOL_HOST_PATH : -1;
    case 9:
        return KEY_IS("configMap")   ? VOL_CONFIG_MAP
               : KEY_IS("ephemeral") ? VOL_EPHEMERAL
               : KEY_IS("projected") ? VOL_PROJECTED
                                     : -1;
    case 11: return KEY_IS("downwardAPI") ? VOL_DOWNWARD_API : -1;
    case 21: return KEY_IS("persistentVolumeClaim") ? VOL_PERSISTENT_VOLUME_CLAIM : -1;
    default: return -1;
    }
}

/*
 * out[field(key)] = obj[key] for every key wanted, as psa_get: the first of duplicate keys (a
 * later duplicate is ignored even when the first is null), null read as absent. Returns the set
 * of fields found (bit i: out[i] != NULL). Inline so that each caller's classifier is called
 * directly.
 */
_Static_assert(PSA_C_NFIELDS <= 32 && PSA_SC_NFIELDS <= 32 && SPEC_NFIELDS <= 32 && VOL_NFIELDS <= 32,
               "read_fields keeps the fields seen in 32 bits");

static inline uint32_t read_fields(yyjson_val *obj, int (*field)(const char *s, size_t len), size_t n,
                                   yyjson_val **out)
{
    uint32_t seen = 0;
    uint32_t set = 0;
    size_t left = yyjson_is_obj(obj) ? unsafe_yyjson_get_len(obj) : 0;

    memset(out, 0, n * sizeof(*out));
    for (yyjson_val *k = left > 0 ? unsafe_yyjson_get_first(obj) : NULL; left > 0; left--) {
        yyjson_val *v = k + 1;
        int i = field(unsafe_yyjson_get_str(k), unsafe_yyjson_get_len(k));

        if (i >= 0 && (seen & (UINT32_C(1) << i)) == 0) {
            seen |= UINT32_C(1) << i;
            out[i] = unsafe_yyjson_is_null(v) ? NULL : v;
            set |= out[i] != NULL ? UINT32_C(1) << i : 0;
        }
        k = unsafe_yyjson_get_next(v);
    }
    return set;
}

/* Reads c into *out; returns the securityContext fields it sets (bit i: out->sc[i] != NULL). */
static uint32_t read_container(yyjson_val *c, psa_container_t *out)
{
    read_fields(c, container_field, PSA_C_NFIELDS, out->f);
    out->name = yyjson_is_str(out->f[PSA_C_NAME]) ? yyjson_get_str(out->f[PSA_C_NAME]) : "";
    return read_fields(out->f[PSA_C_SECURITY_CONTEXT], sc_field, PSA_SC_NFIELDS, out->sc);
}

/* v's name and which sources it sets (each source's first key present and not null, as psa_get). */
static void read_volume(yyjson_val *v, psa_volume_t *out)
{
    const uint32_t allowed = (UINT32_C(1) << (VOL_SECRET + 1)) - 1; /* VOL_CONFIG_MAP..VOL_SECRET */
    yyjson_val *f[VOL_NFIELDS];
    uint32_t set = read_fields(v, volume_field, VOL_NFIELDS, f);

    out->v = v;
    out->name = yyjson_is_str(f[VOL_NAME]) ? yyjson_get_str(f[VOL_NAME]) : "";
    out->allowed = (set & allowed) != 0;
    out->host_path = f[VOL_HOST_PATH] != NULL;
}

bool psa_pod_read(adm_arena_t *a, yyjson_val *meta, yyjson_val *spec, psa_pod_t *pod)
{
    yyjson_val *f[SPEC_NFIELDS];
    size_t n = 0;

    memset(pod, 0, sizeof(*pod));
    read_fields(spec, spec_field, SPEC_NFIELDS, f);
    pod->annotations = psa_get(meta, "annotations");
    read_fields(f[SPEC_SECURITY_CONTEXT], sc_field, PSA_SC_NFIELDS, pod->sc);
    pod->host_network = yyjson_is_true(f[SPEC_HOST_NETWORK]);
    pod->host_pid = yyjson_is_true(f[SPEC_HOST_PID]);
    pod->host_ipc = yyjson_is_true(f[SPEC_HOST_IPC]);
    pod->user_namespaced = yyjson_is_false(f[SPEC_HOST_USERS]);
    pod->windows = strcmp(psa_str(f[SPEC_OS], "name"), "windows") == 0;

    for (int l = SPEC_INIT_CONTAINERS; l <= SPEC_EPHEMERAL_CONTAINERS; l++) {
        n += yyjson_arr_size(f[l]); /* 0 unless an array */
    }
    if (n > 0) {
        pod->containers = adm_arena_alloc(a, n * sizeof(*pod->containers));
        if (pod->containers == NULL) {
            return false;
        }
        for (int l = SPEC_INIT_CONTAINERS; l <= SPEC_EPHEMERAL_CONTAINERS; l++) {
            yyjson_arr_iter it = yyjson_arr_iter_with(f[l]);

            for (yyjson_val *c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
                pod->containers_sc |= read_container(c, &pod->containers[pod->ncontainers++]);
            }
        }
    }

    n = yyjson_arr_size(f[SPEC_VOLUMES]);
    if (n > 0) {
        yyjson_arr_iter it = yyjson_arr_iter_with(f[SPEC_VOLUMES]);

        pod->volumes = adm_arena_alloc(a, n * sizeof(*pod->volumes));
        if (pod->volumes == NULL) {
            return false;
        }
        for (yyjson_val *v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
            read_volume(v, &pod->volumes[pod->nvolumes++]);
        }
    }
    return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PodSecurity plugin's PodSecurityConfiguration (admission/api, its v1, v1beta1 and v1alpha1
 * forms, which have the same fields): defaults for unlabelled namespaces and the exempt users,
 * namespaces and runtime classes, with kube's defaulting and validation messages.
 */
#include "adm/admission/admission.h"
#include "adm/base/error.h"
#include "adm/base/util.h"
#include "adm/podsecurity/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "pod-security.admission.config.k8s.io/"

static const char *str_or(yyjson_val *obj, const char *key, const char *dflt)
{
    yyjson_val *v = yyjson_is_obj(obj) ? yyjson_obj_get(obj, key) : NULL;

    return yyjson_is_str(v) && yyjson_get_len(v) > 0 ? yyjson_get_str(v) : dflt;
}

static bool dns1123_label(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-') {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
            return false;
        }
    }
    return true;
}

#define LABEL_MSG                                                                                            \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "  \
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "   \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define SUBDOMAIN_MSG                                                                                        \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "    \
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "   \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* Reads exemptions.<key> into a malloc'd array, validating each entry; 0 or an error in err. */
static int read_list(yyjson_val *ex, const char *key, int kind, const char ***out, size_t *n, char *err,
                     size_t err_len)
{
    yyjson_val *arr = yyjson_is_obj(ex) ? yyjson_obj_get(ex, key) : NULL;
    size_t count = yyjson_arr_size(arr);

    *out = NULL;
    *n = 0;
    if (arr != NULL && !yyjson_is_arr(arr) && !yyjson_is_null(arr)) {
        snprintf(err, err_len, "exemptions.%s: must be a list of strings", key);
        return ADM_EINVAL;
    }
    if (count == 0) {
        return 0;
    }
    *out = calloc(count, sizeof(**out));
    if (*out == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        yyjson_val *v = yyjson_arr_get(arr, i);
        const char *s = yyjson_is_str(v) ? yyjson_get_str(v) : NULL;
        const char *problem = NULL;

        if (s == NULL) {
            snprintf(err, err_len, "exemptions.%s[%zu]: must be a string", key, i);
            return ADM_EINVAL;
        }
        if (kind == 0 && s[0] == '\0') {
            problem = "username must not be empty";
        } else if (kind == 1 && !dns1123_label(s)) {
            problem = strlen(s) > 63 ? "must be no more than 63 characters" : LABEL_MSG;
        } else if (kind == 2 && !adm_is_dns1123_subdomain(s, strlen(s))) {
            problem = strlen(s) > 253 ? "must be no more than 253 characters" : SUBDOMAIN_MSG;
        }
        if (problem != NULL) {
            snprintf(err, err_len, "exemptions.%s[%zu]: Invalid value: \"%s\": %s", key, i, s, problem);
            return ADM_EINVAL;
        }
        for (size_t k = 0; k < *n; k++) {
            if (strcmp((*out)[k], s) == 0) {
                snprintf(err, err_len, "exemptions.%s[%zu]: Duplicate value: \"%s\"", key, i, s);
                return ADM_EINVAL;
            }
        }
        /* copied: the configuration document dies after configure */
        (*out)[*n] = strdup(s);
        if ((*out)[*n] == NULL) {
            return ADM_ENOMEM;
        }
        (*n)++;
    }
    return 0;
}

static int read_defaults(yyjson_val *d, adm_psa_policy_t *p, char *err, size_t err_len)
{
    static const char *const modes[] = {"enforce", "audit", "warn"};
    adm_psa_lv_t *lvs[3] = {&p->enforce, &p->audit, &p->warn};

    for (int m = 0; m < 3; m++) {
        char vkey[32];
        const char *l = str_or(d, modes[m], "privileged");
        const char *v;

        snprintf(vkey, sizeof(vkey), "%s-version", modes[m]);
        v = str_or(d, vkey, "latest");
        if (!adm_psa_parse_level(l, &lvs[m]->level)) {
            snprintf(err, err_len,
                     "defaults.%s: Invalid value: \"%s\": must be one of privileged, baseline, restricted",
                     modes[m], l);
            return ADM_EINVAL;
        }
        if (!adm_psa_parse_version(v, &lvs[m]->version)) {
            snprintf(err, err_len, "defaults.%s: Invalid value: \"%s\": must be \"latest\" or \"v1.x\"", vkey,
                     v);
            return ADM_EINVAL;
        }
    }
    return 0;
}

int adm_psa_config_decode(yyjson_val *config, adm_psa_config_t *cfg, char *err, size_t err_len)
{
    const char *api = str_or(config, "apiVersion", "");
    const char *kind = str_or(config, "kind", "");
    yyjson_val *ex = yyjson_is_obj(config) ? yyjson_obj_get(config, "exemptions") : NULL;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if (config == NULL) {
        return read_defaults(NULL, &cfg->defaults, err, err_len);
    }
    if (!yyjson_is_obj(config)) {
        snprintf(err, err_len, "PodSecurityConfiguration: must be an object");
        return ADM_EINVAL;
    }
    if (strcmp(api, GROUP "v1") != 0 && strcmp(api, GROUP "v1beta1") != 0 &&
        strcmp(api, GROUP "v1alpha1") != 0) {
        snprintf(err, err_len, "apiVersion: unsupported \"%s\" (want %sv1, v1beta1 or v1alpha1)", api, GROUP);
        return ADM_EINVAL;
    }
    if (strcmp(kind, "PodSecurityConfiguration") != 0) {
        snprintf(err, err_len, "kind: want PodSecurityConfiguration, got \"%s\"", kind);
        return ADM_EINVAL;
    }
    rc = read_defaults(yyjson_obj_get(config, "defaults"), &cfg->defaults, err, err_len);
    if (rc == 0) {
        rc = read_list(ex, "namespaces", 1, &cfg->namespaces, &cfg->nnamespaces, err, err_len);
    }
    if (rc == 0) {
        rc = read_list(ex, "runtimeClasses", 2, &cfg->runtime_classes, &cfg->nruntime_classes, err, err_len);
    }
    if (rc == 0) {
        rc = read_list(ex, "usernames", 0, &cfg->usernames, &cfg->nusernames, err, err_len);
    }
    if (rc != 0) {
        if (rc == ADM_ENOMEM) {
            snprintf(err, err_len, "out of memory");
        }
        adm_psa_config_free(cfg);
    }
    return rc;
}

static void free_list(const char **list, size_t n)
{
    for (size_t i = 0; list != NULL && i < n; i++) {
        free((void *)list[i]);
    }
    free((void *)list);
}

void adm_psa_config_free(adm_psa_config_t *cfg)
{
    free_list(cfg->usernames, cfg->nusernames);
    free_list(cfg->namespaces, cfg->nnamespaces);
    free_list(cfg->runtime_classes, cfg->nruntime_classes);
    memset(cfg, 0, sizeof(*cfg));
}

static bool in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; s != NULL && i < n; i++) {
        if (strcmp(list[i], s) == 0) {
            return true;
        }
    }
    return false;
}

bool adm_psa_exempt_namespace(const adm_psa_config_t *cfg, const char *ns)
{
    return in_list(cfg->namespaces, cfg->nnamespaces, ns);
}

bool adm_psa_exempt_user(const adm_psa_config_t *cfg, const char *user)
{
    return in_list(cfg->usernames, cfg->nusernames, user);
}

bool adm_psa_exempt_runtime_class(const adm_psa_config_t *cfg, const char *rc)
{
    return in_list(cfg->runtime_classes, cfg->nruntime_classes, rc);
}

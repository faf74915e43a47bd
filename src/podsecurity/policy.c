/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod Security levels, versions and the namespace labels that choose them (api/helpers.go):
 * parsing with kube's fallbacks, warn inheriting enforce, and the field errors of bad labels.
 */
#include "adm/podsecurity/policy.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"

#include <string.h>

static const char *const level_names[] = {"privileged", "baseline", "restricted"};

#define LEVEL_ERROR "must be one of privileged, baseline, restricted"
#define VERSION_ERROR "must be \"latest\" or \"v1.x\""

const char *adm_psa_level_name(adm_psa_level_t l)
{
    return level_names[l];
}

bool adm_psa_parse_level(const char *s, adm_psa_level_t *out)
{
    /* the three names differ in their first letter: one compare, not three */
    int i = s[0] == 'p' ? ADM_PSA_PRIVILEGED : s[0] == 'b' ? ADM_PSA_BASELINE : ADM_PSA_RESTRICTED;

    if (strcmp(s, level_names[i]) == 0) {
        *out = (adm_psa_level_t)i;
        return true;
    }
    *out = ADM_PSA_RESTRICTED;
    return false;
}

bool adm_psa_parse_version(const char *s, adm_psa_version_t *out)
{
    const char *p = s + 3;
    int64_t minor = 0;

    out->latest = true;
    out->minor = 0;
    if (strcmp(s, "latest") == 0) {
        return true;
    }
    /* ^v1\.([0-9]|[1-9][0-9]*)$, and a number that fits Go's int (strconv.Atoi) */
    if (strncmp(s, "v1.", 3) != 0 || *p == '\0' || (p[0] == '0' && p[1] != '\0')) {
        return false;
    }
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || minor > (INT64_MAX - (*p - '0')) / 10) {
            return false;
        }
        minor = minor * 10 + (*p - '0');
    }
    out->latest = false;
    out->minor = minor;
    return true;
}

const char *adm_psa_lv_string(adm_arena_t *a, const adm_psa_lv_t *lv)
{
    /* the latest forms are constants (every request with a namespace's default labels prints one) */
    static const char *const latest[] = {"privileged:latest", "baseline:latest", "restricted:latest"};

    if (lv->version.latest) {
        return latest[lv->level];
    }
    return adm_arena_printf(a, "%s:v1.%lld", level_names[lv->level], (long long)lv->version.minor);
}

static bool version_equal(const adm_psa_version_t *a, const adm_psa_version_t *b)
{
    return a->latest == b->latest && (a->latest || a->minor == b->minor);
}

bool adm_psa_lv_equal(const adm_psa_lv_t *a, const adm_psa_lv_t *b)
{
    return a->level == b->level && version_equal(&a->version, &b->version);
}

bool adm_psa_lv_equivalent(const adm_psa_lv_t *a, const adm_psa_lv_t *b)
{
    return (a->level == ADM_PSA_PRIVILEGED && b->level == ADM_PSA_PRIVILEGED) || adm_psa_lv_equal(a, b);
}

int adm_psa_effective_minor(const adm_psa_version_t *v)
{
    return v->latest || v->minor > ADM_PSA_MAX_MINOR ? ADM_PSA_MAX_MINOR : (int)v->minor;
}

bool adm_psa_policy_fully_privileged(const adm_psa_policy_t *p)
{
    return p->enforce.level == ADM_PSA_PRIVILEGED && p->audit.level == ADM_PSA_PRIVILEGED &&
           p->warn.level == ADM_PSA_PRIVILEGED;
}

bool adm_psa_policy_equivalent(const adm_psa_policy_t *a, const adm_psa_policy_t *b)
{
    return adm_psa_lv_equivalent(&a->enforce, &b->enforce) && adm_psa_lv_equivalent(&a->audit, &b->audit) &&
           adm_psa_lv_equivalent(&a->warn, &b->warn);
}

static const char *const modes[] = {"enforce", "audit", "warn"};

/* The six label keys after ADM_PSA_LABEL_PREFIX, by mode (as modes[]) and then level / version. */
static const char *const label_names[3][2] = {
    {"enforce", "enforce-version"},
    {"audit", "audit-version"},
    {"warn", "warn-version"},
};

/* A label's value as the policy reads it: NULL when absent, "" when not a string. */
static const char *label_value(yyjson_val *v)
{
    return yyjson_is_str(v) ? yyjson_get_str(v) : "";
}

/* The mode (as modes[]) and the level (0) or version (1) a label key names after the prefix, by
   its length (len, which tells the six apart); false for any other key. */
static bool label_slot(const char *k, size_t len, int *mode, int *version)
{
    /* mode * 2 + version + 1 by the length after the prefix; 0: no policy label is that long */
    static const unsigned char by_len[16] = {[7] = 1, [15] = 2, [5] = 3, [13] = 4, [4] = 5, [12] = 6};
    int slot = len < sizeof(by_len) ? by_len[len] - 1 : -1;

    if (slot < 0) {
        return false;
    }
    *mode = slot / 2;
    *version = slot % 2;
    return memcmp(k, label_names[*mode][*version], len) == 0;
}

/*
 * The six labels' values (NULL when absent) by mode and then level / version, in one pass over
 * the labels: most namespaces carry none of them, and a key is compared only once it has the
 * prefix. The first of two equal keys counts, as a lookup by key finds it.
 */
static void policy_labels(yyjson_val *labels, const char *out[3][2])
{
    const size_t plen = sizeof(ADM_PSA_LABEL_PREFIX) - 1;
    size_t left = yyjson_is_obj(labels) ? unsafe_yyjson_get_len(labels) : 0;

    memset(out, 0, 6 * sizeof(out[0][0]));
    for (yyjson_val *key = left > 0 ? unsafe_yyjson_get_first(labels) : NULL; left > 0; left--) {
        yyjson_val *val = key + 1;
        const char *k = unsafe_yyjson_get_str(key);
        size_t len = unsafe_yyjson_get_len(key);
        int m, version;

        if (len > plen && memcmp(k, ADM_PSA_LABEL_PREFIX, plen) == 0 &&
            label_slot(k + plen, len - plen, &m, &version) && out[m][version] == NULL) {
            out[m][version] = label_value(val);
        }
        key = unsafe_yyjson_get_next(val);
    }
}

/* The field errors of the six labels' values (policy_labels). */
static int label_errors(adm_arena_t *a, const char *values[3][2], adm_psa_label_error_t out[6])
{
    int n = 0;

    for (int m = 0; m < 3; m++) {
        for (int version = 0; version < 2; version++) {
            const char *v = values[m][version];
            adm_psa_level_t l;
            adm_psa_version_t ver;
            adm_psa_label_error_t *e = &out[n];
            const char *q;

            if (v == NULL || (version ? adm_psa_parse_version(v, &ver) : adm_psa_parse_level(v, &l))) {
                continue;
            }
            e->field = adm_arena_printf(a, "metadata.labels[" ADM_PSA_LABEL_PREFIX "%s%s]", modes[m],
                                        version ? "-version" : "");
            e->value = v;
            e->detail = version ? VERSION_ERROR : LEVEL_ERROR;
            q = adm_go_quote(a, v);
            if (e->field == NULL || q == NULL) {
                return ADM_ENOMEM;
            }
            e->text = adm_arena_printf(a, "%s: Invalid value: %s: %s", e->field, q, e->detail);
            if (e->text == NULL) {
                return ADM_ENOMEM;
            }
            n++;
        }
    }
    return n;
}

int adm_psa_label_errors(adm_arena_t *a, yyjson_val *labels, adm_psa_label_error_t out[6])
{
    const char *values[3][2];

    policy_labels(labels, values);
    return label_errors(a, values, out);
}

adm_psa_policy_t adm_psa_policy_resolve(adm_arena_t *a, yyjson_val *labels, const adm_psa_policy_t *defaults,
                                        const char **errs)
{
    adm_psa_policy_t p = *defaults;
    adm_psa_lv_t *lvs[3] = {&p.enforce, &p.audit, &p.warn};
    const char *values[3][2];
    adm_psa_label_error_t e[6];
    adm_aggregate_t agg;
    bool enforce_ok = false, any = false, all_valid = true;
    int n;

    *errs = "";
    policy_labels(labels, values);
    for (int m = 0; m < 3; m++) {
        const char *lv = values[m][0];
        const char *vv = values[m][1];

        any = any || lv != NULL || vv != NULL;
        if (lv != NULL) {
            bool ok = adm_psa_parse_level(lv, &lvs[m]->level);

            all_valid = all_valid && ok;
            if (m == 0) {
                enforce_ok = ok; /* fail closed: a bad enforce level is restricted */
            } else if (!ok) {
                lvs[m]->level = ADM_PSA_PRIVILEGED; /* fail open for audit and warn */
            }
        }
        if (vv != NULL && !adm_psa_parse_version(vv, &lvs[m]->version)) {
            all_valid = false;
        }
    }
    if (!any) {
        return p; /* no policy label: the defaults, and no label to be wrong */
    }
    if (values[2][0] == NULL && enforce_ok && p.enforce.level > p.warn.level) {
        p.warn.level = p.enforce.level;
        if (values[2][1] == NULL) {
            p.warn.version = p.enforce.version;
        }
    }
    if (all_valid) {
        return p; /* no field error to print */
    }
    n = label_errors(a, values, e);
    if (n == ADM_ENOMEM) {
        *errs = NULL;
        return p;
    }
    adm_aggregate_init(&agg, a);
    for (int i = 0; i < n; i++) {
        adm_aggregate_add(&agg, e[i].text);
    }
    *errs = adm_aggregate_text(&agg);
    return p;
}

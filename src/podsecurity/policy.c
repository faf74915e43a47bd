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
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (adm_psa_level_t)i;
            return true;
        }
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
    if (lv->version.latest) {
        return adm_arena_printf(a, "%s:latest", level_names[lv->level]);
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

/* A label's value, or NULL when the label is absent (a non-string value reads as ""). */
static const char *label(yyjson_val *labels, const char *mode, bool version)
{
    char key[64];
    yyjson_val *v;

    snprintf(key, sizeof(key), ADM_PSA_LABEL_PREFIX "%s%s", mode, version ? "-version" : "");
    v = yyjson_is_obj(labels) ? yyjson_obj_get(labels, key) : NULL;
    if (v == NULL) {
        return NULL;
    }
    return yyjson_is_str(v) ? yyjson_get_str(v) : "";
}

static const char *const modes[] = {"enforce", "audit", "warn"};

int adm_psa_label_errors(adm_arena_t *a, yyjson_val *labels, adm_psa_label_error_t out[6])
{
    int n = 0;

    for (int m = 0; m < 3; m++) {
        for (int version = 0; version < 2; version++) {
            const char *v = label(labels, modes[m], version != 0);
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

adm_psa_policy_t adm_psa_policy_resolve(adm_arena_t *a, yyjson_val *labels, const adm_psa_policy_t *defaults,
                                        const char **errs)
{
    adm_psa_policy_t p = *defaults;
    adm_psa_lv_t *lvs[3] = {&p.enforce, &p.audit, &p.warn};
    adm_psa_label_error_t e[6];
    adm_aggregate_t agg;
    bool enforce_ok = false;
    int n;

    *errs = "";
    if (yyjson_obj_size(labels) == 0) {
        return p;
    }
    for (int m = 0; m < 3; m++) {
        const char *lv = label(labels, modes[m], false);
        const char *vv = label(labels, modes[m], true);

        if (lv != NULL) {
            bool ok = adm_psa_parse_level(lv, &lvs[m]->level);

            if (m == 0) {
                enforce_ok = ok; /* fail closed: a bad enforce level is restricted */
            } else if (!ok) {
                lvs[m]->level = ADM_PSA_PRIVILEGED; /* fail open for audit and warn */
            }
        }
        if (vv != NULL) {
            adm_psa_parse_version(vv, &lvs[m]->version);
        }
    }
    if (label(labels, "warn", false) == NULL && enforce_ok && p.enforce.level > p.warn.level) {
        p.warn.level = p.enforce.level;
        if (label(labels, "warn", true) == NULL) {
            p.warn.version = p.enforce.version;
        }
    }
    n = adm_psa_label_errors(a, labels, e);
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ground floor of --webhook-config loading: how a problem becomes the one line the load
 * reports ("FILE: KIND \"NAME\": FIELD: PROBLEM"), the warnings the set carries, and strict
 * decoding of members (only known ones, each once; optional strings, int32s, string lists and
 * enums with Go's type rules). config_load.c and config_validate.c both stand on it.
 */
#include "config_internal.h"

#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdarg.h>
#include <stdio.h>

/* Messages are single lines whatever a file or key name holds. */
void adm__cfg_one_line(char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            *s = ' ';
        }
    }
}

int adm__cfg_fail(adm__cfg_loader_t *L, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (L->err_len == 0) {
        return ADM_EINVAL;
    }
    if (L->obj != NULL) {
        snprintf(L->err, L->err_len, "%s: %s: %s", L->file, L->obj, msg);
    } else {
        snprintf(L->err, L->err_len, "%s: %s", L->file, msg);
    }
    adm__cfg_one_line(L->err);
    return ADM_EINVAL;
}

int adm__cfg_nomem(adm__cfg_loader_t *L)
{
    if (L->err_len > 0) {
        snprintf(L->err, L->err_len, "%s: out of memory",
                 L->file != NULL ? L->file : "webhook configuration");
    }
    return ADM_ENOMEM;
}

/*
 * Strict decoding: only known members, each once. where is the object's field path ("" for the
 * top level). A member that exists in the other webhook type gets a hint, since the error alone
 * would suggest a typo.
 */
int adm__cfg_check_members(adm__cfg_loader_t *L, yyjson_val *obj, const char *const *known, const char *where)
{
    bool duplicate;
    const char *k = adm_json_check_members(obj, known, &duplicate);
    const char *sep = where[0] != '\0' ? ": " : "";

    if (k == NULL) {
        return 0;
    }
    if (duplicate) {
        return adm__cfg_fail(L, "%s%sduplicate field \"%s\"", where, sep, k);
    }
    return adm__cfg_fail(
        L, "%s%sunknown field \"%s\"%s", where, sep, k,
        strcmp(k, "reinvocationPolicy") == 0 ? " (only mutating webhooks have reinvocationPolicy)" : "");
}

/* An optional string member: *out NULL when absent or null. */
int adm__cfg_get_str(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                     const char **out)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *out = NULL;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return adm__cfg_fail(L, "%s%s%s: must be a string", where, where[0] != '\0' ? "." : "", field);
    }
    *out = yyjson_get_str(v);
    return 0;
}

/* An optional int32 member (Go's json refuses fractions and out-of-range numbers for int32). */
int adm__cfg_get_int32(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                       bool *present, int64_t *out)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *present = false;
    if (absent(v)) {
        return 0;
    }
    if (yyjson_is_sint(v) && yyjson_get_sint(v) >= INT32_MIN && yyjson_get_sint(v) <= INT32_MAX) {
        *out = yyjson_get_sint(v);
    } else if (yyjson_is_uint(v) && yyjson_get_uint(v) <= INT32_MAX) {
        *out = (int64_t)yyjson_get_uint(v);
    } else {
        return adm__cfg_fail(L, "%s.%s: must be an integer (int32)", where, field);
    }
    *present = true;
    return 0;
}

/* An optional list of strings; *n 0 when absent, null or empty. */
int adm__cfg_get_str_list(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                          const char ***out, size_t *n)
{
    yyjson_val *v = yyjson_obj_get(obj, field);

    *out = NULL;
    *n = 0;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_arr(v)) {
        return adm__cfg_fail(L, "%s.%s: must be an array of strings", where, field);
    }
    *out = adm_arena_calloc(L->a, yyjson_arr_size(v) + 1, sizeof(**out));
    if (*out == NULL) {
        return adm__cfg_nomem(L);
    }
    for (size_t i = 0; i < yyjson_arr_size(v); i++) {
        yyjson_val *e = yyjson_arr_get(v, i);

        if (!yyjson_is_str(e)) {
            return adm__cfg_fail(L, "%s.%s[%zu]: must be a string", where, field, i);
        }
        (*out)[i] = yyjson_get_str(e);
    }
    *n = yyjson_arr_size(v);
    return 0;
}

/*
 * An optional enumerated string. names[] are the accepted values in the sorted order kube's
 * "supported values" lists use; *idx is the position of the match, or -1 when absent.
 */
int adm__cfg_get_enum(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                      const char *const *names, size_t nnames, int *idx)
{
    const char *s;
    char supported[256] = "";
    size_t used = 0;
    int rc = adm__cfg_get_str(L, obj, where, field, &s);

    *idx = -1;
    if (rc != 0 || s == NULL) {
        return rc;
    }
    for (size_t i = 0; i < nnames; i++) {
        if (strcmp(s, names[i]) == 0) {
            *idx = (int)i;
            return 0;
        }
    }
    for (size_t i = 0; i < nnames && used < sizeof(supported); i++) {
        int w = snprintf(supported + used, sizeof(supported) - used, "%s\"%s\"", i > 0 ? ", " : "", names[i]);

        used += w > 0 ? (size_t)w : 0;
    }
    return adm__cfg_fail(L, "%s.%s: Unsupported value: %s: supported values: %s", where, field,
                         adm_json_text(L->a, yyjson_obj_get(obj, field)), supported);
}

int adm__cfg_add_warning(adm__cfg_loader_t *L, const char *line)
{
    adm_webhook_set_t *set = L->set;

    if (line == NULL) {
        return adm__cfg_nomem(L);
    }
    if (set->nwarnings == L->warnings_cap) {
        size_t ncap = L->warnings_cap == 0 ? 8 : L->warnings_cap * 2;
        const char **g =
            adm_arena_realloc(L->a, set->warnings, L->warnings_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return adm__cfg_nomem(L);
        }
        set->warnings = g;
        L->warnings_cap = ncap;
    }
    set->warnings[set->nwarnings++] = line;
    return 0;
}

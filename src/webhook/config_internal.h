/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the three files of --webhook-config loading: config_load.c (files, documents, lists,
 * configurations, the set), config_validate.c (kube-apiserver's validation of one webhook, with
 * the v1 defaults, and the matchPolicy Equivalent warning) and config_decode.c (the loader's error
 * line and warnings, and strict decoding of members). Calls go load -> validate -> decode, never back.
 */
#ifndef ADM_WEBHOOK_CONFIG_INTERNAL_H
#define ADM_WEBHOOK_CONFIG_INTERNAL_H

#include "adm/base/arena.h"
#include "adm/webhook/config.h"
#include "adm/webhook/webhook.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

typedef struct loader_s {
    adm_webhook_set_t *set;
    adm_arena_t *a;
    bool allow_insecure;
    char *err;
    size_t err_len;
    const char *file; /* the file being read */
    const char *obj;  /* "document 2", or KIND "NAME" once known; NULL for file-level problems */
    struct adm__cfg_config_s *configs; /* config_load.c */
    size_t nconfigs, configs_cap;
    size_t warnings_cap;
} adm__cfg_loader_t;

/* ---- config_decode.c ---- */

/* Replaces control characters by spaces: messages are single lines whatever a file or key holds. */
void adm__cfg_one_line(char *s);

/*
 * Reports a problem as the one line of the load's error, "FILE: OBJECT: MESSAGE" (OBJECT when
 * known), and returns ADM_EINVAL.
 */
int adm__cfg_fail(adm__cfg_loader_t *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports an exhausted arena; returns ADM_ENOMEM. */
int adm__cfg_nomem(adm__cfg_loader_t *L);

/* Adds a line (arena text; NULL reports out of memory) to the set's warnings. Returns 0 or ADM_ENOMEM. */
int adm__cfg_add_warning(adm__cfg_loader_t *L, const char *line);

/*
 * Strict decoding: obj has only known (NULL-terminated) members, each once; else the error names
 * the first offender. where is the object's field path ("" for the top level).
 */
int adm__cfg_check_members(adm__cfg_loader_t *L, yyjson_val *obj, const char *const *known,
                           const char *where);

/*
 * Optional members of obj, read with Go's type rules; absent or null leaves *out NULL, *present
 * false, *n 0, *idx -1 (the caller applies the default). A wrong type or value is reported.
 * get_enum's names are the accepted values in the sorted order of kube's "supported values".
 */
int adm__cfg_get_str(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                     const char **out);
int adm__cfg_get_int32(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                       bool *present, int64_t *out);
int adm__cfg_get_str_list(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                          const char ***out, size_t *n);
int adm__cfg_get_enum(adm__cfg_loader_t *L, yyjson_val *obj, const char *where, const char *field,
                      const char *const *names, size_t nnames, int *idx);

/* ---- config_validate.c ---- */

/*
 * Validates webhooks[i] of a configuration of the given type as kube-apiserver does on create and
 * fills h with it, defaults applied. Returns 0, ADM_EINVAL (reported) or ADM_ENOMEM.
 */
int adm__cfg_parse_webhook(adm__cfg_loader_t *L, adm_webhook_type_t type, size_t i, yyjson_val *hook,
                           adm_webhook_t *h);

/* Adds the D6 warning for h (webhooks[i]) when matchPolicy Equivalent would need a conversion. */
int adm__cfg_warn_equivalent(adm__cfg_loader_t *L, const adm_webhook_t *h, size_t i);

/* The first message of kube's IsDNS1123Subdomain for s (n bytes), or NULL when s is one. */
const char *adm__cfg_dns1123_subdomain_problem(const char *s, size_t n);

/* ---- small readers ---- */

static inline bool absent(yyjson_val *v)
{
    return v == NULL || yyjson_is_null(v);
}

static inline bool str_is(yyjson_val *v, const char *s)
{
    return yyjson_is_str(v) && strcmp(yyjson_get_str(v), s) == 0;
}

#endif

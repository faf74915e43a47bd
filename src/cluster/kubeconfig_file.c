/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubeconfig reader of kubeconfig_file.h: the file and its YAML, the three named lists laid out
 * as entries, and the getters that read members with the same words for every caller. Nothing
 * here reads a file named inside the kubeconfig until a caller asks (adm_kc_read_file).
 */
#include "adm/cluster/kubeconfig_file.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/yaml.h"

#include <mbedtls/base64.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int adm_kc_fail(const adm_kubeconfig_file_t *f, int code, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (f->err == NULL || f->err_len == 0) {
        return code;
    }
    n = snprintf(f->err, f->err_len, "%s: ", f->path);
    if (n < 0 || (size_t)n >= f->err_len) {
        return code;
    }
    va_start(ap, fmt);
    vsnprintf(f->err + n, f->err_len - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int adm_kc_note_file(adm_kubeconfig_file_t *f, const char *path)
{
    if (f->nfiles == f->files_cap) {
        size_t cap = f->files_cap == 0 ? 4 : f->files_cap * 2;
        const char **files =
            adm_arena_realloc(f->arena, f->files, f->files_cap * sizeof(*files), cap * sizeof(*files));

        if (files == NULL) {
            return ADM_ENOMEM;
        }
        f->files = files;
        f->files_cap = cap;
    }
    f->files[f->nfiles] = adm_arena_strndup(f->arena, path, strlen(path));
    return f->files[f->nfiles++] != NULL ? 0 : ADM_ENOMEM;
}

/* One of the three lists: each item an entry, whatever it holds (callers judge what they use). */
static int lay_out(adm_kubeconfig_file_t *f, const char *key, const char *body_key, adm_kc_list_t *l)
{
    yyjson_val *list = yyjson_is_obj(f->root) ? yyjson_obj_get(f->root, key) : NULL;
    yyjson_val *it;
    size_t i, n;

    memset(l, 0, sizeof(*l));
    if (list == NULL || yyjson_is_null(list)) {
        return 0;
    }
    if (!yyjson_is_arr(list)) {
        l->malformed = true;
        return 0;
    }
    l->entries = adm_arena_calloc(f->arena, yyjson_arr_size(list) + 1, sizeof(adm_kc_entry_t));
    if (l->entries == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_arr_foreach(list, i, n, it)
    {
        adm_kc_entry_t *e = &l->entries[i];
        yyjson_val *name = yyjson_obj_get(it, "name");

        e->index = i;
        e->item = yyjson_is_obj(it) ? it : NULL;
        e->name = yyjson_is_str(name) ? yyjson_get_str(name) : NULL;
        e->body = yyjson_obj_get(it, body_key);
        snprintf(e->field, sizeof(e->field), "%s[%zu].%s", key, i, body_key);
    }
    l->n = yyjson_arr_size(list);
    return 0;
}

int adm_kc_parse(adm_arena_t *a, const char *path, const char *text, size_t len, adm_kubeconfig_file_t *f,
                 char *err, size_t err_len)
{
    const char *slash = strrchr(path, '/');
    yyjson_val **docs = NULL;
    char why[512];
    int rc;

    memset(f, 0, sizeof(*f));
    f->arena = a;
    f->err = err;
    f->err_len = err_len;
    /* the caller's path may not outlive the call (a plugin configuration's text) */
    f->path = adm_arena_strndup(a, path, strlen(path));
    f->folder = slash == NULL ? "" : adm_arena_strndup(a, path, (size_t)(slash - path) + 1);
    if (f->path == NULL || f->folder == NULL) {
        f->path = path;
        return adm_kc_fail(f, ADM_ENOMEM, "out of memory");
    }
    rc = adm_yaml_parse(a, text, len, &docs, &f->ndocs, why, sizeof(why));
    if (rc != 0) {
        return rc == ADM_ENOMEM ? adm_kc_fail(f, rc, "out of memory") : adm_kc_fail(f, rc, "%s", why);
    }
    f->root = f->ndocs > 0 ? docs[0] : NULL;
    rc = lay_out(f, "clusters", "cluster", &f->clusters);
    if (rc == 0) {
        rc = lay_out(f, "users", "user", &f->users);
    }
    if (rc == 0) {
        rc = lay_out(f, "contexts", "context", &f->contexts);
    }
    return rc != 0 ? adm_kc_fail(f, rc, "out of memory") : 0;
}

int adm_kc_read(adm_arena_t *a, const char *path, adm_kubeconfig_file_t *f, char *err, size_t err_len)
{
    char *text = NULL;
    size_t len = 0;
    int rc = adm_fs_read(a, path, ADM_KUBECONFIG_MAX_BYTES, &text, &len, err, err_len);

    if (rc == 0) {
        rc = adm_kc_parse(a, path, text, len, f, err, err_len);
    } else {
        memset(f, 0, sizeof(*f));
        f->arena = a;
        f->path = path;
        f->err = err;
        f->err_len = err_len;
    }
    /* the kubeconfig itself is the first file a reload watches, read or not */
    if (rc != ADM_ENOMEM && adm_kc_note_file(f, path) != 0) {
        rc = adm_kc_fail(f, ADM_ENOMEM, "out of memory");
    }
    return rc;
}

const adm_kc_entry_t *adm_kc_find(const adm_kc_list_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->entries[i].name != NULL && strcmp(l->entries[i].name, name) == 0) {
            return &l->entries[i];
        }
    }
    return NULL;
}

int adm_kc_string(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                  const char **out)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    *out = NULL;
    if (v == NULL || yyjson_is_null(v)) {
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return adm_kc_fail(f, ADM_EINVAL, "%s.%s: must be a string", field, key);
    }
    if (yyjson_get_len(v) > 0) {
        *out = yyjson_get_str(v);
    }
    return 0;
}

int adm_kc_bool(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                bool *out)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    *out = false;
    if (v == NULL || yyjson_is_null(v)) {
        return 0;
    }
    if (!yyjson_is_bool(v)) {
        return adm_kc_fail(f, ADM_EINVAL, "%s.%s: must be true or false", field, key);
    }
    *out = yyjson_is_true(v);
    return 0;
}

bool adm_kc_present(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    return v != NULL && !yyjson_is_null(v) && !(yyjson_is_str(v) && yyjson_get_len(v) == 0);
}

int adm_kc_refuse(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                  const char *why)
{
    return adm_kc_present(obj, key) ? adm_kc_fail(f, ADM_EINVAL, "%s.%s: %s", field, key, why) : 0;
}

const char *adm_kc_impersonation(yyjson_val *user)
{
    static const char *const keys[] = {"as", "as-uid", "as-groups", "as-user-extra"};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        yyjson_val *v = yyjson_obj_get(user, keys[i]);

        if (v != NULL && !yyjson_is_null(v) && !(yyjson_is_str(v) && yyjson_get_len(v) == 0) &&
            !(yyjson_is_arr(v) && yyjson_arr_size(v) == 0) &&
            !(yyjson_is_obj(v) && yyjson_obj_size(v) == 0)) {
            return keys[i];
        }
    }
    return NULL;
}

const char *adm_kc_path(adm_kubeconfig_file_t *f, const char *name)
{
    return name[0] == '/' ? adm_arena_strndup(f->arena, name, strlen(name))
                          : adm_arena_printf(f->arena, "%s%s", f->folder, name);
}

/* Standard base64, as Go's encoding/json decodes a []byte (kubeconfig YAML goes through JSON). */
static int decode(adm_kubeconfig_file_t *f, const char *where, const char *text, const char **out,
                  size_t *out_len)
{
    size_t in = strlen(text), n = 0;
    unsigned char *buf = adm_arena_alloc(f->arena, in + 1);

    if (buf == NULL) {
        return adm_kc_fail(f, ADM_ENOMEM, "%s: out of memory", where);
    }
    if (mbedtls_base64_decode(buf, in + 1, &n, (const unsigned char *)text, in) != 0) {
        return adm_kc_fail(f, ADM_EINVAL, "%s: illegal base64 data", where);
    }
    buf[n] = '\0';
    *out = (const char *)buf;
    *out_len = n;
    return 0;
}

int adm_kc_blob(adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *file_key,
                const char *data_key, adm_kc_blob_t *out)
{
    const char *file, *data;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = adm_kc_string(f, obj, field, file_key, &file);
    if (rc == 0) {
        rc = adm_kc_string(f, obj, field, data_key, &data);
    }
    if (rc != 0) {
        return rc;
    }
    if (data != NULL) {
        out->where = adm_arena_printf(f->arena, "%s.%s", field, data_key);
        return out->where != NULL ? decode(f, out->where, data, &out->data, &out->len)
                                  : adm_kc_fail(f, ADM_ENOMEM, "out of memory");
    }
    if (file == NULL) {
        return 0;
    }
    out->where = adm_arena_printf(f->arena, "%s.%s", field, file_key);
    out->file = adm_kc_path(f, file);
    return out->where != NULL && out->file != NULL ? 0 : adm_kc_fail(f, ADM_ENOMEM, "out of memory");
}

int adm_kc_read_file(adm_kubeconfig_file_t *f, const char *path, size_t max, char **data, size_t *len,
                     char *why, size_t why_len)
{
    int rc = adm_kc_note_file(f, path);

    *data = NULL;
    *len = 0;
    if (rc != 0) {
        snprintf(why, why_len, "%s: out of memory", path);
        return rc;
    }
    rc = adm_fs_read(f->arena, path, max, data, len, why, why_len);
    if (rc != 0) {
        *data = NULL;
        *len = 0;
    }
    return rc;
}

static bool token_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

char *adm_kc_trim_token(char *s, size_t len)
{
    while (len > 0 && token_space(s[len - 1])) {
        len--;
    }
    s[len] = '\0';
    while (*s != '\0' && token_space(*s)) {
        s++;
    }
    return s;
}

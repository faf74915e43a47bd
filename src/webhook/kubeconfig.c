/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a webhook kubeConfigFile (Decision D13, kubeconfig.h): its users become ready-made
 * credentials (an Authorization value, a client certificate and key in memory), and a webhook's
 * host and port find theirs as kube-apiserver's defaultAuthenticationInfoResolver does.
 * clientcmd reads kubeconfigs leniently (unknown fields are ignored), so this does too; only what
 * would change a call is checked.
 */
#include "adm/webhook/kubeconfig.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/yaml.h"

#include <mbedtls/base64.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

/* Kubeconfigs and the files they name are small; a token or certificate past this is a mistake. */
#define KUBECONFIG_MAX_BYTES (4u << 20)
#define CREDENTIAL_MAX_BYTES (1u << 20)

typedef struct loader_s {
    adm_arena_t *a;
    const char *path;   /* the kubeconfig, for messages */
    const char *folder; /* where relative names start, with its trailing '/' ("" for none) */
    adm_kubeconfig_t *kc;
    size_t files_cap;
    char *err;
    size_t err_len;
} loader_t;

static int note_file(loader_t *l, const char *file)
{
    if (l->kc->nfiles == l->files_cap) {
        size_t cap = l->files_cap == 0 ? 4 : l->files_cap * 2;
        const char **f = adm_arena_realloc(l->a, l->kc->files, l->files_cap * sizeof(*f), cap * sizeof(*f));

        if (f == NULL) {
            return ADM_ENOMEM;
        }
        l->kc->files = f;
        l->files_cap = cap;
    }
    l->kc->files[l->kc->nfiles++] = file;
    return 0;
}

/* A string field of obj: its value, "" when absent or null; NULL (with err) when not a string. */
static const char *str_field(loader_t *l, yyjson_val *obj, const char *key, const char *where)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    if (v == NULL || yyjson_is_null(v)) {
        return "";
    }
    if (!yyjson_is_str(v)) {
        snprintf(l->err, l->err_len, "%s: %s.%s: must be a string", l->path, where, key);
        return NULL;
    }
    return yyjson_get_str(v);
}

/* A file the kubeconfig names, relative to its folder, as clientcmd's ResolveLocalPaths does. */
static const char *resolve(loader_t *l, const char *file)
{
    return file[0] == '/' ? file : adm_arena_printf(l->a, "%s%s", l->folder, file);
}

/* Reads a named file for a user; a failure is that user's per-call error, not the load's. */
static int read_for_user(loader_t *l, adm_kube_user_t *u, const char *file, char **data, size_t *len)
{
    char why[300];

    *data = NULL;
    if (note_file(l, file) != 0) {
        return ADM_ENOMEM;
    }
    if (adm_fs_read(l->a, file, CREDENTIAL_MAX_BYTES, data, len, why, sizeof(why)) == 0) {
        return 0;
    }
    if (u->error == NULL) {
        u->error = adm_arena_printf(l->a, "open %s", why);
        if (u->error == NULL) {
            return ADM_ENOMEM;
        }
    }
    *data = NULL;
    return 0;
}

/* []byte fields are standard base64 in a kubeconfig (YAML goes through JSON in clientcmd). */
static int decode_data(loader_t *l, const char *text, const char *where, const char **out, size_t *out_len)
{
    size_t n = 0, len = strlen(text);
    unsigned char *buf;

    if (mbedtls_base64_decode(NULL, 0, &n, (const unsigned char *)text, len) ==
        MBEDTLS_ERR_BASE64_INVALID_CHARACTER) {
        snprintf(l->err, l->err_len, "%s: %s: illegal base64 data", l->path, where);
        return ADM_EINVAL;
    }
    buf = adm_arena_alloc(l->a, n + 1);
    if (buf == NULL) {
        return ADM_ENOMEM;
    }
    if (mbedtls_base64_decode(buf, n + 1, &n, (const unsigned char *)text, len) != 0) {
        snprintf(l->err, l->err_len, "%s: %s: illegal base64 data", l->path, where);
        return ADM_EINVAL;
    }
    buf[n] = '\0';
    *out = (const char *)buf;
    *out_len = n;
    return 0;
}

/* What admitd cannot do with a user: refused when the file is read, naming the field. */
static int refuse_unsupported(loader_t *l, yyjson_val *user, const char *where)
{
    static const char *const plugins[] = {"exec", "auth-provider"};
    static const char *const impersonation[] = {"as", "as-uid", "as-groups", "as-user-extra"};

    for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++) {
        yyjson_val *v = yyjson_obj_get(user, plugins[i]);

        if (v != NULL && !yyjson_is_null(v)) {
            snprintf(l->err, l->err_len,
                     "%s: %s.%s: credential plugins are not supported by admitd (give a token, tokenFile or "
                     "client certificate)",
                     l->path, where, plugins[i]);
            return ADM_EINVAL;
        }
    }
    for (size_t i = 0; i < sizeof(impersonation) / sizeof(impersonation[0]); i++) {
        yyjson_val *v = yyjson_obj_get(user, impersonation[i]);

        if (v != NULL && !yyjson_is_null(v) && !(yyjson_is_str(v) && yyjson_get_len(v) == 0) &&
            !(yyjson_is_arr(v) && yyjson_arr_size(v) == 0) &&
            !(yyjson_is_obj(v) && yyjson_obj_size(v) == 0)) {
            snprintf(l->err, l->err_len, "%s: %s.%s: impersonation is not supported by admitd", l->path,
                     where, impersonation[i]);
            return ADM_EINVAL;
        }
    }
    return 0;
}

static bool header_safe(const char *s)
{
    return strpbrk(s, "\r\n") == NULL;
}

/* token wins over tokenFile (read now, trimmed as client-go's file token source does). */
static int read_token(loader_t *l, adm_kube_user_t *u, const char *token, const char *token_file,
                      const char **out)
{
    char *data;
    size_t len;
    int rc;

    *out = token;
    if (token[0] != '\0' || token_file[0] == '\0') {
        return 0;
    }
    token_file = resolve(l, token_file);
    if (token_file == NULL) {
        return ADM_ENOMEM;
    }
    rc = read_for_user(l, u, token_file, &data, &len);
    if (rc != 0 || data == NULL) {
        return rc;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ' ||
                       data[len - 1] == '\t')) {
        data[--len] = '\0';
    }
    while (*data == ' ' || *data == '\t' || *data == '\n' || *data == '\r') {
        data++;
    }
    *out = data;
    return 0;
}

static int set_authorization(loader_t *l, adm_kube_user_t *u, const char *token, const char *username,
                             const char *password)
{
    bool basic = username[0] != '\0' || password[0] != '\0';

    if (token[0] != '\0' && basic) {
        u->error = u->error != NULL ? u->error : "username/password or bearer token may be set, but not both";
        return 0;
    }
    if (token[0] != '\0') {
        u->authorization = adm_arena_printf(l->a, "Bearer %s", token);
    } else if (basic) {
        const char *pair = adm_arena_printf(l->a, "%s:%s", username, password);
        size_t n = 0, len = pair != NULL ? strlen(pair) : 0;
        unsigned char *b64;

        if (pair == NULL) {
            return ADM_ENOMEM;
        }
        mbedtls_base64_encode(NULL, 0, &n, (const unsigned char *)pair, len);
        b64 = adm_arena_alloc(l->a, n + 1);
        if (b64 == NULL || mbedtls_base64_encode(b64, n + 1, &n, (const unsigned char *)pair, len) != 0) {
            return ADM_ENOMEM;
        }
        u->authorization = adm_arena_printf(l->a, "Basic %s", (const char *)b64);
    } else {
        return 0;
    }
    if (u->authorization == NULL) {
        return ADM_ENOMEM;
    }
    if (!header_safe(u->authorization)) {
        u->authorization = NULL;
        u->error = u->error != NULL ? u->error : "invalid header field value for \"Authorization\"";
    }
    return 0;
}

/* One of the certificate or the key: inline data wins over the file, as in client-go. */
static int read_pem(loader_t *l, adm_kube_user_t *u, yyjson_val *user, const char *where,
                    const char *file_key, const char *data_key, const char **out, size_t *out_len)
{
    const char *file = str_field(l, user, file_key, where);
    const char *data = str_field(l, user, data_key, where);
    char *bytes;
    int rc;

    *out = NULL;
    if (file == NULL || data == NULL) {
        return ADM_EINVAL;
    }
    if (data[0] != '\0') {
        const char *field = adm_arena_printf(l->a, "%s.%s", where, data_key);

        return field == NULL ? ADM_ENOMEM : decode_data(l, data, field, out, out_len);
    }
    if (file[0] == '\0') {
        return 0;
    }
    file = resolve(l, file);
    if (file == NULL) {
        return ADM_ENOMEM;
    }
    rc = read_for_user(l, u, file, &bytes, out_len);
    *out = bytes;
    return rc;
}

static int load_user(loader_t *l, yyjson_val *entry, size_t index, adm_kube_user_t *u)
{
    char where[64];
    yyjson_val *user;
    const char *token, *token_file, *username, *password;
    const char *cert_file;
    int rc;

    snprintf(where, sizeof(where), "users[%zu]", index);
    u->name = str_field(l, entry, "name", where);
    if (u->name == NULL) {
        return ADM_EINVAL;
    }
    for (size_t i = 0; i < index; i++) {
        if (strcmp(l->kc->users[i].name, u->name) == 0) {
            snprintf(l->err, l->err_len, "%s: %s.name: duplicate name \"%s\" in list", l->path, where,
                     u->name);
            return ADM_EINVAL;
        }
    }
    user = yyjson_obj_get(entry, "user");
    if (user == NULL || yyjson_is_null(user)) {
        return 0;
    }
    if (!yyjson_is_obj(user)) {
        snprintf(l->err, l->err_len, "%s: %s.user: must be an object", l->path, where);
        return ADM_EINVAL;
    }
    snprintf(where, sizeof(where), "users[%zu].user", index);
    rc = refuse_unsupported(l, user, where);
    if (rc != 0) {
        return rc;
    }
    token = str_field(l, user, "token", where);
    token_file = str_field(l, user, "tokenFile", where);
    username = str_field(l, user, "username", where);
    password = str_field(l, user, "password", where);
    cert_file = str_field(l, user, "client-certificate", where);
    if (token == NULL || token_file == NULL || username == NULL || password == NULL || cert_file == NULL) {
        return ADM_EINVAL;
    }
    rc = read_token(l, u, token, token_file, &token);
    if (rc == 0) {
        rc = set_authorization(l, u, token, username, password);
    }
    if (rc == 0) {
        rc = read_pem(l, u, user, where, "client-certificate", "client-certificate-data", &u->cert_pem,
                      &u->cert_pem_len);
    }
    if (rc != 0 || u->cert_pem == NULL) {
        return rc; /* kube takes the key only with a certificate */
    }
    rc = read_pem(l, u, user, where, "client-key", "client-key-data", &u->key_pem, &u->key_pem_len);
    u->cert_label = adm_arena_printf(l->a, "%s (%s) client certificate", where, u->name);
    return rc != 0 ? rc : (u->cert_label == NULL ? ADM_ENOMEM : 0);
}

/* current-context's user, when the context and the user both exist. */
static int find_current(loader_t *l, yyjson_val *root)
{
    const char *current = str_field(l, root, "current-context", "kubeconfig");
    yyjson_val *contexts = yyjson_obj_get(root, "contexts");
    yyjson_val *c;
    size_t i, n;

    if (current == NULL) {
        return ADM_EINVAL;
    }
    if (current[0] == '\0' || !yyjson_is_arr(contexts)) {
        return 0;
    }
    yyjson_arr_foreach(contexts, i, n, c)
    {
        const char *name = yyjson_get_str(yyjson_obj_get(c, "name"));
        const char *user = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(c, "context"), "user"));

        if (name == NULL || strcmp(name, current) != 0 || user == NULL || user[0] == '\0') {
            continue;
        }
        for (size_t k = 0; k < l->kc->nusers; k++) {
            if (strcmp(l->kc->users[k].name, user) == 0) {
                l->kc->current = &l->kc->users[k];
            }
        }
        break;
    }
    return 0;
}

static int parse(loader_t *l, const char *text, size_t len)
{
    yyjson_val **docs, *users, *entry;
    size_t ndocs, i, n;
    char why[256];
    int rc = adm_yaml_parse(l->a, text, len, &docs, &ndocs, why, sizeof(why));

    if (rc != 0) {
        snprintf(l->err, l->err_len, "%s: %s", l->path, rc == ADM_ENOMEM ? "out of memory" : why);
        return rc == ADM_ENOMEM ? rc : ADM_EINVAL;
    }
    if (ndocs == 0) {
        return 0; /* clientcmd reads an empty file as an empty config */
    }
    if (!yyjson_is_obj(docs[0])) {
        snprintf(l->err, l->err_len, "%s: not a kubeconfig (want an object with users)", l->path);
        return ADM_EINVAL;
    }
    users = yyjson_obj_get(docs[0], "users");
    if (users != NULL && !yyjson_is_null(users) && !yyjson_is_arr(users)) {
        snprintf(l->err, l->err_len, "%s: users: must be a list", l->path);
        return ADM_EINVAL;
    }
    l->kc->users = adm_arena_calloc(l->a, yyjson_arr_size(users) + 1, sizeof(adm_kube_user_t));
    if (l->kc->users == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_arr_foreach(users, i, n, entry)
    {
        if (!yyjson_is_obj(entry)) {
            snprintf(l->err, l->err_len, "%s: users[%zu]: must be an object", l->path, i);
            return ADM_EINVAL;
        }
        rc = load_user(l, entry, i, &l->kc->users[i]);
        if (rc != 0) {
            return rc;
        }
        l->kc->nusers = i + 1;
    }
    return find_current(l, docs[0]);
}

int adm_kubeconfig_load(adm_arena_t *a, const char *path, adm_kubeconfig_t *out, char *err, size_t err_len)
{
    loader_t l = {.a = a, .kc = out, .err = err, .err_len = err_len};
    const char *slash = strrchr(path, '/');
    char *text;
    size_t len;
    int rc;

    memset(out, 0, sizeof(*out));
    /* the caller's text may not outlive the call (a plugin configuration's): files keeps a copy */
    l.path = adm_arena_strndup(a, path, strlen(path));
    l.folder = slash == NULL ? "" : adm_arena_strndup(a, path, (size_t)(slash - path) + 1);
    if (l.path == NULL || l.folder == NULL || note_file(&l, l.path) != 0) {
        snprintf(err, err_len, "%s: out of memory", path);
        return ADM_ENOMEM;
    }
    rc = adm_fs_read(a, l.path, KUBECONFIG_MAX_BYTES, &text, &len, err, err_len);
    if (rc != 0) {
        return rc;
    }
    rc = parse(&l, text, len);
    if (rc == ADM_ENOMEM) {
        snprintf(err, err_len, "%s: out of memory", path);
    }
    return rc;
}

static const adm_kube_user_t *named(const adm_kubeconfig_t *kc, const char *name, size_t len)
{
    for (size_t i = 0; i < kc->nusers; i++) {
        if (strlen(kc->users[i].name) == len && memcmp(kc->users[i].name, name, len) == 0) {
            return &kc->users[i];
        }
    }
    return NULL;
}

/* The exact name, then "*." + every shorter suffix after a dot (authentication.go's two steps). */
static const adm_kube_user_t *exact_or_wildcard(const adm_kubeconfig_t *kc, const char *target, size_t len)
{
    const adm_kube_user_t *u = named(kc, target, len);
    char pattern[600];

    for (const char *dot = memchr(target, '.', len); u == NULL && dot != NULL;
         dot = memchr(dot + 1, '.', len - (size_t)(dot + 1 - target))) {
        size_t rest = len - (size_t)(dot + 1 - target);

        if (rest + 2 >= sizeof(pattern)) {
            continue;
        }
        pattern[0] = '*';
        pattern[1] = '.';
        memcpy(pattern + 2, dot + 1, rest);
        u = named(kc, pattern, rest + 2);
    }
    return u;
}

const adm_kube_user_t *adm_kubeconfig_user_for(const adm_kubeconfig_t *kc, const char *host_port)
{
    size_t len = strlen(host_port);
    const adm_kube_user_t *u = exact_or_wildcard(kc, host_port, len);

    /* Go's SplitHostPort: the port follows the last ':'; a bracketed IPv6 host loses its brackets */
    if (u == NULL && len > 4 && strcmp(host_port + len - 4, ":443") == 0) {
        const char *host = host_port;
        size_t host_len = len - 4;

        if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
            host++;
            host_len -= 2;
        }
        if (host[0] != '[' && (host_port[0] == '[' || memchr(host, ':', host_len) == NULL)) {
            u = exact_or_wildcard(kc, host, host_len);
        }
    }
    if (u == NULL) {
        u = named(kc, "*", 1);
    }
    return u != NULL ? u : kc->current;
}

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
#include "adm/cluster/kubeconfig_file.h"

#include <mbedtls/base64.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A token or certificate past this is a mistake. */
#define CREDENTIAL_MAX_BYTES (1u << 20)

typedef struct loader_s {
    adm_kubeconfig_file_t f;
    adm_kubeconfig_t *kc;
} loader_t;

/* A string member: its value, "" when absent, null or ""; NULL (with the message) when not a string. */
static const char *str_field(loader_t *l, yyjson_val *obj, const char *key, const char *where)
{
    const char *s;

    return adm_kc_string(&l->f, obj, where, key, &s) != 0 ? NULL : (s != NULL ? s : "");
}

/* Reads a named file for a user; a failure is that user's per-call error, not the load's. */
static int read_for_user(loader_t *l, adm_kube_user_t *u, const char *file, char **data, size_t *len)
{
    char why[300];
    int rc = adm_kc_read_file(&l->f, file, CREDENTIAL_MAX_BYTES, data, len, why, sizeof(why));

    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0 && u->error == NULL) {
        u->error = adm_arena_printf(l->f.arena, "open %s", why);
        if (u->error == NULL) {
            return ADM_ENOMEM;
        }
    }
    return 0;
}

/* What admitd cannot do with a user: refused when the file is read, naming the field. */
static int refuse_unsupported(loader_t *l, yyjson_val *user, const char *where)
{
    static const char plugins_why[] =
        "credential plugins are not supported by admitd (give a token, tokenFile or client certificate)";
    const char *as = adm_kc_impersonation(user);
    int rc = adm_kc_refuse(&l->f, user, where, "exec", plugins_why);

    if (rc == 0) {
        rc = adm_kc_refuse(&l->f, user, where, "auth-provider", plugins_why);
    }
    if (rc == 0 && as != NULL) {
        rc = adm_kc_fail(&l->f, ADM_EINVAL, "%s.%s: impersonation is not supported by admitd", where, as);
    }
    return rc;
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
    token_file = adm_kc_path(&l->f, token_file);
    if (token_file == NULL) {
        return ADM_ENOMEM;
    }
    rc = read_for_user(l, u, token_file, &data, &len);
    if (rc != 0 || data == NULL) {
        return rc;
    }
    *out = adm_kc_trim_token(data, len);
    return 0;
}

static int set_authorization(loader_t *l, adm_kube_user_t *u, const char *token, const char *username,
                             const char *password)
{
    adm_arena_t *a = l->f.arena;
    bool basic = username[0] != '\0' || password[0] != '\0';

    if (token[0] != '\0' && basic) {
        u->error = u->error != NULL ? u->error : "username/password or bearer token may be set, but not both";
        return 0;
    }
    if (token[0] != '\0') {
        u->authorization = adm_arena_printf(a, "Bearer %s", token);
    } else if (basic) {
        const char *pair = adm_arena_printf(a, "%s:%s", username, password);
        size_t n = 0, len = pair != NULL ? strlen(pair) : 0;
        unsigned char *b64;

        if (pair == NULL) {
            return ADM_ENOMEM;
        }
        mbedtls_base64_encode(NULL, 0, &n, (const unsigned char *)pair, len);
        b64 = adm_arena_alloc(a, n + 1);
        if (b64 == NULL || mbedtls_base64_encode(b64, n + 1, &n, (const unsigned char *)pair, len) != 0) {
            return ADM_ENOMEM;
        }
        u->authorization = adm_arena_printf(a, "Basic %s", (const char *)b64);
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
    adm_kc_blob_t b;
    char *bytes;
    int rc = adm_kc_blob(&l->f, user, where, file_key, data_key, &b);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    if (b.data != NULL) {
        *out = b.data;
        *out_len = b.len;
        return 0;
    }
    if (b.file == NULL) {
        return 0;
    }
    rc = read_for_user(l, u, b.file, &bytes, out_len);
    *out = bytes;
    return rc;
}

static int load_user(loader_t *l, const adm_kc_entry_t *e, adm_kube_user_t *u)
{
    char where[64];
    yyjson_val *user = e->body;
    const char *token, *token_file, *username, *password;
    const char *cert_file;
    int rc;

    snprintf(where, sizeof(where), "users[%zu]", e->index);
    if (e->item == NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: must be an object", where);
    }
    u->name = str_field(l, e->item, "name", where);
    if (u->name == NULL) {
        return ADM_EINVAL;
    }
    for (size_t i = 0; i < e->index; i++) {
        if (strcmp(l->kc->users[i].name, u->name) == 0) {
            return adm_kc_fail(&l->f, ADM_EINVAL, "%s.name: duplicate name \"%s\" in list", where, u->name);
        }
    }
    if (user == NULL || yyjson_is_null(user)) {
        return 0;
    }
    if (!yyjson_is_obj(user)) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: must be an object", e->field);
    }
    rc = refuse_unsupported(l, user, e->field);
    if (rc != 0) {
        return rc;
    }
    token = str_field(l, user, "token", e->field);
    token_file = token != NULL ? str_field(l, user, "tokenFile", e->field) : NULL;
    username = token_file != NULL ? str_field(l, user, "username", e->field) : NULL;
    password = username != NULL ? str_field(l, user, "password", e->field) : NULL;
    cert_file = password != NULL ? str_field(l, user, "client-certificate", e->field) : NULL;
    if (cert_file == NULL) {
        return ADM_EINVAL;
    }
    rc = read_token(l, u, token, token_file, &token);
    if (rc == 0) {
        rc = set_authorization(l, u, token, username, password);
    }
    if (rc == 0) {
        rc = read_pem(l, u, user, e->field, "client-certificate", "client-certificate-data", &u->cert_pem,
                      &u->cert_pem_len);
    }
    if (rc != 0 || u->cert_pem == NULL) {
        return rc; /* kube takes the key only with a certificate */
    }
    rc = read_pem(l, u, user, e->field, "client-key", "client-key-data", &u->key_pem, &u->key_pem_len);
    u->cert_label = adm_arena_printf(l->f.arena, "%s (%s) client certificate", e->field, u->name);
    return rc != 0 ? rc : (u->cert_label == NULL ? ADM_ENOMEM : 0);
}

/* current-context's user, when the context and the user both exist. */
static int find_current(loader_t *l)
{
    const char *current = str_field(l, l->f.root, "current-context", "kubeconfig");

    if (current == NULL) {
        return ADM_EINVAL;
    }
    if (current[0] == '\0') {
        return 0;
    }
    for (size_t i = 0; i < l->f.contexts.n; i++) {
        const adm_kc_entry_t *c = &l->f.contexts.entries[i];
        const char *user = yyjson_get_str(yyjson_obj_get(c->body, "user"));

        if (c->name == NULL || strcmp(c->name, current) != 0 || user == NULL || user[0] == '\0') {
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

static int load_users(loader_t *l)
{
    int rc;

    if (l->f.ndocs == 0) {
        return 0; /* clientcmd reads an empty file as an empty config */
    }
    if (!yyjson_is_obj(l->f.root)) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "not a kubeconfig (want an object with users)");
    }
    if (l->f.users.malformed) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "users: must be a list");
    }
    l->kc->users = adm_arena_calloc(l->f.arena, l->f.users.n + 1, sizeof(adm_kube_user_t));
    if (l->kc->users == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < l->f.users.n; i++) {
        rc = load_user(l, &l->f.users.entries[i], &l->kc->users[i]);
        if (rc != 0) {
            return rc;
        }
        l->kc->nusers = i + 1;
    }
    return find_current(l);
}

int adm_kubeconfig_load(adm_arena_t *a, const char *path, adm_kubeconfig_t *out, char *err, size_t err_len)
{
    loader_t l = {.kc = out};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = adm_kc_read(a, path, &l.f, err, err_len);
    if (rc == ADM_EPARSE) {
        rc = ADM_EINVAL;
    }
    if (rc == 0) {
        rc = load_users(&l);
    }
    if (rc == ADM_ENOMEM) {
        snprintf(err, err_len, "%s: out of memory", path);
    }
    out->files = l.f.files;
    out->nfiles = l.f.nfiles;
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubeconfig and in-cluster configuration, read at start and again by each reload into
 * adm_kube_config_t. The file is read by the one kubeconfig reader (kubeconfig_file.h: YAML or
 * JSON, the named lists, the members' types, inline -data, relative names); this file resolves the
 * current context from it. Certificates and keys are parsed with mbedTLS here, so a bad PEM is
 * reported with the field it came from rather than as a TLS failure later. Secrets live in the
 * config's own arena and are zeroized when it is freed.
 */
#include "adm/cluster/kubeconfig.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/cluster/kubeconfig_file.h"

#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/psa_util.h>
#include <mbedtls/x509_crt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PEM_BYTES (1u << 20)
#define MAX_TOKEN_BYTES (64u << 10)

typedef struct loader_s {
    adm_kube_config_t *c;
    adm_kubeconfig_file_t f; /* the kubeconfig (for in-cluster, only its name and the files read) */
} loader_t;

/* Finds the entry named name in list key ("clusters", "users", "contexts"), whose body must be a mapping. */
static int find_named(loader_t *l, const adm_kc_list_t *list, const char *key, const char *what,
                      const char *name, const char *ctx_field, const adm_kc_entry_t **entry)
{
    const adm_kc_entry_t *e;

    if (list->malformed) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: must be a list", key);
    }
    e = adm_kc_find(list, name);
    if (e == NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: no %s named \"%s\" in %s", ctx_field, what, name, key);
    }
    if (!yyjson_is_obj(e->body)) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: must be a mapping", e->field);
    }
    *entry = e;
    return 0;
}

/* Reads a file field into the config's arena, NUL-terminated; a failure is the load's. */
static int read_field_file(loader_t *l, const char *field, const char *path, size_t max, char **data,
                           size_t *len)
{
    char why[512];
    int rc = adm_kc_read_file(&l->f, path, max, data, len, why, sizeof(why));

    if (rc == ADM_ENOMEM) {
        return adm_kc_fail(&l->f, rc, "%s: out of memory", field);
    }
    if (rc != 0) {
        return adm_kc_fail(&l->f, ADM_EIO, "%s: %s", field, why);
    }
    return 0;
}

/* The PEM of a file field or its -data twin (data wins, as in clientcmd); NULL when neither. */
static int pem_source(loader_t *l, yyjson_val *obj, const char *field, const char *file_key,
                      const char *data_key, const char **pem, size_t *pem_len, const char **where)
{
    adm_kc_blob_t b;
    char *buf = NULL;
    size_t len = 0;
    int rc = adm_kc_blob(&l->f, obj, field, file_key, data_key, &b);

    *pem = NULL;
    *pem_len = 0;
    *where = b.where;
    if (rc != 0 || (b.data == NULL && b.file == NULL)) {
        return rc;
    }
    if (b.data != NULL) {
        buf = (char *)b.data;
        len = b.len;
    } else {
        rc = read_field_file(l, b.where, b.file, MAX_PEM_BYTES, &buf, &len);
        if (rc != 0) {
            return rc;
        }
    }
    *pem = buf;
    *pem_len = len + 1; /* mbedTLS wants PEM with its NUL */
    return 0;
}

static int check_certs(loader_t *l, const char *where, const char *pem, size_t len)
{
    mbedtls_x509_crt crt;
    char text[128];
    int ret;

    mbedtls_x509_crt_init(&crt);
    ret = mbedtls_x509_crt_parse(&crt, (const unsigned char *)pem, len);
    mbedtls_x509_crt_free(&crt);
    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: not a PEM certificate bundle (%s)", where, text);
    }
    return 0;
}

static int check_key_pair(loader_t *l, const char *cert_where, const char *key_where)
{
    adm_kube_config_t *c = l->c;
    mbedtls_x509_crt crt;
    mbedtls_pk_context pk;
    char text[128];
    int ret;

    mbedtls_x509_crt_init(&crt);
    mbedtls_pk_init(&pk);
    ret = mbedtls_x509_crt_parse(&crt, (const unsigned char *)c->cert_pem, c->cert_pem_len);
    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        adm_kc_fail(&l->f, ADM_EINVAL, "%s: not a PEM certificate (%s)", cert_where, text);
        goto out;
    }
    ret = mbedtls_pk_parse_key(&pk, (const unsigned char *)c->key_pem, c->key_pem_len, NULL, 0,
                               mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        adm_kc_fail(&l->f, ADM_EINVAL, "%s: not a PEM private key (%s)", key_where, text);
        goto out;
    }
    ret = mbedtls_pk_check_pair(&crt.pk, &pk, mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
    if (ret != 0) {
        adm_kc_fail(&l->f, ADM_EINVAL, "%s: does not match %s", key_where, cert_where);
    }
out:
    mbedtls_pk_free(&pk);
    mbedtls_x509_crt_free(&crt);
    return ret != 0 ? ADM_EINVAL : 0;
}

static int set_server(loader_t *l, const char *field, const char *server)
{
    adm_kube_config_t *c = l->c;
    const char *rest = NULL, *problem = NULL;
    size_t n;

    if (adm_url_split(server, &c->tls, c->host, sizeof(c->host), &c->port, &rest, &problem) != 0) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: %s: %s", field, server, problem);
    }
    if (strchr(rest, '?') != NULL || strchr(rest, '#') != NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: %s: must not have a query or fragment", field, server);
    }
    n = strlen(rest);
    while (n > 0 && rest[n - 1] == '/') {
        n--;
    }
    c->server = adm_arena_strndup(c->arena, server, strlen(server));
    c->path_prefix = adm_arena_strndup(c->arena, rest, n);
    return c->server != NULL && c->path_prefix != NULL ? 0 : adm_kc_fail(&l->f, ADM_ENOMEM, "out of memory");
}

/* Reads a token file as client-go's fileTokenSource: whitespace trimmed, empty is an error. */
static int read_token(loader_t *l, const char *field, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_field_file(l, field, path, MAX_TOKEN_BYTES, &buf, &len);

    if (rc != 0) {
        return rc;
    }
    buf = adm_kc_trim_token(buf, len);
    if (buf[0] == '\0') {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: read empty token from file %s", field, path);
    }
    l->c->token = buf;
    return 0;
}

static int load_cluster(loader_t *l, const adm_kc_entry_t *e)
{
    adm_kube_config_t *c = l->c;
    yyjson_val *cl = e->body;
    char field[64];
    const char *server, *name, *proxy, *where = NULL;
    int rc = adm_kc_string(&l->f, cl, e->field, "server", &server);

    if (rc != 0) {
        return rc;
    }
    if (server == NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s.server: must be set", e->field);
    }
    snprintf(field, sizeof(field), "%s.server", e->field);
    rc = set_server(l, field, server);
    if (rc == 0) {
        rc = adm_kc_string(&l->f, cl, e->field, "proxy-url", &proxy);
    }
    if (rc == 0 && proxy != NULL) {
        rc = adm_kc_fail(&l->f, ADM_EINVAL, "%s.proxy-url: proxies are not supported by admitd", e->field);
    }
    if (rc == 0) {
        rc = adm_kc_string(&l->f, cl, e->field, "tls-server-name", &name);
    }
    if (rc == 0) {
        rc = adm_kc_bool(&l->f, cl, e->field, "insecure-skip-tls-verify", &c->insecure);
    }
    if (rc != 0) {
        return rc;
    }
    c->tls_server_name = name;
    rc = pem_source(l, cl, e->field, "certificate-authority", "certificate-authority-data", &c->ca_pem,
                    &c->ca_pem_len, &where);
    if (rc == 0 && c->ca_pem != NULL) {
        if (c->insecure) {
            /* clientcmd's validation: the two together are an error, not a silent choice */
            return adm_kc_fail(&l->f, ADM_EINVAL,
                               "%s: certificate-authority and insecure-skip-tls-verify together", e->field);
        }
        rc = check_certs(l, where, c->ca_pem, c->ca_pem_len);
    }
    return rc;
}

static int load_user(loader_t *l, const adm_kc_entry_t *e)
{
    static const char plugins_why[] = "plugins are not supported by admitd (use token, tokenFile or a client "
                                      "certificate)";
    static const char basic_why[] =
        "basic authentication is not supported (kube-apiserver removed it in 1.19)";
    adm_kube_config_t *c = l->c;
    yyjson_val *user = e->body;
    const char *token, *token_file, *cert_where = NULL, *key_where = NULL;
    char why[160];
    int rc;

    snprintf(why, sizeof(why), "exec credential %s", plugins_why);
    rc = adm_kc_refuse(&l->f, user, e->field, "exec", why);
    if (rc == 0) {
        snprintf(why, sizeof(why), "auth-provider %s", plugins_why);
        rc = adm_kc_refuse(&l->f, user, e->field, "auth-provider", why);
    }
    if (rc == 0) {
        rc = adm_kc_refuse(&l->f, user, e->field, "username", basic_why);
    }
    if (rc == 0) {
        rc = adm_kc_refuse(&l->f, user, e->field, "password", basic_why);
    }
    if (rc == 0) {
        rc = adm_kc_string(&l->f, user, e->field, "token", &token);
    }
    if (rc == 0) {
        rc = adm_kc_string(&l->f, user, e->field, "tokenFile", &token_file);
    }
    if (rc != 0) {
        return rc;
    }
    c->token = token;
    if (token_file != NULL) {
        char where[96];

        c->token_file = adm_kc_path(&l->f, token_file);
        if (c->token_file == NULL) {
            return adm_kc_fail(&l->f, ADM_ENOMEM, "out of memory");
        }
        snprintf(where, sizeof(where), "%s.tokenFile", e->field);
        /* clientcmd reads it at once (a missing file is an error at start); later reads follow
           client-go's cached file token source. */
        rc = read_token(l, where, c->token_file);
        if (rc != 0) {
            return rc;
        }
    }
    rc = pem_source(l, user, e->field, "client-certificate", "client-certificate-data", &c->cert_pem,
                    &c->cert_pem_len, &cert_where);
    if (rc == 0) {
        rc = pem_source(l, user, e->field, "client-key", "client-key-data", &c->key_pem, &c->key_pem_len,
                        &key_where);
    }
    if (rc != 0) {
        return rc;
    }
    if ((c->cert_pem == NULL) != (c->key_pem == NULL)) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s: %s needs %s", e->field,
                           c->cert_pem != NULL ? "client-certificate" : "client-key",
                           c->cert_pem != NULL ? "client-key" : "client-certificate");
    }
    if (c->cert_pem != NULL) {
        return check_key_pair(l, cert_where, key_where);
    }
    return 0;
}

static int load_root(loader_t *l)
{
    const char *current, *cluster, *user, *ns;
    const adm_kc_entry_t *ctx = NULL, *cl = NULL, *us = NULL;
    yyjson_val *root = l->f.root;
    char field[64];
    int rc;

    if (l->f.ndocs != 1) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "expected one YAML document, found %zu", l->f.ndocs);
    }
    if (!yyjson_is_obj(root)) {
        return adm_kc_fail(&l->f, ADM_EINVAL,
                           "not a kubeconfig (expected a mapping with clusters, users and contexts)");
    }
    rc = adm_kc_string(&l->f, root, "kubeconfig", "current-context", &current);
    if (rc != 0) {
        return rc;
    }
    if (current == NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "current-context: not set");
    }
    rc = find_named(l, &l->f.contexts, "contexts", "context", current, "current-context", &ctx);
    if (rc != 0) {
        return rc;
    }
    rc = adm_kc_string(&l->f, ctx->body, ctx->field, "cluster", &cluster);
    if (rc == 0) {
        rc = adm_kc_string(&l->f, ctx->body, ctx->field, "user", &user);
    }
    if (rc == 0) {
        rc = adm_kc_string(&l->f, ctx->body, ctx->field, "namespace", &ns);
    }
    if (rc != 0) {
        return rc;
    }
    if (cluster == NULL) {
        return adm_kc_fail(&l->f, ADM_EINVAL, "%s.cluster: must be set", ctx->field);
    }
    l->c->namespace_ = ns != NULL ? ns : "default";
    snprintf(field, sizeof(field), "%s.cluster", ctx->field);
    rc = find_named(l, &l->f.clusters, "clusters", "cluster", cluster, field, &cl);
    if (rc == 0) {
        rc = load_cluster(l, cl);
    }
    if (rc != 0 || user == NULL) {
        return rc;
    }
    snprintf(field, sizeof(field), "%s.user", ctx->field);
    rc = find_named(l, &l->f.users, "users", "user", user, field, &us);
    if (rc == 0) {
        rc = load_user(l, us);
    }
    return rc;
}

static adm_kube_config_t *config_new(void)
{
    adm_kube_config_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->arena = adm_arena_create(16384);
    if (c->arena == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

/* The files the load read (or tried), for the reload's watch. */
static void keep_files(loader_t *l)
{
    l->c->files = l->f.files;
    l->c->nfiles = l->f.nfiles;
}

int adm_kube_config_load(const char *path, adm_kube_config_t **out, char *err, size_t err_len)
{
    adm_kube_config_t *c = config_new();
    loader_t l = {.c = c};
    int rc;

    *out = NULL;
    if (c == NULL) {
        snprintf(err, err_len, "%s: out of memory", path);
        return ADM_ENOMEM;
    }
    c->source = adm_arena_strndup(c->arena, path, strlen(path));
    rc = adm_kc_read(c->arena, path, &l.f, err, err_len);
    if (rc == 0) {
        rc = load_root(&l);
    }
    if (rc != 0) {
        adm_kube_config_free(c);
        return rc;
    }
    keep_files(&l);
    *out = c;
    return 0;
}

/* rest.InClusterConfig logs a ca.crt it cannot load and goes on with the system roots. */
static int load_in_cluster_ca(loader_t *l, const char *ca_path)
{
    adm_kube_config_t *c = l->c;
    char *buf = NULL;
    size_t len = 0;
    char why[512];
    int rc = adm_kc_read_file(&l->f, ca_path, MAX_PEM_BYTES, &buf, &len, why, sizeof(why));

    if (rc == ADM_ENOMEM) {
        return adm_kc_fail(&l->f, rc, "out of memory");
    }
    if (rc != 0) {
        adm_log_warn("in-cluster: expected to load root CA config from %s, but got err: %s", ca_path, why);
        return 0;
    }
    if (check_certs(l, ca_path, buf, len + 1) != 0) {
        adm_log_warn("in-cluster: expected to load root CA config from %s, but got err: %s", ca_path,
                     l->f.err);
        l->f.err[0] = '\0';
        return 0;
    }
    c->ca_pem = buf;
    c->ca_pem_len = len + 1;
    return 0;
}

int adm_kube_config_in_cluster(adm_kube_config_t **out, char *err, size_t err_len)
{
    adm_kube_config_t *c = config_new();
    loader_t l = {.c = c};
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = getenv("ADM_SERVICEACCOUNT_DIR");
    const char *server, *ca_path, *ns_path;
    char *ns = NULL;
    size_t ns_len = 0;
    int rc;

    *out = NULL;
    if (c == NULL) {
        snprintf(err, err_len, "in-cluster: out of memory");
        return ADM_ENOMEM;
    }
    /* no kubeconfig: the reader's state only names the source and keeps the files read */
    l.f.arena = c->arena;
    l.f.path = "in-cluster";
    l.f.folder = "";
    l.f.err = err;
    l.f.err_len = err_len;
    c->source = "in-cluster";
    if (dir == NULL || dir[0] == '\0') {
        dir = ADM_SERVICEACCOUNT_DIR;
    }
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
        /* client-go's ErrNotInCluster */
        snprintf(err, err_len,
                 "--in-cluster: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
                 "and KUBERNETES_SERVICE_PORT must be defined");
        rc = ADM_EINVAL;
        goto fail;
    }
    /* net.JoinHostPort: an IPv6 address goes in brackets */
    server = strchr(host, ':') != NULL ? adm_arena_printf(c->arena, "https://[%s]:%s", host, port)
                                       : adm_arena_printf(c->arena, "https://%s:%s", host, port);
    rc = server != NULL ? set_server(&l, "KUBERNETES_SERVICE_HOST/PORT", server)
                        : adm_kc_fail(&l.f, ADM_ENOMEM, "out of memory");
    if (rc != 0) {
        goto fail;
    }
    c->token_file = adm_arena_printf(c->arena, "%s/token", dir);
    rc = c->token_file != NULL ? read_token(&l, "token", c->token_file)
                               : adm_kc_fail(&l.f, ADM_ENOMEM, "out of memory");
    if (rc != 0) {
        goto fail;
    }
    ca_path = adm_arena_printf(c->arena, "%s/ca.crt", dir);
    rc = ca_path != NULL ? load_in_cluster_ca(&l, ca_path) : adm_kc_fail(&l.f, ADM_ENOMEM, "out of memory");
    if (rc != 0) {
        goto fail;
    }
    ns_path = adm_arena_printf(c->arena, "%s/namespace", dir);
    c->namespace_ = "default";
    if (ns_path != NULL && adm_fs_read(c->arena, ns_path, 4096, &ns, &ns_len, err, err_len) == 0) {
        while (ns_len > 0 && (ns[ns_len - 1] == '\n' || ns[ns_len - 1] == ' ')) {
            ns[--ns_len] = '\0';
        }
        if (ns_len > 0) {
            c->namespace_ = ns;
        }
    }
    err[0] = '\0';
    keep_files(&l);
    *out = c;
    return 0;
fail:
    adm_kube_config_free(c);
    return rc;
}

static void zero_secret(const char *s, size_t len)
{
    if (s != NULL) {
        mbedtls_platform_zeroize((void *)s, len);
    }
}

void adm_kube_config_free(adm_kube_config_t *c)
{
    if (c == NULL) {
        return;
    }
    zero_secret(c->key_pem, c->key_pem_len);
    zero_secret(c->token, c->token != NULL ? strlen(c->token) : 0);
    adm_arena_destroy(c->arena);
    free(c);
}

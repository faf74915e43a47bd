/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubeconfig and in-cluster configuration, read once at start into adm_kube_config_t. The file is
 * parsed by the project's YAML reader (go-yaml v2 resolution, as clientcmd's sigs.k8s.io/yaml);
 * certificates and keys are parsed with mbedTLS here, so a bad PEM is reported with the field it
 * came from rather than as a TLS failure later. Secrets live in the config's own arena and are
 * zeroized when it is freed.
 */
#include "adm/cluster/kubeconfig.h"

#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/base/yaml.h"

#include <mbedtls/base64.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/psa_util.h>
#include <mbedtls/x509_crt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KUBECONFIG_BYTES (4u << 20)
#define MAX_PEM_BYTES (1u << 20)
#define MAX_TOKEN_BYTES (64u << 10)

typedef struct loader_s {
    adm_kube_config_t *c;
    const char *file; /* the kubeconfig, for messages */
    const char *dir;  /* its folder, for relative paths */
    char *err;
    size_t err_len;
} loader_t;

static int fail(loader_t *l, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(loader_t *l, int code, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(l->err, l->err_len, "%s: ", l->file);

    if (n < 0 || (size_t)n >= l->err_len) {
        return code;
    }
    va_start(ap, fmt);
    vsnprintf(l->err + n, l->err_len - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

static const char *str_member(yyjson_val *obj, const char *key)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    return yyjson_is_str(v) ? yyjson_get_str(v) : NULL;
}

/* A member that must be a string when present; *s NULL when absent or "". */
static int opt_string(loader_t *l, yyjson_val *obj, const char *field, const char *key, const char **s)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    *s = NULL;
    if (v == NULL || yyjson_is_null(v)) {
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return fail(l, ADM_EINVAL, "%s.%s: must be a string", field, key);
    }
    if (yyjson_get_len(v) > 0) {
        *s = yyjson_get_str(v);
    }
    return 0;
}

/* Finds the entry named name in the list key ("clusters", "users", "contexts"); *index its place. */
static int find_named(loader_t *l, yyjson_val *root, const char *key, const char *what, const char *name,
                      const char *ctx_field, yyjson_val **entry, size_t *index)
{
    yyjson_val *list = yyjson_obj_get(root, key);
    yyjson_val *it;
    size_t i, n;

    if (list != NULL && !yyjson_is_null(list) && !yyjson_is_arr(list)) {
        return fail(l, ADM_EINVAL, "%s: must be a list", key);
    }
    yyjson_arr_foreach(list, i, n, it)
    {
        const char *nm = str_member(it, "name");

        if (nm != NULL && strcmp(nm, name) == 0) {
            yyjson_val *inner = yyjson_obj_get(it, what);

            if (!yyjson_is_obj(inner)) {
                return fail(l, ADM_EINVAL, "%s[%zu].%s: must be a mapping", key, i, what);
            }
            *entry = inner;
            *index = i;
            return 0;
        }
    }
    return fail(l, ADM_EINVAL, "%s: no %s named \"%s\" in %s", ctx_field, what, name, key);
}

static const char *resolve_path(loader_t *l, const char *p)
{
    if (p[0] == '/' || l->dir == NULL) {
        return adm_arena_strndup(l->c->arena, p, strlen(p));
    }
    return adm_arena_printf(l->c->arena, "%s/%s", l->dir, p);
}

/* Reads a file field into the config's arena, NUL-terminated. */
static int read_field_file(loader_t *l, const char *field, const char *path, size_t max, char **data,
                           size_t *len)
{
    char why[512];
    int rc = adm_fs_read(l->c->arena, path, max, data, len, why, sizeof(why));

    if (rc == ADM_ENOMEM) {
        return fail(l, rc, "%s: out of memory", field);
    }
    if (rc != 0) {
        return fail(l, ADM_EIO, "%s: %s", field, why);
    }
    return 0;
}

/* Decodes standard base64 (Go's []byte in YAML) into the arena, NUL-terminated. */
static int decode_data(loader_t *l, const char *field, const char *b64, char **data, size_t *len)
{
    size_t in = strlen(b64), n = 0;
    unsigned char *out = adm_arena_alloc(l->c->arena, in + 1);
    int ret;

    if (out == NULL) {
        return fail(l, ADM_ENOMEM, "%s: out of memory", field);
    }
    ret = mbedtls_base64_decode(out, in + 1, &n, (const unsigned char *)b64, in);
    if (ret != 0) {
        return fail(l, ADM_EINVAL, "%s: illegal base64 data", field);
    }
    out[n] = '\0';
    *data = (char *)out;
    *len = n;
    return 0;
}

/* The PEM of a file field or its -data twin (data wins, as in clientcmd); NULL when neither. */
static int pem_source(loader_t *l, yyjson_val *obj, const char *field, const char *file_key,
                      const char *data_key, const char **pem, size_t *pem_len, const char **where)
{
    const char *file, *data;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    *pem = NULL;
    *pem_len = 0;
    rc = opt_string(l, obj, field, file_key, &file);
    if (rc == 0) {
        rc = opt_string(l, obj, field, data_key, &data);
    }
    if (rc != 0) {
        return rc;
    }
    if (data != NULL) {
        *where = adm_arena_printf(l->c->arena, "%s.%s", field, data_key);
        rc = decode_data(l, *where, data, &buf, &len);
    } else if (file != NULL) {
        *where = adm_arena_printf(l->c->arena, "%s.%s", field, file_key);
        rc = read_field_file(l, *where, resolve_path(l, file), MAX_PEM_BYTES, &buf, &len);
    } else {
        return 0;
    }
    if (rc != 0) {
        return rc;
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
        return fail(l, ADM_EINVAL, "%s: not a PEM certificate bundle (%s)", where, text);
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
        fail(l, ADM_EINVAL, "%s: not a PEM certificate (%s)", cert_where, text);
        goto out;
    }
    ret = mbedtls_pk_parse_key(&pk, (const unsigned char *)c->key_pem, c->key_pem_len, NULL, 0,
                               mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
    if (ret != 0) {
        mbedtls_strerror(ret, text, sizeof(text));
        fail(l, ADM_EINVAL, "%s: not a PEM private key (%s)", key_where, text);
        goto out;
    }
    ret = mbedtls_pk_check_pair(&crt.pk, &pk, mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
    if (ret != 0) {
        fail(l, ADM_EINVAL, "%s: does not match %s", key_where, cert_where);
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
        return fail(l, ADM_EINVAL, "%s: %s: %s", field, server, problem);
    }
    if (strchr(rest, '?') != NULL || strchr(rest, '#') != NULL) {
        return fail(l, ADM_EINVAL, "%s: %s: must not have a query or fragment", field, server);
    }
    n = strlen(rest);
    while (n > 0 && rest[n - 1] == '/') {
        n--;
    }
    c->server = adm_arena_strndup(c->arena, server, strlen(server));
    c->path_prefix = adm_arena_strndup(c->arena, rest, n);
    return c->server != NULL && c->path_prefix != NULL ? 0 : fail(l, ADM_ENOMEM, "out of memory");
}

/* Reads a token file as client-go's fileTokenSource: whitespace trimmed, empty is an error. */
static int read_token(loader_t *l, const char *field, const char *path)
{
    char *buf = NULL;
    size_t len = 0, start = 0;
    int rc = read_field_file(l, field, path, MAX_TOKEN_BYTES, &buf, &len);

    if (rc != 0) {
        return rc;
    }
    while (len > 0 &&
           (buf[len - 1] == ' ' || buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == '\t')) {
        len--;
    }
    while (start < len &&
           (buf[start] == ' ' || buf[start] == '\n' || buf[start] == '\r' || buf[start] == '\t')) {
        start++;
    }
    if (start == len) {
        return fail(l, ADM_EINVAL, "%s: read empty token from file %s", field, path);
    }
    buf[len] = '\0';
    l->c->token = buf + start;
    return 0;
}

static int load_cluster(loader_t *l, yyjson_val *cl, size_t idx)
{
    adm_kube_config_t *c = l->c;
    char field[64];
    const char *server, *name, *proxy, *where = NULL;
    yyjson_val *insecure;
    int rc;

    snprintf(field, sizeof(field), "clusters[%zu].cluster", idx);
    rc = opt_string(l, cl, field, "server", &server);
    if (rc != 0) {
        return rc;
    }
    if (server == NULL) {
        return fail(l, ADM_EINVAL, "%s.server: must be set", field);
    }
    snprintf(field, sizeof(field), "clusters[%zu].cluster.server", idx);
    rc = set_server(l, field, server);
    snprintf(field, sizeof(field), "clusters[%zu].cluster", idx);
    if (rc == 0) {
        rc = opt_string(l, cl, field, "proxy-url", &proxy);
    }
    if (rc == 0 && proxy != NULL) {
        rc = fail(l, ADM_EINVAL, "%s.proxy-url: proxies are not supported by admitd", field);
    }
    if (rc == 0) {
        rc = opt_string(l, cl, field, "tls-server-name", &name);
    }
    if (rc != 0) {
        return rc;
    }
    c->tls_server_name = name;
    insecure = yyjson_obj_get(cl, "insecure-skip-tls-verify");
    if (insecure != NULL && !yyjson_is_null(insecure) && !yyjson_is_bool(insecure)) {
        return fail(l, ADM_EINVAL, "%s.insecure-skip-tls-verify: must be true or false", field);
    }
    c->insecure = yyjson_is_true(insecure);
    rc = pem_source(l, cl, field, "certificate-authority", "certificate-authority-data", &c->ca_pem,
                    &c->ca_pem_len, &where);
    if (rc == 0 && c->ca_pem != NULL) {
        if (c->insecure) {
            /* clientcmd's validation: the two together are an error, not a silent choice */
            return fail(l, ADM_EINVAL, "%s: certificate-authority and insecure-skip-tls-verify together",
                        field);
        }
        rc = check_certs(l, where, c->ca_pem, c->ca_pem_len);
    }
    return rc;
}

static int refuse_member(loader_t *l, yyjson_val *user, const char *field, const char *key, const char *why)
{
    yyjson_val *v = yyjson_obj_get(user, key);

    if (v == NULL || yyjson_is_null(v) || (yyjson_is_str(v) && yyjson_get_len(v) == 0)) {
        return 0;
    }
    return fail(l, ADM_EINVAL, "%s.%s: %s", field, key, why);
}

static int load_user(loader_t *l, yyjson_val *user, size_t idx)
{
    adm_kube_config_t *c = l->c;
    char field[64];
    const char *token, *token_file, *cert_where = NULL, *key_where = NULL;
    int rc;

    snprintf(field, sizeof(field), "users[%zu].user", idx);
    rc =
        refuse_member(l, user, field, "exec",
                      "exec credential plugins are not supported by admitd (use token, tokenFile or a client "
                      "certificate)");
    if (rc == 0) {
        rc = refuse_member(
            l, user, field, "auth-provider",
            "auth-provider plugins are not supported by admitd (use token, tokenFile or a client "
            "certificate)");
    }
    if (rc == 0) {
        rc = refuse_member(l, user, field, "username",
                           "basic authentication is not supported (kube-apiserver removed it in 1.19)");
    }
    if (rc == 0) {
        rc = refuse_member(l, user, field, "password",
                           "basic authentication is not supported (kube-apiserver removed it in 1.19)");
    }
    if (rc == 0) {
        rc = opt_string(l, user, field, "token", &token);
    }
    if (rc == 0) {
        rc = opt_string(l, user, field, "tokenFile", &token_file);
    }
    if (rc != 0) {
        return rc;
    }
    c->token = token;
    if (token_file != NULL) {
        char where[96];

        c->token_file = resolve_path(l, token_file);
        snprintf(where, sizeof(where), "%s.tokenFile", field);
        /* clientcmd reads it at once (a missing file is an error at start); later reads follow
           client-go's cached file token source. */
        rc = read_token(l, where, c->token_file);
        if (rc != 0) {
            return rc;
        }
    }
    rc = pem_source(l, user, field, "client-certificate", "client-certificate-data", &c->cert_pem,
                    &c->cert_pem_len, &cert_where);
    if (rc == 0) {
        rc = pem_source(l, user, field, "client-key", "client-key-data", &c->key_pem, &c->key_pem_len,
                        &key_where);
    }
    if (rc != 0) {
        return rc;
    }
    if ((c->cert_pem == NULL) != (c->key_pem == NULL)) {
        return fail(l, ADM_EINVAL, "%s: %s needs %s", field,
                    c->cert_pem != NULL ? "client-certificate" : "client-key",
                    c->cert_pem != NULL ? "client-key" : "client-certificate");
    }
    if (c->cert_pem != NULL) {
        return check_key_pair(l, cert_where, key_where);
    }
    return 0;
}

static int load_root(loader_t *l, yyjson_val *root)
{
    const char *current, *cluster, *user, *ns;
    yyjson_val *ctx = NULL, *cl = NULL, *us = NULL;
    size_t ci = 0, cli = 0, ui = 0;
    char field[64];
    int rc;

    if (!yyjson_is_obj(root)) {
        return fail(l, ADM_EINVAL, "not a kubeconfig (expected a mapping with clusters, users and contexts)");
    }
    rc = opt_string(l, root, "kubeconfig", "current-context", &current);
    if (rc != 0) {
        return rc;
    }
    if (current == NULL) {
        return fail(l, ADM_EINVAL, "current-context: not set");
    }
    rc = find_named(l, root, "contexts", "context", current, "current-context", &ctx, &ci);
    if (rc != 0) {
        return rc;
    }
    snprintf(field, sizeof(field), "contexts[%zu].context", ci);
    rc = opt_string(l, ctx, field, "cluster", &cluster);
    if (rc == 0) {
        rc = opt_string(l, ctx, field, "user", &user);
    }
    if (rc == 0) {
        rc = opt_string(l, ctx, field, "namespace", &ns);
    }
    if (rc != 0) {
        return rc;
    }
    if (cluster == NULL) {
        return fail(l, ADM_EINVAL, "%s.cluster: must be set", field);
    }
    l->c->namespace_ = ns != NULL ? ns : "default";
    snprintf(field, sizeof(field), "contexts[%zu].context.cluster", ci);
    rc = find_named(l, root, "clusters", "cluster", cluster, field, &cl, &cli);
    if (rc == 0) {
        rc = load_cluster(l, cl, cli);
    }
    if (rc != 0 || user == NULL) {
        return rc;
    }
    snprintf(field, sizeof(field), "contexts[%zu].context.user", ci);
    rc = find_named(l, root, "users", "user", user, field, &us, &ui);
    if (rc == 0) {
        rc = load_user(l, us, ui);
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

int adm_kube_config_load(const char *path, adm_kube_config_t **out, char *err, size_t err_len)
{
    adm_kube_config_t *c = config_new();
    loader_t l = {.c = c, .file = path, .err = err, .err_len = err_len};
    yyjson_val **docs = NULL;
    size_t ndocs = 0, len = 0;
    char *text = NULL, why[512];
    const char *slash;
    int rc;

    *out = NULL;
    if (c == NULL) {
        return fail(&l, ADM_ENOMEM, "out of memory");
    }
    c->source = adm_arena_strndup(c->arena, path, strlen(path));
    slash = strrchr(path, '/');
    l.dir = slash == NULL   ? "."
            : slash == path ? ""
                            : adm_arena_strndup(c->arena, path, (size_t)(slash - path));
    rc = adm_fs_read(c->arena, path, MAX_KUBECONFIG_BYTES, &text, &len, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_len, "%s", why);
        goto fail;
    }
    rc = adm_yaml_parse(c->arena, text, len, &docs, &ndocs, why, sizeof(why));
    if (rc != 0) {
        fail(&l, rc, "%s", why);
        goto fail;
    }
    if (ndocs != 1) {
        rc = fail(&l, ADM_EINVAL, "expected one YAML document, found %zu", ndocs);
        goto fail;
    }
    rc = load_root(&l, docs[0]);
    if (rc != 0) {
        goto fail;
    }
    *out = c;
    return 0;
fail:
    adm_kube_config_free(c);
    return rc;
}

/* rest.InClusterConfig logs a ca.crt it cannot load and goes on with the system roots. */
static int load_in_cluster_ca(loader_t *l, const char *ca_path)
{
    adm_kube_config_t *c = l->c;
    char *buf = NULL;
    size_t len = 0;
    char why[512];
    int rc = adm_fs_read(c->arena, ca_path, MAX_PEM_BYTES, &buf, &len, why, sizeof(why));

    if (rc == ADM_ENOMEM) {
        return fail(l, rc, "out of memory");
    }
    if (rc != 0) {
        adm_log_warn("in-cluster: expected to load root CA config from %s, but got err: %s", ca_path, why);
        return 0;
    }
    if (check_certs(l, ca_path, buf, len + 1) != 0) {
        adm_log_warn("in-cluster: expected to load root CA config from %s, but got err: %s", ca_path, l->err);
        l->err[0] = '\0';
        return 0;
    }
    c->ca_pem = buf;
    c->ca_pem_len = len + 1;
    return 0;
}

int adm_kube_config_in_cluster(adm_kube_config_t **out, char *err, size_t err_len)
{
    adm_kube_config_t *c = config_new();
    loader_t l = {.c = c, .file = "in-cluster", .dir = NULL, .err = err, .err_len = err_len};
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = getenv("ADM_SERVICEACCOUNT_DIR");
    const char *server, *ca_path, *ns_path;
    char *ns = NULL;
    size_t ns_len = 0;
    int rc;

    *out = NULL;
    if (c == NULL) {
        return fail(&l, ADM_ENOMEM, "out of memory");
    }
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
    rc = set_server(&l, "KUBERNETES_SERVICE_HOST/PORT", server);
    if (rc != 0) {
        goto fail;
    }
    c->token_file = adm_arena_printf(c->arena, "%s/token", dir);
    rc = read_token(&l, "token", c->token_file);
    if (rc != 0) {
        goto fail;
    }
    ca_path = adm_arena_printf(c->arena, "%s/ca.crt", dir);
    rc = load_in_cluster_ca(&l, ca_path);
    if (rc != 0) {
        goto fail;
    }
    ns_path = adm_arena_printf(c->arena, "%s/namespace", dir);
    c->namespace_ = "default";
    if (adm_fs_read(c->arena, ns_path, 4096, &ns, &ns_len, err, err_len) == 0) {
        while (ns_len > 0 && (ns[ns_len - 1] == '\n' || ns[ns_len - 1] == ' ')) {
            ns[--ns_len] = '\0';
        }
        if (ns_len > 0) {
            c->namespace_ = ns;
        }
    }
    err[0] = '\0';
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

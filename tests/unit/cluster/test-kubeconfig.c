/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubeconfig and in-cluster configuration: the current context resolved to server, trust, token
 * and client certificate (files relative to the kubeconfig, -data fields in base64), and every
 * refusal as one line naming the file and the field. Certificates are generated per run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/cluster/kubeconfig.h"
#include "adm/net/tls.h"
#include "certgen.h"

#include <mbedtls/base64.h>

static char dir[256];
static char err[1024];

static void write_file(const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static char *read_b64(const char *name)
{
    static char out[3][16384];
    static int next;
    char path[512], raw[8192];
    size_t n, olen = 0;
    FILE *f;
    char *o = out[next++ % 3];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    n = fread(raw, 1, sizeof(raw), f);
    fclose(f);
    assert_int_equal(mbedtls_base64_encode((unsigned char *)o, 16384, &olen, (unsigned char *)raw, n), 0);
    o[olen] = '\0';
    return o;
}

static int setup(void **state)
{
    (void)state;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, sizeof(dir)) != 0) {
        return -1;
    }
    if (certgen_make(dir, "ca", "test-ca", NULL, false) != 0 ||
        certgen_make(dir, "client", "admitd", "ca", true) != 0 ||
        certgen_make(dir, "other", "other", "ca", true) != 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

static int load(const char *text, adm_kube_config_t **c)
{
    char path[512];

    write_file("kc.yaml", text);
    snprintf(path, sizeof(path), "%s/kc.yaml", dir);
    err[0] = '\0';
    return adm_kube_config_load(path, c, err, sizeof(err));
}

/* The message without the directory, so expectations stay short. */
static const char *msg(void)
{
    const char *p = strstr(err, "kc.yaml: ");

    return p != NULL ? p : err;
}

#define HEAD                                                                                                 \
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"                                                     \
    "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: team}\n"

static void test_token_and_relative_ca(void **state)
{
    adm_kube_config_t *c = NULL;

    (void)state;
    write_file("tok", "  s3cret\n");
    assert_int_equal(load(HEAD "clusters:\n- name: k\n  cluster:\n    server: https://[::1]:6443/prefix/\n"
                               "    certificate-authority: ca.crt.pem\n    tls-server-name: api.example\n"
                               "users:\n- name: u\n  user: {tokenFile: tok}\n",
                          &c),
                     0);
    assert_non_null(c);
    assert_true(c->tls);
    assert_string_equal(c->host, "::1");
    assert_int_equal(c->port, 6443);
    assert_string_equal(c->path_prefix, "/prefix");
    assert_string_equal(c->tls_server_name, "api.example");
    assert_non_null(c->ca_pem);
    assert_int_equal(c->ca_pem[c->ca_pem_len - 1], '\0');
    assert_string_equal(c->token, "s3cret");
    assert_non_null(strstr(c->token_file, "/tok"));
    assert_string_equal(c->namespace_, "team");
    assert_null(c->cert_pem);
    adm_kube_config_free(c);
}

static void test_data_fields_and_client_cert(void **state)
{
    adm_kube_config_t *c = NULL;
    char text[40000];

    (void)state;
    snprintf(text, sizeof(text),
             "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
             "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:8443\n"
             "    certificate-authority-data: %s\n"
             "users:\n- name: u\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n"
             "    token: abc\n",
             read_b64("ca.crt.pem"), read_b64("client.crt.pem"), read_b64("client.key.pem"));
    assert_int_equal(load(text, &c), 0);
    assert_non_null(c->cert_pem);
    assert_non_null(c->key_pem);
    assert_string_equal(c->token, "abc");
    assert_null(c->token_file);
    assert_string_equal(c->namespace_, "default");
    assert_string_equal(c->path_prefix, "");
    adm_kube_config_free(c);
}

typedef struct bad_s {
    const char *text;
    const char *expect; /* after the directory */
} bad_t;

static void test_refusals(void **state)
{
    static const bad_t cases[] = {
        {"contexts: []\n", "kc.yaml: current-context: not set"},
        {"current-context: x\ncontexts: []\n",
         "kc.yaml: current-context: no context named \"x\" in contexts"},
        {HEAD "clusters: []\n", "kc.yaml: contexts[0].context.cluster: no cluster named \"k\" in clusters"},
        {HEAD "clusters:\n- name: k\n  cluster: {}\n", "kc.yaml: clusters[0].cluster.server: must be set"},
        {HEAD "clusters:\n- name: k\n  cluster: {server: 'ftp://x'}\n",
         "kc.yaml: clusters[0].cluster.server: ftp://x: must start with https:// or http://"},
        {HEAD "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority: nope.pem}\n",
         "kc.yaml: clusters[0].cluster.certificate-authority: "},
        {HEAD "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: '!!'}\n",
         "kc.yaml: clusters[0].cluster.certificate-authority-data: illegal base64 data"},
        {HEAD
         "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: aGVsbG8=}\n",
         "kc.yaml: clusters[0].cluster.certificate-authority-data: not a PEM certificate bundle"},
        {HEAD "clusters:\n- name: k\n  cluster: {server: 'https://x', proxy-url: 'http://p'}\n",
         "kc.yaml: clusters[0].cluster.proxy-url: proxies are not supported by admitd"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n  user:\n"
              "    exec: {command: aws}\n",
         "kc.yaml: users[0].user.exec: exec credential plugins are not supported by admitd (use token, "
         "tokenFile "
         "or a client certificate)"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n  user:\n"
              "    auth-provider: {name: gcp}\n",
         "kc.yaml: users[0].user.auth-provider: auth-provider plugins are not supported by admitd"},
        {HEAD
         "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n  user: {username: a}\n",
         "kc.yaml: users[0].user.username: basic authentication is not supported"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n  user: "
              "{tokenFile: none}\n",
         "kc.yaml: users[0].user.tokenFile: "},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n"
              "  user: {client-certificate: client.crt.pem}\n",
         "kc.yaml: users[0].user: client-certificate needs client-key"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n"
              "  user: {client-certificate: client.crt.pem, client-key: other.key.pem}\n",
         "kc.yaml: users[0].user.client-key: does not match users[0].user.client-certificate"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x'}}\nusers:\n- name: u\n"
              "  user: {client-certificate: client.crt.pem, client-key: ca.crt.pem}\n",
         "kc.yaml: users[0].user.client-key: not a PEM private key"},
        {HEAD "clusters:\n- {name: k, cluster: {server: 'https://x', insecure-skip-tls-verify: 1}}\n",
         "kc.yaml: clusters[0].cluster.insecure-skip-tls-verify: must be true or false"},
        {"- a\n", "kc.yaml: not a kubeconfig"},
        {"a: [\n", "kc.yaml: line "},
    };

    (void)state;
    write_file("empty-tok", " \n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_kube_config_t *c = (adm_kube_config_t *)1;
        int rc = load(cases[i].text, &c);

        if (rc == 0 || strncmp(msg(), cases[i].expect, strlen(cases[i].expect)) != 0) {
            fail_msg("case %zu: rc %d, got \"%s\", want \"%s...\"", i, rc, err, cases[i].expect);
        }
        assert_null(c);
        assert_null(strchr(err, '\n'));
    }
}

static void test_missing_file(void **state)
{
    adm_kube_config_t *c = NULL;

    (void)state;
    assert_int_equal(adm_kube_config_load("/nonexistent/kc", &c, err, sizeof(err)), ADM_EIO);
    assert_non_null(strstr(err, "/nonexistent/kc: "));
    assert_null(c);
}

static void test_in_cluster(void **state)
{
    adm_kube_config_t *c = NULL;
    char ca[600];

    (void)state;
    setenv("ADM_SERVICEACCOUNT_DIR", dir, 1);
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(adm_kube_config_in_cluster(&c, err, sizeof(err)), ADM_EINVAL);
    assert_string_equal(err,
                        "--in-cluster: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                        "KUBERNETES_SERVICE_PORT must be defined");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    /* no token file yet */
    assert_int_not_equal(adm_kube_config_in_cluster(&c, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "in-cluster: token: "));
    write_file("token", "tok-1\n");
    write_file("namespace", "kube-system\n");
    snprintf(ca, sizeof(ca), "%s/ca.crt.pem", dir);
    /* ca.crt missing: client-go goes on with the system roots */
    assert_int_equal(adm_kube_config_in_cluster(&c, err, sizeof(err)), 0);
    assert_string_equal(c->server, "https://[fd00::1]:443");
    assert_string_equal(c->host, "fd00::1");
    assert_string_equal(c->token, "tok-1");
    assert_null(c->ca_pem);
    assert_string_equal(c->namespace_, "kube-system");
    adm_kube_config_free(c);
    {
        char link[600];

        snprintf(link, sizeof(link), "%s/ca.crt", dir);
        assert_int_equal(symlink(ca, link), 0);
    }
    assert_int_equal(adm_kube_config_in_cluster(&c, err, sizeof(err)), 0);
    assert_non_null(c->ca_pem);
    adm_kube_config_free(c);
    unsetenv("ADM_SERVICEACCOUNT_DIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_and_relative_ca),
        cmocka_unit_test(test_data_fields_and_client_cert),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_in_cluster),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

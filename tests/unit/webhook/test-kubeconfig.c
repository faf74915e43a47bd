/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decision D13's kubeconfig: kube's per-host choice of user (exact host:port, "*." suffixes with
 * the port, the host alone only for port 443, "*", then the current context's user); token over
 * tokenFile (read from the kubeconfig's folder, trimmed); basic auth; client certificate data
 * decoded and files read; per-user errors for unreadable files; refusals of exec, auth-provider
 * and impersonation; duplicate names and bad base64.
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
#include "adm/webhook/kubeconfig.h"

static char dir[] = "/tmp/adm-kubeconfig-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Loads text as DIR/kc.yaml into *kc; returns the loader's code, err filled. */
static int load(adm_arena_t *a, const char *text, adm_kubeconfig_t *kc, char *err, size_t err_len)
{
    char path[512];

    snprintf(path, sizeof(path), "%s", write_file("kc.yaml", text));
    return adm_kubeconfig_load(a, path, kc, err, err_len);
}

static const char *user_for(const adm_kubeconfig_t *kc, const char *target)
{
    const adm_kube_user_t *u = adm_kubeconfig_user_for(kc, target);

    return u != NULL ? u->name : "(none)";
}

static void test_per_host_matching(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_t kc;
    char err[512];
    static const char text[] = "apiVersion: v1\nkind: Config\nusers:\n"
                               "- name: hook.ns.svc:8443\n  user: {token: a}\n"
                               "- name: '*.ns.svc:443'\n  user: {token: b}\n"
                               "- name: '*.svc:9443'\n  user: {token: c}\n"
                               "- name: other.svc\n  user: {token: d}\n"
                               "- name: '*.example.com'\n  user: {token: e}\n"
                               "- name: '*'\n  user: {token: f}\n";

    (void)state;
    assert_int_equal(load(a, text, &kc, err, sizeof(err)), 0);
    assert_int_equal(kc.nusers, 6);
    assert_string_equal(user_for(&kc, "hook.ns.svc:8443"), "hook.ns.svc:8443");
    assert_string_equal(user_for(&kc, "x.ns.svc:443"), "*.ns.svc:443");
    assert_string_equal(user_for(&kc, "x.y.svc:9443"), "*.svc:9443");
    /* the host alone counts only with port 443 */
    assert_string_equal(user_for(&kc, "other.svc:443"), "other.svc");
    assert_string_equal(user_for(&kc, "other.svc:8443"), "*");
    assert_string_equal(user_for(&kc, "hooks.example.com:443"), "*.example.com");
    assert_string_equal(user_for(&kc, "hooks.example.com:8443"), "*");
    assert_string_equal(kc.users[0].authorization, "Bearer a");
    adm_arena_destroy(a);
}

static void test_current_context_is_last(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_t kc;
    char err[512];
    static const char text[] = "users:\n- name: me\n  user: {username: u, password: p}\n"
                               "contexts:\n- name: c\n  context: {cluster: x, user: me}\n"
                               "current-context: c\n";

    (void)state;
    assert_int_equal(load(a, text, &kc, err, sizeof(err)), 0);
    assert_string_equal(user_for(&kc, "anything:443"), "me");
    assert_string_equal(kc.current->authorization, "Basic dTpw"); /* base64("u:p") */
    assert_int_equal(load(a, "users:\n- name: me\n  user: {token: t}\n", &kc, err, sizeof(err)), 0);
    assert_null(adm_kubeconfig_user_for(&kc, "anything:443"));
    adm_arena_destroy(a);
}

static void test_token_file_and_certificates(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_t kc;
    char err[512];

    (void)state;
    write_file("token", "  s3cret\n");
    write_file("client.crt", "CERT");
    write_file("client.key", "KEY");
    /* relative names are the kubeconfig's folder's; token wins over tokenFile; -data over the file */
    assert_int_equal(load(a,
                          "users:\n- name: f\n  user: {tokenFile: token, client-certificate: client.crt, "
                          "client-key: client.key}\n"
                          "- name: both\n  user: {token: t, tokenFile: /nonexistent}\n"
                          "- name: d\n  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ, "
                          "client-certificate: /nonexistent}\n"
                          "- name: gone\n  user: {tokenFile: /nonexistent/t}\n"
                          "- name: mixed\n  user: {token: t, username: u}\n"
                          "- name: keyonly\n  user: {client-key: /nonexistent}\n",
                          &kc, err, sizeof(err)),
                     0);
    assert_string_equal(kc.users[0].authorization, "Bearer s3cret");
    assert_string_equal(kc.users[0].cert_pem, "CERT");
    assert_string_equal(kc.users[0].key_pem, "KEY");
    assert_null(kc.users[0].error);
    assert_string_equal(kc.users[1].authorization, "Bearer t");
    assert_string_equal(kc.users[2].cert_pem, "CERT");
    assert_int_equal(kc.users[2].cert_pem_len, 4);
    assert_string_equal(kc.users[2].key_pem, "KEY");
    assert_null(kc.users[2].error);
    assert_string_equal(kc.users[3].error, "open /nonexistent/t: No such file or directory");
    assert_string_equal(kc.users[4].error, "username/password or bearer token may be set, but not both");
    assert_null(kc.users[5].cert_pem);
    assert_null(kc.users[5].error);
    /* the kubeconfig and the files it read are what a reload watches */
    assert_int_equal(kc.nfiles, 5);
    assert_non_null(strstr(kc.files[1], "/token"));
    adm_arena_destroy(a);
}

static void test_refusals(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"users:\n- name: a\n  user:\n    exec: {command: get-token, apiVersion: "
         "client.authentication.k8s.io/v1}\n",
         "users[0].user.exec: credential plugins are not supported by admitd (give a token, tokenFile or "
         "client certificate)"},
        {"users:\n- name: a\n  user: {token: x}\n- name: b\n  user:\n    auth-provider: {name: gcp}\n",
         "users[1].user.auth-provider: credential plugins are not supported by admitd"},
        {"users:\n- name: a\n  user: {as: admin}\n", "users[0].user.as: impersonation is not supported"},
        {"users:\n- name: a\n- name: a\n", "users[1].name: duplicate name \"a\" in list"},
        {"users:\n- name: a\n  user: {client-certificate-data: '!!'}\n",
         "users[0].user.client-certificate-data: illegal base64 data"},
        {"users: {a: 1}\n", "users: must be a list"},
        {"users:\n- name: a\n  user: {token: 5}\n", "users[0].user.token: must be a string"},
        {"users: [\n", "line "},
    };
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_t kc;
    char err[512];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(load(a, cases[i].text, &kc, err, sizeof(err)), ADM_EINVAL);
        if (strstr(err, cases[i].want) == NULL || strstr(err, "/kc.yaml: ") == NULL) {
            fail_msg("case %zu: got %s\nwant %s", i, err, cases[i].want);
        }
    }
    assert_int_equal(adm_kubeconfig_load(a, "/nonexistent/kc.yaml", &kc, err, sizeof(err)), ADM_EIO);
    assert_string_equal(err, "/nonexistent/kc.yaml: No such file or directory");
    /* empty: no users, every call anonymous */
    assert_int_equal(load(a, "", &kc, err, sizeof(err)), 0);
    assert_null(adm_kubeconfig_user_for(&kc, "a:443"));
    adm_arena_destroy(a);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    static const char *const names[] = {"kc.yaml", "token", "client.crt", "client.key"};
    char path[512];

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_host_matching),
        cmocka_unit_test(test_current_context_is_last),
        cmocka_unit_test(test_token_file_and_certificates),
        cmocka_unit_test(test_refusals),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

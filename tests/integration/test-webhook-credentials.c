/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decision D13 end to end: webhook calls carry the credentials of the kubeConfigFile given in the
 * WebhookAdmissionConfiguration of each webhook plugin (--admission-control-config-file).
 *  - a mockhook that requires a client certificate (--require-client-cert) is reached by a
 *    validating webhook whose kubeconfig user (named "127.0.0.1:PORT") gives certificate and key
 *    files, and by a mutating webhook whose plugin's own kubeconfig gives them inline (-data);
 *  - a mockhook that requires a bearer token (--require-token) sees the token of the tokenFile;
 *    a wrong token is refused (401: a call failure, failurePolicy Fail denies), and writing the
 *    right one into the tokenFile reloads admitd, after which calls pass;
 *  - a user whose tokenFile is missing fails its calls with "could not get REST client";
 *  - a kubeconfig with an exec plugin stops admitd at start with exit 2 and one line.
 */
#include "certgen.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

static char dir[256], hooks[320], admission[320], token[320], cert_rec[320], token_rec[320];
static h_server_t cert_mock, token_mock, admitd;

static void hook(FILE *f, const char *name, const char *t, const h_server_t *mock, const char *path)
{
    static char ca[8192];

    h_file_b64(mock->ca, ca, sizeof(ca));
    fprintf(
        f,
        "- name: %s\n  clientConfig: {url: \"https://127.0.0.1:%d%s\", caBundle: %s}\n"
        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]\n"
        "  objectSelector: {matchLabels: {t: %s}}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n"
        "  failurePolicy: Fail\n",
        name, mock->port, path, ca, t);
}

static void write_files(void)
{
    char path[400], cert[8192], key[8192], text[20000];
    FILE *f = fopen(hooks, "w");

    assert_non_null(f);
    fputs("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
          "metadata: {name: creds}\nwebhooks:\n",
          f);
    hook(f, "cert.hooks.example.com", "cert", &cert_mock, "/cert");
    hook(f, "token.hooks.example.com", "token", &token_mock, "/token");
    fputs("---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
          "metadata: {name: creds-m}\nwebhooks:\n",
          f);
    hook(f, "mcert.hooks.example.com", "cert", &cert_mock, "/mcert");
    fputs("  reinvocationPolicy: Never\n", f);
    fclose(f);

    /* validating: files, relative to the kubeconfig; a tokenFile; localhost's tokenFile is missing */
    snprintf(path, sizeof(path), "%s/validating-kubeconfig.yaml", dir);
    snprintf(
        text, sizeof(text),
        "apiVersion: v1\nkind: Config\nusers:\n"
        "- name: 127.0.0.1:%d\n  user: {client-certificate: client.crt.pem, client-key: client.key.pem}\n"
        "- name: 127.0.0.1:%d\n  user: {tokenFile: token}\n"
        "- name: '*'\n  user: {tokenFile: /nonexistent/token}\n",
        cert_mock.port, token_mock.port);
    h_write_file(path, text);
    /* mutating: the same certificate inline */
    snprintf(path, sizeof(path), "%s/client.crt.pem", dir);
    h_file_b64(path, cert, sizeof(cert));
    snprintf(path, sizeof(path), "%s/client.key.pem", dir);
    h_file_b64(path, key, sizeof(key));
    snprintf(path, sizeof(path), "%s/mutating-kubeconfig.yaml", dir);
    snprintf(text, sizeof(text),
             "users:\n- name: '*.0.0.1:%d'\n  user:\n    client-certificate-data: %s\n"
             "    client-key-data: %s\n",
             cert_mock.port, cert, key);
    h_write_file(path, text);
    snprintf(text, sizeof(text),
             "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
             "- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: %s/validating-kubeconfig.yaml\n"
             "- name: MutatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: %s/mutating-kubeconfig.yaml\n",
             dir, dir);
    h_write_file(admission, text);
}

static int setup(void **state)
{
    const char *cert_args[] = {"--client-ca-file", NULL, "--require-client-cert", "--record", cert_rec, NULL};
    const char *token_args[] = {"--require-token", "s3cret", "--record", token_rec, NULL};
    char ca[320];

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    assert_int_equal(certgen_make(dir, "ca", "credentials-test-ca", NULL, false), 0);
    assert_int_equal(certgen_make(dir, "client", "kube-apiserver-admission", "ca", true), 0);
    snprintf(ca, sizeof(ca), "%s/ca.crt.pem", dir);
    snprintf(cert_rec, sizeof(cert_rec), "%s/cert.jsonl", dir);
    snprintf(token_rec, sizeof(token_rec), "%s/token.jsonl", dir);
    snprintf(hooks, sizeof(hooks), "%s/hooks.yaml", dir);
    snprintf(admission, sizeof(admission), "%s/admission.yaml", dir);
    snprintf(token, sizeof(token), "%s/token", dir);
    cert_args[1] = ca;
    assert_int_equal(h_start_prog(&cert_mock, h_bin("MOCKHOOK_BIN"), NULL, cert_args), 0);
    assert_int_equal(h_start_prog(&token_mock, h_bin("MOCKHOOK_BIN"), NULL, token_args), 0);
    h_write_file(token, "wrong\n");
    write_files();
    {
        const char *args[] = {"--webhook-config",
                              hooks,
                              "--admission-control-config-file",
                              admission,
                              "--cluster-state",
                              h_fixture_path("cluster-state.yaml"),
                              NULL};

        return h_start(&admitd, NULL, args);
    }
}

static int teardown(void **state)
{
    h_server_t *const servers[] = {&admitd, &cert_mock, &token_mock};
    bool clean = true;

    (void)state;
    for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++) {
        if (h_stop(servers[i], 15, 30000) != 0 && servers[i] == &admitd) {
            h_dump_log(&admitd);
            clean = false;
        }
        h_cleanup(servers[i]);
    }
    certgen_rmdir(dir);
    if (!clean) {
        fail_msg("admitd did not exit cleanly");
    }
    return 0;
}

/* Posts the fixture pod labelled t=<t> to endpoint; *allowed, and the status message into msg. */
static void ask(const char *endpoint, const char *t, bool *allowed, char *msg, size_t msg_len)
{
    size_t flen, len;
    char *fixture = h_fixture("pod-create.v1.review.json", &flen);
    char *at = strstr(fixture, "\"labels\":{"), *body = calloc(1, flen + 64), *req;
    h_conn_t c;
    h_response_t r = {0};
    yyjson_doc *doc;
    yyjson_val *resp;
    const char *m;

    assert_non_null(at);
    at += strlen("\"labels\":{");
    snprintf(body, flen + 64, "%.*s\"t\":\"%s\",%s", (int)(at - fixture), fixture, t, at);
    req = h_request("POST", endpoint, "application/json", body, strlen(body), &len);
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
    doc = yyjson_read((const char *)r.body.data, r.body.len, 0);
    resp = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    *allowed = yyjson_get_bool(yyjson_obj_get(resp, "allowed"));
    m = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message"));
    snprintf(msg, msg_len, "%s", m != NULL ? m : "");
    yyjson_doc_free(doc);
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(body);
    free(fixture);
}

/* The request must be allowed; what says which call was refused otherwise. */
static void expect_allowed(const char *endpoint, const char *t, const char *what)
{
    bool allowed;
    char msg[1024];

    ask(endpoint, t, &allowed, msg, sizeof(msg));
    if (!allowed) {
        fail_msg("%s refused: %s", what, msg);
    }
}

static void test_client_certificate_from_files_and_data(void **state)
{
    (void)state;
    expect_allowed("/validate", "cert", "validating call with the kubeconfig's client certificate");
    assert_int_equal(h_count_lines(cert_rec, "\"path\":\"/cert\""), 1);
    assert_int_equal(h_count_lines(cert_rec, "\"clientCertificate\":true"), 1);
    /* the mutating plugin's kubeconfig: the same certificate given inline, matched by "*.0.0.1:PORT" */
    expect_allowed("/mutate", "cert", "mutating call with inline client-certificate-data");
    assert_int_equal(h_count_lines(cert_rec, "\"path\":\"/mcert\""), 1);
    assert_int_equal(h_count_lines(cert_rec, "\"clientCertificate\":true"), 2);
    assert_int_equal(h_count_lines(cert_rec, "\"authorization\""), 0);
}

static void test_bearer_token_and_its_reload(void **state)
{
    bool allowed;
    char msg[1024];
    int reloads = h_log_count(&admitd, "configuration reloaded");

    (void)state;
    ask("/validate", "token", &allowed, msg, sizeof(msg));
    assert_false(allowed);
    assert_non_null(strstr(msg, "failed calling webhook \"token.hooks.example.com\""));
    assert_int_equal(h_count_lines(token_rec, "\"authorization\":\"Bearer wrong\""), 1);
    /* the tokenFile is watched: the right token reloads admitd, and the next call carries it */
    h_write_file(token, "s3cret\n");
    assert_true(h_log_wait(&admitd, "configuration reloaded", reloads + 1, 10000));
    expect_allowed("/validate", "token", "call with the reloaded token");
    assert_int_equal(h_count_lines(token_rec, "\"authorization\":\"Bearer s3cret\""), 1);
    assert_int_equal(h_count_lines(token_rec, "\"clientCertificate\":false"), 2);
}

static void test_unreadable_token_file_fails_the_call(void **state)
{
    bool allowed;
    char msg[1024];
    int reloads = h_log_count(&admitd, "configuration reloaded");

    (void)state;
    /* a webhook at localhost:PORT, a name no user has: the default user "*" applies, whose tokenFile
       is missing, so the call fails before anything is sent */
    {
        FILE *f = fopen(hooks, "a");

        assert_non_null(f);
        fprintf(f,
                "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
                "metadata: {name: creds-star}\nwebhooks:\n- name: star.hooks.example.com\n"
                "  clientConfig: {url: \"https://localhost:%d/star\"}\n"
                "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: "
                "[\"*/*\"]}]\n  objectSelector: {matchLabels: {t: star}}\n  sideEffects: None\n"
                "  admissionReviewVersions: [v1]\n",
                token_mock.port);
        fclose(f);
    }
    assert_true(h_log_wait(&admitd, "configuration reloaded", reloads + 1, 10000));
    ask("/validate", "star", &allowed, msg, sizeof(msg));
    assert_false(allowed);
    assert_non_null(strstr(msg,
                           "failed calling webhook \"star.hooks.example.com\": could not get REST client: "
                           "open /nonexistent/token: No such file or directory"));
    assert_int_equal(h_count_lines(token_rec, "/star"), 0);
}

static void test_exec_plugin_is_refused_at_start(void **state)
{
    char kc[400], conf[400], text[1200], out[2048];
    const char *args[] = {"--admission-control-config-file", conf, NULL};

    (void)state;
    snprintf(kc, sizeof(kc), "%s/exec-kubeconfig.yaml", dir);
    h_write_file(
        kc, "users:\n- name: '*'\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: "
            "get-token}\n");
    snprintf(conf, sizeof(conf), "%s/exec-admission.yaml", dir);
    snprintf(text, sizeof(text),
             "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
             "- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: %s\n",
             kc);
    h_write_file(conf, text);
    assert_int_equal(h_run(args, out, sizeof(out), 10000), 2);
    snprintf(
        text, sizeof(text),
        "admitd: %s: plugins[0].configuration: kubeConfigFile: %s: users[0].user.exec: credential plugins "
        "are not supported by admitd (give a token, tokenFile or client certificate)\n",
        conf, kc);
    assert_string_equal(out, text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_certificate_from_files_and_data),
        cmocka_unit_test(test_bearer_token_and_its_reload),
        cmocka_unit_test(test_unreadable_token_file_fails_the_call),
        cmocka_unit_test(test_exec_plugin_is_refused_at_start),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

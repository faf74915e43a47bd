/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSecurity through the real binary over HTTPS, against pod-security-admission's own fixtures
 * ($ADM_CONFORMANCE_DIR/psa, default ../shared/conformance; Decision D14): every pod of
 * <level>/v1.<minor>/{pass,fail} is created in a namespace labelled enforce and warn
 * <level>:v1.<minor>, as kube's test/run.go does. Pass pods are admitted without a warning; fail
 * pods are refused with kube's 403 (`pods "NAME" is forbidden: violates PodSecurity
 * "LEVEL:VERSION": ...`, with the check's words), and the same pod as a Deployment's template is
 * admitted with the same text as a warning. Namespace label changes warn about existing pods.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "adm/base/yaml.h"
#include "harness.h"

#define MAX_MINOR 37

static h_server_t server;
static char corpus[512];
static char tmpdir[] = "/tmp/adm-psa-XXXXXX";

static bool find_corpus(void)
{
    const char *dir = getenv("ADM_CONFORMANCE_DIR");
    struct stat sb;

    if (dir == NULL || dir[0] == '\0') {
        dir = getenv("ADM_CONFORMANCE_DEFAULT");
    }
    snprintf(corpus, sizeof(corpus), "%s/psa", dir != NULL ? dir : "../shared/conformance");
    return stat(corpus, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* One namespace per level and version, labelled as kube's fixture runner labels them, plus a
   namespace with pods for the label-change test. */
static void write_cluster_state(const char *path)
{
    static const char *const levels[] = {"baseline", "restricted"};
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    for (int l = 0; l < 2; l++) {
        for (int m = 0; m <= MAX_MINOR; m++) {
            fprintf(f,
                    "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-v1-%d\n  labels:\n"
                    "    pod-security.kubernetes.io/enforce: %s\n    "
                    "pod-security.kubernetes.io/enforce-version: v1.%d\n"
                    "    pod-security.kubernetes.io/warn: %s\n    pod-security.kubernetes.io/warn-version: "
                    "v1.%d\n",
                    levels[l], m, levels[l], m, levels[l], m);
        }
    }
    fputs("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: busy\n", f);
    for (int i = 0; i < 4; i++) {
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-%d\n  namespace: busy\n"
                "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: "
                "true}]\n"
                "spec:\n  containers: [{name: c, image: nginx, securityContext: {privileged: %s}}]\n",
                i, i == 3 ? "false" : "true");
    }
    fputs("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: loner\n  namespace: busy\n"
          "spec:\n  hostNetwork: true\n  containers: [{name: c, image: nginx}]\n",
          f);
    fclose(f);
}

static int setup(void **state)
{
    char path[600];
    /* The fixtures are pods as the validating phase would see them, but sent to /validate without the
       mutating phase that would have given them a service account: ServiceAccount's validation would
       refuse them first ("no service account specified"), so only it is left out. */
    char *args[] = {"--cluster-state", path, "--disable-admission-plugins", "ServiceAccount", NULL};

    if (!find_corpus()) {
        return 0; /* each test skips (or fails under CI) by itself */
    }
    if (adm_tls_global_init() != 0 || mkdtemp(tmpdir) == NULL) {
        return 1;
    }
    snprintf(path, sizeof(path), "%s/state.yaml", tmpdir);
    write_cluster_state(path);
    return h_start(&server, NULL, (const char *const *)args) != 0;
}

static int teardown(void **state)
{
    char path[600];
    int rc = 0;

    if (server.pid > 0) {
        rc = h_stop(&server, SIGTERM, 10000);
        h_cleanup(&server);
        adm_tls_global_cleanup();
    }
    snprintf(path, sizeof(path), "%s/state.yaml", tmpdir);
    remove(path);
    rmdir(tmpdir);
    return rc != 0;
}

static void need_corpus(void)
{
    const char *ci = getenv("CI");

    if (server.pid > 0) {
        return;
    }
    if (ci != NULL && strcmp(ci, "true") == 0) {
        fail_msg("PodSecurity fixtures %s not found (CI=true: they must be there)", corpus);
    }
    print_message("SKIPPED: PodSecurity fixtures %s not found (set ADM_CONFORMANCE_DIR)\n", corpus);
    skip();
}

/* Posts a review on the connection and returns the parsed answer's response object. */
static yyjson_val *post(h_conn_t *c, const char *body, yyjson_doc **doc)
{
    h_response_t r;
    size_t len;
    char *req = h_request("POST", "/validate", "application/json", body, strlen(body), &len);

    assert_int_equal(h_send(c, req, len), 0);
    free(req);
    assert_int_equal(h_read(c, &r, 10000, NULL), 0);
    assert_int_equal(r.status, 200);
    *doc = yyjson_read((const char *)r.body.data, r.body.len, 0);
    h_response_free(&r);
    assert_non_null(*doc);
    return yyjson_obj_get(yyjson_doc_get_root(*doc), "response");
}

static char *review(const char *group, const char *resource, const char *kind, const char *ns,
                    const char *name, const char *op, const char *object, const char *old_object)
{
    size_t n = strlen(object) + (old_object != NULL ? strlen(old_object) : 0) + 1024;
    char *s = malloc(n);

    assert_non_null(s);
    snprintf(
        s, n,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
        "\"kind\":{\"group\":\"%s\",\"version\":\"v1\",\"kind\":\"%s\"},"
        "\"resource\":{\"group\":\"%s\",\"version\":\"v1\",\"resource\":\"%s\"},"
        "\"name\":\"%s\",\"namespace\":\"%s\",\"operation\":\"%s\",\"userInfo\":{\"username\":\"alice\"},"
        "\"object\":%s,\"oldObject\":%s,\"dryRun\":true}}",
        group, kind, group, resource, name, ns, op, object, old_object != NULL ? old_object : "null");
    return s;
}

/* The words kube's fixture runner expects in a failure of each check (test/run.go). */
static const char *expected_words(const char *stem)
{
    static const struct {
        const char *check, *words;
    } words[] = {
        {"apparmorprofile", "forbidden AppArmor profile"},
        {"capabilities_baseline", "capabilities"},
        {"capabilities_restricted", "unrestricted capabilities"},
        {"hostnamespaces", "host namespaces"},
        {"hostpathvolumes", "hostPath"},
        {"hostports", "hostPort"},
        {"hostprobesandhostlifecycle", "probe or lifecycle host"},
        {"procmount", "procMount"},
        {"procmount_restricted", "procMount"},
        {"restrictedvolumes", "restricted volume types"},
        {"selinuxoptions", "seLinuxOptions"},
        {"seccompprofile_baseline", "seccompProfile"},
        {"seccompprofile_restricted", "seccompProfile"},
        {"sysctls", "forbidden sysctl"},
        {"windowshostprocess", "hostProcess"},
        {"allowprivilegeescalation", "allowPrivilegeEscalation"},
        {"privileged", "privileged"},
        {"runasnonroot", "runAsNonRoot"},
        {"runasuser", "runAsUser"},
    };
    char check[128];
    size_t n = strlen(stem);

    while (n > 0 && stem[n - 1] >= '0' && stem[n - 1] <= '9') {
        n--;
    }
    snprintf(check, sizeof(check), "%.*s", (int)n, stem);
    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
        if (strcmp(words[i].check, check) == 0) {
            return words[i].words;
        }
    }
    fail_msg("fixture %s: no check named %s", stem, check);
    return NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The YAML file names of dir, sorted; *n their count. */
static char **list_yaml(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    struct dirent *e;

    *n = 0;
    if (d == NULL) {
        return NULL;
    }
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        size_t len = strlen(e->d_name);

        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) {
            names = realloc(names, (*n + 1) * sizeof(*names));
            assert_non_null(names);
            names[(*n)++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, *n, sizeof(*names), cmp_names);
    return names;
}

/*
 * The API server's defaulting that changes what PodSecurity sees: a volume with no source gets
 * emptyDir (SetDefaults_Volume). kube's fixture runner creates the pods through the API server, so
 * its checks see them defaulted, as a webhook does.
 */
static void default_volumes(yyjson_mut_doc *doc)
{
    yyjson_mut_val *vols =
        yyjson_mut_obj_get(yyjson_mut_obj_get(yyjson_mut_doc_get_root(doc), "spec"), "volumes");

    for (size_t i = 0, n = yyjson_mut_arr_size(vols); i < n; i++) {
        yyjson_mut_val *v = yyjson_mut_arr_get(vols, i);

        if (yyjson_mut_obj_size(v) == 1 && yyjson_mut_obj_get(v, "name") != NULL) {
            yyjson_mut_obj_add_val(doc, v, "emptyDir", yyjson_mut_obj(doc));
        }
    }
}

/* The fixture as compact JSON (heap), defaulted. */
static char *fixture_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    char text[65536];
    size_t len;
    adm_arena_t *a = adm_arena_create(65536);
    yyjson_val **docs;
    size_t ndocs;
    char err[256];
    char *json;
    yyjson_mut_doc *mdoc;

    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    assert_int_equal(adm_yaml_parse(a, text, len, &docs, &ndocs, err, sizeof(err)), 0);
    assert_int_equal(ndocs, 1);
    mdoc = yyjson_mut_doc_new(NULL);
    assert_non_null(mdoc);
    yyjson_mut_doc_set_root(mdoc, yyjson_val_mut_copy(mdoc, docs[0]));
    default_volumes(mdoc);
    json = yyjson_mut_write(mdoc, 0, NULL);
    assert_non_null(json);
    yyjson_mut_doc_free(mdoc);
    adm_arena_destroy(a);
    return json;
}

typedef struct tally_s {
    size_t pass, fail;
} tally_t;

static void check_fixture(h_conn_t *c, const char *level, int minor, bool pass, const char *file, tally_t *t)
{
    char path[1200], ns[64], stem[256], lv[64], prefix[512];
    char *pod, *body, *deploy;
    yyjson_doc *doc;
    yyjson_val *resp;
    const char *msg;
    const char *detail;

    snprintf(path, sizeof(path), "%s/%s/v1.%d/%s/%s", corpus, level, minor, pass ? "pass" : "fail", file);
    snprintf(ns, sizeof(ns), "%s-v1-%d", level, minor);
    snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(file) - 5), file);
    snprintf(lv, sizeof(lv), "%s:v1.%d", level, minor);
    pod = fixture_json(path);
    body = review("", "pods", "Pod", ns, stem, "CREATE", pod, NULL);
    resp = post(c, body, &doc);
    free(body);
    if (pass) {
        if (!yyjson_get_bool(yyjson_obj_get(resp, "allowed")) || yyjson_obj_get(resp, "warnings") != NULL) {
            fail_msg("%s: want allowed without warnings, got %s", path, yyjson_val_write(resp, 0, NULL));
        }
        t->pass++;
        yyjson_doc_free(doc);
        free(pod);
        return;
    }
    msg = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message"));
    snprintf(prefix, sizeof(prefix), "pods \"%s\" is forbidden: violates PodSecurity \"%s\": ", stem, lv);
    if (yyjson_get_bool(yyjson_obj_get(resp, "allowed")) || msg == NULL ||
        strncmp(msg, prefix, strlen(prefix)) != 0 || strstr(msg, expected_words(stem)) == NULL ||
        yyjson_get_int(yyjson_obj_get(yyjson_obj_get(resp, "status"), "code")) != 403) {
        fail_msg("%s: want 403 %s...%s, got %s", path, prefix, expected_words(stem),
                 yyjson_val_write(resp, 0, NULL));
    }
    detail = strdup(msg + strlen(prefix));
    yyjson_doc_free(doc);

    /* the same pod as a Deployment's template: warned, never refused */
    deploy = malloc(strlen(pod) + 256);
    assert_non_null(deploy);
    snprintf(deploy, strlen(pod) + 256,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},"
             "\"spec\":{\"template\":%s}}",
             pod);
    body = review("apps", "deployments", "Deployment", ns, "d", "CREATE", deploy, NULL);
    resp = post(c, body, &doc);
    snprintf(prefix, sizeof(prefix), "would violate PodSecurity \"%s\": %s", lv, detail);
    if (!yyjson_get_bool(yyjson_obj_get(resp, "allowed")) ||
        yyjson_arr_size(yyjson_obj_get(resp, "warnings")) != 1 ||
        strcmp(yyjson_get_str(yyjson_arr_get(yyjson_obj_get(resp, "warnings"), 0)), prefix) != 0) {
        fail_msg("%s as a Deployment: want allowed with warning %s, got %s", path, prefix,
                 yyjson_val_write(resp, 0, NULL));
    }
    yyjson_doc_free(doc);
    free(body);
    free(deploy);
    free((char *)detail);
    free(pod);
    t->fail++;
}

static void test_fixtures(void **state)
{
    static const char *const levels[] = {"baseline", "restricted"};
    tally_t t = {0, 0};
    h_conn_t c;

    need_corpus();
    assert_int_equal(h_connect_to(&c, &server), 0);
    for (int l = 0; l < 2; l++) {
        for (int m = 0; m <= MAX_MINOR; m++) {
            for (int p = 0; p < 2; p++) {
                char dir[1100];
                size_t n;
                char **names;

                snprintf(dir, sizeof(dir), "%s/%s/v1.%d/%s", corpus, levels[l], m, p == 0 ? "pass" : "fail");
                names = list_yaml(dir, &n);
                for (size_t i = 0; i < n; i++) {
                    check_fixture(&c, levels[l], m, p == 0, names[i], &t);
                    free(names[i]);
                }
                free(names);
            }
        }
    }
    h_close(&c);
    print_message("PodSecurity fixtures: %zu pass admitted, %zu fail refused (and warned as Deployments)\n",
                  t.pass, t.fail);
    assert_int_equal(t.pass + t.fail, 4537);
}

/* enforce=baseline on a namespace with three privileged pods of one ReplicaSet, a privileged-free
   one of the same, and a hostNetwork pod: kube's grouped warnings. */
static void test_namespace_label_change(void **state)
{
    static const char old_ns[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"busy\"}}";
    static const char new_ns[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"busy\","
        "\"labels\":{\"pod-security.kubernetes.io/enforce\":\"baseline\"}}}";
    static const char bad_ns[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"busy\","
        "\"labels\":{\"pod-security.kubernetes.io/enforce\":\"bogus\"}}}";
    h_conn_t c;
    yyjson_doc *doc;
    yyjson_val *resp;
    yyjson_val *w;
    char *body;

    need_corpus();
    assert_int_equal(h_connect_to(&c, &server), 0);
    body = review("", "namespaces", "Namespace", "busy", "busy", "UPDATE", new_ns, old_ns);
    resp = post(&c, body, &doc);
    free(body);
    w = yyjson_obj_get(resp, "warnings");
    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    assert_int_equal(yyjson_arr_size(w), 3);
    assert_string_equal(yyjson_get_str(yyjson_arr_get(w, 0)),
                        "existing pods in namespace \"busy\" violate the new PodSecurity enforce level "
                        "\"baseline:latest\"");
    assert_string_equal(yyjson_get_str(yyjson_arr_get(w, 1)), "loner: host namespaces");
    assert_string_equal(yyjson_get_str(yyjson_arr_get(w, 2)), "web-0 (and 2 other pods): privileged");
    yyjson_doc_free(doc);

    body = review("", "namespaces", "Namespace", "busy", "busy", "CREATE", bad_ns, NULL);
    resp = post(&c, body, &doc);
    free(body);
    assert_false(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    assert_int_equal(yyjson_get_int(yyjson_obj_get(yyjson_obj_get(resp, "status"), "code")), 422);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(yyjson_obj_get(resp, "status"), "message")),
                        "Namespace \"busy\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: "
                        "Invalid value: \"bogus\": must be one of privileged, baseline, restricted");
    yyjson_doc_free(doc);
    h_close(&c);
}

/* The metrics text from the server's /metrics (heap, NUL-terminated). */
static char *scrape(h_conn_t *c)
{
    h_response_t r;
    size_t len;
    char *req = h_request("GET", "/metrics", NULL, NULL, 0, &len);
    char *text;

    assert_int_equal(h_send(c, req, len), 0);
    free(req);
    assert_int_equal(h_read(c, &r, 10000, NULL), 0);
    assert_int_equal(r.status, 200);
    text = calloc(1, r.body.len + 1);
    assert_non_null(text);
    memcpy(text, r.body.data, r.body.len);
    h_response_free(&r);
    return text;
}

static void assert_series(const char *text, const char *line)
{
    if (strstr(text, line) == NULL) {
        fail_msg("missing from /metrics: %s", line);
    }
}

/* kube's pod_security_* counters after a denied pod, an allowed pod, a warned Deployment and a pod in
   a namespace that is not there (runs first: the fixtures would add to the counts). */
static void test_metrics(void **state)
{
    static const char denied[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bad\"},\"spec\":{\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\",\"securityContext\":{\"privileged\":true}}]}}";
    static const char allowed[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"good\"},\"spec\":{"
        "\"securityContext\":{\"runAsNonRoot\":true,\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},"
        "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"securityContext\":{\"allowPrivilegeEscalation\":"
        "false,"
        "\"capabilities\":{\"drop\":[\"ALL\"]}}}]}}";
    static const char deployment[] =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},\"spec\":{"
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"securityContext\":"
        "{\"privileged\":true}}]}}}}";
    static const char *const pods[][3] = {{"restricted-v1-30", denied, "false"},
                                          {"restricted-v1-30", allowed, "true"},
                                          {"nowhere", allowed, NULL}};
    h_conn_t c;
    yyjson_doc *doc;
    yyjson_val *resp;
    char *body;
    char *text;

    need_corpus();
    assert_int_equal(h_connect_to(&c, &server), 0);
    for (size_t i = 0; i < sizeof(pods) / sizeof(*pods); i++) {
        body = review("", "pods", "Pod", pods[i][0], "", "CREATE", pods[i][1], NULL);
        resp = post(&c, body, &doc);
        free(body);
        if (pods[i][2] != NULL) {
            assert_int_equal(yyjson_get_bool(yyjson_obj_get(resp, "allowed")),
                             strcmp(pods[i][2], "true") == 0);
        }
        yyjson_doc_free(doc);
    }
    body = review("apps", "deployments", "Deployment", "restricted-v1-30", "d", "CREATE", deployment, NULL);
    resp = post(&c, body, &doc);
    free(body);
    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    yyjson_doc_free(doc);
    text = scrape(&c);
    assert_series(text,
                  "\nadmitd_pod_security_evaluations_total{decision=\"deny\",policy_level=\"restricted\","
                  "policy_version=\"v1.30\",mode=\"enforce\",request_operation=\"create\","
                  "resource=\"pod\",subresource=\"\"} 1\n");
    assert_series(text,
                  "\nadmitd_pod_security_evaluations_total{decision=\"allow\",policy_level=\"restricted\","
                  "policy_version=\"v1.30\",mode=\"enforce\",request_operation=\"create\","
                  "resource=\"pod\",subresource=\"\"} 1\n");
    assert_series(text,
                  "\nadmitd_pod_security_evaluations_total{decision=\"deny\",policy_level=\"restricted\","
                  "policy_version=\"v1.30\",mode=\"warn\",request_operation=\"create\","
                  "resource=\"controller\",subresource=\"\"} 1\n");
    assert_series(text, "\nadmitd_pod_security_errors_total{fatal=\"true\",request_operation=\"create\","
                        "resource=\"pod\",subresource=\"\"} 1\n");
    /* a denied pod is not also counted by warn: kube warns only for allowed requests */
    assert_null(strstr(text, "mode=\"warn\",request_operation=\"create\",resource=\"pod\""));
    free(text);
    h_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_namespace_label_change),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

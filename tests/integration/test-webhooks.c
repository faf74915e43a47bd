/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook proxy end to end: a real admitd with --webhook-config and --cluster-state in front
 * of a real admitd-mockhook, over TLS on 127.0.0.1. One admitd carries every webhook of the file;
 * each webhook's objectSelector picks it by the test label "t" on the pod sent, so each case
 * calls exactly the webhooks it is about (and the mockhook's --record shows which were called).
 *
 * Covered: allow, deny with and without message, patches and patches that cannot be applied, a
 * patch from a validating webhook, wrong uid, HTTP 500, invalid JSON, EOF, reset, timeout,
 * connection refused and TLS failure each under Fail and Ignore; reinvocation; dry run and
 * sideEffects; namespace and object selectors and rules that match and do not match; ?timeout=
 * and fresh uids; warnings and annotations; parallel fan-out and early denial.
 */
#include "adm/base/buf.h"
#include "adm/base/json.h"
#include "certgen.h"
#include "harness.h"

#include <mbedtls/base64.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

static h_server_t mock, admitd, svc_mock;
static char svc_record[320], svc_ca_b64[8192];
static char dir[256], record[320], foreign_ca_b64[8192], mock_ca_b64[8192];
static char long_warning_route[16 + 5000 + 1];
static int dead_port;

static const char *const mock_routes[] = {
    "--route",       "/deny=deny:nope",
    "--route",       "/deny-bare=deny",
    "--route",       "/error=error:500",
    "--route",       "/garbage=invalid-json",
    "--route",       "/wrong-uid=wrong-uid",
    "--route",       "/hang=hang",
    "--route",       "/hang-cancel=hang",
    "--route",       "/close=close",
    "--route",       "/reset=reset",
    "--route",       "/patch=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/added\",\"value\":\"yes\"}]",
    "--route",       "/patch-a=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"1\"}]",
    "--route",       "/patch-b=patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/b\",\"value\":\"2\"}]",
    "--route",       "/bad-patch=patch:[{\"op\":\"remove\",\"path\":\"/metadata/nonexistent\"}]",
    "--route",       "/rm-tolerations=patch:[{\"op\":\"remove\",\"path\":\"/spec/tolerations\"}]",
    "--route",       "/slow=allow",
    "--route-delay", "/slow=200ms",
    "--route",       "/slow1s=allow",
    "--route-delay", "/slow1s=1s",
    "--route",       "/warn=warn:be careful",
    "--route",       "/annotate=annotate:reason=checked",
    "--route",       "/deny-late=deny:late",
    "--route-delay", "/deny-late=500ms",
    "--route",       "/deny-1s=deny:later",
    "--route-delay", "/deny-1s=1s",
};

/*
 * Patches that add a value nested this deep at a path: 50,000 levels is far past what any decoder
 * takes. A patch text may nest 10,000 levels, so its values 9,998: at /spec/deep (2 tokens) that
 * makes the pod exactly 10,000 levels deep, kube-apiserver's limit, and 9,997 levels at
 * /spec/containers/0/deep (4 tokens) one level more.
 */
static struct deep_route {
    const char *route;
    const char *path;
    int depth;
    char *arg;
} deep_routes[] = {
    {"/deep-patch", "/spec/deep", 50000, NULL},
    {"/deep-fits", "/spec/deep", 9998, NULL},
    {"/deep-over", "/spec/containers/0/deep", 9997, NULL},
};

static const char *deep_route(struct deep_route *r)
{
    size_t cap = strlen(r->route) + strlen(r->path) + 2 * (size_t)r->depth + 128, n;
    char *s = malloc(cap);

    assert_non_null(s);
    n = (size_t)snprintf(s, cap, "%s=patch:[{\"op\":\"add\",\"path\":\"%s\",\"value\":", r->route, r->path);
    memset(s + n, '[', (size_t)r->depth);
    n += (size_t)r->depth;
    memset(s + n, ']', (size_t)r->depth);
    n += (size_t)r->depth;
    snprintf(s + n, cap - n, "}]");
    r->arg = s;
    return s;
}

/* ---- the configuration -------------------------------------------------------------------- */

typedef struct hook_s {
    const char *t; /* value of the pod label "t" that selects this webhook */
    const char *name;
    const char *path;  /* on the mockhook */
    const char *extra; /* more YAML lines of the webhook, each "  key: value\n" */
    int port;          /* 0: the mockhook */
    const char *ca;    /* NULL: the mockhook's CA */
} hook_t;

static void write_hook(FILE *f, const hook_t *h)
{
    fprintf(f, "- name: %s\n  clientConfig:\n    url: https://127.0.0.1:%d%s\n    caBundle: %s\n", h->name,
            h->port != 0 ? h->port : mock.port, h->path, h->ca != NULL ? h->ca : mock_ca_b64);
    if (h->extra == NULL || strstr(h->extra, "rules:") == NULL) {
        fprintf(f, "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: "
                   "[\"*/*\"]}]\n");
    }
    if (h->extra == NULL || strstr(h->extra, "objectSelector:") == NULL) {
        fprintf(f, "  objectSelector: {matchLabels: {t: %s}}\n", h->t);
    }
    if (h->extra == NULL || strstr(h->extra, "sideEffects:") == NULL) {
        fprintf(f, "  sideEffects: None\n");
    }
    if (h->extra == NULL || strstr(h->extra, "admissionReviewVersions:") == NULL) {
        fprintf(f, "  admissionReviewVersions: [v1]\n");
    }
    if (h->extra != NULL) {
        fputs(h->extra, f);
    }
}

#define FAIL_POLICY "  failurePolicy: Fail\n"
#define IGNORE_POLICY "  failurePolicy: Ignore\n"
#define ONE_SECOND "  timeoutSeconds: 1\n"

#define MAX_HOOKS 64
static hook_t validating[MAX_HOOKS], mutating[MAX_HOOKS];
static size_t nvalidating, nmutating;

static void add(hook_t *list, size_t *n, const char *t, const char *name, const char *path, const char *extra)
{
    assert_true(*n < MAX_HOOKS);
    list[*n] = (hook_t){t, name, path, extra, 0, NULL};
    (*n)++;
}

/* The call-failure table: each behaviour under Fail (t=<id>-fail) and Ignore (t=<id>-ignore). */
static const struct failure_case {
    const char *id;
    const char *path;
    const char *reason; /* expected in the message */
} failures[] = {
    {"e500", "/error",
     "failed to call webhook: an error on the server (\"admitd-mockhook: error 500\") has prevented "
     "the request from succeeding"},
    {"garbage", "/garbage",
     "failed to call webhook: couldn't get version/kind; json parse error: invalid character 't' "
     "looking for beginning of value"},
    {"wronguid", "/wrong-uid", "received invalid webhook response: expected response.uid=\""},
    {"vpatch", "/patch",
     "received invalid webhook response: validating webhook may not return response.patch"},
    {"eof", "/close", "\": EOF"},
    {"reset", "/reset", "connection reset by peer"},
    {"timeout", "/hang", "?timeout=1s\": context deadline exceeded"},
    {"refused", "/allow", ": connect: connection refused"},
    {"tls", "/allow", "tls: "},
};
#define NFAILURES (sizeof(failures) / sizeof(failures[0]))
static char failure_names[NFAILURES][2][64], failure_ts[NFAILURES][2][32];

static void build_hooks(void)
{
    for (size_t i = 0; i < NFAILURES; i++) {
        for (int p = 0; p < 2; p++) {
            hook_t *h = &validating[nvalidating++];

            snprintf(failure_names[i][p], sizeof(failure_names[i][p]), "%s-%s.hooks.example.com",
                     failures[i].id, p == 0 ? "fail" : "ignore");
            snprintf(failure_ts[i][p], sizeof(failure_ts[i][p]), "%s-%s", failures[i].id,
                     p == 0 ? "fail" : "ignore");
            *h = (hook_t){failure_ts[i][p],
                          failure_names[i][p],
                          failures[i].path,
                          p == 0 ? FAIL_POLICY ONE_SECOND : IGNORE_POLICY ONE_SECOND,
                          0,
                          NULL};
            if (strcmp(failures[i].id, "refused") == 0) {
                h->port = dead_port;
            } else if (strcmp(failures[i].id, "tls") == 0) {
                h->ca = foreign_ca_b64;
            }
        }
    }
    add(validating, &nvalidating, "allow", "allow.hooks.example.com", "/allow-plain", NULL);
    add(validating, &nvalidating, "deny", "deny.hooks.example.com", "/deny", NULL);
    add(validating, &nvalidating, "denybare", "deny-bare.hooks.example.com", "/deny-bare", NULL);
    add(validating, &nvalidating, "v1beta1", "beta.hooks.example.com", "/allow-beta",
        "  admissionReviewVersions: [v1beta1, v1]\n");
    add(validating, &nvalidating, "extras", "warn.hooks.example.com", "/warn", NULL);
    add(validating, &nvalidating, "extras", "annotate.hooks.example.com", "/annotate", NULL);
    add(validating, &nvalidating, "longwarn", "warn-long.hooks.example.com", "/warn-long", NULL);
    for (int i = 0; i < 5; i++) {
        static char names[5][64];

        snprintf(names[i], sizeof(names[i]), "slow%d.hooks.example.com", i);
        add(validating, &nvalidating, "parallel", names[i], "/slow", NULL);
    }
    for (int i = 0; i < 4; i++) {
        static char names[4][64];

        snprintf(names[i], sizeof(names[i]), "slow1s-%d.hooks.example.com", i);
        add(validating, &nvalidating, "early", names[i], "/slow1s", NULL);
    }
    add(validating, &nvalidating, "early", "early-deny.hooks.example.com", "/deny", NULL);
    add(validating, &nvalidating, "early", "slow1s-deny.hooks.example.com", "/deny-1s", NULL);
    /* answers that arrive before a denial: their warnings and annotations are kept with it */
    add(validating, &nvalidating, "opendeny", "opendeny-error.hooks.example.com", "/error", IGNORE_POLICY);
    add(validating, &nvalidating, "opendeny", "opendeny-warn.hooks.example.com", "/warn", NULL);
    add(validating, &nvalidating, "opendeny", "opendeny-annotate.hooks.example.com", "/annotate", NULL);
    add(validating, &nvalidating, "opendeny", "opendeny-deny.hooks.example.com", "/deny-late", NULL);
    add(validating, &nvalidating, "ns", "ns-prod.hooks.example.com", "/ns-prod",
        "  namespaceSelector: {matchLabels: {env: prod}}\n");
    add(validating, &nvalidating, "obj", "obj.hooks.example.com", "/obj-web",
        "  objectSelector: {matchExpressions: [{key: t, operator: In, values: [obj]}, {key: app, operator: "
        "In, "
        "values: [web]}]}\n");
    add(validating, &nvalidating, "rules", "rules-delete.hooks.example.com", "/rules-delete",
        "  rules: [{operations: [DELETE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]\n");
    add(validating, &nvalidating, "rules", "rules-create.hooks.example.com", "/rules-create",
        "  rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]\n");
    add(validating, &nvalidating, "dry", "dry-none.hooks.example.com", "/dry-none", NULL);
    add(validating, &nvalidating, "drysome", "dry-some.hooks.example.com", "/dry-some",
        "  sideEffects: Some\n");
    add(validating, &nvalidating, "query", "query.hooks.example.com", "/query", NULL);
    add(validating, &nvalidating, "cancel", "cancel.hooks.example.com", "/hang-cancel", NULL);
    add(validating, &nvalidating, "deadline", "deadline.hooks.example.com", "/hang",
        "  timeoutSeconds: 30\n");

    add(mutating, &nmutating, "patch", "patch.hooks.example.com", "/patch", NULL);
    add(mutating, &nmutating, "badpatch-fail", "bad-patch-fail.hooks.example.com", "/bad-patch", FAIL_POLICY);
    add(mutating, &nmutating, "badpatch-ignore", "bad-patch-ignore.hooks.example.com", "/bad-patch",
        IGNORE_POLICY);
    add(mutating, &nmutating, "mfail-ignore", "m-error.hooks.example.com", "/error", IGNORE_POLICY);
    add(mutating, &nmutating, "mdeny", "m-deny.hooks.example.com", "/deny", NULL);
    add(mutating, &nmutating, "reinv", "reinv-a.hooks.example.com", "/reinv-a-ifneeded",
        "  reinvocationPolicy: IfNeeded\n");
    add(mutating, &nmutating, "reinv", "reinv-b.hooks.example.com", "/patch-b", NULL);
    add(mutating, &nmutating, "noreinv", "noreinv-a.hooks.example.com", "/noreinv-a", NULL);
    add(mutating, &nmutating, "noreinv", "noreinv-b.hooks.example.com", "/patch-b", NULL);
    /* a change, then an IfNeeded webhook after it: round 1 calls it again only if built-in
       plugins change the object between the rounds */
    add(mutating, &nmutating, "intree", "intree-b.hooks.example.com", "/rm-tolerations", NULL);
    add(mutating, &nmutating, "intree", "intree-a.hooks.example.com", "/intree-a",
        "  reinvocationPolicy: IfNeeded\n");
    add(mutating, &nmutating, "nointree", "nointree-b.hooks.example.com", "/patch-b", NULL);
    add(mutating, &nmutating, "nointree", "nointree-a.hooks.example.com", "/nointree-a",
        "  reinvocationPolicy: IfNeeded\n");
    /* patches nested deeper than kube-apiserver decodes, and one just within */
    add(mutating, &nmutating, "deep-fail", "deep-fail.hooks.example.com", "/deep-patch", FAIL_POLICY);
    add(mutating, &nmutating, "deep-ignore", "deep-ignore.hooks.example.com", "/deep-patch", IGNORE_POLICY);
    add(mutating, &nmutating, "deep-ignore", "deep-next.hooks.example.com", "/patch", NULL);
    add(mutating, &nmutating, "deep-over", "deep-over.hooks.example.com", "/deep-over", IGNORE_POLICY);
    add(mutating, &nmutating, "deep-fits", "deep-fits.hooks.example.com", "/deep-fits", NULL);
}

static void write_config(const char *path)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
               "metadata: {name: validating}\nwebhooks:\n");
    for (size_t i = 0; i < nvalidating; i++) {
        write_hook(f, &validating[i]);
    }
    fprintf(
        f,
        "- name: service.hooks.example.com\n  clientConfig:\n    service: {namespace: hooks, name: mock, "
        "port: %d, path: /svc-path/}\n    caBundle: %s\n"
        "  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], resources: [\"*/*\"]}]\n"
        "  objectSelector: {matchLabels: {t: service}}\n  sideEffects: None\n  admissionReviewVersions: "
        "[v1]\n",
        svc_mock.port, svc_ca_b64);
    fprintf(f, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
               "metadata: {name: mutating}\nwebhooks:\n");
    for (size_t i = 0; i < nmutating; i++) {
        write_hook(f, &mutating[i]);
    }
    fclose(f);
}

static void write_cluster_state(const char *path)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\n"
          "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}\n---\n"
          "apiVersion: v1\nkind: Namespace\nmetadata: {name: dev, labels: {env: dev}}\n",
          f);
    fclose(f);
}

/* ---- requests and answers ------------------------------------------------------------------ */

/* The pod fixture with label t (and app), in namespace ns, optionally a dry run. */
static char *review(const char *t, const char *ns, bool dry_run, const char *app)
{
    size_t len;
    char *text = h_fixture("pod-create.v1.review.json", &len);
    yyjson_doc *doc = yyjson_read(text, len, 0);
    yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);
    yyjson_mut_val *req = yyjson_mut_obj_get(yyjson_mut_doc_get_root(m), "request");
    yyjson_mut_val *labels =
        yyjson_mut_obj_get(yyjson_mut_obj_get(yyjson_mut_obj_get(req, "object"), "metadata"), "labels");
    char *out;

    yyjson_mut_obj_put(labels, yyjson_mut_strcpy(m, "t"), yyjson_mut_strcpy(m, t));
    yyjson_mut_obj_put(labels, yyjson_mut_strcpy(m, "app"), yyjson_mut_strcpy(m, app != NULL ? app : "web"));
    yyjson_mut_obj_put(req, yyjson_mut_strcpy(m, "namespace"),
                       yyjson_mut_strcpy(m, ns != NULL ? ns : "default"));
    yyjson_mut_obj_put(req, yyjson_mut_strcpy(m, "dryRun"), yyjson_mut_bool(m, dry_run));
    out = yyjson_mut_write(m, 0, NULL);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(doc);
    free(text);
    return out;
}

typedef struct answer_s {
    int http;
    bool allowed;
    int code;
    char message[1024];
    char patch[2048];
    yyjson_doc *doc;
    yyjson_val *response;
    long long ms;
} answer_t;

static void ask(const char *path, char *body, answer_t *a)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request("POST", path, "application/json", body, strlen(body), &len);
    long long t0 = h_now_ms();
    yyjson_val *status, *patch;

    memset(a, 0, sizeof(*a));
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 20000, NULL), 0);
    a->ms = h_now_ms() - t0;
    a->http = r.status;
    a->doc = yyjson_read((const char *)r.body.data, r.body.len, 0);
    a->response = yyjson_obj_get(yyjson_doc_get_root(a->doc), "response");
    a->allowed = yyjson_get_bool(yyjson_obj_get(a->response, "allowed"));
    status = yyjson_obj_get(a->response, "status");
    a->code = (int)yyjson_get_int(yyjson_obj_get(status, "code"));
    snprintf(a->message, sizeof(a->message), "%s",
             yyjson_get_str(yyjson_obj_get(status, "message")) != NULL
                 ? yyjson_get_str(yyjson_obj_get(status, "message"))
                 : "");
    patch = yyjson_obj_get(a->response, "patch");
    if (yyjson_is_str(patch)) {
        size_t olen = 0;

        /* a patch too large for the buffer stays "" here; the test decodes it itself */
        if (mbedtls_base64_decode((unsigned char *)a->patch, sizeof(a->patch) - 1, &olen,
                                  (const unsigned char *)yyjson_get_str(patch), yyjson_get_len(patch)) == 0) {
            a->patch[olen] = '\0';
        }
    }
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(body);
}

static void done(answer_t *a)
{
    yyjson_doc_free(a->doc);
}

static const char *annotation(answer_t *a, const char *key)
{
    return yyjson_get_str(yyjson_obj_get(yyjson_obj_get(a->response, "auditAnnotations"), key));
}

/* Calls the mockhook recorded for path (lines in its --record file). */
static int calls(const char *path)
{
    FILE *f = fopen(record, "r");
    char pattern[128], *line = NULL;
    size_t cap = 0;
    int n = 0;

    if (f == NULL) {
        return 0;
    }
    snprintf(pattern, sizeof(pattern), "{\"path\":\"%s\",", path);
    while (getline(&line, &cap, f) > 0) {
        n += strncmp(line, pattern, strlen(pattern)) == 0;
    }
    free(line);
    fclose(f);
    return n;
}

/* The last recorded request to path, parsed (caller frees). */
static yyjson_doc *last_call(const char *path)
{
    FILE *f = fopen(record, "r");
    char pattern[128], *line = NULL, *last = NULL;
    size_t cap = 0;
    yyjson_doc *doc;

    assert_non_null(f);
    snprintf(pattern, sizeof(pattern), "{\"path\":\"%s\",", path);
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, pattern, strlen(pattern)) == 0) {
            free(last);
            last = strdup(line);
        }
    }
    free(line);
    fclose(f);
    assert_non_null(last);
    doc = yyjson_read(last, strlen(last), 0);
    free(last);
    return doc;
}

/* ---- set-up -------------------------------------------------------------------------------- */

static int setup(void **state)
{
    const char *mock_args[H_MAX_ARGS];
    const char *other_args[] = {NULL};
    h_server_t other;
    char config[320], cluster[320];
    size_t n = 0;

    (void)state;
    assert_int_equal(certgen_tempdir(dir, sizeof(dir)), 0);
    snprintf(record, sizeof(record), "%s/record.jsonl", dir);
    for (size_t i = 0; i < sizeof(mock_routes) / sizeof(mock_routes[0]); i++) {
        mock_args[n++] = mock_routes[i];
    }
    for (size_t i = 0; i < sizeof(deep_routes) / sizeof(deep_routes[0]); i++) {
        mock_args[n++] = "--route";
        mock_args[n++] = deep_route(&deep_routes[i]);
    }
    /* a warning of 5,000 runes: kube-apiserver cuts it to 256 */
    memcpy(long_warning_route, "/warn-long=warn:", 16);
    memset(long_warning_route + 16, 'w', 5000);
    mock_args[n++] = "--route";
    mock_args[n++] = long_warning_route;
    mock_args[n++] = "--record";
    mock_args[n++] = record;
    mock_args[n] = NULL;
    assert_int_equal(h_start_prog(&mock, h_bin("MOCKHOOK_BIN"), NULL, mock_args), 0);
    h_file_b64(mock.ca, mock_ca_b64, sizeof(mock_ca_b64));
    /* a stopped mockhook leaves a port nobody listens on and a CA nobody else uses */
    assert_int_equal(h_start_prog(&other, h_bin("MOCKHOOK_BIN"), NULL, other_args), 0);
    h_file_b64(other.ca, foreign_ca_b64, sizeof(foreign_ca_b64));
    dead_port = other.port;
    h_stop(&other, 15, 5000);
    h_cleanup(&other);

    /* a webhook named by service: its certificate is for mock.hooks.svc, reached through --resolve */
    {
        char cert[320], key[320], ca[320];
        const char *svc_args[] = {"--tls-cert-file", cert, "--tls-private-key-file", key, "--record",
                                  svc_record,        NULL};

        snprintf(cert, sizeof(cert), "%s/svc.crt.pem", dir);
        snprintf(key, sizeof(key), "%s/svc.key.pem", dir);
        snprintf(ca, sizeof(ca), "%s/svcca.crt.pem", dir);
        snprintf(svc_record, sizeof(svc_record), "%s/svc-record.jsonl", dir);
        assert_int_equal(certgen_make(dir, "svcca", "service test CA", NULL, false), 0);
        assert_int_equal(certgen_make(dir, "svc", "mock.hooks.svc", "svcca", false), 0);
        assert_int_equal(h_start_prog(&svc_mock, h_bin("MOCKHOOK_BIN"), NULL, svc_args), 0);
        h_file_b64(ca, svc_ca_b64, sizeof(svc_ca_b64));
    }
    build_hooks();
    snprintf(config, sizeof(config), "%s/hooks.yaml", dir);
    snprintf(cluster, sizeof(cluster), "%s/cluster.yaml", dir);
    write_config(config);
    write_cluster_state(cluster);
    {
        char resolve[128];
        /* The proxy alone: the default plugins that look up namespaces and service accounts,
           which this cluster state does not all hold, would answer before the webhooks do
           (PodSecurity refuses a pod in a namespace the state lacks with kube's 500, before the
           webhooks' own 404 for it, D5, which is what this test is about). */
        const char *args[] = {"--webhook-config",
                              config,
                              "--cluster-state",
                              cluster,
                              "--resolve",
                              resolve,
                              "--v",
                              "1",
                              "--disable-admission-plugins",
                              "ServiceAccount,PodSecurity",
                              NULL};

        snprintf(resolve, sizeof(resolve), "mock.hooks.svc:%d:127.0.0.1", svc_mock.port);

        if (h_start(&admitd, NULL, args) != 0) {
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    /* exit 0 after the drain: under ASan, also no leak and no memory error */
    if (h_stop(&admitd, 15, 30000) != 0) {
        h_dump_log(&admitd);
        fail_msg("admitd did not exit cleanly");
    }
    h_cleanup(&admitd);
    h_stop(&mock, 15, 10000);
    h_cleanup(&mock);
    h_stop(&svc_mock, 15, 10000);
    h_cleanup(&svc_mock);
    certgen_rmdir(dir);
    for (size_t i = 0; i < sizeof(deep_routes) / sizeof(deep_routes[0]); i++) {
        free(deep_routes[i].arg);
    }
    return 0;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_allow_and_deny(void **state)
{
    answer_t a;

    (void)state;
    ask("/validate", review("allow", NULL, false, NULL), &a);
    assert_int_equal(a.http, 200);
    assert_true(a.allowed);
    done(&a);

    ask("/validate", review("deny", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 403);
    assert_string_equal(a.message, "admission webhook \"deny.hooks.example.com\" denied the request: nope");
    done(&a);

    ask("/validate", review("denybare", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 400); /* no status: kube's code for a denial without one */
    assert_string_equal(
        a.message,
        "admission webhook \"deny-bare.hooks.example.com\" denied the request without explanation");
    done(&a);

    /* a webhook that speaks v1beta1 gets v1beta1 */
    ask("/validate", review("v1beta1", NULL, false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    {
        yyjson_doc *d = last_call("/allow-beta");

        assert_string_equal(yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/review/apiVersion")),
                            "admission.k8s.io/v1beta1");
        yyjson_doc_free(d);
    }
}

static void test_call_failures_under_fail_and_ignore(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFAILURES; i++) {
        answer_t a;
        char expect[1400];

        /* Fail: 500 Internal error naming the webhook and the reason */
        ask("/validate", review(failure_ts[i][0], NULL, false, NULL), &a);
        snprintf(expect, sizeof(expect),
                 "Internal error occurred: failed calling webhook \"%s\": ", failure_names[i][0]);
        if (a.allowed || a.code != 500 || strncmp(a.message, expect, strlen(expect)) != 0 ||
            strstr(a.message, failures[i].reason) == NULL) {
            fail_msg("%s under Fail: allowed %d code %d message %s", failures[i].id, a.allowed, a.code,
                     a.message);
        }
        done(&a);

        /* Ignore: allowed, with the fail-open annotation (index among the matched webhooks) */
        ask("/validate", review(failure_ts[i][1], NULL, false, NULL), &a);
        if (!a.allowed) {
            fail_msg("%s under Ignore: not allowed: %s", failures[i].id, a.message);
        }
        assert_non_null(annotation(&a, "failed-open.validating.webhook.admission.k8s.io.round_0_index_0"));
        assert_string_equal(annotation(&a, "failed-open.validating.webhook.admission.k8s.io.round_0_index_0"),
                            failure_names[i][1]);
        done(&a);
    }
}

static void test_mutating_patches(void **state)
{
    answer_t a;

    (void)state;
    ask("/admit", review("patch", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_non_null(
        strstr(a.patch, "{\"op\":\"add\",\"path\":\"/metadata/labels/added\",\"value\":\"yes\"}"));
    assert_non_null(
        strstr(annotation(&a, "mutation.webhook.admission.k8s.io.round_0_index_0"), "\"mutated\":true"));
    done(&a);

    /* a patch that cannot be applied is a 500 under either policy */
    ask("/mutate", review("badpatch-fail", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    /* json-patch v4's words, as kube-apiserver reports them */
    assert_string_equal(a.message,
                        "Internal error occurred: error in remove for path: '/metadata/nonexistent': "
                        "Unable to remove nonexistent key: nonexistent: missing value");
    done(&a);
    ask("/mutate", review("badpatch-ignore", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    done(&a);

    /* a mutating call failure under Ignore: fail-open annotation at its index in the full list */
    ask("/mutate", review("mfail-ignore", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_string_equal(annotation(&a, "failed-open.mutation.webhook.admission.k8s.io.round_0_index_3"),
                        "m-error.hooks.example.com");
    done(&a);

    ask("/mutate", review("mdeny", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 403);
    done(&a);
}

static void test_reinvocation(void **state)
{
    answer_t a;
    int before_a = calls("/reinv-a-ifneeded"), before_b = calls("/patch-b");
    int before_never = calls("/noreinv-a");

    (void)state;
    /* A (IfNeeded) then B, which changes the object: A is called once more */
    ask("/mutate", review("reinv", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_int_equal(calls("/reinv-a-ifneeded") - before_a, 2);
    assert_int_equal(calls("/patch-b") - before_b, 1);
    assert_non_null(annotation(&a, "mutation.webhook.admission.k8s.io.round_1_index_5"));
    done(&a);

    /* the same with A Never: once */
    before_b = calls("/patch-b");
    ask("/mutate", review("noreinv", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_int_equal(calls("/noreinv-a") - before_never, 1);
    assert_int_equal(calls("/patch-b") - before_b, 1);
    done(&a);
}

static void test_reinvocation_after_builtin_plugins(void **state)
{
    answer_t a;
    int intree = calls("/intree-a"), nointree = calls("/nointree-a");

    (void)state;
    /* B removes the tolerations; in round 1 DefaultTolerationSeconds puts them back, so the
       IfNeeded webhook A, called after B's change, is called once more (spec 6.2) */
    ask("/admit", review("intree", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_int_equal(calls("/intree-a") - intree, 2);
    /* the answer's patch: tolerations back as DefaultTolerationSeconds wrote them, nothing removed */
    assert_null(strstr(a.patch, "\"remove\""));
    done(&a);

    /* B only adds a label; round 1 changes nothing before the webhooks: A is not called again */
    ask("/admit", review("nointree", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_int_equal(calls("/nointree-a") - nointree, 1);
    done(&a);
}

static void test_selectors_and_rules(void **state)
{
    answer_t a;
    int n;

    (void)state;
    n = calls("/ns-prod");
    ask("/validate", review("ns", "prod", false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    assert_int_equal(calls("/ns-prod") - n, 1);
    ask("/validate", review("ns", "dev", false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    assert_int_equal(calls("/ns-prod") - n, 1); /* not called for dev */
    /* a namespace the cluster state does not hold: 404, whatever the policy (D5) */
    ask("/validate", review("ns", "ghost", false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 404);
    assert_string_equal(a.message, "namespaces \"ghost\" not found");
    done(&a);

    n = calls("/obj-web");
    ask("/validate", review("obj", NULL, false, "web"), &a);
    done(&a);
    ask("/validate", review("obj", NULL, false, "api"), &a);
    done(&a);
    assert_int_equal(calls("/obj-web") - n, 1);

    n = calls("/rules-delete");
    int created = calls("/rules-create");
    ask("/validate", review("rules", NULL, false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    assert_int_equal(calls("/rules-delete") - n, 0);
    assert_int_equal(calls("/rules-create") - created, 1);

    /* nothing labelled for a webhook: none is called */
    n = calls("/allow-plain");
    ask("/validate", review("nobody", NULL, false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    assert_int_equal(calls("/allow-plain") - n, 0);
}

static void test_dry_run(void **state)
{
    answer_t a;
    yyjson_doc *d;
    int some = calls("/dry-some");

    (void)state;
    ask("/validate", review("dry", NULL, true, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    d = last_call("/dry-none");
    assert_true(yyjson_get_bool(yyjson_ptr_get(yyjson_doc_get_root(d), "/review/request/dryRun")));
    yyjson_doc_free(d);

    ask("/validate", review("drysome", NULL, true, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 400);
    assert_string_equal(a.message,
                        "admission webhook \"dry-some.hooks.example.com\" does not support dry run");
    done(&a);
    assert_int_equal(calls("/dry-some"), some);
    /* not a dry run: called */
    ask("/validate", review("drysome", NULL, false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
    assert_int_equal(calls("/dry-some"), some + 1);
}

static void test_timeout_query_and_fresh_uids(void **state)
{
    answer_t a;
    yyjson_doc *d;
    const char *uid1, *uid2;
    char first[40];

    (void)state;
    ask("/validate?timeout=7s", review("query", NULL, false, NULL), &a);
    done(&a);
    d = last_call("/query");
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/query")), "timeout=7s");
    uid1 = yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/review/request/uid"));
    assert_non_null(uid1);
    assert_int_equal(strlen(uid1), 36);
    assert_string_not_equal(uid1, "4a9c2e8f-6b1d-4f3a-8e7c-2d5b9a1f0c36"); /* not the caller's */
    memcpy(first, uid1, 37);
    yyjson_doc_free(d);

    ask("/validate", review("query", NULL, false, NULL), &a);
    done(&a);
    d = last_call("/query");
    assert_string_equal(yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/query")), "timeout=10s");
    uid2 = yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/review/request/uid"));
    assert_string_not_equal(uid2, first);
    yyjson_doc_free(d);
}

static void test_warnings_and_annotations(void **state)
{
    answer_t a;
    yyjson_val *warnings;

    (void)state;
    ask("/validate", review("extras", NULL, false, NULL), &a);
    assert_true(a.allowed);
    warnings = yyjson_obj_get(a.response, "warnings");
    assert_int_equal(yyjson_arr_size(warnings), 1);
    assert_string_equal(yyjson_get_str(yyjson_arr_get(warnings, 0)), "be careful");
    assert_string_equal(annotation(&a, "annotate.hooks.example.com.reason"), "checked");
    done(&a);
    /* within kube-apiserver's limits: one warning past 4,096 runes is cut to 256 */
    ask("/validate", review("longwarn", NULL, false, NULL), &a);
    assert_true(a.allowed);
    warnings = yyjson_obj_get(a.response, "warnings");
    assert_int_equal(yyjson_arr_size(warnings), 1);
    assert_int_equal(yyjson_get_len(yyjson_arr_get(warnings, 0)), 256);
    done(&a);
}

static void test_parallel_and_early_denial(void **state)
{
    answer_t a;
    int before_allowed;

    (void)state;
    /* five webhooks that each take 200 ms: called at once */
    ask("/validate", review("parallel", NULL, false, NULL), &a);
    assert_true(a.allowed);
    assert_true(a.ms >= 190);
    if (a.ms >= 400) {
        fail_msg("five 200 ms webhooks took %lld ms", a.ms);
    }
    done(&a);
    /* four take a second, one denies at once: the denial is the answer, without waiting (D3) */
    before_allowed = h_log_count(&admitd, "webhook slow1s-");
    ask("/validate", review("early", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 403);
    assert_string_equal(a.message,
                        "admission webhook \"early-deny.hooks.example.com\" denied the request: nope");
    if (a.ms >= 600) {
        fail_msg("an early denial took %lld ms", a.ms);
    }
    done(&a);
    /* the calls left running still end, and their answers are counted and logged (D3) */
    for (int i = 0; i < 4; i++) {
        char line[128];

        snprintf(line, sizeof(line),
                 "validating webhook slow1s-%d.hooks.example.com answered after the request was "
                 "decided: allowed",
                 i);
        if (!h_log_wait(&admitd, line, 1, 5000)) {
            h_dump_log(&admitd);
            fail_msg("no line \"%s\"", line);
        }
    }
    assert_true(
        h_log_wait(&admitd,
                   "validating webhook slow1s-deny.hooks.example.com answered after the request was decided: "
                   "denied: admission webhook \"slow1s-deny.hooks.example.com\" denied the request: later",
                   1, 5000));
    assert_int_equal(h_log_count(&admitd, "webhook slow1s-"), before_allowed + 5);
}

/*
 * A denial that comes after other answers: kube-apiserver keeps what those answers recorded (each
 * webhook's warnings and annotations, the fail-open annotation of an ignored failure) whatever
 * the outcome, so the denial carries them.
 */
static void test_denial_keeps_earlier_answers(void **state)
{
    answer_t a;
    yyjson_val *warnings;

    (void)state;
    ask("/validate", review("opendeny", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 403);
    assert_string_equal(a.message,
                        "admission webhook \"opendeny-deny.hooks.example.com\" denied the request: late");
    assert_non_null(annotation(&a, "failed-open.validating.webhook.admission.k8s.io.round_0_index_0"));
    assert_string_equal(annotation(&a, "failed-open.validating.webhook.admission.k8s.io.round_0_index_0"),
                        "opendeny-error.hooks.example.com");
    assert_non_null(annotation(&a, "opendeny-annotate.hooks.example.com.reason"));
    assert_string_equal(annotation(&a, "opendeny-annotate.hooks.example.com.reason"), "checked");
    warnings = yyjson_obj_get(a.response, "warnings");
    assert_int_equal(yyjson_arr_size(warnings), 1);
    assert_string_equal(yyjson_get_str(yyjson_arr_get(warnings, 0)), "be careful");
    done(&a);
}

static void test_caller_deadline_bounds_the_chain(void **state)
{
    answer_t a;

    (void)state;
    /* timeoutSeconds 30, but the caller allows 2 s: admitd answers by 2 s minus the 250 ms margin */
    ask("/validate?timeout=2s", review("deadline", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    assert_non_null(strstr(a.message, "/hang?timeout=2s\": context deadline exceeded"));
    if (a.ms < 1700 || a.ms > 2000) {
        fail_msg("answered after %lld ms, want 1750 ms", a.ms);
    }
    done(&a);
}

static void test_service_reference(void **state)
{
    answer_t a;
    FILE *f;
    char line[8192];
    bool seen = false;

    (void)state;
    ask("/validate", review("service", NULL, false, NULL), &a);
    if (!a.allowed) {
        fail_msg("service webhook: %s", a.message);
    }
    done(&a);
    /* TLS verified mock.hooks.svc, the path was cleaned, ?timeout= sent */
    f = fopen(svc_record, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        seen = seen || strncmp(line, "{\"path\":\"/svc-path\",\"query\":\"timeout=10s\"", 39) == 0;
    }
    fclose(f);
    assert_true(seen);
}

static void test_caller_gone_while_webhooks_run(void **state)
{
    h_conn_t c;
    size_t len;
    char *body = review("cancel", NULL, false, NULL);
    char *req = h_request("POST", "/validate", "application/json", body, strlen(body), &len);
    int before = calls("/hang-cancel");
    long long deadline = h_now_ms() + 5000;
    answer_t a;

    (void)state;
    assert_int_equal(h_connect_to(&c, &admitd), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    /* once the webhook has the call, the caller goes away: admitd drops its side of the work */
    while (calls("/hang-cancel") == before && h_now_ms() < deadline) {
        poll(NULL, 0, 10); /* the record file has no event to wait on */
    }
    assert_int_equal(calls("/hang-cancel"), before + 1);
    h_close(&c);
    free(req);
    free(body);
    /* and goes on serving */
    ask("/validate", review("allow", NULL, false, NULL), &a);
    assert_true(a.allowed);
    done(&a);
}

/*
 * A webhook's answer nested past kube-apiserver's decoder limit, then another webhook: refused as
 * kube refuses it, never a crash (this sequence used to end admitd with SIGSEGV, the patch's
 * nesting recursing through JSON Patch's equality and diff).
 */
static void test_deep_webhook_answers(void **state)
{
    answer_t a;
    int next_before = calls("/patch");
    yyjson_val *patch;
    char *text;
    size_t len = 0;

    (void)state;
    /* Fail: the undecodable patch is a call failure, in Go's words */
    ask("/admit", review("deep-fail", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    assert_string_equal(a.message,
                        "Internal error occurred: failed calling webhook \"deep-fail.hooks.example.com\": "
                        "received undecodable patch in webhook response: invalid character '[' exceeded "
                        "max depth");
    done(&a);

    /* Ignore: skipped with the fail-open annotation; the next webhook is called and its patch applies */
    ask("/admit", review("deep-ignore", NULL, false, NULL), &a);
    if (!a.allowed) {
        fail_msg("not allowed: %s", a.message);
    }
    assert_int_equal(calls("/patch"), next_before + 1);
    assert_non_null(strstr(a.patch, "/metadata/labels/added"));
    assert_null(strstr(a.patch, "/spec/deep"));
    for (size_t i = 0; i < nmutating; i++) {
        if (strcmp(mutating[i].name, "deep-ignore.hooks.example.com") == 0) {
            char key[128];

            snprintf(key, sizeof(key), "failed-open.mutation.webhook.admission.k8s.io.round_0_index_%zu", i);
            assert_non_null(annotation(&a, key));
            assert_string_equal(annotation(&a, key), "deep-ignore.hooks.example.com");
        }
    }
    done(&a);

    /* a patch that decodes but leaves the pod one level deeper than kube decodes: 500 whatever the policy */
    ask("/admit", review("deep-over", NULL, false, NULL), &a);
    assert_false(a.allowed);
    assert_int_equal(a.code, 500);
    assert_string_equal(a.message,
                        "Internal error occurred: couldn't get version/kind; json parse error: invalid "
                        "character '[' exceeded max depth");
    done(&a);

    /* exactly at the limit: applied, through both phases, and answered as a patch of that depth */
    ask("/admit", review("deep-fits", NULL, false, NULL), &a);
    if (!a.allowed) {
        fail_msg("not allowed: %s", a.message);
    }
    patch = yyjson_obj_get(a.response, "patch");
    assert_true(yyjson_is_str(patch));
    text = malloc(yyjson_get_len(patch));
    assert_non_null(text);
    assert_int_equal(mbedtls_base64_decode((unsigned char *)text, yyjson_get_len(patch), &len,
                                           (const unsigned char *)yyjson_get_str(patch),
                                           yyjson_get_len(patch)),
                     0);
    /* [{"op":"add","path":"/spec/deep","value":<9,998 levels>}] nests 10,000 levels */
    assert_non_null(strstr(text, "\"path\":\"/spec/deep\""));
    assert_false(adm_json_too_deep(text, len, ADM_JSON_MAX_DEPTH, NULL));
    assert_true(adm_json_too_deep(text, len, ADM_JSON_MAX_DEPTH - 1, NULL));
    free(text);
    done(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allow_and_deny),
        cmocka_unit_test(test_call_failures_under_fail_and_ignore),
        cmocka_unit_test(test_mutating_patches),
        cmocka_unit_test(test_reinvocation),
        cmocka_unit_test(test_reinvocation_after_builtin_plugins),
        cmocka_unit_test(test_selectors_and_rules),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_timeout_query_and_fresh_uids),
        cmocka_unit_test(test_warnings_and_annotations),
        cmocka_unit_test(test_parallel_and_early_denial),
        cmocka_unit_test(test_denial_keeps_earlier_answers),
        cmocka_unit_test(test_caller_deadline_bounds_the_chain),
        cmocka_unit_test(test_service_reference),
        cmocka_unit_test(test_caller_gone_while_webhooks_run),
        cmocka_unit_test(test_deep_webhook_answers),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

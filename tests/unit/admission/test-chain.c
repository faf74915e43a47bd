/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The chain: the enabled set as kube-apiserver computes it, flag errors, AdmissionConfiguration
 * loading (every error names the file and the field), and running the phases: order, first
 * rejection wins, the patch takes the received object to the final one. Then what the chain hands
 * every hook, on chains of test plugins (this file includes chain.c to build them): the clock, and
 * one slot per plugin for the whole request.
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
#include <uv.h>

#include "../../../src/admission/chain.c"

#include "adm/admission/admission_config.h"
#include "adm/admission/chain.h"
#include "adm/admission/jsonpatch.h"
#include "adm/admission/plugin.h"
#include "adm/admission/review.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "certgen.h"
#include "plugintest.h"

static adm_arena_t *arena;
static char dir[256];

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL || certgen_tempdir(dir, sizeof(dir)) != 0;
}

static int teardown(void **state)
{
    char cmd[300];

    adm_arena_destroy(arena);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    FILE *f;

    snprintf(p, 512, "%s/%s", dir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static int make_chain(const char *enable, const char *disable, const char *config_file, adm_chain_t **c,
                      char *err, size_t err_len)
{
    adm_options_t o;

    adm_options_defaults(&o);
    snprintf(o.enable_plugins, sizeof(o.enable_plugins), "%s", enable != NULL ? enable : "");
    snprintf(o.disable_plugins, sizeof(o.disable_plugins), "%s", disable != NULL ? disable : "");
    o.admission_config_file = config_file;
    err[0] = '\0';
    return adm_chain_create(&o, c, err, err_len);
}

static void test_enabled_set(void **state)
{
    adm_chain_t *c;
    char err[2048];
    size_t n, count;
    const char *const *names;
    const adm_plugin_info_t *all = adm_plugin_registry(&count);
    size_t want = 0;

    /* Default: kube-apiserver's default set, less what admitd does not implement, in order. */
    assert_int_equal(make_chain(NULL, NULL, NULL, &c, err, sizeof(err)), 0);
    names = adm_chain_plugins(c, &n);
    for (size_t i = 0; i < count; i++) {
        if (all[i].default_on && all[i].plugin != NULL) {
            assert_true(want < n);
            assert_string_equal(names[want], all[i].name);
            want++;
        }
    }
    assert_int_equal(n, want);
    assert_true(n >= 3);
    adm_chain_destroy(c);

    /* Flag order does not matter; a name in both lists is enabled; defaults can be disabled. */
    assert_int_equal(
        make_chain("AlwaysDeny, AlwaysPullImages,DenyServiceExternalIPs",
                   "DefaultTolerationSeconds,DenyServiceExternalIPs,TaintNodesByCondition,PodSecurity", NULL,
                   &c, err, sizeof(err)),
        0);
    names = adm_chain_plugins(c, &n);
    {
        const char *order[64]; /* room for every registry row */
        size_t k = 0;

        assert_true(count <= sizeof(order) / sizeof(order[0]));

        for (size_t i = 0; i < count; i++) {
            if (strcmp(all[i].name, "AlwaysPullImages") == 0 ||
                strcmp(all[i].name, "DenyServiceExternalIPs") == 0 ||
                strcmp(all[i].name, "AlwaysDeny") == 0 ||
                (all[i].default_on && all[i].plugin != NULL &&
                 strcmp(all[i].name, "DefaultTolerationSeconds") != 0 &&
                 strcmp(all[i].name, "TaintNodesByCondition") != 0 &&
                 strcmp(all[i].name, "PodSecurity") != 0)) {
                order[k++] = all[i].name;
            }
        }
        assert_int_equal(n, k);
        for (size_t i = 0; i < k; i++) {
            assert_string_equal(names[i], order[i]);
        }
        assert_string_equal(names[n - 1], "AlwaysDeny"); /* always last in kube's order */
    }
    adm_chain_destroy(c);
}

static void test_flag_errors(void **state)
{
    adm_chain_t *c = NULL;
    char err[2048];

    assert_int_equal(make_chain("Bogus", NULL, NULL, &c, err, sizeof(err)), ADM_EINVAL);
    assert_null(c);
    assert_non_null(
        strstr(err, "--enable-admission-plugins: plugin \"Bogus\" is unknown; known plugins: AlwaysAdmit, "));
    assert_non_null(strstr(err, ", ResourceQuota, AlwaysDeny"));
    assert_int_equal(make_chain(NULL, "alwaysdeny", NULL, &c, err, sizeof(err)), ADM_EINVAL);
    assert_non_null(strstr(err, "--disable-admission-plugins: plugin \"alwaysdeny\" is unknown"));
    assert_int_equal(make_chain("OwnerReferencesPermissionEnforcement", NULL, NULL, &c, err, sizeof(err)),
                     ADM_EINVAL);
    assert_string_equal(err,
                        "--enable-admission-plugins: plugin \"OwnerReferencesPermissionEnforcement\" is "
                        "known to kube-apiserver but not implemented by admitd yet (see --list-plugins)");
    /* Disabling a known, unimplemented plugin is fine. */
    assert_int_equal(
        make_chain(NULL, "OwnerReferencesPermissionEnforcement,PodSecurity", NULL, &c, err, sizeof(err)), 0);
    adm_chain_destroy(c);
}

static void config_error(const char *text, const char *want_suffix)
{
    adm_chain_t *c = NULL;
    char err[2048];
    const char *path = write_file("bad.yaml", text);
    char want[1024];

    snprintf(want, sizeof(want), "%s: %s", path, want_suffix);
    assert_int_equal(make_chain(NULL, NULL, path, &c, err, sizeof(err)), ADM_EINVAL);
    assert_null(c);
    if (strcmp(err, want) != 0) {
        fail_msg("got  %s\nwant %s", err, want);
    }
}

static void test_admission_config(void **state)
{
    adm_admission_config_t cfg;
    char err[1024];
    const char *path;

    write_file("erl.yaml",
               "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n"
               "- type: Server\n  qps: 5\n  burst: 10\n");
    path = write_file("admission.yaml",
                      "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                      "plugins:\n- name: EventRateLimit\n  path: erl.yaml\n"
                      "- name: PodSecurity\n  configuration:\n    defaults: {enforce: baseline}\n"
                      "  path: ignored-when-inline.yaml\n"
                      "- name: AlwaysAdmit\n");
    adm_arena_reset(arena);
    assert_int_equal(adm_admission_config_load(arena, path, &cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.nplugins, 3);
    assert_string_equal(cfg.plugins[0].name, "EventRateLimit");
    assert_int_equal(yyjson_get_int(yyjson_obj_get(
                         yyjson_arr_get(yyjson_obj_get(cfg.plugins[0].config, "limits"), 0), "burst")),
                     10);
    assert_non_null(strstr(cfg.plugins[0].source, "/erl.yaml"));
    assert_string_equal(
        yyjson_get_str(yyjson_obj_get(yyjson_obj_get(cfg.plugins[1].config, "defaults"), "enforce")),
        "baseline");
    assert_non_null(strstr(cfg.plugins[1].source, "admission.yaml: plugins[1].configuration"));
    assert_null(cfg.plugins[2].config);
    assert_ptr_equal(adm_admission_config_find(&cfg, "PodSecurity"), &cfg.plugins[1]);
    assert_null(adm_admission_config_find(&cfg, "LimitRanger"));

    /* JSON, the older apiVersions, and the legacy opaque file all load. */
    path = write_file("a.json",
                      "{\"apiVersion\":\"apiserver.k8s.io/v1alpha1\",\"kind\":\"AdmissionConfiguration\","
                      "\"plugins\":[{\"name\":\"AlwaysAdmit\",\"configuration\":{\"a\":1}}]}");
    assert_int_equal(adm_admission_config_load(arena, path, &cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.nplugins, 1);
    path = write_file("legacy.yaml", "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: a=b\n");
    assert_int_equal(adm_admission_config_load(arena, path, &cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.nplugins, 1);
    assert_string_equal(cfg.plugins[0].name, "PodNodeSelector");

    /* A valid file through the chain: the unused configuration of a disabled plugin is fine. */
    {
        adm_chain_t *c;
        char e[2048];

        path = write_file("ok.yaml",
                          "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AdmissionConfiguration\n"
                          "plugins:\n- name: AlwaysAdmit\n  configuration: {}\n");
        assert_int_equal(make_chain(NULL, NULL, path, &c, e, sizeof(e)), 0);
        adm_chain_destroy(c);
    }

    config_error("apiVersion: [\n", "line 2 column 1: did not find expected node content");
    config_error(
        "apiVersion: v1\nkind: AdmissionConfiguration\n",
        "apiVersion: want apiserver.config.k8s.io/v1 (or v1alpha1, or the legacy apiserver.k8s.io/v1alpha1)");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: Config\n",
                 "kind: want AdmissionConfiguration");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n",
                 "unknown field \"plugin\"");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: {}\n",
                 "plugins: must be a list");
    config_error(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- path: x\n",
        "plugins[0].name: required");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: "
                 "A\n  path: 5\n",
                 "plugins[0].path: must be a string");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: A\n"
                 "- name: B\n  configuration: [1]\n",
                 "plugins[1].configuration: must be an object");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: "
                 "A\n  nme: B\n",
                 "plugins[0]: unknown field \"nme\"");
    config_error("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: "
                 "A\n  name: B\n",
                 "plugins[0]: duplicate field \"name\"");
    config_error("", "want one AdmissionConfiguration object, found an empty file");
    {
        adm_chain_t *c = NULL;
        char e[2048];
        char want[1024];

        path = write_file("missing.yaml",
                          "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                          "plugins:\n- name: AlwaysAdmit\n  path: nope.yaml\n");
        assert_int_equal(make_chain(NULL, NULL, path, &c, e, sizeof(e)), ADM_EINVAL);
        snprintf(want, sizeof(want), "%s: plugins[0].path: %s/nope.yaml: No such file or directory", path,
                 dir);
        assert_string_equal(e, want);
        snprintf(want, sizeof(want), "%s/absent.yaml", dir);
        assert_int_equal(make_chain(NULL, NULL, want, &c, e, sizeof(e)), ADM_EINVAL);
        assert_non_null(strstr(e, "absent.yaml: No such file or directory"));
    }
}

/*
 * WebhookAdmissionConfiguration (INTERFACE D13): the webhook plugins' configuration names a
 * kubeconfig of per-host client credentials. Until admitd reads it, a configuration kube would
 * accept is refused with one line naming the file and field, one kube would refuse gets kube's
 * reason, and the configuration of a disabled plugin is not read at all, as in kube.
 */
static void webhook_config_error(const char *disable, const char *text, const char *want_source,
                                 const char *want_problem)
{
    adm_chain_t *c = NULL;
    char err[2048];
    char want[1024];
    const char *path = write_file("webhook-admission.yaml", text);

    assert_int_equal(make_chain(NULL, disable, path, &c, err, sizeof(err)), ADM_EINVAL);
    assert_null(c);
    snprintf(want, sizeof(want), "%s%s: %s", want_source[0] == '/' ? "" : path, want_source, want_problem);
    if (strcmp(err, want) != 0) {
        fail_msg("got  %s\nwant %s", err, want);
    }
}

static void test_webhook_admission_config(void **state)
{
    static const char head[] =
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n";
    /* the file is read (D13): a missing one stops the chain, naming it */
    static const char unsupported[] = "kubeConfigFile: /etc/kubernetes/admission-kubeconfig.yaml: No such "
                                      "file or directory";
    char text[2048];
    char kubeconfig_path[512];
    adm_chain_t *c = NULL;
    char err[2048];
    const char *path;

    /* inline, v1, for the validating plugin (entry 1: entry 0 belongs to another plugin) */
    snprintf(text, sizeof(text),
             "%s- name: AlwaysAdmit\n- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: /etc/kubernetes/admission-kubeconfig.yaml\n",
             head);
    webhook_config_error(NULL, text, ": plugins[1].configuration", unsupported);
    /* the same entry is not read when the plugin is disabled */
    path = write_file("webhook-admission.yaml", text);
    assert_int_equal(make_chain(NULL, "ValidatingAdmissionWebhook", path, &c, err, sizeof(err)), 0);
    adm_chain_destroy(c);
    /* an entry without configuration is kube's default: no kubeconfig */
    snprintf(text, sizeof(text), "%s- name: ValidatingAdmissionWebhook\n- name: MutatingAdmissionWebhook\n",
             head);
    path = write_file("webhook-admission.yaml", text);
    assert_int_equal(make_chain(NULL, NULL, path, &c, err, sizeof(err)), 0);
    adm_chain_destroy(c);

    /* a path: file, v1alpha1 with the legacy kind, for the mutating plugin */
    snprintf(kubeconfig_path, sizeof(kubeconfig_path), "%s/mutating.yaml", dir);
    write_file("mutating.yaml", "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: WebhookAdmission\n"
                                "kubeConfigFile: /etc/kubernetes/admission-kubeconfig.yaml\n");
    snprintf(text, sizeof(text), "%s- name: MutatingAdmissionWebhook\n  path: mutating.yaml\n", head);
    webhook_config_error(NULL, text, kubeconfig_path, unsupported);
    snprintf(text, sizeof(text),
             "%s- name: MutatingAdmissionWebhook\n  path: mutating.yaml\n"
             "- name: ValidatingAdmissionWebhook\n  path: mutating.yaml\n",
             head);
    path = write_file("webhook-admission.yaml", text);
    assert_int_equal(
        make_chain(NULL, "MutatingAdmissionWebhook,ValidatingAdmissionWebhook", path, &c, err, sizeof(err)),
        0);
    adm_chain_destroy(c);
    /* v1alpha1 also takes the new kind */
    snprintf(text, sizeof(text),
             "%s- name: MutatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1alpha1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: /k\n",
             head);
    webhook_config_error(NULL, text, ": plugins[0].configuration",
                         "kubeConfigFile: /k: No such file or directory");

    /* what kube refuses, with kube's reason: a relative or missing kubeConfigFile ... */
    snprintf(text, sizeof(text),
             "%s- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: conf/kubeconfig\n",
             head);
    webhook_config_error(NULL, text, ": plugins[0].configuration",
                         "kubeConfigFile: Invalid value: \"conf/kubeconfig\": must be an absolute file path");
    snprintf(text, sizeof(text),
             "%s- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n",
             head);
    webhook_config_error(NULL, text, ": plugins[0].configuration",
                         "kubeConfigFile: Invalid value: \"\": must be an absolute file path");
    snprintf(text, sizeof(text),
             "%s- name: ValidatingAdmissionWebhook\n  configuration:\n"
             "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n"
             "    kubeConfigFile: 7\n",
             head);
    webhook_config_error(NULL, text, ": plugins[0].configuration", "kubeConfigFile: must be a string");
    /* ... and a type it does not know: the legacy kind exists only in v1alpha1 */
    snprintf(
        text, sizeof(text),
        "%s- name: ValidatingAdmissionWebhook\n  configuration:\n"
        "    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmission\n    kubeConfigFile: /k\n",
        head);
    webhook_config_error(
        NULL, text, ": plugins[0].configuration",
        "kind: want WebhookAdmissionConfiguration (or, in apiserver.config.k8s.io/v1alpha1, the "
        "legacy WebhookAdmission)");
    snprintf(
        text, sizeof(text),
        "%s- name: ValidatingAdmissionWebhook\n  configuration:\n"
        "    apiVersion: apiserver.k8s.io/v1alpha1\n    kind: WebhookAdmission\n    kubeConfigFile: /k\n",
        head);
    webhook_config_error(NULL, text, ": plugins[0].configuration",
                         "apiVersion: want apiserver.config.k8s.io/v1 or apiserver.config.k8s.io/v1alpha1 "
                         "(WebhookAdmissionConfiguration)");
}

/* Runs body through a chain; returns the response. */
static adm_review_response_t run(adm_chain_t *c, unsigned phases, const char *body)
{
    adm_review_request_t *req = adm_arena_calloc(arena, 1, sizeof(*req));
    adm_review_response_t resp;
    const char *problem;

    assert_int_equal(adm_review_decode(arena, body, strlen(body), req, &problem), 0);
    assert_int_equal(adm_chain_run(c, phases, req, arena, &resp), 0);
    return resp;
}

static const char *apply_patch(const char *object, const adm_review_response_t *resp)
{
    yyjson_alc alc;
    yyjson_doc *patch;
    yyjson_mut_doc *doc;
    const char *error = NULL;

    adm_json_alc_init(&alc, arena);
    patch = yyjson_read_opts((char *)resp->patch, resp->patch_len, 0, &alc, NULL);
    assert_non_null(patch);
    doc = yyjson_mut_doc_new(&alc);
    yyjson_mut_doc_set_root(
        doc, yyjson_val_mut_copy(
                 doc, yyjson_doc_get_root(yyjson_read_opts((char *)object, strlen(object), 0, &alc, NULL))));
    assert_int_equal(
        adm_jsonpatch_apply(doc, yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, arena, &error), 0);
    return yyjson_mut_write_opts(doc, 0, &alc, NULL, NULL);
}

static void test_phases(void **state)
{
    static const char pod[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"image\":\"a\","
                              "\"imagePullPolicy\":\"Never\"}],\"tolerations\":[{\"operator\":\"Exists\"}]}}";
    /* in a namespace that exists: PodSecurity (on by default) refuses others, as kube's does */
    pt_request_t r = {.operation = "CREATE",
                      .resource = "pods",
                      .kind = "Pod",
                      .namespace_ = "default",
                      .name = "p",
                      .object = pod};
    adm_chain_t *c;
    char err[2048];
    adm_review_response_t resp;
    const char *body;

    /* the pod's own changes only: no service account to find, no priority to set */
    assert_int_equal(make_chain("AlwaysPullImages", "ServiceAccount,Priority", NULL, &c, err, sizeof(err)),
                     0);
    adm_arena_reset(arena);
    body = pt_review_json(arena, &r);

    /* /admit: mutated, then validated on the mutated object; the patch reaches the final object. */
    resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, body);
    assert_true(resp.allowed);
    assert_true(resp.patch_len > 0);
    assert_json_equal(apply_patch(pod, &resp),
                      "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"image\":"
                      "\"a\",\"imagePullPolicy\":\"Always\"}],\"tolerations\":[{\"operator\":"
                      "\"Exists\"}]}}");
    /* /validate alone sees the policy as received and rejects. */
    resp = run(c, ADM_PHASE_VALIDATING, body);
    assert_false(resp.allowed);
    assert_int_equal(resp.code, 500);
    assert_null(resp.patch);
    /* /mutate alone: the patch, no validation. */
    resp = run(c, ADM_PHASE_MUTATING, body);
    assert_true(resp.allowed);
    assert_true(resp.patch_len > 0);
    /* A plugin sees only the operations it handles: AlwaysPullImages would answer 400 to a DELETE. */
    {
        pt_request_t del = {
            .operation = "DELETE", .resource = "pods", .kind = "Pod", .name = "p", .old_object = pod};

        resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, pt_review_json(arena, &del));
        assert_true(resp.allowed);
        assert_null(resp.patch);
    }
    adm_chain_destroy(c);

    /* Nothing to change: allowed and no patch at all. */
    assert_int_equal(make_chain(NULL, "ServiceAccount,Priority", NULL, &c, err, sizeof(err)), 0);
    resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, body);
    assert_true(resp.allowed);
    assert_null(resp.patch);
    assert_int_equal(resp.patch_len, 0);
    adm_chain_destroy(c);

    /* The first rejection ends the request: AlwaysDeny's admit rejects before any validation runs. */
    assert_int_equal(
        make_chain("AlwaysDeny,AlwaysPullImages", "ServiceAccount,Priority", NULL, &c, err, sizeof(err)), 0);
    resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, body);
    assert_false(resp.allowed);
    assert_int_equal(resp.code, 403);
    assert_string_equal(resp.message,
                        "pods \"p\" is forbidden: admission control is denying all modifications");
    assert_null(resp.patch);
    adm_chain_destroy(c);
}

static uint64_t hand_time_ns; /* the time a clock set by hand reads */

static uint64_t hand_ns(void *arg)
{
    return *(const uint64_t *)arg;
}

static uint64_t hand_ms(void *arg)
{
    return *(const uint64_t *)arg / 1000000;
}

/*
 * The chain's clock is the time its plugins read: EventRateLimit's bucket (one event a second,
 * burst 1) refills on the monotonic clock by default, and only as a clock set by hand moves.
 */
static void test_clock(void **state)
{
    static const char event[] = "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"}}";
    static const adm_clock_t hand = {hand_ms, hand_ns, &hand_time_ns};
    pt_request_t r = {
        .operation = "CREATE", .resource = "events", .kind = "Event", .name = "e", .object = event};
    adm_review_response_t resp;
    adm_chain_t *c;
    char err[2048];
    const char *path, *body;

    write_file("erl-1.yaml",
               "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n"
               "- type: Server\n  qps: 1\n  burst: 1\n");
    path = write_file("admission-erl.yaml",
                      "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                      "plugins:\n- name: EventRateLimit\n  path: erl-1.yaml\n");
    adm_arena_reset(arena);
    body = pt_review_json(arena, &r);

    /* The default clock: two events in a row, the second finds no token. */
    assert_int_equal(make_chain("EventRateLimit", NULL, path, &c, err, sizeof(err)), 0);
    resp = run(c, ADM_PHASE_VALIDATING, body);
    assert_true(resp.allowed);
    resp = run(c, ADM_PHASE_VALIDATING, body);
    assert_false(resp.allowed);
    assert_int_equal(resp.code, 429);
    adm_chain_destroy(c);

    /* A clock set by hand: the token comes back after one second of it, however long the test takes. */
    assert_int_equal(make_chain("EventRateLimit", NULL, path, &c, err, sizeof(err)), 0);
    hand_time_ns = 0;
    adm_chain_set_clock(c, &hand);
    assert_true(run(c, ADM_PHASE_VALIDATING, body).allowed);
    assert_false(run(c, ADM_PHASE_VALIDATING, body).allowed);
    hand_time_ns = 500000000;
    assert_false(run(c, ADM_PHASE_VALIDATING, body).allowed);
    hand_time_ns = 1000000000;
    assert_true(run(c, ADM_PHASE_VALIDATING, body).allowed);
    adm_chain_destroy(c);
}

/* ---- what every hook is handed: chains of test plugins ---- */

/* One hook call as a test plugin saw it. */
typedef struct seen_s {
    const char *who; /* the stage's state: its name in the test */
    int count;       /* how many calls its slot has counted in this request */
    uint64_t ms, ns; /* the clock's readings */
} seen_t;

static seen_t seen[32];
static size_t nseen;
static adm_async_t *pending; /* the deferring plugin's phase, to end by hand */

static void record(void *state, adm_attrs_t *attrs)
{
    void **slot = adm_plugin_slot(attrs);
    int *count = *slot;

    if (count == NULL) {
        count = adm_arena_calloc(attrs->arena, 1, sizeof(*count));
        assert_non_null(count);
        *slot = count;
    }
    (*count)++;
    assert_true(nseen < sizeof(seen) / sizeof(seen[0]));
    seen[nseen].who = state;
    seen[nseen].count = *count;
    seen[nseen].ms = adm_plugin_now_ms(attrs);
    seen[nseen].ns = adm_plugin_now_ns(attrs);
    nseen++;
}

static int counting_hook(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    (void)st;
    record(state, attrs);
    return ADM_OK;
}

/* Mutating, finishing later in round 0 after asking for a second round; at once in round 1. */
static int deferring_hook(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    (void)st;
    record(state, attrs);
    if (async->round == 1) {
        return ADM_OK;
    }
    async->reinvoke = true;
    pending = async;
    return ADM_AGAIN;
}

static const adm_plugin_t counting = {
    .name = "Counting", .operations = ADM_OPS_ALL, .admit = counting_hook, .validate = counting_hook};
static const adm_plugin_t deferring = {
    .name = "Deferring", .operations = ADM_OPS_ALL, .admit_async = deferring_hook};

/* A chain of plugins[i] with state states[i], as adm_chain_create builds one from the registry. */
static adm_chain_t *chain_of(const adm_plugin_t *const *plugins, char *const *states, size_t n)
{
    adm_chain_t *c = chain_new(n);

    assert_non_null(c);
    for (size_t i = 0; i < n; i++) {
        c->stages[i].plugin = plugins[i];
        c->stages[i].state = states[i];
        c->names[i] = plugins[i]->name;
        c->runs_on[i] = phase_ops(plugins[i]);
    }
    c->nstages = n;
    return c;
}

static void on_done(void *arg, adm_review_response_t *resp)
{
    *(adm_review_response_t *)arg = *resp;
}

/* Starts /admit on a pod; the answer lands in *resp (allowed stays false until it does). */
static void start_admit(adm_chain_t *c, adm_review_response_t *resp)
{
    pt_request_t r = {.operation = "CREATE", .resource = "pods", .kind = "Pod", .name = "p", .object = "{}"};
    adm_review_request_t *req = adm_arena_calloc(arena, 1, sizeof(*req));
    const char *body = pt_review_json(arena, &r);
    const char *problem;

    assert_int_equal(adm_review_decode(arena, body, strlen(body), req, &problem), 0);
    memset(resp, 0, sizeof(*resp));
    nseen = 0;
    pending = NULL;
    assert_non_null(
        adm_chain_start(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, req, arena, UINT64_MAX, on_done, resp));
}

static void expect_seen(size_t i, const char *who, int count)
{
    assert_true(i < nseen);
    assert_string_equal(seen[i].who, who);
    assert_int_equal(seen[i].count, count);
}

/*
 * Each plugin has one slot per request, its own, NULL at first and kept through round 0, the
 * reinvocation round and the validating phase, also while a plugin before it waits; the next
 * request starts afresh. Two stages of one plugin have a slot each.
 */
static void test_slots(void **state)
{
    static const adm_plugin_t *const plugins[] = {&counting, &deferring, &counting};
    static char *const names[] = {"a", "d", "b"};
    adm_chain_t *c = chain_of(plugins, names, 3);
    adm_review_response_t resp;

    adm_arena_reset(arena);
    for (int request = 0; request < 2; request++) {
        start_admit(c, &resp);
        /* round 0 waits on the deferring plugin */
        assert_int_equal(nseen, 2);
        expect_seen(0, "a", 1);
        expect_seen(1, "d", 1);
        assert_non_null(pending);
        assert_false(resp.allowed);
        adm_async_done(pending, ADM_OK, NULL);
        assert_true(resp.allowed);
        assert_int_equal(nseen, 8);
        expect_seen(2, "b", 1);
        /* round 1: every plugin again, each on its own slot */
        expect_seen(3, "a", 2);
        expect_seen(4, "d", 2);
        expect_seen(5, "b", 2);
        /* the validating phase (the deferring plugin has none) */
        expect_seen(6, "a", 3);
        expect_seen(7, "b", 3);
    }
    adm_chain_destroy(c);
}

static int releases;

static void count_release(void *arg)
{
    (void)arg;
    releases++;
}

/*
 * A run holds a reference: a chain its creator dropped (a reload replaced it) lives until the
 * requests that started on it finish or are cancelled, and then tells its owner once.
 */
static void test_runs_keep_their_chain(void **state)
{
    static const adm_plugin_t *const plugins[] = {&counting, &deferring};
    static char *const names[] = {"a", "d"};
    adm_review_response_t resp;

    for (int cancel = 0; cancel < 2; cancel++) {
        adm_chain_t *c = chain_of(plugins, names, 2);
        adm_chain_run_t *run;
        pt_request_t r = {
            .operation = "CREATE", .resource = "pods", .kind = "Pod", .name = "p", .object = "{}"};
        adm_review_request_t *req;
        const char *body, *problem;

        adm_arena_reset(arena);
        req = adm_arena_calloc(arena, 1, sizeof(*req));
        body = pt_review_json(arena, &r);
        assert_int_equal(adm_review_decode(arena, body, strlen(body), req, &problem), 0);
        c->source.release = count_release;
        releases = 0;
        memset(&resp, 0, sizeof(resp));
        pending = NULL;
        nseen = 0;
        run = adm_chain_start(c, ADM_PHASE_MUTATING, req, arena, UINT64_MAX, on_done, &resp);
        assert_non_null(run);
        assert_non_null(pending);
        adm_chain_destroy(c); /* the creator's reference */
        assert_int_equal(releases, 0);
        if (cancel) {
            adm_chain_cancel(run);
            adm_chain_cancel(run); /* twice is harmless */
        } else {
            adm_async_done(pending, ADM_OK, NULL);
            assert_true(resp.allowed);
        }
        assert_int_equal(releases, 1);
    }
}

static void collect_file(void *arg, const char *path)
{
    int *n = arg;

    assert_true(strstr(path, "admission.yaml") != NULL || strstr(path, "erl.yaml") != NULL);
    (*n)++;
}

/* A borrowed cluster state is read, not freed; the configuration's files are listed. */
static void test_sources(void **state)
{
    adm_cluster_state_t *cs = pt_load_cluster("apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n");
    adm_chain_sources_t src = {.cluster = cs, .release = count_release};
    adm_options_t o;
    adm_chain_t *c;
    char err[512];
    int nfiles = 0;

    write_file("erl.yaml", "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n"
                           "limits:\n- type: Server\n  qps: 5\n  burst: 10\n");
    adm_options_defaults(&o);
    o.admission_config_file =
        write_file("admission.yaml", "apiVersion: apiserver.config.k8s.io/v1\n"
                                     "kind: AdmissionConfiguration\n"
                                     "plugins:\n- name: EventRateLimit\n  path: erl.yaml\n");
    releases = 0;
    assert_int_equal(adm_chain_create_from(&o, &src, &c, err, sizeof(err)), 0);
    assert_ptr_equal(adm_chain_cluster(c), cs);
    adm_chain_files(c, collect_file, &nfiles);
    assert_int_equal(nfiles, 2);
    adm_chain_ref(c);
    adm_chain_destroy(c);
    assert_int_equal(releases, 0);
    adm_chain_destroy(c);
    assert_int_equal(releases, 1);
    assert_int_equal(adm_cluster_state_count(cs), 1); /* still ours */
    adm_cluster_state_free(cs);
}

/* Every hook reads the chain's clock: the default, a loop's, and one set by hand. */
static void test_hook_clock(void **state)
{
    static const adm_plugin_t *const plugins[] = {&counting};
    static char *const names[] = {"a"};
    static const adm_clock_t hand = {hand_ms, hand_ns, &hand_time_ns};
    adm_chain_t *c = chain_of(plugins, names, 1);
    adm_review_response_t resp;
    uv_loop_t loop;
    uint64_t before;

    /* The default: uv_hrtime for both readings. */
    adm_arena_reset(arena);
    before = uv_hrtime();
    start_admit(c, &resp);
    assert_true(resp.allowed);
    assert_int_equal(nseen, 2);
    assert_true(seen[0].ns >= before && seen[1].ns >= seen[0].ns && seen[1].ns <= uv_hrtime());
    assert_true(seen[0].ms >= before / 1000000 && seen[0].ms <= seen[1].ns / 1000000);

    /* A loop's: its cached time in ms, the scale of the deadlines; the ns reading stays uv_hrtime. */
    assert_int_equal(uv_loop_init(&loop), 0);
    adm_chain_use_loop(c, &loop);
    before = uv_hrtime();
    start_admit(c, &resp);
    assert_int_equal(seen[0].ms, uv_now(&loop));
    assert_int_equal(seen[1].ms, uv_now(&loop));
    assert_true(seen[0].ns >= before);
    assert_int_equal(uv_loop_close(&loop), 0);

    /* One set by hand. */
    adm_chain_set_clock(c, &hand);
    hand_time_ns = 5123456789;
    start_admit(c, &resp);
    assert_int_equal(seen[0].ns, 5123456789);
    assert_int_equal(seen[0].ms, 5123);
    adm_chain_destroy(c);
}

/*
 * Two LimitRanges through both phases of one request: LimitRanger reads each once (admit keeps
 * them in its request slot for validate), and validate must still check each against its own
 * constraints: the first one's defaults are set, the second one's maximum rejects.
 */
static void test_limit_ranges_both_phases(void **state)
{
    static const char ranges[] =
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n"
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: a, namespace: ns}\n"
        "spec: {limits: [{type: Container, default: {cpu: 200m}, defaultRequest: {cpu: 100m}}]}\n---\n"
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: b, namespace: ns}\n"
        "spec: {limits: [{type: Container, max: {memory: 1Gi}}]}\n";
    pt_request_t r = {
        .operation = "CREATE", .resource = "pods", .kind = "Pod", .namespace_ = "ns", .name = "p"};
    adm_options_t o;
    adm_chain_t *c;
    adm_review_response_t resp;
    char err[2048];

    adm_options_defaults(&o);
    snprintf(o.enable_plugins, sizeof(o.enable_plugins), "LimitRanger");
    snprintf(o.disable_plugins, sizeof(o.disable_plugins),
             "NamespaceLifecycle,ServiceAccount,TaintNodesByCondition,PodSecurity,Priority,"
             "DefaultTolerationSeconds,DefaultStorageClass,StorageObjectInUseProtection,"
             "PersistentVolumeClaimResize,RuntimeClass,CertificateSubjectRestriction,DefaultIngressClass,"
             "MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota");
    o.cluster_states[0] = write_file("ranges.yaml", ranges);
    o.ncluster_states = 1;
    assert_int_equal(adm_chain_create(&o, &c, err, sizeof(err)), 0);

    adm_arena_reset(arena);
    r.object =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}]}}";
    resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, pt_review_json(arena, &r));
    assert_false(resp.allowed);
    assert_int_equal(resp.code, 403);
    assert_string_equal(
        resp.message, "pods \"p\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi");

    adm_arena_reset(arena);
    r.object =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"512Mi\"}}}]}}";
    resp = run(c, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, pt_review_json(arena, &r));
    assert_true(resp.allowed);
    assert_non_null(resp.patch);
    {
        static const char want[] =
            "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"kubernetes.io/limit-ranger\":"
            "\"LimitRanger plugin set: cpu request for container c; cpu limit for container c\"}},"
            "{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/cpu\",\"value\":\"200m\"},"
            "{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/"
            "requests\",\"value\":{\"cpu\":\"100m\"}}]";

        if (resp.patch_len != sizeof(want) - 1 || memcmp(resp.patch, want, resp.patch_len) != 0) {
            fail_msg("patch %.*s", (int)resp.patch_len, (const char *)resp.patch);
        }
    }
    adm_chain_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enabled_set),
        cmocka_unit_test(test_flag_errors),
        cmocka_unit_test(test_admission_config),
        cmocka_unit_test(test_webhook_admission_config),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_hook_clock),
        cmocka_unit_test(test_runs_keep_their_chain),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_limit_ranges_both_phases),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

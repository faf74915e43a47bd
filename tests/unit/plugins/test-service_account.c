/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ServiceAccount: the cases of kube's serviceaccount/admission_test.go replayed with the service
 * accounts in cluster-state files: defaulting, the projected token volume and its mounts,
 * automount choices, image pull secrets, mountable-secret enforcement (volumes, env, envFrom,
 * init and ephemeral containers, imagePullSecrets) and the mirror-pod rules, with exact messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/plugins/service_account.h"
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_service_account;

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;
static void *plugin;

static void fixed_suffix(char out[6])
{
    memcpy(out, "xxxxx", 6);
}

/* Service accounts of namespace "myns". */
static const char accounts[] =
    "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: myns}\n"
    "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: noauto, namespace: myns}\n"
    "automountServiceAccountToken: false\n"
    "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: pulls, namespace: myns}\n"
    "imagePullSecrets: [{name: foo}, {name: bar}]\n"
    "---\napiVersion: v1\nkind: ServiceAccount\n"
    "metadata: {name: strict, namespace: myns, annotations: {kubernetes.io/enforce-mountable-secrets: "
    "'true'}}\n"
    "secrets: [{name: foo}]\nimagePullSecrets: [{name: foo}]\n"
    "---\napiVersion: v1\nkind: ServiceAccount\n"
    "metadata: {name: lax, namespace: myns, annotations: {kubernetes.io/enforce-mountable-secrets: "
    "'false'}}\n"
    "secrets: [{name: foo}]\n";

static int setup(void **state)
{
    char err[256];

    (void)state;
    arena = adm_arena_create(65536);
    cluster = pt_load_cluster(accounts);
    pt_set_cluster(cluster);
    if (pt_configure(&adm_plugin_service_account, NULL, NULL, &plugin, err, sizeof(err)) != 0) {
        return 1;
    }
    adm_service_account_set_suffix(plugin, fixed_suffix);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    adm_plugin_service_account.free_state(plugin);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

static pt_result_t run(char phase, const char *op, const char *sub, const char *pod)
{
    pt_request_t r = {.operation = op,
                      .group = "",
                      .resource = "pods",
                      .sub_resource = sub,
                      .kind = "Pod",
                      .namespace_ = "myns",
                      .name = "p",
                      .object = pod,
                      .old_object = NULL};

    return pt_run(arena, &adm_plugin_service_account, plugin, phase, &r);
}

static void expect_forbidden(pt_result_t r, const char *msg)
{
    char want[1024];

    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    snprintf(want, sizeof(want), "pods \"p\" is forbidden: %s", msg);
    assert_string_equal(r.status.message, want);
}

#define VOLUME                                                                                               \
    "{\"name\":\"kube-api-access-xxxxx\",\"projected\":{\"sources\":[{\"serviceAccountToken\":"              \
    "{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\","        \
    "\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":"         \
    "\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.namespace\"}}]}}],"          \
    "\"defaultMode\":420}}"
#define MOUNT                                                                                                \
    "{\"name\":\"kube-api-access-xxxxx\",\"readOnly\":true,"                                                 \
    "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}"

/* TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens */
static void test_default_and_bound_token(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL,
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"name\":\"i\"}],"
            "\"containers\":[{\"name\":\"c\",\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":\"/x\"}]}]}}");
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object,
                      "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"name\":\"i\","
                      "\"volumeMounts\":[" MOUNT "]}],\"containers\":[{\"name\":\"c\",\"volumeMounts\":"
                      "[{\"name\":\"x\",\"mountPath\":\"/x\"}," MOUNT "]}],"
                      "\"serviceAccountName\":\"default\",\"volumes\":[" VOLUME "]}}");
}

/* TestRespectsExistingMount, and an existing kube-api-access- volume is reused by name. */
static void test_existing_mount_and_volume(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"default\",\"containers\":[{\"name\":\"c\",\"volumeMounts\":"
            "[{\"name\":\"mine\",\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}]}]}}");
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"default\",\"containers\":[{\"name\":\"c\","
                      "\"volumeMounts\":[{\"name\":\"mine\",\"mountPath\":"
                      "\"/var/run/secrets/kubernetes.io/serviceaccount\"}]}]}}");
    r = run(
        'm', "CREATE", NULL,
        "{\"spec\":{\"serviceAccountName\":\"default\",\"volumes\":[{\"name\":\"kube-api-access-abcde\"}],"
        "\"containers\":[{\"name\":\"c\"}]}}");
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"default\",\"volumes\":[{\"name\":"
                      "\"kube-api-access-abcde\"}],\"containers\":[{\"name\":\"c\",\"volumeMounts\":"
                      "[{\"name\":\"kube-api-access-abcde\",\"readOnly\":true,\"mountPath\":"
                      "\"/var/run/secrets/kubernetes.io/serviceaccount\"}]}]}}");
}

/* TestRespectsAutomountToken: the pod's choice wins over the account's. */
static void test_automount_choices(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"noauto\",\"containers\":[{\"name\":\"c\"}]}}");
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"noauto\",\"containers\":[{\"name\":\"c\"}]}}");
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"noauto\",\"automountServiceAccountToken\":true,"
            "\"containers\":[{\"name\":\"c\"}]}}");
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"noauto\",\"automountServiceAccountToken\":"
                      "true,\"containers\":[{\"name\":\"c\",\"volumeMounts\":[" MOUNT "]}],"
                      "\"volumes\":[" VOLUME "]}}");
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"automountServiceAccountToken\":false,\"containers\":[{\"name\":\"c\"}]}}");
    assert_json_equal(r.object, "{\"spec\":{\"automountServiceAccountToken\":false,\"containers\":"
                                "[{\"name\":\"c\"}],\"serviceAccountName\":\"default\"}}");
}

/* TestAddImagePullSecrets / TestDoNotAddImagePullSecrets */
static void test_image_pull_secrets(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"pulls\",\"automountServiceAccountToken\":false}}");
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"pulls\",\"automountServiceAccountToken\":"
                      "false,\"imagePullSecrets\":[{\"name\":\"foo\"},{\"name\":\"bar\"}]}}");
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"pulls\",\"automountServiceAccountToken\":false,"
            "\"imagePullSecrets\":[{\"name\":\"new\"}]}}");
    assert_json_equal(r.object,
                      "{\"spec\":{\"serviceAccountName\":\"pulls\",\"automountServiceAccountToken\":"
                      "false,\"imagePullSecrets\":[{\"name\":\"new\"}]}}");
}

/*
 * The changes land where the mutable form put them: a null member filled in place, an empty pull
 * secret list filled in place, a missing one appended, a non-string account name replaced at the
 * end, a spec made for a pod without one; a list that cannot take a mount fails the request.
 */
static void test_changes_in_place(void **state)
{
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":7,\"volumes\":null,\"initContainers\":[{\"name\":\"i\","
            "\"volumeMounts\":null,\"image\":\"x\"}],\"containers\":[{\"name\":\"c\"}]},\"kind\":\"Pod\"}");
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object,
                      "{\"spec\":{\"volumes\":[" VOLUME "],\"initContainers\":[{\"name\":\"i\","
                      "\"volumeMounts\":[" MOUNT "],\"image\":\"x\"}],\"containers\":[{\"name\":\"c\","
                      "\"volumeMounts\":[" MOUNT "]}],\"serviceAccountName\":\"default\"},\"kind\":\"Pod\"}");
    r = run('m', "CREATE", NULL, "{\"spec\":null,\"kind\":\"Pod\"}");
    assert_int_equal(r.rc, ADM_OK);
    assert_json_equal(r.object, "{\"spec\":{\"serviceAccountName\":\"default\"},\"kind\":\"Pod\"}");
    r = run('m', "CREATE", NULL, "{\"kind\":\"Pod\"}");
    assert_json_equal(r.object, "{\"kind\":\"Pod\",\"spec\":{\"serviceAccountName\":\"default\"}}");
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"pulls\",\"imagePullSecrets\":[],"
            "\"automountServiceAccountToken\":false}}");
    assert_json_equal(r.object, "{\"spec\":{\"serviceAccountName\":\"pulls\",\"imagePullSecrets\":[{\"name\":"
                                "\"foo\"},{\"name\":\"bar\"}],\"automountServiceAccountToken\":false}}");
    r = run('m', "CREATE", NULL,
            "{\"spec\":{\"serviceAccountName\":\"pulls\",\"imagePullSecrets\":null,"
            "\"automountServiceAccountToken\":false}}");
    assert_json_equal(r.object, "{\"spec\":{\"serviceAccountName\":\"pulls\",\"imagePullSecrets\":[{\"name\":"
                                "\"foo\"},{\"name\":\"bar\"}],\"automountServiceAccountToken\":false}}");
    r = run('m', "CREATE", NULL, "{\"spec\":{\"containers\":[{\"name\":\"c\",\"volumeMounts\":\"x\"}]}}");
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 500);
}

/* TestDeniesInvalidServiceAccount and a pod that names no account in the validating phase. */
static void test_missing_account(void **state)
{
    (void)state;
    expect_forbidden(run('m', "CREATE", NULL, "{\"spec\":{\"serviceAccountName\":\"nope\"}}"),
                     "error looking up service account myns/nope: serviceaccount \"nope\" not found");
    expect_forbidden(run('v', "CREATE", NULL, "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}"),
                     "no service account specified for pod myns/p");
}

/* TestIgnoresNonCreate, TestIgnoresNonPodResource, TestIgnoresNonPodObject */
static void test_ignored(void **state)
{
    pt_request_t r = {.operation = "CREATE",
                      .group = "",
                      .resource = "services",
                      .kind = "Service",
                      .namespace_ = "myns",
                      .name = "s",
                      .object = "{\"spec\":{}}"};
    pt_result_t res;

    (void)state;
    assert_false(pt_run(arena, &adm_plugin_service_account, plugin, 'm', &r).changed);
    r.resource = "pods";
    r.kind = "Service";
    assert_false(pt_run(arena, &adm_plugin_service_account, plugin, 'm', &r).changed);
    res = run('m', "UPDATE", NULL, "{\"spec\":{}}");
    assert_int_equal(res.rc, ADM_OK);
    assert_false(res.changed);
    assert_int_equal(run('v', "UPDATE", NULL, "{\"spec\":{}}").rc, ADM_OK);
    assert_int_equal(run('m', "CREATE", "status", "{\"spec\":{}}").rc, ADM_OK);
}

/* TestIgnoresMirrorPod and the TestRejectsMirrorPodWith* cases */
static void test_mirror_pods(void **state)
{
#define MIRROR "\"metadata\":{\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}}"
    pt_result_t r;

    (void)state;
    r = run('m', "CREATE", NULL, "{" MIRROR ",\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    assert_int_equal(r.rc, ADM_OK);
    assert_false(r.changed);
    expect_forbidden(run('m', "CREATE", NULL, "{" MIRROR ",\"spec\":{\"serviceAccountName\":\"default\"}}"),
                     "a mirror pod may not reference service accounts");
    expect_forbidden(run('m', "CREATE", NULL,
                         "{" MIRROR
                         ",\"spec\":{\"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"s\"}}]}}"),
                     "a mirror pod may not reference secrets");
    expect_forbidden(run('v', "CREATE", NULL,
                         "{" MIRROR ",\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"e\","
                         "\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}}]}]}}"),
                     "a mirror pod may not reference secrets");
    expect_forbidden(run('v', "CREATE", NULL,
                         "{" MIRROR ",\"spec\":{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":"
                         "[{\"serviceAccountToken\":{\"path\":\"t\"}}]}}]}}"),
                     "a mirror pod may not use ServiceAccountToken volume projections");
#undef MIRROR
}

/* Pod i of the mountable-secret cases, run as account sa and referencing secret. */
static const char *secret_pod(size_t i, const char *sa, const char *secret)
{
#define HEAD "{\"spec\":{\"serviceAccountName\":\"%s\",\"automountServiceAccountToken\":false,"
    switch (i) {
    case 0:
        return adm_arena_printf(
            arena, HEAD "\"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"%s\"}}]}}", sa, secret);
    case 1:
        return adm_arena_printf(arena,
                                HEAD "\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"e\",\"valueFrom\":"
                                     "{\"secretKeyRef\":{\"name\":\"%s\",\"key\":\"k\"}}}]}]}}",
                                sa, secret);
    case 2:
        return adm_arena_printf(
            arena,
            HEAD "\"initContainers\":[{\"name\":\"i\",\"envFrom\":[{\"secretRef\":{\"name\":\"%s\"}}]}]}}",
            sa, secret);
    default:
        return adm_arena_printf(arena, HEAD "\"imagePullSecrets\":[{\"name\":\"foo\"},{\"name\":\"%s\"}]}}",
                                sa, secret);
    }
#undef HEAD
}

/* TestAllowsReferencedSecret / TestRejectsUnreferencedSecret* /
 * TestAllowUnreferencedSecretVolumesForPermissiveSAs */
static void test_mountable_secrets(void **state)
{
    static const char *const msg[] = {
        "volume with secret.secretName=\"bar\" is not allowed because service account strict does not "
        "reference that secret",
        "container c with envVar e referencing secret.secretName=\"bar\" is not allowed because service "
        "account strict does not reference that secret",
        "init container i with envFrom referencing secret.secretName=\"bar\" is not allowed because service "
        "account strict does not reference that secret",
        "imagePullSecrets[1].name=\"bar\" is not allowed because service account strict does not reference "
        "that imagePullSecret",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(msg) / sizeof(msg[0]); i++) {
        assert_int_equal(run('m', "CREATE", NULL, secret_pod(i, "strict", "foo")).rc, ADM_OK);
        expect_forbidden(run('m', "CREATE", NULL, secret_pod(i, "strict", "bar")), msg[i]);
        expect_forbidden(run('v', "CREATE", NULL, secret_pod(i, "strict", "bar")), msg[i]);
        assert_int_equal(run('v', "CREATE", NULL, secret_pod(i, "lax", "bar")).rc, ADM_OK);
        /* admit validates what it made: an account that enforces nothing lets any reference by */
        assert_int_equal(run('m', "CREATE", NULL, secret_pod(i, "lax", "bar")).rc, ADM_OK);
        assert_int_equal(run('m', "CREATE", NULL, secret_pod(i, "default", "bar")).rc, ADM_OK);
    }
}

/* TestRejectsUnreferencedSecretsThroughEphemeralContainers (pods/ephemeralcontainers UPDATE) */
static void test_ephemeral_containers(void **state)
{
    (void)state;
    expect_forbidden(
        run('v', "UPDATE", "ephemeralcontainers",
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"serviceAccountName\":\"strict\","
            "\"ephemeralContainers\":[{\"name\":\"d\",\"env\":[{\"name\":\"e\",\"valueFrom\":"
            "{\"secretKeyRef\":{\"name\":\"bar\",\"key\":\"k\"}}}]}]}}"),
        "ephemeral container d with envVar e referencing secret.secretName=\"bar\" is not allowed "
        "because service account strict does not reference that secret");
    expect_forbidden(
        run('v', "UPDATE", "ephemeralcontainers",
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"serviceAccountName\":\"strict\","
            "\"ephemeralContainers\":[{\"name\":\"d\",\"envFrom\":[{\"secretRef\":{\"name\":\"bar\"}}]}]}}"),
        "ephemeral container d with envFrom referencing secret.secretName=\"bar\" is not allowed "
        "because service account strict does not reference that secret");
    assert_int_equal(
        run('v', "UPDATE", "ephemeralcontainers",
            "{\"spec\":{\"serviceAccountName\":\"strict\",\"ephemeralContainers\":[{\"name\":\"d\","
            "\"envFrom\":[{\"secretRef\":{\"name\":\"foo\"}}]}]}}")
            .rc,
        ADM_OK);
    expect_forbidden(run('v', "UPDATE", "ephemeralcontainers", "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}"),
                     "no service account specified for pod myns/p");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_and_bound_token),
        cmocka_unit_test(test_existing_mount_and_volume),
        cmocka_unit_test(test_automount_choices),
        cmocka_unit_test(test_changes_in_place),
        cmocka_unit_test(test_image_pull_secrets),
        cmocka_unit_test(test_missing_account),
        cmocka_unit_test(test_ignored),
        cmocka_unit_test(test_mirror_pods),
        cmocka_unit_test(test_mountable_secrets),
        cmocka_unit_test(test_ephemeral_containers),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod helpers: HasAPIObjectReference over a table of PodSpecs (each kind of reference, kube's
 * order when there are several, names that do not count, local volume sources, a volume that
 * defaulting makes an emptyDir, unknown volume and projected sources with kube's errors), the
 * secret and configmap visitors on their own, and AddOrUpdateTolerationInPod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/podutil.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"

static yyjson_val *spec_of(yyjson_doc **doc, const char *json)
{
    *doc = yyjson_read(json, strlen(json), 0);
    assert_non_null(*doc);
    return yyjson_doc_get_root(*doc);
}

static void test_api_object_reference(void **state)
{
    static const struct {
        const char *spec;
        const char *what; /* NULL: none; "": an error */
        const char *err;
    } cases[] = {
        {"{}", NULL, NULL},
        {"{\"serviceAccountName\":\"sa\",\"imagePullSecrets\":[{\"name\":\"s\"}]}", "serviceaccounts", NULL},
        {"{\"imagePullSecrets\":[{\"name\":\"\"}]}", NULL, NULL},
        {"{\"imagePullSecrets\":[{\"name\":\"s\"}]}", "secrets", NULL},
        {"{\"initContainers\":[{\"env\":[{\"name\":\"E\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\"}}}]}"
         "]}",
         "secrets", NULL},
        {"{\"ephemeralContainers\":[{\"envFrom\":[{\"configMapRef\":{\"name\":\"c\"}}]}]}", "configmaps",
         NULL},
        {"{\"containers\":[{\"envFrom\":[{\"configMapRef\":{\"name\":\"\"}}]}]}", NULL, NULL},
        {"{\"containers\":[{\"envFrom\":[{\"configMapRef\":{\"name\":\"c\"}},{\"secretRef\":{\"name\":\"s\"}}"
         "]}]}",
         "secrets", NULL},
        {"{\"resourceClaims\":[{\"name\":\"r\"}]}", "resourceclaims", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}},{\"name\":\"w\",\"hostPath\":{\"path\":\"/\"}}]}",
         NULL, NULL},
        {"{\"volumes\":[{\"name\":\"v\"}]}", NULL, NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"c\"}}]}",
         "persistentvolumeclaims", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"ephemeral\":{}}]}",
         "persistentvolumeclaims (via ephemeral volumes)", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"csi\":{\"driver\":\"d\"}}]}", "csidrivers (via CSI volumes)", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"\"}}]}", "secrets (via secret volumes)",
         NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"s\"}}]}", "secrets", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"c\"}}]}", "configmaps", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"cephfs\":{\"monitors\":[\"m\"]}}]}", NULL, NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"cephfs\":{\"secretRef\":{\"name\":\"s\"}}}]}", "secrets", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"downwardAPI\":{}}]}}]}", NULL, NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"downwardAPI\":{}},"
         "{\"serviceAccountToken\":{\"path\":\"t\"}}]}}]}",
         "serviceaccounts (via projected volumes)", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"configMap\":{\"name\":\"c\"}}]}}]}",
         "configmaps", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"clusterTrustBundle\":{}}]}}]}",
         "clustertrustbundles", NULL},
        {"{\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"future\":{}}]}}]}", "",
         "unknown source for projected volume \"v\""},
        {"{\"volumes\":[{\"name\":\"v\",\"future\":{}}]}", "", "unknown volume type for volume  \"v\""},
    };
    adm_arena_t *a = adm_arena_create(4096);

    assert_non_null(a);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        yyjson_doc *doc;
        const char *err = "unset";
        const char *what = adm_pod_api_object_reference(a, spec_of(&doc, cases[i].spec), &err);

        if (cases[i].what == NULL) {
            assert_null(what);
        } else {
            assert_non_null(what);
            assert_string_equal(what, cases[i].what);
        }
        if (cases[i].err == NULL) {
            assert_null(err);
        } else {
            assert_non_null(err);
            assert_string_equal(err, cases[i].err);
        }
        yyjson_doc_free(doc);
    }
    adm_arena_destroy(a);
}

static void test_visitors(void **state)
{
    yyjson_doc *doc;
    yyjson_val *spec;

    /* Only a volume's first source in kube's order is looked at: azureFile comes before secret. */
    spec = spec_of(&doc, "{\"volumes\":[{\"name\":\"v\",\"azureFile\":{\"secretName\":\"\"},"
                         "\"secret\":{\"secretName\":\"s\"}}]}");
    assert_false(adm_pod_references_secrets(spec));
    assert_false(adm_pod_references_configmaps(spec));
    yyjson_doc_free(doc);
    spec = spec_of(&doc,
                   "{\"containers\":[{\"env\":[{\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"c\"}}}]}]}");
    assert_false(adm_pod_references_secrets(spec));
    assert_true(adm_pod_references_configmaps(spec));
    yyjson_doc_free(doc);
}

static void test_tolerations(void **state)
{
    const char *json =
        "{\"spec\":{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
        "\"tolerationSeconds\":300}]}}";
    yyjson_doc *doc = yyjson_read(json, strlen(json), 0);
    yyjson_mut_doc *m = yyjson_doc_mut_copy(doc, NULL);
    yyjson_mut_val *pod = yyjson_mut_doc_get_root(m);
    adm_toleration_t t = adm_toleration_read(yyjson_ptr_get(yyjson_doc_get_root(doc), "/spec/tolerations/0"));
    char *out;

    assert_string_equal(t.key, "k");
    assert_true(t.has_seconds);
    assert_int_equal(t.seconds, 300);
    assert_int_equal(adm_pod_add_or_update_toleration(m, pod, &t), 0); /* already there */
    t.seconds = 60;
    assert_int_equal(adm_pod_add_or_update_toleration(m, pod, &t), 1); /* replaced */
    t.key = "other";
    t.has_seconds = false;
    assert_int_equal(adm_pod_add_or_update_toleration(m, pod, &t), 1); /* appended */
    out = yyjson_mut_write(m, 0, NULL);
    assert_string_equal(out,
                        "{\"spec\":{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":"
                        "\"NoExecute\",\"tolerationSeconds\":60},{\"key\":\"other\",\"operator\":\"Exists\","
                        "\"effect\":\"NoExecute\"}]}}");
    free(out);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_object_reference),
        cmocka_unit_test(test_visitors),
        cmocka_unit_test(test_tolerations),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DefaultStorageClass: the table of kube's storageclass/setdefault admission_test.go replayed with
 * StorageClasses in cluster-state files: no default, one, several (newest wins, ties by name), the
 * beta annotation, and claims that already name a class ("" included) left alone.
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
#include "plugintest.h"

extern const adm_plugin_t adm_plugin_default_storage_class;

static adm_arena_t *arena;

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_arena_destroy(arena);
    return 0;
}

#define SC(name, ann, created)                                                                               \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " name ", annotations: {" ann  \
    "}" created "}\nprovisioner: x\n"
#define DEF "storageclass.kubernetes.io/is-default-class: 'true'"
#define BETA "storageclass.beta.kubernetes.io/is-default-class: 'true'"
#define NOTDEF "storageclass.kubernetes.io/is-default-class: 'false'"

/* The storageClassName a claim with body pvc gets under classes (NULL: none set, unchanged). */
static const char *claim_class(const char *classes, const char *pvc)
{
    adm_cluster_state_t *cs = classes != NULL ? pt_load_cluster(classes) : NULL;
    pt_request_t r = {.operation = "CREATE",
                      .resource = "persistentvolumeclaims",
                      .kind = "PersistentVolumeClaim",
                      .namespace_ = "ns",
                      .name = "c",
                      .object = pvc};
    pt_result_t res;
    const char *out;

    pt_set_cluster(cs);
    res = pt_run(arena, &adm_plugin_default_storage_class, NULL, 'm', &r);
    pt_set_cluster(NULL);
    adm_cluster_state_free(cs);
    assert_int_equal(res.rc, ADM_OK);
    if (!res.changed) {
        return NULL;
    }
    out = strstr(res.object, "\"storageClassName\":\"");
    assert_non_null(out);
    out += strlen("\"storageClassName\":\"");
    return adm_arena_strndup(arena, out, strcspn(out, "\""));
}

#define PLAIN "{\"metadata\":{\"name\":\"c\"},\"spec\":{}}"

static void test_storage_class(void **state)
{
    (void)state;
    assert_null(claim_class(NULL, PLAIN));
    assert_null(claim_class(SC("a", NOTDEF, ""), PLAIN));
    assert_string_equal(claim_class(SC("a", NOTDEF, "") SC("b", DEF, ""), PLAIN), "b");
    assert_string_equal(claim_class(SC("a", BETA, ""), PLAIN), "a");
    /* several defaults: the newest, then the first name */
    assert_string_equal(claim_class(SC("old", DEF, ", creationTimestamp: '2020-01-01T00:00:00Z'")
                                        SC("new", DEF, ", creationTimestamp: '2021-01-01T00:00:00Z'"),
                                    PLAIN),
                        "new");
    assert_string_equal(claim_class(SC("zed", DEF, ", creationTimestamp: '2021-01-01T00:00:00Z'")
                                        SC("abc", BETA, ", creationTimestamp: '2021-01-01T02:00:00+02:00'"),
                                    PLAIN),
                        "abc");
    /* a claim that names a class, even "", or carries the beta annotation keeps it */
    assert_null(claim_class(SC("b", DEF, ""), "{\"spec\":{\"storageClassName\":\"\"}}"));
    assert_null(claim_class(SC("b", DEF, ""), "{\"spec\":{\"storageClassName\":\"x\"}}"));
    assert_null(
        claim_class(SC("b", DEF, ""),
                    "{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":\"\"}}}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storage_class),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

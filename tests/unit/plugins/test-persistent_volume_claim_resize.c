/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PersistentVolumeClaimResize: the table of kube's resize/admission_test.go replayed with
 * StorageClasses in cluster-state files; sizes compared as resource.Quantity.
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

extern const adm_plugin_t adm_plugin_persistent_volume_claim_resize;

static adm_arena_t *arena;
static adm_cluster_state_t *cluster;

static const char classes[] =
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gold}\n"
    "provisioner: x\nallowVolumeExpansion: true\n"
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: silver}\n"
    "provisioner: x\nallowVolumeExpansion: false\n"
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: bronze}\n"
    "provisioner: x\n";

static int setup(void **state)
{
    (void)state;
    arena = adm_arena_create(65536);
    cluster = pt_load_cluster(classes);
    pt_set_cluster(cluster);
    return arena == NULL;
}

static int teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_cluster_state_free(cluster);
    adm_arena_destroy(arena);
    return 0;
}

static const char *claim(const char *cls, const char *size, const char *phase)
{
    return adm_arena_printf(
        arena,
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{%s%s%s\"resources\":{\"requests\":{\"storage\":"
        "\"%s\"}}},\"status\":{\"phase\":\"%s\"}}",
        cls != NULL ? "\"storageClassName\":\"" : "", cls != NULL ? cls : "", cls != NULL ? "\"," : "", size,
        phase);
}

static pt_result_t resize(const char *old, const char *now)
{
    pt_request_t r = {.operation = "UPDATE",
                      .resource = "persistentvolumeclaims",
                      .kind = "PersistentVolumeClaim",
                      .namespace_ = "ns",
                      .name = "c",
                      .object = now,
                      .old_object = old};

    return pt_run(arena, &adm_plugin_persistent_volume_claim_resize, NULL, 'v', &r);
}

static void expect_forbidden(pt_result_t r, const char *msg)
{
    assert_int_equal(r.rc, ADM_DECLINED);
    assert_int_equal(r.status.code, 403);
    assert_string_equal(r.status.message,
                        adm_arena_printf(arena, "persistentvolumeclaims \"c\" is forbidden: %s", msg));
}

#define NOT_RESIZABLE                                                                                        \
    "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must "     \
    "support resize"

static void test_resize(void **state)
{
    (void)state;
    /* pvc-resize: growing a bound claim of an expandable class */
    assert_int_equal(resize(claim("gold", "1Gi", "Bound"), claim("gold", "2Gi", "Bound")).rc, ADM_OK);
    /* the same size written differently, or smaller, is not a resize */
    assert_int_equal(resize(claim("bronze", "1Gi", "Pending"), claim("bronze", "1073741824", "Pending")).rc,
                     ADM_OK);
    assert_int_equal(resize(claim("bronze", "2Gi", "Pending"), claim("bronze", "1G", "Pending")).rc, ADM_OK);
    expect_forbidden(resize(claim("gold", "1Gi", "Pending"), claim("gold", "2Gi", "Pending")),
                     "Only bound persistent volume claims can be expanded");
    expect_forbidden(resize(claim("silver", "1Gi", "Bound"), claim("silver", "2Gi", "Bound")), NOT_RESIZABLE);
    expect_forbidden(resize(claim("bronze", "1Gi", "Bound"), claim("bronze", "2Gi", "Bound")), NOT_RESIZABLE);
    expect_forbidden(resize(claim(NULL, "1Gi", "Bound"), claim(NULL, "2Gi", "Bound")), NOT_RESIZABLE);
    expect_forbidden(resize(claim("missing", "1Gi", "Bound"), claim("missing", "2Gi", "Bound")),
                     NOT_RESIZABLE);
    expect_forbidden(resize(claim("silver", "1Gi", "Bound"), claim("gold", "2Gi", "Bound")), NOT_RESIZABLE);
    /* the beta annotation names the class too */
    assert_int_equal(
        resize("{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":\"gold\"}},"
               "\"spec\":{\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}},\"status\":{\"phase\":"
               "\"Bound\"}}",
               "{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":\"gold\"}},"
               "\"spec\":{\"resources\":{\"requests\":{\"storage\":\"2Gi\"}}}}")
            .rc,
        ADM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

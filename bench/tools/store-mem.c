/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store-mem: what the informer store (src/cluster/cluster_store.c) costs for N namespaces shaped as
 * kube-apiserver serves them (labels, an annotation, managedFields, finalizers, status): heap bytes
 * measured by glibc's mallinfo2 before and after, the store's own accounting, the bytes of the
 * JSON as received, and the time to apply a MODIFIED event and to rebuild the all-namespaces
 * list after one. Usage: store-mem [N] (default 10000). Prints one line per figure.
 */
#include "adm/cluster/cluster_store.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yyjson.h>

static const char shape[] =
    "{\"metadata\":{\"name\":\"team-%06d\",\"uid\":\"6f1c2a9e-4b7d-4c1e-9a3f-%012d\",\"resourceVersion\":\"%"
    "d\","
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{\"kubernetes.io/"
    "metadata.name\":\"team-%06d\","
    "\"env\":\"prod\",\"team\":\"payments\"},\"annotations\":{\"scheduler.alpha.kubernetes.io/"
    "node-selector\":"
    "\"pool=general\"},\"managedFields\":[{\"manager\":\"kubectl-create\",\"operation\":\"Update\","
    "\"apiVersion\":"
    "\"v1\",\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:"
    "labels\":"
    "{\".\":{},\"f:env\":{},\"f:kubernetes.io/metadata.name\":{},\"f:team\":{}},\"f:annotations\":{\".\":{},"
    "\"f:scheduler.alpha.kubernetes.io/node-selector\":{}}}}}]},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
    "\"status\":{\"phase\":\"Active\"}}";

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10000;
    struct mallinfo2 before, after;
    adm_cluster_store_t *s;
    adm_kind_store_t *k;
    size_t wire = 0, count = 0;
    char json[2048];
    double *put_s = malloc(1000 * sizeof(double)), *list_s = malloc(1000 * sizeof(double));

    if (n <= 0 || put_s == NULL || list_s == NULL) {
        return 2;
    }
    before = mallinfo2();
    s = adm_cluster_store_create();
    k = adm_cluster_store_kind(s, "", "Namespace", false);
    {
        yyjson_doc *empty = yyjson_read("[]", 2, 0);
        yyjson_val *pages[1] = {yyjson_doc_get_root(empty)};

        adm_kind_store_replace(k, pages, 1);
        yyjson_doc_free(empty);
    }
    for (int i = 0; i < n; i++) {
        int len = snprintf(json, sizeof(json), shape, i, i, i + 1, i);
        yyjson_doc *d = yyjson_read(json, (size_t)len, 0);

        wire += (size_t)len;
        if (d == NULL || adm_kind_store_put(k, yyjson_doc_get_root(d)) != 0) {
            return 1;
        }
        yyjson_doc_free(d);
    }
    after = mallinfo2();
    printf("namespaces %d\n", n);
    printf("heap_bytes %zu (%.0f per namespace)\n", after.uordblks - before.uordblks,
           (double)(after.uordblks - before.uordblks) / n);
    printf("store_accounted_bytes %zu\n", adm_kind_store_bytes(k));
    printf("wire_json_bytes %zu (%.0f per namespace)\n", wire, (double)wire / n);
    for (int r = 0; r < 1000; r++) {
        int i = (r * 7919) % n;
        int len = snprintf(json, sizeof(json), shape, i, i, n + r + 1, i);
        yyjson_doc *d = yyjson_read(json, (size_t)len, 0);
        double t0 = now_s(), t1, t2;

        adm_kind_store_put(k, yyjson_doc_get_root(d));
        t1 = now_s();
        adm_cluster_store_list(s, "", "Namespace", NULL, &count);
        t2 = now_s();
        put_s[r] = t1 - t0;
        list_s[r] = t2 - t1;
        yyjson_doc_free(d);
    }
    qsort(put_s, 1000, sizeof(double), cmp);
    qsort(list_s, 1000, sizeof(double), cmp);
    printf("modified_event_apply_us p50 %.1f p99 %.1f\n", put_s[500] * 1e6, put_s[990] * 1e6);
    printf("list_all_rebuild_us p50 %.1f p99 %.1f (%zu items)\n", list_s[500] * 1e6, list_s[990] * 1e6,
           count);
    adm_cluster_store_free(s);
    free(put_s);
    free(list_s);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store-mem: what the informer store (src/cluster/cluster_store.c) costs for N namespaces shaped as
 * kube-apiserver serves them (labels, an annotation, managedFields, finalizers, status): heap bytes
 * measured by glibc's mallinfo2 before and after, the store's own accounting, the bytes of the
 * JSON as received, and the time to apply a MODIFIED event and to rebuild the all-namespaces
 * list after one. Usage: store-mem [N] (default 10000). Prints one line per figure.
 *
 * store-mem pods N REVIEW: N running pods, each the pod of the AdmissionReview file REVIEW (e.g.
 * bench/reviews/pod-4k.v1.json) with its own name, two managedFields entries and the status kubelet
 * writes for a running pod, stored as the informer stores Pods (without status) and, for the
 * comparison, whole (a kind the store keeps whole); heap bytes per pod of each and the wire size.
 */
#include "adm/base/fs.h"
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

/* What kubelet and the controllers add to a running pod of one container: managedFields, status. */
static const char running_managed[] =
    "[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":"
    "\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{}"
    ","
    "\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{}},\"f:ownerReferences\":{\".\":{},"
    "\"k:{\\\"uid\\\":\\\"0b1c\\\"}\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"checkout\\\"}"
    "\""
    ":{\".\":{},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{},\"f:resources\":{},"
    "\"f:securityContext\":{}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:restartPolicy\":{},"
    "\"f:schedulerName\":{},\"f:securityContext\":{},\"f:terminationGracePeriodSeconds\":{}}}},"
    "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":"
    "\"2026-01-01T00:00:09Z\",\"fieldsType\":\"FieldsV1\",\"subresource\":\"status\",\"fieldsV1\":{"
    "\"f:status\":{\"f:conditions\":{},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},"
    "\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{},\"f:startTime\":{}}}}]";
static const char running_status[] =
    "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"PodReadyToStartContainers\",\"status\":\"True\","
    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-01-01T00:00:03Z\"},{\"type\":\"Initialized\","
    "\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"},"
    "{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":"
    "\"2026-01-01T00:00:09Z\"},{\"type\":\"ContainersReady\",\"status\":\"True\",\"lastProbeTime\":null,"
    "\"lastTransitionTime\":\"2026-01-01T00:00:09Z\"},{\"type\":\"PodScheduled\",\"status\":\"True\","
    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}],\"hostIP\":\"10.0.3.17\","
    "\"hostIPs\":[{\"ip\":\"10.0.3.17\"}],\"podIP\":\"10.244.7.31\",\"podIPs\":[{\"ip\":\"10.244.7.31\"}],"
    "\"startTime\":\"2026-01-01T00:00:01Z\",\"containerStatuses\":[{\"name\":\"checkout\",\"state\":{"
    "\"running\":{\"startedAt\":\"2026-01-01T00:00:08Z\"}},\"lastState\":{},\"ready\":true,"
    "\"restartCount\":0,\"image\":\"registry.example.com/shop/checkout:1.4.2\",\"imageID\":"
    "\"registry.example.com/shop/"
    "checkout@sha256:9f2c4e1b7a3d5f6e8c0b1a2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f\","
    "\"containerID\":\"containerd://5c1f0e2d3b4a59687706f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0f\","
    "\"started\":true,\"volumeMounts\":[{\"name\":\"kube-api-access-x7k2p\",\"mountPath\":"
    "\"/var/run/secrets/kubernetes.io/"
    "serviceaccount\",\"readOnly\":true,\"recursiveReadOnly\":\"Disabled\"}]}],"
    "\"qosClass\":\"Burstable\"}";

/* The pods mode (see the top): heap per pod stored as a Pod and stored whole. */
static int pods(int n, const char *review)
{
    char *text = NULL, name[64];
    size_t len = 0, wire = 0, heap[2];
    char err[256] = "out of memory";
    yyjson_doc *rd, *managed = yyjson_read(running_managed, sizeof(running_managed) - 1, 0);
    yyjson_doc *status = yyjson_read(running_status, sizeof(running_status) - 1, 0);
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *pod, *meta;
    static const char *const kinds[2] = {"Pod", "WholePod"};

    adm_arena_t *a = adm_arena_create(1 << 16);

    if (a == NULL || adm_fs_read(a, review, 1u << 24, &text, &len, err, sizeof(err)) != 0 ||
        managed == NULL || status == NULL || m == NULL) {
        fprintf(stderr, "store-mem: %s\n", err);
        return 1;
    }
    rd = yyjson_read(text, len, 0);
    pod =
        yyjson_val_mut_copy(m, yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(rd), "request"), "object"));
    meta = yyjson_mut_obj_get(pod, "metadata");
    if (pod == NULL || meta == NULL) {
        fprintf(stderr, "store-mem: %s holds no request.object.metadata\n", review);
        return 1;
    }
    yyjson_mut_obj_remove_key(pod, "status");
    yyjson_mut_obj_add_val(m, pod, "status", yyjson_val_mut_copy(m, yyjson_doc_get_root(status)));
    yyjson_mut_obj_add_val(m, meta, "managedFields", yyjson_val_mut_copy(m, yyjson_doc_get_root(managed)));
    yyjson_mut_doc_set_root(m, pod);
    for (int w = 0; w < 2; w++) {
        struct mallinfo2 before = mallinfo2(), after;
        adm_cluster_store_t *s = adm_cluster_store_create();
        adm_kind_store_t *k = adm_cluster_store_kind(s, "", kinds[w], true);

        for (int i = 0; i < n; i++) {
            char *json;
            size_t jlen;
            yyjson_doc *d;

            snprintf(name, sizeof(name), "checkout-7d9f8c6b5-%06d", i);
            yyjson_mut_obj_remove_key(meta, "name");
            yyjson_mut_obj_add_strcpy(m, meta, "name", name);
            json = yyjson_mut_write(m, 0, &jlen);
            d = json != NULL ? yyjson_read(json, jlen, 0) : NULL;
            if (d == NULL || adm_kind_store_put(k, yyjson_doc_get_root(d)) != 0) {
                return 1;
            }
            wire += w == 0 ? jlen : 0;
            yyjson_doc_free(d);
            free(json);
        }
        after = mallinfo2();
        heap[w] = after.uordblks - before.uordblks;
        adm_cluster_store_free(s);
    }
    printf("pods %d\n", n);
    printf("wire_json_bytes %zu (%.0f per pod)\n", wire, (double)wire / n);
    printf("heap_bytes_as_stored %zu (%.0f per pod: without status and managedFields)\n", heap[0],
           (double)heap[0] / n);
    printf("heap_bytes_whole %zu (%.0f per pod: without managedFields only)\n", heap[1], (double)heap[1] / n);
    yyjson_doc_free(rd);
    yyjson_doc_free(managed);
    yyjson_doc_free(status);
    yyjson_mut_doc_free(m);
    adm_arena_destroy(a);
    return 0;
}

static int namespaces(int n);

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10000;

    if (argc == 4 && strcmp(argv[1], "pods") == 0) {
        return pods((int)strtol(argv[2], NULL, 10), argv[3]);
    }
    return namespaces(n);
}

static int namespaces(int n)
{
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

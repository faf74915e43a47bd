/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster state from files. Everything (file text, parsed documents, key strings, list arrays)
 * lives in one arena owned by the state; the two hash tables and the entry array are malloc'd
 * because they grow while loading. Lookups hash the key strings in place, so the request path
 * neither allocates nor concatenates.
 */
#include "adm/cluster/cluster_state.h"

#include "adm/cluster/cluster_store.h"

#include "adm/admission/admission.h"
#include "adm/admission/admission_config.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/json.h"
#include "adm/base/yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Large enough for a dump of a big cluster's namespaces and quotas; bounds a mistaken path. */
#define MAX_STATE_FILE_BYTES (256u << 20)
#define NS_NAME_LABEL "kubernetes.io/metadata.name"

typedef struct entry_s {
    const char *group;
    const char *kind;
    const char *ns;
    const char *name;
    yyjson_val *obj;
    const char *file; /* where it came from, for the duplicate message */
    size_t doc;
    uint64_t hash;
} entry_t;

typedef struct list_s {
    const char *group;
    const char *kind;
    const char *ns; /* NULL: every namespace */
    yyjson_val **items;
    size_t n;
    uint64_t hash;
} list_t;

struct adm_cluster_state_s {
    adm_arena_t *arena;
    entry_t *entries;
    size_t n, cap;
    uint32_t *slots; /* entry index + 1; 0 is empty */
    size_t nslots;   /* power of two */
    list_t *lists;
    size_t nlists;
    uint32_t *lslots;
    size_t nlslots;
    adm_cluster_store_t *store; /* borrowed: the informer caches, which win for the kinds they serve */
    uint64_t serial;            /* adm_cluster_state_serial */
};

typedef struct loader_s {
    adm_cluster_state_t *cs;
    char *err;
    size_t err_len;
} loader_t;

/*
 * FNV-1a over the parts with a 0xff byte after each: 0xff never occurs in UTF-8, so ("ab", "c")
 * and ("a", "bc") hash apart. The NULL namespace of an all-namespaces list gets its own marker.
 */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t mix(uint64_t h, const char *s)
{
    if (s == NULL) {
        return (h ^ 0xfe) * FNV_PRIME;
    }
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * FNV_PRIME;
    }
    return (h ^ 0xff) * FNV_PRIME;
}

static uint64_t entry_hash(const char *group, const char *kind, const char *ns, const char *name)
{
    return mix(mix(mix(mix(FNV_OFFSET, group), kind), ns), name);
}

static uint64_t list_hash(const char *group, const char *kind, const char *ns)
{
    return mix(mix(mix(FNV_OFFSET, group), kind), ns);
}

static bool same_ns(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcmp(a, b) == 0;
}

static const entry_t *find_entry(const adm_cluster_state_t *cs, const char *group, const char *kind,
                                 const char *ns, const char *name, uint64_t h)
{
    size_t mask = cs->nslots - 1;

    if (cs->nslots == 0) {
        return NULL;
    }
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const entry_t *e;

        if (cs->slots[i] == 0) {
            return NULL;
        }
        e = &cs->entries[cs->slots[i] - 1];
        if (e->hash == h && strcmp(e->name, name) == 0 && strcmp(e->ns, ns) == 0 &&
            strcmp(e->kind, kind) == 0 && strcmp(e->group, group) == 0) {
            return e;
        }
    }
}

static void place(uint32_t *slots, size_t nslots, uint64_t h, uint32_t value)
{
    size_t mask = nslots - 1;
    size_t i = (size_t)h & mask;

    while (slots[i] != 0) {
        i = (i + 1) & mask;
    }
    slots[i] = value;
}

/* Keeps the entry table at most half full so probe runs stay short. */
static int reserve_entry(adm_cluster_state_t *cs)
{
    if (cs->n == cs->cap) {
        size_t ncap = cs->cap == 0 ? 64 : cs->cap * 2;
        entry_t *g = realloc(cs->entries, ncap * sizeof(*g));

        if (g == NULL) {
            return ADM_ENOMEM;
        }
        cs->entries = g;
        cs->cap = ncap;
    }
    if ((cs->n + 1) * 2 > cs->nslots) {
        size_t nslots = cs->nslots == 0 ? 128 : cs->nslots * 2;
        uint32_t *s = calloc(nslots, sizeof(*s));

        if (s == NULL) {
            return ADM_ENOMEM;
        }
        for (size_t i = 0; i < cs->n; i++) {
            place(s, nslots, cs->entries[i].hash, (uint32_t)(i + 1));
        }
        free(cs->slots);
        cs->slots = s;
        cs->nslots = nslots;
    }
    return 0;
}

static list_t *find_list(const adm_cluster_state_t *cs, const char *group, const char *kind, const char *ns,
                         uint64_t h)
{
    size_t mask = cs->nlslots - 1;

    if (cs->nlslots == 0) {
        return NULL;
    }
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        list_t *l;

        if (cs->lslots[i] == 0) {
            return NULL;
        }
        l = &cs->lists[cs->lslots[i] - 1];
        if (l->hash == h && same_ns(l->ns, ns) && strcmp(l->kind, kind) == 0 &&
            strcmp(l->group, group) == 0) {
            return l;
        }
    }
}

/* The table was sized for every possible list up front, so adding never grows it. */
static list_t *list_for(adm_cluster_state_t *cs, const char *group, const char *kind, const char *ns)
{
    uint64_t h = list_hash(group, kind, ns);
    list_t *l = find_list(cs, group, kind, ns, h);

    if (l == NULL) {
        l = &cs->lists[cs->nlists++];
        l->group = group;
        l->kind = kind;
        l->ns = ns;
        l->items = NULL;
        l->n = 0;
        l->hash = h;
        place(cs->lslots, cs->nlslots, h, (uint32_t)cs->nlists);
    }
    return l;
}

static int build_lists(adm_cluster_state_t *cs)
{
    size_t nlslots = 16;

    while (nlslots < cs->n * 4) {
        nlslots *= 2;
    }
    /* Each object opens at most two lists: its namespace's and the all-namespaces one. */
    cs->lists = calloc(cs->n * 2 + 1, sizeof(*cs->lists));
    cs->lslots = calloc(nlslots, sizeof(*cs->lslots));
    if (cs->lists == NULL || cs->lslots == NULL) {
        return ADM_ENOMEM;
    }
    cs->nlslots = nlslots;
    for (size_t i = 0; i < cs->n; i++) {
        const entry_t *e = &cs->entries[i];

        list_for(cs, e->group, e->kind, e->ns)->n++;
        list_for(cs, e->group, e->kind, NULL)->n++;
    }
    for (size_t i = 0; i < cs->nlists; i++) {
        cs->lists[i].items = adm_arena_alloc(cs->arena, cs->lists[i].n * sizeof(yyjson_val *));
        if (cs->lists[i].items == NULL) {
            return ADM_ENOMEM;
        }
        cs->lists[i].n = 0;
    }
    for (size_t i = 0; i < cs->n; i++) {
        const entry_t *e = &cs->entries[i];
        list_t *l = list_for(cs, e->group, e->kind, e->ns);
        list_t *all = list_for(cs, e->group, e->kind, NULL);

        l->items[l->n++] = e->obj;
        all->items[all->n++] = e->obj;
    }
    return 0;
}

static int fail(loader_t *L, int rc, const char *file, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(loader_t *L, int rc, const char *file, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(L->err, L->err_len, "%s: %s: %s", file, where, msg);
    return rc;
}

typedef enum scope_e {
    SCOPE_UNKNOWN,
    SCOPE_NAMESPACED,
    SCOPE_CLUSTER,
} scope_t;

typedef struct known_kind_s {
    const char *group;
    const char *kind;
    scope_t scope;
} known_kind_t;

/*
 * The built-in kinds whose scope decides how an object is indexed. A kind not listed (a custom
 * resource) is indexed by the namespace it states, or none.
 */
static const known_kind_t known_kinds[] = {
    {"", "Namespace", SCOPE_CLUSTER},
    {"", "Node", SCOPE_CLUSTER},
    {"", "PersistentVolume", SCOPE_CLUSTER},
    {"", "ComponentStatus", SCOPE_CLUSTER},
    {"storage.k8s.io", "StorageClass", SCOPE_CLUSTER},
    {"storage.k8s.io", "CSIDriver", SCOPE_CLUSTER},
    {"storage.k8s.io", "CSINode", SCOPE_CLUSTER},
    {"storage.k8s.io", "VolumeAttachment", SCOPE_CLUSTER},
    {"storage.k8s.io", "VolumeAttributesClass", SCOPE_CLUSTER},
    {"scheduling.k8s.io", "PriorityClass", SCOPE_CLUSTER},
    {"node.k8s.io", "RuntimeClass", SCOPE_CLUSTER},
    {"networking.k8s.io", "IngressClass", SCOPE_CLUSTER},
    {"networking.k8s.io", "IPAddress", SCOPE_CLUSTER},
    {"networking.k8s.io", "ServiceCIDR", SCOPE_CLUSTER},
    {"rbac.authorization.k8s.io", "ClusterRole", SCOPE_CLUSTER},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicy", SCOPE_CLUSTER},
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", SCOPE_CLUSTER},
    {"apiextensions.k8s.io", "CustomResourceDefinition", SCOPE_CLUSTER},
    {"apiregistration.k8s.io", "APIService", SCOPE_CLUSTER},
    {"certificates.k8s.io", "CertificateSigningRequest", SCOPE_CLUSTER},
    {"certificates.k8s.io", "ClusterTrustBundle", SCOPE_CLUSTER},
    {"flowcontrol.apiserver.k8s.io", "FlowSchema", SCOPE_CLUSTER},
    {"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", SCOPE_CLUSTER},
    {"resource.k8s.io", "DeviceClass", SCOPE_CLUSTER},
    {"resource.k8s.io", "ResourceSlice", SCOPE_CLUSTER},
    {"", "Pod", SCOPE_NAMESPACED},
    {"", "Service", SCOPE_NAMESPACED},
    {"", "ServiceAccount", SCOPE_NAMESPACED},
    {"", "ConfigMap", SCOPE_NAMESPACED},
    {"", "Secret", SCOPE_NAMESPACED},
    {"", "LimitRange", SCOPE_NAMESPACED},
    {"", "ResourceQuota", SCOPE_NAMESPACED},
    {"", "PersistentVolumeClaim", SCOPE_NAMESPACED},
    {"", "Endpoints", SCOPE_NAMESPACED},
    {"", "Event", SCOPE_NAMESPACED},
    {"", "ReplicationController", SCOPE_NAMESPACED},
    {"", "PodTemplate", SCOPE_NAMESPACED},
    {"apps", "Deployment", SCOPE_NAMESPACED},
    {"apps", "StatefulSet", SCOPE_NAMESPACED},
    {"apps", "DaemonSet", SCOPE_NAMESPACED},
    {"apps", "ReplicaSet", SCOPE_NAMESPACED},
    {"apps", "ControllerRevision", SCOPE_NAMESPACED},
    {"batch", "Job", SCOPE_NAMESPACED},
    {"batch", "CronJob", SCOPE_NAMESPACED},
    {"networking.k8s.io", "Ingress", SCOPE_NAMESPACED},
    {"networking.k8s.io", "NetworkPolicy", SCOPE_NAMESPACED},
    {"policy", "PodDisruptionBudget", SCOPE_NAMESPACED},
    {"rbac.authorization.k8s.io", "Role", SCOPE_NAMESPACED},
    {"rbac.authorization.k8s.io", "RoleBinding", SCOPE_NAMESPACED},
    {"coordination.k8s.io", "Lease", SCOPE_NAMESPACED},
    {"discovery.k8s.io", "EndpointSlice", SCOPE_NAMESPACED},
    {"autoscaling", "HorizontalPodAutoscaler", SCOPE_NAMESPACED},
    {"storage.k8s.io", "CSIStorageCapacity", SCOPE_NAMESPACED},
    {"events.k8s.io", "Event", SCOPE_NAMESPACED},
};

static scope_t scope_of(const char *group, const char *kind)
{
    for (size_t i = 0; i < sizeof(known_kinds) / sizeof(known_kinds[0]); i++) {
        if (strcmp(known_kinds[i].kind, kind) == 0 && strcmp(known_kinds[i].group, group) == 0) {
            return known_kinds[i].scope;
        }
    }
    return SCOPE_UNKNOWN;
}

static const char *nonempty_str(yyjson_val *v)
{
    const char *s = yyjson_get_str(v);

    return s != NULL && s[0] != '\0' ? s : NULL;
}

/*
 * kube-apiserver sets kubernetes.io/metadata.name to the name on every namespace it stores, so a
 * namespaceSelector on that label works for namespaces written by hand too. The parsed value is
 * immutable: a copy with the label set replaces it.
 */
static yyjson_val *with_name_label(adm_arena_t *a, yyjson_val *obj, const char *name)
{
    yyjson_alc alc;
    yyjson_mut_doc *mdoc;
    yyjson_mut_val *root, *labels;
    yyjson_doc *doc;

    adm_json_alc_init(&alc, a);
    mdoc = yyjson_mut_doc_new(&alc);
    if (mdoc == NULL) {
        return NULL;
    }
    root = yyjson_val_mut_copy(mdoc, obj);
    labels =
        root != NULL ? adm_mut_ensure(mdoc, adm_mut_get(root, "metadata"), "labels", YYJSON_TYPE_OBJ) : NULL;
    if (labels == NULL ||
        !yyjson_mut_obj_put(labels, yyjson_mut_str(mdoc, NS_NAME_LABEL), yyjson_mut_str(mdoc, name))) {
        return NULL;
    }
    yyjson_mut_doc_set_root(mdoc, root);
    doc = yyjson_mut_doc_imut_copy(mdoc, &alc);
    return doc != NULL ? yyjson_doc_get_root(doc) : NULL;
}

/*
 * Adds one object. api_version / kind are the List's defaults for items that omit them (NULL
 * outside a typed list).
 */
static int add_object(loader_t *L, const char *file, size_t docno, const char *where, yyjson_val *obj,
                      const char *def_api_version, const char *def_kind)
{
    adm_cluster_state_t *cs = L->cs;
    const char *api_version, *kind, *name, *ns = "", *slash, *group;
    yyjson_val *meta, *labels, *nsv;
    scope_t scope;
    entry_t *e;
    const entry_t *dup;
    uint64_t h;
    int rc;

    if (!yyjson_is_obj(obj)) {
        return fail(L, ADM_EINVAL, file, where, "not an object");
    }
    api_version = yyjson_obj_get(obj, "apiVersion") != NULL ? nonempty_str(yyjson_obj_get(obj, "apiVersion"))
                                                            : def_api_version;
    kind = yyjson_obj_get(obj, "kind") != NULL ? nonempty_str(yyjson_obj_get(obj, "kind")) : def_kind;
    if (api_version == NULL) {
        return fail(L, ADM_EINVAL, file, where, "object has no apiVersion");
    }
    if (kind == NULL) {
        return fail(L, ADM_EINVAL, file, where, "object has no kind");
    }
    meta = yyjson_obj_get(obj, "metadata");
    name = nonempty_str(adm_json_get(meta, "name"));
    if (name == NULL) {
        return fail(L, ADM_EINVAL, file, where, "object has no metadata.name");
    }
    nsv = yyjson_obj_get(meta, "namespace");
    if (nsv != NULL && !yyjson_is_null(nsv)) {
        if (!yyjson_is_str(nsv)) {
            return fail(L, ADM_EINVAL, file, where, "%s \"%s\": metadata.namespace must be a string", kind,
                        name);
        }
        ns = yyjson_get_str(nsv);
    }
    labels = yyjson_obj_get(meta, "labels");
    if (labels != NULL && !yyjson_is_null(labels)) {
        yyjson_val *k, *v;
        yyjson_obj_iter it;

        if (!yyjson_is_obj(labels)) {
            return fail(L, ADM_EINVAL, file, where, "%s \"%s\": metadata.labels must be an object", kind,
                        name);
        }
        yyjson_obj_iter_init(labels, &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            v = yyjson_obj_iter_get_val(k);
            if (!yyjson_is_str(v)) {
                return fail(L, ADM_EINVAL, file, where, "%s \"%s\": metadata.labels.%s must be a string",
                            kind, name, yyjson_get_str(k));
            }
        }
    }
    slash = strchr(api_version, '/');
    group = slash != NULL ? adm_arena_strndup(cs->arena, api_version, (size_t)(slash - api_version)) : "";
    if (group == NULL) {
        return ADM_ENOMEM;
    }
    scope = scope_of(group, kind);
    if (scope == SCOPE_CLUSTER) {
        /* The API server ignores a namespace on a cluster-scoped object. */
        ns = "";
    } else if (scope == SCOPE_NAMESPACED && ns[0] == '\0') {
        return fail(L, ADM_EINVAL, file, where,
                    "%s \"%s\": metadata.namespace is required for a namespaced kind", kind, name);
    }
    if (group[0] == '\0' && strcmp(kind, "Namespace") == 0) {
        const char *have = yyjson_get_str(adm_json_get(labels, NS_NAME_LABEL));

        if (have == NULL || strcmp(have, name) != 0) {
            obj = with_name_label(cs->arena, obj, name);
            if (obj == NULL) {
                return ADM_ENOMEM;
            }
            /* The copy owns its strings; the key must point into the object that is kept. */
            name = yyjson_get_str(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "name"));
        }
    }
    h = entry_hash(group, kind, ns, name);
    dup = find_entry(cs, group, kind, ns, name, h);
    if (dup != NULL) {
        return fail(
            L, ADM_EINVAL, file, where, "%s%s%s \"%s%s%s\" is defined twice (first in %s document %zu)", kind,
            group[0] != '\0' ? "." : "", group, ns, ns[0] != '\0' ? "/" : "", name, dup->file, dup->doc);
    }
    rc = reserve_entry(cs);
    if (rc != 0) {
        return rc;
    }
    e = &cs->entries[cs->n++];
    e->group = group;
    e->kind = kind;
    e->ns = ns;
    e->name = name;
    e->obj = obj;
    e->file = file;
    e->doc = docno;
    e->hash = h;
    place(cs->slots, cs->nslots, h, (uint32_t)cs->n);
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int add_document(loader_t *L, const char *file, size_t docno, yyjson_val *d)
{
    char where[64];
    const char *kind = yyjson_get_str(adm_json_get(d, "kind"));
    yyjson_val *items = adm_json_get(d, "items");

    snprintf(where, sizeof(where), "document %zu", docno);
    if (kind != NULL && (strcmp(kind, "List") == 0 || (ends_with(kind, "List") && items != NULL))) {
        const char *item_kind = NULL;
        const char *api_version = NULL;
        size_t i, n;
        yyjson_val *item;
        yyjson_arr_iter it;

        if (items != NULL && !yyjson_is_null(items) && !yyjson_is_arr(items)) {
            return fail(L, ADM_EINVAL, file, where, "items must be a list");
        }
        /* The API server's own <Kind>List responses leave apiVersion and kind out of the items. */
        if (strcmp(kind, "List") != 0) {
            item_kind = adm_arena_strndup(L->cs->arena, kind, strlen(kind) - 4);
            api_version = nonempty_str(adm_json_get(d, "apiVersion"));
            if (item_kind == NULL) {
                return ADM_ENOMEM;
            }
        }
        n = yyjson_arr_size(items);
        yyjson_arr_iter_init(items, &it);
        for (i = 0; i < n; i++) {
            char iwhere[96];
            int rc;

            item = yyjson_arr_iter_next(&it);
            snprintf(iwhere, sizeof(iwhere), "%s: items[%zu]", where, i);
            rc = add_object(L, file, docno, iwhere, item, api_version, item_kind);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }
    return add_object(L, file, docno, where, d, NULL, NULL);
}

static int load_text(loader_t *L, const char *file, const char *text, size_t len)
{
    yyjson_val **docs;
    size_t ndocs;
    char sub[256];
    int rc = adm_yaml_parse(L->cs->arena, text, len, &docs, &ndocs, sub, sizeof(sub));

    if (rc == ADM_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        snprintf(L->err, L->err_len, "%s: %s", file, sub);
        return ADM_EINVAL;
    }
    for (size_t i = 0; i < ndocs; i++) {
        rc = add_document(L, file, i + 1, docs[i]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* One file of --cluster-state (adm_fs_walk's callback). */
static int load_file(void *arg, const char *file)
{
    loader_t *L = arg;
    char *text;
    size_t len;
    int rc = adm_fs_read(L->cs->arena, file, MAX_STATE_FILE_BYTES, &text, &len, L->err, L->err_len);

    if (rc == ADM_ETOOBIG) {
        return ADM_EINVAL;
    }
    if (rc != 0) {
        return rc;
    }
    return load_text(L, file, text, len);
}

static const char default_state[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"default\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-system\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-public\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-node-lease\"}},"
    /* kube-controller-manager's serviceaccount controller gives every namespace its "default" */
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"default\",\"namespace\":"
    "\"default\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"default\",\"namespace\":"
    "\"kube-system\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"default\",\"namespace\":"
    "\"kube-public\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"default\",\"namespace\":"
    "\"kube-node-lease\"}}]}";

/* The serial of the last state loaded in this process. */
static uint64_t last_serial;

int adm_cluster_state_load(const char *const *paths, size_t npaths, adm_cluster_state_t **out, char *err,
                           size_t err_len)
{
    adm_cluster_state_t *cs = calloc(1, sizeof(*cs));
    loader_t L = {cs, err, err_len};
    int rc = 0;

    *out = NULL;
    if (err_len > 0) {
        err[0] = '\0';
    }
    if (cs != NULL) {
        cs->arena = adm_arena_create(1u << 16);
    }
    if (cs == NULL || cs->arena == NULL) {
        free(cs);
        return ADM_ENOMEM;
    }
    cs->serial = __atomic_add_fetch(&last_serial, 1, __ATOMIC_RELAXED);
    if (npaths == 0) {
        rc = load_text(&L, "built-in cluster state", default_state, sizeof(default_state) - 1);
    }
    for (size_t i = 0; rc == 0 && i < npaths; i++) {
        rc = adm_fs_walk(cs->arena, paths[i], adm_fs_config_suffixes, load_file, &L, err, err_len);
    }
    if (rc == 0) {
        rc = build_lists(cs);
    }
    if (rc != 0) {
        if (rc == ADM_ENOMEM) {
            snprintf(err, err_len, "cluster state: out of memory");
        }
        adm_cluster_state_free(cs);
        return rc;
    }
    *out = cs;
    return 0;
}

void adm_cluster_state_free(adm_cluster_state_t *cs)
{
    if (cs == NULL) {
        return;
    }
    adm_arena_destroy(cs->arena);
    free(cs->entries);
    free(cs->slots);
    free(cs->lists);
    free(cs->lslots);
    free(cs);
}

yyjson_val *adm_cluster_state_get(const adm_cluster_state_t *cs, const char *group, const char *kind,
                                  const char *namespace_, const char *name)
{
    const char *ns = namespace_ != NULL ? namespace_ : "";
    const entry_t *e;

    if (cs == NULL) {
        return NULL;
    }
    if (cs->store != NULL && adm_cluster_store_serves(cs->store, group, kind)) {
        return adm_cluster_store_get(cs->store, group, kind, namespace_, name);
    }
    e = find_entry(cs, group, kind, ns, name, entry_hash(group, kind, ns, name));
    return e != NULL ? e->obj : NULL;
}

yyjson_val *const *adm_cluster_state_list(const adm_cluster_state_t *cs, const char *group, const char *kind,
                                          const char *namespace_, size_t *n)
{
    const list_t *l;

    if (cs != NULL && cs->store != NULL && adm_cluster_store_serves(cs->store, group, kind)) {
        return adm_cluster_store_list(cs->store, group, kind, namespace_, n);
    }
    l = cs != NULL ? find_list(cs, group, kind, namespace_, list_hash(group, kind, namespace_)) : NULL;

    *n = l != NULL ? l->n : 0;
    return l != NULL ? l->items : NULL;
}

void adm_cluster_state_use_store(adm_cluster_state_t *cs, struct adm_cluster_store_s *store)
{
    cs->store = store;
}

struct adm_api_client_s *adm_cluster_state_api(const adm_cluster_state_t *cs)
{
    return cs->store != NULL ? adm_cluster_store_api(cs->store) : NULL;
}

uint64_t adm_cluster_state_serial(const adm_cluster_state_t *cs)
{
    return cs->serial;
}

size_t adm_cluster_state_count(const adm_cluster_state_t *cs)
{
    return cs != NULL ? cs->n : 0;
}

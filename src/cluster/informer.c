/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer set of informer.h: which kinds to watch (what enabled plugins declare in their
 * reads, and Namespaces when asked for webhooks' namespaceSelectors), where each is served (a
 * table of the kinds admission plugins read, from list-watch.md §5), one reflector each on one API
 * client, and the readiness and metrics views.
 */
#include "adm/cluster/informer.h"

#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/reload.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/kubeconfig.h"
#include "adm/cluster/reflector.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WATCHED 16

/* The kinds a plugin may declare in reads ("group/Kind"), and where the API server serves them. */
static const adm_watched_kind_t known_kinds[] = {
    {"", "v1", "namespaces", "Namespace", false},
    {"", "v1", "limitranges", "LimitRange", true},
    {"", "v1", "resourcequotas", "ResourceQuota", true},
    {"", "v1", "serviceaccounts", "ServiceAccount", true},
    {"", "v1", "secrets", "Secret", true},
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
    {"", "v1", "nodes", "Node", false},
    {"", "v1", "pods", "Pod", true},
    {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false},
    {"node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
    {"networking.k8s.io", "v1", "ingressclasses", "IngressClass", false},
    {"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true},
};
#define NKNOWN (sizeof(known_kinds) / sizeof(known_kinds[0]))

struct adm_informer_s {
    uv_loop_t *loop;
    char *kubeconfig;      /* --kubeconfig's path; NULL: --in-cluster */
    adm_kube_config_t *kc; /* what the API client runs on: replaced by each reload that reads it */
    adm_api_client_t *api;
    adm_cluster_store_t *store;
    adm_reflector_t *reflectors[MAX_WATCHED];
    size_t n;
};

/* The row for "group/Kind", or NULL. */
static const adm_watched_kind_t *known(const char *group_kind)
{
    const char *slash = strchr(group_kind, '/');

    if (slash == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < NKNOWN; i++) {
        const adm_watched_kind_t *w = &known_kinds[i];

        if (strlen(w->group) == (size_t)(slash - group_kind) &&
            strncmp(w->group, group_kind, (size_t)(slash - group_kind)) == 0 &&
            strcmp(w->kind, slash + 1) == 0) {
            return w;
        }
    }
    return NULL;
}

static int watch_kind(adm_informer_t *inf, const adm_watched_kind_t *w)
{
    adm_kind_store_t *k;

    for (size_t i = 0; i < inf->n; i++) {
        if (adm_reflector_kind(inf->reflectors[i]) == w) {
            return 0;
        }
    }
    if (inf->n == MAX_WATCHED) {
        return ADM_ENOMEM;
    }
    k = adm_cluster_store_kind(inf->store, w->group, w->kind, w->namespaced);
    if (k == NULL) {
        return ADM_ENOMEM;
    }
    return adm_reflector_start(inf->loop, inf->api, w, k, &inf->reflectors[inf->n++]);
}

int adm_informer_watch(adm_informer_t *inf, const char *group_kind, char *err, size_t err_len)
{
    const adm_watched_kind_t *w = known(group_kind);
    int rc;

    if (w == NULL || inf->api == NULL) {
        snprintf(err, err_len, "informer: %s %s", w == NULL ? "admitd cannot watch" : "stopped: not watching",
                 group_kind);
        return ADM_EINVAL;
    }
    rc = watch_kind(inf, w);
    if (rc != 0) {
        snprintf(err, err_len, "informer: %s: %s", group_kind, adm_strerror(rc));
    }
    return rc;
}

/* Each kind an enabled plugin reads (adm_plugin_t.reads), in the plugins' order. */
static int watch_kinds(adm_informer_t *inf, const char *const *plugins, size_t n, char *err, size_t err_len)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < n; i++) {
        const adm_plugin_info_t *info = adm_plugin_find(plugins[i]);

        for (const char *const *r = info != NULL && info->plugin != NULL ? info->plugin->reads : NULL;
             rc == 0 && r != NULL && *r != NULL; r++) {
            if (known(*r) == NULL) {
                snprintf(err, err_len, "plugin %s reads %s, which admitd cannot watch", plugins[i], *r);
                return ADM_EINVAL;
            }
            rc = adm_informer_watch(inf, *r, err, err_len);
        }
    }
    return rc;
}

int adm_informer_create(uv_loop_t *loop, const char *kubeconfig, const char *const *plugins, size_t n,
                        adm_informer_t **out, char *err, size_t err_len)
{
    adm_informer_t *inf = calloc(1, sizeof(*inf));
    int rc;

    *out = NULL;
    if (inf == NULL) {
        snprintf(err, err_len, "informer: out of memory");
        return ADM_ENOMEM;
    }
    inf->loop = loop;
    inf->kubeconfig = kubeconfig != NULL ? strdup(kubeconfig) : NULL;
    if (kubeconfig != NULL && inf->kubeconfig == NULL) {
        free(inf);
        snprintf(err, err_len, "informer: out of memory");
        return ADM_ENOMEM;
    }
    rc = kubeconfig != NULL ? adm_kube_config_load(kubeconfig, &inf->kc, err, err_len)
                            : adm_kube_config_in_cluster(&inf->kc, err, err_len);
    if (rc == 0) {
        rc = adm_api_client_create(loop, inf->kc, &inf->api, err, err_len);
    }
    if (rc == 0) {
        inf->store = adm_cluster_store_create();
        if (inf->store != NULL) {
            adm_cluster_store_set_api(inf->store, inf->api); /* plugins' live calls */
        }
        rc = inf->store != NULL ? watch_kinds(inf, plugins, n, err, err_len) : ADM_ENOMEM;
    }
    if (rc != 0) {
        adm_informer_stop(inf);
        adm_informer_destroy(inf);
        return rc;
    }
    *out = inf;
    return 0;
}

adm_cluster_store_t *adm_informer_store(adm_informer_t *inf)
{
    return inf->store;
}

bool adm_informer_synced(void *arg)
{
    const adm_informer_t *inf = arg;

    for (size_t i = 0; i < inf->n; i++) {
        if (!adm_reflector_stats(inf->reflectors[i])->synced) {
            return false;
        }
    }
    return true;
}

/* One family: its HELP and TYPE, then one sample per kind of the value pick() reads. */
static int family(const adm_informer_t *inf, adm_buf_t *out, const char *name, const char *type,
                  const char *help, double (*pick)(const adm_informer_t *, const adm_reflector_stats_t *))
{
    char line[512];
    int n = snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);

    if (adm_buf_append(out, line, (size_t)n) != 0) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < inf->n; i++) {
        const adm_watched_kind_t *w = adm_reflector_kind(inf->reflectors[i]);

        n = snprintf(line, sizeof(line), "%s{group=\"%s\",kind=\"%s\"} %.17g\n", name, w->group, w->kind,
                     pick(inf, adm_reflector_stats(inf->reflectors[i])));
        if (n < 0 || (size_t)n >= sizeof(line) || adm_buf_append(out, line, (size_t)n) != 0) {
            return ADM_ENOMEM;
        }
    }
    return 0;
}

static double pick_synced(const adm_informer_t *inf, const adm_reflector_stats_t *st)
{
    (void)inf;
    return st->synced ? 1 : 0;
}

static double pick_relists(const adm_informer_t *inf, const adm_reflector_stats_t *st)
{
    (void)inf;
    return (double)st->relists;
}

static double pick_events(const adm_informer_t *inf, const adm_reflector_stats_t *st)
{
    (void)inf;
    return (double)st->events;
}

static double pick_errors(const adm_informer_t *inf, const adm_reflector_stats_t *st)
{
    (void)inf;
    return (double)st->errors;
}

static double pick_age(const adm_informer_t *inf, const adm_reflector_stats_t *st)
{
    return st->synced ? (double)(uv_now(inf->loop) - st->last_sync_ms) / 1000.0 : -1;
}

int adm_informer_metrics(void *arg, adm_buf_t *out)
{
    const adm_informer_t *inf = arg;

    if (family(inf, out, "admitd_informer_synced", "gauge",
               "1 once the kind's first LIST is applied (readiness waits for every kind)",
               pick_synced) != 0 ||
        family(inf, out, "admitd_informer_relists_total", "counter",
               "LISTs after the first (410 Gone, or a LIST that failed)", pick_relists) != 0 ||
        family(inf, out, "admitd_informer_events_total", "counter",
               "watch events applied, bookmarks included", pick_events) != 0 ||
        family(inf, out, "admitd_informer_errors_total", "counter",
               "LIST and WATCH failures that waited on the back-off", pick_errors) != 0 ||
        family(inf, out, "admitd_informer_last_sync_age_seconds", "gauge",
               "seconds since the last LIST or watch event applied (-1 before the first)", pick_age) != 0) {
        return ADM_ENOMEM;
    }
    return 0;
}

void adm_informer_stop(adm_informer_t *inf)
{
    if (inf == NULL) {
        return;
    }
    for (size_t i = 0; i < inf->n; i++) {
        adm_reflector_stop(inf->reflectors[i]);
    }
    inf->n = 0;
    if (inf->store != NULL) {
        adm_cluster_store_set_api(inf->store, NULL);
    }
    adm_api_client_close(inf->api);
    inf->api = NULL;
}

void adm_informer_destroy(adm_informer_t *inf)
{
    if (inf == NULL) {
        return;
    }
    adm_cluster_store_free(inf->store);
    adm_kube_config_free(inf->kc);
    free(inf->kubeconfig);
    free(inf);
}

/* ---- reload: the kubeconfig and the files it names, or the in-cluster files ------------------ */

typedef struct pending_s {
    adm_kube_config_t *kc;
    adm_api_update_t *update;
} pending_t;

static void pending_free(pending_t *p)
{
    adm_api_update_discard(p->update);
    adm_kube_config_free(p->kc);
    free(p);
}

/* The whole new configuration read and checked (PEMs, key pair, TLS context) before anything runs. */
static int part_prepare(void *arg, void **pending, char *err, size_t err_len)
{
    adm_informer_t *inf = arg;
    pending_t *p = calloc(1, sizeof(*p));
    int rc;

    *pending = NULL;
    if (p == NULL) {
        snprintf(err, err_len, "out of memory");
        return ADM_ENOMEM;
    }
    if (inf->api == NULL) {
        free(p);
        snprintf(err, err_len, "the informer has stopped");
        return ADM_EINVAL;
    }
    rc = inf->kubeconfig != NULL ? adm_kube_config_load(inf->kubeconfig, &p->kc, err, err_len)
                                 : adm_kube_config_in_cluster(&p->kc, err, err_len);
    if (rc == 0 && inf->kubeconfig == NULL && p->kc->ca_pem == NULL && inf->kc->ca_pem != NULL) {
        /* at start client-go goes on with the system roots; a running CA is not dropped for them */
        snprintf(err, err_len, "in-cluster: ca.crt: cannot be loaded (the warning above says why)");
        rc = ADM_EINVAL;
    }
    if (rc == 0) {
        rc = adm_api_client_prepare(inf->api, p->kc, &p->update, err, err_len);
    }
    if (rc != 0) {
        pending_free(p);
        return rc;
    }
    *pending = p;
    return 0;
}

static void part_commit(void *arg, void *pending)
{
    adm_informer_t *inf = arg;
    pending_t *p = pending;
    char old_server[320];
    adm_api_change_t change;

    snprintf(old_server, sizeof(old_server), "%s", adm_api_client_server(inf->api));
    change = adm_api_client_commit(inf->api, p->update);
    p->update = NULL;
    adm_kube_config_free(inf->kc);
    inf->kc = p->kc; /* its files are what is watched now */
    p->kc = NULL;
    pending_free(p);
    switch (change) {
    case ADM_API_SAME: return;
    case ADM_API_TOKEN:
        adm_log_info("API connection: new bearer token; the watches reconnect with it");
        break;
    case ADM_API_CREDENTIALS:
        adm_log_info("API connection: new TLS settings for %s; the watches reconnect with them (calls in "
                     "flight finish on their connections)",
                     adm_api_client_server(inf->api));
        break;
    case ADM_API_SERVER:
        adm_log_info("API connection: the server is now %s (was %s); every kind is listed again, the caches "
                     "serve what they hold until then",
                     adm_api_client_server(inf->api), old_server);
        break;
    }
    for (size_t i = 0; i < inf->n; i++) {
        adm_reflector_reconnect(inf->reflectors[i], change == ADM_API_SERVER);
    }
}

static void part_discard(void *arg, void *pending)
{
    (void)arg;
    pending_free(pending);
}

static void part_watch(void *arg, adm_reload_t *r)
{
    const adm_informer_t *inf = arg;

    /* the kubeconfig first, then the files it named (in-cluster: the token and ca.crt) */
    for (size_t i = 0; i < inf->kc->nfiles; i++) {
        adm_reload_watch(r, inf->kc->files[i]);
    }
}

int adm_informer_add_reload(adm_informer_t *inf, adm_reload_t *r)
{
    adm_reload_part_t part = {
        .name = "API connection",
        .prepare = part_prepare,
        .commit = part_commit,
        .discard = part_discard,
        .watch = part_watch,
        .arg = inf,
    };

    return adm_reload_add_part(r, &part);
}

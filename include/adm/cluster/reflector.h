/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One kind's informer loop, as client-go's reflector runs it (../shared/spec/list-watch.md §4):
 * a paged LIST (limit=500, continue) replaces the kind's store, then a WATCH from the list's
 * resourceVersion (allowWatchBookmarks, a timeoutSeconds drawn in [5, 10) minutes) applies each
 * event in order; a watch that ends is re-opened at once from the last resourceVersion; 410 (an
 * HTTP answer, an ERROR event, an expired continue token) means re-LIST; every other failure
 * (transport, 5xx, 401/403, 429, a stream that does not decode) waits on the back-off of
 * backoff.h (a 429's Retry-After wins) and is logged once per back-off step with the kind and
 * the verb. A 401 also makes the token file be read again. The store keeps serving the last good
 * state meanwhile.
 */
#ifndef ADM_REFLECTOR_H
#define ADM_REFLECTOR_H

#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_store.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* The page size of the reflector's LIST (client-go's defaultPageSize... for a pager: 500). */
#define ADM_REFLECTOR_PAGE 500

typedef struct adm_reflector_s adm_reflector_t;

/* A watched kind: where it is served and what it is called. */
typedef struct adm_watched_kind_s {
    const char *group;    /* "" for core */
    const char *version;  /* "v1" */
    const char *resource; /* plural, as in the URL: "namespaces" */
    const char *kind;     /* "Namespace" */
    bool namespaced;
} adm_watched_kind_t;

/* What /metrics and /readyz read of a reflector. */
typedef struct adm_reflector_stats_s {
    bool synced;           /* the first LIST has been applied */
    uint64_t lists;        /* LISTs applied (the first one and every relist) */
    uint64_t relists;      /* LISTs after the first (410, or after a failed LIST) */
    uint64_t events;       /* watch events applied (bookmarks included) */
    uint64_t errors;       /* failures that waited on the back-off */
    uint64_t last_sync_ms; /* loop time of the last LIST applied, or of the last event */
} adm_reflector_stats_t;

/**
 * Starts the loop for w (its strings are retained: static or outliving the reflector) into k,
 * calling through api. Returns 0 or ADM_ENOMEM; the first LIST goes out at once.
 */
int adm_reflector_start(uv_loop_t *loop, adm_api_client_t *api, const adm_watched_kind_t *w,
                        adm_kind_store_t *k, adm_reflector_t **out);

/*
 * A narrower watch than a whole kind (issue 18: one Service and its EndpointSlices), and who is told
 * of changes. Every member is optional (NULL).
 */
typedef struct adm_reflector_scope_s {
    const char *namespace_;     /* the objects of this namespace only (a namespaced kind) */
    const char *label_selector; /* labelSelector, e.g. "kubernetes.io/service-name=webhook" */
    const char *field_selector; /* fieldSelector, e.g. "metadata.name=webhook" */
    void (*changed)(void *arg); /* after each LIST applied and each event that changed k (never a
                                   bookmark); it may read k, and must not stop this reflector */
    void *arg;
} adm_reflector_scope_t;

/**
 * As adm_reflector_start, for the objects scope selects (its strings are copied); each LIST and
 * WATCH carries the namespace in its path and the selectors in its query, as client-go's
 * ListWatch with ListOptions does. Returns 0 or ADM_ENOMEM.
 */
int adm_reflector_start_scoped(uv_loop_t *loop, adm_api_client_t *api, const adm_watched_kind_t *w,
                               const adm_reflector_scope_t *scope, adm_kind_store_t *k,
                               adm_reflector_t **out);

/** Stops it (calls in flight are cancelled) and frees it once its timer has closed. NULL: no-op. */
void adm_reflector_stop(adm_reflector_t *r);

/** Its counters (valid until stop). */
const adm_reflector_stats_t *adm_reflector_stats(const adm_reflector_t *r);

/** The kind it watches. */
const adm_watched_kind_t *adm_reflector_kind(const adm_reflector_t *r);

/** The resourceVersion the next watch starts from ("" before the first LIST). */
const char *adm_reflector_resource_version(const adm_reflector_t *r);

/**
 * The path of w's collection, or of one object when name is not NULL (namespace_ for namespaced
 * kinds), into out: "/api/v1/namespaces", "/apis/scheduling.k8s.io/v1/priorityclasses". False when
 * it does not fit.
 */
bool adm_watched_kind_path(const adm_watched_kind_t *w, const char *namespace_, const char *name, char *out,
                           size_t out_len);

#endif

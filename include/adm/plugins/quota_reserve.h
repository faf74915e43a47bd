/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceQuota's reservation, kube's quotaEvaluator with its quotaAccessor
 * (apiserver/pkg/admission/plugin/resourcequota/controller.go, resource_access.go): with an API
 * connection a request that passes the quota check is admitted only once the usage it adds is
 * written to every quota it charges, by a PUT of the quota's status with the resourceVersion that
 * was read. A 409 Conflict (or any failed write) reads the namespace's quotas again, live, and
 * checks the requests still waiting against the new versions of the quotas whose write failed, up
 * to 3 times as kube retries; then they get the last write's error as the API server answered it.
 *
 * One namespace's requests are serialised as kube's work queue per namespace does: while a batch
 * of a namespace is being written, its new requests queue, and the whole queue is the next batch,
 * checked one request after another against the quotas as the batch before left them, with one
 * write per changed quota for the lot. So two requests never reserve from the same resourceVersion
 * in one admitd process; across processes (replicas, --workers, a reload's old and new chains)
 * the resourceVersion precondition makes one of them conflict and check again. Namespaces are
 * independent. Everything runs on the loop: the calls go through the API client asynchronously,
 * and each request waits as an ADM_AGAIN phase of the chain (plugin.h).
 *
 * A batch reads the quotas from the request's cluster state (the informer cache when watched),
 * each replaced by the version admitd last wrote when that one is newer (kube's updatedQuotas
 * look-aside cache of 100, resourceVersions compared as integers), so back-to-back batches do not
 * conflict with their own writes while the watch event is on its way.
 */
#ifndef ADM_PLUGINS_QUOTA_RESERVE_H
#define ADM_PLUGINS_QUOTA_RESERVE_H

#include "adm/admission/plugin.h"
#include "adm/plugins/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

/* How many times a batch reads its quotas again after a failed write (kube's checkQuotas(…, 3)). */
#define ADM_QUOTA_RETRIES 3
/* How long a request waits for its batch (kube's Evaluate), then "resource quota evaluation timed out". */
#define ADM_QUOTA_WAIT_MS 10000
/* Quotas whose written version is remembered (kube's updatedQuotas LRU). */
#define ADM_QUOTA_WRITTEN_MAX 100

/* One ResourceQuota as a check sees it. */
typedef struct adm_quota_s {
    yyjson_val *obj;        /* the object as read: spec for the scopes, the base of the status PUT */
    const char *name;       /* metadata.name */
    const char *rv;         /* metadata.resourceVersion ("" when absent) */
    adm_rlist_t hard, used; /* status.hard, status.used */
    bool usable;            /* both lists parse: kube-apiserver could not hold one that does not */
    bool changed;           /* the check charged it: status.used is no longer what was read */
    const void *prepared;   /* the plugin's own reading of obj kept with its parse, or NULL */
} adm_quota_t;

/** Reads obj into q (names and quantities point into obj). Returns 0 or ADM_ENOMEM. */
int adm_quota_read(adm_arena_t *a, yyjson_val *obj, adm_quota_t *q);

/*
 * The plugin's check of one request (kube's CheckRequest) against quotas[0..n): ADM_OK, with the
 * usage it adds put into the status.used of each quota it charges (allocated in a, names and all,
 * so the quotas outlive the request), those quotas marked changed and *charged set when there was
 * one; ADM_DECLINED with st filled in the request's arena; or ADM_ENOMEM. Nothing is changed unless
 * it returns ADM_OK.
 */
typedef int (*adm_quota_check_fn)(void *arg, adm_attrs_t *attrs, adm_arena_t *a, adm_quota_t *quotas,
                                  size_t n, adm_status_t *st, bool *charged);

typedef struct adm_quota_reserver_s adm_quota_reserver_t;

/** A reserver calling check(arg, ...) for each request. NULL when out of memory. */
adm_quota_reserver_t *adm_quota_reserver_create(adm_quota_check_fn check, void *arg);

/**
 * Frees r: calls still in flight for batches whose requests all left are cancelled. No request may
 * be waiting (each holds the chain whose plugin state r is). Once a request has been submitted, r
 * holds a timer on the loop, and its memory goes when that has closed: the loop must run again
 * (as it does at exit for every handle closed). NULL is a no-op.
 */
void adm_quota_reserver_free(adm_quota_reserver_t *r);

/**
 * The ResourceQuotas of the request's namespace as a batch reads them: from the request's cluster
 * state, each replaced by the version r wrote last when that is newer (r may be NULL: none; that
 * version is parsed into a). The others point into the cache, valid while the request is.
 * Returns 0 or ADM_ENOMEM; *out is NULL when *n is 0.
 */
int adm_quota_list(adm_quota_reserver_t *r, adm_attrs_t *attrs, adm_arena_t *a, adm_quota_t **out, size_t *n);

/**
 * Queues the request (which must have an API connection and not be a dry run) in its namespace's
 * batch. Returns ADM_AGAIN: adm_async_done(async, ...) follows once its usage is written or it is
 * refused, or when it has waited ADM_QUOTA_WAIT_MS or reached async->deadline_ms (500 "resource
 * quota evaluation timed out"), unless the chain cancels it first; or ADM_ENOMEM.
 */
int adm_quota_reserver_submit(adm_quota_reserver_t *r, adm_attrs_t *attrs, adm_async_t *async);

/*
 * Where adm_quota_list reads a request's quotas when its cluster state has none in the namespace:
 * the plugin's live LIST (kube's GetQuotas on an empty lister), held for the request; NULL and *n
 * 0 when there is none either.
 */
typedef yyjson_val *const *(*adm_quota_source_fn)(adm_attrs_t *attrs, size_t *n);

/** Makes adm_quota_list(r, ...) fall back on fn. */
void adm_quota_reserver_set_source(adm_quota_reserver_t *r, adm_quota_source_fn fn);

#endif

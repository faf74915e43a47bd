/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The calls to the API server a plugin makes inside a request where kube's plugin does (a live GET
 * on a cache miss, a create): through the API client of the request's cluster state, as an
 * ADM_AGAIN phase of the chain (plugin.h), never blocking the loop. The chain cancelling the
 * request cancels the call. Without an API connection there is no client, and plugins keep their
 * file-state behaviour.
 */
#ifndef ADM_PLUGINS_LIVE_CALL_H
#define ADM_PLUGINS_LIVE_CALL_H

#include "adm/admission/plugin.h"
#include "adm/cluster/watch_decode.h"
#include "adm/net/call_result.h"

#include <stdbool.h>
#include <yyjson.h>

/* How long a live call may take, whatever the request's own deadline (kube's would wait longer). */
#define ADM_LIVE_CALL_TIMEOUT_MS 2000

/*
 * A live call ended: res as the pool gives it, body its JSON (in the request's arena) or NULL when
 * the answer had none that parses, err a Go-worded error for an answer that did not come
 * (`Get "https://host/api/v1/namespaces/x": context deadline exceeded`), NULL otherwise. The
 * callback ends the phase with adm_async_done.
 */
typedef void (*adm_live_call_cb)(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res,
                                 yyjson_val *body, const char *err, void *arg);

/** True when the request has an API connection (--kubeconfig or --in-cluster, informer running). */
bool adm_live_call_possible(adm_attrs_t *attrs);

/**
 * Starts a GET of path (json NULL) or a POST of json, from /api or /apis on. Returns ADM_AGAIN (cb
 * runs later, once, unless the chain cancels), or ADM_ENOMEM.
 */
int adm_live_call(adm_attrs_t *attrs, adm_async_t *async, const char *path, const char *json,
                  adm_live_call_cb cb, void *arg);

/** A DNS-1123 label, as every namespace name is: anything else cannot exist (nor go in a URL). */
bool adm_live_namespace_name(const char *name);

/** A DNS-1123 subdomain, as most object names are: anything else cannot exist (nor go in a URL). */
bool adm_live_subdomain_name(const char *name);

/**
 * adm_live_call of GET /api/v1/namespaces/<the request's namespace>, which must pass
 * adm_live_namespace_name. ADM_AGAIN or ADM_ENOMEM.
 */
int adm_live_get_namespace(adm_attrs_t *attrs, adm_async_t *async, adm_live_call_cb cb, void *arg);

/**
 * The answer to adm_live_get_namespace as kube's namespace plugins read it (the arguments of
 * adm_live_call_cb): ADM_OK with *ns the namespace, or in st the 404 `namespaces "NS" not found`
 * or kube's internal error wrapping any other failure.
 */
int adm_live_namespace_result(adm_attrs_t *attrs, const adm_call_result_t *res, yyjson_val *body,
                              const char *err, adm_status_t *st, yyjson_val **ns);

/* What a page callback answers besides errors. */
#define ADM_LIVE_LIST_NEXT 0 /* go on with the next page, if there is one */
#define ADM_LIVE_LIST_STOP 1 /* the caller has what it needs: the list ends here, successfully */

/**
 * One page of a live LIST: its items, continue token and remainingItemCount (page), parsed into
 * scratch, an arena that is reset once the callback returns (copy what must outlive the page
 * elsewhere). Returns ADM_LIVE_LIST_NEXT, ADM_LIVE_LIST_STOP, or a negative code that ends the
 * list as failed (-ETIMEDOUT: as a call past its deadline; ADM_ENOMEM: out of memory).
 */
typedef int (*adm_live_page_cb)(adm_attrs_t *attrs, const adm_list_page_t *page, adm_arena_t *scratch,
                                void *arg);

/**
 * A live LIST ended: rc 0 when every page was taken (or a page callback stopped it), ADM_ENOMEM,
 * or another negative code with err a Go-worded error (`Get "https://host/api/v1/namespaces/x/
 * pods?limit=500": context deadline exceeded`, a Status's message, a page that does not decode).
 * The callback ends the phase with adm_async_done.
 */
typedef void (*adm_live_list_cb)(adm_attrs_t *attrs, adm_async_t *async, int rc, const char *err, void *arg);

/**
 * Starts a paged LIST of path (a collection from /api or /apis on, without a query): GETs of
 * path?limit=<limit> and then &continue=<token>, one page after the other, each answer parsed into
 * one scratch arena that only ever holds the page being taken. deadline_ms (adm_plugin_now_ms's
 * scale) bounds the whole LIST: each page's call gets what is left of it, and none starts once it
 * has passed. Returns ADM_AGAIN (done runs later, once, unless the chain cancels, which cancels the
 * page in flight) or ADM_ENOMEM.
 */
int adm_live_list(adm_attrs_t *attrs, adm_async_t *async, const char *path, unsigned limit,
                  uint64_t deadline_ms, adm_live_page_cb page, adm_live_list_cb done, void *arg);

/**
 * The message of kube's client error for a non-2xx answer: the Status's message when the body is
 * one, else client-go's "an error on the server (...) has prevented the request from succeeding".
 */
const char *adm_live_call_error(adm_attrs_t *attrs, const adm_call_result_t *res, yyjson_val *body);

/**
 * Refuses the request with the client's error as kube's plugins return it unwrapped: for a call
 * that failed (res and body as adm_live_call_cb got them), the API server's Status as it came
 * (code, reason, message, details), else the code and adm_live_call_error's text; for an answer
 * that did not come (err), a 500 with err. Returns ADM_DECLINED, or ADM_ENOMEM.
 */
int adm_live_call_refuse(adm_attrs_t *attrs, adm_status_t *st, const adm_call_result_t *res, yyjson_val *body,
                         const char *err);

#endif

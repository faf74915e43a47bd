/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's client of the Kubernetes API server, on the upstream pool of upstream.h (no second HTTP
 * or TLS stack): the TLS client context built from a resolved kubeconfig (adm_kube_config_t: CA,
 * client certificate and key, from files or inline *-data), the bearer token from its token source
 * (re-read as client-go does; a 401 forces a re-read), Accept: application/json and a User-Agent
 * naming admitd. Short calls (LIST pages, GET, POST, PUT) and watches use two upstreams on the same TLS
 * context, so a watch that holds its connection for minutes never takes one a short call needs
 * (list-watch.md §7).
 *
 * A reload gives the client a new kubeconfig in two steps, as adm/base/reload.h runs them:
 * adm_api_client_prepare builds everything that can fail (the TLS context, the upstreams, the token)
 * and says what changed; adm_api_client_commit swaps it in and cannot fail. The client object stays
 * the same, so whoever holds it (reflectors, the plugins' live calls) keeps it: calls begun before
 * the swap finish on the connections they have, calls begun after it use the new settings, and the
 * replaced upstreams close once their last call is over.
 */
#ifndef ADM_API_CLIENT_H
#define ADM_API_CLIENT_H

#include "adm/cluster/kubeconfig.h"
#include "adm/net/upstream.h"

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct adm_api_client_s adm_api_client_t;

/**
 * A client of the API server kc describes (kc is read, not retained). Returns 0, or a negative code
 * with one line in err naming kc->source and the field at fault (a PEM mbedTLS refuses).
 */
int adm_api_client_create(uv_loop_t *loop, const adm_kube_config_t *kc, adm_api_client_t **out, char *err,
                          size_t err_len);

/** Closes every upstream (calls in flight end with ADM_CALL_IO) and frees the client. NULL: no-op. */
void adm_api_client_close(adm_api_client_t *c);

/**
 * A GET of path (from /api or /apis on; the kubeconfig's server path goes before it), its answer
 * whole. *started_ms receives the loop time the call took its token at, for adm_api_unauthorized.
 * Returns the call, or NULL when out of memory (cb never runs then).
 */
adm_call_t *adm_api_get(adm_api_client_t *c, const char *path, uint64_t timeout_ms, adm_call_cb cb, void *arg,
                        uint64_t *started_ms);

/** A watch: as adm_upstream_stream on the watch upstream, otherwise as adm_api_get. */
adm_call_t *adm_api_watch(adm_api_client_t *c, const char *path, uint64_t timeout_ms, adm_call_chunk_cb chunk,
                          adm_call_cb cb, void *arg, uint64_t *started_ms);

/** A POST of a JSON body (a create), otherwise as adm_api_get. */
adm_call_t *adm_api_post(adm_api_client_t *c, const char *path, const char *json, size_t len,
                         uint64_t timeout_ms, adm_call_cb cb, void *arg, uint64_t *started_ms);

/**
 * A PUT of a JSON body (an update: a status write with the resourceVersion it read), otherwise as
 * adm_api_post.
 */
adm_call_t *adm_api_put(adm_api_client_t *c, const char *path, const char *json, size_t len,
                        uint64_t timeout_ms, adm_call_cb cb, void *arg, uint64_t *started_ms);

/** A call that took its token at started_ms was answered 401: the token file is read again. */
void adm_api_unauthorized(adm_api_client_t *c, uint64_t started_ms);

/** The loop the client's calls run on. */
uv_loop_t *adm_api_client_loop(const adm_api_client_t *c);

/** Where the server is, for log lines ("https://10.0.0.1:443"). */
const char *adm_api_client_server(const adm_api_client_t *c);

/* What a new kubeconfig changes for the calls, from least to most. */
typedef enum adm_api_change_e {
    ADM_API_SAME,        /* nothing a call is made from */
    ADM_API_TOKEN,       /* the bearer token, or the file it is read from */
    ADM_API_CREDENTIALS, /* the TLS side (trust, client certificate and key, server name) and maybe the
                            token; the server URL is the same */
    ADM_API_SERVER,      /* the server URL: another API server, whose resourceVersions mean nothing here */
} adm_api_change_t;

typedef struct adm_api_update_s adm_api_update_t;

/**
 * Builds what c needs to call as kc says (kc is read, not retained): a new TLS context and upstreams
 * when the server or its TLS settings differ, the token. Nothing changes in c. Returns 0 and *out,
 * or an error with one line in err as for create.
 */
int adm_api_client_prepare(adm_api_client_t *c, const adm_kube_config_t *kc, adm_api_update_t **out,
                           char *err, size_t err_len);

/** What u would change. */
adm_api_change_t adm_api_update_change(const adm_api_update_t *u);

/**
 * Makes u (from prepare on c) what c calls with, and frees u. Calls in flight finish on the
 * connections they have; the replaced upstreams close once their calls are over (watches are the
 * caller's to end: a reflector reconnects). Returns u's change.
 */
adm_api_change_t adm_api_client_commit(adm_api_client_t *c, adm_api_update_t *u);

/** Frees u unused (another part of the reload failed). NULL: no-op. */
void adm_api_update_discard(adm_api_update_t *u);

/* Observers a commit tells of its change (when not ADM_API_SAME), after the swap. */
#define ADM_API_OBSERVERS_MAX 4
typedef void (*adm_api_changed_fn)(void *arg, adm_api_change_t change);

/**
 * Has fn(arg, change) called after each commit that changes something, so that watches the
 * informer does not own (a webhook Service's, service_watch.h) reconnect with the new credentials
 * or list again from a new server. 0, or ADM_ETOOBIG past ADM_API_OBSERVERS_MAX.
 */
int adm_api_client_observe(adm_api_client_t *c, adm_api_changed_fn fn, void *arg);

/** Forgets what adm_api_client_observe(c, fn, arg) registered. */
void adm_api_client_unobserve(adm_api_client_t *c, adm_api_changed_fn fn, void *arg);

#endif

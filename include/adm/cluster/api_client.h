/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's client of the Kubernetes API server, on the upstream pool of upstream.h (no second HTTP
 * or TLS stack): the TLS client context built from a resolved kubeconfig (adm_kube_config_t: CA,
 * client certificate and key, from files or inline *-data), the bearer token from its token source
 * (re-read as client-go does; a 401 forces a re-read), Accept: application/json and a User-Agent
 * naming admitd. Short calls (LIST pages, GET, POST, PUT) and watches use two upstreams on the same TLS
 * context, so a watch that holds its connection for minutes never takes one a short call needs
 * (list-watch.md §7).
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

/** Closes both upstreams (calls in flight end with ADM_CALL_IO) and frees the client. NULL: no-op. */
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

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The downstream webhooks at run time: the loaded configurations, one client
 * pool per upstream, and one call to one webhook with kube-apiserver's exact interpretation of the
 * answer (spec/webhook-dispatch.md sections 2 to 4). The MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook plugins decide which webhooks to call and what to do with the
 * results.
 */
#ifndef ADM_WEBHOOKS_H
#define ADM_WEBHOOKS_H

#include "adm/admission/admission.h"
#include "adm/base/buf.h"
#include "adm/base/histogram.h"
#include "adm/base/options.h"
#include "adm/webhook/config.h"
#include "adm/webhook/webhook.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct adm_webhooks_s adm_webhooks_t;
struct uv_loop_s; /* libuv's loop: its users include uv.h, the plugins that include this need not */

/**
 * Loads --webhook-config and prepares a
 * pool per upstream (TLS trust from caBundle or the system CAs, --resolve addresses). No
 * connection is opened yet. Returns 0, or ADM_EINVAL / ADM_EIO / ADM_ENOMEM with one line in err.
 */
int adm_webhooks_create(struct uv_loop_s *loop, const adm_options_t *opts, adm_webhooks_t **out, char *err,
                        size_t err_len);

/** Closes the pools (calls in flight end) and frees; the loop must run afterwards for the sockets. */
void adm_webhooks_destroy(adm_webhooks_t *w);

/**
 * A reload replaced w and no request uses it any more: on a later turn of the loop, once the calls
 * still running in the background (abandoned, Decision D3) have finished and been counted, w is
 * destroyed, closing its idle connections. Until then it is on the list *retiring (a list head
 * the caller keeps, NULL when empty), which adm_webhooks_destroy_retiring empties at shutdown.
 */
void adm_webhooks_retire(adm_webhooks_t *w, adm_webhooks_t **retiring);

/** Destroys every webhooks object still on the list *retiring now, cutting their calls. */
void adm_webhooks_destroy_retiring(adm_webhooks_t **retiring);

/** Logs what was loaded: hooks per type and the loader's warnings. */
void adm_webhooks_log_summary(const adm_webhooks_t *w);

struct adm_plugin_config_s;

/**
 * The configure hooks of MutatingAdmissionWebhook and ValidatingAdmissionWebhook: their state is
 * cfg->webhooks. Their configuration is kube-apiserver's WebhookAdmissionConfiguration
 * (apiserver.config.k8s.io/v1 or v1alpha1; legacy kind WebhookAdmission in v1alpha1), whose
 * kubeConfigFile gives the client credentials of that plugin's webhook calls, per host
 * (INTERFACE.md D13, webhook/kubeconfig.h). Without a configuration they return 0. Errors are
 * ADM_EINVAL / ADM_EIO with one line in err (a kubeconfig admitd cannot honour: exec or
 * auth-provider plugins, impersonation), or ADM_ENOMEM.
 */
int adm_webhooks_configure_mutating(const struct adm_plugin_config_s *cfg, void **state, char *err,
                                    size_t err_len);
int adm_webhooks_configure_validating(const struct adm_plugin_config_s *cfg, void **state, char *err,
                                      size_t err_len);

/** Calls fn for every file w's credentials were read from (what a reload watches). */
void adm_webhooks_files(const adm_webhooks_t *w, void (*fn)(void *arg, const char *path), void *arg);

const adm_webhook_set_t *adm_webhooks_set(const adm_webhooks_t *w);

/**
 * True when a webhook of w reads namespace labels: one of its mutating webhooks (when mutating) or
 * validating ones (when validating) has a namespaceSelector that does not select everything. The
 * informer then watches Namespaces (informer.h).
 */
bool adm_webhooks_select_namespaces(const adm_webhooks_t *w, bool mutating, bool validating);

/**
 * Endpoint spreading at run time (issue 18): the calls to host:port (a webhook's service
 * "NAME.NAMESPACE.svc" and port, or a URL's host and port) go to exactly these n addresses (each
 * with its own port, e.g. a Service's ready endpoints from its EndpointSlices), replacing what
 * --resolve or earlier calls gave. TLS still verifies host. Each call goes to the address with the
 * fewest calls outstanding (ties in turn), so:
 *  - an added address takes its share from the next call on;
 *  - a removed address gets no new call; its calls in flight finish on their connections, then its
 *    connections close (on a later turn of the loop);
 *  - an address kept keeps its warm connections.
 * At most 64 addresses per upstream, draining ones included. Returns how many upstreams (pools of
 * host:port, one per trust) took the set, 0 when none is host:port; ADM_EINVAL when n is 0 (the
 * running set stays), ADM_ETOOBIG or ADM_ENOMEM (the running set stays, with what was added). Call
 * it on w's loop, never from inside a webhook call's callback. A reload builds a new w from the
 * files: the caller sets its addresses again on the new one.
 */
int adm_webhooks_set_addresses(adm_webhooks_t *w, const char *host, uint16_t port,
                               const struct sockaddr_storage *addrs, size_t n);

/**
 * The calls to host:port fail from now on, each at once (reported on the next loop turn) as a
 * connection that met reason would fail: `failed calling webhook "N": failed to call webhook: Post
 * "URL": REASON`, and the webhook's failurePolicy decides. For a Service kube-apiserver could not
 * call either (no ready endpoint, no such Service or port). label names it in metrics (the
 * ClusterIP:port, or ""). The addresses it replaces drain as above. Returns as
 * adm_webhooks_set_addresses.
 */
int adm_webhooks_refuse_calls(adm_webhooks_t *w, const char *host, uint16_t port, const char *label,
                              const char *reason);

/**
 * The calls to host:port go to host's name again, resolved on each dial (an ExternalName Service,
 * whose name cluster DNS answers as kube's call does); the addresses it replaces drain as above.
 * Returns as adm_webhooks_set_addresses.
 */
int adm_webhooks_resolve_by_name(adm_webhooks_t *w, const char *host, uint16_t port);

/**
 * Calls fn once per webhook named by service (namespace, name, port; host "NAME.NAMESPACE.svc")
 * whose calls can go out (a usable client config) and whose host:port no --resolve pins: what the
 * EndpointSlice watches feed. The same Service and port may come more than once.
 */
void adm_webhooks_services(const adm_webhooks_t *w,
                           void (*fn)(void *arg, const char *namespace_, const char *name, uint16_t port,
                                      const char *host),
                           void *arg);

/* What one call came to (spec 3.6). */
typedef enum adm_hook_outcome_e {
    ADM_HOOK_ALLOWED,
    ADM_HOOK_DENIED, /* status: the webhook's rejection, made user-visible (spec 3.5) */
    ADM_HOOK_FAILED, /* a call failure: reason; failurePolicy decides */
    ADM_HOOK_ERROR,  /* status: not subject to failurePolicy (dry run refused, ...) */
} adm_hook_outcome_t;

typedef struct adm_hook_result_s {
    adm_hook_outcome_t outcome;
    adm_status_t status;
    const char *reason;     /* FAILED: the text after `failed calling webhook "NAME": ` */
    yyjson_val *patch;      /* ALLOWED from a mutating webhook: the JSON Patch array, or NULL */
    const char *patch_type; /* with patch: as the webhook sent it (v1beta1: "JSONPatch") */
    const char **warnings;  /* as returned (checked, deduplicated and cut by adm_attrs_add_warning) */
    size_t nwarnings;
    adm_review_annotation_t *annotations; /* keys already "NAME.KEY" and valid */
    size_t nannotations;
    uint64_t latency_ns;
    /* the webhook's circuit breaker in this call (for the decision trace): "open" when it refused
       the call, "half-open-probe" when the call was its probe; NULL otherwise */
    const char *circuit;
} adm_hook_result_t;

typedef void (*adm_hook_done_fn)(void *arg, adm_hook_result_t *res);

typedef struct adm_hook_call_s adm_hook_call_t;

/*
 * The request as sent to webhooks: built once per admission request and object version, then
 * each call stamps its own fresh uid into a copy.
 */
typedef struct adm_hook_body_s {
    const char *v1, *v1beta1; /* the serialised AdmissionReviews (lazily, NULL until needed) */
    size_t v1_len, v1beta1_len;
    size_t v1_uid_off, v1beta1_uid_off;
    yyjson_val *object; /* the object the body carries */
} adm_hook_body_t;

/**
 * Calls webhook wh about req with body (object as it should be sent), answering by deadline_ms
 * (loop time). Memory from a. Returns the call, with done to run once later; or NULL with *now
 * filled when the outcome is known without a call (a dry run refused, no time left, no client).
 */
adm_hook_call_t *adm_hook_call_start(adm_webhooks_t *w, const adm_webhook_t *wh,
                                     const adm_review_request_t *req, adm_hook_body_t *body, adm_arena_t *a,
                                     uint64_t deadline_ms, adm_hook_done_fn done, void *arg,
                                     adm_hook_result_t *now);

/**
 * The result is no longer wanted (the request was answered or cancelled): done will not run. The
 * call itself goes on to its end, as kube-apiserver's would (Decision D3); its answer is then
 * read, counted in the webhook's statistics (adm_hook_stats_count) and logged at --v 1.
 */
void adm_hook_call_abandon(adm_hook_call_t *call);

/** Sets up body for the object (NULL: none) without serialising anything yet. */
void adm_hook_body_init(adm_hook_body_t *body, yyjson_val *object);

/** Appends an annotation (key, value), dropping a key already present with another value. */
void adm_hook_add_annotation(adm_arena_t *a, adm_review_annotation_t **list, size_t *n, size_t *cap,
                             const char *key, const char *value);

/** Adds a webhook result's warnings and audit annotations to what the answer will carry. */
void adm_hook_merge_extras(adm_attrs_t *attrs, const adm_hook_result_t *r);

/** The annotation key kube-apiserver uses with '/' made '.', shortened to 63 characters (INTERFACE.md). */
const char *adm_hook_annotation_key(adm_arena_t *a, const char *prefix, unsigned round, size_t index);

/* The configuration annotation that makes every webhook of a configuration a shadow webhook. */
#define ADM_SHADOW_ANNOTATION "proxy.admitd.io/shadow"

/*
 * A shadow webhook's result, which never decides (issue 18): counted (patches too) and logged
 * (at info when it denied, failed or would have patched; else at --v 1). Returns the value of its
 * audit annotation, a JSON object {configuration, webhook, outcome, latencyMs, and code and
 * message, reason, or patch (or patchBytes when over 4 KiB)}, in the arena; NULL when out of
 * memory.
 */
const char *adm_hook_shadow_note(adm_webhooks_t *w, adm_arena_t *a, const adm_webhook_t *wh,
                                 const adm_hook_result_t *r);

/*
 * What happened to each downstream webhook since start: kept now for the metrics of the
 * observability work (INTERFACE.md admitd_webhook_*), and readable by tests and tools.
 */
typedef struct adm_hook_stats_s {
    uint64_t calls;          /* calls that reached the network */
    uint64_t outcomes[4];    /* by adm_hook_outcome_t, calls and immediate outcomes alike */
    uint64_t rejected;       /* answers that rejected (denied, refused, failed closed) */
    uint64_t failed_open;    /* call failures ignored under failurePolicy Ignore */
    uint64_t shadow_patches; /* shadow webhooks: answers with a patch that was not applied */
    adm_hist_t latency;      /* of the calls, in ns */
} adm_hook_stats_t;

/**
 * Appends the proxy's own metric families (for adm_server_add_metrics; arg is w), each only when
 * some webhook has what it describes:
 *   admitd_webhook_circuit_state{name,type} (0 closed, 1 open, 2 half-open),
 *   admitd_webhook_circuit_opened_total, admitd_webhook_circuit_refused_total (breakers);
 *   admitd_webhook_shadow_calls_total{name,type,outcome}, admitd_webhook_shadow_patches_total,
 *   admitd_webhook_shadow_latency_seconds{name,type,quantile="0.5"|"0.99"} (shadow webhooks);
 *   admitd_webhook_endpoint_calls_total{upstream,address}, admitd_webhook_endpoint_outstanding
 *   (upstreams spread over several --resolve addresses, or over a Service's endpoints).
 * Returns 0 or ADM_ENOMEM.
 */
int adm_webhooks_proxy_metrics(void *w, adm_buf_t *out);

/** The statistics of wh (a webhook of w's set). */
adm_hook_stats_t *adm_webhooks_stats(adm_webhooks_t *w, const adm_webhook_t *wh);

/**
 * Counts what a result did, as kube-apiserver's metrics count every webhook that answered: a call
 * failure under failurePolicy Ignore failed open; a denial, a refusal or any other call failure
 * is a rejection (also when another webhook's answer had already decided the request).
 */
void adm_hook_stats_count(adm_hook_stats_t *stats, const adm_webhook_t *wh, const adm_hook_result_t *r);

/** The 500 of a fail-closed call failure: `Internal error occurred: failed calling webhook "N": R`. */
int adm_hook_failure_status(adm_status_t *st, adm_arena_t *a, const adm_webhook_t *wh, const char *reason);

/** 504 Timeout: the caller's deadline passed before the webhooks could be called (spec 4.2). */
int adm_hook_timeout_status(adm_status_t *st);

#endif

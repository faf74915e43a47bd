/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by webhooks.c (set-up) and call.c (calls). */
#ifndef ADM_WEBHOOKS_INTERNAL_H
#define ADM_WEBHOOKS_INTERNAL_H

#include "adm/base/util.h"
#include "adm/net/upstream.h"
#include "adm/webhook/breaker.h"
#include "adm/webhook/kubeconfig.h"
#include "adm/webhook/webhooks.h"

/* The addresses one upstream may be spread over (--resolve, adm_webhooks_set_addresses), draining
   ones included. */
#define ADM_HOOK_ENDPOINTS_MAX 64

/* One address of an upstream, with its own keep-alive pool. */
typedef struct adm_hook_endpoint_s {
    adm_upstream_t *up; /* NULL: a free slot (a removed address that drained) */
    bool draining;      /* removed: no new call; closed once outstanding is 0 */
    char address[64];   /* "10.0.0.1:443", for metrics; "" when resolved by name */
    char *refuse;       /* heap: the text its calls fail with (a Service kube could not call), or NULL */
    size_t outstanding; /* calls sent to it and not yet answered */
    uint64_t calls;     /* calls sent to it since start */
    uint64_t last_pick; /* the upstream's pick count when it was last chosen (0: never) */
} adm_hook_endpoint_t;

/*
 * An upstream (scheme, host, port, trust), shared by the webhooks that name it. With several
 * addresses, each call goes to the endpoint with the fewest calls outstanding, ties taken in
 * turn (the one chosen longest ago), so a slow address gets fewer calls and equal ones get equal shares.
 */
typedef struct adm_hook_upstream_s {
    adm_hook_endpoint_t endpoints[ADM_HOOK_ENDPOINTS_MAX];
    size_t nendpoints; /* slots used, free ones (up NULL) included */
    uint64_t picks;    /* choices made so far: ties go to the endpoint chosen longest ago */
    bool routed;       /* its set was given at run time (a Service's endpoints): shown in metrics */
    adm_tls_ctx_t *tls;
    char host[256];
    uint16_t port;
} adm_hook_upstream_t;

typedef struct adm_hook_client_s {
    adm_hook_upstream_t *target; /* NULL when error is set */
    char *error;                 /* "could not get REST client: ..." for every call, or NULL */
    char *url_base;              /* "https://host[:port]" as Go prints the URL in errors */
    char *path;                  /* cleaned path the webhook is posted to */
    char *headers;               /* the extra header lines of its calls (User-Agent, Authorization) */
    adm_hook_stats_t stats;
    adm_breaker_t breaker; /* threshold 0 when the webhook has none */
} adm_hook_client_t;

typedef struct adm_hook_trust_s {
    const char *ca_bundle;       /* NULL: the system CAs */
    const adm_kube_user_t *user; /* whose client certificate it presents (D13), or NULL */
    adm_tls_ctx_t *ctx;
} adm_hook_trust_t;

/*
 * A call whose caller left before its answer (the request was decided or cancelled, Decision D3):
 * the call runs to its end and its answer still counts in the webhook's statistics and logs. It
 * lives off the request's arena, which is gone by then, on the list of its adm_webhooks_t.
 */
typedef struct adm_hook_late_s {
    struct adm_hook_late_s *prev, *next;
    adm_webhooks_t *w; /* NULL once w is destroyed: the answer is then only freed */
    const adm_webhook_t *wh;
    adm_review_version_t version;
    char uid[37];
    uint64_t started_ns;
    adm_operation_t operation;
    bool probe;              /* the call is its breaker's half-open probe */
    adm_hook_endpoint_t *ep; /* where it went: its outstanding count drops at the answer */
    char url[];              /* for messages, as the call had it */
} adm_hook_late_t;

struct adm_webhooks_s {
    uv_loop_t *loop;
    const adm_options_t *opts;
    adm_webhook_set_t *set;
    adm_hook_client_t *clients[2]; /* [0] mutating, [1] validating, parallel to the hook lists */
    adm_hook_upstream_t *upstreams;
    size_t nupstreams;
    adm_hook_trust_t *trust;
    size_t ntrust;
    adm_hook_late_t *late; /* abandoned calls still running */
    /* Decision D13: each plugin's kubeConfigFile ([0] mutating, [1] validating), in kc_arena */
    adm_kubeconfig_t kubeconfig[2];
    bool has_kubeconfig[2];
    adm_arena_t *kc_arena;
    /* Replaced by a reload (adm_webhooks_retire): destroyed from retire_timer once late is empty. */
    bool retired;
    uv_timer_t retire_timer;
    adm_webhooks_t **retiring; /* the list w is on while retired */
    adm_webhooks_t *retiring_prev, *retiring_next;
    adm_uuid_gen_t uids; /* every call's fresh uid (call.c); zeroed by calloc, it is ready */
    uv_timer_t *sweep;   /* heap (data NULL once w is gone): closes drained endpoints; NULL until used */
};

/* webhooks.c: a retired w's last abandoned call ended (call.c). */
void adm__webhooks_late_drained(adm_webhooks_t *w);
/* endpoints.c: the endpoint of target for the next call (fewest outstanding, ties in turn; never a
   draining one). */
adm_hook_endpoint_t *adm__hook_pick_endpoint(adm_hook_upstream_t *target);
/* endpoints.c: a call to ep ended (its outstanding count already dropped); w may be NULL (gone). */
void adm__hook_endpoint_released(adm_webhooks_t *w, adm_hook_endpoint_t *ep);
/* endpoints.c: at destroy, the sweep timer is let go. */
void adm__hook_endpoints_destroy(adm_webhooks_t *w);
/* endpoints.c: ep's pool closed (at destroy, or drained): what ep holds is freed, the slot zeroed. */
void adm__hook_endpoint_clear(adm_hook_endpoint_t *ep);

/* call.c: the client's callback for a webhook call. */
void adm__hook_on_answer(const adm_call_result_t *res, void *arg);

/* call.c: reads an answer as a call would (for the fuzzer). */
void adm__hook_interpret(adm_arena_t *a, const adm_webhook_t *wh, adm_review_version_t version,
                         const char *uid, const adm_call_result_t *res, adm_hook_result_t *r);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Maps requests to endpoints: the admission paths (/mutate, /validate, /admit), the probes
 * (/healthz, /livez, /readyz) and /metrics. Which paths a listener serves depends on its kind, so the
 * plain-HTTP health and metrics listeners never expose admission.
 *
 * Admission paths run the compiled-in plugin chain: /mutate the mutating phase, /validate the
 * validating phase, /admit both, as kube-apiserver runs them.
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/admission/review.h"
#include "adm/base/util.h"
#include "../server/server_internal.h"

#include <string.h>
#include <strings.h>

#define ON_ADMISSION (1u << ADM_LISTENER_ADMISSION)
#define ON_HEALTH (1u << ADM_LISTENER_HEALTH)
#define ON_METRICS (1u << ADM_LISTENER_METRICS)

static const struct route {
    const char *path;
    adm_endpoint_t endpoint;
    unsigned listeners; /* bit per adm__listener_kind_t */
    bool admission;     /* POST with an AdmissionReview; else GET/HEAD probe */
} routes[] = {
    {"/mutate", ADM_EP_MUTATE, ON_ADMISSION, true},
    {"/validate", ADM_EP_VALIDATE, ON_ADMISSION, true},
    {"/admit", ADM_EP_ADMIT, ON_ADMISSION, true},
    {"/healthz", ADM_EP_HEALTHZ, ON_ADMISSION | ON_HEALTH, false},
    {"/livez", ADM_EP_LIVEZ, ON_ADMISSION | ON_HEALTH, false},
    {"/readyz", ADM_EP_READYZ, ON_ADMISSION | ON_HEALTH, false},
    {"/metrics", ADM_EP_METRICS, ON_ADMISSION | ON_METRICS, false},
};

static const struct route *find_route(const adm_conn_t *c, const char *path)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if ((routes[i].listeners & (1u << c->listener->kind)) != 0 && strcmp(routes[i].path, path) == 0) {
            return &routes[i];
        }
    }
    return NULL;
}

static void text_answer(adm_http_response_t *resp, int status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = text;
    resp->body_len = strlen(text);
}

/* "application/json", optionally with parameters ("; charset=utf-8"), any letter case. */
static bool is_json_content_type(const char *ct)
{
    size_t n = strlen("application/json");

    if (ct == NULL) {
        return false;
    }
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    if (strncasecmp(ct, "application/json", n) != 0) {
        return false;
    }
    ct += n;
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    return *ct == '\0' || *ct == ';';
}

/* A handler set on the server takes every admission-listener path but the probes and /metrics. */
static bool for_handler(const adm_conn_t *c, const struct route *rt)
{
    return c->server->handler != NULL && c->listener->kind == ADM_LISTENER_ADMISSION && (rt == NULL || rt->admission);
}

int adm__route_check(adm_conn_t *c, const adm_http_request_t *r, adm_http_response_t *resp)
{
    const struct route *rt = find_route(c, r->path);

    c->endpoint = rt != NULL ? rt->endpoint : ADM_EP_OTHER;
    if (for_handler(c, rt)) {
        return 0;
    }
    if (rt == NULL) {
        text_answer(resp, 404, "404 page not found\n");
        return ADM_DECLINED;
    }
    if (rt->admission) {
        if (r->method != HTTP_POST) {
            text_answer(resp, 405, "method not allowed: admission endpoints take POST\n");
            resp->allow = "POST";
            return ADM_DECLINED;
        }
        if (c->server->opts->client_ca_file != NULL && !c->peer_verified) {
            text_answer(resp, 401, "a verified client certificate is required\n");
            return ADM_DECLINED;
        }
        if (!is_json_content_type(r->content_type)) {
            text_answer(resp, 415, "Content-Type must be application/json\n");
            return ADM_DECLINED;
        }
        return 0;
    }
    if (r->method != HTTP_GET && r->method != HTTP_HEAD) {
        text_answer(resp, 405, "method not allowed: use GET\n");
        resp->allow = "GET, HEAD";
        return ADM_DECLINED;
    }
    return 0;
}

/* Finds NAME=VALUE in a query string; returns VALUE (arena copy) or NULL. */
static const char *query_param(adm_arena_t *a, const char *query, const char *name)
{
    size_t name_len = strlen(name);

    while (*query != '\0') {
        const char *end = strchr(query, '&');
        size_t len = end != NULL ? (size_t)(end - query) : strlen(query);

        if (len > name_len && strncmp(query, name, name_len) == 0 && query[name_len] == '=') {
            return adm_arena_strndup(a, query + name_len + 1, len - name_len - 1);
        }
        query += len;
        if (*query == '&') {
            query++;
        }
    }
    return NULL;
}

static unsigned phases_of(adm_endpoint_t endpoint)
{
    switch (endpoint) {
    case ADM_EP_MUTATE:
        return ADM_PHASE_MUTATING;
    case ADM_EP_VALIDATE:
        return ADM_PHASE_VALIDATING;
    default:
        return ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING;
    }
}

/* An admission request while the chain runs; lives in the exchange's arena. */
typedef struct admission_s {
    adm_exchange_t *x;
    adm_review_request_t review;
    adm_chain_run_t *run;
} admission_t;

static void on_chain_done(void *arg, adm_review_response_t *answer)
{
    admission_t *ad = arg;
    adm_arena_t *a = adm_exchange_arena(ad->x);
    adm_http_response_t resp = {0};
    const char *body;
    size_t body_len;

    if (adm_review_encode(a, ad->review.version, ad->review.uid, answer, &body, &body_len) != 0) {
        text_answer(&resp, 500, "out of memory\n");
    } else {
        resp.status = 200;
        resp.content_type = "application/json";
        resp.body = body;
        resp.body_len = body_len;
    }
    adm_exchange_reply(ad->x, &resp);
}

static void on_exchange_cancel(void *arg)
{
    admission_t *ad = arg;

    adm_chain_cancel(ad->run);
}

/*
 * Decodes the review and starts the chain; the answer goes out from on_chain_done, at once when
 * no webhook is called. Returns false with *resp filled when the request is refused up front.
 */
static bool admission_start(adm_conn_t *c, const adm_http_request_t *r, adm_exchange_t *x, adm_http_response_t *resp)
{
    adm_arena_t *a = x->arena;
    const adm_options_t *opts = c->server->opts;
    admission_t *ad = adm_arena_calloc(a, 1, sizeof(*ad));
    const char *problem = NULL;
    const char *timeout;
    uint64_t timeout_ms = 10000, budget;
    int rc;

    if (ad == NULL) {
        text_answer(resp, 500, "out of memory\n");
        return false;
    }
    /* kube-apiserver sends ?timeout=<webhook timeoutSeconds>s: the deadline for the whole call (D8). */
    timeout = query_param(a, r->query, "timeout");
    if (timeout != NULL && adm_parse_duration_ms(timeout, &timeout_ms) != 0) {
        text_answer(resp, 400, "the timeout query parameter is not a duration (e.g. 10s)\n");
        return false;
    }
    rc = adm_review_decode(a, (const char *)r->body, r->body_len, &ad->review, &problem);
    if (rc == ADM_ENOMEM) {
        text_answer(resp, 500, "out of memory\n");
        return false;
    }
    if (rc != 0) {
        const char *text = adm_arena_printf(a, "%s\n", problem);

        adm_log_v(2, "%s: 400: %s", r->path, problem);
        text_answer(resp, 400, text != NULL ? text : "bad request\n");
        return false;
    }
    if (c->server->chain == NULL) {
        adm_review_response_t allow = {.allowed = true};

        ad->x = x;
        on_chain_done(ad, &allow);
        return true;
    }
    /* answer by the caller's deadline minus the margin; a deadline shorter than the margin keeps half */
    budget = timeout_ms > opts->deadline_margin_ms ? timeout_ms - opts->deadline_margin_ms : timeout_ms / 2;
    ad->x = x;
    adm_exchange_on_cancel(x, on_exchange_cancel, ad);
    ad->run = adm_chain_start(c->server->chain, phases_of(c->endpoint), &ad->review, a,
                              uv_now(c->server->loop) + budget, on_chain_done, ad);
    if (ad->run == NULL) {
        adm_exchange_on_cancel(x, NULL, NULL);
        text_answer(resp, 500, "out of memory\n");
        return false;
    }
    return true;
}

static void answer_now(adm_conn_t *c, const adm_http_request_t *r, const struct route *rt, adm_arena_t *a,
                       adm_http_response_t *resp)
{
    if (rt == NULL || adm__route_check(c, r, resp) != 0) {
        if (rt == NULL) {
            text_answer(resp, 404, "404 page not found\n");
        }
        return;
    }
    switch (rt->endpoint) {
    case ADM_EP_MUTATE:
    case ADM_EP_VALIDATE:
    case ADM_EP_ADMIT:
        break; /* adm__route_handle starts these */
    case ADM_EP_METRICS:
        c->server->scratch.len = 0;
        if (adm_metrics_render(&c->server->metrics, &c->server->scratch) != 0) {
            text_answer(resp, 500, "out of memory\n");
            break;
        }
        resp->status = 200;
        resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
        resp->body = c->server->scratch.data;
        resp->body_len = c->server->scratch.len;
        break;
    case ADM_EP_READYZ:
        if (!c->server->ready) {
            text_answer(resp, 503, c->server->draining ? "shutting down\n" : "not ready\n");
            break;
        }
        text_answer(resp, 200, "ok");
        break;
    default:
        text_answer(resp, 200, "ok");
        break;
    }
    if (r->method == HTTP_HEAD) {
        resp->omit_body = true;
    }
}

void adm__route_handle(adm_conn_t *c, const adm_http_request_t *r, adm_exchange_t *x)
{
    const struct route *rt = find_route(c, r->path);
    adm_http_response_t resp = {0};

    if (for_handler(c, rt)) {
        c->server->handler(x, c->server->handler_arg);
        return;
    }
    if (rt != NULL && rt->admission && adm__route_check(c, r, &resp) == 0) {
        if (admission_start(c, r, x, &resp)) {
            return; /* answered now or later by on_chain_done */
        }
        adm_exchange_reply(x, &resp);
        return;
    }
    answer_now(c, r, rt, x->arena, &resp);
    adm_exchange_reply(x, &resp);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Maps requests to endpoints: the admission paths (/mutate, /validate, /admit), the probes
 * (/healthz, /livez, /readyz) and /metrics. Which paths a listener serves depends on its kind, so the
 * plain-HTTP health and metrics listeners never expose admission.
 *
 * Admission paths run the compiled-in plugin chain: /mutate the mutating phase, /validate the
 * validating phase, /admit both, as kube-apiserver runs them.
 */
#include "adm/error.h"
#include "adm/log.h"
#include "adm/review.h"
#include "adm/util.h"
#include "server_internal.h"

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

static void admission_answer(adm_conn_t *c, const adm_http_request_t *r, adm_arena_t *a, adm_http_response_t *resp)
{
    adm_review_request_t review;
    adm_review_response_t answer = {0};
    const char *problem = NULL;
    const char *timeout;
    const char *body;
    size_t body_len;
    uint64_t timeout_ms;
    int rc;

    /* kube-apiserver sends ?timeout=<webhook timeoutSeconds>s: the deadline for the whole call. */
    timeout = query_param(a, r->query, "timeout");
    if (timeout != NULL && adm_parse_duration_ms(timeout, &timeout_ms) != 0) {
        text_answer(resp, 400, "the timeout query parameter is not a duration (e.g. 10s)\n");
        return;
    }
    rc = adm_review_decode(a, (const char *)r->body, r->body_len, &review, &problem);
    if (rc == ADM_ENOMEM) {
        text_answer(resp, 500, "out of memory\n");
        return;
    }
    if (rc != 0) {
        const char *text = adm_arena_alloc(a, strlen(problem) + 2);

        if (text == NULL) {
            text_answer(resp, 500, "out of memory\n");
            return;
        }
        memcpy((char *)text, problem, strlen(problem));
        memcpy((char *)text + strlen(problem), "\n", 2);
        adm_log_v(2, "%s: 400: %s", r->path, problem);
        text_answer(resp, 400, text);
        return;
    }
    if (c->server->chain != NULL) {
        /* ADM_ENOMEM still leaves a 500 answer in the review, which is what the caller should get. */
        (void)adm_chain_run(c->server->chain, phases_of(c->endpoint), &review, a, &answer);
    } else {
        answer.allowed = true;
    }
    rc = adm_review_encode(a, review.version, review.uid, &answer, &body, &body_len);
    if (rc != 0) {
        text_answer(resp, 500, "out of memory\n");
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = body;
    resp->body_len = body_len;
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
        admission_answer(c, r, a, resp);
        break;
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
    answer_now(c, r, rt, x->arena, &resp);
    adm_exchange_reply(x, &resp);
}

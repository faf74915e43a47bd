/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission endpoints: a route handler that turns an exchange into a run of the admission
 * chain and its answer back into an AdmissionReview. /mutate runs the mutating phase, /validate the
 * validating phase, /admit both, as kube-apiserver runs them; which one is the route's argument.
 * The server has chosen the route and checked the request's head; this file sees the request only
 * through the exchange.
 */
#include "adm/admission/endpoint.h"

#include "adm/admission/review.h"
#include "adm/admission/trace.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"

#include <stdbool.h>
#include <string.h>

static void text_answer(adm_http_response_t *resp, int status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = text;
    resp->body_len = strlen(text);
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

/* An admission request while the chain runs; lives in the exchange's arena. */
typedef struct admission_s {
    const adm_admission_endpoint_t *ep;
    adm_exchange_t *x;
    adm_trace_t *trace; /* NULL: not traced */
    uint64_t started_ns;
    adm_review_request_t review;
    adm_chain_run_t *run;
    bool *answered_now; /* set while adm_chain_start runs: it may answer before it returns */
} admission_t;

/* The request's trace, logged at --v 2 and kept for /debug/requests. */
static void keep_trace(admission_t *ad, const adm_review_response_t *answer)
{
    const char *json;
    size_t len;

    json =
        adm_trace_render(ad->trace, &ad->review, ad->ep->label, answer, uv_hrtime() - ad->started_ns, &len);
    if (json == NULL) {
        return;
    }
    adm_log_v_json(2, "admission request", "trace", json, len);
    if (ad->ep->traces != NULL) {
        adm_trace_ring_push(ad->ep->traces, ad->review.uid, json, len);
    }
}

static void on_chain_done(void *arg, adm_review_response_t *answer)
{
    admission_t *ad = arg;
    adm_arena_t *a = adm_exchange_arena(ad->x);
    adm_http_response_t resp = {0};
    const char *body;
    size_t body_len;

    if (ad->answered_now != NULL) {
        *ad->answered_now = true;
    }
    if (ad->trace != NULL) {
        keep_trace(ad, answer);
    }
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
static bool admission_start(const adm_admission_endpoint_t *ep, adm_exchange_t *x, adm_http_response_t *resp)
{
    const adm_http_request_t *r = adm_exchange_request(x);
    adm_arena_t *a = adm_exchange_arena(x);
    admission_t *ad = adm_arena_calloc(a, 1, sizeof(*ad));
    const char *problem = NULL;
    const char *timeout;
    uint64_t timeout_ms = 10000, budget;
    adm_chain_run_t *run;
    bool answered = false;
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
    /* answer by the caller's deadline minus the margin; a deadline shorter than the margin keeps half */
    budget = timeout_ms > ep->deadline_margin_ms ? timeout_ms - ep->deadline_margin_ms : timeout_ms / 2;
    ad->ep = ep;
    ad->x = x;
    ad->answered_now = &answered;
    if (ep->traces != NULL || adm_log_enabled(2)) {
        ad->trace = adm_trace_start(a); /* NULL when the arena is out: the request goes untraced */
        ad->started_ns = uv_hrtime();
    }
    adm_exchange_on_cancel(x, on_exchange_cancel, ad);
    run = adm_chain_start_traced(ep->live != NULL ? *ep->live : ep->chain, ep->phases, &ad->review, a,
                                 uv_now(adm_exchange_loop(x)) + budget, ad->trace, on_chain_done, ad);
    if (answered) {
        return true; /* the exchange, its arena and ad with it, is over: touch none of them */
    }
    ad->answered_now = NULL;
    if (run == NULL) {
        adm_exchange_on_cancel(x, NULL, NULL);
        text_answer(resp, 500, "out of memory\n");
        return false;
    }
    ad->run = run;
    return true;
}

void adm_admission_handle(adm_exchange_t *x, void *arg)
{
    adm_http_response_t resp = {0};

    if (admission_start(arg, x, &resp)) {
        return; /* answered now or later by on_chain_done */
    }
    adm_exchange_reply(x, &resp);
}

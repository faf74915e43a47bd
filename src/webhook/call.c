/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One call to one downstream webhook, and kube-apiserver's reading of its answer
 * (spec/webhook-dispatch.md 2.1-3.5): the pre-call checks, the AdmissionReview sent (a fresh uid
 * per call, ?timeout= the time left rounded up to whole seconds), the HTTP-level errors worded as
 * client-go words them, and the AdmissionReview checks of VerifyAdmissionResponse.
 *
 * The body is encoded once per admission request and version (adm_review_encode_request): each
 * call stamps its own uid over the placeholder, and the client copies the text as it is posted.
 */
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/webhook/observe.h"
#include "webhooks_internal.h"

#include <ctype.h>
#include <errno.h>
#include <mbedtls/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TEXT_BODY_MAX 2048 /* client-go keeps this much of a text error body */

struct adm_hook_call_s {
    adm_webhooks_t *w;
    const adm_webhook_t *wh;
    adm_hook_stats_t *stats;
    adm_arena_t *a;
    adm_hook_done_fn done;
    void *arg;
    adm_call_t *call;
    adm_hook_client_t *cl;
    adm_hook_endpoint_t *ep; /* the address it went to */
    bool probe;              /* the half-open probe of cl's breaker */
    /* for client-go's Retry-After retries: what is sent again, and until when */
    const char *path;
    char *text;
    size_t text_len, uid_off;
    uint64_t call_deadline_ms; /* loop time the call's own context ends */
    unsigned retries;
    uv_timer_t *retry_timer; /* heap (it may outlive the arena): waiting to send again, or NULL */
    const char *url;         /* for messages: base, path and ?timeout= */
    char uid[37];
    adm_review_version_t version;
    adm_operation_t operation; /* for the metrics of a late answer */
    uint64_t started_ns;
};

void adm_hook_body_init(adm_hook_body_t *body, yyjson_val *object)
{
    memset(body, 0, sizeof(*body));
    body->object = object;
}

static void failed(adm_hook_result_t *r, adm_arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void failed(adm_hook_result_t *r, adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    r->outcome = ADM_HOOK_FAILED;
    r->reason = adm_arena_vprintf(a, fmt, ap);
    va_end(ap);
    if (r->reason == NULL) {
        r->reason = "out of memory";
    }
}

/* Sends the call (again, after a Retry-After) to the endpoint with the fewest outstanding. */
static int post(adm_hook_call_t *call)
{
    uint64_t now = uv_now(call->w->loop);

    /* the body is shared by the request's calls: this call's uid goes back in before it is copied */
    memcpy(call->text + call->uid_off, call->uid, 36);
    call->ep = adm__hook_pick_endpoint(call->cl->target);
    call->call = adm_upstream_post(call->ep->up, call->path, call->cl->headers, call->text, call->text_len,
                                   call->call_deadline_ms > now ? call->call_deadline_ms - now : 1,
                                   adm__hook_on_answer, call);
    if (call->call == NULL) {
        return ADM_ENOMEM;
    }
    call->ep->outstanding++;
    call->ep->calls++;
    return 0;
}

static adm_hook_call_t *start(adm_webhooks_t *w, adm_hook_client_t *cl, const adm_webhook_t *wh,
                              const adm_review_request_t *req, adm_hook_body_t *body, adm_arena_t *a,
                              uint64_t deadline_ms, adm_hook_done_fn done, void *arg, adm_hook_result_t *now)
{
    adm_hook_call_t *call;
    uint64_t loop_now = uv_now(w->loop);
    uint64_t left = deadline_ms > loop_now ? deadline_ms - loop_now : 0;
    uint64_t timeout_ms = (uint64_t)wh->timeout_seconds * 1000;
    const char **text;
    size_t *len, *uid_off;
    char *stamped;
    const char *path;

    memset(now, 0, sizeof(*now));
    if (req->dry_run &&
        (wh->side_effects == ADM_SIDE_EFFECTS_SOME || wh->side_effects == ADM_SIDE_EFFECTS_UNKNOWN)) {
        now->outcome = ADM_HOOK_ERROR;
        adm_status_bad_request(&now->status, a, "admission webhook \"%s\" does not support dry run",
                               wh->name);
        return NULL;
    }
    if (cl->error != NULL) {
        failed(now, a, "%s", cl->error);
        return NULL;
    }
    if (left < timeout_ms) {
        timeout_ms = left;
    }
    /* ?timeout= is the time left rounded up to whole seconds, as Go's client sends it */
    path = adm_arena_printf(a, "%s?timeout=%llus", cl->path, (unsigned long long)((timeout_ms + 999) / 1000));
    call = adm_arena_calloc(a, 1, sizeof(*call));
    if (path == NULL || call == NULL) {
        now->outcome = ADM_HOOK_ERROR;
        adm_status_nomem(&now->status);
        return NULL;
    }
    call->url = adm_arena_printf(a, "%s%s", cl->url_base, path);
    if (timeout_ms == 0) {
        failed(now, a, "failed to call webhook: Post \"%s\": context deadline exceeded", call->url);
        return NULL;
    }
    /* After the checks kube makes before any call, so an open circuit changes no other answer. */
    if (!adm_breaker_admit(&cl->breaker, loop_now, &call->probe)) {
        failed(now, a, "%s", cl->breaker.reason);
        now->circuit = "open";
        return NULL;
    }
    call->cl = cl;
    call->version = wh->review_version;
    call->operation = req->operation;
    text = call->version == ADM_REVIEW_V1 ? &body->v1 : &body->v1beta1;
    len = call->version == ADM_REVIEW_V1 ? &body->v1_len : &body->v1beta1_len;
    uid_off = call->version == ADM_REVIEW_V1 ? &body->v1_uid_off : &body->v1beta1_uid_off;
    if (*text == NULL &&
        adm_review_encode_request(a, req, body->object, call->version, text, len, uid_off) != 0) {
        if (call->probe) {
            adm_breaker_probe_dropped(&cl->breaker);
        }
        now->outcome = ADM_HOOK_ERROR;
        adm_status_nomem(&now->status);
        return NULL;
    }
    /* the text is shared by the calls of this request; the client copies it as it is posted */
    adm_uuid_v4(&w->uids, call->uid);
    stamped = (char *)*text;
    memcpy(stamped + *uid_off, call->uid, 36);
    call->w = w;
    call->wh = wh;
    call->a = a;
    call->done = done;
    call->arg = arg;
    call->started_ns = uv_hrtime();
    call->path = path;
    call->text = stamped;
    call->text_len = *len;
    call->uid_off = *uid_off;
    call->call_deadline_ms = loop_now + timeout_ms;
    if (post(call) != 0) {
        if (call->probe) {
            adm_breaker_probe_dropped(&cl->breaker);
        }
        failed(now, a, "failed to call webhook: Post \"%s\": out of memory", call->url);
        return NULL;
    }
    call->stats = &cl->stats;
    return call;
}

adm_hook_call_t *adm_hook_call_start(adm_webhooks_t *w, const adm_webhook_t *wh,
                                     const adm_review_request_t *req, adm_hook_body_t *body, adm_arena_t *a,
                                     uint64_t deadline_ms, adm_hook_done_fn done, void *arg,
                                     adm_hook_result_t *now)
{
    adm_hook_client_t *cl = &w->clients[wh->type == ADM_WEBHOOK_MUTATING ? 0 : 1][wh->index];
    adm_hook_call_t *call = start(w, cl, wh, req, body, a, deadline_ms, done, arg, now);

    if (call != NULL) {
        cl->stats.calls++; /* its outcome is counted when the answer is read */
    } else {
        cl->stats.outcomes[now->outcome]++;
    }
    return call;
}

static void on_late_answer(const adm_call_result_t *res, void *arg);

static void free_timer(uv_handle_t *h)
{
    free(h);
}

void adm_hook_call_abandon(adm_hook_call_t *call)
{
    adm_hook_late_t *late;
    size_t url_len;

    if (call != NULL && call->retry_timer != NULL) {
        /* waiting to send again: nothing is on the wire, nothing more to hear */
        uv_timer_stop(call->retry_timer);
        uv_close((uv_handle_t *)call->retry_timer, free_timer);
        call->retry_timer = NULL;
        if (call->probe) {
            adm_breaker_probe_dropped(&call->cl->breaker);
        }
        return;
    }
    if (call == NULL || call->call == NULL) {
        return;
    }
    /* The answer still counts (D3), but the request's arena is about to go: keep a copy of what
       reading it takes. Without memory for that, the answer is only not counted. */
    url_len = strlen(call->url != NULL ? call->url : "");
    late = calloc(1, sizeof(*late) + url_len + 1);
    if (late == NULL) {
        if (call->probe) {
            adm_breaker_probe_dropped(&call->cl->breaker);
        }
        call->ep->outstanding--; /* its answer will never be heard of */
        adm__hook_endpoint_released(call->w, call->ep);
        adm_call_abandon(call->call);
        call->call = NULL;
        return;
    }
    late->w = call->w;
    late->wh = call->wh;
    late->version = call->version;
    memcpy(late->uid, call->uid, sizeof(late->uid));
    late->started_ns = call->started_ns;
    late->operation = call->operation;
    late->probe = call->probe;
    late->ep = call->ep;
    memcpy(late->url, call->url != NULL ? call->url : "", url_len + 1);
    late->next = call->w->late;
    if (late->next != NULL) {
        late->next->prev = late;
    }
    call->w->late = late;
    adm_call_redirect(call->call, on_late_answer, late);
    call->call = NULL;
}

/* ---- reading the answer -------------------------------------------------------------------- */

/* client-go's message for a status outside 200-206 (apierrors.NewGenericServerResponse). */
static const char *status_message(adm_arena_t *a, int code, const char *ct, const uint8_t *body, size_t len)
{
    bool text = ct[0] == '\0' || strncasecmp(ct, "text/", 5) == 0;
    const char *server = "unknown";

    if (text) {
        size_t start = 0, end = len < TEXT_BODY_MAX ? len : TEXT_BODY_MAX;

        while (start < end && isspace(body[start])) {
            start++;
        }
        while (end > start && isspace(body[end - 1])) {
            end--;
        }
        /* an empty body may come as NULL */
        server = end > start ? adm_arena_strndup(a, (const char *)body + start, end - start) : "";
    } else {
        yyjson_read_err err;
        yyjson_doc *doc;
        yyjson_val *root;

        /* a metav1.Status with status Failure speaks for itself */
        doc = adm_json_read(a, (const char *)body, len, &err);
        root = yyjson_doc_get_root(doc);
        if (strcmp(adm_json_str(root, "kind"), "Status") == 0 &&
            strcmp(adm_json_str(root, "status"), "Failure") == 0 &&
            adm_json_str(root, "message")[0] != '\0') {
            return adm_json_str(root, "message");
        }
    }
    if (server == NULL) {
        return "out of memory";
    }
    switch (code) {
    case 409: return "the server reported a conflict";
    case 404: return "the server could not find the requested resource";
    case 400: return "the server rejected our request for an unknown reason";
    case 401: return "the server has asked for the client to provide credentials";
    case 403: return server;
    case 406:
    case 415:
        return server[0] == '\0' || strcmp(server, "unknown") == 0
                   ? "the server was unable to respond with a content type that the client supports"
                   : server;
    case 405: return "the server does not allow this method on the requested resource";
    case 422: return "the server rejected our request due to an error in our request";
    case 503: return "the server is currently unable to handle the request";
    case 504:
        return "the server was unable to return a response in the time allotted, but may still be processing "
               "the "
               "request";
    case 429: return "the server has received too many requests and has asked us to try again later";
    default: break;
    }
    if (code >= 500) {
        return adm_arena_printf(a, "an error on the server (%s) has prevented the request from succeeding",
                                adm_go_quote(a, server));
    }
    return adm_arena_printf(
        a, "the server responded with the status code %d but did not return more information", code);
}

/* "admission.k8s.io/v1, Kind=AdmissionReview" as schema.GroupVersionKind prints. */
static const char *gvk_text(adm_arena_t *a, const char *api_version, const char *kind)
{
    const char *slash = strchr(api_version, '/');

    if (slash == NULL) {
        return adm_arena_printf(a, "/%s, Kind=%s", api_version, kind);
    }
    return adm_arena_printf(a, "%s, Kind=%s", api_version, kind);
}

/* A valid annotation name part: at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric. */
static bool name_part_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

static void read_extras(const adm_hook_call_t *call, yyjson_val *response, adm_hook_result_t *r)
{
    yyjson_val *warnings = yyjson_obj_get(response, "warnings");
    yyjson_val *annotations = yyjson_obj_get(response, "auditAnnotations");
    size_t cap = 0;

    if (yyjson_is_arr(warnings) && yyjson_arr_size(warnings) > 0) {
        size_t i, max;
        yyjson_val *v;

        r->warnings = adm_arena_calloc(call->a, yyjson_arr_size(warnings), sizeof(*r->warnings));
        yyjson_arr_foreach(warnings, i, max, v)
        {
            if (r->warnings != NULL && yyjson_is_str(v)) {
                r->warnings[r->nwarnings++] = yyjson_get_str(v);
            }
        }
    }
    if (yyjson_is_obj(annotations)) {
        size_t i, max;
        yyjson_val *k, *v;

        yyjson_obj_foreach(annotations, i, max, k, v)
        {
            const char *key = adm_arena_printf(call->a, "%s.%s", call->wh->name, yyjson_get_str(k));

            if (key == NULL || !yyjson_is_str(v) || !name_part_ok(key)) {
                adm_log_v(1, "webhook %s: audit annotation %s dropped: %s.%s is not a valid annotation name",
                          call->wh->name, yyjson_get_str(k), call->wh->name, yyjson_get_str(k));
                continue;
            }
            adm_hook_add_annotation(call->a, &r->annotations, &r->nannotations, &cap, key, yyjson_get_str(v));
        }
    }
}

static void denied(const adm_hook_call_t *call, yyjson_val *status, adm_hook_result_t *r)
{
    adm_arena_t *a = call->a;
    int64_t code = yyjson_get_sint(yyjson_obj_get(status, "code"));
    const char *message = adm_json_str(status, "message");
    const char *reason = adm_json_str(status, "reason");
    yyjson_val *details = yyjson_obj_get(status, "details");

    if (yyjson_is_uint(yyjson_obj_get(status, "code"))) {
        uint64_t u = yyjson_get_uint(yyjson_obj_get(status, "code"));

        code = u > INT32_MAX ? INT32_MAX : (int64_t)u;
    }
    r->outcome = ADM_HOOK_DENIED;
    r->status.code = code < 400 ? 400 : (int32_t)(code > INT32_MAX ? INT32_MAX : code);
    r->status.reason = reason[0] != '\0' ? reason : NULL;
    r->status.details = yyjson_is_obj(details) ? details : NULL;
    if (message[0] != '\0') {
        r->status.message =
            adm_arena_printf(a, "admission webhook \"%s\" denied the request: %s", call->wh->name, message);
    } else if (reason[0] != '\0') {
        r->status.message =
            adm_arena_printf(a, "admission webhook \"%s\" denied the request: %s", call->wh->name, reason);
    } else {
        r->status.message = adm_arena_printf(
            a, "admission webhook \"%s\" denied the request without explanation", call->wh->name);
    }
    if (r->status.message == NULL) {
        adm_status_nomem(&r->status);
        r->outcome = ADM_HOOK_ERROR;
    }
}

static void interpret(const adm_hook_call_t *call, const adm_call_result_t *res, adm_hook_result_t *r)
{
    adm_arena_t *a = call->a;
    bool mutating = call->wh->type == ADM_WEBHOOK_MUTATING;
    yyjson_read_err err;
    yyjson_doc *doc;
    yyjson_val *root, *response, *patch, *patch_type;
    const char *api_version, *kind;

    if (res->error != ADM_CALL_OK) {
        failed(r, a, "failed to call webhook: Post \"%s\": %s", call->url, res->detail);
        return;
    }
    if (res->status != 101 && (res->status < 200 || res->status > 206)) {
        failed(r, a, "failed to call webhook: %s",
               status_message(a, res->status, res->content_type, res->body, res->body_len));
        return;
    }
    if (res->body_len == 0) {
        failed(r, a, "failed to call webhook: 0-length response with status code: %d and content type: %s",
               res->status, res->content_type);
        return;
    }
    doc = adm_json_read(a, (const char *)res->body, res->body_len, &err);
    if (doc == NULL) {
        failed(r, a, "failed to call webhook: couldn't get version/kind; json parse error: %s",
               adm_json_go_error(a, (const char *)res->body, res->body_len, &err));
        return;
    }
    root = yyjson_doc_get_root(doc);
    if (!yyjson_is_obj(root)) {
        failed(r, a,
               "failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal "
               "%s into "
               "Go value of type " ADM_JSON_GO_TYPE_META,
               adm_json_go_type(root));
        return;
    }
    api_version = adm_json_str(root, "apiVersion");
    kind = adm_json_str(root, "kind");
    response = yyjson_obj_get(root, "response");
    if (!yyjson_is_obj(response)) {
        failed(r, a, "received invalid webhook response: webhook response was absent");
        return;
    }
    patch = yyjson_obj_get(response, "patch");
    patch_type = yyjson_obj_get(response, "patchType");
    if (yyjson_is_null(patch)) {
        patch = NULL;
    }
    if (yyjson_is_null(patch_type)) {
        patch_type = NULL;
    }
    if (patch != NULL && !yyjson_is_str(patch)) {
        failed(r, a,
               "failed to call webhook: json: cannot unmarshal %s into Go struct field "
               "AdmissionResponse.response.patch of type []uint8",
               adm_json_go_type(patch));
        return;
    }
    if (call->version == ADM_REVIEW_V1) {
        const char *got_uid = adm_json_str(response, "uid");
        bool has_patch = patch != NULL && yyjson_get_len(patch) > 0;

        if (strcmp(got_uid, call->uid) != 0) {
            failed(r, a, "received invalid webhook response: expected response.uid=%s, got %s",
                   adm_go_quote(a, call->uid), adm_go_quote(a, got_uid));
            return;
        }
        if (strcmp(api_version, "admission.k8s.io/v1") != 0 || strcmp(kind, "AdmissionReview") != 0) {
            failed(r, a,
                   "received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
                   "Kind=AdmissionReview, got %s",
                   gvk_text(a, api_version, kind));
            return;
        }
        if (mutating) {
            if (has_patch && patch_type == NULL) {
                failed(r, a,
                       "received invalid webhook response: webhook returned response.patch but not "
                       "response.patchType");
                return;
            }
            if (!has_patch && patch_type != NULL) {
                failed(r, a,
                       "received invalid webhook response: webhook returned response.patchType but not "
                       "response.patch");
                return;
            }
            if (has_patch && yyjson_is_str(patch_type) && yyjson_get_len(patch_type) == 0) {
                failed(
                    r, a,
                    "received invalid webhook response: webhook returned invalid response.patchType of \"\"");
                return;
            }
        } else {
            if (has_patch) {
                failed(r, a,
                       "received invalid webhook response: validating webhook may not return response.patch");
                return;
            }
            if (patch_type != NULL) {
                failed(r, a,
                       "received invalid webhook response: validating webhook may not return "
                       "response.patchType");
                return;
            }
        }
    } else if (api_version[0] != '\0' && strcmp(api_version, "admission.k8s.io/v1beta1") != 0) {
        failed(r, a,
               "failed to call webhook: couldn't decode the response as admission.k8s.io/v1beta1, got %s",
               gvk_text(a, api_version, kind));
        return;
    }
    read_extras(call, response, r);
    if (!yyjson_get_bool(yyjson_obj_get(response, "allowed"))) {
        denied(call, yyjson_obj_get(response, "status"), r);
        return;
    }
    r->outcome = ADM_HOOK_ALLOWED;
    if (!mutating || patch == NULL || yyjson_get_len(patch) == 0) {
        return;
    }
    {
        size_t n = 0;
        char *raw = adm_arena_alloc(a, yyjson_get_len(patch) + 1);
        yyjson_doc *pdoc;

        if (raw == NULL ||
            mbedtls_base64_decode((unsigned char *)raw, yyjson_get_len(patch) + 1, &n,
                                  (const unsigned char *)yyjson_get_str(patch), yyjson_get_len(patch)) != 0) {
            failed(r, a, "failed to call webhook: illegal base64 data in response.patch");
            return;
        }
        pdoc = adm_json_read(a, raw, n, &err);
        if (pdoc == NULL) {
            failed(r, a, "received undecodable patch in webhook response: %s",
                   adm_json_go_error(a, raw, n, &err));
            return;
        }
        if (!yyjson_is_arr(yyjson_doc_get_root(pdoc))) {
            failed(
                r, a,
                "received undecodable patch in webhook response: json: cannot unmarshal %s into Go value of "
                "type jsonpatch.Patch",
                adm_json_go_type(yyjson_doc_get_root(pdoc)));
            return;
        }
        r->patch = yyjson_doc_get_root(pdoc);
        /* v1beta1 forces JSONPatch; v1's type is checked by the dispatcher, after the "no object" check */
        r->patch_type = call->version == ADM_REVIEW_V1 ? yyjson_get_str(patch_type) : "JSONPatch";
    }
}

void adm__hook_interpret(adm_arena_t *a, const adm_webhook_t *wh, adm_review_version_t version,
                         const char *uid, const adm_call_result_t *res, adm_hook_result_t *r)
{
    adm_hook_call_t call = {0};

    call.wh = wh;
    call.a = a;
    call.url = "https://fuzz.example.com/";
    call.version = version;
    snprintf(call.uid, sizeof(call.uid), "%s", uid);
    memset(r, 0, sizeof(*r));
    interpret(&call, res, r);
}

static const char *const outcome_names[] = {"allowed", "denied", "failed", "refused"};

/* What the breaker counts against a webhook: no answer at all, or a 5xx (issue 18). */
static void breaker_note(adm_webhooks_t *w, adm_hook_client_t *cl, const adm_webhook_t *wh, bool probe,
                         const adm_call_result_t *res, const adm_hook_result_t *r)
{
    bool failure = res->error != ADM_CALL_OK ? res->error != ADM_CALL_NOMEM : res->status >= 500;
    adm_breaker_state_t before = cl->breaker.state;

    if (cl->breaker.threshold == 0) {
        return;
    }
    adm_breaker_record(&cl->breaker, uv_now(w->loop), probe, failure,
                       r->outcome == ADM_HOOK_FAILED ? r->reason : NULL);
    if (cl->breaker.state != before || (probe && cl->breaker.state == ADM_BREAKER_OPEN)) {
        adm_log_info("webhook %s: circuit %s%s%s", wh->name, adm_breaker_state_name(cl->breaker.state),
                     cl->breaker.state == ADM_BREAKER_OPEN ? " after: " : "",
                     cl->breaker.state == ADM_BREAKER_OPEN ? cl->breaker.reason : "");
    }
}

static void on_late_answer(const adm_call_result_t *res, void *arg)
{
    adm_hook_late_t *late = arg;
    adm_webhooks_t *w = late->w;
    adm_arena_t *a;
    adm_hook_call_t call = {0};
    adm_hook_result_t r;
    adm_hook_stats_t *stats;

    if (w == NULL) {
        free(late); /* admitd is shutting down */
        return;
    }
    if (late->prev != NULL) {
        late->prev->next = late->next;
    } else {
        w->late = late->next;
    }
    if (late->next != NULL) {
        late->next->prev = late->prev;
    }
    stats = adm_webhooks_stats(w, late->wh);
    a = adm_arena_create(16384);
    memset(&r, 0, sizeof(r));
    if (a == NULL) {
        r.outcome = ADM_HOOK_FAILED;
        r.reason = "out of memory reading the answer";
    } else {
        call.w = w;
        call.wh = late->wh;
        call.a = a;
        call.url = late->url;
        call.version = late->version;
        memcpy(call.uid, late->uid, sizeof(call.uid));
        interpret(&call, res, &r);
    }
    r.latency_ns = uv_hrtime() - late->started_ns;
    late->ep->outstanding--;
    adm__hook_endpoint_released(late->w, late->ep);
    breaker_note(w, &w->clients[late->wh->type == ADM_WEBHOOK_MUTATING ? 0 : 1][late->wh->index], late->wh,
                 late->probe, res, &r);
    stats->outcomes[r.outcome]++;
    adm_hist_record(&stats->latency, r.latency_ns);
    adm_hook_stats_count(stats, late->wh, &r);
    adm_hook_observe(NULL, late->wh, late->operation, 0, &r, adm_hook_verdict(late->wh, &r), NULL);
    adm_log_v(1, "%s webhook %s answered after the request was decided: %s%s%s",
              late->wh->type == ADM_WEBHOOK_MUTATING ? "mutating" : "validating", late->wh->name,
              outcome_names[r.outcome], r.outcome == ADM_HOOK_ALLOWED ? "" : ": ",
              r.outcome == ADM_HOOK_ALLOWED  ? ""
              : r.outcome == ADM_HOOK_FAILED ? r.reason
                                             : r.status.message);
    adm_arena_destroy(a);
    free(late);
    if (w->retired && w->late == NULL) {
        adm__webhooks_late_drained(w); /* the last call of a configuration a reload replaced */
    }
}

void adm_hook_stats_count(adm_hook_stats_t *stats, const adm_webhook_t *wh, const adm_hook_result_t *r)
{
    if (r->outcome == ADM_HOOK_FAILED && wh->failure_policy == ADM_FAILURE_IGNORE) {
        stats->failed_open++;
    } else if (r->outcome != ADM_HOOK_ALLOWED) {
        stats->rejected++;
    }
}

/*
 * client-go's retry (rest.Request with its default of 10 retries): an answer of 429 or 5xx with a
 * Retry-After of whole seconds (strconv.Atoi) is sent again after that wait. Go sleeps the wait
 * out and then finds its context done; admitd fails at once when the wait would end past the
 * call's deadline, with the same words. Returns true when the call goes on (sent again, or waiting).
 */
static bool retry_after(adm_hook_call_t *call, const adm_call_result_t *res, adm_hook_result_t *r);

/* Counts the call's result and hands it to the dispatcher. */
static void finish(adm_hook_call_t *call, const adm_call_result_t *res, adm_hook_result_t *r);

void adm__hook_on_answer(const adm_call_result_t *res, void *arg)
{
    adm_hook_call_t *call = arg;
    adm_hook_result_t r;

    memset(&r, 0, sizeof(r));
    call->call = NULL;
    call->ep->outstanding--;
    adm__hook_endpoint_released(call->w, call->ep);
    if (retry_after(call, res, &r)) {
        return;
    }
    if (r.outcome != ADM_HOOK_FAILED) {
        interpret(call, res, &r);
    }
    finish(call, res, &r);
}

static void on_retry_timer(uv_timer_t *t)
{
    adm_hook_call_t *call = t->data;
    adm_hook_result_t r;
    adm_call_result_t res = {.error = ADM_CALL_NOMEM, .detail = "out of memory", .content_type = ""};

    uv_close((uv_handle_t *)t, free_timer);
    call->retry_timer = NULL;
    if (post(call) != 0) {
        memset(&r, 0, sizeof(r));
        failed(&r, call->a, "failed to call webhook: Post \"%s\": out of memory", call->url);
        finish(call, &res, &r);
    }
}

static bool retry_after(adm_hook_call_t *call, const adm_call_result_t *res, adm_hook_result_t *r)
{
    const char *h = res->retry_after != NULL ? res->retry_after : "";
    uint64_t now = uv_now(call->w->loop), wait_ms;
    long long seconds = 0;
    char *end = NULL;

    if (res->error != ADM_CALL_OK || (res->status != 429 && res->status < 500) || h[0] == '\0' ||
        call->retries >= 10) {
        return false;
    }
    errno = 0;
    seconds = strtoll(h, &end, 10);
    if (end == h || *end != '\0' || errno != 0 || h[0] == ' ' || h[0] == '\t') {
        return false; /* not what strconv.Atoi reads (an HTTP date, say): no retry */
    }
    wait_ms = seconds > 0 ? (uint64_t)seconds * 1000 : 0;
    if (seconds > (long long)(UINT64_MAX / 2000) || now + wait_ms >= call->call_deadline_ms) {
        failed(r, call->a, "failed to call webhook: context deadline exceeded");
        return false;
    }
    call->retries++;
    adm_log_v(2, "webhook %s: Retry-After %s on HTTP %d: attempt %u", call->wh->name, h, res->status,
              call->retries + 1);
    call->retry_timer = malloc(sizeof(*call->retry_timer));
    if (call->retry_timer == NULL) {
        failed(r, call->a, "failed to call webhook: Post \"%s\": out of memory", call->url);
        return false;
    }
    uv_timer_init(call->w->loop, call->retry_timer);
    call->retry_timer->data = call;
    uv_timer_start(call->retry_timer, on_retry_timer, wait_ms, 0);
    return true;
}

static void finish(adm_hook_call_t *call, const adm_call_result_t *res, adm_hook_result_t *r)
{
    r->latency_ns = uv_hrtime() - call->started_ns;
    r->circuit = call->probe ? "half-open-probe" : NULL;
    breaker_note(call->w, call->cl, call->wh, call->probe, res, r);
    call->stats->outcomes[r->outcome]++;
    adm_hist_record(&call->stats->latency, r->latency_ns);
    call->done(call->arg, r);
}

/* ---- merging ------------------------------------------------------------------------------- */

void adm_hook_add_annotation(adm_arena_t *a, adm_review_annotation_t **list, size_t *n, size_t *cap,
                             const char *key, const char *value)
{
    for (size_t k = 0; k < *n; k++) {
        if (strcmp((*list)[k].key, key) == 0) {
            return; /* kube keeps the first value; a different one is dropped (and logged there) */
        }
    }
    if (*n == *cap) {
        size_t ncap = *cap == 0 ? 8 : *cap * 2;
        adm_review_annotation_t *g =
            adm_arena_realloc(a, *list, *cap * sizeof(**list), ncap * sizeof(**list));

        if (g == NULL) {
            return;
        }
        *list = g;
        *cap = ncap;
    }
    (*list)[*n].key = key;
    (*list)[*n].value = value;
    (*n)++;
}

void adm_hook_merge_extras(adm_attrs_t *attrs, const adm_hook_result_t *r)
{
    for (size_t k = 0; k < r->nwarnings; k++) {
        adm_attrs_add_warning(attrs, r->warnings[k]);
    }
    for (size_t k = 0; k < r->nannotations; k++) {
        adm_hook_add_annotation(attrs->arena, &attrs->annotations, &attrs->nannotations,
                                &attrs->annotations_cap, r->annotations[k].key, r->annotations[k].value);
    }
}

const char *adm_hook_annotation_key(adm_arena_t *a, const char *prefix, unsigned round, size_t index)
{
    /* prefix is "failed-open.mutation.webhook.admission.k8s.io" and the like */
    const char *key = adm_arena_printf(a, "%s.round_%u_index_%zu", prefix, round, index);
    const char *cut = strstr(prefix, ".admission.k8s.io");

    if (key != NULL && strlen(key) > 63 && cut != NULL) {
        key = adm_arena_printf(a, "%.*s.round_%u_index_%zu", (int)(cut - prefix), prefix, round, index);
    }
    return key;
}

int adm_hook_failure_status(adm_status_t *st, adm_arena_t *a, const adm_webhook_t *wh, const char *reason)
{
    return adm_status_internal(st, a, "failed calling webhook \"%s\": %s", wh->name, reason);
}

int adm_hook_timeout_status(adm_status_t *st)
{
    st->code = 504;
    st->reason = "Timeout";
    st->message = "Timeout: request did not complete within requested timeout";
    st->details = NULL;
    return ADM_DECLINED;
}

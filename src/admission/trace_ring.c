/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ring of the last rendered decision traces and GET /debug/requests, which serves them on the
 * metrics listener (Decision D18). Slots are fixed-size and taken once, so keeping a trace is a
 * copy, never an allocation.
 */
#include "adm/admission/trace.h"

#include "adm/base/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot_s {
    char uid[128]; /* kube's uids are 36 characters; a longer one is cut and cannot be asked for */
    size_t len;    /* 0: empty */
    char json[ADM_TRACE_MAX_BYTES];
} slot_t;

struct adm_trace_ring_s {
    slot_t slots[ADM_TRACE_RING];
    size_t next; /* where the next trace goes; the newest is just before */
};

int adm_trace_ring_create(adm_trace_ring_t **out)
{
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? 0 : ADM_ENOMEM;
}

void adm_trace_ring_destroy(adm_trace_ring_t *r)
{
    free(r);
}

void adm_trace_ring_push(adm_trace_ring_t *r, const char *uid, const char *json, size_t len)
{
    slot_t *s = &r->slots[r->next];
    size_t uid_len = strlen(uid);

    if (len == 0 || len > sizeof(s->json)) {
        return;
    }
    if (uid_len >= sizeof(s->uid)) {
        uid_len = sizeof(s->uid) - 1;
    }
    memcpy(s->uid, uid, uid_len);
    s->uid[uid_len] = '\0';
    memcpy(s->json, json, len);
    s->len = len;
    r->next = (r->next + 1) % ADM_TRACE_RING;
}

/* The value of ?uid= (not decoded: uids are UUIDs, which need no escapes); NULL when absent. */
static const char *uid_param(adm_arena_t *a, const char *query)
{
    while (*query != '\0') {
        size_t len = strcspn(query, "&");

        if (len >= 4 && strncmp(query, "uid=", 4) == 0) {
            return adm_arena_strndup(a, query + 4, len - 4);
        }
        query += len;
        query += *query == '&';
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

void adm_trace_ring_serve(adm_exchange_t *x, void *arg)
{
    const adm_trace_ring_t *r = arg;
    const adm_http_request_t *req = adm_exchange_request(x);
    adm_arena_t *a = adm_exchange_arena(x);
    const char *uid = uid_param(a, req->query);
    adm_http_response_t resp = {0};
    size_t total = sizeof("{\"requests\":[]}\n"), used = 0, found = 0;
    char *body;

    for (size_t i = 0; i < ADM_TRACE_RING; i++) {
        total += r->slots[i].len + 1;
    }
    body = adm_arena_alloc(a, total);
    if (body == NULL) {
        text_answer(&resp, 500, "out of memory\n");
        adm_exchange_reply(x, &resp);
        return;
    }
    memcpy(body, "{\"requests\":[", 13);
    used = 13;
    for (size_t k = 1; k <= ADM_TRACE_RING; k++) {
        const slot_t *s = &r->slots[(r->next + ADM_TRACE_RING - k) % ADM_TRACE_RING];

        if (s->len == 0 || (uid != NULL && strcmp(s->uid, uid) != 0)) {
            continue;
        }
        if (found++ > 0) {
            body[used++] = ',';
        }
        memcpy(body + used, s->json, s->len);
        used += s->len;
    }
    memcpy(body + used, "]}\n", 3);
    used += 3;
    if (uid != NULL && found == 0) {
        text_answer(&resp, 404, "no trace of that uid among the last requests\n");
    } else {
        resp.status = 200;
        resp.content_type = "application/json";
        resp.body = body;
        resp.body_len = used;
    }
    resp.omit_body = req->method == HTTP_HEAD;
    adm_exchange_reply(x, &resp);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.1 for admitd's outgoing calls (http_client.h): writing a POST or GET, and reading responses
 * with llhttp one at a time, the body gathered into a reused, bounded buffer or streamed to a reader.
 */
#include "adm/net/http_client.h"

#include "adm/base/error.h"
#include "adm/net/go_status_line.h"

#include <string.h>
#include <strings.h>

static adm_http_resp_parser_t *parser_of(llhttp_t *l)
{
    return (adm_http_resp_parser_t *)((char *)l - offsetof(adm_http_resp_parser_t, llhttp));
}

static int on_message_begin(llhttp_t *l)
{
    adm_http_resp_parser_t *p = parser_of(l);

    p->body.len = 0;
    p->too_big = false;
    p->content_type[0] = '\0';
    p->retry_after[0] = '\0';
    p->field_len = 0;
    p->headers_done = false;
    p->streaming = false;
    p->bad_status = false;
    return 0;
}

/* Names longer than the buffer cannot be Content-Type: they are only counted, not kept. */
static int on_header_field(llhttp_t *l, const char *at, size_t len)
{
    adm_http_resp_parser_t *p = parser_of(l);

    if (p->field_len + len < sizeof(p->field)) {
        memcpy(p->field + p->field_len, at, len);
    }
    p->field_len += len;
    return 0;
}

static int on_header_field_complete(llhttp_t *l)
{
    adm_http_resp_parser_t *p = parser_of(l);

    p->in_content_type =
        p->field_len == strlen("content-type") && strncasecmp(p->field, "content-type", p->field_len) == 0;
    p->in_retry_after =
        p->field_len == strlen("retry-after") && strncasecmp(p->field, "retry-after", p->field_len) == 0;
    p->field_len = 0;
    if (p->in_content_type) {
        p->content_type[0] = '\0';
    }
    if (p->in_retry_after) {
        p->retry_after[0] = '\0';
    }
    return 0;
}

static int on_header_value(llhttp_t *l, const char *at, size_t len)
{
    adm_http_resp_parser_t *p = parser_of(l);
    char *into = p->in_content_type ? p->content_type : p->in_retry_after ? p->retry_after : NULL;
    size_t cap = p->in_content_type ? sizeof(p->content_type) : sizeof(p->retry_after), have;

    if (into == NULL) {
        return 0;
    }
    have = strlen(into);
    if (len > cap - 1 - have) {
        len = cap - 1 - have;
    }
    memcpy(into + have, at, len);
    into[have + len] = '\0';
    return 0;
}

static int on_body(llhttp_t *l, const char *at, size_t len)
{
    adm_http_resp_parser_t *p = parser_of(l);

    if (p->streaming) {
        if (p->on_chunk(p->chunk_arg, (const uint8_t *)at, len) != 0) {
            p->stopped = true;
            return HPE_USER;
        }
        return 0;
    }
    if (p->body.len + len > p->max_body_bytes) {
        p->too_big = true;
        return HPE_USER;
    }
    return adm_buf_append(&p->body, at, len) == 0 ? 0 : HPE_USER;
}

static int on_headers_complete(llhttp_t *l)
{
    adm_http_resp_parser_t *p = parser_of(l);

    if (l->status_code < 100) {
        p->bad_status = true; /* llhttp takes any three digits; Go refuses these too */
        return -1;
    }
    if (l->status_code >= 100 && l->status_code < 200) {
        return 0; /* interim: no body, and not the answer */
    }
    p->status = l->status_code;
    p->headers_done = true;
    p->streaming = p->on_chunk != NULL && l->status_code >= 200 && l->status_code < 300;
    if (p->streaming) {
        return 0; /* no limit: a watch's body has no end */
    }
    /* A declared length past the limit fails before any of it is read. */
    if ((l->flags & F_CONTENT_LENGTH) != 0 && l->content_length > p->max_body_bytes) {
        p->too_big = true;
        return -1;
    }
    return 0;
}

static int on_message_complete(llhttp_t *l)
{
    adm_http_resp_parser_t *p = parser_of(l);

    if (l->status_code >= 100 && l->status_code < 200) {
        return 0; /* interim: the real answer follows */
    }
    p->status = l->status_code;
    p->keep_alive = llhttp_should_keep_alive(l) != 0;
    p->done = true;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void adm_http_resp_parser_init(adm_http_resp_parser_t *p, size_t max_body_bytes)
{
    memset(p, 0, sizeof(*p));
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->max_body_bytes = max_body_bytes;
}

void adm_http_resp_stream(adm_http_resp_parser_t *p, adm_http_chunk_fn fn, void *arg)
{
    p->on_chunk = fn;
    p->chunk_arg = arg;
}

void adm_http_resp_parser_free(adm_http_resp_parser_t *p)
{
    adm_buf_free(&p->body);
}

static adm_http_resp_event_t fail(adm_http_resp_parser_t *p, llhttp_errno_t err)
{
    p->error = p->bad_status     ? "malformed HTTP status code"
               : p->too_big      ? "response body larger than the limit"
               : p->stopped      ? "stopped by the reader"
               : err == HPE_USER ? "out of memory"
                                 : llhttp_errno_name(err);
    return ADM_HTTP_RESP_ERROR;
}

/* Keeps the bytes of the answer's first line, up to its line end, for Go's error texts. */
static void capture_first_line(adm_http_resp_parser_t *p, const uint8_t *data, size_t len)
{
    const uint8_t *nl;
    size_t take, room = sizeof(p->first_line) - 1 - p->first_line_len;

    if (p->first_line_done) {
        return;
    }
    nl = memchr(data, '\n', len);
    take = nl != NULL ? (size_t)(nl - data) : len;
    if (take > room) {
        take = room;
        p->first_line_done = true;
    }
    memcpy(p->first_line + p->first_line_len, data, take);
    p->first_line_len += take;
    if (nl != NULL) {
        p->first_line_done = true;
    }
    if (p->first_line_done && p->first_line_len > 0 && p->first_line[p->first_line_len - 1] == '\r') {
        p->first_line_len--; /* textproto's ReadLine drops the \r\n */
    }
    p->first_line[p->first_line_len] = '\0';
}

adm_http_resp_event_t adm_http_resp_parse(adm_http_resp_parser_t *p, const uint8_t *data, size_t len,
                                          size_t *used)
{
    llhttp_errno_t err;

    *used = 0;
    if (p->done) {
        return ADM_HTTP_RESP_DONE;
    }
    if (len == 0) {
        return ADM_HTTP_RESP_NEED_MORE;
    }
    capture_first_line(p, data, len);
    if (p->line_error) {
        /* Go reads the whole first line before judging it: so does this, then fails. */
        *used = len;
        return p->first_line_done ? fail(p, (llhttp_errno_t)p->pending_errno) : ADM_HTTP_RESP_NEED_MORE;
    }
    err = llhttp_execute(&p->llhttp, (const char *)data, len);
    if (err == HPE_PAUSED) {
        *used = (size_t)(llhttp_get_error_pos(&p->llhttp) - (const char *)data);
        return ADM_HTTP_RESP_DONE;
    }
    if (err != HPE_OK) {
        if (!p->first_line_done && !p->too_big && err != HPE_USER) {
            p->line_error = true;
            p->pending_errno = (int)err;
            *used = len;
            return ADM_HTTP_RESP_NEED_MORE;
        }
        return fail(p, err);
    }
    *used = len;
    return ADM_HTTP_RESP_NEED_MORE;
}

adm_http_resp_event_t adm_http_resp_eof(adm_http_resp_parser_t *p)
{
    llhttp_errno_t err;

    if (p->done) {
        return ADM_HTTP_RESP_DONE;
    }
    if (p->line_error) {
        p->first_line_done = true; /* Go's ReadLine returns what came before the end */
        return fail(p, (llhttp_errno_t)p->pending_errno);
    }
    err = llhttp_finish(&p->llhttp);
    if (err == HPE_PAUSED || (err == HPE_OK && p->done)) {
        return ADM_HTTP_RESP_DONE;
    }
    if (err == HPE_OK) {
        p->error = "connection closed before a response";
        return ADM_HTTP_RESP_ERROR;
    }
    return fail(p, err);
}

bool adm_http_resp_go_error(const adm_http_resp_parser_t *p, char *out, size_t cap)
{
    if (p->too_big || p->first_line_len == 0) {
        return false;
    }
    return adm_go_status_line_error(p->first_line, p->first_line_len, out, cap);
}

void adm_http_resp_next(adm_http_resp_parser_t *p)
{
    p->done = false;
    p->status = 0;
    p->body.len = 0;
    p->error = NULL;
    p->content_type[0] = '\0';
    p->headers_done = false;
    p->streaming = false;
    p->retry_after[0] = '\0';
    p->first_line_len = 0;
    p->first_line[0] = '\0';
    p->first_line_done = false;
    if (llhttp_get_errno(&p->llhttp) == HPE_PAUSED) {
        llhttp_resume(&p->llhttp);
    }
}

int adm_http_write_post(adm_buf_t *out, const char *host, const char *path, const char *extra_headers,
                        const void *body, size_t body_len)
{
    return adm_http_write_with_body(out, "POST", host, path, extra_headers, body, body_len);
}

int adm_http_write_with_body(adm_buf_t *out, const char *method, const char *host, const char *path,
                             const char *extra_headers, const void *body, size_t body_len)
{
    /* Built with plain appends, not a printf: this runs once per upstream call (and per request of
     * admitd-bench), where two vsnprintf passes were a few per cent of the client's CPU. */
    static const char mid[] = " HTTP/1.1\r\nHost: ";
    static const char fixed[] =
        "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ";
    char digits[24];
    size_t nd = sizeof(digits);
    size_t n = body_len;

    do {
        digits[--nd] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    if (extra_headers == NULL) {
        extra_headers = "";
    }
    if (adm_buf_reserve(out, strlen(method) + 1 + strlen(path) + sizeof(mid) - 1 + strlen(host) +
                                 sizeof(fixed) - 1 + (sizeof(digits) - nd) + 2 + strlen(extra_headers) + 2 +
                                 body_len) != 0 ||
        adm_buf_append(out, method, strlen(method)) != 0 || adm_buf_append(out, " ", 1) != 0 ||
        adm_buf_append(out, path, strlen(path)) != 0 || adm_buf_append(out, mid, sizeof(mid) - 1) != 0 ||
        adm_buf_append(out, host, strlen(host)) != 0 || adm_buf_append(out, fixed, sizeof(fixed) - 1) != 0 ||
        adm_buf_append(out, digits + nd, sizeof(digits) - nd) != 0 || adm_buf_append(out, "\r\n", 2) != 0 ||
        adm_buf_append(out, extra_headers, strlen(extra_headers)) != 0 ||
        adm_buf_append(out, "\r\n", 2) != 0 || adm_buf_append(out, body, body_len) != 0) {
        return ADM_ENOMEM;
    }
    return 0;
}

int adm_http_write_get(adm_buf_t *out, const char *host, const char *path, const char *extra_headers)
{
    static const char mid[] = " HTTP/1.1\r\nHost: ";
    static const char fixed[] = "\r\nAccept: application/json\r\n";

    if (extra_headers == NULL) {
        extra_headers = "";
    }
    if (adm_buf_append(out, "GET ", 4) != 0 || adm_buf_append(out, path, strlen(path)) != 0 ||
        adm_buf_append(out, mid, sizeof(mid) - 1) != 0 || adm_buf_append(out, host, strlen(host)) != 0 ||
        adm_buf_append(out, fixed, sizeof(fixed) - 1) != 0 ||
        adm_buf_append(out, extra_headers, strlen(extra_headers)) != 0 ||
        adm_buf_append(out, "\r\n", 2) != 0) {
        return ADM_ENOMEM;
    }
    return 0;
}

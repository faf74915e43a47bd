/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.1 request parsing on llhttp and response writing.
 *
 * llhttp is paused from on_headers_complete and on_message_complete, so each adm_http_parse() call
 * returns at most one event and the connection can act on it (send 100 Continue, refuse an
 * oversized body, dispatch a request) before any later pipelined byte is looked at. Only the few
 * headers admitd acts on are kept; the rest are counted against the 64 KiB head limit and dropped.
 */
#include "adm/net/http.h"

#include "adm/base/error.h"

#include <string.h>
#include <strings.h>

enum interesting_header {
    HEADER_OTHER,
    HEADER_CONTENT_TYPE,
    HEADER_EXPECT,
    HEADER_AUTHORIZATION,
};

/* Bytes a header line costs beyond its name and value (": " and CRLF), for the head limit. */
#define HEADER_LINE_OVERHEAD 4
#define CONTENT_TYPE_MAX 256
/* A bearer token is a JWT of a few KiB at most; a longer value is refused, not cut. */
#define AUTHORIZATION_MAX 16384

static adm_http_parser_t *parser_of(llhttp_t *p)
{
    return (adm_http_parser_t *)p; /* llhttp is the first member */
}

static int fail(adm_http_parser_t *hp, int status, const char *message)
{
    hp->error_status = status;
    hp->error_message = message;
    return -1;
}

static int count_head_bytes(adm_http_parser_t *hp, size_t n)
{
    hp->_header_bytes += n;
    if (hp->_header_bytes > ADM_HTTP_MAX_HEADER_BYTES) {
        return fail(hp, 431, "request header fields exceed 64 KiB");
    }
    return 0;
}

/* Appends to a growing arena string; *s may move. */
static int grow_append(adm_arena_t *a, char **s, size_t *len, const char *at, size_t n)
{
    char *p = adm_arena_realloc(a, *s, *len == 0 ? 0 : *len + 1, *len + n + 1);

    if (p == NULL) {
        return ADM_ENOMEM;
    }
    memcpy(p + *len, at, n);
    *len += n;
    p[*len] = '\0';
    *s = p;
    return 0;
}

static int on_message_begin(llhttp_t *p)
{
    adm_http_parser_t *hp = parser_of(p);

    hp->_in_message = true;
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    adm_http_parser_t *hp = parser_of(p);

    if (count_head_bytes(hp, n) != 0) {
        return -1;
    }
    if (grow_append(hp->arena, &hp->_target, &hp->_target_len, at, n) != 0) {
        return fail(hp, 500, "out of memory");
    }
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
    adm_http_parser_t *hp = parser_of(p);

    if (count_head_bytes(hp, n) != 0) {
        return -1;
    }
    /* Names longer than the buffer are not among the interesting ones; mark them as such. */
    if (hp->_field_len + n < sizeof(hp->_field)) {
        memcpy(hp->_field + hp->_field_len, at, n);
        hp->_field_len += n;
    } else {
        hp->_field_len = sizeof(hp->_field);
    }
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    adm_http_parser_t *hp = parser_of(p);
    size_t n = hp->_field_len;

    hp->_current_header = HEADER_OTHER;
    if (n == 12 && strncasecmp(hp->_field, "content-type", 12) == 0) {
        hp->_current_header = HEADER_CONTENT_TYPE;
        hp->_ctype = NULL;
        hp->_ctype_len = 0;
    } else if (n == 6 && strncasecmp(hp->_field, "expect", 6) == 0) {
        hp->_current_header = HEADER_EXPECT;
    } else if (n == 13 && strncasecmp(hp->_field, "authorization", 13) == 0) {
        hp->_current_header = HEADER_AUTHORIZATION;
        hp->_auth = NULL;
        hp->_auth_len = 0;
    }
    hp->_field_len = 0;
    hp->_value_started = false;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
    adm_http_parser_t *hp = parser_of(p);

    if (count_head_bytes(hp, n) != 0) {
        return -1;
    }
    switch (hp->_current_header) {
    case HEADER_CONTENT_TYPE:
        if (hp->_ctype_len + n > CONTENT_TYPE_MAX) {
            return fail(hp, 415, "Content-Type is too long");
        }
        if (grow_append(hp->arena, &hp->_ctype, &hp->_ctype_len, at, n) != 0) {
            return fail(hp, 500, "out of memory");
        }
        break;
    case HEADER_AUTHORIZATION:
        if (hp->_auth_len + n > AUTHORIZATION_MAX) {
            return fail(hp, 431, "Authorization header is too long");
        }
        if (grow_append(hp->arena, &hp->_auth, &hp->_auth_len, at, n) != 0) {
            return fail(hp, 500, "out of memory");
        }
        break;
    case HEADER_EXPECT:
        /* Only "100-continue" is meaningful; any other expectation is ignored (RFC 9110 10.1.1). */
        if (!hp->_value_started && n >= 12 && strncasecmp(at, "100-continue", 12) == 0) {
            hp->req.expect_continue = true;
        }
        break;
    default: break;
    }
    hp->_value_started = true;
    return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
    return count_head_bytes(parser_of(p), HEADER_LINE_OVERHEAD) != 0 ? -1 : 0;
}

static int on_headers_complete(llhttp_t *p)
{
    adm_http_parser_t *hp = parser_of(p);
    adm_http_request_t *r = &hp->req;
    char *q;

    r->method = (uint8_t)llhttp_get_method(p);
    r->keep_alive = llhttp_should_keep_alive(p) != 0;
    r->chunked = (p->flags & F_CHUNKED) != 0;
    r->has_content_length = (p->flags & F_CONTENT_LENGTH) != 0;
    r->content_length = r->has_content_length ? p->content_length : 0;
    r->content_type = hp->_ctype;
    r->authorization = hp->_auth;
    if (hp->_target == NULL) {
        return fail(hp, 400, "empty request target");
    }
    q = strchr(hp->_target, '?');
    if (q != NULL) {
        *q = '\0';
        r->query = q + 1;
    } else {
        r->query = "";
    }
    r->path = hp->_target;
    if (r->has_content_length && r->content_length > hp->max_body_bytes) {
        return fail(hp, 413, "request body is larger than --max-request-bytes");
    }
    hp->_headers_done = true;
    hp->_pending = ADM_HTTP_HEADERS;
    return HPE_PAUSED;
}

static int on_body(llhttp_t *p, const char *at, size_t n)
{
    adm_http_parser_t *hp = parser_of(p);
    adm_http_request_t *r = &hp->req;

    if (r->body_len + n > hp->max_body_bytes) {
        return fail(hp, 413, "request body is larger than --max-request-bytes");
    }
    if (r->chunked) {
        if (r->body_len + n > hp->_chunked_cap) {
            size_t cap = hp->_chunked_cap == 0 ? 4096 : hp->_chunked_cap;
            uint8_t *nb;

            while (cap < r->body_len + n) {
                cap *= 2;
            }
            nb = adm_arena_realloc(hp->arena, hp->_chunked_body, hp->_chunked_cap, cap);
            if (nb == NULL) {
                return fail(hp, 500, "out of memory");
            }
            hp->_chunked_body = nb;
            hp->_chunked_cap = cap;
        }
        memcpy(hp->_chunked_body + r->body_len, at, n);
    } else if (r->body_len == 0) {
        /* Content-Length bodies arrive as one contiguous run of the connection's buffer. */
        hp->_body_rel = (size_t)((const uint8_t *)at - hp->_base) - hp->_msg_start;
    }
    r->body_len += n;
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    adm_http_parser_t *hp = parser_of(p);

    hp->_pending = ADM_HTTP_MESSAGE;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void reset_message(adm_http_parser_t *hp)
{
    memset(&hp->req, 0, sizeof(hp->req));
    hp->req.query = "";
    hp->error_status = 0;
    hp->error_message = NULL;
    hp->_header_bytes = 0;
    hp->_target = NULL;
    hp->_target_len = 0;
    hp->_ctype = NULL;
    hp->_ctype_len = 0;
    hp->_auth = NULL;
    hp->_auth_len = 0;
    hp->_chunked_body = NULL;
    hp->_chunked_cap = 0;
    hp->_field_len = 0;
    hp->_current_header = HEADER_OTHER;
    hp->_in_message = false;
    hp->_headers_done = false;
    hp->_value_started = false;
    hp->_body_rel = 0;
    hp->_pending = ADM_HTTP_NEED_MORE;
}

void adm_http_parser_init(adm_http_parser_t *hp, size_t max_body_bytes)
{
    memset(hp, 0, sizeof(*hp));
    llhttp_init(&hp->llhttp, HTTP_REQUEST, &settings);
    hp->max_body_bytes = max_body_bytes;
    reset_message(hp);
}

void adm_http_parser_next(adm_http_parser_t *hp)
{
    reset_message(hp);
}

bool adm_http_parser_in_message(const adm_http_parser_t *hp)
{
    return hp->_in_message;
}

size_t adm_http_parser_keep_from(const adm_http_parser_t *hp, size_t consumed)
{
    if (hp->_in_message && hp->_msg_start < consumed) {
        return hp->_msg_start;
    }
    return consumed;
}

void adm_http_parser_shift(adm_http_parser_t *hp, size_t n)
{
    if (hp->_in_message) {
        hp->_msg_start -= n;
    }
}

adm_http_event_t adm_http_parse(adm_http_parser_t *hp, adm_arena_t *arena, const uint8_t *buf, size_t len,
                                size_t *off)
{
    const char *start;
    llhttp_errno_t err;

    /* After a pause at the end of a head, a message without a body completes on no input. */
    if (buf == NULL || (*off >= len && !hp->_headers_done)) {
        return ADM_HTTP_NEED_MORE;
    }
    start = (const char *)buf + *off;
    if (!hp->_in_message) {
        hp->_msg_start = *off;
    }
    hp->arena = arena;
    hp->_base = buf;
    hp->_pending = ADM_HTTP_NEED_MORE;
    err = llhttp_execute(&hp->llhttp, start, len - *off);
    if (err == HPE_OK) {
        *off = len;
        return ADM_HTTP_NEED_MORE;
    }
    if (err == HPE_PAUSED || err == HPE_PAUSED_UPGRADE) {
        *off = (size_t)(llhttp_get_error_pos(&hp->llhttp) - (const char *)buf);
        if (err == HPE_PAUSED_UPGRADE) {
            /* admitd speaks no upgraded protocol: answer this request, then close. */
            hp->req.keep_alive = false;
            llhttp_resume_after_upgrade(&hp->llhttp);
        } else {
            llhttp_resume(&hp->llhttp);
        }
        if (hp->_pending == ADM_HTTP_MESSAGE) {
            adm_http_request_t *r = &hp->req;

            r->body = r->chunked ? hp->_chunked_body : buf + hp->_msg_start + hp->_body_rel;
            if (r->body_len == 0) {
                r->body = (const uint8_t *)"";
            }
        }
        return hp->_pending;
    }
    if (hp->error_status == 0) {
        hp->error_status = 400;
        hp->error_message = llhttp_get_error_reason(&hp->llhttp);
        if (hp->error_message == NULL) {
            hp->error_message = llhttp_errno_name(err);
        }
    }
    return ADM_HTTP_ERROR;
}

const char *adm_http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

/* Writes a decimal number backwards into the end of a small buffer; returns its start. */
static char *format_uint(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

int adm_http_write_response(adm_buf_t *out, const adm_http_response_t *r)
{
    char num[24];
    char *n;
    const char *reason = adm_http_reason(r->status);
    int err;

    /* One reservation for the head's worst case plus the body, then plain copies. */
    err = adm_buf_reserve(out, 160 + strlen(reason) + (r->content_type ? strlen(r->content_type) : 0) +
                                   (r->allow ? strlen(r->allow) : 0) + r->body_len);
    if (err != 0) {
        return err;
    }
    adm_buf_append(out, "HTTP/1.1 ", 9);
    n = format_uint(num + sizeof(num), (uint64_t)r->status);
    adm_buf_append(out, n, (size_t)(num + sizeof(num) - n));
    adm_buf_append(out, " ", 1);
    adm_buf_append_str(out, reason);
    if (r->content_type != NULL) {
        adm_buf_append(out, "\r\nContent-Type: ", 16);
        adm_buf_append_str(out, r->content_type);
    }
    if (r->allow != NULL) {
        adm_buf_append(out, "\r\nAllow: ", 9);
        adm_buf_append_str(out, r->allow);
    }
    if (r->close) {
        adm_buf_append(out, "\r\nConnection: close", 19);
    }
    adm_buf_append(out, "\r\nContent-Length: ", 18);
    n = format_uint(num + sizeof(num), r->body_len);
    adm_buf_append(out, n, (size_t)(num + sizeof(num) - n));
    adm_buf_append(out, "\r\n\r\n", 4);
    return r->omit_body ? 0 : adm_buf_append(out, r->body, r->body_len);
}

int adm_http_write_continue(adm_buf_t *out)
{
    return adm_buf_append(out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
}

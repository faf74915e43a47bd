/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the API server's watch streams and list pages: a byte-level framer that finds where each
 * JSON event ends without parsing it (strings and escapes tracked so braces inside them do not
 * count), then yyjson through adm_json_read for the event itself, which bounds depth.
 */
#include "adm/cluster/watch_decode.h"

#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void adm_watch_framer_init(adm_watch_framer_t *f)
{
    memset(f, 0, sizeof(*f));
    f->max = ADM_WATCH_MAX_EVENT_BYTES;
}

void adm_watch_framer_free(adm_watch_framer_t *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
}

static bool append(adm_watch_framer_t *f, const char *data, size_t n)
{
    if (f->len + n > f->cap) {
        size_t cap = f->cap == 0 ? 4096 : f->cap;
        char *nb;

        while (cap < f->len + n) {
            cap *= 2;
        }
        nb = realloc(f->buf, cap);
        if (nb == NULL) {
            return false;
        }
        f->buf = nb;
        f->cap = cap;
    }
    memcpy(f->buf + f->len, data, n);
    f->len += n;
    return true;
}

adm_frame_result_t adm_watch_framer_feed(adm_watch_framer_t *f, const char *data, size_t len, size_t *used,
                                         const char **event, size_t *event_len)
{
    size_t i = 0, begin;

    *used = 0;
    if (!f->started) {
        /* the previous event was handed out: its bytes are no longer needed */
        f->len = 0;
        while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) {
            i++;
        }
        if (i == len) {
            *used = len;
            return ADM_FRAME_NEED_MORE;
        }
        if (data[i] != '{') {
            *used = i;
            return ADM_FRAME_ERROR;
        }
        f->started = true;
        f->depth = 0;
        f->in_string = f->escape = false;
    }
    begin = i;
    for (; i < len; i++) {
        char ch = data[i];

        if (f->in_string) {
            if (f->escape) {
                f->escape = false;
            } else if (ch == '\\') {
                f->escape = true;
            } else if (ch == '"') {
                f->in_string = false;
            }
            continue;
        }
        if (ch == '"') {
            f->in_string = true;
        } else if (ch == '{' || ch == '[') {
            f->depth++;
        } else if (ch == '}' || ch == ']') {
            f->depth--;
            if (f->depth == 0) {
                i++;
                break;
            }
        }
    }
    if (f->len + (i - begin) > f->max) {
        *used = i;
        return ADM_FRAME_ERROR;
    }
    if (!append(f, data + begin, i - begin)) {
        *used = i;
        return ADM_FRAME_ERROR;
    }
    *used = i;
    if (f->started && f->depth == 0 && f->len > 0 && !f->in_string) {
        f->started = false;
        *event = f->buf;
        *event_len = f->len;
        return ADM_FRAME_EVENT;
    }
    return ADM_FRAME_NEED_MORE;
}

static int perr(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return ADM_EPARSE;
}

static const char *str_or(yyjson_val *obj, const char *key, const char *dflt)
{
    yyjson_val *v = yyjson_obj_get(obj, key);

    return yyjson_is_str(v) ? yyjson_get_str(v) : dflt;
}

static yyjson_val *read_object(adm_arena_t *a, const char *text, size_t len, const char *what, char *err,
                               size_t err_len)
{
    yyjson_read_err rerr;
    yyjson_doc *doc = adm_json_read(a, text, len, &rerr);
    yyjson_val *root;

    if (doc == NULL) {
        snprintf(err, err_len, "%s: %s", what, adm_json_go_error(a, text, len, &rerr));
        return NULL;
    }
    root = yyjson_doc_get_root(doc);
    if (!yyjson_is_obj(root)) {
        snprintf(err, err_len, "%s: not a JSON object", what);
        return NULL;
    }
    return root;
}

int adm_watch_event_decode(adm_arena_t *a, const char *text, size_t len, adm_watch_event_t *ev, char *err,
                           size_t err_len)
{
    static const struct {
        const char *name;
        adm_watch_type_t type;
    } types[] = {
        {"ADDED", ADM_WATCH_ADDED},       {"MODIFIED", ADM_WATCH_MODIFIED}, {"DELETED", ADM_WATCH_DELETED},
        {"BOOKMARK", ADM_WATCH_BOOKMARK}, {"ERROR", ADM_WATCH_ERROR},
    };
    yyjson_val *root = read_object(a, text, len, "watch event", err, err_len);
    yyjson_val *type, *obj, *meta, *code;
    size_t i;

    memset(ev, 0, sizeof(*ev));
    if (root == NULL) {
        return ADM_EPARSE;
    }
    type = yyjson_obj_get(root, "type");
    if (!yyjson_is_str(type)) {
        return perr(err, err_len, "got invalid watch event type: %s", "(none)");
    }
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(yyjson_get_str(type), types[i].name) == 0) {
            break;
        }
    }
    if (i == sizeof(types) / sizeof(types[0])) {
        /* client-go's restclient watch decoder ends the watch on this */
        return perr(err, err_len, "got invalid watch event type: %.64s", yyjson_get_str(type));
    }
    ev->type = types[i].type;
    obj = yyjson_obj_get(root, "object");
    if (!yyjson_is_obj(obj)) {
        return perr(err, err_len, "watch event %s: object is not a JSON object", types[i].name);
    }
    ev->object = obj;
    ev->reason = "";
    ev->message = "";
    ev->namespace_ = "";
    if (ev->type == ADM_WATCH_ERROR) {
        code = yyjson_obj_get(obj, "code");
        ev->code = yyjson_is_int(code) && yyjson_get_sint(code) >= 0 && yyjson_get_sint(code) < 1000
                       ? (int)yyjson_get_sint(code)
                       : 0;
        ev->reason = str_or(obj, "reason", "");
        ev->message = str_or(obj, "message", "");
        return 0;
    }
    meta = yyjson_obj_get(obj, "metadata");
    ev->resource_version = str_or(meta, "resourceVersion", NULL);
    if (ev->resource_version == NULL || ev->resource_version[0] == '\0') {
        return perr(err, err_len, "watch event %s: object has no metadata.resourceVersion", types[i].name);
    }
    if (ev->type == ADM_WATCH_BOOKMARK) {
        return 0;
    }
    ev->name = str_or(meta, "name", NULL);
    if (ev->name == NULL || ev->name[0] == '\0') {
        return perr(err, err_len, "watch event %s: object has no metadata.name", types[i].name);
    }
    ev->namespace_ = str_or(meta, "namespace", "");
    return 0;
}

bool adm_watch_event_expired(const adm_watch_event_t *ev)
{
    /* apimachinery's IsResourceExpired/IsGone: reason Expired or Gone; the code alone also counts */
    return ev->type == ADM_WATCH_ERROR &&
           (ev->code == 410 || strcmp(ev->reason, "Expired") == 0 || strcmp(ev->reason, "Gone") == 0);
}

int adm_list_page_decode(adm_arena_t *a, const char *text, size_t len, adm_list_page_t *page, char *err,
                         size_t err_len)
{
    yyjson_val *root = read_object(a, text, len, "list", err, err_len);
    yyjson_val *meta, *it, *remaining;
    size_t i, n;

    memset(page, 0, sizeof(*page));
    if (root == NULL) {
        return ADM_EPARSE;
    }
    meta = yyjson_obj_get(root, "metadata");
    page->resource_version = str_or(meta, "resourceVersion", NULL);
    page->continue_token = str_or(meta, "continue", "");
    remaining = yyjson_obj_get(meta, "remainingItemCount");
    page->remaining_items = yyjson_is_uint(remaining) && yyjson_get_uint(remaining) <= INT64_MAX
                                ? (int64_t)yyjson_get_uint(remaining)
                                : -1;
    if (page->resource_version == NULL || page->resource_version[0] == '\0') {
        return perr(err, err_len, "list: no metadata.resourceVersion");
    }
    page->items = yyjson_obj_get(root, "items");
    if (page->items == NULL || yyjson_is_null(page->items)) {
        /* Go encodes an empty slice as null when it was never allocated */
        page->items = NULL;
        return 0;
    }
    if (!yyjson_is_arr(page->items)) {
        return perr(err, err_len, "list: items is not an array");
    }
    yyjson_arr_foreach(page->items, i, n, it)
    {
        const char *name = str_or(yyjson_obj_get(it, "metadata"), "name", NULL);

        if (!yyjson_is_obj(it) || name == NULL || name[0] == '\0') {
            snprintf(err, err_len, "list: items[%zu] has no metadata.name", i);
            return ADM_EPARSE;
        }
    }
    return 0;
}

int adm_status_decode(adm_arena_t *a, const char *text, size_t len, const char **reason, const char **message,
                      uint64_t *retry_after_s)
{
    char err[256];
    yyjson_val *root = read_object(a, text, len, "status", err, sizeof(err));
    yyjson_val *ra;

    *reason = "";
    *message = "";
    *retry_after_s = 0;
    if (root == NULL || strcmp(str_or(root, "kind", ""), "Status") != 0) {
        return ADM_EPARSE;
    }
    *reason = str_or(root, "reason", "");
    *message = str_or(root, "message", "");
    ra = yyjson_obj_get(yyjson_obj_get(root, "details"), "retryAfterSeconds");
    if (yyjson_is_int(ra) && yyjson_get_sint(ra) > 0) {
        *retry_after_s = (uint64_t)yyjson_get_sint(ra);
    }
    return 0;
}

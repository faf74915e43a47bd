/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-mockhook's behaviours (behavior.h): parsing B of --behavior/--route, drawing from a
 * weighted mix, and building each answer (an AdmissionReview, an HTTP error or invalid JSON) in
 * the request's arena.
 */
#include "behavior.h"

#include "adm/base/json.h"
#include "adm/base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

static int fail(char *err, size_t err_len, const char *spec, const char *why)
{
    snprintf(err, err_len, "behaviour \"%s\": %s", spec, why);
    return -1;
}

/* raw:BYTES in place: \r, \n and \\ stand for CR, LF and a backslash (a flag cannot hold a CR). */
static void unescape_raw(mock_behavior_t *b)
{
    char *t = (char *)b->text;
    size_t r = 0, w = 0, n = strlen(t);

    while (r < n) {
        if (t[r] == '\\' && r + 1 < n && (t[r + 1] == 'r' || t[r + 1] == 'n' || t[r + 1] == '\\')) {
            t[w++] = t[r + 1] == 'r' ? '\r' : t[r + 1] == 'n' ? '\n' : '\\';
            r += 2;
        } else {
            t[w++] = t[r++];
        }
    }
    t[w] = '\0';
    b->text_len = w;
}

static int parse_simple(adm_arena_t *a, const char *spec, mock_behavior_t *out, char *err, size_t err_len)
{
    const char *colon = strchr(spec, ':');
    size_t name_len = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon != NULL ? colon + 1 : NULL;
    static const struct {
        const char *name;
        mock_kind_t kind;
        int arg; /* 0 none, 1 optional, 2 required */
    } names[] = {
        {"allow", MOCK_ALLOW, 0},
        {"deny", MOCK_DENY, 1},
        {"patch", MOCK_PATCH, 2},
        {"error", MOCK_ERROR, 2},
        {"invalid-json", MOCK_INVALID_JSON, 0},
        {"wrong-uid", MOCK_WRONG_UID, 0},
        {"hang", MOCK_HANG, 0},
        {"close", MOCK_CLOSE, 0},
        {"reset", MOCK_RESET, 0},
        {"warn", MOCK_WARN, 2},
        {"annotate", MOCK_ANNOTATE, 2},
        {"raw", MOCK_RAW, 2},
    };

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i].name) != name_len || strncmp(names[i].name, spec, name_len) != 0) {
            continue;
        }
        if (names[i].arg == 0 && arg != NULL) {
            return fail(err, err_len, spec, "takes no argument");
        }
        if (names[i].arg == 2 && (arg == NULL || *arg == '\0')) {
            return fail(err, err_len, spec, "needs an argument after ':'");
        }
        out->kind = names[i].kind;
        out->text = arg != NULL && *arg != '\0' ? adm_arena_strndup(a, arg, strlen(arg)) : NULL;
        if (out->kind == MOCK_PATCH) {
            /* Not adm_json_read: a test may want a patch nested past the limit, to see it refused. */
            yyjson_doc *doc = yyjson_read(arg, strlen(arg), 0);
            bool is_array = doc != NULL && yyjson_is_arr(yyjson_doc_get_root(doc));

            yyjson_doc_free(doc);
            if (!is_array) {
                return fail(err, err_len, spec, "the patch must be a JSON array (RFC 6902)");
            }
        } else if (out->kind == MOCK_ERROR) {
            uint64_t code;

            if (adm_parse_uint(arg, 599, &code) != 0 || code < 200) {
                return fail(err, err_len, spec, "the code must be an HTTP status from 200 to 599");
            }
            out->code = (int)code;
        } else if (out->kind == MOCK_RAW) {
            unescape_raw(out);
        } else if (out->kind == MOCK_ANNOTATE) {
            const char *eq = strchr(arg, '=');

            if (eq == NULL || eq == arg) {
                return fail(err, err_len, spec, "write annotate:KEY=VALUE");
            }
            out->text = adm_arena_strndup(a, arg, (size_t)(eq - arg));
            out->value = adm_arena_strndup(a, eq + 1, strlen(eq + 1));
        }
        return 0;
    }
    return fail(
        err, err_len, spec,
        "unknown; use allow, deny[:MSG], patch:JSONPATCH, error:CODE, invalid-json, wrong-uid, hang, close, "
        "reset, warn:TEXT, annotate:KEY=VALUE, raw:BYTES or mix:B=WEIGHT,...");
}

int mock_behavior_parse(adm_arena_t *a, const char *spec, mock_behavior_t *out, char *err, size_t err_len)
{
    const char *p;

    if (strncmp(spec, "mix:", 4) != 0) {
        return parse_simple(a, spec, out, err, err_len);
    }
    memset(out, 0, sizeof(*out));
    out->kind = MOCK_MIX;
    out->choices = adm_arena_calloc(a, MOCK_MIX_MAX, sizeof(*out->choices));
    out->cumulative = adm_arena_calloc(a, MOCK_MIX_MAX, sizeof(*out->cumulative));
    if (out->choices == NULL || out->cumulative == NULL) {
        return fail(err, err_len, spec, "out of memory");
    }
    /* Each part is B=WEIGHT; B itself may contain '=' (annotate:K=V), so the weight is after the last. */
    for (p = spec + 4; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char *part = adm_arena_strndup(a, p, len);
        char *eq = part != NULL ? strrchr(part, '=') : NULL;
        uint64_t weight;

        if (eq == NULL || adm_parse_uint(eq + 1, 1000000, &weight) != 0 || weight == 0) {
            return fail(err, err_len, spec,
                        "each part of a mix is BEHAVIOUR=WEIGHT with a positive whole weight");
        }
        *eq = '\0';
        if (out->nchoices == MOCK_MIX_MAX) {
            return fail(err, err_len, spec, "at most 16 parts");
        }
        if (strncmp(part, "mix:", 4) == 0) {
            return fail(err, err_len, spec, "a mix cannot contain a mix");
        }
        if (parse_simple(a, part, &out->choices[out->nchoices], err, err_len) != 0) {
            return -1;
        }
        out->total_weight += (unsigned)weight;
        out->cumulative[out->nchoices++] = out->total_weight;
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    if (out->nchoices == 0) {
        return fail(err, err_len, spec, "a mix needs at least one part");
    }
    return 0;
}

const mock_behavior_t *mock_behavior_pick(const mock_behavior_t *b, uint32_t rnd)
{
    unsigned x;

    if (b->kind != MOCK_MIX) {
        return b;
    }
    x = (unsigned)(((uint64_t)rnd * b->total_weight) >> 32);
    for (size_t i = 0; i < b->nchoices; i++) {
        if (x < b->cumulative[i]) {
            return &b->choices[i];
        }
    }
    return &b->choices[b->nchoices - 1];
}

static void text(adm_http_response_t *resp, int status, const char *body)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = body;
    resp->body_len = strlen(body);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(adm_arena_t *a, const char *in, size_t len)
{
    char *out = adm_arena_alloc(a, (len + 2) / 3 * 4 + 1);
    size_t o = 0;

    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(uint8_t)in[i] << 16;

        v |= i + 1 < len ? (uint32_t)(uint8_t)in[i + 1] << 8 : 0;
        v |= i + 2 < len ? (uint8_t)in[i + 2] : 0;
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

void mock_behavior_answer(const mock_behavior_t *b, adm_arena_t *a, const uint8_t *body, size_t body_len,
                          adm_http_response_t *resp)
{
    yyjson_alc alc;
    yyjson_read_err rerr;
    yyjson_doc *req;
    yyjson_val *api_version, *uid;
    yyjson_mut_doc *doc;
    yyjson_mut_val *root, *response;
    size_t len;

    if (b->kind == MOCK_ERROR) {
        char *msg = adm_arena_printf(a, "admitd-mockhook: error %d\n", b->code);

        text(resp, b->code, msg != NULL ? msg : "error\n");
        return;
    }
    if (b->kind == MOCK_INVALID_JSON) {
        resp->status = 200;
        resp->content_type = "application/json";
        resp->body = "this is not json";
        resp->body_len = strlen(resp->body);
        return;
    }
    adm_json_alc_init(&alc, a);
    req = adm_json_read(a, (const char *)body, body_len, &rerr);
    api_version = yyjson_obj_get(yyjson_doc_get_root(req), "apiVersion");
    uid = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(req), "request"), "uid");
    if (!yyjson_is_str(uid)) {
        text(resp, 400, "admitd-mockhook: the body is not an AdmissionReview with request.uid\n");
        return;
    }
    doc = yyjson_mut_doc_new(&alc);
    root = yyjson_mut_obj(doc);
    response = yyjson_mut_obj(doc);
    if (doc == NULL || root == NULL || response == NULL) {
        text(resp, 500, "out of memory\n");
        return;
    }
    yyjson_mut_doc_set_root(doc, root);
    yyjson_mut_obj_add_str(doc, root, "apiVersion",
                           yyjson_is_str(api_version) ? yyjson_get_str(api_version) : "admission.k8s.io/v1");
    yyjson_mut_obj_add_str(doc, root, "kind", "AdmissionReview");
    yyjson_mut_obj_add_val(doc, root, "response", response);
    yyjson_mut_obj_add_str(doc, response, "uid",
                           b->kind == MOCK_WRONG_UID ? "00000000-0000-4000-8000-000000000000"
                                                     : yyjson_get_str(uid));
    yyjson_mut_obj_add_bool(doc, response, "allowed", b->kind != MOCK_DENY);
    if (b->kind == MOCK_DENY && b->text != NULL) {
        yyjson_mut_val *status = yyjson_mut_obj_add_obj(doc, response, "status");

        yyjson_mut_obj_add_int(doc, status, "code", 403);
        yyjson_mut_obj_add_str(doc, status, "message", b->text);
    } else if (b->kind == MOCK_PATCH) {
        yyjson_mut_obj_add_str(doc, response, "patchType", "JSONPatch");
        yyjson_mut_obj_add_str(doc, response, "patch", base64(a, b->text, strlen(b->text)));
    } else if (b->kind == MOCK_WARN) {
        yyjson_mut_val *warnings = yyjson_mut_obj_add_arr(doc, response, "warnings");

        yyjson_mut_arr_add_str(doc, warnings, b->text);
    } else if (b->kind == MOCK_ANNOTATE) {
        yyjson_mut_val *annotations = yyjson_mut_obj_add_obj(doc, response, "auditAnnotations");

        yyjson_mut_obj_add_str(doc, annotations, b->text, b->value);
    }
    resp->body = yyjson_mut_write_opts(doc, 0, &alc, &len, NULL);
    if (resp->body == NULL) {
        text(resp, 500, "out of memory\n");
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body_len = len;
}

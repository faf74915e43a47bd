/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AdmissionReview decoding (admission.k8s.io/v1 and v1beta1): the request body admitd receives,
 * turned into adm_review_request_t. The encoders of what admitd writes (its answer, and the request
 * it sends downstream) are in review_encode.c.
 *
 * Decoding runs the depth guard, lets yyjson parse the body (yyjson copies the text into its own
 * document in the arena, so the caller's buffer is only read), and then makes one pass over the
 * members of each object it knows. As with kube-apiserver's Go decoder, absent and null fields read
 * as zero values ("" for strings, never NULL), unknown members are ignored, and the last of
 * duplicate members wins; a known field of the wrong JSON type is an error that names the field.
 */
#include "adm/admission/review.h"

#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MSG_NOT_REVIEW "request body is not an AdmissionReview: "
#define MSG_BAD_OPERATION "AdmissionReview request.operation must be CREATE, UPDATE, DELETE or CONNECT"

typedef struct decoder_s {
    adm_arena_t *arena;
    const char **problem;
} decoder_t;

/* Length-aware key comparison: a key with an embedded NUL must not match a shorter name. */
static inline bool key_is(const char *key, size_t len, const char *name)
{
    size_t n = strlen(name);

    return len == n && memcmp(key, name, n) == 0;
}

static inline bool absent(yyjson_val *v)
{
    return v == NULL || yyjson_is_null(v);
}

/*
 * Sets the problem to "<path>[.<member>] <what>", built in the arena because field paths are
 * composed; this runs only on the error path. Returns ADM_EPARSE, or ADM_ENOMEM.
 */
static int field_error(decoder_t *d, const char *path, const char *member, const char *what)
{
    size_t np = strlen(path);
    size_t nm = member != NULL ? strlen(member) + 1 : 0;
    size_t nw = strlen(what);
    char *msg = adm_arena_alloc(d->arena, np + nm + 1 + nw + 1);
    char *w = msg;

    if (msg == NULL) {
        return ADM_ENOMEM;
    }
    memcpy(w, path, np);
    w += np;
    if (member != NULL) {
        *w++ = '.';
        memcpy(w, member, nm - 1);
        w += nm - 1;
    }
    *w++ = ' ';
    memcpy(w, what, nw + 1);
    *d->problem = msg;
    return ADM_EPARSE;
}

/* Reads a string field; absent or null gives "". */
static int get_string(decoder_t *d, yyjson_val *v, const char *path, const char *member, const char **out)
{
    const char *s;

    if (absent(v)) {
        *out = "";
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return field_error(d, path, member, "must be a string");
    }
    s = yyjson_get_str(v);
    /* Callers get C strings: an escaped NUL inside would silently cut the value short. */
    if (memchr(s, '\0', yyjson_get_len(v)) != NULL) {
        return field_error(d, path, member, "must not contain a NUL character");
    }
    *out = s;
    return 0;
}

/*
 * Reads a GroupVersionKind or GroupVersionResource ({group, version, <last>}) into out[0..2].
 * Absent or null gives three empty strings.
 */
static int get_group_version(decoder_t *d, yyjson_val *v, const char *path, const char *last,
                             const char *out[3])
{
    yyjson_val *fields[3] = {NULL, NULL, NULL};
    static const char *const names[2] = {"group", "version"};
    size_t last_len = strlen(last);
    yyjson_obj_iter it;
    yyjson_val *key;
    int rc;

    if (!absent(v) && !yyjson_is_obj(v)) {
        return field_error(d, path, NULL, "must be an object");
    }
    if (v != NULL && yyjson_is_obj(v)) {
        yyjson_obj_iter_init(v, &it);
        for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
            const char *k = yyjson_get_str(key);
            size_t n = yyjson_get_len(key);

            /* four of these objects a request: the length picks the one name to compare */
            if (n == 5 && memcmp(k, "group", 5) == 0) {
                fields[0] = yyjson_obj_iter_get_val(key);
            } else if (n == 7 && memcmp(k, "version", 7) == 0) {
                fields[1] = yyjson_obj_iter_get_val(key);
            } else if (n == last_len && memcmp(k, last, n) == 0) {
                fields[2] = yyjson_obj_iter_get_val(key);
            }
        }
    }
    for (int i = 0; i < 3; i++) {
        rc = get_string(d, fields[i], path, i < 2 ? names[i] : last, &out[i]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int get_gvk(decoder_t *d, yyjson_val *v, const char *path, adm_gvk_t *out)
{
    const char *s[3];
    int rc = get_group_version(d, v, path, "kind", s);

    out->group = s[0];
    out->version = s[1];
    out->kind = s[2];
    return rc;
}

static int get_gvr(decoder_t *d, yyjson_val *v, const char *path, adm_gvr_t *out)
{
    const char *s[3];
    int rc = get_group_version(d, v, path, "resource", s);

    out->group = s[0];
    out->version = s[1];
    out->resource = s[2];
    return rc;
}

/*
 * Reads an array of strings into an arena array (null elements read as "", as in Go). *out stays
 * NULL and *count 0 when the field is absent or null.
 */
static int get_string_array(decoder_t *d, yyjson_val *v, const char *path, const char ***out, size_t *count)
{
    const char **items;
    yyjson_arr_iter it;
    yyjson_val *item;
    size_t n = 0;
    int rc;

    *out = NULL;
    *count = 0;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_arr(v)) {
        return field_error(d, path, NULL, "must be an array of strings");
    }
    items = adm_arena_alloc(d->arena, (yyjson_arr_size(v) + 1) * sizeof(*items));
    if (items == NULL) {
        return ADM_ENOMEM;
    }
    yyjson_arr_iter_init(v, &it);
    for (item = yyjson_arr_iter_next(&it); item != NULL; item = yyjson_arr_iter_next(&it)) {
        if (!absent(item) && !yyjson_is_str(item)) {
            return field_error(d, path, NULL, "must be an array of strings");
        }
        rc = get_string(d, item, path, NULL, &items[n]);
        if (rc != 0) {
            return rc;
        }
        n++;
    }
    *out = items;
    *count = n;
    return 0;
}

/* userInfo.extra is map[string][]string: checked here, handed to callers as the JSON object. */
static int check_extra(decoder_t *d, yyjson_val *v)
{
    static const char *const msg = "must be an object of string arrays";
    yyjson_obj_iter it;
    yyjson_val *key;

    if (!yyjson_is_obj(v)) {
        return field_error(d, "request.userInfo.extra", NULL, msg);
    }
    yyjson_obj_iter_init(v, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        yyjson_val *arr = yyjson_obj_iter_get_val(key);
        yyjson_arr_iter ai;
        yyjson_val *item;

        if (absent(arr)) {
            continue;
        }
        if (!yyjson_is_arr(arr)) {
            return field_error(d, "request.userInfo.extra", NULL, msg);
        }
        yyjson_arr_iter_init(arr, &ai);
        for (item = yyjson_arr_iter_next(&ai); item != NULL; item = yyjson_arr_iter_next(&ai)) {
            if (!absent(item) && !yyjson_is_str(item)) {
                return field_error(d, "request.userInfo.extra", NULL, msg);
            }
        }
    }
    return 0;
}

static int get_user_info(decoder_t *d, yyjson_val *v, adm_user_info_t *u)
{
    yyjson_val *username = NULL, *uid = NULL, *groups = NULL, *extra = NULL;
    yyjson_obj_iter it;
    yyjson_val *key;
    int rc;

    u->username = "";
    u->uid = "";
    u->groups = NULL;
    u->ngroups = 0;
    u->extra = NULL;
    if (absent(v)) {
        return 0;
    }
    if (!yyjson_is_obj(v)) {
        return field_error(d, "request.userInfo", NULL, "must be an object");
    }
    yyjson_obj_iter_init(v, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *k = yyjson_get_str(key);
        size_t n = yyjson_get_len(key);

        if (key_is(k, n, "username")) {
            username = yyjson_obj_iter_get_val(key);
        } else if (key_is(k, n, "uid")) {
            uid = yyjson_obj_iter_get_val(key);
        } else if (key_is(k, n, "groups")) {
            groups = yyjson_obj_iter_get_val(key);
        } else if (key_is(k, n, "extra")) {
            extra = yyjson_obj_iter_get_val(key);
        }
    }
    rc = get_string(d, username, "request.userInfo", "username", &u->username);
    if (rc == 0) {
        rc = get_string(d, uid, "request.userInfo", "uid", &u->uid);
    }
    if (rc == 0) {
        rc = get_string_array(d, groups, "request.userInfo.groups", &u->groups, &u->ngroups);
    }
    if (rc == 0 && !absent(extra)) {
        rc = check_extra(d, extra);
        u->extra = extra;
    }
    return rc;
}

/* The members of AdmissionRequest, collected in one pass before they are checked in this order. */
enum request_field {
    F_UID,
    F_OPERATION,
    F_KIND,
    F_RESOURCE,
    F_SUB_RESOURCE,
    F_REQUEST_KIND,
    F_REQUEST_RESOURCE,
    F_REQUEST_SUB_RESOURCE,
    F_NAME,
    F_NAMESPACE,
    F_USER_INFO,
    F_OBJECT,
    F_OLD_OBJECT,
    F_DRY_RUN,
    F_OPTIONS,
    F_COUNT
};

/* Returns the request_field for a key, or F_COUNT; the length switch keeps this to one memcmp. */
static enum request_field request_field(const char *k, size_t n)
{
    switch (n) {
    case 3: return memcmp(k, "uid", 3) == 0 ? F_UID : F_COUNT;
    case 4:
        if (memcmp(k, "kind", 4) == 0) {
            return F_KIND;
        }
        return memcmp(k, "name", 4) == 0 ? F_NAME : F_COUNT;
    case 6:
        if (memcmp(k, "object", 6) == 0) {
            return F_OBJECT;
        }
        return memcmp(k, "dryRun", 6) == 0 ? F_DRY_RUN : F_COUNT;
    case 7: return memcmp(k, "options", 7) == 0 ? F_OPTIONS : F_COUNT;
    case 8:
        if (memcmp(k, "resource", 8) == 0) {
            return F_RESOURCE;
        }
        return memcmp(k, "userInfo", 8) == 0 ? F_USER_INFO : F_COUNT;
    case 9:
        if (memcmp(k, "namespace", 9) == 0) {
            return F_NAMESPACE;
        }
        if (memcmp(k, "operation", 9) == 0) {
            return F_OPERATION;
        }
        return memcmp(k, "oldObject", 9) == 0 ? F_OLD_OBJECT : F_COUNT;
    case 11:
        if (memcmp(k, "subResource", 11) == 0) {
            return F_SUB_RESOURCE;
        }
        return memcmp(k, "requestKind", 11) == 0 ? F_REQUEST_KIND : F_COUNT;
    case 15: return memcmp(k, "requestResource", 15) == 0 ? F_REQUEST_RESOURCE : F_COUNT;
    case 18: return memcmp(k, "requestSubResource", 18) == 0 ? F_REQUEST_SUB_RESOURCE : F_COUNT;
    default: return F_COUNT;
    }
}

static int get_uid(decoder_t *d, yyjson_val *v, adm_review_request_t *r)
{
    int rc;

    if (!absent(v) && !yyjson_is_str(v)) {
        *d->problem = "request.uid must be a string";
        return ADM_EPARSE;
    }
    rc = get_string(d, v, "request", "uid", &r->uid);
    if (rc != 0) {
        return rc;
    }
    if (r->uid[0] == '\0') {
        *d->problem = "AdmissionReview request has no uid";
        return ADM_EPARSE;
    }
    return 0;
}

static int get_operation(decoder_t *d, yyjson_val *v, adm_review_request_t *r)
{
    static const struct {
        const char *name;
        adm_operation_t op;
    } ops[] = {
        {"CREATE", ADM_OP_CREATE},
        {"UPDATE", ADM_OP_UPDATE},
        {"DELETE", ADM_OP_DELETE},
        {"CONNECT", ADM_OP_CONNECT},
    };

    if (v != NULL && yyjson_is_str(v)) {
        const char *s = yyjson_get_str(v);
        size_t n = yyjson_get_len(v);

        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            if (key_is(s, n, ops[i].name)) {
                r->operation = ops[i].op;
                r->operation_name = ops[i].name;
                return 0;
            }
        }
    }
    *d->problem = MSG_BAD_OPERATION;
    return ADM_EPARSE;
}

static int get_request(decoder_t *d, yyjson_val *req, adm_review_request_t *r)
{
    yyjson_val *f[F_COUNT] = {NULL};
    yyjson_obj_iter it;
    yyjson_val *key;
    int rc;

    yyjson_obj_iter_init(req, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        enum request_field which = request_field(yyjson_get_str(key), yyjson_get_len(key));

        if (which != F_COUNT) {
            f[which] = yyjson_obj_iter_get_val(key);
        }
    }

    rc = get_uid(d, f[F_UID], r);
    if (rc == 0) {
        rc = get_operation(d, f[F_OPERATION], r);
    }
    if (rc == 0) {
        rc = get_gvk(d, f[F_KIND], "request.kind", &r->kind);
    }
    if (rc == 0) {
        rc = get_gvr(d, f[F_RESOURCE], "request.resource", &r->resource);
    }
    if (rc == 0) {
        rc = get_string(d, f[F_SUB_RESOURCE], "request", "subResource", &r->sub_resource);
    }
    if (rc != 0) {
        return rc;
    }
    /* requestKind, requestResource and requestSubResource name what the user asked for before
       any conversion; senders omit them when that is the request itself (and older ones always). */
    if (absent(f[F_REQUEST_KIND])) {
        r->request_kind = r->kind;
    } else {
        rc = get_gvk(d, f[F_REQUEST_KIND], "request.requestKind", &r->request_kind);
    }
    if (rc == 0 && absent(f[F_REQUEST_RESOURCE])) {
        r->request_resource = r->resource;
    } else if (rc == 0) {
        rc = get_gvr(d, f[F_REQUEST_RESOURCE], "request.requestResource", &r->request_resource);
    }
    if (rc == 0 && absent(f[F_REQUEST_SUB_RESOURCE])) {
        r->request_sub_resource = r->sub_resource;
    } else if (rc == 0) {
        rc = get_string(d, f[F_REQUEST_SUB_RESOURCE], "request", "requestSubResource",
                        &r->request_sub_resource);
    }
    if (rc == 0) {
        rc = get_string(d, f[F_NAME], "request", "name", &r->name);
    }
    if (rc == 0) {
        rc = get_string(d, f[F_NAMESPACE], "request", "namespace", &r->namespace_);
    }
    if (rc == 0) {
        rc = get_user_info(d, f[F_USER_INFO], &r->user_info);
    }
    if (rc != 0) {
        return rc;
    }
    /* object, oldObject and options are RawExtensions: any JSON value, null meaning none. */
    r->object = absent(f[F_OBJECT]) ? NULL : f[F_OBJECT];
    r->old_object = absent(f[F_OLD_OBJECT]) ? NULL : f[F_OLD_OBJECT];
    r->options = absent(f[F_OPTIONS]) ? NULL : f[F_OPTIONS];
    r->dry_run = false;
    if (!absent(f[F_DRY_RUN])) {
        if (!yyjson_is_bool(f[F_DRY_RUN])) {
            *d->problem = "request.dryRun must be a boolean";
            return ADM_EPARSE;
        }
        r->dry_run = yyjson_get_bool(f[F_DRY_RUN]);
    }
    return 0;
}

/* "request body is not valid JSON: <yyjson's message> at byte N", in the arena. */
static int json_error(decoder_t *d, const yyjson_read_err *err)
{
    static const char prefix[] = "request body is not valid JSON: ";
    size_t cap;
    char *msg;
    int n;

    if (err->code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) {
        return ADM_ENOMEM;
    }
    cap = sizeof(prefix) + strlen(err->msg) + sizeof(" at byte ") + 20;
    msg = adm_arena_alloc(d->arena, cap);
    if (msg == NULL) {
        return ADM_ENOMEM;
    }
    n = snprintf(msg, cap, "%s%s at byte %zu", prefix, err->msg, err->pos);
    if (n < 0) {
        *d->problem = "request body is not valid JSON";
    } else {
        *d->problem = msg;
    }
    return ADM_EPARSE;
}

int adm_review_decode(adm_arena_t *a, const char *body, size_t len, adm_review_request_t *r,
                      const char **problem)
{
    decoder_t d = {.arena = a, .problem = problem};
    yyjson_val *api_version = NULL, *kind = NULL, *request = NULL;
    yyjson_read_err err;
    yyjson_obj_iter it;
    yyjson_val *root;
    yyjson_val *key;

    memset(r, 0, sizeof(*r));
    *problem = NULL;
    /* The depth guard runs first: no later code path (plugins walking the object included) may
       meet nesting kube-apiserver itself would have refused. */
    r->doc = adm_json_read(a, body, len, &err);
    if (r->doc == NULL) {
        if (err.code == ADM_JSON_READ_ERROR_DEPTH) {
            *problem = "request body nests deeper than 10000 levels";
            return ADM_EPARSE;
        }
        return json_error(&d, &err);
    }
    root = yyjson_doc_get_root(r->doc);
    if (!yyjson_is_obj(root)) {
        *problem = MSG_NOT_REVIEW "not a JSON object";
        return ADM_EPARSE;
    }
    yyjson_obj_iter_init(root, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *k = yyjson_get_str(key);
        size_t n = yyjson_get_len(key);

        if (key_is(k, n, "apiVersion")) {
            api_version = yyjson_obj_iter_get_val(key);
        } else if (key_is(k, n, "kind")) {
            kind = yyjson_obj_iter_get_val(key);
        } else if (key_is(k, n, "request")) {
            request = yyjson_obj_iter_get_val(key);
        }
    }
    if (yyjson_is_str(api_version) &&
        key_is(yyjson_get_str(api_version), yyjson_get_len(api_version), ADM_REVIEW_API_V1)) {
        r->version = ADM_REVIEW_V1;
    } else if (yyjson_is_str(api_version) &&
               key_is(yyjson_get_str(api_version), yyjson_get_len(api_version), ADM_REVIEW_API_V1BETA1)) {
        r->version = ADM_REVIEW_V1BETA1;
    } else {
        *problem = MSG_NOT_REVIEW "apiVersion must be admission.k8s.io/v1 or v1beta1";
        return ADM_EPARSE;
    }
    if (!yyjson_is_str(kind) || !key_is(yyjson_get_str(kind), yyjson_get_len(kind), "AdmissionReview")) {
        *problem = MSG_NOT_REVIEW "kind must be AdmissionReview";
        return ADM_EPARSE;
    }
    if (absent(request)) {
        *problem = "AdmissionReview has no request";
        return ADM_EPARSE;
    }
    if (!yyjson_is_obj(request)) {
        *problem = "AdmissionReview request must be an object";
        return ADM_EPARSE;
    }
    return get_request(&d, request, r);
}

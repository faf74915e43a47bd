/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch apply (RFC 6902 over yyjson mutable values, in kube's or strict mode; see
 * adm/admission/jsonpatch.h). A JSON Pointer is walked token by token from the root; each
 * operation resolves the container that holds its target and acts on it. The "test" operation's
 * equality (jsonpatch_equal.c) is a worklist and the copies walk an explicit stack, so they cost
 * heap, not C stack, at any depth. A patch may not leave a document deeper than ADM_JSON_MAX_DEPTH.
 */
#include "adm/admission/jsonpatch.h"

#include "adm/admission/admission.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "jsonpatch_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct patch_ctx_s {
    yyjson_mut_doc *doc;
    adm_jsonpatch_mode_t mode;
    adm_arena_t *arena;
    char *token; /* decoded reference token (arena, grown as needed) */
    size_t token_cap;
    const char *error;      /* reason of the current failure */
    const char *kube_error; /* kube mode: json-patch v4's whole text for it, when set */
    const char *why;        /* kube mode: strconv.Atoi's text for a token that is no index */
    adm__eq_list_t eq;      /* the "test" operation's comparisons */
    size_t placed;          /* deepest level a value was put at: path tokens + the value's depth */
} patch_ctx_t;

/* Decodes the reference token starting at p (after a '/') into ctx->token; returns its end. */
static const char *next_token(patch_ctx_t *ctx, const char *p, const char *end, size_t *len)
{
    const char *stop = memchr(p, '/', (size_t)(end - p));
    size_t n = 0;

    if (stop == NULL) {
        stop = end;
    }
    if ((size_t)(stop - p) + 1 > ctx->token_cap) {
        size_t cap = (size_t)(stop - p) + 64;
        char *t = adm_arena_realloc(ctx->arena, ctx->token, ctx->token_cap, cap);

        if (t == NULL) {
            ctx->error = "out of memory";
            return NULL;
        }
        ctx->token = t;
        ctx->token_cap = cap;
    }
    for (; p < stop; p++) {
        if (*p == '~') {
            if (p + 1 < stop && (p[1] == '0' || p[1] == '1')) {
                ctx->token[n++] = p[1] == '0' ? '~' : '/';
                p++;
                continue;
            }
            if (ctx->mode == ADM_JSONPATCH_KUBE) {
                ctx->token[n++] = '~'; /* json-patch v4 replaces ~1 and ~0 and keeps any other ~ */
                continue;
            }
            ctx->error = "invalid escape in JSON Pointer (only ~0 and ~1 exist)";
            return NULL;
        }
        ctx->token[n++] = *p;
    }
    ctx->token[n] = '\0';
    *len = n;
    return stop;
}

/*
 * Reads an array index token. Strict: RFC 6901 (digits, no leading zero). Kube: Go's
 * strconv.Atoi (optional sign, leading zeros allowed), negative values counted from the end by
 * the caller. Returns false when the token is not an index.
 */
static bool parse_index(const patch_ctx_t *ctx, const char *tok, size_t len, long long *out)
{
    const char *p = tok;
    bool negative = false;
    long long v = 0;

    if (len == 0) {
        return false;
    }
    if (ctx->mode == ADM_JSONPATCH_KUBE && (*p == '+' || *p == '-')) {
        negative = *p == '-';
        p++;
        len--;
        if (len == 0) {
            return false;
        }
    } else if (ctx->mode == ADM_JSONPATCH_STRICT && len > 1 && *p == '0') {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9' || v > (LLONG_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (p[i] - '0');
    }
    *out = negative ? -v : v;
    return true;
}

/*
 * Resolves an array index token against an array of size elements. insert: an index for add,
 * where size itself (and, in kube mode, -1 for "after the last") is valid. Returns false with
 * ctx->error set when the token is no index or out of range.
 */
static bool array_index(patch_ctx_t *ctx, const char *tok, size_t len, size_t size, bool insert, size_t *out)
{
    long long idx;
    size_t limit = insert ? size + 1 : size;

    if (!parse_index(ctx, tok, len, &idx)) {
        ctx->error = "not an array index";
        return false;
    }
    /* json-patch v4 counts negative indices from the end (for add: -1 appends). */
    if (idx < 0 && ctx->mode == ADM_JSONPATCH_KUBE) {
        idx += (long long)limit;
    }
    if (idx < 0 || (size_t)idx >= limit) {
        ctx->error = "array index out of range";
        return false;
    }
    *out = (size_t)idx;
    return true;
}

/* The child of container named by the token, or NULL (error set). */
static yyjson_mut_val *child(patch_ctx_t *ctx, yyjson_mut_val *container, const char *tok, size_t len)
{
    if (yyjson_mut_is_obj(container)) {
        yyjson_mut_val *v = yyjson_mut_obj_getn(container, tok, len);

        if (v == NULL) {
            ctx->error = "missing value";
        }
        return v;
    }
    if (yyjson_mut_is_arr(container)) {
        size_t idx;

        if (!array_index(ctx, tok, len, yyjson_mut_arr_size(container), false, &idx)) {
            return NULL;
        }
        return yyjson_mut_arr_get(container, idx);
    }
    ctx->error = "path goes through a value that is neither an object nor an array";
    return NULL;
}

/*
 * Resolves everything but the last token of path: *parent is the container, ctx->token the last
 * token (its length in *last_len). A path of "" has no parent: *parent is NULL.
 */
static int resolve_parent(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val **parent,
                          size_t *last_len)
{
    const char *p = path, *end = path + path_len;
    yyjson_mut_val *cur = yyjson_mut_doc_get_root(ctx->doc);

    *parent = NULL;
    if (path_len == 0) {
        return 0;
    }
    if (*p != '/') {
        ctx->error = "JSON Pointer must be empty or start with /";
        return ADM_EINVAL;
    }
    for (;;) {
        size_t len;

        p = next_token(ctx, p + 1, end, &len);
        if (p == NULL) {
            return ADM_EINVAL;
        }
        if (p == end) {
            *parent = cur;
            *last_len = len;
            return 0;
        }
        cur = child(ctx, cur, ctx->token, len);
        if (cur == NULL) {
            return ADM_EINVAL;
        }
    }
}

/* The value at path, or NULL with ctx->error set. */
static yyjson_mut_val *get_at(patch_ctx_t *ctx, const char *path, size_t path_len)
{
    yyjson_mut_val *parent;
    size_t len;

    if (resolve_parent(ctx, path, path_len, &parent, &len) != 0) {
        return NULL;
    }
    if (parent == NULL) {
        return yyjson_mut_doc_get_root(ctx->doc);
    }
    return child(ctx, parent, ctx->token, len);
}

/*
 * add, and replace: the two differ only where the target is an array element (add inserts, or
 * appends at "-"; replace overwrites) and, in strict mode, at a missing member, which replace
 * needs to exist.
 */
static int op_put(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val *value, bool replace)
{
    yyjson_mut_val *parent;
    size_t len;
    size_t idx;

    if (resolve_parent(ctx, path, path_len, &parent, &len) != 0) {
        return ADM_EINVAL;
    }
    if (parent == NULL) {
        yyjson_mut_doc_set_root(ctx->doc, value);
        return 0;
    }
    if (yyjson_mut_is_obj(parent)) {
        yyjson_mut_val *key;

        /* kube (json-patch v4) creates a missing member; RFC 6902 requires it to exist. */
        if (replace && ctx->mode == ADM_JSONPATCH_STRICT &&
            yyjson_mut_obj_getn(parent, ctx->token, len) == NULL) {
            ctx->error = "missing value";
            return ADM_EINVAL;
        }
        key = yyjson_mut_strncpy(ctx->doc, ctx->token, len);
        if (key == NULL || !yyjson_mut_obj_put(parent, key, value)) {
            ctx->error = "out of memory";
            return ADM_ENOMEM;
        }
        return 0;
    }
    if (!yyjson_mut_is_arr(parent)) {
        ctx->error = "the parent is neither an object nor an array";
        return ADM_EINVAL;
    }
    if (!replace && len == 1 && ctx->token[0] == '-') {
        return yyjson_mut_arr_append(parent, value) ? 0 : ADM_ENOMEM;
    }
    if (!array_index(ctx, ctx->token, len, yyjson_mut_arr_size(parent), !replace, &idx)) {
        return ADM_EINVAL;
    }
    if (replace) {
        yyjson_mut_arr_replace(parent, idx, value);
        return 0;
    }
    return yyjson_mut_arr_insert(parent, value, idx) ? 0 : ADM_ENOMEM;
}

/* Removes the value at path; *removed receives it. */
static int op_remove(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val **removed)
{
    yyjson_mut_val *parent;
    size_t len;

    if (resolve_parent(ctx, path, path_len, &parent, &len) != 0) {
        return ADM_EINVAL;
    }
    if (parent == NULL) {
        ctx->error = "cannot remove the whole document";
        return ADM_EINVAL;
    }
    if (yyjson_mut_is_obj(parent)) {
        *removed = yyjson_mut_obj_remove_keyn(parent, ctx->token, len);
        if (*removed == NULL) {
            ctx->error = "missing value";
            return ADM_EINVAL;
        }
        return 0;
    }
    if (yyjson_mut_is_arr(parent)) {
        size_t idx;

        if (!array_index(ctx, ctx->token, len, yyjson_mut_arr_size(parent), false, &idx)) {
            return ADM_EINVAL;
        }
        *removed = yyjson_mut_arr_remove(parent, idx);
        return 0;
    }
    ctx->error = "the parent is neither an object nor an array";
    return ADM_EINVAL;
}

/*
 * Depth. Every document admitd parses nests at most ADM_JSON_MAX_DEPTH levels, and so must a
 * patched one: kube-apiserver decodes the patched object with that same limit. A value put at a
 * path of k tokens reaches at most k + its own depth, and no other value moves deeper, so the
 * document's depth after the patch is at most the larger of its depth before and the deepest such
 * placement; only when that bound passes the limit is the result walked (check_depth).
 */
static bool note_placement(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val *v)
{
    size_t tokens = 0, depth = adm_json_mut_depth(ctx->doc, v);

    if (depth == SIZE_MAX) {
        return false;
    }
    for (size_t i = 0; i < path_len; i++) {
        tokens += path[i] == '/';
    }
    if (tokens + depth > ctx->placed) {
        ctx->placed = tokens + depth;
    }
    return true;
}

static int check_depth(patch_ctx_t *ctx, const char **error)
{
    yyjson_mut_val *at = NULL;

    if (ctx->placed <= ADM_JSON_MAX_DEPTH) {
        return 0;
    }
    if (adm_json_mut_too_deep(ctx->doc, yyjson_mut_doc_get_root(ctx->doc), ADM_JSON_MAX_DEPTH, &at) != 0) {
        *error = "out of memory";
        return ADM_ENOMEM;
    }
    if (at == NULL) {
        return 0; /* later operations removed what went too deep */
    }
    /* Go's decoder stops at that container's opening bracket. */
    *error = yyjson_mut_is_arr(at) ? "invalid character '[' exceeded max depth"
                                   : "invalid character '{' exceeded max depth";
    return ADM_ETOOBIG;
}

/* True when from is a proper prefix of path at a token boundary ("/a" and "/a/b"). */
static bool is_proper_prefix(const char *from, size_t from_len, const char *path, size_t path_len)
{
    return from_len < path_len && memcmp(from, path, from_len) == 0 && path[from_len] == '/';
}

static int apply_one(patch_ctx_t *ctx, yyjson_val *op)
{
    /* yyjson_obj_get() of a non-object is NULL, so reading first and checking after is safe. */
    yyjson_val *op_name = yyjson_obj_get(op, "op");
    yyjson_val *path_val = yyjson_obj_get(op, "path");
    yyjson_val *from_val = yyjson_obj_get(op, "from");
    yyjson_val *value = yyjson_obj_get(op, "value");
    const char *name = yyjson_get_str(op_name);
    const char *path = yyjson_get_str(path_val);
    size_t path_len = yyjson_get_len(path_val);
    yyjson_mut_val *v;

    if (!yyjson_is_obj(op)) {
        ctx->error = "an operation must be a JSON object";
        return ADM_EINVAL;
    }
    if (name == NULL) {
        ctx->error = "missing \"op\"";
        return ADM_EINVAL;
    }
    if (path == NULL) {
        ctx->error = "missing \"path\" (or not a string)";
        return ADM_EINVAL;
    }
    if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0 || strcmp(name, "test") == 0) {
        if (value == NULL) {
            ctx->error = "missing \"value\"";
            return ADM_EINVAL;
        }
        if (strcmp(name, "test") == 0) {
            v = get_at(ctx, path, path_len);
            if (v == NULL) {
                return ADM_EINVAL;
            }
            if (!adm__json_equal(&ctx->eq, v, value)) {
                ctx->error = ctx->eq.failed ? "out of memory" : "test failed";
                return ctx->eq.failed ? ADM_ENOMEM : ADM_EINVAL;
            }
            return 0;
        }
        v = yyjson_val_mut_copy(ctx->doc, value);
        if (v == NULL || !note_placement(ctx, path, path_len, v)) {
            ctx->error = "out of memory";
            return ADM_ENOMEM;
        }
        return op_put(ctx, path, path_len, v, name[0] == 'r');
    }
    if (strcmp(name, "remove") == 0) {
        return op_remove(ctx, path, path_len, &v);
    }
    if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
        const char *from = yyjson_get_str(from_val);
        size_t from_len = yyjson_get_len(from_val);

        if (from == NULL) {
            ctx->error = "missing \"from\" (or not a string)";
            return ADM_EINVAL;
        }
        if (name[0] == 'c') {
            v = get_at(ctx, from, from_len);
            if (v == NULL) {
                return ADM_EINVAL;
            }
            v = adm_json_mut_copy(ctx->doc, v);
            if (v == NULL || !note_placement(ctx, path, path_len, v)) {
                ctx->error = "out of memory";
                return ADM_ENOMEM;
            }
            return op_put(ctx, path, path_len, v, false);
        }
        if (is_proper_prefix(from, from_len, path, path_len)) {
            ctx->error = "cannot move a value into one of its own children";
            return ADM_EINVAL;
        }
        if (from_len == path_len && memcmp(from, path, path_len) == 0) {
            return get_at(ctx, from, from_len) != NULL ? 0 : ADM_EINVAL;
        }
        if (op_remove(ctx, from, from_len, &v) != 0) {
            return ADM_EINVAL;
        }
        if (!note_placement(ctx, path, path_len, v)) {
            ctx->error = "out of memory";
            return ADM_ENOMEM;
        }
        return op_put(ctx, path, path_len, v, false);
    }
    ctx->error = "unknown operation";
    return ADM_EINVAL;
}

/* ---- kube mode: json-patch v4's flow and error texts ---------------------------------------- */

/*
 * kube-apiserver applies a webhook's patch with evanphx/json-patch v4 and reports its error as it
 * is (`Internal error occurred: <error>`), so kube mode follows that library's steps for each
 * operation, and its words: pkg/errors wrapping ("what: cause"), the ErrMissing ("missing
 * value"), ErrInvalidIndex ("invalid index referenced") and ErrTestFailed ("test failed") causes,
 * strconv.Atoi's errors for array indices. Its findObject finds no container for a path without
 * '/', for "" (so the whole document cannot be replaced), and for a path through a missing member,
 * a bad or out-of-range index or a scalar; whatever precedes the first '/' is ignored. A missing
 * "value" is JSON null (add, replace), as is the copy of a missing member. Where v4 would panic
 * (a negative index to get, test of a missing member without "value"), admitd counts the index
 * from the end and fails the test.
 */
#define KUBE_NO_CONTAINER 1

static int kube_fail(patch_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int kube_fail(patch_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ctx->kube_error = adm_arena_vprintf(ctx->arena, fmt, ap);
    va_end(ap);
    if (ctx->kube_error == NULL) {
        ctx->error = "out of memory";
        return ADM_ENOMEM;
    }
    return ADM_EINVAL;
}

static bool out_of_memory(const patch_ctx_t *ctx)
{
    return ctx->error != NULL && strcmp(ctx->error, "out of memory") == 0;
}

/* strconv.Atoi of the token; false with ctx->why set to Go's error. */
static bool kube_atoi(patch_ctx_t *ctx, const char *tok, size_t len, long long *out)
{
    size_t i = len > 0 && (tok[0] == '+' || tok[0] == '-') ? 1 : 0;
    bool digits = i < len;

    if (parse_index(ctx, tok, len, out)) {
        return true;
    }
    for (; i < len; i++) {
        digits = digits && tok[i] >= '0' && tok[i] <= '9';
    }
    ctx->why = adm_arena_printf(ctx->arena, "strconv.Atoi: parsing %s: %s", adm_go_quote(ctx->arena, tok),
                                digits ? "value out of range" : "invalid syntax");
    if (ctx->why == NULL) {
        ctx->why = "out of memory";
    }
    return false;
}

static const char *invalid_index(patch_ctx_t *ctx, long long idx)
{
    const char *t =
        adm_arena_printf(ctx->arena, "Unable to access invalid index: %lld: invalid index referenced", idx);

    return t != NULL ? t : "out of memory";
}

/* findObject: the container of path's last token (decoded into ctx->token, *len), or NULL. */
static yyjson_mut_val *kube_find(patch_ctx_t *ctx, const char *path, size_t path_len, size_t *len)
{
    const char *slash = memchr(path, '/', path_len);
    yyjson_mut_val *parent;

    if (slash == NULL) {
        return NULL;
    }
    if (resolve_parent(ctx, slash, path_len - (size_t)(slash - path), &parent, len) != 0) {
        return NULL;
    }
    return yyjson_mut_is_obj(parent) || yyjson_mut_is_arr(parent) ? parent : NULL;
}

/* 0, KUBE_NO_CONTAINER, ADM_ENOMEM, or ADM_EINVAL with *why the container's own error. */
static int kube_add(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val *v, const char **why)
{
    size_t len, size;
    long long idx;
    yyjson_mut_val *parent = kube_find(ctx, path, path_len, &len);

    if (parent == NULL) {
        return out_of_memory(ctx) ? ADM_ENOMEM : KUBE_NO_CONTAINER;
    }
    if (!note_placement(ctx, path, path_len, v)) {
        return ADM_ENOMEM;
    }
    if (yyjson_mut_is_obj(parent)) {
        yyjson_mut_val *key = yyjson_mut_strncpy(ctx->doc, ctx->token, len);

        return key != NULL && yyjson_mut_obj_put(parent, key, v) ? 0 : ADM_ENOMEM;
    }
    if (len == 1 && ctx->token[0] == '-') {
        return yyjson_mut_arr_append(parent, v) ? 0 : ADM_ENOMEM;
    }
    if (!kube_atoi(ctx, ctx->token, len, &idx)) {
        *why = adm_arena_printf(ctx->arena, "value was not a proper array index: '%s': %s", ctx->token,
                                ctx->why);
        return *why != NULL ? ADM_EINVAL : ADM_ENOMEM;
    }
    size = yyjson_mut_arr_size(parent) + 1;
    if (idx >= (long long)size || idx < -(long long)size) {
        *why = invalid_index(ctx, idx);
        return ADM_EINVAL;
    }
    if (idx < 0) {
        idx += (long long)size;
    }
    return yyjson_mut_arr_insert(parent, v, (size_t)idx) ? 0 : ADM_ENOMEM;
}

/*
 * The container's get: *out the value (NULL for a missing member, which is no error), *key the
 * decoded last token. 0, KUBE_NO_CONTAINER, ADM_ENOMEM, or ADM_EINVAL with *why.
 */
static int kube_get(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val **parent_out,
                    yyjson_mut_val **out, const char **key, size_t *index, const char **why)
{
    size_t len, size;
    long long idx;
    yyjson_mut_val *parent = kube_find(ctx, path, path_len, &len);

    *out = NULL;
    if (parent == NULL) {
        return out_of_memory(ctx) ? ADM_ENOMEM : KUBE_NO_CONTAINER;
    }
    *parent_out = parent;
    *key = adm_arena_strndup(ctx->arena, ctx->token, len);
    if (*key == NULL) {
        return ADM_ENOMEM;
    }
    if (yyjson_mut_is_obj(parent)) {
        *out = yyjson_mut_obj_getn(parent, *key, len);
        return 0;
    }
    if (!kube_atoi(ctx, *key, len, &idx)) {
        *why = ctx->why;
        return ADM_EINVAL;
    }
    size = yyjson_mut_arr_size(parent);
    if (idx >= (long long)size || idx < -(long long)size) {
        *why = invalid_index(ctx, idx);
        return ADM_EINVAL;
    }
    *index = (size_t)(idx < 0 ? idx + (long long)size : idx);
    *out = yyjson_mut_arr_get(parent, *index);
    return 0;
}

static int kube_remove(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val **removed,
                       const char **key, const char **why)
{
    yyjson_mut_val *parent = NULL;
    size_t index = 0;
    int rc = kube_get(ctx, path, path_len, &parent, removed, key, &index, why);

    if (rc != 0) {
        return rc;
    }
    if (yyjson_mut_is_obj(parent)) {
        *removed = yyjson_mut_obj_remove_keyn(parent, *key, strlen(*key));
        if (*removed == NULL) {
            *why = adm_arena_printf(ctx->arena, "Unable to remove nonexistent key: %s: missing value", *key);
            return *why != NULL ? ADM_EINVAL : ADM_ENOMEM;
        }
        return 0;
    }
    *removed = yyjson_mut_arr_remove(parent, index);
    return 0;
}

/* An operation's "path" or "from" as v4's accessors read it; NULL when absent or not a string. */
static const char *kube_str(yyjson_val *op, const char *field, size_t *len)
{
    yyjson_val *v = yyjson_obj_get(op, field);

    *len = yyjson_get_len(v);
    return yyjson_get_str(v);
}

/* The accessor's own error: "operation missing path field: missing value" or the decoder's. */
static const char *kube_str_error(patch_ctx_t *ctx, yyjson_val *op, const char *field)
{
    yyjson_val *v = yyjson_obj_get(op, field);
    const char *t;

    if (v == NULL || yyjson_is_null(v)) {
        return strcmp(field, "path") == 0 ? "operation missing path field: missing value"
                                          : "operation, missing from field: missing value";
    }
    t = adm_arena_printf(ctx->arena, "json: cannot unmarshal %s into Go value of type string",
                         adm_json_go_type(v));
    return t != NULL ? t : "out of memory";
}

static yyjson_mut_val *kube_value(patch_ctx_t *ctx, yyjson_val *value)
{
    return value != NULL ? yyjson_val_mut_copy(ctx->doc, value) : yyjson_mut_null(ctx->doc);
}

static int kube_op_add(patch_ctx_t *ctx, yyjson_val *op, const char *path, size_t path_len, bool replace)
{
    const char *why = NULL;
    yyjson_mut_val *v = kube_value(ctx, yyjson_obj_get(op, "value"));
    int rc;

    if (v == NULL) {
        return ADM_ENOMEM;
    }
    if (replace) {
        yyjson_mut_val *parent = NULL, *old;
        const char *key;
        size_t index = 0;

        rc = kube_get(ctx, path, path_len, &parent, &old, &key, &index, &why);
        if (rc == KUBE_NO_CONTAINER) {
            return kube_fail(ctx, "replace operation does not apply: doc is missing path: %s: missing value",
                             path);
        }
        if (rc == ADM_EINVAL) {
            return kube_fail(ctx, "replace operation does not apply: doc is missing key: %s: missing value",
                             path);
        }
        if (rc != 0 || !note_placement(ctx, path, path_len, v)) {
            return ADM_ENOMEM;
        }
        if (yyjson_mut_is_arr(parent)) {
            yyjson_mut_arr_replace(parent, index, v);
            return 0;
        }
        old = yyjson_mut_strcpy(ctx->doc, key);
        return old != NULL && yyjson_mut_obj_put(parent, old, v) ? 0 : ADM_ENOMEM;
    }
    rc = kube_add(ctx, path, path_len, v, &why);
    if (rc == KUBE_NO_CONTAINER) {
        return kube_fail(ctx, "add operation does not apply: doc is missing path: \"%s\": missing value",
                         path);
    }
    if (rc == ADM_EINVAL) {
        return kube_fail(ctx, "error in add for path: '%s': %s", path, why);
    }
    return rc;
}

static int kube_op_move_copy(patch_ctx_t *ctx, yyjson_val *op, const char *name, bool copy)
{
    size_t from_len, path_len, index = 0;
    const char *from = kube_str(op, "from", &from_len), *path, *key = NULL, *why = NULL;
    yyjson_mut_val *parent = NULL, *v = NULL;
    int rc;

    if (from == NULL) {
        return kube_fail(ctx, "%s operation failed to decode from: %s", name,
                         kube_str_error(ctx, op, "from"));
    }
    rc = copy ? kube_get(ctx, from, from_len, &parent, &v, &key, &index, &why)
              : kube_remove(ctx, from, from_len, &v, &key, &why);
    if (rc == KUBE_NO_CONTAINER) {
        return kube_fail(ctx, "%s operation does not apply: doc is missing from path: %s: missing value",
                         name, from);
    }
    if (rc == ADM_EINVAL) {
        return copy ? kube_fail(ctx, "error in copy for from: '%s': %s", from, why)
                    : kube_fail(ctx, "error in move for path: '%s': %s", key, why);
    }
    if (rc != 0) {
        return rc;
    }
    path = kube_str(op, "path", &path_len);
    if (path == NULL) {
        return copy ? kube_fail(ctx, "copy operation failed to decode path: missing value")
                    : kube_fail(ctx, "move operation failed to decode path: %s",
                                kube_str_error(ctx, op, "path"));
    }
    v = v == NULL ? yyjson_mut_null(ctx->doc) : copy ? adm_json_mut_copy(ctx->doc, v) : v;
    if (v == NULL) {
        return ADM_ENOMEM;
    }
    rc = kube_add(ctx, path, path_len, v, &why);
    if (rc == KUBE_NO_CONTAINER) {
        return kube_fail(ctx,
                         "%s operation does not apply: doc is missing destination path: %s: missing value",
                         name, path);
    }
    if (rc == ADM_EINVAL) {
        return copy ? kube_fail(ctx, "error while adding value during copy: %s", why)
                    : kube_fail(ctx, "error in move for path: '%s': %s", path, why);
    }
    return rc;
}

static int kube_op_test(patch_ctx_t *ctx, yyjson_val *op, const char *path, size_t path_len)
{
    yyjson_val *value = yyjson_obj_get(op, "value");
    yyjson_mut_val *parent = NULL, *v = NULL;
    const char *key, *why = NULL;
    size_t index = 0;
    int rc = kube_get(ctx, path, path_len, &parent, &v, &key, &index, &why);

    if (rc == KUBE_NO_CONTAINER) {
        return kube_fail(ctx, "test operation does not apply: is missing path: %s: missing value", path);
    }
    if (rc == ADM_EINVAL) {
        return kube_fail(ctx, "error in test for path: '%s': %s", path, why);
    }
    if (rc != 0) {
        return rc;
    }
    if (v == NULL && yyjson_is_null(value)) {
        return 0; /* a missing member tests equal to null */
    }
    if (v != NULL && value != NULL && adm__json_equal(&ctx->eq, v, value)) {
        return 0;
    }
    if (ctx->eq.failed) {
        ctx->error = "out of memory";
        return ADM_ENOMEM;
    }
    return kube_fail(ctx, "testing value %s failed: test failed", path);
}

static int apply_one_kube(patch_ctx_t *ctx, yyjson_val *op)
{
    const char *name = yyjson_get_str(yyjson_obj_get(op, "op"));
    size_t path_len;
    const char *path = kube_str(op, "path", &path_len);
    yyjson_mut_val *removed;
    const char *key, *why = NULL;
    int rc;

    if (name == NULL) {
        return kube_fail(ctx, "Unexpected kind: unknown");
    }
    if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
        return kube_op_move_copy(ctx, op, name, name[0] == 'c');
    }
    if (strcmp(name, "add") != 0 && strcmp(name, "remove") != 0 && strcmp(name, "replace") != 0 &&
        strcmp(name, "test") != 0) {
        return kube_fail(ctx, "Unexpected kind: %s", name);
    }
    if (path == NULL) {
        /* add and remove drop the accessor's error for their own; replace and test wrap it */
        return strcmp(name, "add") == 0 || strcmp(name, "remove") == 0
                   ? kube_fail(ctx, "%s operation failed to decode path: missing value", name)
                   : kube_fail(ctx, "%s operation failed to decode path: %s", name,
                               kube_str_error(ctx, op, "path"));
    }
    if (strcmp(name, "test") == 0) {
        return kube_op_test(ctx, op, path, path_len);
    }
    if (strcmp(name, "remove") != 0) {
        return kube_op_add(ctx, op, path, path_len, name[0] == 'r');
    }
    rc = kube_remove(ctx, path, path_len, &removed, &key, &why);
    if (rc == KUBE_NO_CONTAINER) {
        return kube_fail(ctx, "remove operation does not apply: doc is missing path: \"%s\": missing value",
                         path);
    }
    if (rc == ADM_EINVAL) {
        return kube_fail(ctx, "error in remove for path: '%s': %s", path, why);
    }
    return rc;
}

int adm_jsonpatch_apply(yyjson_mut_doc *doc, yyjson_val *patch, adm_jsonpatch_mode_t mode, adm_arena_t *a,
                        const char **error)
{
    patch_ctx_t ctx = {.doc = doc, .mode = mode, .arena = a, .eq = {.arena = a}};
    yyjson_arr_iter it;
    yyjson_val *op;
    size_t i = 0;

    *error = NULL;
    if (!yyjson_is_arr(patch)) {
        *error = "a JSON Patch must be a JSON array of operations";
        return ADM_EINVAL;
    }
    yyjson_arr_iter_init(patch, &it);
    for (op = yyjson_arr_iter_next(&it); op != NULL; op = yyjson_arr_iter_next(&it)) {
        int rc =
            mode == ADM_JSONPATCH_KUBE && yyjson_is_obj(op) ? apply_one_kube(&ctx, op) : apply_one(&ctx, op);

        if (rc != 0 && ctx.kube_error != NULL) {
            *error = ctx.kube_error;
            return rc;
        }
        if (rc != 0) {
            char *msg = adm_arena_alloc(a, 512);
            const char *opname = yyjson_get_str(yyjson_obj_get(op, "op"));
            const char *path = yyjson_get_str(yyjson_obj_get(op, "path"));

            if (msg == NULL) {
                *error = "out of memory";
                return ADM_ENOMEM;
            }
            snprintf(msg, 512, "operation %zu (%s %s): %s", i, opname != NULL ? opname : "?",
                     path != NULL ? path : "?", ctx.error != NULL ? ctx.error : "failed");
            *error = msg;
            return rc;
        }
        i++;
    }
    return check_depth(&ctx, error);
}

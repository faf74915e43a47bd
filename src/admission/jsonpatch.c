/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RFC 6902 operations over yyjson mutable values, and the diff that writes a patch between two
 * documents. A JSON Pointer is walked token by token from the root; each operation resolves the
 * container that holds its target and acts on it. Deep equality is a worklist and the copies
 * walk an explicit stack, so they cost heap, not C stack, at any depth; the diff recurses, but at
 * most DIFF_MAX_DEPTH levels. A patch may not leave a document deeper than ADM_JSON_MAX_DEPTH.
 */
#include "adm/admission/jsonpatch.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Deep equality is a worklist of pairs still to compare, never recursion: any nesting costs arena
 * memory only. The list lives in the caller's context and is reused across comparisons (the diff
 * compares array elements one after another).
 */
typedef struct eq_pair_s {
    yyjson_mut_val *a;
    yyjson_val *b;
} eq_pair_t;

typedef struct eq_list_s {
    adm_arena_t *arena;
    eq_pair_t *pairs;
    size_t n, cap;
    bool failed; /* an allocation failed: the comparison answered false without knowing */
} eq_list_t;

typedef struct patch_ctx_s {
    yyjson_mut_doc *doc;
    adm_jsonpatch_mode_t mode;
    adm_arena_t *arena;
    char *token;       /* decoded reference token (arena, grown as needed) */
    size_t token_cap;
    const char *error; /* reason of the current failure */
    eq_list_t eq;      /* the "test" operation's comparisons */
    size_t placed;     /* deepest level a value was put at: path tokens + the value's depth */
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

static int op_add(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val *value)
{
    yyjson_mut_val *parent;
    size_t len;

    if (resolve_parent(ctx, path, path_len, &parent, &len) != 0) {
        return ADM_EINVAL;
    }
    if (parent == NULL) {
        yyjson_mut_doc_set_root(ctx->doc, value);
        return 0;
    }
    if (yyjson_mut_is_obj(parent)) {
        yyjson_mut_val *key = yyjson_mut_strncpy(ctx->doc, ctx->token, len);

        if (key == NULL || !yyjson_mut_obj_put(parent, key, value)) {
            ctx->error = "out of memory";
            return ADM_ENOMEM;
        }
        return 0;
    }
    if (yyjson_mut_is_arr(parent)) {
        size_t idx;

        if (len == 1 && ctx->token[0] == '-') {
            return yyjson_mut_arr_append(parent, value) ? 0 : ADM_ENOMEM;
        }
        if (!array_index(ctx, ctx->token, len, yyjson_mut_arr_size(parent), true, &idx)) {
            return ADM_EINVAL;
        }
        return yyjson_mut_arr_insert(parent, value, idx) ? 0 : ADM_ENOMEM;
    }
    ctx->error = "the parent is neither an object nor an array";
    return ADM_EINVAL;
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

static int op_replace(patch_ctx_t *ctx, const char *path, size_t path_len, yyjson_mut_val *value)
{
    yyjson_mut_val *parent;
    size_t len;

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
        if (ctx->mode == ADM_JSONPATCH_STRICT && yyjson_mut_obj_getn(parent, ctx->token, len) == NULL) {
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
    if (yyjson_mut_is_arr(parent)) {
        size_t idx;

        if (!array_index(ctx, ctx->token, len, yyjson_mut_arr_size(parent), false, &idx)) {
            return ADM_EINVAL;
        }
        yyjson_mut_arr_replace(parent, idx, value);
        return 0;
    }
    ctx->error = "the parent is neither an object nor an array";
    return ADM_EINVAL;
}

/* Objects up to this size are compared key by key; larger ones through a hash index. */
#define SMALL_OBJECT 8

/* A hash index of an object's keys, so diffing two large objects stays linear. */
typedef struct key_index_s {
    const char **keys;
    size_t *lens;
    void **vals;
    uint32_t *slots; /* entry + 1, 0 when empty */
    size_t n, mask;
} key_index_t;

static uint32_t key_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    }
    return h;
}

static void *index_find(const key_index_t *x, const char *s, size_t len)
{
    for (size_t i = key_hash(s, len) & x->mask;; i = (i + 1) & x->mask) {
        uint32_t e = x->slots[i];

        if (e == 0) {
            return NULL;
        }
        if (x->lens[e - 1] == len && memcmp(x->keys[e - 1], s, len) == 0) {
            return x->vals[e - 1];
        }
    }
}

/* Adds an entry; returns false when the key is already there (a duplicate). */
static bool index_add(key_index_t *x, const char *s, size_t len, void *val)
{
    size_t i = key_hash(s, len) & x->mask;

    for (; x->slots[i] != 0; i = (i + 1) & x->mask) {
        uint32_t e = x->slots[i];

        if (x->lens[e - 1] == len && memcmp(x->keys[e - 1], s, len) == 0) {
            return false;
        }
    }
    x->keys[x->n] = s;
    x->lens[x->n] = len;
    x->vals[x->n] = val;
    x->slots[i] = (uint32_t)(++x->n);
    return true;
}

static bool index_init(adm_arena_t *arena, key_index_t *x, size_t n)
{
    size_t cap = 16;

    while (cap < n * 2) {
        cap *= 2;
    }
    x->keys = adm_arena_alloc(arena, n * sizeof(*x->keys));
    x->lens = adm_arena_alloc(arena, n * sizeof(*x->lens));
    x->vals = adm_arena_alloc(arena, n * sizeof(*x->vals));
    x->slots = adm_arena_calloc(arena, cap, sizeof(*x->slots));
    x->n = 0;
    x->mask = cap - 1;
    return x->keys != NULL && x->lens != NULL && x->vals != NULL && x->slots != NULL;
}

static bool same_key(const char *s1, size_t l1, const char *s2, size_t l2)
{
    /* Copies made by adm_json_mut_share() point at the original's strings: compare pointers first. */
    return l1 == l2 && (s1 == s2 || memcmp(s1, s2, l1) == 0);
}

static bool eq_push(eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap == 0 ? 64 : l->cap * 2;
        eq_pair_t *g = adm_arena_realloc(l->arena, l->pairs, l->cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            l->failed = true;
            return false;
        }
        l->pairs = g;
        l->cap = ncap;
    }
    l->pairs[l->n].a = a;
    l->pairs[l->n].b = b;
    l->n++;
    return true;
}

/*
 * Objects of equal size, from the first member whose key differs at the same position (order is
 * not significant): each remaining member of b must have a member of a with the same key, found
 * through a hash index when many remain so a large object costs linear time; their values are
 * queued for comparison.
 */
static bool queue_rest(eq_list_t *l, yyjson_mut_obj_iter ia, yyjson_val *first, yyjson_obj_iter ib,
                       size_t remaining)
{
    yyjson_mut_val *mkey;
    yyjson_val *key = first;
    key_index_t x;

    if (remaining > SMALL_OBJECT && index_init(l->arena, &x, remaining)) {
        yyjson_mut_obj_iter it = ia;

        while ((mkey = yyjson_mut_obj_iter_next(&it)) != NULL) {
            if (!index_add(&x, yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_mut_obj_iter_get_val(mkey))) {
                return false; /* a key twice: not equal to anything in a useful sense */
            }
        }
        for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
            yyjson_mut_val *v = index_find(&x, yyjson_get_str(key), yyjson_get_len(key));

            if (v == NULL || !eq_push(l, v, yyjson_obj_iter_get_val(key))) {
                return false;
            }
        }
        return true;
    }
    for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
        yyjson_mut_obj_iter it = ia;
        yyjson_mut_val *v = NULL;

        while ((mkey = yyjson_mut_obj_iter_next(&it)) != NULL) {
            if (same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_get_str(key), yyjson_get_len(key))) {
                v = yyjson_mut_obj_iter_get_val(mkey);
                break;
            }
        }
        if (v == NULL || !eq_push(l, v, yyjson_obj_iter_get_val(key))) {
            return false;
        }
    }
    return true;
}

/* Queues the member pairs of two objects; false when they cannot be equal. */
static bool queue_members(eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    yyjson_mut_obj_iter ia;
    yyjson_obj_iter ib;
    yyjson_val *key;
    size_t left = yyjson_obj_size(b);

    if (yyjson_mut_obj_size(a) != left) {
        return false;
    }
    yyjson_mut_obj_iter_init(a, &ia);
    yyjson_obj_iter_init(b, &ib);
    /* Members usually come in the same order: walk both while the keys agree. */
    while ((key = yyjson_obj_iter_next(&ib)) != NULL) {
        yyjson_mut_obj_iter at = ia;
        yyjson_mut_val *mkey = yyjson_mut_obj_iter_next(&ia);

        if (!same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_get_str(key),
                      yyjson_get_len(key))) {
            return queue_rest(l, at, key, ib, left);
        }
        if (!eq_push(l, yyjson_mut_obj_iter_get_val(mkey), yyjson_obj_iter_get_val(key))) {
            return false;
        }
        left--;
    }
    return true;
}

/* Queues the element pairs of two arrays; false when they cannot be equal. */
static bool queue_elements(eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    yyjson_mut_arr_iter ia;
    yyjson_arr_iter ib;
    yyjson_mut_val *x;

    if (yyjson_mut_arr_size(a) != yyjson_arr_size(b)) {
        return false;
    }
    yyjson_mut_arr_iter_init(a, &ia);
    yyjson_arr_iter_init(b, &ib);
    while ((x = yyjson_mut_arr_iter_next(&ia)) != NULL) {
        if (!eq_push(l, x, yyjson_arr_iter_next(&ib))) {
            return false;
        }
    }
    return true;
}

/* Scalars of the same type: numbers by value (1 == 1.0). */
static bool scalar_equal(yyjson_mut_val *a, yyjson_val *b)
{
    switch (yyjson_mut_get_type(a)) {
    case YYJSON_TYPE_NULL:
        return true;
    case YYJSON_TYPE_BOOL:
        return yyjson_mut_get_bool(a) == yyjson_get_bool(b);
    case YYJSON_TYPE_NUM:
        if (yyjson_mut_is_real(a) || yyjson_is_real(b)) {
            return yyjson_mut_get_num(a) == yyjson_get_num(b);
        }
        if (yyjson_mut_is_sint(a) != yyjson_is_sint(b)) {
            /* one negative, one non-negative: equal only when both are zero */
            return yyjson_mut_get_sint(a) == 0 && yyjson_get_sint(b) == 0;
        }
        return yyjson_mut_get_uint(a) == yyjson_get_uint(b);
    case YYJSON_TYPE_STR:
        return same_key(yyjson_mut_get_str(a), yyjson_mut_get_len(a), yyjson_get_str(b), yyjson_get_len(b));
    default: return false;
    }
}

/* JSON equality: numbers by value, objects regardless of member order. */
static bool equal(eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    l->n = 0;
    if (!eq_push(l, a, b)) {
        return false;
    }
    while (l->n > 0) {
        eq_pair_t p = l->pairs[--l->n];
        yyjson_type type = yyjson_mut_get_type(p.a);
        bool same;

        if (type != yyjson_get_type(p.b)) {
            return false;
        }
        if (type == YYJSON_TYPE_OBJ) {
            same = queue_members(l, p.a, p.b);
        } else if (type == YYJSON_TYPE_ARR) {
            same = queue_elements(l, p.a, p.b);
        } else {
            same = scalar_equal(p.a, p.b);
        }
        if (!same) {
            return false;
        }
    }
    return true;
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
            if (!equal(&ctx->eq, v, value)) {
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
        return name[0] == 'a' ? op_add(ctx, path, path_len, v) : op_replace(ctx, path, path_len, v);
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
            return op_add(ctx, path, path_len, v);
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
        return op_add(ctx, path, path_len, v);
    }
    ctx->error = "unknown operation";
    return ADM_EINVAL;
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
    while ((op = yyjson_arr_iter_next(&it)) != NULL) {
        int rc = apply_one(&ctx, op);

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

/* ---- diff ---- */

/*
 * The diff recurses once per level while both sides keep the same shape. Real objects are a few
 * dozen levels deep; past this many the differing subtree is replaced whole (still exact, only
 * less minimal), so the C stack stays small whatever the nesting.
 */
#define DIFF_MAX_DEPTH 128

typedef struct diff_ctx_s {
    adm_arena_t *arena;
    eq_list_t eq;
    size_t depth; /* containers entered: the recursion is cut at DIFF_MAX_DEPTH */
    adm_jsonw_t out;
    char *path; /* JSON Pointer of the current position, escaped */
    size_t path_len, path_cap;
    size_t nops;
} diff_ctx_t;

/* Appends "/token" (escaped per RFC 6901) to the current path; returns the length to restore. */
static size_t push_token(diff_ctx_t *d, const char *tok, size_t len)
{
    size_t saved = d->path_len;
    size_t need = d->path_len + 1 + 2 * len + 1;

    if (need > d->path_cap) {
        size_t cap = need * 2;
        char *p = adm_arena_realloc(d->arena, d->path, d->path_cap, cap);

        if (p == NULL) {
            d->out.failed = true;
            return saved;
        }
        d->path = p;
        d->path_cap = cap;
    }
    d->path[d->path_len++] = '/';
    for (size_t i = 0; i < len; i++) {
        if (tok[i] == '~') {
            d->path[d->path_len++] = '~';
            d->path[d->path_len++] = '0';
        } else if (tok[i] == '/') {
            d->path[d->path_len++] = '~';
            d->path[d->path_len++] = '1';
        } else {
            d->path[d->path_len++] = tok[i];
        }
    }
    return saved;
}

static size_t push_index(diff_ctx_t *d, size_t index)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%zu", index);

    return push_token(d, num, (size_t)n);
}

static void emit(diff_ctx_t *d, const char *op, yyjson_mut_val *value)
{
    adm_jsonw_t *w = &d->out;

    adm_jsonw_raw(w, d->nops == 0 ? "{\"op\":\"" : ",{\"op\":\"", d->nops == 0 ? 7 : 8);
    adm_jsonw_raw(w, op, strlen(op));
    ADM_JSONW_LIT(w, "\",\"path\":");
    adm_jsonw_string(w, d->path != NULL ? d->path : "", d->path_len);
    if (value != NULL) {
        ADM_JSONW_LIT(w, ",\"value\":");
        adm_jsonw_mut_value(w, value);
    }
    ADM_JSONW_LIT(w, "}");
    d->nops++;
}

/* Elements of an immutable array as a pointer table (yyjson_arr_get walks from the start). */
static yyjson_val **elements(diff_ctx_t *d, yyjson_val *arr, size_t n)
{
    yyjson_val **v = adm_arena_alloc(d->arena, (n + 1) * sizeof(*v));
    yyjson_arr_iter it;
    size_t i = 0;

    if (v == NULL) {
        d->out.failed = true;
        return NULL;
    }
    yyjson_arr_iter_init(arr, &it);
    while (i < n) {
        v[i++] = yyjson_arr_iter_next(&it);
    }
    return v;
}

static yyjson_mut_val **mut_elements(diff_ctx_t *d, yyjson_mut_val *arr, size_t n)
{
    yyjson_mut_val **v = adm_arena_alloc(d->arena, (n + 1) * sizeof(*v));
    yyjson_mut_arr_iter it;
    size_t i = 0;

    if (v == NULL) {
        d->out.failed = true;
        return NULL;
    }
    yyjson_mut_arr_iter_init(arr, &it);
    while (i < n) {
        v[i++] = yyjson_mut_arr_iter_next(&it);
    }
    return v;
}

static void diff_value(diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b);

/*
 * True when a key appears twice in a. Only the received side is checked: the object diffed against
 * it is a copy the plugins and patches changed through lookups, which never add a second key.
 */
static bool has_duplicate_keys(diff_ctx_t *d, yyjson_val *a)
{
    yyjson_obj_iter i1, i2;
    yyjson_val *k1, *k2;
    size_t pos = 0;

    if (yyjson_obj_size(a) > SMALL_OBJECT) {
        key_index_t x;

        if (!index_init(d->arena, &x, yyjson_obj_size(a))) {
            d->out.failed = true;
            return false;
        }
        yyjson_obj_iter_init(a, &i1);
        while ((k1 = yyjson_obj_iter_next(&i1)) != NULL) {
            if (!index_add(&x, yyjson_get_str(k1), yyjson_get_len(k1), NULL)) {
                return true;
            }
        }
        return false;
    }
    yyjson_obj_iter_init(a, &i1);
    for (; (k1 = yyjson_obj_iter_next(&i1)) != NULL; pos++) {
        size_t other = 0;

        yyjson_obj_iter_init(a, &i2);
        for (; other < pos && (k2 = yyjson_obj_iter_next(&i2)) != NULL; other++) {
            if (same_key(yyjson_get_str(k1), yyjson_get_len(k1), yyjson_get_str(k2), yyjson_get_len(k2))) {
                return true;
            }
        }
    }
    return false;
}

static void diff_member(diff_ctx_t *d, const char *key, size_t len, yyjson_val *a, yyjson_mut_val *b)
{
    size_t saved = push_token(d, key, len);

    if (a == NULL) {
        emit(d, "add", b);
    } else if (b == NULL) {
        emit(d, "remove", NULL);
    } else {
        diff_value(d, a, b);
    }
    d->path_len = saved;
}

/* Finds key in the members an iterator has left (linear; for small remainders). */
static yyjson_mut_val *find_mut(yyjson_mut_obj_iter it, const char *key, size_t len)
{
    yyjson_mut_val *mkey;

    while ((mkey = yyjson_mut_obj_iter_next(&it)) != NULL) {
        if (same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), key, len)) {
            return yyjson_mut_obj_iter_get_val(mkey);
        }
    }
    return NULL;
}

static yyjson_val *find_imm(yyjson_obj_iter it, const char *key, size_t len)
{
    yyjson_val *k;

    while ((k = yyjson_obj_iter_next(&it)) != NULL) {
        if (same_key(yyjson_get_str(k), yyjson_get_len(k), key, len)) {
            return yyjson_obj_iter_get_val(k);
        }
    }
    return NULL;
}

/*
 * The members after the first position where the keys differ: matched by key, through hash
 * indexes when many remain so a large reordered object still costs linear time. Members that went
 * away or changed come first, then new members.
 */
static void diff_object_rest(diff_ctx_t *d, yyjson_obj_iter ia, yyjson_mut_obj_iter ib, size_t na, size_t nb)
{
    const bool indexed = na > SMALL_OBJECT || nb > SMALL_OBJECT;
    const yyjson_obj_iter a_start = ia;
    const yyjson_mut_obj_iter b_start = ib;
    yyjson_val *key;
    yyjson_mut_val *mkey;
    key_index_t xa, xb;

    if (indexed) {
        yyjson_obj_iter it = ia;
        yyjson_mut_obj_iter mt = ib;

        if (!index_init(d->arena, &xa, na) || !index_init(d->arena, &xb, nb)) {
            d->out.failed = true;
            return;
        }
        while ((key = yyjson_obj_iter_next(&it)) != NULL) {
            index_add(&xa, yyjson_get_str(key), yyjson_get_len(key), yyjson_obj_iter_get_val(key));
        }
        while ((mkey = yyjson_mut_obj_iter_next(&mt)) != NULL) {
            index_add(&xb, yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_mut_obj_iter_get_val(mkey));
        }
    }
    while ((key = yyjson_obj_iter_next(&ia)) != NULL) {
        const char *k = yyjson_get_str(key);
        size_t len = yyjson_get_len(key);
        yyjson_mut_val *other = indexed ? index_find(&xb, k, len) : find_mut(b_start, k, len);

        diff_member(d, k, len, yyjson_obj_iter_get_val(key), other);
    }
    while ((mkey = yyjson_mut_obj_iter_next(&ib)) != NULL) {
        const char *k = yyjson_mut_get_str(mkey);
        size_t len = yyjson_mut_get_len(mkey);
        bool known = indexed ? index_find(&xa, k, len) != NULL : find_imm(a_start, k, len) != NULL;

        if (!known) {
            diff_member(d, k, len, NULL, yyjson_mut_obj_iter_get_val(mkey));
        }
    }
}

/*
 * Members are walked pairwise while both objects list the same keys in the same order, which is
 * what a copy changed in place looks like; the rest is matched by key. A key that appears twice
 * makes a path ambiguous (kube-apiserver never sends one, a fuzzer does): such an object is
 * replaced whole, which is exact whatever a patch reader does with duplicates.
 */
static void diff_object(diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b)
{
    yyjson_obj_iter ia;
    yyjson_mut_obj_iter ib;
    size_t na = yyjson_obj_size(a), nb = yyjson_mut_obj_size(b);

    if (has_duplicate_keys(d, a)) {
        emit(d, "replace", b);
        return;
    }
    yyjson_obj_iter_init(a, &ia);
    yyjson_mut_obj_iter_init(b, &ib);
    while (na > 0 && nb > 0) {
        yyjson_obj_iter at = ia;
        yyjson_mut_obj_iter bt = ib;
        yyjson_val *key = yyjson_obj_iter_next(&ia);
        yyjson_mut_val *mkey = yyjson_mut_obj_iter_next(&ib);

        if (!same_key(yyjson_get_str(key), yyjson_get_len(key), yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey))) {
            diff_object_rest(d, at, bt, na, nb);
            return;
        }
        diff_member(d, yyjson_get_str(key), yyjson_get_len(key), yyjson_obj_iter_get_val(key),
                    yyjson_mut_obj_iter_get_val(mkey));
        na--;
        nb--;
    }
    if (na > 0 || nb > 0) {
        diff_object_rest(d, ia, ib, na, nb);
    }
}

static void diff_array(diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b)
{
    size_t la = yyjson_arr_size(a), lb = yyjson_mut_arr_size(b);
    yyjson_val **va = elements(d, a, la);
    yyjson_mut_val **vb = mut_elements(d, b, lb);
    size_t prefix = 0, suffix = 0, ma, mb;

    if (va == NULL || vb == NULL) {
        return;
    }
    /* Keep what is equal at both ends; what changed lies in between. */
    while (prefix < la && prefix < lb && equal(&d->eq, vb[prefix], va[prefix])) {
        prefix++;
    }
    while (suffix < la - prefix && suffix < lb - prefix &&
           equal(&d->eq, vb[lb - 1 - suffix], va[la - 1 - suffix])) {
        suffix++;
    }
    ma = la - prefix - suffix;
    mb = lb - prefix - suffix;
    for (size_t i = 0; i < ma && i < mb; i++) {
        size_t saved = push_index(d, prefix + i);

        diff_value(d, va[prefix + i], vb[prefix + i]);
        d->path_len = saved;
    }
    /* Surplus elements go from the highest index down, so earlier indices stay valid. */
    for (size_t k = ma; k > mb; k--) {
        size_t saved = push_index(d, prefix + k - 1);

        emit(d, "remove", NULL);
        d->path_len = saved;
    }
    for (size_t k = ma; k < mb; k++) {
        size_t saved = push_index(d, prefix + k);

        emit(d, "add", vb[prefix + k]);
        d->path_len = saved;
    }
}

static void diff_value(diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b)
{
    bool objects = yyjson_is_obj(a) && yyjson_mut_is_obj(b);
    bool arrays = yyjson_is_arr(a) && yyjson_mut_is_arr(b);

    if (d->out.failed) {
        return;
    }
    if ((objects || arrays) && d->depth < DIFF_MAX_DEPTH) {
        d->depth++;
        if (objects) {
            diff_object(d, a, b);
        } else {
            diff_array(d, a, b);
        }
        d->depth--;
    } else if (!equal(&d->eq, b, a)) {
        emit(d, "replace", b);
    }
    if (d->eq.failed) {
        d->out.failed = true;
    }
}

int adm_jsonpatch_diff(yyjson_val *from, yyjson_mut_val *to, adm_arena_t *a, const char **out, size_t *out_len,
                       size_t *nops)
{
    diff_ctx_t d = {.arena = a, .eq = {.arena = a}};

    adm_jsonw_init(&d.out, a);
    ADM_JSONW_LIT(&d.out, "[");
    diff_value(&d, from, to);
    ADM_JSONW_LIT(&d.out, "]");
    if (d.out.failed) {
        return ADM_ENOMEM;
    }
    *out = d.out.data;
    *out_len = d.out.len;
    *nops = d.nops;
    return 0;
}

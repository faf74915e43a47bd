/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch diff: the patch that turns the received object into the final one, which every
 * mutating answer carries. Both sides are walked together; members are paired by position while
 * the keys agree and by key after (jsonpatch_internal.h's index when many), arrays keep their
 * equal ends and diff what lies between. The patch text is written as it goes into one growing
 * arena buffer, the current JSON Pointer into another. The diff recurses, but at most
 * DIFF_MAX_DEPTH levels.
 */
#include "adm/admission/jsonpatch.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"
#include "jsonpatch_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * The diff recurses once per level while both sides keep the same shape. Real objects are a few
 * dozen levels deep; past this many the differing subtree is replaced whole (still exact, only
 * less minimal), so the C stack stays small whatever the nesting.
 */
#define DIFF_MAX_DEPTH 128

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

typedef struct diff_ctx_s {
    adm_arena_t *arena;
    adm__eq_list_t eq;
    size_t depth; /* containers entered: the recursion is cut at DIFF_MAX_DEPTH */
    adm_jsonw_t out;
    /*
     * The current position as a JSON Pointer, escaped: each step is rendered once, when the walk
     * enters it, and cut off when it leaves, so operations under one object share its rendering.
     * The walk enters only members that changed, so few steps are rendered and never written.
     */
    char *path;
    size_t path_len, path_cap;
    size_t nops;
    /* when `to` began as adm_json_mut_share_kept's copy of `from`: how (NULL otherwise) */
    const adm_json_origin_t *origin;
    yyjson_val **work; /* has_no_duplicates' worklist */
    size_t work_cap;
} diff_ctx_t;

/* Room for extra more bytes of path; false (and the output failed) when the arena is exhausted. */
static bool path_room(diff_ctx_t *d, size_t extra)
{
    size_t cap;
    char *g;

    if (extra <= d->path_cap - d->path_len) {
        return true;
    }
    if (extra > SIZE_MAX / 4 - d->path_len) {
        d->out.failed = true;
        return false;
    }
    cap = 2 * (d->path_len + extra) + 64;
    g = adm_arena_realloc(d->arena, d->path, d->path_len, cap);
    if (g == NULL) {
        d->out.failed = true;
        return false;
    }
    d->path = g;
    d->path_cap = cap;
    return true;
}

/* True when none of the eight bytes at p is a '~' or a '/' (exact: a zero byte test per pattern). */
static inline bool plain_word(const char *p)
{
    uint64_t x, t, s;

    memcpy(&x, p, sizeof(x));
    t = x ^ (ONES * '~');
    s = x ^ (ONES * '/');
    return ((((t - ONES) & ~t) | ((s - ONES) & ~s)) & HIGHS) == 0;
}

/* Appends "/token", escaped per RFC 6901, to the current path; returns the length to restore. */
static size_t push_token(diff_ctx_t *d, const char *tok, size_t n)
{
    size_t saved = d->path_len, len = saved;

    if (n > SIZE_MAX / 4 || !path_room(d, 1 + 2 * n)) {
        return saved;
    }
    d->path[len++] = '/';
    for (size_t k = 0; k < n;) {
        /* eight bytes at a time while none is a '~' or a '/' */
        if (n - k >= 8 && plain_word(tok + k)) {
            memcpy(d->path + len, tok + k, 8);
            len += 8;
            k += 8;
            continue;
        }
        if (tok[k] == '~') {
            d->path[len++] = '~';
            d->path[len++] = '0';
        } else if (tok[k] == '/') {
            d->path[len++] = '~';
            d->path[len++] = '1';
        } else {
            d->path[len++] = tok[k];
        }
        k++;
    }
    d->path_len = len;
    return saved;
}

/* Appends "/index" to the current path; returns the length to restore. */
static size_t push_index(diff_ctx_t *d, size_t index)
{
    size_t saved = d->path_len, n = 0;
    char digits[20];

    if (!path_room(d, 1 + sizeof(digits))) {
        return saved;
    }
    do {
        digits[n++] = (char)('0' + index % 10);
        index /= 10;
    } while (index != 0);
    d->path[d->path_len++] = '/';
    while (n > 0) {
        d->path[d->path_len++] = digits[--n];
    }
    return saved;
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

/* One operation: its head written straight into the reserved output, then the value if any. */
static void emit(diff_ctx_t *d, const char *op, yyjson_mut_val *value)
{
    adm_jsonw_t *w = &d->out;
    size_t path_len = d->path_len, op_len = strlen(op);
    char *p;

    if (w->failed || path_len > (SIZE_MAX - 64) / 6 ||
        !adm_jsonw_reserve(w, 32 + op_len + ADM_JSONW_STRING_MAX(path_len))) {
        w->failed = true;
        return;
    }
    p = w->data + w->len;
    if (d->nops > 0) {
        *p++ = ',';
    }
    p = PUT(p, "{\"op\":\"");
    memcpy(p, op, op_len);
    p += op_len;
    p = PUT(p, "\",\"path\":");
    p = adm_jsonw_put_string(p, path_len > 0 ? d->path : "", path_len);
    if (value != NULL) {
        p = PUT(p, ",\"value\":");
        w->len = (size_t)(p - w->data);
        adm_jsonw_mut_value(w, value);
        ADM_JSONW_LIT(w, "}");
    } else {
        *p++ = '}';
        w->len = (size_t)(p - w->data);
    }
    d->nops++;
}

/* True when b is a's own copy and no change touched it (adm_json_untouched): then b equals a. */
static inline bool left_as_copied(const diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b)
{
    return d->origin != NULL && adm_json_untouched_copy_of(d->origin, a, b);
}

/* a equals b (b mutable): at once when b was left as copied from a, else by walking both. */
static bool same(diff_ctx_t *d, yyjson_mut_val *b, yyjson_val *a)
{
    return left_as_copied(d, a, b) || adm__json_equal(&d->eq, b, a);
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
 * Key i of an object of up to 32 keys (the first i in strs and lens) repeats an earlier one. It is
 * compared only with the earlier keys of its length, and only when the mask of what was seen so
 * far says there may be one. The mask's bit is the key's length plus its first byte, modulo 64:
 * length alone sends a pod's "name" and "kind", "image" and "ports" to the comparison. Records
 * key i.
 */
static inline bool repeats_earlier_key(yyjson_val *key, size_t i, const char **strs, size_t *lens,
                                       uint64_t *seen)
{
    const char *str = yyjson_get_str(key);
    size_t len = yyjson_get_len(key);
    uint64_t bit = UINT64_C(1) << ((len + (len > 0 ? (unsigned char)str[0] : 0)) & 63);

    if ((*seen & bit) != 0) {
        for (size_t j = 0; j < i; j++) {
            if (lens[j] == len && adm__same_key(strs[j], len, str, len)) {
                return true;
            }
        }
    }
    *seen |= bit;
    strs[i] = str;
    lens[i] = len;
    return false;
}

/*
 * True when a key appears twice in a. Only the received side is checked: the object diffed against
 * it is a copy the plugins and patches changed through lookups, which never add a second key.
 */
static bool has_duplicate_keys(diff_ctx_t *d, yyjson_val *a)
{
    yyjson_obj_iter it;
    yyjson_val *key;

    if (yyjson_obj_size(a) > 32) {
        adm__key_index_t x;

        if (!adm__key_index_init(d->arena, &x, yyjson_obj_size(a))) {
            d->out.failed = true;
            return false;
        }
        yyjson_obj_iter_init(a, &it);
        for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
            if (!adm__key_index_add(&x, yyjson_get_str(key), yyjson_get_len(key), NULL)) {
                return true;
            }
        }
        return false;
    }
    {
        /* Up to 32 keys, walked in the flat layout: a key's value follows it, and the next key
           follows the value's subtree. */
        const char *strs[32];
        size_t lens[32];
        uint64_t seen = 0;
        size_t n = yyjson_obj_size(a);

        key = unsafe_yyjson_get_first(a);
        for (size_t i = 0; i < n; i++) {
            if (repeats_earlier_key(key, i, strs, lens, &seen)) {
                return true;
            }
            key = unsafe_yyjson_get_next(key + 1);
        }
        return false;
    }
}

/* Pushes v on has_no_duplicates' worklist; false when the arena is exhausted. */
static bool push_work(diff_ctx_t *d, size_t *top, yyjson_val *v)
{
    if (*top == d->work_cap) {
        size_t cap = d->work_cap == 0 ? 32 : 2 * d->work_cap;
        yyjson_val **g = adm_arena_realloc(d->arena, d->work, d->work_cap * sizeof(*g), cap * sizeof(*g));

        if (g == NULL) {
            return false;
        }
        d->work = g;
        d->work_cap = cap;
    }
    d->work[(*top)++] = v;
    return true;
}

/*
 * What the diff of a value against an equal one checks: the objects it reaches through object
 * members alone (it compares arrays element by element and stops there) have no key twice; one
 * that has would be replaced whole. Walks those objects with a worklist. An object of up to 32
 * keys is checked and its object members pushed in one walk of the flat layout, as
 * has_duplicate_keys walks it; a larger one takes has_duplicate_keys and a second walk.
 */
static bool has_no_duplicates(diff_ctx_t *d, yyjson_val *a)
{
    size_t top = 0;

    if (!yyjson_is_obj(a)) {
        return true;
    }
    for (;;) {
        size_t n = yyjson_obj_size(a);

        if (n > 32) {
            yyjson_obj_iter it;
            yyjson_val *key;

            if (has_duplicate_keys(d, a)) {
                return false;
            }
            yyjson_obj_iter_init(a, &it);
            for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
                yyjson_val *v = yyjson_obj_iter_get_val(key);

                if (yyjson_is_obj(v) && yyjson_get_len(v) != 0 && !push_work(d, &top, v)) {
                    return false; /* the slow path will say so */
                }
            }
        } else {
            const char *strs[32];
            size_t lens[32];
            uint64_t seen = 0;
            yyjson_val *key = unsafe_yyjson_get_first(a);

            for (size_t i = 0; i < n; i++) {
                yyjson_val *v = key + 1;

                if (repeats_earlier_key(key, i, strs, lens, &seen)) {
                    return false;
                }
                if (yyjson_is_obj(v) && yyjson_get_len(v) != 0 && !push_work(d, &top, v)) {
                    return false; /* the slow path will say so */
                }
                key = unsafe_yyjson_get_next(v);
            }
        }
        if (top == 0) {
            return true;
        }
        a = d->work[--top];
    }
}

/*
 * True when the member values a and b are left as copied, so diff_value would find nothing. Most
 * members of a changed object are: the callers ask this first, so only the others enter the
 * recursive path and its frame.
 */
static inline bool unchanged(diff_ctx_t *d, yyjson_val *a, yyjson_mut_val *b)
{
    /* only a non-empty object can hold a key twice: the others skip the walk and its call */
    return a != NULL && b != NULL && left_as_copied(d, a, b) &&
           (!yyjson_is_obj(a) || yyjson_get_len(a) == 0 || has_no_duplicates(d, a));
}

/* The diff of a member that may have changed (not unchanged()). */
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

    for (mkey = yyjson_mut_obj_iter_next(&it); mkey != NULL; mkey = yyjson_mut_obj_iter_next(&it)) {
        if (adm__same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), key, len)) {
            return yyjson_mut_obj_iter_get_val(mkey);
        }
    }
    return NULL;
}

static yyjson_val *find_imm(yyjson_obj_iter it, const char *key, size_t len)
{
    yyjson_val *k;

    for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
        if (adm__same_key(yyjson_get_str(k), yyjson_get_len(k), key, len)) {
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
    const bool indexed = na > ADM__SMALL_OBJECT || nb > ADM__SMALL_OBJECT;
    const yyjson_obj_iter a_start = ia;
    const yyjson_mut_obj_iter b_start = ib;
    yyjson_val *key;
    yyjson_mut_val *mkey;
    adm__key_index_t xa, xb;

    if (indexed) {
        yyjson_obj_iter it = ia;
        yyjson_mut_obj_iter mt = ib;

        if (!adm__key_index_init(d->arena, &xa, na) || !adm__key_index_init(d->arena, &xb, nb)) {
            d->out.failed = true;
            return;
        }
        for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
            adm__key_index_add(&xa, yyjson_get_str(key), yyjson_get_len(key), yyjson_obj_iter_get_val(key));
        }
        for (mkey = yyjson_mut_obj_iter_next(&mt); mkey != NULL; mkey = yyjson_mut_obj_iter_next(&mt)) {
            adm__key_index_add(&xb, yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey),
                               yyjson_mut_obj_iter_get_val(mkey));
        }
    }
    for (key = yyjson_obj_iter_next(&ia); key != NULL; key = yyjson_obj_iter_next(&ia)) {
        const char *k = yyjson_get_str(key);
        size_t len = yyjson_get_len(key);
        yyjson_mut_val *other = indexed ? adm__key_index_find(&xb, k, len) : find_mut(b_start, k, len);
        yyjson_val *mine = yyjson_obj_iter_get_val(key);

        if (!unchanged(d, mine, other)) {
            diff_member(d, k, len, mine, other);
        }
    }
    for (mkey = yyjson_mut_obj_iter_next(&ib); mkey != NULL; mkey = yyjson_mut_obj_iter_next(&ib)) {
        const char *k = yyjson_mut_get_str(mkey);
        size_t len = yyjson_mut_get_len(mkey);
        bool known = indexed ? adm__key_index_find(&xa, k, len) != NULL : find_imm(a_start, k, len) != NULL;

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

        if (!adm__same_key(yyjson_get_str(key), yyjson_get_len(key), yyjson_mut_get_str(mkey),
                           yyjson_mut_get_len(mkey))) {
            diff_object_rest(d, at, bt, na, nb);
            return;
        }
        if (!unchanged(d, yyjson_obj_iter_get_val(key), yyjson_mut_obj_iter_get_val(mkey))) {
            diff_member(d, yyjson_get_str(key), yyjson_get_len(key), yyjson_obj_iter_get_val(key),
                        yyjson_mut_obj_iter_get_val(mkey));
        }
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
    while (prefix < la && prefix < lb && same(d, vb[prefix], va[prefix])) {
        prefix++;
    }
    while (suffix < la - prefix && suffix < lb - prefix &&
           same(d, vb[lb - 1 - suffix], va[la - 1 - suffix])) {
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
    } else if (!same(d, b, a)) {
        emit(d, "replace", b);
    }
    if (d->eq.failed) {
        d->out.failed = true;
    }
}

static int diff(diff_ctx_t *d, yyjson_val *from, yyjson_mut_val *to, const char **out, size_t *out_len,
                size_t *nops)
{
    adm_jsonw_init(&d->out, d->arena);
    ADM_JSONW_LIT(&d->out, "[");
    diff_value(d, from, to);
    ADM_JSONW_LIT(&d->out, "]");
    if (d->out.failed) {
        return ADM_ENOMEM;
    }
    *out = d->out.data;
    *out_len = d->out.len;
    *nops = d->nops;
    return 0;
}

int adm_jsonpatch_diff(yyjson_val *from, yyjson_mut_val *to, adm_arena_t *a, const char **out,
                       size_t *out_len, size_t *nops)
{
    diff_ctx_t d = {.arena = a, .eq = {.arena = a}};

    return diff(&d, from, to, out, out_len, nops);
}

int adm_jsonpatch_diff_copy(yyjson_val *from, yyjson_mut_val *to, const adm_json_origin_t *o, adm_arena_t *a,
                            const char **out, size_t *out_len, size_t *nops)
{
    diff_ctx_t d = {.arena = a, .eq = {.arena = a}};

    d.origin = o->from == from ? o : NULL;
    return diff(&d, from, to, out, out_len, nops);
}

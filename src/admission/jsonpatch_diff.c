/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON Patch diff: the patch that turns the received object into the final one, which every
 * mutating answer carries. Both sides are walked together; members are paired by position while
 * the keys agree and by key after (jsonpatch_internal.h's index when many), arrays keep their
 * equal ends and diff what lies between. The patch text is written as it goes into one growing
 * arena buffer, the current JSON Pointer into another. The diff recurses, but at most
 * DIFF_MAX_DEPTH levels.
 *
 * Two walks, one per kind of `to`: a mutable value (adm_jsonpatch_diff: a webhook's patched copy,
 * and the reference the flat walk is tested against), and a flat layout (adm_jsonpatch_diff_flat:
 * the chain's final object, a view), which a lineage lets skip what was copied from `from`.
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
    /* the flat diff's: where `to`'s runs copied verbatim from `from` are (its l NULL: none known) */
    adm_json_lineage_cursor_t lin;
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

/* The same test on four bytes. */
static inline bool plain_half(const char *p)
{
    uint32_t x, t, s;
    const uint32_t ones = 0x01010101u, highs = 0x80808080u;

    memcpy(&x, p, sizeof(x));
    t = x ^ (ones * '~');
    s = x ^ (ones * '/');
    return ((((t - ones) & ~t) | ((s - ones) & ~s)) & highs) == 0;
}

/*
 * True when tok (n bytes) holds no '~' and no '/', so it goes into the path as it is: most keys
 * do. Tested by words, the last one overlapping bytes already tested, so no byte outside tok is
 * read.
 */
static inline bool plain_token(const char *tok, size_t n)
{
    if (n >= 8) {
        for (size_t k = 0; n - k > 8; k += 8) {
            if (!plain_word(tok + k)) {
                return false;
            }
        }
        return plain_word(tok + n - 8);
    }
    if (n >= 4) {
        return plain_half(tok) && plain_half(tok + n - 4);
    }
    for (size_t k = 0; k < n; k++) {
        if (tok[k] == '~' || tok[k] == '/') {
            return false;
        }
    }
    return true;
}

/* Copies n bytes, by words as plain_token tests them: keys are short, and a call to memcpy would
   cost more than the copy. */
static inline void copy_token(char *to, const char *tok, size_t n)
{
    if (n >= 8) {
        for (size_t k = 0; n - k > 8; k += 8) {
            memcpy(to + k, tok + k, 8);
        }
        memcpy(to + n - 8, tok + n - 8, 8);
    } else if (n >= 4) {
        memcpy(to, tok, 4);
        memcpy(to + n - 4, tok + n - 4, 4);
    } else {
        for (size_t k = 0; k < n; k++) {
            to[k] = tok[k];
        }
    }
}

/* Appends "/token", escaped per RFC 6901, to the current path; returns the length to restore. */
static size_t push_token(diff_ctx_t *d, const char *tok, size_t n)
{
    size_t saved = d->path_len, len = saved;

    if (n > SIZE_MAX / 4 || !path_room(d, 1 + 2 * n)) {
        return saved;
    }
    d->path[len++] = '/';
    if (plain_token(tok, n)) {
        copy_token(d->path + len, tok, n);
        d->path_len = len + n;
        return saved;
    }
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

/*
 * One operation: its head written straight into the reserved output, then the value if any (a
 * mutable one, or a flat one written to the same bytes).
 */
static void emit_value(diff_ctx_t *d, const char *op, yyjson_mut_val *value, yyjson_val *flat)
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
    if (value != NULL || flat != NULL) {
        p = PUT(p, ",\"value\":");
        w->len = (size_t)(p - w->data);
        if (flat != NULL) {
            adm_jsonw_value(w, flat);
        } else {
            adm_jsonw_mut_value(w, value);
        }
        ADM_JSONW_LIT(w, "}");
    } else {
        *p++ = '}';
        w->len = (size_t)(p - w->data);
    }
    d->nops++;
}

static void emit(diff_ctx_t *d, const char *op, yyjson_mut_val *value)
{
    emit_value(d, op, value, NULL);
}

static void emit_flat(diff_ctx_t *d, const char *op, yyjson_val *value)
{
    emit_value(d, op, NULL, value);
}

/* a equals b (b mutable), by walking both. */
static bool same(diff_ctx_t *d, yyjson_mut_val *b, yyjson_val *a)
{
    return adm__json_equal(&d->eq, b, a);
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
 * The walks below step through members by their keys, without yyjson's iterators: in the
 * received object a key's value follows it and the next key follows the value's subtree (the flat
 * layout); in the mutable one a key links to its value and the value to the next key.
 */
static inline yyjson_val *next_key(yyjson_val *key)
{
    return unsafe_yyjson_get_next(key + 1);
}

static inline yyjson_mut_val *next_mut_key(yyjson_mut_val *key)
{
    return key->next->next;
}

/*
 * The bit of a key in the mask of keys seen in an object: six bits of a multiplicative hash of its
 * length and first byte. Keys that differ mostly differ there, and the hash spreads them: length
 * alone sends a pod's "name" and "kind" to a comparison, length plus first byte its spec's
 * "containers" and "dnsPolicy". A key is compared with the earlier ones only when its bit is
 * already set.
 */
static inline uint64_t key_bit(yyjson_val *key)
{
    size_t len = unsafe_yyjson_get_len(key);
    uint64_t first = len > 0 ? (unsigned char)key->uni.str[0] : 0;

    return UINT64_C(1) << ((((uint64_t)len + (first << 8)) * UINT64_C(0x9E3779B97F4A7C15)) >> 58);
}

/* Key i of the object whose first key is `first` (the flat layout) repeats one of the i before. */
static bool repeats_earlier_key(yyjson_val *first, size_t i, yyjson_val *key)
{
    const char *str = key->uni.str;
    size_t len = unsafe_yyjson_get_len(key);

    for (; i > 0; i--, first = next_key(first)) {
        if (adm__same_key(first->uni.str, unsafe_yyjson_get_len(first), str, len)) {
            return true;
        }
    }
    return false;
}

/*
 * Up to this many keys an object is checked for a repeated key through the mask of key_bit
 * (a mask hit costs a walk of the earlier keys); larger ones through a hash index.
 */
#define MASKED_KEYS 32

/*
 * True when a key appears twice in a. Only the received side is checked: the object diffed against
 * it is a copy the plugins and patches changed through lookups, which never add a second key.
 */
static bool has_duplicate_keys(diff_ctx_t *d, yyjson_val *a)
{
    size_t n = yyjson_obj_size(a);
    yyjson_val *first = unsafe_yyjson_get_first(a), *key = first;

    if (n > MASKED_KEYS) {
        adm__key_index_t x;

        if (!adm__key_index_init(d->arena, &x, n)) {
            d->out.failed = true;
            return false;
        }
        for (; n > 0; n--, key = next_key(key)) {
            if (!adm__key_index_add(&x, key->uni.str, unsafe_yyjson_get_len(key), NULL)) {
                return true;
            }
        }
        return false;
    }
    {
        uint64_t seen = 0;

        for (size_t i = 0; i < n; i++, key = next_key(key)) {
            uint64_t bit = key_bit(key);

            if ((seen & bit) != 0 && repeats_earlier_key(first, i, key)) {
                return true;
            }
            seen |= bit;
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

/* A non-empty object: the only value that can hold a key twice, or lead to one that does. */
static inline bool filled_object(yyjson_val *v)
{
    return unsafe_yyjson_is_obj(v) && unsafe_yyjson_get_len(v) != 0;
}

/*
 * What the diff of a value against an equal one checks: the objects it reaches through object
 * members alone (it compares arrays element by element and stops there) have no key twice; one
 * that has would be replaced whole. a is a non-empty object. Walks those objects with a worklist;
 * an object of up to MASKED_KEYS keys is checked and its object members pushed in one walk of the
 * flat layout, as has_duplicate_keys walks it; a larger one takes has_duplicate_keys and a second
 * walk.
 */
static bool has_no_duplicates(diff_ctx_t *d, yyjson_val *a)
{
    size_t top = 0;

    for (;;) {
        size_t n = unsafe_yyjson_get_len(a);
        yyjson_val *first = unsafe_yyjson_get_first(a), *key = first;
        uint64_t seen = 0;
        bool large = n > MASKED_KEYS;

        if (large && has_duplicate_keys(d, a)) {
            return false;
        }
        for (size_t i = 0; i < n; i++, key = next_key(key)) {
            if (!large) {
                uint64_t bit = key_bit(key);

                if ((seen & bit) != 0 && repeats_earlier_key(first, i, key)) {
                    return false;
                }
                seen |= bit;
            }
            if (filled_object(key + 1) && !push_work(d, &top, key + 1)) {
                return false; /* the slow path will say so */
            }
        }
        if (top == 0) {
            return true;
        }
        a = d->work[--top];
    }
}

/* The diff of a member: added (a NULL), removed (b NULL) or changed. */
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

/* Finds key among the n members from k on (linear; for small remainders). */
static yyjson_mut_val *find_mut(yyjson_mut_val *k, size_t n, const char *key, size_t len)
{
    for (; n > 0; n--, k = next_mut_key(k)) {
        if (adm__same_key(yyjson_mut_get_str(k), yyjson_mut_get_len(k), key, len)) {
            return k->next;
        }
    }
    return NULL;
}

static yyjson_val *find_imm(yyjson_val *k, size_t n, const char *key, size_t len)
{
    for (; n > 0; n--, k = next_key(k)) {
        if (adm__same_key(yyjson_get_str(k), yyjson_get_len(k), key, len)) {
            return k + 1;
        }
    }
    return NULL;
}

/*
 * The members after the first position where the keys differ (na of a's from ka on, nb of b's
 * from kb on): matched by key, through hash indexes when many remain so a large reordered object
 * still costs linear time. Members that went away or changed come first, then new members.
 */
static void diff_object_rest(diff_ctx_t *d, yyjson_val *ka, size_t na, yyjson_mut_val *kb, size_t nb)
{
    const bool indexed = na > ADM__SMALL_OBJECT || nb > ADM__SMALL_OBJECT;
    yyjson_val *key = ka;
    yyjson_mut_val *mkey = kb;
    adm__key_index_t xa, xb;

    if (indexed) {
        if (!adm__key_index_init(d->arena, &xa, na) || !adm__key_index_init(d->arena, &xb, nb)) {
            d->out.failed = true;
            return;
        }
        for (size_t i = 0; i < na; i++, key = next_key(key)) {
            adm__key_index_add(&xa, yyjson_get_str(key), yyjson_get_len(key), key + 1);
        }
        for (size_t i = 0; i < nb; i++, mkey = next_mut_key(mkey)) {
            adm__key_index_add(&xb, yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), mkey->next);
        }
    }
    key = ka;
    for (size_t i = 0; i < na; i++, key = next_key(key)) {
        const char *k = yyjson_get_str(key);
        size_t len = yyjson_get_len(key);
        yyjson_mut_val *other = indexed ? adm__key_index_find(&xb, k, len) : find_mut(kb, nb, k, len);

        diff_member(d, k, len, key + 1, other);
    }
    mkey = kb;
    for (size_t i = 0; i < nb; i++, mkey = next_mut_key(mkey)) {
        const char *k = yyjson_mut_get_str(mkey);
        size_t len = yyjson_mut_get_len(mkey);
        bool known = indexed ? adm__key_index_find(&xa, k, len) != NULL : find_imm(ka, na, k, len) != NULL;

        if (!known) {
            diff_member(d, k, len, NULL, mkey->next);
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
    size_t na = yyjson_obj_size(a), nb = yyjson_mut_obj_size(b);
    yyjson_val *ka = na > 0 ? unsafe_yyjson_get_first(a) : NULL;
    /* the last key links to its value, whose link is the first key */
    yyjson_mut_val *kb = nb > 0 ? next_mut_key((yyjson_mut_val *)b->uni.ptr) : NULL;

    if (has_duplicate_keys(d, a)) {
        emit(d, "replace", b);
        return;
    }
    for (; na > 0 && nb > 0; na--, nb--) {
        const char *k = yyjson_get_str(ka);
        size_t len = yyjson_get_len(ka);

        if (!adm__same_key(k, len, yyjson_mut_get_str(kb), yyjson_mut_get_len(kb))) {
            break;
        }
        diff_member(d, k, len, ka + 1, kb->next);
        ka = next_key(ka);
        kb = next_mut_key(kb);
    }
    if (na > 0 || nb > 0) {
        diff_object_rest(d, ka, na, kb, nb);
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

/*
 * The flat diff: the walk above step for step, with `to` a flat layout (a view): the same pairs
 * visited in the same order, the same operations, values written to the same bytes
 * (adm_jsonw_value). Most members of the objects it walks are unchanged, and it knows so without
 * entering them: the same scalar, or a container the lineage maps onto its partner.
 */
static void diff_value_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b);

/*
 * True when a and b are the same scalar by their bits: the same type and length (a string's
 * NOESC mark aside: a parsed string keeps it, its mutable copy's view does not) and the same
 * payload (a string's text pointer: strings are shared). adm__json_equal_flat says so too of
 * every such pair; reals (NaN) and raw values (never equal) are left to it. The lineage knows only
 * containers copied whole: the scalar members of the objects walked to a change are found
 * unchanged here.
 */
static inline bool same_scalar(const yyjson_val *a, const yyjson_val *b)
{
    uint64_t type = a->tag & YYJSON_TYPE_MASK, diff = a->tag ^ b->tag;

    switch (type) {
    case YYJSON_TYPE_NULL:
    case YYJSON_TYPE_BOOL: return diff == 0; /* the value is in the tag; the payload is not set */
    case YYJSON_TYPE_NUM:
        return diff == 0 && (a->tag & YYJSON_SUBTYPE_MASK) != YYJSON_SUBTYPE_REAL && a->uni.u64 == b->uni.u64;
    case YYJSON_TYPE_STR: return (diff & ~(uint64_t)YYJSON_SUBTYPE_MASK) == 0 && a->uni.str == b->uni.str;
    default: return false;
    }
}

/* True when b's subtree equals a's by what is known without walking: the same scalar, or a
   container the lineage maps onto a (a byte copy of it). */
static inline bool copied_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b)
{
    return same_scalar(a, b) || adm_json_lineage_cursor_same(&d->lin, b, a);
}

static bool same_flat(diff_ctx_t *d, yyjson_val *b, yyjson_val *a)
{
    return (a != NULL && b != NULL && copied_flat(d, a, b)) || adm__json_equal_flat(&d->eq, b, a);
}

/*
 * True when the member values a and b are known equal without walking them, so diff_value_flat
 * would find nothing: equal, and no object they reach through members holds a key twice (one
 * that does is replaced whole). Asked first, so only the others take the recursive path; inline,
 * as it is asked of every member.
 */
static inline __attribute__((always_inline)) bool unchanged_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b)
{
    return a != NULL && b != NULL && copied_flat(d, a, b) && (!filled_object(a) || has_no_duplicates(d, a));
}

static void diff_member_flat(diff_ctx_t *d, const char *key, size_t len, yyjson_val *a, yyjson_val *b)
{
    size_t saved = push_token(d, key, len);

    if (a == NULL) {
        emit_flat(d, "add", b);
    } else if (b == NULL) {
        emit(d, "remove", NULL);
    } else {
        diff_value_flat(d, a, b);
    }
    d->path_len = saved;
}

static void diff_object_rest_flat(diff_ctx_t *d, yyjson_val *ka, size_t na, yyjson_val *kb, size_t nb)
{
    const bool indexed = na > ADM__SMALL_OBJECT || nb > ADM__SMALL_OBJECT;
    yyjson_val *key = ka;
    adm__key_index_t xa, xb;

    if (indexed) {
        if (!adm__key_index_init(d->arena, &xa, na) || !adm__key_index_init(d->arena, &xb, nb)) {
            d->out.failed = true;
            return;
        }
        for (size_t i = 0; i < na; i++, key = next_key(key)) {
            adm__key_index_add(&xa, yyjson_get_str(key), yyjson_get_len(key), key + 1);
        }
        key = kb;
        for (size_t i = 0; i < nb; i++, key = next_key(key)) {
            adm__key_index_add(&xb, yyjson_get_str(key), yyjson_get_len(key), key + 1);
        }
    }
    key = ka;
    for (size_t i = 0; i < na; i++, key = next_key(key)) {
        const char *k = yyjson_get_str(key);
        size_t len = yyjson_get_len(key);
        yyjson_val *other = indexed ? adm__key_index_find(&xb, k, len) : find_imm(kb, nb, k, len);

        if (!unchanged_flat(d, key + 1, other)) {
            diff_member_flat(d, k, len, key + 1, other);
        }
    }
    key = kb;
    for (size_t i = 0; i < nb; i++, key = next_key(key)) {
        const char *k = yyjson_get_str(key);
        size_t len = yyjson_get_len(key);
        bool known = indexed ? adm__key_index_find(&xa, k, len) != NULL : find_imm(ka, na, k, len) != NULL;

        if (!known) {
            diff_member_flat(d, k, len, NULL, key + 1);
        }
    }
}

static void diff_object_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b)
{
    size_t na = yyjson_obj_size(a), nb = yyjson_obj_size(b);
    yyjson_val *ka = na > 0 ? unsafe_yyjson_get_first(a) : NULL;
    yyjson_val *kb = nb > 0 ? unsafe_yyjson_get_first(b) : NULL;

    if (has_duplicate_keys(d, a)) {
        emit_flat(d, "replace", b);
        return;
    }
    for (; na > 0 && nb > 0; na--, nb--) {
        const char *k = yyjson_get_str(ka);
        size_t len = yyjson_get_len(ka);

        if (!adm__same_key(k, len, yyjson_get_str(kb), yyjson_get_len(kb))) {
            break;
        }
        if (!unchanged_flat(d, ka + 1, kb + 1)) {
            diff_member_flat(d, k, len, ka + 1, kb + 1);
        }
        ka = next_key(ka);
        kb = next_key(kb);
    }
    if (na > 0 || nb > 0) {
        diff_object_rest_flat(d, ka, na, kb, nb);
    }
}

static void diff_array_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b)
{
    size_t la = yyjson_arr_size(a), lb = yyjson_arr_size(b);
    yyjson_val **va = elements(d, a, la);
    yyjson_val **vb = elements(d, b, lb);
    size_t prefix = 0, suffix = 0, ma, mb;

    if (va == NULL || vb == NULL) {
        return;
    }
    while (prefix < la && prefix < lb && same_flat(d, vb[prefix], va[prefix])) {
        prefix++;
    }
    while (suffix < la - prefix && suffix < lb - prefix &&
           same_flat(d, vb[lb - 1 - suffix], va[la - 1 - suffix])) {
        suffix++;
    }
    ma = la - prefix - suffix;
    mb = lb - prefix - suffix;
    for (size_t i = 0; i < ma && i < mb; i++) {
        size_t saved = push_index(d, prefix + i);

        diff_value_flat(d, va[prefix + i], vb[prefix + i]);
        d->path_len = saved;
    }
    for (size_t k = ma; k > mb; k--) {
        size_t saved = push_index(d, prefix + k - 1);

        emit(d, "remove", NULL);
        d->path_len = saved;
    }
    for (size_t k = ma; k < mb; k++) {
        size_t saved = push_index(d, prefix + k);

        emit_flat(d, "add", vb[prefix + k]);
        d->path_len = saved;
    }
}

static void diff_value_flat(diff_ctx_t *d, yyjson_val *a, yyjson_val *b)
{
    bool objects = yyjson_is_obj(a) && yyjson_is_obj(b);
    bool arrays = yyjson_is_arr(a) && yyjson_is_arr(b);

    if (d->out.failed) {
        return;
    }
    if ((objects || arrays) && d->depth < DIFF_MAX_DEPTH) {
        d->depth++;
        if (objects) {
            diff_object_flat(d, a, b);
        } else {
            diff_array_flat(d, a, b);
        }
        d->depth--;
    } else if (!same_flat(d, b, a)) {
        emit_flat(d, "replace", b);
    }
    if (d->eq.failed) {
        d->out.failed = true;
    }
}

/* The patch of d's walk, written into d->out between the brackets (flat: `to` a flat layout). */
static int diff_into(diff_ctx_t *d, yyjson_val *from, yyjson_mut_val *to, yyjson_val *flat, const char **out,
                     size_t *out_len, size_t *nops)
{
    adm_jsonw_init(&d->out, d->arena);
    ADM_JSONW_LIT(&d->out, "[");
    if (flat != NULL) {
        diff_value_flat(d, from, flat);
    } else {
        diff_value(d, from, to);
    }
    ADM_JSONW_LIT(&d->out, "]");
    if (d->out.failed) {
        return ADM_ENOMEM;
    }
    *out = d->out.data;
    *out_len = d->out.len;
    *nops = d->nops;
    return 0;
}

static int diff(diff_ctx_t *d, yyjson_val *from, yyjson_mut_val *to, const char **out, size_t *out_len,
                size_t *nops)
{
    return diff_into(d, from, to, NULL, out, out_len, nops);
}

int adm_jsonpatch_diff(yyjson_val *from, yyjson_mut_val *to, adm_arena_t *a, const char **out,
                       size_t *out_len, size_t *nops)
{
    diff_ctx_t d = {.arena = a, .eq = {.arena = a}};

    return diff(&d, from, to, out, out_len, nops);
}

int adm_jsonpatch_diff_flat(yyjson_val *from, yyjson_val *to, const adm_json_lineage_t *lin, adm_arena_t *a,
                            const char **out, size_t *out_len, size_t *nops)
{
    diff_ctx_t d = {.arena = a, .eq = {.arena = a}};

    if (to == NULL) {
        return ADM_ENOMEM; /* no view was made */
    }
    if (lin != NULL && lin->origin == from && lin->nruns > 0) {
        d.lin.l = lin; /* else NULL: the cursor answers false */
        d.lin.root = to;
    }
    return diff_into(&d, from, NULL, to, out, out_len, nops);
}

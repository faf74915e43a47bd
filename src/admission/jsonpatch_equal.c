/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON equality and the key index that JSON Patch's apply and diff share (jsonpatch_internal.h).
 * Equality takes pairs off a worklist: objects and arrays queue their members' pairs, scalars are
 * compared at once. Objects usually list their keys in the same order, so members are paired by
 * position until the keys part; the rest are matched by key, through the hash index when many
 * remain.
 */
#include "jsonpatch_internal.h"

static uint32_t key_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    }
    return h;
}

void *adm__key_index_find(const adm__key_index_t *x, const char *s, size_t len)
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

bool adm__key_index_add(adm__key_index_t *x, const char *s, size_t len, void *val)
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

bool adm__key_index_init(adm_arena_t *arena, adm__key_index_t *x, size_t n)
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

static bool eq_push(adm__eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap == 0 ? 64 : l->cap * 2;
        adm__eq_pair_t *g = adm_arena_realloc(l->arena, l->pairs, l->cap * sizeof(*g), ncap * sizeof(*g));

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
static bool queue_rest(adm__eq_list_t *l, yyjson_mut_obj_iter ia, yyjson_val *first, yyjson_obj_iter ib,
                       size_t remaining)
{
    yyjson_mut_val *mkey;
    yyjson_val *key = first;
    adm__key_index_t x;

    if (remaining > ADM__SMALL_OBJECT && adm__key_index_init(l->arena, &x, remaining)) {
        yyjson_mut_obj_iter it = ia;

        for (mkey = yyjson_mut_obj_iter_next(&it); mkey != NULL; mkey = yyjson_mut_obj_iter_next(&it)) {
            if (!adm__key_index_add(&x, yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey),
                                    yyjson_mut_obj_iter_get_val(mkey))) {
                return false; /* a key twice: not equal to anything in a useful sense */
            }
        }
        for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
            yyjson_mut_val *v = adm__key_index_find(&x, yyjson_get_str(key), yyjson_get_len(key));

            if (v == NULL || !eq_push(l, v, yyjson_obj_iter_get_val(key))) {
                return false;
            }
        }
        return true;
    }
    for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
        yyjson_mut_obj_iter it = ia;
        yyjson_mut_val *v = NULL;

        for (mkey = yyjson_mut_obj_iter_next(&it); mkey != NULL; mkey = yyjson_mut_obj_iter_next(&it)) {
            if (adm__same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_get_str(key),
                              yyjson_get_len(key))) {
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
static bool queue_members(adm__eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
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
    for (key = yyjson_obj_iter_next(&ib); key != NULL; key = yyjson_obj_iter_next(&ib)) {
        yyjson_mut_obj_iter at = ia;
        yyjson_mut_val *mkey = yyjson_mut_obj_iter_next(&ia);

        if (!adm__same_key(yyjson_mut_get_str(mkey), yyjson_mut_get_len(mkey), yyjson_get_str(key),
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
static bool queue_elements(adm__eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    yyjson_mut_arr_iter ia;
    yyjson_arr_iter ib;
    yyjson_mut_val *x;

    if (yyjson_mut_arr_size(a) != yyjson_arr_size(b)) {
        return false;
    }
    yyjson_mut_arr_iter_init(a, &ia);
    yyjson_arr_iter_init(b, &ib);
    for (x = yyjson_mut_arr_iter_next(&ia); x != NULL; x = yyjson_mut_arr_iter_next(&ia)) {
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
    case YYJSON_TYPE_NULL: return true;
    case YYJSON_TYPE_BOOL: return yyjson_mut_get_bool(a) == yyjson_get_bool(b);
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
        return adm__same_key(yyjson_mut_get_str(a), yyjson_mut_get_len(a), yyjson_get_str(b),
                             yyjson_get_len(b));
    default: return false;
    }
}

bool adm__json_equal(adm__eq_list_t *l, yyjson_mut_val *a, yyjson_val *b)
{
    l->n = 0;
    if (!eq_push(l, a, b)) {
        return false;
    }
    while (l->n > 0) {
        adm__eq_pair_t p = l->pairs[--l->n];
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
 * adm__json_equal_flat: the walk above step for step, with the flat side's iterators where the
 * mutable side's were, so the two answer alike on every input (duplicate keys included).
 */
static bool eq_flat_push(adm__eq_list_t *l, yyjson_val *a, yyjson_val *b)
{
    if (l->flat_n == l->flat_cap) {
        size_t ncap = l->flat_cap == 0 ? 64 : l->flat_cap * 2;
        adm__eq_flat_pair_t *g =
            adm_arena_realloc(l->arena, l->flat, l->flat_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            l->failed = true;
            return false;
        }
        l->flat = g;
        l->flat_cap = ncap;
    }
    l->flat[l->flat_n].a = a;
    l->flat[l->flat_n].b = b;
    l->flat_n++;
    return true;
}

static bool queue_rest_flat(adm__eq_list_t *l, yyjson_obj_iter ia, yyjson_val *first, yyjson_obj_iter ib,
                            size_t remaining)
{
    yyjson_val *akey;
    yyjson_val *key = first;
    adm__key_index_t x;

    if (remaining > ADM__SMALL_OBJECT && adm__key_index_init(l->arena, &x, remaining)) {
        yyjson_obj_iter it = ia;

        for (akey = yyjson_obj_iter_next(&it); akey != NULL; akey = yyjson_obj_iter_next(&it)) {
            if (!adm__key_index_add(&x, yyjson_get_str(akey), yyjson_get_len(akey), akey + 1)) {
                return false; /* a key twice: not equal to anything in a useful sense */
            }
        }
        for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
            yyjson_val *v = adm__key_index_find(&x, yyjson_get_str(key), yyjson_get_len(key));

            if (v == NULL || !eq_flat_push(l, v, yyjson_obj_iter_get_val(key))) {
                return false;
            }
        }
        return true;
    }
    for (; key != NULL; key = yyjson_obj_iter_next(&ib)) {
        yyjson_obj_iter it = ia;
        yyjson_val *v = NULL;

        for (akey = yyjson_obj_iter_next(&it); akey != NULL; akey = yyjson_obj_iter_next(&it)) {
            if (adm__same_key(yyjson_get_str(akey), yyjson_get_len(akey), yyjson_get_str(key),
                              yyjson_get_len(key))) {
                v = akey + 1;
                break;
            }
        }
        if (v == NULL || !eq_flat_push(l, v, yyjson_obj_iter_get_val(key))) {
            return false;
        }
    }
    return true;
}

static bool queue_members_flat(adm__eq_list_t *l, yyjson_val *a, yyjson_val *b)
{
    yyjson_obj_iter ia, ib;
    yyjson_val *key;
    size_t left = yyjson_obj_size(b);

    if (yyjson_obj_size(a) != left) {
        return false;
    }
    yyjson_obj_iter_init(a, &ia);
    yyjson_obj_iter_init(b, &ib);
    for (key = yyjson_obj_iter_next(&ib); key != NULL; key = yyjson_obj_iter_next(&ib)) {
        yyjson_obj_iter at = ia;
        yyjson_val *akey = yyjson_obj_iter_next(&ia);

        if (!adm__same_key(yyjson_get_str(akey), yyjson_get_len(akey), yyjson_get_str(key),
                           yyjson_get_len(key))) {
            return queue_rest_flat(l, at, key, ib, left);
        }
        if (!eq_flat_push(l, akey + 1, yyjson_obj_iter_get_val(key))) {
            return false;
        }
        left--;
    }
    return true;
}

static bool queue_elements_flat(adm__eq_list_t *l, yyjson_val *a, yyjson_val *b)
{
    yyjson_arr_iter ia, ib;
    yyjson_val *x;

    if (yyjson_arr_size(a) != yyjson_arr_size(b)) {
        return false;
    }
    yyjson_arr_iter_init(a, &ia);
    yyjson_arr_iter_init(b, &ib);
    for (x = yyjson_arr_iter_next(&ia); x != NULL; x = yyjson_arr_iter_next(&ia)) {
        if (!eq_flat_push(l, x, yyjson_arr_iter_next(&ib))) {
            return false;
        }
    }
    return true;
}

static bool scalar_equal_flat(yyjson_val *a, yyjson_val *b)
{
    switch (yyjson_get_type(a)) {
    case YYJSON_TYPE_NULL: return true;
    case YYJSON_TYPE_BOOL: return yyjson_get_bool(a) == yyjson_get_bool(b);
    case YYJSON_TYPE_NUM:
        if (yyjson_is_real(a) || yyjson_is_real(b)) {
            return yyjson_get_num(a) == yyjson_get_num(b);
        }
        if (yyjson_is_sint(a) != yyjson_is_sint(b)) {
            return yyjson_get_sint(a) == 0 && yyjson_get_sint(b) == 0;
        }
        return yyjson_get_uint(a) == yyjson_get_uint(b);
    case YYJSON_TYPE_STR:
        return adm__same_key(yyjson_get_str(a), yyjson_get_len(a), yyjson_get_str(b), yyjson_get_len(b));
    default: return false;
    }
}

bool adm__json_equal_flat(adm__eq_list_t *l, yyjson_val *a, yyjson_val *b)
{
    l->flat_n = 0;
    if (!eq_flat_push(l, a, b)) {
        return false;
    }
    while (l->flat_n > 0) {
        adm__eq_flat_pair_t p = l->flat[--l->flat_n];
        yyjson_type type = yyjson_get_type(p.a);
        bool same;

        if (type != yyjson_get_type(p.b)) {
            return false;
        }
        if (type == YYJSON_TYPE_OBJ) {
            same = queue_members_flat(l, p.a, p.b);
        } else if (type == YYJSON_TYPE_ARR) {
            same = queue_elements_flat(l, p.a, p.b);
        } else {
            same = scalar_equal_flat(p.a, p.b);
        }
        if (!same) {
            return false;
        }
    }
    return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Edits on a flat layout, laid out by one splice. Two passes, neither recursive:
 *  - the plan: each edit in turn is located by descending from the root (at each container the
 *    child whose subtree holds the target, found by skipping siblings by their subtree sizes) and
 *    leaves marks ("sites") on the values it concerns: the containers on the way (walked member by
 *    member), the members it removes, the values it replaces; and the members it appends, per
 *    container. A site kept sorted by place makes "is this target gone?" a look-up on its way down.
 *  - the layout: one walk in writer order through the sites: between two sites of a container
 *    every value is copied in one block (a run of the lineage), a removed member is skipped, a
 *    replaced value and an appended member are laid out from their mutable value as adm_json_view
 *    lays it out, and a container on the way gets its new size and length when it closes.
 * Memory: the sites and the appended members in two arrays that double, the output doubling in
 * place as adm_json_view's does, the lineage's runs; nothing per value of the layout (but a copy
 * of a new string not NUL-terminated where it ends, as the view makes).
 */
#include "adm/base/json_edit.h"

#include "adm/base/error.h"

#include <stdint.h>
#include <string.h>

#define NONE UINT32_MAX

/* What an edit left on a value of root's layout. */
enum {
    SITE_PATH,     /* a container some edit reaches: walked member by member */
    SITE_REPLACED, /* the value (a member's value or an element) is site.value */
    SITE_REMOVED,  /* the member whose value this is goes (key and value) */
};

typedef struct site_s {
    uint32_t at;           /* the value's place in root's flat array */
    uint32_t kind;         /* SITE_* */
    yyjson_mut_val *value; /* SITE_REPLACED: the new value */
    uint32_t first, last;  /* SITE_PATH: the members appended to it, in plan.added (NONE: none) */
} site_t;

/* A member appended to a container; value NULL once a later edit of the batch removed it. */
typedef struct added_s {
    const char *key; /* NULL for an array's element */
    size_t key_len;
    yyjson_mut_val *value;
    uint32_t next; /* the container's next appended member (NONE: the last) */
} added_t;

typedef struct plan_s {
    const yyjson_alc *alc;
    yyjson_val *root;
    size_t n;      /* root's values */
    site_t *sites; /* sorted by at */
    size_t nsites, csites;
    added_t *added;
    size_t nadded, cadded;
} plan_t;

/* The values v's subtree takes in its flat array (v itself included). */
static inline size_t subtree_size(const yyjson_val *v)
{
    return (v->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR ? v->uni.ofs / sizeof(yyjson_val) : 1;
}

static inline bool is_obj(uint64_t tag)
{
    return (tag & YYJSON_TYPE_MASK) == YYJSON_TYPE_OBJ;
}

static inline bool key_is_n(const char *a, size_t a_len, const char *key, size_t key_len)
{
    return a_len == key_len && memcmp(a, key, key_len) == 0;
}

/* True when k, a key of root's layout, is key (key_len bytes). */
static inline bool key_is(const yyjson_val *k, const char *key, size_t key_len)
{
    return key_is_n(k->uni.str, (size_t)(k->tag >> YYJSON_TAG_BIT), key, key_len);
}

/* *buf (of *cap items of size bytes) with room for twice as many; false when alc fails. */
static __attribute__((noinline)) bool grow(const yyjson_alc *alc, void **buf, size_t *cap, size_t size)
{
    size_t ncap = *cap == 0 ? 16 : 2 * *cap;
    void *g = *buf == NULL ? alc->malloc(alc->ctx, ncap * size)
                           : alc->realloc(alc->ctx, *buf, *cap * size, ncap * size);

    if (g == NULL) {
        return false;
    }
    *buf = g;
    *cap = ncap;
    return true;
}

/* Room in *buf (of *cap items of size bytes) for one more after the first n; false when alc fails. */
static inline bool room_for_one(const yyjson_alc *alc, void **buf, size_t *cap, size_t n, size_t size)
{
    return n < *cap || grow(alc, buf, cap, size);
}

/* The first site from lo on at or after place at (the sites before lo lie before it). */
static size_t site_lower(const plan_t *p, size_t lo, size_t at)
{
    size_t hi = p->nsites;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (p->sites[mid].at < at) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * The index of the site at place at, made a SITE_PATH one when there was none (at index lo or
 * after); SIZE_MAX when alc fails. Sites made later at places after at leave the index valid.
 */
static size_t site_get(plan_t *p, size_t lo, size_t at)
{
    size_t i = site_lower(p, lo, at);
    site_t *s;

    if (i < p->nsites && p->sites[i].at == at) {
        return i;
    }
    if (!room_for_one(p->alc, (void **)&p->sites, &p->csites, p->nsites, sizeof(*p->sites))) {
        return SIZE_MAX;
    }
    memmove(p->sites + i + 1, p->sites + i, (p->nsites - i) * sizeof(*p->sites));
    p->nsites++;
    s = &p->sites[i];
    s->at = (uint32_t)at;
    s->kind = SITE_PATH;
    s->value = NULL;
    s->first = s->last = NONE;
    return i;
}

/*
 * Descends from the root to value t, marking every container on the way, and t, as values the
 * layout walks: *site receives t's site. ADM_EINVAL when t or a container above it is gone (an
 * earlier edit of the batch removed or replaced it) or t is an object's key.
 */
static int locate(plan_t *p, size_t t, size_t *site)
{
    size_t c = 0, lo = 0;

    for (;;) {
        const yyjson_val *cv = p->root + c;
        bool obj = is_obj(cv->tag);
        size_t j = c + 1, i = site_get(p, lo, c);

        if (i == SIZE_MAX) {
            return ADM_ENOMEM;
        }
        if (p->sites[i].kind != SITE_PATH) {
            return ADM_EINVAL;
        }
        if (c == t) {
            *site = i;
            return 0;
        }
        lo = i + 1; /* the sites below c come after its own */
        for (;;) {  /* t lies in (c, c's end): some child's subtree holds it */
            size_t v = obj ? j + 1 : j, vend = v + subtree_size(p->root + v);

            if (t < v) {
                return ADM_EINVAL; /* t is this member's key */
            }
            if (t < vend) {
                c = v;
                break;
            }
            j = vend;
        }
    }
}

/* Appends key: value (key NULL: an element) to the container at t, whose site is sites[si]. */
static int append(plan_t *p, size_t si, const char *key, size_t key_len, yyjson_mut_val *value)
{
    site_t *s = &p->sites[si];
    uint32_t i = (uint32_t)p->nadded;

    if (!room_for_one(p->alc, (void **)&p->added, &p->cadded, p->nadded, sizeof(*p->added))) {
        return ADM_ENOMEM;
    }
    p->added[i].key = key;
    p->added[i].key_len = key_len;
    p->added[i].value = value;
    p->added[i].next = NONE;
    if (s->last == NONE) {
        s->first = i;
    } else {
        p->added[s->last].next = i;
    }
    s->last = i;
    p->nadded++;
    return 0;
}

/*
 * Moves *j, a place among the own members of the object whose site is sites[si] (its subtree
 * ending at end), past the next member named key, and gives that member's value's site in *vi
 * (SIZE_MAX when alc failed); false when no member so named is left.
 */
static bool next_named(plan_t *p, size_t si, size_t *j, size_t end, const char *key, size_t key_len,
                       size_t *vi)
{
    while (*j < end) {
        size_t v = *j + 1;
        bool named = key_is(p->root + *j, key, key_len);

        *j = v + subtree_size(p->root + v);
        if (named) {
            *vi = site_get(p, si + 1, v);
            return true;
        }
    }
    return false;
}

/*
 * Removes every member named key from the object whose site is sites[si]: its own ones (their
 * values' sites made SITE_REMOVED, after si) and those appended to it.
 */
static int remove_key(plan_t *p, size_t si, const char *key, size_t key_len)
{
    size_t t = p->sites[si].at, j = t + 1, end = t + subtree_size(p->root + t), vi;

    while (next_named(p, si, &j, end, key, key_len, &vi)) {
        if (vi == SIZE_MAX) {
            return ADM_ENOMEM;
        }
        p->sites[vi].kind = SITE_REMOVED;
        p->sites[vi].value = NULL;
    }
    for (uint32_t i = p->sites[si].first; i != NONE; i = p->added[i].next) {
        if (p->added[i].value != NULL && key_is_n(p->added[i].key, p->added[i].key_len, key, key_len)) {
            p->added[i].value = NULL;
        }
    }
    return 0;
}

/*
 * The first member named key of the object whose site is sites[si] gets value in place; when it
 * has none, key: value is appended (yyjson_mut_obj_replace, else yyjson_mut_obj_add). An edit
 * that removes a key removes every member so named, so the first of its own members named key is
 * either there or all are gone.
 */
static int set_key(plan_t *p, size_t si, const char *key, size_t key_len, yyjson_mut_val *value)
{
    size_t t = p->sites[si].at, j = t + 1, end = t + subtree_size(p->root + t), vi;

    if (next_named(p, si, &j, end, key, key_len, &vi)) {
        if (vi == SIZE_MAX) {
            return ADM_ENOMEM;
        }
        if (p->sites[vi].kind != SITE_REMOVED) {
            p->sites[vi].kind = SITE_REPLACED;
            p->sites[vi].value = value;
            return 0;
        }
    }
    for (uint32_t i = p->sites[si].first; i != NONE; i = p->added[i].next) {
        if (p->added[i].value != NULL && key_is_n(p->added[i].key, p->added[i].key_len, key, key_len)) {
            p->added[i].value = value;
            return 0;
        }
    }
    return append(p, si, key, key_len, value);
}

/* Records edit e in the plan: 0, ADM_EINVAL or ADM_ENOMEM. */
static int plan_edit(plan_t *p, const adm_edit_t *e)
{
    uintptr_t off = (uintptr_t)e->target - (uintptr_t)p->root;
    size_t t = off / sizeof(yyjson_val), si = 0;
    uint64_t type;
    int err;

    if ((uintptr_t)e->target < (uintptr_t)p->root || off % sizeof(yyjson_val) != 0 || t >= p->n) {
        return ADM_EINVAL;
    }
    type = p->root[t].tag & YYJSON_TYPE_MASK;
    if ((e->op == ADM_EDIT_ADD || e->op == ADM_EDIT_SET || e->op == ADM_EDIT_REMOVE) &&
        (type != YYJSON_TYPE_OBJ || e->key == NULL)) {
        return ADM_EINVAL;
    }
    if ((e->op == ADM_EDIT_APPEND && type != YYJSON_TYPE_ARR) || (e->op == ADM_EDIT_REPLACE && t == 0) ||
        (e->op != ADM_EDIT_REMOVE && e->value == NULL) || (unsigned)e->op > ADM_EDIT_REMOVE) {
        return ADM_EINVAL;
    }
    err = locate(p, t, &si);
    if (err != 0) {
        return err;
    }
    switch (e->op) {
    case ADM_EDIT_ADD:
        err = remove_key(p, si, e->key, e->key_len);
        return err != 0 ? err : append(p, si, e->key, e->key_len, e->value);
    case ADM_EDIT_SET: return set_key(p, si, e->key, e->key_len, e->value);
    case ADM_EDIT_APPEND: return append(p, si, NULL, 0, e->value);
    case ADM_EDIT_REMOVE: return remove_key(p, si, e->key, e->key_len);
    case ADM_EDIT_REPLACE:
    default:
        p->sites[si].kind = SITE_REPLACED;
        p->sites[si].value = e->value;
        return 0;
    }
}

/* A container of a mutable value being laid out: its next child, how many are left, where it begins. */
typedef struct mut_frame_s {
    yyjson_mut_val *next;
    size_t left, at;
} mut_frame_t;

/* A container on the way to an edit being laid out (places in root's array and in the output). */
typedef struct path_frame_s {
    size_t src;     /* the container in root's array */
    size_t p, end;  /* its next value to copy, and its end, in root's array */
    size_t at;      /* the container in the output */
    size_t len;     /* its members so far: its own less those removed; appended ones count at its end */
    uint32_t first; /* its appended members */
} path_frame_t;

/* The layout under way, and its runs (in the order of the output, adjacent ones merged). */
typedef struct out_s {
    const yyjson_alc *alc;
    yyjson_val *buf;
    size_t cap, used;
    adm_json_run_t *runs;
    size_t nruns, cruns;
    mut_frame_t *mframes;
    size_t cmframes;
} out_t;

/* Open containers a new value's layout starts with room for; the output's room past root's values. */
#define FIRST_MUT_FRAMES 32
#define FIRST_SLACK 64

/* Room for k more values (the output doubling); false when the allocator fails. */
static __attribute__((noinline)) bool out_grow(out_t *o, size_t k)
{
    size_t ncap = o->cap;
    yyjson_val *g;

    while (o->used + k > ncap) {
        ncap *= 2;
    }
    g = o->alc->realloc(o->alc->ctx, o->buf, o->cap * sizeof(*o->buf), ncap * sizeof(*o->buf));
    if (g == NULL) {
        return false;
    }
    o->buf = g;
    o->cap = ncap;
    return true;
}

static inline bool out_reserve(out_t *o, size_t k)
{
    return o->cap - o->used >= k || out_grow(o, k);
}

/* Copies root's values [p, q) (whole subtrees) in one piece, as a run of the lineage. */
static bool copy_run(out_t *o, const yyjson_val *root, size_t p, size_t q)
{
    size_t k = q - p;
    adm_json_run_t *last = o->nruns > 0 ? &o->runs[o->nruns - 1] : NULL;

    if (k == 0) {
        return true;
    }
    if (!out_reserve(o, k)) {
        return false;
    }
    adm_json_copy_blocks(o->buf + o->used, root + p, k * sizeof(*root));
    if (last != NULL && last->to + last->n == o->used && last->from + last->n == p) {
        last->n += (uint32_t)k;
    } else {
        if (!room_for_one(o->alc, (void **)&o->runs, &o->cruns, o->nruns, sizeof(*o->runs))) {
            return false;
        }
        o->runs[o->nruns].to = (uint32_t)o->used;
        o->runs[o->nruns].from = (uint32_t)p;
        o->runs[o->nruns].n = (uint32_t)k;
        o->nruns++;
    }
    o->used += k;
    return true;
}

/* A copy of a string that does not end with a NUL where its length does; NULL when alc fails. */
static __attribute__((noinline)) const char *terminated(const yyjson_alc *alc, const char *s, size_t len)
{
    char *c = alc->malloc(alc->ctx, len + 1);

    if (c != NULL) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* A new member's key, as yyjson_mut_strn makes it: shared when NUL-terminated at its length. */
static bool put_key(out_t *o, const char *key, size_t len)
{
    yyjson_val *d;

    if (!out_reserve(o, 1)) {
        return false;
    }
    d = o->buf + o->used++;
    d->tag = ((uint64_t)len << YYJSON_TAG_BIT) | YYJSON_TYPE_STR;
    d->uni.str = key[len] == '\0' ? key : terminated(o->alc, key, len);
    return d->uni.str != NULL;
}

/* Children of a mutable container, keys included, and the first of them. */
static inline size_t mut_children(const yyjson_mut_val *v, yyjson_mut_val **first)
{
    size_t len = (size_t)(v->tag >> YYJSON_TAG_BIT);
    yyjson_mut_val *last = v->uni.ptr;

    if (len == 0) {
        *first = NULL;
        return 0;
    }
    if (is_obj(v->tag)) {
        *first = last->next->next; /* the last key's next is its value, whose next is the first key */
        return 2 * len;
    }
    *first = last->next;
    return len;
}

/*
 * Value v of a mutable value laid out at d as adm_json_view lays it out: a container's size is
 * fixed when it closes. False when a string to copy finds no memory.
 */
static inline bool put_mut(const yyjson_alc *alc, yyjson_val *d, const yyjson_mut_val *v)
{
    uint64_t tag = v->tag, type = tag & YYJSON_TYPE_MASK;
    yyjson_val_uni uni = v->uni;

    d->tag = tag;
    d->uni = uni;
    if (type == YYJSON_TYPE_STR || type == YYJSON_TYPE_RAW) {
        if (uni.str[tag >> YYJSON_TAG_BIT] != '\0') {
            d->uni.str = terminated(alc, uni.str, (size_t)(tag >> YYJSON_TAG_BIT));
            return d->uni.str != NULL;
        }
    } else if ((tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR) {
        d->uni.ofs = sizeof(yyjson_val);
    }
    return true;
}

/*
 * v (of any mutable document) laid out as adm_json_view lays it out, in one walk in writer order
 * with room made for a container's children when it is entered or resumed.
 */
static bool lay_out_mut(out_t *o, yyjson_mut_val *v)
{
    size_t top = 0, left, at = o->used;
    yyjson_mut_val *next;

    if (!out_reserve(o, 1) || !put_mut(o->alc, o->buf + o->used++, v)) {
        return false;
    }
    if ((v->tag & YYJSON_TYPE_ARR) != YYJSON_TYPE_ARR) {
        return true;
    }
    left = mut_children(v, &next);
    if (!out_reserve(o, left)) {
        return false;
    }
    for (;;) {
        while (left != 0) {
            yyjson_mut_val *child = next;

            next = child->next;
            left--;
            if (!put_mut(o->alc, o->buf + o->used++, child)) {
                return false;
            }
            if ((child->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR && (child->tag >> YYJSON_TAG_BIT) != 0) {
                if (top == o->cmframes) {
                    mut_frame_t *g = o->alc->realloc(o->alc->ctx, o->mframes, o->cmframes * sizeof(*g),
                                                     2 * o->cmframes * sizeof(*g));

                    if (g == NULL) {
                        return false;
                    }
                    o->mframes = g;
                    o->cmframes *= 2;
                }
                o->mframes[top].next = next;
                o->mframes[top].left = left;
                o->mframes[top].at = at;
                top++;
                at = o->used - 1;
                left = mut_children(child, &next);
                if (!out_reserve(o, left)) {
                    return false;
                }
            }
        }
        o->buf[at].uni.ofs = (o->used - at) * sizeof(yyjson_val);
        if (top == 0) {
            return true;
        }
        top--;
        next = o->mframes[top].next;
        left = o->mframes[top].left;
        at = o->mframes[top].at;
        if (!out_reserve(o, left)) {
            return false;
        }
    }
}

/* The first site from s on that lies at or past place end. */
static inline size_t skip_sites(const plan_t *p, size_t s, size_t end)
{
    while (s < p->nsites && p->sites[s].at < end) {
        s++;
    }
    return s;
}

/* Opens the container at root's place src (its site s) in the output, as cur. */
static bool open_path(const plan_t *p, out_t *o, size_t src, const site_t *s, path_frame_t *cur)
{
    if (!out_reserve(o, 1)) {
        return false;
    }
    o->buf[o->used] = p->root[src];
    cur->src = src;
    cur->p = src + 1;
    cur->end = src + subtree_size(p->root + src);
    cur->at = o->used++;
    cur->len = (size_t)(p->root[src].tag >> YYJSON_TAG_BIT);
    cur->first = s->first;
    return true;
}

/*
 * The layout of the plan: one walk through root's array in order, copying what lies between the
 * sites of each container on the way in one piece. The sites are sorted by place, so the next one
 * inside the container under way is one of its children's (those inside a removed or replaced
 * child are skipped with it, those inside a child on the way are met after entering it).
 */
static bool lay_out(const plan_t *p, out_t *o, path_frame_t *stack)
{
    size_t top = 0, s = 1;
    path_frame_t cur;

    if (p->nsites == 0 || p->sites[0].at != 0) {
        return copy_run(o, p->root, 0, p->n);
    }
    if (!open_path(p, o, 0, &p->sites[0], &cur)) {
        return false;
    }
    for (;;) {
        while (s < p->nsites && p->sites[s].at < cur.end) {
            const site_t *st = &p->sites[s];
            size_t at = st->at, vend = at + subtree_size(p->root + at);

            if (st->kind == SITE_REMOVED) { /* an object's member: its key goes too */
                if (!copy_run(o, p->root, cur.p, at - 1)) {
                    return false;
                }
                cur.len--;
                cur.p = vend;
                s = skip_sites(p, s + 1, vend);
                continue;
            }
            if (!copy_run(o, p->root, cur.p, at)) { /* a member's key comes with what precedes it */
                return false;
            }
            cur.p = vend;
            if (st->kind == SITE_REPLACED) {
                if (!lay_out_mut(o, st->value)) {
                    return false;
                }
                s = skip_sites(p, s + 1, vend);
                continue;
            }
            stack[top++] = cur;
            if (!open_path(p, o, at, st, &cur)) {
                return false;
            }
            s++;
        }
        if (!copy_run(o, p->root, cur.p, cur.end)) {
            return false;
        }
        for (uint32_t i = cur.first; i != NONE; i = p->added[i].next) {
            const added_t *m = &p->added[i];

            if (m->value == NULL) {
                continue;
            }
            if (m->key != NULL && !put_key(o, m->key, m->key_len)) {
                return false;
            }
            if (!lay_out_mut(o, m->value)) {
                return false;
            }
            cur.len++;
        }
        o->buf[cur.at].tag = ((uint64_t)cur.len << YYJSON_TAG_BIT) | (p->root[cur.src].tag & YYJSON_TAG_MASK);
        o->buf[cur.at].uni.ofs = (o->used - cur.at) * sizeof(yyjson_val);
        if (top == 0) {
            return true;
        }
        cur = stack[--top];
    }
}

static void release(const yyjson_alc *alc, void *ptr)
{
    if (ptr != NULL) {
        alc->free(alc->ctx, ptr);
    }
}

int adm_json_splice(const yyjson_alc *alc, yyjson_val *root, const adm_json_lineage_t *in,
                    const adm_edit_t *edits, size_t n, yyjson_val **out_root, adm_json_lineage_t *out)
{
    plan_t p = {alc, root, 0, NULL, 0, 0, NULL, 0, 0};
    out_t o = {alc, NULL, 0, 0, NULL, 0, 0, NULL, 0};
    path_frame_t *stack = NULL;
    adm_json_lineage_t mine, inner = {NULL, NULL, 0};
    int err = 0;

    if (in != NULL) {
        inner = *in; /* out may be in, a chain's lineage updated in place */
    }
    *out_root = NULL;
    memset(out, 0, sizeof(*out));
    if (root == NULL || (n > 0 && edits == NULL)) {
        return ADM_EINVAL;
    }
    p.n = subtree_size(root);
    if (p.n >= UINT32_MAX) {
        return ADM_EINVAL;
    }
    for (size_t i = 0; i < n && err == 0; i++) {
        err = plan_edit(&p, &edits[i]);
    }
    if (err != 0) {
        goto done;
    }
    /* the runs are at most one before each site and one after each container on the way, which
       has a site too; the output comes last so that in an arena it doubles in place */
    err = ADM_ENOMEM;
    o.cruns = 2 * p.nsites + 1;
    o.runs = alc->malloc(alc->ctx, o.cruns * sizeof(*o.runs));
    stack = alc->malloc(alc->ctx, (p.nsites + 1) * sizeof(*stack));
    o.cmframes = FIRST_MUT_FRAMES;
    o.mframes = alc->malloc(alc->ctx, o.cmframes * sizeof(*o.mframes));
    o.cap = p.n + FIRST_SLACK;
    o.buf = o.runs != NULL && stack != NULL && o.mframes != NULL
                ? alc->malloc(alc->ctx, o.cap * sizeof(*o.buf))
                : NULL;
    if (o.buf == NULL || !lay_out(&p, &o, stack)) {
        goto done;
    }
    mine.origin = root;
    mine.runs = o.runs;
    mine.nruns = o.nruns;
    if (inner.origin != NULL) {
        err = adm_json_lineage_compose(alc, &mine, &inner, out);
        if (err != 0) {
            goto done;
        }
        release(alc, o.runs);
    } else {
        *out = mine;
    }
    o.runs = NULL;
    err = 0;
    /* what the room left unused goes back (in place when the output is the last allocation) */
    *out_root = alc->realloc(alc->ctx, o.buf, o.cap * sizeof(*o.buf), o.used * sizeof(*o.buf));
    if (*out_root == NULL) {
        *out_root = o.buf;
    }
    o.buf = NULL;
done:
    release(alc, o.buf);
    release(alc, o.runs);
    release(alc, o.mframes);
    release(alc, stack);
    release(alc, p.added);
    release(alc, p.sites);
    return err;
}

/* The first of inner's runs (sorted, disjoint) that ends after place at. */
static size_t run_after(const adm_json_lineage_t *inner, size_t at)
{
    size_t lo = 0, hi = inner->nruns;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if ((size_t)inner->runs[mid].to + inner->runs[mid].n <= at) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int adm_json_lineage_compose(const yyjson_alc *alc, const adm_json_lineage_t *outer,
                             const adm_json_lineage_t *inner, adm_json_lineage_t *out)
{
    adm_json_run_t *runs = NULL;
    size_t nruns = 0, cap = 0, j = 0;

    if (inner == NULL || inner->origin == NULL) {
        *out = *outer;
        return 0;
    }
    if (outer->nruns > 0) {
        cap = outer->nruns + inner->nruns;
        runs = alc->malloc(alc->ctx, cap * sizeof(*runs));
        if (runs == NULL) {
            memset(out, 0, sizeof(*out));
            return ADM_ENOMEM;
        }
    }
    for (size_t i = 0; i < outer->nruns; i++) {
        const adm_json_run_t *r = &outer->runs[i];
        size_t lo = r->from, hi = (size_t)r->from + r->n;

        /* outer's runs come in its own order; their sources mostly in the same, so the cursor
           into inner moves on, and goes back (a search) only when a source lies behind it */
        if (j > 0 && (size_t)inner->runs[j - 1].to + inner->runs[j - 1].n > lo) {
            j = run_after(inner, lo);
        }
        while (j < inner->nruns && (size_t)inner->runs[j].to + inner->runs[j].n <= lo) {
            j++;
        }
        for (; j < inner->nruns && inner->runs[j].to < hi; j++) {
            const adm_json_run_t *q = &inner->runs[j];
            size_t a = lo > q->to ? lo : q->to, qend = (size_t)q->to + q->n, b = hi < qend ? hi : qend;
            uint32_t to = (uint32_t)(r->to + (a - lo)), from = (uint32_t)(q->from + (a - q->to));
            adm_json_run_t *last = nruns > 0 ? &runs[nruns - 1] : NULL;

            if (last != NULL && last->to + last->n == to && last->from + last->n == from) {
                last->n += (uint32_t)(b - a);
            } else {
                if (!room_for_one(alc, (void **)&runs, &cap, nruns, sizeof(*runs))) {
                    release(alc, runs);
                    memset(out, 0, sizeof(*out));
                    return ADM_ENOMEM;
                }
                runs[nruns].to = to;
                runs[nruns].from = from;
                runs[nruns].n = (uint32_t)(b - a);
                nruns++;
            }
            if (qend > hi) {
                break; /* inner's run goes on past this one: the next may start in it */
            }
        }
    }
    out->origin = inner->origin;
    out->runs = runs;
    out->nruns = nruns;
    return 0;
}

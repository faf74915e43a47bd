/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yyjson glue: an allocator that takes yyjson's memory from the request arena, and the
 * nesting-depth guard that runs on every request body before the parser. The guard is a single
 * forward pass with no recursion and constant memory. On x86-64 it settles 64 bytes at a time from
 * SSE2 bit masks; elsewhere, and for blocks the masks cannot settle, an exact byte walk runs that
 * skips string contents eight bytes at a time.
 */
#include "adm/base/json.h"

#include "adm/base/error.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static void *alc_malloc(void *ctx, size_t size)
{
    return adm_arena_alloc(ctx, size);
}

static void *alc_realloc(void *ctx, void *ptr, size_t old_size, size_t size)
{
    return adm_arena_realloc(ctx, ptr, old_size, size);
}

static void alc_free(void *ctx, void *ptr)
{
    /* Arena memory goes back all at once when the request ends. */
    (void)ctx;
    (void)ptr;
}

void adm_json_alc_init(yyjson_alc *alc, adm_arena_t *a)
{
    alc->malloc = alc_malloc;
    alc->realloc = alc_realloc;
    alc->free = alc_free;
    alc->ctx = a;
}

/* Byte classes outside strings; everything else (numbers, literals, ',', ':', spaces) is OTHER. */
enum { OTHER = 0, OPEN, CLOSE, QUOTE };

static const unsigned char outside_class[256] = {
    ['['] = OPEN, ['{'] = OPEN, [']'] = CLOSE, ['}'] = CLOSE, ['"'] = QUOTE,
};

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Where the scan stands: the next byte, the nesting depth, and whether it is inside a string. */
typedef struct scan_s {
    const unsigned char *p;
    const unsigned char *end;
    size_t depth;
    bool in_string;
} scan_t;

/*
 * High bit set in each byte of w equal to b. The lowest set bit is exact (a borrow only travels
 * upwards from a matching byte), which is all string_special needs: it finds the first match.
 */
static inline uint64_t bytes_equal(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);

    return (x - ONES) & ~x & HIGHS;
}

/* Returns the first quote or backslash in [p, stop), or stop. */
static inline const unsigned char *string_special(const unsigned char *p, const unsigned char *stop)
{
    while (stop - p >= 8) {
        uint64_t w;
        uint64_t hits;

        memcpy(&w, p, sizeof(w));
        hits = bytes_equal(w, '"') | bytes_equal(w, '\\');
        if (hits != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + (__builtin_ctzll(hits) >> 3);
#else
            break; /* the byte loop below finds it within these eight bytes */
#endif
        }
        p += 8;
    }
    while (p < stop && *p != '"' && *p != '\\') {
        p++;
    }
    return p;
}

/*
 * The exact scan, from s->p up to stop. An escape at the last byte before stop may carry the scan
 * one byte past stop, never past the end. Returns true as soon as the depth passes max_depth.
 */
static bool walk(scan_t *s, const unsigned char *stop, size_t max_depth)
{
    const unsigned char *p = s->p;

    while (p < stop) {
        if (s->in_string) {
            /* Brackets in a string do not nest, and an escaped quote does not end it. */
            p = string_special(p, stop);
            if (p == stop) {
                break;
            }
            if (*p == '"') {
                s->in_string = false;
                p++;
            } else {
                p += s->end - p >= 2 ? 2 : 1; /* the backslash and the byte it escapes */
            }
            continue;
        }
        switch (outside_class[*p++]) {
        case OPEN:
            s->depth++;
            if (s->depth > max_depth) {
                s->p = p - 1; /* the opener that went one level too deep */
                return true;
            }
            break;
        case CLOSE:
            /* Unbalanced closers are the parser's to report; they never make the text deeper. */
            if (s->depth > 0) {
                s->depth--;
            }
            break;
        case QUOTE: s->in_string = true; break;
        default: break;
        }
    }
    s->p = p;
    return false;
}

#if defined(__SSE2__)
/*
 * 64 bytes at a time with SSE2 (every x86-64 has it). Each block yields bit masks of its quotes,
 * backslashes, openers and closers. Without a backslash in the block every quote is real, so the
 * bits inside strings are the running parity of the quotes (a prefix XOR), flipped when the block
 * starts inside a string. The block is settled by counting: it cannot pass the limit when the
 * depth plus its openers stays within it, and the zero floor for stray closers cannot apply when
 * the depth is at least its closers. Anything else (a backslash, a block near the limit or near
 * depth 0) goes through the exact walk, which decides the same way one byte at a time.
 */
typedef struct block_s {
    uint64_t quote;
    uint64_t backslash;
    uint64_t open;
    uint64_t close;
} block_t;

static inline void classify(const unsigned char *p, block_t *b)
{
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    /* '[' | 0x20 is '{' and ']' | 0x20 is '}'; no other byte maps to either. */
    const __m128i fold = _mm_set1_epi8(0x20);
    const __m128i open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');

    b->quote = b->backslash = b->open = b->close = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        __m128i folded = _mm_or_si128(v, fold);
        int shift = 16 * i;

        b->quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << shift;
        b->backslash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)) << shift;
        b->open |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) << shift;
        b->close |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) << shift;
    }
}

/* Bit i of the result is the XOR of bits 0..i of x. */
static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* Set bits in x, without the libgcc call __builtin_popcountll becomes on baseline x86-64. */
static inline size_t count_bits(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (size_t)((x * ONES) >> 56);
}

static bool scan_blocks(scan_t *s, size_t max_depth)
{
    while (s->end - s->p >= 64) {
        block_t b;

        classify(s->p, &b);
        if (b.backslash == 0) {
            uint64_t inside = prefix_xor(b.quote) ^ (s->in_string ? ~UINT64_C(0) : 0);
            size_t opens = count_bits(b.open & ~inside);
            size_t closes = count_bits(b.close & ~inside);

            if (opens <= max_depth - s->depth && closes <= s->depth) {
                s->depth = s->depth + opens - closes;
                s->in_string = (inside >> 63) != 0;
                s->p += 64;
                continue;
            }
        }
        if (walk(s, s->p + 64, max_depth)) {
            return true;
        }
    }
    return false;
}
#endif

bool adm_json_too_deep(const char *text, size_t len, size_t max_depth, size_t *at)
{
    scan_t s;
    bool deep = false;

    /* Every level takes at least one byte, so a text no longer than the limit cannot pass it: a
       typical AdmissionReview of a few KiB costs nothing here. */
    if (len <= max_depth) {
        return false;
    }
    s.p = (const unsigned char *)text;
    s.end = s.p + len;
    s.depth = 0;
    s.in_string = false;
#if defined(__SSE2__)
    deep = scan_blocks(&s, max_depth);
#endif
    if (!deep) {
        deep = walk(&s, s.end, max_depth);
    }
    if (deep && at != NULL) {
        *at = (size_t)(s.p - (const unsigned char *)text);
    }
    return deep;
}

yyjson_doc *adm_json_read(adm_arena_t *a, const char *text, size_t len, yyjson_read_err *err)
{
    yyjson_alc alc;
    yyjson_doc *doc;
    size_t at = 0;
    bool deep = adm_json_too_deep(text, len, ADM_JSON_MAX_DEPTH, &at);

    if (a != NULL) {
        adm_json_alc_init(&alc, a);
    }
    /* Not in situ: yyjson copies what it keeps, so the cast drops no promise. When the text is too
       deep only what comes before the offending opener is parsed, to learn whether a syntax error
       comes first; that prefix always ends inside open containers, at a token boundary. */
    doc = yyjson_read_opts((char *)text, deep ? at : len, 0, a != NULL ? &alc : NULL, err);
    if (!deep) {
        return doc;
    }
    if (doc != NULL) {
        yyjson_doc_free(doc); /* cannot happen: the prefix is unbalanced */
    } else if (err->code == YYJSON_READ_ERROR_MEMORY_ALLOCATION ||
               (err->code != YYJSON_READ_ERROR_UNEXPECTED_END && err->pos < at)) {
        return NULL;
    }
    err->code = ADM_JSON_READ_ERROR_DEPTH;
    err->msg = "nested deeper than 10000 levels";
    err->pos = at;
    return NULL;
}

/* Go's strconv.Quote of one byte between single quotes, as encoding/json's quoteChar. */
static const char *go_quote_char(adm_arena_t *a, unsigned char c)
{
    if (c == '\'') {
        return "'\\''";
    }
    if (c == '"') {
        return "'\"'";
    }
    if (c == '\\') {
        return "'\\\\'";
    }
    if (c >= 0x20 && c < 0x7f) {
        return adm_arena_printf(a, "'%c'", c);
    }
    return adm_arena_printf(a, "'\\x%02x'", c);
}

const char *adm_json_go_error(adm_arena_t *a, const char *text, size_t len, const yyjson_read_err *err)
{
    const char *quoted;

    if (err->code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) {
        return "out of memory";
    }
    if (err->code == YYJSON_READ_ERROR_UNEXPECTED_END || err->code == YYJSON_READ_ERROR_EMPTY_CONTENT ||
        err->pos >= len) {
        return "unexpected end of JSON input";
    }
    quoted = go_quote_char(a, (unsigned char)text[err->pos]);
    if (quoted == NULL) {
        return "out of memory";
    }
    if (err->code == ADM_JSON_READ_ERROR_DEPTH) {
        return adm_arena_printf(a, "invalid character %s exceeded max depth", quoted);
    }
    return adm_arena_printf(a, "invalid character %s looking for beginning of value", quoted);
}

const char *adm_json_go_type(yyjson_val *v)
{
    switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_STR: return "string";
    case YYJSON_TYPE_NUM: return "number";
    case YYJSON_TYPE_BOOL: return "bool";
    case YYJSON_TYPE_ARR: return "array";
    case YYJSON_TYPE_OBJ: return "object";
    default: return "null";
    }
}

const char *adm_json_text(adm_arena_t *a, yyjson_val *v)
{
    yyjson_alc alc;
    const char *s;

    adm_json_alc_init(&alc, a);
    /* Go prints the bytes it holds and has no NaN or infinity in JSON: neither may fail the write. */
    s = yyjson_val_write_opts(v, YYJSON_WRITE_INF_AND_NAN_AS_NULL | YYJSON_WRITE_ALLOW_INVALID_UNICODE, &alc,
                              NULL, NULL);
    return s != NULL ? s : "?";
}

/*
 * The explicit stack of the walkers: frames of any one type, grown through the document's
 * allocator (an arena in admitd, where free is a no-op; yyjson's default allocator in tools).
 */
typedef struct stack_s {
    const yyjson_alc *alc;
    void *frames;
    size_t n, cap, size;
} walk_stack_t;

/* Room for one more frame; NULL when the allocator fails. The pointer is valid until the next push. */
static void *stack_push(walk_stack_t *st)
{
    if (st->n == st->cap) {
        size_t ncap = st->cap == 0 ? 32 : st->cap * 2;
        void *g = st->alc->realloc(st->alc->ctx, st->frames, st->cap * st->size, ncap * st->size);

        if (g == NULL) {
            return NULL;
        }
        st->frames = g;
        st->cap = ncap;
    }
    return (char *)st->frames + st->n++ * st->size;
}

static void *stack_top(walk_stack_t *st)
{
    return (char *)st->frames + (st->n - 1) * st->size;
}

static void stack_free(walk_stack_t *st)
{
    if (st->frames != NULL) {
        st->alc->free(st->alc->ctx, st->frames);
    }
}

static void stack_init(walk_stack_t *st, const yyjson_mut_doc *doc, size_t frame_size)
{
    st->alc = &doc->alc;
    st->frames = NULL;
    st->n = st->cap = 0;
    st->size = frame_size;
}

/* The values v's subtree takes in its document's flat array (v itself included). */
static inline size_t subtree_size(const yyjson_val *v)
{
    return (v->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR ? v->uni.ofs / sizeof(yyjson_val) : 1;
}

/*
 * What of an immutable value's tag its mutable copy keeps, by type: everything but a string's
 * subtype and reserved bits (a string gets the tag yyjson_mut_strn gives it: no subtype, the text
 * where it is). A table so that the copy's loop fixes tags without a branch.
 */
static const uint64_t mut_tag_keep[8] = {
    [YYJSON_TYPE_NONE] = ~(uint64_t)0, [YYJSON_TYPE_RAW] = ~(uint64_t)0,
    [YYJSON_TYPE_NULL] = ~(uint64_t)0, [YYJSON_TYPE_BOOL] = ~(uint64_t)0,
    [YYJSON_TYPE_NUM] = ~(uint64_t)0,  [YYJSON_TYPE_STR] = ~(uint64_t)YYJSON_TAG_MASK | YYJSON_TYPE_STR,
    [YYJSON_TYPE_ARR] = ~(uint64_t)0,  [YYJSON_TYPE_OBJ] = ~(uint64_t)0,
};

/*
 * The immutable document lays v's subtree out flat, in the order a writer prints it (keys before
 * their values), so the copy is one array of as many mutable values, value i for value i, made
 * in one pass over it, from the last value to the first, with no allocation per value:
 * - each value is copied and linked to the value after its subtree, which is its next sibling
 *   for every child but a container's last (a key's next is its value, which follows it). A
 *   scalar's subtree is itself, so its link is to the next slot; only containers (a fifth of a
 *   pod's values) take the branch that reads their size;
 * - a container's last child is the child whose subtree ends where the container's does; going
 *   backwards, the children are copied before their container, and of the values that end at a
 *   given place the one seen last is the outermost so far. So each value notes itself in
 *   ends[its end] and a container finds its last child (for an object, the last key's value,
 *   whose key is the slot before) in ends[its end], links it back to its first child to close
 *   the circular list, and points itself at it (at an object's last key). Every slot a
 *   container reads was written by its last child, so ends needs no clearing.
 * (The previous form, a forward pass and a second one closing each container's list by
 * following the links, spent 10.6k instructions on a 356-value pod; this one 7.5k.)
 */
yyjson_mut_val *adm_json_mut_share(yyjson_mut_doc *doc, yyjson_val *v)
{
    size_t n = subtree_size(v);
    yyjson_mut_val *m = doc->alc.malloc(doc->alc.ctx, n * sizeof(*m));
    /* by place in the array (0..n): the value last seen whose subtree ends there */
    yyjson_mut_val **ends = m != NULL ? doc->alc.malloc(doc->alc.ctx, (n + 1) * sizeof(*ends)) : NULL;
    /* walked down together: src and dst at value i, at at ends[i + 1] */
    const yyjson_val *src = v + n;
    yyjson_mut_val *dst, **at;

    if (ends == NULL) {
        if (m != NULL) {
            doc->alc.free(doc->alc.ctx, m);
        }
        return NULL;
    }
    dst = m + n;
    at = ends + n + 1;
    while (dst != m) {
        uint64_t tag, payload;
        size_t type, size;

        src--, dst--, at--;
        tag = src->tag;
        payload = src->uni.u64; /* a scalar's payload; a container's size in bytes */
        type = tag & YYJSON_TYPE_MASK;
        dst->tag = tag & mut_tag_keep[type];
        if (type < YYJSON_TYPE_ARR) { /* a scalar (only arrays and objects come after strings) */
            dst->uni.u64 = payload;
            dst->next = dst + 1;
            *at = dst;
            continue;
        }
        size = payload / sizeof(yyjson_val);
        dst->uni.ptr = NULL; /* an empty one stays so */
        if (size > 1) {
            yyjson_mut_val *last = at[size - 1];

            dst->uni.ptr = type == YYJSON_TYPE_OBJ ? last - 1 : last;
            last->next = dst + 1;
        }
        dst->next = dst + size; /* one past the array for the root: cleared below */
        at[size - 1] = dst;
    }
    m[0].next = NULL;
    doc->alc.free(doc->alc.ctx, ends);
    return m;
}

yyjson_mut_val *adm_json_mut_share_kept(yyjson_mut_doc *doc, yyjson_val *v, adm_json_origin_t *o)
{
    size_t n = subtree_size(v);
    yyjson_mut_val *copy = adm_json_mut_share(doc, v);
    yyjson_mut_val *pristine = copy != NULL ? doc->alc.malloc(doc->alc.ctx, n * sizeof(*pristine)) : NULL;

    memset(o, 0, sizeof(*o));
    if (pristine == NULL) {
        return NULL;
    }
    adm_json_copy_blocks(pristine, copy, n * sizeof(*pristine));
    o->from = v;
    o->copy = copy;
    o->pristine = pristine;
    o->n = n;
    return copy;
}

yyjson_val *adm_json_untouched(const adm_json_origin_t *o, const yyjson_mut_val *b)
{
    size_t i;

    if (o == NULL || o->copy == NULL || (uintptr_t)b < (uintptr_t)o->copy) {
        return NULL;
    }
    /* b's place in the copy, when it is a value of the copy at all: it would be from's value i */
    i = (size_t)((uintptr_t)b - (uintptr_t)o->copy) / sizeof(*b);
    return i < o->n && adm_json_untouched_copy_of(o, o->from + i, b) ? o->from + i : NULL;
}

/* The children of a mutable container, keys included, and the first of them. */
static inline size_t mut_children(const yyjson_mut_val *v, yyjson_mut_val **first)
{
    size_t len = (size_t)(v->tag >> YYJSON_TAG_BIT);
    yyjson_mut_val *last = v->uni.ptr;

    if (len == 0) {
        *first = NULL;
        return 0;
    }
    if ((v->tag & YYJSON_TYPE_MASK) == YYJSON_TYPE_OBJ) {
        *first = last->next->next; /* the last key's next is its value, whose next is the first key */
        return 2 * len;
    }
    *first = last->next;
    return len;
}

static inline bool mut_is_ctn(const yyjson_mut_val *v)
{
    return (v->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR;
}

/* A container being laid out: its next child to copy, how many are left, and where it begins. */
typedef struct view_frame_s {
    yyjson_mut_val *next;
    size_t left, at;
} view_frame_t;

/* buf (of cap items of size bytes) with room for twice as many, the old ones kept; NULL when alc fails. */
static __attribute__((noinline)) void *view_grow(const yyjson_alc *alc, void *buf, size_t cap, size_t size)
{
    return alc->realloc(alc->ctx, buf, cap * size, 2 * cap * size);
}

/* A copy of a string that does not end with a NUL where its length does; NULL when alc fails. */
static __attribute__((noinline)) const char *view_terminated(const yyjson_alc *alc, const char *s, size_t len)
{
    char *out = alc->malloc(alc->ctx, len + 1);

    if (out != NULL) {
        memcpy(out, s, len);
        out[len] = '\0';
    }
    return out;
}

/* Values a container's view starts with room for, and open containers. */
#define VIEW_FIRST_CAP 64
#define VIEW_FIRST_FRAMES 32

/*
 * The output of a view under way: where it is, how many values it has room for, and how many it
 * holds. Kept out of the walk's locals so that the walk's loop keeps its own in registers.
 */
typedef struct view_out_s {
    const yyjson_alc *alc;
    yyjson_val *buf;
    size_t cap;
} view_out_t;

/* Room for need more values after the first used ones (doubling); false when the allocator fails. */
static __attribute__((noinline)) bool view_room(view_out_t *vo, size_t used, size_t need)
{
    while (used + need > vo->cap) {
        vo->buf = view_grow(vo->alc, vo->buf, vo->cap, sizeof(*vo->buf));
        if (vo->buf == NULL) {
            return false;
        }
        vo->cap *= 2;
    }
    return true;
}

/*
 * Room for need more values from *dst on (*dst and *lim, the end of the room, moved with the
 * output); false when the allocator fails.
 */
static inline bool view_reserve(view_out_t *vo, yyjson_val **dst, yyjson_val **lim, size_t need)
{
    size_t used = (size_t)(*dst - vo->buf);

    if ((size_t)(*lim - *dst) >= need) {
        return true;
    }
    if (!view_room(vo, used, need)) {
        return false;
    }
    *dst = vo->buf + used;
    *lim = vo->buf + vo->cap;
    return true;
}

/* Runs of a traced view's lineage under way, and their room. */
typedef struct lineage_out_s {
    adm_json_run_t *runs;
    size_t n, cap;
} lineage_out_t;

/* Runs a traced view starts with room for: a pod's view copies some dozens of blocks. */
#define LINEAGE_FIRST_RUNS 64

/*
 * Notes that the view's values [to, to + n) are a copy of the origin's [from, from + n): joined to
 * the last run when it continues it (siblings copied one after another). False when alc fails.
 */
static bool lineage_note(lineage_out_t *lo, const yyjson_alc *alc, size_t to, size_t from, size_t n)
{
    if (lo->n > 0) {
        adm_json_run_t *last = &lo->runs[lo->n - 1];

        if ((size_t)last->to + last->n == to && (size_t)last->from + last->n == from) {
            last->n += (uint32_t)n;
            return true;
        }
    }
    if (lo->n == lo->cap) {
        lo->runs = view_grow(alc, lo->runs, lo->cap, sizeof(*lo->runs));
        if (lo->runs == NULL) {
            return false;
        }
        lo->cap *= 2;
    }
    lo->runs[lo->n++] = (adm_json_run_t){(uint32_t)to, (uint32_t)from, (uint32_t)n};
    return true;
}

/*
 * One walk in the order a writer prints v: the container under way lives in locals (its next
 * child, how many are left, where it began) and goes to the frame array only while a child
 * container is laid out. There is always room for the children left of the container under way
 * (made when it is entered or resumed, and after a block copied in one piece), so copying a
 * child checks for none. The frames are taken first and the output last, so that with the
 * request's arena the output grows by doubling in place; a view of o's whole copy starts with
 * room for as many values as it had, which is about what the changes leave. With lo (traced
 * views), the runs' room is taken before the output's too, and each block copied in one piece
 * is noted; the untraced views are the same body with lo NULL, so they pay nothing for it.
 */
static inline __attribute__((always_inline)) yyjson_val *
view_walk(const yyjson_alc *alc, yyjson_mut_val *v, const adm_json_origin_t *o, lineage_out_t *lo)
{
    size_t fcap = 0, top = 0, left, at = 0;
    view_out_t vo = {alc, NULL, 1};
    view_frame_t *frames = NULL;
    yyjson_val *dst, *lim;
    yyjson_mut_val *next;

    if (mut_is_ctn(v)) {
        frames = alc->malloc(alc->ctx, VIEW_FIRST_FRAMES * sizeof(*frames));
        fcap = VIEW_FIRST_FRAMES;
        vo.cap = o != NULL && v == o->copy ? o->n + VIEW_FIRST_CAP : VIEW_FIRST_CAP;
        if (frames == NULL) {
            return NULL;
        }
        if (lo != NULL && o != NULL) {
            lo->runs = alc->malloc(alc->ctx, LINEAGE_FIRST_RUNS * sizeof(*lo->runs));
            lo->cap = LINEAGE_FIRST_RUNS;
            if (lo->runs == NULL) {
                return NULL;
            }
        }
    }
    vo.buf = alc->malloc(alc->ctx, vo.cap * sizeof(*vo.buf));
    if (vo.buf == NULL) {
        return NULL;
    }
    vo.buf[0].tag = v->tag;
    vo.buf[0].uni = v->uni;
    if (yyjson_mut_is_str(v) || yyjson_mut_is_raw(v)) {
        size_t len = yyjson_mut_get_len(v);

        if (v->uni.str[len] != '\0') {
            vo.buf[0].uni.str = view_terminated(alc, v->uni.str, len);
            if (vo.buf[0].uni.str == NULL) {
                return NULL;
            }
        }
        return vo.buf;
    }
    if (!mut_is_ctn(v)) {
        return vo.buf;
    }
    left = mut_children(v, &next);
    dst = vo.buf + 1;
    lim = vo.buf + vo.cap;
    if (!view_reserve(&vo, &dst, &lim, left)) {
        return NULL;
    }
    for (;;) {
        while (left != 0) {
            yyjson_mut_val *child = next;
            uint64_t tag = child->tag;
            yyjson_val_uni uni = child->uni; /* read before the writes, which could alias it */
            yyjson_val *same;

            next = child->next;
            left--;
            dst->tag = tag;
            dst->uni = uni;
            dst++;
            if ((tag & YYJSON_TYPE_MASK) == YYJSON_TYPE_STR || (tag & YYJSON_TYPE_MASK) == YYJSON_TYPE_RAW) {
                /* a string set through the API may point into a longer text: the view's end with NULs */
                if (uni.str[tag >> YYJSON_TAG_BIT] != '\0') {
                    dst[-1].uni.str = view_terminated(alc, uni.str, (size_t)(tag >> YYJSON_TAG_BIT));
                    if (dst[-1].uni.str == NULL) {
                        return NULL;
                    }
                }
                continue;
            }
            if ((tag & YYJSON_TYPE_ARR) != YYJSON_TYPE_ARR) {
                continue; /* null, boolean, number */
            }
            dst[-1].uni.ofs = sizeof(yyjson_val);
            if ((tag >> YYJSON_TAG_BIT) == 0) {
                continue;
            }
            same = o != NULL ? adm_json_untouched(o, child) : NULL;
            if (same != NULL) {
                /* as parsed: the parsed values in one piece (offsets are relative, strings shared) */
                size_t k = same->uni.ofs / sizeof(yyjson_val);

                dst--; /* the container's own value is the first of the k */
                if (!view_reserve(&vo, &dst, &lim, k + left)) {
                    return NULL;
                }
                if (lo != NULL &&
                    !lineage_note(lo, alc, (size_t)(dst - vo.buf), (size_t)(same - o->from), k)) {
                    return NULL;
                }
                adm_json_copy_blocks(dst, same, k * sizeof(*same));
                dst += k;
                continue;
            }
            if (top == fcap) {
                frames = view_grow(alc, frames, fcap, sizeof(*frames));
                if (frames == NULL) {
                    return NULL;
                }
                fcap *= 2;
            }
            frames[top].next = next;
            frames[top].left = left;
            frames[top].at = at;
            top++;
            at = (size_t)(dst - vo.buf) - 1;
            left = mut_children(child, &next);
            if (!view_reserve(&vo, &dst, &lim, left)) {
                return NULL;
            }
        }
        vo.buf[at].uni.ofs = (size_t)(dst - vo.buf - (ptrdiff_t)at) * sizeof(yyjson_val);
        if (top == 0) {
            break;
        }
        top--;
        next = frames[top].next;
        left = frames[top].left;
        at = frames[top].at;
        if (!view_reserve(&vo, &dst, &lim, left)) {
            return NULL;
        }
    }
    alc->free(alc->ctx, frames);
    /* what the room left unused goes back (in place when the output is the last allocation) */
    return alc->realloc(alc->ctx, vo.buf, vo.cap * sizeof(*vo.buf), (size_t)(dst - vo.buf) * sizeof(*vo.buf));
}

yyjson_val *adm_json_view(const yyjson_alc *alc, yyjson_mut_val *v)
{
    return view_walk(alc, v, NULL, NULL);
}

yyjson_val *adm_json_view_from(const yyjson_alc *alc, yyjson_mut_val *v, const adm_json_origin_t *o)
{
    return view_walk(alc, v, o, NULL);
}

yyjson_val *adm_json_view_traced(const yyjson_alc *alc, yyjson_mut_val *v, const adm_json_origin_t *o,
                                 adm_json_lineage_t *lin)
{
    lineage_out_t lo = {NULL, 0, 0};
    yyjson_val *view;

    memset(lin, 0, sizeof(*lin));
    if (o == NULL || o->copy == NULL) {
        return view_walk(alc, v, NULL, NULL);
    }
    view = view_walk(alc, v, o, &lo);
    if (view != NULL) {
        lin->origin = o->from;
        lin->runs = lo.runs;
        lin->nruns = lo.n;
    }
    return view;
}

/*
 * Binary search for the run holding place i among runs [lo, hi] (the first whose end lies past i),
 * given that i lies before the end of run hi.
 */
static size_t run_search(const adm_json_lineage_t *l, size_t lo, size_t hi, size_t i)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if ((size_t)l->runs[mid].to + l->runs[mid].n <= i) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

const adm_json_run_t *adm_json_lineage_seek(adm_json_lineage_cursor_t *c, size_t i)
{
    const adm_json_lineage_t *l = c->l;
    size_t r = c->run < l->nruns ? c->run : l->nruns - 1;
    const adm_json_run_t *run;

    if (i < l->runs[r].to) {
        /* backwards (an array's equal suffix is walked from its end) */
        r = run_search(l, 0, r, i);
    } else if (i >= (size_t)l->runs[l->nruns - 1].to + l->runs[l->nruns - 1].n) {
        r = l->nruns - 1; /* past the last run */
    } else {
        /* forwards, the usual way: the next few runs one by one, then a binary search */
        for (size_t steps = 0; steps < 4 && i >= (size_t)l->runs[r].to + l->runs[r].n; steps++) {
            r++;
        }
        if (i >= (size_t)l->runs[r].to + l->runs[r].n) {
            r = run_search(l, r + 1, l->nruns - 1, i);
        }
    }
    c->run = r;
    run = &l->runs[r];
    return i >= run->to && i - run->to < run->n ? run : NULL;
}

bool adm_json_lineage_same(const adm_json_lineage_t *l, const yyjson_val *root, const yyjson_val *b,
                           const yyjson_val *a)
{
    adm_json_lineage_cursor_t c = {l, root, 0};

    return l != NULL && root != NULL && adm_json_lineage_cursor_same(&c, b, a);
}

/* An empty container of v's type, or a copy of a scalar (strings copied). */
static yyjson_mut_val *copy_one(yyjson_mut_doc *doc, yyjson_mut_val *v)
{
    switch (yyjson_mut_get_type(v)) {
    case YYJSON_TYPE_ARR: return yyjson_mut_arr(doc);
    case YYJSON_TYPE_OBJ: return yyjson_mut_obj(doc);
    default: return yyjson_mut_val_mut_copy(doc, v); /* a scalar: no recursion */
    }
}

typedef struct mut_frame_s {
    yyjson_mut_val *dst;
    bool is_obj;
    yyjson_mut_arr_iter arr;
    yyjson_mut_obj_iter obj;
} mut_frame_t;

static bool mut_enter(walk_stack_t *st, yyjson_mut_val *src, yyjson_mut_val *dst)
{
    mut_frame_t *f;

    if (!yyjson_mut_is_ctn(src)) {
        return true;
    }
    f = stack_push(st);
    if (f == NULL) {
        return false;
    }
    f->dst = dst;
    f->is_obj = yyjson_mut_is_obj(src);
    if (f->is_obj) {
        yyjson_mut_obj_iter_init(src, &f->obj);
    } else {
        yyjson_mut_arr_iter_init(src, &f->arr);
    }
    return true;
}

/* The next child of the top frame (and its key for objects), or NULL when the container is done. */
static yyjson_mut_val *mut_next(mut_frame_t *f, yyjson_mut_val **key)
{
    *key = NULL;
    if (!f->is_obj) {
        return yyjson_mut_arr_iter_next(&f->arr);
    }
    *key = yyjson_mut_obj_iter_next(&f->obj);
    return *key != NULL ? yyjson_mut_obj_iter_get_val(*key) : NULL;
}

yyjson_mut_val *adm_json_mut_copy(yyjson_mut_doc *doc, yyjson_mut_val *v)
{
    yyjson_mut_val *root = copy_one(doc, v);
    walk_stack_t st;
    bool ok;

    stack_init(&st, doc, sizeof(mut_frame_t));
    ok = root != NULL && mut_enter(&st, v, root);
    while (ok && st.n > 0) {
        mut_frame_t *f = stack_top(&st);
        yyjson_mut_val *dst = f->dst, *key, *copy;
        yyjson_mut_val *child = mut_next(f, &key);

        if (child == NULL) {
            st.n--;
            continue;
        }
        copy = copy_one(doc, child);
        if (key != NULL) {
            yyjson_mut_val *k = yyjson_mut_val_mut_copy(doc, key);

            ok = k != NULL && copy != NULL && yyjson_mut_obj_add(dst, k, copy);
        } else {
            ok = copy != NULL && yyjson_mut_arr_append(dst, copy);
        }
        ok = ok && mut_enter(&st, child, copy);
    }
    stack_free(&st);
    return ok ? root : NULL;
}

/*
 * Walks v in document order (the order a writer prints it) until a container lies deeper than
 * limit. Returns false when the allocator fails; *deepest is the depth seen, *at the first
 * container past the limit or NULL.
 */
static bool mut_walk(yyjson_mut_doc *doc, yyjson_mut_val *v, size_t limit, size_t *deepest,
                     yyjson_mut_val **at)
{
    walk_stack_t st;
    bool ok;

    *deepest = 0;
    *at = NULL;
    stack_init(&st, doc, sizeof(mut_frame_t));
    ok = mut_enter(&st, v, v);
    while (ok && st.n > 0) {
        mut_frame_t *f = stack_top(&st);
        yyjson_mut_val *key, *child;

        if (st.n > *deepest) {
            *deepest = st.n;
            if (st.n > limit) {
                *at = f->dst;
                break;
            }
        }
        child = mut_next(f, &key);
        if (child == NULL) {
            st.n--;
            continue;
        }
        ok = mut_enter(&st, child, child);
    }
    stack_free(&st);
    return ok;
}

size_t adm_json_mut_depth(yyjson_mut_doc *doc, yyjson_mut_val *v)
{
    size_t deepest;
    yyjson_mut_val *at;

    return mut_walk(doc, v, SIZE_MAX, &deepest, &at) ? deepest : SIZE_MAX;
}

int adm_json_mut_too_deep(yyjson_mut_doc *doc, yyjson_mut_val *v, size_t max_depth, yyjson_mut_val **at)
{
    size_t deepest;

    return mut_walk(doc, v, max_depth, &deepest, at) ? 0 : ADM_ENOMEM;
}

const char *adm_json_check_members(yyjson_val *obj, const char *const *known, bool *duplicate)
{
    yyjson_obj_iter it;
    yyjson_val *key;
    size_t idx = 0;

    *duplicate = false;
    yyjson_obj_iter_init(obj, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *k = yyjson_get_str(key);
        bool found = false;
        yyjson_obj_iter earlier;
        yyjson_val *other;

        for (const char *const *p = known; *p != NULL && !found; p++) {
            found = strcmp(*p, k) == 0;
        }
        if (!found) {
            return k;
        }
        yyjson_obj_iter_init(obj, &earlier);
        for (size_t j = 0; j < idx && (other = yyjson_obj_iter_next(&earlier)) != NULL; j++) {
            if (strcmp(yyjson_get_str(other), k) == 0) {
                *duplicate = true;
                return k;
            }
        }
        idx++;
    }
    return NULL;
}

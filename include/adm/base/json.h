/* SPDX-License-Identifier: Apache-2.0 */
/* yyjson glue: arena-backed allocation and the nesting-depth guard. */
#ifndef ADM_JSON_H
#define ADM_JSON_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

/*
 * Copies n bytes of flat layout in 128-byte blocks, then 32-byte ones: the copies of a layout
 * (views, splices) move a few KB, which glibc's memcpy does with `rep movsb`; that runs as fast,
 * but callgrind counts it one instruction a byte, which would misstate what these copies cost in
 * bench/callgrind.sh's counts. Inline: the loops are the copy.
 */
static inline void adm_json_copy_blocks(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    for (; n >= 128; n -= 128, d += 128, s += 128) {
        memcpy(d, s, 128);
    }
    for (; n >= 32; n -= 32, d += 32, s += 32) {
        memcpy(d, s, 32);
    }
    memcpy(d, s, n);
}

/** kube-apiserver's decoder refuses JSON nested deeper than this; so does admitd. */
#define ADM_JSON_MAX_DEPTH 10000

/** Fills alc so yyjson allocates from a (free is a no-op; the arena releases everything). */
void adm_json_alc_init(yyjson_alc *alc, adm_arena_t *a);

/**
 * True when the JSON text nests arrays/objects deeper than max_depth; *at (when not NULL) then
 * receives the offset of the opening bracket that went one level too deep. A linear scan that
 * skips strings (and their escapes) and uses no recursion; malformed text is left to the parser.
 */
bool adm_json_too_deep(const char *text, size_t len, size_t max_depth, size_t *at);

/* yyjson_read_err.code of adm_json_read() for text nested past ADM_JSON_MAX_DEPTH. */
#define ADM_JSON_READ_ERROR_DEPTH ((yyjson_read_code)100)

/**
 * The one way admitd parses JSON: the depth guard, then yyjson. Every document admitd reads
 * (requests, webhook answers, patches, files, API-server objects) goes through here, so no later
 * walker meets nesting kube-apiserver's own decoder would refuse. Memory comes from a (NULL:
 * yyjson's default allocator; free the document with yyjson_doc_free). text is not modified.
 *
 * Returns NULL with *err filled when the text is not JSON or is too deep. As Go's decoder checks
 * the whole text before decoding, the error is the one that comes first in the text: a syntax
 * error before the opener that is too deep wins; past it, err->code is ADM_JSON_READ_ERROR_DEPTH,
 * err->pos that opener's offset and err->msg "nested deeper than 10000 levels".
 */
yyjson_doc *adm_json_read(adm_arena_t *a, const char *text, size_t len, yyjson_read_err *err);

/**
 * Go's encoding/json wording of a read error, as kube-apiserver and client-go report it:
 * "unexpected end of JSON input", "invalid character 'x' looking for beginning of value",
 * "invalid character '[' exceeded max depth". Text in a (or static).
 */
const char *adm_json_go_error(adm_arena_t *a, const char *text, size_t len, const yyjson_read_err *err);

/**
 * The word for v's JSON type that Go's encoding/json puts in an UnmarshalTypeError ("json: cannot
 * unmarshal array into Go value of type ..."): "object", "array", "string", "number" or "bool".
 * "null" for null or NULL, which Go never reports (null decodes into anything); callers check
 * for it first.
 */
const char *adm_json_go_type(yyjson_val *v);

/*
 * The Go type apimachinery decodes a document's apiVersion and kind into before anything else
 * (SimpleMetaFactory.Interpret), as encoding/json names it in the errors of that step:
 * "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of
 * type " ADM_JSON_GO_TYPE_META.
 */
#define ADM_JSON_GO_TYPE_META                                                                                \
    "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "                         \
    "\"json:\\\"kind,omitempty\\\"\" }"

/**
 * v as compact JSON text, for messages: the "Invalid value: X" of kube's field errors, Go's %q of a
 * string value, the object in "Object 'Kind' is missing in '...'". Invalid UTF-8 is kept as it
 * is (Go prints the bytes it holds) and NaN and infinities are written as null, so only memory
 * can fail it: "?" when a is exhausted. The text is in a.
 */
const char *adm_json_text(adm_arena_t *a, yyjson_val *v);

/*
 * The walkers below keep their position in an explicit stack taken from the document's allocator,
 * never on the C stack, so any nesting costs heap only.
 */

/**
 * A mutable copy of v in doc whose strings (keys and values) are not copied but point at v's
 * document, which must outlive the copy (both live in one request's arena). Cheaper than
 * yyjson_val_mut_copy, and lets comparisons of unchanged strings stop at the pointer. NULL when
 * doc's allocator fails.
 */
yyjson_mut_val *adm_json_mut_share(yyjson_mut_doc *doc, yyjson_val *v);

/**
 * An immutable view of v: the same values laid out as a parsed document lays them out (so every
 * yyjson_val reader works on it), made from alc. Strings are not copied but point at v's text,
 * which must outlive the view, except those not NUL-terminated where their length ends (a
 * yyjson_mut_strn over a longer buffer), which are copied. What yyjson_mut_val_imut_copy makes,
 * without its copy of every string and without recursion. The root value, or NULL when alc fails.
 */
yyjson_val *adm_json_view(const yyjson_alc *alc, yyjson_mut_val *v);

/*
 * A mutable copy as adm_json_mut_share made it, to recognise the parts no change touched since:
 * from, the parsed value copied (n values in its document's flat array); copy, what
 * adm_json_mut_share returned (value i for from's value i); pristine, a byte copy of copy's n
 * values taken before any change (adm_json_mut_share_kept makes both).
 */
typedef struct adm_json_origin_s {
    yyjson_val *from;
    const yyjson_mut_val *copy;
    const yyjson_mut_val *pristine;
    size_t n;
} adm_json_origin_t;

/**
 * adm_json_mut_share, and the origin to recognise its untouched parts by: the byte copy is taken
 * from doc's allocator too. NULL (and o zeroed) when the allocator fails.
 */
yyjson_mut_val *adm_json_mut_share_kept(yyjson_mut_doc *doc, yyjson_val *v, adm_json_origin_t *o);

/**
 * When b is a value of o's copy that no change has touched (neither it nor anything under it:
 * every change through yyjson's API alters a tag, payload or link, which a comparison with the
 * byte copy sees; b's own link to its next sibling belongs to its container and is not looked
 * at), the value of o->from it equals, whose subtree in from's flat array is identical to b's;
 * else NULL.
 */
yyjson_val *adm_json_untouched(const adm_json_origin_t *o, const yyjson_mut_val *b);

/**
 * adm_json_untouched(o, b) == a, cheaper: a locates the value without a division, and it is
 * inline, as a walker pairing the two documents (the JSON Patch diff) asks it for every member.
 */
static inline bool adm_json_untouched_copy_of(const adm_json_origin_t *o, const yyjson_val *a,
                                              const yyjson_mut_val *b)
{
    /* a's index in from's flat array (an a outside it gives an index past its end) */
    size_t i = (size_t)((uintptr_t)a - (uintptr_t)o->from) / sizeof(*a), n;

    if (i >= o->n || b != o->copy + i || b->tag != o->pristine[i].tag ||
        b->uni.u64 != o->pristine[i].uni.u64) {
        return false;
    }
    /* the values a's subtree takes in the flat array: b's below it must be as copied, links too */
    n = (a->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR ? a->uni.ofs / sizeof(*a) : 1;
    return n == 1 || memcmp(b + 1, o->pristine + i + 1, (n - 1) * sizeof(*b)) == 0;
}

/**
 * adm_json_view of v, with o (NULL: none) recognising the subtrees no change touched: those are
 * copied from o->from's flat array in one piece instead of walked.
 */
yyjson_val *adm_json_view_from(const yyjson_alc *alc, yyjson_mut_val *v, const adm_json_origin_t *o);

/*
 * Where the values of a flat layout (a parsed document's array, a view, a splice) came from. For
 * each run, the layout's values [to, to + n) are a byte copy of the origin's values [from, from + n):
 * whole subtrees, which a byte copy keeps intact (container offsets are relative, strings are
 * shared). So a subtree of the layout lying inside a run is equal to the origin's subtree at the
 * matching place, and a walker pairing the two (the JSON Patch diff) need not look inside it.
 * Runs are in increasing `to` and disjoint; places in no run say nothing (they may still be equal).
 * The origin is the request's object, which the answer's JSON Patch is taken against. All of it
 * lives in the request's arena.
 */
typedef struct adm_json_run_s {
    uint32_t to, from, n;
} adm_json_run_t;

typedef struct adm_json_lineage_s {
    yyjson_val *origin; /* the origin's root: its flat array starts here (NULL: no lineage) */
    adm_json_run_t *runs;
    size_t nruns;
} adm_json_lineage_t;

/**
 * True when b, a value of the layout whose root is root, lies inside a run of l and that run maps
 * it onto a (a value of l->origin): then b's subtree equals a's. False when l is NULL or says
 * nothing of b.
 */
bool adm_json_lineage_same(const adm_json_lineage_t *l, const yyjson_val *root, const yyjson_val *b,
                           const yyjson_val *a);

/*
 * adm_json_lineage_same for a walker that asks about many b's of one layout, mostly in
 * increasing place (the JSON Patch diff pairs members in order): the cursor remembers the run
 * of the last answer and looks from there, a few runs forwards one by one, else by binary
 * search on the side the place lies. Start it as {l, root, 0}; l may be NULL (every answer
 * false).
 */
typedef struct adm_json_lineage_cursor_s {
    const adm_json_lineage_t *l;
    const yyjson_val *root; /* the layout's root: its flat array starts here */
    size_t run;             /* where the last lookup ended */
} adm_json_lineage_cursor_t;

/* The run of c->l holding layout place i (c->run moved to it), or NULL; for the cursor below. */
const adm_json_run_t *adm_json_lineage_seek(adm_json_lineage_cursor_t *c, size_t i);

/**
 * adm_json_lineage_same(c->l, c->root, b, a), moving the cursor. Inline: the diff asks it for
 * most members, and most answers come from the run the last one found.
 */
static inline bool adm_json_lineage_cursor_same(adm_json_lineage_cursor_t *c, const yyjson_val *b,
                                                const yyjson_val *a)
{
    const adm_json_lineage_t *l = c->l;
    /* places in the flat arrays (one before the start gives an index past any end) */
    size_t i = (size_t)((uintptr_t)b - (uintptr_t)c->root) / sizeof(*b), j, n;
    const adm_json_run_t *r;

    if (l == NULL || l->nruns == 0) {
        return false;
    }
    r = l->runs + c->run;
    if (i - r->to >= r->n) {
        r = adm_json_lineage_seek(c, i);
        if (r == NULL) {
            return false;
        }
    }
    j = (size_t)((uintptr_t)a - (uintptr_t)l->origin) / sizeof(*a);
    n = (b->tag & YYJSON_TYPE_ARR) == YYJSON_TYPE_ARR ? b->uni.ofs / sizeof(*b) : 1;
    /* the run's place for b is a, and b's whole subtree lies in the run */
    return j == r->from + (i - r->to) && i - r->to + n <= r->n;
}

/**
 * adm_json_view_from, and the lineage of the view it returns relative to o->from: every subtree it
 * copied from o->from in one piece is a run (adjacent runs merged; scalars are never copied so,
 * and the root is always laid out anew). lin is zeroed when o is NULL or knows no copy (no
 * lineage), and while the view fails (NULL). Its runs come from alc too, taken before the view's
 * values so that those still grow in place in an arena. adm_json_view_from costs what it did: both
 * are one always-inline body, the untraced one with no lineage to note.
 */
yyjson_val *adm_json_view_traced(const yyjson_alc *alc, yyjson_mut_val *v, const adm_json_origin_t *o,
                                 adm_json_lineage_t *lin);

/** A deep copy of v (a value of any mutable document) in doc, strings copied. NULL when out of memory. */
yyjson_mut_val *adm_json_mut_copy(yyjson_mut_doc *doc, yyjson_mut_val *v);

/**
 * The nesting depth of v: 0 for a scalar, 1 for an array or object of scalars, and so on (the
 * count adm_json_too_deep compares with its limit). doc lends its allocator for the walk;
 * SIZE_MAX when that fails.
 */
size_t adm_json_mut_depth(yyjson_mut_doc *doc, yyjson_mut_val *v);

/**
 * Finds the first container of v, in the order a writer prints it, that lies deeper than
 * max_depth levels: *at receives it, or NULL when v is within the limit. This is where Go's
 * decoder would stop reading v's text. Returns 0, or ADM_ENOMEM (doc's allocator failed).
 */
int adm_json_mut_too_deep(yyjson_mut_doc *doc, yyjson_mut_val *v, size_t max_depth, yyjson_mut_val **at);

/*
 * Strict decoding as kube-apiserver's strict decoder does it: every member of obj must be one of
 * known (NULL-terminated) and appear once. Returns NULL when so, else the first offending key,
 * with *duplicate telling which rule it broke. Stops at the first repeat, so the pairwise scan
 * never grows past the number of known names.
 */
const char *adm_json_check_members(yyjson_val *obj, const char *const *known, bool *duplicate);

#endif

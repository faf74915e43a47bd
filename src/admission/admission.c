/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission attributes and kube-apiserver's Status constructors. The mutable copy of the object is
 * made only when a plugin first changes it, and the immutable view plugins read is re-made only
 * when a later plugin reads after a change, so a request no plugin mutates costs no copy at all.
 */
#include "adm/admission/admission.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

#include <stdio.h>
#include <string.h>

/* A decoded request's strings are never NULL; some requests tests build by hand leave them so. */
static size_t len_of(const char *s)
{
    return s != NULL ? strlen(s) : 0;
}

void adm_attrs_init(adm_attrs_t *attrs, const adm_review_request_t *req, adm_arena_t *arena)
{
    memset(attrs, 0, sizeof(*attrs));
    attrs->req = req;
    attrs->arena = arena;
    attrs->object_view = req->object;
    attrs->kind_group_len = len_of(req->kind.group);
    attrs->kind_len = len_of(req->kind.kind);
    attrs->group_len = len_of(req->resource.group);
    attrs->resource_len = len_of(req->resource.resource);
}

/* ---- warnings: kube-apiserver's recorder (k8s.io/apiserver pkg/endpoints/filters/warning.go) ---- */

#define WARNINGS_TOTAL_RUNES 4096 /* past this many, every warning is cut */
#define WARNING_ITEM_RUNES 256    /* to this many */

struct adm_warning_recorder_s {
    const char **ordered; /* every text recorded, in order, once each (also those never shown) */
    size_t n, cap;
    uint32_t *slots; /* hash set over ordered: index + 1, 0 when empty */
    size_t mask;
    size_t written; /* runes of the warnings shown */
    bool truncating;
};

/* A hash of the text for the recorder's set, eight bytes at a step (warnings run to hundreds). */
static uint32_t text_hash(const char *s)
{
    size_t len = strlen(s), i = 0;
    uint64_t h = 0x9e3779b97f4a7c15u ^ len;

    for (; i + 8 <= len; i += 8) {
        uint64_t w;

        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3u;
    }
    h ^= h >> 29;
    return (uint32_t)h;
}

/* Records text unless it was recorded before; false when it was (or memory ran out). */
static bool record_once(adm_arena_t *a, struct adm_warning_recorder_s *r, const char *text)
{
    size_t i;

    if (2 * (r->n + 1) > r->mask + 1) {
        size_t ncap = r->mask == 0 ? 32 : 2 * (r->mask + 1);
        uint32_t *slots = adm_arena_calloc(a, ncap, sizeof(*slots));
        const char **ordered =
            adm_arena_realloc(a, (void *)r->ordered, r->cap * sizeof(*ordered), ncap * sizeof(*ordered));

        if (slots == NULL || ordered == NULL) {
            return false;
        }
        r->ordered = ordered;
        r->cap = ncap;
        r->slots = slots;
        r->mask = ncap - 1;
        for (size_t k = 0; k < r->n; k++) {
            for (i = text_hash(r->ordered[k]) & r->mask; r->slots[i] != 0; i = (i + 1) & r->mask) {
            }
            r->slots[i] = (uint32_t)(k + 1);
        }
    }
    for (i = text_hash(text) & r->mask; r->slots[i] != 0; i = (i + 1) & r->mask) {
        if (strcmp(r->ordered[r->slots[i] - 1], text) == 0) {
            return false;
        }
    }
    r->ordered[r->n] = text;
    r->slots[i] = (uint32_t)(++r->n);
    return true;
}

/*
 * Decodes one rune as Go does: a malformed or truncated sequence is U+FFFD consuming one byte.
 * Returns the bytes consumed; *valid tells whether the sequence was well formed.
 */
static size_t next_rune(const unsigned char *s, uint32_t *rune, bool *valid)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t r, min;

    *valid = true;
    if (c < 0x80) {
        *rune = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, r = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, r = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, r = c & 0x07, min = 0x10000;
    } else {
        n = 0, r = 0, min = 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            n = 0;
            break;
        }
        r = (r << 6) | (s[i] & 0x3f);
    }
    if (n == 0 || r < min || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff)) {
        *valid = false;
        *rune = 0xfffd;
        return 1;
    }
    *rune = r;
    return n;
}

/* Runes in text (utf8.RuneCountInString); *ok: valid UTF-8 without control characters. */
#define ONES8 0x0101010101010101u
#define HIGHS8 0x8080808080808080u

/* True when none of the eight bytes of w is below 0x20 or above 0x7e: printable ASCII. */
static bool printable_ascii8(uint64_t w)
{
    /* a byte b has (b - 0x20) borrow into its high bit when b < 0x20, and b + 0x01 reaches 0x80
       when b >= 0x7f; neither can happen to a byte that has its high bit set already unseen */
    return ((w - 0x20 * ONES8) & ~w & HIGHS8) == 0 && ((w + 0x01 * ONES8) & HIGHS8) == 0 && (w & HIGHS8) == 0;
}

static size_t rune_count(const char *text, bool *ok)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t n = 0, len = strlen(text);

    *ok = true;
    /* printable ASCII, eight bytes at a step: one rune a byte, none of them a control */
    while (len >= 8) {
        uint64_t w;

        memcpy(&w, p, 8);
        if (!printable_ascii8(w)) {
            break;
        }
        p += 8;
        n += 8;
        len -= 8;
    }
    while (*p != '\0') {
        uint32_t r;
        bool valid;

        p += next_rune(p, &r, &valid);
        /* unicode.IsControl: C0, DEL and C1 */
        if (!valid || r < 0x20 || (r >= 0x7f && r <= 0x9f)) {
            *ok = false;
        }
        n++;
    }
    return n;
}

/* string([]rune(text)[:max]): the first max runes, malformed bytes turned into U+FFFD as Go does. */
static const char *cut_runes(adm_arena_t *a, const char *text, size_t max)
{
    const unsigned char *p = (const unsigned char *)text;
    char *out = adm_arena_alloc(a, 4 * max + 1), *w = out;

    if (out == NULL) {
        return NULL;
    }
    for (size_t k = 0; k < max && *p != '\0'; k++) {
        size_t used;
        uint32_t r;
        bool valid;

        used = next_rune(p, &r, &valid);
        if (valid) {
            memcpy(w, p, used);
            w += used;
        } else {
            memcpy(w, "\xef\xbf\xbd", 3);
            w += 3;
        }
        p += used;
    }
    *w = '\0';
    return out;
}

static void show(adm_attrs_t *attrs, const char *text)
{
    if (attrs->nwarnings == attrs->warnings_cap) {
        size_t ncap = attrs->warnings_cap == 0 ? 8 : attrs->warnings_cap * 2;
        const char **g = adm_arena_realloc(attrs->arena, (void *)attrs->warnings,
                                           attrs->warnings_cap * sizeof(*g), ncap * sizeof(*g));

        if (g == NULL) {
            return;
        }
        attrs->warnings = g;
        attrs->warnings_cap = ncap;
    }
    attrs->warnings[attrs->nwarnings++] = text;
}

/* A text as shown while truncating: cut to WARNING_ITEM_RUNES; NULL when it cannot be shown. */
static const char *shown_text(adm_arena_t *a, const char *text, bool truncating, size_t *runes)
{
    bool ok;

    *runes = rune_count(text, &ok);
    if (truncating && *runes > WARNING_ITEM_RUNES) {
        text = cut_runes(a, text, WARNING_ITEM_RUNES);
        *runes = WARNING_ITEM_RUNES;
        if (text == NULL) {
            return NULL;
        }
        rune_count(text, &ok); /* the cut may have made malformed bytes U+FFFD */
    }
    return ok ? text : NULL;
}

void adm_attrs_add_warning(adm_attrs_t *attrs, const char *text)
{
    struct adm_warning_recorder_s *r = attrs->recorder;
    const char *shown;
    size_t runes;

    if (text == NULL || text[0] == '\0') {
        return;
    }
    if (r == NULL) {
        r = adm_arena_calloc(attrs->arena, 1, sizeof(*r));
        if (r == NULL) {
            return;
        }
        attrs->recorder = r;
    }
    if (r->truncating && r->written >= WARNINGS_TOTAL_RUNES) {
        return;
    }
    if (!record_once(attrs->arena, r, text)) {
        return;
    }
    shown = shown_text(attrs->arena, text, r->truncating, &runes);
    if (shown == NULL) {
        return;
    }
    if (r->truncating || r->written + runes <= WARNINGS_TOTAL_RUNES) {
        r->written += runes;
        show(attrs, shown);
        return;
    }
    /* Past the total: from now on every warning is cut, those shown so far included. */
    r->truncating = true;
    r->written = 0;
    attrs->nwarnings = 0;
    for (size_t i = 0; i < r->n; i++) {
        shown = shown_text(attrs->arena, r->ordered[i], true, &runes);
        if (shown != NULL) {
            r->written += runes;
            show(attrs, shown);
        }
    }
}

/*
 * object_view laid out again from mdoc's root after a mutable change: only what changed is walked
 * (origin), and the view's lineage, relative to the layout the copy was made from, is carried back
 * to the request's object through that layout's own lineage.
 */
static yyjson_val *view_of_mutable(adm_attrs_t *attrs)
{
    adm_json_lineage_t lin;
    yyjson_alc alc;
    yyjson_val *view;

    adm_json_alc_init(&alc, attrs->arena);
    view = adm_json_view_traced(&alc, yyjson_mut_doc_get_root(attrs->mdoc),
                                attrs->origin.copy != NULL ? &attrs->origin : NULL, &lin);
    if (view == NULL) {
        return NULL;
    }
    if (lin.origin == NULL || lin.origin == attrs->req->object) {
        attrs->lineage = lin;
    } else if (attrs->origin_lineage.origin == NULL) {
        memset(&attrs->lineage, 0, sizeof(attrs->lineage)); /* copied from a layout of unknown descent */
    } else if (adm_json_lineage_compose(&alc, &lin, &attrs->origin_lineage, &attrs->lineage) != 0) {
        return NULL;
    }
    return view;
}

/*
 * object_view with the pending edits applied. The first splice of the request's own object gives
 * a lineage relative to it; a later one carries object_view's through, unless that is unknown.
 */
static yyjson_val *view_of_edits(adm_attrs_t *attrs)
{
    const adm_json_lineage_t *in = attrs->object_view == attrs->req->object ? NULL : &attrs->lineage;
    bool known = in == NULL || attrs->lineage.origin != NULL;
    adm_json_lineage_t out;
    yyjson_val *view;
    yyjson_alc alc;

    adm_json_alc_init(&alc, attrs->arena);
    if (adm_json_splice(&alc, attrs->object_view, known ? in : NULL, attrs->edits, attrs->nedits, &view,
                        &out) != 0) {
        return NULL;
    }
    attrs->nedits = 0;
    attrs->lineage = out;
    if (!known) {
        memset(&attrs->lineage, 0, sizeof(attrs->lineage));
    }
    return view;
}

yyjson_val *adm_attrs_object(adm_attrs_t *attrs)
{
    if (attrs->view_stale) {
        yyjson_val *view = attrs->nedits != 0 ? view_of_edits(attrs) : view_of_mutable(attrs);

        if (view == NULL) {
            return NULL;
        }
        attrs->object_view = view;
        attrs->view_stale = false;
    }
    return attrs->object_view;
}

bool adm_attrs_has_object(const adm_attrs_t *attrs)
{
    if (attrs->view_stale && attrs->nedits == 0) {
        return yyjson_mut_doc_get_root(attrs->mdoc) != NULL;
    }
    return attrs->object_view != NULL;
}

/*
 * The walk down keys in object_view, while edits are pending on it, and whether one of them
 * matters to what the walk finds: an edit on a value of the way matters when it replaces that
 * value, or adds, sets or removes the member the next step names (which may make a step that is
 * missing appear); with inside, an edit on the value found or anything in it matters too. The
 * value found, or NULL when a step is missing; *matters tells whether it may be out of date.
 * A few comparisons per edit and step: a hook records a handful of edits, paths are short.
 */
static yyjson_val *pending_walk(const adm_attrs_t *attrs, const char *const *keys, bool inside, bool *matters)
{
    yyjson_val *v = attrs->object_view;
    size_t n;

    *matters = false;
    for (; v != NULL && *keys != NULL; keys++) {
        for (size_t i = 0; i < attrs->nedits; i++) {
            const adm_edit_t *e = &attrs->edits[i];

            if (e->target == v &&
                (e->op == ADM_EDIT_REPLACE ||
                 (e->op != ADM_EDIT_APPEND && adm_attrs_str_is(e->key, e->key_len, *keys)))) {
                *matters = true;
                return NULL;
            }
        }
        v = adm_json_get(v, *keys);
    }
    /* the value found: replaced, or with inside anything edited in it (its subtree's n values) */
    n = v != NULL && inside && yyjson_is_ctn(v) ? v->uni.ofs / sizeof(*v) : 1;
    for (size_t i = 0; v != NULL && i < attrs->nedits; i++) {
        const adm_edit_t *e = &attrs->edits[i];

        if (e->target >= v && e->target < v + n && (inside || e->op == ADM_EDIT_REPLACE)) {
            *matters = true;
            return NULL;
        }
    }
    return v;
}

yyjson_val *adm_attrs_target_keys(adm_attrs_t *attrs, const char *const *keys)
{
    bool matters = false;
    yyjson_val *v;

    if (attrs->view_stale && attrs->nedits == 0) {
        return adm_json_path_keys(adm_attrs_object(attrs), keys); /* after a mutable change */
    }
    v = pending_walk(attrs, keys, false, &matters);
    return matters ? adm_json_path_keys(adm_attrs_object(attrs), keys) : v;
}

yyjson_val *adm_attrs_get_changed(adm_attrs_t *attrs, const char *const *keys)
{
    yyjson_mut_val *v;
    yyjson_alc alc;

    if (attrs->nedits != 0) {
        /* what no pending edit reaches is read where it is; else the edits are laid out first */
        bool matters;
        yyjson_val *found = pending_walk(attrs, keys, true, &matters);

        return matters ? adm_json_path_keys(adm_attrs_object(attrs), keys) : found;
    }
    /* the view is out of date after a mutable change: find the member, lay out only it */
    v = yyjson_mut_doc_get_root(attrs->mdoc);
    for (; v != NULL && *keys != NULL; keys++) {
        v = adm_mut_get(v, *keys);
    }
    if (v == NULL) {
        return NULL;
    }
    adm_json_alc_init(&alc, attrs->arena);
    return adm_json_view_from(&alc, v, &attrs->origin);
}

yyjson_mut_doc *adm_attrs_values_doc(adm_attrs_t *attrs)
{
    if (attrs->mdoc == NULL) {
        /* The allocator struct is copied into the document, so a stack copy is fine. */
        yyjson_alc alc;

        adm_json_alc_init(&alc, attrs->arena);
        attrs->mdoc = yyjson_mut_doc_new(&alc);
    }
    return attrs->mdoc;
}

int adm_attrs_edit(adm_attrs_t *attrs, const adm_edit_t *e)
{
    if (attrs->view_stale && attrs->nedits == 0) {
        /* after a mutable change the plugin cannot hold a value of the current layout: it reads
           the object first, which lays it out (adm_attrs_object) */
        if (adm_attrs_object(attrs) == NULL) {
            return ADM_ENOMEM;
        }
    }
    if (attrs->nedits == attrs->edits_cap) {
        size_t cap = attrs->edits_cap != 0 ? 2 * attrs->edits_cap : 8;
        adm_edit_t *grown = adm_arena_realloc(attrs->arena, attrs->edits, attrs->edits_cap * sizeof(*grown),
                                              cap * sizeof(*grown));

        if (grown == NULL) {
            return ADM_ENOMEM;
        }
        attrs->edits = grown;
        attrs->edits_cap = cap;
    }
    attrs->edits[attrs->nedits++] = *e;
    attrs->changed = true;
    attrs->view_stale = true;
    attrs->mutable_current = false;
    return ADM_OK;
}

int adm_attrs_edit_key(adm_attrs_t *attrs, adm_edit_op_t op, yyjson_val *target, const char *key,
                       yyjson_mut_val *value)
{
    adm_edit_t e = {op, target, key, key != NULL ? strlen(key) : 0, value};

    if (value == NULL && op != ADM_EDIT_REMOVE) {
        return ADM_ENOMEM; /* the allocation that made it failed */
    }
    return adm_attrs_edit(attrs, &e);
}

yyjson_val *adm_attrs_ensure_keys(adm_attrs_t *attrs, yyjson_type type, const char *const *keys)
{
    yyjson_val *v = adm_attrs_object(attrs);
    const char *const *k = keys;
    yyjson_mut_doc *doc;
    yyjson_mut_val *made;
    size_t n = 0;

    for (; v != NULL && *k != NULL; k++) {
        yyjson_val *next = adm_json_get(v, *k);

        if (!yyjson_is_obj(v) || adm_json_not_ensurable(next, k[1] == NULL ? type : YYJSON_TYPE_OBJ)) {
            return NULL;
        }
        if (next == NULL || yyjson_is_null(next)) {
            break; /* v is the deepest there; the steps from *k on are made, in one value */
        }
        v = next;
    }
    if (v == NULL || *k == NULL) {
        return v;
    }
    while (k[n] != NULL) {
        n++;
    }
    doc = adm_attrs_values_doc(attrs);
    made = doc == NULL ? NULL : type == YYJSON_TYPE_ARR ? yyjson_mut_arr(doc) : yyjson_mut_obj(doc);
    for (size_t i = n; made != NULL && i-- > 1;) {
        yyjson_mut_val *outer = yyjson_mut_obj(doc);

        made = outer != NULL && yyjson_mut_obj_add_val(doc, outer, k[i], made) ? outer : NULL;
    }
    if (adm_attrs_edit_key(attrs, ADM_EDIT_SET, v, *k, made) != ADM_OK) {
        return NULL;
    }
    return adm_json_path_keys(adm_attrs_object(attrs), keys);
}

yyjson_mut_val *adm_attrs_mutable_object(adm_attrs_t *attrs)
{
    if (!attrs->mutable_current) {
        yyjson_val *from = adm_attrs_object(attrs); /* the edits so far, laid out */
        yyjson_mut_val *root;

        if (from == NULL || adm_attrs_values_doc(attrs) == NULL) {
            return NULL;
        }
        root = adm_json_mut_share_kept(attrs->mdoc, from, &attrs->origin);
        if (root == NULL) {
            return NULL;
        }
        /* what the copy's views are composed with to reach the request's object */
        attrs->origin_lineage = attrs->lineage;
        yyjson_mut_doc_set_root(attrs->mdoc, root);
        attrs->mutable_current = true;
    }
    attrs->changed = true;
    attrs->view_stale = true;
    return yyjson_mut_doc_get_root(attrs->mdoc);
}

void adm_attrs_set_object(adm_attrs_t *attrs, yyjson_mut_doc *doc)
{
    attrs->mdoc = doc;
    attrs->nedits = 0;
    memset(&attrs->origin, 0, sizeof(attrs->origin));
    memset(&attrs->origin_lineage, 0, sizeof(attrs->origin_lineage));
    attrs->mutable_current = true;
    attrs->changed = true;
    attrs->view_stale = true;
}

/* Decodes one UTF-8 sequence at s; returns its length, or 0 when it is not valid UTF-8. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
        return *cp >= 0x80 ? 2 : 0;
    }
    if ((s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
        return *cp >= 0x800 && (*cp < 0xd800 || *cp > 0xdfff) ? 3 : 0;
    }
    if ((s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
              ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
        return *cp >= 0x10000 && *cp <= 0x10ffff ? 4 : 0;
    }
    return 0;
}

/*
 * Go's strconv.Quote keeps printable runes and escapes the rest. Which non-ASCII runes Go deems
 * printable needs Unicode tables; admitd treats all of them as printable except the C1 controls and
 * the few format characters names never carry, which is exact for every valid Kubernetes name.
 */
/* Go's short escapes, indexed by the byte they stand for; 0 when there is none. */
static char short_escape(unsigned c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\a': return 'a';
    case '\b': return 'b';
    case '\f': return 'f';
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    case '\v': return 'v';
    default: return 0;
    }
}

const char *adm_go_quote(adm_arena_t *a, const char *s)
{
    /* The longest escape, \U0010ffff, is 10 bytes for 4 input bytes; \xNN is 4 for 1. */
    size_t cap = strlen(s) * 4 + 3;
    char *out = adm_arena_alloc(a, cap);
    char *w = out;
    char *end = out + cap;
    const unsigned char *p = (const unsigned char *)s;

    if (out == NULL) {
        return NULL;
    }
    *w++ = '"';
    while (*p != '\0') {
        uint32_t cp;
        size_t n = utf8_decode(p, &cp);

        if (n == 0) {
            w += snprintf(w, (size_t)(end - w), "\\x%02x", *p);
            p++;
        } else if (n > 1) {
            if (cp < 0xa0 || cp == 0xad || (cp >= 0x2028 && cp <= 0x2029) || cp == 0xfeff) {
                w += snprintf(w, (size_t)(end - w), cp > 0xffff ? "\\U%08x" : "\\u%04x", (unsigned)cp);
            } else {
                memcpy(w, p, n);
                w += n;
            }
            p += n;
        } else if (short_escape(cp) != 0) {
            *w++ = '\\';
            *w++ = short_escape(cp);
            p++;
        } else if (cp < 0x20 || cp == 0x7f) {
            w += snprintf(w, (size_t)(end - w), "\\x%02x", (unsigned)cp);
            p++;
        } else {
            *w++ = (char)cp;
            p++;
        }
    }
    *w++ = '"';
    *w = '\0';
    return out;
}

const char *adm_group_resource(adm_arena_t *a, const char *group, const char *resource)
{
    if (group[0] == '\0') {
        return resource;
    }
    return adm_arena_printf(a, "%s.%s", resource, group);
}

/* Parses details JSON written by this file into the arena. */
static yyjson_val *parse_details(adm_arena_t *a, const char *json)
{
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(a, json, strlen(json), &err);

    return doc != NULL ? yyjson_doc_get_root(doc) : NULL;
}

/* A JSON string literal of s (quotes included), NUL-terminated in the arena; NULL when exhausted. */
static const char *json_quote(adm_arena_t *a, const char *s)
{
    size_t n = strlen(s);
    size_t bound = ADM_JSONW_STRING_MAX(n) + 1;
    char *out = adm_arena_alloc(a, bound);
    char *end;

    if (out == NULL) {
        return NULL;
    }
    end = adm_jsonw_put_string(out, s, n);
    *end = '\0';
    /* The text is the arena's last allocation: give back what the bound did not need. */
    return adm_arena_realloc(a, out, bound, (size_t)(end - out) + 1);
}

static int forbidden(adm_status_t *st, adm_arena_t *a, const char *group, const char *resource,
                     const char *name, const char *msg)
{
    const char *gr = adm_group_resource(a, group, resource);
    const char *details;
    const char *qname;

    if (gr == NULL || msg == NULL) {
        return ADM_ENOMEM;
    }
    if (resource[0] == '\0' && group[0] == '\0') {
        st->message = adm_arena_printf(a, "forbidden: %s", msg);
    } else if (name[0] == '\0') {
        st->message = adm_arena_printf(a, "%s is forbidden: %s", gr, msg);
    } else {
        qname = adm_go_quote(a, name);
        st->message = qname != NULL ? adm_arena_printf(a, "%s %s is forbidden: %s", gr, qname, msg) : NULL;
    }
    if (st->message == NULL) {
        return ADM_ENOMEM;
    }
    /* metav1.StatusDetails member order, empty members omitted. */
    {
        const char *jn = name[0] != '\0' ? json_quote(a, name) : NULL;
        const char *jg = group[0] != '\0' ? json_quote(a, group) : NULL;
        const char *jk = resource[0] != '\0' ? json_quote(a, resource) : NULL;

        details = adm_arena_printf(a, "{%s%s%s%s%s%s%s%s}", jn != NULL ? "\"name\":" : "",
                                   jn != NULL ? jn : "", jn != NULL && (jg != NULL || jk != NULL) ? "," : "",
                                   jg != NULL ? "\"group\":" : "", jg != NULL ? jg : "",
                                   jg != NULL && jk != NULL ? "," : "", jk != NULL ? "\"kind\":" : "",
                                   jk != NULL ? jk : "");
    }
    st->code = 403;
    st->reason = "Forbidden";
    st->details = details != NULL ? parse_details(a, details) : NULL;
    return st->details != NULL ? ADM_DECLINED : ADM_ENOMEM;
}

/* The name admission.NewForbidden prints (extractResourceName). */
static const char *attrs_name(adm_attrs_t *attrs)
{
    yyjson_val *obj;
    yyjson_val *meta;
    const char *s;

    if (attrs->req->name[0] != '\0') {
        return attrs->req->name;
    }
    obj = adm_attrs_object(attrs);
    if (obj == NULL) {
        return "Unknown";
    }
    meta = adm_json_get(obj, "metadata");
    if (!yyjson_is_obj(meta)) {
        return "Unknown/errorGettingName";
    }
    s = adm_json_str(meta, "name");
    if (s[0] != '\0') {
        return s;
    }
    s = adm_json_str(meta, "generateName");
    return s[0] != '\0' ? s : "Unknown";
}

int adm_status_forbidden(adm_status_t *st, adm_attrs_t *attrs, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = adm_arena_vprintf(attrs->arena, fmt, ap);
    va_end(ap);
    return forbidden(st, attrs->arena, attrs->req->resource.group, attrs->req->resource.resource,
                     attrs_name(attrs), msg);
}

int adm_status_forbidden_named(adm_status_t *st, adm_arena_t *a, const char *group, const char *resource,
                               const char *name, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = adm_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return forbidden(st, a, group, resource, name, msg);
}

__attribute__((format(printf, 6, 0))) static int simple(adm_status_t *st, int32_t code, const char *reason,
                                                        const char *prefix, adm_arena_t *a, const char *fmt,
                                                        va_list ap)
{
    char *msg = adm_arena_vprintf(a, fmt, ap);

    if (msg == NULL) {
        return ADM_ENOMEM;
    }
    st->code = code;
    st->reason = reason;
    st->details = NULL;
    st->message = prefix != NULL ? adm_arena_printf(a, "%s%s", prefix, msg) : msg;
    return st->message != NULL ? ADM_DECLINED : ADM_ENOMEM;
}

int adm_status_bad_request(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = simple(st, 400, "BadRequest", NULL, a, fmt, ap);
    va_end(ap);
    return rc;
}

int adm_status_internal(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    const char *quoted;
    const char *details;

    va_start(ap, fmt);
    msg = adm_arena_vprintf(a, fmt, ap);
    va_end(ap);
    quoted = msg != NULL ? json_quote(a, msg) : NULL;
    details = quoted != NULL ? adm_arena_printf(a, "{\"causes\":[{\"message\":%s}]}", quoted) : NULL;
    if (details == NULL) {
        return ADM_ENOMEM;
    }
    st->code = 500;
    st->reason = "InternalError";
    st->message = adm_arena_printf(a, "Internal error occurred: %s", msg);
    st->details = parse_details(a, details);
    return st->message != NULL && st->details != NULL ? ADM_DECLINED : ADM_ENOMEM;
}

int adm_status_plain(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = simple(st, 500, NULL, NULL, a, fmt, ap);
    va_end(ap);
    return rc;
}

int adm_status_too_many_requests(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = simple(st, 429, "TooManyRequests", "Too many requests: ", a, fmt, ap);
    va_end(ap);
    return rc;
}

void adm_aggregate_init(adm_aggregate_t *agg, adm_arena_t *a)
{
    memset(agg, 0, sizeof(*agg));
    agg->arena = a;
}

void adm_aggregate_add(adm_aggregate_t *agg, const char *msg)
{
    if (msg == NULL) {
        agg->failed = true;
        return;
    }
    for (size_t i = 0; i < agg->n; i++) {
        if (strcmp(agg->msgs[i], msg) == 0) {
            return;
        }
    }
    if (agg->n == agg->cap) {
        size_t cap = agg->cap == 0 ? 4 : agg->cap * 2;
        const char **g = adm_arena_realloc(agg->arena, agg->msgs, agg->cap * sizeof(*g), cap * sizeof(*g));

        if (g == NULL) {
            agg->failed = true;
            return;
        }
        agg->msgs = g;
        agg->cap = cap;
    }
    agg->msgs[agg->n++] = msg;
}

const char *adm_aggregate_text(const adm_aggregate_t *agg)
{
    size_t len = 3;
    char *out, *w;

    if (agg->failed) {
        return NULL;
    }
    if (agg->n <= 1) {
        return agg->n == 0 ? "" : agg->msgs[0];
    }
    for (size_t i = 0; i < agg->n; i++) {
        len += strlen(agg->msgs[i]) + 2;
    }
    out = adm_arena_alloc(agg->arena, len);
    if (out == NULL) {
        return NULL;
    }
    w = out;
    *w++ = '[';
    for (size_t i = 0; i < agg->n; i++) {
        size_t n = strlen(agg->msgs[i]);

        if (i > 0) {
            memcpy(w, ", ", 2);
            w += 2;
        }
        memcpy(w, agg->msgs[i], n);
        w += n;
    }
    *w++ = ']';
    *w = '\0';
    return out;
}

int adm_status_nomem(adm_status_t *st)
{
    st->code = 500;
    st->reason = "InternalError";
    st->message = "Internal error occurred: admitd ran out of memory for this request";
    st->details = NULL;
    return ADM_DECLINED;
}

yyjson_mut_val *adm_mut_ensure(yyjson_mut_doc *doc, yyjson_mut_val *obj, const char *key, yyjson_type type)
{
    yyjson_mut_val *v;

    if (!yyjson_mut_is_obj(obj)) {
        return NULL;
    }
    v = yyjson_mut_obj_get(obj, key);
    if (v != NULL && yyjson_mut_get_type(v) == type) {
        return v;
    }
    if (v != NULL && !yyjson_mut_is_null(v)) {
        return NULL;
    }
    v = type == YYJSON_TYPE_ARR ? yyjson_mut_arr(doc) : yyjson_mut_obj(doc);
    if (v == NULL) {
        return NULL;
    }
    /*
     * Replace a null member in place so the key keeps its position. yyjson copies the new value
     * into the member's node, so the node in the tree, not v, is what later additions must reach.
     */
    if (yyjson_mut_obj_get(obj, key) != NULL) {
        if (!yyjson_mut_obj_replace(obj, yyjson_mut_strcpy(doc, key), v)) {
            return NULL;
        }
        return yyjson_mut_obj_get(obj, key);
    }
    return yyjson_mut_obj_add(obj, yyjson_mut_strcpy(doc, key), v) ? v : NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Edits on a flat layout (the immutable array yyjson parses into, and adm_json_view makes): a
 * plugin records what it changes as edits on the values it read, and adm_json_splice lays out the
 * result in one pass, copying every subtree no edit reaches in one piece. This is how mutating
 * plugins change the object without a mutable copy of all of it; the lineage the splice keeps is
 * what lets the JSON Patch diff skip what no edit touched.
 */
#ifndef ADM_JSON_EDIT_H
#define ADM_JSON_EDIT_H

#include "adm/base/json.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

/*
 * What an edit does, each the counterpart of what plugins did with yyjson's mutable API, so that
 * the layout a splice makes is value for value the view (adm_json_view) of a mutable copy
 * (adm_json_mut_share) changed that way: the same tags, lengths, container sizes and payloads,
 * strings shared the same way, but for a string's NOESC mark (YYJSON_SUBTYPE_NOESC), which a
 * mutable copy drops and a splice keeps on the values it copies; the text written is the same:
 *  ADM_EDIT_ADD      target an object: every member named key removed, then key: value appended
 *                    as its last member (yyjson_mut_obj_remove_key, then yyjson_mut_obj_add);
 *  ADM_EDIT_SET      target an object: the first member named key gets value in place, or
 *                    key: value is appended when there is none (yyjson_mut_obj_replace, else
 *                    yyjson_mut_obj_add; adm_mut_ensure's replacement of a null member);
 *  ADM_EDIT_APPEND   target an array: value appended (yyjson_mut_arr_append);
 *  ADM_EDIT_REPLACE  target any value but the layout's root and an object's keys: replaced in
 *                    place by value (a member's value or an array element; yyjson_mut_arr_replace,
 *                    or what yyjson_mut_obj_replace does to a member's value);
 *  ADM_EDIT_REMOVE   target an object: every member named key removed (yyjson_mut_obj_remove_key).
 */
typedef enum adm_edit_op_e {
    ADM_EDIT_ADD,
    ADM_EDIT_SET,
    ADM_EDIT_APPEND,
    ADM_EDIT_REPLACE,
    ADM_EDIT_REMOVE,
} adm_edit_op_t;

typedef struct adm_edit_s {
    adm_edit_op_t op;
    yyjson_val *target; /* a value of the layout being spliced (a pointer into root's flat array) */
    const char *key;    /* ADD, SET, REMOVE: the member's key (key_len bytes; need not end in NUL,
                           but key[key_len] is read, as adm_json_view reads a string's end; a
                           new member's key is shared when key[key_len] is NUL, else copied) */
    size_t key_len;
    yyjson_mut_val *value; /* ADD, SET, APPEND, REPLACE: the new value, of any mutable document;
                              laid out as adm_json_view lays it out (strings shared, copied only
                              when not NUL-terminated where their length ends) */
} adm_edit_t;

/**
 * The layout whose root is root with edits[0..n) applied in order, laid out anew from alc:
 * *out_root receives its root, *out its lineage relative to in->origin (in: root's own lineage,
 * NULL or with no origin when root is the origin itself; then the runs are relative to root).
 * Values outside every edited subtree are copied in runs; only the containers on the way from the
 * root to an edit's target are walked member by member.
 *
 * Edits of one batch apply in order, as the same calls on a mutable copy would: an edit may
 * target a value that an earlier edit of the batch removed or replaced (it is then
 * ADM_EINVAL: the target is gone), and a value the batch adds is reached by changing the mutable
 * value itself before the splice, not by an edit. Returns 0; ADM_EINVAL when a target is not a
 * value of root's layout, is of the wrong type for its op, is gone, or is the root or a key for
 * REPLACE, or an edit lacks its key or value; ADM_ENOMEM when alc fails (then and on ADM_EINVAL
 * *out_root is NULL and *out zeroed). With no edits, the layout is copied as it is, one run.
 * Strings, the edits' values' included, are shared with their documents, which must outlive the
 * result. Nothing recurses; memory: the output (doubling), the lineage's runs, and a few arrays
 * growing with the edits and the containers on their way, none per value.
 */
int adm_json_splice(const yyjson_alc *alc, yyjson_val *root, const adm_json_lineage_t *in,
                    const adm_edit_t *edits, size_t n, yyjson_val **out_root, adm_json_lineage_t *out);

/**
 * The lineage relative to inner->origin of a layout whose lineage outer is relative to a layout
 * that inner describes (outer->origin is that layout's root): the runs of outer, cut to the parts
 * that fall inside inner's runs and mapped through them. out's runs come from alc. Returns 0 or
 * ADM_ENOMEM. When inner has no origin, out is outer.
 */
int adm_json_lineage_compose(const yyjson_alc *alc, const adm_json_lineage_t *outer,
                             const adm_json_lineage_t *inner, adm_json_lineage_t *out);

#endif

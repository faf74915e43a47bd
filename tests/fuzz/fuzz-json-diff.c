/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the flat JSON Patch diff and the lineage of a view: the input's first two
 * bytes give the length of a JSON document that follows (read as requests are, adm_json_read),
 * and the bytes after it choose changes to the document's copy (adm_json_mut_share_kept, as the
 * chain makes it): walk down, remove, insert, replace, rename a key (maybe to one the object
 * holds), change a scalar in place, move a subtree. Then the copy's view
 * (adm_json_view_traced) must have a true lineage (every run a byte copy of the document), write
 * to the copy's bytes (adm_jsonw_value), and diff against the document to the mutable diff's
 * patch byte for byte, with its lineage and without.
 */
#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {"a", "b", "name", "a/b", "x~y", "", "0", "metadata"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* The changes' byte stream. */
typedef struct stream_s {
    const uint8_t *p, *end;
} stream_t;

static unsigned next_byte(stream_t *s)
{
    return s->p < s->end ? *s->p++ : 0;
}

static yyjson_mut_val *new_value(yyjson_mut_doc *d, unsigned b)
{
    switch (b % 9) {
    case 0: return yyjson_mut_null(d);
    case 1: return yyjson_mut_bool(d, b & 16);
    case 2: return yyjson_mut_sint(d, (int64_t)b - 100);
    case 3: return yyjson_mut_uint(d, b);
    case 4: return yyjson_mut_real(d, (double)b / 4.0);
    case 5: return yyjson_mut_strcpy(d, keys[b % NKEYS]);
    case 6: return yyjson_mut_strn(d, "web-longer", 3); /* not NUL-terminated at its length */
    case 7: return yyjson_mut_arr(d);
    default: {
        yyjson_mut_val *o = yyjson_mut_obj(d);

        yyjson_mut_obj_add(o, yyjson_mut_strcpy(d, keys[b % NKEYS]), yyjson_mut_uint(d, b));
        return o;
    }
    }
}

/* Key i of an object (i < its size). */
static yyjson_mut_val *key_at(yyjson_mut_val *obj, size_t i)
{
    yyjson_mut_obj_iter it;
    yyjson_mut_val *k;

    yyjson_mut_obj_iter_init(obj, &it);
    k = yyjson_mut_obj_iter_next(&it);
    while (i-- > 0) {
        k = yyjson_mut_obj_iter_next(&it);
    }
    return k;
}

/* Removes member or element i of cur; returns its value. */
static yyjson_mut_val *remove_at(yyjson_mut_val *cur, size_t i)
{
    yyjson_mut_obj_iter it;

    if (yyjson_mut_is_arr(cur)) {
        return yyjson_mut_arr_remove(cur, i);
    }
    yyjson_mut_obj_iter_init(cur, &it);
    yyjson_mut_obj_iter_next(&it);
    while (i-- > 0) {
        yyjson_mut_obj_iter_next(&it);
    }
    return yyjson_mut_obj_iter_remove(&it);
}

static void insert_at(yyjson_mut_doc *d, yyjson_mut_val *cur, size_t i, yyjson_mut_val *v, unsigned b)
{
    if (yyjson_mut_is_arr(cur)) {
        yyjson_mut_arr_insert(cur, v, i);
    } else {
        yyjson_mut_obj_insert(cur, yyjson_mut_strcpy(d, keys[b % NKEYS]), v, i);
    }
}

/* The changes the stream chooses, walking from the root without recursion. */
static void change(yyjson_mut_doc *d, stream_t *s)
{
    yyjson_mut_val *root = yyjson_mut_doc_get_root(d), *cur = root, *moving = NULL;

    while (s->p < s->end) {
        unsigned op = next_byte(s), b = next_byte(s);
        size_t len = yyjson_mut_is_ctn(cur) ? yyjson_mut_get_len(cur) : 0;
        size_t i = len > 0 ? b % len : 0;

        if (!yyjson_mut_is_ctn(cur)) {
            yyjson_mut_doc_set_root(d, new_value(d, b));
            root = cur = yyjson_mut_doc_get_root(d);
            continue;
        }
        switch (op % 8) {
        case 0: /* down */
            if (len > 0) {
                yyjson_mut_val *child =
                    yyjson_mut_is_arr(cur) ? yyjson_mut_arr_get(cur, i) : key_at(cur, i)->next;

                if (yyjson_mut_is_ctn(child)) {
                    cur = child;
                }
            }
            break;
        case 1:
            if (len > 0) {
                yyjson_mut_val *gone = remove_at(cur, i);

                if (moving == NULL && yyjson_mut_is_ctn(gone)) {
                    moving = gone;
                }
            }
            break;
        case 2: insert_at(d, cur, len > 0 ? b % (len + 1) : 0, new_value(d, b), b >> 3); break;
        case 3:
            if (len > 0) {
                if (yyjson_mut_is_arr(cur)) {
                    yyjson_mut_arr_replace(cur, i, new_value(d, b >> 2));
                } else {
                    yyjson_mut_obj_replace(cur, key_at(cur, i), new_value(d, b >> 2));
                }
            }
            break;
        case 4: /* a scalar changed in place */
            if (len > 0) {
                yyjson_mut_val *child =
                    yyjson_mut_is_arr(cur) ? yyjson_mut_arr_get(cur, i) : key_at(cur, i)->next;

                if (!yyjson_mut_is_ctn(child)) {
                    if (b & 1) {
                        yyjson_mut_set_uint(child, b >> 1);
                    } else {
                        yyjson_mut_set_str(child, keys[(b >> 1) % NKEYS]);
                    }
                }
            }
            break;
        case 5: /* a key renamed, maybe to one the object holds */
            if (len > 0 && yyjson_mut_is_obj(cur)) {
                yyjson_mut_set_str(key_at(cur, i), keys[b % NKEYS]);
            }
            break;
        case 6:
            if (moving != NULL) {
                insert_at(d, cur, len > 0 ? b % (len + 1) : 0, moving, b >> 3);
                moving = NULL;
            }
            break;
        default: cur = root; break;
        }
    }
}

static void fail(const char *what, const char *a, size_t alen, const char *b, size_t blen)
{
    fprintf(stderr, "%s:\n  %.*s\n  %.*s\n", what, (int)alen, a, (int)blen, b);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a;
    yyjson_read_err err;
    yyjson_doc *doc;
    yyjson_mut_doc *m;
    yyjson_mut_val *copy;
    adm_json_origin_t o;
    adm_json_lineage_t lin;
    yyjson_alc alc;
    yyjson_val *from, *view;
    stream_t s;
    size_t json_len, nview;
    const char *text[3];
    size_t len[3], nops[3];
    int rc[3];
    adm_jsonw_t wm, wf;

    if (size < 2) {
        return 0;
    }
    json_len = ((size_t)data[0] | (size_t)data[1] << 8) % (size - 1);
    a = adm_arena_create(4096);
    if (a == NULL) {
        abort();
    }
    adm_json_alc_init(&alc, a);
    doc = adm_json_read(a, (const char *)data + 2, json_len, &err);
    if (doc == NULL) {
        adm_arena_destroy(a);
        return 0;
    }
    from = yyjson_doc_get_root(doc);
    m = yyjson_mut_doc_new(&alc);
    copy = m != NULL ? adm_json_mut_share_kept(m, from, &o) : NULL;
    if (copy == NULL) {
        abort();
    }
    yyjson_mut_doc_set_root(m, copy);
    s.p = data + 2 + json_len;
    s.end = data + size;
    change(m, &s);

    view = adm_json_view_traced(&alc, yyjson_mut_doc_get_root(m), &o, &lin);
    if (view == NULL) {
        abort();
    }
    nview = yyjson_is_ctn(view) ? view->uni.ofs / sizeof(*view) : 1;
    if (lin.nruns > 0 && lin.origin != from) {
        abort();
    }
    for (size_t r = 0; r < lin.nruns; r++) {
        const adm_json_run_t *run = &lin.runs[r];

        if (run->n == 0 || (size_t)run->to + run->n > nview ||
            (r > 0 && lin.runs[r - 1].to + lin.runs[r - 1].n > run->to) ||
            memcmp(view + run->to, from + run->from, run->n * sizeof(*view)) != 0 ||
            !adm_json_lineage_same(&lin, view, view + run->to, from + run->from)) {
            fprintf(stderr, "run %zu (%u <- %u, %u) is not a copy\n", r, run->to, run->from, run->n);
            abort();
        }
    }

    adm_jsonw_init(&wm, a);
    adm_jsonw_init(&wf, a);
    adm_jsonw_mut_value(&wm, yyjson_mut_doc_get_root(m));
    adm_jsonw_value(&wf, view);
    if (wm.failed != wf.failed ||
        (!wm.failed && (wm.len != wf.len || memcmp(wm.data, wf.data, wm.len) != 0))) {
        fail("adm_jsonw_mut_value / adm_jsonw_value", wm.data, wm.failed ? 0 : wm.len, wf.data,
             wf.failed ? 0 : wf.len);
    }

    rc[0] = adm_jsonpatch_diff(from, yyjson_mut_doc_get_root(m), a, &text[0], &len[0], &nops[0]);
    rc[1] = adm_jsonpatch_diff_flat(from, view, &lin, a, &text[1], &len[1], &nops[1]);
    rc[2] = adm_jsonpatch_diff_flat(from, view, NULL, a, &text[2], &len[2], &nops[2]);
    for (int k = 1; k < 3; k++) {
        if (rc[k] != rc[0]) {
            fprintf(stderr, "diff %d returned %d, the mutable diff %d\n", k, rc[k], rc[0]);
            abort();
        }
        if (rc[0] == 0 && (nops[k] != nops[0] || len[k] != len[0] || memcmp(text[k], text[0], len[0]) != 0)) {
            fail(k == 1 ? "mutable diff / flat diff with the lineage" : "mutable diff / flat diff without",
                 text[0], len[0], text[k], len[k]);
        }
    }
    adm_arena_destroy(a);
    return 0;
}

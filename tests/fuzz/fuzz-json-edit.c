/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for adm_json_splice and adm_json_lineage_compose. The input is a JSON document,
 * a NUL, and a byte stream read five bytes an edit: the op, the target (an index into the
 * document's flat array, or just past it), the key (one of the target's own, or a few fixed
 * ones) and the new value (from a small table, one a string not NUL-terminated). Each edit is
 * tried on the batch so far: the splice must refuse it (ADM_EINVAL) exactly when a model of the
 * mutable copy says it is not valid (its target removed, overwritten or under what was, a key,
 * the root replaced, the wrong type); accepted edits join the batch and the model. The whole batch
 * must then give the flat array and the text the same calls on adm_json_mut_share's copy give
 * through adm_json_view, with a lineage whose runs are byte copies of the document; and one more
 * edit spliced on the result, its lineage composed, must too.
 */
#include "../support/json_edit_check.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EDITS 24

static const char *const fixed_keys[] = {"a", "b", "", "k", "metadata"};

static const char *const value_texts[] = {
    "null", "1", "-2.5", "\"s\"", "{}", "[]", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}"};

#define NVALUES (sizeof(value_texts) / sizeof(value_texts[0]) + 1)

static void die(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s\n", what, why);
    abort();
}

/* What the model knows of each value of the document: reachable in the copy, and as a key. */
enum { GONE = 0, VALUE = 1, KEY = 2 };

/* Marks the values of root's layout reachable from m (the copy, value i for root's value i). */
static void reach(yyjson_mut_val *m, size_t n, unsigned char *mark)
{
    size_t cap = 64, top = 0;
    yyjson_mut_val **worklist = malloc(cap * sizeof(*worklist));

    if (worklist == NULL) {
        abort();
    }
    memset(mark, GONE, n);
    worklist[top++] = m;
    while (top > 0) {
        yyjson_mut_val *v = worklist[--top];
        size_t len, i;
        yyjson_mut_val *c;
        bool obj;

        if (v >= m && v < m + n) {
            mark[v - m] = VALUE;
        }
        len = yyjson_mut_is_ctn(v) ? yyjson_mut_get_len(v) : 0;
        if (len == 0) {
            continue;
        }
        obj = yyjson_mut_is_obj(v);
        c = ((yyjson_mut_val *)v->uni.ptr)->next; /* the first child (an object's first key) */
        if (obj) {
            c = ((yyjson_mut_val *)v->uni.ptr)->next->next;
        }
        for (i = 0; i < len; i++) {
            if (obj) {
                if (c >= m && c < m + n) {
                    mark[c - m] = KEY;
                }
                c = c->next;
            }
            if (top == cap) {
                cap *= 2;
                worklist = realloc(worklist, cap * sizeof(*worklist));
                if (worklist == NULL) {
                    abort();
                }
            }
            worklist[top++] = c;
            c = c->next;
        }
    }
    free(worklist);
}

/* The value of m's object mt that yyjson_mut_obj_replace would overwrite for key, or NULL. */
static yyjson_mut_val *first_named(yyjson_mut_val *mt, const char *key, size_t key_len)
{
    yyjson_mut_obj_iter it;
    yyjson_mut_val *k;

    yyjson_mut_obj_iter_init(mt, &it);
    for (k = yyjson_mut_obj_iter_next(&it); k != NULL; k = yyjson_mut_obj_iter_next(&it)) {
        if (yyjson_mut_get_len(k) == key_len && memcmp(yyjson_mut_get_str(k), key, key_len) == 0) {
            return k->next;
        }
    }
    return NULL;
}

/* The new values: the table's, and a string that does not end where its length does. */
static yyjson_mut_val *make_value(yyjson_mut_doc *doc, adm_arena_t *a, unsigned b)
{
    size_t i = b % NVALUES;
    yyjson_read_err err;
    yyjson_doc *d;

    if (i == NVALUES - 1) {
        return yyjson_mut_strn(doc, "abcdef", 3);
    }
    d = adm_json_read(a, value_texts[i], strlen(value_texts[i]), &err);
    return d != NULL ? yyjson_val_mut_copy(doc, yyjson_doc_get_root(d)) : NULL;
}

/* One edit from five bytes on the layout whose root is root (n values); the key may be one of t's. */
static adm_edit_t make_edit(yyjson_mut_doc *doc, adm_arena_t *a, yyjson_val *root, size_t n, const uint8_t *b)
{
    adm_edit_t e;
    size_t t = ((size_t)b[1] | (size_t)b[2] << 8) % (n + 1); /* n: just past the layout */
    yyjson_val *tv = root + t;

    e.op = (adm_edit_op_t)(b[0] % 5);
    e.target = tv;
    if (t < n && yyjson_is_obj(tv) && yyjson_get_len(tv) > 0 && (b[3] & 0x80) == 0) {
        /* one of its keys: walk to the (b[3] % len)th */
        yyjson_val *k = tv + 1;

        for (size_t i = b[3] % yyjson_get_len(tv); i > 0; i--) {
            k = k + 1 + edit_check_size(k + 1);
        }
        e.key = yyjson_get_str(k);
        e.key_len = yyjson_get_len(k);
    } else {
        e.key = fixed_keys[b[3] % (sizeof(fixed_keys) / sizeof(fixed_keys[0]))];
        e.key_len = strlen(e.key);
    }
    e.value = e.op == ADM_EDIT_REMOVE ? NULL : make_value(doc, a, b[4]);
    return e;
}

/* Whether the model deems e valid on m (marks: what is reachable now; over: values overwritten). */
static bool model_valid(const adm_edit_t *e, yyjson_val *root, size_t n, const unsigned char *mark,
                        const unsigned char *over)
{
    size_t t = (size_t)(e->target - root);
    yyjson_val *tv = e->target;

    if (t >= n || mark[t] != VALUE || over[t]) {
        return false;
    }
    switch (e->op) {
    case ADM_EDIT_ADD:
    case ADM_EDIT_SET:
    case ADM_EDIT_REMOVE: return yyjson_is_obj(tv);
    case ADM_EDIT_APPEND: return yyjson_is_arr(tv);
    case ADM_EDIT_REPLACE: return t != 0;
    }
    return false;
}

/* The full check of a splice of root (lineage in) by e[0..k) against the mutable API. */
static yyjson_val *check(const yyjson_alc *alc, yyjson_val *root, const adm_json_lineage_t *in,
                         yyjson_val *origin, const adm_edit_t *e, size_t k, adm_json_lineage_t *lin)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(alc);
    yyjson_mut_val *m = doc != NULL ? adm_json_mut_share(doc, root) : NULL;
    yyjson_val *out, *view;
    const char *why;
    int rc;

    if (m == NULL) {
        abort();
    }
    rc = adm_json_splice(alc, root, in, e, k, &out, lin);
    if (rc != 0) {
        die("splice of a valid batch", rc == ADM_EINVAL ? "EINVAL" : "failed");
    }
    if (!edit_check_apply(doc, m, root, e, k)) {
        abort();
    }
    view = adm_json_view(alc, m);
    if (view == NULL) {
        abort();
    }
    why = edit_check_same(out, view);
    if (why == NULL) {
        why = edit_check_text(out, m);
    }
    if (why != NULL) {
        die("splice and mutable API differ", why);
    }
    why = edit_check_lineage(lin, out, origin);
    if (why != NULL) {
        die("lineage", why);
    }
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *sep = memchr(data, 0, size), *b, *end = data + size;
    adm_arena_t *a = adm_arena_create(4096);
    yyjson_alc alc;
    yyjson_read_err err;
    yyjson_doc *d;
    yyjson_mut_doc *values, *model;
    yyjson_mut_val *m;
    yyjson_val *root, *out, *probe;
    adm_edit_t batch[MAX_EDITS + 1];
    adm_json_lineage_t lin, lin2;
    unsigned char *mark, *over;
    size_t n, k = 0;

    if (a == NULL) {
        abort();
    }
    adm_json_alc_init(&alc, a);
    d = adm_json_read(a, (const char *)data, sep != NULL ? (size_t)(sep - data) : size, &err);
    if (d == NULL) {
        adm_arena_destroy(a);
        return 0;
    }
    root = yyjson_doc_get_root(d);
    n = edit_check_size(root);
    values = yyjson_mut_doc_new(&alc);
    model = yyjson_mut_doc_new(&alc);
    mark = adm_arena_alloc(a, n);
    over = adm_arena_calloc(a, n, 1);
    m = model != NULL ? adm_json_mut_share(model, root) : NULL;
    if (values == NULL || m == NULL || mark == NULL || over == NULL) {
        abort();
    }
    b = sep != NULL ? sep + 1 : end;
    for (; end - b >= 5 && k < MAX_EDITS; b += 5) {
        adm_edit_t e = make_edit(values, a, root, n, b);
        bool valid;
        int rc;

        if (e.op != ADM_EDIT_REMOVE && e.value == NULL) {
            abort();
        }
        reach(m, n, mark);
        valid = model_valid(&e, root, n, mark, over);
        batch[k] = e;
        rc = adm_json_splice(&alc, root, NULL, batch, k + 1, &probe, &lin);
        if (rc != (valid ? 0 : ADM_EINVAL)) {
            fprintf(stderr, "edit %zu (op %d at %td): %d, the model says %s\n", k, (int)e.op, e.target - root,
                    rc, valid ? "valid" : "invalid");
            abort();
        }
        if (!valid) {
            continue;
        }
        /* the model takes the edit: what it overwrites in place is gone for later edits */
        if (e.op == ADM_EDIT_REPLACE) {
            over[e.target - root] = 1;
        } else if (e.op == ADM_EDIT_SET) {
            yyjson_mut_val *hit = first_named(m + (e.target - root), e.key, e.key_len);

            if (hit >= m && hit < m + n) {
                over[hit - m] = 1;
            }
        }
        if (!edit_check_apply(model, m, root, &e, 1)) {
            abort();
        }
        k++;
    }
    out = check(&alc, root, NULL, root, batch, k, &lin);

    /* one more edit on the splice, its lineage composed back to the document */
    if (end - b >= 5) {
        size_t n1 = edit_check_size(out);
        adm_edit_t e = make_edit(values, a, out, n1, b);
        unsigned char *mark1 = adm_arena_alloc(a, n1), *over1 = adm_arena_calloc(a, n1, 1);
        yyjson_mut_val *m1 = adm_json_mut_share(model, out);

        if (mark1 == NULL || over1 == NULL || m1 == NULL) {
            abort();
        }
        reach(m1, n1, mark1);
        if (model_valid(&e, out, n1, mark1, over1)) {
            check(&alc, out, &lin, root, &e, 1, &lin2);
        }
    }
    adm_arena_destroy(a);
    return 0;
}

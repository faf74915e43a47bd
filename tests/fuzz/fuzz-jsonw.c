/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for adm_jsonw_mut_value: the input, read by yyjson (the first byte picks the
 * reader's flags: invalid UTF-8 allowed, NaN and infinities allowed, numbers as raw text), copied
 * into a mutable document and written by both adm_jsonw_mut_value and yyjson_mut_val_write_opts
 * with YYJSON_WRITE_NOFLAG: the same bytes, or both fail; and its view (adm_json_view) by
 * adm_jsonw_value, the same again. Then again with every string's NOESC mark cleared, so each
 * takes the escaping path, and for the root's first child alone.
 */
#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void compare(yyjson_mut_val *v)
{
    adm_arena_t *a = adm_arena_create(64);
    adm_jsonw_t w;
    size_t n = 0;
    char *theirs = yyjson_mut_val_write_opts(v, YYJSON_WRITE_NOFLAG, NULL, &n, NULL);

    if (a == NULL) {
        abort();
    }
    adm_jsonw_init(&w, a);
    ADM_JSONW_LIT(&w, "[");
    adm_jsonw_mut_value(&w, v);
    if ((theirs == NULL) != w.failed ||
        (theirs != NULL && (w.len != n + 1 || memcmp(w.data + 1, theirs, n) != 0))) {
        fprintf(stderr, "adm_jsonw_mut_value: %.*s\nyyjson: %s\n", w.failed ? 6 : (int)w.len,
                w.failed ? "failed" : w.data, theirs != NULL ? theirs : "failed");
        abort();
    }
    /* its flat layout through adm_jsonw_value: the same */
    {
        yyjson_alc alc;
        yyjson_val *view;

        adm_json_alc_init(&alc, a);
        view = adm_json_view(&alc, v);
        if (view == NULL) {
            abort();
        }
        adm_jsonw_init(&w, a);
        ADM_JSONW_LIT(&w, "[");
        adm_jsonw_value(&w, view);
        if ((theirs == NULL) != w.failed ||
            (theirs != NULL && (w.len != n + 1 || memcmp(w.data + 1, theirs, n) != 0))) {
            fprintf(stderr, "adm_jsonw_value: %.*s\nyyjson: %s\n", w.failed ? 6 : (int)w.len,
                    w.failed ? "failed" : w.data, theirs != NULL ? theirs : "failed");
            abort();
        }
    }
    free(theirs);
    adm_arena_destroy(a);
}

/* Clears the NOESC mark of every string in v, walking with an explicit list. */
static void clear_noesc(yyjson_mut_val *root)
{
    size_t cap = 64, n = 0;
    yyjson_mut_val **pending = malloc(cap * sizeof(*pending));

    if (pending == NULL) {
        abort();
    }
    pending[n++] = root;
    while (n > 0) {
        yyjson_mut_val *v = pending[--n];

        if (yyjson_mut_is_str(v)) {
            v->tag &= ~(uint64_t)YYJSON_SUBTYPE_MASK;
        } else if (yyjson_mut_is_ctn(v) && yyjson_mut_get_len(v) > 0) {
            /* every child, keys included: an object's children alternate key, value */
            yyjson_mut_val *first = ((yyjson_mut_val *)v->uni.ptr)->next;
            yyjson_mut_val *c = first;

            do {
                if (n == cap) {
                    yyjson_mut_val **more = realloc(pending, 2 * cap * sizeof(*pending));

                    if (more == NULL) {
                        abort();
                    }
                    pending = more;
                    cap *= 2;
                }
                pending[n++] = c;
                c = c->next;
            } while (c != first);
        }
    }
    free(pending);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const yyjson_read_flag flags[] = {0, YYJSON_READ_ALLOW_INVALID_UNICODE,
                                             YYJSON_READ_ALLOW_INF_AND_NAN,
                                             YYJSON_READ_NUMBER_AS_RAW | YYJSON_READ_ALLOW_INVALID_UNICODE};
    yyjson_doc *doc;
    yyjson_mut_doc *m;
    yyjson_mut_val *root;

    if (size < 1) {
        return 0;
    }
    doc = yyjson_read((const char *)data + 1, size - 1, flags[data[0] % 4]);
    if (doc == NULL) {
        return 0;
    }
    m = yyjson_doc_mut_copy(doc, NULL);
    if (m == NULL) {
        abort();
    }
    root = yyjson_mut_doc_get_root(m);
    compare(root);
    clear_noesc(root);
    compare(root);
    if (yyjson_mut_is_arr(root) && yyjson_mut_get_len(root) > 0) {
        compare(yyjson_mut_arr_get_first(root));
    }
    yyjson_mut_doc_free(m);
    yyjson_doc_free(doc);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flat JSON Patch diff (adm_jsonpatch_diff_flat) against the mutable one, byte for byte: many
 * objects (the reviews under tests/fixtures and bench/reviews, whole and their request.object,
 * and generated ones with keys twice, keys holding '~' and '/', strings that need escapes, and
 * nesting around the diff's depth cut) are copied as the chain copies them
 * (adm_json_mut_share_kept), changed through yyjson's mutable API (members removed, added, added
 * twice, renamed, moved; array elements inserted and removed in the middle; scalars changed in
 * place), laid out by adm_json_view_traced, and diffed three ways: the mutable diff, and the flat
 * diff with the view's lineage and without. All three must be one text. The
 * lineage must tell the truth (every run a byte copy of the origin, runs in order and apart) and
 * adm_json_lineage_same and its cursor must answer what the runs say, in any order of asking.
 * And the patch applied to the original gives the changed object.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

static adm_arena_t *arena;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    return arena == NULL;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

/* ---- random choices, replayable per seed ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 33) % n;
}

/* Few keys, so objects often hold one twice; some need escapes in a JSON Pointer, one in JSON. */
static const char *const keys[] = {"a", "b", "name", "a/b", "x~y", "~1", "", "0", "q\\\"k", "metadata"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* ---- generated documents, as JSON text (so they are read as requests are) ---- */

typedef struct text_s {
    char *s;
    size_t n, cap;
} text_t;

static void put(text_t *t, const char *s)
{
    size_t len = strlen(s);

    if (t->n + len + 1 > t->cap) {
        t->cap = 2 * (t->n + len + 1) + 256;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memcpy(t->s + t->n, s, len + 1);
    t->n += len;
}

static void gen_value(text_t *t, int depth)
{
    static const char *const scalars[] = {
        "null",
        "true",
        "false",
        "0",
        "-7",
        "12345678901234567890",
        "1.5",
        "-0.0",
        "1e300",
        "0.1",
        "\"\"",
        "\"web\"",
        "\"q\\\"uote\\\\\"",
        "\"tab\\there\"",
        "\"\\u00fc\xc3\xbc\"",
        "\"a/b~c\"",
    };
    uint32_t kind = depth == 0 ? 4 + rnd(3) : rnd(depth > 4 ? 4 : 7); /* the root a container */
    uint32_t members = depth == 0 ? 2 + rnd(7) : rnd(6);

    if (kind < 4) {
        put(t, scalars[rnd(sizeof(scalars) / sizeof(scalars[0]))]);
    } else if (kind == 4) {
        put(t, "[");
        for (uint32_t i = members; i > 0; i--) {
            gen_value(t, depth + 1);
            put(t, i > 1 ? "," : "");
        }
        put(t, "]");
    } else {
        put(t, "{");
        for (uint32_t i = members; i > 0; i--) {
            put(t, "\"");
            put(t, keys[rnd(NKEYS)]);
            put(t, "\":");
            gen_value(t, depth + 1);
            put(t, i > 1 ? "," : "");
        }
        put(t, "}");
    }
}

/* A document whose first members nest `levels` deep (objects and arrays by turns) around others. */
static char *gen_document(uint64_t seed, size_t levels)
{
    text_t t = {NULL, 0, 0};

    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < levels; i++) {
        put(&t, i % 3 == 2 ? "[" : "{\"n\":");
    }
    gen_value(&t, 0);
    for (size_t i = levels; i > 0; i--) {
        if ((i - 1) % 3 == 2) {
            put(&t, ",");
            gen_value(&t, 3);
            put(&t, "]");
        } else {
            put(&t, ",\"s\":");
            gen_value(&t, 3);
            put(&t, "}");
        }
    }
    if (t.s == NULL) {
        put(&t, "null");
    }
    return t.s;
}

/* ---- changes through yyjson's mutable API ---- */

static yyjson_mut_val *new_value(yyjson_mut_doc *d, int depth)
{
    switch (rnd(depth > 3 ? 6 : 8)) {
    case 0: return yyjson_mut_null(d);
    case 1: return yyjson_mut_bool(d, rnd(2));
    case 2: return yyjson_mut_sint(d, (int64_t)rnd(2000) - 1000);
    case 3: return yyjson_mut_real(d, (double)rnd(1000) / 8.0);
    case 4: return yyjson_mut_strcpy(d, keys[rnd(NKEYS)]);
    case 5: return yyjson_mut_strn(d, "web-longer-text", 3); /* not NUL-terminated at its length */
    case 6: {
        yyjson_mut_val *arr = yyjson_mut_arr(d);

        for (uint32_t i = rnd(4); i > 0; i--) {
            yyjson_mut_arr_append(arr, new_value(d, depth + 1));
        }
        return arr;
    }
    default: {
        yyjson_mut_val *obj = yyjson_mut_obj(d);

        for (uint32_t i = rnd(4); i > 0; i--) {
            yyjson_mut_obj_add(obj, yyjson_mut_strcpy(d, keys[rnd(NKEYS)]), new_value(d, depth + 1));
        }
        return obj;
    }
    }
}

/* A subtree taken out somewhere, to be put back elsewhere (its values stay the copy's). */
static yyjson_mut_val *moving;

/* Changes a few things in v (a value of the copy); returns what takes v's place. */
static yyjson_mut_val *change(yyjson_mut_doc *d, yyjson_mut_val *v, int depth, int odds)
{
    if (rnd(40) == 0) {
        return new_value(d, depth);
    }
    if (yyjson_mut_is_obj(v)) {
        yyjson_mut_obj_iter it;
        yyjson_mut_val *key;

        yyjson_mut_obj_iter_init(v, &it);
        for (key = yyjson_mut_obj_iter_next(&it); key != NULL; key = yyjson_mut_obj_iter_next(&it)) {
            uint32_t r = rnd((uint32_t)odds);

            if (r == 0) {
                yyjson_mut_val *val = yyjson_mut_obj_iter_remove(&it);

                if (moving == NULL && yyjson_mut_is_ctn(val)) {
                    moving = val;
                }
            } else if (r == 1) {
                yyjson_mut_set_str(key, keys[rnd(NKEYS)]); /* renamed, maybe to a key it holds */
            } else if (r <= 4) {
                yyjson_mut_val *val = yyjson_mut_obj_iter_get_val(key);
                yyjson_mut_val *now = change(d, val, depth + 1, odds);

                if (now != val) {
                    yyjson_mut_obj_replace(v, key, now);
                }
            }
        }
        switch (rnd(6)) {
        case 0: /* maybe a key it holds already: then twice */
            yyjson_mut_obj_add(v, yyjson_mut_strcpy(d, keys[rnd(NKEYS)]), new_value(d, depth + 1));
            break;
        case 1:
            yyjson_mut_obj_insert(v, yyjson_mut_strcpy(d, keys[rnd(NKEYS)]), new_value(d, depth + 1),
                                  rnd((uint32_t)yyjson_mut_obj_size(v) + 1));
            break;
        case 2:
            if (moving != NULL) {
                yyjson_mut_obj_add(v, yyjson_mut_str(d, "moved"), moving);
                moving = NULL;
            }
            break;
        default: break;
        }
    } else if (yyjson_mut_is_arr(v)) {
        size_t n = yyjson_mut_arr_size(v);

        if (n > 0 && rnd(3) == 0) {
            yyjson_mut_val *gone = yyjson_mut_arr_remove(v, rnd((uint32_t)n));

            if (moving == NULL && yyjson_mut_is_ctn(gone)) {
                moving = gone;
            }
            n--;
        }
        if (rnd(3) == 0) {
            yyjson_mut_arr_insert(v, new_value(d, depth + 1), rnd((uint32_t)n + 1));
            n++;
        }
        if (moving != NULL && rnd(3) == 0) {
            yyjson_mut_arr_insert(v, moving, rnd((uint32_t)n + 1));
            moving = NULL;
            n++;
        }
        for (size_t i = 0; i < n; i++) {
            if (rnd((uint32_t)odds) <= 2) {
                yyjson_mut_val *val = yyjson_mut_arr_get(v, i);
                yyjson_mut_val *now = change(d, val, depth + 1, odds);

                if (now != val) {
                    yyjson_mut_arr_replace(v, i, now);
                }
            }
        }
    } else {
        /* a scalar changed in place: the same value, a new tag or payload */
        switch (rnd(5)) {
        case 0: yyjson_mut_set_int(v, (int)rnd(100)); break;
        case 1: yyjson_mut_set_bool(v, rnd(2)); break;
        case 2: yyjson_mut_set_str(v, "changed"); break;
        case 3: yyjson_mut_set_real(v, 2.5); break;
        default: break;
        }
    }
    return v;
}

/* Down the first-child chain `levels` deep (or as far as it goes), and a change there. */
static void change_deep(yyjson_mut_doc *d, yyjson_mut_val *v, size_t levels)
{
    yyjson_mut_val *parent = NULL;

    for (size_t i = 0; i < levels && yyjson_mut_is_ctn(v) && yyjson_mut_get_len(v) > 0; i++) {
        parent = v;
        v = yyjson_mut_is_obj(v) ? yyjson_mut_obj_get(v, "n") : yyjson_mut_arr_get_first(v);
        if (v == NULL) {
            return;
        }
    }
    if (parent == NULL) {
        return;
    }
    if (yyjson_mut_is_obj(parent)) {
        yyjson_mut_obj_put(parent, yyjson_mut_str(d, rnd(2) ? "n" : "extra"), new_value(d, 3));
    } else {
        yyjson_mut_arr_append(parent, new_value(d, 3));
    }
}

/* ---- the checks ---- */

static size_t values_of(const yyjson_val *v)
{
    return yyjson_is_ctn((yyjson_val *)v) ? v->uni.ofs / sizeof(*v) : 1;
}

/* The lineage tells the truth, and lineage_same (plain and by cursor, forwards and back) says it. */
static void check_lineage(const adm_json_lineage_t *l, yyjson_val *view, yyjson_val *from, uint64_t seed)
{
    size_t nview = values_of(view), nfrom = values_of(from);
    adm_json_lineage_cursor_t fwd = {l, view, 0}, back = {l, view, 0};

    if (l->nruns == 0) {
        return;
    }
    assert_ptr_equal(l->origin, from);
    for (size_t r = 0; r < l->nruns; r++) {
        const adm_json_run_t *run = &l->runs[r];

        assert_true(run->n > 0);
        assert_true((size_t)run->to + run->n <= nview);
        assert_true((size_t)run->from + run->n <= nfrom);
        if (r > 0) {
            const adm_json_run_t *prev = &l->runs[r - 1];

            /* in order, apart, and merged when one continues the other */
            assert_true((size_t)prev->to + prev->n <= run->to);
            assert_false(prev->to + prev->n == run->to && prev->from + prev->n == run->from);
        }
        if (memcmp(view + run->to, from + run->from, run->n * sizeof(*view)) != 0) {
            fail_msg("seed %llu: run %zu (%u <- %u, %u) is not a copy", (unsigned long long)seed, r, run->to,
                     run->from, run->n);
        }
    }
    for (size_t k = 0; k < 2 * nview; k++) {
        size_t i = k < nview ? k : 2 * nview - 1 - k;
        adm_json_lineage_cursor_t *c = k < nview ? &fwd : &back;
        const adm_json_run_t *in = NULL;
        bool want;

        for (size_t r = 0; r < l->nruns; r++) {
            if (i >= l->runs[r].to && i < (size_t)l->runs[r].to + l->runs[r].n) {
                in = &l->runs[r];
            }
        }
        want = in != NULL && i + values_of(view + i) <= (size_t)in->to + in->n;
        if (in != NULL) {
            yyjson_val *a = from + in->from + (i - in->to);

            assert_int_equal(adm_json_lineage_same(l, view, view + i, a), want);
            assert_int_equal(adm_json_lineage_cursor_same(c, view + i, a), want);
            if (a + 1 < from + nfrom) {
                assert_false(adm_json_lineage_same(l, view, view + i, a + 1));
            }
        } else {
            assert_false(adm_json_lineage_same(l, view, view + i, from + (i < nfrom ? i : 0)));
            assert_false(adm_json_lineage_cursor_same(c, view + i, from + (i < nfrom ? i : 0)));
        }
    }
}

/* Some object of the flat layout v holds a key twice. */
static bool has_twice(yyjson_val *v)
{
    size_t n = values_of(v);

    for (size_t i = 0; i < n; i++) {
        yyjson_obj_iter it, jt;
        yyjson_val *k, *j;

        if (!yyjson_is_obj(v + i)) {
            continue;
        }
        yyjson_obj_iter_init(v + i, &it);
        for (k = yyjson_obj_iter_next(&it); k != NULL; k = yyjson_obj_iter_next(&it)) {
            jt = it;
            for (j = yyjson_obj_iter_next(&jt); j != NULL; j = yyjson_obj_iter_next(&jt)) {
                if (yyjson_equals_strn(j, yyjson_get_str(k), yyjson_get_len(k))) {
                    return true;
                }
            }
        }
    }
    return false;
}

static size_t with_runs, cases;

/* The three diffs of one changed copy agree byte for byte; the patch gives the changed object. */
static void check_diffs(yyjson_val *from, yyjson_mut_doc *m, const adm_json_origin_t *o, uint64_t seed)
{
    yyjson_mut_val *to = yyjson_mut_doc_get_root(m);
    const char *text[3], *error = NULL;
    size_t len[3], nops[3];
    adm_json_lineage_t lin;
    yyjson_alc alc;
    yyjson_val *view;
    static const char *const names[] = {"mutable", "flat with lineage", "flat without lineage"};

    adm_json_alc_init(&alc, arena);
    view = adm_json_view_traced(&alc, to, o, &lin);
    assert_non_null(view);
    check_lineage(&lin, view, from, seed);
    cases++;
    with_runs += lin.nruns > 0;
    assert_int_equal(adm_jsonpatch_diff(from, to, arena, &text[0], &len[0], &nops[0]), 0);
    assert_int_equal(adm_jsonpatch_diff_flat(from, view, &lin, arena, &text[1], &len[1], &nops[1]), 0);
    assert_int_equal(adm_jsonpatch_diff_flat(from, view, NULL, arena, &text[2], &len[2], &nops[2]), 0);
    for (int k = 1; k < 3; k++) {
        if (nops[k] != nops[0] || len[k] != len[0] || memcmp(text[k], text[0], len[0]) != 0) {
            fail_msg("seed %llu: %s diff %.*s\n%s diff %.*s", (unsigned long long)seed, names[0], (int)len[0],
                     text[0], names[k], (int)len[k], text[k]);
        }
    }
    /* the flat value writer gives the mutable one's bytes */
    {
        adm_jsonw_t wm, wf;

        adm_jsonw_init(&wm, arena);
        adm_jsonw_init(&wf, arena);
        adm_jsonw_mut_value(&wm, to);
        adm_jsonw_value(&wf, view);
        assert_int_equal(wm.failed, wf.failed);
        assert_int_equal(wm.len, wf.len);
        assert_memory_equal(wm.data, wf.data, wm.len);
    }
    /* apply(from, patch) == to, where no object holds a key twice (yyjson_mut_equals cannot say) */
    if (!has_twice(from) && !has_twice(view)) {
        yyjson_read_err err;
        yyjson_doc *patch = adm_json_read(arena, text[2], len[2], &err);
        yyjson_mut_doc *work = yyjson_mut_doc_new(&alc);
        yyjson_doc *got, *again_doc;
        const char *again;

        assert_non_null(patch);
        yyjson_mut_doc_set_root(work, yyjson_val_mut_copy(work, from));
        if (adm_jsonpatch_apply(work, yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, arena, &error) != 0) {
            /* keys twice make some paths ambiguous: the diff replaces such objects whole, which applies */
            fail_msg("seed %llu: patch %.*s does not apply: %s", (unsigned long long)seed, (int)len[2],
                     text[2], error);
        }
        /* both read back from text, so equal numbers have one type, then compared by the diff,
           whose equality takes numbers by value (it leaves -0.0 for 0): nothing between them */
        {
            size_t wl = 0, vl = 0;
            char *wt = yyjson_mut_write_opts(work, 0, &alc, &wl, NULL);
            char *vt = yyjson_val_write_opts(view, 0, &alc, &vl, NULL);

            assert_non_null(wt);
            assert_non_null(vt);
            got = adm_json_read(arena, wt, wl, &err);
            again_doc = adm_json_read(arena, vt, vl, &err);
            assert_non_null(got);
            assert_non_null(again_doc);
        }
        assert_int_equal(adm_jsonpatch_diff_flat(yyjson_doc_get_root(got), yyjson_doc_get_root(again_doc),
                                                 NULL, arena, &again, &len[0], &nops[0]),
                         0);
        if (nops[0] != 0) {
            fail_msg("seed %llu: patch %.*s gives %s, %.*s from the changed object", (unsigned long long)seed,
                     (int)len[2], text[2], yyjson_mut_write(work, 0, NULL), (int)len[0], again);
        }
    }
}

/* text read, copied, changed `rounds` ways (one left alone), each diffed three ways. */
static void check_text(const char *text, size_t n, const char *const *path, uint64_t seed, int rounds,
                       size_t deep)
{
    for (int round = 0; round < rounds; round++) {
        yyjson_read_err err;
        yyjson_doc *doc;
        yyjson_val *from;
        yyjson_mut_doc *m;
        yyjson_mut_val *copy;
        adm_json_origin_t o;
        yyjson_alc alc;

        adm_arena_reset(arena);
        adm_json_alc_init(&alc, arena);
        doc = adm_json_read(arena, text, n, &err);
        assert_non_null(doc);
        from = yyjson_doc_get_root(doc);
        for (const char *const *p = path; from != NULL && *p != NULL; p++) {
            from = yyjson_obj_get(from, *p);
        }
        if (from == NULL) {
            return;
        }
        m = yyjson_mut_doc_new(&alc);
        copy = adm_json_mut_share_kept(m, from, &o);
        assert_non_null(copy);
        yyjson_mut_doc_set_root(m, copy);
        rng_state = (seed * 1000003 + (uint64_t)round) * 0x9E3779B97F4A7C15ULL + 7;
        moving = NULL;
        if (round > 0) {
            yyjson_mut_doc_set_root(m, change(m, copy, 0, round % 3 == 0 ? 4 : 12));
            if (moving != NULL && yyjson_mut_is_arr(yyjson_mut_doc_get_root(m))) {
                yyjson_mut_arr_append(yyjson_mut_doc_get_root(m), moving);
            }
            if (deep > 0) {
                change_deep(m, yyjson_mut_doc_get_root(m), deep - 4 + rnd(9));
            }
        }
        check_diffs(from, m, &o, seed);
    }
}

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *s;
    long len;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = malloc((size_t)len + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    s[len] = '\0';
    *n = (size_t)len;
    return s;
}

/* Every .json review of dir: whole, and its request.object. */
static size_t check_dir(const char *dir)
{
    static const char *const whole[] = {NULL};
    static const char *const object[] = {"request", "object", NULL};
    static const char *const old[] = {"request", "oldObject", NULL};
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t files = 0;

    assert_non_null(d);
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        char path[4096];
        size_t n, len = strlen(e->d_name);
        char *text;

        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        text = read_file(path, &n);
        check_text(text, n, whole, files, 8, 0);
        check_text(text, n, object, files + 1000, 40, 0);
        check_text(text, n, old, files + 2000, 8, 0);
        free(text);
        files++;
    }
    closedir(d);
    return files;
}

static void test_reviews(void **state)
{
    const char *fixtures = getenv("ADM_FIXTURES_DIR");
    char dir[4096];
    size_t files;

    assert_non_null(fixtures);
    cases = with_runs = 0;
    files = check_dir(fixtures);
    snprintf(dir, sizeof(dir), "%s/../../bench/reviews", fixtures);
    files += check_dir(dir);
    print_message("%zu reviews, %zu changed copies, %zu with a lineage\n", files, cases, with_runs);
    assert_true(files >= 20);
    assert_true(with_runs > cases / 2);
}

static void test_generated(void **state)
{
    static const char *const whole[] = {NULL};

    cases = with_runs = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        char *text = gen_document(seed, 0);

        check_text(text, strlen(text), whole, seed, 4, 0);
        free(text);
    }
    print_message("%zu changed copies, %zu with a lineage\n", cases, with_runs);
    assert_true(with_runs > cases / 4);
}

/* Nesting around the diff's depth cut (128 levels): the cut replaces, the lineage skips, alike. */
static void test_deep(void **state)
{
    static const char *const whole[] = {NULL};

    for (size_t levels = 118; levels <= 140; levels++) {
        for (uint64_t seed = 1; seed <= 6; seed++) {
            char *text = gen_document(seed + 100 * levels, levels);

            check_text(text, strlen(text), whole, seed + 100 * levels, 4, levels);
            free(text);
        }
    }
}

/* Hand-made cases: a key twice (the object replaced whole), escapes, an array's middle. */
static void test_cases(void **state)
{
    static const char *const whole[] = {NULL};
    static const char *const docs[] = {
        "{\"o\":{\"x\":1,\"x\":2},\"keep\":{\"a\":[1,2,3]}}",
        "{\"spec\":{\"list\":[{\"k\":1,\"k\":1}],\"inner\":{\"deep\":{\"y\":1,\"y\":1}}},\"meta\":{\"n\":1}}",
        "{\"a/b\":{\"x~y\":[{\"~1\":1},{\"\":2},{\"q\\\"k\":3}]},\"0\":[[],[[]],{}]}",
        "[1,[2,3],{\"a\":4},[5,[6]],\"seven\",{\"b\":{\"c\":8}},9]",
        "{}",
        "[]",
        "\"scalar\"",
    };

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        check_text(docs[i], strlen(docs[i]), whole, i, 60, 0);
    }
}

/* A lineage of another origin is not used, and a NULL view is an allocation failure. */
static void test_edges(void **state)
{
    static const char text[] = "{\"a\":{\"b\":[1,2]},\"c\":3}";
    yyjson_read_err err;
    yyjson_doc *a, *b;
    yyjson_mut_doc *m;
    adm_json_origin_t o;
    adm_json_lineage_t lin, none;
    yyjson_alc alc;
    yyjson_val *view;
    const char *out;
    size_t len, nops;

    adm_arena_reset(arena);
    adm_json_alc_init(&alc, arena);
    a = adm_json_read(arena, text, strlen(text), &err);
    b = adm_json_read(arena, text, strlen(text), &err);
    m = yyjson_mut_doc_new(&alc);
    yyjson_mut_doc_set_root(m, adm_json_mut_share_kept(m, yyjson_doc_get_root(a), &o));
    yyjson_mut_obj_put(yyjson_mut_doc_get_root(m), yyjson_mut_str(m, "c"), yyjson_mut_sint(m, 4));
    view = adm_json_view_traced(&alc, yyjson_mut_doc_get_root(m), &o, &lin);
    assert_non_null(view);
    assert_int_equal(lin.nruns, 1); /* "a"'s value, copied whole */
    assert_ptr_equal(lin.origin, yyjson_doc_get_root(a));
    /* against b (equal to a, another document) the lineage says nothing */
    assert_int_equal(adm_jsonpatch_diff_flat(yyjson_doc_get_root(b), view, &lin, arena, &out, &len, &nops),
                     0);
    assert_int_equal(nops, 1);
    assert_memory_equal(out, "[{\"op\":\"replace\",\"path\":\"/c\",\"value\":4}]", len);
    assert_int_equal(adm_jsonpatch_diff_flat(yyjson_doc_get_root(a), NULL, &lin, arena, &out, &len, &nops),
                     ADM_ENOMEM);
    /* no origin: no lineage */
    view = adm_json_view_traced(&alc, yyjson_mut_doc_get_root(m), NULL, &none);
    assert_non_null(view);
    assert_null(none.origin);
    assert_int_equal(none.nruns, 0);
    assert_false(adm_json_lineage_same(NULL, view, view + 1, yyjson_doc_get_root(a) + 1));
    assert_false(adm_json_lineage_same(&none, view, view + 1, yyjson_doc_get_root(a) + 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),     cmocka_unit_test(test_cases), cmocka_unit_test(test_reviews),
        cmocka_unit_test(test_generated), cmocka_unit_test(test_deep),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

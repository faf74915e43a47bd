/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warnings an answer carries (adm_attrs_add_warning), held to kube-apiserver's recorder:
 * empty, repeated, malformed-UTF-8 and control-character texts dropped; past 4,096 runes in all,
 * every warning (earlier ones too) cut to 256 runes; past 4,096 runes of those, the rest dropped.
 * And the object's members read one by one (adm_attrs_get), which must find what the view of the
 * whole object (adm_attrs_object) would; and the lineage that view keeps for the final diff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adm/admission/admission.h"
#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

static adm_arena_t *arena;
static adm_review_request_t req;
static adm_attrs_t attrs;

static int setup(void **state)
{
    arena = adm_arena_create(65536);
    if (arena == NULL) {
        return -1;
    }
    adm_attrs_init(&attrs, &req, arena);
    return 0;
}

static int teardown(void **state)
{
    adm_arena_destroy(arena);
    return 0;
}

/* n copies of the two-byte rune "é" after a distinguishing prefix letter (arena memory). */
static const char *text_of(char prefix, size_t n)
{
    char *s = adm_arena_alloc(arena, 2 * n + 2);
    char *w = s;

    *w++ = prefix;
    for (size_t i = 1; i < n; i++) {
        memcpy(w, "\xc3\xa9", 2);
        w += 2;
    }
    *w = '\0';
    return s;
}

static size_t runes(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++) {
        n += ((unsigned char)*s & 0xc0) != 0x80;
    }
    return n;
}

static void test_dropped_texts(void **state)
{
    static const char *const dropped[] = {
        "",
        "tab\tinside",
        "del\x7f",
        "c1 \xc2\x85 next line", /* U+0085, a C1 control */
        "bad \xff byte",
        "overlong \xc0\x80",
        "surrogate \xed\xa0\x80",
        "truncated \xe2\x82",
        /* past the first eight bytes, where printable ASCII is taken eight at a time */
        "sixteen bytes ok\x01",
        "eight ok~\x7f and more text after it",
        "a longer text, all printable, then \x1f at the end!",
        "0123456789abcdef0123456789abcdef\xc2\x9f",
        "0123456789abcdef0123456789abcdef\xff",
    };

    for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
        adm_attrs_add_warning(&attrs, dropped[i]);
    }
    adm_attrs_add_warning(&attrs, "first");
    adm_attrs_add_warning(&attrs, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* é € 😀: valid */
    adm_attrs_add_warning(&attrs, "first");
    adm_attrs_add_warning(&attrs,
                          "all printable ASCII from space to tilde: ~}|{`_^]\\[@?>=<;:/.-,+*)('&%$#\"! ");
    assert_int_equal(attrs.nwarnings, 3);
    assert_string_equal(attrs.warnings[0], "first");
    assert_string_equal(attrs.warnings[1], "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

static void test_total_and_item_limits(void **state)
{
    /* four texts of 1,000 runes: 4,000 of 4,096, all whole */
    for (char c = 'a'; c < 'e'; c++) {
        adm_attrs_add_warning(&attrs, text_of(c, 1000));
    }
    assert_int_equal(attrs.nwarnings, 4);
    assert_int_equal(runes(attrs.warnings[3]), 1000);
    /* a fifth passes 4,096: all five are shown again, cut to 256 runes (on a rune boundary) */
    adm_attrs_add_warning(&attrs, text_of('e', 1000));
    assert_int_equal(attrs.nwarnings, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(runes(attrs.warnings[i]), 256);
        assert_int_equal(strlen(attrs.warnings[i]), 1 + 2 * 255);
        assert_int_equal(attrs.warnings[i][0], 'a' + (int)i);
    }
    /* from now on each is cut as it comes: 5 x 256 + 11 x 256 = 4,096 */
    for (char c = 'f'; c < 'f' + 11; c++) {
        adm_attrs_add_warning(&attrs, text_of(c, 300));
    }
    assert_int_equal(attrs.nwarnings, 16);
    assert_int_equal(runes(attrs.warnings[15]), 256);
    /* at 4,096 runes, further warnings are dropped, short or not */
    adm_attrs_add_warning(&attrs, "short");
    assert_int_equal(attrs.nwarnings, 16);
}

static void test_short_after_truncation(void **state)
{
    /* passing 4,096 with few warnings leaves room: later ones are shown, cut when long */
    adm_attrs_add_warning(&attrs, text_of('a', 5000));
    assert_int_equal(attrs.nwarnings, 1);
    assert_int_equal(runes(attrs.warnings[0]), 256);
    adm_attrs_add_warning(&attrs, "short");
    assert_int_equal(attrs.nwarnings, 2);
    assert_string_equal(attrs.warnings[1], "short");
    /* Go cuts through []rune, which turns malformed bytes into U+FFFD: a malformed text longer than
       256 runes is shown once cut, while a short one stays dropped */
    adm_attrs_add_warning(&attrs, "\xff short");
    assert_int_equal(attrs.nwarnings, 2);
    {
        char *long_bad = adm_arena_alloc(arena, 302);

        long_bad[0] = '\xff';
        memset(long_bad + 1, 'b', 300);
        long_bad[301] = '\0';
        adm_attrs_add_warning(&attrs, long_bad);
    }
    assert_int_equal(attrs.nwarnings, 3);
    assert_int_equal(memcmp(attrs.warnings[2],
                            "\xef\xbf\xbd"
                            "bbb",
                            6),
                     0);
    assert_int_equal(runes(attrs.warnings[2]), 256);
}

/* Many repeats stay cheap: the recorder looks texts up in a hash set. */
static void test_many_repeats(void **state)
{
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) {
            char buf[32];
            char *copy;

            snprintf(buf, sizeof(buf), "\x01%d", i); /* never shown: a control character */
            copy = adm_arena_alloc(arena, strlen(buf) + 1);
            memcpy(copy, buf, strlen(buf) + 1);
            adm_attrs_add_warning(&attrs, copy);
        }
    }
    adm_attrs_add_warning(&attrs, "shown");
    assert_int_equal(attrs.nwarnings, 1);
}

/* Writes v compactly (arena), "(absent)" for NULL. */
static const char *text(yyjson_val *v)
{
    yyjson_alc alc;
    const char *s;

    if (v == NULL) {
        return "(absent)";
    }
    adm_json_alc_init(&alc, arena);
    s = yyjson_val_write_opts(v, 0, &alc, NULL, NULL);
    assert_non_null(s);
    return s;
}

/* adm_attrs_get(paths[i]) against adm_json_path on the whole object's view, as text. */
static void check_members(const char *const paths[][4], size_t n)
{
    const char *got[16];

    assert_true(n <= 16);
    /* first every member one by one (no view of the whole object made meanwhile), then the view */
    for (size_t i = 0; i < n; i++) {
        got[i] = text(adm_attrs_get(&attrs, paths[i][0], paths[i][1], paths[i][2], paths[i][3], NULL));
    }
    for (size_t i = 0; i < n; i++) {
        yyjson_val *want =
            adm_json_path(adm_attrs_object(&attrs), paths[i][0], paths[i][1], paths[i][2], paths[i][3], NULL);

        if (strcmp(got[i], text(want)) != 0) {
            fail_msg("%s.%s.%s: %s, the view has %s", paths[i][0], paths[i][1] != NULL ? paths[i][1] : "",
                     paths[i][2] != NULL ? paths[i][2] : "", got[i], text(want));
        }
    }
}

/*
 * adm_attrs_get finds what adm_json_path finds on adm_attrs_object: on the object as received, and
 * after changes (members added, replaced, removed; a string not NUL-terminated at its length;
 * a scalar where an object was), for scalars, objects, arrays and absent paths.
 */
static void test_members_one_by_one(void **state)
{
    static const char pod[] =
        "{\"metadata\":{\"name\":\"p\",\"annotations\":{\"a\":\"1\"}},\"spec\":{\"serviceAccountName\":"
        "\"web\","
        "\"priority\":7,\"automountServiceAccountToken\":false,\"tolerations\":[{\"key\":\"k\","
        "\"effect\":\"NoExecute\"}],\"containers\":[{\"name\":\"c\"}]}}";
    static const char *const paths[][4] = {
        {"spec", "serviceAccountName", NULL, NULL},
        {"spec", "priority", NULL, NULL},
        {"spec", "automountServiceAccountToken", NULL, NULL},
        {"spec", "tolerations", NULL, NULL},
        {"spec", "runtimeClassName", NULL, NULL},
        {"metadata", "annotations", "a", NULL},
        {"metadata", "annotations", "kubernetes.io/config.mirror", NULL},
        {"metadata", "name", "deeper", NULL},
        {"spec", NULL, NULL, NULL},
        {"spec", "overhead", NULL, NULL},
        {"status", NULL, NULL, NULL},
    };
    const size_t n = sizeof(paths) / sizeof(paths[0]);
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(arena, pod, strlen(pod), &err);
    yyjson_mut_val *root, *spec, *tol;

    assert_non_null(doc);
    req.object = yyjson_doc_get_root(doc);
    adm_attrs_init(&attrs, &req, arena);
    assert_true(adm_attrs_has_object(&attrs));
    check_members(paths, n);

    root = adm_attrs_mutable_object(&attrs);
    assert_non_null(root);
    spec = yyjson_mut_obj_get(root, "spec");
    yyjson_mut_obj_remove_key(spec, "serviceAccountName");
    assert_true(yyjson_mut_obj_add_val(attrs.mdoc, spec, "serviceAccountName",
                                       yyjson_mut_strn(attrs.mdoc, "defaultXYZ", 7)));
    yyjson_mut_obj_put(spec, yyjson_mut_str(attrs.mdoc, "priority"), yyjson_mut_sint(attrs.mdoc, -3));
    yyjson_mut_obj_remove_key(spec, "automountServiceAccountToken");
    tol = yyjson_mut_arr_add_obj(attrs.mdoc, yyjson_mut_obj_get(spec, "tolerations"));
    assert_true(yyjson_mut_obj_add_str(attrs.mdoc, tol, "key", "node.kubernetes.io/not-ready"));
    assert_true(yyjson_mut_obj_add_str(attrs.mdoc, spec, "runtimeClassName", "gvisor"));
    yyjson_mut_obj_put(yyjson_mut_obj_get(root, "metadata"), yyjson_mut_str(attrs.mdoc, "name"),
                       yyjson_mut_str(attrs.mdoc, "scalar"));
    assert_true(yyjson_mut_obj_add_null(attrs.mdoc, spec, "overhead"));
    assert_true(adm_attrs_has_object(&attrs));
    check_members(paths, n);
    assert_string_equal(yyjson_get_str(adm_attrs_get(&attrs, "spec", "serviceAccountName", NULL)), "default");

    /* changed again after the view was made */
    root = adm_attrs_mutable_object(&attrs);
    yyjson_mut_obj_remove_key(yyjson_mut_obj_get(root, "metadata"), "annotations");
    yyjson_mut_obj_remove_key(yyjson_mut_obj_get(root, "spec"), "tolerations");
    check_members(paths, n);

    req.object = NULL;
    adm_attrs_init(&attrs, &req, arena);
    assert_false(adm_attrs_has_object(&attrs));
    assert_null(adm_attrs_get(&attrs, "spec", NULL));
}

/* e recorded on attrs, with a string value (NULL: none, for REMOVE). */
static void edit(adm_edit_op_t op, yyjson_val *target, const char *key, yyjson_mut_val *value)
{
    adm_edit_t e = {op, target, key, key != NULL ? strlen(key) : 0, value};

    assert_int_equal(adm_attrs_edit(&attrs, &e), ADM_OK);
}

/*
 * Edits (adm_attrs_edit) are what the object is from the next read on, whichever way it is read;
 * they mix with the mutable copy in either order (each sees the other's changes); the lineage of
 * an edited object leads back to the request's; an edit of a value read before the last splice is
 * refused, and the read that applies it fails.
 */
static void test_edits(void **state)
{
    static const char pod[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
                              "\"priority\":null}}";
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(arena, pod, strlen(pod), &err);
    yyjson_mut_doc *values;
    yyjson_val *obj, *stale;
    yyjson_mut_val *root;

    (void)state;
    assert_non_null(doc);
    req.object = yyjson_doc_get_root(doc);
    adm_attrs_init(&attrs, &req, arena);
    values = adm_attrs_values_doc(&attrs);
    assert_non_null(values);
    obj = adm_attrs_object(&attrs);
    stale = adm_json_get(obj, "spec");
    edit(ADM_EDIT_ADD, adm_json_get(obj, "metadata"), "labels", yyjson_mut_str(values, "l"));
    edit(ADM_EDIT_SET, stale, "priority", yyjson_mut_sint(values, 5));
    assert_true(attrs.changed);
    assert_true(adm_attrs_has_object(&attrs));
    /* read member by member first: the edits are applied all the same */
    assert_string_equal(yyjson_get_str(adm_attrs_get(&attrs, "metadata", "labels", NULL)), "l");
    assert_string_equal(text(adm_attrs_object(&attrs)),
                        "{\"metadata\":{\"name\":\"p\",\"labels\":\"l\"},\"spec\":{\"containers\":[{\"name\":"
                        "\"c\"}],\"priority\":5}}");
    assert_ptr_equal(attrs.lineage.origin, req.object);

    /* the mutable copy starts from the edited object; a view of it comes back to the request's */
    root = adm_attrs_mutable_object(&attrs);
    assert_non_null(root);
    assert_true(yyjson_mut_obj_add_str(attrs.mdoc, yyjson_mut_obj_get(root, "spec"), "m", "1"));
    assert_string_equal(text(adm_attrs_object(&attrs)),
                        "{\"metadata\":{\"name\":\"p\",\"labels\":\"l\"},\"spec\":{\"containers\":[{\"name\":"
                        "\"c\"}],\"priority\":5,\"m\":\"1\"}}");
    assert_ptr_equal(attrs.lineage.origin, req.object);

    /* an edit after the mutable copy, and a new copy that sees it */
    obj = adm_attrs_object(&attrs);
    edit(ADM_EDIT_REMOVE, adm_json_get(obj, "spec"), "priority", NULL);
    edit(ADM_EDIT_APPEND, adm_json_path(obj, "spec", "containers", NULL), NULL, yyjson_mut_str(values, "d"));
    root = adm_attrs_mutable_object(&attrs);
    assert_non_null(yyjson_mut_obj_get(root, "metadata"));
    assert_null(yyjson_mut_obj_get(yyjson_mut_obj_get(root, "spec"), "priority"));
    assert_string_equal(text(adm_attrs_object(&attrs)),
                        "{\"metadata\":{\"name\":\"p\",\"labels\":\"l\"},\"spec\":{\"containers\":[{\"name\":"
                        "\"c\"},\"d\"],\"m\":\"1\"}}");

    /* a value of an earlier layout is no target */
    edit(ADM_EDIT_REPLACE, adm_json_get(stale, "priority"), NULL, yyjson_mut_null(values));
    assert_null(adm_attrs_object(&attrs));
    memset(&req, 0, sizeof(req));
}

/*
 * adm_attrs_ensure gives the container at a path, making what is missing as adm_mut_ensure does:
 * nested steps in one value appended, a null replaced where it stands, a wrong type refused.
 */
static void test_ensure(void **state)
{
    static const char obj[] = "{\"spec\":null,\"kind\":\"X\",\"data\":7}";
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(arena, obj, strlen(obj), &err);
    yyjson_val *v;

    (void)state;
    req.object = yyjson_doc_get_root(doc);
    adm_attrs_init(&attrs, &req, arena);
    v = adm_attrs_ensure(&attrs, YYJSON_TYPE_ARR, "metadata", "finalizers", NULL);
    assert_true(yyjson_is_arr(v));
    v = adm_attrs_ensure(&attrs, YYJSON_TYPE_OBJ, "spec", NULL);
    assert_true(yyjson_is_obj(v));
    assert_ptr_equal(adm_attrs_ensure(&attrs, YYJSON_TYPE_OBJ, "spec", NULL), v); /* there: no edit */
    assert_null(adm_attrs_ensure(&attrs, YYJSON_TYPE_OBJ, "data", "x", NULL));
    assert_null(adm_attrs_ensure(&attrs, YYJSON_TYPE_ARR, "spec", NULL));
    assert_string_equal(text(adm_attrs_object(&attrs)),
                        "{\"spec\":{},\"kind\":\"X\",\"data\":7,\"metadata\":{\"finalizers\":[]}}");
    memset(&req, 0, sizeof(req));
}

/*
 * adm_attrs_object keeps the lineage of the view it makes of a changed copy of the request's
 * object: runs that are byte copies of req->object, with which the flat diff gives the mutable
 * diff's patch. A webhook's object (adm_attrs_set_object) shares nothing with the copy: no runs.
 */
static void test_lineage(void **state)
{
    static const char pod[] =
        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\"}],\"tolerations\":[{\"key\":\"k\"}]}}";
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(arena, pod, strlen(pod), &err);
    yyjson_mut_val *root;
    yyjson_mut_doc *other;
    yyjson_val *view;
    const adm_json_lineage_t *lin = &attrs.lineage;
    const char *flat, *mut;
    size_t flat_len, mut_len, flat_ops, mut_ops;

    assert_non_null(doc);
    req.object = yyjson_doc_get_root(doc);
    adm_attrs_init(&attrs, &req, arena);
    root = adm_attrs_mutable_object(&attrs);
    assert_non_null(root);
    yyjson_mut_obj_put(yyjson_mut_obj_get(root, "metadata"), yyjson_mut_str(attrs.mdoc, "name"),
                       yyjson_mut_str(attrs.mdoc, "q"));
    view = adm_attrs_object(&attrs);
    assert_non_null(view);
    assert_ptr_equal(lin->origin, req.object);
    assert_int_equal(lin->nruns, 2); /* labels; spec (after metadata's name, apart) */
    for (size_t r = 0; r < lin->nruns; r++) {
        assert_memory_equal(view + lin->runs[r].to, req.object + lin->runs[r].from,
                            lin->runs[r].n * sizeof(*view));
    }
    assert_int_equal(adm_jsonpatch_diff_flat(req.object, view, lin, arena, &flat, &flat_len, &flat_ops), 0);
    assert_int_equal(adm_jsonpatch_diff(req.object, root, arena, &mut, &mut_len, &mut_ops), 0);
    assert_int_equal(flat_ops, 1);
    assert_int_equal(flat_len, mut_len);
    assert_memory_equal(flat, mut, mut_len);

    other = yyjson_mut_doc_new(NULL);
    yyjson_mut_doc_set_root(other, yyjson_val_mut_copy(other, req.object));
    adm_attrs_set_object(&attrs, other);
    assert_non_null(adm_attrs_object(&attrs));
    assert_int_equal(lin->nruns, 0);
    yyjson_mut_doc_free(other);
    req.object = NULL;
}

/*
 * adm_attrs_is and adm_attrs_kind_is compare with the lengths adm_attrs_init took: equal text
 * only, never a prefix or an extension of it, with literal and computed arguments alike; a
 * subresource makes adm_attrs_is false.
 */
static void test_is_and_kind_is(void **state)
{
    char pods[] = "pods", group[] = "apps";

    (void)state;
    req.kind.group = "";
    req.kind.kind = "Pod";
    req.resource.group = "";
    req.resource.resource = "pods";
    req.sub_resource = "";
    adm_attrs_init(&attrs, &req, arena);
    assert_true(adm_attrs_is(&attrs, "", "pods"));
    assert_true(adm_attrs_is(&attrs, "", pods));
    assert_false(adm_attrs_is(&attrs, "", "pod"));
    assert_false(adm_attrs_is(&attrs, "", "podsx"));
    assert_false(adm_attrs_is(&attrs, "apps", "pods"));
    assert_false(adm_attrs_is(&attrs, group, pods));
    assert_true(adm_attrs_kind_is(&attrs, "", "Pod"));
    assert_false(adm_attrs_kind_is(&attrs, "", "Po"));
    assert_false(adm_attrs_kind_is(&attrs, "", "Pods"));
    assert_false(adm_attrs_kind_is(&attrs, "policy", "Pod"));

    req.kind.group = "apps";
    req.kind.kind = "Deployment";
    req.resource.group = "apps";
    req.resource.resource = "deployments";
    adm_attrs_init(&attrs, &req, arena);
    assert_true(adm_attrs_is(&attrs, group, "deployments"));
    assert_false(adm_attrs_is(&attrs, "", "deployments"));
    assert_false(adm_attrs_is(&attrs, "app", "deployments"));
    assert_true(adm_attrs_kind_is(&attrs, "apps", "Deployment"));
    assert_false(adm_attrs_kind_is(&attrs, "apps.k8s.io", "Deployment"));

    req.sub_resource = "scale";
    adm_attrs_init(&attrs, &req, arena);
    assert_false(adm_attrs_is(&attrs, "apps", "deployments"));
    assert_true(adm_attrs_kind_is(&attrs, "apps", "Deployment"));
    memset(&req, 0, sizeof(req));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dropped_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_total_and_item_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_after_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_repeats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_members_one_by_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ensure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lineage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_is_and_kind_is, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

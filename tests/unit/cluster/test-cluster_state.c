/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster state from files: the built-in default, multi-document YAML, JSON, List and <Kind>List,
 * directories (order, filtering), the namespace name label, scope handling, lookups and lists, and
 * every load error with its exact message. Files are written to a fresh temporary directory that
 * the test works in, so messages carry short relative names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/cluster/cluster_state.h"

static char tmpdir[] = "/tmp/adm-cluster-state-XXXXXX";
static char oldcwd[4096];

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    if (getcwd(oldcwd, sizeof(oldcwd)) == NULL || mkdtemp(tmpdir) == NULL || chdir(tmpdir) != 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    char cmd[256];

    if (chdir(oldcwd) != 0) {
        return -1;
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static adm_cluster_state_t *load1(const char *path)
{
    adm_cluster_state_t *cs = NULL;
    char err[512] = "";
    int rc = adm_cluster_state_load(&path, 1, &cs, err, sizeof(err));

    if (rc != 0) {
        fail_msg("load %s: %d %s", path, rc, err);
    }
    return cs;
}

static const char *label(yyjson_val *obj, const char *key)
{
    return yyjson_get_str(yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "labels"), key));
}

static const char *name_of(yyjson_val *obj)
{
    return yyjson_get_str(yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "name"));
}

static void test_default(void **state)
{
    static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    adm_cluster_state_t *cs = NULL;
    char err[256] = "";
    yyjson_val *const *all;
    size_t n;

    assert_int_equal(adm_cluster_state_load(NULL, 0, &cs, err, sizeof(err)), 0);
    /* what a new cluster holds: four namespaces, each with its "default" ServiceAccount */
    assert_int_equal(adm_cluster_state_count(cs), 8);
    all = adm_cluster_state_list(cs, "", "Namespace", NULL, &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++) {
        yyjson_val *ns = adm_cluster_state_get(cs, "", "Namespace", "", names[i]);

        assert_non_null(ns);
        assert_ptr_equal(all[i], ns);
        assert_string_equal(label(ns, "kubernetes.io/metadata.name"), names[i]);
        assert_non_null(adm_cluster_state_get(cs, "", "ServiceAccount", names[i], "default"));
    }
    /* NULL namespace is cluster scope too */
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", NULL, "default"));
    assert_null(adm_cluster_state_get(cs, "", "Namespace", "", "nope"));
    assert_null(adm_cluster_state_get(cs, "", "Namespace", "default", "default"));
    assert_null(adm_cluster_state_get(cs, "apps", "Namespace", "", "default"));
    assert_null(adm_cluster_state_list(cs, "", "Pod", NULL, &n));
    assert_int_equal(n, 0);
    adm_cluster_state_free(cs);
    adm_cluster_state_free(NULL);
}

static void test_multi_document_yaml(void **state)
{
    adm_cluster_state_t *cs;
    yyjson_val *ns, *lr, *dep;
    yyjson_val *const *items;
    size_t n;

    write_file("state.yaml", "apiVersion: v1\n"
                             "kind: Namespace\n"
                             "metadata:\n"
                             "  name: team-a\n"
                             "  labels: {env: prod}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: LimitRange\n"
                             "metadata: {name: limits, namespace: team-a}\n"
                             "---\n"
                             "# only a comment\n"
                             "---\n"
                             "apiVersion: apps/v1\n"
                             "kind: Deployment\n"
                             "metadata: {name: web, namespace: team-a}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: LimitRange\n"
                             "metadata: {name: other, namespace: team-b}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: LimitRange\n"
                             "metadata: {name: second, namespace: team-a}\n");
    cs = load1("state.yaml");
    assert_int_equal(adm_cluster_state_count(cs), 5);
    ns = adm_cluster_state_get(cs, "", "Namespace", "", "team-a");
    assert_non_null(ns);
    assert_string_equal(label(ns, "env"), "prod");
    assert_string_equal(label(ns, "kubernetes.io/metadata.name"), "team-a");
    lr = adm_cluster_state_get(cs, "", "LimitRange", "team-a", "limits");
    assert_non_null(lr);
    assert_null(adm_cluster_state_get(cs, "", "LimitRange", "", "limits"));
    dep = adm_cluster_state_get(cs, "apps", "Deployment", "team-a", "web");
    assert_non_null(dep);
    assert_null(adm_cluster_state_get(cs, "", "Deployment", "team-a", "web"));

    items = adm_cluster_state_list(cs, "", "LimitRange", "team-a", &n);
    assert_int_equal(n, 2);
    assert_string_equal(name_of(items[0]), "limits");
    assert_string_equal(name_of(items[1]), "second");
    items = adm_cluster_state_list(cs, "", "LimitRange", NULL, &n);
    assert_int_equal(n, 3);
    assert_string_equal(name_of(items[0]), "limits");
    assert_string_equal(name_of(items[1]), "other");
    assert_string_equal(name_of(items[2]), "second");
    items = adm_cluster_state_list(cs, "", "LimitRange", "team-c", &n);
    assert_null(items);
    assert_int_equal(n, 0);
    adm_cluster_state_free(cs);
}

static void test_namespace_label(void **state)
{
    adm_cluster_state_t *cs;

    write_file("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: no-labels}\n"
                          "---\n"
                          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: wrong\n"
                          "  labels: {kubernetes.io/metadata.name: other, keep: 'yes'}\n"
                          "---\n"
                          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: right\n"
                          "  labels: {kubernetes.io/metadata.name: right}\n"
                          "---\n"
                          "apiVersion: v1\nkind: Namespace\nmetadata: {name: null-labels, labels: null}\n");
    cs = load1("ns.yaml");
    assert_string_equal(
        label(adm_cluster_state_get(cs, "", "Namespace", "", "no-labels"), "kubernetes.io/metadata.name"),
        "no-labels");
    assert_string_equal(
        label(adm_cluster_state_get(cs, "", "Namespace", "", "wrong"), "kubernetes.io/metadata.name"),
        "wrong");
    assert_string_equal(label(adm_cluster_state_get(cs, "", "Namespace", "", "wrong"), "keep"), "yes");
    assert_string_equal(
        label(adm_cluster_state_get(cs, "", "Namespace", "", "right"), "kubernetes.io/metadata.name"),
        "right");
    assert_string_equal(
        label(adm_cluster_state_get(cs, "", "Namespace", "", "null-labels"), "kubernetes.io/metadata.name"),
        "null-labels");
    adm_cluster_state_free(cs);
}

static void test_lists_and_json(void **state)
{
    adm_cluster_state_t *cs;
    const char *paths[] = {"list.json", "typed.yaml"};
    char err[256] = "";
    yyjson_val *sc;

    write_file("list.json", "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
                            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"j1\"}},"
                            "{\"apiVersion\":\"storage.k8s.io/"
                            "v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"fast\"}}]}");
    /* A <Kind>List as the API server returns it: items without apiVersion and kind. */
    write_file("typed.yaml", "apiVersion: v1\n"
                             "kind: NamespaceList\n"
                             "metadata: {resourceVersion: '12'}\n"
                             "items:\n"
                             "- metadata: {name: t1}\n"
                             "- apiVersion: v1\n"
                             "  kind: Namespace\n"
                             "  metadata: {name: t2}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: List\n"
                             "items: []\n");
    assert_int_equal(adm_cluster_state_load(paths, 2, &cs, err, sizeof(err)), 0);
    assert_int_equal(adm_cluster_state_count(cs), 4);
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", "", "j1"));
    sc = adm_cluster_state_get(cs, "storage.k8s.io", "StorageClass", "", "fast");
    assert_non_null(sc);
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", "", "t1"));
    assert_string_equal(
        label(adm_cluster_state_get(cs, "", "Namespace", "", "t1"), "kubernetes.io/metadata.name"), "t1");
    assert_non_null(adm_cluster_state_get(cs, "", "Namespace", "", "t2"));
    adm_cluster_state_free(cs);
}

static void test_scope(void **state)
{
    adm_cluster_state_t *cs;
    size_t n;

    /* Cluster-scoped kinds ignore a stated namespace; unknown kinds keep what they state. */
    write_file("scope.yaml", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                             "metadata: {name: high, namespace: ignored}\n"
                             "---\n"
                             "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns1}\n"
                             "---\n"
                             "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n");
    cs = load1("scope.yaml");
    assert_non_null(adm_cluster_state_get(cs, "scheduling.k8s.io", "PriorityClass", "", "high"));
    assert_null(adm_cluster_state_get(cs, "scheduling.k8s.io", "PriorityClass", "ignored", "high"));
    assert_non_null(adm_cluster_state_get(cs, "example.com", "Widget", "ns1", "w"));
    assert_non_null(adm_cluster_state_get(cs, "example.com", "Gadget", "", "g"));
    adm_cluster_state_list(cs, "example.com", "Gadget", "", &n);
    assert_int_equal(n, 1);
    adm_cluster_state_free(cs);
}

static void test_directory(void **state)
{
    adm_cluster_state_t *cs;
    yyjson_val *const *items;
    size_t n;

    assert_int_equal(mkdir("dir", 0755), 0);
    assert_int_equal(mkdir("dir/sub", 0755), 0);
    assert_int_equal(mkdir("dir/sub.yaml", 0755), 0);
    write_file("dir/b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: from-b}\n");
    write_file("dir/a.yml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: from-a}\n");
    write_file("dir/c.json",
               "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"from-c\"}}");
    write_file("dir/.hidden.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: hidden}\n");
    write_file("dir/notes.txt", "not yaml: [\n");
    write_file("dir/README", "kind: nothing\n");
    write_file("dir/sub/d.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: nested}\n");
    assert_int_equal(symlink("b.yaml", "dir/z-link.yaml"), 0);

    /* The symlink names the same object as b.yaml: a duplicate, reported with both places. */
    {
        const char *p = "dir";
        char err[512] = "";

        cs = NULL;
        assert_int_equal(adm_cluster_state_load(&p, 1, &cs, err, sizeof(err)), ADM_EINVAL);
        assert_null(cs);
        assert_string_equal(err, "dir/z-link.yaml: document 1: Namespace \"from-b\" is defined twice "
                                 "(first in dir/b.yaml document 1)");
    }
    assert_int_equal(unlink("dir/z-link.yaml"), 0);
    cs = load1("dir/");
    assert_int_equal(adm_cluster_state_count(cs), 3);
    items = adm_cluster_state_list(cs, "", "Namespace", NULL, &n);
    assert_int_equal(n, 3);
    assert_string_equal(name_of(items[0]), "from-a");
    assert_string_equal(name_of(items[1]), "from-b");
    assert_string_equal(name_of(items[2]), "from-c");
    assert_null(adm_cluster_state_get(cs, "", "Namespace", "", "hidden"));
    assert_null(adm_cluster_state_get(cs, "", "Namespace", "", "nested"));
    adm_cluster_state_free(cs);

    /* An empty directory is an empty state, not the default one. */
    assert_int_equal(mkdir("empty", 0755), 0);
    cs = load1("empty");
    assert_int_equal(adm_cluster_state_count(cs), 0);
    assert_null(adm_cluster_state_get(cs, "", "Namespace", "", "default"));
    adm_cluster_state_free(cs);
}

typedef struct err_case_s {
    const char *text;
    int rc;
    const char *err;
} err_case_t;

static const err_case_t err_cases[] = {
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
     "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n---\n"
     "apiVersion: v1\nmetadata: {name: c}\n",
     ADM_EINVAL, "state.yaml: document 3: object has no kind"},
    {"kind: Namespace\nmetadata: {name: a}\n", ADM_EINVAL,
     "state.yaml: document 1: object has no apiVersion"},
    {"apiVersion: ''\nkind: Namespace\nmetadata: {name: a}\n", ADM_EINVAL,
     "state.yaml: document 1: object has no apiVersion"},
    {"apiVersion: v1\nkind: 3\nmetadata: {name: a}\n", ADM_EINVAL,
     "state.yaml: document 1: object has no kind"},
    {"apiVersion: v1\nkind: Namespace\n", ADM_EINVAL, "state.yaml: document 1: object has no metadata.name"},
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: ''}\n", ADM_EINVAL,
     "state.yaml: document 1: object has no metadata.name"},
    {"apiVersion: v1\nkind: Namespace\nmetadata: [name]\n", ADM_EINVAL,
     "state.yaml: document 1: object has no metadata.name"},
    {"- just\n- a list\n", ADM_EINVAL, "state.yaml: document 1: not an object"},
    {"hello\n", ADM_EINVAL, "state.yaml: document 1: not an object"},
    {"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n"
     "- {apiVersion: v1, kind: Namespace, metadata: {}}\n",
     ADM_EINVAL, "state.yaml: document 1: items[1]: object has no metadata.name"},
    {"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, metadata: {name: a}}\n", ADM_EINVAL,
     "state.yaml: document 1: items[0]: object has no kind"},
    {"apiVersion: v1\nkind: List\nitems: {a: b}\n", ADM_EINVAL,
     "state.yaml: document 1: items must be a list"},
    {"apiVersion: v1\nkind: List\nitems: [7]\n", ADM_EINVAL,
     "state.yaml: document 1: items[0]: not an object"},
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
     "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
     ADM_EINVAL, "state.yaml: document 2: Namespace \"a\" is defined twice (first in state.yaml document 1)"},
    /* the version is not part of the identity, the group is */
    {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns1}\n---\n"
     "apiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: d, namespace: ns1}\n",
     ADM_EINVAL,
     "state.yaml: document 2: Deployment.apps \"ns1/d\" is defined twice (first in state.yaml document 1)"},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\n", ADM_EINVAL,
     "state.yaml: document 1: LimitRange \"l\": metadata.namespace is required for a namespaced kind"},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: l, namespace: 5}\n", ADM_EINVAL,
     "state.yaml: document 1: LimitRange \"l\": metadata.namespace must be a string"},
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: [x]}\n", ADM_EINVAL,
     "state.yaml: document 1: Namespace \"a\": metadata.labels must be an object"},
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {n: 5}}\n", ADM_EINVAL,
     "state.yaml: document 1: Namespace \"a\": metadata.labels.n must be a string"},
    {"apiVersion: v1\nkind: [\n", ADM_EINVAL, "state.yaml: line "},
};

static void test_errors(void **state)
{
    for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
        const err_case_t *c = &err_cases[i];
        const char *p = "state.yaml";
        adm_cluster_state_t *cs = (adm_cluster_state_t *)&cs;
        char err[512] = "";
        int rc;

        write_file("state.yaml", c->text);
        rc = adm_cluster_state_load(&p, 1, &cs, err, sizeof(err));
        if (rc != c->rc || strncmp(err, c->err, strlen(c->err)) != 0 ||
            (strcmp(c->err, "state.yaml: line ") != 0 && strcmp(err, c->err) != 0)) {
            fail_msg("case %zu: rc %d err \"%s\", want %d \"%s\"", i, rc, err, c->rc, c->err);
        }
        assert_null(cs);
    }
}

static void test_duplicate_across_files_and_io(void **state)
{
    const char *paths[] = {"one.yaml", "two.yaml"};
    const char *missing = "missing.yaml";
    adm_cluster_state_t *cs = NULL;
    char err[512] = "";

    write_file("one.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: x}\n");
    write_file("two.yaml",
               "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: other}\n---\n"
               "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: x}\n");
    assert_int_equal(adm_cluster_state_load(paths, 2, &cs, err, sizeof(err)), ADM_EINVAL);
    assert_string_equal(err, "two.yaml: document 2: ServiceAccount \"x/sa\" is defined twice "
                             "(first in one.yaml document 1)");
    assert_int_equal(adm_cluster_state_load(&missing, 1, &cs, err, sizeof(err)), ADM_EIO);
    assert_string_equal(err, "missing.yaml: No such file or directory");
    assert_null(cs);
}

/* Enough objects to grow the tables several times; every one stays reachable. */
static void test_many(void **state)
{
    enum { N = 5000 };
    FILE *f = fopen("many.yaml", "w");
    adm_cluster_state_t *cs;
    size_t n;

    assert_non_null(f);
    for (int i = 0; i < N; i++) {
        fprintf(f, "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns-%d}\n", i);
        fprintf(f, "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: ns-%d}\n", i);
    }
    assert_int_equal(fclose(f), 0);
    cs = load1("many.yaml");
    assert_int_equal(adm_cluster_state_count(cs), 2 * N);
    for (int i = 0; i < N; i++) {
        char name[32];
        yyjson_val *const *items;

        snprintf(name, sizeof(name), "ns-%d", i);
        assert_non_null(adm_cluster_state_get(cs, "", "Namespace", "", name));
        assert_non_null(adm_cluster_state_get(cs, "", "ResourceQuota", name, "q"));
        items = adm_cluster_state_list(cs, "", "ResourceQuota", name, &n);
        assert_int_equal(n, 1);
        assert_ptr_equal(items[0], adm_cluster_state_get(cs, "", "ResourceQuota", name, "q"));
    }
    adm_cluster_state_list(cs, "", "ResourceQuota", NULL, &n);
    assert_int_equal(n, N);
    adm_cluster_state_list(cs, "", "Namespace", "", &n);
    assert_int_equal(n, N);
    adm_cluster_state_free(cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_multi_document_yaml),
        cmocka_unit_test(test_namespace_label),
        cmocka_unit_test(test_lists_and_json),
        cmocka_unit_test(test_scope),
        cmocka_unit_test(test_directory),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_duplicate_across_files_and_io),
        cmocka_unit_test(test_many),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

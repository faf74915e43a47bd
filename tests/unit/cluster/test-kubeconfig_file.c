/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubeconfig reader: the three lists laid out as entries whatever their items hold (judging is
 * the callers' part), lookups by name, members read with one wording for every problem, inline
 * -data decoded, file names resolved against the kubeconfig's folder, refusals and impersonation,
 * the files read (or tried) kept for the reload's watch, tokens trimmed, JSON as well as YAML.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/error.h"
#include "adm/cluster/kubeconfig_file.h"

static char dir[] = "/tmp/adm-kubeconfig-file-XXXXXX";

static const char *in_dir(const char *name)
{
    static char path[512];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(in_dir(name), "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char text[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
    "clusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: true}\n"
    "- {name: 7, cluster: {}}\n- not a mapping\n"
    "users:\n- name: u\n  user:\n    token: t\n    tokenFile: ''\n    client-key: 5\n"
    "    client-certificate: sub/c.pem\n    client-certificate-data: Q0VSVA==\n"
    "    certificate-authority: /abs/ca.pem\n    as-groups: []\n    as: ''\n"
    "- name: u\n  user: {as-groups: [admins], exec: {command: x}, auth-provider: ''}\n"
    "contexts: {c: 1}\n";

static void test_lists(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_file_t f;
    char err[256];

    (void)state;
    assert_int_equal(adm_kc_parse(a, "cfg/kc.yaml", text, strlen(text), &f, err, sizeof(err)), 0);
    assert_int_equal(f.ndocs, 1);
    assert_string_equal(f.folder, "cfg/");
    assert_int_equal(f.clusters.n, 3);
    assert_false(f.clusters.malformed);
    assert_string_equal(f.clusters.entries[0].name, "k");
    assert_string_equal(f.clusters.entries[0].field, "clusters[0].cluster");
    assert_non_null(f.clusters.entries[0].body);
    assert_null(f.clusters.entries[1].name); /* not a string */
    assert_null(f.clusters.entries[2].item); /* not a mapping */
    assert_null(f.clusters.entries[2].body);
    assert_int_equal(f.clusters.entries[2].index, 2);
    assert_int_equal(f.users.n, 2);
    /* the first of two with one name */
    assert_ptr_equal(adm_kc_find(&f.users, "u"), &f.users.entries[0]);
    assert_null(adm_kc_find(&f.clusters, "7"));
    assert_true(f.contexts.malformed);
    assert_int_equal(f.contexts.n, 0);
    assert_int_equal(f.nfiles, 0); /* parsing reads no file */
    adm_arena_destroy(a);
}

static void test_members(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_file_t f;
    const adm_kc_entry_t *u, *k;
    adm_kc_blob_t b;
    const char *s;
    char err[256];
    bool on;

    (void)state;
    assert_int_equal(adm_kc_parse(a, "cfg/kc.yaml", text, strlen(text), &f, err, sizeof(err)), 0);
    u = &f.users.entries[0];
    k = &f.clusters.entries[0];
    assert_int_equal(adm_kc_string(&f, u->body, u->field, "token", &s), 0);
    assert_string_equal(s, "t");
    assert_int_equal(adm_kc_string(&f, u->body, u->field, "tokenFile", &s), 0);
    assert_null(s); /* "" is Go's zero value: not given */
    assert_int_equal(adm_kc_string(&f, u->body, u->field, "nothing", &s), 0);
    assert_null(s);
    assert_int_equal(adm_kc_string(&f, u->body, u->field, "client-key", &s), ADM_EINVAL);
    assert_string_equal(err, "cfg/kc.yaml: users[0].user.client-key: must be a string");
    assert_int_equal(adm_kc_bool(&f, k->body, k->field, "insecure-skip-tls-verify", &on), 0);
    assert_true(on);
    assert_int_equal(adm_kc_bool(&f, k->body, k->field, "server", &on), ADM_EINVAL);
    assert_string_equal(err, "cfg/kc.yaml: clusters[0].cluster.server: must be true or false");

    /* -data wins over the file, and is decoded */
    assert_int_equal(adm_kc_blob(&f, u->body, u->field, "client-certificate", "client-certificate-data", &b),
                     0);
    assert_string_equal(b.data, "CERT");
    assert_int_equal(b.len, 4);
    assert_null(b.file);
    assert_string_equal(b.where, "users[0].user.client-certificate-data");
    /* a relative name is the kubeconfig's folder's; an absolute one stays */
    assert_int_equal(adm_kc_blob(&f, u->body, u->field, "client-certificate", "none", &b), 0);
    assert_string_equal(b.file, "cfg/sub/c.pem");
    assert_string_equal(b.where, "users[0].user.client-certificate");
    assert_int_equal(adm_kc_blob(&f, u->body, u->field, "certificate-authority", "none", &b), 0);
    assert_string_equal(b.file, "/abs/ca.pem");
    assert_int_equal(adm_kc_blob(&f, u->body, u->field, "client-key", "client-key-data", &b), ADM_EINVAL);
    assert_string_equal(err, "cfg/kc.yaml: users[0].user.client-key: must be a string");
    assert_int_equal(adm_kc_blob(&f, u->body, u->field, "none", "nothing", &b), 0);
    assert_null(b.data);
    assert_null(b.file);

    /* refusals: a member given (not null, not ""); impersonation past Go's zero values */
    assert_int_equal(adm_kc_refuse(&f, u->body, u->field, "as", "no"), 0);
    assert_null(adm_kc_impersonation(u->body));
    u = &f.users.entries[1];
    assert_int_equal(adm_kc_refuse(&f, u->body, u->field, "auth-provider", "no"), 0);
    assert_int_equal(adm_kc_refuse(&f, u->body, u->field, "exec", "not here"), ADM_EINVAL);
    assert_string_equal(err, "cfg/kc.yaml: users[1].user.exec: not here");
    assert_string_equal(adm_kc_impersonation(u->body), "as-groups");
    adm_arena_destroy(a);
}

static void test_bad_base64_and_json(void **state)
{
    static const char json[] = "{\"users\":[{\"name\":\"j\",\"user\":{\"client-key-data\":\"!!\"}}]}";
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_file_t f;
    adm_kc_blob_t b;
    char err[256];

    (void)state;
    assert_int_equal(adm_kc_parse(a, "kc.json", json, strlen(json), &f, err, sizeof(err)), 0);
    assert_string_equal(f.folder, "");
    assert_string_equal(f.users.entries[0].name, "j");
    assert_int_equal(adm_kc_blob(&f, f.users.entries[0].body, f.users.entries[0].field, "client-key",
                                 "client-key-data", &b),
                     ADM_EINVAL);
    assert_string_equal(err, "kc.json: users[0].user.client-key-data: illegal base64 data");
    assert_int_equal(adm_kc_parse(a, "kc.yaml", "a: [\n", 4, &f, err, sizeof(err)), ADM_EPARSE);
    assert_non_null(strstr(err, "kc.yaml: line "));
    assert_null(strchr(err, '\n'));
    assert_int_equal(adm_kc_parse(a, "kc.yaml", "", 0, &f, err, sizeof(err)), 0);
    assert_int_equal(f.ndocs, 0);
    assert_null(f.root);
    assert_int_equal(f.users.n, 0);
    adm_arena_destroy(a);
}

static void test_files(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_file_t f;
    char err[256], why[256], *data;
    size_t len;

    (void)state;
    write_file("kc.yaml", "users:\n- name: u\n  user: {tokenFile: tok}\n");
    write_file("tok", "\n\t s3cret \r\n");
    assert_int_equal(adm_kc_read(a, in_dir("kc.yaml"), &f, err, sizeof(err)), 0);
    assert_int_equal(f.nfiles, 1);
    assert_string_equal(f.files[0], in_dir("kc.yaml"));
    assert_int_equal(adm_kc_read_file(&f, adm_kc_path(&f, "tok"), 64, &data, &len, why, sizeof(why)), 0);
    assert_string_equal(adm_kc_trim_token(data, len), "s3cret");
    assert_int_equal(adm_kc_read_file(&f, "/nonexistent/x", 64, &data, &len, why, sizeof(why)), ADM_EIO);
    assert_string_equal(why, "/nonexistent/x: No such file or directory");
    assert_null(data);
    /* what was tried is watched too: the file may come later */
    assert_int_equal(f.nfiles, 3);
    assert_string_equal(f.files[1], in_dir("tok"));
    assert_string_equal(f.files[2], "/nonexistent/x");
    assert_int_equal(adm_kc_read(a, "/nonexistent/kc.yaml", &f, err, sizeof(err)), ADM_EIO);
    assert_string_equal(err, "/nonexistent/kc.yaml: No such file or directory");
    assert_int_equal(f.nfiles, 1);
    {
        char blank[] = " \n\t";

        assert_string_equal(adm_kc_trim_token(blank, 3), "");
    }
    adm_arena_destroy(a);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(in_dir("kc.yaml"));
    unlink(in_dir("tok"));
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_bad_base64_and_json),
        cmocka_unit_test(test_files),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

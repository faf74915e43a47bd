/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The whole-file reader (sizes, limits, errors, a FIFO) and the folder walk (suffixes, dot files,
 * name order, a kubelet-style ConfigMap mount with its ..data link, stopping early).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/fs.h"

static char dir[256];
static adm_arena_t *arena;

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void write_file(const char *name, const char *text)
{
    char p[512];
    FILE *f;

    path_of(p, sizeof(p), name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/adm-test-fs.XXXXXX");
    arena = adm_arena_create(4096);
    return mkdtemp(dir) == NULL || arena == NULL;
}

static int teardown(void **state)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    adm_arena_destroy(arena);
    return system(cmd) != 0;
}

static void test_read(void **state)
{
    char p[512], err[256] = "";
    char *data;
    size_t len;

    write_file("a.yaml", "hello\n");
    path_of(p, sizeof(p), "a.yaml");
    assert_int_equal(adm_fs_read(arena, p, 100, &data, &len, err, sizeof(err)), 0);
    assert_int_equal(len, 6);
    assert_string_equal(data, "hello\n");
    /* past the limit */
    assert_int_equal(adm_fs_read(arena, p, 5, &data, &len, err, sizeof(err)), ADM_ETOOBIG);
    assert_non_null(strstr(err, "a.yaml: larger than 5 bytes"));
    /* missing, and a folder */
    path_of(p, sizeof(p), "missing.yaml");
    assert_int_equal(adm_fs_read(arena, p, 100, &data, &len, err, sizeof(err)), ADM_EIO);
    assert_non_null(strstr(err, "missing.yaml: No such file or directory"));
    assert_int_equal(adm_fs_read(arena, dir, 100, &data, &len, err, sizeof(err)), ADM_EIO);
    assert_non_null(strstr(err, "Is a directory"));
    /* empty */
    write_file("empty.json", "");
    path_of(p, sizeof(p), "empty.json");
    assert_int_equal(adm_fs_read(arena, p, 100, &data, &len, err, sizeof(err)), 0);
    assert_int_equal(len, 0);
    assert_string_equal(data, "");
}

/* A FIFO has no size: read as it comes, across several growths of the buffer. */
static void test_read_fifo(void **state)
{
    char p[512], err[256] = "";
    char *data;
    size_t len;
    pid_t pid;
    int status;

    path_of(p, sizeof(p), "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = fopen(p, "w");

        for (int i = 0; f != NULL && i < 10000; i++) {
            fputs("0123456789", f);
        }
        _exit(f != NULL && fclose(f) == 0 ? 0 : 1);
    }
    assert_int_equal(adm_fs_read(arena, p, 1 << 20, &data, &len, err, sizeof(err)), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(len, 100000);
    assert_int_equal(memcmp(data + 99990, "0123456789", 10), 0);
    assert_int_equal(data[len], '\0');
}

typedef struct seen_s {
    char names[16][64];
    int n;
    int stop_at; /* the 1-based call that returns ADM_EINVAL, or 0 */
} seen_t;

static int note(void *arg, const char *path)
{
    seen_t *s = arg;
    const char *slash = strrchr(path, '/');

    snprintf(s->names[s->n], sizeof(s->names[s->n]), "%s", slash != NULL ? slash + 1 : path);
    s->n++;
    return s->n == s->stop_at ? ADM_EINVAL : 0;
}

static void test_walk(void **state)
{
    char p[512], target[512], err[256] = "";
    seen_t seen = {0};

    write_file("b.yml", "b");
    write_file("a.yaml", "a");
    write_file("c.json", "c");
    write_file("notes.txt", "skipped: no wanted suffix");
    write_file(".hidden.yaml", "skipped: a dot file");
    /* a ConfigMap mount: ..data links to a timestamped folder, each entry links through ..data */
    path_of(p, sizeof(p), "..2026_11_25");
    assert_int_equal(mkdir(p, 0700), 0);
    write_file("..2026_11_25/d.yaml", "d");
    path_of(p, sizeof(p), "..data");
    assert_int_equal(symlink("..2026_11_25", p), 0);
    path_of(p, sizeof(p), "d.yaml");
    assert_int_equal(symlink("..data/d.yaml", p), 0);
    /* a folder that looks like a file is skipped too */
    path_of(p, sizeof(p), "folder.yaml");
    assert_int_equal(mkdir(p, 0700), 0);

    assert_int_equal(adm_fs_walk(arena, dir, adm_fs_config_suffixes, note, &seen, err, sizeof(err)), 0);
    assert_int_equal(seen.n, 4);
    assert_string_equal(seen.names[0], "a.yaml");
    assert_string_equal(seen.names[1], "b.yml");
    assert_string_equal(seen.names[2], "c.json");
    assert_string_equal(seen.names[3], "d.yaml");

    /* a file is walked as itself, whatever its name */
    memset(&seen, 0, sizeof(seen));
    path_of(target, sizeof(target), "notes.txt");
    assert_int_equal(adm_fs_walk(arena, target, adm_fs_config_suffixes, note, &seen, err, sizeof(err)), 0);
    assert_int_equal(seen.n, 1);
    assert_string_equal(seen.names[0], "notes.txt");

    /* the callback's error stops the walk and is returned */
    memset(&seen, 0, sizeof(seen));
    seen.stop_at = 2;
    assert_int_equal(adm_fs_walk(arena, dir, adm_fs_config_suffixes, note, &seen, err, sizeof(err)),
                     ADM_EINVAL);
    assert_int_equal(seen.n, 2);

    /* a path that is not there */
    path_of(target, sizeof(target), "nowhere");
    assert_int_equal(adm_fs_walk(arena, target, adm_fs_config_suffixes, note, &seen, err, sizeof(err)),
                     ADM_EIO);
    assert_non_null(strstr(err, "nowhere: No such file or directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

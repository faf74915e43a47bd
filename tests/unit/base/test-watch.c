/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The file-watch set: a burst of writes is one callback, a change to another file of the same
 * folder is none, a kubelet-style ..data swap is seen every time once the set is rebuilt, a folder
 * named as such sees new entries, and a path whose folder is missing is refused.
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
#include "adm/base/watch.h"

static char dir[256];
static uv_loop_t loop;
static adm_watch_t *watch;
static int calls;
static char last[1024];

typedef void (*step_fn)(void);

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%.200s/%s", dir, name);
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

static void on_change(void *arg, const char *what)
{
    (void)arg;
    calls++;
    snprintf(last, sizeof(last), "%s", what);
}

static void on_end(uv_timer_t *t)
{
    uv_stop(t->loop);
}

static void on_step(uv_timer_t *t)
{
    ((step_fn)t->data)();
}

/* Runs the loop for ms, with step called after at_ms; returns the callbacks seen meanwhile. */
static int run_with(step_fn step, uint64_t at_ms, uint64_t ms)
{
    uv_timer_t s, end;
    int before = calls;

    uv_timer_init(&loop, &s);
    uv_timer_init(&loop, &end);
    s.data = (void *)step;
    uv_timer_start(&s, on_step, at_ms, 0);
    uv_timer_start(&end, on_end, ms, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&s, NULL);
    uv_close((uv_handle_t *)&end, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    return calls - before;
}

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/adm-watch.XXXXXX");
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    uv_loop_init(&loop);
    return adm_watch_create(&loop, 50, on_change, NULL, &watch);
}

static int teardown(void **state)
{
    char cmd[300];

    adm_watch_close(watch);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) != 0;
}

static void write_three_times(void)
{
    write_file("a.yaml", "1");
    write_file("a.yaml", "2");
    write_file("a.yaml", "3");
}

static void write_other(void)
{
    write_file("other.yaml", "x");
}

static void test_burst_is_one_callback(void **state)
{
    char p[512];

    write_file("a.yaml", "0");
    path_of(p, sizeof(p), "a.yaml");
    assert_int_equal(adm_watch_add(watch, p), 0);
    assert_int_equal(run_with(write_three_times, 10, 400), 1);
    assert_string_equal(last, p);
    /* another file of the same folder is not watched */
    assert_int_equal(run_with(write_other, 10, 300), 0);
    adm_watch_clear(watch);
    assert_int_equal(run_with(write_three_times, 10, 300), 0);
}

/* kubelet's atomic writer: a new ..vN folder, a ..data_tmp link renamed over ..data. */
static void swap(void)
{
    static int version;
    char v[64], p[512], tmp[512], data[512];

    snprintf(v, sizeof(v), "mount/..v%d", ++version);
    path_of(p, sizeof(p), v);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(v, sizeof(v), "mount/..v%d/tls.crt", version);
    write_file(v, "cert");
    path_of(tmp, sizeof(tmp), "mount/..data_tmp");
    path_of(data, sizeof(data), "mount/..data");
    snprintf(v, sizeof(v), "..v%d", version);
    assert_int_equal(symlink(v, tmp), 0);
    assert_int_equal(rename(tmp, data), 0);
}

static void test_kubelet_swap_every_time(void **state)
{
    char mount[512], link[512];

    path_of(mount, sizeof(mount), "mount");
    assert_int_equal(mkdir(mount, 0700), 0);
    swap();
    path_of(link, sizeof(link), "mount/tls.crt");
    assert_int_equal(symlink("..data/tls.crt", link), 0);
    for (int i = 0; i < 3; i++) {
        adm_watch_clear(watch);
        assert_int_equal(adm_watch_add(watch, link), 0);
        assert_int_equal(run_with(swap, 10, 400), 1);
        assert_non_null(strstr(last, "/mount/"));
    }
    adm_watch_clear(watch);
}

static void add_entry(void)
{
    write_file("folder/new.yaml", "x");
}

static void test_folder_sees_new_entries(void **state)
{
    char folder[512];

    path_of(folder, sizeof(folder), "folder");
    assert_int_equal(mkdir(folder, 0700), 0);
    assert_int_equal(adm_watch_add(watch, folder), 0);
    assert_int_equal(run_with(add_entry, 10, 400), 1);
    assert_non_null(strstr(last, "folder/new.yaml"));
    adm_watch_clear(watch);
}

static void test_missing_folder_is_refused(void **state)
{
    assert_int_equal(adm_watch_add(watch, "/nonexistent-admitd-folder/x.yaml"), ADM_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_is_one_callback),
        cmocka_unit_test(test_kubelet_swap_every_time),
        cmocka_unit_test(test_folder_sees_new_entries),
        cmocka_unit_test(test_missing_folder_is_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

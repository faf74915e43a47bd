/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table-test support for the plugins (plugintest.h): a request from a few fields, one hook run on
 * it as the chain would run it (the clock and a fresh slot included), configure with the values
 * of the plugin's flags, and JSON comparison for the assertions.
 */
#include "plugintest.h"

#include "adm/admission/review.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static uint64_t standing(void *arg)
{
    (void)arg;
    return 0;
}

static const adm_clock_t standing_clock = {standing, standing, NULL};
static adm_clock_t clock_now = {standing, standing, NULL};

void pt_set_clock(const adm_clock_t *clock)
{
    clock_now = clock != NULL ? *clock : standing_clock;
}

static const adm_cluster_state_t *cluster_now;
static adm_cluster_state_t *cluster_default; /* loaded once, freed at exit */

static void free_default_cluster(void)
{
    adm_cluster_state_free(cluster_default);
}

void pt_set_cluster(const adm_cluster_state_t *cs)
{
    cluster_now = cs;
}

static const adm_cluster_state_t *current_cluster(void)
{
    char err[256];

    if (cluster_now != NULL) {
        return cluster_now;
    }
    if (cluster_default == NULL) {
        if (adm_cluster_state_load(NULL, 0, &cluster_default, err, sizeof(err)) != 0) {
            fail_msg("built-in cluster state: %s", err);
        }
        atexit(free_default_cluster);
    }
    return cluster_default;
}

adm_cluster_state_t *pt_load_cluster(const char *text)
{
    char path[] = "/tmp/admitd-pt-cluster-XXXXXX.yaml";
    const char *paths[1] = {path};
    adm_cluster_state_t *cs = NULL;
    char err[512];
    int fd = mkstemps(path, 5);
    FILE *f;
    int rc;

    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    rc = adm_cluster_state_load(paths, 1, &cs, err, sizeof(err));
    unlink(path);
    if (rc != 0) {
        fail_msg("test cluster state does not load: %s", err);
    }
    return cs;
}

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

pt_request_t pt_core_request(const char *op, const char *resource, const char *kind, const char *ns,
                             const char *object, const char *old_object)
{
    pt_request_t r = {.operation = op,
                      .group = "",
                      .resource = resource,
                      .kind = kind,
                      .namespace_ = ns,
                      .object = object,
                      .old_object = old_object};

    return r;
}

const char *pt_review_json(adm_arena_t *a, const pt_request_t *r)
{
    const char *version = r->version != NULL ? r->version : "v1";

    return adm_arena_printf(
        a,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"0b5a1d6c-1111-4c1e-9a53-000000000001\","
        "\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"},"
        "\"resource\":{\"group\":\"%s\",\"version\":\"%s\",\"resource\":\"%s\"},"
        "\"subResource\":\"%s\",\"name\":\"%s\",\"namespace\":\"%s\",\"operation\":\"%s\","
        "\"userInfo\":{\"username\":\"%s\",\"groups\":%s},"
        "\"object\":%s,\"oldObject\":%s,\"dryRun\":%s}}",
        or_empty(r->group), version, or_empty(r->kind), or_empty(r->group), version, or_empty(r->resource),
        or_empty(r->sub_resource), or_empty(r->name), or_empty(r->namespace_),
        r->operation != NULL ? r->operation : "CREATE", or_empty(r->username),
        r->groups_json != NULL ? r->groups_json : "[]", r->object != NULL ? r->object : "null",
        r->old_object != NULL ? r->old_object : "null", r->dry_run ? "true" : "false");
}

pt_result_t pt_run(adm_arena_t *a, const adm_plugin_t *p, void *state, char phase, const pt_request_t *r)
{
    const char *body = pt_review_json(a, r);
    adm_review_request_t *req = adm_arena_calloc(a, 1, sizeof(*req));
    adm_attrs_t *attrs = adm_arena_calloc(a, 1, sizeof(*attrs));
    const char *problem = NULL;
    pt_result_t res;
    yyjson_val *obj;
    yyjson_alc alc;
    int (*hook)(void *, adm_attrs_t *, adm_status_t *) = phase == 'm' ? p->admit : p->validate;

    memset(&res, 0, sizeof(res));
    assert_non_null(body);
    assert_non_null(hook);
    if (adm_review_decode(a, body, strlen(body), req, &problem) != 0) {
        fail_msg("test request does not decode: %s\n%s", problem, body);
    }
    adm_attrs_init(attrs, req, a);
    attrs->clock = &clock_now;
    attrs->cluster = current_cluster();
    attrs->slot = adm_arena_calloc(a, 1, sizeof(*attrs->slot)); /* each run is a request of its own */
    assert_non_null(attrs->slot);
    res.rc = hook(state, attrs, &res.status);
    res.changed = attrs->changed;
    res.attrs = attrs;
    obj = adm_attrs_object(attrs);
    adm_json_alc_init(&alc, a);
    res.object = obj != NULL ? yyjson_val_write_opts(obj, 0, &alc, NULL, NULL) : "null";
    return res;
}

int pt_configure(const adm_plugin_t *p, const char *config, const adm_options_t *opts, void **state,
                 char *err, size_t err_len)
{
    adm_plugin_config_t cfg = {0};
    adm_opt_value_t values[16];
    yyjson_doc *doc = NULL;
    int rc;

    assert_true(adm_options_count(p->options) <= sizeof(values) / sizeof(values[0]));
    adm_options_values(opts, p->options, values);
    if (config != NULL) {
        doc = yyjson_read(config, strlen(config), 0);
        if (doc == NULL) {
            fail_msg("test configuration is not JSON: %s", config);
        }
        cfg.config = yyjson_doc_get_root(doc);
    }
    cfg.source = "test.yaml";
    cfg.options = values;
    *state = NULL;
    err[0] = '\0';
    rc = p->configure != NULL ? p->configure(&cfg, state, err, err_len) : 0;
    yyjson_doc_free(doc);
    return rc;
}

bool pt_json_equal(const char *a, const char *b)
{
    yyjson_doc *da = yyjson_read(a, strlen(a), 0);
    yyjson_doc *db = yyjson_read(b, strlen(b), 0);
    bool eq = da != NULL && db != NULL && yyjson_equals(yyjson_doc_get_root(da), yyjson_doc_get_root(db));

    yyjson_doc_free(da);
    yyjson_doc_free(db);
    return eq;
}

void pt_assert_json_equal(const char *got, const char *want, const char *file, int line)
{
    if (got == NULL || want == NULL || !pt_json_equal(got, want)) {
        fail_msg("%s:%d: JSON differs\n  got:  %s\n  want: %s", file, line, got != NULL ? got : "(null)",
                 want != NULL ? want : "(null)");
    }
}

adm_arena_t *pt_arena;

int pt_group_setup(void **state)
{
    (void)state;
    pt_arena = adm_arena_create(1 << 16);
    return pt_arena == NULL;
}

int pt_group_teardown(void **state)
{
    (void)state;
    pt_set_cluster(NULL);
    adm_arena_destroy(pt_arena);
    pt_arena = NULL;
    return 0;
}

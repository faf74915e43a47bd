/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DefaultTolerationSeconds: gives every pod (create and update) NoExecute tolerations for the
 * not-ready and unreachable taints, for --default-{not-ready,unreachable}-toleration-seconds (its
 * two flags, declared below), unless it already tolerates them. An empty key or effect counts as
 * tolerating (kube ignores the operator and value here).
 */
#include "adm/admission/plugin.h"
#include "adm/admission/podutil.h"
#include "adm/base/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct state_s {
    int64_t not_ready_seconds;
    int64_t unreachable_seconds;
} state_t;

/* kube-apiserver's flags for the plugin; configure gets their values in this order. */
enum { NOT_READY, UNREACHABLE };

static const adm_option_t options[] = {
    [NOT_READY] = {.name = "--default-not-ready-toleration-seconds",
                   .type = ADM_OPT_UINT,
                   .def = "300",
                   .min = 0,
                   .max = INT64_MAX,
                   .help = "tolerationSeconds for node.kubernetes.io/not-ready"},
    [UNREACHABLE] = {.name = "--default-unreachable-toleration-seconds",
                     .type = ADM_OPT_UINT,
                     .def = "300",
                     .min = 0,
                     .max = INT64_MAX,
                     .help = "tolerationSeconds for node.kubernetes.io/unreachable"},
    {0},
};

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    state_t *s = malloc(sizeof(*s));

    if (s == NULL) {
        return ADM_ENOMEM;
    }
    /* at most INT64_MAX (the rows' bounds) */
    s->not_ready_seconds = (int64_t)cfg->options[NOT_READY].u;
    s->unreachable_seconds = (int64_t)cfg->options[UNREACHABLE].u;
    *state = s;
    return 0;
}

static bool tolerates(const adm_toleration_t *t, const char *key)
{
    return (t->key[0] == '\0' || strcmp(t->key, key) == 0) &&
           (t->effect[0] == '\0' || strcmp(t->effect, "NoExecute") == 0);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    const state_t *s = state;
    yyjson_val *tolerations;
    yyjson_val *t;
    adm_toleration_t add[2];
    size_t n = 0;
    yyjson_arr_iter it;
    bool not_ready = false;
    bool unreachable = false;

    if (!adm_attrs_is(attrs, "", "pods")) {
        return ADM_OK;
    }
    if (!adm_attrs_has_object(attrs) || !adm_attrs_kind_is(attrs, "", "Pod")) {
        return adm_status_bad_request(st, attrs->arena, "expected *api.Pod but got %s",
                                      attrs->req->kind.kind[0] != '\0' ? attrs->req->kind.kind : "<nil>");
    }
    /* the tolerations alone: after an earlier plugin's change, a view of the whole pod costs a copy */
    tolerations = adm_attrs_get(attrs, "spec", "tolerations", NULL);
    yyjson_arr_iter_init(tolerations, &it);
    for (t = yyjson_arr_iter_next(&it); t != NULL; t = yyjson_arr_iter_next(&it)) {
        adm_toleration_t tol = adm_toleration_read(t);

        not_ready = not_ready || tolerates(&tol, "node.kubernetes.io/not-ready");
        unreachable = unreachable || tolerates(&tol, "node.kubernetes.io/unreachable");
    }
    if (not_ready && unreachable) {
        return ADM_OK;
    }
    if (!not_ready) {
        add[n++] = (adm_toleration_t){
            "node.kubernetes.io/not-ready", "Exists", "", "NoExecute", true, s->not_ready_seconds};
    }
    if (!unreachable) {
        add[n++] = (adm_toleration_t){
            "node.kubernetes.io/unreachable", "Exists", "", "NoExecute", true, s->unreachable_seconds};
    }
    return adm_pod_edit_tolerations(attrs, add, n) < 0 ? ADM_ENOMEM : ADM_OK;
}

const adm_plugin_t adm_plugin_default_toleration_seconds = {
    .name = "DefaultTolerationSeconds",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .options = options,
    .configure = configure,
    .free_state = free,
    .admit = admit,
};

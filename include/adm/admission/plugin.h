/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiled-in admission plugins: one constant descriptor per plugin (src/plugins/<name>.c),
 * and the registry of every plugin name kube-apiserver knows, in its execution order, with its
 * default and whether admitd implements it (src/plugins/plugins.def).
 *
 * This header is all a plugin needs from the chain: what a hook receives (the request's
 * attributes), the time (adm_plugin_now_ms/_ns below; plugins read no clock of their own, so a
 * test can move time by hand with adm_chain_set_clock), a pointer of its own for the request
 * (adm_plugin_slot), its flags (adm_plugin_t.options), and the asynchronous phases.
 */
#ifndef ADM_PLUGIN_H
#define ADM_PLUGIN_H

#include "adm/admission/admission.h"
#include "adm/base/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <yyjson.h>

/* What a plugin gets at start (and at every reload) to build its state. */
typedef struct adm_plugin_config_s {
    /*
     * The plugin's configuration from --admission-control-config-file: the inline `configuration:`
     * object, or the parsed file named by `path:` (YAML or JSON); NULL when none was given. It is
     * valid only during configure: keep copies, not pointers.
     */
    yyjson_val *config;
    /* Where config came from, for error messages: "FILE" or "FILE: plugins[N].configuration". */
    const char *source;
    /*
     * The values of the flags the plugin declares (adm_plugin_t.options), one per row in the
     * table's order: as given on the command line, else the row's default. Valid only during
     * configure.
     */
    const adm_opt_value_t *options;
    struct adm_webhooks_s *webhooks; /* downstream webhooks (webhooks.h), or NULL when none run */
    bool api; /* admitd talks to an API server (--kubeconfig, --in-cluster): live calls are possible */
} adm_plugin_config_t;

/*
 * What a plugin whose phase finishes later (the webhook plugins) gets from the chain: it returns
 * ADM_AGAIN and calls adm_async_done() exactly once, unless the chain cancels it first (cancel is
 * then called, and the plugin must drop everything it started).
 */
typedef struct adm_async_s adm_async_t;
struct adm_async_s {
    uint64_t deadline_ms;      /* when the answer is due, on adm_plugin_now_ms's scale */
    unsigned round;            /* mutating phase: 0, or 1 when the chain runs again (reinvocation) */
    bool reinvoke;             /* set by a mutating plugin: a webhook changed the object, run round 1 */
    void (*cancel)(void *arg); /* set by the plugin while its work is outstanding */
    void *cancel_arg;
    /* private to the chain */
    void *run;
};

/** Ends an ADM_AGAIN phase: rc is ADM_OK, ADM_DECLINED (st filled) or ADM_ENOMEM. */
void adm_async_done(adm_async_t *async, int rc, const adm_status_t *st);

typedef struct adm_plugin_s {
    const char *name;    /* as kube-apiserver registers it, e.g. "DefaultTolerationSeconds" */
    unsigned operations; /* ADM_OPS_* bits the plugin handles; others skip it (admission.Handler) */
    /*
     * Optional. The command-line flags of the plugin (kube-apiserver's flag names, e.g.
     * DefaultTolerationSeconds' two), a table ended by a row whose name is NULL: admitd's flag
     * parser takes them and --help lists them (adm_plugin_declare_options), whether the plugin is
     * enabled or not, and configure gets their values in cfg->options.
     */
    const adm_option_t *options;
    /*
     * Optional. The kinds of cluster state the plugin reads through adm_plugin_cluster(), as
     * "group/Kind" ("/Namespace" for core, "scheduling.k8s.io/PriorityClass"), a list ended by
     * NULL: every kind it looks up, as kube's plugin takes a lister of each from its informer
     * factory. With --kubeconfig or --in-cluster the informer (informer.h) keeps a cache of each
     * kind an enabled plugin names (and of Namespaces whenever a webhook has a namespaceSelector),
     * /readyz waiting until each has synced; a kind no enabled plugin names is answered by
     * --cluster-state alone. File state ignores it. A kind must be one informer.c can watch.
     */
    const char *const *reads;
    /*
     * Optional. Builds the plugin's state from its configuration. Returns 0, or ADM_EINVAL with one
     * line in err naming cfg->source, the field and the problem, e.g.
     * "FILE: plugins[0].configuration: limits[0].qps: must be positive". *state may stay NULL.
     */
    int (*configure)(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len);
    void (*free_state)(void *state); /* optional; called with what configure set */
    /*
     * The phases; either may be NULL. Each returns ADM_OK to admit (a mutating hook may have
     * changed the object through adm_attrs_mutable_object()), ADM_DECLINED with *st filled through
     * the adm_status_* constructors to reject, or ADM_ENOMEM.
     */
    int (*admit)(void *state, adm_attrs_t *attrs, adm_status_t *st);
    int (*validate)(void *state, adm_attrs_t *attrs, adm_status_t *st);
    /* Phases that may finish later: as above, or ADM_AGAIN and adm_async_done() afterwards. */
    int (*admit_async)(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async);
    int (*validate_async)(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async);
} adm_plugin_t;

/* One row of the registry. */
typedef struct adm_plugin_info_s {
    const char *name;
    bool default_on;            /* in kube-apiserver's default set */
    const char *type;           /* "mutating", "validating" or "mutating, validating" */
    const adm_plugin_t *plugin; /* NULL: known to kube-apiserver, not implemented by admitd yet */
} adm_plugin_info_t;

/** Every known plugin in kube-apiserver's execution order; *count set to the number of rows. */
const adm_plugin_info_t *adm_plugin_registry(size_t *count);

/** The registry row for name (exact, case-sensitive as kube-apiserver), or NULL. */
const adm_plugin_info_t *adm_plugin_find(const char *name);

/** Prints the --list-plugins table. */
void adm_plugin_list(FILE *out);

/**
 * Declares the flags of every implemented plugin (adm_plugin_t.options) in o, in the registry's
 * order, so that adm_options_parse takes them and adm_options_usage lists them. Call it after
 * adm_options_defaults. A table that cannot be declared is a programming error (assert; the
 * unit tests declare every table).
 */
void adm_plugin_declare_options(adm_options_t *o);

/* ---- inline accessors ---- */

/**
 * The chain's loop time in milliseconds (adm_clock_t.now_ms): what a deadline is compared with,
 * e.g. adm_plugin_now_ms(attrs) >= async->deadline_ms. As cheap as uv_now.
 */
static inline uint64_t adm_plugin_now_ms(const adm_attrs_t *attrs)
{
    return attrs->clock->now_ms(attrs->clock->arg);
}

/**
 * The cluster state (adm/cluster/cluster_state.h) the request reads: the Namespaces, LimitRanges,
 * PriorityClasses ... that kube-apiserver's plugins get from their informers. It is the state the
 * request started with and stays valid until the request ends. Never NULL in a chain; a plugin
 * reads it through adm_cluster_state_get / adm_cluster_state_list.
 */
static inline const struct adm_cluster_state_s *adm_plugin_cluster(const adm_attrs_t *attrs)
{
    return attrs->cluster;
}

/** The chain's monotonic clock in nanoseconds (adm_clock_t.now_ns), for rates; as uv_hrtime. */
static inline uint64_t adm_plugin_now_ns(const adm_attrs_t *attrs)
{
    return attrs->clock->now_ns(attrs->clock->arg);
}

/**
 * The running plugin's own pointer for this request (nginx's r->ctx[module.ctx_index]): NULL when
 * the request starts, then whatever the plugin stores, which the chain never reads. Each enabled
 * plugin has one, kept for the whole request: through both rounds of the mutating phase
 * (reinvocation) and into the validating phase. Call it in a hook (an asynchronous hook keeps the
 * pointer for its callbacks), and point the slot at arena memory, which lives as long.
 */
static inline void **adm_plugin_slot(adm_attrs_t *attrs)
{
    return attrs->slot;
}

#endif

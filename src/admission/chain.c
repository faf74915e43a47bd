/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission chain: builds the enabled plugins from the flags and the AdmissionConfiguration,
 * then runs them over one request, phase after phase, waiting where a webhook plugin answers
 * later. Besides the request, it hands each hook the clock plugins read and the plugin's own
 * per-request slot.
 */
#include "adm/admission/chain.h"

#include "adm/admission/admission.h"
#include "adm/admission/admission_config.h"
#include "adm/admission/jsonpatch.h"
#include "adm/admission/plugin.h"
#include "adm/admission/trace.h"
#include "adm/base/admission_metrics.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/cluster_state.h"
#include "adm/cluster/cluster_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct stage_s {
    const adm_plugin_t *plugin;
    void *state;
} stage_t;

struct adm_chain_s {
    stage_t *stages; /* enabled plugins in execution order */
    const char **names;
    int *metric_ids;  /* per stage: its name in admitd_admission_controller_duration_seconds */
    uint8_t *runs_on; /* per stage: its phase_ops, for step() to pass over the others in one test */
    size_t nstages;
    const char **left_out; /* default plugins admitd does not implement yet */
    size_t nleft_out;
    adm_clock_t clock; /* what plugins read through attrs->clock */
    /* what plugins read through attrs->cluster: --cluster-state loaded by the chain (the built-in
       namespaces without it) when owns_cluster, else the sources' borrowed one */
    adm_cluster_state_t *cluster;
    adm_cluster_store_t *store; /* borrowed informer caches, or NULL */
    bool owns_cluster;
    unsigned refs;              /* the creator's and one per run under way (one loop: no atomics) */
    adm_chain_sources_t source; /* what was borrowed, and whom to tell when the chain goes */
    char **files;               /* the AdmissionConfiguration and its path: files */
    size_t nfiles;
};

static uint64_t hrtime_ns(void *arg)
{
    (void)arg;
    return uv_hrtime();
}

/* Without a loop: loop time is uv_hrtime in ms too, only not cached. */
static uint64_t hrtime_ms(void *arg)
{
    (void)arg;
    return uv_hrtime() / 1000000;
}

static uint64_t loop_ms(void *arg)
{
    return uv_now(arg);
}

void adm_chain_use_cluster_store(adm_chain_t *c, adm_cluster_store_t *store)
{
    c->store = store;
    adm_cluster_state_use_store(c->cluster, store);
}

void adm_chain_set_clock(adm_chain_t *c, const adm_clock_t *clock)
{
    c->clock = *clock;
}

void adm_chain_use_loop(adm_chain_t *c, struct uv_loop_s *loop)
{
    c->clock.now_ms = loop_ms;
    c->clock.now_ns = hrtime_ns;
    c->clock.arg = loop;
}

/* Calls fn for each name of a comma-separated list; stops at the first non-zero return. */
static int each_name(const char *list, int (*fn)(const char *name, void *arg), void *arg)
{
    char name[128];

    while (*list != '\0') {
        const char *end = strchr(list, ',');
        size_t len = end != NULL ? (size_t)(end - list) : strlen(list);
        int rc;

        /* kube's StringSlice flag trims nothing, but a space after a comma is a common slip */
        while (len > 0 && *list == ' ') {
            list++;
            len--;
        }
        while (len > 0 && list[len - 1] == ' ') {
            len--;
        }
        if (len >= sizeof(name)) {
            len = sizeof(name) - 1;
        }
        memcpy(name, list, len);
        name[len] = '\0';
        if (len > 0) {
            rc = fn(name, arg);
            if (rc != 0) {
                return rc;
            }
        }
        list = end != NULL ? end + 1 : list + strlen(list);
    }
    return 0;
}

static int is_name(const char *candidate, void *name)
{
    return strcmp(candidate, name) == 0;
}

static bool in_list(const char *list, const char *name)
{
    return each_name(list, is_name, (void *)name) != 0;
}

typedef struct check_ctx_s {
    const char *flag;
    bool enabling;
    char *err;
    size_t err_len;
} check_ctx_t;

static int check_name(const char *name, void *arg)
{
    check_ctx_t *ctx = arg;
    const adm_plugin_info_t *info = adm_plugin_find(name);

    if (info == NULL) {
        size_t count;
        const adm_plugin_info_t *all = adm_plugin_registry(&count);
        int n =
            snprintf(ctx->err, ctx->err_len, "%s: plugin \"%s\" is unknown; known plugins:", ctx->flag, name);

        for (size_t i = 0; i < count && n > 0 && (size_t)n < ctx->err_len; i++) {
            n += snprintf(ctx->err + n, ctx->err_len - (size_t)n, "%s %s", i == 0 ? "" : ",", all[i].name);
        }
        return ADM_EINVAL;
    }
    if (ctx->enabling && info->plugin == NULL) {
        snprintf(ctx->err, ctx->err_len,
                 "%s: plugin \"%s\" is known to kube-apiserver but not implemented by admitd yet (see "
                 "--list-plugins)",
                 ctx->flag, name);
        return ADM_EINVAL;
    }
    return 0;
}

/* An empty chain with room for count stages, on the default clock; NULL when out of memory. */
static adm_chain_t *chain_new(size_t count)
{
    adm_chain_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->stages = calloc(count, sizeof(*c->stages));
    c->names = calloc(count, sizeof(*c->names));
    c->left_out = calloc(count, sizeof(*c->left_out));
    c->metric_ids = calloc(count, sizeof(*c->metric_ids));
    c->runs_on = calloc(count, sizeof(*c->runs_on));
    if (c->stages == NULL || c->names == NULL || c->left_out == NULL || c->metric_ids == NULL ||
        c->runs_on == NULL) {
        adm_chain_destroy(c);
        return NULL;
    }
    c->clock.now_ms = hrtime_ms;
    c->clock.now_ns = hrtime_ns;
    c->refs = 1;
    return c;
}

/*
 * The operations for which p has a hook in each phase, as phase_bit() numbers them: the mutating
 * phase's in the low four bits, the validating phase's in the high four. Fixed with the chain (a
 * plugin's table is const), so a reload's new chain computes its own.
 */
static uint8_t phase_ops(const adm_plugin_t *p)
{
    unsigned ops = p->operations & ADM_OPS_ALL;
    unsigned admit = p->admit != NULL || p->admit_async != NULL ? ops : 0;
    unsigned validate = p->validate != NULL || p->validate_async != NULL ? ops : 0;

    return (uint8_t)(admit | validate << 4);
}

/* The bit of phase_ops for an operation in the mutating or the validating phase. */
static unsigned phase_bit(bool mutating, adm_operation_t op)
{
    return 1u << (op + (mutating ? 0 : 4));
}

/* Runs p's configure on cfg, completed with the values of p's flags from opts. */
static int configure(const adm_plugin_t *p, const adm_options_t *opts, adm_plugin_config_t *cfg, void **state,
                     char *err, size_t err_len)
{
    size_t n = adm_options_count(p->options);
    adm_opt_value_t *values = NULL;
    int rc;

    if (n > 0) {
        values = calloc(n, sizeof(*values));
        if (values == NULL) {
            return ADM_ENOMEM;
        }
        adm_options_values(opts, p->options, values);
    }
    cfg->options = values;
    rc = p->configure(cfg, state, err, err_len);
    free(values);
    return rc;
}

int adm_chain_create(const adm_options_t *opts, adm_chain_t **out, char *err, size_t err_len)
{
    return adm_chain_create_with(opts, NULL, out, err, err_len);
}

int adm_chain_create_with(const adm_options_t *opts, struct adm_webhooks_s *webhooks, adm_chain_t **out,
                          char *err, size_t err_len)
{
    adm_chain_sources_t src = {.webhooks = webhooks};

    return adm_chain_create_from(opts, &src, out, err, err_len);
}

/* Remembers path among the files the configuration came from. */
static int add_file(adm_chain_t *c, const char *path)
{
    char **files = realloc(c->files, (c->nfiles + 1) * sizeof(*files));

    if (files == NULL) {
        return ADM_ENOMEM;
    }
    c->files = files;
    c->files[c->nfiles] = strdup(path);
    if (c->files[c->nfiles] == NULL) {
        return ADM_ENOMEM;
    }
    c->nfiles++;
    return 0;
}

/* The configuration's files: the AdmissionConfiguration and each entry's path: file. */
static int add_files(adm_chain_t *c, const char *config_file, const adm_admission_config_t *config)
{
    int rc = add_file(c, config_file);

    for (size_t i = 0; rc == 0 && i < config->nplugins; i++) {
        if (config->plugins[i].path_file != NULL) {
            rc = add_file(c, config->plugins[i].path_file);
        }
    }
    return rc;
}

int adm_chain_create_from(const adm_options_t *opts, const adm_chain_sources_t *src, adm_chain_t **out,
                          char *err, size_t err_len)
{
    struct adm_webhooks_s *webhooks = src->webhooks;
    check_ctx_t enable_ctx = {"--enable-admission-plugins", true, err, err_len};
    check_ctx_t disable_ctx = {"--disable-admission-plugins", false, err, err_len};
    adm_admission_config_t config = {0};
    adm_arena_t *config_arena = NULL;
    const adm_plugin_info_t *all;
    adm_chain_t *c;
    size_t count;
    int rc;

    *out = NULL;
    rc = each_name(opts->enable_plugins, check_name, &enable_ctx);
    if (rc == 0) {
        rc = each_name(opts->disable_plugins, check_name, &disable_ctx);
    }
    if (rc != 0) {
        return rc;
    }
    all = adm_plugin_registry(&count);
    c = chain_new(count);
    if (c == NULL) {
        return ADM_ENOMEM;
    }
    if (src->cluster != NULL) {
        c->cluster = src->cluster;
    } else {
        rc = adm_cluster_state_load(opts->cluster_states, opts->ncluster_states, &c->cluster, err, err_len);
        if (rc != 0) {
            adm_chain_destroy(c);
            return rc;
        }
        c->owns_cluster = true;
    }
    if (opts->admission_config_file != NULL) {
        config_arena = adm_arena_create(65536);
        if (config_arena == NULL) {
            adm_chain_destroy(c);
            return ADM_ENOMEM;
        }
        rc = adm_admission_config_load(config_arena, opts->admission_config_file, &config, err, err_len);
        if (rc == 0) {
            rc = add_files(c, opts->admission_config_file, &config);
        }
        if (rc != 0) {
            adm_arena_destroy(config_arena);
            adm_chain_destroy(c);
            return rc;
        }
        for (size_t i = 0; i < config.nplugins; i++) {
            if (adm_plugin_find(config.plugins[i].name) == NULL) {
                adm_log_warn(
                    "%s: plugins[%zu]: no admission plugin is named \"%s\"; its configuration is unused",
                    opts->admission_config_file, i, config.plugins[i].name);
            }
        }
    }
    for (size_t i = 0; i < count; i++) {
        bool enabled = in_list(opts->enable_plugins, all[i].name) ||
                       (all[i].default_on && !in_list(opts->disable_plugins, all[i].name));
        const adm_admission_plugin_config_t *pc;
        adm_plugin_config_t cfg = {0};
        stage_t *st;

        if (!enabled) {
            continue;
        }
        if (all[i].plugin == NULL) {
            c->left_out[c->nleft_out++] = all[i].name;
            continue;
        }
        pc = config_arena != NULL ? adm_admission_config_find(&config, all[i].name) : NULL;
        cfg.config = pc != NULL ? pc->config : NULL;
        cfg.source = pc != NULL ? pc->source
                                : (opts->admission_config_file != NULL ? opts->admission_config_file
                                                                       : "--admission-control-config-file");
        cfg.webhooks = webhooks;
        cfg.api = opts->kubeconfig != NULL || opts->in_cluster;
        st = &c->stages[c->nstages];
        st->plugin = all[i].plugin;
        if (st->plugin->configure != NULL) {
            rc = configure(st->plugin, opts, &cfg, &st->state, err, err_len);
            if (rc != 0) {
                if (rc == ADM_ENOMEM) {
                    snprintf(err, err_len, "%s: out of memory", all[i].name);
                }
                adm_arena_destroy(config_arena);
                adm_chain_destroy(c);
                return rc == ADM_ENOMEM ? rc : ADM_EINVAL;
            }
        }
        c->names[c->nstages] = all[i].name;
        c->metric_ids[c->nstages] = adm_metrics_name(all[i].name);
        c->runs_on[c->nstages] = phase_ops(st->plugin);
        c->nstages++;
    }
    adm_arena_destroy(config_arena);
    /* the release hook is told only about a chain that was made: a failed one borrowed nothing */
    c->source = *src;
    *out = c;
    return 0;
}

void adm_chain_ref(adm_chain_t *c)
{
    c->refs++;
}

void adm_chain_destroy(adm_chain_t *c)
{
    if (c == NULL || --c->refs > 0) {
        return;
    }
    for (size_t i = 0; c->stages != NULL && i < c->nstages; i++) {
        if (c->stages[i].plugin->free_state != NULL) {
            c->stages[i].plugin->free_state(c->stages[i].state);
        }
    }
    free(c->stages);
    free(c->names);
    free(c->left_out);
    if (c->owns_cluster) {
        adm_cluster_state_free(c->cluster);
    }
    for (size_t i = 0; i < c->nfiles; i++) {
        free(c->files[i]);
    }
    free(c->files);
    if (c->source.release != NULL) {
        c->source.release(c->source.release_arg);
    }
    free(c->metric_ids);
    free(c->runs_on);
    free(c);
}

void adm_chain_files(const adm_chain_t *c, void (*fn)(void *arg, const char *path), void *arg)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        fn(arg, c->files[i]);
    }
}

const adm_cluster_state_t *adm_chain_cluster(const adm_chain_t *c)
{
    return c->cluster;
}

const char *const *adm_chain_plugins(const adm_chain_t *c, size_t *count)
{
    *count = c->nstages;
    return c->names;
}

/* Joins names with ", " into buf (truncated with "..." when it does not fit). */
static void join(char *buf, size_t len, const char *const *names, size_t n)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i > 0 ? ", " : "", names[i]);

        if (w < 0 || (size_t)w >= len - used) {
            snprintf(buf + (len > 4 ? len - 4 : 0), len > 4 ? 4 : len, "...");
            return;
        }
        used += (size_t)w;
    }
}

void adm_chain_log_summary(const adm_chain_t *c)
{
    char enabled[2048], left_out[2048];

    join(enabled, sizeof(enabled), c->names, c->nstages);
    join(left_out, sizeof(left_out), c->left_out, c->nleft_out);
    adm_log_info("admission plugins, in order: %s", c->nstages > 0 ? enabled : "(none)");
    adm_log_info("cluster state: %zu objects", adm_cluster_state_count(c->cluster));
    if (c->nleft_out > 0) {
        adm_log_info("left out, on by default in kube-apiserver but not implemented by admitd yet: %s",
                     left_out);
    }
}

static void reject(adm_review_response_t *resp, const adm_status_t *st)
{
    resp->allowed = false;
    resp->code = st->code;
    resp->reason = st->reason;
    resp->message = st->message;
    resp->details = st->details;
}

/*
 * One request going through the chain. Plugins run one after another inside step(); a webhook
 * plugin may return ADM_AGAIN, and step() goes on from adm_async_done() when its calls are over.
 */
struct adm_chain_run_s {
    adm_chain_t *c;
    /* the informer store pinned while the request's arena lives (the chain's at start), and the pin */
    adm_cluster_store_t *store;
    adm_cluster_pin_t pin;
    unsigned phases;
    adm_attrs_t attrs;
    adm_review_response_t resp;
    adm_chain_done_fn done;
    void *arg;
    adm_async_t async;
    size_t next;   /* the next stage of the current phase */
    bool mutating; /* current phase */
    bool waiting;  /* an asynchronous hook owes adm_async_done() */
    bool in_hook;  /* inside that hook's first call: adm_async_done() only records */
    bool async_ready;
    int async_rc;
    adm_status_t async_st;
    bool finished;
    uint64_t phase_started_ns; /* for admitd_admission_step_duration_seconds */
    uint64_t hook_started_ns;  /* for admitd_admission_controller_duration_seconds */
    /* the clock as the last hook (or phase) ended, which is when the next hook starts: one reading
       per hook, not two; 0 when nothing was read since the run went on from elsewhere */
    uint64_t ended_ns;
    int final_rc;  /* ADM_OK, or ADM_ENOMEM when the answer is the out-of-memory 500 */
    void *slots[]; /* one per stage, for the whole request (adm_plugin_slot) */
};

static uint64_t now_ns(const adm_chain_run_t *run)
{
    return run->c->clock.now_ns(run->c->clock.arg);
}

/* The phase under way is over: its time goes to the step histogram. */
static void phase_done(adm_chain_run_t *run, bool rejected)
{
    uint64_t now = run->ended_ns != 0 ? run->ended_ns : now_ns(run);

    adm_metrics_step(run->mutating ? ADM_MX_ADMIT : ADM_MX_VALIDATE, (unsigned)run->attrs.req->operation,
                     rejected, now - run->phase_started_ns);
    run->phase_started_ns = now;
}

static void finish(adm_chain_run_t *run, int rc, const adm_status_t *st)
{
    adm_chain_t *c = run->c; /* done may free the run's arena: its reference is dropped after */
    adm_review_response_t *resp = &run->resp;
    adm_attrs_t *attrs = &run->attrs;
    adm_status_t nomem;

    run->finished = true;
    phase_done(run, rc != ADM_OK);
    resp->warnings = attrs->warnings;
    resp->nwarnings = attrs->nwarnings;
    resp->audit_annotations = attrs->annotations;
    resp->naudit_annotations = attrs->nannotations;
    if (rc == ADM_DECLINED) {
        reject(resp, st);
    } else if (rc == ADM_OK) {
        if (attrs->changed) {
            const char *patch;
            size_t len, nops;

            /* the final object, laid out now if no reader asked since the last change: what its
               lineage says is copied from the request's object is not walked */
            yyjson_val *to = adm_attrs_object(attrs);
            const adm_json_lineage_t *lin =
                attrs->lineage.origin == attrs->req->object ? &attrs->lineage : NULL;

            rc = to == NULL ? ADM_ENOMEM
                            : adm_jsonpatch_diff_flat(attrs->req->object, to, lin, attrs->arena, &patch, &len,
                                                      &nops);
            if (rc == 0 && nops > 0) {
                resp->patch = (const uint8_t *)patch;
                resp->patch_len = len;
            }
        }
        resp->allowed = rc == ADM_OK;
    }
    if (rc != ADM_OK && rc != ADM_DECLINED) {
        adm_status_nomem(&nomem);
        reject(resp, &nomem);
        run->final_rc = ADM_ENOMEM;
    }
    run->done(run->arg, resp);
    adm_chain_destroy(c);
}

/*
 * The hook of stage i ended with rc: its time, and a step of the trace for every plugin but the
 * webhook ones (only asynchronous hooks), whose calls are steps of their own. Plugins with an
 * asynchronous hook beside their synchronous one (a live GET, ResourceQuota's writes) get theirs.
 */
static void observe_hook(adm_chain_run_t *run, size_t i, int rc, const adm_status_t *st)
{
    const adm_plugin_t *p = run->c->stages[i].plugin;
    uint64_t now = now_ns(run);
    uint64_t ns = now - run->hook_started_ns;
    bool rejected = rc != ADM_OK;

    run->ended_ns = now;
    adm_metrics_controller(run->c->metric_ids[i], run->mutating ? ADM_MX_ADMIT : ADM_MX_VALIDATE,
                           (unsigned)run->attrs.req->operation, rejected, ns);
    if (run->attrs.trace != NULL && (p->admit != NULL || p->validate != NULL)) {
        adm_trace_step_t step = {
            .name = p->name,
            .outcome = rejected ? "denied" : "allowed",
            .reason = rejected && st != NULL ? st->message : NULL,
            .latency_ns = ns,
            .code = rejected && st != NULL ? st->code : 0,
            .validate = !run->mutating,
            .round = run->mutating ? run->async.round : 0,
        };

        adm_trace_add(run->attrs.trace, &step);
    }
    if (rejected) {
        adm_trace_decided_by(run->attrs.trace, p->name);
    }
}

/* The outcome of one hook: go on, or finish. Returns true when the run goes on. */
static bool after_hook(adm_chain_run_t *run, const adm_plugin_t *p, int rc, const adm_status_t *st)
{
    observe_hook(run, run->next - 1, rc, st);
    if (rc == ADM_OK) {
        return true;
    }
    if (rc == ADM_DECLINED) {
        adm_log_v(2, "%s rejected %s %s/%s: %s", p->name, run->attrs.req->operation_name,
                  run->attrs.req->namespace_, run->attrs.req->name, st->message);
    }
    finish(run, rc == ADM_DECLINED ? rc : ADM_ENOMEM, st);
    return false;
}

static void step(adm_chain_run_t *run)
{
    adm_chain_t *c = run->c;
    adm_operation_t op = run->attrs.req->operation;
    unsigned bit = phase_bit(run->mutating, op);

    for (;;) {
        const adm_plugin_t *p;
        adm_status_t st = {0};
        int rc;

        if (run->next >= c->nstages) {
            if (run->mutating && run->async.round == 0 && run->async.reinvoke) {
                /* a webhook changed the object: the mutating chain runs once more (spec 6.2, D7) */
                run->async.round = 1;
                run->async.reinvoke = false;
                run->next = 0;
                continue;
            }
            if (run->mutating && (run->phases & ADM_PHASE_VALIDATING) != 0) {
                phase_done(run, false);
                run->mutating = false;
                bit = phase_bit(false, op);
                run->next = 0;
                continue;
            }
            finish(run, ADM_OK, NULL);
            return;
        }
        /* a stage without a hook for this phase, or not for this operation, is passed over */
        if ((c->runs_on[run->next] & bit) == 0) {
            run->next++;
            continue;
        }
        p = c->stages[run->next].plugin;
        run->attrs.slot = &run->slots[run->next];
        run->hook_started_ns = run->ended_ns != 0 ? run->ended_ns : now_ns(run);
        if ((run->mutating ? p->admit_async : p->validate_async) != NULL) {
            int (*hook)(void *, adm_attrs_t *, adm_status_t *, adm_async_t *) =
                run->mutating ? p->admit_async : p->validate_async;

            run->waiting = true;
            run->async_ready = false;
            run->in_hook = true;
            rc = hook(c->stages[run->next].state, &run->attrs, &st, &run->async);
            run->in_hook = false;
            run->next++;
            if (rc == ADM_AGAIN && !run->async_ready) {
                return; /* adm_async_done() goes on */
            }
            if (rc == ADM_AGAIN) {
                rc = run->async_rc;
                st = run->async_st;
            }
            run->waiting = false;
        } else {
            int (*hook)(void *, adm_attrs_t *, adm_status_t *) = run->mutating ? p->admit : p->validate;

            run->next++;
            rc = hook(c->stages[run->next - 1].state, &run->attrs, &st);
        }
        if (!after_hook(run, p, rc, &st)) {
            return;
        }
    }
}

void adm_async_done(adm_async_t *async, int rc, const adm_status_t *st)
{
    adm_chain_run_t *run = async->run;

    async->cancel = NULL;
    if (run->in_hook) {
        run->async_ready = true;
        run->async_rc = rc;
        if (st != NULL) {
            run->async_st = *st;
        }
        return;
    }
    run->waiting = false;
    if (after_hook(run, run->c->stages[run->next - 1].plugin, rc, st)) {
        step(run);
    }
}

static void unpin_run(void *arg)
{
    adm_chain_run_t *run = arg;

    if (run->store != NULL) {
        adm_cluster_store_unpin(run->store, &run->pin);
    }
}

adm_chain_run_t *adm_chain_start(adm_chain_t *c, unsigned phases, const adm_review_request_t *req,
                                 adm_arena_t *a, uint64_t deadline_ms, adm_chain_done_fn done, void *arg)
{
    return adm_chain_start_traced(c, phases, req, a, deadline_ms, NULL, done, arg);
}

adm_chain_run_t *adm_chain_start_traced(adm_chain_t *c, unsigned phases, const adm_review_request_t *req,
                                        adm_arena_t *a, uint64_t deadline_ms, struct adm_trace_s *trace,
                                        adm_chain_done_fn done, void *arg)
{
    /* the slots come with the run: no allocation of their own */
    adm_chain_run_t *run = adm_arena_calloc(a, 1, sizeof(*run) + c->nstages * sizeof(run->slots[0]));

    if (run == NULL) {
        return NULL;
    }
    if (c->store != NULL) {
        /* the arena goes last, after the answer is written from it: the objects read stay valid */
        if (adm_arena_on_free(a, unpin_run, run) != 0) {
            return NULL;
        }
        adm_cluster_store_pin(c->store, &run->pin);
        run->store = c->store;
    }
    adm_chain_ref(c); /* a reload may drop the creator's reference while this run goes on */
    run->c = c;
    run->phases = phases;
    run->done = done;
    run->arg = arg;
    run->async.run = run;
    run->async.deadline_ms = deadline_ms;
    run->mutating = (phases & ADM_PHASE_MUTATING) != 0;
    adm_attrs_init(&run->attrs, req, a);
    run->attrs.clock = &c->clock;
    run->attrs.cluster = c->cluster;
    run->attrs.trace = trace;
    run->phase_started_ns = now_ns(run);
    run->ended_ns = run->phase_started_ns;
    step(run);
    return run;
}

void adm_chain_cancel(adm_chain_run_t *run)
{
    if (run == NULL || run->finished) {
        return;
    }
    run->finished = true;
    if (run->waiting && run->async.cancel != NULL) {
        void (*cancel)(void *) = run->async.cancel;

        run->async.cancel = NULL;
        cancel(run->async.cancel_arg);
    }
    adm_chain_destroy(run->c);
}

typedef struct sync_result_s {
    adm_review_response_t *out;
    bool done;
} sync_result_t;

static void sync_done(void *arg, adm_review_response_t *resp)
{
    sync_result_t *r = arg;

    *r->out = *resp;
    r->done = true;
}

int adm_chain_run(adm_chain_t *c, unsigned phases, const adm_review_request_t *req, adm_arena_t *a,
                  adm_review_response_t *resp)
{
    sync_result_t r = {resp, false};
    adm_chain_run_t *run;
    adm_status_t st;

    memset(resp, 0, sizeof(*resp));
    run = adm_chain_start(c, phases, req, a, UINT64_MAX, sync_done, &r);
    if (run != NULL && !r.done) {
        /* only the webhook plugins wait, and a chain made without webhooks never does */
        adm_chain_cancel(run);
    }
    if (!r.done) {
        adm_status_nomem(&st);
        reject(resp, &st);
        return ADM_ENOMEM;
    }
    return run->final_rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd's admission configuration as generations (live_config.h): each generation is one set of
 * webhooks and the chain that borrows them; the chain's last reference (its creator's after a
 * reload, or the last request that started on it) hands the webhooks back here, to drain.
 */
#include "adm/app/live_config.h"

#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/cluster/cluster_store.h"
#include "adm/webhook/observe.h"
#include "adm/webhook/webhooks.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Who follows reloads: the informer (namespaceSelectors), the webhook Services' watches. */
#define MAX_COMMIT_HOOKS 4

typedef struct generation_s {
    adm_live_config_t *owner;
    adm_webhooks_t *webhooks; /* borrowed by chain; retired when chain goes */
    adm_chain_t *chain;
    struct generation_s *prev, *next; /* on owner->live until its chain goes */
} generation_t;

struct adm_live_config_s {
    uv_loop_t *loop;
    const adm_options_t *opts;
    generation_t *current;      /* NULL after shutdown */
    adm_chain_t *chain;         /* current->chain: what requests start on */
    adm_webhooks_t *retiring;   /* webhooks of replaced generations still finishing calls */
    adm_cluster_store_t *store; /* the informer's, lent to each chain; NULL: files only */
    generation_t *live;         /* every generation whose chain may still start calls, newest first */
    struct {
        void (*fn)(void *arg);
        void *arg;
    } committed[MAX_COMMIT_HOOKS]; /* adm_live_config_on_commit's; fn NULL: a free slot */
    bool shut_down;
};

/* The chain of g is gone: no request uses g's webhooks any more. */
static void on_chain_released(void *arg)
{
    generation_t *g = arg;

    if (g->prev != NULL) {
        g->prev->next = g->next;
    } else {
        g->owner->live = g->next;
    }
    if (g->next != NULL) {
        g->next->prev = g->prev;
    }
    adm_webhooks_retire(g->webhooks, &g->owner->retiring);
    free(g);
}

static int build(adm_live_config_t *lc, generation_t **out, char *err, size_t err_len)
{
    generation_t *g = calloc(1, sizeof(*g));
    adm_chain_sources_t src = {.release = on_chain_released};
    int rc;

    *out = NULL;
    if (g == NULL) {
        return ADM_ENOMEM;
    }
    g->owner = lc;
    rc = adm_webhooks_create(lc->loop, lc->opts, &g->webhooks, err, err_len);
    if (rc == 0) {
        src.webhooks = g->webhooks;
        src.release_arg = g;
        rc = adm_chain_create_from(lc->opts, &src, &g->chain, err, err_len);
    }
    if (rc != 0) {
        /* a chain that failed borrowed nothing: the webhooks have no call yet and go now */
        adm_webhooks_destroy(g->webhooks);
        free(g);
        return rc;
    }
    adm_chain_use_loop(g->chain, lc->loop); /* the deadlines the endpoint computes are loop time */
    if (lc->store != NULL) {
        adm_chain_use_cluster_store(g->chain, lc->store);
    }
    g->next = lc->live;
    if (lc->live != NULL) {
        lc->live->prev = g;
    }
    lc->live = g;
    *out = g;
    return 0;
}

int adm_live_config_create(uv_loop_t *loop, const adm_options_t *opts, adm_live_config_t **out, char *err,
                           size_t err_len)
{
    adm_live_config_t *lc = calloc(1, sizeof(*lc));
    int rc;

    *out = NULL;
    if (lc == NULL) {
        return ADM_ENOMEM;
    }
    lc->loop = loop;
    lc->opts = opts;
    rc = build(lc, &lc->current, err, err_len);
    if (rc != 0) {
        free(lc);
        return rc;
    }
    lc->chain = lc->current->chain;
    *out = lc;
    return 0;
}

void adm_live_config_use_cluster_store(adm_live_config_t *lc, adm_cluster_store_t *store)
{
    lc->store = store;
    if (lc->current != NULL) {
        adm_chain_use_cluster_store(lc->current->chain, store);
    }
}

bool adm_live_config_selects_namespaces(const adm_live_config_t *lc)
{
    const char *const *plugins;
    bool mutating = false, validating = false;
    size_t n = 0;

    if (lc->current == NULL) {
        return false;
    }
    plugins = adm_chain_plugins(lc->current->chain, &n);
    for (size_t i = 0; i < n; i++) {
        mutating = mutating || strcmp(plugins[i], "MutatingAdmissionWebhook") == 0;
        validating = validating || strcmp(plugins[i], "ValidatingAdmissionWebhook") == 0;
    }
    return adm_webhooks_select_namespaces(lc->current->webhooks, mutating, validating);
}

adm_chain_t *const *adm_live_config_chain(adm_live_config_t *lc)
{
    return &lc->chain;
}

void adm_live_config_log_summary(const adm_live_config_t *lc)
{
    adm_chain_log_summary(lc->current->chain);
    adm_webhooks_log_summary(lc->current->webhooks);
}

static int part_prepare(void *arg, void **pending, char *err, size_t err_len)
{
    return build(arg, (generation_t **)pending, err, err_len);
}

static void part_commit(void *arg, void *pending)
{
    adm_live_config_t *lc = arg;
    generation_t *old = lc->current;

    lc->current = pending;
    lc->chain = lc->current->chain;
    adm_live_config_log_summary(lc);
    /* the old chain goes when its last request ends, and then its webhooks drain */
    adm_chain_destroy(old->chain);
    for (size_t i = 0; i < MAX_COMMIT_HOOKS; i++) {
        if (lc->committed[i].fn != NULL) {
            lc->committed[i].fn(lc->committed[i].arg);
        }
    }
}

static void part_discard(void *arg, void *pending)
{
    adm_chain_destroy(((generation_t *)pending)->chain);
}

static void watch_one(void *arg, const char *path)
{
    adm_reload_watch(arg, path);
}

static void part_watch(void *arg, adm_reload_t *r)
{
    adm_live_config_t *lc = arg;
    const adm_options_t *o = lc->opts;

    for (size_t i = 0; i < o->nwebhook_configs; i++) {
        adm_reload_watch(r, o->webhook_configs[i]);
    }
    for (size_t i = 0; i < o->ncluster_states; i++) {
        adm_reload_watch(r, o->cluster_states[i]);
    }
    if (o->admission_config_file != NULL) {
        adm_reload_watch(r, o->admission_config_file);
    }
    if (lc->current != NULL) {
        adm_chain_files(lc->current->chain, watch_one, r);
        adm_webhooks_files(lc->current->webhooks, watch_one, r); /* kubeConfigFile and its files (D13) */
    }
}

int adm_live_config_add_reload(adm_live_config_t *lc, adm_reload_t *r)
{
    adm_reload_part_t part = {
        .name = "admission configuration",
        .prepare = part_prepare,
        .commit = part_commit,
        .discard = part_discard,
        .watch = part_watch,
        .arg = lc,
    };

    return adm_reload_add_part(r, &part);
}

void adm_live_config_shutdown(adm_live_config_t *lc)
{
    if (lc == NULL || lc->shut_down) {
        return;
    }
    lc->shut_down = true;
    if (lc->current != NULL) {
        generation_t *g = lc->current;

        lc->current = NULL;
        lc->chain = NULL;
        adm_chain_destroy(g->chain);
    }
    adm_webhooks_destroy_retiring(&lc->retiring);
}

void adm_live_config_destroy(adm_live_config_t *lc)
{
    if (lc == NULL) {
        return;
    }
    adm_live_config_shutdown(lc);
    free(lc);
}

size_t adm_live_config_connections(void *arg)
{
    const adm_live_config_t *lc = arg;
    size_t n = adm_webhooks_retiring_connections(&lc->retiring);

    if (lc->current != NULL) {
        n += adm_webhooks_connections(lc->current->webhooks);
    }
    return n;
}

int adm_live_config_proxy_metrics(void *arg, adm_buf_t *out)
{
    const adm_live_config_t *lc = arg;

    return lc->current != NULL ? adm_webhooks_proxy_metrics(lc->current->webhooks, out) : 0;
}

int adm_live_config_on_commit(adm_live_config_t *lc, void (*fn)(void *arg), void *arg)
{
    size_t free_slot = MAX_COMMIT_HOOKS;

    for (size_t i = 0; i < MAX_COMMIT_HOOKS; i++) {
        if (lc->committed[i].fn != NULL && lc->committed[i].arg == arg) {
            lc->committed[i].fn = fn; /* replaced, or removed when fn is NULL */
            return 0;
        }
        if (lc->committed[i].fn == NULL && free_slot == MAX_COMMIT_HOOKS) {
            free_slot = i;
        }
    }
    if (fn == NULL) {
        return 0;
    }
    if (free_slot == MAX_COMMIT_HOOKS) {
        return ADM_ENOMEM;
    }
    lc->committed[free_slot].fn = fn;
    lc->committed[free_slot].arg = arg;
    return 0;
}

adm_webhooks_t *adm_live_config_webhooks(const adm_live_config_t *lc)
{
    return lc->current != NULL ? lc->current->webhooks : NULL;
}

void adm_live_config_each_webhooks(const adm_live_config_t *lc, void (*fn)(void *arg, adm_webhooks_t *w),
                                   void *arg)
{
    for (generation_t *g = lc->live; g != NULL; g = g->next) {
        fn(arg, g->webhooks);
    }
}

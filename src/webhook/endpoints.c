/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The addresses an upstream spreads its calls over (issue 18, webhooks.h adm_webhooks_set_addresses):
 * which endpoint takes the next call, and changing the set while calls run. An added address is a
 * new pool that the fewest-outstanding choice sends to at once (it has none outstanding); a removed
 * one is only marked draining: it takes no new call, its calls in flight finish on their own
 * connections, and once none is left its pool is closed on a later turn of the loop (never from a
 * call's callback, whose pool may still be on the stack). Besides addresses, an upstream's one
 * endpoint may be its name (resolved on each dial, as before any set was given) or a refusal (a
 * pool that makes no connection and fails each call with the words kube's call would have met).
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "webhooks_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Connections per address at most, as for the upstreams webhooks.c makes. */
#define ENDPOINT_MAX_CONNS 128

adm_hook_endpoint_t *adm__hook_pick_endpoint(adm_hook_upstream_t *target)
{
    adm_hook_endpoint_t *best = NULL;

    /* ties go to the one picked longest ago: turns stay fair when slots come and go */
    for (size_t k = 0; k < target->nendpoints; k++) {
        adm_hook_endpoint_t *ep = &target->endpoints[k];

        if (ep->up == NULL || ep->draining) {
            continue;
        }
        if (best == NULL || ep->outstanding < best->outstanding ||
            (ep->outstanding == best->outstanding && ep->last_pick < best->last_pick)) {
            best = ep;
        }
    }
    if (best != NULL) {
        best->last_pick = ++target->picks;
    }
    return best;
}

void adm__hook_endpoint_clear(adm_hook_endpoint_t *ep)
{
    free(ep->refuse);
    memset(ep, 0, sizeof(*ep));
}

static void on_sweep(uv_timer_t *t)
{
    adm_webhooks_t *w = t->data;

    for (size_t i = 0; w != NULL && i < w->nupstreams; i++) {
        adm_hook_upstream_t *u = &w->upstreams[i];

        for (size_t k = 0; k < u->nendpoints; k++) {
            adm_hook_endpoint_t *ep = &u->endpoints[k];

            if (ep->up != NULL && ep->draining && ep->outstanding == 0) {
                adm_upstream_close(ep->up);
                adm__hook_endpoint_clear(ep);
            }
        }
    }
}

void adm__hook_endpoint_released(adm_webhooks_t *w, adm_hook_endpoint_t *ep)
{
    if (w != NULL && w->sweep != NULL && ep->draining && ep->outstanding == 0) {
        uv_timer_start(w->sweep, on_sweep, 0, 0);
    }
}

void adm__hook_endpoints_destroy(adm_webhooks_t *w)
{
    if (w->sweep != NULL) {
        w->sweep->data = NULL;
        uv_close((uv_handle_t *)w->sweep, (uv_close_cb)free);
        w->sweep = NULL;
    }
}

/* One endpoint an upstream is to have: an address, its name (addr NULL), or a refusal. */
typedef struct spec_s {
    const struct sockaddr *addr; /* NULL: the host resolved by name on each dial, or refusing */
    const char *refuse;          /* not NULL: its calls fail at once with this */
    char label[64];              /* its address label ("" by name) */
} spec_t;

static bool same(const adm_hook_endpoint_t *ep, const spec_t *sp)
{
    if (ep->up == NULL || (ep->refuse != NULL) != (sp->refuse != NULL)) {
        return false;
    }
    return strcmp(ep->address, sp->label) == 0 && (sp->refuse == NULL || strcmp(ep->refuse, sp->refuse) == 0);
}

static adm_hook_endpoint_t *find(adm_hook_upstream_t *u, const spec_t *sp)
{
    for (size_t k = 0; k < u->nendpoints; k++) {
        if (same(&u->endpoints[k], sp)) {
            return &u->endpoints[k];
        }
    }
    return NULL;
}

/* A pool for sp in a free slot of u. Returns 0, ADM_ETOOBIG (no slot) or ADM_ENOMEM. */
static int add(adm_webhooks_t *w, adm_hook_upstream_t *u, const spec_t *sp)
{
    adm_upstream_opts_t uo = {
        .host = u->host,
        .port = u->port,
        .addr = sp->addr,
        .tls = u->tls,
        .max_conns = ENDPOINT_MAX_CONNS,
        .refuse = sp->refuse,
    };
    adm_hook_endpoint_t *slot = NULL;

    for (size_t k = 0; k < u->nendpoints && slot == NULL; k++) {
        slot = u->endpoints[k].up == NULL ? &u->endpoints[k] : NULL;
    }
    if (slot == NULL && u->nendpoints == ADM_HOOK_ENDPOINTS_MAX) {
        return ADM_ETOOBIG;
    }
    if (slot == NULL) {
        slot = &u->endpoints[u->nendpoints];
    }
    memset(slot, 0, sizeof(*slot));
    if (sp->refuse != NULL) {
        slot->refuse = strdup(sp->refuse);
        if (slot->refuse == NULL) {
            return ADM_ENOMEM;
        }
    }
    if (adm_upstream_create(w->loop, &uo, &slot->up) != 0) {
        adm__hook_endpoint_clear(slot);
        return ADM_ENOMEM;
    }
    snprintf(slot->address, sizeof(slot->address), "%s", sp->label);
    if (slot == &u->endpoints[u->nendpoints]) {
        u->nendpoints++;
    }
    return 0;
}

/* "10.0.0.1:8443", "(by name)" or "(refusing)" for a log line. */
static const char *ep_name(const adm_hook_endpoint_t *ep)
{
    if (ep->refuse != NULL) {
        return "(refusing calls)";
    }
    return ep->address[0] != '\0' ? ep->address : "(by name)";
}

/* Brings u to exactly specs: additions first, so a failure leaves the old set taking calls. */
static int apply(adm_webhooks_t *w, adm_hook_upstream_t *u, const spec_t *specs, size_t n)
{
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        adm_hook_endpoint_t *ep = find(u, &specs[i]);

        if (ep != NULL) {
            ep->draining = false; /* kept, or back before it drained */
        } else if (rc == 0) {
            rc = add(w, u, &specs[i]);
        }
    }
    for (size_t k = 0; rc == 0 && k < u->nendpoints; k++) {
        adm_hook_endpoint_t *ep = &u->endpoints[k];
        bool kept = false;

        for (size_t i = 0; i < n && !kept; i++) {
            kept = same(ep, &specs[i]);
        }
        if (ep->up != NULL && !kept && !ep->draining) {
            adm_log_info("webhook upstream %s:%u: endpoint %s removed after %llu calls; %zu in flight finish "
                         "there, no new call goes to it",
                         u->host, (unsigned)u->port, ep_name(ep), (unsigned long long)ep->calls,
                         ep->outstanding);
            ep->draining = true;
            adm__hook_endpoint_released(w, ep); /* none outstanding: closed on the next turn */
        }
    }
    return rc;
}

/* Applies specs to every upstream of host:port. Returns how many, or an error of apply. */
static int apply_all(adm_webhooks_t *w, const char *host, uint16_t port, const spec_t *specs, size_t n)
{
    int found = 0;

    if (w->sweep == NULL) {
        w->sweep = malloc(sizeof(*w->sweep));
        if (w->sweep == NULL) {
            return ADM_ENOMEM;
        }
        uv_timer_init(w->loop, w->sweep);
        w->sweep->data = w;
    }
    for (size_t i = 0; i < w->nupstreams; i++) {
        adm_hook_upstream_t *u = &w->upstreams[i];
        int rc;

        if (u->port != port || strcmp(u->host, host) != 0) {
            continue;
        }
        rc = apply(w, u, specs, n);
        if (rc != 0) {
            return rc;
        }
        u->routed = true;
        found++;
    }
    return found;
}

int adm_webhooks_set_addresses(adm_webhooks_t *w, const char *host, uint16_t port,
                               const struct sockaddr_storage *addrs, size_t n)
{
    spec_t *specs;
    int rc;

    if (n == 0) {
        return ADM_EINVAL;
    }
    specs = calloc(n, sizeof(*specs));
    if (specs == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        specs[i].addr = (const struct sockaddr *)&addrs[i];
        adm_format_addr(specs[i].addr, specs[i].label, sizeof(specs[i].label));
    }
    rc = apply_all(w, host, port, specs, n);
    free(specs);
    return rc;
}

int adm_webhooks_refuse_calls(adm_webhooks_t *w, const char *host, uint16_t port, const char *label,
                              const char *reason)
{
    spec_t sp = {.refuse = reason};

    snprintf(sp.label, sizeof(sp.label), "%s", label != NULL ? label : "");
    return apply_all(w, host, port, &sp, 1);
}

int adm_webhooks_resolve_by_name(adm_webhooks_t *w, const char *host, uint16_t port)
{
    spec_t sp = {0};

    return apply_all(w, host, port, &sp, 1);
}

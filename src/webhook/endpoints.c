/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The addresses an upstream spreads its calls over (issue 18, webhooks.h adm_webhooks_set_addresses):
 * which endpoint takes the next call, and changing the set while calls run. An added address is a
 * new pool that the fewest-outstanding choice sends to at once (it has none outstanding); a removed
 * one is only marked draining: it takes no new call, its calls in flight finish on their own
 * connections, and once none is left its pool is closed on a later turn of the loop (never from a
 * call's callback, whose pool may still be on the stack).
 */
#include "adm/base/error.h"
#include "adm/base/util.h"
#include "webhooks_internal.h"

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

static void on_sweep(uv_timer_t *t)
{
    adm_webhooks_t *w = t->data;

    for (size_t i = 0; w != NULL && i < w->nupstreams; i++) {
        adm_hook_upstream_t *u = &w->upstreams[i];

        for (size_t k = 0; k < u->nendpoints; k++) {
            adm_hook_endpoint_t *ep = &u->endpoints[k];

            if (ep->up != NULL && ep->draining && ep->outstanding == 0) {
                adm_upstream_close(ep->up);
                memset(ep, 0, sizeof(*ep));
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

static adm_hook_endpoint_t *find(adm_hook_upstream_t *u, const char *address)
{
    for (size_t k = 0; k < u->nendpoints; k++) {
        if (u->endpoints[k].up != NULL && strcmp(u->endpoints[k].address, address) == 0) {
            return &u->endpoints[k];
        }
    }
    return NULL;
}

/* A pool for address addr in a free slot of u. Returns 0, ADM_ETOOBIG (no slot) or ADM_ENOMEM. */
static int add(adm_webhooks_t *w, adm_hook_upstream_t *u, const struct sockaddr *addr, const char *address)
{
    adm_upstream_opts_t uo = {
        .host = u->host,
        .port = u->port,
        .addr = addr,
        .tls = u->tls,
        .max_conns = ENDPOINT_MAX_CONNS,
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
    if (adm_upstream_create(w->loop, &uo, &slot->up) != 0) {
        slot->up = NULL;
        return ADM_ENOMEM;
    }
    snprintf(slot->address, sizeof(slot->address), "%s", address);
    if (slot == &u->endpoints[u->nendpoints]) {
        u->nendpoints++;
    }
    return 0;
}

/* Brings u to exactly addrs: additions first, so a failure leaves the old set taking calls. */
static int apply(adm_webhooks_t *w, adm_hook_upstream_t *u, const struct sockaddr_storage *addrs, size_t n)
{
    char(*names)[64] = calloc(n, sizeof(*names));
    int rc = 0;

    if (names == NULL) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        adm_hook_endpoint_t *ep;

        adm_format_addr((const struct sockaddr *)&addrs[i], names[i], sizeof(names[i]));
        ep = find(u, names[i]);
        if (ep != NULL) {
            ep->draining = false; /* kept, or back before it drained */
        } else if (rc == 0) {
            rc = add(w, u, (const struct sockaddr *)&addrs[i], names[i]);
        }
    }
    for (size_t k = 0; rc == 0 && k < u->nendpoints; k++) {
        adm_hook_endpoint_t *ep = &u->endpoints[k];
        bool kept = false;

        for (size_t i = 0; i < n && !kept; i++) {
            kept = strcmp(ep->address, names[i]) == 0;
        }
        if (ep->up != NULL && !kept) {
            ep->draining = true;
            adm__hook_endpoint_released(w, ep); /* none outstanding: closed on the next turn */
        }
    }
    free(names);
    return rc;
}

int adm_webhooks_set_addresses(adm_webhooks_t *w, const char *host, uint16_t port,
                               const struct sockaddr_storage *addrs, size_t n)
{
    int found = 0;

    if (n == 0) {
        return ADM_EINVAL;
    }
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
        rc = apply(w, u, addrs, n);
        if (rc != 0) {
            return rc;
        }
        found++;
    }
    return found;
}

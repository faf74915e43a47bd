/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The downstream webhooks at run time (webhooks.h): configurations and cluster state loaded from
 * files, and for every webhook its client: the pool of its upstream (shared by webhooks that name
 * the same scheme, host, port and trust), the path it posts to, and the URL Go would print in
 * error messages. A client config that cannot be used (a caBundle mbedTLS refuses) is kept as an
 * error that every call to that webhook reports, as kube-apiserver reports it per call.
 */
#include "adm/webhook/webhooks.h"

#include "adm/admission/plugin.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/util.h"
#include "adm/net/tls.h"
#include "adm/net/upstream.h"
#include "webhooks_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Connections per upstream at most; kube-apiserver has no bound, a proxy needs one. */
#define UPSTREAM_MAX_CONNS 128

/* spec 2.3: join with "/" and clean: "" -> "/", "//" collapsed, "." and ".." resolved, no trailing "/". */
static char *clean_path(const char *path)
{
    size_t len = strlen(path);
    char *out = malloc(len + 2);
    size_t o = 0;
    const char *p = path;

    if (out == NULL) {
        return NULL;
    }
    while (*p != '\0') {
        const char *end;
        size_t seg;

        while (*p == '/') {
            p++;
        }
        end = p + strcspn(p, "/");
        seg = (size_t)(end - p);
        if (seg == 0) {
            break;
        }
        if (seg == 1 && p[0] == '.') {
            /* nothing */
        } else if (seg == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/') {
                o--;
            }
            if (o > 0) {
                o--;
            }
        } else {
            out[o++] = '/';
            memcpy(out + o, p, seg);
            o += seg;
        }
        p = end;
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = '\0';
    return out;
}

/* The client context for wh's caBundle and, with a client certificate (D13), user's. */
static adm_tls_ctx_t *trust_for(adm_webhooks_t *w, const adm_webhook_t *wh, const adm_kube_user_t *user,
                                char *err, size_t err_len)
{
    adm_tls_client_opts_t o = {0};
    adm_tls_ctx_t *ctx;

    for (size_t i = 0; i < w->ntrust; i++) {
        const char *a = w->trust[i].ca_bundle, *b = wh->ca_bundle;

        if (w->trust[i].user == user &&
            ((a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0))) {
            return w->trust[i].ctx;
        }
    }
    if (wh->ca_bundle != NULL) {
        o.ca_pem = wh->ca_bundle;
        o.ca_pem_len = wh->ca_bundle_len + 1;
    }
    if (user != NULL) {
        o.cert_pem = user->cert_pem;
        o.cert_pem_len = user->cert_pem_len;
        o.key_pem = user->key_pem;
        o.key_pem_len = user->key_pem_len;
        o.cert_label = user->cert_label;
    }
    if (adm_tls_client_ctx_create(&o, &ctx, err, err_len) != 0) {
        return NULL;
    }
    w->trust[w->ntrust].ca_bundle = wh->ca_bundle;
    w->trust[w->ntrust].user = user;
    w->trust[w->ntrust].ctx = ctx;
    w->ntrust++;
    return ctx;
}

/* One endpoint per --resolve address of host:port, or one that resolves host itself. */
static int make_endpoints(adm_webhooks_t *w, adm_hook_upstream_t *u, adm_upstream_opts_t *uo)
{
    const adm_options_t *opts = w->opts;

    for (size_t i = 0; i < opts->nresolve && u->nendpoints < ADM_HOOK_ENDPOINTS_MAX; i++) {
        adm_hook_endpoint_t *ep = &u->endpoints[u->nendpoints];

        if (opts->resolve[i].port != u->port || strcmp(opts->resolve[i].host, u->host) != 0) {
            continue;
        }
        uo->addr = (const struct sockaddr *)&opts->resolve[i].addr;
        adm_format_addr((const struct sockaddr *)&opts->resolve[i].addr, ep->address, sizeof(ep->address));
        if (adm_upstream_create(w->loop, uo, &ep->up) != 0) {
            return ADM_ENOMEM;
        }
        u->nendpoints++;
    }
    if (u->nendpoints == 0) {
        uo->addr = NULL;
        if (adm_upstream_create(w->loop, uo, &u->endpoints[0].up) != 0) {
            return ADM_ENOMEM;
        }
        u->nendpoints = 1;
    }
    return 0;
}

/* The configuration's annotation, else the flag's setting. */
static void init_breaker(adm_breaker_t *b, const adm_webhook_t *wh, uint32_t k, uint64_t cooldown_ms)
{
    if (wh->breaker_set) {
        adm_breaker_init(b, wh->breaker_threshold, wh->breaker_cooldown_ms);
    } else {
        adm_breaker_init(b, k, cooldown_ms);
    }
}

/*
 * kube's key for a webhook's credentials: "NAME.NAMESPACE.svc:PORT" for a service; for a URL its
 * host as written with its port, or with ":443" joined as Go's net.JoinHostPort would.
 */
static void credentials_key(const adm_webhook_t *wh, const char *host, uint16_t port,
                            const char *authority_end, char *out, size_t len)
{
    const char *authority, *colon, *bracket;
    int n;

    if (wh->url == NULL) {
        snprintf(out, len, "%s:%u", host, (unsigned)port);
        return;
    }
    authority = strstr(wh->url, "://");
    authority = authority != NULL ? authority + 3 : wh->url;
    n = (int)(authority_end - authority);
    colon = memrchr(authority, ':', (size_t)n);
    bracket = memrchr(authority, ']', (size_t)n);
    if (colon != NULL && (bracket == NULL || colon > bracket)) {
        snprintf(out, len, "%.*s", n, authority);
    } else if (memchr(authority, ':', (size_t)n) != NULL) {
        snprintf(out, len, "[%.*s]:443", n, authority);
    } else {
        snprintf(out, len, "%.*s:443", n, authority);
    }
}

/* The user of wh's plugin's kubeConfigFile for it (D13), or NULL; its header lines in cl. */
static const adm_kube_user_t *credentials_for(adm_webhooks_t *w, const adm_webhook_t *wh, const char *key,
                                              adm_hook_client_t *cl)
{
    size_t t = wh->type == ADM_WEBHOOK_MUTATING ? 0 : 1;
    const adm_kube_user_t *user =
        w->has_kubeconfig[t] ? adm_kubeconfig_user_for(&w->kubeconfig[t], key) : NULL;
    char *headers;
    int n;

    if (user != NULL && user->authorization != NULL) {
        n = asprintf(&headers, "User-Agent: admitd/" ADM_VERSION "\r\nAuthorization: %s\r\n",
                     user->authorization);
    } else {
        n = asprintf(&headers, "User-Agent: admitd/" ADM_VERSION "\r\n");
    }
    cl->headers = n >= 0 ? headers : NULL;
    return user;
}

static int make_client(adm_webhooks_t *w, const adm_webhook_t *wh, adm_hook_client_t *cl)
{
    char host[256], base[600], err[300], key[600];
    const adm_kube_user_t *user;
    const char *authority_end = NULL;
    const char *path;
    bool tls = true;
    uint16_t port;
    adm_tls_ctx_t *ctx = NULL;
    adm_upstream_opts_t uo = {0};

    if (wh->url != NULL) {
        const char *problem;

        if (adm_url_split(wh->url, &tls, host, sizeof(host), &port, &authority_end, &problem) != 0) {
            cl->error = strdup("could not get REST client: malformed URL");
            return cl->error != NULL ? 0 : ADM_ENOMEM;
        }
        snprintf(base, sizeof(base), "%.*s", (int)(authority_end - wh->url), wh->url);
        path = authority_end;
        /* a query or fragment was refused by the loader; the path is what is left */
    } else {
        snprintf(host, sizeof(host), "%s.%s.svc", wh->service->name, wh->service->namespace_);
        port = wh->service->port;
        snprintf(base, sizeof(base), "https://%s:%u", host, (unsigned)port);
        path = wh->service->path;
    }
    cl->url_base = strdup(base);
    cl->path = clean_path(path);
    credentials_key(wh, host, port, authority_end, key, sizeof(key));
    user = credentials_for(w, wh, key, cl);
    if (cl->url_base == NULL || cl->path == NULL || cl->headers == NULL) {
        return ADM_ENOMEM;
    }
    if (user != NULL && user->error != NULL) {
        char text[400];

        snprintf(text, sizeof(text), "could not get REST client: %s", user->error);
        cl->error = strdup(text);
        return cl->error != NULL ? 0 : ADM_ENOMEM;
    }
    if (tls) {
        ctx = trust_for(w, wh, user != NULL && user->cert_pem != NULL ? user : NULL, err, sizeof(err));
    }
    if (tls && ctx == NULL) {
        char text[400];

        snprintf(text, sizeof(text), "could not get REST client: %s", err);
        cl->error = strdup(text);
        return cl->error != NULL ? 0 : ADM_ENOMEM;
    }
    for (size_t i = 0; i < w->nupstreams; i++) {
        adm_hook_upstream_t *u = &w->upstreams[i];

        if (u->port == port && u->tls == ctx && strcmp(u->host, host) == 0) {
            cl->target = u;
            return 0;
        }
    }
    cl->target = &w->upstreams[w->nupstreams++];
    cl->target->tls = ctx;
    cl->target->port = port;
    snprintf(cl->target->host, sizeof(cl->target->host), "%s", host);
    uo.host = host;
    uo.port = port;
    uo.tls = ctx;
    uo.max_conns = UPSTREAM_MAX_CONNS;
    return make_endpoints(w, cl->target, &uo);
}

/* Every webhook's client: its upstream, trust, credentials and breaker. Returns 0 or ADM_ENOMEM. */
static int make_clients(adm_webhooks_t *w, uint32_t breaker_k, uint64_t breaker_ms)
{
    for (size_t t = 0; t < 2; t++) {
        size_t n = t == 0 ? w->set->nmutating : w->set->nvalidating;
        const adm_webhook_t *hooks = t == 0 ? w->set->mutating : w->set->validating;

        for (size_t i = 0; i < n; i++) {
            adm_hist_init(&w->clients[t][i].stats.latency);
            init_breaker(&w->clients[t][i].breaker, &hooks[i], breaker_k, breaker_ms);
            if (make_client(w, &hooks[i], &w->clients[t][i]) != 0) {
                return ADM_ENOMEM;
            }
        }
    }
    return 0;
}

int adm_webhooks_create(uv_loop_t *loop, const adm_options_t *opts, adm_webhooks_t **out, char *err,
                        size_t err_len)
{
    adm_webhooks_t *w = calloc(1, sizeof(*w));
    size_t total;
    uint32_t breaker_k = 0;
    uint64_t breaker_ms = 0;
    int rc;

    *out = NULL;
    if (w == NULL) {
        return ADM_ENOMEM;
    }
    w->loop = loop;
    w->opts = opts;
    if (opts->nwebhook_configs > 0) {
        rc = adm_webhook_set_load(opts->webhook_configs, opts->nwebhook_configs,
                                  opts->allow_insecure_webhook_urls, &w->set, err, err_len);
    } else {
        rc = adm_webhook_set_load(NULL, 0, false, &w->set, err, err_len);
    }
    if (rc != 0) {
        adm_webhooks_destroy(w);
        return rc;
    }
    if (opts->webhook_circuit_breaker != NULL &&
        adm_breaker_parse(opts->webhook_circuit_breaker, &breaker_k, &breaker_ms) != 0) {
        snprintf(err, err_len,
                 "--webhook-circuit-breaker: \"%s\": want K/COOLDOWN (K failures, e.g. 5/10s) or off",
                 opts->webhook_circuit_breaker);
        adm_webhooks_destroy(w);
        return ADM_EINVAL;
    }
    total = w->set->nmutating + w->set->nvalidating;
    w->clients[0] = calloc(w->set->nmutating + 1, sizeof(adm_hook_client_t));
    w->clients[1] = calloc(w->set->nvalidating + 1, sizeof(adm_hook_client_t));
    w->upstreams = calloc(total + 1, sizeof(*w->upstreams));
    w->trust = calloc(total + 1, sizeof(*w->trust));
    if (w->clients[0] == NULL || w->clients[1] == NULL || w->upstreams == NULL || w->trust == NULL) {
        adm_webhooks_destroy(w);
        return ADM_ENOMEM;
    }
    rc = make_clients(w, breaker_k, breaker_ms);
    if (rc != 0) {
        adm_webhooks_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* What make_client gave cl, freed; the statistics and the breaker stay. */
static void client_clear(adm_hook_client_t *cl)
{
    free(cl->url_base);
    free(cl->path);
    free(cl->error);
    free(cl->headers);
    cl->url_base = cl->path = cl->error = cl->headers = NULL;
    cl->target = NULL;
}

static void free_clients(adm_hook_client_t *cl, size_t n)
{
    for (size_t i = 0; cl != NULL && i < n; i++) {
        client_clear(&cl[i]);
    }
    free(cl);
}

static void close_upstreams(adm_webhooks_t *w)
{
    for (size_t i = 0; i < w->nupstreams; i++) {
        for (size_t k = 0; k < w->upstreams[i].nendpoints; k++) {
            if (w->upstreams[i].endpoints[k].up != NULL) {
                adm_upstream_close(w->upstreams[i].endpoints[k].up);
            }
            adm__hook_endpoint_clear(&w->upstreams[i].endpoints[k]);
        }
    }
    for (size_t i = 0; i < w->ntrust; i++) {
        adm_tls_ctx_unref(w->trust[i].ctx);
    }
    w->nupstreams = 0;
    w->ntrust = 0;
}

void adm_webhooks_destroy(adm_webhooks_t *w)
{
    if (w == NULL) {
        return;
    }
    /* Closing the upstreams ends the calls still running, some of them later: none may reach w. */
    for (adm_hook_late_t *late = w->late; late != NULL; late = late->next) {
        late->w = NULL;
    }
    w->late = NULL;
    adm__hook_endpoints_destroy(w);
    close_upstreams(w);
    adm_arena_destroy(w->kc_arena);
    if (w->set != NULL) {
        free_clients(w->clients[0], w->set->nmutating);
        free_clients(w->clients[1], w->set->nvalidating);
    }
    free(w->upstreams);
    free(w->trust);
    adm_webhook_set_free(w->set);
    free(w);
}

static void unlink_retiring(adm_webhooks_t *w)
{
    if (w->retiring_prev != NULL) {
        w->retiring_prev->retiring_next = w->retiring_next;
    } else {
        *w->retiring = w->retiring_next;
    }
    if (w->retiring_next != NULL) {
        w->retiring_next->retiring_prev = w->retiring_prev;
    }
}

static void on_retire_timer_closed(uv_handle_t *h)
{
    adm_webhooks_destroy(h->data);
}

/*
 * Never from inside a call's callback: the upstream and plugin code that called back may still
 * touch w when it returns. The timer fires on the next turn of the loop.
 */
static void on_retire_timer(uv_timer_t *t)
{
    adm_webhooks_t *w = t->data;

    if (w->late != NULL) {
        return; /* adm__webhooks_late_drained starts the timer again */
    }
    unlink_retiring(w);
    w->retiring = NULL;
    uv_close((uv_handle_t *)t, on_retire_timer_closed);
}

void adm__webhooks_late_drained(adm_webhooks_t *w)
{
    uv_timer_start(&w->retire_timer, on_retire_timer, 0, 0);
}

void adm_webhooks_retire(adm_webhooks_t *w, adm_webhooks_t **retiring)
{
    w->retired = true;
    w->retiring = retiring;
    w->retiring_next = *retiring;
    if (*retiring != NULL) {
        (*retiring)->retiring_prev = w;
    }
    *retiring = w;
    uv_timer_init(w->loop, &w->retire_timer);
    w->retire_timer.data = w;
    uv_timer_start(&w->retire_timer, on_retire_timer, 0, 0);
}

void adm_webhooks_destroy_retiring(adm_webhooks_t **retiring)
{
    while (*retiring != NULL) {
        adm_webhooks_t *w = *retiring;

        unlink_retiring(w);
        w->retiring = NULL;
        uv_close((uv_handle_t *)&w->retire_timer, on_retire_timer_closed);
    }
}

void adm_webhooks_log_summary(const adm_webhooks_t *w)
{
    for (size_t i = 0; i < w->set->nwarnings; i++) {
        adm_log_warn("%s", w->set->warnings[i]);
    }
    adm_log_info("downstream webhooks: %zu mutating, %zu validating, on %zu upstreams", w->set->nmutating,
                 w->set->nvalidating, w->nupstreams);
    for (size_t i = 0; i < w->set->nmutating + w->set->nvalidating; i++) {
        bool mutating = i < w->set->nmutating;
        size_t k = mutating ? i : i - w->set->nmutating;
        const adm_hook_client_t *cl = &w->clients[mutating ? 0 : 1][k];
        const adm_webhook_t *wh = mutating ? &w->set->mutating[k] : &w->set->validating[k];

        if (cl->error != NULL) {
            adm_log_warn("webhook %s: %s (every call to it fails until a reload fixes it)", wh->name,
                         cl->error);
        }
    }
}

adm_hook_stats_t *adm_webhooks_stats(adm_webhooks_t *w, const adm_webhook_t *wh)
{
    return &w->clients[wh->type == ADM_WEBHOOK_MUTATING ? 0 : 1][wh->index].stats;
}

/*
 * The clients again, now with the credentials of the kubeconfigs read so far. The webhook plugins
 * are configured after w was made and before any call, so the pools have no connection yet.
 */
static int remake_clients(adm_webhooks_t *w)
{
    close_upstreams(w);
    memset(w->upstreams, 0, (w->set->nmutating + w->set->nvalidating + 1) * sizeof(*w->upstreams));
    for (size_t t = 0; t < 2; t++) {
        size_t n = t == 0 ? w->set->nmutating : w->set->nvalidating;
        const adm_webhook_t *hooks = t == 0 ? w->set->mutating : w->set->validating;

        for (size_t i = 0; i < n; i++) {
            client_clear(&w->clients[t][i]);
            if (make_client(w, &hooks[i], &w->clients[t][i]) != 0) {
                return ADM_ENOMEM;
            }
        }
    }
    return 0;
}

/*
 * kube-apiserver's webhook plugins hand their configuration to config.LoadConfig, which decodes a
 * WebhookAdmission and requires an absolute kubeConfigFile (path.IsAbs: a leading '/'); a missing
 * one decodes as "". The file's users are the credentials of that plugin's webhooks (D13).
 */
static int configure(const adm_plugin_config_t *cfg, size_t type, void **state, char *err, size_t err_len)
{
    static const char v1[] = "apiserver.config.k8s.io/v1";
    static const char v1alpha1[] = "apiserver.config.k8s.io/v1alpha1";
    adm_webhooks_t *w = cfg->webhooks;
    const char *api_version, *kind, *file;
    adm_kubeconfig_t scratch;
    adm_arena_t *a;
    char why[512];
    yyjson_val *v;
    int rc;

    *state = cfg->webhooks;
    if (cfg->config == NULL) {
        return 0;
    }
    api_version = yyjson_get_str(yyjson_obj_get(cfg->config, "apiVersion"));
    kind = yyjson_get_str(yyjson_obj_get(cfg->config, "kind"));
    if (api_version == NULL || (strcmp(api_version, v1) != 0 && strcmp(api_version, v1alpha1) != 0)) {
        snprintf(err, err_len, "%s: apiVersion: want %s or %s (WebhookAdmissionConfiguration)", cfg->source,
                 v1, v1alpha1);
        return ADM_EINVAL;
    }
    if (kind == NULL || (strcmp(kind, "WebhookAdmissionConfiguration") != 0 &&
                         (strcmp(api_version, v1alpha1) != 0 || strcmp(kind, "WebhookAdmission") != 0))) {
        snprintf(err, err_len,
                 "%s: kind: want WebhookAdmissionConfiguration (or, in %s, the legacy WebhookAdmission)",
                 cfg->source, v1alpha1);
        return ADM_EINVAL;
    }
    v = yyjson_obj_get(cfg->config, "kubeConfigFile");
    if (v != NULL && !yyjson_is_null(v) && !yyjson_is_str(v)) {
        snprintf(err, err_len, "%s: kubeConfigFile: must be a string", cfg->source);
        return ADM_EINVAL;
    }
    file = yyjson_is_str(v) ? yyjson_get_str(v) : "";
    if (file[0] != '/') {
        snprintf(err, err_len, "%s: kubeConfigFile: Invalid value: \"%s\": must be an absolute file path",
                 cfg->source, file);
        return ADM_EINVAL;
    }
    a = w != NULL && w->kc_arena != NULL ? w->kc_arena : adm_arena_create(16384);
    if (a == NULL) {
        return ADM_ENOMEM;
    }
    if (w != NULL) {
        w->kc_arena = a;
    }
    rc = adm_kubeconfig_load(a, file, w != NULL ? &w->kubeconfig[type] : &scratch, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_len, "%s: kubeConfigFile: %s", cfg->source, why);
    }
    if (w == NULL) {
        adm_arena_destroy(a); /* no webhook runs: the file was only checked */
        return rc;
    }
    if (rc != 0) {
        return rc;
    }
    w->has_kubeconfig[type] = true;
    return remake_clients(w);
}

int adm_webhooks_configure_mutating(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    return configure(cfg, 0, state, err, err_len);
}

int adm_webhooks_configure_validating(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    return configure(cfg, 1, state, err, err_len);
}

void adm_webhooks_files(const adm_webhooks_t *w, void (*fn)(void *arg, const char *path), void *arg)
{
    for (size_t t = 0; t < 2; t++) {
        for (size_t i = 0; w->has_kubeconfig[t] && i < w->kubeconfig[t].nfiles; i++) {
            fn(arg, w->kubeconfig[t].files[i]);
        }
    }
}

const adm_webhook_set_t *adm_webhooks_set(const adm_webhooks_t *w)
{
    return w->set;
}

static bool any_selects_namespaces(const adm_webhook_t *hooks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!hooks[i].namespace_selector.everything) {
            return true;
        }
    }
    return false;
}

bool adm_webhooks_select_namespaces(const adm_webhooks_t *w, bool mutating, bool validating)
{
    return (mutating && any_selects_namespaces(w->set->mutating, w->set->nmutating)) ||
           (validating && any_selects_namespaces(w->set->validating, w->set->nvalidating));
}

/* Does a --resolve flag fix the addresses of host:port? */
static bool pinned(const adm_options_t *opts, const char *host, uint16_t port)
{
    for (size_t i = 0; i < opts->nresolve; i++) {
        if (opts->resolve[i].port == port && strcmp(opts->resolve[i].host, host) == 0) {
            return true;
        }
    }
    return false;
}

void adm_webhooks_services(const adm_webhooks_t *w,
                           void (*fn)(void *arg, const char *namespace_, const char *name, uint16_t port,
                                      const char *host),
                           void *arg)
{
    for (size_t t = 0; t < 2; t++) {
        size_t n = t == 0 ? w->set->nmutating : w->set->nvalidating;
        const adm_webhook_t *hooks = t == 0 ? w->set->mutating : w->set->validating;

        for (size_t i = 0; i < n; i++) {
            const adm_hook_upstream_t *u = w->clients[t][i].target;

            if (hooks[i].service == NULL || u == NULL || pinned(w->opts, u->host, u->port)) {
                continue;
            }
            fn(arg, hooks[i].service->namespace_, hooks[i].service->name, u->port, u->host);
        }
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-mockhook: a programmable upstream webhook for tests and benchmarks. It serves HTTPS (or
 * plain HTTP) with admitd's own server code on one libuv loop, through one catch-all route (the
 * server keeps the probes and /metrics), and answers each request with the behaviour of its path
 * (--route) or the default one (--behavior), after an optional delay.
 *
 * --record FILE appends one JSON line per request ({"path","query","review"}) so tests can check
 * what an upstream was sent and how often it was called, and with which credentials: the
 * Authorization header and whether a client certificate verified against --client-ca-file.
 * --require-client-cert and --require-token refuse (401) calls without them, as a webhook behind
 * authentication would (Decision D13's tests). The write is a blocking stdio write on
 * the loop: fine for tests, and off unless asked for.
 */
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/options.h"
#include "adm/base/util.h"
#include "adm/net/tls.h"
#include "adm/server/server.h"
#include "behavior.h"
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>
#include <yyjson.h>

#define MAX_ROUTES 64

typedef struct route_s {
    const char *path;
    mock_behavior_t behavior;
    bool has_delay;
    uint64_t delay_min_ms, delay_max_ms;
} route_t;

/* A request whose answer waits for its delay. Kept on a free list: timers are reused, not freed. */
typedef struct pending_s {
    uv_timer_t timer;
    adm_exchange_t *x;
    const mock_behavior_t *behavior;
    adm_http_response_t resp;
    struct pending_s *next;
} pending_t;

typedef struct mock_s {
    uv_loop_t *loop;
    adm_server_t *server;
    adm_arena_t *config;
    route_t routes[MAX_ROUTES];
    size_t nroutes;
    route_t fallback;
    FILE *record;
    pending_t *free_pending;
    uint64_t rng;
    uv_signal_t sigterm, sigint;
    uv_timer_t stall;
    uint64_t stall_ms;
    bool require_client_cert;
    const char *require_token; /* the bearer token a call must carry, or NULL */
} mock_t;

static const char usage[] =
    "usage: admitd-mockhook [flags]\n"
    "A programmable AdmissionReview webhook for tests and benchmarks.\n\n"
    "  --listen HOST:PORT            listen here (default 127.0.0.1:9443; port 0 picks a free one)\n"
    "  --tls-cert-file F             PEM certificate chain (with --tls-private-key-file)\n"
    "  --tls-private-key-file F      its key\n"
    "  --self-signed-ca-out F        without a certificate one is generated: write it here (PEM)\n"
    "  --insecure-http               serve plain HTTP\n"
    "  --client-ca-file F            ask for client certificates, verified against this PEM bundle\n"
    "  --require-client-cert         answer 401 to a call without a verified client certificate\n"
    "  --require-token T             answer 401 to a call without Authorization: Bearer T\n"
    "  --behavior B                  what to answer on paths without a route (default allow):\n"
    "                                allow, deny[:MSG], patch:JSONPATCH, error:CODE, invalid-json,\n"
    "                                wrong-uid, hang, close, reset, warn:TEXT, annotate:KEY=VALUE,\n"
    "                                raw:BYTES (written as they are, \\r \\n \\\\ escapes, then close),\n"
    "                                or a weighted mix such as mix:allow=90,hang=5,reset=5\n"
    "  --delay D                     wait before answering: fixed (5ms) or uniform (1ms..20ms)\n"
    "  --route /PATH=B               behaviour B for this path (repeatable)\n"
    "  --route-delay /PATH=D         delay for this path (repeatable; default --delay)\n"
    "  --record FILE                 append one JSON line per request (path, query, review)\n"
    "  --stall D/PERIOD              block the whole server for D every PERIOD (200ms/1s: a GC\n"
    "                                pause, to show coordinated omission in load generators)\n"
    "  --idle-timeout D              close keep-alive connections idle this long (default 120s)\n"
    "  --v N                         log verbosity\n"
    "  --help, --version\n";

static uint32_t next_random(mock_t *m)
{
    /* xorshift64*: plenty for spreading delays and mix choices */
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return (uint32_t)((m->rng * 2685821657736338717ull) >> 32);
}

static int parse_delay(const char *v, uint64_t *lo, uint64_t *hi)
{
    const char *dots = strstr(v, "..");
    char first[64];

    if (dots == NULL) {
        if (adm_parse_duration_ms(v, lo) != 0) {
            return -1;
        }
        *hi = *lo;
        return 0;
    }
    if ((size_t)(dots - v) >= sizeof(first)) {
        return -1;
    }
    memcpy(first, v, (size_t)(dots - v));
    first[dots - v] = '\0';
    if (adm_parse_duration_ms(first, lo) != 0 || adm_parse_duration_ms(dots + 2, hi) != 0 || *hi < *lo) {
        return -1;
    }
    return 0;
}

static route_t *route_for(mock_t *m, const char *path, bool create)
{
    for (size_t i = 0; i < m->nroutes; i++) {
        if (strcmp(m->routes[i].path, path) == 0) {
            return &m->routes[i];
        }
    }
    if (!create || m->nroutes == MAX_ROUTES) {
        return NULL;
    }
    m->routes[m->nroutes].path = adm_arena_strndup(m->config, path, strlen(path));
    m->routes[m->nroutes].behavior = m->fallback.behavior;
    return &m->routes[m->nroutes++];
}

/* "/PATH=VALUE": splits at the first '=' after the path. */
static const char *split_route(cli_t *c, const char *flag, const char *v, char *path, size_t path_len)
{
    const char *eq = strchr(v, '=');

    if (v[0] != '/' || eq == NULL || (size_t)(eq - v) >= path_len) {
        cli_fail(c, "%s: \"%s\" must be /PATH=VALUE", flag, v);
    }
    memcpy(path, v, (size_t)(eq - v));
    path[eq - v] = '\0';
    return eq + 1;
}

static void record(mock_t *m, const adm_exchange_t *x, const adm_http_request_t *r)
{
    yyjson_doc *doc = yyjson_read((const char *)r->body, r->body_len, 0);
    yyjson_mut_doc *out = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *root = yyjson_mut_obj(out);
    char *line;

    yyjson_mut_doc_set_root(out, root);
    yyjson_mut_obj_add_str(out, root, "path", r->path);
    yyjson_mut_obj_add_str(out, root, "query", r->query);
    if (r->authorization != NULL) {
        yyjson_mut_obj_add_str(out, root, "authorization", r->authorization);
    }
    yyjson_mut_obj_add_bool(out, root, "clientCertificate", adm_exchange_peer_verified(x));
    yyjson_mut_obj_add_val(out, root, "review",
                           doc != NULL ? yyjson_val_mut_copy(out, yyjson_doc_get_root(doc))
                                       : yyjson_mut_null(out));
    line = yyjson_mut_write(out, 0, NULL);
    if (line != NULL) {
        fprintf(m->record, "%s\n", line);
        fflush(m->record);
        free(line);
    }
    yyjson_mut_doc_free(out);
    yyjson_doc_free(doc);
}

/* The credentials --require-client-cert and --require-token ask for, both when both are given. */
static bool authorized(const mock_t *m, const adm_exchange_t *x, const adm_http_request_t *r)
{
    if (m->require_client_cert && !adm_exchange_peer_verified(x)) {
        return false;
    }
    if (m->require_token != NULL) {
        const char *h = r->authorization;

        return h != NULL && strncmp(h, "Bearer ", 7) == 0 && strcmp(h + 7, m->require_token) == 0;
    }
    return true;
}

static void play(pending_t *p)
{
    adm_exchange_t *x = p->x;

    switch (p->behavior->kind) {
    case MOCK_HANG: return; /* the client gives up; the cancel callback then frees p */
    case MOCK_CLOSE:
    case MOCK_RESET: adm_exchange_abort(x, p->behavior->kind == MOCK_RESET); return;
    case MOCK_RAW: adm_exchange_reply_raw(x, p->behavior->text, p->behavior->text_len); return;
    default: adm_exchange_reply(x, &p->resp); return;
    }
}

static void pending_free(mock_t *m, pending_t *p)
{
    p->x = NULL;
    p->next = m->free_pending;
    m->free_pending = p;
}

static void on_cancel(void *arg)
{
    pending_t *p = arg;

    uv_timer_stop(&p->timer);
    pending_free(p->timer.loop->data, p);
}

static void on_delay(uv_timer_t *t)
{
    pending_t *p = t->data;
    mock_t *m = t->loop->data;
    bool hang = p->behavior->kind == MOCK_HANG;

    if (!hang) {
        adm_exchange_on_cancel(p->x, NULL, NULL);
    }
    play(p);
    if (!hang) {
        pending_free(m, p);
    }
}

static void handle(adm_exchange_t *x, void *arg)
{
    mock_t *m = arg;
    const adm_http_request_t *r = adm_exchange_request(x);
    route_t *rt = route_for(m, r->path, false);
    uint64_t delay;
    pending_t *p;

    if (rt == NULL) {
        rt = &m->fallback;
    }
    if (m->record != NULL) {
        record(m, x, r);
    }
    if (!authorized(m, x, r)) {
        adm_http_response_t resp = {
            .status = 401, .content_type = "text/plain", .body = "Unauthorized\n", .body_len = 13};

        adm_exchange_reply(x, &resp);
        return;
    }
    p = m->free_pending;
    if (p != NULL) {
        m->free_pending = p->next;
    } else {
        p = calloc(1, sizeof(*p));
        if (p == NULL) {
            adm_exchange_abort(x, false);
            return;
        }
        uv_timer_init(m->loop, &p->timer);
        p->timer.data = p;
    }
    p->x = x;
    p->behavior = mock_behavior_pick(&rt->behavior, next_random(m));
    memset(&p->resp, 0, sizeof(p->resp));
    if (p->behavior->kind != MOCK_HANG && p->behavior->kind != MOCK_CLOSE &&
        p->behavior->kind != MOCK_RESET && p->behavior->kind != MOCK_RAW) {
        /* The body is only valid now: the answer is made at once, sent after the delay. */
        mock_behavior_answer(p->behavior, adm_exchange_arena(x), r->body, r->body_len, &p->resp);
    }
    delay = rt->delay_min_ms;
    if (rt->delay_max_ms > rt->delay_min_ms) {
        delay += next_random(m) % (rt->delay_max_ms - rt->delay_min_ms + 1);
    }
    if (delay == 0 && p->behavior->kind != MOCK_HANG) {
        play(p);
        pending_free(m, p);
        return;
    }
    adm_exchange_on_cancel(x, on_cancel, p);
    if (delay > 0) {
        uv_timer_start(&p->timer, on_delay, delay, 0);
    }
}

/* Blocks the loop on purpose: nothing is served while it sleeps, as in a stop-the-world pause. */
static void on_stall(uv_timer_t *t)
{
    mock_t *m = t->data;
    struct timespec ts = {(time_t)(m->stall_ms / 1000), (long)(m->stall_ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    mock_t *m = h->data;

    (void)signum;
    adm_server_shutdown(m->server);
}

static void on_done(adm_server_t *s, void *arg)
{
    mock_t *m = arg;

    (void)s;
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    if (m->stall_ms > 0) {
        uv_close((uv_handle_t *)&m->stall, NULL);
    }
    while (m->free_pending != NULL) {
        pending_t *p = m->free_pending;

        m->free_pending = p->next;
        uv_close((uv_handle_t *)&p->timer, (uv_close_cb)free);
    }
}

int main(int argc, char **argv)
{
    static mock_t m;
    adm_options_t opts;
    uv_loop_t loop;
    cli_t cli;
    const char *flag;
    const char *record_path = NULL;
    uint64_t stall_period_ms = 0;
    char err[512];

    adm_options_defaults(&opts);
    if (adm_parse_hostport("127.0.0.1:9443", &opts.listen) != 0) {
        return 1;
    }
    opts.shutdown_delay_ms = 0;
    opts.shutdown_grace_ms = 2000;
    m.config = adm_arena_create(16 * 1024);
    m.rng = uv_hrtime() | 1;
    if (m.config == NULL ||
        mock_behavior_parse(m.config, "allow", &m.fallback.behavior, err, sizeof(err)) != 0) {
        return 1;
    }
    cli_init(&cli, "admitd-mockhook", argc, argv);
    /* Routes take the default behaviour and delay as they stand at the end: apply those last. */
    const char *behavior = NULL, *delay = NULL;
    const char *routes[MAX_ROUTES], *route_delays[MAX_ROUTES];
    size_t nroutes = 0, nroute_delays = 0;

    for (flag = cli_next(&cli); flag != NULL; flag = cli_next(&cli)) {
        if (cli_is(&cli, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (cli_is(&cli, "--version")) {
            printf("admitd-mockhook %s\n", ADM_VERSION);
            return 0;
        } else if (cli_is(&cli, "--listen")) {
            const char *v = cli_value(&cli);

            if (adm_parse_hostport(v, &opts.listen) != 0) {
                cli_fail(&cli, "--listen: \"%s\" is not HOST:PORT", v);
            }
        } else if (cli_is(&cli, "--tls-cert-file")) {
            opts.tls_cert_file = cli_value(&cli);
        } else if (cli_is(&cli, "--tls-private-key-file")) {
            opts.tls_key_file = cli_value(&cli);
        } else if (cli_is(&cli, "--self-signed-ca-out")) {
            opts.self_signed_ca_out = cli_value(&cli);
        } else if (cli_is(&cli, "--insecure-http")) {
            cli_no_value(&cli);
            opts.insecure_http = true;
        } else if (cli_is(&cli, "--client-ca-file")) {
            opts.client_ca_file = cli_value(&cli);
        } else if (cli_is(&cli, "--require-client-cert")) {
            cli_no_value(&cli);
            m.require_client_cert = true;
        } else if (cli_is(&cli, "--require-token")) {
            m.require_token = cli_value(&cli);
        } else if (cli_is(&cli, "--behavior")) {
            behavior = cli_value(&cli);
        } else if (cli_is(&cli, "--delay")) {
            delay = cli_value(&cli);
        } else if (cli_is(&cli, "--route")) {
            if (nroutes == MAX_ROUTES) {
                cli_fail(&cli, "--route: at most %d routes", MAX_ROUTES);
            }
            routes[nroutes++] = cli_value(&cli);
        } else if (cli_is(&cli, "--route-delay")) {
            if (nroute_delays == MAX_ROUTES) {
                cli_fail(&cli, "--route-delay: at most %d", MAX_ROUTES);
            }
            route_delays[nroute_delays++] = cli_value(&cli);
        } else if (cli_is(&cli, "--record")) {
            record_path = cli_value(&cli);
        } else if (cli_is(&cli, "--stall")) {
            const char *v = cli_value(&cli);
            const char *slash = strchr(v, '/');
            char first[64];

            if (slash == NULL || (size_t)(slash - v) >= sizeof(first)) {
                cli_fail(&cli, "--stall: \"%s\" must be DURATION/PERIOD, e.g. 200ms/1s", v);
            }
            memcpy(first, v, (size_t)(slash - v));
            first[slash - v] = '\0';
            if (adm_parse_duration_ms(first, &m.stall_ms) != 0 ||
                adm_parse_duration_ms(slash + 1, &stall_period_ms) != 0 || m.stall_ms == 0 ||
                stall_period_ms <= m.stall_ms) {
                cli_fail(&cli, "--stall: \"%s\" must be DURATION/PERIOD with 0 < DURATION < PERIOD", v);
            }
        } else if (cli_is(&cli, "--idle-timeout")) {
            opts.idle_timeout_ms = cli_duration_ms(&cli);
        } else if (cli_is(&cli, "--v")) {
            opts.verbosity = (int)cli_uint(&cli, 0, 10);
        } else {
            cli_fail(&cli, "unknown flag %s (see --help)", flag);
        }
    }
    if ((opts.tls_cert_file == NULL) != (opts.tls_key_file == NULL)) {
        cli_fail(&cli, "--tls-cert-file and --tls-private-key-file go together");
    }
    if (m.require_client_cert && opts.client_ca_file == NULL) {
        cli_fail(&cli, "--require-client-cert needs --client-ca-file");
    }
    if (behavior != NULL &&
        mock_behavior_parse(m.config, behavior, &m.fallback.behavior, err, sizeof(err)) != 0) {
        cli_fail(&cli, "--behavior: %s", err);
    }
    if (delay != NULL && parse_delay(delay, &m.fallback.delay_min_ms, &m.fallback.delay_max_ms) != 0) {
        cli_fail(&cli, "--delay: \"%s\" is not a duration or a range such as 1ms..20ms", delay);
    }
    for (size_t i = 0; i < nroutes; i++) {
        char path[256];
        const char *v = split_route(&cli, "--route", routes[i], path, sizeof(path));
        route_t *rt = route_for(&m, path, true);

        if (mock_behavior_parse(m.config, v, &rt->behavior, err, sizeof(err)) != 0) {
            cli_fail(&cli, "--route %s: %s", path, err);
        }
        rt->delay_min_ms = m.fallback.delay_min_ms;
        rt->delay_max_ms = m.fallback.delay_max_ms;
    }
    for (size_t i = 0; i < nroute_delays; i++) {
        char path[256];
        const char *v = split_route(&cli, "--route-delay", route_delays[i], path, sizeof(path));
        route_t *rt = route_for(&m, path, false);

        if (rt == NULL) {
            cli_fail(&cli, "--route-delay %s: no --route for this path", path);
        }
        if (parse_delay(v, &rt->delay_min_ms, &rt->delay_max_ms) != 0) {
            cli_fail(&cli, "--route-delay %s: \"%s\" is not a duration or a range such as 1ms..20ms", path,
                     v);
        }
    }
    if (record_path != NULL) {
        m.record = fopen(record_path, "a");
        if (m.record == NULL) {
            cli_fail(&cli, "--record %s: cannot open for appending", record_path);
        }
    }
    adm_log_configure(ADM_LOG_TEXT, opts.verbosity);
    signal(SIGPIPE, SIG_IGN);
    if (adm_tls_global_init() != 0) {
        fprintf(stderr, "admitd-mockhook: cannot initialise the crypto library\n");
        return 1;
    }
    uv_loop_init(&loop);
    loop.data = &m;
    m.loop = &loop;
    if (adm_server_create(&loop, &opts, &m.server, err, sizeof(err)) != 0) {
        fprintf(stderr, "admitd-mockhook: %s\n", err);
        return 2;
    }
    /* Every path of the listener but the probes and /metrics, which the server serves itself. */
    adm_route_t route = {
        .path = NULL,
        .label = "webhook",
        .listeners = ADM_ON_ADMISSION,
        .method = ADM_ROUTE_ANY_METHOD,
        .handler = handle,
        .arg = &m,
    };
    if (adm_server_add_route(m.server, &route) != 0) {
        fprintf(stderr, "admitd-mockhook: cannot add its route\n");
        return 1;
    }
    if (adm_server_start(m.server, on_done, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "admitd-mockhook: %s\n", err);
        return 2;
    }
    uv_signal_init(&loop, &m.sigterm);
    uv_signal_init(&loop, &m.sigint);
    m.sigterm.data = m.sigint.data = &m;
    uv_signal_start(&m.sigterm, on_signal, SIGTERM);
    uv_signal_start(&m.sigint, on_signal, SIGINT);
    if (m.stall_ms > 0) {
        uv_timer_init(&loop, &m.stall);
        m.stall.data = &m;
        uv_timer_start(&m.stall, on_stall, stall_period_ms, stall_period_ms);
    }
    adm_log_info("admitd-mockhook %s ready", ADM_VERSION);
    uv_run(&loop, UV_RUN_DEFAULT);
    adm_server_destroy(m.server);
    uv_loop_close(&loop);
    adm_arena_destroy(m.config);
    if (m.record != NULL) {
        fclose(m.record);
    }
    adm_tls_global_cleanup();
    return 0;
}

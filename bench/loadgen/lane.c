/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One admitd-bench loop (lane.h): sends its share of the requests with admitd's own client
 * (keep-alive pool, mbedTLS, llhttp), checks and counts every answer, and measures its thread's
 * CPU.
 *
 * Open loop (--rate N): request k is due at start + k/N whatever happened before, and its latency
 * runs from that intended time, so a server that stalls is charged for every request it held up
 * (no coordinated omission). Requests wait for a free connection in FIFO order, and that wait
 * counts. Closed loop (--closed): each connection sends its next request as soon as it has an
 * answer; latency runs from the send.
 *
 * Every request carries a fresh uid, and the answer is checked: allowed, denied, HTTP error,
 * malformed, answer for another uid, or the transport failure, each counted apart.
 */
#include "lane.h"

#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <yyjson.h>

/*
 * Open loop: at most one pacer wake-up per PACE_NS. Every wake-up sends what is due, never early, so
 * a request can leave up to this late, and that wait counts in its latency. Each sleep and wake-up
 * costs ~20 us of CPU on these VMs, so waking for every request at tens of thousands a second would
 * take half the generator's core.
 */
#define PACE_NS 100000ull
/* After the run, unanswered requests get this long (beyond their own timeout they fail anyway). */
#define DRAIN_EXTRA_MS 1000
/* Tries of the first request when the connection is closed or reset, or the answer is not HTTP. */
#define PROBE_TRIES 5

typedef struct request_s {
    lane_t *l;
    uint64_t start_ns; /* intended (open loop) or actual (closed loop) send time */
    bool measured;
    char uid[ADM_UID_LEN + 1];
    struct request_s *next;
} request_t;

struct lane_s {
    plan_t *plan;
    unsigned index;
    uint64_t connections;
    uv_loop_t loop;
    adm_upstream_t *up;
    adm_reviewset_t reviews;
    uint64_t end_ns;   /* the plan's, or earlier after SIGINT */
    uint64_t seq;      /* next request number for a uid and a body: index, index + nlanes, ... */
    uint64_t next_due; /* open loop: the next request number to send */
    uint64_t outstanding;
    uint64_t measured_outstanding; /* of those, sent inside the measured window */
    bool stopping;
    bool closed_handles;
    tally_t tally;
    adm_arena_t *scratch; /* parsing answers, reset after each */
    request_t *free_requests;
    uv_poll_t pacer; /* open loop: a timerfd armed for the next request's due time */
    int pacer_fd;
    uv_timer_t stop;
    uv_signal_t sigint;
    uint64_t cpu0_ns, wall0_ns; /* the thread's CPU and the time when measuring began */
    thread_usage_t usage;
    bool probe_done;
    adm_call_result_t probe;
    char probe_detail[256];
};

static uint64_t now_ns(void)
{
    return uv_hrtime();
}

/* The calling thread's CPU time, user + system. */
static uint64_t thread_cpu_ns(void)
{
    struct rusage u;

    getrusage(RUSAGE_THREAD, &u);
    return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000ull +
           (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000ull;
}

static void usage_start(lane_t *l)
{
    l->cpu0_ns = thread_cpu_ns();
    l->wall0_ns = now_ns();
}

static outcome_t classify_error(adm_call_error_t e)
{
    switch (e) {
    case ADM_CALL_TIMEOUT: return OUT_TIMEOUT;
    case ADM_CALL_DNS:
    case ADM_CALL_CONNECT: return OUT_CONNECT;
    case ADM_CALL_TLS: return OUT_TLS;
    case ADM_CALL_PROTOCOL: return OUT_PROTOCOL;
    default: return OUT_IO;
    }
}

/* Reads an answer: allowed, denied, malformed, or someone else's. */
static outcome_t classify_answer(lane_t *l, const adm_call_result_t *res, const char *uid)
{
    yyjson_read_err err;
    yyjson_doc *doc;
    yyjson_val *response, *got_uid, *allowed;
    outcome_t out;

    if (res->status != 200) {
        return OUT_HTTP_ERROR;
    }
    doc = adm_json_read(l->scratch, (const char *)res->body, res->body_len, &err);
    response = yyjson_obj_get(yyjson_doc_get_root(doc), "response");
    got_uid = yyjson_obj_get(response, "uid");
    allowed = yyjson_obj_get(response, "allowed");
    if (!yyjson_is_str(got_uid) || !yyjson_is_bool(allowed)) {
        out = OUT_MALFORMED;
    } else if (strcmp(yyjson_get_str(got_uid), uid) != 0) {
        out = OUT_UID_MISMATCH;
    } else {
        out = yyjson_get_bool(allowed) ? OUT_ALLOWED : OUT_DENIED;
    }
    adm_arena_reset(l->scratch);
    return out;
}

/* The body for the next request, with a fresh uid written into it (and into uid). */
static adm_review_body_t *next_body(lane_t *l, char *uid)
{
    adm_review_body_t *body = &l->reviews.bodies[l->seq % l->reviews.n];

    adm_reviewset_stamp(body, l->plan->salt, l->seq, uid);
    l->seq += l->plan->nlanes;
    return body;
}

static void issue(lane_t *l, uint64_t start_ns);
static void maybe_finish(lane_t *l);

static void on_answer(const adm_call_result_t *res, void *arg)
{
    request_t *rq = arg;
    lane_t *l = rq->l;
    tally_t *t = &l->tally;
    uint64_t now = now_ns();
    outcome_t out = res->error == ADM_CALL_OK ? classify_answer(l, res, rq->uid) : classify_error(res->error);

    l->outstanding--;
    if (rq->measured) {
        l->measured_outstanding--;
        t->outcomes[out]++;
        if (out == OUT_HTTP_ERROR && res->status >= 0 && res->status < TALLY_HTTP_STATUSES) {
            t->http_status[res->status]++;
        }
        if (res->error == ADM_CALL_OK) {
            adm_hist_record(&t->hist, now > rq->start_ns ? now - rq->start_ns : 0);
        } else if (!atomic_flag_test_and_set(&l->plan->error_shown[out])) {
            fprintf(stderr, "admitd-bench: first %s error: %s\n", outcome_name(out), res->detail);
        }
    }
    if (now >= l->plan->measure_ns && now < l->end_ns) {
        t->completed_in_window++;
    }
    rq->next = l->free_requests;
    l->free_requests = rq;
    if (l->plan->closed && !l->stopping) {
        issue(l, now);
    }
    maybe_finish(l);
}

static void issue(lane_t *l, uint64_t start_ns)
{
    request_t *rq = l->free_requests;
    adm_review_body_t *body;

    if (rq != NULL) {
        l->free_requests = rq->next;
    } else {
        rq = calloc(1, sizeof(*rq));
    }
    if (rq == NULL) {
        return;
    }
    rq->l = l;
    rq->start_ns = start_ns;
    rq->measured = start_ns >= l->plan->measure_ns && start_ns < l->end_ns;
    body = next_body(l, rq->uid);
    /* counted first: a call that fails at once (out of memory) answers inside adm_upstream_post */
    l->outstanding++;
    if (rq->measured) {
        l->tally.sent++;
        l->measured_outstanding++;
    }
    if (adm_upstream_post(l->up, l->plan->path, NULL, body->data, body->len, l->plan->timeout_ms, on_answer,
                          rq) == NULL) {
        l->outstanding--;
        if (rq->measured) {
            l->tally.sent--;
            l->measured_outstanding--;
        }
        rq->next = l->free_requests;
        l->free_requests = rq;
    }
}

static uint64_t due_ns(const lane_t *l, uint64_t k)
{
    return l->plan->t0_ns + (uint64_t)((double)k * (1e9 / l->plan->rate));
}

/* Arms the pacer for an absolute uv_hrtime() instant (CLOCK_MONOTONIC, as uv_hrtime reads). */
static void pacer_arm(lane_t *l, uint64_t at_ns)
{
    struct itimerspec its = {{0, 0}, {(time_t)(at_ns / 1000000000ull), (long)(at_ns % 1000000000ull)}};

    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) {
        its.it_value.tv_nsec = 1; /* zero would disarm */
    }
    timerfd_settime(l->pacer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * Open loop: sends every request of this lane whose time has come, then sleeps until the next one
 * is due. A timerfd rather than a libuv timer: libuv's are whole milliseconds, and a request held
 * back to the next millisecond tick is charged that wait (up to 1 ms) as if the server had taken
 * it, and is sent in a burst with the others of its tick. Here that wait is at most PACE_NS.
 */
static void on_pace(uv_poll_t *h, int status, int events)
{
    lane_t *l = h->data;
    uint64_t expirations, now = now_ns();

    (void)status;
    (void)events;
    if (read(l->pacer_fd, &expirations, sizeof(expirations)) < 0) {
        /* EAGAIN: nothing to consume */
    }
    for (;;) {
        uint64_t due = due_ns(l, l->next_due);

        if (due >= l->end_ns || l->stopping) {
            uv_poll_stop(&l->pacer);
            return;
        }
        if (due > now) {
            pacer_arm(l, due > now + PACE_NS ? due : now + PACE_NS);
            return;
        }
        l->next_due += l->plan->nlanes;
        issue(l, due);
    }
}

static void close_handles(lane_t *l)
{
    l->closed_handles = true;
    uv_timer_stop(&l->stop);
    if (l->pacer_fd >= 0) {
        uv_poll_stop(&l->pacer);
        uv_close((uv_handle_t *)&l->pacer, NULL);
    }
    uv_close((uv_handle_t *)&l->stop, NULL);
    uv_close((uv_handle_t *)&l->sigint, NULL);
    if (l->up != NULL) {
        adm_upstream_close(l->up);
    }
}

static void report_and_close(lane_t *l)
{
    l->usage.cpu_ns = thread_cpu_ns() - l->cpu0_ns;
    l->usage.wall_ns = now_ns() - l->wall0_ns;
    l->tally.unfinished = l->measured_outstanding; /* warmup requests are not in sent either */
    close_handles(l);
}

static void maybe_finish(lane_t *l)
{
    if (l->stopping && l->outstanding == 0 && !l->closed_handles) {
        report_and_close(l);
    }
}

/* Starts the stop timer for an absolute uv_hrtime() instant (libuv timers count whole ms). */
static void arm_stop(lane_t *l, uint64_t at_ns, uv_timer_cb cb)
{
    uint64_t now = now_ns();

    uv_update_time(&l->loop);
    uv_timer_start(&l->stop, cb, at_ns > now ? (at_ns - now + 999999) / 1000000 : 0, 0);
}

static void on_stop(uv_timer_t *t)
{
    lane_t *l = t->data;

    if (!l->stopping) {
        if (now_ns() < l->end_ns) {
            /* libuv's millisecond clock woke us early: the requests due until the end still go */
            arm_stop(l, l->end_ns, on_stop);
            return;
        }
        /* the measured window is over: send nothing more, wait for the answers owed */
        l->stopping = true;
        if (l->pacer_fd >= 0) {
            uv_poll_stop(&l->pacer);
        }
        if (l->outstanding > 0) {
            uv_timer_start(&l->stop, on_stop, l->plan->timeout_ms + DRAIN_EXTRA_MS, 0);
        }
        maybe_finish(l);
        return;
    }
    report_and_close(l); /* gave up waiting */
}

static void on_measure(uv_timer_t *t)
{
    lane_t *l = t->data;

    if (now_ns() < l->plan->measure_ns) {
        arm_stop(l, l->plan->measure_ns, on_measure);
        return;
    }
    usage_start(l);
    arm_stop(l, l->end_ns, on_stop);
}

/* Every lane's loop gets the signal; the first to take it sets the window's end for all. */
static void on_sigint(uv_signal_t *h, int signum)
{
    lane_t *l = h->data;
    uint_fast64_t first = 0, now = now_ns();

    (void)signum;
    if (atomic_compare_exchange_strong(&l->plan->interrupted_ns, &first, now)) {
        fprintf(stderr, "admitd-bench: interrupted; reporting what was measured\n");
    } else {
        now = first;
    }
    if (now < l->end_ns) {
        l->end_ns = now;
    }
    if (!l->stopping) {
        on_stop(&l->stop);
    }
}

int lane_create(plan_t *plan, unsigned index, uint64_t connections, const char *host, uint16_t port,
                adm_tls_ctx_t *tls, adm_reviewset_t *reviews, lane_t **out)
{
    int ret = 0;
    lane_t *l = calloc(1, sizeof(*l));
    adm_upstream_opts_t up_opts = {0};

    *out = NULL;
    if (l == NULL) {
        return ADM_ENOMEM;
    }
    l->plan = plan;
    l->index = index;
    l->connections = connections;
    l->seq = index;
    l->next_due = index;
    l->pacer_fd = -1;
    l->reviews = *reviews;
    memset(reviews, 0, sizeof(*reviews));
    tally_init(&l->tally);
    l->scratch = adm_arena_create(256 * 1024);
    if (l->scratch == NULL || uv_loop_init(&l->loop) != 0) {
        adm_arena_destroy(l->scratch);
        adm_reviewset_free(&l->reviews);
        free(l);
        return ADM_ENOMEM;
    }
    up_opts.host = host;
    up_opts.port = port;
    up_opts.tls = tls;
    up_opts.max_conns = connections;
    up_opts.max_body_bytes = 64u * 1024 * 1024;
    /* the handles are made here, on any thread; they are started by lane_run on the lane's own */
    uv_timer_init(&l->loop, &l->stop);
    l->stop.data = l;
    uv_signal_init(&l->loop, &l->sigint);
    l->sigint.data = l;
    if (!plan->closed) {
        l->pacer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (l->pacer_fd >= 0 && uv_poll_init(&l->loop, &l->pacer, l->pacer_fd) != 0) {
            close(l->pacer_fd);
            l->pacer_fd = -1;
        }
        l->pacer.data = l;
    }
    if (!plan->closed && l->pacer_fd < 0) {
        ret = ADM_EIO;
    } else if (adm_upstream_create(&l->loop, &up_opts, &l->up) != 0) {
        ret = ADM_ENOMEM;
    }
    if (ret != 0) {
        lane_free(l);
        return ret;
    }
    *out = l;
    return 0;
}

static void on_probe(const adm_call_result_t *res, void *arg)
{
    lane_t *l = arg;

    l->probe_done = true;
    l->probe = *res;
    snprintf(l->probe_detail, sizeof(l->probe_detail), "%s", res->detail != NULL ? res->detail : "");
    l->probe.detail = l->probe_detail;
}

int lane_probe(lane_t *l, char *detail, size_t detail_len)
{
    for (int attempt = 0;; attempt++) {
        char uid[ADM_UID_LEN + 1];
        adm_review_body_t *body = next_body(l, uid);

        l->probe_done = false;
        if (adm_upstream_post(l->up, l->plan->path, NULL, body->data, body->len, l->plan->timeout_ms,
                              on_probe, l) == NULL) {
            snprintf(detail, detail_len, "out of memory");
            return -1;
        }
        while (!l->probe_done && uv_run(&l->loop, UV_RUN_ONCE) != 0) {
        }
        if (l->probe.error == ADM_CALL_OK || l->probe.error == ADM_CALL_TIMEOUT) {
            return 0;
        }
        if ((l->probe.error != ADM_CALL_IO && l->probe.error != ADM_CALL_PROTOCOL) ||
            attempt + 1 == PROBE_TRIES) {
            snprintf(detail, detail_len, "%s", l->probe.detail);
            return -1;
        }
    }
}

void lane_run(lane_t *l)
{
    plan_t *p = l->plan;

    l->end_ns = p->end_ns;
    usage_start(l);
    uv_signal_start(&l->sigint, on_sigint, SIGINT);
    if (p->warmup_ms > 0) {
        arm_stop(l, p->measure_ns, on_measure);
    } else {
        arm_stop(l, l->end_ns, on_stop);
    }
    if (p->closed) {
        for (uint64_t i = 0; i < l->connections; i++) {
            issue(l, now_ns());
        }
    } else {
        uv_poll_start(&l->pacer, UV_READABLE, on_pace);
        pacer_arm(l, due_ns(l, l->next_due));
    }
    uv_run(&l->loop, UV_RUN_DEFAULT);
}

const tally_t *lane_tally(const lane_t *l)
{
    return &l->tally;
}

thread_usage_t lane_usage(const lane_t *l)
{
    return l->usage;
}

void lane_free(lane_t *l)
{
    if (l == NULL) {
        return;
    }
    if (!l->closed_handles) {
        /* it never ran (the probe failed, or another lane could not be made) */
        close_handles(l);
        uv_run(&l->loop, UV_RUN_DEFAULT);
    }
    uv_loop_close(&l->loop);
    if (l->pacer_fd >= 0) {
        close(l->pacer_fd);
    }
    while (l->free_requests != NULL) {
        request_t *rq = l->free_requests;

        l->free_requests = rq->next;
        free(rq);
    }
    adm_reviewset_free(&l->reviews);
    adm_arena_destroy(l->scratch);
    free(l);
}

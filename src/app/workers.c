/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parent of `--workers N` (workers.h). It runs no event loop: the signals it handles are blocked
 * and taken with sigtimedwait, whose timeout is the next restart due. So a worker forked from any
 * point of this loop starts with no handle, thread or signal handler of the parent's; it only
 * unblocks the signals the parent blocked and returns to main, which goes on as one process would.
 */
#include "adm/app/workers.h"

#include "adm/base/error.h"
#include "adm/base/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QUICK_DEATH_MS 10000 /* a worker dying sooner than this after its start backs off */
#define FIRST_BACKOFF_MS 100
#define MAX_BACKOFF_MS 10000

typedef struct worker_s {
    pid_t pid; /* 0: not running */
    uint64_t started_ms;
    uint64_t restart_at_ms;
    uint64_t backoff_ms;
    unsigned starts;
} worker_t;

static struct {
    int reserved[3]; /* the port-0 reservations, -1: none */
    int nreserved;
} ports;

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int port_of(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)a)->sin6_port)
                                    : ntohs(((const struct sockaddr_in *)a)->sin_port);
}

static int reserve(struct sockaddr_storage *addr, const char *flag, char *err, size_t err_len)
{
    socklen_t len = addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int one = 1;
    int fd;

    if (port_of(addr) != 0) {
        return 0;
    }
    fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)addr, len) != 0 || getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
        int rc = -errno;

        snprintf(err, err_len, "%s: cannot reserve a port for the workers: %s", flag, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return rc;
    }
    ports.reserved[ports.nreserved++] = fd;
    return 0;
}

int adm_workers_reserve_ports(adm_options_t *opts, char *err, size_t err_len)
{
    int rc = reserve(&opts->listen, "--listen", err, err_len);

    if (rc == 0 && opts->has_health_listen) {
        rc = reserve(&opts->health_listen, "--health-listen", err, err_len);
    }
    if (rc == 0 && opts->has_metrics_listen) {
        rc = reserve(&opts->metrics_listen, "--metrics-listen", err, err_len);
    }
    return rc;
}

static void release_ports(void)
{
    for (int i = 0; i < ports.nreserved; i++) {
        close(ports.reserved[i]);
    }
    ports.nreserved = 0;
}

/* Returns 0 in the new worker, 1 in the parent (a failed fork is retried like a death). */
static int start(worker_t *w, unsigned index, const sigset_t *unblocked, pid_t parent)
{
    pid_t pid = fork();

    if (pid == 0) {
        /* out of the parent's process group: a terminal's Ctrl-C reaches the parent alone, whose
           relay is then the workers' one signal (a second would cut their drain short) */
        setpgid(0, 0);
        release_ports();
        /* a parent killed outright must not leave workers serving on: they drain */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) {
            raise(SIGTERM);
        }
        sigprocmask(SIG_SETMASK, unblocked, NULL);
        return 0;
    }
    w->starts++;
    w->started_ms = now_ms();
    if (pid < 0) {
        adm_log_error("worker %u: fork: %s; trying again in %d ms", index, strerror(errno), MAX_BACKOFF_MS);
        w->restart_at_ms = w->started_ms + MAX_BACKOFF_MS;
        return 1;
    }
    w->pid = pid;
    adm_log_info("worker %u started (pid %d)", index, (int)pid);
    return 1;
}

static void relay(worker_t *workers, unsigned n, int sig)
{
    for (unsigned i = 0; i < n; i++) {
        if (workers[i].pid > 0) {
            kill(workers[i].pid, sig);
        }
    }
}

static void describe(int status, char *out, size_t len)
{
    if (WIFSIGNALED(status)) {
        snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    }
}

typedef struct sup_s {
    worker_t *workers;
    unsigned n;
    unsigned alive;
    bool stopping;
    int result; /* the parent's exit status */
} sup_t;

/* One worker has gone: log it, and unless admitd is stopping, schedule its restart. */
static void on_exit_status(sup_t *s, worker_t *w, unsigned index, int status)
{
    uint64_t now = now_ms();
    int pid = (int)w->pid;
    char how[96];

    describe(status, how, sizeof(how));
    w->pid = 0;
    s->alive--;
    if (s->stopping) {
        bool clean = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                     (WIFSIGNALED(status) && (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT));

        adm_log_info("worker %u (pid %d) %s", index, pid, how);
        if (!clean && s->result == 0) {
            s->result = 1;
        }
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
        /* bad flags, files or a listener that cannot bind: a restart would fail alike */
        adm_log_error("worker %u (pid %d) %s: it could not start; stopping the other workers", index, pid,
                      how);
        s->stopping = true;
        s->result = 2;
        relay(s->workers, s->n, SIGTERM);
        return;
    }
    if (now - w->started_ms >= QUICK_DEATH_MS) {
        w->backoff_ms = 0;
    } else {
        w->backoff_ms = w->backoff_ms == 0 ? FIRST_BACKOFF_MS : w->backoff_ms * 2;
        w->backoff_ms = w->backoff_ms > MAX_BACKOFF_MS ? MAX_BACKOFF_MS : w->backoff_ms;
    }
    w->restart_at_ms = now + w->backoff_ms;
    adm_log_warn("worker %u (pid %d) %s; restarting it in %llu ms", index, pid, how,
                 (unsigned long long)w->backoff_ms);
}

static void reap(sup_t *s)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);

        if (pid <= 0) {
            return;
        }
        for (unsigned i = 0; i < s->n; i++) {
            if (s->workers[i].pid == pid) {
                on_exit_status(s, &s->workers[i], i, status);
            }
        }
    }
}

/* Starts the workers whose restart is due; returns 0 in a new worker (its index in *index). */
static int start_due(sup_t *s, const sigset_t *unblocked, int *index, bool *restarted)
{
    uint64_t now = now_ms();

    for (unsigned i = 0; i < s->n && !s->stopping; i++) {
        worker_t *w = &s->workers[i];

        if (w->pid != 0 || w->restart_at_ms > now) {
            continue;
        }
        if (start(w, i, unblocked, getpid()) == 0) {
            *index = (int)i;
            *restarted = w->starts > 0;
            return 0;
        }
        s->alive += w->pid > 0 ? 1 : 0;
    }
    return 1;
}

/* How long sigtimedwait may wait: until the next restart due, or a long while. */
static struct timespec next_wait(const sup_t *s)
{
    uint64_t now = now_ms();
    uint64_t wait = 3600 * 1000;
    struct timespec ts;

    for (unsigned i = 0; i < s->n && !s->stopping; i++) {
        if (s->workers[i].pid == 0) {
            uint64_t due = s->workers[i].restart_at_ms;

            wait = due <= now ? 0 : (due - now < wait ? due - now : wait);
        }
    }
    ts.tv_sec = (time_t)(wait / 1000);
    ts.tv_nsec = (long)(wait % 1000) * 1000000;
    return ts;
}

int adm_workers_run(unsigned n, int *index, bool *restarted)
{
    worker_t workers[ADM_MAX_WORKERS] = {{0}};
    sup_t s = {.workers = workers, .n = n};
    sigset_t handled, unblocked;

    *index = -1;
    *restarted = false;
    sigemptyset(&handled);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGCHLD);
    sigprocmask(SIG_BLOCK, &handled, &unblocked);
    for (;;) {
        struct timespec wait;
        siginfo_t info;
        int sig;

        reap(&s);
        if (s.stopping && s.alive == 0) {
            break;
        }
        if (start_due(&s, &unblocked, index, restarted) == 0) {
            return 0;
        }
        wait = next_wait(&s);
        sig = sigtimedwait(&handled, &info, &wait);
        if (sig == SIGHUP) {
            adm_log_info("received SIGHUP: relaying it to the workers");
            relay(workers, n, SIGHUP);
        } else if (sig == SIGTERM || sig == SIGINT) {
            adm_log_info("received %s: relaying it to the workers", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            s.stopping = true;
            relay(workers, n, sig);
        }
    }
    release_ports();
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    adm_log_info("every worker has exited");
    return s.result;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A burst of new TLS connections (INTERFACE.md D9): N connections opened at the same instant, each
 * doing a full handshake and one POST of an AdmissionReview. For each connection the time from
 * the burst's start to its complete answer is recorded; the burst is repeated and the latency
 * quantiles over all connections printed. One thread, non-blocking sockets and poll(), mbedTLS
 * through admitd's own TLS session code.
 *
 *   burst PORT CA_FILE REVIEW.json [CONNECTIONS=100] [BURSTS=20] [PATH=/validate]
 */
#include "adm/base/buf.h"
#include "adm/base/histogram.h"
#include "adm/net/http_client.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct conn_s {
    int fd;
    adm_tls_session_t *tls;
    adm_http_resp_parser_t resp;
    adm_buf_t plain;
    bool sent;
    bool finished;
} conn_t;

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Writes what the TLS session has queued; a full socket buffer leaves the rest for later. */
static int flush(conn_t *c)
{
    adm_buf_t *out = adm_tls_session_output(c->tls);

    while (out->len > 0) {
        ssize_t n = send(c->fd, out->data, out->len, MSG_NOSIGNAL);

        if (n < 0) {
            return errno == EAGAIN ? 0 : -1;
        }
        adm_buf_consume(out, (size_t)n);
    }
    return 0;
}

static int open_conn(conn_t *c, adm_tls_ctx_t *ctx, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1;

    memset(c, 0, sizeof(*c));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) {
        return -1;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        return -1;
    }
    adm_http_resp_parser_init(&c->resp, 1 << 20);
    if (adm_tls_session_create(ctx, "127.0.0.1", &c->tls) != 0 || adm_tls_session_start(c->tls) != 0) {
        return -1;
    }
    return 0;
}

static void close_conn(conn_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
    }
    adm_tls_session_destroy(c->tls);
    adm_http_resp_parser_free(&c->resp);
    adm_buf_free(&c->plain);
}

/* Advances one connection on readable input; returns 1 when its answer is complete, -1 on error. */
static int step(conn_t *c, const adm_buf_t *request)
{
    uint8_t buf[16384];
    ssize_t n;

    for (n = recv(c->fd, buf, sizeof(buf), 0); n > 0; n = recv(c->fd, buf, sizeof(buf), 0)) {
        size_t used;

        if (adm_tls_session_recv(c->tls, buf, (size_t)n, &c->plain) < 0) {
            return -1;
        }
        if (!c->sent && adm_tls_session_handshake_done(c->tls)) {
            if (adm_tls_session_send(c->tls, request->data, request->len) != 0) {
                return -1;
            }
            c->sent = true;
        }
        if (flush(c) != 0) {
            return -1;
        }
        if (c->plain.len > 0) {
            adm_http_resp_event_t ev = adm_http_resp_parse(&c->resp, c->plain.data, c->plain.len, &used);

            adm_buf_consume(&c->plain, used);
            if (ev == ADM_HTTP_RESP_ERROR) {
                return -1;
            }
            if (ev == ADM_HTTP_RESP_DONE) {
                return c->resp.status == 200 ? 1 : -1;
            }
        }
    }
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int port, nconns, bursts;
    const char *path;
    adm_tls_client_opts_t opts = {0};
    adm_tls_ctx_t *ctx;
    adm_hist_t *hist = calloc(1, sizeof(*hist));
    adm_buf_t request = ADM_BUF_INIT;
    char err[256];
    char *body;
    size_t body_len;
    long errors = 0;
    FILE *f;

    if (argc < 4) {
        fprintf(stderr,
                "usage: burst PORT CA_FILE REVIEW.json [CONNECTIONS=100] [BURSTS=20] [PATH=/validate]\n");
        return 2;
    }
    port = (int)strtol(argv[1], NULL, 10);
    nconns = argc > 4 ? (int)strtol(argv[4], NULL, 10) : 100;
    bursts = argc > 5 ? (int)strtol(argv[5], NULL, 10) : 20;
    path = argc > 6 ? argv[6] : "/validate";
    f = fopen(argv[3], "rb");
    body = malloc(4 << 20);
    if (f == NULL || body == NULL || hist == NULL || nconns < 1 || nconns > 10000) {
        fprintf(stderr, "burst: cannot read %s\n", argv[3]);
        return 2;
    }
    body_len = fread(body, 1, 4 << 20, f);
    fclose(f);
    opts.ca_file = argv[2];
    if (adm_tls_global_init() != 0 || adm_tls_client_ctx_create(&opts, &ctx, err, sizeof(err)) != 0) {
        fprintf(stderr, "burst: %s\n", err);
        return 2;
    }
    adm_http_write_post(&request, "127.0.0.1", path, NULL, body, body_len);
    adm_hist_init(hist);
    for (int b = 0; b < bursts; b++) {
        conn_t *conns = calloc((size_t)nconns, sizeof(*conns));
        struct pollfd *pfds = calloc((size_t)nconns, sizeof(*pfds));
        int left = nconns;
        uint64_t start = now_ns();

        for (int i = 0; i < nconns; i++) {
            if (open_conn(&conns[i], ctx, port) != 0) {
                fprintf(stderr, "burst: cannot connect: %s\n", strerror(errno));
                return 1;
            }
        }
        while (left > 0) {
            int ready;

            for (int i = 0; i < nconns; i++) {
                bool pending = adm_tls_session_output(conns[i].tls)->len > 0;

                pfds[i].fd = conns[i].finished ? -1 : conns[i].fd;
                pfds[i].events = POLLIN | (pending ? POLLOUT : 0);
            }
            ready = poll(pfds, (nfds_t)nconns, 10000);
            if (ready <= 0) {
                fprintf(stderr, "burst: no progress in 10 s\n");
                return 1;
            }
            for (int i = 0; i < nconns; i++) {
                int rc;

                if (conns[i].finished || pfds[i].revents == 0) {
                    continue;
                }
                rc = (pfds[i].revents & POLLOUT) != 0 ? flush(&conns[i]) : 0;
                if (rc == 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                    rc = step(&conns[i], &request);
                }
                if (rc != 0) {
                    conns[i].finished = true;
                    left--;
                    if (rc > 0) {
                        adm_hist_record(hist, now_ns() - start);
                    } else {
                        errors++;
                    }
                }
            }
        }
        for (int i = 0; i < nconns; i++) {
            close_conn(&conns[i]);
        }
        free(conns);
        free(pfds);
        usleep(200000); /* let the server settle between bursts */
    }
    printf("%d bursts of %d new TLS connections, one POST %s each (%zu B): %llu answers, %ld errors\n",
           bursts, nconns, path, body_len, (unsigned long long)hist->total, errors);
    printf("time from burst start to answer: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           adm_hist_quantile(hist, 0.5) / 1e6, adm_hist_quantile(hist, 0.9) / 1e6,
           adm_hist_quantile(hist, 0.99) / 1e6, hist->max_ns / 1e6);
    adm_tls_ctx_unref(ctx);
    adm_tls_global_cleanup();
    adm_buf_free(&request);
    free(body);
    free(hist);
    return errors == 0 ? 0 : 1;
}

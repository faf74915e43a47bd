/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Holds N idle TLS keep-alive connections open against a server, for measuring what each costs it
 * (bench/idle-memory.sh). Each connection does its handshake and one POST of an AdmissionReview,
 * reads the whole answer, and then stays open without a word. The program talks to the script
 * running it on stdin/stdout, so the server's RSS can be read at each stage:
 *
 *   prints "open N failed F"  once every connection has had its answer, then waits for a line;
 *   prints "closed"           once every connection was closed (close_notify, then close), then
 *                             waits for the end of its input and exits.
 *
 * Connections are opened on blocking sockets by THREADS threads, each one connection at a time
 * (the client's handshake costs more CPU than the server's), so the server sees a pool filling up,
 * not a storm.
 *
 *   idle-conns PORT CA_FILE REVIEW.json CONNECTIONS [PATH=/validate] [THREADS=2]
 */
#include "adm/base/buf.h"
#include "adm/net/http_client.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct idle_conn_s {
    int fd;
    adm_tls_session_t *tls;
} idle_conn_t;

/* Puts every byte the session queued on the socket (blocking). */
static int send_queued(idle_conn_t *c)
{
    adm_buf_t *out = adm_tls_session_output(c->tls);

    while (out->len > 0) {
        ssize_t n = send(c->fd, out->data, out->len, MSG_NOSIGNAL);

        if (n <= 0) {
            return -1;
        }
        adm_buf_consume(out, (size_t)n);
    }
    return 0;
}

/* Reads once from the socket into the session; plaintext lands in plain. */
static int receive_some(idle_conn_t *c, adm_buf_t *plain)
{
    uint8_t cipher[16384];
    ssize_t n = recv(c->fd, cipher, sizeof(cipher), 0);

    if (n <= 0) {
        return -1;
    }
    if (adm_tls_session_recv(c->tls, cipher, (size_t)n, plain) < 0) {
        return -1;
    }
    return send_queued(c);
}

/* Connects, shakes hands and has one request answered 200; the connection stays open. */
static int open_idle(idle_conn_t *c, adm_tls_ctx_t *ctx, int port, const adm_buf_t *request)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval limit = {.tv_sec = 30};
    adm_http_resp_parser_t resp;
    adm_buf_t plain = ADM_BUF_INIT;
    int one = 1;
    int rc = -1;

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    adm_http_resp_parser_init(&resp, 1 << 20);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        goto out;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    if (adm_tls_session_create(ctx, "127.0.0.1", &c->tls) != 0 || adm_tls_session_start(c->tls) != 0 ||
        send_queued(c) != 0) {
        goto out;
    }
    while (!adm_tls_session_handshake_done(c->tls)) {
        if (receive_some(c, &plain) != 0) {
            goto out;
        }
    }
    if (adm_tls_session_send(c->tls, request->data, request->len) != 0 || send_queued(c) != 0) {
        goto out;
    }
    for (;;) {
        size_t used = 0;
        adm_http_resp_event_t ev = ADM_HTTP_RESP_NEED_MORE;

        if (plain.len > 0) {
            ev = adm_http_resp_parse(&resp, plain.data, plain.len, &used);
            adm_buf_consume(&plain, used);
        }
        if (ev == ADM_HTTP_RESP_DONE) {
            rc = resp.status == 200 ? 0 : -1;
            break;
        }
        if (ev == ADM_HTTP_RESP_ERROR || receive_some(c, &plain) != 0) {
            break;
        }
    }
out:
    adm_http_resp_parser_free(&resp);
    adm_buf_free(&plain);
    return rc;
}

static void close_idle(idle_conn_t *c)
{
    if (c->tls != NULL && adm_tls_session_close_notify(c->tls) == 0) {
        send_queued(c);
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    adm_tls_session_destroy(c->tls);
    c->fd = -1;
    c->tls = NULL;
}

typedef struct opener_s {
    pthread_t thread;
    idle_conn_t *conns;
    long first, count, stride; /* this thread opens conns[first + k * stride], k < count */
    adm_tls_ctx_t *ctx;        /* shared: its RNG is locked by mbedTLS */
    int port;
    const adm_buf_t *request;
    atomic_long *failed;
} opener_t;

static void *open_share(void *arg)
{
    opener_t *o = arg;

    for (long k = 0; k < o->count; k++) {
        idle_conn_t *c = &o->conns[o->first + k * o->stride];

        if (open_idle(c, o->ctx, o->port, o->request) != 0) {
            if (atomic_fetch_add(o->failed, 1) == 0) {
                fprintf(stderr, "idle-conns: a connection failed: %s\n",
                        c->tls != NULL ? adm_tls_session_error(c->tls) : strerror(errno));
            }
            close_idle(c);
        }
    }
    return NULL;
}

/* The request every connection makes: a POST of the review file's bytes. */
static int build_request(const char *review_file, const char *path, adm_buf_t *request)
{
    FILE *f = fopen(review_file, "rb");
    char *body = malloc(4 << 20);
    size_t body_len = 0;
    int rc = -1;

    if (f != NULL && body != NULL) {
        body_len = fread(body, 1, 4 << 20, f);
        rc = adm_http_write_post(request, "127.0.0.1", path, NULL, body, body_len);
    }
    if (f != NULL) {
        fclose(f);
    }
    free(body);
    return rc;
}

/* Blocks until the script says go on (a line) or stops (end of input). */
static void wait_for_word(void)
{
    char line[64];

    fflush(stdout);
    if (fgets(line, sizeof(line), stdin) == NULL) {
        return;
    }
}

int main(int argc, char **argv)
{
    adm_tls_client_opts_t opts = {0};
    adm_buf_t request = ADM_BUF_INIT;
    adm_tls_ctx_t *ctx;
    idle_conn_t *conns;
    char err[256];
    opener_t openers[16];
    atomic_long failed = 0;
    long port, n, nthreads;

    if (argc < 5) {
        fprintf(stderr,
                "usage: idle-conns PORT CA_FILE REVIEW.json CONNECTIONS [PATH=/validate] [THREADS=2]\n");
        return 2;
    }
    port = strtol(argv[1], NULL, 10);
    n = strtol(argv[4], NULL, 10);
    nthreads = argc > 6 ? strtol(argv[6], NULL, 10) : 2;
    conns = n > 0 && n <= 1000000 ? calloc((size_t)n, sizeof(*conns)) : NULL;
    if (conns == NULL || nthreads < 1 || nthreads > 16 ||
        build_request(argv[3], argc > 5 ? argv[5] : "/validate", &request) != 0) {
        fprintf(stderr,
                "idle-conns: cannot read %s, or CONNECTIONS is not 1..1000000, or THREADS not 1..16\n",
                argv[3]);
        return 2;
    }
    opts.ca_file = argv[2];
    if (adm_tls_global_init() != 0 || adm_tls_client_ctx_create(&opts, &ctx, err, sizeof(err)) != 0) {
        fprintf(stderr, "idle-conns: %s\n", err);
        return 2;
    }
    for (long i = 0; i < n; i++) {
        conns[i].fd = -1;
    }
    for (long t = 0; t < nthreads; t++) {
        openers[t] = (opener_t){.conns = conns,
                                .first = t,
                                .count = (n - t + nthreads - 1) / nthreads,
                                .stride = nthreads,
                                .ctx = ctx,
                                .port = (int)port,
                                .request = &request,
                                .failed = &failed};
        if (pthread_create(&openers[t].thread, NULL, open_share, &openers[t]) != 0) {
            fprintf(stderr, "idle-conns: cannot start a thread\n");
            return 2;
        }
    }
    for (long t = 0; t < nthreads; t++) {
        pthread_join(openers[t].thread, NULL);
    }
    printf("open %ld failed %ld\n", n - (long)failed, (long)failed);
    wait_for_word();
    for (long i = 0; i < n; i++) {
        close_idle(&conns[i]);
    }
    printf("closed\n");
    wait_for_word();
    adm_tls_ctx_unref(ctx);
    adm_tls_global_cleanup();
    adm_buf_free(&request);
    free(conns);
    return failed == 0 ? 0 : 1;
}

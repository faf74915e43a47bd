/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch-latency: the time from a change on the API server to its effect on admission, through
 * admitd's informer (issue 13). Against adm-fake-apiserver (its POST /_control) and an admitd
 * --insecure-http --kubeconfig pointing at it, N times: label the namespace "bench" with
 * pod-security.kubernetes.io/enforce restricted, then privileged, in turn, and after each change
 * send /validate for a pod that only the privileged level admits, on one keep-alive connection,
 * back to back, until the answer is the one the new label gives. Each sample runs from just
 * before the change is sent (the fake writes the watch event before it answers the change) to the
 * first answer that shows it, so it includes one control round trip and, at most, one request
 * that started before the event arrived. Prints p50, p99 and max in ms, the change's own round
 * trip to the fake alone (p50), the requests sent per change, and how many changes the first
 * request after the change already saw.
 *
 *   watch-latency API_PORT ADMITD_PORT [N=200]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const char pod_review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"b\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":"
    "\"v1\",\"resource\":\"pods\"},\"namespace\":\"bench\",\"name\":\"p\",\"operation\":\"CREATE\","
    "\"userInfo\":{\"username\":\"bench\"},\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
    "{\"name\":\"p\",\"namespace\":\"bench\"},\"spec\":{\"serviceAccountName\":\"default\",\"containers\":[{"
    "\"name\":\"c\",\"image\":\"i\"}]}}}}";

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dial(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "watch-latency: cannot connect to 127.0.0.1:%d\n", port);
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* POST body to path on fd (keep-alive) and read the answer's body into out; the status code. */
static int post(int fd, const char *path, const char *body, char *out, size_t out_len)
{
    static char buf[1 << 16];
    char head[256];
    size_t have = 0, need = 0, body_at = 0;
    int n = snprintf(head, sizeof(head),
                     "POST %s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     path, strlen(body));

    struct iovec iov[2] = {{head, (size_t)n}, {(void *)body, strlen(body)}};

    if (writev(fd, iov, 2) != (ssize_t)(iov[0].iov_len + iov[1].iov_len)) {
        fprintf(stderr, "watch-latency: write failed\n");
        exit(1);
    }
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
        char *end;

        if (got <= 0) {
            fprintf(stderr, "watch-latency: connection closed\n");
            exit(1);
        }
        have += (size_t)got;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end != NULL && body_at == 0) {
            const char *cl = strcasestr(buf, "content-length:");

            body_at = (size_t)(end + 4 - buf);
            need = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
        }
        if (body_at > 0 && have >= body_at + need) {
            snprintf(out, out_len, "%.*s", (int)need, buf + body_at);
            return (int)strtol(buf + 9, NULL, 10);
        }
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void change(int api, const char *level)
{
    char cmd[512], out[256];

    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"bench\","
             "\"labels\":{\"kubernetes.io/metadata.name\":\"bench\",\"pod-security.kubernetes.io/enforce\":"
             "\"%s\"}},\"status\":{\"phase\":\"Active\"}}}",
             level);
    if (post(api, "/_control", cmd, out, sizeof(out)) != 200) {
        fprintf(stderr, "watch-latency: the fake refused %s: %s\n", cmd, out);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int api_port = argc > 2 ? (int)strtol(argv[1], NULL, 10) : 0;
    int admitd_port = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 0;
    int n = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 200;
    double *ms = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    double *ctl = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    int first = 0;
    static char answer[1 << 16];
    unsigned long requests = 0;
    int api, admitd;

    if (api_port <= 0 || admitd_port <= 0 || n <= 0 || ms == NULL || ctl == NULL) {
        fprintf(stderr, "usage: watch-latency API_PORT ADMITD_PORT [N]\n");
        return 2;
    }
    api = dial(api_port);
    admitd = dial(admitd_port);
    change(api, "privileged");
    for (int i = 0; i < n; i++) {
        bool want = i % 2 == 1; /* restricted refuses the pod, privileged admits it */
        double t0 = now_ms();
        unsigned long sent = requests;

        change(api, want ? "privileged" : "restricted");
        ctl[i] = now_ms() - t0;
        for (;;) {
            requests++;
            if (post(admitd, "/validate", pod_review, answer, sizeof(answer)) != 200) {
                fprintf(stderr, "watch-latency: admitd answered: %s\n", answer);
                return 1;
            }
            if ((strstr(answer, "\"allowed\":true") != NULL) == want) {
                break;
            }
            if (now_ms() - t0 > 10000) {
                fprintf(stderr, "watch-latency: change %d not seen within 10 s\n", i);
                return 1;
            }
        }
        ms[i] = now_ms() - t0;
        first += requests - sent == 1;
    }
    qsort(ms, (size_t)n, sizeof(double), cmp);
    printf("changes %d\n", n);
    printf("watch_event_to_admission_ms p50 %.3f p99 %.3f max %.3f\n", ms[n / 2], ms[(size_t)(n * 99) / 100],
           ms[n - 1]);
    qsort(ctl, (size_t)n, sizeof(double), cmp);
    printf("change_roundtrip_ms p50 %.3f\n", ctl[n / 2]);
    printf("requests_per_change %.2f\n", (double)requests / n);
    printf("seen_by_first_request %d of %d\n", first, n);
    free(ms);
    free(ctl);
    close(api);
    close(admitd);
    return 0;
}

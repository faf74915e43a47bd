/* SPDX-License-Identifier: Apache-2.0 */
/* Integration harness: process control, a blocking TLS/HTTP client, fixtures. See harness.h. */
#include "harness.h"

#include "adm/base/error.h"
#include "certgen.h"
#include "plugintest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <llhttp.h>
#include <mbedtls/base64.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yyjson.h>

long long h_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long h_rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    while (kib < 0 && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "VmRSS: %ld kB", &kib) != 1) {
            kib = -1;
        }
    }
    fclose(f);
    return kib;
}

const char *h_bin(const char *env_name)
{
    const char *bin = getenv(env_name);

    if (bin == NULL || *bin == '\0') {
        fprintf(stderr, "%s is not set (ctest sets it)\n", env_name);
        exit(1);
    }
    return bin;
}

static const char *admitd_bin(void)
{
    const char *bin = getenv("ADMITD_BIN");

    return bin != NULL ? bin : "./admitd";
}

void h_dump_log(const h_server_t *s)
{
    FILE *f = fopen(s->log, "r");
    char line[1024];

    if (f == NULL) {
        return;
    }
    fprintf(stderr, "---- admitd log (%s) ----\n", s->log);
    while (fgets(line, sizeof(line), f) != NULL) {
        fputs(line, stderr);
    }
    fprintf(stderr, "---- end of log ----\n");
    fclose(f);
}

int h_count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int n = 0;

    if (f == NULL) {
        return 0;
    }
    while (getline(&line, &cap, f) > 0) {
        n += strstr(line, needle) != NULL;
    }
    free(line);
    fclose(f);
    return n;
}

bool h_wait_lines(const char *path, const char *needle, int count, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;

    while (h_count_lines(path, needle) < count) {
        if (h_now_ms() >= deadline) {
            return false;
        }
        poll(NULL, 0, 5); /* polling a file: no event to wait on */
    }
    return true;
}

int h_log_count(const h_server_t *s, const char *needle)
{
    return h_count_lines(s->log, needle);
}

bool h_log_wait(const h_server_t *s, const char *needle, int count, int timeout_ms)
{
    return h_wait_lines(s->log, needle, count, timeout_ms);
}

/* Scans the log for "serving KIND on 127.0.0.1:PORT". */
static int find_port(const char *log, const char *kind)
{
    FILE *f = fopen(log, "r");
    char line[1024], needle[64];
    int port = 0;

    if (f == NULL) {
        return 0;
    }
    snprintf(needle, sizeof(needle), "serving %s on 127.0.0.1:", kind);
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = strstr(line, needle);

        if (p != NULL) {
            port = (int)strtol(p + strlen(needle), NULL, 10);
        }
    }
    fclose(f);
    return port;
}

static bool has_arg(const char *const *args, const char *name)
{
    for (; args != NULL && *args != NULL; args++) {
        if (strcmp(*args, name) == 0) {
            return true;
        }
    }
    return false;
}

int h_start(h_server_t *s, const char *dir, const char *const *args)
{
    return h_start_prog(s, admitd_bin(), dir, args);
}

int h_start_prog(h_server_t *s, const char *bin, const char *dir, const char *const *args)
{
    if (h_spawn_prog(s, bin, dir, args) != 0) {
        return -1;
    }
    return h_wait_serving(s, 20000);
}

int h_spawn(h_server_t *s, const char *dir, const char *const *args)
{
    return h_spawn_prog(s, admitd_bin(), dir, args);
}

int h_spawn_prog(h_server_t *s, const char *bin, const char *dir, const char *const *args)
{
    const char *argv[H_MAX_ARGS + 6];
    int n = 0;

    memset(s, 0, sizeof(*s));
    if (dir != NULL) {
        snprintf(s->dir, sizeof(s->dir), "%s", dir);
    } else if (certgen_tempdir(s->dir, sizeof(s->dir)) != 0) {
        return -1;
    }
    snprintf(s->ca, sizeof(s->ca), "%s/ca.pem", s->dir);
    snprintf(s->log, sizeof(s->log), "%s/admitd.log", s->dir);
    s->tls = !has_arg(args, "--insecure-http");
    s->wants_health = has_arg(args, "--health-listen");
    argv[n++] = bin;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    if (s->tls && !has_arg(args, "--tls-cert-file")) {
        argv[n++] = "--self-signed-ca-out";
        argv[n++] = s->ca;
    }
    for (const char *const *a = args; a != NULL && *a != NULL; a++) {
        if (n == H_MAX_ARGS + 5) {
            fprintf(stderr, "harness: more than %d arguments for %s\n", H_MAX_ARGS, bin);
            return -1;
        }
        argv[n++] = *a;
    }
    argv[n] = NULL;

    s->pid = fork();
    if (s->pid < 0) {
        return -1;
    }
    if (s->pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        dup2(fd, STDERR_FILENO);
        dup2(fd, STDOUT_FILENO);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return 0;
}

int h_wait_serving(h_server_t *s, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;

    while (h_now_ms() < deadline) {
        int status;

        s->port = find_port(s->log, "admission");
        if (s->port != 0) {
            if (s->wants_health) {
                s->health_port = find_port(s->log, "health");
                if (s->health_port == 0) {
                    continue;
                }
            }
            return 0;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            h_dump_log(s);
            return -1;
        }
        poll(NULL, 0, 5); /* polling a file: no event to wait on */
    }
    h_dump_log(s);
    return -1;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;
    int status;

    while (h_now_ms() < deadline) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid) {
            if (WIFEXITED(status)) {
                return WEXITSTATUS(status);
            }
            return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        poll(NULL, 0, 5);
    }
    return -1;
}

int h_stop(h_server_t *s, int sig, int timeout_ms)
{
    int rc;

    if (s->pid <= 0) {
        return -1;
    }
    if (sig != 0) {
        kill(s->pid, sig);
    }
    rc = wait_exit(s->pid, timeout_ms);
    if (rc >= 0) {
        s->pid = 0;
    }
    return rc;
}

void h_cleanup(h_server_t *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->dir[0] != '\0') {
        certgen_rmdir(s->dir);
        s->dir[0] = '\0';
    }
}

int h_run(const char *const *args, char *out, size_t out_len, int timeout_ms)
{
    return h_run_prog(admitd_bin(), args, out, out_len, timeout_ms);
}

int h_run_prog(const char *bin, const char *const *args, char *out, size_t out_len, int timeout_ms)
{
    const char *argv[H_MAX_ARGS + 2];
    int pipefd[2];
    int n = 0;
    size_t got = 0;
    pid_t pid;
    long long deadline = h_now_ms() + timeout_ms;

    argv[n++] = bin;
    for (; args != NULL && *args != NULL; args++) {
        if (n == H_MAX_ARGS + 1) {
            fprintf(stderr, "harness: more than %d arguments for %s\n", H_MAX_ARGS, bin);
            return -1;
        }
        argv[n++] = *args;
    }
    argv[n] = NULL;
    if (pipe(pipefd) != 0) {
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        dup2(pipefd[1], STDOUT_FILENO);
        close(pipefd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    for (;;) {
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        ssize_t r;
        long long left = deadline - h_now_ms();

        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            break;
        }
        r = read(pipefd[0], out + got, out_len - 1 - got);
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
        if (got >= out_len - 1) {
            break;
        }
    }
    out[got] = '\0';
    close(pipefd[0]);
    n = wait_exit(pid, (int)(deadline - h_now_ms() > 0 ? deadline - h_now_ms() : 1));
    if (n < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return n;
}

/* ---- client ---- */

static int wait_fd(int fd, short events, long long deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    long long left = deadline - h_now_ms();

    if (left <= 0) {
        return 0;
    }
    return poll(&p, 1, (int)left);
}

static int flush_tls(h_conn_t *c)
{
    adm_buf_t *out = adm_tls_session_output(c->tls);
    int rc = h_send_raw(c, out->data, out->len);

    out->len = 0;
    return rc;
}

/* Reads once from the socket into c->in (decrypting); 0 on progress, 1 on EOF, -1 on timeout/error. */
static int read_some(h_conn_t *c, long long deadline)
{
    uint8_t buf[65536];
    ssize_t n;

    if (c->eof) {
        return 1;
    }
    if (wait_fd(c->fd, POLLIN, deadline) <= 0) {
        return -1;
    }
    n = recv(c->fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE))) {
        c->eof = true;
        return 1;
    }
    if (n < 0) {
        return errno == EINTR || errno == EAGAIN ? 0 : -1;
    }
    if (c->tls == NULL) {
        return adm_buf_append(&c->in, buf, (size_t)n) == 0 ? 0 : -1;
    }
    n = adm_tls_session_recv(c->tls, buf, (size_t)n, &c->in);
    if (flush_tls(c) != 0) {
        return -1;
    }
    if (n == ADM_EOF) {
        c->eof = true;
        return 1;
    }
    return n == 0 ? 0 : -1;
}

int h_connect(h_conn_t *c, int port, const char *ca, const char *host, const char *cert, const char *key)
{
    adm_tls_client_opts_t o = {.ca_file = ca, .cert_file = cert, .key_file = key};

    return h_connect_tls(c, port, ca != NULL ? &o : NULL, host);
}

int h_connect_tls(h_conn_t *c, int port, const adm_tls_client_opts_t *opts, const char *host)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    long long deadline = h_now_ms() + 10000;
    int one = 1;
    char err[256];

    memset(c, 0, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        return -1;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (opts == NULL) {
        return 0;
    }
    if (adm_tls_client_ctx_create(opts, &c->ctx, err, sizeof(err)) != 0) {
        fprintf(stderr, "client TLS context: %s\n", err);
        return -1;
    }
    if (adm_tls_session_create(c->ctx, host != NULL ? host : "127.0.0.1", &c->tls) != 0 ||
        adm_tls_session_start(c->tls) != 0 || flush_tls(c) != 0) {
        return -1;
    }
    while (!adm_tls_session_handshake_done(c->tls)) {
        if (read_some(c, deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

int h_connect_to(h_conn_t *c, const h_server_t *s)
{
    return h_connect(c, s->port, s->tls ? s->ca : NULL, "127.0.0.1", NULL, NULL);
}

int h_send_raw(h_conn_t *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    long long deadline = h_now_ms() + 10000;

    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (wait_fd(c->fd, POLLOUT, deadline) <= 0) {
                return -1;
            }
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int h_send(h_conn_t *c, const void *data, size_t len)
{
    if (c->tls == NULL) {
        return h_send_raw(c, data, len);
    }
    if (adm_tls_session_send(c->tls, data, len) != 0) {
        return -1;
    }
    return flush_tls(c);
}

typedef struct parse_state_s {
    llhttp_t parser;
    h_response_t *r;
    char field[64];
    size_t field_len;
    int which; /* 1 Connection, 2 Content-Type */
    bool done;
    bool head;
} parse_state_t;

static int on_status_complete(llhttp_t *p)
{
    ((parse_state_t *)p)->r->status = p->status_code;
    return 0;
}

static int on_field(llhttp_t *p, const char *at, size_t n)
{
    parse_state_t *ps = (parse_state_t *)p;

    if (ps->field_len + n < sizeof(ps->field)) {
        memcpy(ps->field + ps->field_len, at, n);
        ps->field_len += n;
    }
    return 0;
}

static int on_field_complete(llhttp_t *p)
{
    parse_state_t *ps = (parse_state_t *)p;

    ps->field[ps->field_len] = '\0';
    ps->which = strcasecmp(ps->field, "connection") == 0     ? 1
                : strcasecmp(ps->field, "content-type") == 0 ? 2
                                                             : 0;
    ps->field_len = 0;
    return 0;
}

static int on_value(llhttp_t *p, const char *at, size_t n)
{
    parse_state_t *ps = (parse_state_t *)p;

    if (ps->which == 1 && n >= 5 && strncasecmp(at, "close", 5) == 0) {
        ps->r->close = true;
    } else if (ps->which == 2) {
        snprintf(ps->r->content_type, sizeof(ps->r->content_type), "%.*s", (int)n, at);
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n)
{
    return adm_buf_append(&((parse_state_t *)p)->r->body, at, n) == 0 ? 0 : -1;
}

static int on_headers_complete(llhttp_t *p)
{
    /* 1 tells llhttp the message has no body, whatever Content-Length says (HEAD). */
    return ((parse_state_t *)p)->head && p->status_code >= 200 ? 1 : 0;
}

static int on_complete(llhttp_t *p)
{
    ((parse_state_t *)p)->done = true;
    return HPE_PAUSED;
}

static const llhttp_settings_t response_settings = {
    .on_status_complete = on_status_complete,
    .on_header_field = on_field,
    .on_header_field_complete = on_field_complete,
    .on_header_value = on_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

int h_read(h_conn_t *c, h_response_t *r, int timeout_ms, int *interim)
{
    long long deadline = h_now_ms() + timeout_ms;

    if (interim != NULL) {
        *interim = 0;
    }
    for (;;) {
        parse_state_t ps;
        size_t consumed = 0;
        int rc;

        /* Re-parse from the start of the buffered bytes each time: responses are small. */
        memset(&ps, 0, sizeof(ps));
        memset(r, 0, sizeof(*r));
        ps.r = r;
        ps.head = c->head;
        llhttp_init(&ps.parser, HTTP_RESPONSE, &response_settings);
        if (c->in.len > 0) {
            llhttp_errno_t e = llhttp_execute(&ps.parser, (const char *)c->in.data, c->in.len);

            if (e == HPE_PAUSED) {
                consumed = (size_t)(llhttp_get_error_pos(&ps.parser) - (const char *)c->in.data);
            } else if (e != HPE_OK) {
                fprintf(stderr, "bad HTTP response: %s\n", llhttp_get_error_reason(&ps.parser));
                adm_buf_free(&r->body);
                return -1;
            }
        }
        if (ps.done) {
            adm_buf_consume(&c->in, consumed);
            if (r->status >= 100 && r->status < 200) {
                if (interim != NULL) {
                    (*interim)++;
                }
                adm_buf_free(&r->body);
                continue;
            }
            c->head = false;
            adm_buf_append(&r->body, "", 1); /* NUL for string checks, not counted */
            r->body.len--;
            return 0;
        }
        adm_buf_free(&r->body);
        if (c->eof) {
            return 1; /* what arrived before the close is not a whole response */
        }
        rc = read_some(c, deadline);
        if (rc < 0) {
            return rc;
        }
    }
}

bool h_wait_closed(h_conn_t *c, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;

    while (!c->eof) {
        int rc = read_some(c, deadline);

        if (rc == 1) {
            return true;
        }
        if (rc < 0) {
            return false;
        }
        c->in.len = 0; /* whatever else arrives is not the point */
    }
    return true;
}

void h_close(h_conn_t *c)
{
    if (c->fd > 0) {
        close(c->fd);
    }
    adm_tls_session_destroy(c->tls);
    if (c->ctx != NULL) {
        adm_tls_ctx_unref(c->ctx);
    }
    adm_buf_free(&c->in);
    memset(c, 0, sizeof(*c));
}

void h_response_free(h_response_t *r)
{
    adm_buf_free(&r->body);
}

char *h_request(const char *method, const char *path, const char *ctype, const char *body, size_t body_len,
                size_t *out_len)
{
    adm_buf_t b = ADM_BUF_INIT;

    adm_buf_appendf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", method, path);
    if (ctype != NULL) {
        adm_buf_appendf(&b, "Content-Type: %s\r\n", ctype);
    }
    if (body != NULL) {
        adm_buf_appendf(&b, "Content-Length: %zu\r\n", body_len);
    }
    adm_buf_append(&b, "\r\n", 2);
    if (body != NULL) {
        adm_buf_append(&b, body, body_len);
    }
    adm_buf_append(&b, "", 1);
    *out_len = b.len - 1;
    return (char *)b.data;
}

char *h_review(const char *uid)
{
    adm_buf_t b = ADM_BUF_INIT;

    adm_buf_appendf(
        &b,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"%s\","
        "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"resource\":{\"group\":\"\","
        "\"version\":\"v1\",\"resource\":\"configmaps\"},\"name\":\"c\",\"namespace\":\"default\","
        "\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"u\"},\"object\":{\"kind\":\"ConfigMap\"}}}",
        uid);
    adm_buf_append(&b, "", 1);
    return (char *)b.data;
}

const char *h_fixture_path(const char *name)
{
    static char paths[8][512];
    static unsigned next;
    const char *fixtures = getenv("ADM_FIXTURES_DIR");
    char *path = paths[next++ % 8];

    snprintf(path, sizeof(paths[0]), "%s/%s", fixtures != NULL ? fixtures : "tests/fixtures", name);
    return path;
}

char *h_fixture(const char *name, size_t *len)
{
    const char *dir = getenv("ADM_FIXTURES_DIR");
    char path[512];
    FILE *f;
    char *data;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir != NULL ? dir : "tests/fixtures", name);
    f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    data = malloc((size_t)n + 1);
    if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    data[n] = '\0';
    *len = (size_t)n;
    return data;
}

bool h_is_answer(const h_response_t *r, const char *api_version, const char *uid, bool allowed)
{
    yyjson_doc *doc;
    yyjson_val *root;
    bool ok;

    if (r->status != 200) {
        return false;
    }
    doc = yyjson_read((const char *)r->body.data, r->body.len, 0);
    if (doc == NULL) {
        return false;
    }
    root = yyjson_doc_get_root(doc);
    ok = yyjson_equals_str(yyjson_obj_get(root, "apiVersion"), api_version) &&
         yyjson_equals_str(yyjson_obj_get(root, "kind"), "AdmissionReview") &&
         yyjson_equals_str(yyjson_ptr_get(root, "/response/uid"), uid) &&
         yyjson_is_bool(yyjson_ptr_get(root, "/response/allowed")) &&
         yyjson_get_bool(yyjson_ptr_get(root, "/response/allowed")) == allowed;
    yyjson_doc_free(doc);
    return ok;
}

void h_expect(h_conn_t *c, const char *method, const char *path, const char *ctype, const char *body,
              int status, const char *body_part)
{
    size_t len;
    char *req = h_request(method, path, ctype, body, body != NULL ? strlen(body) : 0, &len);
    h_response_t r;

    c->head = strcmp(method, "HEAD") == 0;
    assert_int_equal(h_send(c, req, len), 0);
    assert_int_equal(h_read(c, &r, 10000, NULL), 0);
    if (r.status != status || (body_part != NULL && strstr((const char *)r.body.data, body_part) == NULL)) {
        fail_msg("%s %s: got %d \"%s\", want %d with \"%s\"", method, path, r.status,
                 (const char *)r.body.data, status, body_part != NULL ? body_part : "");
    }
    h_response_free(&r);
    free(req);
}

void h_api_control(const h_server_t *api, const char *json)
{
    adm_tls_client_opts_t any_server = {.insecure = true}; /* a fake API server's own test certificate */
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request("POST", "/_control", "application/json", json, strlen(json), &len);

    assert_int_equal(h_connect_tls(&c, api->port, api->tls ? &any_server : NULL, NULL), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    if (r.status != 200) {
        fail_msg("control %s: %d %.*s", json, r.status, (int)r.body.len, (const char *)r.body.data);
    }
    h_response_free(&r);
    h_close(&c);
    free(req);
}

/* ---- admitd with files of its own ---- */

int h_files_dir(char *dir, size_t dir_len, const char *const *files)
{
    if (certgen_tempdir(dir, dir_len) != 0) {
        return -1;
    }
    for (; files != NULL && files[0] != NULL; files += 2) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, files[0]);
        f = fopen(path, "w");
        if (f == NULL || fputs(files[1], f) < 0 || fclose(f) != 0) {
            if (f != NULL) {
                fclose(f);
            }
            certgen_rmdir(dir);
            return -1;
        }
    }
    return 0;
}

int h_start_with_files(h_server_t *s, const char *const *files, const char *const *args)
{
    char dir[256];
    static char paths[H_MAX_ARGS][320];
    const char *argv[H_MAX_ARGS + 1];
    int n = 0;

    memset(s, 0, sizeof(*s));
    if (h_files_dir(dir, sizeof(dir), files) != 0) {
        return -1;
    }
    for (; args != NULL && *args != NULL && n < H_MAX_ARGS; args++, n++) {
        argv[n] = *args;
        if ((*args)[0] == '@') {
            snprintf(paths[n], sizeof(paths[n]), "%s/%s", dir, *args + 1);
            argv[n] = paths[n];
        }
    }
    argv[n] = NULL;
    if (h_start(s, dir, argv) != 0) {
        h_cleanup(s);
        return -1;
    }
    return 0;
}

int h_files_setup(h_server_t *s, const char *const *files, const char *const *args)
{
    if (adm_tls_global_init() != 0) {
        return -1;
    }
    return h_start_with_files(s, files, args) != 0;
}

int h_files_teardown(h_server_t *s)
{
    int rc = h_stop(s, SIGTERM, 10000);

    h_cleanup(s);
    adm_tls_global_cleanup();
    return rc != 0;
}

/* POSTs body to path on s; the answer's JSON, failing the test unless it is a 200 with JSON. */
static yyjson_doc *post_json(const h_server_t *s, const char *path, const char *body)
{
    h_conn_t c;
    h_response_t resp;
    size_t len;
    char *req = h_request("POST", path, "application/json", body, strlen(body), &len);
    yyjson_doc *doc;

    assert_int_equal(h_connect_to(&c, s), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &resp, 10000, NULL), 0);
    assert_int_equal(resp.status, 200);
    doc = yyjson_read((const char *)resp.body.data, resp.body.len, 0);
    assert_non_null(doc);
    h_response_free(&resp);
    h_close(&c);
    free(req);
    return doc;
}

yyjson_doc *h_post_review(const h_server_t *s, const char *path, const pt_request_t *r)
{
    adm_arena_t *arena = adm_arena_create(65536);
    yyjson_doc *doc = post_json(s, path, pt_review_json(arena, r));

    adm_arena_destroy(arena);
    return doc;
}

char *h_answer_patch(yyjson_doc *answer)
{
    yyjson_val *b64 = yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(answer), "response"), "patch");
    size_t cap = yyjson_get_len(b64) + 1;
    unsigned char *out;
    size_t n = 0;

    if (!yyjson_is_str(b64)) {
        return NULL;
    }
    out = malloc(cap);
    assert_non_null(out);
    assert_int_equal(mbedtls_base64_decode(out, cap - 1, &n, (const unsigned char *)yyjson_get_str(b64),
                                           yyjson_get_len(b64)),
                     0);
    out[n] = '\0';
    return (char *)out;
}

/* ---- files published as kubelet publishes a mounted Secret or ConfigMap ---- */

void h_publish(const char *mount, const h_mount_file_t *files, size_t n)
{
    static int version;
    char ver[64], vdir[400], tmp[400], data[400], link[400], target[400], old[400];
    ssize_t old_len;

    mkdir(mount, 0700);
    snprintf(ver, sizeof(ver), "..v%d", ++version);
    snprintf(vdir, sizeof(vdir), "%s/%s", mount, ver);
    assert_int_equal(mkdir(vdir, 0700), 0);
    for (size_t i = 0; i < n; i++) {
        char p[500];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", vdir, files[i].name);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(files[i].text, f);
        assert_int_equal(fclose(f), 0);
    }
    snprintf(data, sizeof(data), "%s/..data", mount);
    snprintf(tmp, sizeof(tmp), "%s/..data_tmp", mount);
    old_len = readlink(data, old, sizeof(old) - 1);
    assert_int_equal(symlink(ver, tmp), 0);
    assert_int_equal(rename(tmp, data), 0);
    for (size_t i = 0; i < n; i++) {
        snprintf(link, sizeof(link), "%s/%s", mount, files[i].name);
        snprintf(target, sizeof(target), "..data/%s", files[i].name);
        if (access(link, F_OK) != 0) {
            assert_int_equal(symlink(target, link), 0);
        }
    }
    if (old_len > 0) {
        char rm[1000];

        old[old_len] = '\0';
        snprintf(rm, sizeof(rm), "rm -rf '%s/%s'", mount, old);
        assert_int_equal(system(rm), 0);
    }
}

/* ---- files ---- */

void h_path(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%.250s/%.60s", dir, name);
}

char *h_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = calloc(1, (size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return data;
}

void h_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

void h_replace_file(const char *path, const char *text)
{
    char tmp[400];

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    h_write_file(tmp, text);
    assert_int_equal(rename(tmp, path), 0);
}

char *h_pem(const char *dir, const char *name, const char *kind)
{
    char path[400];

    snprintf(path, sizeof(path), "%s/%s.%s.pem", dir, name, kind);
    return h_read_file(path);
}

int h_make_rotation_certs(const char *dir, const char *server_ca_cn, const char *client_cn)
{
    char cn1[128], cn2[128];

    snprintf(cn1, sizeof(cn1), "%s 1", server_ca_cn);
    snprintf(cn2, sizeof(cn2), "%s 2", server_ca_cn);
    if (certgen_make(dir, "caS1", cn1, NULL, false) != 0 ||
        certgen_make(dir, "caS2", cn2, NULL, false) != 0 ||
        certgen_make(dir, "server1", "localhost", "caS1", false) != 0 ||
        certgen_make(dir, "server2", "localhost", "caS2", false) != 0 ||
        certgen_make(dir, "caC1", "client CA 1", NULL, false) != 0 ||
        certgen_make(dir, "caC2", "client CA 2", NULL, false) != 0 ||
        certgen_make(dir, "client1", client_cn, "caC1", true) != 0 ||
        certgen_make(dir, "client2", client_cn, "caC2", true) != 0) {
        return -1;
    }
    return 0;
}

void h_file_b64(const char *path, char *out, size_t out_len)
{
    char *text = h_read_file(path);
    size_t olen = 0;

    assert_int_equal(mbedtls_base64_encode((unsigned char *)out, out_len, &olen, (const unsigned char *)text,
                                           strlen(text)),
                     0);
    free(text);
}

void h_write_kubeconfig(const char *path, int api_port, const char *user)
{
    char yaml[1024];

    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
             "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
             "users: [{name: u, user: %s}]\n"
             "contexts: [{name: t, context: {cluster: c, user: u}}]\n",
             api_port, user);
    h_write_file(path, yaml);
}

/* ---- waiting on a server ---- */

void h_expect_log(const h_server_t *s, const char *needle, int count, int timeout_ms)
{
    if (!h_log_wait(s, needle, count, timeout_ms)) {
        h_dump_log(s);
        fail_msg("waited for %d log lines with \"%s\"", count, needle);
    }
}

/* One request on a fresh connection to port (TLS without verification when insecure_tls). */
static int call(int port, bool insecure_tls, const char *method, const char *path, const char *body,
                char *out, size_t out_len)
{
    adm_tls_client_opts_t any_server = {.insecure = true};
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request(method, path, body != NULL ? "application/json" : NULL, body,
                          body != NULL ? strlen(body) : 0, &len);
    int status = -1;

    out[0] = '\0';
    if (h_connect_tls(&c, port, insecure_tls ? &any_server : NULL, NULL) == 0 && h_send(&c, req, len) == 0 &&
        h_read(&c, &r, 5000, NULL) == 0) {
        status = r.status;
        snprintf(out, out_len, "%.*s", (int)r.body.len, r.body.data != NULL ? (const char *)r.body.data : "");
    }
    h_response_free(&r);
    h_close(&c);
    free(req);
    return status;
}

int h_get(int port, const char *path, char *out, size_t out_len)
{
    return call(port, false, "GET", path, NULL, out, out_len);
}

bool h_wait_status(int port, const char *path, int want, int timeout_ms)
{
    long long end = h_now_ms() + timeout_ms;
    char body[256];

    while (h_now_ms() < end) {
        if (h_get(port, path, body, sizeof(body)) == want) {
            return true;
        }
        (void)poll(NULL, 0, 20); /* a pause between polls of a condition */
    }
    return false;
}

bool h_wait_ready(const h_server_t *s, int timeout_ms)
{
    return h_wait_status(s->health_port, "/readyz", 200, timeout_ms);
}

void h_call_200(const h_server_t *s, const char *method, const char *path, const char *body, char *out,
                size_t out_len)
{
    h_conn_t c;
    h_response_t r = {0};
    size_t len;
    char *req = h_request(method, path, body != NULL ? "application/json" : NULL, body,
                          body != NULL ? strlen(body) : 0, &len);

    assert_int_equal(h_connect_to(&c, s), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    assert_int_equal(r.status, 200);
    snprintf(out, out_len, "%.*s", (int)r.body.len, (const char *)r.body.data);
    h_response_free(&r);
    h_close(&c);
    free(req);
}

long h_metric_value(h_conn_t *c, const char *series)
{
    h_response_t r = {0};
    size_t n;
    char *req = h_request("GET", "/metrics", NULL, NULL, 0, &n);
    char needle[256];
    const char *at;
    long value = -1;

    snprintf(needle, sizeof(needle), "%s ", series);
    if (h_send(c, req, n) == 0 && h_read(c, &r, 5000, NULL) == 0 && r.body.data != NULL) {
        at = strstr((const char *)r.body.data, needle); /* h_read NUL-terminates the body */
        if (at != NULL) {
            value = strtol(at + strlen(needle), NULL, 10);
        }
    }
    h_response_free(&r);
    free(req);
    return value;
}

/* ---- adm-fake-apiserver ---- */

int h_api_call(const h_server_t *api, const char *method, const char *path, const char *body, char *out,
               size_t out_len)
{
    return call(api->port, api->tls, method, path, body, out, out_len);
}

long h_api_stat(const h_server_t *api, const char *key)
{
    char body[1024], pat[64];
    const char *at;

    assert_int_equal(h_api_call(api, "GET", "/_control/stats", NULL, body, sizeof(body)), 200);
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    at = strstr(body, pat);
    assert_non_null(at);
    return strtol(at + strlen(pat), NULL, 10);
}

bool h_api_wait_stat_above(const h_server_t *api, const char *key, long than, int timeout_ms)
{
    long long end = h_now_ms() + timeout_ms;

    while (h_now_ms() < end) {
        if (h_api_stat(api, key) > than) {
            return true;
        }
        (void)poll(NULL, 0, 20); /* a pause between polls of a condition */
    }
    return false;
}

void h_api_put_namespace(const h_server_t *api, const char *name, const char *phase)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd),
             "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"%s\"},"
             "\"status\":{\"phase\":\"%s\"}}}",
             name, phase);
    h_api_control(api, cmd);
}

void h_api_stop(h_server_t *api)
{
    h_stop(api, SIGTERM, 5000);
    h_cleanup(api);
}

int h_api_setup(h_server_t *api, const char *const *extra, char *dir, size_t dir_len, char *token_file,
                char *kubeconfig, size_t path_len)
{
    const char *args[16] = {"--insecure-http", "--token-file", token_file};
    size_t n = 3;
    char user[400];

    for (; extra != NULL && *extra != NULL && n < sizeof(args) / sizeof(args[0]) - 1; extra++) {
        args[n++] = *extra;
    }
    args[n] = NULL;
    if (adm_tls_global_init() != 0 || certgen_tempdir(dir, dir_len) != 0) {
        return 1;
    }
    snprintf(token_file, path_len, "%s/token", dir);
    snprintf(kubeconfig, path_len, "%s/kubeconfig", dir);
    h_write_file(token_file, "s3cret\n");
    if (h_start_prog(api, h_bin("FAKE_APISERVER_BIN"), NULL, args) != 0) {
        return 1;
    }
    snprintf(user, sizeof(user), "{tokenFile: %s}", token_file);
    h_write_kubeconfig(kubeconfig, api->port, user);
    return 0;
}

int h_api_cleanup(h_server_t *api, const char *dir)
{
    h_api_stop(api);
    certgen_rmdir(dir);
    adm_tls_global_cleanup();
    return 0;
}

/* ---- admitd-mockhook processes sharing one port on loopback addresses ---- */

bool h_wait_listening(const char *addr, int port, int timeout_ms)
{
    long long start = h_now_ms();

    while (h_now_ms() - start < timeout_ms) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        bool ok;

        inet_pton(AF_INET, addr, &sa.sin_addr);
        ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (fd >= 0) {
            close(fd);
        }
        if (ok) {
            return true;
        }
        poll(NULL, 0, 20); /* the next try; the loop ends on the condition or the time limit */
    }
    return false;
}

void h_start_loopback_mock(h_server_t *mock, int i, int *port, const char *dir, const char *cert,
                           const char *record, const char *const *args)
{
    char listen[64], addr[32], crt[320], key[320];
    const char *argv[H_MAX_ARGS + 1] = {
        "--listen", listen, "--tls-cert-file", crt, "--tls-private-key-file", key, "--record", record};
    int n = 8;

    snprintf(crt, sizeof(crt), "%.250s/%.60s.crt.pem", dir, cert);
    snprintf(key, sizeof(key), "%.250s/%.60s.key.pem", dir, cert);
    for (; args != NULL && *args != NULL; args++) {
        assert_true(n < H_MAX_ARGS);
        argv[n++] = *args;
    }
    argv[n] = NULL;
    if (i == 0) {
        snprintf(listen, sizeof(listen), "127.0.0.1:0");
        assert_int_equal(h_start_prog(mock, h_bin("MOCKHOOK_BIN"), NULL, argv), 0);
        *port = mock->port;
        return;
    }
    snprintf(listen, sizeof(listen), "127.0.0.%d:%d", i + 1, *port);
    assert_int_equal(h_spawn_prog(mock, h_bin("MOCKHOOK_BIN"), NULL, argv), 0);
    snprintf(addr, sizeof(addr), "127.0.0.%d", i + 1);
    assert_true(h_wait_listening(addr, *port, 10000));
}

/* ---- AdmissionReview answers ---- */

h_answer_t h_post_answer(const h_server_t *s, const char *path, const char *body)
{
    h_answer_t a = {0};

    a.doc = post_json(s, path, body);
    a.response = yyjson_obj_get(yyjson_doc_get_root(a.doc), "response");
    assert_non_null(a.response);
    if (yyjson_obj_get(a.response, "patch") != NULL) {
        assert_string_equal(yyjson_get_str(yyjson_obj_get(a.response, "patchType")), "JSONPatch");
        a.patch = h_answer_patch(a.doc);
        assert_non_null(a.patch);
    }
    return a;
}

void h_answer_free(h_answer_t *a)
{
    yyjson_doc_free(a->doc);
    free(a->patch);
}

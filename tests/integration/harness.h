/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integration test harness: starts the real admitd (ADMITD_BIN) on 127.0.0.1:0, finds its port in
 * its log, and talks to it over real TLS with the project's own client code on blocking sockets.
 * Every wait is on a condition with a deadline; nothing sleeps for luck.
 */
#ifndef ADM_TEST_HARNESS_H
#define ADM_TEST_HARNESS_H

#include "adm/base/buf.h"
#include "adm/net/tls.h"
#include "adm/net/tls_session.h"
#include "plugintest.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yyjson.h>

/* Arguments a started or run program may be given (beyond those the harness adds). */
#define H_MAX_ARGS 256

typedef struct h_server_s {
    pid_t pid;
    int port;        /* admission listener */
    int health_port; /* --health-listen, or 0 */
    bool tls;
    char dir[256]; /* temporary directory: log, CA, certificates */
    char ca[320];  /* the self-signed certificate admitd wrote */
    char log[320];
    bool wants_health; /* started with --health-listen: wait for that listener too */
} h_server_t;

/**
 * Starts admitd with --listen 127.0.0.1:0 and, unless args select TLS files or plain HTTP,
 * --self-signed-ca-out DIR/ca.pem, plus args (NULL-terminated). dir, when not NULL, is used
 * instead of a fresh temporary directory. Returns 0 once admitd serves, -1 otherwise (log shown).
 */
int h_start(h_server_t *s, const char *dir, const char *const *args);

/** Like h_start for another server binary that takes the same flags (admitd-mockhook). */
int h_start_prog(h_server_t *s, const char *bin, const char *dir, const char *const *args);

/**
 * The two halves of h_start, for tests that act while admitd starts: h_spawn starts the process
 * (same arguments as h_start) and returns at once; h_wait_serving waits up to timeout_ms until it
 * serves (0), or returns -1 when it exits or the time is up (log shown).
 */
int h_spawn(h_server_t *s, const char *dir, const char *const *args);
int h_spawn_prog(h_server_t *s, const char *bin, const char *dir, const char *const *args);
int h_wait_serving(h_server_t *s, int timeout_ms);

/** Sends sig (0: none) and waits up to timeout_ms for the exit; returns the exit code, or -1. */
int h_stop(h_server_t *s, int sig, int timeout_ms);

/** Kills admitd if still running and removes the temporary directory. */
void h_cleanup(h_server_t *s);

/** Runs ADMITD_BIN with args (NULL-terminated) to completion; returns the exit code and its stderr. */
int h_run(const char *const *args, char *out, size_t out_len, int timeout_ms);

/** h_run for another binary. */
int h_run_prog(const char *bin, const char *const *args, char *out, size_t out_len, int timeout_ms);

/** The path in environment variable env_name (MOCKHOOK_BIN, BENCH_BIN); exits when unset. */
const char *h_bin(const char *env_name);

/** Prints admitd's log (for failures). */
void h_dump_log(const h_server_t *s);

/** Lines of the file at path that contain needle (0 when it cannot be read). */
int h_count_lines(const char *path, const char *needle);

/** Waits until at least count lines of the file contain needle; false after timeout_ms. */
bool h_wait_lines(const char *path, const char *needle, int count, int timeout_ms);

/** Lines of the server's log that contain needle. */
int h_log_count(const h_server_t *s, const char *needle);

/** Waits until at least count lines of the log contain needle; false after timeout_ms. */
bool h_log_wait(const h_server_t *s, const char *needle, int count, int timeout_ms);

typedef struct h_conn_s {
    int fd;
    adm_tls_ctx_t *ctx;
    adm_tls_session_t *tls; /* NULL on plain connections */
    adm_buf_t in;           /* plaintext received and not yet parsed */
    bool eof;               /* the server closed */
    bool head;              /* the next response answers a HEAD request: it has no body */
} h_conn_t;

typedef struct h_response_s {
    int status;
    bool close; /* Connection: close */
    char content_type[128];
    adm_buf_t body;
} h_response_t;

/**
 * Connects to 127.0.0.1:port. With ca NULL: plain TCP. Otherwise TLS verifying host against ca,
 * presenting cert/key when given. Returns 0 once the handshake is done, or -1.
 */
int h_connect(h_conn_t *c, int port, const char *ca, const char *host, const char *cert, const char *key);

/** Like h_connect with every client TLS option (opts NULL: plain TCP), e.g. max_tls12. */
int h_connect_tls(h_conn_t *c, int port, const adm_tls_client_opts_t *opts, const char *host);

/** Like h_connect to a server started by h_start (TLS when it is TLS). */
int h_connect_to(h_conn_t *c, const h_server_t *s);

/** Sends bytes (encrypting when TLS). Returns 0 or -1. */
int h_send(h_conn_t *c, const void *data, size_t len);

/** Sends raw bytes on the socket, bypassing TLS. */
int h_send_raw(h_conn_t *c, const void *data, size_t len);

/**
 * Reads one final response (interim 1xx responses are skipped, and counted in *interim when not
 * NULL). Returns 0, -1 on timeout or error, or 1 when the server closed before a full response.
 */
int h_read(h_conn_t *c, h_response_t *r, int timeout_ms, int *interim);

/** Waits until the server closes the connection; true if it did within timeout_ms. */
bool h_wait_closed(h_conn_t *c, int timeout_ms);

void h_close(h_conn_t *c);
void h_response_free(h_response_t *r);

/** Builds a request; ctype NULL leaves Content-Type out. The result is heap memory. */
char *h_request(const char *method, const char *path, const char *ctype, const char *body, size_t body_len,
                size_t *out_len);

/** A minimal AdmissionReview v1 with the given uid (heap). */
char *h_review(const char *uid);

/**
 * The path of tests/fixtures/NAME ($ADM_FIXTURES_DIR when set), in one of 8 static buffers used in
 * turn: e.g. h_fixture_path("cluster-state.yaml"), the namespaces and service accounts the fixture
 * reviews name, for the default plugins that look them up.
 */
const char *h_fixture_path(const char *name);

/** Reads tests/fixtures/NAME (heap, NUL-terminated). */
char *h_fixture(const char *name, size_t *len);

/** True when the body is an AdmissionReview answer of apiVersion with uid and allowed. */
bool h_is_answer(const h_response_t *r, const char *api_version, const char *uid, bool allowed);

/**
 * Sends one request on c and fails the running cmocka test unless the answer has this status and,
 * when body_part is not NULL, a body containing it. ctype and body NULL leave them out.
 */
void h_expect(h_conn_t *c, const char *method, const char *path, const char *ctype, const char *body,
              int status, const char *body_part);

/** Milliseconds on a monotonic clock. */
long long h_now_ms(void);

/**
 * Sends one command to adm-fake-apiserver's POST /_control (tests/apiserver/fake_apiserver.c), over
 * TLS without verification when it was started with TLS files; fails the test (cmocka) unless it
 * answers 200.
 */
void h_api_control(const h_server_t *api, const char *json);

/* ---- admitd with files of its own (cluster state, admission configuration) ---- */

/**
 * Makes a fresh temporary directory (its path in dir) holding the files of files: pairs of name
 * and text, NULL-ended, e.g. {"cluster.yaml", CLUSTER, NULL}. 0, or -1 (nothing left behind).
 */
int h_files_dir(char *dir, size_t dir_len, const char *const *files);

/**
 * h_start in a directory made by h_files_dir(files), where "@NAME" in args stands for the path of
 * file NAME there (e.g. {"--cluster-state", "@cluster.yaml", NULL}). h_cleanup removes it all.
 */
int h_start_with_files(h_server_t *s, const char *const *files, const char *const *args);

/**
 * cmocka group fixtures around h_start_with_files: TLS's global state set up, admitd started;
 * then stopped (SIGTERM), removed with its files, TLS's state released. Non-zero on failure.
 */
int h_files_setup(h_server_t *s, const char *const *files, const char *const *args);
int h_files_teardown(h_server_t *s);

/**
 * POSTs a v1 AdmissionReview of r (pt_review_json) to path on s and returns the answer's JSON
 * (yyjson_doc_free); fails the running test unless it is a 200 with a JSON body.
 */
yyjson_doc *h_post_review(const h_server_t *s, const char *path, const pt_request_t *r);

/** The answer's response.patch, base64-decoded (heap, NUL-terminated), or NULL when there is none. */
char *h_answer_patch(yyjson_doc *answer);

/** One file of a mounted volume: its name in the mount, and its text. */
typedef struct h_mount_file_s {
    const char *name;
    const char *text;
} h_mount_file_t;

/**
 * Publishes files in the folder mount as kubelet's atomic writer updates a Secret or ConfigMap
 * volume: the files go into a new folder ..vN, a link ..data_tmp -> ..vN is renamed over ..data,
 * each visible name is a link to ..data/NAME (made once), and the previous ..vN is removed. Fails
 * the running cmocka test when a step fails.
 */
void h_publish(const char *mount, const h_mount_file_t *files, size_t n);

/* ---- files (each of these fails the running cmocka test when a step fails) ---- */

/** DIR/NAME into out (len bytes), the folder cut at 250 characters and the name at 60. */
void h_path(char *out, size_t len, const char *dir, const char *name);

/** The whole file at path, NUL-terminated (heap). */
char *h_read_file(const char *path);

/** Writes text to the file at path (created or truncated), checking the close too. */
void h_write_file(const char *path, const char *text);

/** Replaces path as editors and config tools do: text into PATH.tmp, renamed over path. */
void h_replace_file(const char *path, const char *text);

/** certgen's DIR/NAME.KIND.pem (kind "crt" or "key"), as text (heap). */
char *h_pem(const char *dir, const char *name, const char *kind);

/**
 * Makes in dir (certgen) the certificates a rotation test swaps: CAs caS1 and caS2 (common names
 * "SERVER_CA_CN 1" and "... 2") with a server certificate for localhost from each (server1,
 * server2), and client CAs caC1 and caC2 ("client CA 1", "... 2") with a client certificate for
 * client_cn from each (client1, client2). Returns 0, or -1 when one cannot be made.
 */
int h_make_rotation_certs(const char *dir, const char *server_ca_cn, const char *client_cn);

/** The base64 of the file at path (a caBundle from a PEM file), NUL-terminated, into out. */
void h_file_b64(const char *path, char *out, size_t out_len);

/**
 * Writes a kubeconfig to path naming an adm-fake-apiserver over plain HTTP on api_port, with
 * user as the user's entry (a YAML flow map, e.g. "{token: t}", "{tokenFile: /f}" or "{}").
 */
void h_write_kubeconfig(const char *path, int api_port, const char *user);

/* ---- waiting on a server ---- */

/** Waits until count lines of s's log contain needle; otherwise shows the log and fails the test. */
void h_expect_log(const h_server_t *s, const char *needle, int count, int timeout_ms);

/**
 * One plain-HTTP GET of path on 127.0.0.1:port on a fresh connection (a health listener, a fake
 * API server without TLS): the status, or -1 when no answer came within 5 s; the body in out
 * (NUL-terminated, cut to out_len).
 */
int h_get(int port, const char *path, char *out, size_t out_len);

/** Polls h_get(port, path) every 20 ms until it answers want; false after timeout_ms. */
bool h_wait_status(int port, const char *path, int want, int timeout_ms);

/** h_wait_status on s's health listener (--health-listen): /readyz answers 200. */
bool h_wait_ready(const h_server_t *s, int timeout_ms);

/**
 * One request to s on a fresh connection (h_connect_to), body sent as JSON when not NULL; fails the
 * test unless it is answered 200 within 5 s. The body into out (NUL-terminated, cut to out_len).
 */
void h_call_200(const h_server_t *s, const char *method, const char *path, const char *body, char *out,
                size_t out_len);

/**
 * GETs /metrics on the open connection c and returns the value of series, the whole sample name
 * with its labels (e.g. admitd_config_reloads_total{result="failure"}); -1 when no answer came
 * within 5 s or the series is not there.
 */
long h_metric_value(h_conn_t *c, const char *series);

/* ---- adm-fake-apiserver (tests/apiserver/fake_apiserver.c), TLS or not as it was started ---- */

/**
 * One request to the fake API server api on a fresh connection (over TLS without verification
 * when it was started with TLS files), body sent as JSON when not NULL: the status, or -1 when no
 * answer came within 5 s; the body in out (NUL-terminated, cut to out_len).
 */
int h_api_call(const h_server_t *api, const char *method, const char *path, const char *body, char *out,
               size_t out_len);

/**
 * A counter of the fake API server's /_control/stats ("lists", "watches", "puts"...); fails the
 * test when it cannot be read.
 */
long h_api_stat(const h_server_t *api, const char *key);

/** Polls h_api_stat every 20 ms until the counter key is above than; false after timeout_ms. */
bool h_api_wait_stat_above(const h_server_t *api, const char *key, long than, int timeout_ms);

/** Puts a Namespace name in phase ("Active", "Terminating") on the fake API server (h_api_control). */
void h_api_put_namespace(const h_server_t *api, const char *name, const char *phase);

/** Stops the fake API server api (SIGTERM, 5 s at most) and removes its folder; nothing if not started. */
void h_api_stop(h_server_t *api);

/**
 * The start of a test group against a fake API server over plain HTTP: TLS's global state set up,
 * a folder made (into dir), in it a token file holding "s3cret" (its path into token_file) and a
 * kubeconfig naming that file (into kubeconfig; both of path_len bytes), and the fake started with
 * --insecure-http --token-file and the NULL-terminated extra arguments (or none). Returns 0, or 1
 * (a cmocka group setup's failure). h_api_cleanup is its end.
 */
int h_api_setup(h_server_t *api, const char *const *extra, char *dir, size_t dir_len, char *token_file,
                char *kubeconfig, size_t path_len);

/**
 * The end of a test group against a fake API server: h_api_stop(api), the group's folder dir
 * removed, TLS's global state released. Returns 0 (a cmocka group teardown's success).
 */
int h_api_cleanup(h_server_t *api, const char *dir);

/* ---- admitd-mockhook processes on one port of several loopback addresses ---- */

/**
 * Waits until something accepts on addr:port (h_start_prog only watches 127.0.0.1); false after
 * timeout_ms.
 */
bool h_wait_listening(const char *addr, int port, int timeout_ms);

/**
 * Starts admitd-mockhook number i of a set sharing one port over loopback addresses, as the
 * endpoints of one Service: mock 0 on 127.0.0.1 picks the port (into *port), mock i on
 * 127.0.0.(i+1):*port. Each serves certgen's DIR/CERT.crt.pem and .key.pem (one certificate for
 * the Service's name, so TLS verifies whichever answers) and records its calls in the file record;
 * args: its other arguments (NULL-terminated). Fails the test unless it serves (mock 0, as
 * h_start_prog) or accepts within 10 s.
 */
void h_start_loopback_mock(h_server_t *mock, int i, int *port, const char *dir, const char *cert,
                           const char *record, const char *const *args);

/* ---- AdmissionReview answers ---- */

typedef struct h_answer_s {
    yyjson_doc *doc;      /* the whole answer */
    yyjson_val *response; /* its response member */
    char *patch;          /* response.patch decoded, or NULL when there is none */
} h_answer_t;

/**
 * POSTs body (an AdmissionReview) to path on s and parses the answer; fails the test unless it is
 * a 200 with a response and, when it has a patch, patchType JSONPatch. Free with h_answer_free.
 */
h_answer_t h_post_answer(const h_server_t *s, const char *path, const char *body);
void h_answer_free(h_answer_t *a);

/** VmRSS of process pid in KiB (from /proc), or -1 when it cannot be read. */
long h_rss_kib(pid_t pid);

/* 1 when the tests are built with AddressSanitizer, whose allocator keeps freed memory in
   quarantine: figures of RSS say nothing there. */
#if defined(__SANITIZE_ADDRESS__)
#define H_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H_UNDER_ASAN 1
#endif
#endif
#ifndef H_UNDER_ASAN
#define H_UNDER_ASAN 0
#endif

#endif

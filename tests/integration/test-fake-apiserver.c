/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fake API server the informer is tested against (tests/apiserver/fake_apiserver.c), checked
 * on the wire: bearer auth (401 Status), paged LIST (limit/continue, 410 Expired on a token from
 * before a compaction), GET (404 Status), WATCH streams decoded by admitd's own watch decoder
 * (events from a resourceVersion, BOOKMARKs, ERROR 410 for a compacted resourceVersion and on
 * demand, a clean end at timeoutSeconds), the same for a kind of a named group (PriorityClass),
 * and injected 429 with Retry-After or 500 for one resource. Then against a real client: kubectl
 * get namespaces (also in pages), get priorityclasses and get namespaces --watch, when kubectl is
 * installed (skipped by name otherwise, and a failure under CI=true, where CI installs it).
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "adm/base/arena.h"
#include "adm/cluster/watch_decode.h"
#include "harness.h"

#define TOKEN "t0ken"

static h_server_t api;

static int setup(void **state)
{
    const char *args[] = {"--insecure-http",        "--token", TOKEN, "--namespaces", "7",
                          "--bookmark-interval-ms", "200",     NULL};

    (void)state;
    return h_start_prog(&api, h_bin("FAKE_APISERVER_BIN"), NULL, args);
}

static int teardown(void **state)
{
    (void)state;
    h_stop(&api, SIGTERM, 5000);
    h_cleanup(&api);
    return 0;
}

/* One GET with the token (or none), the answer read whole. */
static void get(const char *path, const char *token, h_response_t *r)
{
    h_conn_t c;
    char req[1024];

    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n%s%s%s\r\n", path,
             token != NULL ? "Authorization: Bearer " : "", token != NULL ? token : "",
             token != NULL ? "\r\n" : "");
    assert_int_equal(h_connect(&c, api.port, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(h_send(&c, req, strlen(req)), 0);
    assert_int_equal(h_read(&c, r, 5000, NULL), 0);
    h_close(&c);
}

static void control(const char *json)
{
    h_api_control(&api, json);
}

static bool body_has(const h_response_t *r, const char *needle)
{
    return r->body.len > 0 && memmem(r->body.data, r->body.len, needle, strlen(needle)) != NULL;
}

static void test_auth_and_get(void **state)
{
    h_response_t r = {0};

    (void)state;
    get("/api/v1/namespaces", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_true(body_has(&r, "\"reason\":\"Unauthorized\""));
    h_response_free(&r);
    get("/api/v1/namespaces", "wrong", &r);
    assert_int_equal(r.status, 401);
    h_response_free(&r);
    get("/api/v1/namespaces/ns-3", TOKEN, &r);
    assert_int_equal(r.status, 200);
    assert_true(body_has(&r, "\"kind\":\"Namespace\""));
    h_response_free(&r);
    get("/api/v1/namespaces/nope", TOKEN, &r);
    assert_int_equal(r.status, 404);
    assert_true(body_has(&r, "namespaces \\\"nope\\\" not found"));
    h_response_free(&r);
}

static void test_paged_list(void **state)
{
    adm_arena_t *a = adm_arena_create(4096);
    h_response_t r = {0};
    char path[512], token[128] = "";
    size_t total = 0;
    int pages = 0;

    (void)state;
    do {
        adm_list_page_t page;
        char err[256];

        snprintf(path, sizeof(path), "/api/v1/namespaces?limit=3%s%s", token[0] != '\0' ? "&continue=" : "",
                 token);
        get(path, TOKEN, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(
            adm_list_page_decode(a, (const char *)r.body.data, r.body.len, &page, err, sizeof(err)), 0);
        total += yyjson_arr_size(page.items);
        snprintf(token, sizeof(token), "%s", page.continue_token);
        pages++;
        h_response_free(&r);
    } while (token[0] != '\0' && pages < 10);
    assert_true(total >= 7);
    assert_true(pages >= 3);
    /* a continue token from before a compaction is 410 Expired */
    get("/api/v1/namespaces?limit=2", TOKEN, &r);
    {
        adm_list_page_t page;
        char err[256];

        assert_int_equal(
            adm_list_page_decode(a, (const char *)r.body.data, r.body.len, &page, err, sizeof(err)), 0);
        snprintf(token, sizeof(token), "%s", page.continue_token);
    }
    h_response_free(&r);
    control("{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"later\"}}}");
    control("{\"op\":\"compact\"}");
    snprintf(path, sizeof(path), "/api/v1/namespaces?limit=2&continue=%s", token);
    get(path, TOKEN, &r);
    assert_int_equal(r.status, 410);
    assert_true(body_has(&r, "\"reason\":\"Expired\""));
    h_response_free(&r);
    adm_arena_destroy(a);
}

/* What watch_next has read and not yet used (one watch at a time). */
static char watch_buf[1 << 16];
static size_t watch_len;

typedef struct watch_s {
    h_conn_t c;
    adm_watch_framer_t framer;
    adm_arena_t *arena;
    char head_seen;
} watch_t;

static void watch_path(watch_t *w, const char *collection, const char *query)
{
    char req[1024];

    memset(w, 0, sizeof(*w));
    watch_len = 0; /* the end of an earlier watch, never read */
    snprintf(req, sizeof(req),
             "GET %s?watch=true&%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "\r\n\r\n",
             collection, query);
    assert_int_equal(h_connect(&w->c, api.port, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(h_send(&w->c, req, strlen(req)), 0);
    adm_watch_framer_init(&w->framer);
    w->arena = adm_arena_create(4096);
}

static void watch_open(watch_t *w, const char *query)
{
    watch_path(w, "/api/v1/namespaces", query);
}

static void watch_close(watch_t *w)
{
    adm_watch_framer_free(&w->framer);
    adm_arena_destroy(w->arena);
    h_close(&w->c);
}

/*
 * The next event of the stream. The chunked framing is stripped by hand (chunk sizes are lines of
 * hex, the fake never splits an event across chunks); returns false at the end of the stream.
 */
static bool watch_next(watch_t *w, adm_watch_event_t *ev, int timeout_ms)
{
    char err[256];

    for (;;) {
        char *p = watch_buf, *end = watch_buf + watch_len;

        if (!w->head_seen) {
            char *h = memmem(watch_buf, watch_len, "\r\n\r\n", 4);

            if (h != NULL) {
                assert_true(memcmp(watch_buf, "HTTP/1.1 200", 12) == 0);
                w->head_seen = 1;
                memmove(watch_buf, h + 4, (size_t)(end - (h + 4)));
                watch_len = (size_t)(end - (h + 4));
                continue;
            }
        } else {
            char *nl = memmem(p, watch_len, "\r\n", 2);

            if (nl != NULL) {
                size_t size = strtoul(p, NULL, 16);
                char *data = nl + 2;

                if (size == 0 && (size_t)(end - data) >= 2) {
                    watch_len = 0;
                    return false;
                }
                if (size > 0 && (size_t)(end - data) >= size + 2) {
                    const char *evtext = NULL;
                    size_t evlen = 0, used = 0;
                    adm_frame_result_t fr =
                        adm_watch_framer_feed(&w->framer, data, size, &used, &evtext, &evlen);

                    assert_int_equal(fr, ADM_FRAME_EVENT);
                    assert_int_equal(adm_watch_event_decode(w->arena, evtext, evlen, ev, err, sizeof(err)),
                                     0);
                    memmove(watch_buf, data + size + 2, (size_t)(end - (data + size + 2)));
                    watch_len = (size_t)(end - (data + size + 2));
                    return true;
                }
            }
        }
        {
            struct pollfd pfd = {.fd = w->c.fd, .events = POLLIN};
            ssize_t n;

            if (poll(&pfd, 1, timeout_ms) <= 0) {
                fail_msg("watch: nothing within %d ms", timeout_ms);
            }
            n = recv(w->c.fd, watch_buf + watch_len, sizeof(watch_buf) - watch_len, 0);
            if (n <= 0) {
                watch_len = 0;
                return false;
            }
            watch_len += (size_t)n;
        }
    }
}

static void test_watch(void **state)
{
    h_response_t r = {0};
    adm_watch_event_t ev;
    watch_t w;
    char query[128], rv[32];

    (void)state;
    get("/api/v1/namespaces?limit=500", TOKEN, &r);
    {
        const char *p = strstr((const char *)r.body.data, "\"resourceVersion\":\"");

        assert_non_null(p);
        snprintf(rv, sizeof(rv), "%.*s", (int)strcspn(p + 19, "\""), p + 19);
    }
    h_response_free(&r);
    snprintf(query, sizeof(query), "resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=2", rv);
    watch_open(&w, query);
    control("{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"w1\"}}}");
    assert_true(watch_next(&w, &ev, 5000));
    assert_int_equal(ev.type, ADM_WATCH_ADDED);
    assert_string_equal(ev.name, "w1");
    control(
        "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"w1\",\"labels\":"
        "{\"x\":\"y\"}}}}");
    assert_true(watch_next(&w, &ev, 5000));
    assert_int_equal(ev.type, ADM_WATCH_MODIFIED);
    control("{\"op\":\"delete\",\"resource\":\"namespaces\",\"name\":\"w1\"}");
    assert_true(watch_next(&w, &ev, 5000));
    assert_int_equal(ev.type, ADM_WATCH_DELETED);
    /* bookmarks come every 200 ms; the stream ends cleanly at timeoutSeconds */
    {
        bool bookmark = false;

        while (watch_next(&w, &ev, 5000)) {
            bookmark |= ev.type == ADM_WATCH_BOOKMARK;
        }
        assert_true(bookmark);
    }
    watch_close(&w);

    /* a resourceVersion compacted away: 200, then an ERROR 410 event, then the end */
    control("{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"w2\"}}}");
    control("{\"op\":\"compact\"}");
    snprintf(query, sizeof(query), "resourceVersion=%s", rv);
    watch_open(&w, query);
    assert_true(watch_next(&w, &ev, 5000));
    assert_int_equal(ev.type, ADM_WATCH_ERROR);
    assert_true(adm_watch_event_expired(&ev));
    assert_non_null(strstr(ev.message, "too old resource version: "));
    assert_false(watch_next(&w, &ev, 5000));
    watch_close(&w);

    /* ERROR 410 on demand on an open watch */
    watch_open(&w, "resourceVersion=0");
    assert_true(watch_next(&w, &ev, 5000)); /* the synthetic ADDED events of "0" */
    assert_int_equal(ev.type, ADM_WATCH_ADDED);
    control("{\"op\":\"error-410\"}");
    while (watch_next(&w, &ev, 5000) && ev.type != ADM_WATCH_ERROR) {
    }
    assert_int_equal(ev.type, ADM_WATCH_ERROR);
    assert_int_equal(ev.code, 410);
    watch_close(&w);
}

/*
 * A kind of a named group (PriorityClass, scheduling.k8s.io): its discovery documents, paged LIST,
 * GET and WATCH under /apis/scheduling.k8s.io/v1 with that apiVersion, not under another group;
 * and a fault that names the resource fails its calls only.
 */
static void test_group_kind(void **state)
{
    static const char pcs[] = "/apis/scheduling.k8s.io/v1/priorityclasses";
    adm_arena_t *a = adm_arena_create(4096);
    h_response_t r = {0};
    adm_watch_event_t ev;
    watch_t w;
    char path[512], token[128] = "", cmd[256];
    size_t total = 0;
    bool bookmark = false;

    (void)state;
    get("/apis", TOKEN, &r);
    assert_int_equal(r.status, 200);
    assert_true(body_has(&r, "\"kind\":\"APIGroupList\""));
    assert_true(body_has(&r, "\"groupVersion\":\"scheduling.k8s.io/v1\""));
    assert_true(body_has(&r, "\"groupVersion\":\"networking.k8s.io/v1\""));
    h_response_free(&r);
    get("/apis/scheduling.k8s.io/v1", TOKEN, &r);
    assert_true(body_has(&r, "\"name\":\"priorityclasses\",\"singularName\":\"\",\"namespaced\":false"));
    assert_false(body_has(&r, "\"namespaces\""));
    h_response_free(&r);

    for (int i = 0; i < 5; i++) {
        snprintf(cmd, sizeof(cmd),
                 "{\"op\":\"put\",\"resource\":\"priorityclasses\",\"object\":{\"metadata\":{\"name\":"
                 "\"pc-%d\"},\"value\":%d}}",
                 i, i * 100);
        control(cmd);
    }
    do {
        adm_list_page_t page;
        char err[256];

        snprintf(path, sizeof(path), "%s?limit=2%s%s", pcs, token[0] != '\0' ? "&continue=" : "", token);
        get(path, TOKEN, &r);
        assert_int_equal(r.status, 200);
        assert_true(body_has(&r, "\"kind\":\"PriorityClassList\",\"apiVersion\":\"scheduling.k8s.io/v1\""));
        assert_int_equal(
            adm_list_page_decode(a, (const char *)r.body.data, r.body.len, &page, err, sizeof(err)), 0);
        total += yyjson_arr_size(page.items);
        snprintf(token, sizeof(token), "%s", page.continue_token);
        h_response_free(&r);
    } while (token[0] != '\0');
    assert_int_equal(total, 5);
    get("/apis/scheduling.k8s.io/v1/priorityclasses/pc-3", TOKEN, &r);
    assert_int_equal(r.status, 200);
    assert_true(body_has(&r, "\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\""));
    h_response_free(&r);
    get("/apis/node.k8s.io/v1/priorityclasses", TOKEN, &r);
    assert_int_equal(r.status, 404);
    h_response_free(&r);
    get("/api/v1/priorityclasses", TOKEN, &r);
    assert_int_equal(r.status, 404);
    h_response_free(&r);

    watch_path(&w, pcs, "resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1");
    for (int i = 0; i < 5; i++) {
        assert_true(watch_next(&w, &ev, 5000));
        assert_int_equal(ev.type, ADM_WATCH_ADDED);
        assert_string_equal(yyjson_get_str(yyjson_obj_get(ev.object, "apiVersion")), "scheduling.k8s.io/v1");
    }
    control("{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{\"name\":\"not-a-pc\"}}}");
    control("{\"op\":\"delete\",\"resource\":\"priorityclasses\",\"name\":\"pc-0\"}");
    assert_true(watch_next(&w, &ev, 5000)); /* the namespace is another resource's event */
    assert_int_equal(ev.type, ADM_WATCH_DELETED);
    assert_string_equal(ev.name, "pc-0");
    while (watch_next(&w, &ev, 5000)) {
        bookmark |= ev.type == ADM_WATCH_BOOKMARK &&
                    strcmp(yyjson_get_str(yyjson_obj_get(ev.object, "kind")), "PriorityClass") == 0;
    }
    assert_true(bookmark);
    watch_close(&w);

    control("{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"list\",\"resource\":\"priorityclasses\"}");
    get("/api/v1/namespaces", TOKEN, &r);
    assert_int_equal(r.status, 200);
    h_response_free(&r);
    get(pcs, TOKEN, &r);
    assert_int_equal(r.status, 500);
    h_response_free(&r);
    get(pcs, TOKEN, &r);
    assert_int_equal(r.status, 200);
    h_response_free(&r);
    adm_arena_destroy(a);
}

static void test_injected_429(void **state)
{
    h_response_t r = {0};

    (void)state;
    control("{\"op\":\"fail\",\"status\":429,\"count\":1,\"retryAfter\":3,\"on\":\"list\"}");
    get("/api/v1/namespaces", TOKEN, &r);
    assert_int_equal(r.status, 429);
    assert_true(body_has(&r, "\"retryAfterSeconds\":3"));
    h_response_free(&r);
    get("/api/v1/namespaces", TOKEN, &r);
    assert_int_equal(r.status, 200);
    h_response_free(&r);
}

/* kubectl over plain HTTP sends no bearer token, so it talks to a second fake without auth. */
static bool have_kubectl(void)
{
    return access("/usr/bin/kubectl", X_OK) == 0 || access("/usr/local/bin/kubectl", X_OK) == 0;
}

static int run_kubectl(const char *kubeconfig, const char *args, char *out, size_t out_len)
{
    char cmd[1024];
    FILE *p;
    size_t n;

    snprintf(cmd, sizeof(cmd), "timeout 20 kubectl --kubeconfig %s %s 2>&1", kubeconfig, args);
    p = popen(cmd, "r");
    assert_non_null(p);
    n = fread(out, 1, out_len - 1, p);
    out[n] = '\0';
    return pclose(p);
}

static void test_kubectl(void **state)
{
    const char *args[] = {"--insecure-http", "--namespaces", "5", NULL};
    h_server_t open_api;
    char kc[512], out[8192];
    FILE *f;

    (void)state;
    if (!have_kubectl()) {
        const char *ci = getenv("CI");

        if (ci != NULL && strcmp(ci, "true") == 0) {
            fail_msg("kubectl is not installed, and CI must run the kubectl check");
        }
        printf("test_kubectl: skipped, kubectl not installed\n");
        skip();
    }
    assert_int_equal(h_start_prog(&open_api, h_bin("FAKE_APISERVER_BIN"), NULL, args), 0);
    snprintf(kc, sizeof(kc), "%s/kubeconfig", open_api.dir);
    f = fopen(kc, "w");
    assert_non_null(f);
    fprintf(
        f,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: \"http://127.0.0.1:%d\"}}]\nusers: [{name: u, user: {}}]\n",
        open_api.port);
    fclose(f);
    assert_int_equal(run_kubectl(kc, "get namespaces", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "ns-0"));
    assert_non_null(strstr(out, "ns-4"));
    assert_int_equal(run_kubectl(kc, "get namespaces --chunk-size=2", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "ns-4"));
    /* a kind of a named group: kubectl finds it through /apis and /apis/GROUP/v1 */
    h_api_control(&open_api, "{\"op\":\"put\",\"resource\":\"priorityclasses\",\"object\":{\"metadata\":"
                             "{\"name\":\"seen-by-kubectl\"},\"value\":7}}");
    assert_int_equal(run_kubectl(kc, "get priorityclasses", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "seen-by-kubectl"));
    {
        char cmd[1024];
        FILE *p;
        size_t n;
        h_conn_t c;
        h_response_t r = {0};
        size_t len;
        static const char put[] = "{\"op\":\"put\",\"resource\":\"namespaces\",\"object\":{\"metadata\":{"
                                  "\"name\":\"seen-by-watch\"}}}";
        char *req;

        /* kubectl's watch prints the list, then each event; it is stopped by timeout(1), late enough for
         * a kubectl that takes seconds to start on a loaded machine */
        snprintf(cmd, sizeof(cmd), "timeout 8 kubectl --kubeconfig %s get namespaces --watch 2>&1", kc);
        p = popen(cmd, "r");
        assert_non_null(p);
        /* once the fake counts a watcher, add a namespace */
        for (int i = 0; i < 200; i++) {
            h_response_t st = {0};

            req = h_request("GET", "/_control/stats", NULL, NULL, 0, &len);
            assert_int_equal(h_connect(&c, open_api.port, NULL, NULL, NULL, NULL), 0);
            assert_int_equal(h_send(&c, req, len), 0);
            assert_int_equal(h_read(&c, &st, 5000, NULL), 0);
            h_close(&c);
            free(req);
            if (memmem(st.body.data, st.body.len, "\"watchers\":1", 12) != NULL) {
                h_response_free(&st);
                break;
            }
            h_response_free(&st);
            poll(NULL, 0, 10); /* polling the fake's counter: no event to wait on */
        }
        req = h_request("POST", "/_control", "application/json", put, strlen(put), &len);
        assert_int_equal(h_connect(&c, open_api.port, NULL, NULL, NULL, NULL), 0);
        assert_int_equal(h_send(&c, req, len), 0);
        assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
        h_response_free(&r);
        h_close(&c);
        free(req);
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        pclose(p);
        if (strstr(out, "ns-0") == NULL || strstr(out, "seen-by-watch") == NULL) {
            print_message("kubectl --watch printed: %s\n", out);
        }
        assert_non_null(strstr(out, "ns-0"));
        assert_non_null(strstr(out, "seen-by-watch"));
    }
    h_stop(&open_api, SIGTERM, 5000);
    h_cleanup(&open_api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth_and_get), cmocka_unit_test(test_paged_list),
        cmocka_unit_test(test_watch),        cmocka_unit_test(test_group_kind),
        cmocka_unit_test(test_injected_429), cmocka_unit_test(test_kubectl),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The live lookups kube's plugins make on a cache miss (issue 13 item 3), admitd with --kubeconfig
 * against adm-fake-apiserver whose watch events are held back once admitd has synced (so the
 * informer cache misses what is created afterwards):
 * - ServiceAccount: the "default" account created on the API server only after the first live GET
 *   answered 404 admits the pod (GETs retried); another name missing is kube's Forbidden after
 *   exactly one GET.
 * - LimitRanger: a LimitRange the cache does not have is applied from the live LIST of the
 *   namespace's limitranges, and a second pod within 30 s is served from the live cache (no LIST);
 *   pods that need the same namespace while its LIST is in flight share it.
 * - ResourceQuota: a quota the cache does not have is enforced from the live LIST, cached likewise.
 * - NamespaceExists and RuntimeClass: a namespace or class the cache misses is found by one live
 *   GET (RuntimeClass's admit and validate sharing it); kube's errors for a missing one and for a
 *   GET that fails otherwise.
 */
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

#include <cmocka.h>
#include <yyjson.h>

#include "adm/base/arena.h"
#include "certgen.h"
#include "harness.h"
#include "plugintest.h"

static h_server_t api, server;
static char dir[256], kubeconfig[320], token_file[320];

static int setup(void **state)
{
    (void)state;
    return h_api_setup(&api, NULL, dir, sizeof(dir), token_file, kubeconfig, sizeof(kubeconfig));
}

static int teardown(void **state)
{
    (void)state;
    return h_api_cleanup(&api, dir);
}

/* Puts a core namespaced object (JSON of its metadata and the rest) on the fake API server. */
static void api_put(const char *resource, const char *object)
{
    char cmd[2048];

    snprintf(cmd, sizeof(cmd), "{\"op\":\"put\",\"resource\":\"%s\",\"object\":%s}", resource, object);
    h_api_control(&api, cmd);
}

static void put_default_account(const char *ns)
{
    char obj[256];

    snprintf(obj, sizeof(obj), "{\"metadata\":{\"name\":\"default\",\"namespace\":\"%s\"}}", ns);
    api_put("serviceaccounts", obj);
}

/*
 * Starts admitd on the fake with kube's default plugin set plus enabled and less disabled (plugin
 * names, or NULL), and once it has synced holds every watch event back: what the fake gets from
 * now on, the informer cache misses.
 */
static void start_held_with(const char *enabled, const char *disabled)
{
    const char *args[10] = {"--kubeconfig", kubeconfig, "--health-listen", "127.0.0.1:0"};
    size_t n = 4;

    if (enabled != NULL) {
        args[n++] = "--enable-admission-plugins";
        args[n++] = enabled;
    }
    if (disabled != NULL) {
        args[n++] = "--disable-admission-plugins";
        args[n++] = disabled;
    }
    args[n] = NULL;
    assert_int_equal(h_start(&server, NULL, args), 0);
    assert_true(h_wait_ready(&server, 15000));
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":600000}");
}

static void start_held(const char *disabled)
{
    start_held_with(NULL, disabled);
}

static void stop(void)
{
    h_api_control(&api, "{\"op\":\"slow\",\"ms\":0}");
    assert_int_equal(h_stop(&server, SIGTERM, 10000), 0);
    h_cleanup(&server);
}

/*
 * The review of a CREATE of a core object (kind, resource) named name in ns, as /admit gets it
 * (heap); fields: what the object holds besides apiVersion, kind and metadata (",\"spec\":{..}"), or "".
 */
static char *create_review_json(const char *kind, const char *resource, const char *ns, const char *name,
                                const char *fields)
{
    adm_arena_t *a = adm_arena_create(4096);
    char obj[1024];
    pt_request_t pr = {.operation = "CREATE",
                       .resource = resource,
                       .kind = kind,
                       .namespace_ = ns,
                       .name = name,
                       .object = obj};
    char *out;

    snprintf(obj, sizeof(obj),
             "{\"apiVersion\":\"v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"}%s}",
             kind, name, ns, fields);
    out = strdup(pt_review_json(a, &pr));
    adm_arena_destroy(a);
    assert_non_null(out);
    return out;
}

/* The review of a pod CREATE in ns with spec (JSON) (heap). */
static char *pod_review_json(const char *ns, const char *spec)
{
    char fields[900];

    snprintf(fields, sizeof(fields), ",\"spec\":%s", spec);
    return create_review_json("Pod", "pods", ns, "p", fields);
}

static void admit_pod(const char *ns, const char *spec, char *out, size_t out_len)
{
    char *review = pod_review_json(ns, spec);

    h_call_200(&server, "POST", "/admit", review, out, out_len);
    free(review);
}

#define ONE_CONTAINER "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}"

static void test_service_account_default_retried(void **state)
{
    char *review, *req;
    size_t len;
    h_conn_t c;
    h_response_t r = {0};
    long gets;

    (void)state;
    h_api_put_namespace(&api, "sa-late", "Active");
    start_held(NULL);
    gets = h_api_stat(&api, "gets");

    review = pod_review_json("sa-late", ONE_CONTAINER);
    req = h_request("POST", "/admit", "application/json", review, strlen(review), &len);
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    /* the first GET answers 404; the account appears before the next of the 10 attempts */
    assert_true(h_api_wait_stat_above(&api, "gets", gets, 5000));
    put_default_account("sa-late");
    assert_int_equal(h_read(&c, &r, 10000, NULL), 0);
    assert_int_equal(r.status, 200);
    adm_buf_append(&r.body, "", 1);
    assert_non_null(strstr((char *)r.body.data, "\"allowed\":true"));
    assert_non_null(strstr((char *)r.body.data, "\"patch\":")); /* serviceAccountName and the token volume */
    assert_true(h_api_stat(&api, "gets") >= gets + 2);
    assert_true(h_api_stat(&api, "gets") <= gets + 10);
    h_response_free(&r);
    h_close(&c);
    free(req);
    free(review);
    stop();
}

static void test_service_account_named_once(void **state)
{
    char body[4096];
    long gets;

    (void)state;
    h_api_put_namespace(&api, "sa-named", "Active");
    start_held(NULL);
    gets = h_api_stat(&api, "gets");
    admit_pod("sa-named",
              "{\"serviceAccountName\":\"robot\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}",
              body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":false"));
    assert_non_null(strstr(body,
                           "\"message\":\"pods \\\"p\\\" is forbidden: error looking up service account "
                           "sa-named/robot: serviceaccount \\\"robot\\\" not found\""));
    assert_non_null(strstr(body, "\"code\":403"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 1);

    /* a GET that fails otherwise ends the lookup with the server's error, at once */
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"get\"}");
    admit_pod("sa-named", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body,
                           "\"message\":\"pods \\\"p\\\" is forbidden: error looking up service account "
                           "sa-named/default: Internal error occurred: injected\""));
    stop();
}

/*
 * The retries stop with the request: the request's deadline (?timeout=1s) ends the lookup with
 * kube's NotFound before it, and a request whose client resets the connection makes no GET after
 * that (its timer and call cancelled; under ASan, admitd then exits clean).
 */
static void test_service_account_bounded(void **state)
{
    char *review, *req;
    char body[4096];
    size_t len;
    h_conn_t c;
    h_response_t r = {0};
    long gets, after;
    long long t0;

    (void)state;
    h_api_put_namespace(&api, "sa-never", "Active");
    start_held(NULL);
    review = pod_review_json("sa-never", ONE_CONTAINER);

    gets = h_api_stat(&api, "gets");
    req = h_request("POST", "/admit?timeout=1s", "application/json", review, strlen(review), &len);
    assert_int_equal(h_connect_to(&c, &server), 0);
    t0 = h_now_ms();
    assert_int_equal(h_send(&c, req, len), 0);
    assert_int_equal(h_read(&c, &r, 5000, NULL), 0);
    assert_true(h_now_ms() - t0 < 1000);
    adm_buf_append(&r.body, "", 1);
    assert_non_null(strstr((char *)r.body.data, "error looking up service account sa-never/default: "
                                                "serviceaccount \\\"default\\\" not found"));
    after = h_api_stat(&api, "gets");
    assert_true(after >= gets + 2);
    assert_true(after < gets + 10);
    h_response_free(&r);
    h_close(&c);
    free(req);

    req = h_request("POST", "/admit", "application/json", review, strlen(review), &len);
    assert_int_equal(h_connect_to(&c, &server), 0);
    assert_int_equal(h_send(&c, req, len), 0);
    assert_true(h_api_wait_stat_above(&api, "gets", after + 1, 5000)); /* waiting between two GETs */
    {
        /* a reset, not a FIN: a half-closed client is still answered, a reset one has gone */
        struct linger hard = {1, 0};

        assert_int_equal(setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard)), 0);
    }
    h_close(&c);
    /* a few retry intervals: a lookup still running would have made more GETs by then */
    assert_false(h_api_wait_stat_above(&api, "gets", after + 3, 800));
    free(req);
    free(review);
    (void)body;
    stop();
}

#define LIMIT_RANGE                                                                                          \
    "{\"metadata\":{\"name\":\"defaults\",\"namespace\":\"lr-late\"},\"spec\":{\"limits\":[{\"type\":"       \
    "\"Container\",\"default\":{\"cpu\":\"500m\"},\"defaultRequest\":{\"cpu\":\"100m\"}}]}}"

#define LIMIT_RANGE_MANY                                                                                     \
    "{\"metadata\":{\"name\":\"defaults\",\"namespace\":\"lr-many\"},\"spec\":{\"limits\":[{\"type\":"       \
    "\"Container\",\"default\":{\"cpu\":\"500m\"},\"defaultRequest\":{\"cpu\":\"100m\"}}]}}"

static void test_limit_range_live_list(void **state)
{
    char body[8192];
    long lists;

    (void)state;
    h_api_put_namespace(&api, "lr-late", "Active");
    put_default_account("lr-late");
    h_api_put_namespace(&api, "lr-broken", "Active");
    put_default_account("lr-broken");
    h_api_put_namespace(&api, "lr-many", "Active");
    put_default_account("lr-many");
    start_held("ResourceQuota");
    api_put("limitranges", LIMIT_RANGE);
    lists = h_api_stat(&api, "lists");
    admit_pod("lr-late", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 1);
    {
        yyjson_doc *doc = yyjson_read(body, strlen(body), 0);
        char *patch = h_answer_patch(doc);

        assert_non_null(patch);
        assert_non_null(strstr(patch, "kubernetes.io/limit-ranger"));
        assert_non_null(strstr(patch, "500m"));
        free(patch);
        yyjson_doc_free(doc);
    }
    /* within liveTTL: the live cache answers */
    admit_pod("lr-late", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_non_null(strstr(body, "\"patch\":"));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 1);

    /* a LIST that fails: kube's Forbidden wrapping the client's error, and nothing cached */
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"list\"}");
    admit_pod("lr-broken", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(
        strstr(body, "\"message\":\"pods \\\"p\\\" is forbidden: Internal error occurred: injected\""));
    assert_non_null(strstr(body, "\"code\":403"));
    admit_pod("lr-broken", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 3);

    /* three pods at once in a namespace not listed yet, the LIST held 300 ms: they share one */
    api_put("limitranges", LIMIT_RANGE_MANY);
    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":300,\"resource\":\"limitranges\"}");
    {
        char *review = pod_review_json("lr-many", ONE_CONTAINER), *req;
        size_t len;
        h_conn_t c[3];

        req = h_request("POST", "/admit", "application/json", review, strlen(review), &len);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(h_connect_to(&c[i], &server), 0);
            assert_int_equal(h_send(&c[i], req, len), 0);
        }
        for (int i = 0; i < 3; i++) {
            h_response_t r = {0};

            assert_int_equal(h_read(&c[i], &r, 10000, NULL), 0);
            assert_int_equal(r.status, 200);
            adm_buf_append(&r.body, "", 1);
            assert_non_null(strstr((char *)r.body.data, "\"allowed\":true"));
            assert_non_null(strstr((char *)r.body.data, "\"patch\":"));
            h_response_free(&r);
            h_close(&c[i]);
        }
        free(req);
        free(review);
    }
    h_api_control(&api, "{\"op\":\"delay-lists\",\"ms\":0}");
    assert_int_equal(h_api_stat(&api, "lists"), lists + 4);
    stop();
}

#define QUOTA                                                                                                \
    "{\"metadata\":{\"name\":\"q\",\"namespace\":\"rq-late\"},\"spec\":{\"hard\":{\"pods\":\"1\"}},"         \
    "\"status\":{\"hard\":{\"pods\":\"1\"},\"used\":{\"pods\":\"0\"}}}"

static void test_resource_quota_live_list(void **state)
{
    char body[8192];
    long lists, puts;

    (void)state;
    h_api_put_namespace(&api, "rq-late", "Active");
    put_default_account("rq-late");
    h_api_put_namespace(&api, "rq-broken", "Active");
    put_default_account("rq-broken");
    start_held("LimitRanger");
    api_put("resourcequotas", QUOTA);
    lists = h_api_stat(&api, "lists");
    puts = h_api_stat(&api, "puts");
    /* the quota from the live LIST is charged: its status written before the pod is admitted */
    admit_pod("rq-late", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 1);
    assert_int_equal(h_api_stat(&api, "puts"), puts + 1);
    /* within liveTTL: the live cache's quota, as admitd last wrote it, refuses the second */
    admit_pod("rq-late", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"pods \\\"p\\\" is forbidden: exceeded quota: q, requested: "
                                 "pods=1, used: pods=1, limited: pods=1\""));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 1);

    /* a LIST that fails: the API server's Status as it came, and nothing cached */
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"list\"}");
    admit_pod("rq-broken", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"Internal error occurred: injected\""));
    assert_non_null(strstr(body, "\"code\":500"));
    admit_pod("rq-broken", ONE_CONTAINER, body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "lists"), lists + 3);
    stop();
}

/* A ConfigMap CREATE in ns through /admit (NamespaceExists looks at any namespaced object). */
static void admit_config_map(const char *ns, char *out, size_t out_len)
{
    char *review = create_review_json("ConfigMap", "configmaps", ns, "cm", "");

    h_call_200(&server, "POST", "/admit", review, out, out_len);
    free(review);
}

/*
 * NamespaceExists (NamespaceLifecycle and PodSecurity, which GET the namespace too, disabled): a namespace
 * the cache misses is found by one live GET; a missing one is the client's NotFound as is; a GET that fails
 * otherwise is kube's InternalError around the client's error; a name that cannot be a namespace's is not
 * found without a GET.
 */
static void test_namespace_exists_live_get(void **state)
{
    char body[4096];
    long gets, injected;

    (void)state;
    start_held_with("NamespaceExists", "NamespaceLifecycle,PodSecurity,ResourceQuota");
    h_api_put_namespace(&api, "ne-late", "Active");
    gets = h_api_stat(&api, "gets");
    admit_config_map("ne-late", body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 1);

    admit_config_map("ne-missing", body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":false"));
    assert_non_null(strstr(body, "\"message\":\"namespaces \\\"ne-missing\\\" not found\""));
    assert_non_null(strstr(body, "\"reason\":\"NotFound\""));
    assert_non_null(strstr(body, "\"code\":404"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 2);

    injected = h_api_stat(&api, "injected"); /* a GET answered by an injected failure counts there */
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"get\"}");
    admit_config_map("ne-late", body, sizeof(body));
    assert_non_null(
        strstr(body, "\"message\":\"Internal error occurred: Internal error occurred: injected\""));
    assert_non_null(strstr(body, "\"code\":500"));
    assert_int_equal(h_api_stat(&api, "injected"), injected + 1);

    admit_config_map("Not_A_Label", body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"namespaces \\\"Not_A_Label\\\" not found\""));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 2);
    assert_int_equal(h_api_stat(&api, "injected"), injected + 1);
    stop();
}

#define RUNTIME_CLASS                                                                                        \
    "{\"apiVersion\":\"node.k8s.io/v1\",\"kind\":\"RuntimeClass\",\"metadata\":{\"name\":\"kata-late\"},"    \
    "\"handler\":\"kata\",\"overhead\":{\"podFixed\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"}}}"

#define RUNTIME_CLASS_POD(name)                                                                              \
    "{\"runtimeClassName\":\"" name "\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}"

/*
 * RuntimeClass: a class the cache misses is found by one live GET, for admit and validate both (the
 * validating phase of /admit finds it in the request's slot), and its overhead is in the patch; a
 * missing one is kube's Forbidden; a GET that fails otherwise is the client's error as is; a name
 * that cannot be a class's is not found without a GET.
 */
static void test_runtime_class_live_get(void **state)
{
    char body[8192];
    long gets, injected;

    (void)state;
    h_api_put_namespace(&api, "rc-ns", "Active");
    put_default_account("rc-ns");
    start_held(NULL);
    api_put("runtimeclasses", RUNTIME_CLASS);
    gets = h_api_stat(&api, "gets");
    admit_pod("rc-ns", RUNTIME_CLASS_POD("kata-late"), body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":true"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 1);
    {
        yyjson_doc *doc = yyjson_read(body, strlen(body), 0);
        char *patch = h_answer_patch(doc);

        assert_non_null(patch);
        assert_non_null(strstr(patch, "/spec/overhead"));
        assert_non_null(strstr(patch, "250m"));
        assert_non_null(strstr(patch, "120Mi"));
        free(patch);
        yyjson_doc_free(doc);
    }

    admit_pod("rc-ns", RUNTIME_CLASS_POD("nope"), body, sizeof(body));
    assert_non_null(strstr(body, "\"allowed\":false"));
    assert_non_null(strstr(body, "\"message\":\"pods \\\"p\\\" is forbidden: pod rejected: RuntimeClass "
                                 "\\\"nope\\\" not found\""));
    assert_non_null(strstr(body, "\"code\":403"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 2);

    injected = h_api_stat(&api, "injected"); /* a GET answered by an injected failure counts there */
    h_api_control(&api, "{\"op\":\"fail\",\"status\":500,\"count\":1,\"on\":\"get\"}");
    admit_pod("rc-ns", RUNTIME_CLASS_POD("kata-late"), body, sizeof(body));
    assert_non_null(strstr(body, "\"message\":\"Internal error occurred: injected\""));
    assert_non_null(strstr(body, "\"code\":500"));
    assert_int_equal(h_api_stat(&api, "injected"), injected + 1);

    admit_pod("rc-ns", RUNTIME_CLASS_POD("Not_A_Name"), body, sizeof(body));
    assert_non_null(strstr(body, "pod rejected: RuntimeClass \\\"Not_A_Name\\\" not found"));
    assert_int_equal(h_api_stat(&api, "gets"), gets + 2);
    assert_int_equal(h_api_stat(&api, "injected"), injected + 1);
    stop();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service_account_default_retried),
        cmocka_unit_test(test_service_account_named_once),
        cmocka_unit_test(test_service_account_bounded),
        cmocka_unit_test(test_limit_range_live_list),
        cmocka_unit_test(test_resource_quota_live_list),
        cmocka_unit_test(test_namespace_exists_live_get),
        cmocka_unit_test(test_runtime_class_live_get),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ServiceAccount: a new pod runs as a service account that exists ("default" when it names
 * none), gets the projected kube-api-access-XXXXX token volume mounted in every init and regular
 * container (unless the pod or the account opts out, or a container already mounts something at
 * the token path), and the account's imagePullSecrets when it has none of its own. Mirror pods are
 * never changed and may not reference service accounts, secrets or token projections. An account
 * annotated kubernetes.io/enforce-mountable-secrets=true limits the secrets its pods (and, on
 * pods/ephemeralcontainers updates, their ephemeral containers) may reference to its own.
 *
 * An account the cache does not have is looked up live, as kube's getServiceAccount does: with an
 * API connection, GETs of the account as an ADM_AGAIN phase (live_call.h), 1 for any name and 10
 * for "default" (the controller creates it right after its namespace), 404s retried after one
 * random interval of 100-199 ms drawn per lookup, on a loop timer; any other error ends the lookup
 * as the client worded it, and after the last 404 the account is NotFound. A retry that could not
 * start before the request's deadline is not made (NotFound then). Without an API connection the
 * --cluster-state files are both cache and storage, so the lookup answers at once. The account
 * found is kept in the request's slot: validate, and admit's own call of it, do not look again.
 */
#include "adm/plugins/service_account.h"
#include "adm/admission/plugin.h"
#include "adm/admission/podutil.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/cluster/api_client.h"
#include "adm/cluster/cluster_state.h"
#include "adm/plugins/live_call.h"
#include "adm/plugins/lookup.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define TOKEN_PATH "/var/run/secrets/kubernetes.io/serviceaccount"
#define VOLUME_PREFIX "kube-api-access-"
#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
#define ENFORCE_ANNOTATION "kubernetes.io/enforce-mountable-secrets"
#define DEFAULT_NAME "default"
#define DEFAULT_ATTEMPTS 10 /* kube's numAttempts for "default"; 1 for any other name */
#define RETRY_BASE_MS 100   /* kube's retryInterval: 100 ms plus rand.Int63n(100) */
#define RETRY_SPREAD_MS 100

typedef struct state_s {
    adm_sa_suffix_fn suffix;
} state_t;

/* utilrand.String's alphabet: no vowels, no confusable characters. */
static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

static void random_suffix(char out[6])
{
    unsigned char r[5] = {0};

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        /* getrandom on 5 bytes does not fail once the pool is ready; a fixed name still works */
        memset(r, 0, sizeof(r));
    }
    for (size_t i = 0; i < 5; i++) {
        out[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
    }
    out[5] = '\0';
}

static int configure(const adm_plugin_config_t *cfg, void **state, char *err, size_t err_len)
{
    state_t *s = malloc(sizeof(*s));

    (void)cfg;
    (void)err;
    (void)err_len;
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    s->suffix = random_suffix;
    *state = s;
    return 0;
}

void adm_service_account_set_suffix(void *state, adm_sa_suffix_fn fn)
{
    ((state_t *)state)->suffix = fn;
}

/* shouldIgnore: pods and pods/ephemeralcontainers carrying a Pod. */
static bool ignored(adm_attrs_t *attrs)
{
    const adm_review_request_t *req = attrs->req;

    if (req->resource.group[0] != '\0' || strcmp(req->resource.resource, "pods") != 0 ||
        (req->sub_resource[0] != '\0' && strcmp(req->sub_resource, "ephemeralcontainers") != 0)) {
        return true;
    }
    return !adm_attrs_has_object(attrs) || !adm_attrs_kind_is(attrs, "", "Pod");
}

static bool is_mirror(yyjson_val *pod)
{
    return adm_json_get(adm_json_path(pod, "metadata", "annotations", NULL), MIRROR_ANNOTATION) != NULL;
}

/* strconv.ParseBool's true spellings. */
static bool parse_bool_true(const char *v)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(v, yes[i]) == 0) {
            return true;
        }
    }
    return false;
}

static bool enforce_mountable(yyjson_val *sa)
{
    yyjson_val *v = adm_json_get(adm_json_path(sa, "metadata", "annotations", NULL), ENFORCE_ANNOTATION);

    return yyjson_is_str(v) && parse_bool_true(yyjson_get_str(v));
}

/* The NotFound of kube's last attempt, as the Forbidden admit and validate wrap it. */
static int account_not_found(adm_attrs_t *attrs, const char *name, adm_status_t *st)
{
    const char *q = adm_go_quote(attrs->arena, name);

    if (q == NULL) {
        return adm_status_nomem(st);
    }
    return adm_status_forbidden(st, attrs,
                                "error looking up service account %s/%s: serviceaccount %s not found",
                                attrs->req->namespace_, name, q);
}

static int account_error(adm_attrs_t *attrs, const char *name, const char *err, adm_status_t *st)
{
    return adm_status_forbidden(st, attrs, "error looking up service account %s/%s: %s",
                                attrs->req->namespace_, name, err != NULL ? err : "unknown error");
}

/*
 * getServiceAccount without an API connection: the lister, then the storage (the files). Returns
 * ADM_OK with *sa set, or the Forbidden `error looking up service account NS/NAME: ERR` in st.
 */
static int get_account(adm_attrs_t *attrs, const char *name, yyjson_val **sa, adm_status_t *st)
{
    const adm_live_reader_t *live = &adm_live_reader_files;
    const char *ns = attrs->req->namespace_;
    const char *err = NULL;

    *sa = adm_lookup(attrs, "", "ServiceAccount", ns, name);
    if (*sa != NULL) {
        return ADM_OK;
    }
    switch (live->get(live->arg, attrs, "", "ServiceAccount", ns, name, sa, &err)) {
    case ADM_LIVE_FOUND: return ADM_OK;
    case ADM_LIVE_NOT_FOUND: return account_not_found(attrs, name, st);
    default: return account_error(attrs, name, err, st);
    }
}

/* ---- the live lookup ---- */

/* What admit or validate does once it has the account. */
typedef int (*account_phase_fn)(state_t *s, adm_attrs_t *attrs, adm_status_t *st, yyjson_val *sa);

/* The account found in this request, in the plugin's slot (arena memory). */
typedef struct found_s {
    const char *name;
    yyjson_val *sa;
} found_t;

/* The retry timer lives on the heap: its close completes on the loop, maybe after the request. */
typedef struct retry_timer_s {
    uv_timer_t timer;
    struct live_lookup_s *lk; /* NULL once the lookup no longer waits on it */
} retry_timer_t;

/* One live lookup, in the request's arena. */
typedef struct live_lookup_s {
    state_t *s;
    adm_attrs_t *attrs;
    adm_async_t *async;
    account_phase_fn phase;
    const char *name;
    const char *path;
    unsigned attempts, max_attempts;
    uint64_t interval_ms;
    retry_timer_t *rt;
} live_lookup_t;

static void remember(adm_attrs_t *attrs, const char *name, yyjson_val *sa)
{
    void **slot = adm_plugin_slot(attrs);
    found_t *f;

    if (slot == NULL) {
        return;
    }
    f = *slot != NULL ? *slot : adm_arena_calloc(attrs->arena, 1, sizeof(*f));
    if (f != NULL) {
        f->name = name;
        f->sa = sa;
        *slot = f;
    }
}

static yyjson_val *remembered(adm_attrs_t *attrs, const char *name)
{
    void **slot = adm_plugin_slot(attrs);
    const found_t *f = slot != NULL ? *slot : NULL;

    return f != NULL && strcmp(f->name, name) == 0 ? f->sa : NULL;
}

static void on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

static void drop_timer(live_lookup_t *lk)
{
    if (lk->rt != NULL) {
        lk->rt->lk = NULL;
        uv_timer_stop(&lk->rt->timer);
        uv_close((uv_handle_t *)&lk->rt->timer, on_timer_closed);
        lk->rt = NULL;
    }
}

static void finish(live_lookup_t *lk, int rc, const adm_status_t *st)
{
    drop_timer(lk);
    adm_async_done(lk->async, rc, st);
}

/* The chain cancelled the request while it waited between two GETs. */
static void on_cancel_wait(void *arg)
{
    drop_timer(arg);
}

static void on_account(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res, yyjson_val *body,
                       const char *err, void *arg);

static int attempt(live_lookup_t *lk)
{
    lk->attempts++;
    return adm_live_call(lk->attrs, lk->async, lk->path, NULL, on_account, lk);
}

static void on_retry(uv_timer_t *t)
{
    retry_timer_t *rt = t->data;
    live_lookup_t *lk = rt->lk;
    adm_status_t st;

    if (lk == NULL) {
        return;
    }
    lk->async->cancel = NULL;
    if (attempt(lk) != ADM_AGAIN) {
        memset(&st, 0, sizeof(st));
        finish(lk, adm_status_nomem(&st), &st);
    }
}

/* After a 404: waits the lookup's interval on a timer, or false when no attempt is left in time. */
static bool schedule_retry(live_lookup_t *lk)
{
    uint64_t now = adm_plugin_now_ms(lk->attrs);
    const adm_cluster_state_t *cs = adm_plugin_cluster(lk->attrs);
    adm_api_client_t *api = cs != NULL ? adm_cluster_state_api(cs) : NULL;

    if (lk->attempts >= lk->max_attempts || now + lk->interval_ms >= lk->async->deadline_ms || api == NULL) {
        return false;
    }
    if (lk->rt == NULL) {
        lk->rt = calloc(1, sizeof(*lk->rt));
        if (lk->rt == NULL) {
            return false;
        }
        lk->rt->timer.data = lk->rt;
        if (uv_timer_init(adm_api_client_loop(api), &lk->rt->timer) != 0) {
            free(lk->rt);
            lk->rt = NULL;
            return false;
        }
        lk->rt->lk = lk;
    }
    if (uv_timer_start(&lk->rt->timer, on_retry, lk->interval_ms, 0) != 0) {
        return false;
    }
    lk->async->cancel = on_cancel_wait;
    lk->async->cancel_arg = lk;
    return true;
}

static void on_account(adm_attrs_t *attrs, adm_async_t *async, const adm_call_result_t *res, yyjson_val *body,
                       const char *err, void *arg)
{
    live_lookup_t *lk = arg;
    adm_status_t st;
    int rc;

    (void)async;
    memset(&st, 0, sizeof(st));
    if (err != NULL) {
        rc = account_error(attrs, lk->name, err, &st);
    } else if (res->status == 404) {
        if (schedule_retry(lk)) {
            return;
        }
        rc = account_not_found(attrs, lk->name, &st);
    } else if (res->status / 100 != 2 || !yyjson_is_obj(body)) {
        rc = account_error(attrs, lk->name, adm_live_call_error(attrs, res, body), &st);
    } else {
        remember(attrs, lk->name, body);
        rc = lk->phase(lk->s, attrs, &st, body);
    }
    finish(lk, rc, &st);
}

/* A random interval of 100-199 ms, drawn once per lookup as kube draws it. */
static uint64_t retry_interval(void)
{
    uint16_t r = 0;

    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        r = 0; /* the shortest interval still works */
    }
    return RETRY_BASE_MS + r % RETRY_SPREAD_MS;
}

/*
 * getServiceAccount: the account found earlier in this request, the lister's, or (with an API
 * connection and a chain to resume) the live lookup, after which phase runs with the account.
 * Returns ADM_OK with *sa set, ADM_AGAIN, or a refusal in st.
 */
static int find_account(state_t *s, adm_attrs_t *attrs, const char *name, yyjson_val **sa, adm_status_t *st,
                        adm_async_t *async, account_phase_fn phase)
{
    const char *ns = attrs->req->namespace_;
    live_lookup_t *lk;

    *sa = remembered(attrs, name);
    if (*sa == NULL) {
        *sa = adm_lookup(attrs, "", "ServiceAccount", ns, name);
    }
    if (*sa != NULL || async == NULL || !adm_live_call_possible(attrs)) {
        int rc = *sa != NULL ? ADM_OK : get_account(attrs, name, sa, st);

        if (rc == ADM_OK) {
            remember(attrs, name, *sa);
        }
        return rc;
    }
    if (!adm_live_subdomain_name(name) || !adm_live_namespace_name(ns)) {
        return account_not_found(attrs, name, st);
    }
    lk = adm_arena_calloc(attrs->arena, 1, sizeof(*lk));
    if (lk == NULL) {
        return adm_status_nomem(st);
    }
    lk->s = s;
    lk->attrs = attrs;
    lk->async = async;
    lk->phase = phase;
    lk->name = name;
    lk->max_attempts = strcmp(name, DEFAULT_NAME) == 0 ? DEFAULT_ATTEMPTS : 1;
    lk->interval_ms = retry_interval();
    lk->path = adm_arena_printf(attrs->arena, "/api/v1/namespaces/%s/serviceaccounts/%s", ns, name);
    if (lk->path == NULL) {
        return adm_status_nomem(st);
    }
    return attempt(lk) == ADM_AGAIN ? ADM_AGAIN : adm_status_nomem(st);
}

/* True when the list of {name: ...} objects holds name. */
static bool names_hold(yyjson_val *list, const char *name)
{
    yyjson_val *v;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(list, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        if (strcmp(adm_json_str(v, "name"), name) == 0) {
            return true;
        }
    }
    return false;
}

/* The env and envFrom secret references of one container list, checked against mountable. */
static int limit_containers(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *list, const char *what,
                            yyjson_val *mountable, const char *sa_name)
{
    yyjson_val *c;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(list, &it);
    for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
        yyjson_val *e;
        yyjson_arr_iter eit;

        yyjson_arr_iter_init(adm_json_get(c, "env"), &eit);
        for (e = yyjson_arr_iter_next(&eit); e != NULL; e = yyjson_arr_iter_next(&eit)) {
            yyjson_val *ref = adm_json_path(e, "valueFrom", "secretKeyRef", NULL);

            if (yyjson_is_obj(ref) && !names_hold(mountable, adm_json_str(ref, "name"))) {
                return adm_status_forbidden(
                    st, attrs,
                    "%s %s with envVar %s referencing secret.secretName=\"%s\" is not "
                    "allowed because service account %s does not reference that secret",
                    what, adm_json_str(c, "name"), adm_json_str(e, "name"), adm_json_str(ref, "name"),
                    sa_name);
            }
        }
        yyjson_arr_iter_init(adm_json_get(c, "envFrom"), &eit);
        for (e = yyjson_arr_iter_next(&eit); e != NULL; e = yyjson_arr_iter_next(&eit)) {
            yyjson_val *ref = adm_json_get(e, "secretRef");

            if (yyjson_is_obj(ref) && !names_hold(mountable, adm_json_str(ref, "name"))) {
                return adm_status_forbidden(
                    st, attrs,
                    "%s %s with envFrom referencing secret.secretName=\"%s\" is not "
                    "allowed because service account %s does not reference that secret",
                    what, adm_json_str(c, "name"), adm_json_str(ref, "name"), sa_name);
            }
        }
    }
    return ADM_OK;
}

/* limitSecretReferences */
static int limit_secrets(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *sa, yyjson_val *spec)
{
    yyjson_val *mountable = adm_json_get(sa, "secrets");
    const char *sa_name = adm_json_str(adm_json_get(sa, "metadata"), "name");
    yyjson_val *v;
    yyjson_arr_iter it;
    size_t i = 0;
    int rc;

    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        yyjson_val *secret = adm_json_get(v, "secret");

        if (yyjson_is_obj(secret) && !names_hold(mountable, adm_json_str(secret, "secretName"))) {
            return adm_status_forbidden(st, attrs,
                                        "volume with secret.secretName=\"%s\" is not allowed because service "
                                        "account %s does not reference that secret",
                                        adm_json_str(secret, "secretName"), sa_name);
        }
    }
    rc = limit_containers(attrs, st, adm_json_get(spec, "initContainers"), "init container", mountable,
                          sa_name);
    if (rc == ADM_OK) {
        rc = limit_containers(attrs, st, adm_json_get(spec, "containers"), "container", mountable, sa_name);
    }
    if (rc != ADM_OK) {
        return rc;
    }
    yyjson_arr_iter_init(adm_json_get(spec, "imagePullSecrets"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it), i++) {
        if (!names_hold(adm_json_get(sa, "imagePullSecrets"), adm_json_str(v, "name"))) {
            return adm_status_forbidden(
                st, attrs,
                "imagePullSecrets[%zu].name=\"%s\" is not allowed because service account "
                "%s does not reference that imagePullSecret",
                i, adm_json_str(v, "name"), sa_name);
        }
    }
    return ADM_OK;
}

static int validate_mirror(adm_attrs_t *attrs, adm_status_t *st, yyjson_val *spec)
{
    yyjson_val *v;
    yyjson_arr_iter it;

    if (adm_json_str(spec, "serviceAccountName")[0] != '\0') {
        return adm_status_forbidden(st, attrs, "a mirror pod may not reference service accounts");
    }
    if (adm_pod_references_secrets(spec)) {
        return adm_status_forbidden(st, attrs, "a mirror pod may not reference secrets");
    }
    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        yyjson_val *src;
        yyjson_arr_iter sit;

        yyjson_arr_iter_init(adm_json_path(v, "projected", "sources", NULL), &sit);
        for (src = yyjson_arr_iter_next(&sit); src != NULL; src = yyjson_arr_iter_next(&sit)) {
            if (yyjson_is_obj(adm_json_get(src, "serviceAccountToken"))) {
                return adm_status_forbidden(
                    st, attrs, "a mirror pod may not use ServiceAccountToken volume projections");
            }
        }
    }
    return ADM_OK;
}

/* validate once the account is found: the secrets the pod (or its ephemeral containers) references. */
static int validate_with(state_t *s, adm_attrs_t *attrs, adm_status_t *st, yyjson_val *sa)
{
    const adm_review_request_t *req = attrs->req;
    yyjson_val *spec = adm_json_get(adm_attrs_object(attrs), "spec");

    (void)s;
    if (!enforce_mountable(sa)) {
        return ADM_OK;
    }
    if (req->operation == ADM_OP_UPDATE) {
        return limit_containers(attrs, st, adm_json_get(spec, "ephemeralContainers"), "ephemeral container",
                                adm_json_get(sa, "secrets"),
                                adm_json_str(adm_json_get(sa, "metadata"), "name"));
    }
    return limit_secrets(attrs, st, sa, spec);
}

static int validate_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    const adm_review_request_t *req = attrs->req;
    yyjson_val *pod;
    yyjson_val *spec;
    yyjson_val *sa;
    const char *sa_name;
    bool ephemeral;
    int rc;

    if (ignored(attrs)) {
        return ADM_OK;
    }
    pod = adm_attrs_object(attrs);
    spec = adm_json_get(pod, "spec");
    ephemeral = req->operation == ADM_OP_UPDATE && strcmp(req->sub_resource, "ephemeralcontainers") == 0;
    if (!ephemeral && req->operation != ADM_OP_CREATE) {
        return ADM_OK;
    }
    if (!ephemeral && is_mirror(pod)) {
        return validate_mirror(attrs, st, spec);
    }
    sa_name = adm_json_str(spec, "serviceAccountName");
    if (sa_name[0] == '\0') {
        return adm_status_forbidden(st, attrs, "no service account specified for pod %s/%s", req->namespace_,
                                    adm_json_str(adm_json_get(pod, "metadata"), "name"));
    }
    rc = find_account(state, attrs, sa_name, &sa, st, async, validate_with);
    return rc != ADM_OK ? rc : validate_with(state, attrs, st, sa);
}

static int validate(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return validate_async(state, attrs, st, NULL);
}

/* shouldAutomount: the pod's choice, else the account's, else true. */
static bool automount(yyjson_val *sa, yyjson_val *spec)
{
    yyjson_val *v = adm_json_get(spec, "automountServiceAccountToken");

    if (yyjson_is_bool(v)) {
        return yyjson_get_bool(v);
    }
    v = adm_json_get(sa, "automountServiceAccountToken");
    return yyjson_is_bool(v) ? yyjson_get_bool(v) : true;
}

/* TokenVolumeSource, with defaultMode and expirationSeconds set explicitly as kube sets them. */
static const char token_volume_json[] =
    "{\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},"
    "{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},"
    "{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\","
    "\"fieldPath\":\"metadata.namespace\"}}]}}],\"defaultMode\":420}}";

/* obj[key] = [value], appended to obj[key] when it is a list already (adm_mut_ensure's rules). */
static int append_to(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *obj, const char *key,
                     yyjson_mut_val *value)
{
    yyjson_val *list = adm_json_get(obj, key);
    yyjson_mut_val *fresh;

    if (value == NULL || adm_json_not_ensurable(list, YYJSON_TYPE_ARR)) {
        return ADM_ENOMEM;
    }
    if (yyjson_is_arr(list)) {
        return adm_attrs_edit_key(attrs, ADM_EDIT_APPEND, list, NULL, value);
    }
    fresh = yyjson_mut_arr(doc);
    return fresh != NULL && yyjson_mut_arr_append(fresh, value)
               ? adm_attrs_edit_key(attrs, ADM_EDIT_SET, obj, key, fresh)
               : ADM_ENOMEM;
}

/* Appends the token mount to each container of list that mounts nothing at the token path. */
static int mount_in(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *list, const char *volume,
                    bool *added)
{
    yyjson_val *c;
    yyjson_arr_iter it;

    yyjson_arr_iter_init(list, &it);
    for (c = yyjson_arr_iter_next(&it); c != NULL; c = yyjson_arr_iter_next(&it)) {
        yyjson_val *mounts = adm_json_get(c, "volumeMounts");
        yyjson_val *m;
        yyjson_arr_iter mit;
        yyjson_mut_val *mount;
        bool present = false;
        int rc;

        yyjson_arr_iter_init(mounts, &mit);
        for (m = yyjson_arr_iter_next(&mit); m != NULL && !present; m = yyjson_arr_iter_next(&mit)) {
            const char *path = yyjson_get_str(adm_json_get(m, "mountPath"));

            present = path != NULL && strcmp(path, TOKEN_PATH) == 0;
        }
        if (present || !yyjson_is_obj(c)) {
            continue;
        }
        mount = yyjson_mut_obj(doc);
        if (mount == NULL || !yyjson_mut_obj_add_str(doc, mount, "name", volume) ||
            !yyjson_mut_obj_add_bool(doc, mount, "readOnly", true) ||
            !yyjson_mut_obj_add_str(doc, mount, "mountPath", TOKEN_PATH)) {
            return ADM_ENOMEM;
        }
        rc = append_to(attrs, doc, c, "volumeMounts", mount);
        if (rc != ADM_OK) {
            return rc;
        }
        *added = true;
    }
    return ADM_OK;
}

/* mountServiceAccountToken, as edits of spec */
static int mount_token(state_t *s, adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *spec)
{
    yyjson_val *v;
    yyjson_arr_iter it;
    const char *name = NULL;
    bool added = false;
    bool has_volume;
    int rc;

    yyjson_arr_iter_init(adm_json_get(spec, "volumes"), &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL && name == NULL; v = yyjson_arr_iter_next(&it)) {
        const char *n = yyjson_get_str(adm_json_get(v, "name"));

        if (n != NULL && strncmp(n, VOLUME_PREFIX, strlen(VOLUME_PREFIX)) == 0) {
            name = n;
        }
    }
    has_volume = name != NULL;
    if (name == NULL) {
        char suffix[6];

        s->suffix(suffix);
        name = adm_arena_printf(attrs->arena, VOLUME_PREFIX "%s", suffix);
        if (name == NULL) {
            return ADM_ENOMEM;
        }
    }
    rc = mount_in(attrs, doc, adm_json_get(spec, "initContainers"), name, &added);
    if (rc == ADM_OK) {
        rc = mount_in(attrs, doc, adm_json_get(spec, "containers"), name, &added);
    }
    if (rc != ADM_OK || has_volume || !added) {
        return rc;
    }
    {
        yyjson_read_err rerr;
        yyjson_doc *tmpl =
            adm_json_read(attrs->arena, token_volume_json, sizeof(token_volume_json) - 1, &rerr);
        yyjson_mut_val *vol = tmpl != NULL ? adm_json_mut_share(doc, yyjson_doc_get_root(tmpl)) : NULL;

        if (vol == NULL ||
            !yyjson_mut_obj_insert(vol, yyjson_mut_str(doc, "name"), yyjson_mut_str(doc, name), 0)) {
            return ADM_ENOMEM;
        }
        return append_to(attrs, doc, spec, "volumes", vol);
    }
}

static int copy_pull_secrets(adm_attrs_t *attrs, yyjson_mut_doc *doc, yyjson_val *spec, yyjson_val *sa)
{
    yyjson_val *from = adm_json_get(sa, "imagePullSecrets");
    yyjson_val *have = adm_json_get(spec, "imagePullSecrets");
    yyjson_mut_val *to;
    yyjson_val *v;
    yyjson_arr_iter it;

    if (yyjson_arr_size(have) != 0 || yyjson_arr_size(from) == 0) {
        return ADM_OK; /* an empty list is dropped by the encoder: nothing to write */
    }
    to = yyjson_mut_arr(doc);
    if (to == NULL || adm_json_not_ensurable(have, YYJSON_TYPE_ARR)) {
        return ADM_ENOMEM;
    }
    yyjson_arr_iter_init(from, &it);
    for (v = yyjson_arr_iter_next(&it); v != NULL; v = yyjson_arr_iter_next(&it)) {
        yyjson_mut_val *ref = yyjson_mut_arr_add_obj(doc, to);

        if (ref == NULL || !yyjson_mut_obj_add_strcpy(doc, ref, "name", adm_json_str(v, "name"))) {
            return ADM_ENOMEM;
        }
    }
    /* an empty list there is filled in place, as adm_mut_ensure hands it back */
    return yyjson_is_arr(have) ? adm_attrs_edit_key(attrs, ADM_EDIT_REPLACE, have, NULL, to)
                               : adm_attrs_edit_key(attrs, ADM_EDIT_SET, spec, "imagePullSecrets", to);
}

/* admit once the account is found: the pod's account name, token volume and pull secrets. */
static int admit_with(state_t *s, adm_attrs_t *attrs, adm_status_t *st, yyjson_val *sa)
{
    const char *named = yyjson_get_str(adm_attrs_get(attrs, "spec", "serviceAccountName", NULL));
    yyjson_val *auto_mount = adm_attrs_get(attrs, "spec", "automountServiceAccountToken", NULL);
    yyjson_mut_doc *doc = adm_attrs_values_doc(attrs);
    yyjson_val *spec = doc != NULL ? adm_attrs_ensure(attrs, YYJSON_TYPE_OBJ, "spec", NULL) : NULL;
    int rc = ADM_OK;

    if (spec == NULL) {
        return adm_status_nomem(st);
    }
    if (named == NULL || named[0] == '\0') {
        rc = adm_attrs_edit_key(attrs, ADM_EDIT_ADD, spec, "serviceAccountName",
                                yyjson_mut_str(doc, DEFAULT_NAME));
    }
    /* shouldAutomount: the pod's choice, else the account's, else true */
    if (rc == ADM_OK && (yyjson_is_bool(auto_mount) ? yyjson_get_bool(auto_mount) : automount(sa, NULL))) {
        rc = mount_token(s, attrs, doc, spec);
    }
    if (rc == ADM_OK) {
        rc = copy_pull_secrets(attrs, doc, spec, sa);
    }
    if (rc != ADM_OK) {
        return adm_status_nomem(st);
    }
    /*
     * Validate on the pod as changed. Without the account's enforce-mountable-secrets annotation
     * validate looks no further than the account admit just found (the pod is still no mirror pod
     * and now names that account), so it passes without a view of the changed pod. With it,
     * validate finds the account in the request's slot.
     */
    if (!enforce_mountable(sa)) {
        return ADM_OK;
    }
    return validate(s, attrs, st);
}

/*
 * admit reads the three fields it needs one by one (adm_attrs_get): an earlier plugin's change
 * would otherwise cost a view of the whole pod before any is read, and admit changes it again.
 */
static int admit_async(void *state, adm_attrs_t *attrs, adm_status_t *st, adm_async_t *async)
{
    yyjson_val *sa;
    const char *named, *sa_name;
    int rc;

    if (ignored(attrs) || attrs->req->operation != ADM_OP_CREATE) {
        return ADM_OK;
    }
    if (adm_attrs_get(attrs, "metadata", "annotations", MIRROR_ANNOTATION, NULL) != NULL) {
        return validate(state, attrs, st); /* is_mirror */
    }
    named = yyjson_get_str(adm_attrs_get(attrs, "spec", "serviceAccountName", NULL));
    sa_name = named != NULL && named[0] != '\0' ? named : DEFAULT_NAME;
    rc = find_account(state, attrs, sa_name, &sa, st, async, admit_with);
    return rc != ADM_OK ? rc : admit_with(state, attrs, st, sa);
}

static int admit(void *state, adm_attrs_t *attrs, adm_status_t *st)
{
    return admit_async(state, attrs, st, NULL);
}

static const char *const reads[] = {"/ServiceAccount", NULL};

const adm_plugin_t adm_plugin_service_account = {
    .name = "ServiceAccount",
    .operations = ADM_OPS_CREATE | ADM_OPS_UPDATE,
    .reads = reads,
    .configure = configure,
    .free_state = free,
    .admit = admit,
    .validate = validate,
    .admit_async = admit_async,
    .validate_async = validate_async,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AdmissionReview (admission.k8s.io/v1 and v1beta1) decoding and response encoding.
 *
 * Decoding reads the body where it lies (yyjson copies strings into its document, which lives in
 * the request arena) and visits each object's members once, so a request costs one parse and one
 * pass. Absent and null fields read as Go's zero values, as kube-apiserver's decoder would give;
 * a known field of the wrong JSON type is an error that names it.
 *
 * Encoding writes JSON by hand into the arena: the common "allowed" answer is a few copies.
 */
#include "adm/review.h"

#include "adm/error.h"
#include "adm/json.h"
#include "adm/jsonw.h"

#include <stdio.h>
#include <string.h>

#define API_V1 "admission.k8s.io/v1"
#define API_V1BETA1 "admission.k8s.io/v1beta1"

const char *adm_review_api_version(adm_review_version_t version)
{
    return version == ADM_REVIEW_V1BETA1 ? API_V1BETA1 : API_V1;
}

/* Reads a string member; absent or null gives "". Returns -1 when it has another type. */
static int as_string(yyjson_val *v, const char **out)
{
    if (v == NULL || yyjson_is_null(v)) {
        *out = "";
        return 0;
    }
    if (!yyjson_is_str(v)) {
        return -1;
    }
    *out = yyjson_get_str(v);
    return 0;
}

static bool key_is(yyjson_val *key, const char *name)
{
    size_t n = strlen(name);

    return yyjson_get_len(key) == n && memcmp(yyjson_get_str(key), name, n) == 0;
}

static int decode_gvk(yyjson_val *v, adm_gvk_t *out, const char **problem, const char *const msgs[4])
{
    yyjson_val *key, *val;
    yyjson_obj_iter it;

    out->group = out->version = out->kind = "";
    if (v == NULL || yyjson_is_null(v)) {
        return 0;
    }
    if (!yyjson_is_obj(v)) {
        *problem = msgs[0];
        return ADM_EPARSE;
    }
    yyjson_obj_iter_init(v, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        val = yyjson_obj_iter_get_val(key);
        if (key_is(key, "group") && as_string(val, &out->group) != 0) {
            *problem = msgs[1];
            return ADM_EPARSE;
        }
        if (key_is(key, "version") && as_string(val, &out->version) != 0) {
            *problem = msgs[2];
            return ADM_EPARSE;
        }
        if ((key_is(key, "kind") || key_is(key, "resource")) && as_string(val, &out->kind) != 0) {
            *problem = msgs[3];
            return ADM_EPARSE;
        }
    }
    return 0;
}

/* GroupVersionResource has the same shape as GroupVersionKind with "resource" for "kind". */
static int decode_gvr(yyjson_val *v, adm_gvr_t *out, const char **problem, const char *const msgs[4])
{
    adm_gvk_t gvk;
    int rc = decode_gvk(v, &gvk, problem, msgs);

    out->group = gvk.group;
    out->version = gvk.version;
    out->resource = gvk.kind;
    return rc;
}

static const char *const kind_msgs[] = {
    "request.kind must be an object", "request.kind.group must be a string",
    "request.kind.version must be a string", "request.kind.kind must be a string"};
static const char *const resource_msgs[] = {
    "request.resource must be an object", "request.resource.group must be a string",
    "request.resource.version must be a string", "request.resource.resource must be a string"};
static const char *const request_kind_msgs[] = {
    "request.requestKind must be an object", "request.requestKind.group must be a string",
    "request.requestKind.version must be a string", "request.requestKind.kind must be a string"};
static const char *const request_resource_msgs[] = {
    "request.requestResource must be an object", "request.requestResource.group must be a string",
    "request.requestResource.version must be a string", "request.requestResource.resource must be a string"};

static int decode_user_info(adm_arena_t *a, yyjson_val *v, adm_user_info_t *u, const char **problem)
{
    yyjson_val *key, *val;
    yyjson_obj_iter it;

    memset(u, 0, sizeof(*u));
    u->username = u->uid = "";
    if (v == NULL || yyjson_is_null(v)) {
        return 0;
    }
    if (!yyjson_is_obj(v)) {
        *problem = "request.userInfo must be an object";
        return ADM_EPARSE;
    }
    yyjson_obj_iter_init(v, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        val = yyjson_obj_iter_get_val(key);
        if (key_is(key, "username")) {
            if (as_string(val, &u->username) != 0) {
                *problem = "request.userInfo.username must be a string";
                return ADM_EPARSE;
            }
        } else if (key_is(key, "uid")) {
            if (as_string(val, &u->uid) != 0) {
                *problem = "request.userInfo.uid must be a string";
                return ADM_EPARSE;
            }
        } else if (key_is(key, "groups")) {
            yyjson_val *g;
            yyjson_arr_iter ai;
            size_t i = 0;

            if (yyjson_is_null(val)) {
                continue;
            }
            if (!yyjson_is_arr(val)) {
                *problem = "request.userInfo.groups must be an array of strings";
                return ADM_EPARSE;
            }
            u->groups = adm_arena_alloc(a, (yyjson_arr_size(val) + 1) * sizeof(*u->groups));
            if (u->groups == NULL) {
                return ADM_ENOMEM;
            }
            yyjson_arr_iter_init(val, &ai);
            while ((g = yyjson_arr_iter_next(&ai)) != NULL) {
                if (!yyjson_is_str(g)) {
                    *problem = "request.userInfo.groups must be an array of strings";
                    return ADM_EPARSE;
                }
                u->groups[i++] = yyjson_get_str(g);
            }
            u->ngroups = i;
        } else if (key_is(key, "extra")) {
            if (yyjson_is_null(val)) {
                continue;
            }
            if (!yyjson_is_obj(val)) {
                *problem = "request.userInfo.extra must be an object of string arrays";
                return ADM_EPARSE;
            }
            u->extra = val;
        }
    }
    return 0;
}

static yyjson_val *nullable(yyjson_val *v)
{
    return v == NULL || yyjson_is_null(v) ? NULL : v;
}

static int decode_request(adm_arena_t *a, yyjson_val *req_val, adm_review_request_t *r, const char **problem)
{
    yyjson_val *key, *val;
    yyjson_obj_iter it;
    yyjson_val *uid = NULL, *operation = NULL;
    yyjson_val *kind = NULL, *resource = NULL, *request_kind = NULL, *request_resource = NULL;
    yyjson_val *sub_resource = NULL, *request_sub_resource = NULL, *user_info = NULL;
    bool has_request_sub_resource = false;
    int rc;

    r->name = r->namespace_ = "";
    yyjson_obj_iter_init(req_val, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        const char *k = yyjson_get_str(key);

        val = yyjson_obj_iter_get_val(key);
        /* Dispatch on the key once; unknown members are ignored as Go's decoder does. */
        if (strcmp(k, "uid") == 0) {
            uid = val;
        } else if (strcmp(k, "kind") == 0) {
            kind = val;
        } else if (strcmp(k, "resource") == 0) {
            resource = val;
        } else if (strcmp(k, "subResource") == 0) {
            sub_resource = val;
        } else if (strcmp(k, "requestKind") == 0) {
            request_kind = val;
        } else if (strcmp(k, "requestResource") == 0) {
            request_resource = val;
        } else if (strcmp(k, "requestSubResource") == 0) {
            request_sub_resource = val;
            has_request_sub_resource = !yyjson_is_null(val);
        } else if (strcmp(k, "name") == 0) {
            if (as_string(val, &r->name) != 0) {
                *problem = "request.name must be a string";
                return ADM_EPARSE;
            }
        } else if (strcmp(k, "namespace") == 0) {
            if (as_string(val, &r->namespace_) != 0) {
                *problem = "request.namespace must be a string";
                return ADM_EPARSE;
            }
        } else if (strcmp(k, "operation") == 0) {
            operation = val;
        } else if (strcmp(k, "userInfo") == 0) {
            user_info = val;
        } else if (strcmp(k, "object") == 0) {
            r->object = nullable(val);
        } else if (strcmp(k, "oldObject") == 0) {
            r->old_object = nullable(val);
        } else if (strcmp(k, "options") == 0) {
            r->options = nullable(val);
        } else if (strcmp(k, "dryRun") == 0) {
            if (yyjson_is_null(val)) {
                r->dry_run = false;
            } else if (!yyjson_is_bool(val)) {
                *problem = "request.dryRun must be a boolean";
                return ADM_EPARSE;
            } else {
                r->dry_run = yyjson_get_bool(val);
            }
        }
    }

    if (uid != NULL && !yyjson_is_null(uid) && !yyjson_is_str(uid)) {
        *problem = "request.uid must be a string";
        return ADM_EPARSE;
    }
    if (uid == NULL || !yyjson_is_str(uid) || yyjson_get_len(uid) == 0) {
        *problem = "AdmissionReview request has no uid";
        return ADM_EPARSE;
    }
    r->uid = yyjson_get_str(uid);

    r->operation_name = "";
    if (operation == NULL || as_string(operation, &r->operation_name) != 0) {
        *problem = "AdmissionReview request.operation must be CREATE, UPDATE, DELETE or CONNECT";
        return ADM_EPARSE;
    }
    if (strcmp(r->operation_name, "CREATE") == 0) {
        r->operation = ADM_OP_CREATE;
    } else if (strcmp(r->operation_name, "UPDATE") == 0) {
        r->operation = ADM_OP_UPDATE;
    } else if (strcmp(r->operation_name, "DELETE") == 0) {
        r->operation = ADM_OP_DELETE;
    } else if (strcmp(r->operation_name, "CONNECT") == 0) {
        r->operation = ADM_OP_CONNECT;
    } else {
        *problem = "AdmissionReview request.operation must be CREATE, UPDATE, DELETE or CONNECT";
        return ADM_EPARSE;
    }

    rc = decode_gvk(kind, &r->kind, problem, kind_msgs);
    if (rc == 0) {
        rc = decode_gvr(resource, &r->resource, problem, resource_msgs);
    }
    if (rc == 0 && as_string(sub_resource, &r->sub_resource) != 0) {
        *problem = "request.subResource must be a string";
        rc = ADM_EPARSE;
    }
    if (rc != 0) {
        return rc;
    }
    /* requestKind/requestResource/requestSubResource default to the request's own (as when
       kube-apiserver did no conversion, and as older senders omit them). */
    if (request_kind != NULL && !yyjson_is_null(request_kind)) {
        rc = decode_gvk(request_kind, &r->request_kind, problem, request_kind_msgs);
    } else {
        r->request_kind = r->kind;
    }
    if (rc == 0 && request_resource != NULL && !yyjson_is_null(request_resource)) {
        rc = decode_gvr(request_resource, &r->request_resource, problem, request_resource_msgs);
    } else if (rc == 0) {
        r->request_resource = r->resource;
    }
    if (rc == 0 && has_request_sub_resource) {
        if (as_string(request_sub_resource, &r->request_sub_resource) != 0) {
            *problem = "request.requestSubResource must be a string";
            rc = ADM_EPARSE;
        }
    } else if (rc == 0) {
        r->request_sub_resource = r->sub_resource;
    }
    if (rc == 0) {
        rc = decode_user_info(a, user_info, &r->user_info, problem);
    }
    return rc;
}

int adm_review_decode(adm_arena_t *a, const char *body, size_t len, adm_review_request_t *r,
                      const char **problem)
{
    yyjson_alc alc;
    yyjson_read_err err;
    yyjson_val *root, *key, *val;
    yyjson_val *api_version = NULL, *kind = NULL, *request = NULL;
    yyjson_obj_iter it;
    const char *s;

    memset(r, 0, sizeof(*r));
    *problem = NULL;
    if (adm_json_too_deep(body, len, ADM_JSON_MAX_DEPTH)) {
        *problem = "request body nests deeper than 10000 levels";
        return ADM_EPARSE;
    }
    adm_json_alc_init(&alc, a);
    /* Not in situ: the body stays untouched (the parser reads it where it lies). */
    r->doc = yyjson_read_opts((char *)body, len, YYJSON_READ_NOFLAG, &alc, &err);
    if (r->doc == NULL) {
        char *msg;

        if (err.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) {
            return ADM_ENOMEM;
        }
        msg = adm_arena_alloc(a, 160);
        if (msg == NULL) {
            return ADM_ENOMEM;
        }
        snprintf(msg, 160, "request body is not valid JSON: %s at byte %zu", err.msg, err.pos);
        *problem = msg;
        return ADM_EPARSE;
    }
    root = yyjson_doc_get_root(r->doc);
    if (!yyjson_is_obj(root)) {
        *problem = "request body is not an AdmissionReview: not a JSON object";
        return ADM_EPARSE;
    }
    yyjson_obj_iter_init(root, &it);
    while ((key = yyjson_obj_iter_next(&it)) != NULL) {
        val = yyjson_obj_iter_get_val(key);
        if (key_is(key, "apiVersion")) {
            api_version = val;
        } else if (key_is(key, "kind")) {
            kind = val;
        } else if (key_is(key, "request")) {
            request = val;
        }
    }
    s = yyjson_get_str(api_version);
    if (s != NULL && strcmp(s, API_V1) == 0) {
        r->version = ADM_REVIEW_V1;
    } else if (s != NULL && strcmp(s, API_V1BETA1) == 0) {
        r->version = ADM_REVIEW_V1BETA1;
    } else {
        *problem = "request body is not an AdmissionReview: apiVersion must be admission.k8s.io/v1 or v1beta1";
        return ADM_EPARSE;
    }
    s = yyjson_get_str(kind);
    if (s == NULL || strcmp(s, "AdmissionReview") != 0) {
        *problem = "request body is not an AdmissionReview: kind must be AdmissionReview";
        return ADM_EPARSE;
    }
    if (request == NULL || yyjson_is_null(request)) {
        *problem = "AdmissionReview has no request";
        return ADM_EPARSE;
    }
    if (!yyjson_is_obj(request)) {
        *problem = "AdmissionReview request must be an object";
        return ADM_EPARSE;
    }
    return decode_request(a, request, r, problem);
}

/* ---- encoding ---- */

static void w_status(adm_jsonw_t *w, const adm_review_response_t *resp)
{
    ADM_JSONW_LIT(w, ",\"status\":{\"metadata\":{},\"status\":");
    if (resp->allowed) {
        ADM_JSONW_LIT(w, "\"Success\"");
    } else {
        ADM_JSONW_LIT(w, "\"Failure\"");
    }
    if (resp->message != NULL && resp->message[0] != '\0') {
        ADM_JSONW_LIT(w, ",\"message\":");
        adm_jsonw_string(w, resp->message, strlen(resp->message));
    }
    if (resp->reason != NULL && resp->reason[0] != '\0') {
        ADM_JSONW_LIT(w, ",\"reason\":");
        adm_jsonw_string(w, resp->reason, strlen(resp->reason));
    }
    if (resp->details != NULL) {
        ADM_JSONW_LIT(w, ",\"details\":");
        adm_jsonw_value(w, resp->details);
    }
    if (resp->code != 0) {
        ADM_JSONW_LIT(w, ",\"code\":");
        adm_jsonw_int(w, resp->code);
    }
    ADM_JSONW_LIT(w, "}");
}

int adm_review_encode(adm_arena_t *a, adm_review_version_t version, const char *uid,
                      const adm_review_response_t *resp, const char **out, size_t *out_len)
{
    adm_jsonw_t w;

    adm_jsonw_init(&w, a);
    ADM_JSONW_LIT(&w, "{\"apiVersion\":");
    if (version == ADM_REVIEW_V1BETA1) {
        ADM_JSONW_LIT(&w, "\"" API_V1BETA1 "\"");
    } else {
        ADM_JSONW_LIT(&w, "\"" API_V1 "\"");
    }
    ADM_JSONW_LIT(&w, ",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    adm_jsonw_string(&w, uid, strlen(uid));
    if (resp->allowed) {
        ADM_JSONW_LIT(&w, ",\"allowed\":true");
    } else {
        ADM_JSONW_LIT(&w, ",\"allowed\":false");
    }
    if (!resp->allowed || resp->code != 0) {
        w_status(&w, resp);
    }
    if (resp->patch_len > 0) {
        ADM_JSONW_LIT(&w, ",\"patch\":");
        adm_jsonw_base64(&w, resp->patch, resp->patch_len);
        ADM_JSONW_LIT(&w, ",\"patchType\":\"JSONPatch\"");
    }
    if (resp->nwarnings > 0) {
        ADM_JSONW_LIT(&w, ",\"warnings\":[");
        for (size_t i = 0; i < resp->nwarnings; i++) {
            if (i > 0) {
                ADM_JSONW_LIT(&w, ",");
            }
            adm_jsonw_string(&w, resp->warnings[i], strlen(resp->warnings[i]));
        }
        ADM_JSONW_LIT(&w, "]");
    }
    if (resp->naudit_annotations > 0) {
        ADM_JSONW_LIT(&w, ",\"auditAnnotations\":{");
        for (size_t i = 0; i < resp->naudit_annotations; i++) {
            if (i > 0) {
                ADM_JSONW_LIT(&w, ",");
            }
            adm_jsonw_string(&w, resp->audit_annotations[i].key, strlen(resp->audit_annotations[i].key));
            ADM_JSONW_LIT(&w, ":");
            adm_jsonw_string(&w, resp->audit_annotations[i].value, strlen(resp->audit_annotations[i].value));
        }
        ADM_JSONW_LIT(&w, "}");
    }
    ADM_JSONW_LIT(&w, "}}");
    if (w.failed) {
        return ADM_ENOMEM;
    }
    *out = w.data;
    *out_len = w.len;
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AdmissionReview codec: decodes admission.k8s.io/v1 and v1beta1 requests with yyjson into an
 * arena (review_decode.c), encodes the response in the same version with the request's uid
 * echoed, and encodes the request admitd sends to a downstream webhook (review_encode.c).
 *
 * Decoding does not copy the body: yyjson reads it where it lies and the document (with all
 * strings the request points to) lives in the caller's arena until the arena is reset.
 */
#ifndef ADM_REVIEW_H
#define ADM_REVIEW_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

#define ADM_REVIEW_API_V1 "admission.k8s.io/v1"
#define ADM_REVIEW_API_V1BETA1 "admission.k8s.io/v1beta1"

typedef enum adm_review_version_e {
    ADM_REVIEW_V1,      /* admission.k8s.io/v1 */
    ADM_REVIEW_V1BETA1, /* admission.k8s.io/v1beta1 */
} adm_review_version_t;

typedef enum adm_operation_e {
    ADM_OP_CREATE,
    ADM_OP_UPDATE,
    ADM_OP_DELETE,
    ADM_OP_CONNECT,
} adm_operation_t;

/* Strings below are NUL-terminated, owned by the arena; "" when the field is absent. */
typedef struct adm_gvk_s {
    const char *group;
    const char *version;
    const char *kind;
} adm_gvk_t;

typedef struct adm_gvr_s {
    const char *group;
    const char *version;
    const char *resource;
} adm_gvr_t;

typedef struct adm_user_info_s {
    const char *username;
    const char *uid;
    const char **groups; /* ngroups entries */
    size_t ngroups;
    yyjson_val *extra; /* object of string arrays, or NULL */
} adm_user_info_t;

typedef struct adm_review_request_s {
    adm_review_version_t version;
    yyjson_doc *doc; /* the whole parsed body (arena) */
    const char *uid; /* never empty after a successful decode */
    adm_gvk_t kind;
    adm_gvr_t resource;
    const char *sub_resource;
    adm_gvk_t request_kind;           /* requestKind; equals kind when the request omits it */
    adm_gvr_t request_resource;       /* requestResource; equals resource when omitted */
    const char *request_sub_resource; /* requestSubResource; equals sub_resource when omitted */
    const char *name;
    const char *namespace_;
    adm_operation_t operation;
    const char *operation_name; /* as sent: "CREATE", ... */
    adm_user_info_t user_info;
    yyjson_val *object;     /* NULL when absent or JSON null */
    yyjson_val *old_object; /* NULL when absent or JSON null */
    yyjson_val *options;    /* NULL when absent or JSON null */
    bool dry_run;
} adm_review_request_t;

typedef struct adm_review_annotation_s {
    const char *key;
    const char *value;
} adm_review_annotation_t;

typedef struct adm_review_response_s {
    bool allowed;
    /* status: written when allowed is false or code is non-zero */
    int32_t code;         /* HTTP-style code, e.g. 403 */
    const char *reason;   /* "Forbidden", "Invalid", ... or NULL */
    const char *message;  /* or NULL */
    yyjson_val *details;  /* Status.details as JSON, or NULL */
    const uint8_t *patch; /* raw JSON Patch text; encoded base64 with patchType JSONPatch */
    size_t patch_len;     /* 0: no patch */
    const char *const *warnings;
    size_t nwarnings;
    const adm_review_annotation_t *audit_annotations;
    size_t naudit_annotations;
} adm_review_response_t;

/**
 * Decodes an AdmissionReview request body of len bytes. body must stay valid as long as the
 * arena's allocations (the document may point into it). Returns 0, or ADM_EPARSE with *problem set
 * to a static or arena string that says what is wrong, fit for an HTTP 400 body:
 *   "request body is not valid JSON: <yyjson message> at byte N"
 *   "request body nests deeper than 10000 levels"
 *   "request body is not an AdmissionReview: apiVersion must be admission.k8s.io/v1 or v1beta1"
 *   "request body is not an AdmissionReview: kind must be AdmissionReview"
 *   "AdmissionReview has no request"
 *   "AdmissionReview request has no uid"
 *   "AdmissionReview request.operation must be CREATE, UPDATE, DELETE or CONNECT"
 * and for wrong JSON types of known fields ("request.name must be a string"), or a string field
 * with an escaped NUL, which C strings cannot carry ("request.name must not contain a NUL
 * character").
 * Returns ADM_ENOMEM when the arena is exhausted.
 */
int adm_review_decode(adm_arena_t *a, const char *body, size_t len, adm_review_request_t *req,
                      const char **problem);

/**
 * Encodes {"apiVersion":..., "kind":"AdmissionReview", "response":{...}} for version with uid
 * echoed. The bytes live in the arena. Returns 0 or ADM_ENOMEM (or ADM_EINVAL when resp->details
 * is not a value yyjson can write).
 */
int adm_review_encode(adm_arena_t *a, adm_review_version_t version, const char *uid,
                      const adm_review_response_t *resp, const char **out, size_t *out_len);

/*
 * The uid of a request sent downstream before it is stamped: adm_review_encode_request writes it,
 * and each call overwrites its ADM_REVIEW_UID_LEN bytes with its own uid (a fresh UUID per call,
 * as kube-apiserver sends), so one encoding serves every webhook of a request.
 */
#define ADM_REVIEW_UID_PLACEHOLDER "00000000-0000-4000-8000-000000000000"
#define ADM_REVIEW_UID_LEN 36

/**
 * Encodes the AdmissionReview sent to a downstream webhook, in version:
 * {"kind":"AdmissionReview","apiVersion":...,"request":{...}} with the members of req's request
 * as received, except uid (ADM_REVIEW_UID_PLACEHOLDER, starting *uid_off bytes into the text),
 * object (object, the object as mutated so far; JSON null when NULL) and dryRun (always written).
 * The text is arena memory, NUL-terminated; *out_len does not count the NUL. Returns 0, or
 * ADM_ENOMEM when the arena is exhausted or the request has more members than kube-apiserver sends
 * (repeated or unknown ones).
 */
int adm_review_encode_request(adm_arena_t *a, const adm_review_request_t *req, yyjson_val *object,
                              adm_review_version_t version, const char **out, size_t *out_len,
                              size_t *uid_off);

/** "admission.k8s.io/v1" or "admission.k8s.io/v1beta1". */
const char *adm_review_api_version(adm_review_version_t version);

#endif

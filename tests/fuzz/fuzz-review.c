/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the AdmissionReview decoder and the response encoder. Arbitrary bytes are
 * decoded in a fresh arena. A refusal must come with a message; a success must leave every string
 * field non-NULL, and is answered twice (a plain allow, then a denial that carries the request's
 * own strings, object and bytes in every response field); both answers must be strict JSON that
 * echoes the uid. The depth guard is also compared with a byte-at-a-time reference at a small
 * limit taken from the input, so its block path meets both outcomes. What decodes is also encoded
 * as the request a downstream webhook would get, which must be strict JSON with the uid
 * placeholder where the encoder says (or refused as too many members).
 */
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_answer(adm_arena_t *a, const adm_review_request_t *r, const adm_review_response_t *resp)
{
    const char *out;
    size_t len;
    yyjson_doc *doc;
    yyjson_val *uid;

    if (adm_review_encode(a, r->version, r->uid, resp, &out, &len) != 0) {
        abort();
    }
    doc = yyjson_read(out, len, YYJSON_READ_NOFLAG);
    if (doc == NULL) {
        abort();
    }
    uid = yyjson_ptr_get(yyjson_doc_get_root(doc), "/response/uid");
    if (!yyjson_equals_str(uid, r->uid)) {
        abort();
    }
    yyjson_doc_free(doc);
}

static void check_strings(const adm_review_request_t *r)
{
    const char *const all[] = {
        r->uid,
        r->kind.group,
        r->kind.version,
        r->kind.kind,
        r->resource.group,
        r->resource.version,
        r->resource.resource,
        r->sub_resource,
        r->request_kind.group,
        r->request_kind.version,
        r->request_kind.kind,
        r->request_resource.group,
        r->request_resource.version,
        r->request_resource.resource,
        r->request_sub_resource,
        r->name,
        r->namespace_,
        r->operation_name,
        r->user_info.username,
        r->user_info.uid,
    };

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (all[i] == NULL) {
            abort();
        }
    }
    for (size_t i = 0; i < r->user_info.ngroups; i++) {
        if (r->user_info.groups[i] == NULL) {
            abort();
        }
    }
    if (r->uid[0] == '\0') {
        abort();
    }
}

static void check_request(adm_arena_t *a, const adm_review_request_t *r)
{
    const char *out;
    size_t len, uid_off;
    yyjson_doc *doc;
    int rc = adm_review_encode_request(a, r, r->object, r->version, &out, &len, &uid_off);

    if (rc == ADM_ENOMEM) {
        return; /* more members than kube-apiserver sends */
    }
    if (rc != 0 || uid_off + ADM_REVIEW_UID_LEN > len ||
        memcmp(out + uid_off, ADM_REVIEW_UID_PLACEHOLDER, ADM_REVIEW_UID_LEN) != 0) {
        abort();
    }
    doc = yyjson_read(out, len, YYJSON_READ_NOFLAG);
    if (doc == NULL) {
        abort();
    }
    yyjson_doc_free(doc);
}

/* The depth guard's definition, one byte at a time. */
static bool reference_too_deep(const uint8_t *text, size_t len, size_t max)
{
    size_t depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        uint8_t c = text[i];

        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            depth++;
            if (depth > max) {
                return true;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_review_request_t r;
    const char *problem = NULL;
    int rc;

    if (a == NULL) {
        return 0;
    }
    if (size > 0) {
        size_t max = data[0] % 64;
        bool deep = adm_json_too_deep((const char *)data, size, max, NULL);

        if (deep != reference_too_deep(data, size, max)) {
            abort();
        }
    }
    rc = adm_review_decode(a, (const char *)data, size, &r, &problem);
    if (rc == 0) {
        const adm_review_annotation_t notes[] = {
            {r.name, r.namespace_},
            {r.user_info.username, r.user_info.uid},
        };
        adm_review_response_t allow = {.allowed = true};
        adm_review_response_t deny = {
            .allowed = false,
            .code = 403,
            .reason = r.name,
            .message = r.user_info.username,
            .details = r.object != NULL ? r.object : r.user_info.extra,
            .patch = data,
            .patch_len = size,
            .warnings = (const char *const *)r.user_info.groups,
            .nwarnings = r.user_info.ngroups,
            .audit_annotations = notes,
            .naudit_annotations = 2,
        };

        check_strings(&r);
        check_answer(a, &r, &allow);
        check_answer(a, &r, &deny);
        check_request(a, &r);
    } else if (rc != ADM_EPARSE || problem == NULL || problem[0] == '\0') {
        abort();
    }
    adm_arena_destroy(a);
    return 0;
}

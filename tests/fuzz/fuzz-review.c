/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the AdmissionReview decoder and the response encoder: arbitrary bytes are
 * decoded in a fresh arena; whatever decodes is answered (allowed, then denied with a message and
 * a patch), and the answer must be valid JSON carrying the same uid.
 */
#include "adm/arena.h"
#include "adm/error.h"
#include "adm/review.h"

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

    if (adm_review_encode(a, r->version, r->uid, resp, &out, &len) != 0) {
        abort();
    }
    doc = yyjson_read(out, len, 0);
    if (doc == NULL || !yyjson_equals_str(yyjson_ptr_get(yyjson_doc_get_root(doc), "/response/uid"), r->uid)) {
        abort();
    }
    yyjson_doc_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_review_request_t r;
    const char *problem = NULL;
    int rc = adm_review_decode(a, (const char *)data, size, &r, &problem);

    if (rc == 0) {
        const char *warnings[] = {r.name, r.namespace_};
        adm_review_response_t allow = {.allowed = true};
        adm_review_response_t deny = {.allowed = false, .code = 403, .reason = "Forbidden",
                                      .message = r.user_info.username, .patch = data,
                                      .patch_len = size < 64 ? size : 64, .warnings = warnings, .nwarnings = 2};

        check_answer(a, &r, &allow);
        check_answer(a, &r, &deny);
    } else if (rc == ADM_EPARSE && problem == NULL) {
        abort();
    }
    adm_arena_destroy(a);
    return 0;
}

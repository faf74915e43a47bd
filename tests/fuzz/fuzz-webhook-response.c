/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for reading a downstream webhook's answer (webhook/call.c): any body, as a
 * mutating or validating webhook, v1 or v1beta1, ends as allowed, denied, a call failure or an
 * error with a message; a patch it carries is applied to a pod as the mutating plugin would.
 * Never a crash, a leak or undefined behaviour.
 */
#include "../../src/webhook/webhooks_internal.h"
#include "adm/admission/jsonpatch.h"
#include "adm/base/arena.h"
#include "adm/base/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a;
    adm_webhook_t wh = {0};
    adm_call_result_t res = {0};
    adm_hook_result_t r;
    uint8_t mode;

    if (size < 1) {
        return 0;
    }
    mode = data[0];
    a = adm_arena_create(4096);
    if (a == NULL) {
        abort();
    }
    wh.name = "fuzz.example.com";
    wh.type = (mode & 1) != 0 ? ADM_WEBHOOK_MUTATING : ADM_WEBHOOK_VALIDATING;
    res.error = ADM_CALL_OK;
    res.status = (mode & 4) != 0 ? 500 : 200;
    res.content_type = (mode & 8) != 0 ? "text/plain" : "application/json";
    res.body = data + 1;
    res.body_len = size - 1;
    adm__hook_interpret(a, &wh, (mode & 2) != 0 ? ADM_REVIEW_V1BETA1 : ADM_REVIEW_V1,
                        "4a9c2e8f-6b1d-4f3a-8e7c-2d5b9a1f0c36", &res, &r);
    if ((r.outcome == ADM_HOOK_FAILED && r.reason == NULL) ||
        ((r.outcome == ADM_HOOK_DENIED || r.outcome == ADM_HOOK_ERROR) && r.status.message == NULL)) {
        abort();
    }
    if (r.outcome == ADM_HOOK_ALLOWED && r.patch != NULL) {
        yyjson_alc alc;
        yyjson_doc *doc;
        yyjson_mut_doc *m;
        const char *error = NULL;

        adm_json_alc_init(&alc, a);
        doc = yyjson_read_opts((char *)pod, strlen(pod), 0, &alc, NULL);
        m = yyjson_mut_doc_new(&alc);
        if (doc == NULL || m == NULL) {
            abort();
        }
        yyjson_mut_doc_set_root(m, adm_json_mut_share(m, yyjson_doc_get_root(doc)));
        (void)adm_jsonpatch_apply(m, r.patch, ADM_JSONPATCH_KUBE, a, &error);
    }
    adm_arena_destroy(a);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the admission chain: arbitrary AdmissionReview bodies through every
 * implemented plugin (mutating and validating phases). Plugins meet objects of any shape; each
 * answer must encode, and a patch must take the received object to the object the plugins built.
 */
#include "adm/admission/chain.h"
#include "adm/admission/jsonpatch.h"
#include "adm/admission/plugin.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/log.h"
#include "adm/base/options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static adm_chain_t *chain;
static adm_options_t opts;

static void build_chain(void)
{
    size_t count;
    const adm_plugin_info_t *all = adm_plugin_registry(&count);
    char err[2048];
    size_t used = 0;

    adm_options_defaults(&opts);
    /* Every implemented plugin but AlwaysDeny, which would hide the others, EventRateLimit, which
       needs its configuration, and NamespaceAutoProvision, which refuses to start without an API
       connection. */
    for (size_t i = 0; i < count; i++) {
        if (all[i].plugin != NULL && strcmp(all[i].name, "AlwaysDeny") != 0 &&
            strcmp(all[i].name, "EventRateLimit") != 0 &&
            strcmp(all[i].name, "NamespaceAutoProvision") != 0) {
            used += (size_t)snprintf(opts.enable_plugins + used, sizeof(opts.enable_plugins) - used, "%s%s",
                                     used > 0 ? "," : "", all[i].name);
        }
    }
    adm_log_configure(ADM_LOG_TEXT, 0);
    if (adm_chain_create(&opts, &chain, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz-chain: %s\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(16384);
    adm_review_request_t req;
    adm_review_response_t resp;
    const char *problem;
    const char *out;
    size_t out_len;

    if (chain == NULL) {
        build_chain();
    }
    if (a == NULL) {
        abort();
    }
    if (adm_review_decode(a, (const char *)data, size, &req, &problem) == 0) {
        int rc = adm_chain_run(chain, ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING, &req, a, &resp);

        if (rc != 0 && rc != ADM_ENOMEM) {
            abort();
        }
        if (!resp.allowed && (resp.message == NULL || resp.code < 400)) {
            abort();
        }
        if (resp.patch_len > 0) {
            /* The patch must apply to what was received. */
            yyjson_alc alc;
            yyjson_doc *patch;
            yyjson_mut_doc *doc;
            const char *error;

            adm_json_alc_init(&alc, a);
            patch = yyjson_read_opts((char *)resp.patch, resp.patch_len, 0, &alc, NULL);
            doc = yyjson_mut_doc_new(&alc);
            if (patch == NULL || doc == NULL || req.object == NULL) {
                abort();
            }
            yyjson_mut_doc_set_root(doc, yyjson_val_mut_copy(doc, req.object));
            if (adm_jsonpatch_apply(doc, yyjson_doc_get_root(patch), ADM_JSONPATCH_STRICT, a, &error) != 0) {
                abort();
            }
        }
        if (adm_review_encode(a, req.version, req.uid, &resp, &out, &out_len) != 0) {
            abort();
        }
    }
    adm_arena_destroy(a);
    return 0;
}

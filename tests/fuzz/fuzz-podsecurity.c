/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the Pod Security engine: arbitrary JSON as a pod (metadata and spec of any
 * shape) evaluated at both levels and every version, as namespace labels, and as a
 * PodSecurityConfiguration. Nothing may crash, leak, or produce a failure without a reason.
 */
#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/podsecurity/evaluate.h"
#include "adm/podsecurity/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(16384);
    yyjson_read_err err;
    yyjson_doc *doc = adm_json_read(a, (const char *)data, size, &err);
    yyjson_val *root = yyjson_doc_get_root(doc);
    adm_psa_policy_t defaults = {
        {ADM_PSA_PRIVILEGED, {true, 0}}, {ADM_PSA_PRIVILEGED, {true, 0}}, {ADM_PSA_PRIVILEGED, {true, 0}}};
    adm_psa_config_t cfg;
    char msg[512];
    const char *errs;

    if (root != NULL) {
        for (int level = ADM_PSA_BASELINE; level <= ADM_PSA_RESTRICTED; level++) {
            for (int minor = 0; minor <= ADM_PSA_MAX_MINOR + 1; minor++) {
                adm_psa_lv_t lv = {(adm_psa_level_t)level, {minor > ADM_PSA_MAX_MINOR, minor}};
                adm_psa_result_t r;

                adm_psa_evaluate(a, &lv, yyjson_obj_get(root, "metadata"), yyjson_obj_get(root, "spec"), &r);
                for (size_t i = 0; i < r.nfailed; i++) {
                    if (r.reasons[i] == NULL || r.reasons[i][0] == '\0' || r.details[i] == NULL) {
                        abort();
                    }
                }
                (void)adm_psa_result_detail(a, &r);
            }
        }
        (void)adm_psa_policy_resolve(a, root, &defaults, &errs);
        if (adm_psa_config_decode(root, &cfg, msg, sizeof(msg)) == 0) {
            adm_psa_config_free(&cfg);
        }
    }
    adm_arena_destroy(a);
    return 0;
}

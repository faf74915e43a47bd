/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for --webhook-config and --cluster-state files and for matching: arbitrary
 * bytes load as a webhook configuration (or fail with one line), load as cluster state (or fail),
 * and every webhook that loads is matched against a pod request with that state. Never a crash, a
 * leak, a hang or undefined behaviour.
 */
#include "adm/admission/review.h"
#include "adm/cluster/cluster_state.h"
#include "adm/webhook/config.h"
#include "adm/webhook/match.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":"
    "\"v1\","
    "\"resource\":\"pods\"},\"name\":\"p\",\"namespace\":\"prod\",\"operation\":\"CREATE\",\"userInfo\":{},"
    "\"object\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\",\"t\":\"x\"}}}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    const char *paths[1];
    adm_webhook_set_t *set = NULL;
    adm_cluster_state_t *cs = NULL;
    adm_arena_t *a = adm_arena_create(4096);
    adm_review_request_t req;
    const char *problem;
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/fuzz-webhook-config.%d.yaml", (int)getpid());
    f = fopen(path, "wb");
    if (f == NULL || a == NULL) {
        abort();
    }
    fwrite(data, 1, size, f);
    fclose(f);
    paths[0] = path;
    if (adm_review_decode(a, review, strlen(review), &req, &problem) != 0) {
        abort();
    }
    (void)adm_cluster_state_load(paths, 1, &cs, err, sizeof(err));
    if (adm_webhook_set_load(paths, 1, (size & 1) != 0, &set, err, sizeof(err)) == 0) {
        adm_cluster_state_t *fallback = NULL;
        adm_match_input_t in = {0};

        if (cs == NULL && adm_cluster_state_load(NULL, 0, &fallback, err, sizeof(err)) != 0) {
            abort();
        }
        in.req = &req;
        in.object = req.object;
        in.cluster = cs != NULL ? cs : fallback;
        for (int t = 0; t < 2; t++) {
            const adm_webhook_t *hooks = t == 0 ? set->mutating : set->validating;
            size_t n = t == 0 ? set->nmutating : set->nvalidating;

            for (size_t i = 0; i < n; i++) {
                adm_status_t st = {0};
                const char *reason = NULL;

                (void)adm_webhook_match(&hooks[i], &in, a, &st, &reason);
            }
        }
        adm_cluster_state_free(fallback);
        adm_webhook_set_free(set);
    } else if (err[0] == '\0' || strchr(err, '\n') != NULL) {
        abort(); /* every refusal is one line */
    }
    adm_cluster_state_free(cs);
    adm_arena_destroy(a);
    unlink(path);
    return 0;
}

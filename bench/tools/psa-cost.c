/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-process cost of the Pod Security evaluation, without sockets, TLS or the chain: for one
 * AdmissionReview file, the thread CPU time per request of decoding the review alone and of
 * evaluating its pod at restricted:latest (every check), medians of several runs. CPU time, not
 * wall time, so a shared machine's other load does not count.
 *
 *   psa-cost REVIEW.json [ITERATIONS]
 */
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/fs.h"
#include "adm/podsecurity/evaluate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* evaluate 0: decode only; 1: decode and evaluate restricted:latest. Microseconds per request. */
static double run(adm_arena_t *a, const char *body, size_t len, int evaluate, int n, size_t *failed)
{
    adm_psa_lv_t lv = {ADM_PSA_RESTRICTED, {true, 0}};
    double start = cpu_us();

    for (int i = 0; i < n; i++) {
        adm_review_request_t req;
        const char *problem;
        adm_psa_result_t r;

        adm_arena_reset(a);
        if (adm_review_decode(a, body, len, &req, &problem) != 0) {
            fprintf(stderr, "psa-cost: the review does not decode: %s\n", problem);
            exit(1);
        }
        if (evaluate) {
            adm_psa_evaluate(a, &lv, yyjson_obj_get(req.object, "metadata"),
                             yyjson_obj_get(req.object, "spec"), &r);
            *failed = r.nfailed;
        }
    }
    return (cpu_us() - start) / n;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 20000;
    adm_arena_t *a = adm_arena_create(1 << 16);
    adm_arena_t *file = adm_arena_create(1 << 16);
    double decode[7], full[7];
    size_t failed = 0;
    char *body;
    size_t len;
    char err[256];

    if (argc < 2 || n <= 0) {
        fprintf(stderr, "usage: psa-cost REVIEW.json [ITERATIONS]\n");
        return 2;
    }
    if (adm_fs_read(file, argv[1], 1 << 24, &body, &len, err, sizeof(err)) != 0) {
        fprintf(stderr, "psa-cost: %s\n", err);
        return 1;
    }
    for (int k = 0; k < 7; k++) {
        decode[k] = run(a, body, len, 0, n, &failed);
        full[k] = run(a, body, len, 1, n, &failed);
    }
    qsort(decode, 7, sizeof(double), cmp_double);
    qsort(full, 7, sizeof(double), cmp_double);
    printf("psa-cost %s: decode %.2f us, decode + restricted:latest %.2f us (evaluation %.2f us, %zu checks "
           "failing), medians of 7 x %d, thread CPU time\n",
           argv[1], decode[3], full[3], full[3] - decode[3], failed, n);
    adm_arena_destroy(file);
    adm_arena_destroy(a);
    return 0;
}

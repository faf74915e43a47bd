/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-process cost of the admission chain, without sockets or TLS: for one AdmissionReview file,
 * the time per request of decode alone, decode + validating phase + encode (/validate), and
 * decode + both phases + encode (/admit), with the default plugin set or the plugins named on the
 * command line, over the built-in cluster state or a --cluster-state file (what LimitRanger and
 * the other stateful plugins read), minus a disable list ("-" for none). Medians of several runs
 * are printed; it pins nothing itself (use taskset).
 *
 * With MODE (decode, validate or admit) it runs only that path, once, ITERATIONS times: the form
 * for counting instructions per request, whatever the machine's load, with
 *   valgrind --tool=callgrind --toggle-collect='run_requests*' chain-cost REVIEW - 2000 STATE - admit
 * (the count callgrind prints, divided by ITERATIONS).
 *
 *   chain-cost REVIEW.json [ENABLE_LIST] [ITERATIONS] [CLUSTER_STATE] [DISABLE_LIST] [MODE]
 */
#include "adm/admission/chain.h"
#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/log.h"
#include "adm/base/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static double now_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/*
 * What one read of the chain's clock costs (uv_hrtime: clock_gettime(CLOCK_MONOTONIC)), in ns. The
 * chain reads it once a hook to time each plugin; on a KVM guest (kvm-clock) that read is far
 * dearer than its few instructions, so instruction counts miss it.
 */
static double clock_read_ns(int reads)
{
    uint64_t sum = 0;
    double start = now_us();

    for (int i = 0; i < reads; i++) {
        sum += uv_hrtime();
    }
    if (sum == 0) {
        printf("(the clock stood still)\n");
    }
    return (now_us() - start) * 1000.0 / reads;
}

/* mode 0: decode; 1: /validate; 2: /admit. Returns microseconds per request. */
/* noinline: callgrind --toggle-collect needs the function to exist */
__attribute__((noinline)) static double run_requests(adm_chain_t *chain, adm_arena_t *a, const char *body,
                                                     size_t len, int mode, int n, size_t *patch_len)
{
    double start = now_us();

    for (int i = 0; i < n; i++) {
        adm_review_request_t req;
        adm_review_response_t resp;
        const char *problem, *out;
        size_t out_len;

        adm_arena_reset(a);
        if (adm_review_decode(a, body, len, &req, &problem) != 0) {
            fprintf(stderr, "chain-cost: the review does not decode: %s\n", problem);
            exit(1);
        }
        if (mode == 0) {
            continue;
        }
        adm_chain_run(chain, mode == 1 ? ADM_PHASE_VALIDATING : ADM_PHASE_MUTATING | ADM_PHASE_VALIDATING,
                      &req, a, &resp);
        if (adm_review_encode(a, req.version, req.uid, &resp, &out, &out_len) != 0) {
            exit(1);
        }
        *patch_len = resp.patch_len;
    }
    return (now_us() - start) / n;
}

int main(int argc, char **argv)
{
    static char body[4 << 20];
    adm_options_t opts;
    adm_chain_t *chain;
    adm_arena_t *a = adm_arena_create(256 * 1024);
    char err[2048];
    int iterations = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 100000;
    double t[3][7];
    size_t len, patch_len = 0;
    FILE *f;

    f = argc >= 2 ? fopen(argv[1], "rb") : NULL;
    if (f == NULL) {
        fprintf(stderr, "usage: chain-cost REVIEW.json [ENABLE_LIST] [ITERATIONS] [CLUSTER_STATE] "
                        "[DISABLE_LIST] [decode|validate|admit|clock]\n");
        return 2;
    }
    len = fread(body, 1, sizeof(body), f);
    fclose(f);
    adm_log_configure(ADM_LOG_TEXT, 0);
    adm_options_defaults(&opts);
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        snprintf(opts.enable_plugins, sizeof(opts.enable_plugins), "%s", argv[2]);
    }
    if (argc > 4 && strcmp(argv[4], "-") != 0) {
        opts.cluster_states[0] = argv[4];
        opts.ncluster_states = 1;
    }
    if (argc > 5 && strcmp(argv[5], "-") != 0) {
        snprintf(opts.disable_plugins, sizeof(opts.disable_plugins), "%s", argv[5]);
    }
    if (a == NULL || adm_chain_create(&opts, &chain, err, sizeof(err)) != 0) {
        fprintf(stderr, "chain-cost: %s\n", err);
        return 2;
    }
    if (argc > 6 && strcmp(argv[6], "clock") == 0) {
        double ns[7];

        for (int r = 0; r < 7; r++) {
            ns[r] = clock_read_ns(iterations);
        }
        qsort(ns, 7, sizeof(double), cmp_double);
        printf("clock read (uv_hrtime, once a hook): %.1f ns (median of 7 runs of %d)\n", ns[3], iterations);
        adm_chain_destroy(chain);
        adm_arena_destroy(a);
        return 0;
    }
    if (argc > 6) {
        static const char *const modes[] = {"decode", "validate", "admit"};

        for (int mode = 0; mode < 3; mode++) {
            if (strcmp(argv[6], modes[mode]) == 0) {
                double us = run_requests(chain, a, body, len, mode, iterations, &patch_len);

                printf("%s: %d requests, %.2f us each (patch %zu B)\n", modes[mode], iterations, us,
                       patch_len);
                adm_chain_destroy(chain);
                adm_arena_destroy(a);
                return 0;
            }
        }
        fprintf(stderr, "chain-cost: MODE is decode, validate, admit or clock\n");
        return 2;
    }
    for (int r = 0; r < 7; r++) {
        for (int mode = 0; mode < 3; mode++) {
            t[mode][r] = run_requests(chain, a, body, len, mode, iterations, &patch_len);
        }
    }
    for (int mode = 0; mode < 3; mode++) {
        qsort(t[mode], 7, sizeof(double), cmp_double);
    }
    printf("per request (median of 7 runs of %d): decode %.2f us, /validate %.2f us, /admit %.2f us "
           "(patch %zu B); chain cost in /admit: %.2f us\n",
           iterations, t[0][3], t[1][3], t[2][3], patch_len, t[2][3] - t[0][3]);
    adm_chain_destroy(chain);
    adm_arena_destroy(a);
    return 0;
}

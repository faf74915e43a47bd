/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What giving memory pages back costs on this machine, and what touching them again costs: the
 * price of an idle TLS connection's trim (src/net/tls_idle.c gives its record buffers' pages back
 * with madvise(MADV_DONTNEED); the next records fault them in again, zeroed). On a virtual machine
 * both can be far dearer than on bare metal (bench/RESULTS.md). Prints, for buffers of 1 to 16
 * pages, the madvise call per buffer and per page, a fault per page touched again, a touch of a
 * page that is in, and an empty madvise (MADV_NORMAL: the price of a system call itself).
 *
 *   page-cost [ITERATIONS=2000]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (iterations <= 0) {
        fprintf(stderr, "usage: page-cost [ITERATIONS]\n");
        return 2;
    }
    printf("pages  madvise_us  madvise_us_per_page  fault_us_per_page  touch_ns_per_page  syscall_us\n");
    for (size_t pages = 1; pages <= 16; pages *= 2) {
        volatile unsigned char *p = aligned_alloc(page, pages * page);
        double give = 0, fault = 0, touch = 0, syscall = 0;

        if (p == NULL) {
            return 1;
        }
        memset((void *)p, 1, pages * page);
        for (long i = 0; i < iterations; i++) {
            double t0 = now_ns(), t1, t2, t3, t4;

            madvise((void *)p, pages * page, MADV_DONTNEED);
            t1 = now_ns();
            for (size_t k = 0; k < pages; k++) {
                p[k * page] = 1; /* faults the zeroed page in */
            }
            t2 = now_ns();
            for (size_t k = 0; k < pages; k++) {
                p[k * page] = 2; /* in already */
            }
            t3 = now_ns();
            madvise((void *)p, pages * page, MADV_NORMAL);
            t4 = now_ns();
            give += t1 - t0;
            fault += t2 - t1;
            touch += t3 - t2;
            syscall += t4 - t3;
        }
        printf("%5zu  %10.2f  %19.2f  %17.2f  %17.1f  %10.2f\n", pages, give / (double)iterations / 1e3,
               give / (double)iterations / (double)pages / 1e3,
               fault / (double)iterations / (double)pages / 1e3, touch / (double)iterations / (double)pages,
               syscall / (double)iterations / 1e3);
        free((void *)p);
    }
    return 0;
}

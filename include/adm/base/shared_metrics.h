/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The memory the workers of `--workers N` (INTERFACE D12) count their metrics in: one anonymous
 * shared mapping made before the first fork, so it sits at the same address in every process and a
 * pointer into it means the same thing in all of them. It holds one slot per worker and a common
 * part. A worker writes only its own slot, with plain increments (no cross-worker atomics on the
 * hot path); a scrape reads every slot and sums them. A worker that dies and is restarted takes
 * the same slot back, so its counters go on from where they were and never go backwards.
 *
 * Each metrics module keeps its storage in a "part" of the slot (adm_shm_part); the common part
 * holds what every worker must agree on, the interned plugin and webhook names (admission_metrics.c).
 * Without adm_shm_create (one process, the default) nothing here is used and every module keeps its
 * own process memory as before.
 *
 * A slot is reserved at ADM_SHM_SLOT_BYTES of address space, not of memory: pages are taken when
 * first written. Allocation is a bump pointer; what runs out is a lost observation, never a
 * failed request.
 */
#ifndef ADM_SHARED_METRICS_H
#define ADM_SHARED_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#define ADM_SHM_SLOT_BYTES ((size_t)32 << 20)
#define ADM_SHM_COMMON_BYTES ((size_t)1 << 20)

typedef enum adm_shm_part_e {
    ADM_SHM_SERVER,    /* adm_metrics_t of the server core (server/metrics.h) */
    ADM_SHM_ADMISSION, /* the admission registry (admission_metrics.c) */
    ADM_SHM_PSA,       /* PodSecurity's counters (pod_security_metrics.c) */
    ADM_SHM_PARTS,
} adm_shm_part_t;

/** Maps the memory for `workers` slots (before any fork). Returns 0 or a negative errno. */
int adm_shm_create(unsigned workers);

/** The number of slots; 0 when the memory is not shared (one process). */
unsigned adm_shm_workers(void);

/** This process's slot (the worker index, set by adm_shm_select), or -1 (the parent, or not shared). */
int adm_shm_self(void);

/** In a worker, right after the fork: from now on this process writes slot `worker`. */
void adm_shm_select(unsigned worker);

/**
 * A part of slot `worker`, `size` zeroed bytes the first time. This process's own slot allocates
 * the part when it has none yet; another worker's slot answers NULL until that worker made it.
 * Returns NULL when the slot is full.
 */
void *adm_shm_part(unsigned worker, adm_shm_part_t part, size_t size);

/** `size` zeroed bytes of this process's own slot (NULL when full or when it has no slot). */
void *adm_shm_alloc(size_t size);

/** The common part: `size` zeroed bytes, the same for every process (made the first time). */
void *adm_shm_common(size_t size);

/** `size` bytes of the common part, for what adm_shm_lock serialises. NULL when full. */
void *adm_shm_common_alloc(size_t size);

/**
 * The lock that serialises changes to the common part across processes: a robust process-shared
 * mutex, so a worker killed while it held it does not block the others.
 */
void adm_shm_lock(void);
void adm_shm_unlock(void);

#endif

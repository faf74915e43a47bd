/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The workers' shared metrics memory (shared_metrics.h): one MAP_SHARED anonymous mapping, a
 * common header with its lock and bump area, then one slot per worker with its own bump area and
 * its parts. Pointers are published with release stores and read with acquire loads, so a scrape
 * that reads another worker's slot sees a part or a name only once its bytes are in place.
 */
#include "adm/base/shared_metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#define ALIGN 64 /* a cache line: parts of one slot never share one with another slot's */

typedef struct common_s {
    pthread_mutex_t lock;
    size_t used; /* bytes of the common area given out, under the lock */
    void *root;  /* adm_shm_common's block */
} common_t;

typedef struct slot_s {
    size_t used; /* bytes of this slot given out; only its worker writes it */
    void *parts[ADM_SHM_PARTS];
} slot_t;

static struct {
    char *base; /* NULL: not shared */
    unsigned workers;
    int self;
} shm = {NULL, 0, -1};

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static common_t *common(void)
{
    return (common_t *)shm.base;
}

static slot_t *slot(unsigned worker)
{
    return (slot_t *)(shm.base + ADM_SHM_COMMON_BYTES + (size_t)worker * ADM_SHM_SLOT_BYTES);
}

/* The next `size` bytes of an area of `cap` bytes starting at `area` whose first `header` bytes
   are its bookkeeping; the mapping is zero-filled and nothing is ever given back. */
static void *bump(char *area, size_t *used, size_t header, size_t cap, size_t size)
{
    size_t at = *used < round_up(header) ? round_up(header) : *used;

    if (size > cap || at > cap - round_up(size)) {
        return NULL;
    }
    *used = at + round_up(size);
    return area + at;
}

int adm_shm_create(unsigned workers)
{
    size_t len = ADM_SHM_COMMON_BYTES + (size_t)workers * ADM_SHM_SLOT_BYTES;
    pthread_mutexattr_t attr;
    void *p;

    if (shm.base != NULL || workers == 0) {
        return -EINVAL;
    }
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        return -errno;
    }
    shm.base = p;
    shm.workers = workers;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&common()->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return 0;
}

unsigned adm_shm_workers(void)
{
    return shm.workers;
}

int adm_shm_self(void)
{
    return shm.self;
}

void adm_shm_select(unsigned worker)
{
    if (shm.base != NULL && worker < shm.workers) {
        shm.self = (int)worker;
    }
}

void *adm_shm_alloc(size_t size)
{
    slot_t *s;

    if (shm.base == NULL || shm.self < 0) {
        return NULL;
    }
    s = slot((unsigned)shm.self);
    return bump((char *)s, &s->used, sizeof(*s), ADM_SHM_SLOT_BYTES, size);
}

void *adm_shm_part(unsigned worker, adm_shm_part_t part, size_t size)
{
    slot_t *s;
    void *p;

    if (shm.base == NULL || worker >= shm.workers || (unsigned)part >= ADM_SHM_PARTS) {
        return NULL;
    }
    s = slot(worker);
    p = __atomic_load_n(&s->parts[part], __ATOMIC_ACQUIRE);
    if (p != NULL || shm.self != (int)worker) {
        return p;
    }
    p = adm_shm_alloc(size);
    if (p != NULL) {
        __atomic_store_n(&s->parts[part], p, __ATOMIC_RELEASE);
    }
    return p;
}

void adm_shm_lock(void)
{
    if (shm.base != NULL && pthread_mutex_lock(&common()->lock) == EOWNERDEAD) {
        /* its holder died mid-change: what it wrote is complete or not yet published */
        pthread_mutex_consistent(&common()->lock);
    }
}

void adm_shm_unlock(void)
{
    if (shm.base != NULL) {
        pthread_mutex_unlock(&common()->lock);
    }
}

void *adm_shm_common_alloc(size_t size)
{
    common_t *c = common();

    if (shm.base == NULL) {
        return NULL;
    }
    return bump((char *)c, &c->used, sizeof(*c), ADM_SHM_COMMON_BYTES, size);
}

void *adm_shm_common(size_t size)
{
    common_t *c = common();
    void *p;

    if (shm.base == NULL) {
        return NULL;
    }
    p = __atomic_load_n(&c->root, __ATOMIC_ACQUIRE);
    if (p != NULL) {
        return p;
    }
    adm_shm_lock();
    p = c->root;
    if (p == NULL) {
        p = adm_shm_common_alloc(size);
        __atomic_store_n(&c->root, p, __ATOMIC_RELEASE);
    }
    adm_shm_unlock();
    return p;
}

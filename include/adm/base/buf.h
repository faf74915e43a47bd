/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growable byte buffer for connection-lifetime I/O (socket input, TLS records, pending output).
 * Unlike arena memory it is reused across requests and can give up its bytes (adm_buf_swap) so a
 * uv_write can own them until its callback runs.
 */
#ifndef ADM_BUF_H
#define ADM_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct adm_buf_s {
    uint8_t *data;
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated */
} adm_buf_t;

#define ADM_BUF_INIT                                                                                         \
    {                                                                                                        \
        NULL, 0, 0                                                                                           \
    }

/** Makes room for at least extra more bytes; returns 0 or ADM_ENOMEM. */
int adm_buf_reserve(adm_buf_t *b, size_t extra);

/** Appends len bytes; returns 0 or ADM_ENOMEM. */
int adm_buf_append(adm_buf_t *b, const void *data, size_t len);

/** Appends a NUL-terminated string (without the NUL). */
int adm_buf_append_str(adm_buf_t *b, const char *s);

/** Appends printf-style text; returns 0, ADM_ENOMEM or ADM_EINVAL for a bad format. */
int adm_buf_appendf(adm_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Removes the first n bytes, moving the rest to the front. */
void adm_buf_consume(adm_buf_t *b, size_t n);

/** Exchanges the contents of two buffers. */
void adm_buf_swap(adm_buf_t *a, adm_buf_t *b);

/** Frees the storage if it grew past keep bytes, and empties the buffer either way. */
void adm_buf_shrink(adm_buf_t *b, size_t keep);

/** Frees the storage; the buffer is empty and reusable afterwards. */
void adm_buf_free(adm_buf_t *b);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What an established mbedTLS session can give back (tls_session.c calls these; issue 17, memory
 * per idle connection). mbedTLS 3.6 has a call for neither, so this file, and only this one, reads
 * the SSL context's private fields (MBEDTLS_ALLOW_PRIVATE_ACCESS, mbedTLS's own switch for it) and
 * calls two functions of its library/ssl_misc.h; deps.sh pins mbedTLS to 3.6, whose layout this
 * follows.
 *
 * - The handshake structures. A TLS 1.2 handshake frees them when it ends; a TLS 1.3 one in 3.6
 *   keeps them (1.7 KB of parameters plus the handshake-key transform and the unused TLS 1.2
 *   transform, ~4 KB with OpenSSL's AEAD contexts) until mbedtls_ssl_free. Freeing them the way
 *   mbedtls_ssl_free does leaves the context as a finished TLS 1.2 handshake leaves it: every
 *   later path (reads, writes, alerts, close_notify) already copes with ssl->handshake == NULL.
 * - The pages of the two record buffers. Both are allocated at their maximum (16 KB of content
 *   plus overhead each) at setup; MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH shrinks them after the
 *   handshake only when a max_fragment_length was negotiated, which neither Go nor OpenSSL
 *   clients ask for. Between records nothing in them is live but the incoming record counter (the
 *   first 8 bytes of in_buf under TLS; the outgoing one lives in the context), which is kept
 *   aside. Every page of both buffers is then handed back with madvise(MADV_DONTNEED): they read
 *   as zeros when the next record touches them, and cost nothing until then. For that to be every
 *   page, the buffers must not share a page with other allocations: adm__tls_calloc, mbedTLS's
 *   allocator once adm_tls_global_init has run, puts allocations of a record buffer's size on
 *   whole pages of their own.
 */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS

#include "tls_internal.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mbedtls/platform.h>

#if !defined(MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH)
#error "tls_idle.c reads in_buf_len/out_buf_len: build mbedTLS with MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH"
#endif

/* library/ssl_misc.h (not installed): exported by libmbedtls, used by mbedtls_ssl_free itself. */
void mbedtls_ssl_handshake_free(mbedtls_ssl_context *ssl);
void mbedtls_ssl_transform_free(mbedtls_ssl_transform *transform);

static uintptr_t page_size(void)
{
    return (uintptr_t)sysconf(_SC_PAGESIZE);
}

void *adm__tls_calloc(size_t n, size_t size)
{
    uintptr_t page = page_size();
    size_t bytes, whole;
    void *p;

    if (size != 0 && n > SIZE_MAX / size) {
        return NULL;
    }
    bytes = n * size;
    if (bytes < MBEDTLS_SSL_IN_CONTENT_LEN || bytes > SIZE_MAX - page) {
        return calloc(n, size);
    }
    /* A record buffer: its own pages, start and end (free() takes it back like any other). */
    whole = (bytes + page - 1) & ~(page - 1);
    p = aligned_alloc(page, whole);
    if (p != NULL) {
        memset(p, 0, bytes);
    }
    return p;
}

void adm__tls_drop_handshake(mbedtls_ssl_context *ssl)
{
    if (ssl->handshake == NULL || !mbedtls_ssl_is_handshake_over(ssl)) {
        return;
    }
    /* The same order and the same members as mbedtls_ssl_free. */
    mbedtls_ssl_handshake_free(ssl);
    mbedtls_free(ssl->handshake);
    ssl->handshake = NULL;
    mbedtls_ssl_transform_free(ssl->transform_negotiate);
    mbedtls_free(ssl->transform_negotiate);
    ssl->transform_negotiate = NULL;
    mbedtls_ssl_session_free(ssl->session_negotiate);
    mbedtls_free(ssl->session_negotiate);
    ssl->session_negotiate = NULL;
}

/*
 * Gives back the pages of the buffer at p that hold no other allocation: all of them when it is on
 * pages of its own (adm__tls_calloc), the whole ones inside it otherwise. Returns the bytes.
 */
static size_t release_buffer(unsigned char *p, size_t len)
{
    uintptr_t page = page_size();
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + len) & ~(page - 1);
    uintptr_t whole_end = ((uintptr_t)p + len + page - 1) & ~(page - 1);

    if ((uintptr_t)p == start && malloc_usable_size(p) >= whole_end - start) {
        end = whole_end;
    }
    if (end <= start || madvise((void *)start, end - start, MADV_DONTNEED) != 0) {
        return 0;
    }
    return end - start;
}

bool adm__tls_release_record_pages(mbedtls_ssl_context *ssl, unsigned char saved_ctr[8], size_t *released)
{
    *released = 0;
    /* Anything received but not yet consumed (a partial record, the rest of a record), or not yet
       written, is live: keep everything then. */
    if (ssl->in_buf == NULL || ssl->out_buf == NULL || ssl->in_left != 0 || ssl->out_left != 0 ||
        mbedtls_ssl_check_pending(ssl) != 0 || ssl->in_ctr != ssl->in_buf) {
        return false;
    }
    /* The counter's page may or may not go (it does on pages of its own): either way the counter is
       written back before the next record (adm__tls_restore_record_counter). */
    memcpy(saved_ctr, ssl->in_ctr, MBEDTLS_SSL_SEQUENCE_NUMBER_LEN);
    *released = release_buffer(ssl->in_buf, ssl->in_buf_len) + release_buffer(ssl->out_buf, ssl->out_buf_len);
    return true;
}

void adm__tls_restore_record_counter(mbedtls_ssl_context *ssl, const unsigned char saved_ctr[8])
{
    memcpy(ssl->in_ctr, saved_ctr, MBEDTLS_SSL_SEQUENCE_NUMBER_LEN);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How an outgoing HTTP call ends: the kinds of failure and the answer. The upstream pool
 * (upstream.h) hands these to its callers; the connection that carried the call (upstream_conn.c)
 * is what fills them in, which is why they stand apart from the pool's own header.
 */
#ifndef ADM_CALL_RESULT_H
#define ADM_CALL_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum adm_call_error_e {
    ADM_CALL_OK,
    ADM_CALL_DNS,      /* the host did not resolve */
    ADM_CALL_CONNECT,  /* TCP connect failed (refused, unreachable) */
    ADM_CALL_TLS,      /* handshake or certificate verification failed */
    ADM_CALL_IO,       /* reset, or closed before the whole answer */
    ADM_CALL_PROTOCOL, /* malformed HTTP answer, or a body over the limit */
    ADM_CALL_TIMEOUT,  /* the call's deadline passed */
    ADM_CALL_NOMEM,
} adm_call_error_t;

typedef struct adm_call_result_s {
    adm_call_error_t error;
    /* for errors: what failed, in the words Go's net/http uses where admitd can know them
       ("dial tcp 127.0.0.1:1: connect: connection refused", "EOF", "tls: ...") */
    const char *detail;
    int status;               /* HTTP status when error is ADM_CALL_OK */
    const char *content_type; /* "" when absent */
    const char *retry_after;  /* the Retry-After header; "" when absent */
    const uint8_t *body;      /* valid only during the callback */
    size_t body_len;
    bool reused; /* the answer came on a kept-alive connection */
} adm_call_result_t;

#endif

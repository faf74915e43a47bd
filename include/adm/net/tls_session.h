/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection's TLS (adm_tls_session_t) on a context of tls.h, driven entirely from memory
 * buffers so the event loop never blocks: the connection hands received ciphertext to
 * adm_tls_session_recv(), gets plaintext back, and sends whatever ciphertext the session queued in
 * its output buffer with one socket write. No function here touches a socket or blocks, so a test
 * can pass two sessions' output to each other without any I/O.
 */
#ifndef ADM_TLS_SESSION_H
#define ADM_TLS_SESSION_H

#include "adm/base/buf.h"
#include "adm/net/tls.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct adm_tls_session_s adm_tls_session_t;

/**
 * Creates a session on ctx (taking a reference). For a client session, server_name is the host to
 * verify and send as SNI (NULL for servers; a verifying client without one gets ADM_ETLS).
 * Returns 0, ADM_ENOMEM or ADM_ETLS.
 */
int adm_tls_session_create(adm_tls_ctx_t *ctx, const char *server_name, adm_tls_session_t **out);

/** Frees the session (NULL is fine) and drops its reference on the context. Sends nothing. */
void adm_tls_session_destroy(adm_tls_session_t *s);

/**
 * Feeds len bytes of ciphertext just read from the socket, advances the handshake, and appends all
 * plaintext that can be decrypted to plain. Leftover partial records are kept inside the session.
 * Handshake and alert records to send are queued in adm_tls_session_output().
 * Returns 0 (possibly with no plaintext), ADM_EOF when the peer sent close_notify (plaintext
 * received before it is still appended), ADM_ENOMEM, or ADM_ETLS on a protocol/verification error
 * (adm_tls_session_error() then describes it).
 */
int adm_tls_session_recv(adm_tls_session_t *s, const uint8_t *cipher, size_t len, adm_buf_t *plain);

/**
 * Client sessions: starts the handshake (queues the ClientHello). Servers need not call it.
 * Returns 0 or ADM_ETLS.
 */
int adm_tls_session_start(adm_tls_session_t *s);

/**
 * Encrypts len bytes of plaintext into the output buffer. Only valid once the handshake is done.
 * Returns 0, ADM_ENOMEM or ADM_ETLS.
 */
int adm_tls_session_send(adm_tls_session_t *s, const uint8_t *data, size_t len);

/** Queues a close_notify alert. */
int adm_tls_session_close_notify(adm_tls_session_t *s);

/** Ciphertext waiting to go to the socket. The caller may take it with adm_buf_swap(). */
adm_buf_t *adm_tls_session_output(adm_tls_session_t *s);

/**
 * What a sink does with ciphertext: writes what it can of p[0..len) at once and returns how many
 * bytes it took (0..len); the rest is queued in adm_tls_session_output() as without a sink.
 */
typedef size_t (*adm_tls_sink_fn)(void *arg, const uint8_t *p, size_t len);

/**
 * Gives the session a sink (NULL: none, the default): an adm_tls_session_send() that makes one
 * record, while nothing is queued in the output buffer, offers that record to the sink straight
 * from mbedTLS's record buffer, so a record the socket takes whole is never copied. Handshake and
 * alert records, and sends of more than one record, are queued as without a sink. The caller keeps
 * the order: its sink takes nothing while a write of its own is in flight.
 */
void adm_tls_session_set_sink(adm_tls_session_t *s, adm_tls_sink_fn sink, void *arg);

/**
 * For a connection that has gone idle: frees the session's empty buffers and gives the pages of
 * mbedTLS's two record buffers back to the system while nothing is in them. Nothing changes when
 * the handshake is not done or input or output is pending. The session goes on as before (the
 * pages come back as records need them). Returns the bytes of record buffer given back.
 *
 * The first idle sessions keep their record pages (0 is returned), up to a number the process holds
 * (adm_tls_set_warm_idle_sessions): giving pages back and faulting them in again when the
 * connection is used next costs more than the memory is worth while idle connections are few. A
 * session leaves that number when it receives input or is destroyed.
 */
size_t adm_tls_session_trim(adm_tls_session_t *s);

/* Idle sessions that keep their record pages by default (~40 KB each; see adm_tls_session_trim). */
#define ADM_TLS_WARM_IDLE_SESSIONS 64

/**
 * Sets how many idle sessions of the process may keep their record pages (0: none, every trim gives
 * them back); sessions already keeping theirs are not changed. Returns the previous setting.
 */
size_t adm_tls_set_warm_idle_sessions(size_t sessions);

/** Idle sessions of the process that keep their record pages now. */
size_t adm_tls_warm_idle_sessions(void);

/** True once the handshake completed; adm_tls_session_send() is valid from then on. */
bool adm_tls_session_handshake_done(const adm_tls_session_t *s);

/** Server sessions: true when the client presented a certificate that verified against the CA. */
bool adm_tls_session_peer_verified(const adm_tls_session_t *s);

/** Negotiated protocol and cipher names for logs ("TLSv1.3", "TLS1-3-AES-128-GCM-SHA256"). */
const char *adm_tls_session_version(const adm_tls_session_t *s);
const char *adm_tls_session_cipher(const adm_tls_session_t *s);

/** Negotiated ALPN protocol ("http/1.1"), or "" when none was agreed (or not yet). */
const char *adm_tls_session_alpn(const adm_tls_session_t *s);

/** Description of the last ADM_ETLS failure on this session ("certificate verify failed: ..."). */
const char *adm_tls_session_error(const adm_tls_session_t *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection's TLS (tls_session.h): mbedTLS behind memory buffers. The BIO callbacks never
 * touch a socket: "receive" reads from the ciphertext handed to adm_tls_session_recv(), "send"
 * appends to the session's output buffer, and WANT_READ simply means "that was all the input there
 * is". mbedTLS keeps partial records in its own input buffer, so a recv call normally consumes
 * everything it is given straight from the caller's memory; the session copies bytes only when it
 * must look at a ClientHello before mbedTLS may (see choose_config) or when an error leaves input
 * unread. What the session is set up on (configurations, certificates, RNG) comes from its context
 * (tls.c), read through tls_internal.h and never changed here. Plaintext buffers grow by what
 * arrives, not by a record's maximum, and an idle connection's session gives its memory back
 * (adm_tls_session_trim, with tls_idle.c).
 */
#include "adm/net/tls_session.h"

#include "adm/base/error.h"
#include "tls_internal.h"

#include <mbedtls/error.h>
#include <mbedtls/ssl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room made for the start of a record's plaintext; the rest is reserved once its size is known. */
#define PLAIN_PROBE 4096

/*
 * Idle sessions that keep their record pages (adm_tls_session_trim). Giving the pages back is not
 * free: a madvise that zaps each page, and a page fault for each page the next records touch. On the
 * benchmark VM (bench/RESULTS.md) that is ~36 us per page given back and ~15 us per page faulted in
 * again, 0.35 ms of loop time per trim, which lands on the tail of a keep-alive client that goes
 * back to a connection after a second (Go's pool and admitd-bench both reuse the most recent idle
 * connection first, so the others go idle and come back in bursts). Memory per idle connection only
 * matters with many of them, so the first sessions to go idle keep their pages, up to a count the
 * process holds (~40 KB each); past it they are given back as before.
 */
static atomic_size_t warm_budget = ADM_TLS_WARM_IDLE_SESSIONS;
static atomic_size_t warm_count;

struct adm_tls_session_s {
    adm_tls_ctx_t *ctx;
    mbedtls_ssl_context ssl;
    adm_buf_t out;        /* ciphertext to send */
    adm_buf_t held;       /* ciphertext received but not yet given to mbedTLS */
    const uint8_t *input; /* the ciphertext of the running recv call, read by bio_recv */
    size_t input_len;     /* its length */
    size_t input_off;     /* how much of it bio_recv has handed out */
    char *server_name;    /* clients: the name verified, for error messages */
    bool handshake_done;
    bool set_up;        /* mbedtls_ssl_setup done (servers wait for the ClientHello) */
    bool out_of_memory; /* bio_send could not grow out */

    adm_tls_sink_fn sink; /* takes a one-record send at once when out is empty (clients), or NULL */
    void *sink_arg;
    bool direct;    /* the running adm_tls_session_send fits one record: bio_send offers it to sink */
    bool ctr_saved; /* record pages given back (adm_tls_session_trim): restore before reading */
    bool warm;      /* idle and trimmed, but its record pages kept (counted in warm_count) */
    unsigned char saved_ctr[MBEDTLS_SSL_SEQUENCE_NUMBER_LEN];
    char error[256];
};

static int bio_send(void *arg, const unsigned char *buf, size_t len)
{
    adm_tls_session_t *s = arg;
    size_t taken = 0;

    /* Nothing queued ahead of it: the record may go straight from mbedTLS's buffer. */
    if (s->direct && s->out.len == 0) {
        taken = s->sink(s->sink_arg, buf, len);
    }
    if (taken < len && adm_buf_append(&s->out, buf + taken, len - taken) != 0) {
        s->out_of_memory = true;
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    }
    return (int)len;
}

static int bio_recv(void *arg, unsigned char *buf, size_t len)
{
    adm_tls_session_t *s = arg;
    size_t avail = s->input_len - s->input_off;

    if (avail == 0) {
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    if (len > avail) {
        len = avail;
    }
    memcpy(buf, s->input + s->input_off, len);
    s->input_off += len;
    return (int)len;
}

/* Binds a session to a configuration; clients at creation, servers once the ClientHello shows. */
static int session_setup(adm_tls_session_t *s, const mbedtls_ssl_config *conf)
{
    int ret = mbedtls_ssl_setup(&s->ssl, conf);

    if (ret != 0) {
        snprintf(s->error, sizeof(s->error), "TLS setup: out of memory");
        return ADM_ENOMEM;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    s->set_up = true;
    return 0;
}

int adm_tls_session_create(adm_tls_ctx_t *ctx, const char *server_name, adm_tls_session_t **out)
{
    adm_tls_session_t *s = calloc(1, sizeof(*s));
    int ret;

    *out = NULL;
    if (s == NULL) {
        return ADM_ENOMEM;
    }
    mbedtls_ssl_init(&s->ssl);
    adm_tls_ctx_ref(ctx);
    s->ctx = ctx;
    /* Servers choose their configuration when the ClientHello arrives (choose_config). */
    if (!ctx->server) {
        ret = session_setup(s, &ctx->conf);
        if (ret != 0) {
            goto fail;
        }
        /*
         * Always name the host: mbedTLS 3.6.3+ refuses to verify without a call. NULL would turn
         * name checking off silently, which only an insecure client may ask for.
         */
        if (server_name == NULL && ctx->verify_server) {
            ret = ADM_ETLS;
            goto fail;
        }
        if (server_name != NULL) {
            s->server_name = strdup(server_name);
            if (s->server_name == NULL) {
                ret = ADM_ENOMEM;
                goto fail;
            }
        }
        ret = mbedtls_ssl_set_hostname(&s->ssl, server_name);
        if (ret != 0) {
            ret = ret == MBEDTLS_ERR_SSL_ALLOC_FAILED ? ADM_ENOMEM : ADM_ETLS;
            goto fail;
        }
    }
    *out = s;
    return 0;

fail:
    adm_tls_session_destroy(s);
    return ret;
}

/* The session is busy again (or gone): it leaves the idle sessions that kept their pages. */
static void leave_warm(adm_tls_session_t *s)
{
    if (s->warm) {
        s->warm = false;
        atomic_fetch_sub(&warm_count, 1);
    }
}

void adm_tls_session_destroy(adm_tls_session_t *s)
{
    if (s == NULL) {
        return;
    }
    leave_warm(s);
    mbedtls_ssl_free(&s->ssl);
    adm_buf_free(&s->out);
    adm_buf_free(&s->held);
    free(s->server_name);
    adm_tls_ctx_unref(s->ctx);
    free(s);
}

/* Short names for the certificate verification flags people actually meet. */
static const struct {
    uint32_t flag;
    const char *text;
} verify_reasons[] = {
    {MBEDTLS_X509_BADCERT_NOT_TRUSTED, "unknown CA"},
    {MBEDTLS_X509_BADCERT_CN_MISMATCH, "name mismatch"},
    {MBEDTLS_X509_BADCERT_EXPIRED, "expired"},
    {MBEDTLS_X509_BADCERT_FUTURE, "not yet valid"},
    {MBEDTLS_X509_BADCERT_REVOKED, "revoked"},
    {MBEDTLS_X509_BADCERT_MISSING, "no certificate"},
    {MBEDTLS_X509_BADCERT_KEY_USAGE, "key usage does not allow it"},
    {MBEDTLS_X509_BADCERT_EXT_KEY_USAGE, "extended key usage does not allow it"},
    {MBEDTLS_X509_BADCERT_BAD_MD, "unacceptable signature hash"},
    {MBEDTLS_X509_BADCERT_BAD_PK, "unacceptable signature algorithm"},
    {MBEDTLS_X509_BADCERT_BAD_KEY, "unacceptable key"},
};

/* Appends ", "-separated reasons for flags to out (which holds a string already). */
static void describe_verify_flags(uint32_t flags, const char *name, char *out, size_t out_len)
{
    size_t used = strlen(out);
    const char *sep = "";

    for (size_t i = 0; i < sizeof(verify_reasons) / sizeof(verify_reasons[0]); i++) {
        if ((flags & verify_reasons[i].flag) == 0 || used + 1 >= out_len) {
            continue;
        }
        flags &= ~verify_reasons[i].flag;
        if (verify_reasons[i].flag == MBEDTLS_X509_BADCERT_CN_MISMATCH && name != NULL) {
            snprintf(out + used, out_len - used, "%sname mismatch: not valid for \"%s\"", sep, name);
        } else {
            snprintf(out + used, out_len - used, "%s%s", sep, verify_reasons[i].text);
        }
        used += strlen(out + used);
        sep = ", ";
    }
    if (flags != 0 && used + 1 < out_len) {
        snprintf(out + used, out_len - used, "%sverify flags 0x%x", sep, (unsigned)flags);
    }
}

/* Records why the session failed and maps the mbedTLS code to ours. */
static int session_fail(adm_tls_session_t *s, const char *what, int ret)
{
    char text[128];

    if (s->out_of_memory || ret == MBEDTLS_ERR_SSL_ALLOC_FAILED) {
        snprintf(s->error, sizeof(s->error), "%s: out of memory", what);
        return ADM_ENOMEM;
    }
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        int n = snprintf(s->error, sizeof(s->error), "%s: certificate verification failed (", what);

        if (n > 0 && (size_t)n < sizeof(s->error)) {
            describe_verify_flags(mbedtls_ssl_get_verify_result(&s->ssl), s->server_name, s->error,
                                  sizeof(s->error) - 1);
            n = (int)strlen(s->error);
            s->error[n] = ')';
            s->error[n + 1] = '\0';
        }
        return ADM_ETLS;
    }
    mbedtls_strerror(ret, text, sizeof(text));
    snprintf(s->error, sizeof(s->error), "%s: %s", what, text);
    return ADM_ETLS;
}

/* Advances the handshake: 0 once done, ADM_AGAIN while it needs more input, or an error. */
static int step_handshake(adm_tls_session_t *s)
{
    int ret;

    if (s->handshake_done) {
        return 0;
    }
    ret = mbedtls_ssl_handshake(&s->ssl);
    if (ret == 0) {
        s->handshake_done = true;
        /* Servers only: a client may still be sent a TLS 1.3 ticket, which mbedTLS handles with
           its handshake structures. */
        if (s->ctx->server) {
            adm__tls_drop_handshake(&s->ssl);
        }
        return 0;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        return ADM_AGAIN;
    }
    return session_fail(s, "TLS handshake failed", ret);
}

int adm_tls_session_start(adm_tls_session_t *s)
{
    int ret;

    if (!s->set_up) {
        return 0; /* a server session: it speaks once the ClientHello is in */
    }
    s->input = NULL;
    s->input_len = 0;
    s->input_off = 0;
    ret = step_handshake(s);
    return ret == ADM_AGAIN ? 0 : ret;
}

/*
 * Looks into the first TLS record for the ClientHello's cipher suites. Returns 1 when it offers
 * TLS_AES_128_GCM_SHA256 (the fastest suite, see tls.c), 0 when it does not (or is no plain
 * ClientHello: mbedTLS will judge it), -1 when more bytes are needed.
 */
static int hello_offers_fastest(const uint8_t *p, size_t n)
{
    size_t record_len, avail, off, suites_len;
    const uint8_t *h;

    if (n < 5) {
        return -1;
    }
    if (p[0] != MBEDTLS_SSL_MSG_HANDSHAKE) {
        return 0;
    }
    record_len = (size_t)p[3] << 8 | p[4];
    avail = n - 5 < record_len ? n - 5 : record_len;
    h = p + 5;
    if (avail >= 1 && h[0] != MBEDTLS_SSL_HS_CLIENT_HELLO) {
        return 0;
    }
    /* Handshake type and length, legacy_version and random come before the session id. */
    off = 4 + 2 + 32;
    if (avail < off + 1) {
        return avail < record_len ? -1 : 0;
    }
    off += 1 + h[off];
    if (avail < off + 2) {
        return avail < record_len ? -1 : 0;
    }
    suites_len = (size_t)h[off] << 8 | h[off + 1];
    off += 2;
    if (avail < off + suites_len) {
        return avail < record_len ? -1 : 0;
    }
    for (size_t i = 0; i + 1 < suites_len; i += 2) {
        if (h[off + i] == 0x13 && h[off + i + 1] == 0x01) {
            return 1;
        }
    }
    return 0;
}

/* Sets a server session up on the configuration its ClientHello calls for; ADM_AGAIN: need more. */
static int choose_config(adm_tls_session_t *s, const uint8_t *cipher, size_t len)
{
    int offers = hello_offers_fastest(cipher, len);

    if (offers < 0 && len < MBEDTLS_SSL_IN_CONTENT_LEN + 5) {
        return ADM_AGAIN;
    }
    return session_setup(s, offers == 1 ? &s->ctx->conf_fastest : &s->ctx->conf);
}

/* Decrypts every complete record mbedTLS can reach into plain. */
static int read_plain(adm_tls_session_t *s, adm_buf_t *plain)
{
    for (;;) {
        /* What the record being read still holds, or a probe for the start of the next one. */
        size_t want = mbedtls_ssl_get_bytes_avail(&s->ssl);
        int n;

        if (want == 0) {
            want = PLAIN_PROBE;
        }
        if (plain->cap - plain->len < want && adm_buf_reserve(plain, want) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            return ADM_ENOMEM;
        }
        n = mbedtls_ssl_read(&s->ssl, plain->data + plain->len, plain->cap - plain->len);
        if (n > 0) {
            plain->len += (size_t)n;
            continue;
        }
        /* A TLS 1.3 client may be told about a ticket it will not use; keep reading. */
        if (n == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
            continue;
        }
        if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE) {
            return 0;
        }
        if (n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || n == 0) {
            return ADM_EOF;
        }
        return session_fail(s, "TLS read failed", n);
    }
}

int adm_tls_session_recv(adm_tls_session_t *s, const uint8_t *cipher, size_t len, adm_buf_t *plain)
{
    const uint8_t *in = cipher;
    size_t in_len = len;
    int ret;

    leave_warm(s);
    if (s->ctr_saved) {
        adm__tls_restore_record_counter(&s->ssl, s->saved_ctr);
        s->ctr_saved = false;
    }
    /* Leftovers from an earlier call come first; otherwise bytes are read where they lie. */
    if (s->held.len > 0) {
        if (adm_buf_append(&s->held, cipher, len) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            return ADM_ENOMEM;
        }
        in = s->held.data;
        in_len = s->held.len;
    }
    if (!s->set_up) {
        ret = choose_config(s, in, in_len);
        if (ret == ADM_AGAIN) {
            /* Keep the start of the ClientHello until the rest arrives. */
            if (in != s->held.data && adm_buf_append(&s->held, in, in_len) != 0) {
                snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
                return ADM_ENOMEM;
            }
            return 0;
        }
        if (ret != 0) {
            return ret;
        }
    }
    s->input = in;
    s->input_len = in_len;
    s->input_off = 0;

    ret = step_handshake(s);
    if (ret == 0) {
        ret = read_plain(s, plain);
    } else if (ret == ADM_AGAIN) {
        ret = 0;
    }

    /* mbedTLS takes all input unless it stopped on an error; whatever remains waits here. */
    if (in == s->held.data) {
        adm_buf_consume(&s->held, s->input_off);
    } else if (ret == 0 && s->input_off < in_len) {
        if (adm_buf_append(&s->held, in + s->input_off, in_len - s->input_off) != 0) {
            snprintf(s->error, sizeof(s->error), "TLS read: out of memory");
            ret = ADM_ENOMEM;
        }
    }
    s->input = NULL;
    s->input_len = 0;
    s->input_off = 0;
    return ret;
}

int adm_tls_session_send(adm_tls_session_t *s, const uint8_t *data, size_t len)
{
    int max_record;

    if (!s->handshake_done) {
        snprintf(s->error, sizeof(s->error), "TLS write: handshake not finished");
        return ADM_ETLS;
    }
    /*
     * Only a send that makes one record goes to the sink: more records would be one socket write
     * each there, and queued together they leave in one.
     */
    max_record = mbedtls_ssl_get_max_out_record_payload(&s->ssl);
    s->direct = s->sink != NULL && max_record > 0 && len <= (size_t)max_record;
    while (len > 0) {
        int n = mbedtls_ssl_write(&s->ssl, data, len);

        if (n < 0) {
            s->direct = false;
            return session_fail(s, "TLS write failed", n);
        }
        data += n;
        len -= (size_t)n;
    }
    s->direct = false;
    return 0;
}

int adm_tls_session_close_notify(adm_tls_session_t *s)
{
    int ret;

    if (!s->set_up) {
        return 0; /* nothing was said yet, so nothing needs closing */
    }
    ret = mbedtls_ssl_close_notify(&s->ssl);
    if (ret != 0 && ret != MBEDTLS_ERR_SSL_WANT_WRITE) {
        return session_fail(s, "TLS close failed", ret);
    }
    return 0;
}

/* Takes a place among the idle sessions that keep their pages: false when none is left. */
static bool enter_warm(adm_tls_session_t *s)
{
    size_t n = atomic_load(&warm_count);

    while (n < atomic_load(&warm_budget)) {
        if (atomic_compare_exchange_weak(&warm_count, &n, n + 1)) {
            s->warm = true;
            return true;
        }
    }
    return false;
}

size_t adm_tls_session_trim(adm_tls_session_t *s)
{
    size_t released = 0;

    if (!s->handshake_done || s->ctr_saved || s->warm || s->out.len > 0 || s->held.len > 0) {
        return 0;
    }
    adm_buf_free(&s->out);
    adm_buf_free(&s->held);
    if (enter_warm(s)) {
        return 0;
    }
    s->ctr_saved = adm__tls_release_record_pages(&s->ssl, s->saved_ctr, &released);
    return released;
}

size_t adm_tls_set_warm_idle_sessions(size_t sessions)
{
    return atomic_exchange(&warm_budget, sessions);
}

size_t adm_tls_warm_idle_sessions(void)
{
    return atomic_load(&warm_count);
}

adm_buf_t *adm_tls_session_output(adm_tls_session_t *s)
{
    return &s->out;
}

void adm_tls_session_set_sink(adm_tls_session_t *s, adm_tls_sink_fn sink, void *arg)
{
    s->sink = sink;
    s->sink_arg = arg;
}

bool adm_tls_session_handshake_done(const adm_tls_session_t *s)
{
    return s->handshake_done;
}

bool adm_tls_session_peer_verified(const adm_tls_session_t *s)
{
    /* VERIFY_OPTIONAL lets unverified certificates through the handshake, so check both. */
    return s->handshake_done && s->ctx->wants_client_cert && mbedtls_ssl_get_peer_cert(&s->ssl) != NULL &&
           mbedtls_ssl_get_verify_result(&s->ssl) == 0;
}

const char *adm_tls_session_version(const adm_tls_session_t *s)
{
    return mbedtls_ssl_get_version(&s->ssl);
}

const char *adm_tls_session_cipher(const adm_tls_session_t *s)
{
    const char *name = mbedtls_ssl_get_ciphersuite(&s->ssl);

    return name != NULL ? name : "";
}

const char *adm_tls_session_alpn(const adm_tls_session_t *s)
{
    const char *proto = s->handshake_done ? mbedtls_ssl_get_alpn_protocol(&s->ssl) : NULL;

    return proto != NULL ? proto : "";
}

const char *adm_tls_session_error(const adm_tls_session_t *s)
{
    return s->error[0] != '\0' ? s->error : "no error";
}

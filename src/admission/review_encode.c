/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AdmissionReview encoding (admission.k8s.io/v1 and v1beta1): the answer admitd gives, and the
 * request it sends to a downstream webhook. Decoding is in review_decode.c.
 *
 * The answer is written by hand into a single arena allocation: an upper bound of the size is
 * computed first, the text written without further checks, and the allocation shrunk in place.
 * The plain "allowed" answer is therefore one allocation and a few copies. Every string is escaped
 * for JSON by adm_jsonw_put_string, which replaces invalid UTF-8 by U+FFFD, so the output is valid
 * JSON whatever the caller hands in.
 *
 * The downstream request repeats the received request's members as they came, so it is written
 * from the received document member by member, with a placeholder where each call stamps its uid.
 */
#include "adm/admission/review.h"

#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/jsonw.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *adm_review_api_version(adm_review_version_t version)
{
    return version == ADM_REVIEW_V1BETA1 ? ADM_REVIEW_API_V1BETA1 : ADM_REVIEW_API_V1;
}

static char *put_lit(char *w, const char *lit, size_t n)
{
    memcpy(w, lit, n);
    return w + n;
}

#define PUT_LIT(w, lit) put_lit((w), (lit), sizeof(lit) - 1)

static char *put_int(char *w, int32_t v)
{
    if (v < 0) {
        *w++ = '-';
    }
    return adm_jsonw_put_u64(w, v < 0 ? 0u - (uint32_t)v : (uint32_t)v);
}

#define BASE64_LEN(n) (((n) + 2) / 3 * 4)

/* The base64 digit of a 6-bit value (standard alphabet), as a constant expression. */
#define B64_DIGIT(x)                                                                                         \
    ((x) < 26 ? 'A' + (x) : (x) < 52 ? 'a' + (x)-26 : (x) < 62 ? '0' + (x)-52 : (x) == 62 ? '+' : '/')
#define B64_PAIR(x)                                                                                          \
    {                                                                                                        \
        (char)B64_DIGIT((x) >> 6), (char)B64_DIGIT((x)&63)                                                   \
    }
#define B64_PAIRS4(x) B64_PAIR(x), B64_PAIR((x) + 1), B64_PAIR((x) + 2), B64_PAIR((x) + 3)
#define B64_PAIRS16(x) B64_PAIRS4(x), B64_PAIRS4((x) + 4), B64_PAIRS4((x) + 8), B64_PAIRS4((x) + 12)
#define B64_PAIRS64(x) B64_PAIRS16(x), B64_PAIRS16((x) + 16), B64_PAIRS16((x) + 32), B64_PAIRS16((x) + 48)
#define B64_PAIRS256(x) B64_PAIRS64(x), B64_PAIRS64((x) + 64), B64_PAIRS64((x) + 128), B64_PAIRS64((x) + 192)
#define B64_PAIRS1024(x)                                                                                     \
    B64_PAIRS256(x), B64_PAIRS256((x) + 256), B64_PAIRS256((x) + 512), B64_PAIRS256((x) + 768)

/*
 * The two digits of every 12-bit value, so three input bytes cost two lookups instead of four
 * (the patch of a mutating answer is most of its bytes). Built by the compiler: read-only, 8 KB.
 */
static const char b64_pairs[4096][2] = {B64_PAIRS1024(0), B64_PAIRS1024(1024), B64_PAIRS1024(2048),
                                        B64_PAIRS1024(3072)};

static inline uint64_t load_be64(const uint8_t *p)
{
    uint64_t x;

    memcpy(&x, p, sizeof(x));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return x;
#else
    return __builtin_bswap64(x);
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <tmmintrin.h>
#define ADM_BASE64_SSSE3 1

/*
 * Twelve bytes (sixteen digits) a step with SSSE3 while sixteen bytes are left to load, for
 * put_base64 on the processors that have it (every x86-64 admitd runs on in practice; the check
 * is made per call). n must be 16 or more. Returns how many bytes it encoded, a multiple of 12.
 * Each group of three bytes a, b, c is spread over a 32-bit lane as b, a, c, b, the four 6-bit
 * values are moved into the four bytes of the lane by two multiplies, and each value becomes its
 * digit by adding the offset of its range of the alphabet, looked up by a shuffle.
 */
__attribute__((target("ssse3"))) static size_t base64_ssse3(char *w, const uint8_t *in, size_t n)
{
    const __m128i spread = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
    /* offsets: index 0 for a..z, 1-10 for 0..9, 11 for '+', 12 for '/', 13 for A..Z */
    const __m128i offsets =
        _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                      '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
    const uint8_t *p = in;
    const uint8_t *last = in + n - 16; /* the last place sixteen bytes can be loaded from */

    for (; p <= last; p += 12, w += 16) {
        __m128i x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), spread);
        /* values 0 and 2 of each lane (bits 10-15 and 4-9 of the b, a half, 6-11 and 0-5 of c, b)
           shifted down by a high multiply, values 1 and 3 up by a low one */
        __m128i hi =
            _mm_mulhi_epu16(_mm_and_si128(x, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
        __m128i lo =
            _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
        __m128i values = _mm_or_si128(hi, lo);
        /* the range of each value: 0 below 52, 1-12 from 52 up, then 13 for those below 26 */
        __m128i range = _mm_subs_epu8(values, _mm_set1_epi8(51));

        range =
            _mm_or_si128(range, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), values), _mm_set1_epi8(13)));
        _mm_storeu_si128((__m128i *)(void *)w, _mm_add_epi8(values, _mm_shuffle_epi8(offsets, range)));
    }
    return (size_t)(p - in);
}
#endif

/* Standard alphabet, with padding (how Go's encoding/json writes a []byte). */
static char *put_base64(char *w, const uint8_t *in, size_t n)
{
    size_t i = 0;

    *w++ = '"';
#ifdef ADM_BASE64_SSSE3
    if (n >= 16 && __builtin_cpu_supports("ssse3")) {
        i = base64_ssse3(w, in, n);
        w += i / 3 * 4;
    }
#endif
    /* six bytes (eight digits) a step, read as one big-endian word while eight bytes are left */
    for (; n - i >= 8; i += 6) {
        uint64_t x = load_be64(in + i);

        memcpy(w, b64_pairs[x >> 52], 2);
        memcpy(w + 2, b64_pairs[(x >> 40) & 0xfff], 2);
        memcpy(w + 4, b64_pairs[(x >> 28) & 0xfff], 2);
        memcpy(w + 6, b64_pairs[(x >> 16) & 0xfff], 2);
        w += 8;
    }
    for (; n - i >= 3; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | (uint32_t)in[i + 2];

        memcpy(w, b64_pairs[v >> 12], 2);
        memcpy(w + 2, b64_pairs[v & 0xfff], 2);
        w += 4;
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 4;

        memcpy(w, b64_pairs[v], 2);
        w[2] = '=';
        w[3] = '=';
        w += 4;
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

        memcpy(w, b64_pairs[v >> 12], 2);
        w[2] = (char)B64_DIGIT((v >> 6) & 63);
        w[3] = '=';
        w += 4;
    }
    *w++ = '"';
    return w;
}

/* Writes a comma unless w is just past the object's opening brace. */
static char *put_comma(char *w, const char *open)
{
    if (w != open) {
        *w++ = ',';
    }
    return w;
}

/*
 * ,"status":{...} in metav1.Status member order. A refusal carries "metadata":{} and
 * "status":"Failure" as kube-apiserver's own Status does; an allowed answer only what was set.
 */
static char *put_status(char *w, const adm_review_response_t *resp, const char *message, size_t message_len,
                        const char *reason, size_t reason_len, const char *details, size_t details_len)
{
    const char *open;

    w = PUT_LIT(w, ",\"status\":{");
    open = w;
    if (!resp->allowed) {
        w = PUT_LIT(w, "\"metadata\":{},\"status\":\"Failure\"");
    }
    if (message_len > 0) {
        w = put_comma(w, open);
        w = PUT_LIT(w, "\"message\":");
        w = adm_jsonw_put_string(w, message, message_len);
    }
    if (reason_len > 0) {
        w = put_comma(w, open);
        w = PUT_LIT(w, "\"reason\":");
        w = adm_jsonw_put_string(w, reason, reason_len);
    }
    if (details != NULL) {
        w = put_comma(w, open);
        w = PUT_LIT(w, "\"details\":");
        w = put_lit(w, details, details_len);
    }
    if (resp->code != 0) {
        w = put_comma(w, open);
        w = PUT_LIT(w, "\"code\":");
        w = put_int(w, resp->code);
    }
    *w++ = '}';
    return w;
}

/* Adds n to *total; false on overflow (only absurd inputs reach it; they count as ENOMEM). */
static bool add_size(size_t *total, size_t n)
{
    if (n > SIZE_MAX - *total) {
        return false;
    }
    *total += n;
    return true;
}

/* Escaped bound of a string of n bytes plus extra bytes of punctuation and member name. */
static bool add_string(size_t *total, size_t n, size_t extra)
{
    return n <= (SIZE_MAX - 2) / 6 && add_size(total, ADM_JSONW_STRING_MAX(n)) && add_size(total, extra);
}

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

/*
 * Status.details as JSON text in the arena. A value yyjson cannot write as it stands (invalid
 * UTF-8 in a string) is written again with such bytes replaced by U+FFFD.
 */
static int write_details(adm_arena_t *a, yyjson_val *details, char **text, size_t *len)
{
    yyjson_alc alc;
    yyjson_write_err err;

    adm_json_alc_init(&alc, a);
    *text = yyjson_val_write_opts(details, YYJSON_WRITE_INF_AND_NAN_AS_NULL, &alc, len, &err);
    if (*text == NULL && err.code == YYJSON_WRITE_ERROR_INVALID_STRING) {
        *text = yyjson_val_write_opts(details,
                                      YYJSON_WRITE_INF_AND_NAN_AS_NULL | YYJSON_WRITE_ESCAPE_UNICODE |
                                          YYJSON_WRITE_ALLOW_INVALID_UNICODE,
                                      &alc, len, &err);
    }
    if (*text == NULL) {
        return err.code == YYJSON_WRITE_ERROR_MEMORY_ALLOCATION ? ADM_ENOMEM : ADM_EINVAL;
    }
    return 0;
}

int adm_review_encode(adm_arena_t *a, adm_review_version_t version, const char *uid,
                      const adm_review_response_t *resp, const char **out, size_t *out_len)
{
    /* The longest fixed text: envelope, status with metadata and every member name. */
    static const size_t fixed = 512;
    const bool has_status = !resp->allowed || resp->code != 0;
    const char *message = or_empty(resp->message);
    const char *reason = or_empty(resp->reason);
    size_t uid_len, message_len = 0, reason_len = 0;
    char *details = NULL;
    size_t details_len = 0;
    size_t bound = fixed;
    char *buf;
    char *w;
    int rc;

    uid = or_empty(uid);
    uid_len = strlen(uid);
    if (!add_string(&bound, uid_len, 0)) {
        return ADM_ENOMEM;
    }
    if (has_status) {
        message_len = strlen(message);
        reason_len = strlen(reason);
        if (!add_string(&bound, message_len, 0) || !add_string(&bound, reason_len, 0)) {
            return ADM_ENOMEM;
        }
        if (resp->details != NULL) {
            /* Written before the buffer, so the buffer stays the arena's last allocation and
               can shrink in place at the end. */
            rc = write_details(a, resp->details, &details, &details_len);
            if (rc != 0) {
                return rc;
            }
            if (!add_size(&bound, details_len)) {
                return ADM_ENOMEM;
            }
        }
    }
    if (resp->patch_len > 0 &&
        (resp->patch_len > SIZE_MAX / 2 || !add_size(&bound, BASE64_LEN(resp->patch_len) + 2))) {
        return ADM_ENOMEM;
    }
    for (size_t i = 0; i < resp->naudit_annotations; i++) {
        if (!add_string(&bound, strlen(or_empty(resp->audit_annotations[i].key)), 4) ||
            !add_string(&bound, strlen(or_empty(resp->audit_annotations[i].value)), 0)) {
            return ADM_ENOMEM;
        }
    }
    for (size_t i = 0; i < resp->nwarnings; i++) {
        if (!add_string(&bound, strlen(or_empty(resp->warnings[i])), 1)) {
            return ADM_ENOMEM;
        }
    }

    buf = adm_arena_alloc(a, bound);
    if (buf == NULL) {
        return ADM_ENOMEM;
    }
    w = buf;
    if (version == ADM_REVIEW_V1BETA1) {
        w = PUT_LIT(w, "{\"apiVersion\":\"" ADM_REVIEW_API_V1BETA1 "\",");
    } else {
        w = PUT_LIT(w, "{\"apiVersion\":\"" ADM_REVIEW_API_V1 "\",");
    }
    w = PUT_LIT(w, "\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    w = adm_jsonw_put_string(w, uid, uid_len);
    if (resp->allowed) {
        w = PUT_LIT(w, ",\"allowed\":true");
    } else {
        w = PUT_LIT(w, ",\"allowed\":false");
    }
    if (has_status) {
        w = put_status(w, resp, message, message_len, reason, reason_len, details, details_len);
    }
    if (resp->patch_len > 0) {
        w = PUT_LIT(w, ",\"patch\":");
        w = put_base64(w, resp->patch, resp->patch_len);
        w = PUT_LIT(w, ",\"patchType\":\"JSONPatch\"");
    }
    if (resp->naudit_annotations > 0) {
        w = PUT_LIT(w, ",\"auditAnnotations\":{");
        for (size_t i = 0; i < resp->naudit_annotations; i++) {
            const char *k = or_empty(resp->audit_annotations[i].key);
            const char *v = or_empty(resp->audit_annotations[i].value);

            if (i > 0) {
                *w++ = ',';
            }
            w = adm_jsonw_put_string(w, k, strlen(k));
            *w++ = ':';
            w = adm_jsonw_put_string(w, v, strlen(v));
        }
        *w++ = '}';
    }
    if (resp->nwarnings > 0) {
        w = PUT_LIT(w, ",\"warnings\":[");
        for (size_t i = 0; i < resp->nwarnings; i++) {
            const char *s = or_empty(resp->warnings[i]);

            if (i > 0) {
                *w++ = ',';
            }
            w = adm_jsonw_put_string(w, s, strlen(s));
        }
        *w++ = ']';
    }
    w = PUT_LIT(w, "}}");

    *out_len = (size_t)(w - buf);
    /* Give back the unused part of the bound; the buffer is the arena's last allocation. */
    *out = adm_arena_realloc(a, buf, bound, *out_len);
    return 0;
}

/* ---- the request sent downstream ---- */

/*
 * The request is put together from pieces (fixed text, and each member written on its own) that
 * are joined in one arena allocation at the end: no malloc, and no bound to guess. A request from
 * kube-apiserver has at most 16 members, 13 of them copied here at four pieces each; a request
 * with more (repeated or unknown members) than the pieces hold is refused as out of memory.
 */
#define MAX_PIECES 64
#define END_PIECES 3 /* ,"object": / the object / ,"dryRun":...}} */

typedef struct pieces_s {
    const char *text[MAX_PIECES];
    size_t len[MAX_PIECES];
    size_t n;
} pieces_t;

static void add_piece(pieces_t *p, const char *text, size_t len)
{
    p->text[p->n] = text;
    p->len[p->n] = len;
    p->n++;
}

#define ADD_LIT(p, lit) add_piece((p), (lit), sizeof(lit) - 1)

/* v as compact JSON text in the arena; false when out of memory. */
static bool add_value(pieces_t *p, adm_arena_t *a, yyjson_val *v)
{
    yyjson_alc alc;

    adm_json_alc_init(&alc, a);
    p->text[p->n] = yyjson_val_write_opts(v, 0, &alc, &p->len[p->n], NULL);
    if (p->text[p->n] == NULL) {
        return false;
    }
    p->n++;
    return true;
}

int adm_review_encode_request(adm_arena_t *a, const adm_review_request_t *req, yyjson_val *object,
                              adm_review_version_t version, const char **out, size_t *out_len,
                              size_t *uid_off)
{
    static const char head_v1[] =
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"" ADM_REVIEW_API_V1 "\",\"request\":{\"uid\":\"";
    static const char head_v1beta1[] =
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"" ADM_REVIEW_API_V1BETA1 "\",\"request\":{\"uid\":\"";
    yyjson_val *request = yyjson_obj_get(yyjson_doc_get_root(req->doc), "request");
    pieces_t p;
    size_t total = 0;
    yyjson_obj_iter it;
    yyjson_val *key;
    char *w;

    p.n = 0;
    if (version == ADM_REVIEW_V1BETA1) {
        ADD_LIT(&p, head_v1beta1);
    } else {
        ADD_LIT(&p, head_v1);
    }
    *uid_off = p.len[0];
    ADD_LIT(&p, ADM_REVIEW_UID_PLACEHOLDER "\"");
    yyjson_obj_iter_init(request, &it);
    for (key = yyjson_obj_iter_next(&it); key != NULL; key = yyjson_obj_iter_next(&it)) {
        const char *k = yyjson_get_str(key);

        if (strcmp(k, "uid") == 0 || strcmp(k, "object") == 0 || strcmp(k, "dryRun") == 0) {
            continue;
        }
        if (p.n + 4 + END_PIECES > MAX_PIECES) {
            return ADM_ENOMEM;
        }
        ADD_LIT(&p, ",");
        if (!add_value(&p, a, key)) {
            return ADM_ENOMEM;
        }
        ADD_LIT(&p, ":");
        if (!add_value(&p, a, yyjson_obj_iter_get_val(key))) {
            return ADM_ENOMEM;
        }
    }
    ADD_LIT(&p, ",\"object\":");
    if (object == NULL) {
        ADD_LIT(&p, "null");
    } else if (!add_value(&p, a, object)) {
        return ADM_ENOMEM;
    }
    if (req->dry_run) {
        ADD_LIT(&p, ",\"dryRun\":true}}");
    } else {
        ADD_LIT(&p, ",\"dryRun\":false}}");
    }
    for (size_t i = 0; i < p.n; i++) {
        total += p.len[i];
    }
    w = adm_arena_alloc(a, total + 1);
    if (w == NULL) {
        return ADM_ENOMEM;
    }
    *out = w;
    *out_len = total;
    for (size_t i = 0; i < p.n; i++) {
        memcpy(w, p.text[i], p.len[i]);
        w += p.len[i];
    }
    *w = '\0';
    return 0;
}

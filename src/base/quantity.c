/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resource.Quantity as apimachinery computes it. Two representations are kept apart because
 * apimachinery's results depend on them: the int64 form (int64Amount: what ParseQuantity gives
 * when at most 18 digits fit at a scale of 10^-9 or coarser, and what int64 sums stay in) and the
 * decimal form (inf.Dec: every other parse, always rounded up to 10^-9, and sums that overflow).
 * The decimal form's unscaled value is a signed 128-bit integer here instead of a big.Int.
 */
#include "adm/base/quantity.h"

#include "adm/base/error.h"

#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define I128_MAX ((adm_i128)(~(u128)0 >> 1))
#define MAX_DIGITS_128 38 /* every 38-digit decimal fits in 127 bits */

static const char ERR_FORMAT[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";
static const char ERR_RANGE[] = "quantity has more significant digits than admitd holds (38)";

/* 10^n for n <= 38, else 0. */
static u128 pow10_u128(int n)
{
    u128 p = 1;

    if (n < 0 || n > MAX_DIGITS_128) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        p *= 10;
    }
    return p;
}

static u128 mag(adm_i128 v)
{
    return v < 0 ? (u128)0 - (u128)v : (u128)v;
}

/* *out = v * 10^n (n >= 0) unless |result| would exceed I128_MAX. */
static bool mul_pow10(adm_i128 v, int64_t n, adm_i128 *out)
{
    u128 m = mag(v);

    if (m == 0) {
        *out = 0;
        return true;
    }
    for (int64_t i = 0; i < n; i++) {
        if (m > (u128)I128_MAX / 10) {
            return false;
        }
        m *= 10;
    }
    *out = v < 0 ? -(adm_i128)m : (adm_i128)m;
    return true;
}

/* Go's two's-complement int32 conversions, spelled so C has no undefined overflow. */
static int32_t wrap32(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}
static int64_t wrap64(uint64_t v)
{
    return (int64_t)v;
}

/* ---- apimachinery's int64 helpers (math.go) ---- */

static bool i64_mul(int64_t a, int64_t b, int64_t *out)
{
    if (a == 0 || b == 0 || a == 1 || b == 1) {
        *out = wrap64((uint64_t)a * (uint64_t)b);
        return true;
    }
    if (a == INT64_MIN || b == INT64_MIN) {
        return false;
    }
    return !__builtin_mul_overflow(a, b, out);
}

static bool i64_add(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/*
 * positiveScaleInt64: base * 10^scale, false on overflow. apimachinery multiplies by ten scale
 * times; a product that overflows at some step overflows at the end too (its size only grows),
 * so one multiplication by the power says the same.
 */
static bool pos_scale(int64_t base, int64_t scale, int64_t *out)
{
    static const int64_t pow10[19] = {1,
                                      10,
                                      100,
                                      1000,
                                      10000,
                                      100000,
                                      1000000,
                                      10000000,
                                      100000000,
                                      1000000000,
                                      10000000000,
                                      100000000000,
                                      1000000000000,
                                      10000000000000,
                                      100000000000000,
                                      1000000000000000,
                                      10000000000000000,
                                      100000000000000000,
                                      1000000000000000000};

    if (base == 0 || scale <= 0) {
        *out = base;
        return true;
    }
    if (scale > 18 || base == INT64_MIN) {
        return false;
    }
    return !__builtin_mul_overflow(base, pow10[scale], out);
}

/* negativeScaleInt64: base / 10^scale rounded away from zero; *exact when nothing was lost. */
static int64_t neg_scale(int64_t base, int64_t scale, bool *exact)
{
    int64_t v = base;
    bool fraction = false;

    *exact = true;
    if (scale == 0) {
        return base;
    }
    for (int64_t i = 0; i < scale; i++) {
        if (!fraction && v % 10 != 0) {
            fraction = true;
        }
        v /= 10;
        if (v == 0) {
            *exact = !fraction;
            if (fraction) {
                return base > 0 ? 1 : -1;
            }
            return 0;
        }
    }
    if (fraction) {
        v += base > 0 ? 1 : -1;
    }
    *exact = !fraction;
    return v;
}

/* ---- parsing (parseQuantityString, suffixer.interpret, ParseQuantity) ---- */

struct parts {
    bool positive;
    const char *value, *num, *denom, *suffix;
    size_t value_len, num_len, denom_len, suffix_len;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
    return c != '\0' && memchr("eEinumkKMGTP", c, 12) != NULL;
}

static size_t skip_digits(const char *s, size_t i, size_t end)
{
    while (i < end && is_digit(s[i])) {
        i++;
    }
    return i;
}

static int split_quantity(const char *s, size_t end, struct parts *p)
{
    size_t pos = 0, i;

    memset(p, 0, sizeof(*p));
    p->positive = true;
    p->denom = "";
    p->suffix = "";
    if (pos < end && (s[0] == '-' || s[0] == '+')) {
        p->positive = s[0] == '+';
        pos++;
    }
    while (pos < end && s[pos] == '0') {
        pos++;
    }
    if (pos >= end) {
        p->num = p->value = "0";
        p->num_len = p->value_len = 1;
        return 0;
    }
    i = skip_digits(s, pos, end);
    p->num = s + pos;
    p->num_len = i - pos;
    if (i >= end) {
        p->value = s;
        p->value_len = end;
        return 0;
    }
    pos = i;
    if (p->num_len == 0) {
        p->num = "0";
        p->num_len = 1;
    }
    if (s[pos] == '.') {
        pos++;
        i = skip_digits(s, pos, end);
        p->denom = s + pos;
        p->denom_len = i - pos;
        if (i >= end) {
            p->value = s;
            p->value_len = end;
            return 0;
        }
        pos = i;
    }
    p->value = s;
    p->value_len = pos;
    p->suffix = s + pos;
    i = pos;
    while (i < end && is_suffix_char(s[i])) {
        i++;
    }
    if (i < end && (s[i] == '-' || s[i] == '+')) {
        i++;
    }
    i = skip_digits(s, i, end);
    if (i < end) {
        return ADM_EINVAL;
    }
    p->suffix_len = end - pos;
    return 0;
}

/* strconv.ParseInt(s, 10, 64). */
static bool go_parse_int(const char *s, size_t len, int64_t *out)
{
    bool neg = false;
    uint64_t v = 0, limit;
    size_t i = 0;

    if (len > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i >= len) {
        return false;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (!is_digit(s[i])) {
            return false;
        }
        if (v > (limit - (uint64_t)(s[i] - '0')) / 10) {
            return false;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = neg ? wrap64(0 - v) : (int64_t)v;
    return true;
}

static bool suffix_is(const struct parts *p, const char *lit)
{
    return p->suffix_len == strlen(lit) && memcmp(p->suffix, lit, p->suffix_len) == 0;
}

static const struct {
    const char *suffix;
    int32_t exponent;
} DEC_SUFFIXES[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
                    {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
static const char *const BIN_SUFFIXES[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

static bool interpret_suffix(const struct parts *p, int *base, int32_t *exponent, adm_qty_format_t *format)
{
    int64_t parsed;

    for (size_t i = 0; i < sizeof(DEC_SUFFIXES) / sizeof(DEC_SUFFIXES[0]); i++) {
        if (suffix_is(p, DEC_SUFFIXES[i].suffix)) {
            *base = 10;
            *exponent = DEC_SUFFIXES[i].exponent;
            *format = ADM_QTY_DECIMAL_SI;
            return true;
        }
    }
    for (int i = 1; i < 7; i++) {
        if (suffix_is(p, BIN_SUFFIXES[i])) {
            *base = 2;
            *exponent = 10 * i;
            *format = ADM_QTY_BINARY_SI;
            return true;
        }
    }
    if (p->suffix_len > 1 && (p->suffix[0] == 'e' || p->suffix[0] == 'E') &&
        go_parse_int(p->suffix + 1, p->suffix_len - 1, &parsed)) {
        *base = 10;
        *exponent = wrap32(parsed);
        *format = ADM_QTY_DECIMAL_EXPONENT;
        return true;
    }
    return false;
}

/* Parses up to 38 digits (the caller checks the count). */
static u128 digits_value(const char *d, size_t n)
{
    u128 v = 0;

    for (size_t i = 0; i < n; i++) {
        v = v * 10 + (u128)(d[i] - '0');
    }
    return v;
}

static bool any_nonzero(const char *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '0') {
            return true;
        }
    }
    return false;
}

/* The significant digits of a slow-path value: enough of them to decide, and what follows. */
#define KEPT_DIGITS 200
struct digits {
    char d[KEPT_DIGITS];
    size_t n;          /* significant digits, counting those not kept */
    size_t frac;       /* digits after the point (inf.Dec's scale before the suffix) */
    bool tail_nonzero; /* a digit past the kept ones is not 0 */
};

/* Is any digit from index `from` on (kept or not) nonzero? */
static bool nonzero_from(const struct digits *dg, size_t from)
{
    size_t kept = dg->n < KEPT_DIGITS ? dg->n : KEPT_DIGITS;

    return (from < kept && any_nonzero(dg->d + from, kept - from)) || dg->tail_nonzero;
}

/*
 * The slow path after inf.Dec.SetString(value): the suffix applied, then the value rounded up to
 * 10^-9 (a zero keeps its own scale), binary values capped at MaxInt64.
 */
static int parse_decimal(const struct digits *dg, bool positive, int base, int32_t exponent,
                         adm_qty_format_t format, adm_quantity_t *q)
{
    const adm_i128 max_at_nano = (adm_i128)INT64_MAX * 1000000000;
    int64_t infscale = (int64_t)dg->frac;
    size_t n = dg->n;
    u128 m;

    if (base == 10) {
        infscale = wrap32(infscale + (int64_t)wrap32(-(int64_t)exponent));
    }
    q->dec = true;
    q->format = format;
    if (n == 0) {
        q->unscaled = 0;
        q->scale = wrap32(-infscale);
        return 0;
    }
    if (base == 10) {
        if (infscale <= 9) {
            adm_i128 v;

            if (n > MAX_DIGITS_128 || !mul_pow10((adm_i128)digits_value(dg->d, n), 9 - infscale, &v)) {
                return ADM_ETOOBIG;
            }
            m = (u128)v;
        } else if ((int64_t)n <= infscale - 9) {
            m = 1;
        } else {
            size_t keep = n - (size_t)(infscale - 9);

            if (keep > MAX_DIGITS_128) {
                return ADM_ETOOBIG;
            }
            m = digits_value(dg->d, keep) + (nonzero_from(dg, keep) ? 1 : 0);
        }
    } else {
        /* value * 10^9 = digits * 2^exponent * 10^(9 - frac), rounded away from zero. */
        bool clamp = false;

        if (n > MAX_DIGITS_128 || infscale > 27) {
            return ADM_ETOOBIG;
        }
        if (infscale <= 9) {
            adm_i128 v;

            clamp = !mul_pow10((adm_i128)digits_value(dg->d, n), 9 - infscale, &v);
            m = (u128)v;
            for (int32_t i = 0; !clamp && i < exponent; i++) {
                clamp = m > (u128)I128_MAX / 2;
                m *= 2;
            }
        } else {
            size_t drop = (size_t)(infscale - 9), keep = n > drop ? n - drop : 0;
            u128 high = digits_value(dg->d, keep), low = digits_value(dg->d + keep, n - keep);
            u128 div = pow10_u128((int)drop);

            for (int32_t i = 0; !clamp && i < exponent; i++) {
                clamp = high > (u128)I128_MAX / 4;
                high *= 2;
                low *= 2; /* low < 10^18, so low * 2^60 fits */
            }
            m = high + low / div + (low % div != 0 ? 1 : 0);
        }
        if (clamp || (adm_i128)m > max_at_nano) {
            q->unscaled = positive ? INT64_MAX : -(adm_i128)INT64_MAX;
            q->scale = 0;
            return 0;
        }
        if ((adm_i128)m < 1000000000) {
            q->format = ADM_QTY_DECIMAL_SI;
        }
    }
    q->unscaled = positive ? (adm_i128)m : -(adm_i128)m;
    q->scale = ADM_QTY_NANO;
    return 0;
}

static int slow_parse(const struct parts *p, int base, int32_t exponent, adm_qty_format_t format,
                      adm_quantity_t *q, const char **problem)
{
    struct digits dg;
    bool seen_point = false, any_digit = false;
    int err;

    /* inf.Dec.SetString: an optional sign, digits with at most one point, at least one digit. */
    memset(&dg, 0, sizeof(dg));
    for (size_t i = 0; i < p->value_len; i++) {
        char c = p->value[i];

        if (c == '.') {
            seen_point = true;
            continue;
        }
        if (!is_digit(c)) {
            continue;
        }
        any_digit = true;
        dg.frac += seen_point ? 1 : 0;
        if (dg.n == 0 && c == '0') {
            continue;
        }
        if (dg.n < KEPT_DIGITS) {
            dg.d[dg.n] = c;
        } else if (c != '0') {
            dg.tail_nonzero = true;
        }
        dg.n++;
    }
    if (!any_digit) {
        *problem = ERR_NUMERIC;
        return ADM_EINVAL;
    }
    err = parse_decimal(&dg, p->positive, base, exponent, format, q);
    if (err != 0) {
        memset(q, 0, sizeof(*q));
        *problem = ERR_RANGE;
    }
    return err;
}

static int parse_uncached(const char *s, size_t len, adm_quantity_t *q, const char **problem)
{
    struct parts p;
    int base;
    int32_t exponent, scale, precision;
    adm_qty_format_t format;
    int64_t mantissa = 1;

    memset(q, 0, sizeof(*q));
    if (len == 0) {
        *problem = ERR_FORMAT;
        return ADM_EINVAL;
    }
    if (len == 1 && s[0] == '0') {
        q->verbatim = s;
        q->verbatim_len = 1;
        return 0;
    }
    if (split_quantity(s, len, &p) != 0) {
        *problem = ERR_FORMAT;
        return ADM_EINVAL;
    }
    if (!interpret_suffix(&p, &base, &exponent, &format)) {
        *problem = ERR_SUFFIX;
        return ADM_EINVAL;
    }
    if (format == ADM_QTY_BINARY_SI) {
        scale = 0;
        if (p.denom_len == 0) {
            mantissa = (int64_t)1 << exponent;
            precision = 15 - (int32_t)p.num_len - exponent * 3 / 10 - 1;
        } else {
            precision = -1;
        }
    } else {
        scale = exponent;
        precision = 18 - (int32_t)(p.num_len + p.denom_len);
    }
    if (precision >= 0) {
        scale = wrap32((int64_t)scale - (int64_t)p.denom_len);
        if (scale >= ADM_QTY_NANO) {
            char shifted[40];
            int64_t value, result;

            memcpy(shifted, p.num, p.num_len);
            memcpy(shifted + p.num_len, p.denom, p.denom_len);
            if (!go_parse_int(shifted, p.num_len + p.denom_len, &value)) {
                *problem = ERR_NUMERIC;
                return ADM_EINVAL;
            }
            if (i64_mul(value, mantissa, &result)) {
                size_t sl = p.num_len + p.denom_len;
                bool canonical;

                if (format == ADM_QTY_BINARY_SI) {
                    canonical = exponent % 10 == 0 && (value & 7) != 0;
                } else {
                    canonical = scale % 3 == 0 && shifted[0] != '0' &&
                                !(sl >= 3 && memcmp(shifted + sl - 3, "000", 3) == 0);
                }
                q->unscaled = p.positive ? result : -(adm_i128)result;
                q->scale = scale;
                q->format = format;
                if (canonical) {
                    q->verbatim = s;
                    q->verbatim_len = len;
                }
                return 0;
            }
        }
    }
    return slow_parse(&p, base, exponent, format, q, problem);
}

/*
 * The same few texts are parsed again and again: a pod's requests by LimitRanger's and
 * ResourceQuota's every phase, the LimitRanges' and quotas' own values at every request. A parse
 * depends on the text alone, so the last results are kept per thread by text (compared whole, so
 * two texts never share a slot's answer), with the input pointer put back where the result keeps
 * it. A hit costs a hash of a few bytes and a copy instead of the parse. The table is 4-way set
 * associative: a request reads some 30 texts, and with one slot per hash two of them sharing one
 * would evict each other at every request.
 */
#define MEMO_WAYS 4
#define MEMO_SETS 64
#define MEMO_TEXT_MAX 32

typedef struct memo_slot_s {
    uint8_t len; /* 0: empty */
    bool verbatim;
    int rc;
    const char *problem;
    adm_quantity_t q; /* verbatim NULL: it points at the caller's text */
    char text[MEMO_TEXT_MAX];
} memo_slot_t;

typedef struct memo_set_s {
    memo_slot_t way[MEMO_WAYS];
    unsigned next; /* the way the next miss replaces (round robin) */
} memo_set_t;

static _Thread_local memo_set_t memo[MEMO_SETS];

int adm_quantity_parse(const char *s, size_t len, adm_quantity_t *q, const char **problem)
{
    static const char *dummy;
    uint32_t h = 2166136261u;
    memo_set_t *set;
    memo_slot_t *slot;
    int rc;

    if (problem == NULL) {
        problem = &dummy;
    }
    if (len == 0 || len > MEMO_TEXT_MAX) {
        return parse_uncached(s, len, q, problem);
    }
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    }
    set = &memo[(h ^ (h >> 16)) & (MEMO_SETS - 1)];
    for (size_t w = 0; w < MEMO_WAYS; w++) {
        slot = &set->way[w];
        if (slot->len == len && memcmp(slot->text, s, len) == 0) {
            *q = slot->q;
            if (slot->verbatim) {
                q->verbatim = s;
                q->verbatim_len = len;
            }
            if (slot->rc != 0) {
                *problem = slot->problem;
            }
            return slot->rc;
        }
    }
    rc = parse_uncached(s, len, q, problem);
    slot = &set->way[set->next];
    set->next = (set->next + 1) % MEMO_WAYS;
    slot->len = (uint8_t)len;
    memcpy(slot->text, s, len);
    slot->rc = rc;
    slot->problem = rc != 0 ? *problem : NULL;
    slot->q = *q;
    slot->verbatim = q->verbatim != NULL;
    slot->q.verbatim = NULL;
    slot->q.verbatim_len = 0;
    return rc;
}

void adm_quantity_memo_reset(void)
{
    memset(memo, 0, sizeof(memo));
}

int adm_quantity_parse_str(const char *s, adm_quantity_t *q)
{
    return adm_quantity_parse(s, strlen(s), q, NULL);
}

adm_quantity_t adm_quantity_scaled(int64_t value, int32_t scale, adm_qty_format_t format)
{
    adm_quantity_t q;

    memset(&q, 0, sizeof(q));
    q.unscaled = value;
    q.scale = scale;
    q.format = format;
    return q;
}

/* ---- comparison ---- */

int adm_quantity_sign(const adm_quantity_t *q)
{
    return q->unscaled > 0 ? 1 : (q->unscaled < 0 ? -1 : 0);
}

static int cmp_exact(adm_i128 a, int32_t as, adm_i128 b, int32_t bs)
{
    int sa = a > 0 ? 1 : (a < 0 ? -1 : 0), sb = b > 0 ? 1 : (b < 0 ? -1 : 0);
    u128 ma, mb;

    if (sa != sb || sa == 0) {
        return sa < sb ? -1 : (sa > sb ? 1 : 0);
    }
    /* Same sign: compare magnitudes at the finer scale; overflow means that side is larger. */
    ma = mag(a);
    mb = mag(b);
    if (as > bs) {
        adm_i128 v;

        if (!mul_pow10((adm_i128)ma, (int64_t)as - bs, &v)) {
            return sa;
        }
        ma = (u128)v;
    } else if (bs > as) {
        adm_i128 v;

        if (!mul_pow10((adm_i128)mb, (int64_t)bs - as, &v)) {
            return -sa;
        }
        mb = (u128)v;
    }
    if (ma == mb) {
        return 0;
    }
    return ma > mb ? sa : -sa;
}

int adm_quantity_cmp(const adm_quantity_t *a, const adm_quantity_t *b)
{
    return cmp_exact(a->unscaled, a->scale, b->unscaled, b->scale);
}

int adm_quantity_cmp_int64(const adm_quantity_t *a, int64_t v)
{
    return cmp_exact(a->unscaled, a->scale, v, 0);
}

/* ---- arithmetic ---- */

/* int64Amount.Add: false when it overflows (then apimachinery switches to inf.Dec). */
static bool int_add(adm_quantity_t *a, int64_t bv, int32_t bs)
{
    int64_t av = (int64_t)a->unscaled, c;

    if (bv == 0) {
        return true;
    }
    if (av == 0) {
        a->unscaled = bv;
        a->scale = bs;
        return true;
    }
    if (a->scale == bs) {
        if (!i64_add(av, bv, &c)) {
            return false;
        }
    } else if (a->scale > bs) {
        if (!pos_scale(av, (int64_t)a->scale - bs, &c) || !i64_add(c, bv, &c)) {
            return false;
        }
        a->scale = bs;
    } else {
        if (!pos_scale(bv, (int64_t)bs - a->scale, &c) || !i64_add(av, c, &c)) {
            return false;
        }
    }
    a->unscaled = c;
    return true;
}

/* inf.Dec addition: the result has the finer of the two scales. */
static int dec_add(adm_quantity_t *q, adm_i128 y, int32_t ys)
{
    adm_i128 a = q->unscaled, b = y;
    int32_t s = q->scale < ys ? q->scale : ys;

    if (!mul_pow10(a, (int64_t)q->scale - s, &a) || !mul_pow10(b, (int64_t)ys - s, &b)) {
        return ADM_ETOOBIG;
    }
    if ((a > 0 && b > I128_MAX - a) || (a < 0 && b < -I128_MAX - a)) {
        return ADM_ETOOBIG;
    }
    q->unscaled = a + b;
    q->scale = s;
    q->dec = true;
    return 0;
}

int adm_quantity_add(adm_quantity_t *q, const adm_quantity_t *y)
{
    adm_quantity_t saved = *q;
    int err;

    q->verbatim = NULL;
    q->verbatim_len = 0;
    if (!q->dec && !y->dec) {
        if (q->unscaled == 0) {
            q->format = y->format;
        }
        if (int_add(q, (int64_t)y->unscaled, y->scale)) {
            return 0;
        }
    } else if (q->unscaled == 0) {
        q->format = y->format;
    }
    err = dec_add(q, y->unscaled, y->scale);
    if (err != 0) {
        *q = saved;
    }
    return err;
}

int adm_quantity_sub(adm_quantity_t *q, const adm_quantity_t *y)
{
    adm_quantity_t saved = *q;
    int err;

    q->verbatim = NULL;
    q->verbatim_len = 0;
    if (q->unscaled == 0) {
        q->format = y->format;
    }
    /* Go negates the int64 in place, so -MinInt64 stays MinInt64 (and then fails to add). */
    if (!q->dec && !y->dec && int_add(q, wrap64(0 - (uint64_t)(int64_t)y->unscaled), y->scale)) {
        return 0;
    }
    err = dec_add(q, -y->unscaled, y->scale);
    if (err != 0) {
        *q = saved;
    }
    return err;
}

void adm_quantity_neg(adm_quantity_t *q)
{
    q->verbatim = NULL;
    q->verbatim_len = 0;
    if (!q->dec) {
        q->unscaled = wrap64(0 - (uint64_t)(int64_t)q->unscaled);
        return;
    }
    q->unscaled = -q->unscaled;
}

/* big.Int.Int64(): the low 64 bits of the magnitude, with the sign applied. */
static int64_t big_int64(adm_i128 v)
{
    uint64_t low = (uint64_t)mag(v);

    return wrap64(v < 0 ? 0 - low : low);
}

int64_t adm_quantity_scaled_value(const adm_quantity_t *q, int32_t scale)
{
    int64_t dif, v;

    if (!q->dec) {
        /* int64Amount.AsScaledInt64: overflow gives 0. */
        bool exact;

        if (q->scale < scale) {
            return neg_scale((int64_t)q->unscaled, (int64_t)scale - q->scale, &exact);
        }
        if (!pos_scale((int64_t)q->unscaled, (int64_t)q->scale - scale, &v)) {
            return 0;
        }
        return v;
    }
    /* scaledValue(unscaled, infScale, newInfScale) with its int64 shortcuts and their wrapping. */
    dif = (int64_t)scale - q->scale;
    if (dif == 0) {
        return big_int64(q->unscaled);
    }
    if (dif < 0) {
        /* int64(math.Pow10(n)) is MinInt64 on amd64 once 10^n leaves int64. */
        uint64_t p = -dif <= 18 ? (uint64_t)pow10_u128((int)-dif) : (uint64_t)INT64_MIN;

        return wrap64((uint64_t)big_int64(q->unscaled) * p);
    }
    if (q->unscaled < INT64_MAX && dif < 19) {
        int64_t u = big_int64(q->unscaled), divide = (int64_t)pow10_u128((int)dif);

        return wrap64((uint64_t)(u / divide) + (u % divide != 0 ? 1 : 0));
    }
    /* big.Int.DivMod is Euclidean: floor division for a positive divisor. */
    if (dif > MAX_DIGITS_128) {
        return q->unscaled < 0 ? 0 : (q->unscaled != 0 ? 1 : 0);
    } else {
        adm_i128 d = (adm_i128)pow10_u128((int)dif), quo = q->unscaled / d, rem = q->unscaled % d;

        if (rem < 0) {
            quo -= 1;
            rem += d;
        }
        return wrap64((uint64_t)big_int64(quo) + (rem != 0 ? 1 : 0));
    }
}

bool adm_quantity_round_up(adm_quantity_t *q, int32_t scale)
{
    adm_i128 d, quo, rem;
    int64_t dif;

    if (q->dec) {
        /* inf.Dec.Round also rescales a coarser value to the finer scale. */
        q->verbatim = NULL;
        q->verbatim_len = 0;
        if (q->scale > scale && mul_pow10(q->unscaled, (int64_t)q->scale - scale, &d)) {
            q->unscaled = d;
            q->scale = scale;
        }
    }
    if (q->scale >= scale) {
        return true;
    }
    q->verbatim = NULL;
    q->verbatim_len = 0;
    dif = (int64_t)scale - q->scale;
    if (!q->dec) {
        bool exact;

        q->unscaled = neg_scale((int64_t)q->unscaled, dif, &exact);
        q->scale = scale;
        return exact;
    }
    if (dif > MAX_DIGITS_128) {
        bool exact = q->unscaled == 0;

        q->unscaled = q->unscaled > 0 ? 1 : (q->unscaled < 0 ? -1 : 0);
        q->scale = scale;
        return exact;
    }
    d = (adm_i128)pow10_u128((int)dif);
    quo = q->unscaled / d;
    rem = q->unscaled % d;
    if (rem != 0) {
        quo += q->unscaled > 0 ? 1 : -1;
    }
    q->unscaled = quo;
    q->scale = scale;
    return rem == 0;
}

/* ---- printing (CanonicalizeBytes) ---- */

static size_t put(char *buf, size_t cap, size_t at, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (at + i + 1 < cap) {
            buf[at + i] = s[i];
        }
    }
    return at + n;
}

static size_t put_u128(char *buf, size_t cap, size_t at, u128 v)
{
    char digits[48];
    size_t n = sizeof(digits);

    do {
        digits[--n] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    return put(buf, cap, at, digits + n, sizeof(digits) - n);
}

static size_t finish(char *buf, size_t cap, size_t len)
{
    if (cap > 0) {
        buf[len < cap ? len : cap - 1] = '\0';
    }
    return len;
}

static const char *dec_suffix(int32_t exponent)
{
    for (size_t i = 0; i < sizeof(DEC_SUFFIXES) / sizeof(DEC_SUFFIXES[0]); i++) {
        if (DEC_SUFFIXES[i].exponent == exponent) {
            return DEC_SUFFIXES[i].suffix;
        }
    }
    return ""; /* apimachinery prints no suffix for exponents it has no name for */
}

size_t adm_quantity_format(const adm_quantity_t *q, char *buf, size_t cap)
{
    adm_qty_format_t format = q->format;
    size_t len = 0;
    u128 m;
    int64_t exponent;
    adm_quantity_t rounded = *q;

    if (q->verbatim != NULL) {
        return finish(buf, cap, put(buf, cap, 0, q->verbatim, q->verbatim_len));
    }
    if (q->unscaled == 0) {
        return finish(buf, cap, put(buf, cap, 0, "0", 1));
    }
    if (format == ADM_QTY_BINARY_SI) {
        if (adm_quantity_cmp_int64(q, -1024) > 0 && adm_quantity_cmp_int64(q, 1024) < 0) {
            format = ADM_QTY_DECIMAL_SI;
        } else if (!adm_quantity_round_up(&rounded, 0) ||
                   !mul_pow10(rounded.unscaled, rounded.scale, &rounded.unscaled)) {
            /* Not a whole number (or, only through adm_quantity_scaled, too large to hold). */
            format = ADM_QTY_DECIMAL_SI;
        }
    }
    if (q->unscaled < 0) {
        len = put(buf, cap, len, "-", 1);
    }
    if (format == ADM_QTY_BINARY_SI) {
        int times = 0;

        m = mag(rounded.unscaled);
        while (m >= 1024 && m % 1024 == 0) {
            m /= 1024;
            times++;
        }
        len = put_u128(buf, cap, len, m);
        if (times >= 1 && times <= 6) {
            len = put(buf, cap, len, BIN_SUFFIXES[times], 2);
        }
        return finish(buf, cap, len);
    }
    m = mag(q->unscaled);
    exponent = q->scale;
    while (m % 10 == 0) {
        m /= 10;
        exponent++;
    }
    len = put_u128(buf, cap, len, m);
    while (exponent % 3 != 0) {
        len = put(buf, cap, len, "0", 1);
        exponent--;
    }
    exponent = wrap32(exponent);
    if (format == ADM_QTY_DECIMAL_SI) {
        const char *suffix = dec_suffix((int32_t)exponent);

        len = put(buf, cap, len, suffix, strlen(suffix));
    } else if (exponent != 0) {
        char e[16];
        int n = snprintf(e, sizeof(e), "e%d", (int)exponent);

        len = put(buf, cap, len, e, (size_t)n);
    }
    return finish(buf, cap, len);
}

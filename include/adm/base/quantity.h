/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes' resource.Quantity (k8s.io/apimachinery/pkg/api/resource): parsing, canonical
 * printing, comparison and arithmetic with apimachinery's results, rounding and quirks. Like
 * apimachinery a quantity is held either as an int64 with a decimal scale (what most parses give)
 * or as an arbitrary decimal (inf.Dec); which one matters for a few observable results
 * (ScaledValue's rounding of negative values, the input kept verbatim), so both are mirrored. The
 * decimal form is bounded here by a 128-bit unscaled value: a quantity or sum that apimachinery
 * would hold with more than about 38 significant digits is ADM_ETOOBIG (README: what differs).
 */
#ifndef ADM_QUANTITY_H
#define ADM_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

__extension__ typedef __int128 adm_i128;

/** The suffix family a quantity prints with (apimachinery's Format). */
typedef enum adm_qty_format_e {
    ADM_QTY_DECIMAL_SI = 0,   /* 12M, 100m */
    ADM_QTY_BINARY_SI,        /* 12Mi */
    ADM_QTY_DECIMAL_EXPONENT, /* 12e6 */
} adm_qty_format_t;

/** apimachinery's Scale constants: a value is unscaled * 10^scale. */
#define ADM_QTY_NANO (-9)
#define ADM_QTY_MILLI (-3)

/** The largest value MilliValue() can give without overflow (apimachinery's MaxMilliValue). */
#define ADM_QTY_MAX_MILLI_VALUE (INT64_MAX / 1000)

/** A quantity. Zero-filled storage is the quantity 0 (DecimalSI). Copy by assignment. */
typedef struct adm_quantity_s {
    adm_i128 unscaled;       /* value = unscaled * 10^scale; fits int64 unless dec */
    int32_t scale;           /* apimachinery's Scale (the negative of inf.Dec's scale) */
    adm_qty_format_t format; /* the suffix family it prints with */
    bool dec;                /* held as apimachinery's inf.Dec rather than its int64Amount */
    const char *verbatim;    /* parse input apimachinery keeps as its string form; borrowed */
    size_t verbatim_len;     /* its length (no NUL needed) */
} adm_quantity_t;

/**
 * Parses s[0..len) as ParseQuantity does. On success returns 0; q may keep a pointer to s (its
 * string form when the input is already canonical), so s must outlive q wherever q is printed.
 * On failure returns ADM_EINVAL with *problem apimachinery's error text (ErrFormatWrong,
 * ErrNumeric or ErrSuffix), or ADM_ETOOBIG (*problem says so) when the value needs more than the
 * 128-bit decimal form holds.
 */
int adm_quantity_parse(const char *s, size_t len, adm_quantity_t *q, const char **problem);

/**
 * Forgets the parses adm_quantity_parse keeps per thread (it answers a text it parsed lately from
 * memory): for tests that compare a remembered answer with a fresh one.
 */
void adm_quantity_memo_reset(void);

/** adm_quantity_parse() on a NUL-terminated string, without the error text. */
int adm_quantity_parse_str(const char *s, adm_quantity_t *q);

/** A quantity of value * 10^scale held as apimachinery's int64Amount (NewScaledQuantity etc.). */
adm_quantity_t adm_quantity_scaled(int64_t value, int32_t scale, adm_qty_format_t format);

/**
 * Writes Quantity.String() into buf (always NUL-terminated when cap > 0) and returns the length
 * of the full string (snprintf's contract). ADM_QTY_STR_MAX bytes always suffice unless the
 * quantity keeps a longer verbatim input.
 */
size_t adm_quantity_format(const adm_quantity_t *q, char *buf, size_t cap);
#define ADM_QTY_STR_MAX 64

/** Cmp: -1, 0 or 1 as a < b, a == b, a > b (exact). */
int adm_quantity_cmp(const adm_quantity_t *a, const adm_quantity_t *b);

/** CmpInt64. */
int adm_quantity_cmp_int64(const adm_quantity_t *a, int64_t v);

/** -1, 0 or 1. */
int adm_quantity_sign(const adm_quantity_t *q);

static inline bool adm_quantity_is_zero(const adm_quantity_t *q)
{
    return q->unscaled == 0;
}

/**
 * q += y and q -= y with apimachinery's format rules (a zero q takes y's format). Returns 0, or
 * ADM_ETOOBIG (q unchanged) when the exact result leaves the 128-bit decimal form.
 */
int adm_quantity_add(adm_quantity_t *q, const adm_quantity_t *y);
int adm_quantity_sub(adm_quantity_t *q, const adm_quantity_t *y);

/** Neg. */
void adm_quantity_neg(adm_quantity_t *q);

/**
 * ScaledValue(scale): the value in units of 10^scale, rounded up, with apimachinery's int64
 * results where it overflows (0 for the int64 form; wrapped bits for the decimal form).
 */
int64_t adm_quantity_scaled_value(const adm_quantity_t *q, int32_t scale);

static inline int64_t adm_quantity_value(const adm_quantity_t *q)
{
    return adm_quantity_scaled_value(q, 0);
}
static inline int64_t adm_quantity_milli_value(const adm_quantity_t *q)
{
    return adm_quantity_scaled_value(q, ADM_QTY_MILLI);
}

/**
 * RoundUp(scale): rounds away from zero to a multiple of 10^scale when q has finer digits;
 * returns true when nothing was lost.
 */
bool adm_quantity_round_up(adm_quantity_t *q, int32_t scale);

#endif

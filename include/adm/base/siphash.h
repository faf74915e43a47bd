/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SipHash-2-4 (Aumasson and Bernstein), the keyed hash for tables whose keys clients choose: with
 * a secret random key nobody can pick keys that all land in one chain.
 */
#ifndef ADM_SIPHASH_H
#define ADM_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/**
 * SipHash-2-4 of len bytes at data under a 128-bit key: key[0] is the first eight key bytes read
 * as a little-endian number, key[1] the next eight (the reference's k0 and k1).
 */
uint64_t adm_siphash24(const uint64_t key[2], const void *data, size_t len);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SipHash-2-4: two compression rounds per eight-byte word of the message (read little-endian),
 * the length in the top byte of the last word, four finalisation rounds. Written from the
 * algorithm's description; tests/unit/base/test-siphash.c checks it against the published vectors.
 */
#include "adm/base/siphash.h"

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = rotl(v[1], 13) ^ v[0];
    v[0] = rotl(v[0], 32);
    v[2] += v[3];
    v[3] = rotl(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = rotl(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = rotl(v[1], 17) ^ v[2];
    v[2] = rotl(v[2], 32);
}

uint64_t adm_siphash24(const uint64_t key[2], const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v[4] = {key[0] ^ UINT64_C(0x736f6d6570736575), key[1] ^ UINT64_C(0x646f72616e646f6d),
                     key[0] ^ UINT64_C(0x6c7967656e657261), key[1] ^ UINT64_C(0x7465646279746573)};
    uint64_t m;
    size_t whole = len - len % 8;
    size_t i;
    int j;

    for (i = 0; i < whole; i += 8) {
        m = 0;
        for (j = 0; j < 8; j++) {
            m |= (uint64_t)p[i + (size_t)j] << (8 * j);
        }
        v[3] ^= m;
        sip_round(v);
        sip_round(v);
        v[0] ^= m;
    }
    m = (uint64_t)len << 56;
    for (j = 0; i + (size_t)j < len; j++) {
        m |= (uint64_t)p[i + (size_t)j] << (8 * j);
    }
    v[3] ^= m;
    sip_round(v);
    sip_round(v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for (j = 0; j < 4; j++) {
        sip_round(v);
    }
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

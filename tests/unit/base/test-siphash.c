/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SipHash-2-4 against the published test vectors (key 00 01 .. 0f, message 00 01 .. of each
 * length; the 15-byte one is the paper's worked example), which cover messages shorter than,
 * exactly and past one eight-byte word, and that the key matters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adm/base/siphash.h"

static void test_vectors(void **state)
{
    static const struct {
        size_t len;
        uint64_t hash;
    } vectors[] = {
        {0, UINT64_C(0x726fdb47dd0e0e31)},  {1, UINT64_C(0x74f839c593dc67fd)},
        {2, UINT64_C(0x0d6c8009d9a94f5a)},  {3, UINT64_C(0x85676696d7fb7e2d)},
        {7, UINT64_C(0xab0200f58b01d137)},  {8, UINT64_C(0x93f5f5799a932462)},
        {15, UINT64_C(0xa129ca6149be45e5)}, {63, UINT64_C(0x958a324ceb064572)},
    };
    /* bytes 00..07 and 08..0f read little-endian */
    const uint64_t key[2] = {UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908)};
    unsigned char msg[64];

    for (size_t i = 0; i < sizeof(msg); i++) {
        msg[i] = (unsigned char)i;
    }
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        assert_int_equal(adm_siphash24(key, msg, vectors[i].len), vectors[i].hash);
    }
}

static void test_key_matters(void **state)
{
    const uint64_t k1[2] = {1, 2};
    const uint64_t k2[2] = {1, 3};

    assert_int_not_equal(adm_siphash24(k1, "namespace", 9), adm_siphash24(k2, "namespace", 9));
    assert_int_equal(adm_siphash24(k1, "namespace", 9), adm_siphash24(k1, "namespace", 9));
    /* a NUL is part of the message */
    assert_int_not_equal(adm_siphash24(k1, "a\0b", 3), adm_siphash24(k1, "a", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_key_matters),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

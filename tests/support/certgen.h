/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test certificates made at run time with mbedTLS (no key material is committed): a CA, and
 * leaf certificates it signs, written as DIR/NAME.crt.pem and DIR/NAME.key.pem.
 */
#ifndef ADM_TEST_CERTGEN_H
#define ADM_TEST_CERTGEN_H

#include <stdbool.h>

/**
 * Makes NAME with common name cn. issuer NULL: a self-signed CA. Otherwise a leaf signed by the CA
 * DIR/ISSUER.*.pem, for TLS clients (client_auth) or servers (with SANs localhost, 127.0.0.1 and cn).
 * Returns 0 or -1.
 */
int certgen_make(const char *dir, const char *name, const char *cn, const char *issuer, bool client_auth);

/** Makes a fresh temporary directory (mkdtemp) into out; returns 0 or -1. */
int certgen_tempdir(char *out, unsigned long out_len);

/** Removes a directory made by certgen_tempdir and the files in it. */
void certgen_rmdir(const char *dir);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the resource.Quantity parser: arbitrary bytes either parse or fail with
 * apimachinery's error text; a parsed quantity prints text that parses again, and arithmetic on
 * it never crashes (sums too large for admitd say ADM_ETOOBIG). A parse answered from the
 * per-thread memory (the same text again, after other texts filled its set) is the fresh one.
 */
#include "adm/base/error.h"
#include "adm/base/quantity.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_quantity_t q, back, sum;
    const char *problem = NULL;
    char text[ADM_QTY_STR_MAX];
    int rc;

    rc = adm_quantity_parse((const char *)data, size, &q, &problem);
    {
        adm_quantity_t again;
        const char *why = NULL;
        char other[8];

        /* texts that may share the input's set, then the input from memory when it is still there */
        for (unsigned i = 0; i < 8; i++) {
            size_t n =
                (size_t)snprintf(other, sizeof(other), "%u%c", (unsigned)((i + size) % 1000), "mkMGi"[i % 5]);

            (void)adm_quantity_parse(other, n, &again, &why);
        }
        if (adm_quantity_parse((const char *)data, size, &again, &why) != rc ||
            (rc == 0 &&
             (adm_quantity_cmp(&again, &q) != 0 || again.format != q.format || again.dec != q.dec ||
              again.verbatim_len != q.verbatim_len || (q.verbatim != NULL) != (again.verbatim != NULL))) ||
            (rc != 0 && (why == NULL || strcmp(why, problem) != 0))) {
            abort();
        }
    }
    if (rc != 0) {
        if ((rc != ADM_EINVAL && rc != ADM_ETOOBIG) || problem == NULL) {
            abort();
        }
        return 0;
    }
    q.verbatim = NULL; /* print the canonical form */
    if (adm_quantity_format(&q, text, sizeof(text)) >= sizeof(text)) {
        abort();
    }
    rc = adm_quantity_parse(text, strlen(text), &back, &problem);
    if (rc == ADM_EINVAL) {
        abort();
    }
    sum = q;
    if (adm_quantity_add(&sum, &q) == 0 && adm_quantity_sub(&sum, &q) == 0 &&
        adm_quantity_cmp(&sum, &q) != 0) {
        abort();
    }
    (void)adm_quantity_value(&q);
    (void)adm_quantity_milli_value(&q);
    (void)adm_quantity_scaled_value(&q, -9);
    (void)adm_quantity_round_up(&sum, 0);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the YAML/JSON configuration loader: arbitrary bytes either parse into
 * documents that yyjson can write back, or fail with a one-line message; never a crash, a hang or
 * unbounded memory (aliases are budgeted, nesting is capped).
 */
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/base/yaml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(4096);
    yyjson_val **docs;
    size_t ndocs;
    char err[256] = "";
    int rc;

    if (a == NULL) {
        abort();
    }
    rc = adm_yaml_parse(a, (const char *)data, size, &docs, &ndocs, err, sizeof(err));
    if (rc == 0) {
        yyjson_alc alc;

        adm_json_alc_init(&alc, a);
        for (size_t i = 0; i < ndocs; i++) {
            if (docs[i] == NULL ||
                yyjson_val_write_opts(docs[i], YYJSON_WRITE_INF_AND_NAN_AS_NULL, &alc, NULL, NULL) == NULL) {
                abort();
            }
        }
    } else if (rc == ADM_EPARSE && (err[0] == '\0' || strchr(err, '\n') != NULL)) {
        abort(); /* an error must be one line */
    } else if (rc != ADM_EPARSE && rc != ADM_ENOMEM) {
        abort();
    }
    adm_arena_destroy(a);
    return 0;
}

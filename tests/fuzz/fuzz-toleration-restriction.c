/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for PodTolerationRestriction's toleration decoding and validation: the input,
 * when it is JSON, is the configuration's `default` and `whitelist` (the decoder namespace
 * annotations go through too). configure must answer 0 or one line of error, never crash or leak.
 */
#include "adm/admission/plugin.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const adm_plugin_t adm_plugin_pod_toleration_restriction;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(16384);
    yyjson_read_err rerr;
    yyjson_doc *in;
    yyjson_mut_doc *cfg;
    yyjson_doc *doc;
    yyjson_mut_val *root;
    adm_plugin_config_t pc = {0};
    char err[512];
    void *state = NULL;
    yyjson_alc alc;
    int rc;

    if (a == NULL) {
        abort();
    }
    in = adm_json_read(a, (const char *)data, size, &rerr);
    adm_json_alc_init(&alc, a);
    cfg = yyjson_mut_doc_new(&alc);
    root = cfg != NULL ? yyjson_mut_obj(cfg) : NULL;
    if (in == NULL || root == NULL) {
        adm_arena_destroy(a);
        return 0;
    }
    yyjson_mut_doc_set_root(cfg, root);
    if (!yyjson_mut_obj_add_str(cfg, root, "apiVersion", "podtolerationrestriction.admission.k8s.io/v1") ||
        !yyjson_mut_obj_add_str(cfg, root, "kind", "Configuration") ||
        !yyjson_mut_obj_add_val(cfg, root, "default", yyjson_val_mut_copy(cfg, yyjson_doc_get_root(in))) ||
        !yyjson_mut_obj_add_val(cfg, root, "whitelist", yyjson_val_mut_copy(cfg, yyjson_doc_get_root(in)))) {
        abort();
    }
    doc = yyjson_mut_doc_imut_copy(cfg, &alc);
    if (doc == NULL) {
        abort();
    }
    pc.config = yyjson_doc_get_root(doc);
    pc.source = "fuzz.yaml";
    rc = adm_plugin_pod_toleration_restriction.configure(&pc, &state, err, sizeof(err));
    if (rc == 0) {
        adm_plugin_pod_toleration_restriction.free_state(state);
    } else if (rc != ADM_EINVAL || strncmp(err, "fuzz.yaml: ", 11) != 0 || strchr(err, '\n') != NULL) {
        abort();
    }
    adm_arena_destroy(a);
    return 0;
}

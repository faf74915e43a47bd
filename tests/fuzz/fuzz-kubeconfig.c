/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the kubeconfig reader (adm/cluster/kubeconfig_file.h): arbitrary bytes are
 * read as a kubeconfig, then every entry of its three lists is asked for every member admitd's two
 * callers read (strings, booleans, file/-data pairs decoded from base64, refusals, impersonation).
 * Each answer is a value or one line naming the file and field; never a crash, a hang or a leak.
 * No file named inside is read (that is the callers' step, through the file system).
 */
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/cluster/kubeconfig_file.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err)
{
    if (err[0] == '\0' || strchr(err, '\n') != NULL || strncmp(err, "kc.yaml: ", 9) != 0) {
        abort();
    }
}

static void members(adm_kubeconfig_file_t *f, const adm_kc_entry_t *e, char *err)
{
    static const char *const strings[] = {"server",   "tls-server-name", "proxy-url", "token", "tokenFile",
                                          "username", "password",        "cluster",   "user",  "namespace"};
    static const char *const pairs[][2] = {{"certificate-authority", "certificate-authority-data"},
                                           {"client-certificate", "client-certificate-data"},
                                           {"client-key", "client-key-data"}};
    const char *s;
    adm_kc_blob_t b;
    bool on;

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        err[0] = '\0';
        if (adm_kc_string(f, e->body, e->field, strings[i], &s) != 0) {
            one_line(err);
        } else if (s != NULL && s[0] == '\0') {
            abort(); /* "" is reported as absent */
        }
    }
    err[0] = '\0';
    if (adm_kc_bool(f, e->body, e->field, "insecure-skip-tls-verify", &on) != 0) {
        one_line(err);
    }
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        int rc;

        err[0] = '\0';
        rc = adm_kc_blob(f, e->body, e->field, pairs[i][0], pairs[i][1], &b);
        if (rc == ADM_EINVAL) {
            one_line(err);
        } else if (rc == 0 && b.data != NULL && (b.data[b.len] != '\0' || b.file != NULL)) {
            abort();
        } else if (rc != 0 && rc != ADM_ENOMEM) {
            abort();
        }
    }
    err[0] = '\0';
    if (adm_kc_refuse(f, e->body, e->field, "exec", "no") != 0) {
        one_line(err);
    }
    (void)adm_kc_impersonation(e->body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adm_arena_t *a = adm_arena_create(4096);
    adm_kubeconfig_file_t f;
    char err[512] = "";
    const adm_kc_list_t *lists[3];
    int rc;

    if (a == NULL) {
        abort();
    }
    rc = adm_kc_parse(a, "kc.yaml", (const char *)data, size, &f, err, sizeof(err));
    if (rc == 0) {
        lists[0] = &f.clusters;
        lists[1] = &f.users;
        lists[2] = &f.contexts;
        for (size_t l = 0; l < 3; l++) {
            for (size_t i = 0; i < lists[l]->n; i++) {
                const adm_kc_entry_t *e = &lists[l]->entries[i];

                if (e->index != i || (e->name != NULL && adm_kc_find(lists[l], e->name) == NULL)) {
                    abort();
                }
                members(&f, e, err);
            }
        }
    } else if (rc == ADM_EPARSE) {
        one_line(err);
    } else if (rc != ADM_ENOMEM) {
        abort();
    }
    adm_arena_destroy(a);
    return 0;
}

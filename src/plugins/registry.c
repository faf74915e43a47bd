/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugin registry, generated from plugins.def: every plugin kube-apiserver knows, in its
 * order, and the lookups, the --list-plugins table and the declaration of the plugins' flags
 * built on it.
 */
#include "adm/admission/plugin.h"

#include <assert.h>
#include <string.h>

#define IMPLEMENTED(name, def, type, sym) extern const adm_plugin_t sym;
#define KNOWN(name, def, type)
#include "plugins.def"
#undef IMPLEMENTED
#undef KNOWN

static const adm_plugin_info_t registry[] = {
#define IMPLEMENTED(name, def, type, sym) {#name, def, type, &sym},
#define KNOWN(name, def, type) {#name, def, type, NULL},
#include "plugins.def"
#undef IMPLEMENTED
#undef KNOWN
};

const adm_plugin_info_t *adm_plugin_registry(size_t *count)
{
    *count = sizeof(registry) / sizeof(registry[0]);
    return registry;
}

const adm_plugin_info_t *adm_plugin_find(const char *name)
{
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        if (strcmp(registry[i].name, name) == 0) {
            return &registry[i];
        }
    }
    return NULL;
}

void adm_plugin_list(FILE *out)
{
    fprintf(out, "%-37s %-21s %-8s %s\n", "PLUGIN", "TYPE", "DEFAULT", "IMPLEMENTED");
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        const adm_plugin_info_t *p = &registry[i];

        fprintf(out, "%-37s %-21s %-8s %s\n", p->name, p->type, p->default_on ? "on" : "off",
                p->plugin != NULL ? "yes" : "not implemented");
    }
}

void adm_plugin_declare_options(adm_options_t *o)
{
    char err[256];
    int rc;

    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        if (registry[i].plugin == NULL) {
            continue;
        }
        rc = adm_options_declare(o, registry[i].name, registry[i].plugin->options, err, sizeof(err));
        assert(rc == 0);
        (void)rc;
    }
}

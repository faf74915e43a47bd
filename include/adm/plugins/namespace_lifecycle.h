/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NamespaceLifecycle's one outside hook: the live reader its forced and missing-namespace lookups
 * go through (the --cluster-state files until admitd has an API client; a test's fake reader).
 */
#ifndef ADM_PLUGINS_NAMESPACE_LIFECYCLE_H
#define ADM_PLUGINS_NAMESPACE_LIFECYCLE_H

#include "adm/plugins/lookup.h"

/** Makes NamespaceLifecycle (state from its configure) read live namespaces through r (copied). */
void adm_namespace_lifecycle_set_live_reader(void *state, const adm_live_reader_t *r);

#endif

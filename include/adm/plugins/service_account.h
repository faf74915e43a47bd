/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ServiceAccount's one outside hook: the random suffix of the kube-api-access-XXXXX volume name
 * (getrandom by default; a test fixes it to compare objects exactly).
 */
#ifndef ADM_PLUGINS_SERVICE_ACCOUNT_H
#define ADM_PLUGINS_SERVICE_ACCOUNT_H

/* Writes 5 characters and a NUL into out. */
typedef void (*adm_sa_suffix_fn)(char out[6]);

/** Makes ServiceAccount (state from its configure) name new token volumes with fn. */
void adm_service_account_set_suffix(void *state, adm_sa_suffix_fn fn);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The equivalence classes of kube-apiserver's built-in resources, as read from kubernetes sources
 * (k8s.io/kubernetes, k8s.io/apiserver and k8s.io/api, up to the 1.37 development line, 2026-07).
 *
 * What is served by default: pkg/controlplane/instance.go enables the GroupVersions in
 * stableAPIGroupVersionsEnabledByDefault and the resources in legacyBetaEnabledByDefaultResources;
 * every other version is off (k8s.io/apiserver pkg/server/storage/resource_config.go treats an
 * unlisted version as disabled), and since 1.24 no new beta API is on by default (KEP-3136).
 *
 * What is equivalent: k8s.io/apiserver pkg/server/config.go keys its EquivalentResourceRegistry by
 * the storage prefix of each group/resource (RESTOptions.ResourcePrefix), which
 * pkg/server/storage/storage_factory.go derives from the resource name, or from the first
 * cohabitating resource whose group is served. So every served version of one group/resource is a
 * class, and pkg/kubeapiserver/default_storage_factory_builder.go's AddCohabitatingResources joins
 * groups: of its pairs only core events / events.k8s.io events still has both groups served (the
 * others pair a group with extensions, which is no longer served).
 *
 * Checked and left out, because the newest release serves one version of them by default (the
 * betas named are off by default): resource.k8s.io (v1 from 1.34; v1beta1, v1beta2),
 * storage.k8s.io volumeattributesclasses (v1 from 1.34; v1beta1), networking.k8s.io ipaddresses and
 * servicecidrs (v1 from 1.33; v1beta1), admissionregistration.k8s.io validating and mutating
 * admission policies and bindings (v1; v1beta1), coordination.k8s.io leases (v1) and
 * leasecandidates (v1beta1), certificates.k8s.io (v1; clustertrustbundles and
 * podcertificaterequests v1beta1), storagemigration.k8s.io (v1beta1), every other group (one GA
 * version). Versions removed before 1.31 (apps and extensions betas, autoscaling v2beta1/v2beta2,
 * events.k8s.io v1beta1, flowcontrol v1beta1/v1beta2, ...) are not served by any supported release.
 */
#include "adm/webhook/api_equivalents.h"

/*
 * autoscaling/v1 (GA 1.2) and autoscaling/v2 (GA 1.23), both in stableAPIGroupVersionsEnabledByDefault;
 * pkg/registry/autoscaling/rest/storage_autoscaling.go serves horizontalpodautoscalers/status in both.
 */
static const adm_api_member_t hpa[] = {
    {{"autoscaling", "v1", "horizontalpodautoscalers"}, 0},
    {{"autoscaling", "v2", "horizontalpodautoscalers"}, 0},
};

/*
 * Core v1 events and events.k8s.io/v1 events (GA 1.19) share storage through
 * AddCohabitatingResources(api.Resource("events"), events.Resource("events")), the one
 * cross-group class. Neither has subresources.
 */
static const adm_api_member_t events[] = {
    {{"", "v1", "events"}, 0},
    {{"events.k8s.io", "v1", "events"}, 0},
};

/*
 * flowcontrol.apiserver.k8s.io/v1 (GA 1.29) and v1beta3, kept on by default through
 * legacyBetaEnabledByDefaultResources ("deprecate in 1.29, remove in 1.32"; k8s.io/api's
 * prerelease lifecycle: introduced 1.26, removed 1.32). So 1.29 to 1.31 serve both; the newest
 * release serves v1 only, and these classes have a single served member there.
 * pkg/registry/flowcontrol/rest/storage_flowcontrol.go serves a status subresource for each.
 */
static const adm_api_member_t flowschemas[] = {
    {{"flowcontrol.apiserver.k8s.io", "v1", "flowschemas"}, 0},
    {{"flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas"}, 31},
};
static const adm_api_member_t priority_levels[] = {
    {{"flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations"}, 0},
    {{"flowcontrol.apiserver.k8s.io", "v1beta3", "prioritylevelconfigurations"}, 31},
};

static const char *const status_only[] = {"status"};

#define MEMBERS(m) (m), sizeof(m) / sizeof((m)[0])

static const adm_api_class_t classes[] = {
    {MEMBERS(hpa), status_only, 1, true},
    {MEMBERS(events), NULL, 0, true},
    {MEMBERS(flowschemas), status_only, 1, false},
    {MEMBERS(priority_levels), status_only, 1, false},
};

const adm_api_class_t *adm_api_equivalent_classes(size_t *n)
{
    *n = sizeof(classes) / sizeof(classes[0]);
    return classes;
}

bool adm_api_member_served(const adm_api_member_t *m)
{
    return m->last_minor == 0;
}

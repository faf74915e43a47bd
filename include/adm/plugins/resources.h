/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceLists as the plugins that count resources read and add them (LimitRanger, ResourceQuota,
 * PodTolerationRestriction): quantities decoded as Quantity.UnmarshalJSON decodes them, lists
 * summed and maxed as component-helpers' addResourceList/maxResourceList, a pod's total requests or
 * limits as its PodRequests/PodLimits (without overhead), and a pod's QoS class as kube's
 * qos.GetPodQOS decides BestEffort. Everything lives in the request's arena.
 */
#ifndef ADM_PLUGINS_RESOURCES_H
#define ADM_PLUGINS_RESOURCES_H

#include "adm/base/arena.h"
#include "adm/base/quantity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

/* A ResourceList: names in the JSON object's order (Go iterates its map in random order). */
typedef struct adm_rlist_s {
    const char **names; /* borrowed: the JSON document's strings or arena text */
    adm_quantity_t *qs;
    size_t n, cap;
} adm_rlist_t;

/*
 * The resource names the counting plugins look for, interned: adm_rlist_read gives a list these
 * pointers for the names it knows, and looking one of them up in such a list is a comparison of
 * pointers (two different interned names are different without a strcmp). Any other string of
 * the same text still finds them, by strcmp.
 */
typedef enum adm_res_e {
    ADM_RES_CPU,
    ADM_RES_MEMORY,
    ADM_RES_EPHEMERAL_STORAGE,
    ADM_RES_PODS,
    ADM_RES_COUNT_PODS,
    ADM_RES_REQUESTS_CPU,
    ADM_RES_REQUESTS_MEMORY,
    ADM_RES_REQUESTS_EPHEMERAL_STORAGE,
    ADM_RES_LIMITS_CPU,
    ADM_RES_LIMITS_MEMORY,
    ADM_RES_LIMITS_EPHEMERAL_STORAGE,
    ADM_RES_STORAGE,
    ADM_RES_REQUESTS_STORAGE,
    ADM_RES_COUNT /* how many */
} adm_res_t;

#define ADM_RES_NAME_MAX 32
extern const char adm_res_names[ADM_RES_COUNT][ADM_RES_NAME_MAX];

/** The interned name id ("cpu" for ADM_RES_CPU). */
static inline const char *adm_res(adm_res_t id)
{
    return adm_res_names[id];
}

/*
 * The names nearly every ResourceList holds, ADM_RES_CPU, ADM_RES_MEMORY and
 * ADM_RES_EPHEMERAL_STORAGE (the first ids), kept in fixed slots by the code that reads the same
 * lists many times: its slot is the id.
 */
#define ADM_RES_SLOTS 3

/** The slot (its adm_res_t) of an interned cpu, memory or ephemeral-storage pointer, else -1. */
static inline int adm_res_slot(const char *name)
{
    uintptr_t off = (uintptr_t)name - (uintptr_t)adm_res_names[0];

    return off < ADM_RES_SLOTS * ADM_RES_NAME_MAX && off % ADM_RES_NAME_MAX == 0
               ? (int)(off / ADM_RES_NAME_MAX)
               : -1;
}

/** name's interned pointer when it is one of adm_res_t's names, else name. */
const char *adm_res_intern(const char *name);

/** The quantity of name in l, or NULL. */
adm_quantity_t *adm_rlist_find(const adm_rlist_t *l, const char *name);

/** Sets name to q, replacing an entry of that name. Returns 0 or ADM_ENOMEM. */
int adm_rlist_set(adm_arena_t *a, adm_rlist_t *l, const char *name, const adm_quantity_t *q);

/** Adds name with q at the end of l, which must not hold name yet. Returns 0 or ADM_ENOMEM. */
int adm_rlist_append(adm_arena_t *a, adm_rlist_t *l, const char *name, const adm_quantity_t *q);

/** A copy of from whose arrays are its own, in a (so it may be changed). Returns 0 or ADM_ENOMEM. */
int adm_rlist_copy(adm_arena_t *a, const adm_rlist_t *from, adm_rlist_t *out);

/** addResourceList: into += from, a name seen first is copied. 0, ADM_ENOMEM, or ADM_ETOOBIG (a sum). */
int adm_rlist_add(adm_arena_t *a, adm_rlist_t *into, const adm_rlist_t *from);

/** maxResourceList: each of from's names in into is the larger of the two. 0 or ADM_ENOMEM. */
int adm_rlist_max(adm_arena_t *a, adm_rlist_t *into, const adm_rlist_t *from);

/**
 * A quantity as Quantity.UnmarshalJSON reads one: a JSON string, or a bare number (YAML's `cpu:
 * 1`) whose text is parsed the same way (that text lives in a, q may point at it). Returns 0,
 * ADM_ENOMEM, or another error with *problem apimachinery's reason.
 */
int adm_json_read_quantity(adm_arena_t *a, yyjson_val *v, adm_quantity_t *q, const char **problem);

/**
 * Reads a ResourceList object (NULL or absent: empty), its known names interned. Returns 0, ADM_ENOMEM, or
 * ADM_EINVAL with *bad the reason a value is not a quantity (kube-apiserver would not have decoded the
 * object).
 */
int adm_rlist_read(adm_arena_t *a, yyjson_val *obj, adm_rlist_t *out, const char **bad);

/**
 * Makes l's names and quantities' texts copies in a (l's arrays must be a's already), so that l
 * outlives the JSON it was read from. Returns 0 or ADM_ENOMEM.
 */
int adm_rlist_own(adm_arena_t *a, adm_rlist_t *l);

/**
 * adm_rlist_read of obj, read once in a's life: the list is shared by every caller in that life
 * (obj must not change while a lives: parsed values never do), so it must not be changed. *out is
 * an empty list for a NULL, absent or empty obj, and on an error.
 */
int adm_rlist_read_kept(adm_arena_t *a, yyjson_val *obj, const adm_rlist_t **out, const char **bad);

/**
 * The pod's total `which` ("requests" or "limits") as component-helpers' PodRequests/PodLimits
 * without overhead: regular containers plus sidecars (init containers with restartPolicy Always)
 * run together, each other init container with the sidecars started before it, and the pod needs
 * the larger; pod-level spec.resources (PodLevelResources, on since 1.34) then overrides cpu and
 * memory. Errors as adm_rlist_read and adm_rlist_add.
 *
 * The last pod's totals are remembered until its arena is reset (a request's plugins ask for the
 * same pod's several times), so pod must not change while a lives: parsed values never do. Its
 * containers' lists are read with adm_rlist_read_kept.
 */
int adm_pod_resource_total(adm_arena_t *a, yyjson_val *pod, const char *which, adm_rlist_t *out,
                           const char **bad);

/**
 * adm_pod_resource_total's requests and limits at once, as the request keeps them (no copies: they
 * must not be changed, and live as long as a). Returns the requests' error, else the limits'.
 */
int adm_pod_resource_totals_kept(adm_arena_t *a, yyjson_val *pod, const adm_rlist_t **requests,
                                 const adm_rlist_t **limits, const char **bad);

/** A list as the request read it (adm_rlist_read_kept's answer). */
typedef struct adm_kept_rlist_s {
    const adm_rlist_t *list; /* empty after an error */
    int err;                 /* 0, ADM_ENOMEM or ADM_EINVAL */
    const char *bad;         /* the reason when err is ADM_EINVAL */
} adm_kept_rlist_t;

/**
 * The requests and limits of pod's containers (spec.containers then spec.initContainers, in their
 * order), read in the walk that sums the pod's totals and kept with them (the same pod needs no
 * lookup per list, nor a second walk): (*lists)[2 * i] is container i's requests, [2 * i + 1] its
 * limits, each list with its own answer; *n is the number of containers. Returns 0 or ADM_ENOMEM.
 */
int adm_pod_container_lists_kept(adm_arena_t *a, yyjson_val *pod, const adm_kept_rlist_t **lists, size_t *n);

/**
 * component-helpers' IsPodLevelResourcesSet: spec.resources' requests or limits name cpu, memory or
 * a hugepages-* resource. Where PodLevelResources is on (1.34+), such a pod's totals are its
 * pod-level ones for those names.
 */
bool adm_pod_level_resources_set(yyjson_val *pod);

/**
 * qos.GetPodQOS(pod) == BestEffort: status.qosClass when set, else ComputePodQOS with the gates of
 * the newest kube (PodLevelResources and PodLevelResourcesFixKubeletQOSClass on): with a pod-level
 * cpu, memory or hugepages entry only spec.resources counts, else the containers and init
 * containers do; BestEffort when no cpu or memory there is above zero.
 */
bool adm_pod_qos_best_effort(yyjson_val *pod);

#endif

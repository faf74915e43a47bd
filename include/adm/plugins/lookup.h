/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the plugins that read cluster state share: the two reads kube's plugins make (their
 * informer's lister, then a live GET from the API server on a miss), and the Statuses those reads
 * end in (apierrors.NewNotFound, a StatusCause added to a Status).
 *
 * The live GET goes through adm_live_reader_t. Without an API connection (today) the reader is the
 * --cluster-state files themselves: they are both the cache and the storage, so a live GET answers
 * what the lister answered. A reader backed by an API client fills in the same function; plugins
 * decide first whether they need a live read (adm_live_needed-style logic stays in each plugin) and
 * call it in one place, so that place can later return ADM_AGAIN and resume.
 */
#ifndef ADM_PLUGINS_LOOKUP_H
#define ADM_PLUGINS_LOOKUP_H

#include "adm/admission/admission.h"

#include <yyjson.h>

/* What a live GET found. */
typedef enum { ADM_LIVE_FOUND, ADM_LIVE_NOT_FOUND, ADM_LIVE_ERROR } adm_live_result_t;

typedef struct adm_live_reader_s {
    /*
     * GET group/kind namespace_/name ("" namespace_ for cluster-scoped kinds) from the API server:
     * FOUND with *obj set, NOT_FOUND, or ERROR with *err set to the client's message (arena).
     */
    adm_live_result_t (*get)(void *arg, adm_attrs_t *attrs, const char *group, const char *kind,
                             const char *namespace_, const char *name, yyjson_val **obj, const char **err);
    void *arg;
} adm_live_reader_t;

/** The reader with no API connection: the request's cluster state (files) is the storage. */
extern const adm_live_reader_t adm_live_reader_files;

/** The object from the request's cluster state (the informer's lister), or NULL. */
yyjson_val *adm_lookup(adm_attrs_t *attrs, const char *group, const char *kind, const char *namespace_,
                       const char *name);

/** Every group/kind object of the request's cluster state, in load order (the lister's List). */
yyjson_val *const *adm_lookup_list(adm_attrs_t *attrs, const char *group, const char *kind, size_t *n);

/**
 * The default class among the group/kind objects (StorageClasses, IngressClasses): those with one
 * of the annotations (a NULL-ended list) equal to "true"; of several, the newest by
 * metadata.creationTimestamp, ties by name ascending (kube 1.26+). NULL when none is.
 */
yyjson_val *adm_lookup_default_class(adm_attrs_t *attrs, const char *group, const char *kind,
                                     const char *const *annotations);

/**
 * What DefaultStorageClass and DefaultIngressClass do once the object names no class: sets
 * spec.<field> to the name of the default group/kind class (adm_lookup_default_class), or leaves
 * the object alone when there is none. ADM_OK, or ADM_ENOMEM through st.
 */
int adm_lookup_set_default_class(adm_attrs_t *attrs, adm_status_t *st, const char *group, const char *kind,
                                 const char *const *annotations, const char *field);

/**
 * apierrors.NewNotFound(GroupResource{group, resource}, name): 404 NotFound,
 * `<resource>[.<group>] "<name>" not found`, details {name, group, kind: resource}. Returns
 * ADM_DECLINED, or ADM_ENOMEM.
 */
int adm_status_not_found(adm_status_t *st, adm_arena_t *a, const char *group, const char *resource,
                         const char *name);

/**
 * Appends a metav1.StatusCause {type, message, field} to st->details.causes (details created when
 * absent). Returns ADM_DECLINED, or ADM_ENOMEM.
 */
int adm_status_add_cause(adm_status_t *st, adm_arena_t *a, const char *type, const char *message,
                         const char *field);

#endif

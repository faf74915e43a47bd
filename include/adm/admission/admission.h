/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a compiled-in admission plugin sees and returns: the attributes of one request (with the
 * object as mutated so far), the Status a rejection carries, and the constructors that format
 * those Statuses exactly as kube-apiserver's admission and apimachinery errors do.
 *
 * Everything lives in the request's arena; nothing here is freed by hand.
 */
#ifndef ADM_ADMISSION_H
#define ADM_ADMISSION_H

#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/json.h"
#include "adm/base/json_edit.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

/* Operation bits, for a plugin's set of handled operations. */
#define ADM_OPS_CREATE (1u << ADM_OP_CREATE)
#define ADM_OPS_UPDATE (1u << ADM_OP_UPDATE)
#define ADM_OPS_DELETE (1u << ADM_OP_DELETE)
#define ADM_OPS_CONNECT (1u << ADM_OP_CONNECT)
#define ADM_OPS_ALL (ADM_OPS_CREATE | ADM_OPS_UPDATE | ADM_OPS_DELETE | ADM_OPS_CONNECT)

/*
 * The time the chain hands to plugins, which read no clock of their own (plugin.h's accessors).
 * Two readings, each on its own scale, where only differences and comparisons mean anything:
 * now_ms is the event loop's time in milliseconds, cached by the loop once per iteration (uv_now;
 * reading it is a load), the scale of every deadline (adm_async_t.deadline_ms); now_ns is a
 * monotonic clock in nanoseconds, read afresh (uv_hrtime), for rates.
 */
typedef struct adm_clock_s {
    uint64_t (*now_ms)(void *arg);
    uint64_t (*now_ns)(void *arg);
    void *arg;
} adm_clock_t;

/*
 * The attributes of the request being admitted. Plugins read req for everything the request
 * carries and use the accessors below for the object, which earlier mutating plugins may have
 * changed.
 */
typedef struct adm_attrs_s {
    const adm_review_request_t *req;
    adm_arena_t *arena;
    /*
     * Private to admission.c and the chain. The object is object_view, a flat layout, unless
     * view_stale: then it is object_view with the pending edits applied (adm_attrs_edit), or,
     * when mutable_current, mdoc's root (adm_attrs_mutable_object, a webhook's patched copy).
     * Reading it through adm_attrs_object brings object_view up to date.
     */
    yyjson_val *object_view; /* current object, immutable (NULL: none) */
    yyjson_mut_doc *mdoc;    /* the mutable copy, and the document new values for edits are made in */
    bool view_stale;         /* object_view is not the object: edits pending, or mdoc changed */
    bool mutable_current;    /* mdoc's root is the object (no edit since adm_attrs_mutable_object) */
    bool changed;            /* some plugin changed the object or asked to */
    adm_edit_t *edits;       /* recorded on object_view, not applied yet */
    size_t nedits, edits_cap;
    /* object_view's parts copied verbatim from req->object, for the final diff to skip them;
       lineage.origin NULL: none known (object_view is req->object while !changed) */
    adm_json_lineage_t lineage;
    /* how mdoc's root was copied (adm_json_mut_share_kept) from origin.from, for views to copy
       what no change touched in one piece; origin.copy NULL: unknown (a webhook's object). And
       origin.from's own lineage, which a view's is composed with */
    adm_json_origin_t origin;
    adm_json_lineage_t origin_lineage;
    /* what the answer carries besides the decision (webhooks' warnings and audit annotations);
       warnings only through adm_attrs_add_warning, which keeps kube-apiserver's limits */
    const char **warnings;
    size_t nwarnings, warnings_cap;
    adm_review_annotation_t *annotations;
    size_t nannotations, annotations_cap;
    struct adm_warning_recorder_s *recorder; /* private to admission.c; NULL until a warning comes */
    /* set by the chain for the hooks (NULL after adm_attrs_init); plugins use them through
       plugin.h's adm_plugin_now_ms/_ns and adm_plugin_slot */
    const adm_clock_t *clock;
    void **slot;                               /* the running plugin's own pointer for this request */
    const struct adm_cluster_state_s *cluster; /* the cluster state the request started with */
    struct adm_trace_s *trace; /* the request's decision trace (adm/admission/trace.h), or NULL */
    /* strlen of req's kind.group, kind.kind, resource.group and resource.resource, taken once by
       adm_attrs_init (req is const for the request's life): adm_attrs_is and adm_attrs_kind_is,
       called by nearly every plugin, compare a literal of known length with one memcmp inline */
    size_t kind_group_len, kind_len, group_len, resource_len;
} adm_attrs_t;

/* A rejection, as metav1.Status; plugins fill it through the constructors below. */
typedef struct adm_status_s {
    int32_t code;       /* HTTP code: 400, 403, 404, 422, 429, 500 ... */
    const char *reason; /* "Forbidden", "BadRequest" ...; NULL for kube's empty (Unknown) reason */
    const char *message;
    yyjson_val *details; /* metav1.StatusDetails, or NULL */
} adm_status_t;

/** Sets up attrs for req; the object is req->object until a plugin changes it. */
void adm_attrs_init(adm_attrs_t *attrs, const adm_review_request_t *req, adm_arena_t *arena);

/**
 * The object as mutated so far (NULL for DELETE, CONNECT without options, or when the request has
 * none). NULL also when the arena is exhausted: callers that need the object then answer 500 via
 * adm_status_nomem(). The returned value stays valid until the next adm_attrs_mutable_object().
 */
yyjson_val *adm_attrs_object(adm_attrs_t *attrs);

/** True when there is an object (adm_attrs_object would give one, memory permitting). */
bool adm_attrs_has_object(const adm_attrs_t *attrs);

/**
 * The object for changing in place (a mutable copy made on first use; later calls return the same
 * root). NULL when there is no object or the arena is exhausted. The document is
 * attrs->mdoc, for creating values.
 */
yyjson_mut_val *adm_attrs_mutable_object(adm_attrs_t *attrs);

/**
 * Records a change of the object as an edit (adm/base/json_edit.h) on a value of the layout
 * adm_attrs_object() returned (not adm_attrs_get's, which may be a layout of a member alone), with
 * any new value made in adm_attrs_values_doc(). The edits of a hook are applied together at the
 * next read of the object through attrs, in the order recorded; values read before that read are
 * then stale (an edit on one is refused then). The cheap way to change the object: no mutable
 * copy of all of it, and the final patch's diff walks only the containers edits reached. Returns
 * ADM_OK, or ADM_ENOMEM; a bad edit (a target outside the layout, a wrong type) makes the next
 * read fail as out of memory, which tests catch.
 */
int adm_attrs_edit(adm_attrs_t *attrs, const adm_edit_t *e);

/** The document to make edits' new values in (the request's arena); NULL when the arena fails. */
yyjson_mut_doc *adm_attrs_values_doc(adm_attrs_t *attrs);

/**
 * For plugins that record edits: the container at k1.k2... (a NULL-terminated key list) of the
 * object as it is now, of type (YYJSON_TYPE_OBJ or _ARR; the steps before it objects), made when
 * a step is absent or null as adm_mut_ensure makes it (appended, or in place of the null), by one
 * edit applied at once: values read from the object before are then stale. NULL when a step has
 * another type, the object is no object, or memory fails.
 */
yyjson_val *adm_attrs_ensure_keys(adm_attrs_t *attrs, yyjson_type type, const char *const *keys);

#define adm_attrs_ensure(attrs, type, ...)                                                                   \
    adm_attrs_ensure_keys((attrs), (type), (const char *const[]){__VA_ARGS__})

/**
 * For plugins recording edits: the value at k1.k2... (a NULL-terminated key list) of the layout
 * the pending edits apply to, as a target for more edits, without laying the pending ones out
 * (unless one replaces or removes a step of the way). What lies inside it may be out of date while
 * edits are pending: read that through adm_attrs_get, which lays them out only when they reach
 * what it reads. NULL when absent.
 */
yyjson_val *adm_attrs_target_keys(adm_attrs_t *attrs, const char *const *keys);

#define adm_attrs_target(attrs, ...) adm_attrs_target_keys((attrs), (const char *const[]){__VA_ARGS__})

/** e recorded on attrs with key's length taken (NULL key: none); ADM_ENOMEM also when value is NULL. */
int adm_attrs_edit_key(adm_attrs_t *attrs, adm_edit_op_t op, yyjson_val *target, const char *key,
                       yyjson_mut_val *value);

/**
 * Makes root (the root of doc, a document in the request's arena) the object from now on: how a
 * webhook's patched copy replaces the object.
 */
void adm_attrs_set_object(adm_attrs_t *attrs, yyjson_mut_doc *doc);

/**
 * Adds a warning to the answer as kube-apiserver's warning recorder adds one to its response: an
 * empty text or one seen before is dropped, and so is text that is not valid UTF-8 or holds a
 * control character; once the texts kept pass 4,096 runes in all, every warning is cut to 256
 * runes, and past 4,096 runes of those, later ones are dropped. text must outlive the answer
 * (static or arena); a cut copy is made in the arena.
 */
void adm_attrs_add_warning(adm_attrs_t *attrs, const char *text);

/* s (of length len) equals want; with want a literal its length and the memcmp fold in. */
static inline bool adm_attrs_str_is(const char *s, size_t len, const char *want)
{
    size_t n = strlen(want);

    return len == n && (n == 0 || memcmp(s, want, n) == 0);
}

/** True when the request is for group/resource with no subresource, e.g. ("", "pods"). */
static inline bool adm_attrs_is(const adm_attrs_t *attrs, const char *group, const char *resource)
{
    const adm_review_request_t *r = attrs->req;

    return r->sub_resource[0] == '\0' &&
           adm_attrs_str_is(r->resource.resource, attrs->resource_len, resource) &&
           adm_attrs_str_is(r->resource.group, attrs->group_len, group);
}

/** True when the object's kind is group/kind, e.g. ("", "Pod"). */
static inline bool adm_attrs_kind_is(const adm_attrs_t *attrs, const char *group, const char *kind)
{
    const adm_review_request_t *r = attrs->req;

    return adm_attrs_str_is(r->kind.kind, attrs->kind_len, kind) &&
           adm_attrs_str_is(r->kind.group, attrs->kind_group_len, group);
}

/*
 * Status constructors. Each returns ADM_DECLINED (a rejection to report), or ADM_ENOMEM when the
 * arena could not hold the message (the chain then answers 500). The message argument is printf
 * style.
 */

/**
 * admission.NewForbidden: 403 Forbidden, `<resource>[.<group>] "<name>" is forbidden: <msg>` with the
 * name taken from the request, else the object's metadata.name, else metadata.generateName, else
 * "Unknown"; details {name, group, kind: resource}.
 */
int adm_status_forbidden(adm_status_t *st, adm_attrs_t *attrs, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * apierrors.NewForbidden(GroupResource{group, resource}, name, msg): like the above with the name
 * given ("" prints `<resource> is forbidden: <msg>`).
 */
int adm_status_forbidden_named(adm_status_t *st, adm_arena_t *a, const char *group, const char *resource,
                               const char *name, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/** apierrors.NewBadRequest: 400 BadRequest, message verbatim. */
int adm_status_bad_request(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** apierrors.NewInternalError: 500 InternalError, `Internal error occurred: <msg>`, details.causes. */
int adm_status_internal(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** A plain Go error reaching the API: 500 with an empty reason and the message verbatim. */
int adm_status_plain(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** apierrors.NewTooManyRequestsError: 429 TooManyRequests, `Too many requests: <msg>`. */
int adm_status_too_many_requests(adm_status_t *st, adm_arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * utilerrors.NewAggregate's text, which kube prints for several errors at once: nothing for none,
 * the message alone when all are the same, otherwise the distinct messages in order as "[a, b]".
 */
typedef struct adm_aggregate_s {
    adm_arena_t *arena;
    const char **msgs; /* distinct messages, in order */
    size_t n, cap;
    bool failed; /* an allocation failed (or a NULL message was added) */
} adm_aggregate_t;

void adm_aggregate_init(adm_aggregate_t *agg, adm_arena_t *a);

/** Adds a message (arena or static); a repeat is dropped; NULL records an allocation failure. */
void adm_aggregate_add(adm_aggregate_t *agg, const char *msg);

/** The text ("" when empty), or NULL when an allocation failed. */
const char *adm_aggregate_text(const adm_aggregate_t *agg);

/** A 500 for an exhausted arena, from static text; always succeeds and returns ADM_DECLINED. */
int adm_status_nomem(adm_status_t *st);

/** Go's %q of s: a double-quoted string with Go's escapes (into the arena; NULL when exhausted). */
const char *adm_go_quote(adm_arena_t *a, const char *s);

/** The GroupResource string kube prints: "pods", "certificatesigningrequests.certificates.k8s.io". */
const char *adm_group_resource(adm_arena_t *a, const char *group, const char *resource);

/*
 * Small readers over yyjson values, tolerant of absent members and wrong types (they act as if
 * the member were absent: the API server would have refused a wrong type before admission).
 */

/**
 * obj[key] when obj is an object; NULL otherwise. Inline: with a literal key the compiler knows its
 * length, and these lookups are most of what plugins do.
 */
static inline yyjson_val *adm_json_get(yyjson_val *obj, const char *key)
{
    return yyjson_is_obj(obj) ? yyjson_obj_get(obj, key) : NULL;
}

/** adm_json_path's steps: obj.keys[0].keys[1]... up to a NULL key; NULL when any step is missing. */
static inline yyjson_val *adm_json_path_keys(yyjson_val *obj, const char *const *keys)
{
    for (; obj != NULL && *keys != NULL; keys++) {
        obj = adm_json_get(obj, *keys);
    }
    return obj;
}

/**
 * obj.k1.k2... for a NULL-terminated key list; NULL when any step is missing. A macro over an
 * array of the keys, so the lookups are inline (a literal key's length known to the compiler).
 */
#define adm_json_path(obj, ...) adm_json_path_keys((obj), (const char *const[]){__VA_ARGS__})

/** adm_attrs_get's way after a change: the member found in the mutable copy, its subtree laid out. */
yyjson_val *adm_attrs_get_changed(adm_attrs_t *attrs, const char *const *keys);

/** adm_attrs_get's steps, over keys up to a NULL one. */
static inline yyjson_val *adm_attrs_get_keys(adm_attrs_t *attrs, const char *const *keys)
{
    return attrs->view_stale ? adm_attrs_get_changed(attrs, keys)
                             : adm_json_path_keys(attrs->object_view, keys);
}

/**
 * The member at k1.k2... (a NULL-terminated key list) of the object as mutated so far: what
 * adm_json_path on adm_attrs_object gives, without making the view of the whole object that
 * adm_attrs_object makes after a change (only the member's own subtree is laid out then). For
 * plugins that read a field or a list before knowing whether they need the whole object. NULL when
 * absent, when a step on the way is not an object, or when the arena is exhausted. A macro over an
 * array of the keys, as adm_json_path: while no plugin changed the object, the lookups are inline
 * with each literal key's length known to the compiler (no variadic call, no strlen a step).
 */
#define adm_attrs_get(attrs, ...) adm_attrs_get_keys((attrs), (const char *const[]){__VA_ARGS__})

/** The string at obj[key], or "" when absent or not a string. */
static inline const char *adm_json_str(yyjson_val *obj, const char *key)
{
    const char *s = yyjson_get_str(adm_json_get(obj, key));

    return s != NULL ? s : "";
}

/** Mutable counterpart of adm_json_get (inline too). */
static inline yyjson_mut_val *adm_mut_get(yyjson_mut_val *obj, const char *key)
{
    return yyjson_mut_is_obj(obj) ? yyjson_mut_obj_get(obj, key) : NULL;
}

/**
 * True when v is there, not null, and not of type: where adm_mut_ensure gives up (NULL), which a
 * plugin recording edits answers the same way.
 */
static inline bool adm_json_not_ensurable(yyjson_val *v, yyjson_type type)
{
    return v != NULL && !yyjson_is_null(v) && yyjson_get_type(v) != type;
}

/**
 * obj[key] as an array or object, created (appended to obj) when absent or null. NULL when obj is
 * not an object, obj[key] has another type, or the document's allocator failed.
 */
yyjson_mut_val *adm_mut_ensure(yyjson_mut_doc *doc, yyjson_mut_val *obj, const char *key, yyjson_type type);

#endif

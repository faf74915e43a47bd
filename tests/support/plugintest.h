/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table-test support for the compiled-in plugins: build an AdmissionReview request from a few
 * fields, run one plugin hook on it, and read back the status and the object as the hook left it.
 */
#ifndef ADM_TEST_PLUGINTEST_H
#define ADM_TEST_PLUGINTEST_H

#include "adm/admission/admission.h"
#include "adm/admission/plugin.h"
#include "adm/base/arena.h"
#include "adm/cluster/cluster_state.h"

#include <stdbool.h>

/* The request to build; NULL strings mean absent (empty), NULL JSON means no object. */
typedef struct pt_request_s {
    const char *operation; /* "CREATE", "UPDATE", "DELETE", "CONNECT" */
    const char *group;     /* resource and kind group, "" for core */
    const char *version;   /* "v1" when NULL */
    const char *resource;  /* "pods" */
    const char *sub_resource;
    const char *kind; /* "Pod" */
    const char *namespace_;
    const char *name;
    const char *username;
    const char *groups_json; /* a JSON array of strings, e.g. "[\"system:nodes\"]" */
    const char *object;      /* JSON text */
    const char *old_object;  /* JSON text */
    bool dry_run;
} pt_request_t;

typedef struct pt_result_s {
    int rc;              /* ADM_OK, ADM_DECLINED or ADM_ENOMEM */
    adm_status_t status; /* when rc is ADM_DECLINED */
    bool changed;        /* the hook asked for the mutable object */
    const char *object;  /* the object after the hook, compact JSON ("null" when none) */
    /* the request as the hook left it: warnings, audit annotations (arena) */
    const adm_attrs_t *attrs;
} pt_result_t;

/**
 * The request most table rows build: op on resource (of kind) in the core group, in namespace ns,
 * with object and old_object (JSON text, NULL: none); the other fields absent.
 */
pt_request_t pt_core_request(const char *op, const char *resource, const char *kind, const char *ns,
                             const char *object, const char *old_object);

/** Builds a v1 AdmissionReview body for r in the arena. */
const char *pt_review_json(adm_arena_t *a, const pt_request_t *r);

/**
 * Runs p's admit (phase 'm') or validate (phase 'v') hook with state on r, handing it the clock of
 * pt_set_clock as the chain hands its own. Fails the test (cmocka) when the request does not
 * decode or the hook is missing.
 */
pt_result_t pt_run(adm_arena_t *a, const adm_plugin_t *p, void *state, char phase, const pt_request_t *r);

/**
 * The clock pt_run hands to hooks from now on (copied), as adm_chain_set_clock does for a chain;
 * NULL: a clock standing at 0, the default.
 */
void pt_set_clock(const adm_clock_t *clock);

/**
 * Calls p->configure with config (JSON text, or NULL for none) and the values of p's flags in opts
 * (NULL: their defaults), as the chain does. Returns what configure returned; err receives its
 * message.
 */
int pt_configure(const adm_plugin_t *p, const char *config, const adm_options_t *opts, void **state,
                 char *err, size_t err_len);

/**
 * The cluster state pt_run hands to hooks from now on (not copied: cs must outlive the runs), as
 * the chain hands its own; NULL: the built-in default (the four standard namespaces).
 */
void pt_set_cluster(const adm_cluster_state_t *cs);

/**
 * Loads cluster state from text (multi-document YAML, JSON or a List, as a --cluster-state file)
 * through a temporary file. Fails the test when it does not load. Free with
 * adm_cluster_state_free.
 */
adm_cluster_state_t *pt_load_cluster(const char *text);

/**
 * cmocka group fixtures for table tests: pt_group_setup creates pt_arena (64 KiB chunks, where
 * the tests build requests and read results); pt_group_teardown puts back the built-in cluster
 * state (pt_set_cluster(NULL)) and destroys the arena.
 */
extern adm_arena_t *pt_arena;
int pt_group_setup(void **state);
int pt_group_teardown(void **state);

/** True when JSON texts a and b are equal as JSON values (member order ignored). */
bool pt_json_equal(const char *a, const char *b);

/** cmocka assertion with a readable failure: the two JSON texts are equal. */
#define assert_json_equal(a, b) pt_assert_json_equal((a), (b), __FILE__, __LINE__)
void pt_assert_json_equal(const char *got, const char *want, const char *file, int line);

#endif

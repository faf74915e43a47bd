/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubeconfig files: the one reader of the format (clientcmd's v1 Config) for admitd's two users of
 * it, the API client (adm/cluster/kubeconfig.h: the current context's cluster and user) and the
 * webhook credentials of Decision D13 (adm/webhook/kubeconfig.h: every user, matched by name).
 *
 * A file is read whole, YAML or JSON (the project's YAML reader, resolved as go-yaml v2 resolves
 * it, which is what clientcmd's sigs.k8s.io/yaml does), and its three named lists, clusters, users
 * and contexts, are laid out as entries. Members are then read through the getters here, which
 * word every problem the same way ("FILE: users[0].user.token: must be a string"), resolve file
 * names against the kubeconfig's folder as clientcmd's ResolveLocalPaths does, decode inline
 * *-data members (standard base64, as Go decodes a []byte), refuse members admitd cannot honour,
 * and read the files named, keeping the list of every file read (what a reload watches).
 *
 * Nothing is judged when the file is read beyond its YAML: a problem in an entry a caller does not
 * use is none of that caller's business (clientcmd too resolves only what the context names), so
 * each caller asks for what it needs, in its own order, with its own words for a refusal.
 */
#ifndef ADM_KUBECONFIG_FILE_H
#define ADM_KUBECONFIG_FILE_H

#include "adm/base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

/* A kubeconfig, and each file it names, past these sizes is a mistake. */
#define ADM_KUBECONFIG_MAX_BYTES (4u << 20)

/* One item of clusters, users or contexts. */
typedef struct adm_kc_entry_s {
    size_t index;     /* its place in its list */
    const char *name; /* its name; NULL when it has none or it is not a string */
    yyjson_val *item; /* the list item; NULL when it is not a mapping */
    yyjson_val *body; /* its "cluster", "user" or "context" member as given (NULL: absent) */
    char field[48];   /* "users[3].user": what messages about the body's members start with */
} adm_kc_entry_t;

typedef struct adm_kc_list_s {
    adm_kc_entry_t *entries;
    size_t n;
    bool malformed; /* present, not null, and not a list (then n is 0) */
} adm_kc_list_t;

typedef struct adm_kubeconfig_file_s {
    adm_arena_t *arena; /* everything below, and what the getters return */
    const char *path;   /* as given, for messages */
    const char *folder; /* where relative names start: "" or "DIR/" */
    yyjson_val *root;   /* the first document; NULL when the file holds none */
    size_t ndocs;
    adm_kc_list_t clusters, users, contexts;
    const char **files; /* the kubeconfig, then every file adm_kc_read_file was asked for */
    size_t nfiles;
    size_t files_cap;
    char *err; /* where problems go: one line, starting with path */
    size_t err_len;
} adm_kubeconfig_file_t;

/**
 * Reads the kubeconfig at path into f, its memory from a. Returns 0; or the reader's code with its
 * one line in err (ADM_EIO "PATH: No such file or directory", ADM_ETOOBIG); or ADM_EPARSE with
 * "PATH: line L column C: ..."; or ADM_ENOMEM ("PATH: out of memory"). err is kept for the getters.
 */
int adm_kc_read(adm_arena_t *a, const char *path, adm_kubeconfig_file_t *f, char *err, size_t err_len);

/** As adm_kc_read, from text already in memory (len bytes) that path names in messages. */
int adm_kc_parse(adm_arena_t *a, const char *path, const char *text, size_t len, adm_kubeconfig_file_t *f,
                 char *err, size_t err_len);

/** Writes "PATH: " and the formatted text into f's err and returns code. */
int adm_kc_fail(const adm_kubeconfig_file_t *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** The first entry of l named name (entries without a string name are skipped), or NULL. */
const adm_kc_entry_t *adm_kc_find(const adm_kc_list_t *l, const char *name);

/**
 * The string member key of obj (field names obj in messages): *out is its text, or NULL when it is
 * absent, null or "" (Go's zero value). 0, or ADM_EINVAL "PATH: FIELD.KEY: must be a string".
 */
int adm_kc_string(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                  const char **out);

/** A boolean member: false when absent or null. 0, or ADM_EINVAL "...: must be true or false". */
int adm_kc_bool(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                bool *out);

/** True when member key of obj is given: present, and neither null nor "". */
bool adm_kc_present(yyjson_val *obj, const char *key);

/** A member admitd does not honour: when present, ADM_EINVAL "PATH: FIELD.KEY: WHY"; else 0. */
int adm_kc_refuse(const adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *key,
                  const char *why);

/**
 * The first impersonation member of a user (as, as-uid, as-groups, as-user-extra) that is set, that
 * is neither null nor Go's zero value ("", [], {}); NULL when none is.
 */
const char *adm_kc_impersonation(yyjson_val *user);

/* A file member and its inline twin ("client-certificate" and "client-certificate-data"). */
typedef struct adm_kc_blob_s {
    const char *data;  /* the inline member decoded (NUL-terminated), which wins; NULL when not given */
    size_t len;        /* bytes of data, without the NUL */
    const char *file;  /* else the file named, resolved against the kubeconfig's folder; NULL: none */
    const char *where; /* "FIELD.KEY" of whichever of the two is used, for messages */
} adm_kc_blob_t;

/**
 * Reads the pair file_key / data_key of obj (both must be strings when present: file_key is
 * checked first). 0 (out all NULL when neither is given), or ADM_EINVAL ("must be a string",
 * "PATH: FIELD.DATA_KEY: illegal base64 data"), or ADM_ENOMEM.
 */
int adm_kc_blob(adm_kubeconfig_file_t *f, yyjson_val *obj, const char *field, const char *file_key,
                const char *data_key, adm_kc_blob_t *out);

/** name made relative to the kubeconfig's folder unless absolute (in f's arena); NULL: no memory. */
const char *adm_kc_path(adm_kubeconfig_file_t *f, const char *name);

/**
 * Reads the file at path (already resolved) whole into f's arena, NUL-terminated, at most max
 * bytes, and adds path to f->files whether or not the read succeeds (a reload watches a file that
 * is not there yet). 0; ADM_EIO / ADM_ETOOBIG with the reader's one line ("PATH: ...") in why;
 * ADM_ENOMEM.
 */
int adm_kc_read_file(adm_kubeconfig_file_t *f, const char *path, size_t max, char **data, size_t *len,
                     char *why, size_t why_len);

/** Adds path to f->files (copied). 0 or ADM_ENOMEM. */
int adm_kc_note_file(adm_kubeconfig_file_t *f, const char *path);

/**
 * A token as client-go's file token source keeps it: space, tab, CR and LF cut from both ends of
 * the len bytes at s, in place (s has room for a NUL after them, as adm_kc_read_file's data has).
 * Returns the token (NUL-terminated), "" when nothing is left.
 */
char *adm_kc_trim_token(char *s, size_t len);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#include "reviewset.h"

#include "adm/admission/admission_config.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/json.h"
#include "adm/admission/review.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yyjson.h>

#define PLACEHOLDER "00000000-0000-4000-8000-000000000000"
#define MAX_REVIEW_BYTES (64u << 20)

/* Reads one file, checks it decodes, and stores it with the placeholder uid. */
static int load_one(const char *file, adm_review_body_t *out, char *err, size_t err_len)
{
    adm_arena_t *a = adm_arena_create(65536);
    adm_review_request_t req;
    const char *problem;
    char *data;
    size_t len;
    yyjson_read_err rerr;
    yyjson_doc *doc;
    yyjson_mut_doc *mdoc;
    yyjson_mut_val *uid;
    char *found;
    int rc;

    if (a == NULL) {
        return ADM_ENOMEM;
    }
    rc = adm_read_file(a, file, MAX_REVIEW_BYTES, &data, &len, err, err_len);
    if (rc != 0) {
        adm_arena_destroy(a);
        return rc == ADM_ENOMEM ? rc : ADM_EINVAL;
    }
    if (adm_review_decode(a, data, len, &req, &problem) != 0) {
        snprintf(err, err_len, "%s: %s", file, problem);
        adm_arena_destroy(a);
        return ADM_EINVAL;
    }
    /* Re-serialise with the placeholder: uids of any length become 36 characters at a known place. */
    doc = adm_json_read(NULL, data, len, &rerr);
    mdoc = doc != NULL ? yyjson_doc_mut_copy(doc, NULL) : NULL;
    uid = mdoc != NULL ? yyjson_mut_ptr_get(yyjson_mut_doc_get_root(mdoc), "/request/uid") : NULL;
    rc = ADM_ENOMEM;
    if (uid != NULL && yyjson_mut_set_str(uid, PLACEHOLDER)) {
        out->data = yyjson_mut_write(mdoc, 0, &out->len);
        found = out->data != NULL ? strstr(out->data, "\"uid\":\"" PLACEHOLDER "\"") : NULL;
        /* the request's uid is the last "uid" member written for it: search from the request */
        if (found != NULL) {
            char *req_at = strstr(out->data, "\"request\":");
            char *again = req_at != NULL ? strstr(req_at, "\"uid\":\"" PLACEHOLDER "\"") : NULL;

            out->uid_off = (size_t)((again != NULL ? again : found) - out->data) + strlen("\"uid\":\"");
            out->name = strdup(file);
            rc = out->name != NULL ? 0 : ADM_ENOMEM;
        }
    }
    yyjson_mut_doc_free(mdoc);
    yyjson_doc_free(doc);
    adm_arena_destroy(a);
    return rc;
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

void adm_reviewset_free(adm_reviewset_t *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->bodies[i].data);
        free(set->bodies[i].name);
    }
    free(set->bodies);
    set->bodies = NULL;
    set->n = 0;
}

int adm_reviewset_load(const char *path, adm_reviewset_t *out, char *err, size_t err_len)
{
    struct stat st;
    char **names = NULL;
    size_t nnames = 0, cap = 0;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (stat(path, &st) != 0) {
        snprintf(err, err_len, "%s: cannot read", path);
        return ADM_EINVAL;
    }
    if (!S_ISDIR(st.st_mode)) {
        out->bodies = calloc(1, sizeof(*out->bodies));
        if (out->bodies == NULL) {
            return ADM_ENOMEM;
        }
        rc = load_one(path, &out->bodies[0], err, err_len);
        out->n = rc == 0 ? 1 : 0;
        if (rc != 0) {
            adm_reviewset_free(out);
        }
        return rc;
    }
    d = opendir(path);
    if (d == NULL) {
        snprintf(err, err_len, "%s: cannot open the directory", path);
        return ADM_EINVAL;
    }
    while ((e = readdir(d)) != NULL) {
        char *full;
        struct stat fst;

        size_t name_len = strlen(e->d_name);

        /* Only JSON files: a corpus folder may also hold its README and generator. */
        if (e->d_name[0] == '.' || name_len < 6 || strcmp(e->d_name + name_len - 5, ".json") != 0) {
            continue;
        }
        if (asprintf(&full, "%s/%s", path, e->d_name) < 0) {
            rc = ADM_ENOMEM;
            break;
        }
        if (stat(full, &fst) != 0 || !S_ISREG(fst.st_mode)) {
            free(full);
            continue;
        }
        if (nnames == cap) {
            size_t ncap = cap == 0 ? 16 : cap * 2;
            char **g = realloc(names, ncap * sizeof(*names));

            if (g == NULL) {
                free(full);
                rc = ADM_ENOMEM;
                break;
            }
            names = g;
            cap = ncap;
        }
        names[nnames++] = full;
    }
    closedir(d);
    if (rc == 0 && nnames == 0) {
        snprintf(err, err_len, "%s: no review files in the directory", path);
        rc = ADM_EINVAL;
    }
    if (rc == 0) {
        qsort(names, nnames, sizeof(*names), cmp_names);
        out->bodies = calloc(nnames, sizeof(*out->bodies));
        rc = out->bodies != NULL ? 0 : ADM_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < nnames; i++) {
        rc = load_one(names[i], &out->bodies[i], err, err_len);
        out->n += rc == 0;
    }
    for (size_t i = 0; i < nnames; i++) {
        free(names[i]);
    }
    free(names);
    if (rc != 0) {
        adm_reviewset_free(out);
    }
    return rc;
}

void adm_reviewset_stamp(adm_review_body_t *body, uint64_t salt, uint64_t seq, char *uid)
{
    static const char hex[] = "0123456789abcdef";
    /* 122 bits of a mixed (salt, seq): unique per seq within a run, random-looking across runs */
    uint64_t hi = salt ^ (seq * 0x9e3779b97f4a7c15ull);
    uint64_t lo = seq ^ (salt * 0xbf58476d1ce4e5b9ull);
    char *w = body->data + body->uid_off;
    int k = 0;

    hi ^= hi >> 31;
    hi *= 0x94d049bb133111ebull;
    hi ^= hi >> 29;
    for (int i = 0; i < ADM_UID_LEN; i++) {
        uint64_t src = k < 16 ? hi : lo;
        unsigned nibble = (unsigned)(src >> (4 * (k % 16))) & 15u;

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            w[i] = '-';
            continue;
        }
        if (i == 14) {
            nibble = 4; /* version 4 */
        } else if (i == 19) {
            nibble = 8 | (nibble & 3); /* RFC 4122 variant */
        }
        w[i] = hex[nibble];
        k++;
    }
    memcpy(uid, w, ADM_UID_LEN);
    uid[ADM_UID_LEN] = '\0';
}

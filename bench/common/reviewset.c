/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loads a load generator's request bodies once (reviewset.h): each file is decoded by admitd's own
 * decoder, so a bad corpus fails before the run, and re-written with a placeholder uid at a known
 * offset, which every request overwrites in place with a fresh one.
 */
#include "reviewset.h"

#include "adm/admission/review.h"
#include "adm/base/arena.h"
#include "adm/base/error.h"
#include "adm/base/fs.h"
#include "adm/base/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    rc = adm_fs_read(a, file, MAX_REVIEW_BYTES, &data, &len, err, err_len);
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

/* Collects the body of each file a walk finds. */
typedef struct loading_s {
    adm_reviewset_t *out;
    size_t cap;
    char *err;
    size_t err_len;
} loading_t;

static int add_file(void *arg, const char *file)
{
    loading_t *l = arg;
    adm_reviewset_t *out = l->out;
    int rc;

    if (out->n == l->cap) {
        size_t ncap = l->cap == 0 ? 16 : l->cap * 2;
        adm_review_body_t *g = realloc(out->bodies, ncap * sizeof(*g));

        if (g == NULL) {
            return ADM_ENOMEM;
        }
        out->bodies = g;
        l->cap = ncap;
    }
    rc = load_one(file, &out->bodies[out->n], l->err, l->err_len);
    out->n += rc == 0;
    return rc;
}

int adm_reviewset_load(const char *path, adm_reviewset_t *out, char *err, size_t err_len)
{
    /* Only JSON files: a corpus folder may also hold its README and generator. */
    static const char *const json_only[] = {".json", NULL};
    adm_arena_t *a = adm_arena_create(4096);
    loading_t l = {out, 0, err, err_len};
    int rc;

    memset(out, 0, sizeof(*out));
    if (a == NULL) {
        return ADM_ENOMEM;
    }
    rc = adm_fs_walk(a, path, json_only, add_file, &l, err, err_len);
    adm_arena_destroy(a);
    if (rc == ADM_EIO) {
        rc = ADM_EINVAL;
    }
    if (rc == 0 && out->n == 0) {
        snprintf(err, err_len, "%s: no review files in the directory", path);
        rc = ADM_EINVAL;
    }
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

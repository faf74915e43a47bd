/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The request bodies a load generator sends (admitd-bench --review FILE|DIR): AdmissionReviews read
 * once, checked with admitd's own decoder, and rewritten with a 36-character placeholder uid whose
 * offset is remembered, so every request can carry a fresh uid written in place: no parse, copy or
 * allocation per request.
 */
#ifndef ADM_REVIEWSET_H
#define ADM_REVIEWSET_H

#include <stddef.h>
#include <stdint.h>

#define ADM_UID_LEN 36

typedef struct adm_review_body_s {
    char *data; /* compact JSON (malloc) */
    size_t len;
    size_t uid_off; /* where the uid's 36 characters start in data */
    char *name;     /* the file it came from */
} adm_review_body_t;

typedef struct adm_reviewset_s {
    adm_review_body_t *bodies;
    size_t n;
} adm_reviewset_t;

/**
 * Loads path: one AdmissionReview file, or every *.json file of a directory (sorted by name, so
 * runs repeat). Returns 0, or ADM_EINVAL with one line in err naming the file and the problem
 * (unreadable, not an AdmissionReview, empty directory), or ADM_ENOMEM.
 */
int adm_reviewset_load(const char *path, adm_reviewset_t *out, char *err, size_t err_len);

void adm_reviewset_free(adm_reviewset_t *set);

/**
 * Writes a fresh version-4 UUID for request number seq (unique per seq and per salt) into
 * body->data at uid_off, and into uid (ADM_UID_LEN + 1 bytes) for checking the answer.
 */
void adm_reviewset_stamp(adm_review_body_t *body, uint64_t salt, uint64_t seq, char *uid);

#endif

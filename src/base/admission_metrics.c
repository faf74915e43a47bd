/* SPDX-License-Identifier: Apache-2.0 */
/* The process-wide admission metrics registry (admission_metrics.h) and its text rendering. */
#include "adm/base/admission_metrics.h"

#include "adm/base/error.h"

#include <stdlib.h>
#include <string.h>

/* Upper bounds in seconds: 5 µs to 10 s. */
#define NBUCKETS 22
static const double bounds[NBUCKETS] = {
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,    0.05,    0.1,      0.25,    0.5,    1.0,     2.5,    5.0,   10.0,   30.0,  60.0,
};

typedef struct hist_s {
    uint64_t buckets[NBUCKETS]; /* non-cumulative */
    uint64_t count;
    double sum;
} hist_t;

/* type x operation x rejected */
#define NSERIES (2 * ADM_METRICS_OPERATIONS * 2)
#define SERIES(type, op, rejected) (((size_t)(type)*ADM_METRICS_OPERATIONS + (op)) * 2 + ((rejected) ? 1 : 0))

/* rejection_code slots: 0, then 100..599 */
#define NCODES 501
#define NERRORS 3

typedef struct name_series_s {
    char *name;
    hist_t *controller; /* NSERIES, allocated at the first observation */
    hist_t *webhook;
    uint64_t *rejections[2][ADM_METRICS_OPERATIONS][NERRORS]; /* NCODES each */
    uint64_t fail_open[2];
} name_series_t;

#define HASH_SLOTS 1024 /* twice ADM_METRICS_NAMES: probes stay short */

static struct {
    name_series_t names[ADM_METRICS_NAMES]; /* [0] is "other" */
    size_t nnames;
    int16_t hash[HASH_SLOTS]; /* index into names, 0: empty */
    hist_t step[NSERIES];
    uint64_t reloads[2]; /* [0] failure, [1] success */
    size_t (*client_gauge)(void *);
    void *client_gauge_arg;
} reg;

static const char *const type_names[] = {"admit", "validate"};
static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
static const char *const error_names[] = {"calling_webhook_error", "apiserver_internal_error", "no_error"};

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

int adm_metrics_name(const char *name)
{
    uint32_t slot;

    if (name == NULL) {
        return 0;
    }
    for (slot = fnv1a(name) % HASH_SLOTS;; slot = (slot + 1) % HASH_SLOTS) {
        int16_t id = reg.hash[slot];

        if (id == 0) {
            break;
        }
        if (strcmp(reg.names[id].name, name) == 0) {
            return id;
        }
    }
    if (reg.nnames == 0) {
        reg.nnames = 1; /* "other" */
    }
    if (reg.nnames == ADM_METRICS_NAMES) {
        return 0;
    }
    reg.names[reg.nnames].name = strdup(name);
    if (reg.names[reg.nnames].name == NULL) {
        return 0;
    }
    reg.hash[slot] = (int16_t)reg.nnames;
    return (int)reg.nnames++;
}

static void observe(hist_t *h, uint64_t ns)
{
    double seconds = (double)ns / 1e9;

    for (int i = 0; i < NBUCKETS; i++) {
        if (seconds <= bounds[i]) {
            h->buckets[i]++;
            break;
        }
    }
    h->count++;
    h->sum += seconds;
}

static name_series_t *series_of(int name)
{
    if (name < 0 || (size_t)name >= ADM_METRICS_NAMES || (name > 0 && (size_t)name >= reg.nnames)) {
        name = 0;
    }
    return &reg.names[name];
}

void adm_metrics_step(adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns)
{
    if (operation < ADM_METRICS_OPERATIONS) {
        observe(&reg.step[SERIES(type, operation, rejected)], ns);
    }
}

static void observe_named(hist_t **family, adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns)
{
    if (operation >= ADM_METRICS_OPERATIONS) {
        return;
    }
    if (*family == NULL) {
        *family = calloc(NSERIES, sizeof(hist_t));
        if (*family == NULL) {
            return; /* a lost observation, not a failed request */
        }
    }
    observe(&(*family)[SERIES(type, operation, rejected)], ns);
}

void adm_metrics_controller(int name, adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns)
{
    observe_named(&series_of(name)->controller, type, operation, rejected, ns);
}

void adm_metrics_webhook(int name, adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns)
{
    observe_named(&series_of(name)->webhook, type, operation, rejected, ns);
}

void adm_metrics_webhook_rejection(int name, adm_mx_type_t type, unsigned operation, adm_mx_error_t error,
                                   int code)
{
    uint64_t **codes;

    if (operation >= ADM_METRICS_OPERATIONS || (unsigned)error >= NERRORS) {
        return;
    }
    codes = &series_of(name)->rejections[type][operation][error];
    if (*codes == NULL) {
        *codes = calloc(NCODES, sizeof(uint64_t));
        if (*codes == NULL) {
            return;
        }
    }
    (*codes)[code >= 100 && code <= 599 ? code - 99 : 0]++;
}

void adm_metrics_webhook_fail_open(int name, adm_mx_type_t type)
{
    series_of(name)->fail_open[type]++;
}

void adm_metrics_config_reload(bool ok)
{
    reg.reloads[ok ? 1 : 0]++;
}

void adm_metrics_client_gauge(size_t (*fn)(void *arg), void *arg)
{
    reg.client_gauge = fn;
    reg.client_gauge_arg = arg;
}

/* A label value as the exposition format quotes it: backslash, quote and newline escaped. */
static int append_label(adm_buf_t *out, const char *value)
{
    int err = 0;

    for (const char *p = value; *p != '\0'; p++) {
        if (*p == '\\' || *p == '"') {
            err |= adm_buf_append(out, "\\", 1);
            err |= adm_buf_append(out, p, 1);
        } else if (*p == '\n') {
            err |= adm_buf_append_str(out, "\\n");
        } else {
            err |= adm_buf_append(out, p, 1);
        }
    }
    return err;
}

static const char *name_text(size_t id)
{
    return id == 0 ? "other" : reg.names[id].name;
}

/* One histogram series; labels is the text inside the braces, without le. */
static int render_hist(adm_buf_t *out, const char *family, const adm_buf_t *labels, const hist_t *h)
{
    uint64_t cumulative = 0;
    int err = 0;

    for (int i = 0; i < NBUCKETS; i++) {
        cumulative += h->buckets[i];
        err |= adm_buf_appendf(out, "%s_bucket{%.*s,le=\"%g\"} %llu\n", family, (int)labels->len,
                               (const char *)labels->data, bounds[i], (unsigned long long)cumulative);
    }
    err |= adm_buf_appendf(out, "%s_bucket{%.*s,le=\"+Inf\"} %llu\n", family, (int)labels->len,
                           (const char *)labels->data, (unsigned long long)h->count);
    err |= adm_buf_appendf(out, "%s_sum{%.*s} %.9g\n", family, (int)labels->len, (const char *)labels->data,
                           h->sum);
    err |= adm_buf_appendf(out, "%s_count{%.*s} %llu\n", family, (int)labels->len, (const char *)labels->data,
                           (unsigned long long)h->count);
    return err;
}

/* The NSERIES histograms of one name (name NULL: the step family, which has no name label). */
static int render_series(adm_buf_t *out, adm_buf_t *labels, const char *family, const char *name,
                         const hist_t *series)
{
    int err = 0;

    for (size_t t = 0; t < 2; t++) {
        for (size_t op = 0; op < ADM_METRICS_OPERATIONS; op++) {
            for (size_t r = 0; r < 2; r++) {
                const hist_t *h = &series[SERIES(t, op, r)];

                if (h->count == 0) {
                    continue;
                }
                labels->len = 0;
                if (name != NULL) {
                    err |= adm_buf_append_str(labels, "name=\"");
                    err |= append_label(labels, name);
                    err |= adm_buf_append_str(labels, "\",");
                }
                err |= adm_buf_appendf(labels, "type=\"%s\",operation=\"%s\",rejected=\"%s\"", type_names[t],
                                       op_names[op], r != 0 ? "true" : "false");
                err |= render_hist(out, family, labels, h);
            }
        }
    }
    return err;
}

static int render_named_family(adm_buf_t *out, adm_buf_t *labels, const char *family, const char *help,
                               bool webhooks)
{
    int err = adm_buf_appendf(out, "# HELP %s %s\n# TYPE %s histogram\n", family, help, family);

    for (size_t id = 0; id < reg.nnames; id++) {
        const hist_t *series = webhooks ? reg.names[id].webhook : reg.names[id].controller;

        if (series != NULL) {
            err |= render_series(out, labels, family, name_text(id), series);
        }
    }
    return err;
}

static int render_rejections(adm_buf_t *out)
{
    int err = adm_buf_append_str(out, "# HELP admitd_webhook_rejection_count Webhook answers that rejected "
                                      "the request, by error type and code.\n"
                                      "# TYPE admitd_webhook_rejection_count counter\n");

    for (size_t id = 0; id < reg.nnames; id++) {
        for (size_t t = 0; t < 2; t++) {
            for (size_t op = 0; op < ADM_METRICS_OPERATIONS; op++) {
                for (size_t e = 0; e < NERRORS; e++) {
                    const uint64_t *codes = reg.names[id].rejections[t][op][e];

                    for (size_t c = 0; codes != NULL && c < NCODES; c++) {
                        if (codes[c] == 0) {
                            continue;
                        }
                        err |= adm_buf_append_str(out, "admitd_webhook_rejection_count{name=\"");
                        err |= append_label(out, name_text(id));
                        err |= adm_buf_appendf(
                            out,
                            "\",type=\"%s\",operation=\"%s\",error_type=\"%s\",rejection_code=\"%d\"} %llu\n",
                            type_names[t], op_names[op], error_names[e], c == 0 ? 0 : (int)c + 99,
                            (unsigned long long)codes[c]);
                    }
                }
            }
        }
    }
    return err;
}

static int render_fail_open(adm_buf_t *out)
{
    int err = adm_buf_append_str(out, "# HELP admitd_webhook_fail_open_count Webhook call failures ignored "
                                      "under failurePolicy Ignore.\n"
                                      "# TYPE admitd_webhook_fail_open_count counter\n");

    for (size_t id = 0; id < reg.nnames; id++) {
        for (size_t t = 0; t < 2; t++) {
            if (reg.names[id].fail_open[t] == 0) {
                continue;
            }
            err |= adm_buf_append_str(out, "admitd_webhook_fail_open_count{name=\"");
            err |= append_label(out, name_text(id));
            err |= adm_buf_appendf(out, "\",type=\"%s\"} %llu\n", type_names[t],
                                   (unsigned long long)reg.names[id].fail_open[t]);
        }
    }
    return err;
}

int adm_metrics_render_admission(adm_buf_t *out)
{
    adm_buf_t labels = ADM_BUF_INIT;
    size_t clients = reg.client_gauge != NULL ? reg.client_gauge(reg.client_gauge_arg) : 0;
    int err = 0;

    /* right after the server's own section, which declared the family and wrote side="server" */
    err |= adm_buf_appendf(out, "admitd_connections{side=\"client\"} %zu\n", clients);
    err |= adm_buf_append_str(out, "# HELP admitd_admission_step_duration_seconds Time of an admission "
                                   "phase (admit or validate) for one request.\n"
                                   "# TYPE admitd_admission_step_duration_seconds histogram\n");
    err |= render_series(out, &labels, "admitd_admission_step_duration_seconds", NULL, reg.step);
    err |= render_named_family(out, &labels, "admitd_admission_controller_duration_seconds",
                               "Time of one built-in admission plugin's hook.", false);
    err |= render_named_family(out, &labels, "admitd_webhook_admission_duration_seconds",
                               "Time of one downstream webhook call.", true);
    err |= render_rejections(out);
    err |= render_fail_open(out);
    err |= adm_buf_appendf(out,
                           "# HELP admitd_config_reloads_total Configuration reloads, by result.\n"
                           "# TYPE admitd_config_reloads_total counter\n"
                           "admitd_config_reloads_total{result=\"success\"} %llu\n"
                           "admitd_config_reloads_total{result=\"failure\"} %llu\n",
                           (unsigned long long)reg.reloads[1], (unsigned long long)reg.reloads[0]);
    err |= adm_metrics_render_psa(out);
    adm_buf_free(&labels);
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_metrics_reset(void)
{
    for (size_t id = 0; id < ADM_METRICS_NAMES; id++) {
        name_series_t *n = &reg.names[id];

        free(n->name);
        free(n->controller);
        free(n->webhook);
        for (size_t t = 0; t < 2; t++) {
            for (size_t op = 0; op < ADM_METRICS_OPERATIONS; op++) {
                for (size_t e = 0; e < NERRORS; e++) {
                    free(n->rejections[t][op][e]);
                }
            }
        }
    }
    memset(&reg, 0, sizeof(reg));
    adm_metrics_reset_psa();
}

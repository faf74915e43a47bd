/* SPDX-License-Identifier: Apache-2.0 */
/* The process-wide admission metrics registry (admission_metrics.h) and its text rendering. */
#include "adm/base/admission_metrics.h"

#include "adm/base/error.h"
#include "adm/base/shared_metrics.h"

#include <stdlib.h>
#include <string.h>

/* Upper bounds in seconds: 5 µs to 10 s. */
#define NBUCKETS 22
static const double bounds[NBUCKETS] = {
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,    0.05,    0.1,      0.25,    0.5,    1.0,     2.5,    5.0,   10.0,   30.0,  60.0,
};

/*
 * The same bounds in nanoseconds, what the chain measures: a hook's time is placed with integer
 * compares, no conversion to seconds. ns <= bounds_ns[i] exactly when ns / 1e9 <= bounds[i] (each
 * bound is a whole number of ns, and neighbouring ns values differ by far more than a double's
 * rounding), so every observation lands in the bucket it landed in when compared in seconds.
 */
static const uint64_t bounds_ns[NBUCKETS] = {
    5000,       10000,      25000,      50000,       100000,      250000,      500000,    1000000,
    2500000,    5000000,    10000000,   25000000,    50000000,    100000000,   250000000, 500000000,
    1000000000, 2500000000, 5000000000, 10000000000, 30000000000, 60000000000,
};

typedef struct hist_s {
    uint64_t buckets[NBUCKETS]; /* non-cumulative */
    uint64_t count;
    uint64_t sum_ns; /* rendered in seconds; 2^64 ns is 584 years of hook time */
} hist_t;

/* type x operation x rejected */
#define NSERIES (2 * ADM_METRICS_OPERATIONS * 2)
#define SERIES(type, op, rejected) (((size_t)(type)*ADM_METRICS_OPERATIONS + (op)) * 2 + ((rejected) ? 1 : 0))

/* rejection_code slots: 0, then 100..599 */
#define NCODES 501
#define NERRORS 3

typedef struct name_series_s {
    hist_t *controller; /* NSERIES, allocated at the first observation */
    hist_t *webhook;
    uint64_t *rejections[2][ADM_METRICS_OPERATIONS][NERRORS]; /* NCODES each */
    uint64_t fail_open[2];
} name_series_t;

#define HASH_SLOTS 1024 /* twice ADM_METRICS_NAMES: probes stay short */

/*
 * The interned names, which every worker must number alike: in the shared memory's common part
 * under --workers (changed under its lock, read without it), else in this process. Entries are
 * only added; an entry's text is in place before its id is published in the hash and in nnames.
 */
typedef struct names_s {
    size_t nnames;            /* [0] is "other" */
    int16_t hash[HASH_SLOTS]; /* index into text, 0: empty */
    const char *text[ADM_METRICS_NAMES];
} names_t;

/* What one process (or one worker's slot) counts. */
typedef struct registry_s {
    name_series_t names[ADM_METRICS_NAMES];
    hist_t step[NSERIES];
    uint64_t reloads[2];  /* [0] failure, [1] success */
    int64_t client_conns; /* under --workers: this worker's open downstream connections */
} registry_t;

static names_t local_names;
static registry_t local_reg;
static names_t *names = &local_names;
static registry_t *reg = &local_reg;
static size_t (*client_gauge)(void *);
static void *client_gauge_arg;

static const char *const type_names[] = {"admit", "validate"};
static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
static const char *const error_names[] = {"calling_webhook_error", "apiserver_internal_error", "no_error"};

static bool shared(void)
{
    return names != &local_names;
}

/* A series array of this process's registry: in its worker slot when it has one. */
static void *series_calloc(size_t n, size_t size)
{
    return reg != &local_reg ? adm_shm_alloc(n * size) : calloc(n, size);
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

/* The id of name, or 0 with *free_slot set to the hash slot where it would go. */
static int lookup(const char *name, uint32_t *free_slot)
{
    uint32_t slot;

    for (slot = fnv1a(name) % HASH_SLOTS;; slot = (slot + 1) % HASH_SLOTS) {
        int16_t id = __atomic_load_n(&names->hash[slot], __ATOMIC_ACQUIRE);

        if (id == 0) {
            break;
        }
        if (strcmp(names->text[id], name) == 0) {
            return id;
        }
    }
    *free_slot = slot;
    return 0;
}

static char *copy_name(const char *name)
{
    size_t len = strlen(name) + 1;
    char *text = shared() ? adm_shm_common_alloc(len) : malloc(len);

    if (text != NULL) {
        memcpy(text, name, len);
    }
    return text;
}

static int intern(const char *name)
{
    uint32_t slot;
    int id = lookup(name, &slot); /* again: another worker may have added it meanwhile */
    char *text;

    if (id != 0) {
        return id;
    }
    if (names->nnames == 0) {
        names->nnames = 1; /* "other" */
    }
    if (names->nnames == ADM_METRICS_NAMES) {
        return 0;
    }
    text = copy_name(name);
    if (text == NULL) {
        return 0;
    }
    id = (int)names->nnames;
    names->text[id] = text;
    __atomic_store_n(&names->hash[slot], (int16_t)id, __ATOMIC_RELEASE);
    __atomic_store_n(&names->nnames, (size_t)id + 1, __ATOMIC_RELEASE);
    return id;
}

int adm_metrics_name(const char *name)
{
    uint32_t slot;
    int id;

    if (name == NULL) {
        return 0;
    }
    id = lookup(name, &slot);
    if (id == 0) {
        adm_shm_lock();
        id = intern(name);
        adm_shm_unlock();
    }
    return id;
}

static size_t nnames(void)
{
    return __atomic_load_n(&names->nnames, __ATOMIC_ACQUIRE);
}

static inline void observe(hist_t *h, uint64_t ns)
{
    /* most hooks take microseconds: the scan from the smallest bound ends in a step or two */
    for (int i = 0; i < NBUCKETS; i++) {
        if (ns <= bounds_ns[i]) {
            h->buckets[i]++;
            break;
        }
    }
    h->count++;
    h->sum_ns += ns;
}

static name_series_t *series_of(int name)
{
    if (name < 0 || (size_t)name >= ADM_METRICS_NAMES || (name > 0 && (size_t)name >= nnames())) {
        name = 0;
    }
    return &reg->names[name];
}

void adm_metrics_step(adm_mx_type_t type, unsigned operation, bool rejected, uint64_t ns)
{
    if (operation < ADM_METRICS_OPERATIONS) {
        observe(&reg->step[SERIES(type, operation, rejected)], ns);
    }
}

/* *at allocated zeroed, once for the process; published last, as a scrape may read it. */
__attribute__((noinline, cold)) static void *lazy_alloc(void **at, size_t n, size_t size)
{
    void *p = series_calloc(n, size);

    __atomic_store_n(at, p, __ATOMIC_RELEASE);
    return p; /* NULL: a lost observation, not a failed request */
}

/* The array *at, allocated the first time. Only this process stores it: a plain load reads it. */
static inline void *lazy_array(void **at, size_t n, size_t size)
{
    void *p = *at;

    return p != NULL ? p : lazy_alloc(at, n, size);
}

/*
 * Every hook of every request comes here (20 a request with kube's default set): inline, with the
 * allocation of a name's first series out of line, so the common path saves no registers.
 */
static inline void observe_named(hist_t **family, adm_mx_type_t type, unsigned operation, bool rejected,
                                 uint64_t ns)
{
    hist_t *series;

    if (operation >= ADM_METRICS_OPERATIONS) {
        return;
    }
    series = lazy_array((void **)family, NSERIES, sizeof(hist_t));
    if (series != NULL) {
        observe(&series[SERIES(type, operation, rejected)], ns);
    }
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
    uint64_t **at;
    uint64_t *codes;

    if (operation >= ADM_METRICS_OPERATIONS || (unsigned)error >= NERRORS) {
        return;
    }
    at = &series_of(name)->rejections[type][operation][error];
    codes = lazy_array((void **)at, NCODES, sizeof(uint64_t));
    if (codes != NULL) {
        codes[code >= 100 && code <= 599 ? code - 99 : 0]++;
    }
}

void adm_metrics_webhook_fail_open(int name, adm_mx_type_t type)
{
    series_of(name)->fail_open[type]++;
}

void adm_metrics_config_reload(bool ok)
{
    reg->reloads[ok ? 1 : 0]++;
}

void adm_metrics_client_gauge(size_t (*fn)(void *arg), void *arg)
{
    client_gauge = fn;
    client_gauge_arg = arg;
}

void adm_metrics_client_conn(int delta)
{
    reg->client_conns += delta;
}

int adm_metrics_share(void)
{
    names_t *common = adm_shm_common(sizeof(names_t));

    if (common == NULL) {
        return ADM_ENOMEM;
    }
    names = common;
    return 0;
}

void adm_metrics_attach_worker(void)
{
    registry_t *mine = adm_shm_part((unsigned)adm_shm_self(), ADM_SHM_ADMISSION, sizeof(registry_t));

    if (mine != NULL) {
        reg = mine;
        /* a restarted worker's downstream connections died with its predecessor */
        reg->client_conns = 0;
    }
    adm_metrics_attach_worker_psa();
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
    return id == 0 ? "other" : names->text[id];
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
                           (double)h->sum_ns / 1e9);
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

static int render_named_family(adm_buf_t *out, adm_buf_t *labels, const registry_t *r, const char *family,
                               const char *help, bool webhooks)
{
    int err = adm_buf_appendf(out, "# HELP %s %s\n# TYPE %s histogram\n", family, help, family);

    for (size_t id = 0; id < nnames(); id++) {
        const hist_t *series = webhooks ? r->names[id].webhook : r->names[id].controller;

        if (series != NULL) {
            err |= render_series(out, labels, family, name_text(id), series);
        }
    }
    return err;
}

static int render_rejections(adm_buf_t *out, const registry_t *r)
{
    int err = adm_buf_append_str(out, "# HELP admitd_webhook_rejection_count Webhook answers that rejected "
                                      "the request, by error type and code.\n"
                                      "# TYPE admitd_webhook_rejection_count counter\n");

    for (size_t id = 0; id < nnames(); id++) {
        for (size_t t = 0; t < 2; t++) {
            for (size_t op = 0; op < ADM_METRICS_OPERATIONS; op++) {
                for (size_t e = 0; e < NERRORS; e++) {
                    const uint64_t *codes = r->names[id].rejections[t][op][e];

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

static int render_fail_open(adm_buf_t *out, const registry_t *r)
{
    int err = adm_buf_append_str(out, "# HELP admitd_webhook_fail_open_count Webhook call failures ignored "
                                      "under failurePolicy Ignore.\n"
                                      "# TYPE admitd_webhook_fail_open_count counter\n");

    for (size_t id = 0; id < nnames(); id++) {
        for (size_t t = 0; t < 2; t++) {
            if (r->names[id].fail_open[t] == 0) {
                continue;
            }
            err |= adm_buf_append_str(out, "admitd_webhook_fail_open_count{name=\"");
            err |= append_label(out, name_text(id));
            err |= adm_buf_appendf(out, "\",type=\"%s\"} %llu\n", type_names[t],
                                   (unsigned long long)r->names[id].fail_open[t]);
        }
    }
    return err;
}

static void add_hist_array(hist_t *sum, const hist_t *from, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < NBUCKETS; b++) {
            sum[i].buckets[b] += from[i].buckets[b];
        }
        sum[i].count += from[i].count;
        sum[i].sum_ns += from[i].sum_ns;
    }
}

/* The array *sum, allocated zeroed the first time from has something to add; NULL: nothing to add. */
static void *sum_target(void **sum, const void *from, size_t n, size_t size)
{
    if (from != NULL && *sum == NULL) {
        *sum = calloc(n, size);
    }
    return from != NULL ? *sum : NULL;
}

static void add_hists(hist_t **sum, const hist_t *from, size_t n)
{
    hist_t *to = sum_target((void **)sum, from, n, sizeof(hist_t));

    if (to != NULL) {
        add_hist_array(to, from, n);
    }
}

static void add_counts(uint64_t **sum, const uint64_t *from, size_t n)
{
    uint64_t *to = sum_target((void **)sum, from, n, sizeof(uint64_t));

    for (size_t i = 0; to != NULL && i < n; i++) {
        to[i] += from[i];
    }
}

static void add_name(name_series_t *sum, const name_series_t *from)
{
    add_hists(&sum->controller, __atomic_load_n(&from->controller, __ATOMIC_ACQUIRE), NSERIES);
    add_hists(&sum->webhook, __atomic_load_n(&from->webhook, __ATOMIC_ACQUIRE), NSERIES);
    for (size_t t = 0; t < 2; t++) {
        for (size_t op = 0; op < ADM_METRICS_OPERATIONS; op++) {
            for (size_t e = 0; e < NERRORS; e++) {
                add_counts(&sum->rejections[t][op][e],
                           __atomic_load_n(&from->rejections[t][op][e], __ATOMIC_ACQUIRE), NCODES);
            }
        }
        sum->fail_open[t] += from->fail_open[t];
    }
}

static void free_registry(registry_t *r)
{
    for (size_t id = 0; id < ADM_METRICS_NAMES; id++) {
        name_series_t *n = &r->names[id];

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
    memset(r, 0, sizeof(*r));
}

/* Under --workers: every worker's slot added up (a scrape's copy, freed after rendering). */
static registry_t *sum_workers(void)
{
    registry_t *sum = calloc(1, sizeof(*sum));
    size_t n = nnames();

    if (sum == NULL) {
        return NULL;
    }
    for (unsigned w = 0; w < adm_shm_workers(); w++) {
        const registry_t *r = adm_shm_part(w, ADM_SHM_ADMISSION, sizeof(registry_t));

        if (r == NULL) {
            continue;
        }
        for (size_t id = 0; id < n; id++) {
            add_name(&sum->names[id], &r->names[id]);
        }
        add_hist_array(sum->step, r->step, NSERIES);
        sum->reloads[0] += r->reloads[0];
        sum->reloads[1] += r->reloads[1];
        sum->client_conns += r->client_conns;
    }
    return sum;
}

int adm_metrics_render_admission(adm_buf_t *out)
{
    adm_buf_t labels = ADM_BUF_INIT;
    registry_t *sum = adm_shm_workers() > 0 ? sum_workers() : NULL;
    const registry_t *r = sum != NULL ? sum : reg;
    size_t clients;
    int err = 0;

    if (adm_shm_workers() > 0) {
        if (sum == NULL) {
            return ADM_ENOMEM;
        }
        clients = sum->client_conns > 0 ? (size_t)sum->client_conns : 0;
    } else {
        clients = client_gauge != NULL ? client_gauge(client_gauge_arg) : 0;
    }
    /* right after the server's own section, which declared the family and wrote side="server" */
    err |= adm_buf_appendf(out, "admitd_connections{side=\"client\"} %zu\n", clients);
    err |= adm_buf_append_str(out, "# HELP admitd_admission_step_duration_seconds Time of an admission "
                                   "phase (admit or validate) for one request.\n"
                                   "# TYPE admitd_admission_step_duration_seconds histogram\n");
    err |= render_series(out, &labels, "admitd_admission_step_duration_seconds", NULL, r->step);
    err |= render_named_family(out, &labels, r, "admitd_admission_controller_duration_seconds",
                               "Time of one built-in admission plugin's hook.", false);
    err |= render_named_family(out, &labels, r, "admitd_webhook_admission_duration_seconds",
                               "Time of one downstream webhook call.", true);
    err |= render_rejections(out, r);
    err |= render_fail_open(out, r);
    err |= adm_buf_appendf(out,
                           "# HELP admitd_config_reloads_total Configuration reloads, by result.\n"
                           "# TYPE admitd_config_reloads_total counter\n"
                           "admitd_config_reloads_total{result=\"success\"} %llu\n"
                           "admitd_config_reloads_total{result=\"failure\"} %llu\n",
                           (unsigned long long)r->reloads[1], (unsigned long long)r->reloads[0]);
    err |= adm_metrics_render_psa(out);
    adm_buf_free(&labels);
    if (sum != NULL) {
        free_registry(sum);
        free(sum);
    }
    return err != 0 ? ADM_ENOMEM : 0;
}

void adm_metrics_reset(void)
{
    if (shared()) {
        return; /* the workers' memory is never forgotten: counters must not go backwards */
    }
    for (size_t id = 1; id < local_names.nnames; id++) {
        free((char *)local_names.text[id]);
    }
    free_registry(&local_reg);
    memset(&local_names, 0, sizeof(local_names));
    client_gauge = NULL;
    client_gauge_arg = NULL;
    adm_metrics_reset_psa();
}

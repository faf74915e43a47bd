/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admitd-bench's reports (report.h): the text summary, the JSON document with the full histogram,
 * and the HTML page whose inline SVG plots latency by percentile; all from one run's counters.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double quantiles[] = {0.5, 0.9, 0.99, 0.999};
static const char *const quantile_names[] = {"p50", "p90", "p99", "p99.9"};
#define NQ (sizeof(quantiles) / sizeof(quantiles[0]))

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

/* The warning a thread above THREAD_BUSY_LIMIT gets, in the text and the JSON report alike. */
static void busy_warning(const report_t *r, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "thread %zu was %.0f%% busy: the figure is the generator's limit, not the server's%s",
             i, thread_busy(&r->threads[i].usage) * 100, r->nthreads == 1 ? " (try --threads)" : "");
}

static bool is_busy(const report_t *r, size_t i)
{
    return thread_busy(&r->threads[i].usage) > THREAD_BUSY_LIMIT;
}

void report_text(const report_t *r, FILE *out)
{
    const tally_t *t = r->tally;
    const adm_hist_t *h = &t->hist;
    char warning[256];

    fprintf(out, "target: %s\n", r->url);
    if (r->closed) {
        fprintf(out, "mode: closed loop, %llu connections, %.1f s measured after %.1f s warmup\n",
                (unsigned long long)r->connections, r->duration_s, r->warmup_s);
    } else {
        fprintf(
            out,
            "mode: open loop at %.0f req/s, up to %llu connections, %.1f s measured after %.1f s warmup\n",
            r->rate, (unsigned long long)r->connections, r->duration_s, r->warmup_s);
    }
    fprintf(out, "reviews: %zu from %s\n", r->nreviews, r->reviews);
    fprintf(out, "requests: %llu sent, %llu allowed, %llu denied, %llu errors", (unsigned long long)t->sent,
            (unsigned long long)t->outcomes[OUT_ALLOWED], (unsigned long long)t->outcomes[OUT_DENIED],
            (unsigned long long)tally_errors(t));
    if (t->unfinished > 0) {
        fprintf(out, ", %llu unfinished", (unsigned long long)t->unfinished);
    }
    fputc('\n', out);
    if (tally_errors(t) > 0) {
        fprintf(out, "errors:");
        for (int o = OUT_HTTP_ERROR; o < OUT_COUNT; o++) {
            if (t->outcomes[o] > 0) {
                fprintf(out, " %s %llu", outcome_name((outcome_t)o), (unsigned long long)t->outcomes[o]);
            }
        }
        for (int s = 0; s < TALLY_HTTP_STATUSES; s++) {
            if (t->http_status[s] > 0) {
                fprintf(out, " (HTTP %d: %llu)", s, (unsigned long long)t->http_status[s]);
            }
        }
        fputc('\n', out);
    }
    fprintf(out, "throughput: %.1f req/s\n", r->throughput);
    if (h->total > 0) {
        fprintf(out, "latency%s: min %.3f ms", r->closed ? "" : " (from intended send time)", ms(h->min_ns));
        for (size_t i = 0; i < NQ; i++) {
            fprintf(out, ", %s %.3f", quantile_names[i], ms(adm_hist_quantile(h, quantiles[i])));
        }
        fprintf(out, ", max %.3f ms\n", ms(h->max_ns));
    }
    fprintf(out, "client CPU: %.0f%% of one core; busy by thread:", r->cpu_percent);
    for (size_t i = 0; i < r->nthreads; i++) {
        fprintf(out, " %.0f%%", thread_busy(&r->threads[i].usage) * 100);
    }
    fputc('\n', out);
    if (r->nthreads > 1) {
        fprintf(out, "sent by thread:");
        for (size_t i = 0; i < r->nthreads; i++) {
            fprintf(out, " %llu", (unsigned long long)r->threads[i].sent);
        }
        fputc('\n', out);
    }
    for (size_t i = 0; i < r->nthreads; i++) {
        if (is_busy(r, i)) {
            busy_warning(r, i, warning, sizeof(warning));
            fprintf(out, "warning: %s\n", warning);
        }
    }
}

static void json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\') {
            fprintf(f, "\\%c", ch);
        } else if (ch < 0x20) {
            fprintf(f, "\\u%04x", ch);
        } else {
            fputc(ch, f);
        }
    }
    fputc('"', f);
}

int report_json(const report_t *r, FILE *f)
{
    const tally_t *t = r->tally;
    const adm_hist_t *h = &t->hist;
    char warning[256];
    bool first = true;

    fprintf(f, "{\n  \"url\": ");
    json_escape(f, r->url);
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"rate\": %.3f,\n  \"connections\": %llu,\n",
            r->closed ? "closed" : "open", r->closed ? 0.0 : r->rate, (unsigned long long)r->connections);
    fprintf(f, "  \"duration_seconds\": %.3f,\n  \"warmup_seconds\": %.3f,\n  \"reviews\": %zu,\n",
            r->duration_s, r->warmup_s, r->nreviews);
    fprintf(f, "  \"requests\": {\"sent\": %llu, \"unfinished\": %llu", (unsigned long long)t->sent,
            (unsigned long long)t->unfinished);
    for (int o = 0; o < OUT_COUNT; o++) {
        fprintf(f, ", \"%s\": %llu", outcome_name((outcome_t)o), (unsigned long long)t->outcomes[o]);
    }
    fprintf(f, "},\n  \"http_errors\": {");
    for (int s = 0; s < TALLY_HTTP_STATUSES; s++) {
        if (t->http_status[s] > 0) {
            fprintf(f, "%s\"%d\": %llu", first ? "" : ", ", s, (unsigned long long)t->http_status[s]);
            first = false;
        }
    }
    fprintf(f, "},\n  \"throughput_rps\": %.3f,\n  \"client_cpu_percent\": %.1f,\n", r->throughput,
            r->cpu_percent);
    /* each loop's own share and CPU (busy: of its own wall time), then a warning per busy one */
    fprintf(f, "  \"threads\": [");
    for (size_t i = 0; i < r->nthreads; i++) {
        const thread_report_t *th = &r->threads[i];

        fprintf(f,
                "%s\n    {\"sent\": %llu, \"answered\": %llu, \"cpu_seconds\": %.3f, \"busy_percent\": %.1f}",
                i > 0 ? "," : "", (unsigned long long)th->sent, (unsigned long long)th->answered,
                (double)th->usage.cpu_ns / 1e9, thread_busy(&th->usage) * 100);
    }
    fprintf(f, "\n  ],\n  \"warnings\": [");
    first = true;
    for (size_t i = 0; i < r->nthreads; i++) {
        if (is_busy(r, i)) {
            busy_warning(r, i, warning, sizeof(warning));
            fputs(first ? "\n    " : ",\n    ", f);
            json_escape(f, warning);
            first = false;
        }
    }
    fprintf(f, "%s],\n", first ? "" : "\n  ");
    fprintf(f, "  \"latency_ns\": {\"count\": %llu, \"min\": %llu, \"mean\": %.0f",
            (unsigned long long)h->total, (unsigned long long)(h->total > 0 ? h->min_ns : 0),
            h->total > 0 ? (double)(h->sum_ns / h->total) : 0.0);
    for (size_t i = 0; i < NQ; i++) {
        fprintf(f, ", \"%s\": %llu", quantile_names[i],
                (unsigned long long)adm_hist_quantile(h, quantiles[i]));
    }
    fprintf(f, ", \"max\": %llu, \"overflow\": %llu},\n", (unsigned long long)h->max_ns,
            (unsigned long long)h->overflow);
    /* Every non-empty bucket: [low_ns, high_ns, count]. */
    fprintf(f, "  \"histogram\": [");
    first = true;
    for (size_t i = 0; i < ADM_HIST_BUCKETS; i++) {
        if (h->counts[i] > 0) {
            fprintf(f, "%s\n    [%llu, %llu, %llu]", first ? "" : ",",
                    (unsigned long long)adm_hist_bucket_low(i), (unsigned long long)adm_hist_bucket_high(i),
                    (unsigned long long)h->counts[i]);
            first = false;
        }
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* The plot's x axis: percentile p as the number of nines, -log10(1 - p), capped at 6 (99.9999). */
#define PLOT_W 720
#define PLOT_H 400
#define MARGIN_L 70
#define MARGIN_B 50
#define MAX_NINES 6.0

static double nines(double fraction)
{
    double rest = 1.0 - fraction;

    return rest <= 1e-6 ? MAX_NINES : -log10(rest);
}

int report_html(const report_t *r, FILE *f)
{
    const adm_hist_t *h = &r->tally->hist;
    double max_ms = h->total > 0 ? ms(h->max_ns) : 1.0;
    double y_top = max_ms > 0 ? max_ms * 1.05 : 1.0;
    uint64_t cumulative = 0;
    const double px = (double)(PLOT_W - MARGIN_L - 20) / MAX_NINES;
    const double py = (double)(PLOT_H - MARGIN_B - 20) / y_top;
    bool first = true;

    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>admitd-bench report</title>\n"
               "<style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:1em}"
               "svg text{font-size:12px}</style></head><body>\n<h1>admitd-bench</h1>\n<pre>");
    {
        /* the text summary, HTML-escaped */
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);

        if (mem != NULL) {
            report_text(r, mem);
            fclose(mem);
            for (size_t i = 0; i < len; i++) {
                if (buf[i] == '<') {
                    fputs("&lt;", f);
                } else if (buf[i] == '&') {
                    fputs("&amp;", f);
                } else {
                    fputc(buf[i], f);
                }
            }
            free(buf);
        }
    }
    fprintf(f, "</pre>\n<h2>Latency by percentile</h2>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n", PLOT_W, PLOT_H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", PLOT_W, PLOT_H);
    /* axes, grid and labels */
    for (int k = 0; k <= (int)MAX_NINES; k++) {
        static const char *const labels[] = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"};
        double x = MARGIN_L + k * px;

        fprintf(f, "<line x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, x,
                PLOT_H - MARGIN_B);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, PLOT_H - MARGIN_B + 18,
                labels[k]);
    }
    for (int k = 0; k <= 5; k++) {
        double v = y_top * k / 5.0;
        double y = PLOT_H - MARGIN_B - v * py;

        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", MARGIN_L, y,
                PLOT_W - 20, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g ms</text>\n", MARGIN_L - 6, y + 4, v);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">percentile</text>\n", (PLOT_W + MARGIN_L) / 2,
            PLOT_H - 10);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\" points=\"");
    for (size_t i = 0; i < ADM_HIST_BUCKETS && h->total > 0; i++) {
        double x, y;

        if (h->counts[i] == 0) {
            continue;
        }
        if (first) {
            /* start at the minimum, percentile 0 */
            fprintf(f, "%.1f,%.1f ", (double)MARGIN_L, PLOT_H - MARGIN_B - ms(h->min_ns) * py);
            first = false;
        }
        cumulative += h->counts[i];
        x = MARGIN_L + nines((double)cumulative / (double)h->total) * px;
        y = PLOT_H - MARGIN_B - fmin(ms(adm_hist_bucket_high(i)), max_ms) * py;
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "\"/>\n</svg>\n</body></html>\n");
    return fclose(f) == 0 ? 0 : -1;
}

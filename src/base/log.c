/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stderr logger. Each message is formatted into one stack buffer and written with a single write(2)
 * so lines from forked workers never interleave mid-line.
 */
#include "adm/base/log.h"

#include "adm/base/jsonw.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096

static adm_log_format_t log_format = ADM_LOG_TEXT;
static int log_verbosity = 0;

static const char *const level_names[] = {"error", "warn", "info"};

void adm_log_configure(adm_log_format_t format, int verbosity)
{
    log_format = format;
    log_verbosity = verbosity;
}

int adm_log_enabled(int v)
{
    return v <= log_verbosity;
}

static size_t timestamp(char *out, size_t cap)
{
    struct timeval tv;
    struct tm tm;
    size_t n;

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(out + n, cap - n, ".%06ldZ", (long)tv.tv_usec);
    return n;
}

__attribute__((format(printf, 3, 0))) static void emit(adm_log_level_t level, int v, const char *fmt,
                                                       va_list ap)
{
    char msg[LINE_MAX_BYTES];
    /* room for the message escaped at its longest, so a JSON line is never cut inside an escape */
    char line[ADM_JSONW_STRING_MAX(LINE_MAX_BYTES) + 128];
    char ts[40];
    size_t n;
    ssize_t rc;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    timestamp(ts, sizeof(ts));
    if (log_format == ADM_LOG_JSON) {
        n = (size_t)snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"level\":\"%s\",\"v\":%d,\"msg\":", ts,
                             level_names[level], v);
        n = (size_t)(adm_jsonw_put_string(line + n, msg, strlen(msg)) - line);
        line[n++] = '}';
    } else {
        n = (size_t)snprintf(line, sizeof(line) - 1, "%s %s %s", ts, level_names[level], msg);
        if (n > sizeof(line) - 2) {
            n = sizeof(line) - 2;
        }
    }
    line[n++] = '\n';
    rc = write(STDERR_FILENO, line, n);
    (void)rc; /* nothing sensible to do when stderr is gone */
}

void adm_log(adm_log_level_t level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(level, 0, fmt, ap);
    va_end(ap);
}

void adm_log_v(int v, const char *fmt, ...)
{
    va_list ap;

    if (!adm_log_enabled(v)) {
        return;
    }
    va_start(ap, fmt);
    emit(ADM_LOG_INFO, v, fmt, ap);
    va_end(ap);
}

void adm_log_v_json(int v, const char *msg, const char *key, const char *json, size_t len)
{
    char head[LINE_MAX_BYTES];
    char ts[40];
    struct iovec iov[3];
    size_t n;
    ssize_t rc;

    if (!adm_log_enabled(v)) {
        return;
    }
    timestamp(ts, sizeof(ts));
    if (log_format == ADM_LOG_JSON) {
        n = (size_t)snprintf(head, sizeof(head), "{\"ts\":\"%s\",\"level\":\"info\",\"v\":%d,\"msg\":", ts,
                             v);
        n = (size_t)(adm_jsonw_put_string(head + n, msg, strnlen(msg, 256)) - head);
        n += (size_t)snprintf(head + n, sizeof(head) - n, ",\"%.64s\":", key);
    } else {
        n = (size_t)snprintf(head, sizeof(head), "%s info %.256s %.64s=", ts, msg, key);
    }
    iov[0].iov_base = head;
    iov[0].iov_len = n < sizeof(head) ? n : sizeof(head) - 1;
    iov[1].iov_base = (void *)json;
    iov[1].iov_len = len;
    iov[2].iov_base = log_format == ADM_LOG_JSON ? "}\n" : "\n";
    iov[2].iov_len = log_format == ADM_LOG_JSON ? 2 : 1;
    /* one writev: the line is not interleaved with other writers' lines */
    rc = writev(STDERR_FILENO, iov, 3);
    (void)rc;
}

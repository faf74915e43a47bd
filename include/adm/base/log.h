/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging to stderr, one line per message, as text or JSON (--log-format), with klog-style
 * verbosity (--v N: a message at verbosity V is written when V <= N). Errors, warnings and info are
 * always written. Log where an error is handled, not at every layer it passes.
 *
 * The format and verbosity are process-wide: the one documented exception to the rule that mutable
 * state lives in an object its owner holds and passes in (issue 12). Every layer logs, down to
 * helpers that have no owner to ask, and the settings are two values written once, by
 * adm_log_configure() at start before any loop runs (or a worker is forked), and only read after;
 * carrying a logger through every call would cost more than it protects.
 */
#ifndef ADM_LOG_H
#define ADM_LOG_H

#include <stddef.h>

typedef enum adm_log_format_e { ADM_LOG_TEXT, ADM_LOG_JSON } adm_log_format_t;

typedef enum adm_log_level_e {
    ADM_LOG_ERROR,
    ADM_LOG_WARN,
    ADM_LOG_INFO,
} adm_log_level_t;

/** Sets the output format and verbosity; the defaults are text and 0. */
void adm_log_configure(adm_log_format_t format, int verbosity);

/** True when messages at verbosity v would be written (so callers can skip building them). */
int adm_log_enabled(int v);

/** Writes one message at a level (verbosity 0). */
void adm_log(adm_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Writes one info message at verbosity v, if enabled. */
void adm_log_v(int v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Writes one info line at verbosity v, if enabled, carrying a JSON value (len bytes, valid JSON,
 * not checked) under key: {"ts","level","v","msg",KEY:VALUE} in JSON format, `TS info MSG KEY=VALUE`
 * in text.
 */
void adm_log_v_json(int v, const char *msg, const char *key, const char *json, size_t len);

#define adm_log_error(...) adm_log(ADM_LOG_ERROR, __VA_ARGS__)
#define adm_log_warn(...) adm_log(ADM_LOG_WARN, __VA_ARGS__)
#define adm_log_info(...) adm_log(ADM_LOG_INFO, __VA_ARGS__)

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Command-line walking for admitd-bench and admitd-mockhook: "--flag value" and "--flag=value",
 * and the one-line, exit-2 error INTERFACE.md asks of every binary.
 */
#ifndef ADM_BENCH_CLI_H
#define ADM_BENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cli_s {
    const char *prog;
    int argc;
    char **argv;
    int i;            /* next argument */
    const char *flag; /* the flag being read, for messages */
} cli_t;

void cli_init(cli_t *c, const char *prog, int argc, char **argv);

/* The next flag's name (without any "=value"), or NULL at the end. */
const char *cli_next(cli_t *c);

/* True when the current flag is name. */
bool cli_is(const cli_t *c, const char *name);

/* The current flag's value (after '=' or the next argument); exits 2 when it is missing. */
const char *cli_value(cli_t *c);

/* Exits 2 when the current flag carried "=value" but takes none. */
void cli_no_value(cli_t *c);

/* Value parsers that exit 2 naming the flag on a bad value. */
uint64_t cli_uint(cli_t *c, uint64_t min, uint64_t max);
uint64_t cli_duration_ms(cli_t *c);

/* Prints "PROG: message" and exits 2. */
void cli_fail(const cli_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif

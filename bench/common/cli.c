/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flag walker of admitd-bench and admitd-mockhook (cli.h): both spellings of a flag's value,
 * and the one-line error with exit 2 that every binary owes a bad command line.
 */
#include "cli.h"

#include "adm/base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_init(cli_t *c, const char *prog, int argc, char **argv)
{
    c->prog = prog;
    c->argc = argc;
    c->argv = argv;
    c->i = 1;
    c->flag = NULL;
}

void cli_fail(const cli_t *c, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", c->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static char name_buf[64];

const char *cli_next(cli_t *c)
{
    const char *arg;
    const char *eq;
    size_t len;

    if (c->i >= c->argc) {
        return NULL;
    }
    arg = c->argv[c->i];
    if (strncmp(arg, "--", 2) != 0) {
        cli_fail(c, "unexpected argument \"%s\" (flags start with --; see --help)", arg);
    }
    eq = strchr(arg, '=');
    len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof(name_buf)) {
        cli_fail(c, "unknown flag %.60s... (see --help)", arg);
    }
    memcpy(name_buf, arg, len);
    name_buf[len] = '\0';
    c->flag = name_buf;
    return c->flag;
}

bool cli_is(const cli_t *c, const char *name)
{
    return strcmp(c->flag, name) == 0;
}

const char *cli_value(cli_t *c)
{
    const char *arg = c->argv[c->i];
    const char *eq = strchr(arg, '=');

    c->i++;
    if (eq != NULL) {
        return eq + 1;
    }
    if (c->i >= c->argc) {
        cli_fail(c, "%s needs a value", c->flag);
    }
    return c->argv[c->i++];
}

void cli_no_value(cli_t *c)
{
    if (strchr(c->argv[c->i], '=') != NULL) {
        cli_fail(c, "%s takes no value", c->flag);
    }
    c->i++;
}

uint64_t cli_uint(cli_t *c, uint64_t min, uint64_t max)
{
    const char *flag = c->flag;
    const char *v = cli_value(c);
    uint64_t n;

    if (adm_parse_uint(v, max, &n) != 0 || n < min) {
        cli_fail(c, "%s: \"%s\" is not a whole number between %llu and %llu", flag, v,
                 (unsigned long long)min, (unsigned long long)max);
    }
    return n;
}

uint64_t cli_duration_ms(cli_t *c)
{
    const char *flag = c->flag;
    const char *v = cli_value(c);
    uint64_t ms;

    if (adm_parse_duration_ms(v, &ms) != 0) {
        cli_fail(c, "%s: \"%s\" is not a duration (e.g. 250ms, 10s, 1m)", flag, v);
    }
    return ms;
}

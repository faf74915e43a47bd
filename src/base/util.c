/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The helpers of util.h. The flag value parsers are strict: trailing garbage, overflow and empty
 * input are errors. The uid generator keeps its state in the caller's adm_uuid_gen_t.
 */
#include "adm/base/util.h"

#include "adm/base/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int adm_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (s == NULL || *s == '\0') {
        return ADM_EINVAL;
    }
    for (; *s != '\0'; s++) {
        unsigned d;

        if (*s < '0' || *s > '9') {
            return ADM_EINVAL;
        }
        d = (unsigned)(*s - '0');
        /* d > max first: max - d would wrap and let a one-digit value above a small max through */
        if (d > max || v > (max - d) / 10) {
            return ADM_EINVAL;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Microseconds per unit, longest unit names first so "ms" is not read as "m". */
static const struct {
    const char *name;
    uint64_t us;
} duration_units[] = {
    {"ns", 0},      {"us", 1},       {"\xc2\xb5s", 1},     {"ms", 1000},
    {"s", 1000000}, {"m", 60000000}, {"h", 3600000000ULL},
};

int adm_parse_duration_ms(const char *s, uint64_t *ms)
{
    const uint64_t limit_us = (uint64_t)1 << 62;
    uint64_t total_us = 0;
    int parts = 0;

    if (s == NULL || *s == '\0') {
        return ADM_EINVAL;
    }
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return 0;
    }
    while (*s != '\0') {
        uint64_t whole = 0, frac = 0, frac_scale = 1, unit_us = 0;
        size_t unit_len = 0;
        int digits = 0;

        for (; *s >= '0' && *s <= '9'; s++, digits++) {
            if (whole > limit_us / 10) {
                return ADM_EINVAL;
            }
            whole = whole * 10 + (uint64_t)(*s - '0');
        }
        if (*s == '.') {
            for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
                if (frac_scale < 1000000000ULL) {
                    frac = frac * 10 + (uint64_t)(*s - '0');
                    frac_scale *= 10;
                }
            }
        }
        if (digits == 0) {
            return ADM_EINVAL;
        }
        for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
            size_t n = strlen(duration_units[i].name);

            if (strncmp(s, duration_units[i].name, n) == 0 && n > unit_len) {
                unit_len = n;
                unit_us = duration_units[i].us;
            }
        }
        if (unit_len == 0) {
            return ADM_EINVAL;
        }
        s += unit_len;
        if (unit_us == 0) {
            /* Nanoseconds: round any non-zero amount up to a microsecond. */
            total_us += (whole > 0 || frac > 0) ? (whole + 999) / 1000 : 0;
        } else {
            if (whole > limit_us / unit_us) {
                return ADM_EINVAL;
            }
            total_us += whole * unit_us + (frac * unit_us + frac_scale - 1) / frac_scale;
        }
        if (total_us > limit_us) {
            return ADM_EINVAL;
        }
        parts++;
    }
    if (parts == 0) {
        return ADM_EINVAL;
    }
    *ms = (total_us + 999) / 1000;
    return 0;
}

int adm_parse_hostport(const char *s, struct sockaddr_storage *addr)
{
    const char *colon;
    char host[64];
    size_t host_len;
    uint64_t port;

    if (s == NULL) {
        return ADM_EINVAL;
    }
    memset(addr, 0, sizeof(*addr));
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;

        if (close == NULL || close[1] != ':') {
            return ADM_EINVAL;
        }
        host_len = (size_t)(close - s - 1);
        if (host_len == 0 || host_len >= sizeof(host)) {
            return ADM_EINVAL;
        }
        memcpy(host, s + 1, host_len);
        host[host_len] = '\0';
        if (adm_parse_uint(close + 2, 65535, &port) != 0 || inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) {
            return ADM_EINVAL;
        }
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        return 0;
    }
    colon = strrchr(s, ':');
    if (colon == NULL) {
        return ADM_EINVAL;
    }
    host_len = (size_t)(colon - s);
    if (host_len >= sizeof(host) || adm_parse_uint(colon + 1, 65535, &port) != 0) {
        return ADM_EINVAL;
    }
    memcpy(host, s, host_len);
    host[host_len] = '\0';
    {
        struct sockaddr_in *a4 = (struct sockaddr_in *)addr;

        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        if (host_len == 0) {
            a4->sin_addr.s_addr = htonl(INADDR_ANY);
        } else if (strcmp(host, "localhost") == 0) {
            a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
            return ADM_EINVAL;
        }
    }
    return 0;
}

void adm_format_addr(const struct sockaddr *addr, char *out, size_t out_len)
{
    char host[INET6_ADDRSTRLEN];

    if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)addr;

        inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
        snprintf(out, out_len, "[%s]:%u", host, ntohs(a6->sin6_port));
    } else if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)addr;

        inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
        snprintf(out, out_len, "%s:%u", host, ntohs(a4->sin_port));
    } else {
        snprintf(out, out_len, "?");
    }
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool adm_is_dns1123_subdomain(const char *s, size_t len)
{
    size_t label_start = 0;

    if (len == 0 || len > 253) {
        return false;
    }
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            /* a label: alphanumeric at both ends, hyphens inside */
            if (i == label_start || !is_lower_alnum(s[label_start]) || !is_lower_alnum(s[i - 1])) {
                return false;
            }
            label_start = i + 1;
        } else if (!is_lower_alnum(s[i]) && s[i] != '-') {
            return false;
        }
    }
    return true;
}

bool adm_is_qualified_name(const char *s)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    size_t n;

    if (slash != NULL) {
        if (strchr(slash + 1, '/') != NULL || !adm_is_dns1123_subdomain(s, (size_t)(slash - s))) {
            return false;
        }
        name = slash + 1;
    }
    n = strlen(name);
    if (n == 0 || n > 63 || !is_alnum(name[0]) || !is_alnum(name[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.') {
            return false;
        }
    }
    return true;
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void adm_uuid_v4(adm_uuid_gen_t *gen, char *out)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t bits[2];
    int k = 0;

    if (gen->counter == 0) {
        if (getrandom(gen->seed, sizeof(gen->seed), 0) != (ssize_t)sizeof(gen->seed)) {
            gen->seed[0] = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
            gen->seed[1] = splitmix(gen->seed[0]);
        }
    }
    gen->counter++;
    bits[0] = splitmix(gen->seed[0] ^ gen->counter);
    bits[1] = splitmix(gen->seed[1] + gen->counter * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < 36; i++) {
        unsigned nibble = (unsigned)(bits[k / 16] >> (4 * (k % 16))) & 15u;

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            out[i] = '-';
            continue;
        }
        if (i == 14) {
            nibble = 4;
        } else if (i == 19) {
            nibble = 8 | (nibble & 3);
        }
        out[i] = hex[nibble];
        k++;
    }
    out[36] = '\0';
}

int adm_url_split(const char *url, bool *tls, char *host, size_t host_len, uint16_t *port, const char **rest,
                  const char **problem)
{
    const char *p, *end;
    size_t len;

    if (strncmp(url, "https://", 8) == 0) {
        *tls = true;
        p = url + 8;
    } else if (strncmp(url, "http://", 7) == 0) {
        *tls = false;
        p = url + 7;
    } else {
        *problem = "must start with https:// or http://";
        return ADM_EINVAL;
    }
    if (*p == '[') {
        end = strchr(p, ']');
        if (end == NULL) {
            *problem = "unterminated [IPv6] host";
            return ADM_EINVAL;
        }
        p++;
        len = (size_t)(end - p);
        end++;
    } else {
        end = p + strcspn(p, ":/?#");
        len = (size_t)(end - p);
    }
    if (len == 0 || len >= host_len) {
        *problem = len == 0 ? "has no host" : "host too long";
        return ADM_EINVAL;
    }
    memcpy(host, p, len);
    host[len] = '\0';
    *port = *tls ? 443 : 80;
    if (*end == ':') {
        char digits[8];
        size_t n = strcspn(end + 1, "/?#");
        uint64_t v;

        if (n == 0 || n >= sizeof(digits)) {
            *problem = "bad port";
            return ADM_EINVAL;
        }
        memcpy(digits, end + 1, n);
        digits[n] = '\0';
        if (adm_parse_uint(digits, 65535, &v) != 0 || v == 0) {
            *problem = "bad port";
            return ADM_EINVAL;
        }
        *port = (uint16_t)v;
        end += 1 + n;
    }
    *rest = end;
    return 0;
}

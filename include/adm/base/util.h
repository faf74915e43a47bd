/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers with no state of their own: parsers for the values flags take (durations, sizes,
 * host:port addresses), Kubernetes name checks, URL splitting, and version-4 uids from a generator
 * the caller holds.
 */
#ifndef ADM_UTIL_H
#define ADM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/**
 * Parses a Go-style duration ("250ms", "10s", "1m30s", "1.5s", "2h", "0") into milliseconds,
 * rounding sub-millisecond parts up. Returns 0 or ADM_EINVAL.
 */
int adm_parse_duration_ms(const char *s, uint64_t *ms);

/** Parses a non-negative decimal integer no larger than max. Returns 0 or ADM_EINVAL. */
int adm_parse_uint(const char *s, uint64_t max, uint64_t *out);

/**
 * Parses "HOST:PORT" where HOST is an IPv4 literal, "[IPv6]" or "localhost" (127.0.0.1), or empty
 * (all IPv4 interfaces). PORT 0 asks the kernel for a free port. Returns 0 or ADM_EINVAL.
 */
int adm_parse_hostport(const char *s, struct sockaddr_storage *addr);

/** Formats an address as "1.2.3.4:80" or "[::1]:80" into out (always NUL-terminated). */
void adm_format_addr(const struct sockaddr *addr, char *out, size_t out_len);

/** A DNS-1123 subdomain (lowercase labels of [a-z0-9-], dot-separated, at most 253 bytes). */
bool adm_is_dns1123_subdomain(const char *s, size_t len);

/**
 * Kubernetes' IsQualifiedName: an optional DNS-1123 subdomain prefix and "/", then a name of at
 * most 63 bytes of [A-Za-z0-9-_.] that starts and ends alphanumeric (label keys, resource names).
 */
bool adm_is_qualified_name(const char *s);

/**
 * Splits "http[s]://HOST[:PORT]REST" (HOST a name, IPv4, or [IPv6] given without brackets in
 * host) for the places admitd dials a URL: webhook clientConfig.url and admitd-bench --url. port
 * defaults to 443 or 80; *rest points at what follows the authority ("", "/path", "?q"). Returns
 * 0, or ADM_EINVAL with *problem a static reason ("must start with https:// or http://", ...).
 */
int adm_url_split(const char *url, bool *tls, char *host, size_t host_len, uint16_t *port, const char **rest,
                  const char **problem);

/**
 * A UUID generator's state. Its owner holds it and passes it to adm_uuid_v4(), so no uid state is
 * shared behind the caller's back (two owners, or two loops, never touch the same counter).
 * Zeroed storage ({0}, or calloc) is a ready generator: it seeds itself on first use, so a
 * generator made before a fork and first used after it still gives each process its own sequence.
 */
typedef struct adm_uuid_gen_s {
    uint64_t seed[2];
    uint64_t counter; /* uids made so far; 0: not seeded yet */
} adm_uuid_gen_t;

/**
 * Writes a fresh RFC 4122 version-4 UUID and a NUL into out (37 bytes): gen's random seed
 * (getrandom) and counter through a 64-bit mixer, so the uids of one generator never repeat and
 * cannot be predicted from outside the process (generators have independent 128-bit seeds).
 * kube-apiserver sends a fresh one with every webhook call.
 */
void adm_uuid_v4(adm_uuid_gen_t *gen, char *out);

#endif

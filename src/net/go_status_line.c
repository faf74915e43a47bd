/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's reading of an HTTP answer's first line (go_status_line.h): which of its three errors a
 * line earns, and Go's %q quoting to print it with. Which non-ASCII runes Go deems printable
 * needs Unicode tables; as adm_go_quote does, all are printable here but the C1 controls, the
 * soft hyphen, the line and paragraph separators and the byte-order mark.
 */
#include "adm/net/go_status_line.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The length of the UTF-8 sequence at s (n bytes available), or 0 when it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (n >= 2 && (s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
        return *cp >= 0x80 ? 2 : 0;
    }
    if (n >= 3 && (s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
        return *cp >= 0x800 && (*cp < 0xd800 || *cp > 0xdfff) ? 3 : 0;
    }
    if (n >= 4 && (s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
        (s[3] & 0xc0) == 0x80) {
        *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
              ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
        return *cp >= 0x10000 && *cp <= 0x10ffff ? 4 : 0;
    }
    return 0;
}

static char short_escape(uint32_t c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\a': return 'a';
    case '\b': return 'b';
    case '\f': return 'f';
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    case '\v': return 'v';
    default: return 0;
    }
}

size_t adm_go_quote_bytes(char *out, size_t cap, const void *s, size_t n)
{
    const unsigned char *p = s;
    size_t w = 0, i = 0;
    char piece[16];

    if (cap < 3) {
        if (cap > 0) {
            out[0] = '\0';
        }
        return 0;
    }
    out[w++] = '"';
    while (i < n) {
        uint32_t cp = 0;
        size_t len = utf8_len(p + i, n - i, &cp), plen;

        if (len == 0) {
            plen = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", p[i]);
            len = 1;
        } else if (short_escape(cp) != 0) {
            piece[0] = '\\';
            piece[1] = short_escape(cp);
            plen = 2;
        } else if (cp < 0x20 || cp == 0x7f) {
            plen = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", (unsigned)cp);
        } else if (len > 1 && (cp < 0xa0 || cp == 0xad || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)) {
            plen = (size_t)snprintf(piece, sizeof(piece), cp > 0xffff ? "\\U%08x" : "\\u%04x", (unsigned)cp);
        } else {
            memcpy(piece, p + i, len);
            plen = len;
        }
        if (w + plen + 2 > cap) {
            break; /* room for the closing quote and the NUL is kept */
        }
        memcpy(out + w, piece, plen);
        w += plen;
        i += len;
    }
    out[w++] = '"';
    out[w] = '\0';
    return w;
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

/* net/http.ParseHTTPVersion (Go 1.18 on): exactly "HTTP/D.D". */
static bool http_version_ok(const char *s, size_t n)
{
    return n == 8 && memcmp(s, "HTTP/", 5) == 0 && s[5] >= '0' && s[5] <= '9' && s[6] == '.' && s[7] >= '0' &&
           s[7] <= '9';
}

/* strconv.Atoi of a three-byte text: an optional sign, then digits; the value must not be negative. */
static bool status_code_ok(const char *s, size_t n)
{
    if (n != 3) {
        return false;
    }
    if (s[0] == '+') {
        return all_digits(s + 1, 2);
    }
    if (s[0] == '-') {
        return all_digits(s + 1, 2) && s[1] == '0' && s[2] == '0'; /* "-00" is 0 */
    }
    return all_digits(s, 3);
}

static void quoted_error(char *out, size_t cap, const char *what, const char *s, size_t n)
{
    size_t w = (size_t)snprintf(out, cap, "%s ", what);

    if (w < cap) {
        adm_go_quote_bytes(out + w, cap - w, s, n);
    }
}

bool adm_go_status_line_error(const char *line, size_t n, char *out, size_t cap)
{
    const char *sp = memchr(line, ' ', n), *status, *code_end, *end = line + n;

    if (sp == NULL) {
        quoted_error(out, cap, "malformed HTTP response", line, n);
        return true;
    }
    status = sp + 1;
    while (status < end && *status == ' ') {
        status++;
    }
    code_end = memchr(status, ' ', (size_t)(end - status));
    if (code_end == NULL) {
        code_end = end;
    }
    if (!status_code_ok(status, (size_t)(code_end - status))) {
        quoted_error(out, cap, "malformed HTTP status code", status, (size_t)(code_end - status));
        return true;
    }
    if (!http_version_ok(line, (size_t)(sp - line))) {
        quoted_error(out, cap, "malformed HTTP version", line, (size_t)(sp - line));
        return true;
    }
    return false;
}

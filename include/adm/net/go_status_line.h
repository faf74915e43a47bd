/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The words Go's net/http uses for an HTTP answer whose first line it cannot read, so a webhook
 * that answers garbage is reported as kube-apiserver reports it (`malformed HTTP response
 * "bad-http"`), not with a parser's error code. Go reads the first line whole, then checks it in
 * this order (net/http ReadResponse): no space at all; a status code that is not three digits;
 * a protocol that is not HTTP/x.y.
 */
#ifndef ADM_GO_STATUS_LINE_H
#define ADM_GO_STATUS_LINE_H

#include <stdbool.h>
#include <stddef.h>

/**
 * Writes Go's %q of the n bytes at s (strconv.Quote: printable runes kept, `"` and `\` escaped,
 * short escapes for \a\b\f\n\r\t\v, \xNN for bytes that are not UTF-8, \u/\U for other controls)
 * into out, always NUL-terminated. When cap is too small the text is cut at a whole escape and
 * the closing quote is kept. Returns the length written.
 */
size_t adm_go_quote_bytes(char *out, size_t cap, const void *s, size_t n);

/**
 * Checks a response's first line (without its line end) as Go does. Returns false when Go would
 * accept it; true with out set to Go's error ("malformed HTTP response \"...\"", "malformed HTTP
 * status code \"...\"" or "malformed HTTP version \"...\"") when it would not.
 */
bool adm_go_status_line_error(const char *line, size_t n, char *out, size_t cap);

#endif

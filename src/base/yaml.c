/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML to yyjson through libyaml's event parser. The tree is built with an explicit stack, so deep
 * nesting costs heap, never C stack; everything lands in the caller's arena.
 */
#include "adm/base/yaml.h"

#include "adm/base/error.h"
#include "adm/base/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct frame_s {
    yyjson_mut_val *container;
    yyjson_mut_val *key; /* a mapping's key awaiting its value */
    const char *anchor;  /* set when the container was anchored */
    size_t start_nodes;  /* the node count when the container began */
    size_t height;       /* nesting depth of the container so far: 1 + its deepest child's */
} frame_t;

typedef struct anchor_s {
    const char *name;
    yyjson_mut_val *value;
    size_t nodes;  /* size of the anchored value, for the alias budget */
    size_t height; /* its nesting depth: an alias adds this much below where it is placed */
} anchor_t;

typedef struct builder_s {
    adm_arena_t *arena;
    yyjson_alc alc;
    yyjson_mut_doc *doc;
    frame_t *stack;
    size_t depth, stack_cap;
    anchor_t *anchors;
    size_t nanchors, anchors_cap;
    size_t nodes;
    yyjson_val **docs;
    size_t ndocs, docs_cap;
    yyjson_mut_val *root;
    char *err;
    size_t err_len;
} builder_t;

static int fail(builder_t *b, const yaml_mark_t *m, const char *problem)
{
    snprintf(b->err, b->err_len, "line %zu column %zu: %s", m->line + 1, m->column + 1, problem);
    return ADM_EPARSE;
}

static bool grow(adm_arena_t *a, void **p, size_t *cap, size_t used, size_t elem)
{
    size_t ncap;
    void *np;

    if (used < *cap) {
        return true;
    }
    ncap = *cap == 0 ? 16 : *cap * 2;
    np = adm_arena_realloc(a, *p, *cap * elem, ncap * elem);
    if (np == NULL) {
        return false;
    }
    *p = np;
    *cap = ncap;
    return true;
}

static bool in(const char *s, const char *const *list)
{
    for (; *list != NULL; list++) {
        if (strcmp(s, *list) == 0) {
            return true;
        }
    }
    return false;
}

/* go-yaml v2's resolution of an integer: decimal, 0x, 0o or leading-0 octal, 0b; '_' ignored. */
static bool resolve_int(const char *s, yyjson_mut_doc *doc, yyjson_mut_val **out)
{
    char digits[80];
    size_t n = 0;
    const char *p = s;
    bool neg = false;
    int base = 10;
    char *end;

    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
        base = 8;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
        base = 2;
        p += 2;
    } else if (p[0] == '0' && p[1] != '\0') {
        base = 8;
    }
    for (; *p != '\0'; p++) {
        if (*p == '_') {
            continue;
        }
        if (n + 1 >= sizeof(digits)) {
            return false;
        }
        digits[n++] = *p;
    }
    digits[n] = '\0';
    if (n == 0 || digits[0] == '-' || digits[0] == '+') {
        return false;
    }
    errno = 0;
    if (neg) {
        long long v = strtoll(digits, &end, base);

        if (*end != '\0' || errno != 0) {
            /* -9223372036854775808 is the only magnitude strtoll cannot take unsigned-first */
            return false;
        }
        *out = yyjson_mut_sint(doc, -v);
        return true;
    }
    {
        unsigned long long v = strtoull(digits, &end, base);

        if (*end != '\0' || errno != 0) {
            return false;
        }
        *out = v <= INT64_MAX ? yyjson_mut_sint(doc, (int64_t)v) : yyjson_mut_uint(doc, v);
    }
    return true;
}

static bool resolve_float(const char *s, yyjson_mut_doc *doc, yyjson_mut_val **out)
{
    static const char *const nan_words[] = {".nan", ".NaN", ".NAN", NULL};
    static const char *const inf_words[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninf_words[] = {"-.inf", "-.Inf", "-.INF", NULL};
    const char *p = s;
    bool digits = false;
    char *end;
    double d;

    if (in(s, nan_words)) {
        *out = yyjson_mut_real(doc, NAN);
        return true;
    }
    if (in(s, inf_words) || in(s, ninf_words)) {
        *out = yyjson_mut_real(doc, in(s, ninf_words) ? -INFINITY : INFINITY);
        return true;
    }
    /* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    if (*p == '+' || *p == '-') {
        p++;
    }
    while (*p >= '0' && *p <= '9') {
        p++;
        digits = true;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits = true;
        }
    }
    if (!digits) {
        return false;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') {
            p++;
        }
        if (!(*p >= '0' && *p <= '9')) {
            return false;
        }
        while (*p >= '0' && *p <= '9') {
            p++;
        }
    }
    if (*p != '\0') {
        return false;
    }
    d = strtod(s, &end);
    *out = yyjson_mut_real(doc, d);
    return true;
}

static yyjson_mut_val *scalar_value(builder_t *b, const yaml_event_t *ev)
{
    static const char *const true_words[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                             "True", "TRUE", "on",  "On",  "ON",  NULL};
    static const char *const false_words[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                              "False", "FALSE", "off", "Off", "OFF", NULL};
    static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    yyjson_mut_val *v = NULL;

    if (tag != NULL && strcmp(tag, YAML_STR_TAG) == 0) {
        plain = false;
    } else if (tag != NULL && !plain) {
        plain = strcmp(tag, YAML_INT_TAG) == 0 || strcmp(tag, YAML_FLOAT_TAG) == 0 ||
                strcmp(tag, YAML_BOOL_TAG) == 0 || strcmp(tag, YAML_NULL_TAG) == 0;
    }
    if (plain && strlen(text) == len) {
        if (in(text, null_words)) {
            return yyjson_mut_null(b->doc);
        }
        if (in(text, true_words) || in(text, false_words)) {
            return yyjson_mut_bool(b->doc, in(text, true_words));
        }
        if (resolve_int(text, b->doc, &v) || resolve_float(text, b->doc, &v)) {
            return v;
        }
    }
    return yyjson_mut_strncpy(b->doc, text, len);
}

static int remember_anchor(builder_t *b, const char *name, yyjson_mut_val *v, size_t nodes, size_t height)
{
    if (!grow(b->arena, (void **)&b->anchors, &b->anchors_cap, b->nanchors, sizeof(anchor_t))) {
        return ADM_ENOMEM;
    }
    /* A later anchor of the same name shadows the earlier one, as in YAML. */
    b->anchors[b->nanchors].name = adm_arena_strndup(b->arena, name, strlen(name));
    b->anchors[b->nanchors].value = v;
    b->anchors[b->nanchors].nodes = nodes;
    b->anchors[b->nanchors].height = height;
    if (b->anchors[b->nanchors].name == NULL) {
        return ADM_ENOMEM;
    }
    b->nanchors++;
    return 0;
}

/* Puts v where the parser is: the document root, an array element, a key, or a key's value. */
static int place(builder_t *b, yyjson_mut_val *v, const yaml_mark_t *m, bool is_scalar_key_ok)
{
    frame_t *top;

    if (v == NULL) {
        return ADM_ENOMEM;
    }
    if (b->depth == 0) {
        b->root = v;
        return 0;
    }
    top = &b->stack[b->depth - 1];
    if (yyjson_mut_is_arr(top->container)) {
        return yyjson_mut_arr_append(top->container, v) ? 0 : ADM_ENOMEM;
    }
    if (top->key == NULL) {
        if (!is_scalar_key_ok) {
            return fail(b, m, "a mapping key must be a scalar (JSON objects have string keys)");
        }
        top->key = v;
        return 0;
    }
    if (!yyjson_mut_obj_add(top->container, top->key, v)) {
        return ADM_ENOMEM;
    }
    top->key = NULL;
    return 0;
}

/* Mapping keys are strings in JSON: a plain scalar key keeps its text whatever it resolves to. */
static yyjson_mut_val *key_value(builder_t *b, const yaml_event_t *ev)
{
    return yyjson_mut_strncpy(b->doc, (const char *)ev->data.scalar.value, ev->data.scalar.length);
}

static bool expecting_key(const builder_t *b)
{
    const frame_t *top = b->depth > 0 ? &b->stack[b->depth - 1] : NULL;

    return top != NULL && yyjson_mut_is_obj(top->container) && top->key == NULL;
}

static int on_scalar(builder_t *b, const yaml_event_t *ev)
{
    bool is_key = expecting_key(b);
    yyjson_mut_val *v;
    int rc;

    if (is_key && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        strcmp((const char *)ev->data.scalar.value, "<<") == 0) {
        return fail(b, &ev->start_mark, "YAML merge keys (<<) are not supported; write the members out");
    }
    v = is_key ? key_value(b, ev) : scalar_value(b, ev);
    b->nodes++;
    rc = place(b, v, &ev->start_mark, true);
    if (rc == 0 && ev->data.scalar.anchor != NULL) {
        rc = remember_anchor(b, (const char *)ev->data.scalar.anchor, v, 1, 0);
    }
    return rc;
}

static int on_start(builder_t *b, const yaml_event_t *ev, bool is_map)
{
    const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    yyjson_mut_val *v = is_map ? yyjson_mut_obj(b->doc) : yyjson_mut_arr(b->doc);
    int rc;

    if (b->depth >= ADM_JSON_MAX_DEPTH) {
        return fail(b, &ev->start_mark, "nested deeper than 10000 levels");
    }
    b->nodes++;
    rc = place(b, v, &ev->start_mark, false);
    if (rc != 0) {
        return rc;
    }
    if (!grow(b->arena, (void **)&b->stack, &b->stack_cap, b->depth, sizeof(frame_t))) {
        return ADM_ENOMEM;
    }
    b->stack[b->depth].container = v;
    b->stack[b->depth].key = NULL;
    b->stack[b->depth].anchor = NULL;
    if (anchor != NULL) {
        b->stack[b->depth].anchor =
            adm_arena_strndup(b->arena, (const char *)anchor, strlen((const char *)anchor));
        if (b->stack[b->depth].anchor == NULL) {
            return ADM_ENOMEM;
        }
    }
    b->stack[b->depth].start_nodes = b->nodes;
    b->stack[b->depth].height = 1;
    b->depth++;
    return 0;
}

/* A value of this height was placed in the innermost open container. */
static void note_height(builder_t *b, size_t height)
{
    if (b->depth > 0 && b->stack[b->depth - 1].height < height + 1) {
        b->stack[b->depth - 1].height = height + 1;
    }
}

static int on_end(builder_t *b)
{
    frame_t *top = &b->stack[--b->depth];

    note_height(b, top->height);
    if (top->anchor != NULL) {
        return remember_anchor(b, top->anchor, top->container, b->nodes - top->start_nodes + 1, top->height);
    }
    return 0;
}

static int on_alias(builder_t *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;

    for (size_t i = b->nanchors; i-- > 0;) {
        if (strcmp(b->anchors[i].name, name) == 0) {
            yyjson_mut_val *copy;

            if (b->anchors[i].nodes > ADM_YAML_MAX_NODES - b->nodes) {
                return fail(b, &ev->start_mark, "aliases expand past 1000000 nodes");
            }
            /* Placed here, the copy nests as deep as where it lands plus its own depth. */
            if (b->anchors[i].height > ADM_JSON_MAX_DEPTH - b->depth) {
                return fail(b, &ev->start_mark, "nested deeper than 10000 levels (through an alias)");
            }
            copy = adm_json_mut_copy(b->doc, b->anchors[i].value);
            if (copy != NULL && !expecting_key(b)) {
                b->nodes += b->anchors[i].nodes;
                note_height(b, b->anchors[i].height);
                return place(b, copy, &ev->start_mark, false);
            }
            if (copy == NULL) {
                return ADM_ENOMEM;
            }
            if (!yyjson_mut_is_str(copy)) {
                return fail(b, &ev->start_mark, "an alias used as a mapping key must name a scalar");
            }
            b->nodes++;
            return place(b, copy, &ev->start_mark, true);
        }
    }
    return fail(b, &ev->start_mark, "alias names no anchor defined before it");
}

static int on_document_end(builder_t *b)
{
    yyjson_doc *doc;

    if (b->root == NULL || yyjson_mut_is_null(b->root)) {
        return 0; /* an empty document */
    }
    yyjson_mut_doc_set_root(b->doc, b->root);
    doc = yyjson_mut_doc_imut_copy(b->doc, &b->alc);
    if (doc == NULL || !grow(b->arena, (void **)&b->docs, &b->docs_cap, b->ndocs, sizeof(yyjson_val *))) {
        return ADM_ENOMEM;
    }
    b->docs[b->ndocs++] = yyjson_doc_get_root(doc);
    return 0;
}

static int parse_json(adm_arena_t *a, const char *text, size_t len, yyjson_val ***docs, size_t *ndocs,
                      char *err, size_t err_len)
{
    yyjson_read_err rerr;
    yyjson_doc *doc;
    yyjson_val **out;

    doc = adm_json_read(a, text, len, &rerr);
    if (doc == NULL) {
        if (rerr.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) {
            return ADM_ENOMEM;
        }
        if (rerr.code == ADM_JSON_READ_ERROR_DEPTH) {
            snprintf(err, err_len, "JSON nested deeper than 10000 levels (at byte %zu)", rerr.pos);
        } else {
            snprintf(err, err_len, "not valid JSON: %s at byte %zu", rerr.msg, rerr.pos);
        }
        return ADM_EPARSE;
    }
    out = adm_arena_alloc(a, sizeof(*out));
    if (out == NULL) {
        return ADM_ENOMEM;
    }
    out[0] = yyjson_doc_get_root(doc);
    *docs = out;
    *ndocs = 1;
    return 0;
}

int adm_yaml_parse(adm_arena_t *a, const char *text, size_t len, yyjson_val ***docs, size_t *ndocs, char *err,
                   size_t err_len)
{
    builder_t b = {.arena = a, .err = err, .err_len = err_len};
    yaml_parser_t parser;
    yaml_event_t ev;
    size_t i = 0;
    int rc = 0;
    bool done = false;

    *docs = NULL;
    *ndocs = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
        i++;
    }
    if (i < len && (text[i] == '{' || text[i] == '[')) {
        return parse_json(a, text, len, docs, ndocs, err, err_len);
    }
    adm_json_alc_init(&b.alc, a);
    if (!yaml_parser_initialize(&parser)) {
        return ADM_ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (rc == 0 && !done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            snprintf(err, err_len, "line %zu column %zu: %s", parser.problem_mark.line + 1,
                     parser.problem_mark.column + 1,
                     parser.problem != NULL ? parser.problem : "malformed YAML");
            rc = ADM_EPARSE;
            break;
        }
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            b.doc = yyjson_mut_doc_new(&b.alc);
            b.root = NULL;
            b.depth = 0;
            rc = b.doc != NULL ? 0 : ADM_ENOMEM;
            break;
        case YAML_DOCUMENT_END_EVENT: rc = on_document_end(&b); break;
        case YAML_SCALAR_EVENT: rc = on_scalar(&b, &ev); break;
        case YAML_SEQUENCE_START_EVENT: rc = on_start(&b, &ev, false); break;
        case YAML_MAPPING_START_EVENT: rc = on_start(&b, &ev, true); break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: rc = on_end(&b); break;
        case YAML_ALIAS_EVENT: rc = on_alias(&b, &ev); break;
        case YAML_STREAM_END_EVENT: done = true; break;
        default: break;
        }
        if (rc == 0 && b.nodes > ADM_YAML_MAX_NODES) {
            rc = fail(&b, &ev.start_mark, "more than 1000000 nodes");
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc != 0) {
        return rc;
    }
    *docs = b.docs;
    *ndocs = b.ndocs;
    return 0;
}

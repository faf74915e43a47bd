/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML (and JSON) configuration text to yyjson documents, as Kubernetes reads its files
 * (sigs.k8s.io/yaml): plain scalars resolve as YAML 1.1 does in go-yaml v2 (true/yes/on, null/~,
 * ints incl. 0x and 0o, floats, .inf/.nan), quoted scalars stay strings, map keys become strings,
 * aliases are expanded (within a node budget), and several documents separated by "---" are
 * returned in order. Text starting with "{" or "[" is read as JSON directly.
 */
#ifndef ADM_YAML_H
#define ADM_YAML_H

#include "adm/base/arena.h"

#include <stddef.h>
#include <yyjson.h>

/* At most this many nodes per file, aliases counted expanded (a "billion laughs" guard). */
#define ADM_YAML_MAX_NODES 1000000

/**
 * Parses len bytes of text into documents allocated in a: (*docs)[0 .. *ndocs-1], each the root
 * value of one document. Empty documents (a lone "---" or only comments) are skipped. Returns 0, or
 * ADM_EPARSE with one line in err ("line L column C: <problem>"), or ADM_ENOMEM.
 */
int adm_yaml_parse(adm_arena_t *a, const char *text, size_t len, yyjson_val ***docs, size_t *ndocs, char *err,
                   size_t err_len);

#endif

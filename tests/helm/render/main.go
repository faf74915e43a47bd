// SPDX-License-Identifier: Apache-2.0
//
// A small stand-in for `helm template`, for CI machines where helm cannot be installed: it renders
// a chart with Go's text/template and Masterminds sprig (what helm's engine is built on), with the
// helm built-ins the admitd chart uses (include, tpl, required, toYaml, fromYaml, lookup, .Files,
// .Release, .Chart, .Capabilities, .Template), helm's missingkey=zero handling, and the chart's
// values.schema.json checked as helm checks it (the subset of JSON Schema the chart uses).
//
//	render -chart DIR [-f values.yaml]... [-set a.b=value]... [-namespace NS] [-name RELEASE] [-notes FILE]
//
// Prints the manifests as multi-document YAML ("# Source: CHART/templates/FILE" before each).
// Errors (a template that fails, a value the schema refuses) go to stderr, exit 1.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	yaml2 "gopkg.in/yaml.v2"
	yaml3 "gopkg.in/yaml.v3"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// Files is .Files: Get reads a file of the chart.
type Files struct{ root string }

func (f Files) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(f.root, name))
	if err != nil {
		return ""
	}
	return string(b)
}

type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

func readYAMLMap(path string) (map[string]interface{}, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml3.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// merge copies src over dst as helm merges values files: maps merge, everything else replaces.
func merge(dst, src map[string]interface{}) {
	for k, v := range src {
		if sm, ok := v.(map[string]interface{}); ok {
			if dm, ok := dst[k].(map[string]interface{}); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// setValue applies one -set a.b.c=value; the value is read as a YAML scalar or flow collection.
func setValue(values map[string]interface{}, expr string) error {
	eq := strings.IndexByte(expr, '=')
	if eq < 0 {
		return fmt.Errorf("-set %s: want key=value", expr)
	}
	var v interface{}
	if err := yaml3.Unmarshal([]byte(expr[eq+1:]), &v); err != nil {
		return fmt.Errorf("-set %s: %v", expr, err)
	}
	keys := strings.Split(expr[:eq], ".")
	m := values
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
	return nil
}

func toYAML(v interface{}) string {
	b, err := yaml2.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func fromYAML(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml3.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func required(msg string, v interface{}) (interface{}, error) {
	if v == nil {
		return v, errors.New(msg)
	}
	if s, ok := v.(string); ok && s == "" {
		return v, errors.New(msg)
	}
	return v, nil
}

func main() {
	var valueFiles, sets listFlag
	chart := flag.String("chart", "", "chart directory")
	namespace := flag.String("namespace", "default", "release namespace")
	name := flag.String("name", "admitd", "release name")
	notes := flag.String("notes", "", "write the rendered NOTES.txt here")
	selftest := flag.String("selftest", "", "render the chart's CI scenarios, check them, and write what admitd must load under this folder")
	flag.Var(&valueFiles, "f", "values file (repeatable)")
	flag.Var(&sets, "set", "key.path=value (repeatable)")
	flag.Parse()
	if *selftest != "" {
		if err := runSelftest(*chart, *selftest); err != nil {
			fmt.Fprintln(os.Stderr, "render -selftest:", err)
			os.Exit(1)
		}
		return
	}
	manifests, notesText, err := render(*chart, *namespace, *name, valueFiles, sets)
	if err == nil && *notes != "" {
		err = os.WriteFile(*notes, []byte(notesText), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	os.Stdout.WriteString(manifests)
}

// render returns the manifests (multi-document YAML) and NOTES.txt of chart with these values.
func render(chart, namespace, release string, valueFiles, sets []string) (string, string, error) {
	var notesText string
	meta, err := readYAMLMap(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		return "", "", err
	}
	values, err := readYAMLMap(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return "", "", err
	}
	for _, f := range valueFiles {
		m, err := readYAMLMap(f)
		if err != nil {
			return "", "", err
		}
		merge(values, m)
	}
	for _, s := range sets {
		if err := setValue(values, s); err != nil {
			return "", "", err
		}
	}
	if schema, err := os.ReadFile(filepath.Join(chart, "values.schema.json")); err == nil {
		if err := validateSchema(schema, values); err != nil {
			return "", "", fmt.Errorf("values don't meet the specifications of the schema(s): %v", err)
		}
	}

	chartName := fmt.Sprint(meta["name"])
	top := map[string]interface{}{
		"Values": values,
		"Chart": map[string]interface{}{
			"Name": chartName, "Version": fmt.Sprint(meta["version"]), "AppVersion": fmt.Sprint(meta["appVersion"]),
		},
		"Release": map[string]interface{}{
			"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false,
			"Revision": 1,
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v1.31.0", "Major": "1", "Minor": "31"},
			"APIVersions": apiVersions{"v1", "apps/v1", "policy/v1", "admissionregistration.k8s.io/v1"},
		},
		"Files": Files{root: chart},
	}

	names, err := filepath.Glob(filepath.Join(chart, "templates", "*"))
	if err != nil {
		return "", "", err
	}
	sort.Strings(names)
	root := template.New("gotpl")
	funcs := sprig.TxtFuncMap()
	funcs["include"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["tpl"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["required"] = required
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["lookup"] = func(string, string, string, string) map[string]interface{} { return map[string]interface{}{} }
	// include and tpl execute templates of this very set, so they are bound once it exists
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return buf.String(), err
	}
	root.Funcs(funcs).Option("missingkey=zero")
	var rendered []string
	for _, path := range names {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", err
		}
		tname := chartName + "/templates/" + filepath.Base(path)
		if _, err := root.New(tname).Parse(string(b)); err != nil {
			return "", "", err
		}
		base := filepath.Base(path)
		if !strings.HasPrefix(base, "_") {
			rendered = append(rendered, tname)
		}
	}
	var out bytes.Buffer
	for _, tname := range rendered {
		data := map[string]interface{}{}
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": tname, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, tname, data); err != nil {
			return "", "", err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.HasSuffix(tname, "NOTES.txt") {
			notesText = text
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", tname, strings.TrimSpace(text))
	}
	return out.String(), notesText, nil
}

// ---- values.schema.json: the JSON Schema keywords the chart uses --------------------------

func validateSchema(schemaText []byte, values map[string]interface{}) error {
	var schema map[string]interface{}
	if err := json.Unmarshal(schemaText, &schema); err != nil {
		return fmt.Errorf("values.schema.json: %v", err)
	}
	// through JSON, as helm does, so numbers and maps have JSON's types
	b, err := json.Marshal(values)
	if err != nil {
		return err
	}
	var doc interface{}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	var problems []string
	check(schema, doc, "", &problems)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func typeOf(v interface{}) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []interface{}:
		return "array"
	case map[string]interface{}:
		return "object"
	}
	return "unknown"
}

func typeMatches(want interface{}, got string) bool {
	var wants []string
	switch w := want.(type) {
	case string:
		wants = []string{w}
	case []interface{}:
		for _, x := range w {
			wants = append(wants, fmt.Sprint(x))
		}
	}
	for _, w := range wants {
		if w == got || (w == "number" && got == "integer") {
			return true
		}
	}
	return false
}

func check(s map[string]interface{}, v interface{}, at string, problems *[]string) {
	where := at
	if where == "" {
		where = "(root)"
	}
	bad := func(format string, args ...interface{}) {
		*problems = append(*problems, where+": "+fmt.Sprintf(format, args...))
	}
	if t, ok := s["type"]; ok && !typeMatches(t, typeOf(v)) {
		bad("Invalid type. Expected: %v, given: %s", t, typeOf(v))
		return
	}
	if e, ok := s["enum"].([]interface{}); ok {
		found := false
		for _, x := range e {
			if fmt.Sprint(x) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			bad("must be one of the following: %v", e)
		}
	}
	if n, ok := v.(float64); ok {
		if min, ok := s["minimum"].(float64); ok && n < min {
			bad("Must be greater than or equal to %v", min)
		}
		if max, ok := s["maximum"].(float64); ok && n > max {
			bad("Must be less than or equal to %v", max)
		}
	}
	if str, ok := v.(string); ok {
		if min, ok := s["minLength"].(float64); ok && float64(len(str)) < min {
			bad("String length must be greater than or equal to %v", min)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			bad("Does not match pattern '%s'", p)
		}
	}
	if arr, ok := v.([]interface{}); ok {
		if min, ok := s["minItems"].(float64); ok && float64(len(arr)) < min {
			bad("Array must have at least %v items", min)
		}
		if items, ok := s["items"].(map[string]interface{}); ok {
			for i, x := range arr {
				check(items, x, fmt.Sprintf("%s.%d", at, i), problems)
			}
		}
	}
	if obj, ok := v.(map[string]interface{}); ok {
		props, _ := s["properties"].(map[string]interface{})
		if req, ok := s["required"].([]interface{}); ok {
			for _, r := range req {
				if _, ok := obj[fmt.Sprint(r)]; !ok {
					bad("%v is required", r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := strings.TrimPrefix(at+"."+k, ".")
			if ps, ok := props[k].(map[string]interface{}); ok {
				check(ps, obj[k], sub, problems)
			} else if ap, ok := s["additionalProperties"].(bool); ok && !ap {
				*problems = append(*problems, where+": Additional property "+k+" is not allowed")
			}
		}
	}
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// A configuration's keys are checked before its values are read: every
// key of the file and every PDP_ variable, by its YAML path, its
// variable and its line, all in one pass, in words rather than Go's
// (config.yaml:3: server.adress (PDP_SERVER_ADRESS): unknown key; server
// has addr, …). Load refuses what the check finds; `pdp config check`
// prints it. What serve refuses of the values is internal/app's
// Check, which names problems by the same keys (Origin).

// Origin says where each key of a loaded configuration was set: its
// line in the file, or the environment.
type Origin struct {
	File string
	// lines has the line of each key of the file; fromEnv the keys a
	// PDP_ variable sets.
	lines   map[string]int
	fromEnv map[string]bool
}

// Problem spells a problem of key as every check does: where it was
// set, its YAML path and variable, and what is wrong
// (config.yaml:2: server.addr (PDP_SERVER_ADDR): …).
func (o Origin) Problem(key, msg string) string { return o.problemAt(0, key, msg) }

// problemAt: line 0 is the key's line in the file, if it is there.
func (o Origin) problemAt(line int, key, msg string) string {
	if line == 0 {
		line = o.lines[key]
	}
	where := o.File
	switch {
	case o.fromEnv[key]:
		where = "environment"
	case line > 0:
		where = fmt.Sprintf("%s:%d", o.File, line)
	case where == "":
		where = "config"
	}
	return fmt.Sprintf("%s: %s: %s", where, keyName(key), msg)
}

// Error is a configuration that cannot be used: every problem found,
// each spelled as Origin.Problem spells it.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems in the configuration:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// configCheck collects the problems of one configuration's keys.
type configCheck struct {
	Origin
	problems []string
}

func (c *configCheck) at(line int, key, format string, args ...any) {
	c.problems = append(c.problems, c.problemAt(line, key, fmt.Sprintf(format, args...)))
}

// keyName is a key's YAML path and, for keys an environment variable
// can set, that variable.
func keyName(key string) string {
	if _, leaf := envKeys[key]; !leaf && (strings.Contains(key, "[") || isSection(key)) {
		return key
	}
	return fmt.Sprintf("%s (%s)", key, envName(key))
}

// isSection says whether key is a mapping (server, policy.verification,
// auth.oidc.roles), which no variable sets.
func isSection(key string) bool {
	t := configType
	for _, k := range strings.Split(key, ".") {
		f, ok := fieldByKey(t, k)
		if !ok {
			return false
		}
		t = f
	}
	return t.Kind() == reflect.Map || t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Duration]()
}

func envName(key string) string {
	return "PDP_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

var configType = reflect.TypeFor[Config]()

// envKeys are the keys a PDP_ variable can set, with their types.
var envKeys = leafKeys(configType, "", map[string]reflect.Type{})

// yaml checks the file's keys against the configuration's and the kind
// of each value.
func (c *configCheck) yaml(raw []byte) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return // an empty file is the defaults
		}
		c.problems = append(c.problems, fmt.Sprintf("%s: not YAML: %v", c.File, err))
		return
	}
	if len(doc.Content) == 1 {
		c.node(doc.Content[0], configType, "")
	}
}

func (c *configCheck) node(n *yaml.Node, t reflect.Type, key string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // an empty value keeps the default
	}
	switch {
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Duration]():
		if n.Kind != yaml.MappingNode {
			c.at(n.Line, orTop(key), "want a mapping of %s", strings.Join(keysOf(t), ", "))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			child := join(key, k.Value)
			c.lines[child] = k.Line
			field, ok := fieldByKey(t, k.Value)
			if !ok {
				c.at(k.Line, child, "unknown key; %s has %s", orTop(key), strings.Join(keysOf(t), ", "))
				continue
			}
			c.node(v, field, child)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode || n.Decode(reflect.New(t).Interface()) != nil {
			c.at(n.Line, key, "want a mapping of names to %s", kindOf(t.Elem()))
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if n.Kind != yaml.SequenceNode {
			c.at(n.Line, key, "want a list, each item a mapping of %s", strings.Join(keysOf(t.Elem()), ", "))
			return
		}
		for i, item := range n.Content {
			child := fmt.Sprintf("%s[%d]", key, i)
			c.lines[child] = item.Line
			c.node(item, t.Elem(), child)
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.at(n.Line, key, "want %s", kindOf(t))
			return
		}
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				c.at(item.Line, key, "want %s", kindOf(t))
				return
			}
		}
	default:
		if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
			c.at(n.Line, key, "%s is not %s", shown(n), kindOf(t))
		}
	}
}

// environment checks the value of every PDP_ variable that names a key.
func (c *configCheck) environment(environ []string) {
	byEnv := envVariables()
	var problems []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "PDP_") {
			continue
		}
		key, known := byEnv[name]
		if !known {
			continue
		}
		c.fromEnv[key] = true
		if msg := envValueProblem(envKeys[key], value); msg != "" {
			problems = append(problems, fmt.Sprintf("environment: %s (%s): %q is not %s", name, key, value, msg))
		}
	}
	sort.Strings(problems)
	c.problems = append(c.problems, problems...)
}

func envVariables() map[string]string {
	byEnv := map[string]string{}
	for k := range envKeys {
		byEnv[envName(k)] = k
	}
	return byEnv
}

// unknownVariables are the warnings for PDP_ variables that look like a
// setting (PDP_SERVER_…) but name none — a typo serve would otherwise
// ignore in silence — leaving out the variables the configuration
// itself names (a webhook's secret_env, the assessor's api_key_env).
func unknownVariables(cfg Config, environ []string) []string {
	named := map[string]bool{cfg.Assessor.APIKeyEnv: true}
	for _, s := range cfg.Notify.Sinks {
		named[s.SecretEnv] = true
	}
	for _, t := range cfg.Auth.Tokens {
		named[t.Env] = true
	}
	named[cfg.Auth.OIDC.ClientSecretEnv], named[cfg.Auth.OIDC.Cookie.KeyEnv] = true, true
	byEnv := envVariables()
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if _, known := byEnv[name]; known || named[name] || !strings.HasPrefix(name, "PDP_") {
			continue
		}
		for _, s := range keysOf(configType) {
			if strings.HasPrefix(name, envName(s)+"_") {
				warnings = append(warnings, fmt.Sprintf("environment: %s is not a setting (%s has %s)", name, s, strings.Join(subKeys(s), ", ")))
				break
			}
		}
	}
	sort.Strings(warnings)
	return warnings
}

// envValueProblem is what an environment value should be, or "" when it
// reads as the key's kind (as internal/config reads it).
func envValueProblem(t reflect.Type, v string) string {
	var err error
	switch {
	case t == reflect.TypeFor[time.Duration]():
		_, err = time.ParseDuration(v)
	case t.Kind() == reflect.Bool:
		_, err = strconv.ParseBool(v)
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		_, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil {
		return kindOf(t)
	}
	return ""
}

// kindOf says in words what a value of type t is written as.
func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "a duration such as 500ms, 30s, 5m or 2h"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "a whole number"
	case t.Kind() == reflect.Slice:
		return "a list of strings (in the environment: comma-separated)"
	}
	return "a string"
}

func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

func yamlKey(f reflect.StructField) string { return strings.Split(f.Tag.Get("yaml"), ",")[0] }

func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		if yamlKey(t.Field(i)) == key {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

func keysOf(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

func subKeys(section string) []string {
	t, _ := fieldByKey(configType, section)
	return keysOf(t)
}

// leafKeys adds every key an environment variable can set, with its
// type, to out (lists of mappings, such as auth.tokens, have none).
func leafKeys(t reflect.Type, key string, out map[string]reflect.Type) map[string]reflect.Type {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		child := join(key, yamlKey(f))
		switch {
		case f.Type.Kind() == reflect.Struct:
			leafKeys(f.Type, child, out)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() != reflect.String, f.Type.Kind() == reflect.Map:
		default:
			out[child] = f.Type
		}
	}
	return out
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func orTop(key string) string {
	if key == "" {
		return "the file"
	}
	return key
}

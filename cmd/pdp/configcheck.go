//go:build !hookonly

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/httpapi"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/service"
	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/pdp"
	"gopkg.in/yaml.v3"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the configuration",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check [FILE]",
		Short: "Check every key of a configuration file and the PDP_… environment",
		Long: `Reads FILE (default: --config, config.yaml) and the PDP_<KEY PATH>
environment variables as pdp serve does and checks every key: unknown keys,
values of the wrong kind and values serve would refuse (levels, modes, log
settings, addresses, trusted proxies, tokens, TLS files and plaintext
off loopback, the policy source and its
verification key, the assessor's key variable). Each problem is named by its
YAML path and its environment variable, with the file's line:

  config.yaml:3: server.adress (PDP_SERVER_ADRESS): unknown key; server has addr, …

Exits 0 when serve would accept the configuration, 1 otherwise. The policy
itself is checked by pdp policy check.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _ := cmd.Flags().GetString("config")
			required := cmd.Flags().Changed("config")
			if len(args) == 1 {
				path, required = args[0], true
			}
			problems, err := checkConfig(path, required, os.Environ())
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintln(cmd.ErrOrStderr(), p)
			}
			if len(problems) > 0 {
				return fmt.Errorf("%s: %d problem(s)", path, len(problems))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", path)
			return nil
		},
	})
	return cmd
}

// checkConfig lists the problems of the configuration file at path (a
// missing file is the defaults unless required) and of the PDP_*
// variables of environ; an error means the file could not be read.
func checkConfig(path string, required bool, environ []string) ([]string, error) {
	c := configCheck{file: path, lines: map[string]int{}, fromEnv: map[string]bool{}}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		c.yaml(raw)
	case errors.Is(err, fs.ErrNotExist) && !required:
	default:
		return nil, fmt.Errorf("config: %w", err)
	}
	c.environment(environ)
	if len(c.problems) > 0 {
		return c.problems, nil // the values below cannot be read
	}
	cfg, err := config.Load(path, required, environ)
	if err != nil {
		return append(c.problems, err.Error()), nil
	}
	c.values(cfg)
	return c.problems, nil
}

// configCheck collects the problems of one configuration.
type configCheck struct {
	file     string
	problems []string
	// lines has the line of each key of the file; fromEnv the keys a
	// PDP_ variable sets.
	lines   map[string]int
	fromEnv map[string]bool
}

// at records a problem of key; line 0 is the key's line in the file, if
// it is there.
func (c *configCheck) at(line int, key, format string, args ...any) {
	if line == 0 {
		line = c.lines[key]
	}
	where := c.file
	switch {
	case c.fromEnv[key]:
		where = "environment"
	case line > 0:
		where = fmt.Sprintf("%s:%d", c.file, line)
	}
	c.problems = append(c.problems, fmt.Sprintf("%s: %s: %s", where, keyName(key), fmt.Sprintf(format, args...)))
}

// keyName is a key's YAML path and, for keys an environment variable
// can set, that variable.
func keyName(key string) string {
	if _, leaf := envKeys[key]; !leaf && (strings.Contains(key, "[") || isSection(key)) {
		return key
	}
	return fmt.Sprintf("%s (%s)", key, envName(key))
}

// isSection says whether key is a mapping of keys (server, policy.verification).
func isSection(key string) bool {
	t := configType
	for _, k := range strings.Split(key, ".") {
		f, ok := fieldByKey(t, k)
		if !ok {
			return false
		}
		t = f
	}
	return t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Duration]()
}

func envName(key string) string {
	return "PDP_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

var configType = reflect.TypeFor[config.Config]()

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
		c.problems = append(c.problems, fmt.Sprintf("%s: not YAML: %v", c.file, err))
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
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if n.Kind != yaml.SequenceNode {
			c.at(n.Line, key, "want a list, each item a mapping of %s", strings.Join(keysOf(t.Elem()), ", "))
			return
		}
		for i, item := range n.Content {
			c.node(item, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
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

// environment checks the value of every PDP_ variable that names a key,
// and flags a variable that looks like one (PDP_SERVER_…) but names none.
func (c *configCheck) environment(environ []string) {
	byEnv := map[string]string{}
	for k := range envKeys {
		byEnv[envName(k)] = k
	}
	sections := keysOf(configType)
	var problems []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "PDP_") {
			continue
		}
		key, known := byEnv[name]
		if known {
			c.fromEnv[key] = true
		}
		if !known {
			for _, s := range sections {
				if strings.HasPrefix(name, envName(s)+"_") {
					problems = append(problems, fmt.Sprintf("environment: %s is not a setting (%s has %s)", name, s, strings.Join(subKeys(s), ", ")))
					break
				}
			}
			continue
		}
		if msg := envValueProblem(envKeys[key], value); msg != "" {
			problems = append(problems, fmt.Sprintf("environment: %s (%s): %q is not %s", name, key, value, msg))
		}
	}
	sort.Strings(problems)
	c.problems = append(c.problems, problems...)
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

// values checks what serve checks of the values before it starts.
func (c *configCheck) values(cfg config.Config) {
	if err := pdp.ValidateSession(&pdp.SessionTree{PermissionLevel: api.Level(cfg.Sessions.PermissionLevel), Mode: api.Mode(config.Default().Sessions.Mode)}); err != nil {
		c.at(0, "sessions.permission_level", "%q: want READ_ONLY, READ_WRITE, SMART or FULL", cfg.Sessions.PermissionLevel)
	}
	if err := pdp.ValidateSession(&pdp.SessionTree{PermissionLevel: api.Level(config.Default().Sessions.PermissionLevel), Mode: api.Mode(cfg.Sessions.Mode)}); err != nil {
		c.at(0, "sessions.mode", "%q: want always-ask, on-demand or allow-all", cfg.Sessions.Mode)
	}
	if _, err := service.NewLogger(config.Log{Level: cfg.Log.Level}); err != nil {
		c.at(0, "log.level", "%q: want debug, info, warn or error", cfg.Log.Level)
	}
	if _, err := service.NewLogger(config.Log{Level: "info", Format: cfg.Log.Format}); err != nil {
		c.at(0, "log.format", "%q: want text or json", cfg.Log.Format)
	}
	c.address("server.addr", cfg.Server.Addr, false)
	c.address("metrics.addr", cfg.Metrics.Addr, true)
	if _, err := httpapi.ParseTrustedProxies(cfg.Server.TrustedProxies); err != nil {
		c.at(0, "server.trusted_proxies", "%v", err)
	}
	if cfg.Server.DecisionTimeout <= 0 {
		c.at(0, "server.decision_timeout", "%v: want a positive duration", cfg.Server.DecisionTimeout)
	}
	c.negatives(reflect.ValueOf(cfg), "")
	for i, t := range cfg.Auth.Tokens {
		if _, err := service.Tokens([]config.Token{t}); err != nil {
			c.at(0, fmt.Sprintf("auth.tokens[%d]", i), "%s", strings.TrimPrefix(err.Error(), "auth: "))
		}
	}
	if len(cfg.Auth.Tokens) == 0 && !httpapi.IsLoopback(cfg.Server.Addr) {
		c.at(0, "server.addr", "%s is not a loopback address and auth.tokens is empty: serve refuses to listen without access control", cfg.Server.Addr)
	}
	s := tlsserve.SettingsOf(cfg.Server)
	if err := s.Check(cfg.Server.Addr, len(cfg.Auth.Tokens) > 0, httpapi.IsLoopback(cfg.Server.Addr)); err != nil {
		c.at(0, "server", "%v", err)
	} else if s.CertFile != "" {
		if _, err := tlsserve.Load(s.CertFile, s.KeyFile); err != nil {
			c.at(0, "server.tls_cert_file", "%v", err)
		}
	}
	if _, err := service.PolicySource(cfg.Policy); err != nil {
		c.at(0, "policy", "%v", err)
	}
	if kind := policysource.KindOf(cfg.Policy.Path); kind == policysource.Directory || kind == policysource.Tarball {
		if _, err := os.Stat(cfg.Policy.Path); err != nil {
			c.at(0, "policy.path", "%v", err)
		}
	}
	if _, err := service.NewAssessor(cfg.Assessor, nil); err != nil {
		c.at(0, "assessor", "%v", err)
	}
}

func (c *configCheck) address(key, addr string, optional bool) {
	if addr == "" && optional {
		return
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		c.at(0, key, "%q: want HOST:PORT, such as 127.0.0.1:8181", addr)
	}
}

// negatives flags every negative duration, size or count.
func (c *configCheck) negatives(v reflect.Value, key string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		child := join(key, yamlKey(t.Field(i)))
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.Struct:
			c.negatives(f, child)
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			if f.Int() < 0 {
				c.at(0, child, "%s is negative", shownValue(f))
			}
		}
	}
}

func shownValue(f reflect.Value) string {
	if d, ok := f.Interface().(time.Duration); ok {
		return d.String()
	}
	return strconv.FormatInt(f.Int(), 10)
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
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() != reflect.String:
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

package pdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolperm/pdp/api"
)

// The project layer (docs/policy.md, "The project layer"): a repository
// may carry .toolperm/policy.json, rules in the shapes a session's rules
// have, which the PDP reads from the session's workspace (or, where it
// cannot read the workspace, takes as the hook sent it) and applies as a
// layer of its own that can only make answers stricter: its asks and
// denies join the strictest-of-layers step, its allows only carve
// exceptions out of its own broader asks and denies. A file that cannot
// be read or understood denies every call of the session, saying why.

// ProjectFiles finds a workspace's project policy file on the PDP's host
// (adapters/paths): the nearest api.ProjectFileName at or above it.
type ProjectFiles interface {
	// Find returns the file; found is false when there is none up to the
	// root, here false when the workspace is not a directory on this host
	// (then the hook's copy counts). A file that is there but cannot be
	// read (a link, a FIFO, no permission) is found with its Err.
	Find(ctx context.Context, workspace string) (file ProjectFile, found, here bool)
}

// ProjectFile is a project policy file as found: the directory holding
// its .toolperm, and its text or why it cannot be read.
type ProjectFile struct {
	Dir     string
	Content []byte
	Err     error
}

// ProjectSource says where the project layer comes from.
type ProjectSource string

// The project sources.
const (
	// ProjectAuto reads the workspace's file where the workspace is a
	// directory on this host, and takes the hook's copy elsewhere.
	ProjectAuto ProjectSource = "auto"
	// ProjectWorkspace reads the file on this host only.
	ProjectWorkspace ProjectSource = "workspace"
	// ProjectHook takes the hook's copy only.
	ProjectHook ProjectSource = "hook"
	// ProjectOff applies no project layer.
	ProjectOff ProjectSource = "off"
)

// ProjectSources are the valid sources, for configuration checks.
var ProjectSources = []ProjectSource{ProjectAuto, ProjectWorkspace, ProjectHook, ProjectOff}

// Where a project policy was read.
const (
	FromWorkspace = "workspace"
	FromHook      = "hook"
)

// ProjectPolicy is a project's layer of rules, as the file gave it.
type ProjectPolicy struct {
	// From says where the file was read: FromWorkspace or FromHook.
	From string
	// File names the file: api.ProjectFileName when it is the
	// workspace's own, else its absolute path (a directory above it).
	File         string
	Rules        map[string]string
	CommandRules map[string]string
	PathRules    *PathRules
	// FlowEnabled switches the session's flow on where the policy has it
	// off; FlowAction is ask or deny, "" for the policy's own.
	FlowEnabled bool
	FlowAction  string
	// Err is why the file cannot be used; every call of the session is
	// then denied with it.
	Err string
	// input is the layer as input.project holds it, built once.
	input map[string]any
}

// maxProjectRules bounds each kind of rule of a project file.
const maxProjectRules = 256

// projectFile is the file's shape: unknown keys are refused.
type projectFile struct {
	Rules        map[string]string       `json:"rules"`
	CommandRules map[string]string       `json:"command_rules"`
	PathRules    map[string]api.PathRule `json:"path_rules"`
	Flow         *struct {
		Enabled *bool  `json:"enabled"`
		Action  string `json:"action"`
	} `json:"flow"`
}

// ParseProjectPolicy reads a project's policy file, named file; a
// problem is the result's Err, never a skipped rule.
func ParseProjectPolicy(content []byte, from, file string) *ProjectPolicy {
	p := &ProjectPolicy{From: from, File: file}
	if err := p.parse(content); err != nil {
		p = &ProjectPolicy{From: from, File: file, Err: fmt.Sprintf("%s (%s): %v", file, from, err)}
	}
	p.input = p.inputDoc()
	return p
}

// ProjectError is a project layer that denies every call because its file
// could not be read or taken.
func ProjectError(from, file, format string, args ...any) *ProjectPolicy {
	p := &ProjectPolicy{From: from, File: file, Err: fmt.Sprintf("%s (%s): ", file, from) + fmt.Sprintf(format, args...)}
	p.input = p.inputDoc()
	return p
}

func (p *ProjectPolicy) parse(content []byte) error {
	if len(content) > api.MaxProjectFileBytes {
		return fmt.Errorf("the file is %d bytes, more than the %d a project policy may have", len(content), api.MaxProjectFileBytes)
	}
	if !utf8.Valid(content) {
		return errors.New("the file is not UTF-8 text")
	}
	if !json.Valid(content) {
		var v any
		err := json.Unmarshal(content, &v)
		return fmt.Errorf("the file is not JSON: %v", err)
	}
	if err := api.DuplicateKeys(content); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.DisallowUnknownFields()
	var f projectFile
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("the file is not a project policy (an object of rules, command_rules, path_rules and flow): %v", err)
	}
	// A project's rules are a repository's extra care, not a policy: a
	// bound on them bounds what a hook's copy costs each decision.
	for what, n := range map[string]int{"rules": len(f.Rules), "command_rules": len(f.CommandRules), "path_rules": len(f.PathRules)} {
		if n > maxProjectRules {
			return fmt.Errorf("%s has %d entries; a project policy has at most %d of each kind", what, n, maxProjectRules)
		}
	}
	for pattern, action := range f.Rules {
		if action == Assess {
			return fmt.Errorf("rules[%q] is %q: a project rule can only allow (an exception to its own broader rule), ask or deny", truncate(pattern), action)
		}
	}
	if err := ValidateRules(f.Rules); err != nil {
		return fmt.Errorf("rules: %v", err)
	}
	if err := ValidateCommandRules(f.CommandRules); err != nil {
		return fmt.Errorf("command_rules: %v", err)
	}
	paths := NewPathRules(f.PathRules)
	if err := paths.Validate(); err != nil {
		return fmt.Errorf("path_rules: %v", err)
	}
	if f.Flow != nil {
		if f.Flow.Enabled != nil && !*f.Flow.Enabled {
			return errors.New(`flow.enabled is false: the project layer can only tighten, so it can switch the flow on, never off`)
		}
		switch f.Flow.Action {
		case "", api.Ask, api.Deny:
		default:
			return fmt.Errorf("flow.action is %q; want ask or deny", truncate(f.Flow.Action))
		}
		p.FlowEnabled = f.Flow.Enabled != nil && *f.Flow.Enabled
		p.FlowAction = f.Flow.Action
	}
	p.Rules, p.CommandRules, p.PathRules = f.Rules, f.CommandRules, paths
	return nil
}

// inputDoc is the layer as input.project: its capability and command
// rules and flow switches (its path rules are matched in Go and reach
// the policy with each path, pathrules.go), or the error.
func (p *ProjectPolicy) inputDoc() map[string]any {
	out := map[string]any{"from": p.From, "file": p.File}
	if p.Err != "" {
		out["error"] = p.Err
		return out
	}
	out["rules"] = stringMap(p.Rules)
	out["command_rules"] = stringMap(p.CommandRules)
	flow := map[string]any{"enabled": p.FlowEnabled}
	if p.FlowAction != "" {
		flow["action"] = p.FlowAction
	}
	out["flow"] = flow
	return out
}

// pathRules is the layer's path rules; nil for none or no layer.
func (p *ProjectPolicy) pathRules() *PathRules {
	if p == nil {
		return nil
	}
	return p.PathRules
}

// Summary is one line on the layer for a trace: where it came from, how
// many rules of each kind it has, or its error.
func (p *ProjectPolicy) Summary() string {
	if p == nil {
		return "none"
	}
	if p.Err != "" {
		return "error: " + p.Err
	}
	parts := []string{p.From}
	for _, n := range []struct {
		what string
		n    int
	}{{"rules", len(p.Rules)}, {"command_rules", len(p.CommandRules)}, {"path_rules", p.PathRules.Len()}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	if p.FlowEnabled || p.FlowAction != "" {
		parts = append(parts, "flow")
	}
	return strings.Join(parts, ", ")
}

// projectCache keeps parsed project files by their text, so a decision
// parses (and compiles the path rules of) a file it has seen only once.
type projectCache struct {
	mu sync.Mutex
	m  map[string]*ProjectPolicy
}

// maxProjectCache bounds the files kept; past it the cache starts again.
const maxProjectCache = 64

func (c *projectCache) parse(content []byte, from, file string) *ProjectPolicy {
	key := from + "\x00" + file + "\x00" + string(content)
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[key]; ok {
		return p
	}
	p := ParseProjectPolicy(content, from, file)
	if p.PathRules != nil {
		p.PathRules.compile() // once, under the lock: every decision reads it
	}
	if c.m == nil || len(c.m) >= maxProjectCache {
		c.m = map[string]*ProjectPolicy{}
	}
	c.m[key] = p
	return p
}

// project is the project layer of session s for this call: the nearest
// file at or above its workspace where the PDP can read the workspace,
// else the hook's copy of the same; nil for none.
func (pl *pipeline) project(ctx context.Context, s *SessionTree) *ProjectPolicy {
	source := pl.e.c.ProjectSource
	if source == "" {
		source = ProjectAuto
	}
	if source == ProjectOff {
		return nil
	}
	ws := filepath.Clean(s.Workspace)
	if !filepath.IsAbs(ws) {
		ws = ""
	}
	if source != ProjectHook && pl.e.c.Projects != nil && ws != "" {
		f, found, here := pl.e.c.Projects.Find(ctx, ws)
		file := projectFileName(ws, f.Dir)
		switch {
		case found && f.Err != nil:
			return ProjectError(FromWorkspace, file, "%v", f.Err)
		case found:
			return pl.e.projects.parse(f.Content, FromWorkspace, file)
		case here:
			return nil
		case source == ProjectWorkspace:
			return ProjectError(FromWorkspace, api.ProjectFileName, "the workspace %s is not a directory on this host, so its project policy cannot be read (paths.project_policy: workspace)", ws)
		}
	}
	if source == ProjectWorkspace {
		return nil
	}
	sent := pl.call.Request.ProjectPolicy
	if sent == nil {
		return nil
	}
	dir := filepath.Clean(sent.Dir)
	file := projectFileName(ws, dir)
	switch {
	case ws != "" && !atOrAbove(dir, ws):
		return ProjectError(FromHook, file, "the hook sent the project policy of %s, which is neither the session's workspace %s nor a directory above it: give the hook the workspace (--workspace)", truncate(dir), ws)
	case sent.Error != "":
		return ProjectError(FromHook, file, "the hook could not read it: %s", truncate(sent.Error))
	default:
		return pl.e.projects.parse([]byte(sent.Content), FromHook, file)
	}
}

// projectFileName names the project file of dir for a session in ws:
// api.ProjectFileName for the workspace's own, else its path.
func projectFileName(ws, dir string) string {
	if dir == "" || dir == ws {
		return api.ProjectFileName
	}
	return filepath.Join(dir, filepath.FromSlash(api.ProjectFileName))
}

// atOrAbove: dir is ws or one of its parent directories.
func atOrAbove(dir, ws string) bool {
	rel, err := filepath.Rel(dir, ws)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// validateProjectFile checks the hook's copy of a project file as bad
// input: too large a text or error.
func validateProjectFile(f *api.ProjectFile) error {
	if f == nil {
		return nil
	}
	if len(f.Content) > api.MaxProjectFileBytes {
		return invalid("invalid_project_policy", "project_policy.content is %d bytes; a project policy has at most %d", len(f.Content), api.MaxProjectFileBytes)
	}
	if len(f.Error) > 1024 {
		return invalid("invalid_project_policy", "project_policy.error is longer than 1024 bytes")
	}
	if !filepath.IsAbs(f.Dir) || len(f.Dir) > maxPathPattern || strings.ContainsRune(f.Dir, 0) {
		return invalid("invalid_project_policy", "project_policy.dir must be the absolute path of the directory holding .toolperm, got %q", truncate(f.Dir))
	}
	return nil
}

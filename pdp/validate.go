package pdp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolperm/pdp/api"
)

// Error is bad input, with a stable code a client can branch on and a
// message a person can act on. It is never a decision.
type Error struct {
	Code    string
	Message string
	// Kind, when set, is what the request ran into beyond its input
	// (ErrNotFound, ErrConflict, ErrNotGrantable): a front end answers
	// as it answers that kind, with Code. Unset, the input is bad.
	Kind error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the error's kind.
func (e *Error) Unwrap() error { return e.Kind }

// Refused is an *Error of a kind: the request was understood and cannot
// be served (kind ErrNotFound, ErrConflict, ErrNotGrantable, …).
func Refused(kind error, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Kind: kind}
}

func invalid(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	sessionIDPattern  = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	capabilityPattern = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*$`)
	rulePattern       = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*)?$`)
)

// ValidSessionID reports whether id may name a session.
func ValidSessionID(id string) bool { return sessionIDPattern.MatchString(id) }

// ValidCapability reports whether c is a well-formed capability id.
func ValidCapability(c string) bool { return capabilityPattern.MatchString(c) }

// ValidPattern reports whether p is an exact capability or a prefix
// wildcard a.b.*.
func ValidPattern(p string) bool { return rulePattern.MatchString(p) }

// ValidateRequest checks the parts of a request the engine relies on.
func ValidateRequest(r api.DecideRequest) error {
	if !ValidSessionID(r.SessionID) {
		return invalid("invalid_session_id", "session_id must be 1-128 characters of [A-Za-z0-9._:-], got %q", truncate(r.SessionID))
	}
	if r.Tool == "" && r.Capability == "" {
		return invalid("invalid_request", "the request must name a tool or a capability")
	}
	if len(r.Tool) > 256 {
		return invalid("invalid_request", "tool name is longer than 256 characters")
	}
	if len(r.ToolUseID) > 256 {
		return invalid("invalid_request", "tool_use_id is longer than 256 characters")
	}
	if err := validateRuntime(r.Runtime); err != nil {
		return err
	}
	if err := validateProjectFile(r.ProjectPolicy); err != nil {
		return err
	}
	if r.Capability != "" && !ValidCapability(r.Capability) {
		return invalid("invalid_capability", "capability %q is not a dotted id of [a-z0-9_-] segments", truncate(r.Capability))
	}
	if cmd, ok := Argument(r.Args, "command"); ok && cmd != nil {
		if _, isString := cmd.(string); !isString {
			return invalid("invalid_args", "args.command must be a string, got %T", cmd)
		}
	}
	if argv, ok := Argument(r.Args, "argv"); ok && argv != nil {
		if _, err := stringList(argv); err != nil {
			return invalid("invalid_args", "args.argv %s", err)
		}
	}
	return nil
}

// ValidateSession checks a session and its parents; empty fields are
// fine (they take the defaults), wrong values are not.
func ValidateSession(s *SessionTree) error {
	for depth := 0; s != nil; depth, s = depth+1, s.Parent {
		if depth >= 32 {
			return invalid("invalid_session", "sessions nest deeper than 32 parents")
		}
		if s.PermissionLevel != "" && !slices.Contains(Levels, s.PermissionLevel) {
			return invalid("invalid_level", "permission_level %q is not one of READ_ONLY, READ_WRITE, SMART, FULL", truncate(string(s.PermissionLevel)))
		}
		if s.Mode != "" && !slices.Contains(Modes, s.Mode) {
			return invalid("invalid_mode", "mode %q is not one of always-ask, on-demand, allow-all", truncate(string(s.Mode)))
		}
		if s.ExecutionMode != "" && s.ExecutionMode != api.Local && s.ExecutionMode != api.Cloud {
			return invalid("invalid_execution_mode", "execution_mode %q is not LOCAL or CLOUD", truncate(string(s.ExecutionMode)))
		}
		if err := ValidateRules(s.Rules); err != nil {
			return err
		}
		if err := ValidateCommandRules(s.CommandRules); err != nil {
			return err
		}
		if err := s.PathRules.Validate(); err != nil {
			return err
		}
		for _, p := range s.Scope {
			if !ValidPattern(p) {
				return invalid("invalid_scope", "scope pattern %q is not a capability or a.b.* prefix", truncate(p))
			}
		}
		for _, g := range s.Grants {
			if !ValidCapability(g.Capability) || g.Fingerprint == "" {
				return invalid("invalid_grant", "a grant needs a capability and a non-empty fingerprint")
			}
		}
	}
	return nil
}

// ValidateCommandRules checks a prefix→action command rule table: a
// prefix is words separated by single spaces, an action allow, ask or
// deny. Two prefixes equal but for the program's case are refused: the
// program is compared lower-cased, so they would be one rule.
func ValidateCommandRules(rules map[string]string) error {
	seen := make(map[string]string, len(rules))
	for prefix, action := range rules {
		words := strings.Split(prefix, " ")
		if len(prefix) > 512 || slices.Contains(words, "") || strings.ContainsAny(prefix, "\t\n\r\x00") {
			return invalid("invalid_command_rule", "command rule %q must be words separated by single spaces", truncate(prefix))
		}
		switch action {
		case api.Allow, api.Ask, api.Deny:
		default:
			return invalid("invalid_command_rule", "command rule %q has action %q; want allow, ask or deny", truncate(prefix), truncate(action))
		}
		key := strings.ToLower(words[0]) + prefix[len(words[0]):]
		if other, ok := seen[key]; ok {
			return invalid("invalid_command_rule", "command rules %q and %q name the same program", truncate(other), truncate(prefix))
		}
		seen[key] = prefix
	}
	return nil
}

// ValidateRules checks a pattern→action rule table.
func ValidateRules(rules map[string]string) error {
	for p, a := range rules {
		if !ValidPattern(p) {
			return invalid("invalid_rule", "rule pattern %q is not a capability or a.b.* prefix", truncate(p))
		}
		switch a {
		case api.Allow, api.Ask, api.Deny, Assess:
		default:
			return invalid("invalid_rule", "rule %q has action %q; want allow, ask, deny or assess", truncate(p), truncate(a))
		}
	}
	return nil
}

func stringList(v any) ([]string, error) {
	switch list := v.(type) {
	case []string:
		return list, nil
	case []any:
		out := make([]string, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("[%d] must be a string, got %T", i, item)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of strings, got %T", v)
}

// truncate keeps error messages readable when the input is huge.
func truncate(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// Argument is the argument named name, matched without regard to case as
// a tool may match it ("Command" is the command): the exact key first,
// else the one key equal to it but for case.
func Argument(args map[string]any, name string) (any, bool) {
	if v, ok := args[name]; ok {
		return v, true
	}
	for k, v := range args {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

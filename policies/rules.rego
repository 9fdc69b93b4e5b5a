# Rule layers.
#
# Resolves the four rule layers (policy data, the session's rules, the
# project's rules, the level preset) for the capability, each to its most
# specific pattern, and combines them: the strictest action wins, and on
# a tie the earlier layer names the rule. The project layer only
# tightens: it takes part only where its most specific rule asks or
# denies (an allow there is an exception to its own broader rule).
package toolperm

import rego.v1

layer_order := ["policy", "session", "project", "level"]

# An action that is not one of the four ranks as deny: a typo in a rule
# must not open anything.
action_rank := {"allow": 0, "assess": 1, "ask": 2, "deny": 3}

rank(action) := object.get(action_rank, action, 3)

# Each layer resolves to its most specific {pattern, action} for the
# candidate patterns. The rules are looked up by key, never scanned or
# passed around whole, so a policy with 10,000 rules costs what one with
# 10 does.
matches["policy"] := policy_match

matches["session"] := session_match

matches["project"] := project_match

matches["level"] := level_match

policy_match := {"pattern": hits[0], "action": data.rules[hits[0]]} if {
	hits := [c | some c in cap_candidates; data.rules[c] != null]
	count(hits) > 0
}

session_match := {"pattern": hits[0], "action": input.session.rules[hits[0]]} if {
	hits := [c | some c in cap_candidates; input.session.rules[c] != null]
	count(hits) > 0
}

# The project layer's rule takes part when it denies, or asks where
# another layer has a rule: an ask where no other layer has one would
# only turn the dangerous list's deny, or the on-demand fallback's, into
# an ask.
project_match := {"pattern": hits[0], "action": action} if {
	hits := [c | some c in cap_candidates; project_rules[c] != null]
	count(hits) > 0
	action := project_rules[hits[0]]
	project_counts(action)
}

project_counts(action) if rank(action) == 3

project_counts(action) if {
	rank(action) == 2
	organisation_rule
}

# organisation_rule: a layer other than the project's has a rule.
organisation_rule if policy_match

organisation_rule if session_match

organisation_rule if level_match

# project_rules are the capability rules of the repository's
# .toolperm/policy.json (input.project, pdp/project.go); none without one.
default project_rules := {}

project_rules := input.project.rules

# layer_label names a layer in a reason: the project layer with its file.
layer_label(layer) := sprintf("project (%s)", [input.project.file]) if {
	layer == "project"
	input.project.from == "workspace"
} else := sprintf("project (%s, sent by the hook)", [input.project.file]) if {
	layer == "project"
} else := layer

level_match := {"pattern": hits[0], "action": level_rules[hits[0]]} if {
	level_applies
	hits := [c | some c in cap_candidates; level_rules[c] != null]
	count(hits) > 0
}

# level_rules is the level table of the session's level, or of a looser
# level a policy extension gives the runtime's own mode as
# data.toolperm.runtime_level (docs/policy.md, "The runtime's own mode").
# The shipped policy defines none: it never loosens on what a runtime
# says about itself.
level_rules := data.levels[data.toolperm.runtime_level] if {
	level_rank[data.toolperm.runtime_level] > level_rank[input.session.permission_level]
} else := data.levels[input.session.permission_level]

level_rank := {"READ_ONLY": 0, "READ_WRITE": 1, "SMART": 2}

# The level table applies to LOCAL sessions only; CLOUD ignores it.
level_applies if input.session.execution_mode == "LOCAL"

has_rule if count(matches) > 0

# resolved is the strictest layer's rule, with its layer and source.
resolved := object.union(matches[layer], {"layer": layer, "source": layer_source[layer]}) if {
	layer := strictest_layer
}

layer_source := {"policy": "config", "session": "config", "project": "project", "level": "level"}

# strictest_layer is the layer whose rule is the strictest; on a tie the
# earlier layer (policy, session, project, level).
strictest_layer := "policy" if {
	at_least_as_strict("policy", "session")
	at_least_as_strict("policy", "project")
	at_least_as_strict("policy", "level")
} else := "session" if {
	at_least_as_strict("session", "project")
	at_least_as_strict("session", "level")
} else := "project" if {
	at_least_as_strict("project", "level")
} else := "level" if {
	matches.level
}

# at_least_as_strict: layer a has a rule, and layer b none or one no stricter.
at_least_as_strict(a, b) if {
	matches[a]
	not matches[b]
}

at_least_as_strict(a, b) if rank(matches[a].action) >= rank(matches[b].action)

# is_dangerous: the capability is on the dangerous list (data.dangerous maps
# patterns to true/false; the most specific pattern wins, so
# "shell.*": true with "shell.stdin": false exempts shell.stdin).
is_dangerous if {
	hits := [c | some c in cap_candidates; data.dangerous[c] != null]
	data.dangerous[hits[0]] == true
}

# ask_always_hit: the capability is in data.ask_always (exact or a.b.*).
ask_always_hit if {
	some c in cap_candidates
	c in data.ask_always
}

# in_scope: the capability matches one of the sub-agent's scope patterns.
in_scope if {
	some c in cap_candidates
	c in input.session.scope
}

# Rule layers.
#
# Resolves the three rule layers (policy data, the session's rules, the
# level preset) for the capability, each to its most specific pattern,
# and combines them: the strictest action wins, and on a tie the earlier
# layer names the rule.
package toolperm

import rego.v1

layer_order := ["policy", "session", "level"]

# An action that is not one of the four ranks as deny: a typo in a rule
# must not open anything.
action_rank := {"allow": 0, "assess": 1, "ask": 2, "deny": 3}

rank(action) := object.get(action_rank, action, 3)

# Each layer resolves to its most specific {pattern, action} for the
# candidate patterns. The rules are looked up by key, never scanned or
# passed around whole, so a policy with 10,000 rules costs what one with
# 10 does.
matches["policy"] := {"pattern": hits[0], "action": data.rules[hits[0]]} if {
	hits := [c | some c in cap_candidates; data.rules[c] != null]
	count(hits) > 0
}

matches["session"] := {"pattern": hits[0], "action": input.session.rules[hits[0]]} if {
	hits := [c | some c in cap_candidates; input.session.rules[c] != null]
	count(hits) > 0
}

matches["level"] := {"pattern": hits[0], "action": level_rules[hits[0]]} if {
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

layer_source := {"policy": "config", "session": "config", "level": "level"}

# strictest_layer is the layer whose rule is the strictest; on a tie the
# earlier layer (policy, session, level).
strictest_layer := "policy" if {
	at_least_as_strict("policy", "session")
	at_least_as_strict("policy", "level")
} else := "session" if {
	at_least_as_strict("session", "level")
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

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

rank(action) := action_rank[action] if {
	action_rank[action] != null
} else := 3

# layer_match is the most specific {pattern, action} of rules for the
# candidate patterns, looked up, not scanned.
layer_match(rules, cands) := {"pattern": hits[0], "action": rules[hits[0]]} if {
	hits := [c | some c in cands; rules[c] != null]
	count(hits) > 0
}

# matches holds the rule each layer resolves to, by layer name.
matches["policy"] := m if {
	m := layer_match(data.rules, cap_candidates)
}

matches["session"] := m if {
	m := layer_match(input.session.rules, cap_candidates)
}

matches["level"] := m if {
	level_applies
	m := layer_match(data.levels[input.session.permission_level], cap_candidates)
}

# The level table applies to LOCAL sessions only; CLOUD ignores it.
level_applies if input.session.execution_mode == "LOCAL"

has_rule if count(matches) > 0

# resolved is the strictest layer's rule, with its layer and source.
resolved := object.union(matches[layer], {"layer": layer, "source": layer_source[layer]}) if {
	strictest := max([rank(matches[l].action) | some l in layer_order; matches[l]])
	layer := [l | some l in layer_order; matches[l]; rank(matches[l].action) == strictest][0]
}

layer_source := {"policy": "config", "session": "config", "level": "level"}

# is_dangerous: the capability is on the dangerous list (data.dangerous maps
# patterns to true/false; the most specific pattern wins, so
# "shell.*": true with "shell.stdin": false exempts shell.stdin).
is_dangerous if layer_match(data.dangerous, cap_candidates).action == true

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

# Path rules.
#
# The engine matches every checked path of a call against the two layers
# of path rules — policy data "paths" and the session's path_rules — and
# hands over, per path, per access kind and per layer, the rule that layer
# resolved to (input.workspace.paths[_].rules). This file reads those
# facts for the chain: the call's access kind comes from its capability,
# and across the paths and the layers the strictest rule wins (on a tie
# the policy layer names it). A deny decides at the explicit deny step, an
# ask at the rule step (over the level and any grant), and an allow of a
# place on the host lets that access through the workspace step.
package toolperm

import rego.v1

path_layers := ["policy", "session"]

# path_access is what the call does to its paths: read for the
# capabilities data.path_access lists, write for every other one.
default path_access := "write"

path_access := data.path_access[capability]

checked_paths := object.get(input, ["workspace", "paths"], [])

# path_hits are the rules the layers resolved to for the call's access
# kind: every path's policy rule first, then every path's session rule.
path_hits := [object.union(m, {"layer": layer, "path": p.path, "access": path_access}) |
	some layer in path_layers
	some p in checked_paths
	m := p.rules[path_access][layer]
]

# path_rule is the strictest of the hits, the first of its rank.
path_rule := [h | some h in path_hits; rank(h.action) == path_rank][0]

path_rank := max([rank(h.action) | some h in path_hits])

path_denies if path_rule.action == "deny"

path_asks if path_rule.action == "ask"

access_words := {"read": "reading", "write": "writing"}

path_verbs := {"deny": "denies", "ask": "asks before"}

# path_verdict is the answer a path rule gives at a step of the chain.
path_verdict(step) := verdict(step, path_rule.action, "config", path_rule.pattern, sprintf(
	"The %s path rule %q %s %s %s.",
	[path_rule.layer, path_rule.pattern, path_verbs[path_rule.action], access_words[path_access], path_rule.path],
))

# outside_blocked are the strings of the call outside the workspace that
# no path rule lets through.
outside_blocked := [v |
	some v in object.get(input, ["workspace", "outside"], [])
	not let_through(v)
]

# let_through: every path the string resolved to is inside the workspace
# or in a place a path rule allows for this access.
let_through(v) if {
	resolved := [p | some p in checked_paths; p.value == v]
	count(resolved) > 0
	every p in resolved {
		passes_workspace(p)
	}
}

passes_workspace(p) if p.inside

# passes_workspace: every layer with a rule for the path allows this
# access, and one of them names a place on the host (an absolute pattern).
passes_workspace(p) if {
	found := [m | some layer in path_layers; m := p.rules[path_access][layer]]
	every m in found {
		m.action == "allow"
	}
	some m in found
	m.place == true
}

# explained_matches are the rules each layer matched, with the path rule
# that decided or let a path through under "path".
explained_matches := object.union(matches, {"path": path_rule}) if {
	path_rule
} else := matches

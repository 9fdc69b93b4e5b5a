# The decision chain.
#
# The ordered chain of docs/design.md §4: the first step that decides, returns.
# Entry point: data.toolperm.decision, the whole answer with its trace.
# When the chain needs a fact the engine has not supplied yet (the danger
# verdict, the parent session's decision), it says so in "needs"; the
# engine fetches it and evaluates again.
package toolperm

import rego.v1

steps := [
	"capability", "parent_scope", "workspace", "explicit_deny", "mode",
	"dangerous", "session_grant", "rule", "ask_always", "fallback",
]

# The answer is a function of the call's facts (answer_facts): what the
# chain and the answer read of one call beyond the session facts (the
# capability, the rule layers' resolution, the level, the mode and the
# scope, which the rules they call read from the input), and of those only
# what can change the answer (a reason naming a path only when a path is
# outside, a command's text only where the answer shows it). Most calls
# of one tool in one kind of session have the same call facts whatever
# their arguments, so pdp keeps the answer for each (the function results
# it keeps across evaluations); for OPA it is one function call more.
answer_facts := object.union(shell_chain_facts, {
	"path_rule": [r | r := path_rule],
	"path_reason": [r | path_rule; r := path_reason],
	"danger": [d | resolved.action == "assess"; d := danger],
	"screen_reason": [r | resolved.action == "assess"; danger.by == "screen"; count(screen_hits) > 0; r := screen_reason],
	"parent": parent_decisions,
	"outside_reason": [r | r := outside_reason],
	"shell_answer": shell_answer,
	"error": request_error,
	"danger_supplied": [true | input.danger],
	"flow": flow_facts,
})

# shell_chain_facts are the call facts only a shell command has (floor
# hits, command rules' verdicts, the fingerprint and its grant); every
# other call has none, which costs it nothing to find.
shell_chain_facts := {
	"floor": floor_hits,
	"command_denied": [v | v := command_denied],
	"command_asked": [v | v := command_asked],
	"fingerprint": fingerprint,
	"grant": [g | fingerprint != null; g := grant_for(capability, fingerprint)],
	"parts_allowed": [v | parts_allowed; v := parts_allowed_verdict],
	"screened": [true | resolved.action == "assess"; screened],
	"effect": [v | v := effect_verdict],
} if {
	capability == "shell.exec"
} else := {
	# Typed lines (shell_judged) meet the floor and command rules' stops
	# only: a write is never granted or allowed part by part.
	"floor": floor_hits,
	"command_denied": [v | v := command_denied],
	"command_asked": [v | v := command_asked],
	"fingerprint": null,
	"grant": [], "parts_allowed": [], "screened": [], "effect": [],
} if {
	shell_judged
} else := {
	"floor": [], "command_denied": [], "command_asked": [], "fingerprint": null,
	"grant": [], "parts_allowed": [], "screened": [], "effect": [],
}

# parent_decisions holds the parent's decision, once supplied.
parent_decisions := [p | p := input.parent_decision]

# chain is the verdict of the first step that decides, final the answer's
# verdict (a sub-agent's capped by its parent's), as the trace shows them.
chain := chain_all_of(answer_facts)

final := final_of(answer_facts, chain)

# chain_all_of is the verdict of the first step that decides.
chain_all_of(c) := v if {
	v := step_capability
} else := v if {
	v := step_parent_scope(c)
} else := v if {
	v := step_workspace(c)
} else := chain_of(c)

verdict(step, decision, source, rule, reason) := {
	"step": step, "decision": decision, "source": source,
	"rule": rule, "reason": reason,
}

step_capability := verdict("capability", "deny", "default", "UNKNOWN_TOOL", sprintf("The tool %q is not mapped to any capability.", [input.tool])) if {
	not capability
}

default session_scope := []

session_scope := input.session.scope

step_parent_scope(c) := verdict("parent_scope", "deny", "default", "PARENT_SCOPE", sprintf("%s is outside the sub-agent's scope.", [capability])) if {
	count(session_scope) > 0
	not in_scope
} else := verdict("parent_scope", "deny", "default", "PARENT_SCOPE", sprintf("The parent session denies this call: %s", [c.parent[0].reason])) if {
	c.parent[0].decision == "deny"
}

step_workspace(c) := verdict("workspace", "deny", "default", "OUTSIDE_WORKSPACE", c.outside_reason[0])

# outside_reason names the first string of the call outside the
# workspace that no path rule lets through.
outside_reason := sprintf("The path %q resolves outside the workspace %q.", [outside[0], input.session.workspace]) if {
	# An outside path is let through only by a path rule allowing its place (paths.rego).
	outside := outside_blocked
	count(outside) > 0
}

# chain_of is the verdict of the first step from the explicit deny on
# that decides, one condition list per step's outcome: the explicit
# deny (the deny floor, a deny rule, a path rule's or a command rule's
# deny or ask, a command that may be on the floor, a path rule's ask
# unless a later step denies), the mode, a dangerous capability without
# a rule, a grant or command rules allowing every part, the rule layers
# (an ask, the danger assessor's verdict on an assess rule, an allow),
# the ask-always list, the fallback.
chain_of(c) := verdict("explicit_deny", "deny", "project", "PROJECT_POLICY", project_error_reason) if {
	# The project's policy file cannot be read or understood: every
	# call of the session is denied until a person mends it.
	input.project.error
} else := verdict("explicit_deny", "deny", "config", c.floor[0].entry, sprintf("%q is on the deny floor (%s): %s.", [c.floor[0].text, c.floor[0].entry, floor_why(c.floor[0].entry)])) if {
	# The deny floor (floor.rego).
	c.floor[0].exact
} else := verdict("explicit_deny", "deny", resolved.source, resolved.pattern, sprintf("The %s rule %q denies %s.", [layer_label(resolved.layer), resolved.pattern, capability])) if {
	rank(resolved.action) == 3
} else := verdict("explicit_deny", c.path_rule[0].action, layer_source[c.path_rule[0].layer], c.path_rule[0].pattern, c.path_reason[0]) if {
	# A path rule's deny, for any path of the call (paths.rego).
	c.path_rule[0].action == "deny"
} else := verdict("explicit_deny", "deny", c.command_denied[0].source, c.command_denied[0].rule, c.command_denied[0].reason) if {
	# A command rule's deny, for any command of any part (commands.rego).
	c.command_denied[0]
} else := verdict("explicit_deny", "ask", c.command_asked[0].source, c.command_asked[0].rule, c.command_asked[0].reason) if {
	# A command rule's ask holds where the mode, the level or a grant would allow.
	c.command_asked[0]
} else := verdict("explicit_deny", "ask", "config", c.floor[0].entry, object.get(c.floor[0], "reason", floor_may_be(c.floor[0].text, c.floor[0].entry))) if {
	# A command that may be on the deny floor (rm -rf "$X").
	count(c.floor) > 0
} else := verdict("explicit_deny", c.flow.stop[0].action, "config", c.flow.stop[0].rule, c.flow.stop[0].reason) if {
	# The call would give the session all three flow labels, or a flow
	# rule of the security team's stops it (flow.rego): ask (or deny) at
	# every level and mode, but never an ask where a later step denies.
	c.flow.stop[0]
	not flow_ask_loosens(c.flow.stop[0].action)
} else := verdict("explicit_deny", c.path_rule[0].action, layer_source[c.path_rule[0].layer], c.path_rule[0].pattern, c.path_reason[0]) if {
	# So does a path rule's ask (paths.rego), and a deny a word only may
	# meet, but never where a later step denies.
	c.path_rule[0].action == "ask"
	not denied_later
} else := step_mode if {
	step_mode
} else := step_dangerous if {
	step_dangerous
} else := verdict("session_grant", "allow", c.grant[0].source, c.grant[0].rule, c.grant[0].reason) if {
	c.fingerprint != null
	not ask_always_hit
	c.grant[0]
} else := c.parts_allowed[0] if {
	# Every part allowed by a command rule or a grant (commands.rego).
	not ask_always_hit
} else := c.effect[0] if {
	# A command the level asks for, judged by what it does (effects.rego).
	not ask_always_hit
	c.effect[0]
} else := verdict("rule", "ask", resolved.source, resolved.pattern, sprintf("The %s rule %q asks before %s.", [layer_label(resolved.layer), resolved.pattern, capability])) if {
	resolved.action == "ask"
} else := verdict("rule", "allow", "assessor", resolved.pattern, "The danger assessor judged the command safe.") if {
	resolved.action == "assess"
	not ask_always_hit
	c.danger[0].verdict == "SAFE"
} else := verdict("rule", "ask", resolved.source, resolved.pattern, c.screen_reason[0]) if {
	# What the screen found, rather than only that it found something.
	resolved.action == "assess"
	c.danger[0].by == "screen"
} else := verdict("rule", "ask", resolved.source, resolved.pattern, danger_reason(c.danger[0])) if {
	resolved.action == "assess"
	c.danger[0].verdict != "SAFE"
} else := verdict("rule", "allow", resolved.source, resolved.pattern, sprintf("The %s rule %q allows %s.", [layer_label(resolved.layer), resolved.pattern, capability])) if {
	resolved.action == "allow"
	not ask_always_hit
} else := step_ask_always if {
	step_ask_always
} else := step_fallback

project_error_reason := sprintf("The project's policy cannot be used, so every call is denied until a person mends it: %s", [input.project.error])

# flow_ask_loosens: the flow rule's ask where a later step denies.
flow_ask_loosens("ask") if denied_later

# denied_later: the dangerous step or the fallback denies the call; an
# ask written as a rule never loosens that.
denied_later if {
	not step_mode
	step_dangerous
}

denied_later if {
	not step_mode
	not has_rule
	input.session.mode != "always-ask"
}

step_mode := verdict("mode", "allow", "mode", "MODE", "The session's mode is allow-all.") if {
	input.session.mode == "allow-all"
} else := verdict("mode", "allow", "mode", "MODE", "The session runs in CLOUD, where tools run in the server's sandbox.") if {
	input.session.execution_mode == "CLOUD"
} else := verdict("mode", "allow", "mode", "MODE", "The session's permission level is FULL.") if {
	input.session.permission_level == "FULL"
}

step_dangerous := verdict("dangerous", "deny", "default", "DANGEROUS_NO_RULE", sprintf("%s is a dangerous capability and no rule allows or asks for it.", [capability])) if {
	is_dangerous
	not has_rule
}

# grant_for is how the session's grants cover a fingerprint: by a grant
# of the session's own (source session-grant) before one of its project
# (project-grant, from allow_project).
grant_for(cap, fp) := {"source": "session-grant", "rule": "SESSION_GRANT", "reason": sprintf("The session has a grant for %q.", [fp])} if {
	some g in input.session.grants
	g.capability == cap
	g.fingerprint == fp
	object.get(g, "scope", "session") != "project"
} else := {"source": "project-grant", "rule": "PROJECT_GRANT", "reason": sprintf("The project has a grant for %q.", [fp])} if {
	some g in input.session.grants
	g.capability == cap
	g.fingerprint == fp
	g.scope == "project"
}

# screen_reason names what the screen matched: the first three findings,
# in order, and how many more there are.
screen_reason := sprintf("The screen judged the command DANGEROUS without asking the model: %s%s; a person decides.", [concat("; ", array.slice(hits, 0, 3)), more]) if {
	hits := sort(screen_hits)
	more := screen_more(count(hits))
}

screen_more(n) := "" if n <= 3

else := sprintf(" (and %d more)", [n - 3])

# danger_reason says how a verdict other than SAFE was reached.
danger_reason(d) := "The danger assessor judged the command DANGEROUS: a person decides." if {
	d.by == "llm"
} else := "The danger assessor judged this command DANGEROUS before (cached): a person decides." if {
	d.by == "cache"
} else := "The danger assessor failed (an HTTP error, a timeout or a malformed answer), so the command counts as DANGEROUS: a person decides." if {
	d.by == "error"
} else := "No danger assessor is configured, or it is unavailable (its circuit breaker is open), so the command counts as DANGEROUS: a person decides." if {
	d.by == "unavailable"
} else := sprintf("The command needs a person: the danger verdict is %s (%s).", [d.verdict, d.by])

step_ask_always := verdict("ask_always", "ask", "config", "ASK_ALWAYS", sprintf("%s is on the ask-always list.", [capability])) if {
	resolved.action in {"allow", "assess"}
	ask_always_hit
}

step_fallback := verdict("fallback", "ask", "default", "FALLBACK", sprintf("No rule covers %s and the session's mode is always-ask.", [capability])) if {
	not has_rule
	input.session.mode == "always-ask"
} else := verdict("fallback", "deny", "default", "FALLBACK", sprintf("No rule covers %s; on-demand denies what no rule allows.", [capability]))

# danger is the verdict an assess rule acts on: for shell.exec the screen's
# DANGEROUS, else the engine-supplied verdict (DANGEROUS until it
# arrives); DANGEROUS by screen for any other capability.
danger := {"verdict": "DANGEROUS", "by": "screen"} if {
	capability == "shell.exec"
	screened
} else := input.danger if {
	capability == "shell.exec"
	input.danger
} else := {"verdict": "DANGEROUS", "by": "unavailable"} if {
	capability == "shell.exec"
} else := {"verdict": "DANGEROUS", "by": "screen"}

# needs lists the facts the engine must fetch before the answer is final.
needs := needs_of(answer_facts, chain)

needs_of(c, v) := {n | some n in ["danger", "parent"]; needed(c, v, n)}

needed(c, v, "danger") if {
	v.step == "rule"
	not c.effect[0]
	resolved.action == "assess"
	capability == "shell.exec"
	not c.screened[0]
	not c.danger_supplied[0]
}

needed(c, v, "parent") if {
	input.session.has_parent == true
	not c.parent[0]
	v.decision != "deny"
}

# final_of caps a sub-agent's answer by its parent's decision for the
# same call: when the parent's is stricter, the answer carries the
# parent's source and rule.
final_of(c, v) := verdict(
	"parent_cap", p.decision, p.source, p.rule,
	sprintf("The parent session's decision is stricter: %s", [p.reason]),
) if {
	p := c.parent[0]
	rank(p.decision) > rank(v.decision)
} else := v

# decision is the entry point: every field of the answer, never omitted
# (the engine adds decision_id and revision), with the step-by-step trace
# and the rule each layer matched.
decision := object.union(answer, {"trace": trace, "matches": explained_matches})

# answer is the decision without its explanation: what the engine
# evaluates when no one asked for the trace.
answer := answer_of(answer_facts)

answer_of(c) := {
	"decision": f.decision,
	"need_approval": f.decision == "ask",
	"source": f.source,
	"rule": f.rule,
	"reason": f.reason,
	"capability": capability_or_null,
	"fingerprint": c.shell_answer.fingerprint,
	"grantable": answer_grantable(c, f),
	"parts": c.shell_answer.parts,
	"danger": reported_danger_of(c, f),
	"step": f.step,
	"needs": needs_of(c, v),
	"error": c.error,
	"labels": c.flow.labels,
} if {
	v := chain_all_of(c)
	f := final_of(c, v)
}

# answer_grantable: allow_session can change the answer — the call's
# parts have fingerprints, and the step that decided comes after the
# grants (an ask of a path rule, a command rule or the floor holds over
# any grant, so granting it would change nothing). The answer endpoint
# grants exactly when this says so (pdp.GrantFingerprints).
default answer_grantable(_, _) := false

answer_grantable(c, f) if {
	c.shell_answer.grantable == true
	not f.step in {"capability", "parent_scope", "workspace", "explicit_deny", "mode", "dangerous"}
}

# shell_answer are the answer's fields only a shell command gives a
# value: for every other call there is no fingerprint, no grant and no
# part.
shell_answer := {"fingerprint": fingerprint, "grantable": grantable, "parts": answer_parts} if {
	capability == "shell.exec"
} else := {"fingerprint": null, "grantable": false, "parts": null}

default capability_or_null := null

capability_or_null := capability

reported_danger := reported_danger_of(answer_facts, final)

# reported_danger_of is the danger verdict when the answer rests on an
# assess rule (null otherwise).
reported_danger_of(c, f) := c.danger[0] if {
	f.step in {"rule", "ask_always"}
	resolved.action == "assess"
	not c.effect[0]
} else := c.danger[0] if {
	# A rule's ask came first; the screen's verdict, which costs no model
	# call, is still shown to the person answering.
	f.step == "explicit_deny"
	f.decision == "ask"
	resolved.action == "assess"
	capability == "shell.exec"
	c.screened[0]
} else := null

default request_error := null

request_error := {"code": "capability_mismatch", "message": sprintf("The tool %q does not map to the capability %q.", [input.tool, input.capability])} if {
	capability_mismatch
}

# trace is the chain step by step: each step passed, decided, or was not reached.
trace := array.concat(
	[{"step": name, "outcome": step_outcome(i)} | some i, name in steps],
	[{"step": "parent_cap", "outcome": parent_cap_outcome} | input.parent_decision],
)

decided_index := i if {
	some i, name in steps
	name == chain.step
}

step_outcome(i) := "decided" if {
	i == decided_index
} else := "pass" if {
	i < decided_index
} else := "not_reached"

parent_cap_outcome := "decided" if final.step == "parent_cap"

else := "pass"

package toolperm_test

import data.toolperm
import rego.v1

# The engine matches paths against the rules (pdp/pathmatch.go) and hands
# the policy one fact per path, access kind and layer; these tests give
# those facts and check what the chain does with them.

rule(pattern, action) := {"pattern": pattern, "action": action, "place": startswith(pattern, "/")}

# inside is a checked path below the workspace /w; rules maps an access
# kind to the rule of each layer.
inside(rel, rules) := {"value": rel, "path": concat("/", ["/w", rel]), "rel": rel, "inside": true, "rules": rules}

# outside is a checked path outside the workspace, named as value.
outside(value, resolved, rules) := {"value": value, "path": resolved, "rel": null, "inside": false, "rules": rules}

file_call(cap, overrides, paths) := {
	"capability": cap,
	"session": session(overrides),
	"workspace": {
		"outside": [p.value | some p in paths; not p.inside],
		"paths": paths,
	},
}

env_deny := {"read": {"policy": rule(".env", "deny")}, "write": {"policy": rule(".env", "deny")}}

workflow_ask := {"write": {"policy": rule(".github/workflows/**", "ask")}}

every_level := ["READ_ONLY", "READ_WRITE", "SMART", "FULL"]

every_mode := ["always-ask", "on-demand", "allow-all"]

# --- deny: the explicit-deny step, at every level, mode and CLOUD --------

test_path_deny_decides_at_explicit_deny_everywhere if {
	every level in every_level {
		every mode in every_mode {
			d := decide(file_call("fs.read", {"permission_level": level, "mode": mode}, [inside(".env", env_deny)]))
			d.decision == "deny"
			d.step == "explicit_deny"
			d.source == "config"
			d.rule == ".env"
			d.reason == "The policy path rule \".env\" denies reading /w/.env."
		}
	}
	d := decide(file_call("fs.write", {"execution_mode": "CLOUD", "mode": "allow-all"}, [inside(".env", env_deny)]))
	d.decision == "deny"
	d.rule == ".env"
}

# --- ask: over the level, a grant and the mode ----------------------------

test_path_ask_asks_over_the_level if {
	every level in ["READ_ONLY", "READ_WRITE", "SMART"] {
		every mode in ["always-ask", "on-demand"] {
			d := decide(file_call("fs.write", {"permission_level": level, "mode": mode}, [inside(".github/workflows/ci.yml", workflow_ask)]))
			d.decision == "ask"
			d.step == "explicit_deny"
			d.rule == ".github/workflows/**"
			d.reason == "The policy path rule \".github/workflows/**\" asks before writing /w/.github/workflows/ci.yml."
		}
	}
}

test_path_ask_holds_over_the_mode if {
	# An ask written as a rule holds in every mode, like a deny.
	every c in [
		{"permission_level": "FULL"},
		{"mode": "allow-all"},
		{"execution_mode": "CLOUD"},
	] {
		d := decide(file_call("fs.write", c, [inside(".github/workflows/ci.yml", workflow_ask)]))
		d.decision == "ask"
		d.rule == ".github/workflows/**"
	}
}

test_path_ask_asks_over_a_grant if {
	cwd := inside(".git/hooks", {"write": {"session": rule(".git/**", "ask")}})
	inp := object.union(file_call("shell.exec", {"grants": [{"capability": "shell.exec", "fingerprint": "git status"}]}, [cwd]), {"tool": "shell", "shell": plain(["git", "status"])})
	d := decide(inp)
	d.decision == "ask"
	d.step == "explicit_deny"
	d.rule == ".git/**"
	d.reason == "The session path rule \".git/**\" asks before writing /w/.git/hooks."
}

test_path_ask_needs_no_danger_verdict if {
	inp := object.union(
		file_call("shell.exec", {"permission_level": "SMART"}, [inside(".git", {"write": {"policy": rule(".git/**", "ask")}})]),
		{"tool": "shell", "shell": plain(["make", "build"])},
	)
	d := decide(inp)
	d.decision == "ask"
	d.rule == ".git/**"
	count(d.needs) == 0
	d.danger == null
}

test_path_ask_never_loosens_the_fallback if {
	# No rule covers mcp.x.y: on-demand denies, dangerous or not.
	d := decide(file_call("mcp.x.y", {}, [inside("a", {"write": {"policy": rule("a", "ask")}})]))
	d.decision == "deny"
	d.rule == "DANGEROUS_NO_RULE"
	d2 := decide(file_call("review.x", {}, [inside("a", {"write": {"policy": rule("a", "ask")}})]))
	d2.decision == "deny"
	d2.rule == "FALLBACK"
}

test_path_allow_inside_changes_nothing if {
	allow := {"write": {"session": rule("src/**", "allow")}}
	d := decide(file_call("fs.write", {}, [inside("src/a.go", allow)]))
	d.decision == "ask"
	d.source == "level"
	d.rule == "fs.write"
}

# --- access kinds ---------------------------------------------------------

test_access_kind_comes_from_the_capability if {
	every cap in ["fs.read", "fs.glob", "fs.grep", "fs.list"] {
		toolperm.path_access == "read" with input as file_call(cap, {}, [])
	}
	every cap in ["fs.write", "fs.edit", "fs.delete", "fs.move", "mcp.srv.tool", "plugin.p.t"] {
		toolperm.path_access == "write" with input as file_call(cap, {}, [])
	}
}

test_a_rule_holds_only_for_its_access_kind if {
	read_only_deny := {"read": {"policy": rule("secrets/**", "deny")}}
	decide(file_call("fs.read", {}, [inside("secrets/k", read_only_deny)])).decision == "deny"
	d := decide(file_call("fs.write", {"permission_level": "READ_WRITE"}, [inside("secrets/k", read_only_deny)]))
	d.decision == "allow"
	d.rule == "fs.write"
	decide(file_call("fs.read", {}, [inside(".github/workflows/ci.yml", workflow_ask)])).decision == "allow"
}

# --- strictest across paths and layers -----------------------------------

test_strictest_across_paths if {
	d := decide(file_call("fs.edit", {"permission_level": "READ_WRITE"}, [
		inside(".github/workflows/ci.yml", workflow_ask),
		inside(".env", env_deny),
	]))
	d.decision == "deny"
	d.rule == ".env"
}

test_a_session_rule_never_loosens_the_policy if {
	rules := {"write": {"policy": rule(".git/**", "ask"), "session": rule(".git/config", "allow")}}
	d := decide(file_call("fs.write", {"permission_level": "READ_WRITE"}, [inside(".git/config", rules)]))
	d.decision == "ask"
	d.rule == ".git/**"
	d.reason == "The policy path rule \".git/**\" asks before writing /w/.git/config."
}

test_a_session_rule_tightens_the_policy if {
	rules := {"write": {"policy": rule(".git/**", "ask"), "session": rule(".git/**", "deny")}}
	d := decide(file_call("fs.write", {"permission_level": "READ_WRITE"}, [inside(".git/x", rules)]))
	d.decision == "deny"
	d.reason == "The session path rule \".git/**\" denies writing /w/.git/x."
}

test_on_a_tie_the_policy_names_the_rule if {
	rules := {"read": {"policy": rule("a/**", "deny"), "session": rule("a", "deny")}}
	d := decide(file_call("fs.read", {}, [inside("a/b", rules)]))
	d.rule == "a/**"
	d.reason == "The policy path rule \"a/**\" denies reading /w/a/b."
}

# --- places outside the workspace ----------------------------------------

docs_read := {"read": {"policy": rule("/opt/docs/**", "allow")}}

test_a_place_allow_lets_its_access_through if {
	d := decide(file_call("fs.read", {}, [outside("/opt/docs/a.md", "/opt/docs/a.md", docs_read)]))
	d.decision == "allow"
	d.rule == "fs.read"
	m := toolperm.decision.matches.path with input as file_call("fs.read", {}, [outside("/opt/docs/a.md", "/opt/docs/a.md", docs_read)])
	m.pattern == "/opt/docs/**"
	m.layer == "policy"
	m.action == "allow"
}

test_a_read_allow_never_allows_a_write if {
	d := decide(file_call("fs.write", {"mode": "allow-all"}, [outside("/opt/docs/a.md", "/opt/docs/a.md", docs_read)]))
	d.decision == "deny"
	d.rule == "OUTSIDE_WORKSPACE"
}

test_a_place_is_let_through_only_when_every_layer_allows if {
	rules := {"read": {"policy": rule("/opt/docs/**", "allow"), "session": rule("/opt/docs/private/**", "deny")}}
	d := decide(file_call("fs.read", {}, [outside("/opt/docs/private/x", "/opt/docs/private/x", rules)]))
	d.decision == "deny"
	d.rule == "OUTSIDE_WORKSPACE"
}

test_only_a_place_lets_a_path_through if {
	# A name pattern allows nothing outside: it names no place.
	rules := {"read": {"policy": rule(".env.example", "allow")}}
	d := decide(file_call("fs.read", {}, [outside("/etc/.env.example", "/etc/.env.example", rules)]))
	d.rule == "OUTSIDE_WORKSPACE"
}

test_every_resolution_of_a_string_must_be_let_through if {
	# A relative path resolved against two bases: one allowed, one not.
	d := decide(file_call("fs.read", {}, [
		outside("../docs/a.md", "/opt/docs/a.md", docs_read),
		outside("../docs/a.md", "/srv/docs/a.md", {}),
	]))
	d.rule == "OUTSIDE_WORKSPACE"

	# A string that resolved to nothing the rules could see.
	unresolved := {"capability": "fs.read", "session": session({}), "workspace": {"outside": ["~root/x"], "paths": []}}
	decide(unresolved).rule == "OUTSIDE_WORKSPACE"
}

test_a_link_is_judged_by_its_target if {
	# The engine resolves links; the rule matched the target, and the
	# answer names it.
	link := {"value": "docs-link/a.md", "path": "/opt/docs/a.md", "rel": null, "inside": false, "rules": docs_read}
	decide(file_call("fs.read", {}, [link])).decision == "allow"
	secret := {"value": "notes.txt", "path": "/w/.env", "rel": ".env", "inside": true, "rules": env_deny}
	d := decide(file_call("fs.read", {}, [secret]))
	d.decision == "deny"
	d.reason == "The policy path rule \".env\" denies reading /w/.env."
}

test_an_outside_deny_still_denies_at_the_workspace_step if {
	rules := {"read": {"policy": rule("/opt/docs/**", "allow"), "session": rule(".env", "deny")}}
	d := decide(file_call("fs.read", {"mode": "allow-all"}, [outside("/opt/docs/.env", "/opt/docs/.env", rules)]))
	d.decision == "deny"
}

# --- the explanation ------------------------------------------------------

test_the_trace_shows_the_path_rule if {
	d := decide(file_call("fs.read", {}, [inside(".env", env_deny)]))
	d.matches.path == {"pattern": ".env", "action": "deny", "place": false, "layer": "policy", "path": "/w/.env", "access": "read"}
	some step in d.trace
	step == {"step": "explicit_deny", "outcome": "decided"}
	d2 := decide(file_call("fs.read", {}, [inside("a.go", {})]))
	not d2.matches.path
}

# --- the shipped defaults (policies/data.json) ----------------------------

test_shipped_path_defaults if {
	data.paths[".git/**"] == {"write": "ask"}
	data.paths[".git/hooks/**"] == {"write": "deny"}
	data.paths[".env"] == "deny"
	data.paths[".env.*"] == "deny"
	data.paths[".env.example"] == "allow"
	data.paths[".github/workflows/**"] == {"write": "ask"}
	data.paths[".gitlab-ci.yml"] == {"write": "ask"}
	data.path_access == {"fs.read": "read", "fs.glob": "read", "fs.grep": "read", "fs.list": "read"}
}

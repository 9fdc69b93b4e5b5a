package toolperm_test

import data.toolperm
import rego.v1

# A shell command is judged by what it does when the program table
# describes every part: a read as fs.read, a write in the workspace as
# fs.write; anything else stays shell.exec.

# effect_call is a shell call with the workspace facts pdp gives: paths
# lists the shell words that are not inside the workspace.
effect_call(facts, overrides, paths) := {
	"tool": "shell", "shell": facts, "session": session(overrides),
	"workspace": {"outside": [], "paths": array.concat([cwd_fact], paths)},
}

# cwd_fact: the call runs in the workspace's root.
cwd_fact := {"value": "/w", "path": "/w", "rel": ".", "inside": true, "rules": {}}

reads(argv) if {
	d := decide(effect_call(plain(argv), {}, []))
	d.decision == "allow"
	d.rule == "fs.read"
	d.source == "level"
	contains(d.reason, "only reads in the workspace")
}

asks(argv) if {
	d := decide(effect_call(plain(argv), {}, []))
	d.decision == "ask"
	d.rule == "shell.exec"
}

test_described_reads_run_at_read_only if {
	every argv in [
		["cat", "app.py"], ["nl", "-ba", "app.py"], ["sed", "-n", "1,80p", "app.py"], ["sed", "-n", "/def x/,/^$/p", "a.py"],
		["grep", "-rn", "import os", "."], ["grep", "-A3", "-e", "x", "a.py"], ["head", "-20", "a.py"], ["tail", "-n", "+5", "a.py"],
		["ls", "-la"], ["find", ".", "-name", "*.py", "-type", "f"], ["git", "status"], ["git", "log", "--oneline", "-5"],
		["git", "branch", "--show-current"], ["git", "diff", "--stat", "HEAD~1"], ["rg", "-n", "foo", "-g*.py"],
		["pwd"], ["whoami"], ["date"], ["python3", "--version"], ["wc", "-l", "a.py"], ["sort", "-u", "a.txt"],
		["uniq", "-c", "a.txt"], ["jq", ".name", "package.json"], ["cd", "src"], ["echo", "done"],
	] {
		reads(argv)
	}
}

test_what_is_not_described_is_code if {
	every argv in [
		# GNU sed's e and w commands, s///e and s///w, reading a script
		["sed", "-n", "1e id", "a"], ["sed", "s/a/b/e", "a"], ["sed", "s/a/b/w out", "a"], ["sed", "w out", "a"], ["sed", "-f", "x.sed", "a"],
		["sed", "r /etc/shadow", "a"], ["sed", "-e", "1p", "a"],
		# find's actions, sort's output and compressor, uniq's output file
		["find", ".", "-exec", "id", ";"], ["find", ".", "-delete"], ["find", ".", "-fprint", "x"], ["find", ".", "-ok", "id", ";"],
		["sort", "-o", "x", "a"], ["sort", "--compress-program=sh", "a"], ["uniq", "a", "b"], ["xxd", "a", "b"],
		# git's config, output files, external diff, pagers, writes
		["git", "-c", "core.pager=id", "log"], ["git", "diff", "--output=x"], ["git", "diff", "--ext-diff"], ["git", "-p", "log"],
		["git", "branch", "-D", "x"], ["git", "branch", "new"], ["git", "config", "user.name", "x"], ["git", "push"], ["git"],
		# ripgrep's preprocessor, tree's output, an unknown option, an abbreviation
		["rg", "--pre", "sh", "x"], ["rg", "-z", "x"], ["tree", "-o", "x"], ["cat", "--bogus", "a"], ["git", "diff", "--out=x"],
		# interpreters and pagers
		["python3"], ["python3", "-c", "print(1)"], ["python3", "x.py"], ["awk", "{print}", "a"], ["less", "a"], ["env"], ["xargs", "cat"],
		# a value that looks like an option, and a program not described at all
		["grep", "-e", "-f", "x"], ["make"], ["npm", "test"], ["curl", "https://x"],
		# a program named by a path or in another case runs another file
		["bin/cat", "a"], ["./git", "status"], ["/tmp/x/cat", "a"], ["CAT", "a"],
		# what follows links out of the workspace, reads the environment
		# or global configuration, or imports files
		["grep", "-R", "x", "."], ["rg", "--follow", "x"], ["find", "-L", "."], ["diff", "-r", "a", "b"], ["du", "-L", "."],
		["tree", "-l"], ["git", "config", "--list"], ["git", "-C", "sub", "status"], ["git", "grep", "--no-index", "x"],
		["jq", "-n", "import \"cfg\" as $c; $c"], ["jq", "-n", "env"], ["jq", "-n", "$ENV.TOKEN"],
		# a link made and moved, a version that runs a toolchain file
		["cp", "-s", "../x", "l"], ["mv", "l", ".."], ["cargo", "--version"], ["yarn", "-v"],
	] {
		asks(argv)
	}

	# echo of a parameter prints the environment.
	decide(effect_call(dynamic(["echo", "$TOKEN"], [true, false]), {}, [])).rule == "shell.exec"
}

test_git_only_from_the_workspace_root if {
	reads(["git", "status"])

	# Run from a sub-directory, or after a cd, git may find another
	# repository and run what its configuration says.
	sub := {"value": "/w/n", "path": "/w/n", "rel": "n", "inside": true, "rules": {}}
	d := decide({"tool": "shell", "shell": plain(["git", "status"]), "session": session({}), "workspace": {"outside": [], "paths": [sub]}})
	d.rule == "shell.exec"
	decide(effect_call(list_facts([["cd", "n"], ["git", "log"]], ["&&"]), {}, [])).rule == "shell.exec"
}

test_a_word_outside_the_workspace_is_no_read_of_it if {
	outside := [{"value": "/etc/passwd", "path": "/etc/passwd", "inside": false, "rel": null, "rules": {}, "shell": {"command": 0, "word": 1}}]
	d := decide(effect_call(plain(["cat", "/etc/passwd"]), {}, outside))
	d.decision == "ask"
	d.rule == "shell.exec"

	# A redirection outside too.
	out := object.union(plain(["cat", "a"]), {"parts": [object.union(part_of(["cat", "a"], 0), {"redirections": [{"op": ">", "target": "/tmp/x", "dev_null": false, "dup": false, "here_doc": false}]})]})
	r := decide(effect_call(out, {"permission_level": "READ_WRITE"}, [{"value": "/tmp/x", "path": "/tmp/x", "inside": false, "rel": null, "rules": {}, "shell": {"redirect": ">"}}]))
	r.decision == "ask"

	# Without workspace facts nothing is known to be confined.
	w := decide({"tool": "shell", "shell": plain(["cat", "a"]), "session": session({})})
	w.rule == "shell.exec"
}

redirected(argv, op, target) := object.union(plain(argv), {"parts": [object.union(part_of(argv, 0), {"redirections": [{"op": op, "target": target, "dev_null": false, "dup": false, "here_doc": false}]})]})

test_writes_in_the_workspace_run_at_read_write if {
	every facts in [
		plain(["sed", "-i", "s/a/b/g", "a.py"]), plain(["sed", "--in-place", "1d", "a.py"]), plain(["tee", "out.log"]),
		plain(["touch", "x"]), plain(["mkdir", "-p", "build"]),
		redirected(["cat", "a"], ">", "b"), redirected(["echo", "x"], ">>", "b"),
	] {
		w := decide(effect_call(facts, {"permission_level": "READ_WRITE"}, []))
		w.decision == "allow"
		w.rule == "fs.write"
		contains(w.reason, "writes in the workspace")

		# At READ_ONLY a write asks, as the Write tool does.
		r := decide(effect_call(facts, {}, []))
		r.decision == "ask"
	}

	# A read from a file, a here-document and a descriptor are no writes.
	every facts in [
		redirected(["cat"], "<", "a"),
		object.union(plain(["cat"]), {"parts": [object.union(part_of(["cat"], 0), {"redirections": [{"op": "<<", "target": "EOF", "dev_null": false, "dup": false, "here_doc": true}]})]}),
		object.union(plain(["ls"]), {"parts": [object.union(part_of(["ls"], 0), {"redirections": [{"op": ">&", "target": "1", "dev_null": false, "dup": true, "here_doc": false}, {"op": ">", "target": "/dev/null", "dev_null": true, "dup": false, "here_doc": false}]})]}),
	] {
		decide(effect_call(facts, {}, [])).rule == "fs.read"
	}
}

test_a_compound_gets_the_strictest_of_its_parts if {
	rw := {"permission_level": "READ_WRITE"}
	decide(effect_call(list_facts([["cd", "src"], ["grep", "-n", "x", "a.py"]], ["&&"]), {}, [])).rule == "fs.read"
	decide(effect_call(list_facts([["git", "status"], ["touch", "x"]], ["&&"]), rw, [])).rule == "fs.write"
	decide(effect_call(list_facts([["git", "status"], ["touch", "x"]], ["&&"]), {}, [])).decision == "ask"
	decide(effect_call(list_facts([["cat", "a"], ["python3", "x.py"]], ["|"]), rw, [])).rule == "shell.exec"

	# Substitutions, assignments, background and negation around a part.
	every change in [{"substitutions": 1}, {"assignments": 1}, {"background": true}, {"negated": true}, {"evaluated": 1}, {"simple": false}] {
		decide(effect_call(with_part(plain(["cat", "a"]), change), {}, [])).rule == "shell.exec"
	}

	# A word that is not literal: only programs that never read their
	# words as paths (echo) take it.
	decide(effect_call(dynamic(["cat", "$F"], [true, false]), {}, [])).rule == "shell.exec"
}

test_every_step_before_the_effects_holds if {
	# A rule the security team or the session wrote for shell.exec.
	decide(effect_call(plain(["cat", "a"]), {"rules": {"shell.exec": "ask"}}, [])).rule == "shell.exec"

	# A rule for the effect's capability.
	decide(effect_call(plain(["cat", "a"]), {"rules": {"fs.read": "ask"}}, [])).rule == "shell.exec"

	# A command rule, the floor, a path rule.
	decide(effect_call(plain(["cat", "a"]), {"command_rules": {"cat": "ask"}}, [])).rule == "cat"
	env := [{"value": ".env", "path": "/w/.env", "inside": true, "rel": ".env", "shell": {"command": 0, "word": 1}, "rules": {"read": {"policy": {"pattern": ".env", "action": "deny", "place": false}}}}]
	decide(effect_call(plain(["cat", ".env"]), {}, env)).decision == "deny"

	# SMART reads without asking the model; the answer carries no verdict.
	s := decide(effect_call(plain(["cat", "a"]), {"permission_level": "SMART"}, []))
	s.decision == "allow"
	s.needs == set()
	s.danger == null

	# ask_always still asks, for the call's capability or the effect's.
	every always in [["shell.exec"], ["fs.read"], ["fs.*"]] {
		a := decide(effect_call(plain(["cat", "a"]), {}, [])) with data.ask_always as always
		a.decision == "ask"
	}
}

test_the_switch_restores_the_seed if {
	d := decide(effect_call(plain(["cat", "app.py"]), {}, [])) with data.shell.effects as false
	d.decision == "ask"
	d.rule == "shell.exec"
}

test_options_by_their_grammar if {
	opts := {"-n", "-A=", "--color", "--format=", "-i?", "-name=", "-NUM"}
	toolperm.option_ok(opts, "-n")
	toolperm.option_ok(opts, "-nA3")
	toolperm.option_ok(opts, "-A")
	toolperm.option_ok(opts, "--format=%h")
	toolperm.option_ok(opts, "--format")
	toolperm.option_ok(opts, "-i.bak")
	toolperm.option_ok(opts, "-ni")
	toolperm.option_ok(opts, "-name")
	toolperm.option_ok(opts, "-20")
	not toolperm.option_ok(opts, "-x")
	not toolperm.option_ok(opts, "-nx")
	not toolperm.option_ok(opts, "--col")
	not toolperm.option_ok(opts, "--color=always")
	toolperm.separate_value(opts, "-A")
	toolperm.separate_value(opts, "-nA")
	toolperm.separate_value(opts, "--format")
	not toolperm.separate_value(opts, "-i")
	not toolperm.separate_value(opts, "-A3")
}

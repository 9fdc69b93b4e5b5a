package toolperm_test

import data.toolperm
import rego.v1

# Shell words meet the path rules (docs/security.md, "Path rules through
# the shell"): the engine resolves every word of every command and every
# redirection's target and hands over the rules each layer has for it;
# the policy decides which access the word implies.

# shell_paths_call is a shell.exec call of the commands (argv lists) with
# the given checked paths.
shell_paths_call(argvs, overrides, paths) := {
	"tool": "shell", "capability": "shell.exec",
	"session": session(overrides),
	"shell": list_facts(argvs, []),
	"workspace": {"outside": [], "paths": paths},
}

# word_path is a checked path for word i of command j.
word_path(rel, j, i, rules) := object.union(inside(rel, rules), {"shell": {"command": j, "word": i}})

redirect_path(rel, op, rules) := object.union(inside(rel, rules), {"shell": {"redirect": op}})

# possible marks each rule of a fact as only possibly met.
possible(rules) := {access: {layer: object.union(m, {"possible": true}) | some layer, m in by_layer} | some access, by_layer in rules}

full := {"permission_level": "FULL"}

test_an_operand_meets_the_path_rules_at_every_level_and_mode if {
	every overrides in [full, {"mode": "allow-all"}, {"execution_mode": "CLOUD"}, {}] {
		d := decide(shell_paths_call([["cat", ".env"]], overrides, [word_path(".env", 0, 1, env_deny)]))
		d.decision == "deny"
		d.step == "explicit_deny"
		d.rule == ".env"
		d.reason == "The policy path rule \".env\" denies reading /w/.env (the word \".env\" of \"cat .env\")."
	}
	d := decide(shell_paths_call([["cat", ".env"]], full, [word_path(".env", 0, 1, env_deny)]))
	d.matches.path.word == {"value": ".env", "command": "cat .env", "possible": false}
}

test_a_redirection_writes_or_reads_its_target if {
	write_only := {"write": {"policy": rule("ci.yml", "ask")}}
	read_only := {"read": {"policy": rule("ci.yml", "ask")}}
	every op in [">", ">>", ">|", "&>", "&>>", "2>", ">&"] {
		expect(shell_paths_call([["echo", "x"]], full, [redirect_path("ci.yml", op, write_only)]), "ask", "config", "ci.yml")
		expect(shell_paths_call([["echo", "x"]], full, [redirect_path("ci.yml", op, read_only)]), "allow", "mode", "MODE")
	}
	expect(shell_paths_call([["wc"]], full, [redirect_path("ci.yml", "<", read_only)]), "ask", "config", "ci.yml")
	expect(shell_paths_call([["wc"]], full, [redirect_path("ci.yml", "0<", write_only)]), "allow", "mode", "MODE")
	expect(shell_paths_call([["wc"]], full, [redirect_path("ci.yml", "<>", write_only)]), "ask", "config", "ci.yml")
	d := decide(shell_paths_call([["echo", "x"]], full, [redirect_path("ci.yml", ">", write_only)]))
	d.reason == "The policy path rule \"ci.yml\" asks before writing /w/ci.yml (the redirection > ci.yml)."
}

test_what_each_program_does_to_its_operands if {
	write_ask := {"write": {"policy": rule("x", "ask")}}
	read_ask := {"read": {"policy": rule("x", "ask")}}

	# read: cat and friends read, never write.
	expect(shell_paths_call([["cat", "x"]], full, [word_path("x", 0, 1, read_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["cat", "x"]], full, [word_path("x", 0, 1, write_ask)]), "allow", "mode", "MODE")

	# none: echo's operands are text.
	expect(shell_paths_call([["echo", "x"]], full, [word_path("x", 0, 1, env_deny)]), "allow", "mode", "MODE")

	# write: rm, tee, truncate write what they name.
	every prog in ["rm", "tee", "truncate", "touch", "chmod"] {
		expect(shell_paths_call([[prog, "x"]], full, [word_path("x", 0, 1, write_ask)]), "ask", "config", "x")
	}

	# copy: which operand cp writes depends on its options (-t DIR, a
	# trailing -f), so every operand may be read or written.
	expect(shell_paths_call([["cp", "x", "y"]], full, [word_path("x", 0, 1, read_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["cp", "x", "y", "-f"]], full, [word_path("x", 0, 2, write_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["cp", "-t", "x", "y"]], full, [word_path("x", 0, 2, write_ask)]), "ask", "config", "x")

	# move: both ends are read and written.
	expect(shell_paths_call([["mv", "x", "y"]], full, [word_path("x", 0, 1, write_ask)]), "ask", "config", "x")

	# sed writes only in place.
	expect(shell_paths_call([["sed", "s/a/b/", "x"]], full, [word_path("x", 0, 2, write_ask)]), "allow", "mode", "MODE")
	expect(shell_paths_call([["sed", "-i", "s/a/b/", "x"]], full, [word_path("x", 0, 3, write_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["sed", "--in-place=.bak", "s/a/b/", "x"]], full, [word_path("x", 0, 3, write_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["sed", "--in", "s/a/b/", "x"]], full, [word_path("x", 0, 3, write_ask)]), "ask", "config", "x")

	# dd writes of= and reads if=.
	expect(shell_paths_call([["dd", "of=x"]], full, [word_path("x", 0, 1, write_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["dd", "if=x"]], full, [word_path("x", 0, 1, write_ask)]), "allow", "mode", "MODE")
	expect(shell_paths_call([["dd", "if=x"]], full, [word_path("x", 0, 1, read_ask)]), "ask", "config", "x")

	# A program the policy does not know may do both; so may one named by
	# an expansion.
	expect(shell_paths_call([["frobnicate", "x"]], full, [word_path("x", 0, 1, write_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["frobnicate", "x"]], full, [word_path("x", 0, 1, read_ask)]), "ask", "config", "x")
	expect(shell_paths_call([["$P"]], full, [word_path("x", 0, 0, read_ask)]), "ask", "config", "x")
}

test_a_word_that_may_name_a_protected_path_asks if {
	# $F, .en*, ~/.ssh/*: the engine hands over the strictest rule the word
	# may meet, marked possible; a deny it only may meet asks.
	p := object.union(word_path("$F", 0, 1, possible(env_deny)), {"possible": true, "path": ""})
	every overrides in [full, {"mode": "allow-all"}, {"execution_mode": "CLOUD"}] {
		expect(shell_paths_call([["cat", "$F"]], overrides, [p]), "ask", "config", ".env")
	}
	d := decide(shell_paths_call([["cat", "$F"]], full, [p]))
	d.reason == "The word \"$F\" of \"cat $F\" may name a path the policy path rule \".env\" denies reading: a person decides."
	d.matches.path.possible == true

	r := object.union(redirect_path("$F", ">", possible(env_deny)), {"possible": true, "path": ""})
	d2 := decide(shell_paths_call([["echo", "x"]], full, [r]))
	d2.decision == "ask"
	d2.reason == "The redirection > $F may name a path the policy path rule \".env\" denies writing: a person decides."
}

test_a_long_command_is_cut_in_the_reason if {
	long := concat("", ["x" | some _ in numbers.range(1, 300)])
	d := decide(shell_paths_call([["cat", long]], full, [word_path(long, 0, 1, env_deny)]))
	d.decision == "deny"
	contains(d.reason, "…")
	count(d.reason) < 1000
}

test_shell_words_of_another_capability_are_not_judged if {
	p := word_path(".env", 0, 1, env_deny)
	inp := object.union(object.remove(shell_paths_call([["cat", ".env"]], full, [p]), ["tool"]), {"capability": "fs.list"})
	d := decide(inp)
	d.decision == "allow"
}

test_a_command_that_could_not_be_read_may_name_any_path if {
	p := {"value": "<command that could not be read>", "path": "", "rel": null, "inside": false, "possible": true, "shell": {"unread": true}, "rules": possible(env_deny)}
	inp := {
		"tool": "shell", "capability": "shell.exec", "session": session(full),
		"shell": {"parsed": false, "error": "1:9: reached EOF without closing quote"},
		"workspace": {"outside": [], "paths": [p]},
	}
	d := decide(inp) with data.floor as [] # the floor would ask first
	d.decision == "ask"
	d.rule == ".env"
	contains(d.reason, "could not be read")
}

# A program's code is not a path it names: the text after an
# interpreter's inline-code flag, sed's script.
test_code_text_is_no_path_operand if {
	toolperm.operand_accesses({"argv": ["python3", "-c", "print(open('$F').read())"]}, 2) == []
	toolperm.operand_accesses({"argv": ["node", "-e", "x"]}, 2) == []
	toolperm.operand_accesses(literal(["sed", "-i", "s/$A/b/", "f.py"]), 2) == []
	toolperm.operand_accesses(literal(["sed", "s/$A/b/", "f.py"]), 1) == []

	# The operands after it are still paths.
	toolperm.operand_accesses({"argv": ["sed", "-i", "s/a/b/", "f.py"]}, 3) == ["read", "write"]
	toolperm.operand_accesses({"argv": ["python3", "-c", "x", "f.py"]}, 3) == ["read", "write"]

	# With -e the script is given there: every other word is a path.
	toolperm.operand_accesses({"argv": ["sed", "-e", "p", ".env"]}, 3) == ["read"]
	toolperm.operand_accesses(literal(["sed", "-n", "p", ".env"]), 2) == []
	toolperm.operand_accesses({"argv": ["python3", "x.py"]}, 1) == ["read", "write"]
}

# The text operand of a described program — grep's and rg's pattern,
# jq's filter — is no path either, once every word is literal and every
# option is one the table lists; otherwise every word may be one.
test_a_described_text_operand_is_no_path_operand if {
	toolperm.operand_accesses(literal(["grep", "-rn", ".env", "src"]), 2) == []
	toolperm.operand_accesses(literal(["grep", "-rn", ".env", "src"]), 3) == ["read"]
	toolperm.operand_accesses(literal(["grep", "-A", "3", ".env", "src"]), 3) == []
	toolperm.operand_accesses(literal(["rg", "-n", "secret", ".env"]), 3) == ["read"]
	toolperm.operand_accesses(literal(["jq", ".a", "x.json"]), 1) == []
	toolperm.operand_accesses(literal(["sed", "-n", "p", ".env"]), 2) == []

	# A pattern given by an option: the first operand is a path.
	toolperm.operand_accesses(literal(["grep", "-e", "x", ".env"]), 3) == ["read"]
	toolperm.operand_accesses(literal(["grep", "-f", ".env", "x"]), 2) != []

	# An option the table does not list may take the next word as its
	# value: nothing is taken for text.
	toolperm.operand_accesses(literal(["grep", "--exclude-from", ".env", "x", "y"]), 2) != []

	# BSD grep's --context takes no value: the word after it is the
	# pattern, the next a file.
	toolperm.operand_accesses(literal(["grep", "--context", "x", ".env"]), 3) == ["read"]

	# A program named by a path is not the described one.
	toolperm.operand_accesses(literal(["bin/grep", "x", "y"]), 1) != []

	# A word that is not literal splits into words the program opens
	# (grep {^,.env} runs grep ^ .env): no word is text.
	toolperm.operand_accesses({"argv": ["grep", "{^,.env}"], "literal": [true, false]}, 1) != []
	toolperm.operand_accesses({"argv": ["jq", "-R", "{.,.env}"], "literal": [true, true, false]}, 2) != []
	toolperm.operand_accesses({"argv": ["grep", "-v", ".env*"], "literal": [true, true, false]}, 2) != []
	toolperm.operand_accesses({"argv": ["sed", "$S", "f"], "literal": [true, false, true]}, 1) != []

	# Without the literal facts nothing is known to be text.
	toolperm.operand_accesses({"argv": ["grep", "x", "y"]}, 1) != []
}

literal(argv) := {"argv": argv, "literal": [true | some _ in argv]}

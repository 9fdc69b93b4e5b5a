package toolperm_test

import data.toolperm
import rego.v1

plain(argv) := list_facts([argv], [])

# list_facts are the facts of simple commands joined by operators, each
# command one plain part, as the shell adapter gives them.
list_facts(argvs, operators) := {
	"parsed": true,
	"commands": [{"argv": a, "literal": [true | some _ in a]} | some a in argvs],
	"parts": [part_of(a, i) | some i, a in argvs],
	"operators": operators, "compound": [], "redirections": 0, "substitutions": 0, "assignments": 0,
	"redirects": [], "evaluated": 0, "assigned": [],
}

part_of(argv, i) := {
	"text": concat(" ", argv), "argv": argv, "literal": [true | some _ in argv], "simple": true,
	"first": i, "end": i + 1, "assignments": 0, "substitutions": 0, "evaluated": 0,
	"redirections": [], "background": false, "negated": false,
}

# with_part changes the first part's facts.
with_part(facts, change) := object.union(facts, {"parts": array.concat(
	[object.union(facts.parts[0], change)],
	array.slice(facts.parts, 1, count(facts.parts)),
)})

shell_call(facts) := {"tool": "shell", "shell": facts, "session": session({})}

test_plain_command_fingerprint if {
	toolperm.fingerprint == "git status" with input as shell_call(plain(["git", "status"]))
	toolperm.fingerprint == "npm test" with input as shell_call(plain(["npm", "test", "--", "--watch"]))
	toolperm.grantable with input as shell_call(plain(["git", "status"]))
}

test_not_grantable if {
	not_grantable(plain(["git", "-c", "x=y", "status"])) # an option in place of a subcommand
	not_grantable(plain(["rm", "file"])) # a dangerous word
	not_grantable(plain(["/bin/rm", "file"])) # a dangerous word by path
	not_grantable(plain(["mkfs.ext4", "/dev/sda"])) # the family of a dangerous word
	not_grantable(plain(["sudo", "git"])) # a dangerous word
	not_grantable(plain(["env", "git"])) # a wrapper
	not_grantable(plain(["xargs", "git"])) # a wrapper
	not_grantable(plain(["python3", "x.py"])) # an interpreter
	not_grantable(plain(["bash", "script.sh"])) # an interpreter
	not_grantable(plain(["trap", "rm -rf ~", "EXIT"])) # a builtin that changes later commands
	not_grantable(plain(["/", "x"])) # no program name
	not_grantable(object.union(plain(["git", "status"]), {"parsed": false}))
	not_grantable(with_part(plain(["git", "status"]), {"simple": false}))
	not_grantable(with_part(plain(["git", "status"]), {"end": 2}))
	not_grantable(with_part(plain(["git", "status"]), {"substitutions": 1}))
	not_grantable(with_part(plain(["git", "status"]), {"assignments": 1}))
	not_grantable(with_part(plain(["git", "status"]), {"evaluated": 1}))
	not_grantable(with_part(plain(["git", "status"]), {"background": true}))
	not_grantable(with_part(plain(["git", "status"]), {"negated": true}))
	not_grantable(with_part(plain(["git", "status"]), {"redirections": [redirect(">", "/tmp/x", false, false)]}))
	not_grantable(with_part(plain(["cat"]), {"redirections": [{"op": "<<", "target": "EOF", "dev_null": false, "dup": false, "here_doc": true, "program": "cat"}]}))
	not_grantable(with_part(plain(["git", "status"]), {"literal": [false, true]}))
	not_grantable(with_part(plain(["git", "status"]), {"literal": [true, false]}))
	not_grantable(list_facts([["git", "status"], ["rm", "x"]], [";"]))
}

redirect(op, target, dev_null, dup) := {"op": op, "target": target, "dev_null": dev_null, "dup": dup, "here_doc": false, "program": "git"}

test_grantable_now if {
	toolperm.fingerprint == "pwd" with input as shell_call(plain(["pwd"])) # a single word
	toolperm.fingerprint == "ls -la" with input as shell_call(plain(["ls", "-la"])) # an option of a listed program
	toolperm.fingerprint == "git status" with input as shell_call(with_part(plain(["git", "status"]), {"redirections": [redirect("2>", "/dev/null", true, false), redirect(">&", "1", false, true)]}))
	toolperm.grantable with input as shell_call(list_facts([["git", "status"], ["git", "diff"]], ["&&"]))
	toolperm.fingerprint == null with input as shell_call(list_facts([["git", "status"], ["git", "diff"]], ["&&"]))
}

not_grantable(facts) if {
	toolperm.fingerprint == null with input as shell_call(facts)
	not toolperm.grantable with input as shell_call(facts)
}

test_only_shell_exec_has_fingerprints if {
	toolperm.fingerprint == null with input as {"tool": "shell-jobs", "shell": plain(["git", "status"]), "session": session({})}
	toolperm.fingerprint == null with input as {"tool": "write_file", "session": session({})}
}

screened_call(facts) := {"tool": "shell", "shell": facts, "session": session({"permission_level": "SMART"})}

test_screen_dangerous_words_anywhere if {
	toolperm.screened with input as screened_call(plain(["rm", "-rf", "/"]))
	toolperm.screened with input as screened_call(plain(["/bin/rm", "x"]))
	toolperm.screened with input as screened_call(plain(["sudo", "-u", "root", "rm", "x"]))
	toolperm.screened with input as screened_call(plain(["xargs", "kill"]))
	toolperm.screened with input as screened_call({
		"parsed": true, "operators": ["|"], "compound": [], "redirections": 0, "substitutions": 0, "assignments": 0,
		"commands": [{"argv": ["git", "log"], "literal": [true, true]}, {"argv": ["curl", "x"], "literal": [true, true]}],
	})
	toolperm.screened with input as screened_call(plain(["python3", "-c", "import os"]))
	toolperm.screened with input as screened_call({
		"parsed": true, "operators": [], "compound": [], "redirections": 0, "substitutions": 1, "assignments": 0,
		"commands": [{"argv": ["$(x)", "y"], "literal": [false, true]}],
	})
	toolperm.screened with input as screened_call(object.union(plain(["ls"]), {"parsed": false}))
	not toolperm.screened with input as screened_call(plain(["git", "status"]))
	toolperm.screened with input as {"tool": "shell", "session": session({"permission_level": "SMART"})}
}

test_screen_passes_plain_commands if {
	not toolperm.screened with input as screened_call(plain(["ls", "-la"]))
	not toolperm.screened with input as screened_call(plain(["git", "commit", "-m", "rm the old files"]))

	# An interpreter given a script file is screened: the model cannot see what it runs.
	toolperm.screened with input as screened_call(plain(["python3", "script.py"]))
}

test_screened_command_needs_no_model if {
	d := decide(screened_call(plain(["rm", "-rf", "build"])))
	d.decision == "ask"
	d.danger == {"verdict": "DANGEROUS", "by": "screen"}
	d.needs == set()

	# Even a SAFE verdict cannot bless a screened command.
	d2 := decide(object.union(screened_call(plain(["rm", "-rf", "build"])), {"danger": {"verdict": "SAFE", "by": "llm"}}))
	d2.decision == "ask"
}

test_program_names_ignore_case_and_versions if {
	not_grantable(plain(["RM", "foo"]))
	not_grantable(plain(["Bash", "status"]))
	not_grantable(plain(["SUDO", "status"]))
	not_grantable(plain(["python3.12", "script"]))
	not_grantable(plain(["/usr/bin/Perl5", "x"]))
	not_grantable(plain(["ssh-agent", "bash"]))
	not_grantable(plain(["npx", "cowsay"]))
	toolperm.screened with input as screened_call(plain(["RM", "-rf", "/"]))
	toolperm.program_names("/usr/bin/Python3.12") == {"python3.12", "python"}
}

test_program_lists_compare_case_insensitively if {
	# data.shell.interpreters spells it "Rscript"; the word is lower-cased.
	not_grantable(plain(["Rscript", "x.R"]))
	not_grantable(plain(["rscript", "x.R"]))
	not_grantable(plain(["/usr/local/bin/RSCRIPT", "x.R"]))
	toolperm.screened with input as screened_call(plain(["Rscript", "-e", "system('rm -rf ~')"]))
	toolperm.screened with input as screened_call(plain(["rscript", "-e", "1"]))

	# A list entry in any case matches the word in any case.
	not_grantable(plain(["mytool", "run"])) with data.shell.wrappers as ["MyTool"]
	toolperm.screened with input as screened_call(plain(["Deploy", "prod"])) with data.shell.dangerous_words as ["DEPLOY"]
	toolperm.grantable with input as shell_call(plain(["deploy", "prod"])) with data.shell.dangerous_words as []
}

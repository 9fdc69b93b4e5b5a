package toolperm_test

import data.toolperm
import rego.v1

screens(argv) if toolperm.screened with input as screened_call(plain(argv))

test_wider_screen if {
	screens(["env", "bash", "-o", "errexit", "-c", "id"]) # inline code after a wrapper and options
	screens(["timeout", "60", "perl", "-e", "1"])
	screens(["xargs", "-n1", "node", "-e", "1"])
	screens(["perl", "-pe", "s/a/b/", "f"]) # a combined inline-code flag
	screens(["ruby", "-ne", "p"])
	screens(["sed", "-i", "s/a/b/", "f"]) # an in-place edit
	screens(["bash", "./x.sh"]) # a script file
	screens(["python3", "deploy.py"])
	screens(["npx", "prettier"]) # package runners
	screens(["pipx", "run", "black"])
	screens(["git", "-c", "core.pager=id", "log"]) # config injection
	screens(["vim", "-c", ":!id"])
	screens(["vim", "+:!id"])
	screens(["find", ".", "-delete"])
	screens(["tar", "--to-command=sh", "-xf", "a.tar"])
	screens(["mkfs.ext4", "/dev/sda"]) # the family of a dangerous word
	screens(["source", "env.sh"])
	screens(["env", "LD_PRELOAD=/tmp/x.so", "ls"])
	screens(["terraform", "destroy", "-auto-approve", "SAFE_MODE"]) # destructive subcommands
	screens(["git", "clean", "-fdx", "safe"])
	screens(["git", "reset", "--hard"])
	screens(["kubectl", "delete", "pod", "x"])
	screens(["docker", "system", "prune", "-af"])
	screens(["dropdb", "prod"])
}

test_screen_leaves_the_harmless if {
	not screens(["mvn", "test"]) # not mkfs-like
	not screens(["atop"])
	not screens(["git", "status"])
	not screens(["git", "clean", "-n"])
	not screens(["python3", "--version"])
	not screens(["sed", "-n", "5p", "f"])
	not screens(["git", "push", "origin", "main"])
}

test_screen_redirections_pipes_and_indirection if {
	out := object.union(plain(["ls"]), {"redirects": [{"op": ">", "target": "x", "dev_null": false, "dup": false, "here_doc": false, "program": "ls"}]})
	toolperm.screened with input as screened_call(out)
	net := object.union(plain(["cat"]), {"redirects": [{"op": "<", "target": "/dev/tcp/h/80", "dev_null": false, "dup": false, "here_doc": false, "program": "cat"}]})
	toolperm.screened with input as screened_call(net)
	doc := object.union(plain(["python3"]), {"redirects": [{"op": "<<", "target": "EOF", "dev_null": false, "dup": false, "here_doc": true, "program": "python3"}]})
	toolperm.screened with input as screened_call(doc)
	devnull := object.union(plain(["ls"]), {"redirects": [{"op": "2>", "target": "/dev/null", "dev_null": true, "dup": false, "here_doc": false, "program": "ls"}]})
	not toolperm.screened with input as screened_call(devnull)
	toolperm.screened with input as screened_call(list_facts([["cat", "x"], ["python3"]], ["|"]))
	not toolperm.screened with input as screened_call(list_facts([["cat", "x"], ["sed", "s/a/b/"]], ["|"]))
	toolperm.screened with input as screened_call(object.union(plain(["echo", "x"]), {"evaluated": 1}))
	toolperm.screened with input as screened_call(object.union(plain(["ls"]), {"assigned": ["PATH"]}))
}

# screen_reason(facts) is the reason of a SMART shell call with these facts.
screen_reason(facts) := decide(screened_call(facts)).reason

screen_says(facts, found) if {
	reason := screen_reason(facts)
	startswith(reason, "The screen judged the command DANGEROUS without asking the model: ")
	contains(reason, found)
}

test_a_screened_command_says_what_the_screen_found if {
	screen_says(plain(["rm", "-rf", "build"]), `"rm" is a dangerous word`)
	screen_says(plain(["sudo", "shred", "x"]), `"sudo" runs the dangerous word "shred"`)
	screen_says(plain(["perl", "-pe", "s/a/b/", "f"]), `"perl" is given inline code (-pe)`)
	screen_says(plain(["python3", "deploy.py"]), `"python3" is given "deploy.py" to run`)
	screen_says(plain(["npx", "prettier"]), `"npx" fetches and runs a package`)
	screen_says(plain(["pipx", "run", "black"]), `"pipx run" fetches and runs a package`)
	screen_says(plain(["git", "clean", "-fdx"]), `"git clean -fdx" is destructive, or runs commands through a flag`)
	screen_says(plain(["mount.cifs", "//h/s", "/mnt"]), `"mount.cifs" is of a dangerous word's family`)
	screen_says(plain(["source", "env.sh"]), `"source" runs a file's commands in this shell`)
	screen_says(object.union(plain(["ls"]), {"assigned": ["LD_PRELOAD"]}), "it sets LD_PRELOAD, which changes what runs")
	screen_says(object.union(plain(["echo", "x"]), {"evaluated": 1}), "an expansion")
	screen_says(list_facts([["cat", "x"], ["python3"]], ["|"]), `a pipe may feed "python3"`)
}

# What the analysis could not read may be on the deny floor, which asks
# first and says so (floor.rego); the screen's findings are there too.
test_the_screen_finds_what_the_analysis_could_not_read if {
	unparsed := screened_call(object.union(plain(["ls"]), {"parsed": false}))
	"it does not parse as bash, or is over a limit of the analysis" in toolperm.screen_hits with input as unparsed
	contains(decide(unparsed).reason, "on the deny floor: a person decides")
	opaque := screened_call(with_literal(plain(["x", "status"]), [false, true]))
	`the program word "x" is not literal` in toolperm.screen_hits with input as opaque
	"the command was not analysed" in toolperm.screen_hits with input as {"tool": "shell", "session": session({"permission_level": "SMART"})}
}

with_literal(facts, literal) := object.union(facts, {"commands": [object.union(facts.commands[0], {"literal": literal})]})

test_a_screened_redirection_names_its_target if {
	out := object.union(plain(["ls"]), {"redirects": [{"op": ">", "target": "/etc/passwd", "dev_null": false, "dup": false, "here_doc": false, "program": "ls"}]})
	screen_says(out, `the redirection > "/etc/passwd" writes a file or reaches the network`)
	doc := object.union(plain(["python3"]), {"redirects": [{"op": "<<", "target": "EOF", "dev_null": false, "dup": false, "here_doc": true, "program": "python3"}]})
	screen_says(doc, `a here-document feeds "python3"`)
	not contains(screen_reason(doc), "redirection")
}

test_a_screen_reason_names_three_findings_and_counts_the_rest if {
	facts := list_facts([["rm", "a"], ["shred", "b"], ["kill", "c"], ["dd", "d"], ["wipefs", "e"]], [";", ";", ";", ";"])
	reason := screen_reason(facts)
	contains(reason, `"dd" is a dangerous word; "kill" is a dangerous word; "rm" is a dangerous word (and 2 more); a person decides.`)
}

test_every_screen_rule_says_what_it_found if {
	# screened and screen_hits are one rule: whatever is screened has a finding.
	every argv in [["rm", "x"], ["npx", "x"], ["git", "reset", "--hard"], ["vim", "+:!id"], ["env", "LD_PRELOAD=/x", "ls"]] {
		toolperm.screened with input as screened_call(plain(argv))
		count(toolperm.screen_hits) > 0 with input as screened_call(plain(argv))
	}
	not toolperm.screened with input as screened_call(plain(["git", "status"]))
	count(toolperm.screen_hits) == 0 with input as screened_call(plain(["git", "status"]))
}

# flagged_word looks a word up among a program's command flags as
# flag_word compares it with each of them, flags with an "=" of their
# own and trailing * included.
test_flagged_word_is_flag_word_for_every_flag if {
	flags := ["-c", "--config-env", "a=b", "x=", "--exec*", "SHELL=*", "+*"]
	set := {
		"flags": {f | some f in flags},
		"with_equals": {f | some f in flags; contains(f, "=")},
		"prefixes": {trim_suffix(f, "*") | some f in flags; endswith(f, "*")},
	}
	words := [
		"-c", "-c=1", "-cx", "--config-env=A=B", "--config-env", "a=b", "a=b=1", "a=bc", "a",
		"x=", "x==", "x=1", "--exec-path", "--exec", "--exe", "SHELL=/bin/sh", "SHELL", "+q", "+",
		"=", "", "==-c", "-c==", "é=-c",
	]
	every w in words {
		flagged(w, set) == any_flag_word(w, flags)
	}
}

flagged(w, set) if toolperm.flagged_word(w, set)

else := false

any_flag_word(w, flags) if {
	some f in flags
	toolperm.flag_word(w, f)
} else := false

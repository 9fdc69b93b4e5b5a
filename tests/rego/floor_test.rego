package toolperm_test

import rego.v1

# The deny floor holds at every level and mode, and an entry matches what
# the command does, not a prefix of its text.

floor_settings := [
	{"permission_level": "FULL"}, {"mode": "allow-all"}, {"execution_mode": "CLOUD"},
	{"permission_level": "SMART"}, {},
]

floor_denies(facts, entry) if {
	every s in floor_settings {
		d := decide(cmd_call(facts, s))
		d.decision == "deny"
		d.rule == entry
		d.step == "explicit_deny"
	}
}

# word(argv, literal) is a one-part call whose words are literal as given.
words(argv, literal) := dynamic(argv, literal)

test_rm_rf_of_the_root_or_home_in_any_spelling if {
	every argv in [
		["rm", "-rf", "/"], ["rm", "-fr", "/"], ["rm", "-r", "-f", "/"], ["rm", "-Rf", "/"],
		["rm", "--recursive", "--force", "/"], ["rm", "-rf", "--", "/"], ["rm", "-rf", "//"], ["rm", "-rf", "/."],
		["/bin/rm", "-rf", "/"], ["RM", "-rf", "/"],
	] {
		floor_denies(plain(argv), "rm -rf /")
	}
	floor_denies(plain(["rm", "-rf", "--no-preserve-root", "/"]), "rm -rf /")
	floor_denies(plain(["rm", "--no-preserve-root", "-r", "x"]), "rm --no-preserve-root")

	# ~, $HOME and /* are not literal: they match as written.
	every w in ["~", "~/", "$HOME", "\"$HOME\"", "${HOME}", "/*"] {
		floor_denies(words(["rm", "-rf", w], [true, true, false]), "rm -rf /")
	}

	# Behind a wrapper too.
	floor_denies(words(["sudo", "rm", "-rf", "/*"], [true, true, true, false]), "rm -rf /")
}

test_an_operand_that_may_be_the_root_asks if {
	every s in floor_settings {
		d := decide(cmd_call(words(["rm", "-rf", "\"$X\""], [true, true, false]), s))
		d.decision == "ask"
		d.rule == "rm -rf /"
		contains(d.reason, "may be rm -rf /")
	}
}

test_ordinary_rm_is_not_on_the_floor if {
	every argv in [["rm", "-rf", "build/"], ["rm", "-f", "/"], ["rm", "-r", "/tmp/x"], ["rm", "-rf", "/tmp"]] {
		d := decide(cmd_call(plain(argv), {"permission_level": "FULL"}))
		d.decision == "allow"
	}
}

test_devices_filesystems_permissions_and_fork_bombs if {
	floor_denies(plain(["mkfs.ext4", "/dev/sda1"]), "mkfs")
	floor_denies(plain(["mkfs", "-t", "ext4", "/dev/sdb"]), "mkfs")
	floor_denies(plain(["dd", "if=/dev/zero", "of=/dev/sda", "bs=1M"]), "dd onto a disk")
	floor_denies(plain(["dd", "bs=1M", "of=/dev/nvme0n1", "if=x.img"]), "dd onto a disk")
	floor_denies(plain(["shred", "-n", "1", "/dev/sda"]), "shred of a disk")
	floor_denies(plain(["wipefs", "-a", "/dev/vdb"]), "wipefs")
	floor_denies(plain(["chmod", "-R", "777", "/"]), "chmod -R of /")
	floor_denies(plain(["chown", "-R", "me", "/"]), "chown -R of /")

	disk := object.union(plain(["cat", "x.img"]), {"redirects": [{"op": ">", "target": "/dev/sda", "dev_null": false, "dup": false, "here_doc": false, "program": "cat"}]})
	floor_denies(disk, "writing onto a disk")

	bomb := object.union(list_facts([[":"], [":"]], [";"]), {"compound": ["function"], "parts": [
		object.union(part_of([":"], 0), {"text": ":() { : | : & }", "simple": false}),
		part_of([":"], 1),
	]})
	floor_denies(bomb, "a fork bomb")

	# Not these.
	every argv in [["dd", "if=x", "of=/dev/null"], ["dd", "if=/dev/sda", "of=backup.img"], ["chmod", "-R", "755", "build"], ["shred", "secret.txt"]] {
		d := decide(cmd_call(plain(argv), {"permission_level": "FULL"}))
		d.decision == "allow"
	}
}

test_a_session_rule_cannot_lift_the_floor if {
	s := {"permission_level": "FULL", "command_rules": {"rm": "allow", "rm -rf /": "allow"}, "grants": [{"capability": "shell.exec", "fingerprint": "rm -rf"}]}
	d := decide(cmd_call(plain(["rm", "-rf", "/"]), s))
	d.decision == "deny"
	d.rule == "rm -rf /"
	d.reason == "\"rm -rf /\" is on the deny floor (rm -rf /): it cannot be undone, and no level, mode or session rule allows it."

	# A policy bundle can: the floor is policy data.
	d2 := decide(cmd_call(plain(["rm", "-rf", "/"]), {"permission_level": "FULL"})) with data.floor as []
	d2.decision == "allow"
}

test_a_command_that_could_not_be_read_may_be_on_the_floor if {
	every s in floor_settings {
		d := decide(cmd_call(words(["$c"], [false]), s))
		d.decision == "ask"
		d.rule == "rm -rf /"
		d2 := decide(cmd_call({"parsed": false, "error": "1:5: reached EOF"}, s))
		d2.decision == "ask"
		d2.rule == "rm -rf /"
	}

	# Without a floor, the mode decides as before.
	d := decide(cmd_call(words(["$c"], [false]), {"permission_level": "FULL"})) with data.floor as []
	d.decision == "allow"
}

# Lines typed into a running process (shell.stdin, input.shell.typed)
# meet the floor and command rules at every level and mode; the write
# stays shell.stdin, never granted, and the level decides the rest.
typed_call(facts, overrides) := {
	"tool": "write_stdin", "runtime": {"agent": "codex"},
	"shell": object.union(facts, {"typed": true}), "session": session(overrides),
}

test_typed_lines_meet_the_floor_and_command_rules if {
	every s in floor_settings {
		d := decide(typed_call(plain(["rm", "-rf", "/"]), s))
		d.decision == "deny"
		d.rule == "rm -rf /"
		d.capability == "shell.stdin"
		d.grantable == false
	}
	every s in floor_settings {
		d := decide(typed_call(plain(["git", "push"]), object.union(s, {"command_rules": {"git push": "deny"}})))
		d.decision == "deny"
		d.rule == "git push"
	}
	d := decide(typed_call({"parsed": false, "error": "control characters"}, {"permission_level": "FULL"}))
	d.decision == "ask"
	d.rule == "rm -rf /"
}

test_typed_lines_otherwise_follow_the_level if {
	d := decide(typed_call(plain(["y"]), {}))
	d.decision == "allow"
	d.capability == "shell.stdin"
	d.fingerprint == null

	# A command rule's allow never allows a write part by part.
	a := decide(typed_call(plain(["ls"]), {"rules": {"shell.stdin": "ask"}, "command_rules": {"ls": "allow"}}))
	a.decision == "ask"

	# The shell tool's write_stdin action stays shell.stdin with typed lines.
	w := decide({"tool": "shell", "action": "write_stdin", "shell": object.union(plain(["ls"]), {"typed": true}), "session": session({})})
	w.capability == "shell.stdin"
}

# By effect: a spelling the kernel or GNU reads as a known effect is that
# effect, without an entry of its own.
test_the_floor_reads_operands_and_options_as_they_run if {
	every argv in [
		["rm", "-rf", "/home", "/etc"], ["rm", "-rf", "//usr/"], ["rm", "-rf", "/tmp/../etc/"],
		["rm", "-rf", "/a/b/../../var"], ["rm", "--recursive", "--forc", "/"], ["rm", "--rec", "-f", "/"],
		["toybox", "rm", "-rf", "/"],
	] {
		floor_denies(plain(argv), "rm -rf /")
	}
	floor_denies(plain(["chmod", "--rec", "000", "/"]), "chmod -R of /")
	floor_denies(plain(["chown", "--recu", "nobody", "/etc"]), "chown -R of /")
	floor_denies(plain(["rm", "--no", "-r", "x"]), "rm --no-preserve-root")
	every argv in [["find", "/", "-delete"], ["find", "/", "-mindepth", "1", "-delete"], ["find", "/home", "-delete"]] {
		floor_denies(plain(argv), "find -delete of /")
	}
	every p in ["mke2fs", "mkswap", "mkdosfs", "mkntfs", "blkdiscard", "/sbin/MKE2FS", "newfs_apfs"] {
		floor_denies(plain([p, "/dev/sdb1"]), "making a file system")
	}
}

test_ordinary_work_is_not_on_the_floor_by_effect if {
	every argv in [
		["rm", "-rf", "/home/../tmp"], ["rm", "-rf", "/etc/nginx"], ["find", ".", "-delete"],
		["find", "/", "-name", "x"], ["ls", "--recursive", "/"], ["chmod", "-R", "755", "src"],
		["rm", "--recursive", "/tmp/x"], ["rm", "-rf", "/a/../b"],
	] {
		d := decide(cmd_call(plain(argv), {"permission_level": "FULL"}))
		d.decision == "allow"
	}
}

test_clean_abs if {
	data.toolperm.clean_abs("/") == "/"
	data.toolperm.clean_abs("//") == "/"
	data.toolperm.clean_abs("/..") == "/"
	data.toolperm.clean_abs("/../etc") == "/etc"
	data.toolperm.clean_abs("/a/./b//") == "/a/b"
	data.toolperm.clean_abs("/a/b/../..") == "/"
	data.toolperm.clean_abs("/a/../b/../c") == "/c"
	data.toolperm.clean_abs("/a/b/c/../../d") == "/a/d"
}

# A model does not answer its own asks with the person's sign-in (pdp
# login keeps it for the person's terminal), nor change levels.
test_the_pdp_commands_that_act_as_the_person if {
	every argv in [
		["pdp", "answer", "18ee", "allow_once"], ["/usr/local/bin/pdp-hook", "answer", "x", "allow_session"],
		["pdp", "level", "s1", "FULL"], ["pdp", "asks"], ["pdp", "login"], ["pdp", "logout"],
	] {
		d := decide(cmd_call(plain(argv), {"mode": "allow-all"}))
		d.decision == "deny"
		contains(d.reason, "a model does not answer asks")
	}
	expect(cmd_call(plain(["sudo", "pdp", "answer", "x", "allow_once"]), {"permission_level": "FULL"}), "deny", "config", "pdp answer")
	expect(cmd_call(plain(["pdp", "version"]), {"permission_level": "FULL"}), "allow", "mode", "MODE")
}

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

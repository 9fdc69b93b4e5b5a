package pdp_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/pdp"
)

// TestPolicyDataIsChecked: a value of the policy's data its rules do not
// understand keeps the policy from being activated, with every problem
// named by its key, in one error; the shipped data has none.
func TestPolicyDataIsChecked(t *testing.T) {
	program := func(data map[string]any, name string) map[string]any {
		return data["shell"].(map[string]any)["programs"].(map[string]any)[name].(map[string]any)
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		want   []string
	}{
		{"a flow label spelled wrong", func(d map[string]any) {
			d["flow"].(map[string]any)["capabilities"].(map[string]any)["mcp.slack.*"] = []any{"external"}
		}, []string{`data.flow.capabilities["mcp.slack.*"][0]: "external" is not a flow label`}},
		{"a flow key the policy does not read", func(d map[string]any) { d["flow"].(map[string]any)["enable"] = true },
			[]string{"data.flow.enable: is not a key of data.flow"}},
		{"a flow action that would allow", func(d map[string]any) { d["flow"].(map[string]any)["action"].(map[string]any)["FULL"] = "allow" },
			[]string{`data.flow.action.FULL: the string "allow": the flow rule asks or denies`}},
		{"a flow program's key", func(d map[string]any) {
			d["flow"].(map[string]any)["programs"].(map[string]any)["curl"].(map[string]any)["send_word"] = []any{"-d"}
		}, []string{"data.flow.programs.curl.send_word: is not a key of a flow program"}},
		{"a flow program's expression", func(d map[string]any) {
			d["flow"].(map[string]any)["programs"].(map[string]any)["curl"].(map[string]any)["send_words"] = []any{"^-(d"}
		}, []string{`data.flow.programs.curl.send_words[0]: "^-(d" is not a regular expression`}},
		{"a flow program in upper case", func(d map[string]any) {
			d["flow"].(map[string]any)["programs"].(map[string]any)["Curl"] = map[string]any{"labels": []any{"network"}}
		}, []string{`data.flow.programs.Curl: programs are compared lower-cased`}},
		{"an action spelled wrong", func(d map[string]any) { d["rules"].(map[string]any)["mcp.linear.*"] = "alow" },
			[]string{`data.rules["mcp.linear.*"]: the string "alow" is not an action`}},
		{"a rule pattern", func(d map[string]any) { d["rules"].(map[string]any)["mcp linear"] = "ask" },
			[]string{`data.rules["mcp linear"]: is not a capability or a.b.* prefix`}},
		{"a level that does not exist", func(d map[string]any) { d["levels"].(map[string]any)["READONLY"] = map[string]any{} },
			[]string{"data.levels.READONLY: is not a permission level"}},
		{"a command rule", func(d map[string]any) { d["commands"] = map[string]any{"git  push": "deny"} },
			[]string{`data.commands["git  push"]: command rule "git  push" must be words separated by single spaces`}},
		{"ask_always", func(d map[string]any) { d["ask_always"] = []any{"fs.write", 7} },
			[]string{"data.ask_always[1]: 7 is not a capability"}},
		{"dangerous", func(d map[string]any) { d["dangerous"].(map[string]any)["fs.write"] = "yes" },
			[]string{`data.dangerous["fs.write"]: the string "yes": want true or false`}},
		{"a floor entry's key", func(d map[string]any) {
			d["floor"] = append(d["floor"].([]any), map[string]any{"name": "x", "programm": "rm"})
		}, []string{`].programm: is not a key of a floor entry`}},
		{"the effects switch", func(d map[string]any) { d["shell"].(map[string]any)["effects"] = "false" },
			[]string{`data.shell.effects: the string "false": want true or false`}},
		{"a program's key, misspelled", func(d map[string]any) {
			sed := program(d, "sed")
			sed["write_option"] = sed["write_options"]
			delete(sed, "write_options")
		}, []string{"data.shell.programs.sed.write_option: is not a key of a program's description"}},
		{"a program's effect", func(d map[string]any) { program(d, "cat")["effect"] = "reads" },
			[]string{`data.shell.programs.cat.effect: the string "reads": want none, read or write`}},
		{"a program without an effect", func(d map[string]any) { delete(program(d, "cat"), "effect") },
			[]string{`data.shell.programs.cat: a description needs an "effect"`}},
		{"a program named by a path", func(d map[string]any) {
			d["shell"].(map[string]any)["programs"].(map[string]any)["bin/cat"] = map[string]any{"effect": "read"}
		}, []string{`data.shell.programs["bin/cat"]: a program is named by its bare name`}},
		{"an option spelling", func(d map[string]any) { program(d, "cat")["options"] = []any{"-n", "n", "--color=never", "-"} },
			[]string{`data.shell.programs.cat.options[1]: "n" is not an option spelling`, `options[3]: "-" is not an option spelling`}},
		{"a restriction on a sub-command the engine reads on the program only", func(d map[string]any) {
			program(d, "git")["subcommands"].(map[string]any)["status"].(map[string]any)["at_workspace_root"] = true
		}, []string{"data.shell.programs.git.subcommands.status.at_workspace_root: is read only on a program's own entry"}},
		{"a restriction on a program the engine reads on its sub-commands only", func(d map[string]any) {
			program(d, "git")["max_operands"] = 0
		}, []string{"data.shell.programs.git.max_operands: is not read on a program that has sub-commands"}},
		{"floor flags written with dashes", func(d map[string]any) {
			e := d["floor"].([]any)[0].(map[string]any)
			e["flags"] = []any{[]any{"-r", "R"}, []any{}}
		}, []string{`data.floor[0].flags[0][0]: "-r": want a flag's letter`, "data.floor[0].flags[1]: an empty group"}},
		{"a floor entry that names nothing", func(d map[string]any) {
			d["floor"] = append(d["floor"].([]any), map[string]any{"name": "x", "programs": []any{}})
		}, []string{"an entry names no program"}},
		{"a floor prefix in upper case", func(d map[string]any) {
			d["floor"] = append(d["floor"].([]any), map[string]any{"name": "x", "program_prefix": "MKFS"})
		}, []string{`.program_prefix: "MKFS": programs are compared lower-cased`}},
		{"a floor glob that does not compile", func(d map[string]any) {
			d["floor"] = append(d["floor"].([]any), map[string]any{"name": "x", "program": "rm", "operand_globs": []any{"/etc/[a"}})
		}, []string{`.operand_globs[0]: "/etc/[a" is not a glob`}},
		{"a path access that is no access", func(d map[string]any) { d["path_access"].(map[string]any)["fs.read"] = "Read" },
			[]string{`data.path_access["fs.read"]: the string "Read": want read or write`}},
		{"a tool action that is no capability", func(d map[string]any) {
			d["tool_actions"].(map[string]any)["shell"].(map[string]any)["write_stdin"] = "Shell Stdin"
		}, []string{`data.tool_actions.shell.write_stdin: the string "Shell Stdin" is not a capability`}},
		{"an empty wrapper", func(d map[string]any) {
			sh := d["shell"].(map[string]any)
			sh["wrappers"] = append(sh["wrappers"].([]any), " ")
		}, []string{"data.shell.wrappers["}},
		{"a script pattern", func(d map[string]any) { program(d, "sed")["script"] = "(" },
			[]string{"data.shell.programs.sed.script: is not a regular expression"}},
		{"an operand count", func(d map[string]any) { program(d, "cat")["max_operands"] = -1 },
			[]string{"data.shell.programs.cat.max_operands: -1: want a whole number"}},
		{"a sub-command's key", func(d map[string]any) {
			program(d, "git")["subcommands"].(map[string]any)["status"].(map[string]any)["option"] = []any{}
		}, []string{"data.shell.programs.git.subcommands.status.option: is not a key"}},
		{"two at once", func(d map[string]any) {
			d["rules"].(map[string]any)["mcp.linear.*"] = "alow"
			program(d, "cat")["effect"] = "reads"
		}, []string{"2 problem(s)", `"alow"`, `"reads"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policysource.LoadFS(context.Background(), fstestOf(policytest.Files(t, c.change)), "p")
			if err == nil {
				t.Fatal("the policy was compiled")
			}
			if len(pdp.DataProblems(err)) == 0 {
				t.Errorf("not a data error: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error should say %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), "data.json: data.") {
				t.Errorf("the error should name the data file:\n%v", err)
			}
		})
	}
	if _, err := policysource.LoadFS(context.Background(), fstestOf(policytest.Files(t, func(map[string]any) {})), "shipped"); err != nil {
		t.Fatalf("the shipped data: %v", err)
	}
}

func fstestOf(files map[string][]byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	return fsys
}

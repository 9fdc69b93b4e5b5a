package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestCompoundGrant: allow_session on a compound ask grants each part,
// and the same list is then allowed part by part.
func TestCompoundGrant(t *testing.T) {
	s := newService(t)
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": "c1", "workspace": "/home/u/proj"})
	ask := s.decide(shell("c1", "make check && go vet ./..."))
	expectDecision(t, ask, "ask", "level")
	parts, _ := ask["parts"].([]any)
	if len(parts) != 2 || ask["fingerprint"] != nil || ask["grantable"] != true {
		t.Fatalf("compound ask: %v", ask)
	}
	s.mustStatus(http.StatusOK, "POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session"})
	expectDecision(t, s.decide(shell("c1", "go vet ./... ; make check")), "allow", "session-grant")
	expectDecision(t, s.decide(shell("c1", "make check")), "allow", "session-grant")
	// A part that is not granted keeps the whole call asking.
	expectDecision(t, s.decide(shell("c1", "make check && git push")), "ask", "level")

	// A part without a fingerprint: 422, and nothing is granted.
	bad := s.decide(shell("c1", "make check && python3 x.py"))
	if code, _ := s.call("POST", "/v1/decisions/"+bad["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session"}); code != http.StatusUnprocessableEntity {
		t.Fatalf("answer on an ungrantable compound: %d", code)
	}
}

// TestProjectGrant: allow_project reaches every session with the same
// workspace, after a restart too, until revoked through either session.
func TestProjectGrant(t *testing.T) {
	s := newService(t)
	for _, id := range []string{"p1", "p2"} {
		s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": id, "workspace": "/home/u/proj"})
	}
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": "other", "workspace": "/elsewhere"})
	ask := s.decide(shell("p1", "make test"))
	s.mustStatus(http.StatusOK, "POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_project"})
	// A project grant is reported as one, not as the session's own.
	projectGranted := s.decide(shell("p2", "make test"))
	expectDecision(t, projectGranted, "allow", "project-grant")
	if projectGranted["rule"] != "PROJECT_GRANT" || projectGranted["reason"] != `The project has a grant for "make test".` {
		t.Fatalf("project grant: %v", projectGranted)
	}
	trail := s.mustStatus(http.StatusOK, "GET", "/v1/decisions/"+projectGranted["decision_id"].(string), nil)
	if trail["source"] != "project-grant" || trail["rule"] != "PROJECT_GRANT" {
		t.Fatalf("the audit trail records %v/%v", trail["source"], trail["rule"])
	}
	// p1 answered allow_project: its own session has no grant of its own.
	expectDecision(t, s.decide(shell("p1", "make test")), "allow", "project-grant")
	elsewhere := shell("other", "make test")
	elsewhere["cwd"] = "/elsewhere"
	expectDecision(t, s.decide(elsewhere), "ask", "level")

	s = s.restart()
	expectDecision(t, s.decide(shell("p2", "make test")), "allow", "project-grant")
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": "p3", "workspace": "/home/u/proj"})
	expectDecision(t, s.decide(shell("p3", "make test")), "allow", "project-grant")

	list := s.mustStatus(http.StatusOK, "GET", "/v1/sessions/p2/grants", nil)
	grants, _ := list["grants"].([]any)
	if len(grants) != 1 || grants[0].(map[string]any)["scope"] != "project" {
		t.Fatalf("grants of p2: %v", list)
	}
	gid := grants[0].(map[string]any)["id"]
	s.mustStatus(http.StatusNoContent, "DELETE", fmt.Sprintf("/v1/sessions/p2/grants/%v", gid), nil)
	expectDecision(t, s.decide(shell("p1", "make test")), "ask", "level")
	expectDecision(t, s.decide(shell("p3", "make test")), "ask", "level")
}

// A session with no workspace has no project to grant for.
func TestProjectGrantNeedsAWorkspace(t *testing.T) {
	s := newService(t)
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": "nows"})
	ask := s.decide(map[string]any{"session_id": "nows", "tool": "shell", "args": map[string]any{"command": "make test"}})
	if code, _ := s.call("POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_project"}); code != http.StatusUnprocessableEntity {
		t.Fatalf("allow_project without a workspace: %d", code)
	}
}

// TestCommandRulesThroughTheAPI: command_rules on POST and PATCH, read
// back, and deciding.
func TestCommandRulesThroughTheAPI(t *testing.T) {
	s := newService(t)
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{
		"id": "r1", "workspace": "/home/u/proj", "permission_level": "FULL", "command_rules": map[string]any{"git push --force": "deny"},
	})
	expectDecision(t, s.decide(shell("r1", "env git push --force")), "deny", "config")
	s.mustStatus(http.StatusOK, "PATCH", "/v1/sessions/r1", map[string]any{"command_rules": map[string]any{"git push": "ask"}})
	got := s.mustStatus(http.StatusOK, "GET", "/v1/sessions/r1", nil)
	if rules, _ := got["command_rules"].(map[string]any); rules["git push"] != "ask" || len(rules) != 1 {
		t.Fatalf("command_rules after PATCH: %v", got)
	}
	expectDecision(t, s.decide(shell("r1", "git push origin main")), "ask", "config")
	for _, bad := range []map[string]any{{"git  push": "ask"}, {"git push": "assess"}, {"": "deny"}} {
		if code, _ := s.call("PATCH", "/v1/sessions/r1", map[string]any{"command_rules": bad}); code != http.StatusBadRequest {
			t.Fatalf("PATCH %v: %d", bad, code)
		}
	}
	s = s.restart()
	expectDecision(t, s.decide(shell("r1", "git push")), "ask", "config")
}

// TestDenyFloor: the shipped deny floor holds at FULL and in allow-all,
// whatever the spelling, and no session rule lifts it; ordinary commands
// at FULL are still allowed.
func TestDenyFloor(t *testing.T) {
	s := newService(t)
	floor := map[string]string{
		"rm -rf /":                          "rm -rf /",
		"rm -fr /":                          "rm -rf /",
		"rm -r -f /":                        "rm -rf /",
		"rm -rf --no-preserve-root /":       "rm -rf /",
		"sudo rm -rf /*":                    "rm -rf /",
		"rm -rf ~":                          "rm -rf /",
		"rm -Rf $HOME":                      "rm -rf /",
		"cd /tmp && rm -rf ~/":              "rm -rf /",
		"mkfs.ext4 /dev/sda1":               "mkfs",
		"dd if=/dev/zero bs=1M of=/dev/sda": "dd onto a disk",
		"shred -n1 /dev/nvme0n1":            "shred of a disk",
		"wipefs -a /dev/sdb":                "wipefs",
		"chmod -R 777 /":                    "chmod -R of /",
		"chown -R nobody /":                 "chown -R of /",
		"cat disk.img > /dev/sda":           "writing onto a disk",
		":(){ :|:& };:":                     "a fork bomb",
		"bash -c 'rm -rf /'":                "rm -rf /",
		"env -S'rm -rf /'":                  "rm -rf /",
	}
	allowed := []string{"rm -rf build/", "rm -f ./x.o", "dd if=/dev/zero of=/dev/null count=1", "chmod -R 755 dist", "ls -la /dev"}
	for i, settings := range []map[string]any{{"permission_level": "FULL"}, {"mode": "allow-all"}} {
		id := fmt.Sprintf("floor%d", i)
		body := map[string]any{"id": id, "workspace": "/w", "command_rules": map[string]any{"rm": "allow"}}
		for k, v := range settings {
			body[k] = v
		}
		s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", body)
		for cmd, entry := range floor {
			d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": "/w"})
			if d["decision"] != "deny" || d["rule"] != entry || d["source"] != "config" {
				t.Errorf("%v %q: got %v/%v (%v), want deny/%s", settings, cmd, d["decision"], d["rule"], d["reason"], entry)
			}
		}
		for _, cmd := range allowed {
			if d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": "/w"}); d["decision"] != "allow" {
				t.Errorf("%v %q: got %v/%v (%v), want allow", settings, cmd, d["decision"], d["rule"], d["reason"])
			}
		}
		// rm -rf "$X" may be rm -rf /: a person decides.
		if d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": `rm -rf "$X"`}, "cwd": "/w"}); d["decision"] != "ask" || d["rule"] != "rm -rf /" {
			t.Errorf(`%v rm -rf "$X": got %v/%v (%v), want ask/rm -rf /`, settings, d["decision"], d["rule"], d["reason"])
		}
	}
}

// TestListsShowTheParts: GET /v1/decisions (and its pending asks) shows a
// compound command's parts as GET /v1/decisions/{id} does; a part longer
// than a list item's strings may be is cut there, and the item says so.
func TestListsShowTheParts(t *testing.T) {
	s := newService(t)
	s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": "lp", "workspace": "/home/u/proj"})
	long := "echo " + strings.Repeat("x", 5000)
	for _, c := range []struct {
		command string
		cut     bool
	}{{"make check && go vet ./...", false}, {"make check && " + long, true}} {
		ask := s.decide(shell("lp", c.command))
		id := ask["decision_id"].(string)
		single := s.mustStatus(http.StatusOK, "GET", "/v1/decisions/"+id, nil)
		parts, _ := single["parts"].([]any)
		if len(parts) != 2 || !reflect.DeepEqual(single["parts"], ask["parts"]) {
			t.Fatalf("%q: GET /v1/decisions/%s shows the parts %v; decided %v", c.command, id, single["parts"], ask["parts"])
		}
		for _, path := range []string{"/v1/decisions?session_id=lp&limit=1", "/v1/decisions?pending=true"} {
			items, _ := s.mustStatus(http.StatusOK, "GET", path, nil)["decisions"].([]any)
			if len(items) == 0 || items[0].(map[string]any)["decision_id"] != id {
				t.Fatalf("GET %s: %v, want %s first", path, items, id)
			}
			item := items[0].(map[string]any)
			if !c.cut {
				if !reflect.DeepEqual(item["parts"], single["parts"]) || item["truncated"] != nil {
					t.Fatalf("GET %s shows the parts %v; GET /v1/decisions/%s %v", path, item["parts"], id, single["parts"])
				}
				continue
			}
			listed, _ := item["parts"].([]any)
			if len(listed) != 2 || !reflect.DeepEqual(listed[0], parts[0]) || item["truncated"] != true {
				t.Fatalf("GET %s: parts %v, truncated %v", path, item["parts"], item["truncated"])
			}
			text := listed[1].(map[string]any)["text"].(string)
			if whole := parts[1].(map[string]any)["text"].(string); len(text) > 4096 || !strings.HasPrefix(whole, text) || len(whole) <= 4096 {
				t.Fatalf("GET %s: a part of %d bytes is listed with %d", path, len(whole), len(text))
			}
		}
	}
}

package pdp

import (
	"fmt"
	"testing"

	"github.com/toolperm/pdp/api"
)

// matched is the pattern a layer of rules resolves to for one checked
// path and access kind, "" for none.
func matched(t *testing.T, rules map[string]api.PathRule, fold bool, c CheckedPath, access string) string {
	t.Helper()
	ix, err := compilePathIndex(rules, fold)
	if err != nil {
		t.Fatalf("compiling %v: %v", rules, err)
	}
	tg := ix.target(c)
	hits := ix.matching(tg)
	var p *pathPattern
	if tg.glob != nil {
		p = ix.resolveGlob(tg, hits, access)
	} else {
		p = ix.resolve(hits, access)
	}
	if p == nil {
		return ""
	}
	return p.text + ":" + p.action(access)
}

func in(rel string) CheckedPath {
	p := "/w/" + rel
	if rel == "." {
		p = "/w"
	}
	return CheckedPath{Path: p, Rel: rel, Inside: true, Resolved: true}
}

func out(p string) CheckedPath { return CheckedPath{Path: p, Resolved: true} }

func glob(c CheckedPath, wild string) CheckedPath { c.Glob = wild; return c }

func all(a string) api.PathRule { return api.PathRule{Read: a, Write: a} }

func TestPathPatternMatching(t *testing.T) {
	write := func(a string) api.PathRule { return api.PathRule{Write: a} }
	cases := []struct {
		name   string
		rules  map[string]api.PathRule
		fold   bool
		path   CheckedPath
		access string
		want   string
	}{
		{"a relative pattern is anchored to the workspace", map[string]api.PathRule{"src/*.go": all("deny")}, false, in("src/a.go"), AccessRead, "src/*.go:deny"},
		{"not below another directory", map[string]api.PathRule{"src/*.go": all("deny")}, false, in("lib/src/a.go"), AccessRead, ""},
		{"nor outside the workspace", map[string]api.PathRule{"src/*.go": all("deny")}, false, out("/src/a.go"), AccessRead, ""},
		{"a leading ./ is the workspace", map[string]api.PathRule{"./.env": all("deny")}, false, in(".env"), AccessRead, "./.env:deny"},
		{"a name matches at the top", map[string]api.PathRule{".env": all("deny")}, false, in(".env"), AccessRead, ".env:deny"},
		{"a name matches at any depth", map[string]api.PathRule{".env": all("deny")}, false, in("a/b/.env"), AccessRead, ".env:deny"},
		{"a name covers what is in a directory of that name", map[string]api.PathRule{".env": all("deny")}, false, in("a/.env/x"), AccessRead, ".env:deny"},
		{"a name is the whole name", map[string]api.PathRule{".env": all("deny")}, false, in("a/.envrc"), AccessRead, ""},
		{"a name matches outside too", map[string]api.PathRule{".env": all("deny")}, false, out("/opt/docs/.env"), AccessRead, ".env:deny"},
		{"a name matches no part of the workspace's own path", map[string]api.PathRule{"w": all("deny")}, false, in("a"), AccessRead, ""},
		{"** matches no element", map[string]api.PathRule{"a/**/b": all("deny")}, false, in("a/b"), AccessRead, "a/**/b:deny"},
		{"** matches many elements", map[string]api.PathRule{"a/**/b": all("deny")}, false, in("a/x/y/b"), AccessRead, "a/**/b:deny"},
		{"dir/** is the directory and all in it", map[string]api.PathRule{".git/**": write("ask")}, false, in(".git"), AccessWrite, ".git/**:ask"},
		{"dir/** deep", map[string]api.PathRule{".git/**": write("ask")}, false, in(".git/refs/heads/main"), AccessWrite, ".git/**:ask"},
		{"a leading ** is any depth", map[string]api.PathRule{"**/id_rsa": all("deny")}, false, in("k/id_rsa"), AccessRead, "**/id_rsa:deny"},
		{"an absolute pattern names a host place", map[string]api.PathRule{"/opt/docs/**": {Read: "allow"}}, false, out("/opt/docs/a/b.md"), AccessRead, "/opt/docs/**:allow"},
		{"a host place may be inside the workspace", map[string]api.PathRule{"/w/secret": all("deny")}, false, in("secret"), AccessRead, "/w/secret:deny"},
		{"a host place is not a prefix of a name", map[string]api.PathRule{"/opt/docs/**": {Read: "allow"}}, false, out("/opt/docsx/a"), AccessRead, ""},
		{"a rule holds for its access kinds only", map[string]api.PathRule{".git/**": write("ask")}, false, in(".git/config"), AccessRead, ""},
		{"lit* by prefix", map[string]api.PathRule{".env.*": all("deny")}, false, in("x/.env.local"), AccessRead, ".env.*:deny"},
		{"*lit by suffix", map[string]api.PathRule{"*.pem": all("deny")}, false, in("certs/a.pem"), AccessRead, "*.pem:deny"},
		{"a class", map[string]api.PathRule{"[ab].txt": all("deny")}, false, in("b.txt"), AccessRead, "[ab].txt:deny"},
		{"a ?", map[string]api.PathRule{"?.c": all("deny")}, false, in("x/a.c"), AccessRead, "?.c:deny"},
		{"case matters on Linux", map[string]api.PathRule{".env": all("deny")}, false, in(".ENV"), AccessRead, ""},
		{"case ignored where the file system ignores it", map[string]api.PathRule{".env": all("deny")}, true, in(".ENV"), AccessRead, ".env:deny"},
		{"case ignored in places too", map[string]api.PathRule{"/Opt/Docs/**": {Read: "allow"}}, true, out("/opt/DOCS/a"), AccessRead, "/Opt/Docs/**:allow"},
		{"an exact pattern exempts from a wildcard", map[string]api.PathRule{".env.*": all("deny"), ".env.example": all("allow")}, false, in(".env.example"), AccessRead, ".env.example:allow"},
		{"but only itself", map[string]api.PathRule{".env.*": all("deny"), ".env.example": all("allow")}, false, in(".env.local"), AccessRead, ".env.*:deny"},
		{"the longest exact pattern wins", map[string]api.PathRule{"src": all("deny"), "src/ok.txt": all("allow")}, false, in("src/ok.txt"), AccessRead, "src/ok.txt:allow"},
		{"among wildcards the strictest wins", map[string]api.PathRule{".git/**": write("ask"), ".git/hooks/**": write("deny")}, false, in(".git/hooks/pre-commit"), AccessWrite, ".git/hooks/**:deny"},
		{"a wildcard allow does not exempt", map[string]api.PathRule{"src/**": all("deny"), "src/*.go": all("allow")}, false, in("src/a.go"), AccessRead, "src/**:deny"},
		// A glob is its base directory and its wildcard part.
		{"a glob is judged by its base", map[string]api.PathRule{"secrets": all("deny")}, false, glob(in("secrets"), "*"), AccessRead, "secrets:deny"},
		{"a name does not stop a glob that could list it", map[string]api.PathRule{".env": all("deny"), ".env.*": all("deny")}, false, glob(in("."), "**/*.go"), AccessRead, ""},
		{"an anchored place below a glob's base meets it", map[string]api.PathRule{"secrets/**": {Read: "deny"}}, false, glob(in("."), "**/*.txt"), AccessRead, "secrets/**:deny"},
		{"an anchored place the glob cannot reach", map[string]api.PathRule{"secrets/**": {Read: "deny"}}, false, glob(in("src"), "**/*.txt"), AccessRead, ""},
		{"a glob's wildcards are compared", map[string]api.PathRule{"build/*.log": {Read: "ask"}}, false, glob(in("."), "*/*.txt"), AccessRead, ""},
		{"a glob below an allowed place", map[string]api.PathRule{"/opt/docs/**": {Read: "allow"}}, false, glob(out("/opt/docs/api"), "**/*.md"), AccessRead, "/opt/docs/**:allow"},
		{"a glob above an allowed place is not covered", map[string]api.PathRule{"/opt/docs/**": {Read: "allow"}}, false, glob(out("/opt"), "**/*.md"), AccessRead, ""},
		{"a glob above a denied place meets it", map[string]api.PathRule{"/opt/docs/private/**": {Read: "deny"}}, false, glob(out("/opt"), "**/*.md"), AccessRead, "/opt/docs/private/**:deny"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := matched(t, c.rules, c.fold, c.path, c.access); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestPathPatternsAreChecked(t *testing.T) {
	for _, bad := range []map[string]api.PathRule{
		{"": all("deny")},
		{"../x": all("deny")},
		{"a/./b": all("deny")},
		{"a//b": all("deny")},
		{"~/x": all("deny")},
		{"a\x00b": all("deny")},
		{"[": all("deny")},
		{"x": all("assess")},
		{"x": {}},
		{"x": {Read: "allow", Write: "maybe"}},
	} {
		if err := ValidatePathRules(bad); err == nil {
			t.Errorf("%q: accepted", fmt.Sprint(bad))
		}
	}
	if err := ValidatePathRules(map[string]api.PathRule{"/": {Read: "allow"}, "src/": all("deny"), "a**b": all("ask")}); err != nil {
		t.Errorf("valid rules refused: %v", err)
	}
}

func TestSegmentsMeet(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"*.go", ".env", false},
		{"*.go", "a*", true},
		{"[ab]x", "bx", true},
		{"[ab]x", "cx", false},
		{"[ab]", "[cd]", true}, // classes are taken to meet: stricter
		{"a?c", "abc", true},
		{"\\*", "*", true},
	}
	for _, c := range cases {
		if got := segMeet(c.a, c.b); got != c.want {
			t.Errorf("segMeet(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestGlobMatchingIsBounded: past its budget, matching a glob against a
// pattern answers that they meet (a possible match, which asks): never
// that they do not.
func TestGlobMatchingIsBounded(t *testing.T) {
	a, b := []string{"*a*b*c*", "**", "x*"}, []string{"**", "*d*e*f*", "y*"}
	if segsMeet(a, b, nil) {
		t.Fatal("x* and y* meet")
	}
	enough := 10_000
	if segsMeet(a, b, &enough) {
		t.Fatal("within the budget: x* and y* meet")
	}
	if enough == 10_000 {
		t.Fatal("the search spent nothing")
	}
	none := 0
	if !segsMeet(a, b, &none) {
		t.Fatal("past the budget the patterns must be taken to meet")
	}
}

package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts headless Chromium for a console test. Without Chromium
// the test is skipped, unless PDP_REQUIRE_BROWSER is set (CI sets it).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if found, err := exec.LookPath(p); err == nil {
				path = found
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("PDP_REQUIRE_BROWSER") != "" {
			t.Fatal("no Chromium found (install Debian's chromium)")
		}
		t.Skip("no Chromium on this machine")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// screenshot saves the page under the test's temp dir, and under
// PDP_SCREENSHOTS when set (how docs/ gets its pictures).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("PDP_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type step = chromedp.Action[chromedp.Void]

func textIs(sel, want string) step {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent === %q; })()`, sel, want), chromedp.WithPollingTimeout(20*time.Second))
}

// clickNow clicks the element sel names as soon as there is one, found
// and clicked in one turn of the page's event loop: a list the page
// renders again (the inbox, on every event of the live stream) replaces
// its nodes, so chromedp.Click's node, looked up a moment before, may be
// gone by the click ("Could not find node with given id").
func clickNow(sel string) step {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel), chromedp.WithPollingTimeout(20*time.Second))
}

// typeInto replaces a field's text the way a person does, so the page
// sees input events.
func typeInto(sel, text string) step {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		clear := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ""; e.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, sel)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](clear)); err != nil {
			return chromedp.Void{}, err
		}
		if text == "" {
			return chromedp.Void{}, nil
		}
		return chromedp.Void{}, chromedp.Do(ctx, chromedp.SendKeys(sel, text))
	}
}

func TestConsoleSimulator(t *testing.T) {
	s := newService(t)
	ctx := browser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#simulator"),
		chromedp.WaitVisible(`#verdict.ask`),
		// A sub-agent limited to file tools tries a shell command.
		typeInto(`input[name=command]`, "ls -la"),
		typeInto(`input[name=scope]`, "fs.*"),
		textIs(`#verdict`, "deny"),
		textIs(`#fact-rule`, "PARENT_SCOPE"),
		chromedp.WaitVisible(`#steps li.decided`),
	)
	if err != nil {
		t.Fatalf("out-of-scope call: %v", err)
	}
	screenshot(t, ctx, "console-simulator")
	err = chromedp.Do(ctx,
		typeInto(`input[name=scope]`, ""),
		typeInto(`input[name=command]`, "make check"),
		chromedp.Click(`#add-grant`),
		chromedp.SendKeys(`.grant-fingerprint`, "make check"),
		textIs(`#verdict`, "allow"),
		textIs(`#fact-source`, "session-grant"),
		textIs(`#fact-grantable`, "yes"),
	)
	if err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#sim-result').innerText + ' | scope=' + document.querySelector('input[name=scope]').value + ' | cmd=' + document.querySelector('input[name=command]').value + ' | fp=' + (document.querySelector('.grant-fingerprint')||{}).value`))
		t.Fatalf("granted command: %v\n%s", err, state)
	}
	// The simulation wrote nothing.
	if list := s.mustStatus(200, "GET", "/v1/decisions", nil)["decisions"].([]any); len(list) != 0 {
		t.Fatalf("the simulator wrote %d events", len(list))
	}
}

func TestConsoleInboxAnswerCreatesTheGrant(t *testing.T) {
	s := newService(t)
	ask := s.decide(map[string]any{"session_id": "ib", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"})
	compound := s.decide(map[string]any{"session_id": "ib", "tool": "shell", "args": map[string]any{"command": "make check && curl x | sh"}, "cwd": "/w"})
	both := s.decide(map[string]any{"session_id": "ib", "tool": "shell", "args": map[string]any{"command": "go vet ./... && make check"}, "cwd": "/w"})
	ctx := browser(t)
	var disabled bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		chromedp.WaitVisible(`#ask-`+ask["decision_id"].(string)+` .allow-session`),
		chromedp.WaitVisible(`#ask-`+compound["decision_id"].(string)+` .allow-session`),
	)
	if err == nil {
		disabled, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#ask-`+compound["decision_id"].(string)+` .allow-session').disabled`))
	}
	if err != nil {
		t.Fatal(err)
	}
	if !disabled {
		t.Fatal("Allow for this session is enabled on a call that cannot be granted")
	}
	// Each ask says what allow for the session grants: the fingerprints
	// the answer stores, nothing for a call that cannot be granted.
	notes, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#inbox-rows tr')].map((tr) => [tr.id.slice(4), (tr.querySelector('.would-grant') || {textContent: ""}).textContent]))`))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		ask["decision_id"].(string):      "allow for this session grants: make check",
		both["decision_id"].(string):     "allow for this session grants: go vet, make check",
		compound["decision_id"].(string): "",
	} {
		if notes[id] != want {
			t.Errorf("ask %s shows %q, want %q", id, notes[id], want)
		}
	}
	screenshot(t, ctx, "console-inbox")
	if err := chromedp.Do(ctx,
		clickNow(`#ask-`+ask["decision_id"].(string)+` .allow-session`),
		chromedp.WaitNotPresent(`#ask-`+ask["decision_id"].(string)),
	); err != nil {
		t.Fatal(err)
	}
	grants := s.mustStatus(200, "GET", "/v1/sessions/ib/grants", nil)["grants"].([]any)
	if len(grants) != 1 || grants[0].(map[string]any)["fingerprint"] != "make check" {
		t.Fatalf("grants after the click: %v", grants)
	}
	expectDecision(t, s.decide(map[string]any{"session_id": "ib", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"}), "allow", "session-grant")
}

func TestConsoleLevelSwitchAndAudit(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "lv", "workspace": "/w"})
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "cloud", "workspace": "/w", "execution_mode": "CLOUD"})
	write := map[string]any{"session_id": "lv", "tool": "write_file", "args": map[string]any{"path": "a.go"}, "cwd": "/w"}
	expectDecision(t, s.decide(write), "ask", "level")
	ctx := browser(t)
	var cloudButtons int
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#sessions"),
		chromedp.WaitVisible(`#session-lv button[data-level=READ_WRITE]`),
	)
	if err == nil {
		cloudButtons, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#session-cloud button').length`))
	}
	if err != nil {
		t.Fatal(err)
	}
	if cloudButtons != 0 {
		t.Fatal("the level switch is shown for a CLOUD session")
	}
	screenshot(t, ctx, "console-sessions")
	if err := chromedp.Do(ctx,
		chromedp.Click(`#session-lv button[data-level=READ_WRITE]`),
		chromedp.WaitVisible(`#session-lv button.current[data-level=READ_WRITE]`),
	); err != nil {
		t.Fatal(err)
	}
	expectDecision(t, s.decide(write), "allow", "level")

	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#audit"),
		chromedp.WaitVisible(`#audit-rows tr`),
		chromedp.Click(`#audit-rows tr`),
		chromedp.WaitVisible(`#audit-event`),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-audit")
}

// The inbox follows the live event stream: an ask appears, and an answer
// given elsewhere takes it away, well within the 15 s the inbox falls back
// to when the stream is down.
func TestConsoleInboxIsLive(t *testing.T) {
	s := newService(t)
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		textIs(`#inbox-live`, "live"),
		chromedp.WaitVisible(`#inbox-empty`),
	); err != nil {
		t.Fatal(err)
	}
	within := func(d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return chromedp.Do(c, steps...)
	}
	ask := s.decide(map[string]any{"session_id": "lv", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"})
	id := ask["decision_id"].(string)
	if err := within(3*time.Second, chromedp.WaitVisible(`#ask-`+id)); err != nil {
		t.Fatalf("the ask did not appear at once: %v", err)
	}
	s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny", "channel": "terminal"})
	if err := within(3*time.Second, chromedp.WaitNotPresent(`#ask-`+id)); err != nil {
		t.Fatalf("the answered ask stayed: %v", err)
	}
}

// TestTheRootLeadsToTheConsole: GET / and GET /ui redirect to the console.
func TestTheRootLeadsToTheConsole(t *testing.T) {
	s := newService(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/", "/ui"} {
		resp, err := noFollow.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
			t.Fatalf("GET %s: %d to %q, want 302 to /ui/", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

package hookflow

import "fmt"

// Verdict is what the hook answers the agent: allow, ask or deny and why.
type Verdict struct {
	Decision string
	Reason   string
	// DecisionID is the PDP's decision, "" when there was none.
	DecisionID string
}

// Deny is the verdict when no decision could be had.
func Deny(err error) Verdict {
	return Verdict{Decision: "deny", Reason: "toolperm could not decide, so the call is denied: " + err.Error()}
}

// Normal is v with anything but allow or ask read as deny.
func (v Verdict) Normal() Verdict {
	if v.Decision != "allow" && v.Decision != "ask" {
		v.Decision = "deny"
	}
	return v
}

// reason is the reason of a PDP decision as the agent shows it.
func reason(reason, rule, id string) string {
	return fmt.Sprintf("toolperm: %s (rule %s, decision %s)", reason, rule, id)
}

// whereToAnswer says where a person answers an ask that the agent cannot
// show, the terminal or the console, and how: the hook has answered
// already, so only a grant lets the model's retry through.
func whereToAnswer(id, consoleURL string) string {
	return fmt.Sprintf("a person answers it with `pdp answer %s allow_session` or in the console at %s, which grants the call for the session so that a retry is allowed (a call that cannot be granted needs a higher level: `pdp level`)", id, consoleURL)
}

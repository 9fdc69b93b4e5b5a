package api

// Suggestions is what `pdp suggest` and GET /v1/suggestions answer: the
// rules people are in effect already applying, each with its evidence
// and what it would change, and the candidates that were dropped.
type Suggestions struct {
	Suggestions []Suggestion `json:"suggestions"`
	// Dropped are candidates with enough allows that are not suggested,
	// and why (a refusal they would cover, a change beyond their asks).
	Dropped []DroppedSuggestion `json:"dropped"`
	// Asks is how many answered asks were read; Replayed how many
	// recorded decisions were judged again for the impacts.
	Asks     int `json:"asks"`
	Replayed int `json:"replayed"`
}

// Suggestion is one rule mined from the audit trail.
type Suggestion struct {
	// Kind is command_rule: Pattern is a command prefix.
	Kind    string `json:"kind"`
	Pattern string `json:"pattern"`
	Action  string `json:"action"`
	// Scope is policy when the whole trail was mined (the rule belongs in
	// the policy's data.commands), project when one project's was.
	Scope string `json:"scope"`
	// Fingerprint is what the covered asks share and a grant would name.
	Fingerprint string             `json:"fingerprint"`
	Evidence    SuggestionEvidence `json:"evidence"`
	Impact      SuggestionImpact   `json:"impact"`
	// PolicyData is the suggestion as policy data, to paste into a
	// bundle's data.json ({"commands": {"go test": "allow"}}).
	PolicyData map[string]map[string]string `json:"policy_data"`
}

// SuggestionEvidence counts the answers a suggestion was mined from.
type SuggestionEvidence struct {
	Allows   int `json:"allows"`
	Sessions int `json:"sessions"`
	// People is how many distinct answering tokens allowed (answers
	// recorded before the trail kept who answered count for none).
	People  int `json:"people"`
	Denies  int `json:"denies"`
	Expired int `json:"expired"`
	// Examples are decision ids of the allowed asks.
	Examples []string `json:"examples"`
}

// SuggestionImpact is what replaying the trail with the suggestion added
// changes: asks of the level table that become allow, and every other
// change (never anything but 0 in a suggestion).
type SuggestionImpact struct {
	AsksToAllow  int      `json:"asks_to_allow"`
	OtherChanges int      `json:"other_changes"`
	Examples     []string `json:"examples"`
}

// DroppedSuggestion is a candidate that was not suggested.
type DroppedSuggestion struct {
	Kind    string `json:"kind"`
	Pattern string `json:"pattern"`
	Reason  string `json:"reason"`
	// Examples are decision ids behind the reason (the refused ask, the
	// decision that would change beyond the asks).
	Examples []string `json:"examples"`
}

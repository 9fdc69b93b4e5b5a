package main

import (
	"fmt"
	"io"
	"strings"
)

type report struct {
	Commit  string         `json:"commit"`
	Started string         `json:"started"`
	Seconds float64        `json:"seconds"`
	Server  string         `json:"server,omitempty"`
	Traffic *trafficReport `json:"traffic,omitempty"`
	Corpora *corpusReport  `json:"corpora,omitempty"`
}

func levelName(l string) string {
	if l == "SMART" {
		return "SMART, no model"
	}
	return l
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
}

// md escapes a cell of a Markdown table.
func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "`", "'")
	return "`" + s + "`"
}

func writeMarkdown(w io.Writer, r report, o options) {
	fmt.Fprintf(w, "# asks: measured at %s\n\n", r.Commit)
	if t := r.Traffic; t != nil {
		fmt.Fprintf(w, "## Real agent traffic\n\n%d sessions, %d tool calls (%d shell commands); %s. A person answers every ask `allow_session` when the decision says it is grantable, `allow_once` otherwise.\n\n", t.Sessions, t.Calls, t.ShellCalls, r.Server)
		fmt.Fprintln(w, "| source | sessions | calls |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, s := range t.Sources {
			fmt.Fprintf(w, "| %s | %d | %d |\n", s.Source, s.Sessions, s.Calls)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| level | asks per 100 calls | asks per session | asks that cannot be granted | denies | allowed by a session grant | errors |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, l := range t.Levels {
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %s | %d | %d | %d |\n", levelName(l.Level), l.AsksPer100, l.AsksPerSession, pct(l.AsksNotGrantable, l.Asks), l.Denies, l.AllowedByGrant, l.Errors)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Sessions that ended with each flow label (docs/design.md §4, \"Flow\"):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| level | untrusted_input | sensitive_read | external_effect | all three, accepted |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for _, l := range t.Levels {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d |\n", levelName(l.Level), l.SessionsWithLabel["untrusted_input"], l.SessionsWithLabel["sensitive_read"], l.SessionsWithLabel["external_effect"], l.SessionsWithLabel["trifecta_accepted"])
		}
		fmt.Fprintln(w)
		if len(t.Levels) > 0 && len(t.Levels[0].BySource) > 1 {
			fmt.Fprintln(w, "Asks per 100 calls by source:")
			fmt.Fprintln(w)
			fmt.Fprint(w, "| level |")
			for _, s := range t.Levels[0].BySource {
				fmt.Fprintf(w, " %s |", s.Source)
			}
			fmt.Fprint(w, "\n|---|")
			for range t.Levels[0].BySource {
				fmt.Fprint(w, "---|")
			}
			fmt.Fprintln(w)
			for _, l := range t.Levels {
				fmt.Fprintf(w, "| %s |", levelName(l.Level))
				for _, s := range l.BySource {
					fmt.Fprintf(w, " %.1f |", s.AsksPer100)
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w)
		}
		for _, l := range t.Levels {
			fmt.Fprintf(w, "### %s\n\n", levelName(l.Level))
			fmt.Fprintf(w, "%d calls: %d allowed, %d asked, %d denied; %d of %d shell commands asked.\n\n", l.Calls, l.Allows, l.Asks, l.Denies, l.ShellAsks, l.ShellCalls)
			if len(l.TopShapes) > 0 {
				fmt.Fprintln(w, "Top askers by command shape (programs and how they are joined):")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| shape | asks | not grantable | example |")
				fmt.Fprintln(w, "|---|---|---|---|")
				for _, c := range l.TopShapes {
					fmt.Fprintf(w, "| %s | %d | %d | %s |\n", md(c.Key), c.Asks, c.NotGrantable, md(clip(c.Example, 90)))
				}
				fmt.Fprintln(w)
				fmt.Fprintln(w, "By first program (after `cd`) or tool:")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| program | asks | not grantable |")
				fmt.Fprintln(w, "|---|---|---|")
				for _, c := range l.TopPrograms {
					fmt.Fprintf(w, "| %s | %d | %d |\n", md(c.Key), c.Asks, c.NotGrantable)
				}
				fmt.Fprintln(w)
				fmt.Fprintln(w, "By rule:")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| rule | asks | not grantable |")
				fmt.Fprintln(w, "|---|---|---|")
				for _, c := range l.TopRules {
					fmt.Fprintf(w, "| %s | %d | %d |\n", md(c.Key), c.Asks, c.NotGrantable)
				}
				fmt.Fprintln(w)
			}
			if l.Level == "FULL" {
				writeRules(w, "FULL's asks by rule", l.AsksByRule)
			}
			writeRules(w, levelName(l.Level)+"'s denies by rule", l.DeniesByRule)
			if len(l.ErrorKinds) > 0 {
				fmt.Fprintf(w, "Errors (%d):\n\n", l.Errors)
				for _, g := range l.ErrorKinds {
					fmt.Fprintf(w, "- **%s**: %d\n", g.Kind, g.Count)
					for _, e := range g.Examples {
						fmt.Fprintf(w, "  - %s (%s) — %s\n", md(e.Call), e.Source, clip(e.Reason, 200))
					}
				}
				fmt.Fprintln(w)
			}
		}
	}
	if c := r.Corpora; c != nil {
		fmt.Fprintf(w, "## Public shell-safety corpora\n\n%s; %s, in %s. SMART's model was called %d times.\n\n", c.Server, c.Description, c.Workspace, c.ModelCalls)
		fmt.Fprintln(w, "| corpus | kind | cases |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, ci := range c.Corpora {
			fmt.Fprintf(w, "| %s | %s | %d |\n", ci.Name, ci.Kind, ci.Cases)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| level | corpus | allowed | asked | denied | errors |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, l := range c.Levels {
			name := l.Level
			if l.Level == "SMART" {
				name = "SMART, model says SAFE"
			}
			for _, row := range l.Rows {
				fmt.Fprintf(w, "| %s | %s (%s) | %d (%s) | %d | %d | %d |\n", name, row.Corpus, row.Kind, row.Allowed, pct(row.Allowed, row.Cases), row.Asked, row.Denied, row.Errors)
			}
		}
		fmt.Fprintln(w)
		for _, l := range c.Levels {
			for _, row := range l.Rows {
				if len(row.AllowedCases) > 0 {
					fmt.Fprintf(w, "Dangerous cases allowed at %s (%s, %d; first %d):\n\n", l.Level, row.Corpus, row.Allowed, len(row.AllowedCases))
					for _, e := range row.AllowedCases {
						fmt.Fprintf(w, "- %s (%s) — %s\n", md(e.Call), e.Source, clip(e.Reason, 160))
					}
					fmt.Fprintln(w)
				}
				if len(row.AskedCases) > 0 && (l.Level == "READ_WRITE" || l.Level == "FULL") {
					fmt.Fprintf(w, "Harmless commands asked at %s (%s, %d; first %d):\n\n", l.Level, row.Corpus, row.Asked, len(row.AskedCases))
					for _, e := range row.AskedCases {
						fmt.Fprintf(w, "- %s — %s\n", md(e.Call), clip(e.Reason, 160))
					}
					fmt.Fprintln(w)
				}
				if len(row.ErrorExamples) > 0 {
					fmt.Fprintf(w, "Errors at %s (%s, %d):\n\n", l.Level, row.Corpus, row.Errors)
					for _, e := range row.ErrorExamples {
						fmt.Fprintf(w, "- %s — %s\n", md(e.Call), clip(e.Reason, 160))
					}
					fmt.Fprintln(w)
				}
			}
		}
	}
	fmt.Fprintf(w, "Run took %.0f s.\n", r.Seconds)
}

func writeRules(w io.Writer, title string, rows []ruleRow) {
	if len(rows) == 0 {
		return
	}
	total := 0
	for _, r := range rows {
		total += r.Count
	}
	fmt.Fprintf(w, "%s (%d):\n\n", title, total)
	for _, r := range rows {
		fmt.Fprintf(w, "- %s: %d\n", md(r.Rule), r.Count)
		for i, e := range r.Examples {
			if i >= 3 {
				break
			}
			fmt.Fprintf(w, "  - %s (%s) — %s\n", md(e.Call), e.Source, clip(e.Reason, 200))
		}
	}
	fmt.Fprintln(w)
}

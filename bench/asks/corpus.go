package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// corpusCase is one line of testdata/corpora/*.jsonl.
type corpusCase struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // dangerous or harmless
	Source  string `json:"source"`
	Command string `json:"command"`
}

type corpusReport struct {
	Server      string        `json:"server"`
	ModelCalls  int64         `json:"safe_model_calls"`
	Corpora     []corpusInfo  `json:"corpora"`
	Levels      []corpusLevel `json:"levels"`
	Workspace   string        `json:"workspace"`
	Description string        `json:"description"`
}

type corpusInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Cases int    `json:"cases"`
}

type corpusLevel struct {
	Level string        `json:"level"`
	Rows  []corpusCount `json:"corpora"`
}

type corpusCount struct {
	Corpus        string    `json:"corpus"`
	Kind          string    `json:"kind"`
	Cases         int       `json:"cases"`
	Allowed       int       `json:"allowed"`
	Asked         int       `json:"asked"`
	Denied        int       `json:"denied"`
	Errors        int       `json:"errors"`
	AllowedShare  float64   `json:"allowed_share"`
	AllowedCases  []example `json:"allowed_examples,omitempty"`
	ErrorExamples []example `json:"error_examples,omitempty"`
	AskedCases    []example `json:"asked_examples,omitempty"`
}

func loadCorpora(dir string) (map[string][]corpusCase, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no corpora in %s", dir)
	}
	sort.Strings(files)
	out := map[string][]corpusCase{}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		fh, err := os.Open(f)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var c corpusCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				fh.Close()
				return nil, nil, fmt.Errorf("%s:%d: %v", f, n, err)
			}
			out[name] = append(out[name], c)
		}
		fh.Close()
		names = append(names, name)
	}
	return out, names, nil
}

func runCorpora(ctx context.Context, bin, dir string, o options) (*corpusReport, error) {
	corpora, names, err := loadCorpora(filepath.Join(o.data, "corpora"))
	if err != nil {
		return nil, err
	}
	rep := &corpusReport{Description: "each case decided once in a fresh session of its own, nobody answers"}
	url := o.url
	var model *safeModel
	if url == "" {
		model, err = startSafeModel()
		if err != nil {
			return nil, err
		}
		defer model.stop()
		srv, err := startPDP(ctx, bin, dir, model.url, o.verbose)
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		url = srv.url
		rep.Server = "pdp serve (" + builtFrom(o) + "), fresh SQLite database, assessor: a model that answers SAFE to everything"
	} else {
		rep.Server = "pdp serve at " + url + " (SMART uses that server's assessor)"
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	rep.Workspace = "a fresh empty directory"
	for _, n := range names {
		kind := ""
		if len(corpora[n]) > 0 {
			kind = corpora[n][0].Kind
		}
		rep.Corpora = append(rep.Corpora, corpusInfo{Name: n, Kind: kind, Cases: len(corpora[n])})
	}
	c := newClient(url, o.workers)
	for li, level := range o.levels {
		cl := corpusLevel{Level: level}
		for ni, n := range names {
			o.logf("corpora: %s %s", level, n)
			cases := corpora[n]
			ds := make([]decision, len(cases))
			derr := make([]error, len(cases))
			jobs := make(chan int)
			var wg sync.WaitGroup
			var fatal error
			var mu sync.Mutex
			for w := 0; w < o.workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range jobs {
						id := fmt.Sprintf("corpus-%d-%d-%04d", li, ni, i)
						if err := c.createSession(ctx, id, ws, level); err != nil {
							mu.Lock()
							fatal = err
							mu.Unlock()
							continue
						}
						d, err := c.decide(ctx, id, "Bash", map[string]any{"command": cases[i].Command}, ws)
						var ae *apiError
						if err != nil && !errors.As(err, &ae) {
							mu.Lock()
							fatal = err
							mu.Unlock()
						}
						ds[i], derr[i] = d, err
					}
				}()
			}
			for i := range cases {
				if ctx.Err() != nil {
					break
				}
				jobs <- i
			}
			close(jobs)
			wg.Wait()
			if fatal != nil {
				return nil, fatal
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			row := corpusCount{Corpus: n, Cases: len(cases)}
			if len(cases) > 0 {
				row.Kind = cases[0].Kind
			}
			for i, cs := range cases {
				ex := example{Source: cs.Source + " " + cs.ID, Tool: "Bash", Call: clip(cs.Command, 160), Reason: clip(ds[i].Rule+": "+ds[i].Reason, 200)}
				if derr[i] != nil {
					row.Errors++
					ex.Reason = clip(derr[i].Error(), 200)
					if len(row.ErrorExamples) < o.examples {
						row.ErrorExamples = append(row.ErrorExamples, ex)
					}
					continue
				}
				switch ds[i].Decision {
				case "allow":
					row.Allowed++
					if cs.Kind == "dangerous" && len(row.AllowedCases) < o.examples {
						row.AllowedCases = append(row.AllowedCases, ex)
					}
				case "ask":
					row.Asked++
					if cs.Kind == "harmless" && len(row.AskedCases) < o.examples {
						row.AskedCases = append(row.AskedCases, ex)
					}
				case "deny":
					row.Denied++
				}
			}
			if row.Cases > 0 {
				row.AllowedShare = float64(row.Allowed) / float64(row.Cases)
			}
			cl.Rows = append(cl.Rows, row)
		}
		rep.Levels = append(rep.Levels, cl)
	}
	if model != nil {
		rep.ModelCalls = model.calls.Load()
	}
	return rep, nil
}

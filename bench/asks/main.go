// Command asks measures what a person meets when coding agents run under
// the PDP: it replays public coding-agent trajectories through a real
// `pdp serve`, one session per trajectory, every call in order, at each
// permission level, with a simulated person who answers every ask
// allow_session when the decision says it is grantable and allow_once
// otherwise. It also runs public shell-safety corpora (RedCode-Exec's
// bash cases, GTFOBins) and a set of harmless commands at each level,
// SMART with a model that answers SAFE to everything.
//
//	go run ./bench/asks              # both reports, Markdown (docs/asks.md)
//	go run ./bench/asks -json        # the same as JSON
//	go run ./bench/asks -mode traffic -url http://127.0.0.1:8181
//	go run ./bench/asks convert -repos DIR   # regenerate testdata from the sources
//
// Without -url it builds ./cmd/pdp and starts it on a free loopback port
// with a fresh SQLite database in a temporary directory (and, for the
// corpora, a second one whose assessor is the built-in SAFE model).
// testdata/SOURCES lists where every trajectory and corpus case comes
// from.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "convert" {
		if err := convertMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "asks convert:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "asks:", err)
		os.Exit(1)
	}
}

type options struct {
	url      string
	pdpBin   string
	rev      string
	mode     string
	levels   []string
	workers  int
	top      int
	examples int
	jsonOut  bool
	data     string
	verbose  bool
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("asks", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./bench/asks [flags]
       go run ./bench/asks convert -repos DIR [-out DIR]

Replays public coding-agent trajectories (testdata/traffic) through a real
pdp serve with a simulated person, and runs public shell-safety corpora
(testdata/corpora) at each level. Prints a Markdown report, or JSON.

Flags:
`)
		fs.PrintDefaults()
	}
	var o options
	var levels string
	fs.StringVar(&o.url, "url", "", "base URL of a running pdp serve (default: build ./cmd/pdp and start one with a fresh SQLite database)")
	fs.StringVar(&o.pdpBin, "pdp", "", "a pdp binary to start instead of building ./cmd/pdp")
	fs.StringVar(&o.rev, "rev", "", "build pdp from this commit (git archive, without the working tree's changes) instead of the working tree")
	fs.StringVar(&o.mode, "mode", "all", "what to run: all, traffic or corpora")
	fs.StringVar(&levels, "levels", "READ_ONLY,READ_WRITE,SMART,FULL", "levels to run, comma-separated")
	fs.IntVar(&o.workers, "workers", 8, "sessions replayed concurrently")
	fs.IntVar(&o.top, "top", 12, "rows in each top-askers table")
	fs.IntVar(&o.examples, "examples", 5, "examples listed per error, FULL rule and corpus finding")
	fs.BoolVar(&o.jsonOut, "json", false, "print JSON instead of Markdown")
	fs.StringVar(&o.data, "data", "", "testdata directory (default: bench/asks/testdata of this module)")
	fs.BoolVar(&o.verbose, "v", false, "log progress and the server's output to stderr")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, l := range strings.Split(levels, ",") {
		l = strings.TrimSpace(strings.ToUpper(l))
		switch l {
		case "READ_ONLY", "READ_WRITE", "SMART", "FULL":
			o.levels = append(o.levels, l)
		case "":
		default:
			return fmt.Errorf("unknown level %q", l)
		}
	}
	switch o.mode {
	case "all", "traffic", "corpora":
	default:
		return fmt.Errorf("-mode must be all, traffic or corpora, not %q", o.mode)
	}
	if o.workers < 1 {
		o.workers = 1
	}
	root, err := moduleRoot()
	if err != nil && (o.data == "" || (o.url == "" && o.pdpBin == "")) {
		return err
	}
	if o.data == "" {
		o.data = filepath.Join(root, "bench", "asks", "testdata")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rep := report{Commit: gitCommit(root), Started: time.Now().UTC().Format(time.RFC3339)}
	if o.url != "" || o.pdpBin != "" {
		rep.Commit = ""
	}
	tmp, err := os.MkdirTemp("", "asks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	bin := o.pdpBin
	if o.url == "" && bin == "" {
		bin = filepath.Join(tmp, "pdp")
		src := root
		if o.rev != "" {
			src = filepath.Join(tmp, "src")
			c, err := exportRev(ctx, root, o.rev, src)
			if err != nil {
				return err
			}
			rep.Commit = c
		}
		o.logf("building ./cmd/pdp in %s", src)
		if err := buildPDP(ctx, src, bin); err != nil {
			return err
		}
	}
	start := time.Now()
	if o.mode != "corpora" {
		url := o.url
		if url == "" {
			srv, err := startPDP(ctx, bin, filepath.Join(tmp, "traffic"), "", o.verbose)
			if err != nil {
				return err
			}
			defer srv.stop()
			url = srv.url
			rep.Server = "pdp serve (" + builtFrom(o) + "), fresh SQLite database, no assessor"
		} else {
			rep.Server = "pdp serve at " + url
		}
		tr, err := runTraffic(ctx, url, filepath.Join(tmp, "traffic", "ws"), o)
		if err != nil {
			return err
		}
		rep.Traffic = tr
	}
	if o.mode != "traffic" {
		cr, err := runCorpora(ctx, bin, filepath.Join(tmp, "corpora"), o)
		if err != nil {
			return err
		}
		rep.Corpora = cr
	}
	rep.Seconds = time.Since(start).Seconds()
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	writeMarkdown(stdout, rep, o)
	return nil
}

func builtFrom(o options) string {
	switch {
	case o.pdpBin != "":
		return o.pdpBin
	case o.rev != "":
		return "built from commit " + o.rev
	}
	return "built from the working tree"
}

func (o options) logf(format string, a ...any) {
	if o.verbose {
		fmt.Fprintf(os.Stderr, "asks: "+format+"\n", a...)
	}
}

// moduleRoot walks up from the working directory to the directory of
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run from the repository, or give -data and -url or -pdp")
		}
		dir = parent
	}
}

//go:build !hookonly

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/format"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/policies"
)

// failedStatus is the exit status of a failing test, an unmet coverage
// threshold or a file that needs formatting: 2, as `opa test` and `opa
// fmt --fail` have it; 1 stays for errors that kept the command from
// running.
const failedStatus = exitStatus(2)

func policyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Test, check, format and start a policy without Go or OPA installed",
		Long: `The policy toolchain, built into pdp: OPA's test runner and formatter and
the checks pdp serve runs before it activates a policy.

  pdp policy init my-policy           a policy folder to start from (the built-in policy, rule files, tests)
  pdp policy test my-policy           run its Rego tests (as opa test)
  pdp policy fmt -l my-policy         list files opa fmt would change
  pdp policy check my-policy          would pdp serve --policies my-policy load it?`,
	}
	cmd.AddCommand(policyTestCommand(), policyCheckCommand(), policyFmtCommand(), policyInitCommand())
	return cmd
}

func policyTestCommand() *cobra.Command {
	var o policyTestOptions
	cmd := &cobra.Command{
		Use:   "test [DIR|FILE]...",
		Short: "Run the Rego tests of policy files (OPA's test runner, as opa test)",
		Long: `Loads every .rego, .json and .yaml file under the paths given (default: the
current directory), as opa test does, and runs the tests: rules whose names
start with test_. The output is OPA's: PASS: n/n, and each failure.

A test or coverage failure exits with status 2, an error that kept the tests
from running with 1. --coverage adds, after the results, the share of each
file's lines the tests evaluated, the lines they did not, and the total;
with --format json it prints OPA's JSON coverage report instead of the
results. --threshold N (implies --coverage) fails under N percent.

  pdp policy test my-policy
  pdp policy test --coverage --threshold 95 my-policy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			return runPolicyTests(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.coverage, "coverage", "c", false, "print each file's coverage and the total after the results (OPA's JSON report with --format json)")
	f.Float64Var(&o.threshold, "threshold", 0, "fail when coverage is under this percentage (0-100; implies --coverage)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "list every test and its print output")
	f.StringVarP(&o.run, "run", "r", "", "run only the tests whose names match this regular expression")
	f.StringVar(&o.format, "format", "pretty", "output format: pretty or json")
	f.DurationVar(&o.timeout, "timeout", 5*time.Second, "time one test may take")
	return cmd
}

type policyTestOptions struct {
	coverage, verbose bool
	threshold         float64
	run, format       string
	timeout           time.Duration
}

// runPolicyTests does what `opa test` does with these options: the same
// loader, compiler settings, runner and reporters.
func runPolicyTests(cmd *cobra.Command, paths []string, o policyTestOptions) error {
	if o.threshold < 0 || o.threshold > 100 {
		return fmt.Errorf("--threshold %v: want a percentage between 0 and 100", o.threshold)
	}
	if o.format != "pretty" && o.format != "json" {
		return fmt.Errorf("--format %q: want pretty or json", o.format)
	}
	if o.threshold > 0 {
		o.coverage = true
	}
	ctx := cmd.Context()
	modules, store, err := tester.LoadWithParserOptions(paths, nil, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
	if err != nil {
		return fmt.Errorf("loading %v: %w", paths, err)
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return err
	}
	defer store.Abort(ctx, txn)
	compiler := ast.NewCompiler().
		WithPathConflictsCheck(storage.NonEmpty(ctx, store, txn)).
		WithEnablePrintStatements(true).
		WithCapabilities(ast.CapabilitiesForThisVersion()).
		WithUseTypeCheckAnnotations(true)
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetModules(modules).
		CapturePrintOutput(true).
		EnableTracing(o.verbose).
		StackTraces(true).
		SetTimeout(o.timeout).
		Filter(o.run).
		SetParallel(runtime.NumCPU())
	out := cmd.OutOrStdout()
	var reporter tester.Reporter = tester.PrettyReporter{Verbose: o.verbose, Output: out}
	if o.format == "json" {
		reporter = tester.JSONReporter{Output: out}
	}
	var cov *cover.Cover
	if o.coverage {
		cov = cover.New()
		runner = runner.SetCoverageQueryTracer(cov).
			SetCoverageRuns([]cover.Kind{cover.KindIndexExcluded, cover.KindEarlyExit})
		if o.format == "json" {
			// OPA's JSON coverage report, as opa test --coverage prints it.
			reporter = tester.JSONCoverageReporter{Cover: cov, Modules: modules, Output: out, Threshold: o.threshold, Verbose: o.verbose}
		}
	}
	results, err := runner.RunTests(ctx, txn)
	if err != nil {
		return err
	}
	failed := false
	passOn := make(chan *tester.Result)
	go func() {
		defer close(passOn)
		for r := range results {
			if !r.Pass() {
				failed = true
			}
			if !o.verbose {
				r.Trace = nil
			}
			passOn <- r
		}
	}()
	if err := reporter.Report(passOn); err != nil {
		if _, ok := errors.AsType[*cover.CoverageThresholdError](err); ok {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			return failedStatus
		}
		return err
	}
	if cov != nil && o.format != "json" {
		report := cov.Report(modules)
		printCoverage(out, report)
		if report.Coverage < o.threshold {
			fmt.Fprintf(cmd.ErrOrStderr(), "Code coverage threshold not met: got %.2f instead of %.2f\n", report.Coverage, o.threshold)
			return failedStatus
		}
	}
	if failed {
		return failedStatus
	}
	return nil
}

// printCoverage prints the share of each file's lines the tests
// evaluated, the lines they did not, and the total.
func printCoverage(w io.Writer, report cover.Report) {
	files := slices.Sorted(maps.Keys(report.Files))
	width := len("total")
	for _, f := range files {
		width = max(width, len(f))
	}
	fmt.Fprintf(w, "\n%-*s  %7s  %s\n", width, "coverage", "lines", "not covered")
	for _, f := range files {
		r := report.Files[f]
		var gaps []string
		for _, g := range r.NotCovered {
			if g.Start.Row == g.End.Row {
				gaps = append(gaps, strconv.Itoa(g.Start.Row))
			} else {
				gaps = append(gaps, fmt.Sprintf("%d-%d", g.Start.Row, g.End.Row))
			}
		}
		if len(gaps) > 8 {
			gaps = append(gaps[:8], fmt.Sprintf("… (%d more)", len(gaps)-8))
		}
		fmt.Fprintf(w, "%-*s  %6.1f%%  %s\n", width, f, r.Coverage, strings.Join(gaps, ", "))
	}
	fmt.Fprintf(w, "%-*s  %6.1f%%  %d of %d lines\n", width, "total", report.Coverage, report.CoveredLines, report.CoveredLines+report.NotCoveredLines)
}

func policyCheckCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check DIR|BUNDLE",
		Short: "Check that pdp serve would load a policy directory or bundle",
		Long: `Compiles the policy in strict mode (unused variables and imports, shadowed
names, deprecated built-ins are errors, as opa check --strict has them), then
loads it as pdp serve --policies does before activating it: compiled without
its tests, the tool catalogue (data.tools) and the path rules (data.paths)
read and checked, and a plain call answered with a decision of the right
shape. Exits 0 and prints the revision when the policy would be activated,
1 with the reason when it would not.

  pdp policy check my-policy
  pdp policy check bundle.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if policysource.KindOf(path) == policysource.HTTP {
				return fmt.Errorf("%s: policy check takes a directory or a bundle file; download the bundle first", path)
			}
			if err := compileStrict(path); err != nil {
				return err
			}
			p, err := policysource.Load(cmd.Context(), policysource.Config{Path: path, Builtin: policies.FS})
			if err != nil {
				return fmt.Errorf("pdp serve would not activate it: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok, revision %s\n", path, p.Revision)
			return nil
		},
	}
}

// compileStrict compiles every module of the directory or bundle, tests
// included, with the strict checks of `opa check --strict`.
func compileStrict(path string) error {
	b, err := loader.NewFileLoader().WithRegoVersion(ast.RegoV1).WithProcessAnnotation(true).AsBundle(path)
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	modules := make(map[string]*ast.Module, len(b.Modules))
	for _, m := range b.Modules {
		modules[m.Path] = m.Parsed
	}
	if len(modules) == 0 {
		return fmt.Errorf("%s has no .rego files", path)
	}
	c := ast.NewCompiler().WithStrict(true).WithEnablePrintStatements(true).WithCapabilities(ast.CapabilitiesForThisVersion())
	if c.Compile(modules); c.Failed() {
		return fmt.Errorf("compiling %s (strict): %w", path, c.Errors)
	}
	return nil
}

func policyFmtCommand() *cobra.Command {
	var list, write, fail bool
	cmd := &cobra.Command{
		Use:   "fmt [-l] [-w] [DIR|FILE]...",
		Short: "Format Rego files as opa fmt does",
		Long: `Formats every .rego file under the paths given (default: the current
directory) with OPA's formatter. Without flags the formatted files are
printed; -l lists the files whose formatting differs, -w rewrites them
(both together: list and rewrite). --fail exits with status 2 when a
file's formatting differs, for CI.

  pdp policy fmt -l my-policy
  pdp policy fmt -w my-policy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			changed := false
			for _, root := range args {
				err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() || filepath.Ext(path) != ".rego" {
						return err
					}
					differs, err := formatRegoFile(cmd, path, list, write)
					changed = changed || differs
					return err
				})
				if err != nil {
					return err
				}
			}
			if fail && changed {
				return failedStatus
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list the files whose formatting differs")
	cmd.Flags().BoolVarP(&write, "write", "w", false, "rewrite the files whose formatting differs")
	cmd.Flags().BoolVar(&fail, "fail", false, "exit with status 2 when a file's formatting differs")
	return cmd
}

// formatRegoFile formats one file, lists or rewrites it as asked, and
// says whether its formatting differed.
func formatRegoFile(cmd *cobra.Command, path string, list, write bool) (bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	formatted, err := format.SourceWithOpts(path, src, format.Opts{RegoVersion: ast.RegoV1, ParserOptions: &ast.ParserOptions{RegoVersion: ast.RegoV1}})
	if err != nil {
		return false, fmt.Errorf("formatting %s: %w", path, err)
	}
	differs := !bytes.Equal(src, formatted)
	switch {
	case list || write:
		if differs && list {
			fmt.Fprintln(cmd.OutOrStdout(), path)
		}
		if differs && write {
			info, err := os.Stat(path)
			if err != nil {
				return differs, err
			}
			if err := os.WriteFile(path, formatted, info.Mode().Perm()); err != nil {
				return differs, fmt.Errorf("rewriting %s: %w", path, err)
			}
		}
	default:
		if _, err := cmd.OutOrStdout().Write(formatted); err != nil {
			return differs, err
		}
	}
	return differs, nil
}

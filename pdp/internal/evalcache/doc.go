// Package evalcache is the engine's speed-up layer under OPA's evaluator:
// what one compiled policy lets its evaluations reuse, and the caches
// that hold it. It changes no answer: every evaluation with its cache
// answers as OPA's plain evaluation of the same policy and input does.
//
//   - Analyse reads a compiled policy once: its constants (rules of the
//     data alone, evaluated now), its session facts (rules of the parts
//     of the input the caller names in Paths.Facts, evaluated once per
//     projection met twice) and the rules a decision's later round may
//     take from the one before (those that cannot read Paths.Late).
//   - Start gives one evaluation its virtual-document cache (Eval), which
//     serves those values and, below them, a flat table of what the
//     evaluation itself computes (topdown's own cache with fewer
//     allocations).
//   - Memo remembers whole outcomes per input key (InputKey), bounded in
//     bytes; GrowStack readies a goroutine's stack for topdown's recursion.
package evalcache

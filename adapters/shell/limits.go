package shell

import (
	"context"

	"github.com/toolperm/pdp/pdp"
	"mvdan.cc/sh/v3/syntax"
)

// Limits bound what one command may hold before the adapter judges it.
// Past any of them the command is not parsed: Facts.Parsed is false (never
// grantable, screened in SMART) and Facts.Limit names the limit. A zero
// field takes its default from DefaultLimits.
type Limits struct {
	// MaxBytes is the length of the command string.
	MaxBytes int
	// MaxParsedBytes is what one decision may parse in all: the command
	// and every sh -c or eval body parsed again.
	MaxParsedBytes int
	// MaxCommands is the number of simple commands, bodies included.
	MaxCommands int
	// MaxOperators counts control operators (; newline && || | |& & !)
	// and the operators of arithmetic and [[ ]] expressions, bodies
	// included.
	MaxOperators int
	// MaxDepth is how deep substitutions ($( ), backticks, <( ), >( )),
	// subshells, groups, compound commands, parameter and arithmetic
	// expansions may nest, sh -c and eval bodies counting one level each.
	MaxDepth int
	// MaxBodies is how many sh -c and eval bodies are parsed again.
	MaxBodies int
}

// DefaultLimits are generous for any command a person would write and
// keep the cost of the largest command still parsed to milliseconds.
var DefaultLimits = Limits{
	MaxBytes:       64 << 10,
	MaxParsedBytes: 256 << 10,
	MaxCommands:    1000,
	MaxOperators:   1000,
	MaxDepth:       16,
	MaxBodies:      64,
}

// Names of the limits, as Facts.Limit gives them.
const (
	LimitBytes       = "bytes"
	LimitParsedBytes = "parsed_bytes"
	LimitCommands    = "commands"
	LimitOperators   = "operators"
	LimitDepth       = "depth"
	LimitBodies      = "bodies"
	LimitControl     = "control_character"
	LimitCancelled   = "cancelled"
)

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return Limits{
		MaxBytes:       pick(l.MaxBytes, d.MaxBytes),
		MaxParsedBytes: pick(l.MaxParsedBytes, d.MaxParsedBytes),
		MaxCommands:    pick(l.MaxCommands, d.MaxCommands),
		MaxOperators:   pick(l.MaxOperators, d.MaxOperators),
		MaxDepth:       pick(l.MaxDepth, d.MaxDepth),
		MaxBodies:      pick(l.MaxBodies, d.MaxBodies),
	}
}

// budget is the work left for one decision, shared by the command and
// every body parsed again from it.
type budget struct {
	ctx       context.Context
	lim       Limits
	bytes     int
	commands  int
	operators int
	bodies    int
}

func newBudget(ctx context.Context, lim Limits) *budget {
	if ctx == nil {
		ctx = context.Background()
	}
	return &budget{ctx: ctx, lim: lim}
}

// spendBytes charges a text about to be parsed; nothing is charged when
// it is refused.
func (b *budget) spendBytes(n int) *pdp.Error {
	if n > b.lim.MaxBytes {
		return pdp.Invalid(LimitBytes, "command of %d bytes is over the limit of %d bytes", n, b.lim.MaxBytes)
	}
	if b.bytes+n > b.lim.MaxParsedBytes {
		return pdp.Invalid(LimitParsedBytes, "more than %d bytes to parse with the sh -c and eval bodies", b.lim.MaxParsedBytes)
	}
	b.bytes += n
	return nil
}

func (b *budget) spendBody() *pdp.Error {
	if b.bodies++; b.bodies > b.lim.MaxBodies {
		return pdp.Invalid(LimitBodies, "more than %d sh -c or eval bodies", b.lim.MaxBodies)
	}
	return nil
}

func (b *budget) cancelled() *pdp.Error {
	if err := b.ctx.Err(); err != nil {
		return pdp.Invalid(LimitCancelled, "parsing stopped: %v", err)
	}
	return nil
}

// checkControl refuses a control character other than tab and newline
// anywhere in the text. Bash keeps a carriage return inside the word it
// is in, while the parser takes it for a blank (and drops it before a
// newline, even inside quotes, and drops NUL bytes): what the policy
// would judge is not what runs.
func checkControl(command string) *pdp.Error {
	for i := 0; i < len(command); i++ {
		if c := command[i]; (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return pdp.Invalid(LimitControl, "control character %U at byte %d", rune(c), i)
		}
	}
	return nil
}

// measure walks the parsed tree without recursion, and charges its
// simple commands and operators to the budget and checks its nesting.
// Every later walk of the tree (which recurses) is bounded by what this
// one let through: chains of operators by MaxOperators, nesting by
// MaxDepth.
func (b *budget) measure(file *syntax.File, depth0 int) *pdp.Error {
	type item struct {
		node  syntax.Node
		depth int
	}
	stack := []item{{file, depth0}}
	visited := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		depth := it.depth
		if nests(it.node) {
			if depth++; depth > b.lim.MaxDepth {
				return pdp.Invalid(LimitDepth, "nested deeper than %d levels", b.lim.MaxDepth)
			}
		}
		b.commands += commandsOf(it.node)
		if b.commands > b.lim.MaxCommands {
			return pdp.Invalid(LimitCommands, "more than %d simple commands", b.lim.MaxCommands)
		}
		b.operators += operatorsOf(it.node)
		if b.operators > b.lim.MaxOperators {
			return pdp.Invalid(LimitOperators, "more than %d operators", b.lim.MaxOperators)
		}
		if visited++; visited%4096 == 0 {
			if err := b.cancelled(); err != nil {
				return err
			}
		}
		// syntax.Walk calls fn on the node itself, then on each child;
		// answering false for the children keeps it one level deep.
		self := true
		syntax.Walk(it.node, func(n syntax.Node) bool {
			if self {
				self = false
				return true
			}
			if n != nil {
				stack = append(stack, item{n, depth})
			}
			return false
		})
	}
	return nil
}

// nests reports the nodes that open a nesting level.
func nests(n syntax.Node) bool {
	switch n.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Subshell, *syntax.Block,
		*syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause,
		*syntax.FuncDecl, *syntax.TimeClause, *syntax.CoprocClause, *syntax.ArithmCmd,
		*syntax.ArithmExp, *syntax.ParamExp, *syntax.TestClause, *syntax.ParenArithm,
		*syntax.ParenTest, *syntax.ExtGlob:
		return true
	}
	return false
}

func commandsOf(n syntax.Node) int {
	if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
		return 1
	}
	return 0
}

// operatorsOf counts the operators a node adds. An elif counts as one,
// so that a chain of them is bounded like a chain of && or |.
func operatorsOf(n syntax.Node) int {
	ops := 0
	switch n := n.(type) {
	case *syntax.File:
		ops = separators(len(n.Stmts))
	case *syntax.Stmt:
		if n.Negated {
			ops++
		}
		if n.Background || n.Coprocess {
			ops++
		}
	case *syntax.BinaryCmd, *syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.BinaryTest, *syntax.UnaryTest:
		ops = 1
	case *syntax.Subshell:
		ops = separators(len(n.Stmts))
	case *syntax.Block:
		ops = separators(len(n.Stmts))
	case *syntax.CmdSubst:
		ops = separators(len(n.Stmts))
	case *syntax.ProcSubst:
		ops = separators(len(n.Stmts))
	case *syntax.IfClause:
		ops = separators(len(n.Cond)) + separators(len(n.Then))
		if n.Else != nil {
			ops++
		}
	case *syntax.WhileClause:
		ops = separators(len(n.Cond)) + separators(len(n.Do))
	case *syntax.ForClause:
		ops = separators(len(n.Do))
	case *syntax.CaseItem:
		ops = separators(len(n.Stmts))
	}
	return ops
}

func separators(stmts int) int {
	if stmts > 1 {
		return stmts - 1
	}
	return 0
}

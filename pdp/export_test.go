package pdp

// EvaluatePlainly makes p evaluate as OPA does, without the memo and
// without anything the speed-up layer keeps between evaluations.
func EvaluatePlainly(p *Policy) { p.plain = true }

// ForgetKept drops what p's evaluations kept between them (function
// results, session facts): the next evaluation starts as the first under
// p would. Its memo of answers stays.
func ForgetKept(p *Policy) { p.reuse.Forget() }

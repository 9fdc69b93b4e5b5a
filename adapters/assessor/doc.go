// Package assessor judges shell commands for the SMART level with an LLM
// behind any OpenAI-compatible chat-completions endpoint. It fails closed:
// only a reply that is exactly SAFE is safe; every error, timeout, odd
// reply or open circuit is DANGEROUS. Verdicts are cached per exact
// command text, identical concurrent commands share one call, and a
// circuit breaker stops calling an endpoint that keeps failing.
package assessor

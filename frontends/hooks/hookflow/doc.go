// Package hookflow is what every agent's tool hook does, whatever the
// agent: take the call an agent adapter read from the agent's own event,
// ask the PDP (a server, or an engine in this process), hold an ask for
// a person's answer where the agent has no ask of its own, record what
// became of an ask the agent showed, and hand the verdict back to the
// adapter, which writes it in the agent's own shape.
//
// Every failure is a deny verdict: an agent that gets no answer it can
// read runs the tool.
package hookflow

package pdp

import (
	"context"

	"github.com/toolperm/pdp/api"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The core traces a decision through OpenTelemetry's API alone
// (go.opentelemetry.io/otel/trace): Components.Tracer, when set, starts
// the engine's spans under the caller's; the SDK and the exporters are
// wired by internal/app. Without a tracer nothing is started, built
// or allocated: every span is noSpan.

// Span names of a decision. The front end (frontends/httpapi) starts the
// request's span, SpanValidate, SpanSessionRead and SpanAskWait; the
// engine SpanDecide and, under it, SpanEvaluate and SpanAuditCommit.
const (
	SpanValidate    = "pdp.validate"
	SpanSessionRead = "pdp.session.read"
	SpanDecide      = "pdp.decide"
	SpanEvaluate    = "pdp.evaluate"
	SpanAuditCommit = "pdp.audit.commit"
	SpanAskWait     = "pdp.ask.wait"
)

// Attribute keys a decision's span carries. AttrCommand is set only
// where Components.TraceCommand allows it.
const (
	AttrDecision   = attribute.Key("pdp.decision")
	AttrRule       = attribute.Key("pdp.rule")
	AttrSource     = attribute.Key("pdp.source")
	AttrLevel      = attribute.Key("pdp.level")
	AttrCapability = attribute.Key("pdp.capability")
	AttrDecisionID = attribute.Key("pdp.decision_id")
	AttrSessionID  = attribute.Key("pdp.session_id")
	AttrTool       = attribute.Key("pdp.tool")
	AttrRevision   = attribute.Key("pdp.policy.revision")
	AttrCommand    = attribute.Key("pdp.command")
)

// noSpan is the span of an engine without a tracer: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// span starts a span under ctx's when tracing is on; otherwise it
// returns ctx as it is and noSpan.
func (e *Engine) span(ctx context.Context, name string) (context.Context, trace.Span) {
	if e.c.Tracer == nil {
		return ctx, noSpan
	}
	return e.c.Tracer.Start(ctx, name)
}

// traced records on span what was decided for call, and err as the
// span's status.
func (e *Engine) traced(span trace.Span, call Call, d api.Decision, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(DecisionAttributes(d)...)
	level := api.ReadOnly
	if call.Session != nil && call.Session.PermissionLevel != "" {
		level = call.Session.PermissionLevel
	}
	span.SetAttributes(AttrLevel.String(string(level)), AttrSessionID.String(call.Request.SessionID), AttrTool.String(call.Request.Tool))
	if cmd, ok := e.commandText(call.Request); ok {
		span.SetAttributes(AttrCommand.String(cmd))
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
}

// DecisionAttributes are the attributes of an answer: decision, rule,
// source, capability, decision id and policy revision — never the
// call's arguments.
func DecisionAttributes(d api.Decision) []attribute.KeyValue {
	attrs := []attribute.KeyValue{AttrDecision.String(d.Decision), AttrRule.String(d.Rule), AttrSource.String(d.Source),
		AttrDecisionID.String(d.DecisionID), AttrRevision.String(d.Revision)}
	if d.Capability != nil {
		attrs = append(attrs, AttrCapability.String(*d.Capability))
	}
	return attrs
}

// commandText is the call's command string when Components.TraceCommand
// allows the argument it is read from on a span.
func (e *Engine) commandText(req api.DecideRequest) (string, bool) {
	if e.c.TraceCommand == nil {
		return "", false
	}
	p := e.policy.Load()
	if p == nil {
		return "", false
	}
	name := commandArgName(p.catalogue.Lookup(req.Runtime, req.Tool))
	if name == "" || !e.c.TraceCommand(name) {
		return "", false
	}
	raw, _ := Argument(req.Args, name)
	cmd, ok := raw.(string)
	return cmd, ok && cmd != ""
}

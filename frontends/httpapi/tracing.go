package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// WaitObserver is told of every request that waits for a person's
// answer (GET /v1/decisions/{id}?wait=, a hook holding an ask), for
// metrics; the API's Observer may implement it.
type WaitObserver interface {
	// Waiting is told that a wait starts; the func it returns is told
	// how it ended: answered, timeout, stopping (the server shuts
	// down), gone (the caller left) or error (the store failed).
	Waiting() (ended func(result string))
}

// traceContext reads the W3C traceparent and tracestate headers.
var traceContext = propagation.TraceContext{}

// noSpan records nothing: every span when the API has no tracer.
var noSpan = trace.SpanFromContext(context.Background())

// traceRoute starts the request's span on the routes a decision passes
// through, continuing the caller's trace when its headers carry a
// traceparent; the decision's spans are its children. Without a tracer
// it only calls next.
func (s *Server) traceRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.cfg.Tracer == nil {
			return next(c)
		}
		r := c.Request()
		route := c.Path()
		ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.cfg.Tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
		defer span.End()
		c.SetRequest(r.WithContext(ctx))
		err := next(c)
		if err != nil {
			c.Error(err) // the status the caller gets, for the span
		}
		code := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", code))
		if id, ok := c.Get(decisionIDKey).(string); ok {
			span.SetAttributes(pdp.AttrDecisionID.String(id))
		}
		if code >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(code))
		}
		return nil
	}
}

// span starts a child span of ctx's when tracing is on.
func (s *Server) span(ctx context.Context, name string) (context.Context, trace.Span) {
	if s.cfg.Tracer == nil {
		return ctx, noSpan
	}
	return s.cfg.Tracer.Start(ctx, name)
}

// waiting starts a wait for a person's answer to decision id, of at most
// wait: its span and the observer's count. The returned func ends both
// with how the wait ended (WaitObserver).
func (s *Server) waiting(ctx context.Context, id string, wait time.Duration) func(result string) {
	_, span := s.span(ctx, pdp.SpanAskWait)
	if span.IsRecording() {
		span.SetAttributes(pdp.AttrDecisionID.String(id), attribute.Float64("pdp.wait.max_seconds", wait.Seconds()))
	}
	observed := func(string) {}
	if o, ok := s.cfg.Observer.(WaitObserver); ok {
		observed = o.Waiting()
	}
	return func(result string) {
		observed(result)
		if span.IsRecording() {
			span.SetAttributes(attribute.String("pdp.wait.result", result))
		}
		span.End()
	}
}

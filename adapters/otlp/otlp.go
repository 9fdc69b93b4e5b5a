// Package otlp exports the decision point's traces over OTLP, set up as
// OpenTelemetry's OTEL_* variables say (with the configuration's keys
// where a variable is unset): gRPC or HTTP with protobuf, the
// collector's endpoint, headers, certificates, sampler and service name.
// The core and the API trace through OpenTelemetry's API alone;
// internal/app hands them the tracer built here.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Protocols an exporter speaks (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	GRPC         = "grpc"
	HTTPProtobuf = "http/protobuf"
)

// ScopeName names the tracer of the decision point's spans.
const ScopeName = "github.com/toolperm/pdp"

// Settings are the configuration's keys (config.OTel); the OTEL_*
// variables win over each.
type Settings struct {
	Endpoint       string // OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL
	TracesEndpoint string // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the URL as it is
	Protocol       string // OTEL_EXPORTER_OTLP_PROTOCOL: grpc or http/protobuf
	// ServiceVersion is the resource's service.version.
	ServiceVersion string
}

// Tracing is a running exporter and the tracer that feeds it.
type Tracing struct {
	// Tracer starts the decision point's spans.
	Tracer   trace.Tracer
	Protocol string
	provider *sdktrace.TracerProvider
}

// Plan is what Open will do: whether traces are exported, and how.
type Plan struct {
	On       bool
	Protocol string
	// Endpoint is the URL given to the exporter from the configuration;
	// empty when the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT
	// itself.
	Endpoint string
}

// Resolve reads s under the OTEL_* variables getenv returns: tracing is
// on when an endpoint is set (in a variable or in s), unless
// OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none.
func Resolve(s Settings, getenv func(string) string) (Plan, error) {
	if v := getenv("OTEL_SDK_DISABLED"); v != "" {
		if off, err := strconv.ParseBool(v); err == nil && off {
			return Plan{}, nil
		}
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "", "otlp":
	case "none":
		return Plan{}, nil
	default:
		return Plan{}, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp or none", exp)
	}
	p := Plan{Protocol: firstOf(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), s.Protocol, HTTPProtobuf)}
	if p.Protocol != GRPC && p.Protocol != HTTPProtobuf {
		return Plan{}, fmt.Errorf("OTLP protocol %q: want %s or %s", p.Protocol, GRPC, HTTPProtobuf)
	}
	switch {
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		// The exporter reads them, as every OpenTelemetry SDK does.
		p.On = true
	case s.TracesEndpoint != "":
		p.On, p.Endpoint = true, s.TracesEndpoint
	case s.Endpoint != "":
		p.On, p.Endpoint = true, s.Endpoint
		if p.Protocol == HTTPProtobuf {
			p.Endpoint = strings.TrimRight(s.Endpoint, "/") + "/v1/traces"
		}
	}
	if !p.On {
		return Plan{}, nil
	}
	if p.Endpoint != "" && !strings.Contains(p.Endpoint, "://") {
		return Plan{}, fmt.Errorf("OTLP endpoint %q: want a URL such as http://collector:4318", p.Endpoint)
	}
	return p, nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Open starts the exporter p describes, behind a batching tracer
// provider whose sampler and limits the OTEL_TRACES_SAMPLER and OTEL_BSP_*
// variables set; nil when p is off. Nothing is sent while Open runs: a
// collector that is down costs dropped spans, never a decision.
func Open(ctx context.Context, p Plan, s Settings) (*Tracing, error) {
	if !p.On {
		return nil, nil
	}
	var client otlptrace.Client
	switch p.Protocol {
	case GRPC:
		var opts []otlptracegrpc.Option
		if p.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(p.Endpoint))
		}
		client = otlptracegrpc.NewClient(opts...)
	default:
		var opts []otlptracehttp.Option
		if p.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(p.Endpoint))
		}
		client = otlptracehttp.NewClient(opts...)
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("starting the OTLP trace exporter: %w", err)
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// over the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "pdp"), attribute.String("service.version", s.ServiceVersion)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Tracer: provider.Tracer(ScopeName), Protocol: p.Protocol, provider: provider}, nil
}

// Shutdown sends the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

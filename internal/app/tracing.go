package app

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/toolperm/pdp/adapters/decisionlog"
	"github.com/toolperm/pdp/adapters/otlp"
	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/internal/config"
)

// tracingShutdownTimeout bounds sending the last spans on Close.
const tracingShutdownTimeout = 5 * time.Second

// otelSettings are the exporter's settings of the configuration.
func otelSettings(cfg config.OTel) otlp.Settings {
	return otlp.Settings{Endpoint: cfg.ExporterOTLPEndpoint, TracesEndpoint: cfg.ExporterOTLPTracesEndpoint,
		Protocol: cfg.ExporterOTLPProtocol, ServiceVersion: buildinfo.Read().Version}
}

// openTracing starts the OTLP exporter cfg.OTel and the OTEL_*
// variables describe; nil when neither sets an endpoint (tracing off).
func (s *Service) openTracing(ctx context.Context, cfg config.OTel, logger *slog.Logger) (*otlp.Tracing, error) {
	settings := otelSettings(cfg)
	plan, err := otlp.Resolve(settings, os.Getenv)
	if err != nil {
		return nil, err
	}
	t, err := otlp.Open(ctx, plan, settings)
	if t == nil || err != nil {
		return nil, err
	}
	// Closed last but for the logger: every decision's spans have ended.
	s.onClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			logger.Warn("sending the last traces", "err", err)
		}
	})
	logger.Info("tracing decisions over OTLP", "protocol", t.Protocol)
	return t, nil
}

// traceCommand says whether a decision's span may carry the command
// read from an argument: only where the decision log exports arguments
// and does not mask that one.
func traceCommand(cfg config.DecisionLog) func(arg string) bool {
	if cfg.Path == "" {
		return nil
	}
	return func(arg string) bool { return !decisionlog.MasksKey(cfg.Mask, arg) }
}

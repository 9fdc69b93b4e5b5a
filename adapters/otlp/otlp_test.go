package otlp

import "testing"

// TestResolve: tracing is on when an endpoint is set, in an OTEL_*
// variable or in the configuration, the variables winning; the protocol
// is grpc or http/protobuf (the default); OTEL_SDK_DISABLED and
// OTEL_TRACES_EXPORTER=none turn it off.
func TestResolve(t *testing.T) {
	for name, tc := range map[string]struct {
		s    Settings
		env  map[string]string
		want Plan
		bad  bool
	}{
		"nothing set: off":           {want: Plan{}},
		"variable endpoint, default": {env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: Plan{On: true, Protocol: HTTPProtobuf}},
		"variable traces endpoint, grpc": {env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: Plan{On: true, Protocol: GRPC}},
		"traces protocol wins":          {env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, want: Plan{On: true, Protocol: GRPC}},
		"config base URL, http":         {s: Settings{Endpoint: "http://c:4318/"}, want: Plan{On: true, Protocol: HTTPProtobuf, Endpoint: "http://c:4318/v1/traces"}},
		"config base URL, grpc":         {s: Settings{Endpoint: "http://c:4317", Protocol: "grpc"}, want: Plan{On: true, Protocol: GRPC, Endpoint: "http://c:4317"}},
		"config traces URL as it is":    {s: Settings{Endpoint: "http://c:4318", TracesEndpoint: "https://c/otlp/traces"}, want: Plan{On: true, Protocol: HTTPProtobuf, Endpoint: "https://c/otlp/traces"}},
		"variable over config":          {s: Settings{Endpoint: "http://config:4318"}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"}, want: Plan{On: true, Protocol: HTTPProtobuf}},
		"variable protocol over config": {s: Settings{Endpoint: "http://c:4317", Protocol: "http/protobuf"}, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: Plan{On: true, Protocol: GRPC, Endpoint: "http://c:4317"}},
		"sdk disabled":                  {s: Settings{Endpoint: "http://c:4318"}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: Plan{}},
		"traces exporter none":          {env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, want: Plan{}},
		"http/json refused":             {s: Settings{Endpoint: "http://c:4318", Protocol: "http/json"}, bad: true},
		"another exporter refused":      {env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, bad: true},
		"an endpoint without a scheme":  {s: Settings{Endpoint: "c:4317", Protocol: "grpc"}, bad: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(tc.s, func(k string) string { return tc.env[k] })
			if (err != nil) != tc.bad {
				t.Fatalf("error %v, want one: %v", err, tc.bad)
			}
			if !tc.bad && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

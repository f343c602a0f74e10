package tracing

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// CheckEndpoint checks an OTLP/HTTP endpoint URL: http or https, with a host.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q: give the collector's OTLP/HTTP URL, such as http://localhost:4318 (the traces path /v1/traces is added when it has none)", ErrEndpoint, endpoint)
	}
	return nil
}

// OTLP is a tracer provider that batches spans to the OTLP/HTTP collector at
// endpoint (its traces path /v1/traces unless the URL names one), naming the
// service node. Nothing is sent until a span ends; the caller shuts it down,
// which sends what is left.
func OTLP(endpoint, node string) (*sdktrace.TracerProvider, error) {
	if err := CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	u, _ := url.Parse(endpoint)
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEndpoint, err)
	}
	res := resource.NewSchemaless(semconv.ServiceName("capdir"), semconv.ServiceInstanceID(node))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

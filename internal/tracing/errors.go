package tracing

import "errors"

// ErrEndpoint: the OTLP endpoint (--otel-endpoint) is not an http or https URL.
var ErrEndpoint = errors.New("tracing: bad --otel-endpoint")

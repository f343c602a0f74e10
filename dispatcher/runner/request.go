package runner

// OutboundRequest is a request as the dispatcher builds it, before it is sent: what
// ApplyAuth adds a credential to and what shape mode shows (after redaction).
type OutboundRequest struct {
	Method string
	URL    string
	// Headers maps a header name, as written by the row, to its value.
	Headers map[string]string
	Body    string
}

// SetHeader sets a header, allocating the map on first use.
func (r *OutboundRequest) SetHeader(name, value string) {
	if r.Headers == nil {
		r.Headers = make(map[string]string)
	}
	r.Headers[name] = value
}

// Shape is the shape-mode view of r, not yet redacted.
func (r *OutboundRequest) Shape() map[string]any {
	h := make(map[string]any, len(r.Headers))
	for k, v := range r.Headers {
		h[k] = v
	}
	return map[string]any{
		"shape":   true,
		"method":  r.Method,
		"url":     r.URL,
		"headers": h,
		"body":    r.Body,
	}
}

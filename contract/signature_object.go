package contract

// ObjectOf is the object of named arguments a pipe body maps to, as CheckPipe
// reads it (each argument converted to the first type its property declares that
// it reads as), without validating it against the schema: what a runner that
// calls a tool by named arguments (an MCP tool) sends for a call the gate
// admitted in pipe form. ok is false for a signature that takes the whole body
// as one value, and for a body with more arguments than it maps.
func (s *Signature) ObjectOf(body string) (obj map[string]any, ok bool) {
	if s == nil || s.whole {
		return nil, false
	}
	obj, err := s.pipeInstance(body)
	return obj, err == nil
}

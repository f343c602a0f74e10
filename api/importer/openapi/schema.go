package openapi

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// schemas turns the spec's schemas into self-contained JSON Schema (draft
// 2020-12) for one operation's input_schema: a $ref to #/components/schemas/X
// becomes a $ref to #/$defs/X, with X's schema converted into defs (once, so a
// recursive schema stays a finite one). OpenAPI 3.0's dialect is translated:
// nullable becomes a "null" type, a boolean exclusiveMinimum/Maximum the number
// form; example, discriminator, xml, externalDocs and x- extensions are dropped.
type schemas struct {
	doc  *openapi3.T
	v30  bool
	defs map[string]any
}

func newSchemas(doc *openapi3.T) *schemas {
	return &schemas{doc: doc, v30: !doc.IsOpenAPI31OrLater(), defs: map[string]any{}}
}

// errRef is a $ref that cannot be resolved; its text is the reason.
type errRef struct{ ref, why string }

func (e errRef) Error() string { return refuseRef(e.ref, e.why) }

const componentRef = "#/components/schemas/"

// convert returns ref's schema as JSON Schema.
func (s *schemas) convert(ref *openapi3.SchemaRef) (any, error) {
	if ref == nil {
		return map[string]any{}, nil
	}
	raw, err := json.Marshal(ref)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return s.walk(v)
}

// Keywords whose value is a schema, an array of schemas, or a map of them.
var (
	schemaKeys    = []string{"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaLists   = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMaps    = []string{"properties", "patternProperties", "dependentSchemas", "$defs"}
	droppedKeys   = []string{"example", "discriminator", "xml", "externalDocs", "nullable"}
	errNotASchema = errors.New("a schema is neither an object nor a boolean")
)

func (s *schemas) walk(v any) (any, error) {
	switch v.(type) {
	case bool:
		return v, nil
	case map[string]any:
	default:
		return nil, errNotASchema
	}
	m := v.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		if err := s.def(ref); err != nil {
			return nil, err
		}
		m["$ref"] = "#/$defs/" + strings.TrimPrefix(ref, componentRef) // still JSON-pointer escaped
	}
	if s.v30 {
		s.dialect30(m)
	}
	for k := range m {
		if strings.HasPrefix(k, "x-") {
			delete(m, k)
		}
	}
	for _, k := range droppedKeys {
		delete(m, k)
	}
	for _, k := range schemaKeys {
		if sub, ok := m[k].(map[string]any); ok {
			w, err := s.walk(sub)
			if err != nil {
				return nil, err
			}
			m[k] = w
		}
	}
	for _, k := range schemaLists {
		list, _ := m[k].([]any)
		for i := range list {
			w, err := s.walk(list[i])
			if err != nil {
				return nil, err
			}
			list[i] = w
		}
	}
	for _, k := range schemaMaps {
		props, _ := m[k].(map[string]any)
		for name, sub := range props {
			w, err := s.walk(sub)
			if err != nil {
				return nil, err
			}
			props[name] = w
		}
	}
	return m, nil
}

// dialect30 translates OpenAPI 3.0's schema keywords into JSON Schema's.
func (s *schemas) dialect30(m map[string]any) {
	if nullable, _ := m["nullable"].(bool); nullable {
		switch t := m["type"].(type) {
		case string:
			m["type"] = []any{t, "null"}
		case []any:
			m["type"] = append(t, "null")
		}
	}
	for _, bound := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		ex, ok := m[bound[0]].(bool)
		if !ok {
			continue
		}
		delete(m, bound[0])
		if n, has := m[bound[1]]; ex && has {
			m[bound[0]] = n
			delete(m, bound[1])
		}
	}
}

// def converts the component schema ref names into defs, once.
func (s *schemas) def(ref string) error {
	if !strings.HasPrefix(ref, componentRef) {
		return errRef{ref, "it is not to #/components/schemas/…; only local component refs are resolved"}
	}
	name := refName(ref)
	if _, done := s.defs[name]; done {
		return nil
	}
	var comp *openapi3.SchemaRef
	if s.doc.Components != nil {
		comp = s.doc.Components.Schemas[name]
	}
	switch {
	case comp == nil:
		return errRef{ref, "no such component schema"}
	case comp.Value == nil:
		return errRef{ref, "it is a cycle of $refs that never reaches a schema"}
	}
	s.defs[name] = true // a placeholder while its own refs are converted
	v, err := s.convert(&openapi3.SchemaRef{Value: comp.Value})
	if err != nil {
		return err
	}
	s.defs[name] = v
	return nil
}

// refName is the component name of a #/components/schemas/ ref, JSON-pointer
// unescaped.
func refName(ref string) string {
	name := strings.TrimPrefix(ref, componentRef)
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
}

// typed gives a schema that is a $ref the type its target declares, so that the
// gate reads a pipe argument as that type (JSON text for an object).
func (s *schemas) typed(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	target := m
	for range 8 { // a chain of refs, not a cycle
		ref, isRef := target["$ref"].(string)
		if _, has := target["type"]; has || !isRef {
			break
		}
		def, _ := s.defs[refName(strings.TrimPrefix(ref, "#/$defs/"))].(map[string]any)
		if def == nil {
			return v
		}
		target = def
	}
	if t, has := target["type"]; has && m["type"] == nil {
		m["type"] = t
	}
	return m
}

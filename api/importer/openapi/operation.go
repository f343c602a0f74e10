package openapi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/contract"
	"github.com/getkin/kin-openapi/openapi3"
)

// bodyArg names the argument that carries an operation's JSON request body.
const bodyArg = "body"

// maxDocLine caps one docstring line taken from the spec.
const maxDocLine = 400

// maxExamples caps the examples one row gets from the spec.
const maxExamples = 3

// converter turns one operation into an Item.
type converter struct {
	doc    *openapi3.T
	opt    Options
	op     op
	source string
	server string

	rowServer string // the server of the row's target: the operation's, the path's or server
	env       string // the environment variable of the row's credential, if it has one

	schemas *schemas
	args    []arg
	notes   []string
}

// arg is one argument of the row: a path or query parameter, or the body.
type arg struct {
	name     string
	in       string // "path", "query" or "body"
	required bool
	schema   any
	examples []any
}

// refusal ends an operation's conversion with its reason.
type refusal string

func (c *converter) item() (it importer.Item) {
	it = importer.Item{Source: c.op.method + " " + c.op.path}
	defer func() {
		if p := recover(); p != nil {
			r, ok := p.(refusal)
			if !ok {
				panic(p)
			}
			it = importer.Item{Source: it.Source, Key: it.Key, Refused: string(r)}
		}
	}()
	it.Key = c.key()
	if err := contract.ValidateKey(it.Key); err != nil {
		panic(refusal(refuseKey(it.Key, err)))
	}
	if !slices.Contains(contract.HTTPMethods, c.op.method) {
		panic(refusal(fmt.Sprintf("method %s is not one an http row can send (%s)", c.op.method, strings.Join(contract.HTTPMethods, ", "))))
	}
	c.schemas = newSchemas(c.doc)
	server := c.operationServer()
	c.rowServer = server
	params := c.parameters()
	path := c.pathTemplate(params)
	query := c.queryTemplate(params)
	c.otherParameters(params)
	c.body()
	auth := c.auth()
	row := &contract.Row{
		Key:      it.Key,
		Type:     contract.TypeHTTP,
		Target:   c.op.method + " " + server + path + query,
		Auth:     auth,
		Content:  c.content(),
		Category: c.category(),
	}
	row.InputSchema = c.inputSchema()
	row.Examples = c.examples()
	if c.op.op.Deprecated {
		c.notes = append(c.notes, "the operation is deprecated")
	}
	it.Row, it.Notes = row, c.notes
	return it
}

func (c *converter) fail(reason string) { panic(refusal(reason)) }

// key is the operation's row key: its operationId, or METHOD and path.
func (c *converter) key() string {
	if id := c.op.op.OperationID; importer.Key("", id) != "" {
		return importer.Key(c.opt.Prefix, id)
	}
	return importer.Key(c.opt.Prefix, c.op.method+"_"+strings.NewReplacer("{", "", "}", "").Replace(c.op.path))
}

// operationServer is the operation's own server (operation, then path item), or
// the spec's.
func (c *converter) operationServer() string {
	if c.opt.Server != "" {
		return c.server
	}
	for _, servers := range []*openapi3.Servers{c.op.op.Servers, &c.op.item.Servers} {
		if servers != nil && len(*servers) > 0 {
			u, why := serverURL(*servers, c.opt.Base)
			if why != "" {
				c.fail(refuseServer(u, why))
			}
			return u
		}
	}
	return c.server
}

// parameters merges the path item's parameters with the operation's (which win),
// keyed by location and name.
func (c *converter) parameters() map[string]*openapi3.Parameter {
	params := map[string]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{c.op.item.Parameters, c.op.op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			params[ref.Value.In+" "+ref.Value.Name] = ref.Value
		}
	}
	return params
}

// pathTemplate is the path with each {name} a slot; the path parameters become
// arguments in the order the path names them. A path must begin with '/': one
// that does not ("@host/…", ".host/…", ":port/…") would change the server's
// origin, to which the row's credential goes.
func (c *converter) pathTemplate(params map[string]*openapi3.Parameter) string {
	if !strings.HasPrefix(c.op.path, "/") {
		c.fail(refusePathStart(c.op.path))
	}
	var b strings.Builder
	rest := c.op.path
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(c.literal(rest))
			break
		}
		b.WriteString(c.literal(rest[:open]))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			c.fail(refusePath(c.op.path))
		}
		name := rest[open+1 : open+end]
		if strings.ContainsFunc(name, unicode.IsSpace) {
			c.fail(refusePath(c.op.path))
		}
		rest = rest[open+end+1:]
		p := params["path "+name]
		a := arg{name: name, in: "path", required: true, schema: map[string]any{"type": "string"}}
		if p != nil {
			a = c.paramArg(p)
			a.required = true
			if t := schemaType(p); t == "array" || t == "object" {
				c.fail(refuseComplexParam("path", name, t))
			}
		} else {
			c.notes = append(c.notes, fmt.Sprintf("path parameter %q is not declared; it is taken as a string", name))
		}
		b.WriteString("$" + strconv.Itoa(c.add(a)))
	}
	return b.String()
}

// literal checks and escapes a literal piece of the path.
func (c *converter) literal(s string) string {
	if strings.ContainsAny(s, "$}") || strings.ContainsAny(s, " \t\r\n") {
		c.fail(refusePath(c.op.path))
	}
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// queryTemplate is "?name=$N&…" for the query parameters, in name order.
func (c *converter) queryTemplate(params map[string]*openapi3.Parameter) string {
	var pairs []string
	for _, k := range sortedKeys(params) {
		p := params[k]
		if p.In != "query" {
			continue
		}
		if t := schemaType(p); (t == "array" || t == "object") && p.Content == nil {
			if p.Required {
				c.fail(refuseComplexParam("query", p.Name, t))
			}
			c.notes = append(c.notes, fmt.Sprintf("optional query parameter %q (%s) is not sent: a URL slot carries one value", p.Name, t))
			continue
		}
		n := c.add(c.paramArg(p))
		pairs = append(pairs, url.QueryEscape(p.Name)+"=$"+strconv.Itoa(n))
	}
	if len(pairs) == 0 {
		return ""
	}
	return "?" + strings.Join(pairs, "&")
}

// otherParameters refuses the operation for a required header or cookie
// parameter, and notes the optional ones it leaves out.
func (c *converter) otherParameters(params map[string]*openapi3.Parameter) {
	for _, k := range sortedKeys(params) {
		p := params[k]
		if p.In != "header" && p.In != "cookie" {
			continue
		}
		if p.Required {
			c.fail(refuseRequiredIn(p.In, p.Name))
		}
		c.notes = append(c.notes, fmt.Sprintf("optional %s parameter %q is not sent", p.In, p.Name))
	}
}

// body adds the JSON request body as the last argument, which takes the rest of
// the arguments ($N+), so a "|" inside it is kept.
func (c *converter) body() {
	rb := c.op.op.RequestBody
	if rb == nil || rb.Value == nil {
		return
	}
	media, name := jsonMedia(rb.Value.Content)
	if media == nil {
		types := sortedKeys(rb.Value.Content)
		if rb.Value.Required {
			c.fail(refuseBodyType(types))
		}
		c.notes = append(c.notes, fmt.Sprintf("the optional request body is not sent: it has no JSON media type (%v)", types))
		return
	}
	s, err := c.schemas.convert(media.Schema)
	if err != nil {
		c.fail(refuseSchema("the request body ("+name+")", err))
	}
	a := arg{name: bodyArg, in: "body", required: rb.Value.Required, schema: describe(s, rb.Value.Description)}
	a.examples = mediaExamples(media)
	c.add(a)
}

// add appends a, refusing a second argument of one name; it returns a's position.
func (c *converter) add(a arg) int {
	for _, o := range c.args {
		if o.name == a.name {
			c.fail(refuseArgCollision(a.name))
		}
	}
	c.args = append(c.args, a)
	return len(c.args)
}

// paramArg is p as an argument: its schema (or its content's), described.
func (c *converter) paramArg(p *openapi3.Parameter) arg {
	ref := p.Schema
	var media *openapi3.MediaType
	if ref == nil && p.Content != nil {
		media, _ = jsonMedia(p.Content)
		if media == nil {
			for _, m := range p.Content {
				media = m
				break
			}
		}
		if media != nil {
			ref = media.Schema
		}
	}
	s, err := c.schemas.convert(ref)
	if err != nil {
		c.fail(refuseSchema(fmt.Sprintf("%s parameter %q", p.In, p.Name), err))
	}
	a := arg{name: p.Name, in: p.In, required: p.Required, schema: describe(s, p.Description)}
	switch {
	case p.Example != nil:
		a.examples = []any{p.Example}
	case len(p.Examples) > 0:
		for _, k := range sortedKeys(p.Examples) {
			if e := p.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
				a.examples = append(a.examples, e.Value.Value)
			}
		}
	case media != nil:
		a.examples = mediaExamples(media)
	default:
		a.examples = schemaExamples(ref)
	}
	return a
}

// inputSchema is the object whose properties are the arguments, in order, with
// the required ones listed, and the component schemas they use under $defs. A
// schema capdir cannot compile refuses the operation.
func (c *converter) inputSchema() string {
	if len(c.args) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(mustJSON(a.name) + ":" + mustJSON(c.schemas.typed(a.schema)))
		if a.required {
			required = append(required, a.name)
		}
	}
	b.WriteByte('}')
	if len(required) > 0 {
		b.WriteString(`,"required":` + mustJSON(required))
	}
	if len(c.schemas.defs) > 0 {
		b.WriteString(`,"$defs":` + mustJSON(c.schemas.defs))
	}
	b.WriteByte('}')
	s := b.String()
	if _, err := contract.CompileSchema(s); err != nil {
		c.fail(refuseSchema("the parameters and request body", err))
	}
	return s
}

// content is the docstring, then the body template.
func (c *converter) content() string {
	o := c.op.op
	var lines []string
	what, when := docText(o.Summary), docText(o.Description)
	if what == "" {
		what = firstSentence(when)
	}
	if what == "" && o.OperationID != "" {
		what = strings.ToLower(strings.ReplaceAll(importer.Key("", o.OperationID), "_", " ")) + " (" + c.op.method + " " + c.op.path + ")"
	}
	if what == "" {
		what = c.op.method + " " + c.op.path
	}
	if when == what {
		when = ""
	}
	lines = append(lines, "# WHAT: "+what)
	if when != "" {
		lines = append(lines, "# WHEN_TO_USE: "+when)
	}
	if len(c.args) > 0 {
		var pos []string
		for i, a := range c.args {
			p := "$" + strconv.Itoa(i+1)
			if a.in == "body" {
				p += "+"
			}
			pos = append(pos, p+"="+a.name)
		}
		lines = append(lines, "# ARGS: "+strings.Join(pos, " | "))
	}
	if out := c.output(); out != "" {
		lines = append(lines, "# OUTPUT: "+out)
	}
	lines = append(lines, importer.SourceLine(c.source, c.op.method+" "+c.op.path))
	for i, l := range lines { // a name or path of the spec is one line, or it could write a SOURCE line of another import
		lines[i] = oneLine(l)
	}
	for i, a := range c.args {
		if a.in == "body" {
			lines = append(lines, "$"+strconv.Itoa(i+1)+"+")
		}
	}
	return strings.Join(lines, "\n")
}

// output describes the success response: the lowest 2xx, else default.
func (c *converter) output() string {
	if c.op.op.Responses == nil {
		return ""
	}
	all := c.op.op.Responses.Map()
	var codes []string
	for code := range all {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	code := "default"
	if len(codes) > 0 {
		code = codes[0]
	}
	r := all[code]
	if r == nil || r.Value == nil {
		return ""
	}
	out := ""
	if r.Value.Description != nil {
		out = docText(*r.Value.Description)
	}
	if types := sortedKeys(r.Value.Content); len(types) > 0 {
		out = strings.TrimSpace(out + " (" + code + ", " + strings.Join(types, ", ") + ")")
	} else if code != "default" {
		out = strings.TrimSpace(out + " (" + code + ", no body)")
	}
	return out
}

// category is --category, else the operation's first tag.
func (c *converter) category() string {
	if c.opt.Category != "" {
		return c.opt.Category
	}
	if len(c.op.op.Tags) > 0 {
		return c.op.op.Tags[0]
	}
	return ""
}

// examples are argument strings built from the spec's examples, when every
// required argument has one: the values in argument order, a string as it is and
// any other value as its compact JSON text.
func (c *converter) examples() string {
	n := 0
	for _, a := range c.args {
		n = max(n, len(a.examples))
		if a.required && len(a.examples) == 0 {
			return ""
		}
	}
	var out []string
	for i := 0; i < min(n, maxExamples); i++ {
		vals := make([]string, len(c.args))
		ok := true
		for j, a := range c.args {
			if len(a.examples) == 0 {
				continue
			}
			v := argText(a.examples[min(i, len(a.examples)-1)])
			if strings.Contains(v, "|") && a.in != "body" {
				ok = false
			}
			vals[j] = v
		}
		ex := strings.TrimRight(strings.Join(vals, "|"), "|")
		if ok && ex != "" && !slices.Contains(out, ex) {
			out = append(out, ex)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return mustJSON(out)
}

// jsonMedia picks the JSON media type of content: application/json, else any
// +json or json-like one.
func jsonMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	if m := content["application/json"]; m != nil {
		return m, "application/json"
	}
	for _, name := range sortedKeys(content) {
		if strings.HasSuffix(name, "+json") || strings.Contains(name, "/json") {
			return content[name], name
		}
	}
	return nil, ""
}

func mediaExamples(m *openapi3.MediaType) []any {
	if m.Example != nil {
		return []any{m.Example}
	}
	var out []any
	for _, k := range sortedKeys(m.Examples) {
		if e := m.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
			out = append(out, e.Value.Value)
		}
	}
	if len(out) > 0 {
		return out
	}
	return schemaExamples(m.Schema)
}

func schemaExamples(ref *openapi3.SchemaRef) []any {
	if ref == nil || ref.Value == nil {
		return nil
	}
	if ref.Value.Example != nil {
		return []any{ref.Value.Example}
	}
	return ref.Value.Examples
}

// schemaType is the parameter's single declared type, if any.
func schemaType(p *openapi3.Parameter) string {
	if p.Schema == nil || p.Schema.Value == nil || p.Schema.Value.Type == nil {
		return ""
	}
	for _, t := range p.Schema.Value.Type.Slice() {
		if t != "null" {
			return t
		}
	}
	return ""
}

// describe adds a description to a schema object that has none.
func describe(s any, desc string) any {
	m, ok := s.(map[string]any)
	if desc = docText(desc); ok && desc != "" {
		if _, has := m["description"]; !has {
			m["description"] = desc
		}
	}
	return s
}

// argText is an example value as a pipe argument.
func argText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return mustJSON(v)
}

// docText is s on one line, at most maxDocLine bytes.
func docText(s string) string {
	s = oneLine(s)
	if len(s) > maxDocLine {
		cut := maxDocLine
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// firstSentence is s up to its first ". ".
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(refusal("a value of the spec cannot be written as JSON: " + err.Error()))
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

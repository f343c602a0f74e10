package mcp

import (
	"slices"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/internal/jsonenc"
)

// The fast path's tool results written without reflection. A result of the
// shape capdir's handlers answer (text contents, structuredContent a CallResult
// or none, _meta of string values) is appended field by field in the order and
// with the escaping encoding/json gives it through the SDK's MarshalJSON: every
// string escaped as json.Marshal escapes it (HTML characters included, since the
// SDK marshals the result with json.Marshal before the encoder compacts it). Any
// other result is encoded by encoding/json, as before.

// resultBufs holds the fast path's response buffers between calls.
var resultBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendResult appends res as the SDK encodes it and reports true, or reports
// false, dst as it was, when res has a field or a value this encoder does not write.
func appendResult(dst []byte, res *sdk.CallToolResult) ([]byte, bool) {
	if res.InputRequests != nil || res.RequestState != "" {
		return dst, false
	}
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok || tc == nil || len(tc.Meta) != 0 || tc.Annotations != nil {
			return dst, false
		}
	}
	var sc *CallResult
	switch v := res.StructuredContent.(type) {
	case nil:
	case CallResult:
		sc = &v
	case *CallResult:
		if v == nil {
			return dst, false
		}
		sc = v
	default:
		return dst, false
	}
	for _, v := range res.Meta {
		if _, ok := v.(string); !ok {
			return dst, false
		}
	}

	b := append(dst, '{')
	if len(res.Meta) != 0 {
		b = append(b, `"_meta":{`...)
		keys := make([]string, 0, len(res.Meta))
		for k := range res.Meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, res.Meta[k].(string))
		}
		b = append(b, `},`...)
	}
	b = append(b, `"content":`...)
	if res.Content == nil {
		b = append(b, `null`...)
	} else {
		b = append(b, '[')
		for i, c := range res.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"text","text":`...)
			b = jsonenc.AppendString(b, c.(*sdk.TextContent).Text)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if sc != nil {
		p := &sc.Proof
		b = append(b, `,"structuredContent":{"result":`...)
		b = jsonenc.AppendString(b, sc.Result)
		b = append(b, `,"proof":{"ok":`...)
		b = strconv.AppendBool(b, p.OK)
		b = append(b, `,"ran":`...)
		b = strconv.AppendBool(b, p.Ran)
		b = append(b, `,"status":`...)
		b = jsonenc.AppendString(b, p.Status)
		b = append(b, `,"invocation_id":`...)
		b = jsonenc.AppendString(b, p.InvocationID)
		b = append(b, `,"trace":`...)
		b = jsonenc.AppendString(b, p.Trace)
		b = append(b, `,"public_receipt":`...)
		b = jsonenc.AppendString(b, p.PublicReceipt)
		b = append(b, `}}`...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

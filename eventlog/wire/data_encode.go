package wire

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/capdir/capdir/internal/jsonenc"
)

// A receipt and an invocation request are the data of nearly every event, one
// of each per call, so their common form has a direct encoder: the bytes
// json.Marshal writes, field by field in the order and with the escaping it gives
// them. A value this encoder does not write (a receipt's extra, a request's args,
// a float encoding/json writes with an exponent or refuses, a time it refuses)
// goes through encoding/json, so what is stored is always exactly its bytes.

// marshalData is json.Marshal(data).
func marshalData(data any) ([]byte, error) {
	var (
		b  []byte
		ok bool
	)
	switch v := data.(type) {
	case *Receipt:
		if v != nil {
			b, ok = appendReceipt(make([]byte, 0, receiptSize(v)), v)
		}
	case *InvocationRequest:
		if v != nil {
			b, ok = appendRequest(make([]byte, 0, requestSize(v)), v)
		}
	case Receipt:
		b, ok = appendReceipt(make([]byte, 0, receiptSize(&v)), &v)
	case InvocationRequest:
		b, ok = appendRequest(make([]byte, 0, requestSize(&v)), &v)
	}
	if ok {
		return b, nil
	}
	return json.Marshal(data)
}

// receiptSize is room for rc's JSON when no string needs escaping.
func receiptSize(rc *Receipt) int {
	n := 640 + len(rc.InvocationID) + len(rc.Trace) + len(rc.Actor) + len(rc.Key) + len(rc.Type) + len(rc.Runner) + len(rc.Status) +
		len(rc.Fingerprints.Input) + len(rc.Fingerprints.Output) + len(rc.Fingerprints.Contract) + len(rc.Body) + len(rc.Result) +
		len(rc.Parent) + len(rc.CredTag) + len(rc.BreakerKind) + len(rc.Worker) + len(rc.TraceID)
	if rc.HMAC != nil {
		n += 48 + len(rc.HMAC.Salt) + len(rc.HMAC.Input) + len(rc.HMAC.Output)
	}
	for _, c := range rc.Children {
		n += 3 + len(c)
	}
	return n
}

// appendReceipt appends rc as json.Marshal writes it, or reports false.
func appendReceipt(b []byte, rc *Receipt) ([]byte, bool) {
	if len(rc.Extra) != 0 {
		return b, false
	}
	var ok bool
	b = append(b, `{"invocation_id":`...)
	b = jsonenc.AppendString(b, rc.InvocationID)
	b = append(b, `,"trace":`...)
	b = jsonenc.AppendString(b, rc.Trace)
	b = append(b, `,"actor":`...)
	b = jsonenc.AppendString(b, rc.Actor)
	b = append(b, `,"key":`...)
	b = jsonenc.AppendString(b, rc.Key)
	if rc.Type != "" {
		b = append(b, `,"type":`...)
		b = jsonenc.AppendString(b, rc.Type)
	}
	if rc.Runner != "" {
		b = append(b, `,"runner":`...)
		b = jsonenc.AppendString(b, rc.Runner)
	}
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, rc.OK)
	b = append(b, `,"ran":`...)
	b = strconv.AppendBool(b, rc.Ran)
	b = append(b, `,"material":`...)
	b = strconv.AppendBool(b, rc.Material)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, rc.Status)
	if rc.Upstream != 0 {
		b = append(b, `,"upstream_status":`...)
		b = strconv.AppendInt(b, int64(rc.Upstream), 10)
	}
	b = append(b, `,"started_at":`...)
	if b, ok = appendTime(b, rc.StartedAt); !ok {
		return b, false
	}
	b = append(b, `,"finished_at":`...)
	if b, ok = appendTime(b, rc.FinishedAt); !ok {
		return b, false
	}
	b = append(b, `,"duration_ms":`...)
	if b, ok = appendFloat(b, rc.DurationMS); !ok {
		return b, false
	}
	b = append(b, `,"cost_usd":`...)
	if b, ok = appendFloat(b, rc.CostUSD); !ok {
		return b, false
	}
	b = append(b, `,"fingerprints":{"input":`...)
	b = jsonenc.AppendString(b, rc.Fingerprints.Input)
	b = append(b, `,"output":`...)
	b = jsonenc.AppendString(b, rc.Fingerprints.Output)
	b = append(b, `,"contract":`...)
	b = jsonenc.AppendString(b, rc.Fingerprints.Contract)
	b = append(b, `},"body":`...)
	b = jsonenc.AppendString(b, rc.Body)
	b = append(b, `,"result":`...)
	b = jsonenc.AppendString(b, rc.Result)
	if h := rc.HMAC; h != nil {
		b = append(b, `,"fingerprint_hmac":{`...)
		if h.Salt != "" {
			b = append(b, `"salt":`...)
			b = jsonenc.AppendString(b, h.Salt)
			b = append(b, ',')
		}
		b = append(b, `"input":`...)
		b = jsonenc.AppendString(b, h.Input)
		b = append(b, `,"output":`...)
		b = jsonenc.AppendString(b, h.Output)
		b = append(b, '}')
	}
	if rc.Parent != "" {
		b = append(b, `,"parent":`...)
		b = jsonenc.AppendString(b, rc.Parent)
	}
	if len(rc.Children) != 0 {
		b = append(b, `,"children":[`...)
		for i, c := range rc.Children {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, c)
		}
		b = append(b, ']')
	}
	if rc.PromptTokens != 0 {
		b = append(b, `,"prompt_tokens":`...)
		b = strconv.AppendInt(b, rc.PromptTokens, 10)
	}
	if rc.CompletionTokens != 0 {
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, rc.CompletionTokens, 10)
	}
	if rc.CredTag != "" {
		b = append(b, `,"cred_tag":`...)
		b = jsonenc.AppendString(b, rc.CredTag)
	}
	b = append(b, `,"breaker_generation":`...)
	b = strconv.AppendUint(b, rc.BreakerGeneration, 10)
	if rc.BreakerKind != "" {
		b = append(b, `,"breaker_kind":`...)
		b = jsonenc.AppendString(b, rc.BreakerKind)
	}
	if rc.Worker != "" {
		b = append(b, `,"worker":`...)
		b = jsonenc.AppendString(b, rc.Worker)
	}
	if rc.ContractSeq != 0 {
		b = append(b, `,"contract_seq":`...)
		b = strconv.AppendUint(b, rc.ContractSeq, 10)
	}
	if rc.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = jsonenc.AppendString(b, rc.TraceID)
	}
	return append(b, '}'), true
}

// requestSize is room for req's JSON when no string needs escaping.
func requestSize(req *InvocationRequest) int {
	return 224 + len(req.InvocationID) + len(req.Trace) + len(req.Key) + len(req.Body) + len(req.Credential) + len(req.Token) +
		len(req.Parent) + len(req.Chain) + len(req.Traceparent) + len(req.Tracestate)
}

// appendRequest appends req as json.Marshal writes it, or reports false.
func appendRequest(b []byte, req *InvocationRequest) ([]byte, bool) {
	if len(req.Args) != 0 {
		return b, false // encoding/json checks and compacts it
	}
	b = append(b, `{"invocation_id":`...)
	b = jsonenc.AppendString(b, req.InvocationID)
	b = append(b, `,"trace":`...)
	b = jsonenc.AppendString(b, req.Trace)
	b = append(b, `,"key":`...)
	b = jsonenc.AppendString(b, req.Key)
	b = append(b, `,"body":`...)
	b = jsonenc.AppendString(b, req.Body)
	if req.Shape {
		b = append(b, `,"shape":true`...)
	}
	b = append(b, `,"credential":`...)
	b = jsonenc.AppendString(b, req.Credential)
	if req.Token != "" {
		b = append(b, `,"token":`...)
		b = jsonenc.AppendString(b, req.Token)
	}
	if req.DirSeq != 0 {
		b = append(b, `,"dir_seq":`...)
		b = strconv.AppendUint(b, req.DirSeq, 10)
	}
	if req.Parent != "" {
		b = append(b, `,"parent":`...)
		b = jsonenc.AppendString(b, req.Parent)
	}
	if req.Depth != 0 {
		b = append(b, `,"depth":`...)
		b = strconv.AppendInt(b, int64(req.Depth), 10)
	}
	if req.Chain != "" {
		b = append(b, `,"chain":`...)
		b = jsonenc.AppendString(b, req.Chain)
	}
	if req.Traceparent != "" {
		b = append(b, `,"traceparent":`...)
		b = jsonenc.AppendString(b, req.Traceparent)
	}
	if req.Tracestate != "" {
		b = append(b, `,"tracestate":`...)
		b = jsonenc.AppendString(b, req.Tracestate)
	}
	return append(b, '}'), true
}

// appendTime appends t quoted as time.Time.MarshalJSON writes it, or reports
// false for a time it refuses (a year outside 0 to 9999, a zone of 24 hours or more).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	b = append(b, '"')
	at := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if !strictRFC3339(b[at:]) {
		return b, false
	}
	return append(b, '"'), true
}

// appendFloat appends f as encoding/json writes a float64 without an exponent
// (0, or 1e-6 <= |f| < 1e21), or reports false.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return b, false
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}

package api

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/capdir/capdir/internal/jsonenc"
)

// answerBufs holds the buffers completed dispatches are answered from; one
// larger than maxPooledAnswer (a large result) is left to the collector.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledAnswer = 64 << 10

// jsonContentType is the Content-Type value of every JSON answer, shared.
var jsonContentType = []string{"application/json"}

// selfLengthUpTo is the body net/http holds back until the handler returns
// (its buffer before it would chunk an answer of unknown length): a body
// shorter than that, written in one go, gets its Content-Length from net/http,
// without a string made for it here.
const selfLengthUpTo = 2048

// writeDispatchResponse writes out with 200 as writeJSON writes it, byte for
// byte, encoded by hand when out has no shape (the answer of every completed
// call but a ?shape one): one buffer from a pool, no reflection.
func writeDispatchResponse(w http.ResponseWriter, out *DispatchResponse) {
	if out.Shape != nil {
		writeJSON(w, http.StatusOK, out)
		return
	}
	bp := answerBufs.Get().(*[]byte)
	b := appendDispatchResponse((*bp)[:0], out)
	h := w.Header()
	h["Content-Type"] = jsonContentType // never changed in place: Set would make a slice per answer
	if len(b) >= selfLengthUpTo {
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	if cap(b) <= maxPooledAnswer {
		*bp = b
		answerBufs.Put(bp)
	}
}

// appendDispatchResponse appends out, which has no shape, as a json.Encoder
// without HTML escaping writes it, newline included.
func appendDispatchResponse(b []byte, out *DispatchResponse) []byte {
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, out.OK)
	b = append(b, `,"ran":`...)
	b = strconv.AppendBool(b, out.Ran)
	b = append(b, `,"trace":`...)
	b = jsonenc.AppendStringNoHTML(b, out.Trace)
	if out.Result != nil {
		b = append(b, `,"result":`...)
		b = jsonenc.AppendStringNoHTML(b, *out.Result)
	}
	b = append(b, `,"proof":{"ok":`...)
	b = strconv.AppendBool(b, out.Proof.OK)
	b = append(b, `,"invocation_id":`...)
	b = jsonenc.AppendStringNoHTML(b, out.Proof.InvocationID)
	b = append(b, `,"public_receipt":`...)
	b = jsonenc.AppendStringNoHTML(b, out.Proof.PublicReceipt)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendStringNoHTML(b, out.Proof.Status)
	return append(b, "}}\n"...)
}

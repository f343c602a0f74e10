package mcp

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	sjson "github.com/segmentio/encoding/json"
)

// A JSON-RPC client matches each response to its request by id, so a response
// must carry the id it was sent. The SDK reads a number id as a float64 and
// answers under its integer part: 1.5 came back as 1, and every integer past
// 2^63 as -2^63, so distinct requests could share an answer's id. A request
// whose id is a number the SDK would not give back with its value is refused
// before anything reads it, whatever its method (the fast path takes no such
// id, and leaves it to this refusal). An integer written 7.0 or 1e2 comes back
// as 7 or 100, the same number.

// maxExactID is the largest magnitude of an integer id given back exactly: a
// float64 holds every integer up to 2^53.
const maxExactID = 1 << 53

// idRefusal is why the id of the JSON-RPC request body, or of a request of the
// batch it is (protocol versions up to 2025-03-26 take batches), would not come
// back with its value, or "" when each would (a string, an integer of magnitude
// up to maxExactID, no id at all) or when body is not JSON the SDK reads (it
// refuses that itself).
func idRefusal(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' && body[0] != '[' || deeper(body, maxDepth) {
		return ""
	}
	msgs := []json.RawMessage{body}
	if body[0] == '[' {
		msgs = nil
		if _, err := sjson.Parse(body, &msgs, 0); err != nil {
			return ""
		}
	}
	for _, msg := range msgs {
		if msg = bytes.TrimSpace(msg); len(msg) == 0 || msg[0] != '{' {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if _, err := sjson.Parse(msg, &m, sjson.DontMatchCaseInsensitiveStructFields); err != nil || len(m.ID) == 0 {
			continue
		}
		if c := m.ID[0]; c != '-' && (c < '0' || c > '9') {
			continue // a string, null or another type: the SDK keeps or refuses it as it is
		}
		if exactID(string(m.ID)) {
			continue
		}
		shown := string(m.ID)
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return "Invalid Request: the id " + shown + " would not come back as sent: send a string, or an integer from -" +
			strconv.FormatInt(maxExactID, 10) + " to " + strconv.FormatInt(maxExactID, 10)
	}
	return ""
}

// exactID reports whether the JSON number n is an integer of magnitude up to
// maxExactID, in whatever form it is written (7, 7.0, 7e0). A number longer
// than any such integer needs, or with an exponent of more than three digits,
// is not looked at further.
func exactID(n string) bool {
	if len(n) > 64 {
		return false
	}
	if i := strings.IndexAny(n, "eE"); i >= 0 && len(strings.TrimLeft(n[i+1:], "+-0")) > 3 {
		return false
	}
	var r big.Rat
	if _, ok := r.SetString(n); !ok || !r.IsInt() {
		return false
	}
	return r.Num().IsInt64() && -maxExactID <= r.Num().Int64() && r.Num().Int64() <= maxExactID
}

// answerBadID writes the JSON-RPC error of a request refused by idRefusal, under
// no id (JSON-RPC's for a request whose id cannot be told).
func answerBadID(w http.ResponseWriter, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(append(b, '\n'))
}

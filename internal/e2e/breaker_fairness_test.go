package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// Breaker fairness end to end: a real node, a local upstream, tokens minted
// through the owner's API. A caller cannot open a row's breaker for others by
// the arguments it chooses; a dead credential still opens it for everyone.

// statusArgUpstream answers each request with the status its ?code= names (200
// when none), or with dead when dead is not 0; it counts the requests.
func statusArgUpstream(t *testing.T, dead int) *upstreamtest.Upstream {
	t.Helper()
	return upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		code := dead
		if code == 0 {
			code, _ = strconv.Atoi(r.URL.Query().Get("code"))
		}
		if code == 0 {
			code = http.StatusOK
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"status":%d}`, code)
	})
}

// fairWorld is a node with one row, GET <upstream>/status?code=$1 with a bearer
// credential, and the tokens its callers present.
type fairWorld struct {
	*brkWorld
	n *capdir.Node
}

const fairKey = "STATUS_CODE"

func newFairWorld(t *testing.T, dead int) *fairWorld {
	w := &fairWorld{brkWorld: newBrkWorld(t, always(200))}
	w.up = statusArgUpstream(t, dead)
	w.n = nodetest.Start(t, w.config, w.opts()...)
	row := map[string]any{
		"key": fairKey, "type": "http", "target": "GET " + w.up.URL + "/status?code=$1", "auth": "bearer:" + brkEnvName,
		"content": "# WHAT: Ask a local upstream for a status code.\n# ARGS: $1=code\n# EX: [" + fairKey + "]200[/" + fairKey + "]",
	}
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, w.n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	return w
}

func (w *fairWorld) token(t *testing.T, sub string) string {
	return mint(t, w.n, `{"sub":"`+sub+`","scope":{"keys":["`+fairKey+`"]}}`).Token
}

// call dispatches the row with body, as the owner when tok is "".
func (w *fairWorld) call(t *testing.T, tok, body string) tokAnswer {
	t.Helper()
	if tok != "" {
		return dispatchWith(t, w.n, tok, fairKey, body)
	}
	code, out := nodetest.Do(t, w.n, "POST", "/api/dispatch", `{"key":"`+fairKey+`","body":"`+body+`"}`)
	a := tokAnswer{code: code, body: out}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch answer %d %q: %v", code, out, err)
	}
	a.code, a.body = code, out
	return a
}

var fairRefusal = "ERR:breaker_open:" + fairKey + " \u2014 8 consecutive auth failures; credential is dead until replaced."

func mustBeRefused(t *testing.T, who string, a tokAnswer) {
	t.Helper()
	if a.Result != fairRefusal || a.Ran || a.OK || a.Proof.Status != wire.StatusRefusedBreakerOpen {
		t.Fatalf("%s: %d %s; want the breaker's refusal", who, a.code, a.body)
	}
}

func mustRun(t *testing.T, who string, a tokAnswer, result string) {
	t.Helper()
	if !a.Ran || a.Result != result {
		t.Fatalf("%s: %d %s; want a call that ran with %q", who, a.code, a.body, result)
	}
}

// A token holder's eight crafted 403s (?code=403) refuse that token holder alone:
// the owner and another token holder keep calling, the owner's view names the
// refused caller, and an owner reset lifts it.
func TestBreakerTokenHolderCannotOpenItForOthers(t *testing.T) {
	w := newFairWorld(t, 0)
	mallory, alice := w.token(t, "mallory"), w.token(t, "alice")
	for i := 1; i <= 8; i++ {
		mustRun(t, fmt.Sprintf("mallory's 403 #%d", i), w.call(t, mallory, "403"), `ERR:http:403:{"status":403}`)
	}
	mustBeRefused(t, "mallory's ninth", w.call(t, mallory, "403"))
	mustBeRefused(t, "mallory asking for 200", w.call(t, mallory, "200"))
	w.hits(t, 8)
	mustRun(t, "the owner", w.call(t, "", "200"), `HTTP 200:{"status":200}`)
	mustRun(t, "alice", w.call(t, alice, "200"), `HTTP 200:{"status":200}`)
	for i := 1; i <= 8; i++ { // the owner's real failure afterwards is a run of its own
		mustRun(t, "alice's 403", w.call(t, alice, "403"), `ERR:http:403:{"status":403}`)
		if i < 8 {
			mustRun(t, "the owner between", w.call(t, "", "200"), `HTTP 200:{"status":200}`)
		}
	}
	mustBeRefused(t, "alice after her own eight", w.call(t, alice, "200"))
	mustRun(t, "the owner after two callers refused", w.call(t, "", "200"), `HTTP 200:{"status":200}`)

	code, body := nodetest.Do(t, w.n, "GET", "/api/breaker/"+fairKey, "")
	var v struct {
		Open    bool `json:"open"`
		Refused []struct {
			Caller string `json:"caller"`
		} `json:"refused_callers"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil || v.Open || len(v.Refused) != 2 ||
		v.Refused[0].Caller != "token:alice" || v.Refused[1].Caller != "token:mallory" {
		t.Fatalf("GET /api/breaker/%s: %d %s; want closed, refusing token:alice and token:mallory", fairKey, code, body)
	}
	mustList(t, w.n, fairKey)
	reset(t, w.n, fairKey)
	mustRun(t, "mallory after the reset", w.call(t, mallory, "200"), `HTTP 200:{"status":200}`)
	mustList(t, w.n)
}

// A dead credential opens the row for everyone, at once: the owner's eight 401s,
// or three callers' eight each. Then every caller gets the literal, and nothing
// more reaches the upstream until an owner reset.
func TestBreakerDeadCredentialOpensItForEveryone(t *testing.T) {
	t.Run("the owner's eight", func(t *testing.T) {
		w := newFairWorld(t, http.StatusUnauthorized)
		alice := w.token(t, "alice")
		for i := 1; i <= 8; i++ {
			mustRun(t, "the owner's 401", w.call(t, "", "200"), `ERR:http:401:{"status":401}`)
		}
		mustBeRefused(t, "the owner", w.call(t, "", "200"))
		mustBeRefused(t, "alice", w.call(t, alice, "200"))
		w.hits(t, 8)
		reset(t, w.n, fairKey)
		mustRun(t, "alice after the reset", w.call(t, alice, "200"), `ERR:http:401:{"status":401}`)
	})
	t.Run("three callers' eight", func(t *testing.T) {
		w := newFairWorld(t, http.StatusUnauthorized)
		toks := []string{w.token(t, "a"), w.token(t, "b"), w.token(t, "c")}
		for i, tok := range toks {
			for range 8 {
				mustRun(t, "a token holder's 401", w.call(t, tok, "200"), `ERR:http:401:{"status":401}`)
			}
			if i < 2 {
				mustRun(t, "the owner before the quorum", w.call(t, "", "200"), `ERR:http:401:{"status":401}`)
			}
		}
		hits := w.up.Hits()
		mustBeRefused(t, "the owner", w.call(t, "", "200"))
		mustBeRefused(t, "a fourth token holder", w.call(t, w.token(t, "d"), "200"))
		w.hits(t, hits)
		if st, err := settledBreaker(t, w.n, fairKey); err != nil || !st.Open || len(st.Callers) != 0 {
			t.Fatalf("projected breaker = %+v, %v; want open for everyone", st, err)
		}
	})
}

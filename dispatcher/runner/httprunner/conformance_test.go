package httprunner

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

// conformanceServer is the upstream of the conformance rows: /block answers when
// the request ends, /big?n=N with N bytes 'x', /500 with an error, and any other
// path with everything it received, as JSON.
func conformanceServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/block":
			<-r.Context().Done()
		case "/big":
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			io.WriteString(w, strings.Repeat("x", n))
		case "/401":
			http.Error(w, "who are you", http.StatusUnauthorized)
		case "/500":
			http.Error(w, "broken", http.StatusInternalServerError)
		default:
			json.NewEncoder(w).Encode(map[string]any{
				"method": r.Method, "url": r.URL.String(), "host": r.Host, "header": r.Header, "body": string(body),
			})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConformance(t *testing.T) {
	srv := conformanceServer(t)
	echo := func(auth string) *contract.Row {
		return &contract.Row{Key: "ECHO", Type: contract.TypeHTTP, Target: "POST " + srv.URL + "/echo/$1?q=$1", Auth: auth,
			Content: `{"args":"$1+","env":"$` + runnertest.SecretVar + `"}`}
	}
	v := runnertest.SecretVar
	amplified := strings.Repeat("$1", 1000)
	runnertest.Run(t, runnertest.Harness{
		Name: runner.RunnerHTTP,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			r, err := New(Config{Env: cfg.Env, TagSalt: "salt", Limits: cfg.Limits})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Echo:  echo(""),
		Block: &contract.Row{Key: "BLOCK", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/block"},
		Large: &contract.Row{Key: "BIG", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/big?n=$1"},
		Secrets: []*contract.Row{
			echo("bearer:" + v), echo("basic:" + v), echo("oauth:" + v), echo("query:key=" + v),
			echo(`headers:{"X-Api-Key":"$` + v + `","X-Tagged":"k=$` + v + `"}`),
		},
		Amplify: []*contract.Row{
			{Key: "AMP_TARGET", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/echo?q=" + amplified},
			{Key: "AMP_BODY", Type: contract.TypeHTTP, Target: "POST " + srv.URL + "/echo", Content: `{"q":"` + amplified + `"}`},
		},
		Failures: []*contract.Row{
			{Key: "F1", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/500"},
			{Key: "F2", Type: contract.TypeHTTP, Target: "GET ftp://h/x"},
			{Key: "F3", Type: contract.TypeHTTP, Target: "GET " + srv.URL, Auth: "apikey:" + v},
			{Key: "F4", Type: contract.TypeHTTP, Target: "GET " + srv.URL, Auth: "query:" + v},
			{Key: "F5", Type: contract.TypeHTTP, Target: "GET " + closedURL(t) + "/x"},
			{Key: "F6", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/401"},
			{Key: "F7", Type: contract.TypeHTTP, Target: "GET http://$1/x", Auth: "bearer:" + v},
		},
		Elsewhere: map[string]string{
			"ERR:http:origin_busy:<origin>:<max>":     "TestMaxPerOriginRefusesACallOverTheBound",
			"ERR:http:redirect_off_origin:<location>": "TestHTTPRunnerRedirectOffOrigin",
			"ERR:http:timeout:<duration>":             "TestHTTPRunner",
			"ERR:http:<message>":                      "none: a build failure of no other kind, which Build does not return today",
		},
		Sentinels:     []error{ErrBadTarget, ErrAuth, ErrStatus, ErrFetch, ErrTimeout, ErrResponseTooLarge, ErrRedirectOffOrigin, ErrOriginChanged},
		Timeout:       ErrTimeout,
		TimeoutPrefix: "ERR:http:timeout:",
		TooLarge:      func(limit int64) string { return errResponseTooLarge(limit).Literal },
	})
}

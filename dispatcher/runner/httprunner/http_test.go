package httprunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/upstreamtest"
)

const (
	secretBearer = "xai-SECRET-bearer"
	secretBasic  = "basic-SECRET"
	secretQuery  = "query SECRET&"
	secretHeader = "hdr-SECRET"
)

var testEnv = runner.MapEnv(map[string]string{
	"GROK_API_KEY": secretBearer,
	"BASIC_PASS":   secretBasic,
	"MAPS_KEY":     secretQuery,
	"ANTH_KEY":     secretHeader,
})

// echoServer answers with everything it received, credentials included, so tests
// can prove the runner scrubs what an upstream echoes back.
func echoServer(t *testing.T) *upstreamtest.Upstream {
	t.Helper()
	return upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/401":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid api key `+r.Header.Get("Authorization")+`"}`)
			return
		case "/500":
			http.Error(w, "upstream broke", http.StatusInternalServerError)
			return
		case "/slow":
			<-r.Context().Done()
			return
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 17))
			return
		case "/fits":
			fmt.Fprint(w, strings.Repeat("x", 16))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
			"auth": r.Header.Get("Authorization"), "x-api-key": r.Header.Get("X-Api-Key"),
			"ct": r.Header.Get("Content-Type"), "body": string(body),
		})
	})
}

func newTestRunner(t testing.TB, mut func(*Config)) *Runner {
	t.Helper()
	cfg := Config{Env: testEnv, TagSalt: "salt"}
	if mut != nil {
		mut(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// closedURL is an http URL on a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestHTTPRunner(t *testing.T) {
	srv := echoServer(t)
	dead := closedURL(t)
	tests := []struct {
		name         string
		row          contract.Row
		body         string
		mut          func(*Config)
		want         string // exact Result, or prefix when it ends in "*"
		wantUpstream int
		wantRan      bool
		wantErr      error
		wantTag      bool
	}{
		{name: "GET with args in query",
			row:          contract.Row{Key: "ZZ_TEST_TEMPERATURE", Target: "GET " + srv.URL + "/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m"},
			body:         "37.77|-122.42",
			want:         `HTTP 200:{"auth":"","body":"","ct":"","method":"GET","path":"/v1/forecast","query":"latitude=37.77\u0026longitude=-122.42\u0026current=temperature_2m","x-api-key":""}` + "\n",
			wantUpstream: 200, wantRan: true},
		{name: "bearer echoed back is scrubbed",
			row:  contract.Row{Key: "GROK_MODELS", Target: "GET " + srv.URL + "/v1/models", Auth: "bearer:GROK_API_KEY"},
			want: `HTTP 200:{"auth":"Bearer REDACTED",*`, wantUpstream: 200, wantRan: true, wantTag: true},
		{name: "basic",
			row:  contract.Row{Key: "B", Target: srv.URL + "/b", Auth: "basic:BASIC_PASS"},
			want: `HTTP 200:{"auth":"Basic REDACTED",*`, wantUpstream: 200, wantRan: true, wantTag: true},
		{name: "query credential",
			row:          contract.Row{Key: "Q", Target: "GET " + srv.URL + "/q?a=1", Auth: "query:key=MAPS_KEY"},
			want:         `HTTP 200:{"auth":"","body":"","ct":"","method":"GET","path":"/q","query":"a=1\u0026key=REDACTED",*`,
			wantUpstream: 200, wantRan: true, wantTag: true},
		{name: "headers credential",
			row:          contract.Row{Key: "H", Target: "GET " + srv.URL + "/h", Auth: `headers:{"x-api-key":"$ANTH_KEY"}`},
			want:         `HTTP 200:{"auth":"","body":"","ct":"","method":"GET","path":"/h","query":"","x-api-key":"REDACTED"}` + "\n",
			wantUpstream: 200, wantRan: true, wantTag: true},
		{name: "POST $2+ body passes JSON intact",
			row: contract.Row{Key: "DIR_PATCH", Target: "PATCH " + srv.URL + "/api/directory/$1",
				Content: "# ARGS: key | json_body\n# EX: [DIR_PATCH]ROUTER|{\"content\":\"new prompt text\"}[/DIR_PATCH]\n$2+"},
			body:         `ROUTER|{"content":"a|b"}`,
			want:         `HTTP 200:{"auth":"","body":"{\"content\":\"a|b\"}","ct":"application/json","method":"PATCH","path":"/api/directory/ROUTER",*`,
			wantUpstream: 200, wantRan: true},
		{name: "text body",
			row:  contract.Row{Key: "T", Target: "POST " + srv.URL + "/t", Content: "hello $1"},
			body: "world",
			want: `HTTP 200:{"auth":"","body":"hello world","ct":"text/plain; charset=utf-8",*`, wantUpstream: 200, wantRan: true},
		{name: "401 is scrubbed",
			row:  contract.Row{Key: "GROK_MODELS", Target: "GET " + srv.URL + "/401", Auth: "bearer:GROK_API_KEY"},
			want: `ERR:http:401:{"error":"invalid api key Bearer REDACTED"}`, wantUpstream: 401, wantRan: true,
			wantErr: ErrStatus, wantTag: true},
		{name: "500",
			row:  contract.Row{Key: "X", Target: "GET " + srv.URL + "/500"},
			want: "ERR:http:500:upstream broke\n", wantUpstream: 500, wantRan: true, wantErr: ErrStatus},
		{name: "unreachable",
			row:     contract.Row{Key: "X", Target: "GET " + dead + "/x?key=$1"},
			body:    "v",
			want:    "ERR:http:fetch:dial tcp " + strings.TrimPrefix(dead, "http://") + ": connect: connection refused",
			wantErr: ErrFetch},
		{name: "timeout",
			row:  contract.Row{Key: "X", Target: "GET " + srv.URL + "/slow"},
			mut:  func(c *Config) { c.Timeout = time.Second },
			want: "ERR:http:timeout:1s", wantErr: ErrTimeout, wantRan: true}, // sent: the upstream may have acted
		{name: "oversize",
			row:  contract.Row{Key: "X", Target: "GET " + srv.URL + "/big"},
			mut:  func(c *Config) { c.MaxResultBytes = 16 },
			want: "ERR:http:response_too_large:16", wantUpstream: 200, wantRan: true, wantErr: ErrResponseTooLarge},
		{name: "at the cap",
			row:  contract.Row{Key: "X", Target: "GET " + srv.URL + "/fits"},
			mut:  func(c *Config) { c.MaxResultBytes = 16 },
			want: "HTTP 200:" + strings.Repeat("x", 16), wantUpstream: 200, wantRan: true},
		{name: "unknown auth prefix",
			row:  contract.Row{Key: "ZZ", Target: "GET " + srv.URL, Auth: "apikey:GROK_API_KEY"},
			want: "ERR:http:ZZ:ERR:auth:unknown_prefix:apikey", wantErr: runner.ErrAuthUnknownPrefix},
		{name: "bad target",
			row:  contract.Row{Key: "X", Target: "GET ftp://h/x"},
			want: "ERR:http:bad_target:scheme must be http or https: ftp://h/x", wantErr: ErrBadTarget},
		{name: "empty target",
			row:  contract.Row{Key: "X"},
			want: "ERR:http:bad_target:empty", wantErr: ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRunner(t, tt.mut)
			tt.row.Type = contract.TypeHTTP
			o := r.Run(context.Background(), runner.Call{Row: &tt.row, Body: tt.body})
			if p, ok := strings.CutSuffix(tt.want, "*"); ok {
				if !strings.HasPrefix(o.Result, p) {
					t.Errorf("Result = %s\nwant prefix %s", o.Result, p)
				}
			} else if o.Result != tt.want {
				t.Errorf("Result = %q\n    want %q", o.Result, tt.want)
			}
			if o.Upstream != tt.wantUpstream || o.Ran != tt.wantRan {
				t.Errorf("Upstream, Ran = %d, %v; want %d, %v", o.Upstream, o.Ran, tt.wantUpstream, tt.wantRan)
			}
			if (tt.wantErr == nil) != o.OK() || (tt.wantErr != nil && !errors.Is(o.Err, tt.wantErr)) {
				t.Errorf("Err = %v, want %v", o.Err, tt.wantErr)
			}
			if (o.CredTag != "") != tt.wantTag {
				t.Errorf("CredTag = %q", o.CredTag)
			}
			assertNoSecrets(t, o)
		})
	}
}

func assertNoSecrets(t *testing.T, o runner.Outcome) {
	t.Helper()
	shape, _ := json.Marshal(o.Shape)
	for _, s := range []string{secretBearer, secretBasic, secretQuery, "query+SECRET%26", secretHeader, "SECRET"} {
		for _, out := range []string{o.Result, string(shape), fmt.Sprint(o.Err)} {
			if strings.Contains(out, s) {
				t.Errorf("secret %q leaked: %s", s, out)
			}
		}
	}
}

func TestHTTPRunnerShape(t *testing.T) {
	srv := echoServer(t)
	r := newTestRunner(t, nil)
	tests := []struct {
		name string
		row  contract.Row
		body string
		want string
	}{
		{"missing variable shows empty headers",
			contract.Row{Key: "GROK_MODELS", Target: "GET https://api.x.ai/v1/models", Auth: "bearer:ABSENT_API_KEY",
				Content: "# WHAT: List every model on the xAI API. No args"},
			"", `{"body":"","headers":{},"method":"GET","shape":true,"url":"https://api.x.ai/v1/models"}`},
		{"credential stripped",
			contract.Row{Key: "GROK_MODELS", Target: "GET " + srv.URL + "/v1/models", Auth: "bearer:GROK_API_KEY"},
			"", `{"body":"","headers":{},"method":"GET","shape":true,"url":"` + srv.URL + `/v1/models"}`},
		{"x-api-key header stripped, others kept",
			contract.Row{Key: "H", Target: "POST " + srv.URL + "/m", Auth: `headers:{"x-api-key":"$ANTH_KEY","anthropic-version":"2023-06-01"}`,
				Content: `{"prompt":"$1"}`},
			`say "hi"`, `{"body":"{\"prompt\":\"say \\\"hi\\\"\"}","headers":{"anthropic-version":"2023-06-01","content-type":"application/json"},"method":"POST","shape":true,"url":"` + srv.URL + `/m"}`},
		{"query credential redacted in url",
			contract.Row{Key: "Q", Target: "GET " + srv.URL + "/geo?q=$1", Auth: "query:key=MAPS_KEY"},
			"paris", `{"body":"","headers":{},"method":"GET","shape":true,"url":"` + srv.URL + `/geo?q=paris\u0026key=REDACTED"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := r.Run(context.Background(), runner.Call{Row: &tt.row, Body: tt.body, Shape: true})
			if o.Result != tt.want {
				t.Errorf("Result = %s\n   want %s", o.Result, tt.want)
			}
			if o.Shape == nil || o.Ran || !o.OK() {
				t.Errorf("outcome = %+v", o)
			}
			assertNoSecrets(t, o)
		})
	}
	if n := srv.Hits(); n != 0 {
		t.Errorf("shape mode sent %d requests", n)
	}
}

func TestHTTPRunnerCancel(t *testing.T) {
	srv := echoServer(t)
	r := newTestRunner(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	o := r.Run(ctx, runner.Call{Row: &contract.Row{Key: "X", Target: "GET " + srv.URL + "/slow"}})
	if o.Result != "ERR:http:canceled:context canceled" || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Errorf("got %+v", o)
	}
}

func TestHTTPConfigValidate(t *testing.T) {
	_, err := New(Config{Limits: runner.Limits{Timeout: -1, MaxResultBytes: -1, MaxSubstitutionBytes: -1}})
	for _, want := range []string{"Env is required", "Timeout must not be negative", "MaxResultBytes must not be negative", "MaxSubstitutionBytes must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %q", err, want)
		}
	}
	r, err := New(Config{Env: runner.MapEnv(nil)})
	if err != nil || r.cfg.Timeout != DefaultHTTPTimeout || r.cfg.MaxResultBytes != DefaultMaxResponseBytes || r.cfg.Client == nil {
		t.Errorf("defaults: %+v, %v", r.cfg, err)
	}
}

func ExampleRunner_shape() {
	r, err := New(Config{Env: runner.MapEnv(map[string]string{"GROK_API_KEY": "xai-123"})})
	if err != nil {
		panic(err)
	}
	row := &contract.Row{Key: "GROK_MODELS", Type: "http", Target: "GET https://api.x.ai/v1/models", Auth: "bearer:GROK_API_KEY"}
	o := r.Run(context.Background(), runner.Call{Row: row, Shape: true})
	fmt.Println(o.Result)
	// Output:
	// {"body":"","headers":{},"method":"GET","shape":true,"url":"https://api.x.ai/v1/models"}
}

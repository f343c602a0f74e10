package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/nats-io/nats.go"
)

// syncBuffer collects log lines from concurrent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A secret whose value is a unique marker goes through every runner, plain and in
// shape mode, against an upstream that echoes every credential back. The marker (in
// any encoding the runners put on the wire) must appear in no file under the data
// dir, no response and no log line.
func TestSecretsAppearNowhere(t *testing.T) {
	raw := make([]byte, 12)
	rand.Read(raw)
	marker := "mk" + hex.EncodeToString(raw)
	forms := []string{
		marker,
		base64.StdEncoding.EncodeToString([]byte(marker + ":")),
		url.QueryEscape(marker),
		marker[:len(marker)/2+4], // a long prefix, should the value be cut
	}
	echo := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		// Echo every credential back, as a careless upstream might.
		h, _ := json.Marshal(r.Header)
		io.WriteString(w, `{"headers":`+string(h)+`,"query":"`+r.URL.RawQuery+`"}`)
	})
	deny := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(403)
		io.WriteString(w, "forbidden for "+r.Header.Get("Authorization"))
	})

	logs := &syncBuffer{}
	env := runner.MapEnv(map[string]string{"MARKER_API_KEY": marker, "MARKER_TOKEN": marker})
	n := nodetest.Start(t, nil, capdir.WithEnv(env), capdir.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	// A program on the bus serving a nats-runner row: it echoes what it receives.
	sub, err := n.Log().Conn().Subscribe("svc.echo", func(m *nats.Msg) { m.Respond(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	doc := `# WHAT: secret test\n# ARGS: $1`
	rows := []string{
		`{"key":"S_BEARER","type":"http","target":"GET ` + echo.URL + `/a?x=$1","auth":"bearer:MARKER_API_KEY","content":"` + doc + `"}`,
		`{"key":"S_BASIC","type":"http","target":"GET ` + echo.URL + `/b","auth":"basic:MARKER_TOKEN","content":"` + doc + `"}`,
		`{"key":"S_QUERY","type":"http","target":"GET ` + echo.URL + `/c?a=1","auth":"query:api_key=MARKER_API_KEY","content":"` + doc + `"}`,
		`{"key":"S_HEADERS","type":"http","target":"POST ` + echo.URL + `/d","auth":"headers:{\"x-api-key\":\"$MARKER_API_KEY\",\"x-custom\":\"k=$MARKER_TOKEN\"}","content":"` + doc + `\n{\"q\":\"$1\"}"}`,
		`{"key":"S_OAUTH","type":"http","target":"GET ` + echo.URL + `/e","auth":"oauth:MARKER_TOKEN","content":"` + doc + `"}`,
		`{"key":"S_DENIED","type":"http","target":"GET ` + deny.URL + `/f","auth":"bearer:MARKER_API_KEY","content":"` + doc + `"}`,
		`{"key":"S_FN","type":"fn","target":"echo","auth":"bearer:MARKER_API_KEY","content":"` + doc + `"}`,
		`{"key":"S_NATS","type":"fn","runner":"nats","target":"svc.echo","auth":"bearer:MARKER_API_KEY","content":"` + doc + `"}`,
	}
	var responses []string
	for _, r := range rows {
		code, body := nodetest.Do(t, n, "POST", "/api/directory", r)
		if code != 201 {
			t.Fatalf("POST %s: %d %s", r, code, body)
		}
		responses = append(responses, body)
	}
	for _, key := range []string{"S_BEARER", "S_BASIC", "S_QUERY", "S_HEADERS", "S_OAUTH", "S_DENIED", "S_FN", "S_NATS"} {
		for _, shape := range []string{"false", "true"} {
			code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"`+key+`","body":"hello","shape":`+shape+`}`)
			if code != 200 {
				t.Fatalf("dispatch %s shape=%s: %d %s", key, shape, code, body)
			}
			responses = append(responses, body)
			var got struct {
				Proof struct {
					InvocationID string `json:"invocation_id"`
				} `json:"proof"`
			}
			json.Unmarshal([]byte(body), &got)
			for _, path := range []string{"/api/receipts/" + got.Proof.InvocationID, "/receipt/" + got.Proof.InvocationID} {
				_, rb := nodetest.Do(t, n, "GET", path, "")
				responses = append(responses, rb)
			}
		}
		_, list := nodetest.Do(t, n, "GET", "/api/receipts?key="+key, "")
		responses = append(responses, list)
		_, row := nodetest.Do(t, n, "GET", "/api/directory/"+key, "")
		responses = append(responses, row)
	}
	// The credential really was applied: the upstream saw it in each form.
	var upstreamSaw []string
	for _, r := range echo.Requests() {
		h, _ := json.Marshal(r.Header)
		upstreamSaw = append(upstreamSaw, string(h)+r.RawQuery)
	}
	seen := strings.Join(upstreamSaw, "\n")
	for _, f := range forms[:3] {
		if !strings.Contains(seen, f) {
			t.Fatalf("upstream never saw the credential form %q: the test would prove nothing", f)
		}
	}

	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	for i, r := range responses {
		for _, f := range forms {
			if strings.Contains(r, f) {
				t.Errorf("response %d contains the secret (%q): %s", i, f, r)
			}
		}
	}
	if logs.String() == "" {
		t.Log("note: no log lines were written")
	}
	for _, f := range forms {
		if strings.Contains(logs.String(), f) {
			t.Errorf("a log line contains the secret (%q)", f)
		}
	}
	files := 0
	err = filepath.WalkDir(n.Config().Log.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s contains the secret (%q)", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("scanned only %d files: the data dir is not where the node wrote", files)
	}
}

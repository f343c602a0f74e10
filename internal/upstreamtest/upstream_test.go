package upstreamtest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/upstreamtest"
)

func get(ctx context.Context, url string, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// An upstream records every request before its answer sees it, the body still
// readable by the answer.
func TestUpstreamRecordsAndAnswers(t *testing.T) {
	u := upstreamtest.Start(t, upstreamtest.EchoRequest(http.StatusTeapot))
	code, body, err := get(context.Background(), u.URL+"/p?b=1", "sent")
	if err != nil || code != http.StatusTeapot || !strings.Contains(body, `"body":"sent"`) || !strings.Contains(body, `"uri":"/p?b=1"`) {
		t.Fatalf("answer %d %q, %v", code, body, err)
	}
	rs := u.Requests()
	if len(rs) != 1 || rs[0].Method != "POST" || rs[0].Path != "/p" || rs[0].RawQuery != "b=1" || rs[0].Body != "sent" || u.Hits() != 1 {
		t.Fatalf("recorded %+v, %d hits", rs, u.Hits())
	}
	if got := u.Header("Authorization"); len(got) != 1 || got[0] != "Bearer t" {
		t.Fatalf("Authorization %q", got)
	}
}

// A gated upstream holds a request until Release; a held request whose caller
// goes away is announced on Left and never answered.
func TestGatedUpstreamHoldsUntilReleased(t *testing.T) {
	u := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "released"))
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, _, err := get(ctx, u.URL, ""); gone <- err }()
	<-u.Arrived()
	cancel()
	<-u.Left()
	if err := <-gone; err == nil {
		t.Fatal("a call whose caller left was answered")
	}

	answered := make(chan string, 1)
	go func() { _, body, _ := get(context.Background(), u.URL, ""); answered <- body }()
	<-u.Arrived()
	select {
	case body := <-answered:
		t.Fatalf("answered %q before Release", body)
	default:
	}
	u.Release()
	if body := <-answered; body != "released" {
		t.Fatalf("answer %q", body)
	}
	if u.Hits() != 2 {
		t.Fatalf("%d hits", u.Hits())
	}
	u.Close()
	if u.Ended() != 2 {
		t.Fatalf("%d ended after Close", u.Ended())
	}
	u.Release() // again: no panic
}

package eventlog_test

import (
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
)

// A responder takes its calls and sends its replies on a connection of its own:
// the log's connection, which the appends and their acknowledgements share,
// carries none of them.
func TestRespondersUseTheirOwnConnection(t *testing.T) {
	l := logtest.Open(t, "")
	r, err := l.Respond("calls.test", "q", func(c eventlog.Call) {
		if err := c.Reply(append([]byte("re: "), c.Data()...)); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	client, err := l.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	before := l.Conn().Stats()
	for range 3 {
		m, err := client.Request("calls.test", []byte("ping"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) != "re: ping" {
			t.Fatalf("reply %q", m.Data)
		}
	}
	after := l.Conn().Stats()
	if in, out := after.InMsgs-before.InMsgs, after.OutMsgs-before.OutMsgs; in != 0 || out != 0 {
		t.Fatalf("the log's connection carried %d messages in and %d out for 3 calls; want none", in, out)
	}
}

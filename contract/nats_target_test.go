package contract_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
)

// A nats row's target is one literal subject of the author's own: never NATS's API,
// another caller's inbox or capdir's log, never a wildcard or an empty token. Only
// rows whose effective runner is nats are held to it.
func TestValidateNATSTarget(t *testing.T) {
	tests := []struct {
		typ, runner, target string
		want                string // "" for valid
	}{
		{"fn", "nats", "svc.geo.distance", ""},
		{"fn", "nats", " svc.upper ", ""},
		{"fn", "nats", "", ""}, // left to the runner, as for http rows
		{"fn", "", "$JS.API.STREAM.DELETE.CAPDIR_CONTROL", ""},
		{"http", "", "POST http://x/$JS.API", ""},
		{"fn", "nats", "$JS.API.STREAM.DELETE.CAPDIR_CONTROL", "is reserved"},
		{"flow", "nats", "$SYS.REQ.SERVER.PING", "is reserved"},
		{"agent", "nats", "$KV.cfg.k", "is reserved"},
		{"fn", "nats", "_INBOX.x.y", "is reserved"},
		{"fn", "nats", "capdir.data.req.GREET", "is reserved"},
		{"fn", "nats", "capdir.ctl.dir.GREET", "is reserved"},
		{"fn", "nats", "svc.*", "wildcard"},
		{"fn", "nats", "svc.>", "wildcard"},
		{"fn", "nats", "svc..x", "empty token"},
		{"fn", "nats", "svc.x.", "empty token"},
		{"fn", "nats", "svc x", "whitespace"},
	}
	for _, tt := range tests {
		r := validRow()
		r.Type, r.Runner, r.Target = tt.typ, tt.runner, tt.target
		err := contract.Validate(&r)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s/%s %q: %v", tt.typ, tt.runner, tt.target, err)
			}
			continue
		}
		var ve *contract.ValidationError
		if !errors.As(err, &ve) || ve.Field != "target" || !errors.Is(err, contract.ErrInvalid) ||
			!strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "target: must be one literal NATS subject") {
			t.Errorf("%s/%s %q: %v, want a target error saying %q", tt.typ, tt.runner, tt.target, err, tt.want)
		}
	}
}

// Every write refuses a reserved subject, so POST, PUT, PATCH and the import (all of
// which go through these) refuse it too.
func TestWritesRefuseReservedNATSTarget(t *testing.T) {
	const bad = "$JS.API.STREAM.DELETE.CAPDIR_CONTROL"
	now := time.Unix(0, 0)
	body := `{"key":"K","type":"fn","runner":"nats","target":"` + bad + `","content":"# WHAT: x"}`
	if _, err := contract.Create(mustDecode(t, body), now); err == nil {
		t.Error("Create accepted a reserved subject")
	}
	if _, err := contract.Replace("K", nil, mustDecode(t, body), now); err == nil {
		t.Error("Replace accepted a reserved subject")
	}
	old, err := contract.Create(mustDecode(t, `{"key":"K","type":"fn","runner":"nats","target":"svc.ok","content":"# WHAT: x"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := contract.Patch(old, mustDecode(t, `{"target":"`+bad+`"}`), now); err == nil {
		t.Error("Patch accepted a reserved subject")
	}
}

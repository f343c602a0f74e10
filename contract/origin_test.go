package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
)

func TestTemplateOrigin(t *testing.T) {
	tests := []struct {
		tmpl, want string
		err        string // the origin part the refusal quotes; "" when literal
	}{
		{"https://api.x.ai/v1/models", "https://api.x.ai", ""},
		{"HTTPS://API.X.AI:8443/v1", "https://api.x.ai:8443", ""},
		{"http://127.0.0.1:8081/x/$1", "http://127.0.0.1:8081", ""},
		{"http://host?q=$1", "http://host", ""},
		{"http://host#$1", "http://host", ""},
		{"http://good@evil/", "http://evil", ""},
		{"http://user:$1@host/x", "http://host", ""}, // user info is not the origin; the write rule refuses the slot
		{"http://$1/v1/status", "", "http://$1"},
		{"http://127.0.0.1:8081$$1", "", "http://127.0.0.1:8081$$1"},
		{"http://api.x:$1/", "", "http://api.x:$1"},
		{"$1://api.x/", "", "$1://api.x"},
		{"http://$PREV/", "", "http://$PREV"},
		{"http://a$2+", "", "http://a$2+"},
		{"http://x@$1/", "", "http://$1"},
		{"$$1", "", "$$1"},
		{"/relative/$1", "", "/relative/$1"},
	}
	for _, tt := range tests {
		got, err := contract.TemplateOrigin(tt.tmpl)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("TemplateOrigin(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, contract.ErrOriginNotLiteral) || err.Error() != tt.err || got != "" {
			t.Errorf("TemplateOrigin(%q) = %q, %v; want ErrOriginNotLiteral quoting %q", tt.tmpl, got, err, tt.err)
		}
	}
}

// A row with auth run by the http runner may not take any part of its origin from
// a slot, whatever the auth form and the slot; its path, query and body may. A row
// without auth, or of another runner, may.
func TestCreateRefusesCredentialOriginSlots(t *testing.T) {
	const content = "# WHAT: Read the status of a service."
	row := func(target, auth string) string {
		b, _ := json.Marshal(map[string]string{"key": "K", "type": "http", "target": target, "auth": auth, "content": content})
		return string(b)
	}
	refused := []struct{ target, auth string }{
		{"GET http://$1/v1/status", "bearer:ACME_API_KEY"},
		{"GET http://127.0.0.1:8081$$1", "bearer:ACME_API_KEY"},
		{"GET http://127.0.0.1:8081$1", "basic:ACME_PASS"},
		{"GET http://$$1@api.acme.test/", `headers:{"X-Key":"$ACME_API_KEY"}`},
		{"GET http://user:$1@api.acme.test/", "bearer:ACME_API_KEY"},
		{"GET $1://api.acme.test/", "query:key=ACME_API_KEY"},
		{"GET http://api.acme.test:$1/", "oauth:ACME_TOKEN"},
		{"GET http://$PREV/", "bearer:ACME_API_KEY"},
		{"GET http://api.acme.test$2+", "bearer:ACME_API_KEY"},
		{"GET http://api.acme.test\\$$1", "bearer:ACME_API_KEY"},
		{"GET https://$1.acme.test/", " Bearer:ACME_API_KEY "},
		{"$1 https://api.acme.test/", "bearer:ACME_API_KEY"},
		// A method that holds "://" is not the URL's scheme: the slot is in the host.
		{":// http://$1/", "bearer:ACME_API_KEY"},
		{"GET://x http://$1/", "bearer:ACME_API_KEY"},
	}
	for _, c := range refused {
		_, err := contract.Create(mustDecode(t, row(c.target, c.auth)), now)
		var ve *contract.ValidationError
		if !errors.As(err, &ve) || ve.Field != "target" || !errors.Is(err, contract.ErrInvalid) ||
			!strings.Contains(err.Error(), "a caller's arguments would choose where the credential is sent") {
			t.Errorf("Create %s with %s: %v; want the target refused", c.target, c.auth, err)
		}
	}
	allowed := []string{
		row("GET https://api.acme.test/v1/$1", "bearer:ACME_API_KEY"),
		row("GET https://api.acme.test/$$1", "bearer:ACME_API_KEY"),
		row("GET https://api.acme.test?q=$1", "bearer:ACME_API_KEY"),
		row("GET https://api.acme.test#$1", "bearer:ACME_API_KEY"),
		row("GET http://$1/v1/status", ""), // no credential: a "fetch any URL" row
		row("GET http://$$1", "  "),
		`{"key":"K","type":"fn","runner":"nats","target":"http://$1/","auth":"bearer:ACME_API_KEY","content":"# WHAT: x"}`,
	}
	for _, body := range allowed {
		if _, err := contract.Create(mustDecode(t, body), now); err != nil {
			t.Errorf("Create %s: %v", body, err)
		}
	}
	// PUT applies the same rule, and so does a row given the http runner by its
	// runner column.
	if _, err := contract.Replace("K", nil, mustDecode(t, row("GET http://$1/", "bearer:ACME_API_KEY")), now); err == nil {
		t.Error("Replace stored a credentialed row with a slot in its host")
	}
	fnHTTP := `{"key":"K","type":"fn","runner":"http","target":"GET http://$1/","auth":"bearer:ACME_API_KEY","content":"# WHAT: x"}`
	if _, err := contract.Create(mustDecode(t, fnHTTP), now); err == nil {
		t.Error("Create stored a credentialed row of the http runner (runner column) with a slot in its host")
	}
}

// A PATCH that writes target or auth must leave a literal origin; one that writes
// neither may maintain a row stored before the rule (disable it, say).
func TestPatchCredentialOrigin(t *testing.T) {
	clean := contract.Row{Key: "K", Type: "http", Target: "GET https://api.acme.test/$1", Auth: "bearer:ACME_API_KEY",
		Content: "# WHAT: x", Enabled: 1, PlannerVisible: 1}
	old := clean
	old.Target = "GET http://$1/v1/status" // stored before the rule
	noAuth := clean
	noAuth.Auth, noAuth.Target = "", "GET http://$1/v1/status"
	tests := []struct {
		name  string
		old   contract.Row
		patch string
		ok    bool
	}{
		{"slot into a clean row's host", clean, `{"target":"GET http://$1/"}`, false},
		{"auth onto a row whose host is a slot", noAuth, `{"auth":"bearer:ACME_API_KEY"}`, false},
		{"type http onto a credentialed fn row with a slot", func() contract.Row { r := old; r.Type = "fn"; return r }(), `{"type":"http"}`, false},
		{"old row keeps its slot", old, `{"target":"GET http://$2/v1/status"}`, false},
		{"old row's auth rewritten", old, `{"auth":"bearer:OTHER_KEY"}`, false},
		{"old row disabled", old, `{"enabled":0}`, true},
		{"old row fixed", old, `{"target":"GET https://api.acme.test/v1/status"}`, true},
		{"old row's auth dropped", old, `{"auth":""}`, true},
		{"clean row edited", clean, `{"target":"GET https://api.acme.test/v2/$1"}`, true},
	}
	for _, tt := range tests {
		_, _, err := contract.Patch(tt.old, mustDecode(t, tt.patch), now)
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v; want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "target: ") {
			t.Errorf("%s: %v; want the target named", tt.name, err)
		}
	}
}

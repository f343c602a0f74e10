package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshalled is s as encoding/json writes it, with or without HTML escaping.
func marshalled(t testing.TB, s string, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var stringCases = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>",
	"\b\f\n\r\t\x00\x01\x1f\x7f", "line\u2028para\u2029", "caf\xc3\xa9 \xff\xfe bad",
	"\xe2\x80", "emoji 🙂", "\xed\xa0\x80 surrogate",
}

func TestAppendStringWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range stringCases {
		if got, want := AppendString([]byte("x"), s), append([]byte("x"), marshalled(t, s, true)...); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendStringNoHTML(nil, s), marshalled(t, s, false); !bytes.Equal(got, want) {
			t.Errorf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), marshalled(t, s, true); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendStringNoHTML(nil, s), marshalled(t, s, false); !bytes.Equal(got, want) {
			t.Errorf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	})
}

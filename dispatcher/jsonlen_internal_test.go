package dispatcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// marshaledLen is what encoding/json spends on s, quotes excluded.
func marshaledLen(t *testing.T, s string) int {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) - 2
}

// adversarial strings: every class of character encoding/json escapes, alone and
// mixed with multibyte UTF-8 and invalid bytes (each invalid byte is written as
// the six bytes \ufffd).
var adversarial = map[string]string{
	"empty":         "",
	"plain":         "hello, world",
	"html":          strings.Repeat("<>&", 50),
	"quotes":        strings.Repeat(`"\`, 50),
	"short escapes": "\b\f\n\r\t",
	"controls":      string([]byte{0, 1, 2, 0x1f, 0x7f}),
	"separators":    "a\u2028b\u2029c",
	"multibyte":     strings.Repeat("é€😀", 20),
	"invalid":       "\xff\xfe\xc3\x28\xe2\x82\xf0\x9f\x98",
	"lone high":     "abc\xed\xa0\x80def", // a UTF-16 surrogate encoded in UTF-8: invalid
	"truncated":     "€"[:2] + "x" + "😀"[:3],
	"mix":           strings.Repeat("<\x01é\xff\u2028\"a€&\n", 30),
}

func TestJSONLenAgreesWithEncodingJSON(t *testing.T) {
	for name, s := range adversarial {
		if got, want := jsonLen(s), marshaledLen(t, s); got != want {
			t.Errorf("%s: jsonLen = %d, json.Marshal spends %d", name, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		if got, want := jsonLen(s), marshaledLen(t, s); got != want {
			t.Errorf("byte %#x: jsonLen = %d, json.Marshal spends %d", c, got, want)
		}
	}
}

// A cut string, encoded, never exceeds its bound, reports its encoded length
// exactly, never splits a character, and is as long as the bound allows.
func TestTruncateCutsByEncodedSize(t *testing.T) {
	for name, s := range adversarial {
		full := marshaledLen(t, s)
		for _, n := range []int{0, 1, 13, 14, 15, 20, 31, 64, 100, full - 1, full, full + 1} {
			if n < 0 {
				continue
			}
			got, size := truncate(s, n)
			if size != marshaledLen(t, got) {
				t.Fatalf("%s/%d: reported %d encoded bytes, json.Marshal spends %d", name, n, size, marshaledLen(t, got))
			}
			if full <= n {
				if got != s {
					t.Fatalf("%s/%d: cut a string that fits (%d bytes)", name, n, full)
				}
				continue
			}
			if !strings.HasSuffix(got, truncMark) {
				t.Fatalf("%s/%d: cut without the mark: %q", name, n, got)
			}
			kept := strings.TrimSuffix(got, truncMark)
			if !strings.HasPrefix(s, kept) {
				t.Fatalf("%s/%d: %q is not a prefix", name, n, kept)
			}
			if n >= len(truncMark) && size > n {
				t.Fatalf("%s/%d: %d encoded bytes over the bound", name, n, size)
			}
			// On a character boundary: what follows the kept prefix starts a rune
			// (or is an invalid byte, which encoding/json treats as one).
			if rest := s[len(kept):]; rest != "" && utf8.ValidString(s) && !utf8.RuneStart(rest[0]) {
				t.Fatalf("%s/%d: split a rune", name, n)
			}
			// As long as allowed: one more character would not fit.
			if rest := s[len(kept):]; n >= len(truncMark) {
				w, _ := jsonUnit(rest)
				if size+w <= n {
					t.Fatalf("%s/%d: stopped at %d with room for %d more", name, n, size, w)
				}
			}
		}
	}
}

// 1 MiB of '<' is 6 MiB in the event: the receipt is bounded by that, not by the
// raw length.
func TestFinishCountsEncodedBytes(t *testing.T) {
	t0 := time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)
	for name, s := range adversarial {
		if s == "" {
			continue
		}
		body := strings.Repeat(s, 1+4000/len(s))
		result := strings.Repeat(s, 1+8000/len(s))
		for _, bound := range []struct{ resultCap, budget int }{{1000, 0}, {0, 3000}, {2000, 2500}} {
			d := newDraft(&wire.InvocationRequest{InvocationID: "inv_x", Key: "K", Body: body}, "owner", "w", t0)
			d.Result = result
			rc := d.finish(t0, bound.resultCap, bound.budget)
			b, r := marshaledLen(t, rc.Body), marshaledLen(t, rc.Result)
			if bound.resultCap > 0 && r > bound.resultCap {
				t.Errorf("%s %+v: result encodes to %d bytes", name, bound, r)
			}
			if bound.budget > 0 && b+r > bound.budget {
				t.Errorf("%s %+v: body and result encode to %d bytes", name, bound, b+r)
			}
			if rc.Extra["truncated"] != true {
				t.Errorf("%s %+v: not marked truncated", name, bound)
			}
			if rc.Fingerprints.Input != Fingerprint(body) || rc.Fingerprints.Output != Fingerprint(result) {
				t.Errorf("%s: fingerprints must cover the whole input and output", name)
			}
		}
	}
}

func TestAppendFailureTellsPermanentFromPassing(t *testing.T) {
	for _, tc := range []struct {
		err       error
		permanent bool
		tooLarge  bool
	}{
		{fmt.Errorf("eventlog: append: %w", nats.ErrMaxPayload), true, true},
		{&jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamMessageExceedsMaximum, Code: 400}, true, true},
		{fmt.Errorf("eventlog: append: %w", nats.ErrBadSubject), true, false},
		{fmt.Errorf("%w: an event needs an id", wire.ErrBadEvent), true, false},
		{eventlog.ErrAckTimeout, false, false},
		{fmt.Errorf("eventlog: append: %w", jetstream.ErrNoStreamResponse), false, false},
		{fmt.Errorf("eventlog: append: %w", nats.ErrNoResponders), false, false},
		{fmt.Errorf("eventlog: append: %w", jetstream.ErrAsyncPublishTimeout), false, false},
		{eventlog.ErrClosed, false, false},
		{fmt.Errorf("eventlog: append: %w", &jetstream.APIError{ErrorCode: 10008, Code: 503, Description: "JetStream system temporarily unavailable"}), false, false},
	} {
		got := appendFailure(tc.err, 123)
		if permanent(got) != tc.permanent || errors.Is(got, ErrReceiptTooLarge) != tc.tooLarge {
			t.Errorf("%v: permanent %v, too large %v; want %v, %v", tc.err, permanent(got), errors.Is(got, ErrReceiptTooLarge), tc.permanent, tc.tooLarge)
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("%v: the cause is lost: %v", tc.err, got)
		}
	}
}

func TestFailureReceiptKeepsWhatRan(t *testing.T) {
	t0 := time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)
	body := strings.Repeat("<", 1<<20)
	d := newDraft(&wire.InvocationRequest{InvocationID: "inv_x", Trace: "t_x", Key: "K", Body: body}, "owner", "w", t0)
	d.Result, d.Ran, d.OK, d.Material, d.Status, d.Upstream = "HTTP 200:"+body, true, true, true, wire.StatusProvenMaterialResult, 200
	d.CostUSD, d.CredTag, d.BreakerKind = math.NaN(), "tag", "success"
	d.Extra = map[string]any{"shape": strings.Repeat("x", 1<<20)}
	rc := d.finish(t0, 0, 0)
	f := failureReceipt(&rc, receiptTooLarge(9<<20, nats.ErrMaxPayload), 9<<20)
	if f.Result != "ERR:receipt:too_large:9437184" || f.Status != wire.StatusRanWithError || !f.Ran || f.OK || f.Material {
		t.Fatalf("failure receipt = %s %s ran=%v ok=%v material=%v", f.Result, f.Status, f.Ran, f.OK, f.Material)
	}
	if f.Fingerprints != rc.Fingerprints || f.Fingerprints.Output != Fingerprint(d.Result) || f.InvocationID != "inv_x" ||
		f.Upstream != 200 || f.CredTag != "tag" || f.BreakerKind != "success" || f.Extra["truncated"] != true || f.Extra["shape"] != nil {
		t.Fatalf("failure receipt lost what ran or kept too much: %+v", f.ReceiptSummary)
	}
	data, err := json.Marshal(f)
	if err != nil || len(data) > 4<<10 {
		t.Fatalf("failure receipt: %d bytes, %v", len(data), err)
	}
	rc.Ran = false
	if f := failureReceipt(&rc, fmt.Errorf("%w: x", ErrReceiptUnstorable), 0); f.Status != wire.StatusFailedBeforeRun || f.Result != "ERR:receipt:unstorable" {
		t.Fatalf("failure receipt of a call that did not run: %s %s", f.Status, f.Result)
	}
}

package eventlog

import (
	"errors"
	"reflect"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/capdir/capdir/internal/allocstest"
)

// pubAckShapes are acknowledgements as JetStream writes them, and what else a
// reader may meet.
var pubAckShapes = []string{
	`{"stream":"CAPDIR_DATA","seq":1}`,
	`{"stream":"CAPDIR_CONTROL","seq":18446744073709551615,"duplicate":true}`,
	`{"stream":"CAPDIR_DATA","domain":"hub","seq":42}`,
	` { "seq" : 7 , "stream" : "OTHER" , "duplicate" : false } `,
	`{"stream":"CAPDIR_DATA","seq":3,"val":"12"}`,
	`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"},"stream":"CAPDIR_DATA","seq":0}`,
	`{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}`,
	`{"stream":"","seq":1}`,
	`{"seq":1}`,
	`{}`,
	``,
	`null`,
	`{"stream":"CAPDIR_DATA","seq":01}`,
	`{"stream":"CAPDIR_DATA","seq":-1}`,
	`{"stream":"CAPDIR_DATA","seq":1.5}`,
	`{"stream":"CAPDIR_DATA","seq":1e3}`,
	`{"stream":"CAPDIR_DATA","seq":18446744073709551616}`,
	`{"Stream":"DATA","seq":1}`,
	`{"stream":"D\u0041TA","seq":1}`,
	`{"stream":"CAPDIR_DATA","seq":1,"duplicate":null}`,
	`{"stream":"CAPDIR_DATA","seq":1}x`,
	`{"stream":"CAPDIR_DATA","seq":1,}`,
	`{"stream":"CAPDIR_DATA","stream":"CAPDIR_CONTROL","seq":2}`,
	`{"stream":"CAPDIR_DATA","seq":2,"error":null}`,
	"{\"stream\":\"DA\xffTA\",\"seq\":1}",
}

// Every acknowledgement the hand reading takes is read as encoding/json reads
// it (the JetStream client's reading); what it leaves, it leaves to that.
func TestScanPubAckAgreesWithJSON(t *testing.T) {
	for _, s := range pubAckShapes {
		checkPubAck(t, []byte(s))
	}
	for _, s := range pubAckShapes[:4] {
		if _, ok := scanPubAck([]byte(s)); !ok {
			t.Errorf("%s: left to encoding/json", s)
		}
	}
}

func FuzzScanPubAck(f *testing.F) {
	for _, s := range pubAckShapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkPubAck(t, data) })
}

func checkPubAck(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := decodePubAck(data)
	got, gotErr := parsePubAck(data)
	if !reflect.DeepEqual(got, want) || !sameAckError(gotErr, wantErr) {
		t.Fatalf("%q: read %+v, %v; encoding/json reads %+v, %v", data, got, gotErr, want, wantErr)
	}
	if ack, ok := scanPubAck(data); ok && (wantErr != nil || ack != want) {
		t.Fatalf("%q: read by hand as %+v; encoding/json reads %+v, %v", data, ack, want, wantErr)
	}
}

func sameAckError(a, b error) bool {
	var ae, be *jetstream.APIError
	if errors.As(a, &ae) && errors.As(b, &be) {
		return *ae == *be
	}
	return a == b
}

// A stored message's acknowledgement is read without allocating; a refusal
// still reads as the API error classify knows.
func TestParsePubAckAllocates(t *testing.T) {
	ack := []byte(`{"stream":"CAPDIR_DATA","seq":123456,"duplicate":true}`)
	if n := allocstest.PerRun(t, 100, func() { _, _ = parsePubAck(ack) }); n != 0 {
		t.Fatalf("reading an acknowledgement allocates %v times", n)
	}
	_, err := parsePubAck([]byte(`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"},"stream":"CAPDIR_DATA","seq":0}`))
	if !errors.Is(classify(err), ErrConflict) {
		t.Fatalf("a wrong last sequence reads as %v, want ErrConflict", err)
	}
}

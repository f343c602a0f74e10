package capdir_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// A data stream bounded in bytes lets its oldest requests and receipts leave the
// log; the projection keeps every receipt it folded, so the first call's receipt
// is still answered, byte for byte as before the log let it go.
func TestDataMaxBytesTrimsTheLogAndTheProjectionKeepsTheReceipts(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataMaxBytes = 16 << 10 })
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"A","type":"fn","target":"echo","content":"# WHAT: a"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	var first struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	var firstReceipt string
	for i := range 60 {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"A","body":"call %d"}`, i))
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		if i == 0 {
			if err := json.Unmarshal([]byte(body), &first); err != nil || first.Proof.InvocationID == "" {
				t.Fatalf("dispatch answered %s (%v)", body, err)
			}
			_, firstReceipt = nodetest.Do(t, n, "GET", "/api/receipts/"+first.Proof.InvocationID, "")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := n.Log().State(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if st.FirstSeq <= 2 || st.LastSeq < 120 {
		t.Fatalf("the data stream holds %d..%d: the bound removed nothing", st.FirstSeq, st.LastSeq)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+first.Proof.InvocationID, ""); code != 200 || body != firstReceipt {
		t.Fatalf("the first receipt after it left the log: %d %s; before: %s", code, body, firstReceipt)
	}
	// A replay of the log as it is now folds a shorter history: nodetest's replay
	// check does not hold here, so the node is stopped before it.
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

package ownerkey_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/capdir/capdir/api/ownerkey"
)

// fromAddr is a request whose client address is the IPv4 address numbered i.
func fromAddr(i int) *http.Request {
	return &http.Request{RemoteAddr: fmt.Sprintf("10.%d.%d.%d:4000", i>>16&0xff, i>>8&0xff, i&0xff), Header: http.Header{}}
}

// A wrong key when the table of addresses is full, each from a new address: the
// attacker's cheapest way to spend the node's CPU. With the default limit the
// shared count soon throttles them; with a limit never reached every one is
// counted, as the first Limit of each window are.
func BenchmarkGuardWrongKeyFullTable(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int
	}{{"DefaultLimit", 0}, {"EveryKeyCounted", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			g, err := ownerkey.New(ownerkey.Config{Key: "the-owner-key-0123456789", Limit: bc.limit, Clock: func() time.Time { return at },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < ownerkey.DefaultMaxAddrs; i++ {
				g.Check(fromAddr(i), "wrong")
			}
			reqs := make([]*http.Request, 4096)
			for i := range reqs {
				reqs[i] = fromAddr(ownerkey.DefaultMaxAddrs + i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g.Check(reqs[i%len(reqs)], "wrong")
			}
		})
	}
}

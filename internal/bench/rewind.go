package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// GenerateDirectory appends events directory mutations to l: a create for each of
// rows keys, then patches of random keys (one in twenty a delete and a create
// again), the control stream of a directory of rows rows edited for a long time.
func GenerateDirectory(ctx context.Context, l *eventlog.Log, rows, events int) (int, error) {
	g := &generator{l: l, rng: rand.New(rand.NewPCG(3, 4)), at: time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)}
	keys := make([]string, rows)
	for i := range keys {
		keys[i] = fmt.Sprintf("REWIND_ROW_%06d", i)
	}
	for g.count < events {
		var m contract.DirectoryMutation
		key := keys[g.count%rows]
		switch {
		case g.count < rows:
			m = contract.DirectoryMutation{Action: contract.ActionCreate, Key: key, Row: g.row(key)}
		case g.rng.IntN(20) == 0:
			m = contract.DirectoryMutation{Action: contract.ActionDelete, Key: key}
		default:
			key = keys[g.rng.IntN(rows)]
			r := g.row(key)
			r.Category = fmt.Sprintf("edit%d", g.rng.IntN(8))
			m = contract.DirectoryMutation{Action: contract.ActionPatch, Key: key, Row: r}
		}
		if err := g.append(ctx, wire.DirectorySubject(key), wire.TypeDirectoryMutate, api.OwnerActor, m); err != nil {
			return g.count, err
		}
	}
	return g.count, g.drain(ctx)
}

package nodetest

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// CompliantRow is a row object, with its key as %s, that passes every hygiene
// gate: a POST body, or a row of an import.
const CompliantRow = `{"key":"%s","type":"fn","target":"now","category":"time",
"content":"# WHAT: Return the current time.\n# ARGS: none\n# EX: [NOW][/NOW]"}`

// ControlSeq is the last sequence of n's control stream: a test that takes it
// before and after a refused write sees that nothing was appended.
func ControlSeq(t testing.TB, n *capdir.Node) uint64 {
	t.Helper()
	seq, err := n.Log().LastSeq(context.Background(), wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// Mutation is a DIRECTORY_MUTATE as the log holds it.
type Mutation struct {
	contract.DirectoryMutation
	Seq   uint64
	Actor string
}

// Mutations reads every DIRECTORY_MUTATE of key from n's log, in order.
func Mutations(t testing.TB, n *capdir.Node, key string) []Mutation {
	t.Helper()
	var out []Mutation
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := n.Log().Read(ctx, wire.ControlStream, 1, func(s eventlog.Stored) error {
		if s.Subject != wire.DirectorySubject(key) || s.Type != wire.TypeDirectoryMutate {
			return nil
		}
		var m contract.DirectoryMutation
		if err := s.DataAs(&m); err != nil {
			return err
		}
		out = append(out, Mutation{DirectoryMutation: m, Seq: s.Seq, Actor: s.Actor})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package contract_test

import (
	"slices"
	"testing"

	"github.com/capdir/capdir/contract"
)

func TestNumber(t *testing.T) {
	rows := []contract.Row{
		{Key: "b"},
		{Key: "Z", Seq: ptr(2)},
		{Key: "a"},
		{Key: "B"},
		{Key: "Y", Seq: ptr(2)},
		{Key: "X", Seq: ptr(-1)},
		{Key: "A"},
		{Key: "W", Seq: ptr(10)},
	}
	contract.Number(rows)
	var keys []string
	for i, r := range rows {
		keys = append(keys, r.Key)
		if r.RowNum != i+1 {
			t.Errorf("%s: RowNum = %d, want %d", r.Key, r.RowNum, i+1)
		}
	}
	// seq ascending (ties by key), then null seq by key in byte order (upper case first).
	want := []string{"X", "Y", "Z", "W", "A", "B", "a", "b"}
	if !slices.Equal(keys, want) {
		t.Fatalf("order = %v, want %v", keys, want)
	}
}

func TestLess(t *testing.T) {
	tests := []struct {
		a, b contract.Row
		want bool
	}{
		{contract.Row{Key: "Z", Seq: ptr(5)}, contract.Row{Key: "A"}, true},
		{contract.Row{Key: "A"}, contract.Row{Key: "Z", Seq: ptr(5)}, false},
		{contract.Row{Key: "Z", Seq: ptr(1)}, contract.Row{Key: "A", Seq: ptr(2)}, true},
		{contract.Row{Key: "A", Seq: ptr(2)}, contract.Row{Key: "B", Seq: ptr(2)}, true},
		{contract.Row{Key: "A"}, contract.Row{Key: "A"}, false},
		{contract.Row{Key: "A_"}, contract.Row{Key: "A-"}, false}, // '-' (0x2d) < '_' (0x5f)
	}
	for _, tt := range tests {
		if got := contract.Less(&tt.a, &tt.b); got != tt.want {
			t.Errorf("Less(%s, %s) = %v, want %v", tt.a.Key, tt.b.Key, got, tt.want)
		}
	}
}

package wire

import "testing"

func TestChosenTellsAMintedInvocationIDFromAChosenOne(t *testing.T) {
	for _, tt := range []struct {
		inv, ev string
		want    bool
	}{
		{"", "01ABC", false},
		{"inv_01abc", "01ABC", false},
		{"inv_01abc", "01abc", false},
		{"inv_01abd", "01ABC", true},
		{"inv_01abcd", "01ABC", true},
		{"inv_bhrenkzdgbs8p230r53rcxqd63", "idem_x", true},
		{"inv_\u00e9", "\u00c9", false},
	} {
		if got := Chosen(tt.inv, tt.ev); got != tt.want {
			t.Errorf("Chosen(%q, %q) = %v, want %v", tt.inv, tt.ev, got, tt.want)
		}
	}
}

package contract_test

import (
	"testing"

	"github.com/capdir/capdir/contract"
)

// Every row the samples print, as stored, decodes strictly, is accepted by POST,
// and is accepted back by PUT (it is compliant).
func TestSampleRowsPassCreate(t *testing.T) {
	raws := sampleRaw(t)
	if len(raws) != 6 {
		t.Fatalf("%d fixture rows, want 6", len(raws))
	}
	for _, raw := range raws {
		f, err := contract.DecodeFields(raw)
		if err != nil {
			t.Fatalf("DecodeFields: %v\n%s", err, raw)
		}
		t.Run(f.Values.Key, func(t *testing.T) {
			r, err := contract.Create(f, now)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			stored := sampleRow(t, r.Key)
			stored.CreatedAt, stored.UpdatedAt = r.CreatedAt, r.UpdatedAt
			if r != stored {
				t.Errorf("Create changed the row:\n got %+v\nwant %+v", r, stored)
			}
			if v := contract.Hygiene(&r); v != nil {
				t.Errorf("fixture row is not compliant: %v", v)
			}
			if _, err := contract.Replace(r.Key, &r, f, now); err != nil {
				t.Errorf("Replace: %v", err)
			}
		})
	}
}

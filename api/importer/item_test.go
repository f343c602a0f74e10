package importer_test

import (
	"testing"

	"github.com/capdir/capdir/api/importer"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ prefix, name, want string }{
		{"", "listPets", "LIST_PETS"},
		{"", "showPetById", "SHOW_PET_BY_ID"},
		{"", "getHTTPServer", "GET_HTTP_SERVER"},
		{"", "v2Users", "V2_USERS"},
		{"", "list-pets v2", "LIST-PETS_V2"},
		{"", "pets.get", "PETS_GET"},
		{"", "GET_/pets/petId", "GET_PETS_PET_ID"},
		{"ps_", "listPets", "PS_LIST_PETS"},
		{"", "列出宠物", ""},
		{"", "__a__b__", "A_B"},
	} {
		if got := importer.Key(tc.prefix, tc.name); got != tc.want {
			t.Errorf("Key(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
}

func TestSourceOf(t *testing.T) {
	line := importer.SourceLine(`openapi spec="A op=B" prefix=""`, "GET /a")
	src, ok := importer.SourceOf("# WHAT: x\n" + line + "\n$1+")
	if !ok || src != `openapi spec="A op=B" prefix=""` {
		t.Fatalf("SourceOf = %q, %v", src, ok)
	}
	if _, ok := importer.SourceOf("# WHAT: a row written by hand"); ok {
		t.Fatal("a row without a SOURCE line has a source")
	}
}

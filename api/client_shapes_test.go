package api_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/command"
)

// The Go client's types read every field the facade's answers carry: a field added
// to an answer must be added to the client too. The answers both declare alike
// (the proof, a breaker, an import's result) are api/answer's, one type for both;
// a dispatch's answer is decoded apart (its raw result and shape kept).
func TestClientTypesMatchTheServer(t *testing.T) {
	for _, pair := range [][2]any{
		{api.DispatchResponse{}, client.DispatchResult{}},
	} {
		server, cl := jsonFields(reflect.TypeOf(pair[0])), jsonFields(reflect.TypeOf(pair[1]))
		for name := range server {
			if !cl[name] {
				t.Errorf("%T has %q; %T does not", pair[0], name, pair[1])
			}
		}
	}
	if command.UpsertQuery != client.UpsertQuery {
		t.Errorf("UpsertQuery %q != %q", command.UpsertQuery, client.UpsertQuery)
	}
}

func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" && name != "" {
			out[name] = true
		}
	}
	return out
}

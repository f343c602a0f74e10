package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestRedactDeep(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		secrets []string
		want    any
	}{
		{"credential headers any case",
			map[string]any{"Authorization": "Bearer x", "X-API-KEY": "k", "Cookie": "c", "set-cookie": "s",
				"Proxy-Authorization": "p", "accept": "json"},
			nil, map[string]any{"accept": "json"}},
		{"shaped keys",
			map[string]any{"GROK_API_KEY": "v", "github_token": "v", "X-Auth-Token": "v", "CLIENT_SECRET": "v",
				"TOKEN": "kept", "api_key_id": "kept"},
			nil, map[string]any{"TOKEN": "kept", "api_key_id": "kept"}},
		{"secret inside url",
			map[string]any{"url": "https://h/p?key=s3cr3t&x=1"}, []string{"s3cr3t"},
			map[string]any{"url": "https://h/p?key=REDACTED&x=1"}},
		{"longest secret first",
			"ab abc", []string{"ab", "abc"}, "REDACTED REDACTED"},
		{"empty secret ignored", "abc", []string{""}, "abc"},
		{"assignment string",
			[]any{"GROK_API_KEY=xai-1", "export MY_TOKEN=abc", "plain", "page_token=abc", "X_SECRET= ", 7.0},
			nil, []any{"REDACTED", "REDACTED", "plain", "page_token=abc", "X_SECRET= ", 7.0}},
		{"nested",
			map[string]any{"a": []any{map[string]any{"authorization": "x", "b": "tok"}}, "n": nil},
			[]string{"tok"}, map[string]any{"a": []any{map[string]any{"b": "REDACTED"}}, "n": nil}},
		{"string maps",
			map[string]any{"h": map[string]string{"x-api-key": "k", "a": "tok"}, "hh": map[string][]string{"Cookie": {"c"}, "b": {"tok"}}},
			[]string{"tok"}, map[string]any{"h": map[string]string{"a": "REDACTED"}, "hh": map[string][]string{"b": {"REDACTED"}}}},
		{"string slice", []string{"tok", "x"}, []string{"tok"}, []string{"REDACTED", "x"}},
		{"other types", 42, []string{"42"}, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := json.Marshal(tt.in)
			got := RedactDeep(tt.in, tt.secrets)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			after, _ := json.Marshal(tt.in)
			if string(before) != string(after) {
				t.Errorf("input modified: %s -> %s", before, after)
			}
		})
	}
}

func ExampleRedactDeep() {
	shape := map[string]any{
		"shape":   true,
		"url":     "https://maps.example/geo?q=x&key=k-123",
		"headers": map[string]any{"Authorization": "Bearer t-456", "accept": "application/json"},
	}
	out, _ := json.Marshal(RedactDeep(shape, []string{"k-123", "t-456"}))
	fmt.Println(string(out))
	// Output:
	// {"headers":{"accept":"application/json"},"shape":true,"url":"https://maps.example/geo?q=x\u0026key=REDACTED"}
}

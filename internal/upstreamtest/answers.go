package upstreamtest

import (
	"encoding/json"
	"io"
	"net/http"
)

// Reply answers every request with status and body.
func Reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// JSON answers every request with status and body, as application/json.
func JSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// EchoQuery answers every request with the value of its query parameter name.
func EchoQuery(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.Query().Get(name))
	}
}

// EchoRequest answers every request with what it carried, as a JSON object of its
// request URI, headers and body: what a caller sent comes back in its result.
func EchoRequest(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"uri": r.RequestURI, "header": r.Header, "body": string(body)})
	}
}

package nodetest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Secret is a value that must not leak, named for the messages that report it.
type Secret struct{ Name, Value string }

// Leak is one secret found in one place, in one of its forms.
type Leak struct{ Where, Secret, Form string }

func (l Leak) String() string { return l.Secret + " (" + l.Form + ") in " + l.Where }

// SecretForms returns the forms v can take in bytes capdir writes or sends, by
// name. First the encodings of v itself: as it is; URL query- and path-escaped;
// base64 (standard and URL alphabets) of v and of "v:" (a basic credential), each
// also URL-escaped, and every run of base64 characters that encodes v whatever the
// bytes before it (so v inside a larger base64 text, such as a []byte field of a
// JSON event, is found too); hex. Then each of those as it appears inside a JSON
// string (with and without HTML escaping), inside a JSON string inside a JSON
// string, and Go-quoted (a text log line). Each form is listed once, under its
// first name.
func SecretForms(v string) map[string]string {
	forms := map[string]string{}
	var order []string
	add := func(name, f string) {
		if f == "" {
			return
		}
		for _, g := range forms {
			if g == f {
				return
			}
		}
		forms[name] = f
		order = append(order, name)
	}
	add("raw", v)
	add("query-escaped", url.QueryEscape(v))
	add("path-escaped", url.PathEscape(v))
	add("URL path", (&url.URL{Path: v}).EscapedPath())
	for _, enc := range []struct {
		name string
		e    *base64.Encoding
	}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
		for _, b := range []struct{ name, text string }{{enc.name, v}, {enc.name + " of value:", v + ":"}} {
			f := enc.e.EncodeToString([]byte(b.text))
			add(b.name, f)
			add(b.name+", query-escaped", url.QueryEscape(f))
			add(b.name+", path-escaped", url.PathEscape(f))
		}
		for k := range 3 {
			// The characters that depend on v's bytes only: v preceded by k bytes.
			full := enc.e.EncodeToString(append(make([]byte, k), v...))
			start, end := (8*k+5)/6, 8*(k+len(v))/6
			add(enc.name+" at offset "+strconv.Itoa(k), full[start:end])
		}
	}
	add("hex", hex.EncodeToString([]byte(v)))
	add("HEX", strings.ToUpper(hex.EncodeToString([]byte(v))))
	for _, name := range append([]string(nil), order...) {
		f := forms[name]
		html, plain := jsonInner(f, true), jsonInner(f, false)
		add(name+" in JSON", html)
		add(name+" in JSON without HTML escaping", plain)
		add(name+" in JSON in JSON", jsonInner(html, true))
		add(name+" in JSON in JSON without HTML escaping", jsonInner(plain, false))
		q := strconv.Quote(f)
		add(name+" Go-quoted", q[1:len(q)-1])
	}
	return forms
}

// jsonInner is v as encoding/json writes it inside a string, without the quotes.
func jsonInner(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	enc.Encode(v)
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// FindSecrets reports every secret that appears in data in any of its forms
// (SecretForms), one Leak per secret and form; where names data in the report.
func FindSecrets(where string, data []byte, secrets []Secret) []Leak {
	var leaks []Leak
	for _, s := range secrets {
		forms := SecretForms(s.Value)
		names := make([]string, 0, len(forms))
		for name := range forms {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if bytes.Contains(data, []byte(forms[name])) {
				leaks = append(leaks, Leak{Where: where, Secret: s.Name, Form: name})
			}
		}
	}
	return leaks
}

// ScanDir reads every file under dir, every byte, and reports the secrets found
// in any (FindSecrets), and how many files and bytes it read.
func ScanDir(t testing.TB, dir string, secrets []Secret) (leaks []Leak, files int, size int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		size += int64(len(data))
		rel, _ := filepath.Rel(dir, path)
		leaks = append(leaks, FindSecrets(rel, data, secrets)...)
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", dir, err)
	}
	return leaks, files, size
}
